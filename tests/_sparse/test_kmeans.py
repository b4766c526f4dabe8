"""Sparse k-means: weights, fits, path, permutation tuning, results, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from sparseclust import (
    ConvergenceWarning,
    DataWarning,
    PermuteResult,
    SparseKMeansResult,
    kmeans_sparse_permute,
    sparse_kmeans,
    sparse_kmeans_path,
    sparse_weights,
)
from sparseclust._sparse.weights import between_ss, exact_threshold, project_weights
from sparseclust.metrics import ari
from sparseclust.simulate import sparse_motivating, sparse_sim

# short tuning grids, for speed (the edge-of-grid warning is tested in
# tests/_results/test_analyst.py)
pytestmark = [pytest.mark.filterwarnings("ignore:.*the gap may be larger beyond the grid")]


@pytest.fixture(scope="module")
def sim():
    return sparse_sim(n_per_cluster=20, p=60, q=10, means=(0.0, 1.5, 3.0), rng=5)


# ------------------------------------------------------------------ weight step
def _brute_force(a: np.ndarray, s: float) -> float:
    """max w'a over ||w||_2 <= 1, ||w||_1 <= s, w >= 0, by scipy's SLSQP from many starts."""
    from scipy.optimize import minimize

    best = -np.inf
    rng = np.random.default_rng(0)
    cons = [
        {"type": "ineq", "fun": lambda w: 1 - w @ w},
        {"type": "ineq", "fun": lambda w: s - w.sum()},
    ]
    for _ in range(8):
        w0 = rng.random(a.size)
        w0 *= min(1 / np.linalg.norm(w0), s / w0.sum()) * 0.9
        r = minimize(
            lambda w: -(w @ a), w0, method="SLSQP", bounds=[(0, None)] * a.size, constraints=cons
        )
        # SLSQP may end slightly outside the constraints: scaled back inside, its point
        # is feasible, so the value is a true lower bound of the maximum
        w = np.maximum(r.x, 0)
        w *= min(1.0, 1 / max(np.linalg.norm(w), 1e-300), s / max(w.sum(), 1e-300))
        best = max(best, float(w @ a))
    return best


@pytest.mark.parametrize("seed", range(6))
def test_exact_projection_is_optimal(seed):
    g = np.random.default_rng(seed)
    a = g.gamma(0.7, size=7) * 10 ** g.uniform(-3, 3)
    s = g.uniform(1.05, 2.4)
    w, _ = project_weights(a, s)
    assert w.sum() <= s + 1e-9 and np.linalg.norm(w) <= 1 + 1e-12 and (w >= 0).all()
    assert w @ a >= _brute_force(a, s) * (1 - 1e-9)


def test_exact_projection_bound_and_scale_invariance():
    g = np.random.default_rng(1)
    for _ in range(200):
        a = g.exponential(size=g.integers(2, 60)) * g.choice([1e-9, 1e-3, 1, 1e6])
        a[g.random(a.size) < 0.2] *= -1  # negative scores get weight 0
        s = g.uniform(1.0001, 8)
        w, _ = project_weights(a, s)
        assert w.sum() <= s * (1 + 1e-12)
        assert (w[a <= 0] == 0).all()
        w2, _ = project_weights(a * 1234.5, s)
        np.testing.assert_allclose(w, w2, rtol=1e-9, atol=1e-15)
        if (a > 0).sum() and np.sum(np.maximum(a, 0)) / np.linalg.norm(np.maximum(a, 0)) > s:
            assert w.sum() == pytest.approx(s, rel=1e-9)  # the bound is active and met


def test_sparcl_mode_scale_quirk_and_exact_fix():
    """sparcl's absolute tolerances: scores below 1e-4 give a negative threshold, no sparsity."""
    a = np.array([3.0, 2.0, 1.0, 0.5, 0.2]) * 1e-6
    w_s, lam_s = project_weights(a, 1.2, "sparcl")
    assert lam_s < 0 and (w_s > 0).all() and w_s.sum() > 1.2
    w_e, lam_e = project_weights(a, 1.2, "exact")
    assert lam_e > 0 and w_e.sum() == pytest.approx(1.2)
    np.testing.assert_allclose(w_e, project_weights(a * 1e6, 1.2)[0])


