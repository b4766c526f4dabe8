"""Every shipped data set, loaded and passed whole (less its label column), runs through
every method that accepts its column kinds, and through the command line.

Constant columns (Mushroom's ``A16``) are dropped with a DataWarning naming them; the
other warnings a real data set may raise (convergence) are allowed, errors are not. The
number of clusters is the number of classes (automatic K has its own tests). Methods
whose default missing-value policy is ``"raise"`` get ``missing="drop"`` on data with
missing cells, as the error they raise tells the user. The large data sets run with the
slow tests.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import sparseclust as sc
from sparseclust.datasets import list_datasets, load_dataset
from sparseclust.exceptions import DataWarning

INDEX = list_datasets().set_index("name")
#: data sets of more than this many cells run with the slow tests
LARGE = 150_000


def _marks(name: str) -> list:
    row = INDEX.loc[name]
    return [pytest.mark.slow] if row.n_rows * row.n_features > LARGE else []


def _case(name: str, method: str):
    return pytest.param(name, method, marks=_marks(name), id=f"{name}-{method}")


def _data(name: str) -> tuple[pd.DataFrame, pd.Series, int]:
    df = load_dataset(name)
    label = INDEX.loc[name, "label"]
    y = df[label]
    return df.drop(columns=label), y, int(y.nunique())


def _binary(name: str) -> bool:
    """Every variable binary (bool, or a category with at most two levels): the data
    entropy clustering accepts."""
    x, _, _ = _data(name)
    return all(
        pd.api.types.is_bool_dtype(s)
        or (isinstance(s.dtype, pd.CategoricalDtype) and len(s.cat.categories) <= 2)
        for _, s in x.items()
    )


def _methods(name: str) -> list[str]:
    row = INDEX.loc[name]
    methods = ["craft", "dp_rf", "dpmeans"]
    if _binary(name):
        methods.append("entropy_clustering")
    if row.n_categorical == 0:
        methods += ["sparse_kmeans", "sparse_hclust"]
    return methods


CASES = [_case(n, m) for n in INDEX.index for m in _methods(n)]


def _fit(method: str, x: pd.DataFrame, k: int):
    has_na = bool(x.isna().any().any())
    if method == "craft":
        return sc.craft(x, m=0.5, k=k, n_init=2, rng=0)
    if method == "dp_rf":
        return sc.dp_rf(x, k=k, n_init=2, rng=0)
    if method == "entropy_clustering":
        return sc.entropy_clustering(x, k=k, n_init=2, rng=0)
    if method == "dpmeans":
        return sc.dpmeans(x, k=k, missing="drop" if has_na else "raise", rng=0)
    if method == "sparse_kmeans":
        return sc.sparse_kmeans(x, k, wbound=0.5 * np.sqrt(x.shape[1]), nstart=2, rng=0)
    if method == "sparse_hclust":
        return sc.sparse_hclust(x, k=k)
    raise AssertionError(method)


@pytest.mark.parametrize(("name", "method"), CASES)
def test_every_method_runs_on_every_shipped_dataset(name, method):
    x, _, k = _data(name)
    before = x.copy()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = _fit(method, x, k)
    pd.testing.assert_frame_equal(x, before)  # the caller's data is untouched
    const = [c for c in x.columns if x[c].nunique(dropna=True) <= 1]
    assert list(fit.variables.dropped_constant) == const
    if const:
        assert any(
            issubclass(w.category, DataWarning) and str(const) in str(w.message) for w in caught
        )
        assert f"Constant columns dropped: {', '.join(const)}" in repr(fit)
        assert any(", ".join(const) in note for note in fit.summary().notes)
    labels = fit.labels if method != "sparse_hclust" else fit.cut(k)
    assert len(labels) == len(x) and labels.index.equals(x.index)
    assert labels.notna().any()  # placed rows (K itself is each method's own tests' subject)


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=_marks(n)) for n in INDEX.index if INDEX.loc[n, "n_categorical"] == 0],
)
def test_covariate_clustering_runs_on_the_numeric_datasets(name):
    """Convex covariate clustering needs numeric covariates and a response (the label);
    two values of nu and a given sigma keep it short."""
    x, y, _ = _data(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sc.ConvergenceWarning)  # flagged in .path
        fit = sc.covariate_clustering(x, y=y.astype(str), nu=[1.0, 0.1], sigma=1.0, rng=0)
    assert fit.n_clusters >= 1 and fit.variables.dropped_constant == ()
    assert len(fit.clusters) == x.shape[1]


def test_mushroom_constant_column_is_dropped_and_named():
    x, _, _ = _data("mushroom_complete")
    with pytest.warns(DataWarning, match=r"Columns \['A16'\] are constant"):
        fit = sc.craft(x, m=0.5, k=2, n_init=2, rng=0)
    assert fit.variables.dropped_constant == ("A16",) and "A16" not in fit.variables.names
    with pytest.raises(ValueError, match=r"Columns \['A16'\] are constant"):
        sc.craft("~ A1 + A16", data=x, m=0.5, k=2)  # named in a formula: asked for
    new = x.head(3).copy()
    assert fit.predict(new).notna().all()  # new data may carry the dropped column


@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(n)) for n in INDEX.index])
def test_command_line_runs_on_every_shipped_dataset(name, tmp_path):
    k = int(load_dataset(name)[INDEX.loc[name, "label"]].nunique())
    out = tmp_path / "labels.csv"
    run = subprocess.run(
        [sys.executable, "-m", "sparseclust", "craft", "--dataset", name, "--k", str(k),
         "--n-init", "2", "--labels-out", str(out)],
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "ari" in run.stdout
    assert len(pd.read_csv(out)) == INDEX.loc[name, "n_rows"]


@pytest.mark.parametrize("method", ["craft", "sparse_kmeans"])
def test_predict_gives_an_all_missing_row_no_cluster(method):
    x, _, k = _data("wine")
    fit = (
        sc.craft(x, m=0.5, k=k, n_init=2, rng=0)
        if method == "craft"
        else sc.sparse_kmeans(x, k, wbound=2.0, scale=True, rng=0)
    )
    new = x.head(4).copy()
    new.iloc[2] = np.nan
    got = fit.predict(new)
    assert got.isna().tolist() == [False, False, True, False]
    assert got.drop(new.index[2]).tolist() == fit.predict(new.drop(new.index[2])).tolist()
    with pytest.raises(ValueError, match=r"rows \[2\]"):
        fit.predict(new, missing="raise")
