"""covariate_clustering(): the public function, its result, baselines and errors."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import adjusted_mutual_info_score

from sparseclust import CovariateClusteringResult, covariate_clustering
from sparseclust.exceptions import CalibrationWarning
from sparseclust.simulate import covariate_sim


def ami(a, b) -> float:
    return adjusted_mutual_info_score(a, b, average_method="arithmetic")


@pytest.fixture(scope="module")
def sim():
    return covariate_sim(40, m=4, rng=0)


@pytest.fixture(scope="module")
def fit(sim):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CalibrationWarning)
        return covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, rng=0)


def test_authors_protocol_recovers_the_clusters(sim, fit):
    """True Sigma* as S, n = 40, d = 40: the authors' code selects 9 clusters, ANMI 0.945."""
    assert isinstance(fit, CovariateClusteringResult)
    assert fit.clusters.index.tolist() == list(sim.data.columns)
    assert ami(sim.covariate_labels, fit.clusters) >= 0.945 - 1e-9
    assert fit.path["selected"].sum() == 1
    assert fit.path["n_clusters"].iloc[0] <= fit.path["n_clusters"].iloc[-1]
    assert fit.path["n_clusters"].iloc[-1] == 40  # nu = 0: every covariate alone
    # the selected clustering has the highest marginal likelihood on the path
    assert fit.path["log_ml"].iloc[fit.selected_index] == fit.path["log_ml"].max()
    assert fit.margin >= 0


def test_sigma_on_edge_warns(sim):
    with pytest.warns(CalibrationWarning, match="edge of the CV grid") as rec:
        f = covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, rng=0, nu=[1.0, 0.0])
    # the code the message points at runs on the fit
    (hint,) = re.findall(r"see (\.summary\(\)[^),]*\])", str(rec[0].message))
    table = eval("f" + hint, {"f": f})  # noqa: S307
    assert set(table.index) == {"accuracy", "loglik"}


def test_formula_and_predict(sim, fit):
    df = sim.frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CalibrationWarning)
        f2 = covariate_clustering("class ~ .", data=df, similarity=sim.sigma, rng=0)
    pd.testing.assert_series_equal(f2.clusters, fit.clusters)
    proba = fit.predict_proba(sim.data)
    assert proba.shape == (40, 4) and np.allclose(proba.sum(axis=1), 1)
    pred = fit.predict(sim.data)
    assert pred.index.equals(sim.data.index)
    assert (pred.to_numpy() == proba.to_numpy().argmax(axis=1)).all()
    # by hand: softmax of the cluster sums (of the covariates standardised with the
    # fit's means and sds, scale=True) times the coefficients
    Xs = (sim.data - sim.data.mean()) / sim.data.std(ddof=1)
    Z = np.column_stack(
        [Xs.loc[:, fit.clusters.index[fit.clusters == k]].sum(axis=1) for k in fit.coef.index]
    )
    eta = Z @ fit.coef.to_numpy() + fit.intercept.to_numpy()
    np.testing.assert_allclose(
        proba.to_numpy(), np.exp(eta) / np.exp(eta).sum(1, keepdims=True), rtol=1e-10
    )


def test_summary_repr_plots(fit):
    text = repr(fit)
    assert text.startswith("Convex covariate clustering: 9 clusters of 40 covariates")
    s = fit.summary()
    assert {"clusters", "coefficients", "path", "sigma_rules", "sigma_cv"} <= set(s.tables)
    assert set(s.tables["sigma_rules"].index) == {"accuracy", "loglik"}
    for rule, info in fit.sigma_by_rule.items():  # the row each rule's sigma selects
        row = info["path_row"]
        assert fit.path["n_clusters"].iloc[row] == info["n_clusters_selected"]
        if rule == fit.sigma_rule:
            assert row == fit.selected_index and info["sigma"] == fit.sigma
    cc = fit.cluster_class
    assert cc["size"].sum() == 40 and (cc["odds_ratio"] >= 1).all()
    fig = fit.plot_path()
    assert len(fig.axes) == 2 and fig.axes[1].get_xscale() == "log"
    ax = fit.plot_hierarchy()
    assert ax.get_legend() is not None and len(ax.patches) >= fit.path["n_clusters"].sum() * 0
    assert "<div>" in fit._repr_html_()
    assert fit.to_frame().shape == (40, 2)