def test_ties_exceeding_the_bound():
    w, _ = project_weights(np.array([1.0, 1.0, 1.0, 1.0]), 1.5)
    np.testing.assert_allclose(w, [0.375] * 4)
    assert w.sum() == pytest.approx(1.5)
    assert exact_threshold(np.array([2.0, 1.0]), 10.0) == 0.0


def test_between_ss_closed_form():
    x = np.array([[0.0], [2.0], [10.0], [14.0], [5.0]])
    bcss, wcss, tss = between_ss(x, np.array([0, 0, 1, 1, 2]))
    assert wcss[0] == pytest.approx(2 + 8 + 0)  # singleton adds 0
    assert tss[0] == pytest.approx(np.sum((x - x.mean()) ** 2))
    assert bcss[0] == pytest.approx(tss[0] - wcss[0])


def test_between_ss_missing_values_available_case():
    x = np.array([[0.0, 1.0], [2.0, np.nan], [10.0, 3.0], [14.0, 5.0]])
    lab = np.array([0, 0, 1, 1])
    bcss, wcss, tss = between_ss(x, lab)
    obs = x[[0, 2, 3], 1]
    tss1 = np.sum((obs - obs.mean()) ** 2) * 4 / 3
    wcss1 = (0 + (3 - 4) ** 2 + (5 - 4) ** 2) * 4 / 3
    assert tss[1] == pytest.approx(tss1) and wcss[1] == pytest.approx(wcss1)
    assert bcss[0] == pytest.approx(between_ss(x[:, :1], lab)[0][0])


def test_sparse_weights_public(sim):
    w = sparse_weights(sim.data, sim.labels, 2.0)
    assert w.index.equals(sim.data.columns) and w.name == "weight"
    assert set(w[w > 0].index) <= set(sim.data.columns[:10])
    # labels of any type, NA rows left out
    lab = sim.labels.map({0: "a", 1: "b", 2: "c"}).astype(object)
    lab.iloc[0] = None
    w2 = sparse_weights(sim.data, lab, 2.0)
    assert (w2 > 0).sum() >= 1
    with pytest.raises(ValueError, match="labels has 3 entries"):
        sparse_weights(sim.data, [0, 1, 2], 2.0)


# -------------------------------------------------------------------------- fits
def test_recovers_the_informative_features(sim):
    fit = sparse_kmeans(sim.data, 3, wbound=3, rng=0)
    assert isinstance(fit, SparseKMeansResult)
    assert ari(fit.labels.to_numpy(dtype=int), sim.labels.to_numpy()) > 0.9
    assert set(fit.selected.index) <= set(sim.data.columns[:10])
    assert fit.weights.sum() <= 3 + 1e-9 and np.linalg.norm(fit.weights) == pytest.approx(1)
    assert fit.labels.index.equals(sim.data.index) and str(fit.labels.dtype) == "Int64"
    assert fit.centers.shape == (3, 60) and fit.converged
    assert fit.objective == pytest.approx(float((fit.weights * fit.bcss).sum()))
    assert np.all(np.diff(fit.objective_path) > -1e-9)  # sparse k-means never decreases


def test_reproducible_and_seeded(sim):
    a = sparse_kmeans(sim.data, 3, wbound=2, rng=3)
    b = sparse_kmeans(sim.data, 3, wbound=2, rng=3)
    pd.testing.assert_series_equal(a.labels, b.labels)
    pd.testing.assert_series_equal(a.weights, b.weights)


