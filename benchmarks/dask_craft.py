"""CRAFT on Dask: ns per row per pass on a 2-worker LocalCluster, next to the in-memory path.

Data: ``--rows`` (default 10,000,000) x 20 mixed columns (10 numeric, 10 categorical
with 4 levels), three planted clusters, generated partition by partition on the
workers (never one pandas frame). Lambda is calibrated to K = 3 on the in-memory rows
(same design, the fits' seed), then one fit of ``--passes`` passes (max_iter, the fit
stops earlier only if it converges) runs on all rows:

* Dask: ``prepare_dask`` (read, levels, scaling, persisted blocks; timed apart) and
  ``craft_fit`` on the blocks - the kernels run where the blocks live;
* in memory: ``craft_fit`` on ``--memory-rows`` (default 1,000,000) rows of the same
  design, in this process.

Reported: ns per row per pass for both, their ratio, and the peak resident memory
of each worker. ``--malloc {default,unset}``: Dask's nanny starts workers with
``MALLOC_TRIM_THRESHOLD_=65536`` (default); ``unset`` starts them without it, so that
glibc's dynamic thresholds keep large numpy temporaries in the heap instead of mapping
and unmapping them on every call (1 worker, 1,000,000 rows: about 460 against 610
ns/row/pass; raising the threshold instead does not help, as any explicit threshold
turns the dynamic behaviour off).

Run: python benchmarks/dask_craft.py [--rows N] [--partitions P] [--malloc unset]
Targets (issue): at most 160 ns/row/pass on Dask, and no slower than in memory with
Dask's default worker settings.

Measured (2 cores, 10,000,000 rows, 20 partitions, K = 3, 10 passes; in memory on
1,000,000 rows in the same run):

* workers without ``MALLOC_TRIM_THRESHOLD_`` (``--malloc unset``): 141-150 ns/row/pass
  on Dask vs 187-215 in memory (0.70-0.76x); target <= 160 met;
* Dask's default worker settings: 171-186 ns/row/pass vs 151-204 in memory
  (0.88-1.13x over four runs); target <= 1x met in one run of four - the in-memory
  time itself varies by a third between runs on this shared machine;
* peak worker memory 1.97-2.0 GB (5,000,000 rows per worker).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from sparseclust import _craft_core as core
from sparseclust._craft import _prepare
from sparseclust._dask import prepare_dask
from sparseclust._frame import build_table

LEVELS = np.array(list("abcd"))
SEED = np.random.SeedSequence(1)


def make_part(i: int, rows: int, seed: int = 0) -> pd.DataFrame:
    """Partition ``i`` of the design (its own seed: any partition can be made anywhere)."""
    rng = np.random.default_rng([seed, i])
    g = rng.integers(0, 3, rows)
    num = rng.normal(size=(rows, 10)) + 1.5 * (g[:, None] == (np.arange(10) % 3))
    df = pd.DataFrame(num, columns=[f"x{j}" for j in range(10)])
    for j in range(10):
        noise = rng.integers(0, 4, rows)
        df[f"c{j}"] = pd.Categorical(
            LEVELS[np.where(rng.random(rows) < 0.6, (g + j) % 4, noise)], categories=LEVELS
        )
    return df


def peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--partitions", type=int, default=20)
    ap.add_argument("--memory-rows", type=int, default=1_000_000)
    ap.add_argument("--passes", type=int, default=10)
    ap.add_argument("--malloc", choices=["default", "unset"], default="unset")
    args = ap.parse_args()

    import dask
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    # in memory; lambda calibrated to K = 3 on these rows, for the seed the fits use (the
    # rule "open a cluster when a point's cost exceeds lambda" sees more extreme points
    # in more rows, and another start can give another K at the same lambda)
    from sparseclust._craft import _calibrated_run, _lambda_hi

    mem = pd.concat(
        [make_part(20_000 + i, args.memory_rows // 10) for i in range(10)], ignore_index=True
    )
    d_m = _prepare(build_table(mem), True, 0.01).data
    del mem
    settings = dict(
        m=0.5,
        rho=0.24,
        budget="fixed",
        eps_c=None,
        eps_v=None,
        sigma_floor=0.05,
        max_iter=100,
        shuffle=False,
    )
    consts = core.craft_constants(0.5, 0.24)
    lam = _calibrated_run(d_m, settings, 3, SEED, _lambda_hi(d_m, consts))["lam"]
    print(f"lambda calibrated to K = 3 on the {d_m.n:,} in-memory rows: {lam:.4g}")
    t0 = time.perf_counter()
    out = core.craft_fit(
        d_m, lam, m=0.5, rho=0.24, max_iter=args.passes, rng=np.random.default_rng(SEED)
    )
    dt = time.perf_counter() - t0
    ns_mem = dt / (d_m.n * out["n_iter"]) * 1e9
    print(
        f"in memory: {d_m.n:,} rows, K={out['state'].K}, {out['n_iter']} passes, {dt:.2f} s "
        f"-> {ns_mem:.0f} ns/row/pass"
    )
    del d_m, out

    environ = dict(
        dask.config.get("distributed.nanny.pre-spawn-environ")
    )  # keeps OMP_NUM_THREADS=1
    if args.malloc == "unset":
        # Not a larger value: setting any malloc threshold turns off glibc's dynamic mmap
        # threshold, and every large temporary is then mapped and unmapped again.
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
            t0 = time.perf_counter()
            prep = prepare_dask(
                ddf, None, categorical=None, numeric=None, missing="native", scale=True, alpha=0.01
            )
            t_prep = time.perf_counter() - t0
            B = prep["data"]
            t0 = time.perf_counter()
            out = core.craft_fit(
                B, lam, m=0.5, rho=0.24, max_iter=args.passes, rng=np.random.default_rng(SEED)
            )
            dt = time.perf_counter() - t0
            ns_dask = dt / (B.n * out["n_iter"]) * 1e9
            peaks = client.run(peak_rss_mb)
    print(
        f"Dask ({args.malloc} malloc setting): {B.n:,} rows in {args.partitions} partitions, "
        f"read + persisted in {t_prep:.1f} s; K={out['state'].K}, {out['n_iter']} passes, "
        f"{dt:.2f} s -> {ns_dask:.0f} ns/row/pass"
    )
    print("peak worker memory (MB): " + ", ".join(f"{v:.0f}" for v in peaks.values()))
    print(f"Dask / in memory: {ns_dask / ns_mem:.2f}x  (target: <= 160 ns/row/pass; <= 1x)")


if __name__ == "__main__":
    main()
