"""How well ``craft(df, m=...)`` without ``k`` or ``lam`` chooses the number of clusters.

The gap statistic on the model's negative log-likelihood (see ``craft()`` Notes):
on the CRAFT paper's synthetic designs (true K = 3) over several seeds, and on the
real data sets, where the number of classes is a reference point (clusters need not
be classes). Run: ``python benchmarks/craft_k_selection.py [--seeds N]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from sparseclust import craft, simulate
from sparseclust.datasets import load_monk3, load_penguins, load_spambase, load_splice, load_wine
from sparseclust.metrics import nmi, purity

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "banknote.csv.gz"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, numpy {np.__version__}")
    rows = []
    designs = [
        ("craft_fig2a", 1 / 3, True),
        ("craft_fig2c", 1 / 3, True),
        ("craft_fig3a", 1 / 3, False),
        ("craft_fig3c", 1 / 3, False),
    ]
    for name, m, scale in designs:
        ks, secs = [], []
        for s in range(args.seeds):
            sim = simulate.DESIGNS[name](rng=s)
            t0 = time.perf_counter()
            fit = craft(sim.data, m=m, scale=scale, rng=s)
            secs.append(time.perf_counter() - t0)
            ks.append(fit.n_clusters)
        rows.append(
            {
                "data": name,
                "true K / classes": 3,
                "K chosen": ks,
                "share correct": np.mean(np.array(ks) == 3),
                "s per call": np.mean(secs),
            }
        )
    real = []
    if SHARED.exists():
        bank = pd.read_csv(SHARED)
        real.append(("Bank", bank.drop(columns="class"), bank["class"]))
    for name, loader, label in [
        ("Wine", load_wine, "class"),
        ("Penguins", load_penguins, "species"),
        ("Monk-3", load_monk3, "class"),
        ("Splice", load_splice, "class"),
        ("Spam", load_spambase, "type"),
    ]:
        df = loader()
        X = df.drop(columns=[label] + (["year"] if name == "Penguins" else []))
        real.append((name, X, df[label]))
    for name, X, y in real:
        ks, pur, nm, secs = [], [], [], []
        for s in range(min(args.seeds, 3)):
            t0 = time.perf_counter()
            fit = craft(X, m=0.5, rng=s)
            secs.append(time.perf_counter() - t0)
            ks.append(fit.n_clusters)
            pur.append(purity(y, fit.labels))
            nm.append(nmi(y, fit.labels))
        rows.append(
            {
                "data": name,
                "true K / classes": y.nunique(),
                "K chosen": ks,
                "purity": np.mean(pur),
                "NMI": np.mean(nm),
                "s per call": np.mean(secs),
            }
        )
        print(rows[-1], flush=True)
    with pd.option_context(
        "display.width", 200, "display.max_colwidth", 40, "display.float_format", "{:.3f}".format
    ):
        print(pd.DataFrame(rows).set_index("data"))


if __name__ == "__main__":
    main()
