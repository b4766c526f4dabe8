"""Covariate clustering: the paper's synthetic Table 1 (ANMI against the true clusters).

Section 4 of Andrade, Fukumizu & Okajima: c = 4 classes, 10 true covariate clusters of
m covariates (d = 10 m), ``sparseclust.simulate.covariate_sim``. For each (d, n) and
repetition: the proposed method (``covariate_clustering``, selection by the approximate
marginal likelihood, sigma by the authors' CV-accuracy rule) next to the two baselines
with the same S and the same selection (convex clustering and k-means of the rows of S),
under two protocols:

* ``estimated``: S from the data (Ledoit-Wolf on class-centred data, negatives set to
  0), as the paper's text says;
* ``true``: S = the true Sigma*, as the authors' scripts did.

The paper's Table 1 (mean and sd over 10 repetitions) is printed beside both protocols
(its text says S was estimated; the authors' scripts passed Sigma*). ``ANMI loglik``
is the ANMI of the clustering the marginal likelihood selects with sigma from the
other CV rule (held-out log-likelihood), read off the same fit.

ANMI is scikit-learn's ``adjusted_mutual_info_score(..., average_method="arithmetic")``.
The authors' code with the true Sigma* at d = 40 selects 9 clusters with ANMI 0.945 at
n = 40 and 400.

Measured (2-core machine shared with other jobs; 10 repetitions; mean (sd)), selection
by the marginal likelihood, sigma by the CV-accuracy rule:

===========  =================  ======  ============  ============  ============
S            method             d       n = 40        n = 400       n = 4000
===========  =================  ======  ============  ============  ============
Ledoit-Wolf  proposed           40      0.814 (0.23)  0.918 (0.19)  1.000 (0)
Ledoit-Wolf  proposed           200     0.796 (0.19)  0.961 (0.08)  1.000 (0)
Ledoit-Wolf  convex clustering  40      0.665 (0.12)  0.507 (0.24)  0.221 (0.31)
Ledoit-Wolf  convex clustering  200     0.814 (0)     0.814 (0)     0.446 (0.33)
Ledoit-Wolf  k-means            40      0.659 (0.14)  0.553 (0.19)  0.398 (0.30)
Ledoit-Wolf  k-means            200     0.740 (0.11)  0.777 (0.05)  0.542 (0.16)
true Sigma*  proposed           40      0.945 (0)     0.984 (0.03)  0.998 (0.01)
true Sigma*  proposed           200     0.966 (0)     0.989 (0.02)  1.000 (0)
true Sigma*  convex clustering  40      0.645 (0.23)  0.600 (0.32)  0.300 (0.39)
true Sigma*  convex clustering  200     0.814 (0)     0.814 (0)     0.325 (0.42)
true Sigma*  k-means            40      0.624 (0.10)  0.576 (0.11)  0.487 (0.20)
true Sigma*  k-means            200     0.726 (0.09)  0.770 (0.04)  0.385 (0.28)
===========  =================  ======  ============  ============  ============

Paper, Table 1 (mean (sd)): proposed d = 40 0.84 (0.11) / 0.71 (0.20) / 1.0 (0),
d = 200 0.87 (0.16) / 0.95 (0.03) / 1.0 (0); convex clustering d = 40 0.59 / 0.54 /
0.38, d = 200 0.69 / 0.69 / 0.48; k-means d = 40 0.55 / 0.43 / 0.35, d = 200 0.56 /
0.57 / 0.54. Seconds per proposed fit: 2.5 / 4.9 / 51 (d = 40) and 22 / 31 / 234
(d = 200) with Ledoit-Wolf S (nearly dense graph), 1.6 / 3.1 / 27 and 7.3 / 14 / 70
with the true Sigma*, under load.

Every Ledoit-Wolf cell of the proposed method is within 0.05 of the paper or above it
except d = 200, n = 40 (0.796 against 0.87, sd 0.19 and 0.16: the difference is 0.9
standard errors). There the full model classifies every held-out sample at every
sigma, the accuracy rule takes the grid's smallest sigma (1e-3), the prior dominates
and the marginal likelihood prefers merging covariates associated with the same class:
3 of 10 repetitions select 2-4 clusters (margins 0.14-0.17 nats) although the path
holds a clustering with ANMI 0.966 in 9 of them (``best on path`` 0.961 on average).
With the true Sigma* (the authors' scripts) every cell is at or above the paper's,
and the baselines under that protocol track the paper's baseline rows, which suggests
Table 1 was computed with Sigma*.

Run: python benchmarks/covariate_paper.py [--reps 10] [--quick] [--sizes 40:40,40:400]
     [--methods convex_fusion] [--protocols estimated] [--csv results.csv]
     [--cell-budget 2400]
"""

from __future__ import annotations

import argparse
import csv
import os
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.metrics import adjusted_mutual_info_score

from sparseclust import covariate_clustering
from sparseclust.exceptions import SparseclustWarning
from sparseclust.simulate import covariate_sim

