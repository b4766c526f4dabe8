"""sparse_hclust(weights="sparcl") against the exact mode, alternately, in one process.

Data: the slides' generator (3 equal clusters, q = 50 informative features with means
0 / 0.6 / 1.2, the rest N(0, 1)) at 200 x 1000 and 1000 x 1000. For each size the
exact mode ``sparse_hclust(x)`` and sparcl's numbers ``sparse_hclust(x,
weights="sparcl")`` run one after the other, ``--repeats`` times after one untimed call
each: wall time (``perf_counter``) and CPU time (``process_time``), with BLAS on one
thread (``threadpoolctl``; the CPU times are then the work of each mode) and, with
``--threads``, also on the default BLAS threads (sparcl mode's compiled pass then runs
on as many threads). Medians and the ratio sparcl mode / exact mode.

The kernels are compiled when the package is built; what a new process pays for them
(importing the compiled module, the first calls) is measured in two child processes.

Target (issue 18): sparcl mode within 2x of the exact mode at 1000 x 1000.

Run: python benchmarks/hclust_sparcl_mode.py [--repeats 5] [--threads] [--skip-compile]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from sparseclust import sparse_hclust
from sparseclust.exceptions import ConvergenceWarning

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sparcl_side_by_side import simulate  # noqa: E402  (the slides' design, same data)

COMPILE_CODE = """
import time
t0 = time.perf_counter()
import numpy as np
from sparseclust._sparse.dissimilarity_jit import rounding_block, rounding_block32
t1 = time.perf_counter()
X = np.zeros((4, 3), np.float32)
rounding_block32(X, 0, 1, np.empty((2, 3), np.float32))
rounding_block(X, 0, 1, np.empty((2, 3)))
print(f"{t1 - t0:.3f} {time.perf_counter() - t1:.3f}")
"""


def timed(X: np.ndarray, mode: str) -> tuple[float, float]:
    t, c = time.perf_counter(), time.process_time()
    sparse_hclust(X, weights=mode)
    return time.perf_counter() - t, time.process_time() - c


def compare(n: int, p: int, repeats: int) -> dict:
    """Median (wall, CPU) of each mode, alternating, after one untimed call each."""
    X = simulate(n, p)
    times: dict[str, list[tuple[float, float]]] = {"exact": [], "sparcl": []}
    for mode in times:
        timed(X, mode)
    for _ in range(repeats):
        for mode in times:
            times[mode].append(timed(X, mode))
    return {m: np.median(np.array(v), axis=0) for m, v in times.items()}


def compile_cost() -> tuple[str, str]:
    """(first process, second process): 'import s, kernels s'."""
    runs = [
        subprocess.run(
            [sys.executable, "-c", COMPILE_CODE], capture_output=True, text=True
        ).stdout.split()
        for _ in range(2)
    ]
    return tuple(f"import {r[0]} s, first calls {r[1]} s" for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", action="store_true", help="also on the default BLAS threads")
    parser.add_argument("--skip-compile", action="store_true")
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    if not args.skip_compile:
        first, second = compile_cost()
        print(f"kernels, a new process: {first}; another: {second}")
    warnings.simplefilter("ignore", ConvergenceWarning)
    settings = [("1 BLAS thread", 1)] + ([("default BLAS threads", None)] if args.threads else [])
    for label, limit in settings:
        for n, p in [(200, 1000), (1000, 1000)]:
            with threadpool_limits(limit):
                med = compare(n, p, args.repeats)
            (ew, ec), (sw, sc) = med["exact"], med["sparcl"]
            print(
                f"{label}, {n} x {p}: exact {ew:.3f} s wall / {ec:.3f} s CPU; "
                f"sparcl mode {sw:.3f} s / {sc:.3f} s; ratio {sw / ew:.2f}x wall, "
                f"{sc / ec:.2f}x CPU"
            )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
