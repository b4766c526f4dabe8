"""The analyst's surface (issue 20): arguments as written, broom-style tables, short
descriptions of tables, compact HTML summaries, unseen levels in predict, the spread
warning and one scaling rule, the scikit-learn attributes users look for."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import sparseclust as sc
from sparseclust.datasets import load_penguins, load_wine
from sparseclust.exceptions import DataWarning
from sparseclust.simulate import covariate_sim, sparse_sim

TIDY = ["cluster", "variable", "kind", "selected", "relevance", "mean", "sd", "level", "share"]


@pytest.fixture(scope="module")
def penguins():
    return load_penguins()


@pytest.fixture(scope="module")
def craft_fit(penguins):
    return sc.craft("~ . - species - year", data=penguins, m=0.5, k=3, rng=1)


# ---------------------------------------------------------------- Call: line
def test_call_keeps_arguments_written_at_their_defaults(craft_fit):
    assert craft_fit.call == "craft('~ . - species - year', data=penguins, m=0.5, k=3, rng=1)"
    fit = sc.dpmeans(sparse_sim(rng=1).data, k=3, scale=False, max_iter=100)
    assert fit.call.endswith("k=3, scale=False, max_iter=100)")
    assert "max_iter" not in sc.dpmeans(sparse_sim(rng=1).data, k=3).call


# ---------------------------------------------------------------- tidy / glance / augment
def _fits(penguins):
    num = penguins[["bill_length_mm", "bill_depth_mm", "flipper_length_mm"]]
    sim = sparse_sim(rng=1).data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        yield "craft", sc.craft("~ . - species - year", data=penguins, k=3, rng=0), penguins
        yield "dpmeans", sc.dpmeans(num, k=3, scale=True, missing="drop"), num
        yield "sparse_kmeans", sc.sparse_kmeans(sim, 3, wbound=3, rng=0), sim
        yield "sparse_hclust", sc.sparse_hclust(sim, wbound=3, k=3), sim
        cat = penguins[["sex"]].assign(dream=penguins["island"] == "Dream")
        yield "entropy", sc.entropy_clustering(cat, k=2, rng=0), cat
        yield "dp_rf", sc.dp_rf(num, k=2, scale=True, rng=0), num


def test_tidy_glance_augment_on_every_cluster_result(penguins):
    for name, fit, data in _fits(penguins):
        tidy = fit.tidy()
        assert list(tidy.columns) == TIDY, name
        assert len(tidy) == fit.n_clusters * len(fit.variables.names), name
        num = tidy[tidy["kind"] == "numeric"]
        # the profile columns are the profiles' numbers
        prof = fit.profiles()
        for row in num[num["mean"].notna()].head(3).itertuples():
            assert row.mean == pytest.approx(prof.loc[(row.variable, "mean"), row.cluster]), name
        glance = fit.glance()
        assert len(glance) == 1 and glance["n_clusters"].iloc[0] == fit.n_clusters, name
        assert glance["n_obs"].iloc[0] == fit.n_obs, name
        aug = fit.augment(data)
        assert list(aug.columns) == [*data.columns, ".cluster"], name
        assert aug.index.equals(data.index) and ".cluster" not in data.columns, name
        pd.testing.assert_series_equal(
            aug[".cluster"], fit.labels.rename(".cluster"), check_names=False
        )


def test_tidy_selection_and_relevance():
    sim = sparse_sim(rng=1).data
    fit = sc.sparse_kmeans(sim, 3, wbound=3, rng=0)
    tidy = fit.tidy()
    one = tidy[tidy["cluster"] == 0].set_index("variable")
    np.testing.assert_allclose(one["relevance"], fit.weights.to_numpy())
    assert (one["selected"].to_numpy(dtype=bool) == (fit.weights > 0).to_numpy()).all()
    craft = sc.craft(sim.iloc[:, :10], k=2, m=0.5, rng=0)
    t = craft.tidy().set_index(["cluster", "variable"])
    for k in craft.selected.index:
        for v in craft.selected.columns:
            assert bool(t.loc[(k, v), "selected"]) == bool(craft.selected.loc[k, v])
    assert t["relevance"].isna().all()


def test_tidy_categorical_profile(craft_fit):
    t = craft_fit.tidy()
    sex = t[(t["variable"] == "sex") & (t["cluster"] == 0)].iloc[0]
    shares = craft_fit.profiles().loc["sex", 0]
    assert sex["level"] == shares.astype(float).idxmax()
    assert sex["share"] == pytest.approx(shares.max())
    assert np.isnan(sex["mean"])


def test_glance_values(craft_fit):
    g = craft_fit.glance().iloc[0]
    assert g["method"] == "CRAFT" and g["k"] == 3 and g["lambda"] == pytest.approx(craft_fit.lam)
    assert g["objective"] == pytest.approx(craft_fit.objective[-1])
    assert g["criterion"] == pytest.approx(craft_fit.neg_loglik)
    assert bool(g["converged"]) == craft_fit.converged


def test_augment_refuses_other_rows(craft_fit, penguins):
    with pytest.raises(ValueError, match="data has 10 rows but the fit has 344"):
        craft_fit.augment(penguins.head(10))
    with pytest.raises(TypeError, match="data must be the DataFrame"):
        craft_fit.augment(penguins.to_numpy())


def test_tidy_glance_augment_of_permute_and_covariate():
    data = sparse_sim(rng=1).data
    perm = sc.kmeans_sparse_permute(data, 3, wbounds=[2, 5], nperms=3, rng=1)
    t = perm.tidy()
    assert list(t.columns) == ["wbound", "n_nonzero", "gap", "sd_gap", "chosen"]
    assert t["chosen"].sum() == 1 and t["wbound"][t["chosen"]].iloc[0] == perm.best_wbound
    g = perm.glance().iloc[0]
    assert g["wbound"] == perm.best_wbound and g["nperms"] == 3 and g["rule"] == "max"
    assert perm.augment(data)[".cluster"].tolist() == perm.best.labels.tolist()

    sim = covariate_sim(40, m=4, rng=0)
    frame = sim.frame()
    fit = sc.covariate_clustering("class ~ .", data=frame, similarity=sim.sigma, sigma=0.1)
    t = fit.tidy()
    assert len(t) == 40 * len(fit.classes)
    row = t.iloc[0]
    assert row["coefficient"] == fit.coef.loc[row["cluster"], row["class"]]
    g = fit.glance().iloc[0]
    assert g["n_clusters"] == fit.n_clusters and g["margin"] == pytest.approx(fit.margin)
    aug = fit.augment(frame)
    assert (aug[".class"].to_numpy() == fit.predict(frame).to_numpy()).all()
    probs = aug[[f".prob_{c}" for c in fit.classes]].to_numpy()
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)


# ---------------------------------------------------------------- short descriptions
def test_table_and_spec_print_as_short_descriptions(golden, penguins):
    table = sc.build_table("~ . - species", data=penguins, missing="drop")
    golden("build_table_penguins_repr", repr(table))
    golden("variable_spec_penguins_repr", repr(table.spec))
    fit = sc.craft("~ . - species - year", data=penguins, k=3, rng=0)
    text = repr(fit.table)
    assert text.splitlines()[0] == "ColumnTable: 344 rows, 6 variables (4 numeric, 2 categorical)"
    assert "missing cells: 19 (kept: missing='native')" in text
    assert "dataclass" not in text and "array(" not in text and len(text.splitlines()) <= 6


# ---------------------------------------------------------------- compact HTML summary
def _adult_like(n: int = 600) -> pd.DataFrame:
    """Mixed data with one categorical of many rare levels (as Adult's countries)."""
    g = np.random.default_rng(3)
    countries = ["US"] * 40 + [f"country{i}" for i in range(40)]
    df = pd.DataFrame(
        {
            "age": g.normal(40, 10, n),
            "hours": g.normal(40, 5, n),
            "sex": g.choice(["f", "m"], n),
            "country": pd.Categorical(
                np.where(g.random(n) < 0.9, "US", g.choice(countries[40:], n))
            ),
        }
    )
    df.loc[: n // 2, "age"] += 30
    return df


def test_summary_html_folds_rare_levels_and_hides_repeated_tables():
    fit = sc.craft(_adult_like(), k=2, m=0.5, rng=0)
    s = fit.summary()
    html = s._repr_html_()
    assert {"selected", "selected_profiles", "profiles"} <= set(s.tables)  # all kept
    assert "<h5>Selected profiles</h5>" not in html and "<h5>Selected</h5>" not in html
    assert "Also in <code>.tables</code>" in html
    rare = (s.tables["profiles"].loc["country", "overall"] < 0.01).sum()
    assert rare > 30
    assert re.search(rf"<details><summary>\d+ more rows \(.*levels under 1% of all rows: {rare}\)", html)
    shown = html.split("<details>")[0]
    assert shown.count("country") < 10  # the frequent levels only
    # the text keeps every table
    assert "Selected profiles:" in str(s)


def test_summary_html_folds_unselected_variables_of_sparse_fits():
    data = sparse_sim(rng=1).data
    fit = sc.sparse_hclust(data, wbound=2, k=3)
    s = fit.summary()
    zero = (fit.weights == 0).sum()
    assert zero > 50 and set(s.unselected) == set(fit.weights.index[fit.weights == 0])
    assert f"variables no cluster selected: {zero}" in s._repr_html_()


# ---------------------------------------------------------------- predict: unseen levels
def test_predict_unseen_levels(craft_fit, penguins):
    new = penguins.iloc[[0, 1, 2, 4]].copy()
    new["island"] = new["island"].astype(object)
    new.loc[1, "island"] = "Atlantis"
    with pytest.raises(ValueError, match=r"\['Atlantis'\].*or pass unseen='na'"):
        craft_fit.predict(new)
    with pytest.warns(DataWarning, match=r"1 rows of newdata have levels the fit did not see"):
        got = craft_fit.predict(new, unseen="na")
    expected = craft_fit.predict(penguins.iloc[[0, 1, 2, 4]])
    assert got.isna().tolist() == [False, True, False, False]
    assert got.drop(1).tolist() == expected.drop(1).tolist()
    assert got.index.tolist() == [0, 1, 2, 4]
    dp = sc.dpmeans(penguins[["island", "bill_length_mm"]], k=2, scale=True, missing="drop")
    with pytest.warns(DataWarning):
        lab = dp.predict(new[["island", "bill_length_mm"]], unseen="na")
    assert lab.isna().tolist() == [False, True, False, False]
    with pytest.raises(ValueError, match="unseen must be one of"):
        dp.predict(new, unseen="drop")


# ---------------------------------------------------------------- scaling: one rule
def test_scale_defaults_follow_the_source():
    import inspect

    defaults = {
        f: inspect.signature(getattr(sc, f)).parameters["scale"].default
        for f in [
            "craft",
            "covariate_clustering",
            "dpmeans",
            "dp_rf",
            "sparse_kmeans",
            "sparse_kmeans_path",
            "kmeans_sparse_permute",
            "sparse_hclust",
            "hclust_sparse_permute",
        ]
    }
    # standardised where the paper standardises; raw where the reproduced reference
    # (Kulis & Jordan's DP-means, the CRAFT paper's DP-means baselines, sparcl) is raw
    assert defaults == {
        "craft": True,
        "covariate_clustering": True,
        "dpmeans": False,
        "dp_rf": False,
        "sparse_kmeans": False,
        "sparse_kmeans_path": False,
        "kmeans_sparse_permute": False,
        "sparse_hclust": False,
        "hclust_sparse_permute": False,
    }


def test_spread_warning_when_unscaled_by_default():
    wine = load_wine().drop(columns="class")
    msg = r"differ in spread by 2.53e\+03x \(sd of 'proline' 314.9, of 'nonflavanoid_phenols'"
    for call in (
        lambda: sc.dpmeans(wine, k=3),
        lambda: sc.sparse_kmeans(wine, 3, rng=0),
        lambda: sc.sparse_hclust(wine, k=3),
        lambda: sc.dp_rf(wine, k=3, n_init=2, rng=0),
    ):
        with pytest.warns(DataWarning, match=msg):
            call()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sc.dpmeans(wine, k=3, scale=False)  # raw units written out: no warning
        sc.dpmeans(wine, k=3, scale=True)
        sc.dpmeans(wine[["alcohol", "ash"]], k=3)  # similar spreads: no warning


def test_covariate_clustering_standardises_by_default():
    wine = load_wine()
    sim = covariate_sim(40, m=4, rng=0)
    X = sim.data * np.linspace(1, 50, 40)  # the same covariates in other units
    a = sc.covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, sigma=0.1)
    b = sc.covariate_clustering(X, y=sim.labels, similarity=sim.sigma, sigma=0.1)
    assert a.clusters.tolist() == b.clusters.tolist()  # unit-free by default
    np.testing.assert_allclose(a.predict_proba(sim.data), b.predict_proba(X), atol=1e-8)
    assert b.params["scale"] is True
    raw = wine.iloc[:, :4].assign(big=wine["proline"])
    with warnings.catch_warnings():  # scale=False written out: raw units on purpose
        warnings.simplefilter("error", DataWarning)
        sc.covariate_clustering(raw, y=wine["class"], scale=False, nu=[1.0, 0.0], sigma=0.1)


# ---------------------------------------------------------------- defaults that agree
def test_sparse_kmeans_wbound_default_agrees_with_the_wrapper():
    from sparseclust.sklearn import SparseKMeans

    data = sparse_sim(rng=1).data
    fit = sc.sparse_kmeans(data, 3, rng=0)
    model = SparseKMeans(3, random_state=0).fit(data)
    assert fit.wbound == model.result_.wbound == 0.5 * np.sqrt(data.shape[1])
    np.testing.assert_array_equal(model.weights_, fit.weights.to_numpy())


def test_wrappers_expose_centres_inertia_and_score():
    from sparseclust.sklearn import CRAFT, SparseKMeans

    data = sparse_sim(rng=1).data
    model = SparseKMeans(3, wbound=4, random_state=0).fit(data)
    fit = model.result_
    assert model.inertia_ == pytest.approx(float((fit.weights * fit.wcss).sum()))
    assert model.score(data) == pytest.approx(-model.inertia_)
    assert model.score(data.iloc[:10]) > model.score(data)  # fewer rows, smaller sum
    craft = CRAFT(n_clusters=3, random_state=0).fit(data)
    np.testing.assert_array_equal(craft.cluster_centers_, craft.result_.centers.to_numpy())
    assert craft.cluster_centers_.shape == (3, 100)
