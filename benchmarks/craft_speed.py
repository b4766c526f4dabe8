"""CRAFT speed: Spambase against scikit-learn KMeans, Adult against kmodes' KPrototypes,
and one fit on 1,000,000 x 20 mixed rows.

1. Spambase (4601 x 57 numeric), m = 0.5, k = 2. ``craft(X, m=0.5, k=2)`` calibrates
   lambda; its standardised matrix (the ``CraftData`` the call prepared) is then given
   to scikit-learn ``KMeans(n_clusters=2, n_init=1)`` and one
   ``sparseclust._craft.core.craft_fit`` at the calibrated lambda is timed (same seed as
   the restart the call chose, so it reproduces its labels): median of several runs,
   same process. KMeans is timed with its default threads and pinned to one thread
   (``craft_fit`` pins BLAS to one thread). Target: craft_fit within 2x of KMeans.
   The whole ``craft(X, m=0.5, k=2)`` call (calibration + restarts, default ``n_init``) is timed too.
   Target: under 1 s. The paper reports 0.39 s for one CRAFT run.
2. Adult (48842 x 14, 6 numeric, 8 categorical, missing cells in 3 categorical
   columns), k = 2, m = 0.5: ``craft(...)`` against ``KPrototypes(n_clusters=2,
   n_init=1, init="Cao")`` on the same rows: the complete cases (45222 rows;
   KPrototypes cannot take missing values), numeric columns standardised for both.
   KPrototypes runs in a child process with a time limit (``--kp-timeout``, 600 s);
   past it, both are timed on a random subsample (``--kp-subsample`` rows) and the
   report says so. Skipped with a message when kmodes is not installed (it is not a
   dependency of sparseclust: ``pip install kmodes``). Target: CRAFT at least 10x
   faster. CRAFT on all 48842 rows (missing cells handled natively) is shown too.
   Measured (``--skip-scale --no-profile --repeats 3``, both cores kept busy by two
   other jobs, load average 3.1): craft() 0.97 s against KPrototypes 20.4 s (13
   iterations), 21.0x; one craft_fit 0.064 s; all 48842 rows 1.69 s. The same run before
   the kernel work of docs/decisions.md "CRAFT speed on mixed data" (load 2.3): craft()
   1.90 s against 21.2 s, 11.2x; one craft_fit 0.131 s; all rows 2.69 s (the same
   labels, restarts and objectives). With the seeded restarts (``n_seeded="auto"``:
   3 beside the 10 calibrated ones; load average 2.7-3.4): craft() 1.16-1.29 s
   against 20.8-21.6 s, 16-19x; 1.03 s (22x) with calibrated restarts alone in the
   same session; alternated runs of the two: 1.10-1.16 s against 0.94-1.07 s. The
   Spambase whole call: 0.78-0.79 s median against 0.68 s (a seeded run is chosen
   there, and the one-fit row then re-runs it with ``fixed_k``).
3. Scaling: 1,000,000 x 20 mixed rows (10 numeric, 10 categorical with 4 levels, 3
   planted clusters, each with its own 4 numeric and 4 categorical features), one
   ``craft_fit`` at the fixed lambda 38 (``--scale-lambda``), three seeds: time,
   passes, K, purity, and peak memory (tracemalloc peak of the fit's own allocations,
   in a repeat of the first run; and the process's peak RSS, data generation
   included). Lambda 38 comes from a pilot on these data: ``craft(..., k=3)`` on a
   20,000-row subsample calibrated lambda to 28.3 (K = 3 there), which opens 8-24
   clusters on 200,000 rows and more; K = 3 with purity 1 for lambda 38-42 on 200,000
   and 1,000,000 rows for most seeds (a fixed lambda opens more clusters as n grows,
   since more points lie in the tails).

Run: python benchmarks/craft_speed.py [--quick] [--skip-adult] [--skip-scale]
(``--quick``: 3 repeats instead of 7, scaling on 200,000 rows).
A last section (skip with ``--no-profile``) profiles the two whole ``craft()`` calls
with cProfile and counts their ``craft_fit`` calls by the number of clusters reached.
Measured full run on the 2-core benchmark machine, shared with other jobs (load
average 1.7): 165 s (the three Adult ``craft()`` calls and KPrototypes take most of it),
before the Adult numbers above; ``--skip-scale`` runs in about 40 s.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import resource
import sys
import time
import tracemalloc
import warnings

import numpy as np
import pandas as pd

from sparseclust import craft
from sparseclust._craft.core import craft_fit, prepare
from sparseclust._craft.front import default_rho
from sparseclust.datasets import load_adult, load_spambase
from sparseclust.metrics import purity

TARGETS: list[dict] = []


def record(what: str, target: str, measured: str, met: bool | None) -> None:
    TARGETS.append({"target": what, "wanted": target, "measured": measured, "met": _yes(met)})


def _yes(met: bool | None) -> str:
    return "n/a" if met is None else ("yes" if met else "NO")


def median_time(fn, repeats: int) -> tuple[float, list[float], object]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), times, out


def chosen_seed(rng: int, n_init: int, chosen: int) -> np.random.SeedSequence:
    """The seed ``craft(..., rng=rng, n_init=n_init)`` gave its restart ``chosen``.

    Mirrors how craft() spawns restart seeds (one SeedSequence from the rng, spawned
    n_init times for the calibrated restarts, then n_seeded times for the seeded ones:
    restart j of the table is child j); the caller checks that the labels are reproduced.
    """
    gen = np.random.default_rng(rng)
    return np.random.SeedSequence(int(gen.integers(2**63 - 1))).spawn(n_init)[chosen]


def refit_chosen(fit, d, rng: int = 0):
    """A function running the chosen restart of ``craft(..., rng=rng)`` again: one
    ``craft_fit`` at its lambda (a calibrated restart) or at its number of clusters
    (a seeded restart, ``fixed_k``), with its seed. Returns (function, label)."""
    r = fit.restarts
    chosen = int(np.flatnonzero(r["chosen"].to_numpy())[0])
    seed = chosen_seed(rng, len(r), chosen)
    seeded = r["kind"].iloc[chosen] == "seeded"
    lam, k = (None, fit.n_clusters) if seeded else (fit.lam, None)

    def run():
        return craft_fit(d, lam, fixed_k=k, m=fit.m, rho=fit.rho, rng=np.random.default_rng(seed))

    what = f"seeded {fit.n_clusters}-cluster run" if seeded else f"calibrated lambda={fit.lam:.1f}"
    return run, what


def show(title: str, df: pd.DataFrame) -> None:
    print(f"\n{title}")
    with pd.option_context(
        "display.width", 250, "display.max_columns", 30, "display.float_format", "{:.4g}".format
    ):
        print(df.to_string(index=False))


# ---------------------------------------------------------------------- Spambase
def spambase(repeats: int) -> None:
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    X = load_spambase().drop(columns="type")
    y = load_spambase()["type"]
    print(f"\n== Spambase {X.shape[0]} x {X.shape[1]}, m = 0.5, k = 2 ==")
    fit = craft(X, m=0.5, k=2, rng=0)  # also warms up imports
    d = fit._prep.data  # the standardised matrix and arrays craft() prepared
    Xs = d.X0
    one_fit, what = refit_chosen(fit, d)
    t_fit, _, out = median_time(one_fit, repeats)
    same = bool(np.array_equal(out.labels, fit.labels.to_numpy(dtype=np.int64)))

    def km(threads):
        def run():
            with threadpool_limits(limits=threads):
                return KMeans(n_clusters=2, n_init=1, random_state=0).fit(Xs)

        return run

    km(None)()  # warm-up
    t_km, _, kmfit = median_time(km(None), repeats)
    t_km1, _, kmfit1 = median_time(km(1), repeats)
    rows = [
        {
            "method": "KMeans(k=2, n_init=1), default threads",
            "median s": t_km,
            "iterations": kmfit.n_iter_,
            "ms/iter": 1e3 * t_km / kmfit.n_iter_,
            "purity": purity(y, kmfit.labels_),
        },
        {
            "method": "KMeans(k=2, n_init=1), 1 thread",
            "median s": t_km1,
            "iterations": kmfit1.n_iter_,
            "ms/iter": 1e3 * t_km1 / kmfit1.n_iter_,
            "purity": purity(y, kmfit1.labels_),
        },
        {
            "method": f"craft_fit, {what}",
            "median s": t_fit,
            "iterations": out.n_iter,
            "ms/iter": 1e3 * t_fit / out.n_iter,
            "purity": purity(y, out.labels),
        },
    ]
    show(
        f"one fit (median of {repeats}; same process, same standardised matrix)", pd.DataFrame(rows)
    )
    print(f"craft_fit reproduces the labels of craft()'s chosen restart: {same}; K = {out.state.K}")
    best_km = min(t_km, t_km1)
    ratio = t_fit / best_km
    print(
        f"ratio craft_fit / KMeans: {t_fit / t_km:.2f} (default threads), "
        f"{t_fit / t_km1:.2f} (1 thread)"
    )
    record(
        "Spambase craft_fit vs KMeans",
        "<= 2x the faster KMeans",
        f"{ratio:.2f}x ({t_fit * 1e3:.1f} ms vs {best_km * 1e3:.1f} ms)",
        ratio <= 2,
    )

    # the whole call: calibration + restarts
    rows = []
    for n_jobs in (None, 2):
        for r in range(repeats):
            t0 = time.perf_counter()
            f = craft(X, m=0.5, k=2, rng=r, n_jobs=n_jobs, keep_data=False)
            rows.append(
                {
                    "n_jobs": n_jobs or 1,
                    "rng": r,
                    "seconds": time.perf_counter() - t0,
                    "calibration fits": 0 if f.calibration is None else len(f.calibration),
                    "restarts": len(f.restarts),
                    "restarts at k": int((f.restarts["n_clusters"] == 2).sum()),
                    "purity": purity(y, f.labels),
                }
            )
    tab = pd.DataFrame(rows)
    show("whole craft(X, m=0.5, k=2) call (calibration + restarts, default n_init)", tab)
    med = tab.groupby("n_jobs")["seconds"].median()
    for nj, s in med.items():
        print(f"median over seeds, n_jobs={nj}: {s:.2f} s")
    record(
        "Spambase whole craft(k=2) call",
        "< 1 s",
        f"{med.min():.2f} s (median; n_jobs=1: {med.iloc[0]:.2f} s)",
        bool(med.min() < 1),
    )
    print(f"paper: 0.39 s for one run; ours one run {t_fit:.3f} s ({0.39 / t_fit:.0f}x faster)")
    record(
        "Spambase one CRAFT run vs paper 0.39 s",
        "far faster",
        f"{t_fit:.3f} s ({0.39 / t_fit:.0f}x)",
        t_fit < 0.39,
    )


# ------------------------------------------------------------------------- Adult
def _kprototypes_child(num, cat, queue) -> None:
    from kmodes.kprototypes import KPrototypes

    arr = np.empty((num.shape[0], num.shape[1] + cat.shape[1]), dtype=object)
    arr[:, : num.shape[1]] = num
    arr[:, num.shape[1] :] = cat
    t0 = time.perf_counter()
    kp = KPrototypes(n_clusters=2, n_init=1, init="Cao", random_state=0)
    labels = kp.fit_predict(arr, categorical=list(range(num.shape[1], arr.shape[1])))
    queue.put((time.perf_counter() - t0, int(kp.n_iter_), labels))


def run_kprototypes(df: pd.DataFrame, timeout: float):
    """KPrototypes in a child process; (seconds, n_iter, labels) or None on timeout."""
    num_cols = [c for c in df.columns if df[c].dtype.kind == "f"]
    cat_cols = [c for c in df.columns if c not in num_cols]
    num = df[num_cols].to_numpy(dtype=float)
    num = (num - num.mean(axis=0)) / num.std(axis=0, ddof=1)  # as craft(scale=True)
    cat = df[cat_cols].astype(str).to_numpy(dtype=object)
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_kprototypes_child, args=(num, cat, queue))
    proc.start()
    try:
        return queue.get(timeout=timeout)
    except Exception:  # queue.Empty: past the time limit
        return None
    finally:
        if proc.is_alive():
            proc.terminate()
        proc.join()


def adult(timeout: float, subsample: int) -> None:
    full = load_adult()
    y_full = full["income"]
    X_full = full.drop(columns="income")
    complete = X_full.dropna()
    y = y_full.loc[complete.index]
    print(
        f"\n== Adult: {len(X_full)} rows ({len(complete)} complete cases), "
        f"{X_full.shape[1]} columns, m = 0.5, k = 2 =="
    )
    try:
        import kmodes  # noqa: F401
    except ImportError:
        print("kmodes is not installed (pip install kmodes): KPrototypes row skipped.")
        kp_available = False
    else:
        kp_available = True

    rows = []
    t0 = time.perf_counter()
    f = craft(complete, m=0.5, k=2, rng=0)
    t_craft = time.perf_counter() - t0
    rows.append(
        {
            "method": "craft(m=0.5, k=2), complete cases",
            "rows": len(complete),
            "seconds": t_craft,
            "K": f.n_clusters,
            "purity": purity(y, f.labels),
        }
    )
    d = f._prep.data
    t_one, _, one = median_time(refit_chosen(f, d)[0], 3)
    rows.append(
        {
            "method": "one craft_fit at its lambda (median of 3)",
            "rows": len(complete),
            "seconds": t_one,
            "K": one["state"].K,
            "purity": purity(y, one["labels"]),
        }
    )
    t0 = time.perf_counter()
    ff = craft(X_full, m=0.5, k=2, rng=0)
    rows.append(
        {
            "method": "craft(m=0.5, k=2), all rows, missing native",
            "rows": len(X_full),
            "seconds": time.perf_counter() - t0,
            "K": ff.n_clusters,
            "purity": purity(y_full, ff.labels),
        }
    )
    if kp_available:
        res = run_kprototypes(complete, timeout)
        kp_rows, t_craft_same = len(complete), t_craft
        if res is None:
            print(
                f"KPrototypes did not finish on {len(complete)} rows within {timeout:.0f} s; "
                f"timing both on a random subsample of {subsample} complete rows (seed 0)."
            )
            sub = complete.sample(n=subsample, random_state=0)
            t0 = time.perf_counter()
            fs = craft(sub, m=0.5, k=2, rng=0)
            t_craft_same = time.perf_counter() - t0
            rows.append(
                {
                    "method": "craft(m=0.5, k=2), subsample",
                    "rows": subsample,
                    "seconds": t_craft_same,
                    "K": fs.n_clusters,
                    "purity": purity(y.loc[sub.index], fs.labels),
                }
            )
            res = run_kprototypes(sub, timeout)
            kp_rows, y_kp = subsample, y.loc[sub.index]
        else:
            y_kp = y
        if res is not None:
            t_kp, it_kp, lab_kp = res
            rows.append(
                {
                    "method": f"KPrototypes(k=2, n_init=1, Cao), {it_kp} iterations",
                    "rows": kp_rows,
                    "seconds": t_kp,
                    "K": len(np.unique(lab_kp)),
                    "purity": purity(y_kp, lab_kp),
                }
            )
            ratio = t_kp / t_craft_same
            print(
                f"ratio KPrototypes / craft() on the same {kp_rows} rows: {ratio:.1f}x; "
                f"KPrototypes / one craft_fit: {t_kp / t_one:.0f}x"
            )
            record(
                "Adult craft() vs KPrototypes",
                ">= 10x faster",
                f"{ratio:.1f}x ({t_craft_same:.2f} s vs {t_kp:.1f} s, {kp_rows} rows)",
                ratio >= 10,
            )
        else:
            print("KPrototypes did not finish on the subsample either: no ratio.")
            record("Adult craft() vs KPrototypes", ">= 10x faster", "KPrototypes timed out", None)
    else:
        record("Adult craft() vs KPrototypes", ">= 10x faster", "kmodes not installed", None)
    show("Adult", pd.DataFrame(rows))


# ----------------------------------------------------------------------- scaling
def planted(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n x (10 numeric + 10 categorical, 4 levels), 3 clusters.

    Cluster c: numeric features 3c..3c+3 ~ N(3, 0.5^2) (others N(0, 1)); categorical
    features 3c..3c+3 take level c with probability 0.8 (others uniform).
    """
    z = rng.integers(3, size=n)
    num = rng.standard_normal((n, 10))
    codes = rng.integers(4, size=(n, 10))
    for c in range(3):
        rows = np.flatnonzero(z == c)
        cols = np.arange(3 * c, 3 * c + 4)
        num[np.ix_(rows, cols)] = rng.normal(3.0, 0.5, size=(rows.size, cols.size))
        hit = rng.random((rows.size, cols.size)) < 0.8
        block = codes[np.ix_(rows, cols)]
        codes[np.ix_(rows, cols)] = np.where(hit, c, block)
    return num, codes, z


