"""The automatic choice of K in ``craft()`` (neither ``k`` nor ``lam``) against
``craft(k=K)`` with the K it chose, in the same process.

1. Small data: 4 numeric + 3 categorical columns (3 clusters), 10, 100 and 1,000 rows
   (``--small``): ``craft(df, m=0.5)`` then ``craft(df, m=0.5, k=K)``: wall and CPU
   seconds, ``craft_fit`` calls, the ratio.
2. Large data: ``--rows`` (200,000) x 20 mixed rows (``craft_speed.planted``: 10
   numeric, 10 categorical with 4 levels, 3 planted clusters). K is chosen on a seeded
   subsample of ``k_sample_rows`` (5,000) rows, then the restarts at K run on all rows,
   as ``craft(k=K)`` runs them (the result is that call's, bit for bit: checked). The
   choice's cost does not grow with the rows; the extrapolation to ``--extrapolate``
   rows (2,000,000) scales the ``craft(k=K)`` time linearly and adds the choice.
   ``--k-rows 1000,2000,5000,...`` also chooses K on subsamples of other sizes (the
   K found and the cost: how ``k_sample_rows`` was set).

3. The panel sets (``--panel all`` or a list, ``--seeds 0,1,2``; ``benchmarks/mixed_panel.py``'s
   loaders and class counts): CPU seconds at one BLAS thread of ``craft(X)`` with every
   K fitted on every stability subsample (``select_k.EARLY_DROP = None``: the fits of
   earlier versions; ``K disjoint`` is their choice by the mean over the 5 disjoint pairs,
   ``K all pairs`` by all 45 pairs of the same fits), of the default ``craft(X)`` (the
   sequential test) and of ``craft(X, k=classes)``, m = "auto" throughout, and the
   ratios of the two ``craft(X)`` calls to the last.

Run: python benchmarks/craft_auto_k.py [--rows N] [--small 10,100,1000] [--k-rows ...]
[--extrapolate N] [--skip-large] [--panel all --seeds 0,1,2]

Measured (``--k-rows 1000,2000,10000``) on the 2-core machine with other jobs running
(load average about 4: wall times 2-4x the CPU times, so the ratios below are of CPU
seconds; fits = ``craft_fit`` calls). Before = the code before issue 22 (K chosen on
every row, candidates up to min(8, n), scikit-learn's adjusted Rand index), same
script and process layout:

============== ======================== ======================== ================== ==========
data           auto before              auto after               craft(k=K)         ratio after
============== ======================== ======================== ================== ==========
10 rows        3.6 s, 1536 fits, K = 3  1.7 s, 1012 fits, K = 3  0.26 s, 155 fits   6.5
100 rows       6.8 s, 2215 fits, K = 3  6.8 s, 2215 fits, K = 3  0.5 s, 167 fits    14
1,000 rows     16.9 s, 2484 fits, K = 3 15.7 s, 2484 fits, K = 3 0.9 s, 206 fits    17
200,000 x 20   1161 s (1407 s wall)     31.2 s (K on 5,000 rows) 5.2 s, 44 fits     6.0
============== ======================== ======================== ================== ==========

200,000 x 20, K = 3 from every subsample size; the choice itself (auto minus
``craft(k=K)``) costs 11 s CPU on 1,000 rows, 15 s on 2,000, 26 s on 5,000 (the
default) and 52 s on 10,000: about 9 s of fixed cost (some 2,300 fits of a few ms
each) plus 3-5 ms per row. Extrapolated to 2,000,000 rows: ``craft(k=K)`` 52 s CPU
(71 s wall), automatic K 78 s CPU (108 s wall): ratio 1.5. Process peak RSS 451 MiB.

``--panel all`` (2026-11-26, load 3-5, CPU s at one BLAS thread; K of seeds 0, 1, 2;
``auto`` the default sequential test, ``complete`` every K on every subsample; medians):

======================= ======= ============ ============ ============= ======== ======== ========== =====
set                     classes K disjoint   K all pairs  K (default)   complete auto     craft(k=)  ratio
======================= ======= ============ ============ ============= ======== ======== ========== =====
house_votes_84          2       2, 2, 2      2, 2, 2      2, 2, 2       0.69     0.36     0.14       2.89
mushroom_complete       2       6, 2, 2      6, 2, 2      2, 2, 2       2.76     1.65     0.62       3.68
splice                  3       3, 3, 3      3, 3, 3      3, 3, 3       9.78     5.38     1.66       3.25
spambase                2       3, 2, 2      3, 2, 3      3, 2, 3       12.39    9.95     2.53       3.93
adult                   2       6, 7, 2      2, 2, 2      2, 2, 2       7.27     5.14     2.60       1.98
banknote                2       2, 2, 2      2, 2, 2      2, 2, 2       0.94     0.56     0.28       1.93
heart_disease_cleveland 2       2, 2, 2      2, 2, 2      2, 2, 2       0.73     0.50     0.21       2.50
monk3                   2       1, 1, 1      1, 1, 1      1, 1, 1       0.39     0.38     0.15       2.51
penguins                3       2, 3, 2      2, 2, 2      2, 2, 2       1.08     0.68     0.39       1.75
wine                    3       2, 2, 2      2, 2, 2      2, 2, 2       0.50     0.46     0.21       1.71
zoo                     7       4, 3, 3      5, 3, 4      4, 3, 4       0.37     0.35     0.27       1.30
soybean_large           19      3, 6, 4      4, 6, 5      4, 6, 5       1.26     1.23     1.52       0.78
======================= ======= ============ ============ ============= ======== ======== ========== =====

The ratio (median of the per-seed ratios of ``auto`` to ``craft(k=classes)``) is at most
4.67 on any seed (Spambase seed 0, whose curve is flat at 0.23-0.34 and leaves few K
early); with every K on every subsample (the fits of earlier versions) the medians were
4.4-7.4 on House votes, Mushroom, Splice and Spambase. ``K disjoint`` is the choice of
earlier versions (mean over the 5 disjoint pairs) from the same fits.

On 10 rows the K candidates stop at n / 2 = 5 (a cluster needs two rows on average
to have a spread) and the scikit-learn import (1-3 s, counted in the first call of a
process) is gone. From 16 to 5,000 rows nothing else changes (same K, same tables,
same labels: the counts of fits are equal). Above 5,000 rows the old rule fitted
2 n_pairs (k_max - 1) = 70 subsample fits of 80 % of all the rows, each with 5
calibrated and 2 seeded restarts, and assigned every row to each: at 10,000 planted
rows 196 s wall against 0.8 s for ``craft(k=3)``; at 200,000 rows 1161 s CPU (223x
``craft(k=3)``; K = 3 too), about 3 hours extrapolated to 2,000,000 rows.

Where the time of the choice goes (100 and 1,000 rows, CPU): the re-calibration of
restarts that land on another number of clusters at the first restart's lambda
(``restarts.restart_at``, the procedure of ``craft(k=K)`` that every subsample fit
repeats) 51 % and 42 %, the first calibrations 19 % and 28 %, the restarts at that
lambda 15 % and 12 %, the seeded runs 8-9 %.
"""

