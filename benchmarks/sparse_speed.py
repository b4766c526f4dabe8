"""Sparse k-means speed against R's sparcl (measured) and scikit-learn (same process).

Data: the slides' generator (``sparseclust.simulate.sparse_sim``: 3 clusters,
q = 50 informative features with means 0 / 0.6 / 1.2, N(mu, 1)), n x p as below.

1. ``sparse_kmeans(x, 3, wbound=s)`` with sparcl's ``nstart = 20``, for
   s = 5 (few features) and s = 0.5 sqrt(p) (many: the slow case for the partition
   step), median of repeats. Reference in the same process: scikit-learn
   ``KMeans(n_clusters=3, n_init=20)`` on the same data (the unweighted k-means that
   sparse k-means starts from). sparcl 1.0.4's measured times on this kind of machine
   (2 cores, reference BLAS) are the targets' basis: 1.05 s (200 x 1000), 4.2 s
   (1000 x 1000), > 330 s (2000 x 5000). Targets: <= 0.06 s, <= 0.5 s, <= 20 s.
2. ``kmeans_sparse_permute(x, 3, nperms=10)`` over sparcl's default 10 bounds,
   ``n_jobs=2``. sparcl: 31.5 s (200 x 1000), 247 s (1000 x 1000). Targets: <= 1.5 s,
   <= 12 s.
Peak memory: tracemalloc peak of one call (numpy allocations are traced).

Run: python benchmarks/sparse_speed.py [--quick] [--skip-big]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import tracemalloc
import warnings

import numpy as np

from sparseclust import kmeans_sparse_permute, sparse_kmeans
from sparseclust.exceptions import ConvergenceWarning
from sparseclust.metrics import ari
from sparseclust.simulate import sparse_sim

SPARCL_KM = {(200, 1000): 1.05, (1000, 1000): 4.2, (2000, 5000): 330.0}
TARGET_KM = {(200, 1000): 0.06, (1000, 1000): 0.5, (2000, 5000): 20.0}
SPARCL_PERM = {(200, 1000): 31.5, (1000, 1000): 247.0}
TARGET_PERM = {(200, 1000): 1.5, (1000, 1000): 12.0}


def data(n: int, p: int, seed: int = 0):
    sim = sparse_sim(n_per_cluster=n // 3 + 1, p=p, q=50, rng=seed)
    return sim.data.iloc[:n], sim.labels.iloc[:n].to_numpy()


def timed(f, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return float(np.median(times)), out


def peak(f) -> float:
    tracemalloc.start()
    f()
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top / 2**20


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip-big", action="store_true")
    args = ap.parse_args()
    reps = 3 if args.quick else 5
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    from sklearn.cluster import KMeans

    warnings.simplefilter("ignore", ConvergenceWarning)
    sizes = [(200, 1000), (1000, 1000)] + ([] if args.skip_big else [(2000, 5000)])
    print("\n1. sparse_kmeans, one bound, nstart = 20")
    head = (
        f"{'n x p':>12} {'s':>6} {'nonzero':>7} {'ARI':>5} {'time s':>8} {'peak MiB':>8} "
        f"{'sklearn s':>9} {'sparcl s':>8} {'x sparcl':>8} {'target s':>8}"
    )
    print(head)
    for n, p in sizes:
        X, truth = data(n, p)
        r = 1 if (n, p) == (2000, 5000) else reps
        t_sk, _ = timed(lambda X=X: KMeans(3, n_init=20, random_state=0).fit(X.to_numpy()), r)
        for s in (5.0, 0.5 * np.sqrt(p)):
            t, fit = timed(lambda X=X, s=s: sparse_kmeans(X, 3, wbound=s, rng=0), r)
            mem = (
                peak(lambda X=X, s=s: sparse_kmeans(X, 3, wbound=s, rng=0)) if n < 2000 else np.nan
            )
            print(
                f"{n:>5} x {p:<5} {s:>6.2f} {fit.n_nonzero:>7d} "
                f"{ari(fit.labels.to_numpy(dtype=int), truth):>5.2f} {t:>8.3f} {mem:>8.1f} "
                f"{t_sk:>9.3f} {SPARCL_KM[(n, p)]:>8.2f} {SPARCL_KM[(n, p)] / t:>8.1f} "
                f"{TARGET_KM[(n, p)]:>8.2f}"
            )
    print("\n2. kmeans_sparse_permute, 10 bounds x 10 permutations, n_jobs = 2")
    print(
        f"{'n x p':>12} {'best s':>7} {'nonzero':>7} {'time s':>8} {'sparcl s':>8} "
        f"{'x sparcl':>8} {'target s':>8}"
    )
    for n, p in [(200, 1000), (1000, 1000)]:
        X, _ = data(n, p)
        r = 1 if n == 1000 else min(reps, 3)
        t, perm = timed(lambda X=X: kmeans_sparse_permute(X, 3, nperms=10, n_jobs=2, rng=0), r)
        print(
            f"{n:>5} x {p:<5} {perm.best_wbound:>7.2f} "
            f"{int(perm.table['n_nonzero'].iloc[perm.best_index]):>7d} {t:>8.2f} "
            f"{SPARCL_PERM[(n, p)]:>8.1f} {SPARCL_PERM[(n, p)] / t:>8.1f} "
            f"{TARGET_PERM[(n, p)]:>8.1f}"
        )


if __name__ == "__main__":
    main()
