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
    data = sparse_sim(means=(0.0, 2.0, 4.0), rng=1).data
    fit = sc.dpmeans(data, k=3, scale=False, max_iter=100)
    assert fit.call == "dpmeans(data, k=3, scale=False, max_iter=100)"
    assert sc.dpmeans(data, k=3).call == "dpmeans(data, k=3)"


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
            assert t.loc[(k, v), "relevance"] == craft.relevance.loc[k, v]
    assert t["relevance"].notna().all()


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
    # country named: read with every level (the screen would lump its rare levels)
    fit = sc.craft(_adult_like(), k=2, m=0.5, rng=0, categorical=["country"])
    s = fit.summary()
    html = s._repr_html_()
    assert {"selected", "selected_profiles", "profiles"} <= set(s.tables)  # all kept
    assert "<h5>Selected profiles</h5>" not in html and "<h5>Selected</h5>" not in html
    assert "Also in <code>.tables</code>" in html
    rare = (s.tables["profiles"].loc["country", "overall"] < 0.01).sum()
    assert rare > 30
    assert re.search(
        rf"<details><summary>\d+ more rows \(.*levels under 1% of all rows: {rare}\)", html
    )
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
    msg = r"differ in spread by 2530x \(sd of 'proline' 314.9, of 'nonflavanoid_phenols'"
    for call in (
        lambda: sc.dpmeans(wine, k=3),
        lambda: sc.sparse_kmeans(wine, 3, rng=0),
        lambda: sc.sparse_hclust(wine, k=3),
        lambda: sc.dp_rf(wine, k=3, n_init=2, rng=0),
    ):
        with pytest.warns(DataWarning, match=msg):
            call()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (raw Wine also gives tiny clusters)
        warnings.filterwarnings("error", message=".*differ in spread")
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


# ---------------------------------------------------------------- figures
def test_profiles_have_two_labelled_colour_scales(craft_fit):
    from sparseclust.plotting import plot_profiles

    ax = plot_profiles(craft_fit)
    bars = ax.figure.axes[1:]
    assert [b.get_ylabel() for b in bars] == [
        "numeric: z-score of the cluster mean",
        "categorical: share at the top level",
    ]
    z, share = ax.get_images()
    assert share.get_clim() == (0.0, 1.0) and share.get_cmap().name == "Greens"
    lo, hi = z.get_clim()
    assert lo == -hi and z.get_cmap().name == "RdBu_r"
    labels = [t.get_text() for t in ax.get_yticklabels()]
    shares = [i for i, t in enumerate(labels) if t.endswith("(share)")]
    assert shares and all(share.get_array().mask[i].sum() == 0 for i in shares)
    assert all(z.get_array().mask[i].all() for i in shares)  # not on the z scale
    assert len(ax.texts) == 3 * len(labels)  # every cell annotated


def test_permutation_plot_ticks_points_and_choice():
    data = sparse_sim(rng=1).data
    perm = sc.kmeans_sparse_permute(data, 3, nperms=3, rng=1)
    ax = perm.plot()
    x = np.asarray(ax.containers[0].lines[0].get_xdata(), dtype=float)  # the errorbar
    assert len(set(x)) == len(x)  # one x per bound: no overlapping points
    assert all(
        "^" not in t.get_text() and "times" not in t.get_text() for t in ax.get_xticklabels()
    )
    assert [t.get_text() for t in ax.get_xticklabels()][0] == f"{perm.table['wbound'][0]:.3g}"
    vlines = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
    assert vlines and vlines[0].get_xdata()[0] == perm.best_wbound
    assert any("chosen wbound" in t.get_text() for t in ax.get_legend().get_texts())
    top = [c for c in ax.get_children() if type(c).__name__ == "SecondaryAxis"][0]
    assert top.get_xlabel() == "number of non-zero weights"


def test_covariate_path_shows_the_margin_honestly():
    sim = covariate_sim(40, m=4, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sc.exceptions.CalibrationWarning)  # sigma on the edge
        fit = sc.covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, rng=0)
    fig = fit.plot_path()
    ml = fig.axes[1]
    lo, hi = ml.get_ylim()
    assert hi - lo >= 4.0  # a 0.0001-nat margin cannot fill the axis
    assert ml.get_title().startswith("margin over the runner-up: ") and "weak" in ml.get_title()
    assert [t.get_text() for t in ml.get_legend().get_texts()][1] == "runner-up"


def test_k_selection_plot_says_when_flat():
    from sparseclust.plotting import plot_k_selection

    tab = pd.DataFrame(
        {"k": [2, 3, 4], "gap": [0.5, 0.52, 0.4], "sd_gap": [0.05, 0.04, 0.05]}
    ).assign(chosen=[False, True, False])  # the gap: K = 3 barely above K = 2
    from sparseclust._craft.select_k import curve_is_flat, verdict_text

    tab.attrs["flat"] = curve_is_flat(tab, 3)
    ax = plot_k_selection(tab)
    assert (
        ax.get_title().splitlines()[1] == "flat: K = 3 does not beat a neighbouring K beyond noise"
    )
    assert ax.get_legend().get_texts()[0].get_fontsize() >= 9
    assert verdict_text(tab, 3).splitlines()[-1].startswith("K = 3 chosen, but its gap")
    tab.attrs["flat"] = False
    assert "flat" not in plot_k_selection(tab).get_title()