def test_given_sigma_and_cv_selection(sim):
    f = covariate_clustering(
        sim.data,
        y=sim.labels,
        similarity=sim.sigma,
        sigma=1.0,
        select="cv",
        rng=0,
        nu=40 * 2.0 ** (-0.5 * np.arange(30)),
    )
    assert f.sigma == 1.0 and "cv_accuracy" in f.path.columns
    assert f.path["cv_accuracy"].iloc[f.selected_index] == f.path["cv_accuracy"].max()


def test_ledoit_wolf_default_and_knn(sim):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CalibrationWarning)
        f = covariate_clustering(
            sim.data, y=sim.labels, knn=5, rng=0, nu=40 * 2.0 ** (-0.5 * np.arange(40))
        )
    assert f.params["similarity"] == "ledoit_wolf" and f.params["knn"] == 5
    assert ami(sim.covariate_labels, f.clusters) > 0.5


@pytest.mark.parametrize("method", ["kmeans", "convex_clustering"])
def test_baselines_same_result_type(sim, method):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CalibrationWarning)
        f = covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, method=method, rng=0)
    assert isinstance(f, CovariateClusteringResult) and f.method == method
    assert f.path.columns[0] == ("k" if method == "kmeans" else "gamma")
    assert len(f.clusters) == 40
    f.plot_path()


def test_similarity_dataframe_is_aligned_by_name(sim):
    S = sim.sigma
    shuffled = S.iloc[::-1, ::-1]
    a = covariate_clustering(sim.data, y=sim.labels, similarity=S, sigma=0.1, nu=[5.0, 0.5, 0.0])
    b = covariate_clustering(
        sim.data, y=sim.labels, similarity=shuffled, sigma=0.1, nu=[5.0, 0.5, 0.0]
    )
    pd.testing.assert_series_equal(a.clusters, b.clusters)


def test_errors(sim):
    with pytest.raises(ValueError, match="needs the classes"):
        covariate_clustering(sim.data)
    with pytest.raises(ValueError, match="at least 2"):
        covariate_clustering(sim.data, y=np.zeros(40))
    with pytest.raises(ValueError, match="similarity must be 40 x 40"):
        covariate_clustering(sim.data, y=sim.labels, similarity=np.eye(3))
    with pytest.raises(ValueError, match="similarity must be 'ledoit_wolf'"):
        covariate_clustering(sim.data, y=sim.labels, similarity="pearson")
    with pytest.raises(ValueError, match="method"):
        covariate_clustering(sim.data, y=sim.labels, method="lasso")
    with pytest.raises(TypeError, match="categorical"):
        covariate_clustering(sim.data.assign(g=["a", "b"] * 20), y=sim.labels)
    bad = sim.data.copy()
    bad.iloc[0, 0] = np.nan
    with pytest.raises(ValueError, match="missing"):
        covariate_clustering(bad, y=sim.labels)


def test_caller_data_untouched(sim):
    df, y = sim.data.copy(), sim.labels.copy()
    S = sim.sigma.copy()
    covariate_clustering(df, y=y, similarity=S, sigma=0.1, nu=[5.0, 0.0])
    pd.testing.assert_frame_equal(df, sim.data)
    pd.testing.assert_frame_equal(S, sim.sigma)
    pd.testing.assert_series_equal(y, sim.labels)


def test_n_jobs_gives_the_same_result(sim):
    kw = dict(y=sim.labels, similarity=sim.sigma, sigma=0.1, select="cv", rng=3)
    a = covariate_clustering(sim.data, **kw)
    b = covariate_clustering(sim.data, n_jobs=2, **kw)
    pd.testing.assert_frame_equal(a.path, b.path)