def scaling(n: int, lam: float, seeds: int, calibrate_rows: int) -> None:
    print(
        f"\n== Scaling: {n:,} x 20 mixed (10 numeric, 10 categorical x 4 levels), "
        f"3 clusters, one craft_fit at lambda = {lam:g}, m = 0.5 =="
    )
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    num, codes, z = planted(n, rng)
    t_gen = time.perf_counter() - t0
    m = 0.5
    t0 = time.perf_counter()
    std = (num - num.mean(axis=0)) / num.std(axis=0, ddof=1)  # as craft(scale=True)
    d = prepare(std, codes, [4] * 10, alpha=0.01)
    t_prep = time.perf_counter() - t0
    print(
        f"data generated in {t_gen:.2f} s; prepared (standardise, typed arrays) in {t_prep:.2f} s"
    )
    if calibrate_rows:
        sub = rng.choice(n, size=min(calibrate_rows, n), replace=False)
        df = pd.DataFrame(num[sub], columns=[f"x{j}" for j in range(10)])
        for j in range(10):
            df[f"c{j}"] = pd.Categorical(codes[sub, j], categories=range(4))
        t0 = time.perf_counter()
        cal = craft(df, m=m, k=3, rng=0)
        print(
            f"craft(m=0.5, k=3) on {sub.size:,} of these rows: {time.perf_counter() - t0:.1f} s, "
            f"lambda {cal.lam:.2f}, K {cal.n_clusters}, purity {purity(z[sub], cal.labels):.3f}; "
            f"restart lambdas {cal.restarts['lam'].min():.1f}-{cal.restarts['lam'].max():.1f}"
        )
    rho = default_rho(m)
    rows = []
    for s in range(seeds):
        t0 = time.perf_counter()
        out = craft_fit(d, lam, m=m, rho=rho, rng=np.random.default_rng(s))
        t_fit = time.perf_counter() - t0
        rows.append(
            {
                "rng": s,
                "craft_fit s": t_fit,
                "passes": out.n_iter,
                "s/pass": t_fit / out.n_iter,
                "converged": out.converged,
                "K": out.state.K,
                "purity": purity(z, out.labels),
            }
        )
        if s == 0:
            sel = out.state.v
    show("one craft_fit per seed", pd.DataFrame(rows))
    print("selected features per cluster, rng=0 (numeric x0-x9, then categorical c0-c9):")
    for k in range(sel.shape[0]):
        print("  " + "".join("#" if v else "." for v in sel[k]))

    tracemalloc.start()
    craft_fit(d, lam, m=m, rho=rho, rng=np.random.default_rng(0))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB (Linux)
    per_row = [d.X0, d.codes, d.g0] + ([] if d.M is None else [d.M])
    data_mb = sum(a.nbytes for a in per_row) / 2**20
    med = float(np.median([r["craft_fit s"] for r in rows]))
    print(
        f"prepared data: {data_mb:.0f} MiB; peak of the fit's own allocations (tracemalloc, "
        f"rng=0 again): {peak / 2**20:.0f} MiB; process peak RSS (data generation included): "
        f"{maxrss:.0f} MiB"
    )
    print(f"median craft_fit: {med:.2f} s, {med / n * 1e6:.2f} us per row")
    record(
        f"{n:,} x 20 mixed, one craft_fit",
        "report time, memory",
        f"{med:.2f} s (median of {seeds} seeds), fit peak {peak / 2**20:.0f} MiB, "
        f"RSS {maxrss:.0f} MiB",
        None,
    )


