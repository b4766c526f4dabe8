"""Fits pinned bit for bit: labels, weights and objectives recorded before a refactor.

``tests/golden/pinned_fits.json`` was written by this module's ``record()`` from the
code before the package was reorganised into folders (``python tests/test_pinned.py``
rewrites it; do so only for a change that is meant to alter results, and say so in
the commit). Every method, seeded: a move of code that changes one bit of a result
fails here.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import sparseclust as sc
from sparseclust.datasets import load_penguins, load_wine
from sparseclust.simulate import covariate_sim, craft_fig2a, sparse_sim

# the pinned fits include tiny clusters and grid-edge choices (those warnings are
# tested in tests/_results/test_analyst.py)
pytestmark = [
    pytest.mark.filterwarnings("ignore:.*the gap may be larger beyond the grid"),
    pytest.mark.filterwarnings("ignore:.*found tiny clusters"),
]

PINNED = Path(__file__).parent / "golden" / "pinned_fits.json"


def _labels(s: pd.Series) -> list:
    return [None if pd.isna(v) else int(v) for v in s]


def _floats(x) -> list:
    return [float(v) for v in np.asarray(x, dtype=float).ravel()]


def _craft() -> dict:
    sim = craft_fig2a(rng=0)
    fit = sc.craft(sim.data, m=1 / 3, k=3, rng=0)
    pen = sc.craft("~ . - species - year", data=load_penguins(), m=0.5, k=3, rng=1)
    return {
        "fig2a_labels": _labels(fit.labels),
        "fig2a_lambda": float(fit.lam),
        "fig2a_objective": _floats(fit.objective_path),
        "fig2a_selected": _floats(fit.selected.to_numpy()),
        "penguins_labels": _labels(pen.labels),
        "penguins_lambda": float(pen.lam),
        "penguins_objective": _floats(pen.objective_path),
    }


def _craft_variants() -> dict:
    sim = craft_fig2a(rng=1)
    ent = sc.entropy_clustering(sim.data, k=3, rng=0)
    rf = sc.dp_rf(load_wine().drop(columns="class"), k=3, scale=False, rng=0)
    return {
        "entropy_labels": _labels(ent.labels),
        "entropy_objective": _floats(ent.objective_path),
        "dp_rf_labels": _labels(rf.labels),
        "dp_rf_objective": _floats(rf.objective_path),
    }


def _dpmeans() -> dict:
    wine = load_wine().drop(columns="class")
    fit = sc.dpmeans(wine, k=3, scale=True, rng=0)
    ff = sc.dpmeans(wine, lam="farthest_first", k=3, scale=True, init="random", rng=2)
    return {
        "labels": _labels(fit.labels),
        "lambda": float(fit.lam),
        "objective": _floats(fit.objective_path),
        "ff_labels": _labels(ff.labels),
        "ff_lambda": float(ff.lam),
    }


def _sparse_kmeans() -> dict:
    sim = sparse_sim(rng=1)
    out = {}
    for weights in ("exact", "sparcl"):
        fit = sc.sparse_kmeans(sim.data, 3, wbound=4, weights=weights, rng=0)
        out[f"{weights}_labels"] = _labels(fit.labels)
        out[f"{weights}_weights"] = _floats(fit.weights)
        out[f"{weights}_objective"] = _floats(fit.objective_path)
    perm = sc.kmeans_sparse_permute(
        sim.data, 3, wbounds=np.linspace(2, 8, 5), nperms=4, nstart=5, rng=3
    )
    out["permute_gap"] = _floats(perm.table["gap"])
    out["permute_sd"] = _floats(perm.table["sd_gap"])
    out["permute_best"] = float(perm.best_wbound)
    return out


def _sparse_hclust() -> dict:
    sim = sparse_sim(rng=2)
    fit = sc.sparse_hclust(sim.data, wbound=4, method="average", k=3, niter=50)
    perm = sc.hclust_sparse_permute(sim.data, wbounds=[2.0, 4.0, 6.0], nperms=3, niter=50, rng=4)
    return {
        "labels": _labels(fit.labels),
        "weights": _floats(fit.weights),
        "merge_heights": _floats(fit.linkage[:, 2]),
        "permute_gap": _floats(perm.table["gap"]),
        "permute_best": float(perm.best_wbound),
    }


def _covariate() -> dict:
    sim = covariate_sim(40, m=4, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sc.exceptions.CalibrationWarning)
        fit = sc.covariate_clustering(
            sim.data,
            y=sim.labels,
            similarity=sim.sigma,
            nu=[1.0, 0.3, 0.1, 0.0],
            scale=False,  # pinned in raw units, before scale=True became the default
            rng=0,
        )
    return {
        "clusters": [int(v) for v in fit.clusters],
        "coef": _floats(fit.coef.to_numpy()),
        "log_ml": _floats(fit.path["log_ml"]),
    }


CASES = {
    "craft": _craft,
    "craft_variants": _craft_variants,
    "dpmeans": _dpmeans,
    "sparse_kmeans": _sparse_kmeans,
    "sparse_hclust": _sparse_hclust,
    "covariate": _covariate,
}


def record() -> None:
    lines = [f"{json.dumps(name)}: {json.dumps(f())}" for name, f in CASES.items()]
    PINNED.write_text("{\n" + ",\n".join(lines) + "\n}\n")


@pytest.mark.parametrize("name", list(CASES))
def test_pinned(name):
    want = json.loads(PINNED.read_text())[name]
    got = json.loads(json.dumps(CASES[name]()))  # the same float round trip as the file
    assert got.keys() == want.keys()
    for key in want:
        assert got[key] == want[key], f"{name}.{key} changed"


if __name__ == "__main__":
    record()