def test_lloyd_and_formula_and_scale(sim):
    df = sim.frame()
    fit = sparse_kmeans("~ . - cluster", k=3, data=df, wbound=3, algorithm="lloyd", rng=0)
    assert list(fit.weights.index) == list(sim.data.columns)
    scaled = sparse_kmeans(sim.data * 1000, 3, wbound=3, scale=True, rng=0)
    plain = sparse_kmeans(sim.data, 3, wbound=3, scale=True, rng=0)
    np.testing.assert_allclose(scaled.weights, plain.weights, atol=1e-10)


def test_exact_weights_scale_invariant_fit(sim):
    a = sparse_kmeans(sim.data, 3, wbound=2.5, rng=0)
    b = sparse_kmeans(sim.data * 1e-6, 3, wbound=2.5, rng=0)
    assert ari(a.labels.to_numpy(dtype=int), b.labels.to_numpy(dtype=int)) == 1.0
    np.testing.assert_allclose(a.weights, b.weights, rtol=1e-7, atol=1e-12)


def test_predict_nearest_weighted_centre(sim):
    fit = sparse_kmeans(sim.data, 3, wbound=3, rng=0)
    pd.testing.assert_series_equal(fit.predict(sim.data), fit.labels, check_names=False)
    new = sim.data.iloc[:5].copy()
    new.iloc[0, 0] = np.nan
    pred = fit.predict(new)
    assert pred.notna().all() and pred.index.equals(new.index)
    # brute force on the weighted distance
    w = fit.weights.to_numpy()
    d = (((sim.data.to_numpy()[:, None, :] - fit.centers.to_numpy()[None]) ** 2) * w).sum(-1)
    np.testing.assert_array_equal(fit.predict(sim.data).to_numpy(dtype=int), d.argmin(1))


def test_missing_values_native(sim):
    df = sim.data.copy()
    g = np.random.default_rng(0)
    df = df.mask(g.random(df.shape) < 0.05)
    before = df.copy()
    fit = sparse_kmeans(df, 3, wbound=3, rng=0)
    pd.testing.assert_frame_equal(df, before)
    assert fit.labels.notna().all()
    assert ari(fit.labels.to_numpy(dtype=int), sim.labels.to_numpy()) > 0.8
    with pytest.raises(ValueError, match="missing='raise'"):
        sparse_kmeans(df, 3, wbound=3, missing="raise")
    few = sim.data.copy()
    few.iloc[[1, 7], [0, 3]] = np.nan
    dropped = sparse_kmeans(few, 3, wbound=3, missing="drop", rng=0)
    assert dropped.labels.isna().sum() == 2 and dropped.n_obs == 58


def test_max_iter_warns():
    sim = sparse_sim(n_per_cluster=15, p=40, q=20, rng=2)
    with pytest.warns(ConvergenceWarning, match="did not converge in max_iter=1"):
        fit = sparse_kmeans(sim.data, 3, wbound=3, max_iter=1, rng=0)
    assert not fit.converged and fit.n_iter == 1
    assert "Did NOT converge in 1 iterations" in repr(fit)


def test_default_cap_converges_on_plain_data():
    """Issue 34.3: sparcl's cap of 6 rounds stopped this plain 1000 x 1000 simulation
    (3 clusters in 50 features) short with a ConvergenceWarning; the default converges
    (in 11 rounds), and sparcl's cap is one keyword away."""
    X = sparse_sim(334, p=1000, q=50, rng=0).data.iloc[:1000]
    fit = sparse_kmeans(X, 3, wbound=5, rng=0)  # warnings are errors in the suite
    assert fit.converged and 6 < fit.n_iter < fit.params["max_iter"]
    with pytest.warns(ConvergenceWarning, match="max_iter=6"):
        sparse_kmeans(X, 3, wbound=5, max_iter=6, rng=0)