# ----------------------------------------------------------- where the time goes
def profile_call(label: str, X: pd.DataFrame, k: int, top: int = 8) -> None:
    """cProfile one ``craft(X, m=0.5, k=k, rng=0)`` call and count its craft_fit calls."""
    import cProfile
    import io
    import pstats

    from sparseclust._craft import core as _craft_core

    log: list[tuple[float, int, int, float]] = []
    original = _craft_core.craft_fit

    def counted(d, lam, **kw):
        t0 = time.perf_counter()
        out = original(d, lam, **kw)
        log.append((lam, out.state.K, out.n_iter, time.perf_counter() - t0))
        return out

    _craft_core.craft_fit = counted  # craft() calls it as _craft_core.craft_fit
    prof = cProfile.Profile()
    try:
        t0 = time.perf_counter()
        prof.enable()
        fit = craft(X, m=0.5, k=k, rng=0, n_jobs=1)
        prof.disable()
        total = time.perf_counter() - t0
    finally:
        _craft_core.craft_fit = original
    fits = pd.DataFrame(log, columns=["lam", "K", "passes", "seconds"])
    by_k = fits.assign(
        group=np.select(
            [fits["K"] == k, fits["K"] > k], [f"K = {k}", f"K > {k}"], default=f"K < {k}"
        )
    ).groupby("group")
    summary = by_k.agg(
        fits=("seconds", "size"),
        seconds=("seconds", "sum"),
        mean_passes=("passes", "mean"),
        max_K=("K", "max"),
    ).reset_index()
    print(
        f"\n-- where the time goes: craft({label}, m=0.5, k={k}, rng=0), {total:.2f} s under "
        f"cProfile; {len(fits)} craft_fit calls for {len(fit.restarts)} restarts "
        f"({int((fit.restarts['n_clusters'] == k).sum())} of them ended at k) --"
    )
    with pd.option_context("display.width", 200, "display.float_format", "{:.3g}".format):
        print(summary.to_string(index=False))
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
    lines = [ln for ln in out.getvalue().splitlines() if ln.strip()]
    start = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("ncalls"))
    print("\n".join(lines[start : start + top + 1]))


