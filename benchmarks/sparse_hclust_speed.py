"""Sparse hierarchical clustering: time and memory against sparcl and a materialised-D loop.

Data: the slides' generator (Witten & Tibshirani 2010): 3 equal clusters, q = 50
informative features with means 0 / 0.6 / 1.2, the rest N(0, 1). Sizes 200 x 1000,
1000 x 1000 and 2000 x 5000. Each size runs in a fresh child process (so its peak RSS
is its own): ``sparse_hclust(X)`` with the defaults (exact weights, squared distance,
average linkage, wbound 0.5 sqrt(p), niter 15) is timed (median of ``--repeats``), then
run once more under tracemalloc for the peak of the fit's own allocations. The peak
RSS is the whole child process (interpreter, libraries, the data) at its maximum.

sparcl 1.0.4's HierarchicalSparseCluster on the same kind of machine (2 cores,
reference BLAS; measured for the project's sparse methods specification): 3.8 s / 582 MB at 200 x 1000,
90 s / 12.3 GiB at 1000 x 1000, and "cannot allocate vector of size 74.5 GiB" at
2000 x 5000 (its D is n(n-1)/2 x p doubles, several copies).

At 200 x 1000 the same problem is also solved in this process by a naive numpy
implementation that materialises D (19900 x 1000 doubles) and iterates
``u = D w``, ``a = u'D`` with the same exact projection and stopping rule, and by
``weights="sparcl"`` (sparcl's float32 dissimilarities: Gram scores plus a compiled
pass of corrections). The weights are compared.

Targets: 1000 x 1000 in <= 9 s within 1 GiB; 2000 x 5000 in < 60 s within 2 GiB.

Run: python benchmarks/sparse_hclust_speed.py [--repeats 3] [--skip-big]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import resource
import time
import tracemalloc
import warnings

import numpy as np

from sparseclust._sparse.hclust import sparse_hclust
from sparseclust._sparse.weights import project_weights
from sparseclust.exceptions import ConvergenceWarning

SPARCL = {
    (200, 1000): "3.8 s, 582 MB",
    (1000, 1000): "90 s, 12.3 GiB",
    (2000, 5000): "cannot allocate 74.5 GiB",
}
TARGETS = {(1000, 1000): (9.0, 1.0), (2000, 5000): (60.0, 2.0)}  # seconds, GiB


def simulate(n: int, p: int, q: int = 50, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """3 clusters (sizes as equal as n allows), means 0 / 0.6 / 1.2 on the first q features."""
    rng = np.random.default_rng(seed)
    lab = np.arange(n) % 3
    X = rng.standard_normal((n, p))
    X[:, :q] += np.array([0.0, 0.6, 1.2])[lab][:, None]
    return X, lab


def maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # kB on Linux


def fit_quietly(X: np.ndarray, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return sparse_hclust(X, **kwargs)


def child(n: int, p: int, repeats: int, queue) -> None:
    X, lab = simulate(n, p)
    rss_data = maxrss_mb()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fit = fit_quietly(X)
        times.append(time.perf_counter() - t0)
    tracemalloc.start()
    fit_quietly(X)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    from sparseclust.metrics import ari

    queue.put(
        {
            "n": n,
            "p": p,
            "time": float(np.median(times)),
            "times": times,
            "traced_mb": peak,
            "rss_mb": maxrss_mb(),
            "rss_data_mb": rss_data,
            "n_iter": fit.n_iter,
            "converged": fit.converged,
            "n_nonzero": fit.n_nonzero,
            "informative_selected": int((fit.weights.to_numpy()[:50] > 0).sum()),
            "ari3": float(ari(lab, fit.cut(3).to_numpy())),
            "wbound": fit.wbound,
        }
    )


def run_child(n: int, p: int, repeats: int) -> dict:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=child, args=(n, p, repeats, queue))
    proc.start()
    out = queue.get()
    proc.join()
    return out


# --------------------------------------------------------------------- naive reference
def naive_sparse_hclust(X: np.ndarray, wbound: float, niter: int = 15) -> dict:
    """The textbook alternation on a materialised D (pairs x features), as sparcl stores it."""
    n = X.shape[0]
    rows, cols = np.triu_indices(n, 1)
    D = (X[rows] - X[cols]) ** 2  # n(n-1)/2 x p
    w = np.ones(X.shape[1])
    it = 0
    while it < niter:
        u = D @ w
        u /= np.linalg.norm(u)
        w_old = w
        w, _ = project_weights(np.maximum(u @ D, 0.0), wbound, "exact")
        it += 1
        if np.abs(w_old - w).sum() / np.abs(w_old).sum() <= 1e-4:
            break
    dw = D @ w
    u = dw / np.linalg.norm(dw)
    return {"w": w, "u": u / np.sqrt(2), "crit": float(u @ dw), "n_iter": it}


def compare_small(repeats: int) -> list[str]:
    X, _ = simulate(200, 1000)
    s = 0.5 * np.sqrt(1000)
    lines = []
    rows = []
    for name, fn in [
        ("sparse_hclust (exact, Gram products)", lambda: fit_quietly(X)),
        ("naive numpy, materialised D", lambda: naive_sparse_hclust(X, s)),
        ('sparse_hclust(weights="sparcl")', lambda: fit_quietly(X, weights="sparcl")),
    ]:
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - t0)
        tracemalloc.start()
        fn()
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        rows.append((name, float(np.median(times)), peak, out))
    ours, naive, replica = (r[3] for r in rows)
    base = rows[1][1]
    lines.append(f"{'200 x 1000, same process':44s} {'time':>8s} {'vs naive':>9s} {'peak MB':>9s}")
    for name, t, peak, _ in rows:
        lines.append(f"{name:44s} {t:7.2f}s {base / t:8.1f}x {peak:9.1f}")
    dw = np.max(np.abs(ours.weights.to_numpy() - naive["w"]))
    du = np.max(np.abs(ours.u - naive["u"])) / np.max(np.abs(naive["u"]))
    lines.append(
        f"exact vs naive: max |w diff| {dw:.1e}, max rel u diff {du:.1e}, iterations "
        f"{ours.n_iter} / {naive['n_iter']}, crit rel diff "
        f"{abs(ours.crit - naive['crit']) / naive['crit']:.1e}"
    )
    same = np.array_equal(ours.weights.to_numpy() > 0, replica.weights.to_numpy() > 0)
    lines.append(
        f'exact vs weights="sparcl": same selected features: {same} '
        f"({ours.n_nonzero} / {replica.n_nonzero}); max |w diff| "
        f"{np.max(np.abs(ours.weights.to_numpy() - replica.weights.to_numpy())):.1e}"
    )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-big", action="store_true", help="skip 2000 x 5000")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, numpy {np.__version__}; load average {load:.1f}"
    )
    sizes = [(200, 1000), (1000, 1000)] + ([] if args.skip_big else [(2000, 5000)])
    results = [run_child(n, p, args.repeats if n * p <= 10**6 else 1) for n, p in sizes]
    print()
    print("sparse_hclust(X): exact weights, squared distance, average linkage, defaults")
    header = (
        f"{'n x p':>12s} {'time':>8s} {'traced peak':>12s} {'process RSS':>12s} "
        f"{'iter':>5s} {'nonzero':>8s} {'inf. sel.':>9s} {'ARI(k=3)':>8s}  sparcl 1.0.4"
    )
    print(header)
    for r in results:
        print(
            f"{r['n']:>5d} x {r['p']:<5d} {r['time']:7.2f}s {r['traced_mb']:9.0f} MB "
            f"{r['rss_mb']:9.0f} MB {r['n_iter']:>4d}{'' if r['converged'] else '*'} "
            f"{r['n_nonzero']:>8d} {r['informative_selected']:>6d}/50 {r['ari3']:8.2f}  "
            f"{SPARCL[(r['n'], r['p'])]}"
        )
    print("(* = stopped at niter=15 before the 1e-4 tolerance; process RSS includes the data:")
    for r in results:
        print(f"   {r['n']} x {r['p']}: {r['rss_data_mb']:.0f} MB after generating it)")
    print()
    for r in results:
        key = (r["n"], r["p"])
        if key in TARGETS:
            t_max, gib = TARGETS[key]
            ok = r["time"] <= t_max and r["rss_mb"] <= gib * 1024
            print(
                f"target {key[0]} x {key[1]}: <= {t_max:g} s within {gib:g} GiB -> "
                f"{r['time']:.1f} s, {r['rss_mb'] / 1024:.2f} GiB RSS: {'met' if ok else 'NOT met'}"
            )
    print()
    for line in compare_small(args.repeats):
        print(line)


if __name__ == "__main__":
    main()
