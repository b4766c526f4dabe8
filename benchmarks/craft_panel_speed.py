"""The whole ``craft(X, m=0.5, k=K)`` call on every panel set under 6,000 rows, against
the 1 s target of issue 17 and kmodes' KPrototypes in the same run.

For each set of ``benchmarks/mixed_panel.py``'s panel (Adult, 48,842 rows, only with
``--adult``), ``K`` = the number of classes, after one warm-up call (imports, first use of
the compiled kernels):

* ``craft(X, m=0.5, k=K, rng=seed, progress=False)`` in this process: wall time and
  CPU time (``time.process_time``) with BLAS on one thread (threadpoolctl), the least of
  ``--repeats`` calls per seed, the median over ``--seeds`` seeds;
* the same call with ``n_jobs=2`` (restarts on two forked workers): wall time, the CPU
  critical path (this process's CPU time for the call plus the task CPU of the busiest
  worker, recorded by wrapping the task runner ``restarts._apply_to``: a benchmark-only
  patch of a private function), the wall time on an otherwise idle machine; and
  whether its fit (labels, restart table) equals the serial call's. On a loaded
  machine wall time measures the scheduler: with autogroup scheduling (Linux's default)
  the forked workers share their parent's group and its one share of the CPU, so two
  workers there run no faster than one process;
* KPrototypes (kmodes; KModes on the all-categorical sets and scikit-learn's KMeans on
  the all-numeric ones, as ``mixed_panel.py`` runs them: ``run_peer``), seed 0, wall
  and CPU. Skipped with a message when kmodes is not installed
  (``pip install kmodes``).

Printed per set: the times, the ratio of the serial wall time (and the faster of serial
and ``n_jobs=2``) to the 1 s target, and CRAFT's wall time over KPrototypes'. The
``machine:`` line gives the load average: on a loaded machine wall times are inflated
(CPU times less so); the target is for a quiet one.

Run: python benchmarks/craft_panel_speed.py [--seeds 3] [--repeats 2] [--sets a,b]
[--adult] [--no-peer] [--no-parallel]. About 2 minutes with the defaults.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

import sparseclust._craft.restarts as restarts
from sparseclust import craft

sys.path.insert(0, str(Path(__file__).parent))
from mixed_panel import SETS, load_set, run_peer  # noqa: E402  (the panel's sets and peer)

TARGET = 1.0  # seconds: issue 17, craft(df, k=K) on a quiet 2-core machine
MAX_ROWS = 6_000


_TASK = restarts._apply_to
_LOG = None  # a Manager list of (pid, task CPU seconds), shared with the forked workers


def _timed_task(*args):
    c = time.process_time()
    out = _TASK(*args)
    _LOG.append((os.getpid(), time.process_time() - c))
    return out


def _call(X: pd.DataFrame, k: int, seed: int, n_jobs: int | None) -> tuple[float, float, object]:
    """(wall, CPU: this process's, plus the busiest worker's tasks with ``n_jobs``,
    fit) of one ``craft(X, m=0.5, k=k)`` call."""
    del _LOG[:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, c = time.perf_counter(), time.process_time()
        fit = craft(X, m=0.5, k=k, rng=seed, progress=False, n_jobs=n_jobs)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
    per: dict[int, float] = {}
    for pid, used in list(_LOG):
        if pid != os.getpid():
            per[pid] = per.get(pid, 0.0) + used
    return wall, cpu + max(per.values(), default=0.0), fit


def time_set(X: pd.DataFrame, k: int, seeds: int, repeats: int, parallel: bool) -> dict:
    """Medians over seeds of the least of ``repeats`` calls: serial wall and CPU,
    ``n_jobs=2`` wall; whether every parallel fit equals the serial one."""
    serial_wall, serial_cpu, par_wall, par_cpu, same = [], [], [], [], True
    for seed in range(seeds):
        runs = [_call(X, k, seed, None) for _ in range(repeats)]
        serial_wall.append(min(r[0] for r in runs))
        serial_cpu.append(min(r[1] for r in runs))
        if parallel:
            pruns = [_call(X, k, seed, 2) for _ in range(repeats)]
            par_wall.append(min(r[0] for r in pruns))
            par_cpu.append(min(r[1] for r in pruns))
            same &= all(
                np.array_equal(p[2].labels.to_numpy(), runs[0][2].labels.to_numpy())
                and p[2].restarts.equals(runs[0][2].restarts)
                for p in pruns
            )
    out = {
        "wall s": float(np.median(serial_wall)),
        "cpu s": float(np.median(serial_cpu)),
        "restarts": len(runs[0][2].restarts),
    }
    if parallel:
        out["n_jobs=2 wall s"] = float(np.median(par_wall))
        out["n_jobs=2 cpu path s"] = float(np.median(par_cpu))
        out["n_jobs=2 same fit"] = same
    return out


def peer_time(X: pd.DataFrame, k: int) -> dict:
    try:
        import kmodes  # noqa: F401
    except ImportError:
        return {}
    out = run_peer(X, k, 0)
    return {"peer": out["method"], "peer wall s": out["time"], "peer cpu s": out["cpu"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=2, help="calls per seed (the least is kept)")
    ap.add_argument("--sets", default=None, help="comma-separated panel names")
    ap.add_argument("--adult", action="store_true", help="also Adult (48,842 rows)")
    ap.add_argument("--no-peer", action="store_true", help="skip KPrototypes")
    ap.add_argument("--no-parallel", action="store_true", help="skip the n_jobs=2 calls")
    args = ap.parse_args(argv)
    global _LOG
    _LOG = mp.get_context("fork").Manager().list()
    restarts._apply_to = _timed_task
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, load average {load:.1f}, "
        f"Python {platform.python_version()}, numpy {np.__version__}"
    )
    names = args.sets.split(",") if args.sets else SETS
    rows = []
    with threadpool_limits(limits=1, user_api="blas"):
        for name in names:
            data = load_set(name)
            if isinstance(data, str):
                print(f"{name}: {data}")
                continue
            X, y = data
            if len(X) >= MAX_ROWS and not (args.adult and name == "adult"):
                continue
            k = int(pd.Series(y).nunique())
            _call(X, k, 0, None)  # warm-up: imports, compiled kernels
            row = {"set": name, "rows": len(X), "cols": X.shape[1], "K": k}
            row |= time_set(X, k, args.seeds, args.repeats, not args.no_parallel)
            row["wall / 1 s"] = row["wall s"] / TARGET
            row["cpu / 1 s"] = row["cpu s"] / TARGET
            if not args.no_parallel:
                row["n_jobs=2 cpu path / 1 s"] = row["n_jobs=2 cpu path s"] / TARGET
            if not args.no_peer:
                row |= peer_time(X, k)
                if "peer wall s" in row:
                    row["craft / peer"] = row["wall s"] / row["peer wall s"]
            rows.append(row)
            print(f"{name}: done ({row['wall s']:.2f} s)", flush=True)
    tab = pd.DataFrame(rows)
    with pd.option_context(
        "display.width", 250, "display.max_columns", 30, "display.float_format", "{:.3g}".format
    ):
        print(tab.to_string(index=False))
    print()
    for col in ("wall / 1 s", "cpu / 1 s", "n_jobs=2 cpu path / 1 s"):
        if col in tab:
            met = int((tab[col] <= 1).sum())
            print(f"sets within the 1 s target by {col[:-6]}: {met} of {len(tab)}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average at the end: {load:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
