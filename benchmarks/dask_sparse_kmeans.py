"""Sparse k-means on Dask: the same fit as in memory, on more rows than sparcl can take.

Data: ``--rows`` (default 5,000,000) x 20 numeric columns, three clusters that differ
on the first 4 columns only, generated partition by partition on the workers (never
one pandas frame). ``sparse_kmeans(ddf, 3, wbound=2, nstart=5, scale=True)`` runs on
a 2-worker LocalCluster (Lloyd: the Dask backend's algorithm) and, in this process,
on ``--memory-rows`` (default 1,000,000) rows of the same design with
``algorithm="lloyd"`` (the in-memory path is the same code over one block). Reported:
wall time of each whole call (reading and scaling included on Dask), Lloyd passes
over the data (initial multi-start + partition steps), ns per row per pass, the
weights on the informative columns, and the peak resident memory of each worker.

sparcl's ``KMeansSparseCluster`` builds distances among all rows (an (n + k)^2 matrix
in its ``UpdateCs``): 1,000,000 rows would need 8 TB, so there is no sparcl column.

Run: python benchmarks/dask_sparse_kmeans.py [--rows N] [--partitions P] [--malloc unset]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from sparseclust import sparse_kmeans

P = 20
INFORMATIVE = 4


def make_part(i: int, rows: int, seed: int = 0) -> pd.DataFrame:
    """Partition ``i`` of the design (its own seed: any partition can be made anywhere)."""
    rng = np.random.default_rng([seed, i])
    g = rng.integers(0, 3, rows)
    x = rng.normal(size=(rows, P))
    x[:, :INFORMATIVE] += 2.0 * (g[:, None] == (np.arange(INFORMATIVE) % 3))
    return pd.DataFrame(x, columns=[f"x{j}" for j in range(P)])


def peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def count_passes() -> dict[str, int]:
    """Count the Lloyd passes (one map of a Lloyd kernel over all blocks) of the fits."""
    from sparseclust._engine.blocks import LocalBlocks
    from sparseclust._engine.dask import FutureBlocks

    counts = {"passes": 0}
    lloyd = {"_k_ms_assign", "_k_ll_step", "_k_nl_step"}
    for cls in (LocalBlocks, FutureBlocks):

        def counted(self, kernel, states, *args, _map=cls.map):
            counts["passes"] += kernel.__name__ in lloyd
            return _map(self, kernel, states, *args)

        cls.map = counted
    return counts


KW = {"wbound": 2.0, "nstart": 5, "max_iter": 10, "scale": True, "rng": 1}


def report(what: str, fit, seconds: float, rows: int, passes: int) -> float:
    ns = seconds / (rows * passes) * 1e9
    w = fit.weights.to_numpy()
    print(
        f"{what}: {rows:,} rows, {seconds:.1f} s, {passes} passes -> {ns:.0f} ns/row/pass; "
        f"{fit.n_iter} rounds, converged {fit.converged}; weight on x0-x3 "
        f"{w[:INFORMATIVE].sum() / w.sum():.3f}, non-zero {fit.n_nonzero}"
    )
    return ns


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--partitions", type=int, default=10)
    ap.add_argument("--memory-rows", type=int, default=1_000_000)
    ap.add_argument("--malloc", choices=["default", "unset"], default="unset")
    args = ap.parse_args()

    import dask
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    counts = count_passes()
    mem = pd.concat([make_part(10_000 + i, args.memory_rows // 10) for i in range(10)])
    t0 = time.perf_counter()
    fit = sparse_kmeans(mem, 3, algorithm="lloyd", **KW)
    ns_mem = report("in memory", fit, time.perf_counter() - t0, len(mem), counts["passes"])
    del mem

    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ"))
    if args.malloc == "unset":  # see benchmarks/dask_craft.py
        environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    rows_per = args.rows // args.partitions
    with dask.config.set({"distributed.nanny.pre-spawn-environ": environ}):
        with (
            LocalCluster(
                n_workers=2,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                memory_limit=0,
            ) as cluster,
            Client(cluster) as client,
        ):
            ddf = dd.from_map(make_part, range(args.partitions), rows=rows_per)
            counts["passes"] = 0
            t0 = time.perf_counter()
            fit = sparse_kmeans(ddf, 3, **KW)
            sizes = fit.sizes.tolist()
            dt = time.perf_counter() - t0
            peaks = client.run(peak_rss_mb)
    ns_dask = report("Dask", fit, dt, rows_per * args.partitions, counts["passes"])
    print(f"cluster sizes {sizes}")
    print("peak worker memory (MB): " + ", ".join(f"{v:.0f}" for v in peaks.values()))
    print(f"Dask / in memory, per row and pass: {ns_dask / ns_mem:.2f}x")


if __name__ == "__main__":
    main()