def test_one_default_cap_for_both_sparse_methods():
    """Issue 34.3: sparse k-means' max_iter and sparse hierarchical clustering's niter
    share one default (MAX_ROUNDS) in every function, wrapper and command; sparcl's
    caps are named beside it."""
    import inspect

    import sparseclust
    from sparseclust import sklearn as sk
    from sparseclust._cli import COMMANDS, _parser

    caps = {
        f.__name__: inspect.signature(f).parameters[name].default
        for f, name in [
            (sparseclust.sparse_kmeans, "max_iter"),
            (sparseclust.sparse_kmeans_path, "max_iter"),
            (sparseclust.kmeans_sparse_permute, "max_iter"),
            (sparseclust.sparse_hclust, "niter"),
            (sparseclust.hclust_sparse_permute, "niter"),
        ]
    }
    caps["SparseKMeans"] = sk.SparseKMeans().max_iter
    caps["SparseHierarchical"] = sk.SparseHierarchical().niter
    sub = _parser()._subparsers._group_actions[0].choices
    for command, option in [
        ("sparse-kmeans", "max_iter"),
        ("kmeans-permute", "max_iter"),
        ("sparse-hclust", "niter"),
        ("hclust-permute", "niter"),
    ]:
        assert command in COMMANDS
        caps[command] = sub[command].get_default(option)
    assert len(set(caps.values())) == 1, caps
    from sparseclust._sparse.rules import MAX_ROUNDS, SPARCL_MAX_ITER, SPARCL_NITER

    assert caps["sparse_kmeans"] == MAX_ROUNDS and (SPARCL_MAX_ITER, SPARCL_NITER) == (6, 15)


def test_bad_inputs(sim):
    df = sim.data
    # no wbound: sparcl's 0.5 sqrt(p), the wrapper's and sparse_hclust's default
    assert sparse_kmeans(df, 3, rng=0).wbound == 0.5 * np.sqrt(df.shape[1])
    with pytest.raises(ValueError, match="k=61 is more than the 60 rows"):
        sparse_kmeans(df, 61, wbound=2)
    with pytest.raises(ValueError, match="k must be an integer >= 2"):
        sparse_kmeans(df, 1, wbound=2)
    with pytest.raises(ValueError, match="algorithm"):
        sparse_kmeans(df, 3, wbound=2, algorithm="elkan")
    with pytest.raises(ValueError, match="weights"):
        sparse_kmeans(df, 3, wbound=2, weights="approx")
    bad = df.copy()
    bad.iloc[0, 0] = np.inf
    with pytest.raises(ValueError, match="f1"):
        sparse_kmeans(bad, 3, wbound=2)
    mixed = df.assign(g=["u", "v"] * 30)
    with pytest.raises(TypeError, match="craft"):
        sparse_kmeans(mixed, 3, wbound=2)
    with pytest.raises(ValueError, match="duplicated rows"):
        sparse_kmeans(df, wbound=2, centers=np.zeros((3, 60)))


def test_constant_column_is_dropped_and_changes_nothing(sim):
    """A constant column would get weight 0 (its between-cluster sum of squares is 0):
    it is dropped with a DataWarning naming it, and the fit is the one without it."""
    df = sim.data.assign(const=1.0)
    with pytest.warns(DataWarning, match=r"Columns \['const'\] are constant"):
        fit = sparse_kmeans(df, 3, wbound=3, rng=0)
    assert "const" not in fit.weights.index and fit.variables.dropped_constant == ("const",)
    ref = sparse_kmeans(sim.data, 3, wbound=3, rng=0)
    pd.testing.assert_series_equal(fit.weights, ref.weights)
    pd.testing.assert_series_equal(fit.labels, ref.labels)
    assert "const" in str(fit.summary()) and "const" in repr(fit)


