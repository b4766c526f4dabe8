"""The budget m chosen from the data (``craft(m="auto")``, the default) on the 12 data
sets of the mixed-data panel, against the fixed ``m=0.5`` of earlier versions, in the
same process.

For each data set and seed (0, 1, 2 by default), with K the number of classes:

- ``craft(X, m=0.5, k=K)``: the fixed budget (ARI, CPU seconds);
- ``craft(X, k=K)``: m chosen by BIC (the m chosen, ARI, CPU seconds);
- ``craft(X)``: K chosen (stability at m = 0.5), then m by BIC at that K (K, m, ARI,
  CPU seconds).

Printed per data set: the medians over seeds of the ARIs and times, the choices of
every seed, and the ratios of the whole call's time to the ``k=K`` calls. Times are
CPU seconds (``time.process_time``) with BLAS on one thread (threadpoolctl): the
machine is shared, so wall times are not comparable from run to run.

Run: python benchmarks/craft_auto_m.py [--sets wine,zoo,...] [--seeds 0,1,2]
[--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import adjusted_rand_score as adjusted_rand_index
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mixed_panel import SETS, load_set  # noqa: E402  (the panel's sets and loader)

from sparseclust import craft  # noqa: E402


def timed(x, y, **kw) -> dict:
    """One craft() call: CPU seconds, ARI against y, K and m of the result."""
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")
        t = time.process_time()
        fit = craft(x, **kw)
        t = time.process_time() - t
    lab = fit.labels.to_numpy(dtype=float, na_value=np.nan)
    ok = ~np.isnan(lab)
    return {
        "t": t,
        "ari": float(adjusted_rand_index(y[ok], lab[ok].astype(int))),
        "k": int(fit.n_clusters),
        "m": float(fit.m),
    }


CALLS = {"fixed": {"m": 0.5, "k": True}, "auto_m": {"k": True}, "auto": {}}


def run_set(name: str, seeds: list[int], calls: list[str]) -> dict:
    """The calls on one data set, every seed."""
    x, y = load_set(name)
    y = np.asarray(y)
    K = len(pd.unique(y[~pd.isna(y)]))
    rows = []
    for seed in seeds:
        row: dict = {"seed": seed}
        for c in calls:
            kw = {**CALLS[c], "rng": seed}
            if kw.pop("k", False):
                kw["k"] = K
            row[c] = timed(x, y, **kw)
        rows.append(row)
        print(f"  {name} seed {seed}: {json.dumps(rows[-1])}", flush=True)
    return {"set": name, "classes": K, "rows": rows}


def line(res: dict) -> str:
    """The data set's row of the table (all three calls)."""
    med = {
        c: {f: float(np.median([r[c][f] for r in res["rows"]])) for f in ("t", "ari")}
        for c in ("fixed", "auto_m", "auto")
    }
    ms = "/".join(f"{r['auto_m']['m']:g}" for r in res["rows"])
    ks = "/".join(str(r["auto"]["k"]) for r in res["rows"])
    kms = "/".join(f"{r['auto']['m']:g}" for r in res["rows"])
    return (
        f"{res['set']:24s} {res['classes']:>2d} | m=.5 ARI {med['fixed']['ari']:.2f} "
        f"{med['fixed']['t']:6.2f}s | m auto: m {ms:12s} ARI {med['auto_m']['ari']:.2f} "
        f"{med['auto_m']['t']:6.2f}s | K,m auto: K {ks:8s} m {kms:12s} ARI "
        f"{med['auto']['ari']:.2f} {med['auto']['t']:6.2f}s | ratio {med['auto']['t'] / med['auto_m']['t']:.1f}"
        f" (vs m=.5: {med['auto']['t'] / med['fixed']['t']:.1f})"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", default=",".join(SETS))
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--json", default=None, help="write the per-seed numbers here")
    p.add_argument("--calls", default="fixed,auto_m,auto", help="a subset of " + ",".join(CALLS))
    a = p.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    calls = a.calls.split(",")
    results = [run_set(name, seeds, calls) for name in a.sets.split(",")]
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    if set(calls) != set(CALLS):
        return
    print("\nmedians over seeds (CPU seconds, BLAS on one thread); choices per seed")
    for res in results:
        print(line(res))
    near = sum(
        sum(abs(r["auto"]["k"] - res["classes"]) <= 1 for r in res["rows"]) * 2 > len(res["rows"])
        for res in results
    )
    print(f"K within one of the classes (most seeds): {near} of {len(results)} data sets")


if __name__ == "__main__":
    main()