def where_time_goes() -> None:
    X = load_spambase().drop(columns="type")
    profile_call("Spambase", X, 2)
    adult_cc = load_adult().drop(columns="income").dropna()
    profile_call("Adult complete cases", adult_cc, 2)


# -------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="3 repeats, scaling on 200,000 rows")
    ap.add_argument("--repeats", type=int, default=None, help="timing repeats (default 7)")
    ap.add_argument("--skip-adult", action="store_true")
    ap.add_argument("--skip-scale", action="store_true")
    ap.add_argument("--no-profile", action="store_true", help="skip the cProfile section")
    ap.add_argument("--scale-rows", type=int, default=None, help="rows for the scaling run")
    ap.add_argument(
        "--scale-lambda",
        type=float,
        default=38.0,
        help="fixed lambda for the scaling run (default 38, see the docstring)",
    )
    ap.add_argument(
        "--calibrate-rows",
        type=int,
        default=0,
        help="also time craft(k=3) on this many of the scaling rows (slow: 20000 takes ~2 min)",
    )
    ap.add_argument("--kp-timeout", type=float, default=600.0, help="KPrototypes limit, s")
    ap.add_argument("--kp-subsample", type=int, default=10_000)
    args = ap.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 7)
    n_scale = args.scale_rows or (200_000 if args.quick else 1_000_000)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load average {load:.1f}, Python {platform.python_version()}, numpy {np.__version__}"
    )
    t_start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spambase(repeats)
        if not args.skip_adult:
            adult(args.kp_timeout, args.kp_subsample)
        if not args.skip_scale:
            scaling(n_scale, args.scale_lambda, 3, args.calibrate_rows)
        if not args.no_profile:
            where_time_goes()
    show("Targets", pd.DataFrame(TARGETS))
    print(f"\ntotal time: {time.perf_counter() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
