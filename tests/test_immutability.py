"""No public function modifies the caller's data (DataFrames, arrays, new data)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import sparseclust
from sparseclust import metrics


def _mixed_frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 60
    df = pd.DataFrame(
        {
            "x": np.r_[rng.normal(0, 1, n // 2), rng.normal(6, 1, n // 2)],
            "z": pd.array(rng.integers(0, 5, n), dtype="Int64"),
            "g": pd.Categorical(rng.choice(["a", "b", "c"], n)),
            "s": pd.array(rng.choice(["u", "v"], n), dtype="str"),
            "b": rng.random(n) > 0.5,
        },
        index=[f"r{i}" for i in range(n)],
    )
    df.loc["r3", "x"] = np.nan
    return df


CALLS = {
    "dpmeans": lambda df: sparseclust.dpmeans(df, k=2, missing="drop", scale=True),
    "dpmeans_formula": lambda df: sparseclust.dpmeans(
        "~ x + C(z) + g", data=df, lam=3.0, missing="drop"
    ),
    "dpmeans_random": lambda df: sparseclust.dpmeans(
        df, lam="farthest_first", k=3, init="random", missing="drop", rng=1
    ),
    "farthest_first_lambda": lambda df: sparseclust.farthest_first_lambda(df, k=3, missing="drop"),
    "build_table": lambda df: sparseclust.build_table(df, missing="drop"),
    "predict": lambda df: sparseclust.dpmeans(df, k=2, missing="drop").predict(df, missing="drop"),
    "summary": lambda df: sparseclust.dpmeans(df, k=2, missing="drop").summary(),
    "craft": lambda df: sparseclust.craft(df, k=2, n_init=2, rng=0),
    "sparse_kmeans": lambda df: sparseclust.sparse_kmeans(
        "~ x + z", k=2, data=df, wbound=1.2, rng=0
    ).predict(df),
    "sparse_kmeans_path": lambda df: sparseclust.sparse_kmeans_path(
        "~ x + z", k=2, data=df, wbounds=[1.1, 1.3], rng=0
    ),
    "kmeans_sparse_permute": lambda df: sparseclust.kmeans_sparse_permute(
        "~ x + z", k=2, data=df, wbounds=[1.1, 1.3], nperms=2, rng=0
    ),
    "sparse_weights": lambda df: sparseclust.sparse_weights("~ x + z", [0, 1] * 30, 1.2, data=df),
    "sparse_hclust": lambda df: sparseclust.sparse_hclust("~ x + z", data=df, wbound=1.2, k=2),
    "hclust_sparse_permute": lambda df: sparseclust.hclust_sparse_permute(
        "~ x + z", data=df, wbounds=[1.1, 1.3], nperms=2, rng=0
    ),
}


@pytest.mark.parametrize("name", list(CALLS))
@pytest.mark.filterwarnings(r"ignore:Columns \['z'\] hold integers:UserWarning")  # z: a code
def test_dataframe_not_modified(name):
    df = _mixed_frame()
    before = df.copy(deep=True)
    dtypes, columns, index = df.dtypes.copy(), df.columns.copy(), df.index.copy()
    CALLS[name](df)
    pd.testing.assert_frame_equal(df, before)
    assert df.dtypes.equals(dtypes) and df.columns.equals(columns) and df.index.equals(index)


def test_array_not_modified():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 3))
    x.flags.writeable = False  # any write would raise
    fit = sparseclust.dpmeans(x, k=2, scale=True)
    fit.predict(x)
    sparseclust.farthest_first_lambda(x, k=2)
    fit = sparseclust.sparse_kmeans(x, 2, wbound=1.3, rng=0)
    fit.predict(x)
    sparseclust.kmeans_sparse_permute(x, 2, wbounds=[1.1, 1.5], nperms=2, rng=0)
    sparseclust.sparse_hclust(x, wbound=1.3, niter=50)
    sparseclust.sparse_hclust(x, wbound=1.3, dissimilarity="absolute", weights="sparcl", niter=50)


@pytest.mark.parametrize(
    "fn",
    [
        metrics.purity,
        metrics.nmi,
        metrics.ari,
        metrics.macro_f1,
        metrics.adjusted_nmi,
        metrics.rand_index,
        metrics.cluster_report,
        metrics.match_labels,
    ],
)
def test_metrics_do_not_modify(fn):
    a = pd.Series(["x", "y", "x", "z", "y"], index=list("abcde"))
    b = pd.Series([0, 1, 0, 2, 2], index=list("abcde"))
    a0, b0 = a.copy(), b.copy()
    fn(a, b)
    pd.testing.assert_series_equal(a, a0)
    pd.testing.assert_series_equal(b, b0)
