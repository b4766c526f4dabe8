"""Stress: time and peak memory of the default calls on large data.

1. ``craft(df, rng=0)`` (automatic K) on ``--rows`` (2,000,000) x 20 mixed rows: 10
   numeric and 10 categorical columns with 10 levels each (pandas categoricals), 3
   planted clusters, 5 % of the cells missing.
2. ``sparse_kmeans(X, 3, rng=0)`` (the default bound) on 20,000 x 2,000 floats, 3
   clusters planted in 50 of the features.

Each case runs in a subprocess of its own, so that its process peak (``ru_maxrss``) is
its own. Printed: wall and CPU seconds of the call, the input's size (pandas'
``memory_usage(deep=True)``, or the array's ``nbytes``), the peak memory the call
added above what the process held just before it (RSS sampled every 20 ms; and the
process peak minus the RSS before), and that peak over the input's size (the target is
under 3x).

Run: nice python benchmarks/stress.py [--rows N] [--kmeans-rows N] [--kmeans-cols P]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time

MIB = 2**20


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class PeakRSS:
    """RSS high-water mark of this process while the block runs (sampled)."""

    def __enter__(self) -> PeakRSS:
        self.before = _rss()
        self.peak = self.before
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, _rss())

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss())


def craft_data(n: int, seed: int = 0):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    g = rng.integers(3, size=n)
    cols = {}
    for j in range(10):
        x = rng.standard_normal(n) + 2.0 * (g == j % 3)
        x[rng.random(n) < 0.05] = np.nan
        cols[f"x{j}"] = x
    for j in range(10):
        codes = np.where(rng.random(n) < 0.6, (g * 3 + j) % 10, rng.integers(10, size=n))
        codes[rng.random(n) < 0.05] = -1
        cols[f"c{j}"] = pd.Categorical.from_codes(codes, categories=[f"l{i}" for i in range(10)])
    return pd.DataFrame(cols)


def kmeans_data(n: int, p: int, seed: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    g = rng.integers(3, size=n)
    X[:, :50] += 1.5 * g[:, None]
    return X


def run_case(case: str, rows: int, kmeans_rows: int, kmeans_cols: int) -> dict:
    import warnings

    import sparseclust as sc

    warnings.simplefilter("ignore")
    if case == "craft":
        data = craft_data(rows)
        size = int(data.memory_usage(deep=True).sum())
        call = lambda: sc.craft(data, rng=0)  # noqa: E731
        label = f"craft(df, rng=0), {rows:,} x 20 mixed"
    else:
        data = kmeans_data(kmeans_rows, kmeans_cols)
        size = int(data.nbytes)
        call = lambda: sc.sparse_kmeans(data, 3, rng=0)  # noqa: E731
        label = f"sparse_kmeans(X, 3, rng=0), {kmeans_rows:,} x {kmeans_cols:,}"
    cpu0, t0 = time.process_time(), time.perf_counter()
    with PeakRSS() as mem:
        fit = call()
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {
        "case": label,
        "wall_s": wall,
        "cpu_s": cpu,
        "input_mib": size / MIB,
        "added_peak_mib": (mem.peak - mem.before) / MIB,
        "process_peak_mib": maxrss / MIB,
        "added_over_input": (mem.peak - mem.before) / size,
        "k": int(fit.n_clusters),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--kmeans-rows", type=int, default=20_000)
    ap.add_argument("--kmeans-cols", type=int, default=2_000)
    ap.add_argument("--case", choices=["craft", "kmeans"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.case:
        print(json.dumps(run_case(args.case, args.rows, args.kmeans_rows, args.kmeans_cols)))
        return
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    for case in ("craft", "kmeans"):
        cmd = [sys.executable, __file__, "--case", case, "--rows", str(args.rows)]
        cmd += ["--kmeans-rows", str(args.kmeans_rows), "--kmeans-cols", str(args.kmeans_cols)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        print(
            f"{r['case']}: K = {r['k']}, {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} s CPU; "
            f"input {r['input_mib']:.0f} MiB, peak added {r['added_peak_mib']:.0f} MiB "
            f"({r['added_over_input']:.2f}x the input; target < 3x), process peak "
            f"{r['process_peak_mib']:.0f} MiB",
            flush=True,
        )


if __name__ == "__main__":
    main()
