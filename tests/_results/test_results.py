"""Result objects: repr / summary golden text, HTML, to_frame, profiles, Summary."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

from sparseclust import Summary, dpmeans
from sparseclust.datasets import load_penguins, load_wine


@pytest.fixture(scope="module")
def wine_fit():
    wine = load_wine()
    return dpmeans("~ . - class", data=wine, k=3, scale=False)


@pytest.fixture(scope="module")
def penguin_fit():
    penguins = load_penguins()
    return dpmeans("~ . - species - year", data=penguins, k=3, scale=True, missing="drop")


def test_repr_golden(wine_fit, golden):
    golden("dpmeans_wine_repr", repr(wine_fit))


def test_summary_golden(wine_fit, golden):
    golden("dpmeans_wine_summary", str(wine_fit.summary()))


def test_repr_mixed_golden(penguin_fit, golden):
    golden("dpmeans_penguins_repr", repr(penguin_fit))


def test_repr_structure(penguin_fit):
    lines = repr(penguin_fit).splitlines()
    assert lines[0].startswith("DP-means (lambda=")
    assert "333 obs (11 dropped for missing values)" in lines[0]
    assert "6 variables (4 numeric, 2 categorical)" in lines[0]
    assert lines[1].startswith("Call: dpmeans('~ . - species - year', data=")
    assert lines[-1].startswith("Use .summary()")


def test_call_uses_callers_variable_name():
    my_table = pd.DataFrame({"a": [0.0, 0.1, 5.0, 5.1], "b": [1.0, 1.1, 9.0, 9.2]})
    fit = dpmeans(my_table, lam=4.0)
    assert fit.call == "dpmeans(my_table, lam=4.0)"


def test_html_repr(penguin_fit):
    html = penguin_fit._repr_html_()
    assert html.startswith("<div>") and "<table" in html and "Call: dpmeans" in html
    shtml = penguin_fit.summary()._repr_html_()
    assert "<table" in shtml and "Profiles" in shtml and "Notes" in shtml


def test_summary_tables_and_notes(penguin_fit):
    s = penguin_fit.summary()
    assert isinstance(s, Summary)
    assert list(s.tables) == ["clusters", "parameters", "centers", "profiles"]
    clusters = s.tables["clusters"]
    assert clusters["size"].sum() == 333
    assert clusters["size"].tolist() == penguin_fit.sizes.tolist()
    assert any("11 rows with missing values were dropped" in n for n in s.notes)
    assert any("one-hot" in n for n in s.notes)
    assert any("standardised" in n for n in s.notes)
    latex = s.as_latex()
    assert latex.count(r"\begin{tabular}") == 4


def test_profiles_match_pandas(penguin_fit):
    """Profiles equal a groupby computed independently with pandas."""
    penguins = load_penguins().dropna(
        subset=[
            "bill_length_mm",
            "bill_depth_mm",
            "flipper_length_mm",
            "body_mass_g",
            "island",
            "sex",
        ]
    )
    lab = penguin_fit.labels.loc[penguins.index]
    prof = penguin_fit.profiles()
    g = penguins.groupby(lab.to_numpy())
    np.testing.assert_allclose(
        prof.loc[("body_mass_g", "mean"), [0, 1, 2]].to_numpy(float),
        g["body_mass_g"].mean().to_numpy(),
    )
    np.testing.assert_allclose(
        prof.loc[("body_mass_g", "sd"), [0, 1, 2]].to_numpy(float),
        g["body_mass_g"].std().to_numpy(),
    )
    share = g["island"].apply(lambda s: (s == "Biscoe").mean()).to_numpy()
    np.testing.assert_allclose(prof.loc[("island", "Biscoe"), [0, 1, 2]].to_numpy(float), share)
    assert prof.loc[("body_mass_g", "mean"), "overall"] == pytest.approx(
        penguins["body_mass_g"].mean()
    )


def test_relabelling_invariance_of_profiles(penguin_fit):
    """Profiles are per cluster: permuting cluster ids permutes the columns only."""
    perm = {0: 2, 1: 0, 2: 1}
    from sparseclust._results.base import cluster_profiles

    relabelled = penguin_fit.labels.map(lambda v: perm[v] if pd.notna(v) else v).astype("Int64")
    a = cluster_profiles(penguin_fit.table, penguin_fit.labels)
    b = cluster_profiles(penguin_fit.table, relabelled)
    for old, new in perm.items():
        np.testing.assert_allclose(a[old].to_numpy(float), b[new].to_numpy(float))


def test_labels_index_and_to_frame(penguin_fit):
    penguins = load_penguins()
    assert penguin_fit.labels.index.equals(penguins.index)
    assert str(penguin_fit.labels.dtype) == "Int64"
    assert penguin_fit.labels.isna().sum() == 11
    frame = penguin_fit.to_frame()
    assert list(frame.columns) == ["cluster"] and frame.index.equals(penguins.index)
    assert penguin_fit.n_obs == 333 and penguin_fit.n_dropped == 11


def test_frozen_and_picklable(wine_fit):
    with pytest.raises(AttributeError):
        wine_fit.lam = 1.0
    clone = pickle.loads(pickle.dumps(wine_fit))
    assert clone.labels.equals(wine_fit.labels)
    assert repr(clone) == repr(wine_fit)


def test_keep_data_false():
    wine = load_wine()
    fit = dpmeans("~ . - class", data=wine, k=3, scale=False, keep_data=False)
    s = fit.summary()
    assert "profiles" not in s.tables
    assert any("keep_data=False" in n for n in s.notes)
    with pytest.raises(ValueError, match="keep_data=True"):
        fit.profiles()


def test_summary_text_layout():
    s = Summary("Title", "f(x)", {"my_table": pd.DataFrame({"a": [1.23456, np.nan]})}, ["n1"])
    text = str(s)
    assert text.splitlines()[:3] == ["Title", "=====", "Call: f(x)"]
    assert "My table:" in text and "1.235" in text and "NA" in text and "[1] n1" in text


# ------------------------------------------------------------- sparse clustering
def _reference_x() -> pd.DataFrame:
    from pathlib import Path

    return pd.read_csv(Path(__file__).parents[1] / "r_reference" / "det_sim3_p100" / "input.csv")


def test_sparse_kmeans_golden(golden):
    """Deterministic (sparcl's data, its recorded centres, sparcl weights): print/summary."""
    from sparseclust import sparse_kmeans

    x = _reference_x()
    fit = sparse_kmeans(x, wbound=5, centers=x.iloc[[0, 20, 40]], weights="sparcl")
    golden("sparse_kmeans_sim3_repr", repr(fit))
    golden("sparse_kmeans_sim3_summary", str(fit.summary()))


def test_sparse_hclust_golden(golden):
    from sparseclust import sparse_hclust

    fit = sparse_hclust(_reference_x(), wbound=5, weights="sparcl", k=3, niter=50)
    golden("sparse_hclust_sim3_repr", repr(fit))


def test_call_line_prints_numpy_numbers_as_written():
    """A list (or tuple, dict) of numpy scalars reads 3.0 on the Call: line, not np.float64(3.0)."""
    from sparseclust import kmeans_sparse_permute
    from sparseclust.simulate import sparse_sim

    X = sparse_sim(n_per_cluster=5, p=6, q=2, rng=0).data
    bounds = list(np.linspace(1.5, 2.0, 2))  # np.float64 elements
    assert type(bounds[0]) is np.float64
    perm = kmeans_sparse_permute(X, 2, wbounds=bounds, nperms=2, nstart=2, max_iter=20, rng=0)
    assert "wbounds=[1.5, 2.0]" in perm.call
    assert "np." not in perm.call and "float64" not in perm.call