NS = (40, 400, 4000)
#: Table 1: (mean, sd) for n = 40, 400, 4000; selection by the marginal likelihood.
PAPER = {
    ("convex_fusion", 40): ((0.84, 0.11), (0.71, 0.2), (1.0, 0.0)),
    ("convex_fusion", 200): ((0.87, 0.16), (0.95, 0.03), (1.0, 0.0)),
    ("convex_clustering", 40): ((0.59, 0.04), (0.54, 0.18), (0.38, 0.27)),
    ("convex_clustering", 200): ((0.69, 0.0), (0.69, 0.0), (0.48, 0.31)),
    ("kmeans", 40): ((0.55, 0.09), (0.43, 0.14), (0.35, 0.21)),
    ("kmeans", 200): ((0.56, 0.2), (0.57, 0.15), (0.54, 0.13)),
}
FIELDS = [
    "protocol",
    "method",
    "d",
    "n",
    "rep",
    "anmi",
    "anmi_loglik",
    "n_clusters",
    "sigma",
    "margin",
    "best_on_path",
    "seconds",
]


def anmi(a, b) -> float:
    return float(adjusted_mutual_info_score(a, b, average_method="arithmetic"))


def one(d: int, n: int, rep: int, protocol: str, method: str) -> dict:
    sim = covariate_sim(n, m=d // 10, rng=1000 * rep + n + d)
    S = sim.sigma if protocol == "true" else "ledoit_wolf"
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SparseclustWarning)
        fit = covariate_clustering(
            sim.data, y=sim.labels, similarity=S, method=method, rng=rep, progress=False
        )
    seconds = time.perf_counter() - t
    truth = sim.covariate_labels
    other = fit.sigma_by_rule.get("loglik", {}).get("path_row")
    return {
        "protocol": protocol,
        "method": method,
        "d": d,
        "n": n,
        "rep": rep,
        "anmi": anmi(truth, fit.clusters),
        "anmi_loglik": np.nan if other is None else anmi(truth, fit.labels_path[other]),
        "n_clusters": fit.n_clusters,
        "sigma": fit.sigma,
        "margin": fit.margin,
        "best_on_path": max(anmi(truth, lab) for lab in fit.labels_path),
        "seconds": seconds,
    }


def summarise(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    out = []
    for (protocol, method, d, n), g in df.groupby(["protocol", "method", "d", "n"], sort=False):
        paper = PAPER.get((method, d))
        p = paper[NS.index(n)] if paper and n in NS else None
        out.append(
            {
                "protocol": protocol,
                "method": method,
                "d": d,
                "n": n,
                "reps": len(g),
                "ANMI": g["anmi"].mean(),
                "sd": g["anmi"].std(ddof=1) if len(g) > 1 else np.nan,
                "paper": p[0] if p else np.nan,
                "paper sd": p[1] if p else np.nan,
                "ANMI loglik": g["anmi_loglik"].mean(),
                "best on path": g["best_on_path"].mean(),
                "clusters (median)": float(g["n_clusters"].median()),
                "s per fit": g["seconds"].mean(),
            }
        )
    return pd.DataFrame(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--quick", action="store_true", help="d = 40 only, n = 40 and 400")
    ap.add_argument("--sizes", default=None, help="e.g. 40:40,200:400 (d:n pairs)")
    ap.add_argument("--methods", default="convex_fusion,convex_clustering,kmeans")
    ap.add_argument("--protocols", default="estimated,true")
    ap.add_argument(
        "--csv", default=None, help="append one line per fit; fits found there are reused"
    )
    ap.add_argument(
        "--cell-budget",
        type=float,
        default=None,
        help="seconds per (protocol, method, d, n): no new repetition once exceeded",
    )
    args = ap.parse_args()
    if args.sizes:
        sizes = [tuple(int(v) for v in s.split(":")) for s in args.sizes.split(",")]
    elif args.quick:
        sizes = [(40, 40), (40, 400)]
    else:
        sizes = [(d, n) for d in (40, 200) for n in NS]
    done: dict[tuple, dict] = {}
    if args.csv and os.path.exists(args.csv):
        for r in pd.read_csv(args.csv).to_dict("records"):
            done[(r["protocol"], r["method"], int(r["d"]), int(r["n"]), int(r["rep"]))] = r
    rows = []
    for protocol in args.protocols.split(","):
        for method in args.methods.split(","):
            for d, n in sizes:
                spent = 0.0
                for rep in range(args.reps):
                    key = (protocol, method, d, n, rep)
                    if key in done:
                        row = done[key]
                    else:
                        if args.cell_budget is not None and spent > args.cell_budget:
                            break
                        row = one(d, n, rep, protocol, method)
                        if args.csv:
                            new = not os.path.exists(args.csv)
                            with open(args.csv, "a", newline="") as f:
                                w = csv.DictWriter(f, fieldnames=FIELDS)
                                if new:
                                    w.writeheader()
                                w.writerow(row)
                    spent += float(row["seconds"])
                    rows.append(row)
                cell = summarise(
                    [
                        r
                        for r in rows
                        if r["protocol"] == protocol
                        and r["method"] == method
                        and r["d"] == d
                        and r["n"] == n
                    ]
                )
                print(cell.to_string(index=False, float_format=lambda v: f"{v:.3f}"), flush=True)
    print()
    print(summarise(rows).to_string(index=False, float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