from __future__ import annotations

import argparse
import inspect
import os
import platform
import resource
import sys
import time
import warnings
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from craft_speed import planted  # noqa: E402

from sparseclust import craft  # noqa: E402
from sparseclust._craft import core, select_k  # noqa: E402
from sparseclust._engine.threads import single_blas_thread  # noqa: E402

CALLS = [0]
_craft_fit = core.craft_fit


def _counted(*args, **kwargs):
    CALLS[0] += 1
    return _craft_fit(*args, **kwargs)


core.craft_fit = _counted  # the restarts call core.craft_fit: count them


def small_frame(n: int, seed: int = 0) -> pd.DataFrame:
    """n x (4 numeric + 3 categorical), 3 clusters (numeric shifts of 2 sd, categorical
    levels tied to the cluster 60 % of the time)."""
    rng = np.random.default_rng(seed)
    g = rng.integers(3, size=n)
    df = pd.DataFrame({f"x{j}": rng.normal(size=n) + 2.0 * (g == j % 3) for j in range(4)})
    for j in range(3):
        hit = rng.random(n) < 0.6
        df[f"c{j}"] = pd.Categorical(np.where(hit, (g + j) % 4, rng.integers(4, size=n)))
    return df


def large_frame(n: int) -> pd.DataFrame:
    num, codes, _ = planted(n, np.random.default_rng(0))
    df = pd.DataFrame(num, columns=[f"x{j}" for j in range(10)])
    for j in range(10):
        df[f"c{j}"] = pd.Categorical(codes[:, j], categories=range(4))
    return df