def test_motivating_example_sparse_beats_standard():
    """Slides: standard k-means cuts along the long axis; sparse k-means uses f1 only."""
    from sklearn.cluster import KMeans

    scores_sparse, scores_plain = [], []
    for seed in range(5):
        sim = sparse_motivating(rng=seed)
        truth = sim.labels.to_numpy()
        fit = sparse_kmeans(sim.data, 2, wbound=1.01, rng=seed)
        assert fit.selected.index[0] == "f1"
        scores_sparse.append(ari(fit.labels.to_numpy(dtype=int), truth))
        km = KMeans(2, n_init=20, random_state=seed).fit(sim.data.to_numpy())
        scores_plain.append(ari(km.labels_, truth))
    assert np.mean(scores_sparse) > np.mean(scores_plain)


# --------------------------------------------------------------------------- path
def test_path_warm_and_independent(sim):
    path = sparse_kmeans_path(sim.data, 3, wbounds=[1.5, 3, 6], rng=0)
    assert path.warm_start and len(path) == 3
    assert path.table["n_nonzero"].is_monotonic_increasing
    assert path.weights.shape == (3, 60)
    assert "Wbound is 1.5" in repr(path)
    # independent fits start every bound from the same initial partition: the same
    # fit as sparse_kmeans with that seed
    ind = sparse_kmeans_path(sim.data, 3, wbounds=[1.5, 3, 6], warm_start=False, rng=0)
    single = sparse_kmeans(sim.data, 3, wbound=6, rng=0)
    pd.testing.assert_series_equal(ind[2].weights, single.weights)
    assert ind[2].objective == pytest.approx(single.objective, rel=1e-12)


def test_path_warm_start_depends_on_the_order_independent_fits_do_not():
    sim = sparse_sim(n_per_cluster=20, p=100, q=50, rng=1)
    bounds = [1.1, 2.0, 3.5, 5.0, 7.0, 10.0]
    fwd = sparse_kmeans_path(sim.data, 3, wbounds=bounds, warm_start=False, rng=4)
    back = sparse_kmeans_path(sim.data, 3, wbounds=bounds[::-1], warm_start=False, rng=4)
    np.testing.assert_allclose(fwd.table["objective"], back.table["objective"][::-1])
    fwd_w = sparse_kmeans_path(sim.data, 3, wbounds=bounds, rng=4)
    assert fwd_w.warm_start and len(fwd_w) == len(bounds)


# ------------------------------------------------------------------------ permute
def test_permute_returns_the_fit_and_table(sim):
    perm = kmeans_sparse_permute(sim.data, 3, nperms=5, rng=0)
    assert isinstance(perm, PermuteResult)
    assert list(perm.table.columns) == ["wbound", "n_nonzero", "gap", "sd_gap"]
    assert perm.best.wbound == perm.best_wbound
    assert perm.permtots.shape == (10, 5)
    # warm-started path (default): best is refitted from the data's initial partition,
    # the very fit the independent tuning makes at that bound
    ind = kmeans_sparse_permute(sim.data, 3, nperms=5, warm_start=False, rng=0)
    assert ind.best is ind.fits[ind.best_index]
    assert ind.tots[ind.best_index] == pytest.approx(ind.best.objective)
    same = ind.fits[perm.best_index]
    np.testing.assert_array_equal(perm.best.weights, same.weights)
    np.testing.assert_array_equal(perm.best.labels, same.labels)
    assert perm.fits[perm.best_index].wbound == perm.best_wbound
    text = repr(perm)
    assert "Tuning parameter selection results for Sparse K-means Clustering" in text
    assert "# Non-Zero W's" in text and "Gap Statistic" in text
    one_se = kmeans_sparse_permute(sim.data, 3, nperms=5, rule="1se", rng=0)
    assert one_se.best_wbound <= perm.best_wbound
    pd.testing.assert_frame_equal(one_se.table, perm.table)


def test_permute_fits_are_independent_of_the_bound_order(sim):
    kw = {"nperms": 3, "warm_start": False, "rng": 2}
    a = kmeans_sparse_permute(sim.data, 3, wbounds=[1.5, 2.5, 4.0], **kw)
    b = kmeans_sparse_permute(sim.data, 3, wbounds=[4.0, 2.5, 1.5], **kw)
    np.testing.assert_allclose(a.tots, b.tots[::-1], rtol=1e-12)
    np.testing.assert_allclose(a.permtots, b.permtots[::-1], rtol=1e-12)
    assert a.best_wbound == b.best_wbound