def test_plot_methods_return_axes_or_a_figure_for_several_panels(craft_fit):
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    data = sparse_sim(means=(0.0, 2.0, 4.0), rng=1).data
    dp = sc.dpmeans(data, k=3)
    km = sc.sparse_kmeans(data, 3, wbound=4, rng=0)
    hc = sc.sparse_hclust(data, wbound=4, k=3)
    path = sc.sparse_kmeans_path(data, 3, wbounds=[2, 4], rng=0)
    axes_plots = [
        craft_fit.plot_profiles(),
        craft_fit.plot_objective(),
        dp.plot(),
        dp.plot_objective(),
        km.plot(),
        km.plot_weights(),
        km.plot_clusters(),
        hc.plot_weights(),
        hc.plot_dendrogram(),
    ]
    assert all(isinstance(a, Axes) for a in axes_plots)
    assert all(isinstance(f, Figure) for f in (craft_fit.plot_subspaces(), hc.plot(), path.plot()))


# ---------------------------------------------------------------- warnings that help
def test_tiny_cluster_warning():
    from sparseclust.datasets import load_dataset

    heart = load_dataset("heart_disease_cleveland")
    x = heart.drop(columns=heart.columns[-1])
    with pytest.warns(DataWarning, match=r"dpmeans\(k=2\) found tiny clusters \(cluster 1: 1 row"):
        fit = sc.dpmeans(x, k=2, missing="drop", scale=True)
    assert fit.sizes.tolist() == [296, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataWarning)
        sc.dpmeans(load_penguins()[["bill_length_mm", "flipper_length_mm"]].dropna(), k=3)
        sc.dpmeans(x, lam=50.0, missing="drop", scale=True)  # no k asked: no warning


def test_approximate_budget_empty_selection_warns():
    wine = load_wine().drop(columns="class")
    with pytest.warns(DataWarning, match=r"budget='approximate': clusters \[0\] select no"):
        fit = sc.craft(wine, lam=50.0, budget="approximate", eps_v=0.1, rng=0)
    assert fit.selected.sum(axis=1).min() == 0


def test_permutation_choice_at_the_edge_of_the_grid_warns():
    data = sparse_sim(rng=1).data
    with pytest.warns(sc.exceptions.CalibrationWarning, match="is the largest of wbounds"):
        perm = sc.kmeans_sparse_permute(data, 3, wbounds=[1.5, 2.5, 4.0], nperms=3, rng=1)
    assert perm.best_wbound == 4.0
    with warnings.catch_warnings():  # sparcl's grid reaches 0.9 sqrt(p): no warning
        warnings.simplefilter("error", sc.exceptions.CalibrationWarning)
        sc.kmeans_sparse_permute(data, 3, nperms=3, rng=1)


def test_flat_automatic_k_warns_and_verbose_prints(capsys):
    from sparseclust.datasets import load_dataset

    zoo = load_dataset("zoo").drop(columns="type")
    with pytest.warns(DataWarning, match=r"automatic K: K = 3 chosen, but its stability"):
        fit = sc.craft(zoo, m=0.5, rng=1, verbose=True)
    assert fit.k_selection.attrs["flat"] is True
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Choosing K by stability on 101 of 101 rows: K = 1 .. 7 (5 restarts per fit)"
    assert out[1].startswith("  K = 2: stability ")
    assert out[-1].startswith("K = 3 chosen, but its stability does not beat")


def test_sparse_hclust_default_niter_converges():
    for seed in range(3):
        fit = sc.sparse_hclust(sparse_sim(rng=seed).data, wbound=1.5)  # 21-23 steps
        assert fit.converged and 15 < fit.n_iter < 50
    with pytest.warns(sc.exceptions.ConvergenceWarning, match="niter=15"):
        sc.sparse_hclust(sparse_sim(rng=0).data, wbound=1.5, niter=15)


# ---------------------------------------------------------------- data


def test_house_votes_have_their_real_names():
    from sparseclust.datasets import HOUSE_VOTES, load_house_votes_84

    hv = load_house_votes_84()
    assert list(hv.columns) == ["Class", *HOUSE_VOTES]
    assert hv["physician_fee_freeze"].cat.categories.tolist() == ["n", "y"]
    fit = sc.craft("~ . - Class", data=hv, k=2, rng=0)
    assert "physician_fee_freeze" in fit.selected.columns


def test_load_banknote(tmp_path, monkeypatch):
    import os

    from sparseclust.datasets import load_banknote

    given = os.environ.get("SPARSECLUST_BANKNOTE")  # a copy of the UCI file, if any
    monkeypatch.delenv("SPARSECLUST_BANKNOTE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # an empty cache
    with pytest.raises(FileNotFoundError, match="not shipped with sparseclust.*download=True"):
        load_banknote()
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"a": [1.0]}).to_csv(bad, index=False)
    with pytest.raises(ValueError, match="is not the UCI banknote data"):
        load_banknote(bad)
    if not given or not os.path.isfile(given):
        pytest.skip("no copy of the banknote data here (set SPARSECLUST_BANKNOTE to one)")
    bank = load_banknote(given)
    assert bank.shape == (1372, 5) and bank["class"].value_counts().tolist() == [762, 610]
    # the UCI file itself: no header
    raw = tmp_path / "data_banknote_authentication.txt"
    bank.astype({"class": int}).to_csv(raw, index=False, header=False)
    monkeypatch.setenv("SPARSECLUST_BANKNOTE", str(raw))
    X, y = load_banknote(as_frame=False)
    pd.testing.assert_frame_equal(X, bank.drop(columns="class"))