def timed(fn):
    """(result, wall s, CPU s, craft_fit calls)."""
    CALLS[0] = 0
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0, CALLS[0]


def compare(df: pd.DataFrame, label: str, **kw) -> dict:
    """craft(df, m=0.5, **kw) with K chosen, then craft(df, m=0.5, k=K): one row."""
    auto, w1, c1, f1 = timed(lambda: craft(df, m=0.5, rng=0, **kw))
    given, w2, c2, f2 = timed(lambda: craft(df, m=0.5, k=auto.k, rng=0))
    same = bool(auto.labels.equals(given.labels) and auto.lam == given.lam)
    att = auto.k_selection.attrs
    return {
        "data": label,
        "K": auto.k,
        "K chosen on": f"{att['rows']:,} of {att['n_obs']:,}",
        "auto wall s": round(w1, 2),
        "auto CPU s": round(c1, 2),
        "auto fits": f1,
        "k=K wall s": round(w2, 2),
        "k=K CPU s": round(c2, 2),
        "k=K fits": f2,
        "CPU ratio": round(c1 / c2, 1),
        "wall ratio": round(w1 / w2, 1),
        "same fit as k=K": same,
    }


def show(title: str, rows: list[dict]) -> None:
    print(f"\n== {title} ==")
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(pd.DataFrame(rows).to_string(index=False))


# ------------------------------------------------------------------ the panel sets
PANEL_K = {  # the class counts of benchmarks/mixed_panel.py
    "adult": 2,
    "banknote": 2,
    "heart_disease_cleveland": 2,
    "house_votes_84": 2,
    "monk3": 2,
    "mushroom_complete": 2,
    "penguins": 3,
    "soybean_large": 19,
    "spambase": 2,
    "splice": 3,
    "wine": 3,
    "zoo": 7,
}


def _recorded(fn):
    """(result, CPU s, the agreement tensor of the call's choice of K or None)."""
    seen: list = []
    orig = select_k.agreement

    def keep(*args, **kwargs):
        out = orig(*args, **kwargs)
        seen.append(out)
        return out

    select_k.agreement = keep
    try:
        c0 = time.process_time()
        out = fn()
        return out, time.process_time() - c0, (seen[-1] if seen else None)
    finally:
        select_k.agreement = orig


def disjoint_choice(fit, A) -> int:
    """The K earlier versions chose from the same fits: the mean over the disjoint
    pairs of subsamples (0, 1), (2, 3), ... (the gap test's verdict kept)."""
    tab = fit.k_selection
    if tab.attrs.get("gap_test") == "K = 1" or A is None:
        return int(fit.k)
    S = A[0].shape[1]
    pairs = np.array([A[0][:, s, s + 1] for s in range(0, S - 1, 2)])  # (pairs, K)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return select_k.stability_choice(tab["k"].tolist()[1:], np.nanmean(pairs, axis=0))