def test_permute_progress_bar(sim, capsys, monkeypatch):
    monkeypatch.setattr("sparseclust._engine.parallel.BAR_DELAY", 0.0)  # else after 2 s
    perm = kmeans_sparse_permute(sim.data, 3, wbounds=[1.5, 3], nperms=3, progress=True, rng=0)
    assert "permutations" in capsys.readouterr().err
    assert perm.permtots.shape == (2, 3)


def test_permute_reproducible_across_n_jobs(sim):
    a = kmeans_sparse_permute(sim.data, 3, wbounds=[1.5, 3], nperms=4, rng=7)
    b = kmeans_sparse_permute(sim.data, 3, wbounds=[1.5, 3], nperms=4, rng=7, n_jobs=2)
    np.testing.assert_array_equal(a.permtots, b.permtots)
    pd.testing.assert_frame_equal(a.table, b.table)


def test_permute_summary_and_plot(sim):
    perm = kmeans_sparse_permute(sim.data, 3, wbounds=[1.5, 3, 5], nperms=3, rng=0)
    s = perm.summary()
    assert set(s.tables) == {"gap", "chosen", "best_weights"}
    ax = perm.plot()
    assert ax.get_xscale() == "log" and len(ax.lines) >= 1


def test_permute_bad_inputs(sim):
    with pytest.raises(ValueError, match="nperms must be an integer >= 2"):
        kmeans_sparse_permute(sim.data, 3, nperms=1)
    with pytest.raises(ValueError, match="rule"):
        kmeans_sparse_permute(sim.data, 3, rule="min")
    with pytest.raises(ValueError, match="p >= 2"):
        kmeans_sparse_permute(sim.data[["f1"]], 3)


# ------------------------------------------------------------------ result object
def test_repr_summary_html_plots(sim):
    fit = sparse_kmeans(sim.data, 3, wbound=2, rng=0)
    text = repr(fit)
    assert text.startswith("Sparse k-means (k=3, wbound=2) on 60 obs, 60 variables")
    assert "Non-zero weights:" in text and "Top weights:" in text
    s = fit.summary()
    assert {"clusters", "parameters", "weights", "centers", "profiles"} <= set(s.tables)
    assert (s.tables["weights"]["weight"] > 0).all()
    assert "<div>" in fit._repr_html_()
    ax = fit.plot_weights()
    assert ax.get_xlabel() == "feature index" and ax.get_title() == "Wbound is 2"
    ax = fit.plot_clusters()
    assert ax.get_xlabel() in set(sim.data.columns)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = sparse_kmeans_path(sim.data, 3, wbounds=[1.5, 2, 4], rng=0).plot()
    assert sum(a.get_visible() for a in fig.axes) == 3


def test_slides_simulation_over_20_seeds():
    """Slides' design (3 x 20 obs, p = 100, q = 50, means 0/0.6/1.2): sparse k-means at the
    permutation-chosen bound is at least as good as k-means on average, and its weight
    concentrates on the 50 informative features."""
    from sklearn.cluster import KMeans

    sparse, plain, share = [], [], []
    for seed in range(20):
        sim = sparse_sim(rng=seed)
        truth = sim.labels.to_numpy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            perm = kmeans_sparse_permute(sim.data, 3, nperms=10, n_jobs=2, rng=seed)
        w = perm.best.weights
        sparse.append(ari(perm.best.labels.to_numpy(dtype=int), truth))
        plain.append(ari(KMeans(3, n_init=20, random_state=seed).fit(sim.data).labels_, truth))
        share.append(w.iloc[:50].sum() / w.sum())
    assert np.mean(sparse) >= np.mean(plain)
    assert np.min(share) > 0.75 and np.mean(share) > 0.8