def panel(sets: list[str], seeds: list[int]) -> list[dict]:
    """Each panel set and seed at one BLAS thread, CPU seconds (``time.process_time``):
    ``craft(X)`` with every K fitted on every subsample (``EARLY_DROP = None``: the
    complete table, the fits of earlier versions; ``K disjoint`` is their choice by
    the disjoint pairs, ``K all pairs`` by all pairs), then the default (sequential)
    ``craft(X)``, then ``craft(X, k=classes)``; m = "auto" throughout."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from mixed_panel import load_set

    rows = []
    n_sub = 2 * inspect.signature(craft).parameters["n_pairs"].default  # subsamples
    with single_blas_thread():
        craft(small_frame(60), k=2, rng=0)  # compiled kernels loaded
        for name in sets:
            data = load_set(name)
            if isinstance(data, str):
                print(f"{name}: {data}")
                continue
            X = data[0]
            for seed in seeds:
                k = PANEL_K[name]
                call = partial(craft, X, rng=seed, progress=False)
                early, select_k.EARLY_DROP = select_k.EARLY_DROP, None
                try:
                    full, c_full, A = _recorded(call)
                finally:
                    select_k.EARLY_DROP = early
                auto, c_auto, _ = _recorded(call)
                _, c_k, _ = _recorded(partial(call, k=k))
                fits = auto.k_selection["fits"].dropna()
                rows.append(
                    {
                        "set": name,
                        "seed": seed,
                        "classes": k,
                        "K disjoint": disjoint_choice(full, A),
                        "K all pairs": int(full.k),
                        "K": int(auto.k),
                        "fits share": round(float(fits.sum() / (n_sub * len(fits))), 2),
                        "auto complete s": round(c_full, 2),
                        "auto s": round(c_auto, 2),
                        "k=K s": round(c_k, 2),
                        "ratio complete": round(c_full / c_k, 2),
                        "ratio": round(c_auto / c_k, 2),
                    }
                )
                print(rows[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--small", default="10,100,1000")
    p.add_argument("--rows", type=int, default=200_000)
    p.add_argument("--k-rows", default="", help="other k_sample_rows to try on --rows")
    p.add_argument("--extrapolate", type=int, default=2_000_000)
    p.add_argument("--skip-large", action="store_true")
    p.add_argument("--panel", default="", help="panel sets (comma-separated, or all)")
    p.add_argument("--seeds", default="0,1,2", help="seeds of --panel")
    a = p.parse_args(argv)
    warnings.simplefilter("ignore")  # CalibrationWarning etc. are not the point here
    if a.panel:
        sets = list(PANEL_K) if a.panel == "all" else a.panel.split(",")
        rows = panel(sets, [int(s) for s in a.seeds.split(",")])
        show("panel sets: craft() against craft(k=classes), CPU s, one BLAS thread", rows)
        return 0
    load = os.getloadavg()[0]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, load average {load:.1f}, "
        f"Python {platform.python_version()}, numpy {np.__version__}"
    )
    small = [int(s) for s in a.small.split(",") if s]
    show(
        "small data: 4 numeric + 3 categorical columns, 3 clusters",
        [compare(small_frame(n), f"{n:,} rows") for n in small],
    )
    if a.skip_large:
        return 0
    df = large_frame(a.rows)
    rows = [compare(df, f"{a.rows:,} x 20")]
    for s in [int(s) for s in a.k_rows.split(",") if s]:
        rows.append(compare(df, f"{a.rows:,} x 20", k_sample_rows=s))
    show("large data: K chosen on a subsample, the restarts on all rows", rows)
    r = rows[0]
    choice_w = r["auto wall s"] - r["k=K wall s"]
    choice_c = r["auto CPU s"] - r["k=K CPU s"]
    scale = a.extrapolate / a.rows
    fit_w, fit_c = r["k=K wall s"] * scale, r["k=K CPU s"] * scale
    print(
        f"\nthe choice of K itself: {choice_w:.1f} s wall, {choice_c:.1f} s CPU (on "
        f"{r['K chosen on']} rows; it does not grow with the rows)."
    )
    print(
        f"extrapolated to {a.extrapolate:,} rows (craft(k=K) linear in the rows): "
        f"craft(k=K) {fit_w:.0f} s wall / {fit_c:.0f} s CPU, automatic K "
        f"{fit_w + choice_w:.0f} s / {fit_c + choice_c:.0f} s: ratio "
        f"{(fit_w + choice_w) / fit_w:.2f} wall, {(fit_c + choice_c) / fit_c:.2f} CPU."
    )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process peak RSS: {rss:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
