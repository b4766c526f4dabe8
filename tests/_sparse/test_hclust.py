"""Tests of sparse hierarchical clustering against numbers the code under test did not make.

References: the pair x feature matrix D built by a plain double loop over pairs
(sparcl's definition, NA rescaling included) and the products ``D w`` / ``u'D`` taken
on it; the L1/L2 constraints; invariances (scale, row order of the tree cut); scipy's
own ``cut_tree`` / ``leaves_list``; tracemalloc for the memory claim. R's numbers are
in test_hclust_r_reference.py.
"""

from __future__ import annotations

import tracemalloc
import warnings

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from scipy.cluster.hierarchy import cut_tree, leaves_list, linkage

from sparseclust._plot.dendrogram import color_dendrogram, plot_dendrogram, plot_hclust
from sparseclust._sparse.dissimilarity import GramSquared, PairStream, get_uw, make_operator
from sparseclust._sparse.hclust import (
    SparseHClustResult,
    default_wbound,
    hclust_sparse_permute,
    sparse_hclust,
)
from sparseclust._sparse.permute import PermuteResult
from sparseclust._sparse.tree import cutree, r_merge, r_order
from sparseclust.exceptions import ConvergenceWarning, DataWarning

# short tuning grids, for speed (the edge-of-grid warning is tested in
# tests/_results/test_analyst.py)
pytestmark = [pytest.mark.filterwarnings("ignore:.*the gap may be larger beyond the grid")]


# --------------------------------------------------------------------- reference
def brute_D(X: np.ndarray, dissimilarity: str, single: bool = False) -> np.ndarray:
    """sparcl's D, one pair at a time: |x_ij - x_i'j| (float32 differences if ``single``),
    pairs with missing values scaled by sqrt(p / c) (squared, then squared) or p / c,
    cells with a missing value 0."""
    n, p = X.shape
    rows = []
    for i in range(n):
        for j in range(i + 1, n):
            a, b = X[i], X[j]
            both = ~np.isnan(a) & ~np.isnan(b)
            c = both.sum()
            if single:
                diff = np.abs(
                    np.nan_to_num(a).astype(np.float32) - np.nan_to_num(b).astype(np.float32)
                ).astype(np.float64)
            else:
                diff = np.abs(np.nan_to_num(a) - np.nan_to_num(b))
            f = p / c if c > 0 else 0.0
            if dissimilarity == "squared":
                d = (diff * np.sqrt(f)) ** 2
            else:
                d = diff * f
            d[~both] = 0.0
            rows.append(d)
    return np.array(rows)


def sim3(
    n_per: int = 20, p: int = 100, q: int = 50, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """The slides' generator: 3 clusters, means 0 / 0.6 / 1.2 on the first q features."""
    rng = np.random.default_rng(seed)
    lab = np.repeat(np.arange(3), n_per)
    X = rng.standard_normal((3 * n_per, p))
    X[:, :q] += np.array([0.0, 0.6, 1.2])[lab][:, None]
    return X, lab


def with_nans(X: np.ndarray, frac: float, seed: int = 1) -> np.ndarray:
    X = X.copy()
    X[np.random.default_rng(seed).random(X.shape) < frac] = np.nan
    return X


def quiet(func, *args, **kwargs):
    """Call ignoring ConvergenceWarning (for tests about something else)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return func(*args, **kwargs)


# --------------------------------------------------------------------- D without D
@pytest.mark.parametrize("frac_missing", [0.0, 0.15])
@pytest.mark.parametrize(
    ("dissimilarity", "operator"),
    [("squared", "gram"), ("squared", "stream"), ("absolute", "stream")],
)
def test_streamed_products_equal_materialised_D(dissimilarity, operator, frac_missing):
    X = with_nans(np.random.default_rng(0).standard_normal((13, 7)) * 3 + 1, frac_missing)
    X[4, :] = np.nan  # an observation with nothing observed: all its pairs are 0
    X[4, 0] = 2.0
    D = brute_D(X, dissimilarity)
    if operator == "gram":
        op = GramSquared(X)
    else:
        op = PairStream(X, dissimilarity, block_size=5)  # blocks cut rows in the middle
    rng = np.random.default_rng(2)
    w = rng.random(7)
    w[[1, 5]] = 0.0
    u = rng.standard_normal(D.shape[0])
    np.testing.assert_allclose(op.dw(w), D @ w, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(op.utd(u), u @ D, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(op.dw(np.ones(7)), D.sum(axis=1), rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("with_uorth", [False, True])
def test_low_rank_step_equals_materialised_D(with_uorth):
    """Few active features, no missing values: u'D through the rank-(q+2) form of U."""
    X = np.random.default_rng(8).standard_normal((25, 9)) * 2 + 5
    D = brute_D(X, "squared")
    rng = np.random.default_rng(9)
    ut = rng.standard_normal(D.shape[0]) if with_uorth else None
    if ut is not None:
        ut /= np.linalg.norm(ut)
    w = np.zeros(9)
    w[[0, 4, 6]] = rng.random(3)  # 2q < n: the low-rank path
    u, a = GramSquared(X).step(w, ut)
    ref = D @ w
    if ut is not None:
        ref = ref - ut * (ut @ ref)
    ref /= np.linalg.norm(ref)
    np.testing.assert_allclose(u, ref, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(a, ref @ D, rtol=1e-10)


@pytest.mark.parametrize("dissimilarity", ["squared", "absolute"])
def test_sparcl_blocks_are_float32_differences(dissimilarity):
    X = with_nans(np.random.default_rng(3).standard_normal((9, 5)) / 7, 0.1)
    op = PairStream(X, dissimilarity, single=True, block_size=4)
    np.testing.assert_array_equal(op.materialise(), brute_D(X, dissimilarity, single=True))
    # ... which is not the float64 D: the quirk is real on non-quantised data.
    assert not np.array_equal(op.materialise(), brute_D(X, dissimilarity))


def test_first_step_and_criterion_match_brute_force():
    X, _ = sim3(n_per=6, p=12)
    D = brute_D(X, "squared")
    fit = get_uw(GramSquared(X), 2.0, niter=50)
    dw = D @ fit.w
    u = dw / np.linalg.norm(dw)
    np.testing.assert_allclose(fit.u, u, rtol=1e-10)
    assert fit.crit == pytest.approx(float(u @ dw), rel=1e-12)
    # the weights are the exact projection of max(u'D, 0) at the fixed point
    a = np.maximum(u @ D, 0)
    w = fit.w
    assert np.all(w[a == 0] == 0)


# --------------------------------------------------------------------- weights
@pytest.mark.parametrize("dissimilarity", ["squared", "absolute"])
@pytest.mark.parametrize("wbound", [1.05, 1.7, 3.0, 6.0])
def test_l1_bound_holds_in_exact_mode(wbound, dissimilarity):
    X, _ = sim3(n_per=10, p=40, q=10)
    fit = quiet(sparse_hclust, X, wbound=wbound, dissimilarity=dissimilarity)
    w = fit.weights.to_numpy()
    assert np.all(w >= 0)
    assert np.linalg.norm(w) == pytest.approx(1.0, rel=1e-12)
    assert w.sum() <= wbound * (1 + 1e-12)
    assert fit.weights.index.tolist() == [f"x{j}" for j in range(40)]


def test_scale_invariance_in_exact_mode():
    X, _ = sim3(n_per=10, p=30, q=8)
    a = quiet(sparse_hclust, X, wbound=2.5, niter=60)
    b = quiet(sparse_hclust, X * 1000.0, wbound=2.5, niter=60)
    np.testing.assert_allclose(a.weights, b.weights, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(a.u, b.u, rtol=1e-8)
    np.testing.assert_array_equal(a.merge, b.merge)
    assert b.crit == pytest.approx(a.crit * 1e6, rel=1e-8)


def test_single_nonzero_weight():
    """One informative feature: the tree is that feature's; constant features are
    dropped with a DataWarning (their weight would be 0)."""
    rng = np.random.default_rng(4)
    lab = np.repeat(np.arange(3), 10)
    X = np.ones((30, 5))
    X[:, 2] = np.array([0.0, 6.0, 12.0])[lab] + rng.standard_normal(30)
    X[:, 3] = X[:, 2] + 0.01 * rng.standard_normal(30)  # a near copy: the tree stays x2's
    with pytest.warns(DataWarning, match=r"Columns \['x0', 'x1', 'x4'\] are constant"):
        fit = sparse_hclust(X, wbound=1.01, k=3)
    assert fit.variables.dropped_constant == ("x0", "x1", "x4")
    assert list(fit.weights.index) == ["x2", "x3"]
    assert (pd.crosstab(fit.labels, lab).to_numpy() > 0).sum() == 3  # recovers the truth
    # A bound close to 1 with a dominant feature: (almost) all weight on it.
    X[:, [0, 1, 3, 4]] = rng.standard_normal((30, 4))
    fit = quiet(sparse_hclust, X, wbound=1.01, k=3)
    assert fit.weights["x2"] > 0.99
    assert (pd.crosstab(fit.labels, lab).to_numpy() > 0).sum() == 3


def test_p1_and_p4_defaults():
    x = np.random.default_rng(5).standard_normal((12, 1))
    fit = sparse_hclust(x)
    assert fit.wbound == 1.5 == default_wbound(1)
    assert fit.weights.tolist() == [1.0]
    assert fit.n_iter == 1 and fit.converged
    X4 = np.random.default_rng(6).standard_normal((15, 4))
    fit4 = quiet(sparse_hclust, X4)
    assert fit4.wbound == 1.5
    assert default_wbound(5) == pytest.approx(0.5 * np.sqrt(5))  # sparcl's from p = 5 on


# --------------------------------------------------------------------- inputs
@pytest.fixture
def frame() -> pd.DataFrame:
    X, _ = sim3(n_per=8, p=10, q=4)
    return pd.DataFrame(X, columns=[f"g{j}" for j in range(10)], index=[f"s{i}" for i in range(24)])


def test_nan_native(frame):
    df = frame.copy()
    df.iloc[3, 2] = np.nan
    df.iloc[7, 5] = np.nan
    fit = quiet(sparse_hclust, df, wbound=2.0, k=3)
    assert np.isfinite(fit.u).all() and np.isfinite(fit.weights).all()
    assert fit.labels.notna().all()
    dropped = quiet(sparse_hclust, df, wbound=2.0, k=3, missing="drop")
    assert dropped.labels.isna().sum() == 2 and len(dropped.order) == 22
    assert dropped.cut(2).isna().sum() == 2


def test_bad_inputs(frame):
    bad = frame.copy()
    bad.iloc[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinite"):
        sparse_hclust(bad)
    cat = frame.assign(site=["a", "b"] * 12)
    with pytest.raises(TypeError, match=r"categorical.*\['site'\]"):
        sparse_hclust(cat)
    with pytest.raises(ValueError, match=r"wbound must be .*> 1.*got wbound=0.5"):
        sparse_hclust(frame, wbound=0.5)
    with pytest.raises(TypeError, match="wbound must be a number"):
        sparse_hclust(frame, wbound=[2.0, 3.0])
    with pytest.raises(ValueError, match="method must be one of"):
        sparse_hclust(frame, method="ward")
    with pytest.raises(ValueError, match="dissimilarity must be one of"):
        sparse_hclust(frame, dissimilarity="euclidean")
    with pytest.raises(ValueError, match="weights must be one of"):
        sparse_hclust(frame, weights="approx")
    with pytest.raises(ValueError, match="niter must be"):
        sparse_hclust(frame, niter=0)
    with pytest.raises(ValueError, match="k must be"):
        sparse_hclust(frame, k=30)


def test_uorth_checks(frame):
    n = len(frame)
    A = np.random.default_rng(0).random((n, n))
    with pytest.raises(ValueError, match="uorth must be symmetric"):
        sparse_hclust(frame, uorth=A)
    with pytest.raises(ValueError, match=r"uorth must be 24 x 24"):
        sparse_hclust(frame, uorth=np.eye(5))
    with pytest.raises(ValueError, match="one value per pair"):
        sparse_hclust(frame, uorth=np.ones(7))
    with pytest.raises(ValueError, match="all zero"):
        sparse_hclust(frame, uorth=np.zeros((n, n)))
    first = quiet(sparse_hclust, frame, wbound=2.0)
    with pytest.raises(ValueError, match="centroid"):
        quiet(sparse_hclust, frame, wbound=2.0, uorth=first, method="centroid")
    second = quiet(sparse_hclust, frame, wbound=2.0, uorth=first)
    # u is orthogonal to the first u
    assert abs(float(first.u @ second.u)) < 1e-12


def test_callers_frame_unchanged(frame):
    df = frame.copy()
    df.iloc[2, 3] = np.nan
    before = df.copy()
    quiet(sparse_hclust, df, scale=True, standardize_arrays=True, wbound=2.0)
    quiet(sparse_hclust, df, dissimilarity="absolute", weights="sparcl", wbound=2.0)
    pd.testing.assert_frame_equal(df, before)
    X = df.to_numpy()
    Xb = X.copy()
    quiet(sparse_hclust, X, wbound=2.0)
    np.testing.assert_array_equal(X, Xb)


def test_standardize_arrays_is_by_row(frame):
    X = frame.to_numpy()
    Z = (X - X.mean(axis=1, keepdims=True)) / X.std(axis=1, ddof=1, keepdims=True)
    a = quiet(sparse_hclust, frame, wbound=2.0, standardize_arrays=True)
    b = quiet(sparse_hclust, Z, wbound=2.0)
    np.testing.assert_allclose(a.weights.to_numpy(), b.weights.to_numpy(), rtol=1e-10)
    const = frame.copy()
    const.iloc[5] = 1.0
    with pytest.raises(ValueError, match=r"standardize_arrays=True.*\[5\]"):
        sparse_hclust(const, standardize_arrays=True)


def test_convergence_warning():
    X, _ = sim3(n_per=8, p=30, q=5)
    with pytest.warns(ConvergenceWarning, match="niter=1 "):
        fit = sparse_hclust(X, wbound=2.0, niter=1)
    assert not fit.converged and fit.n_iter == 1
    assert "Did NOT converge in 1 iterations" in repr(fit)
    assert any("raise niter" in n for n in fit.summary().notes)


# --------------------------------------------------------------------- trees
def test_tree_conventions_match_scipy():
    rng = np.random.default_rng(7)
    d = rng.random(66)  # 12 observations
    Z = linkage(d, "average")
    merge = r_merge(Z)
    n = 12
    assert merge.shape == (11, 2)
    for a, b in merge:  # R: singleton first; two singletons / two steps increasing
        if a > 0 and b > 0:
            assert a < b
        elif a < 0 and b < 0:
            assert -a < -b
        else:
            assert a < 0 < b
    np.testing.assert_array_equal(r_order(merge), leaves_list(Z))
    for k in range(1, n + 1):
        ours = cutree(merge, k)
        ref = cut_tree(Z, n_clusters=k).ravel()
        assert len(np.unique(ours)) == k
        assert (ours[:, None] == ours[None, :]).tolist() == (ref[:, None] == ref[None, :]).tolist()
        first_seen = pd.unique(ours)  # numbered by first appearance
        np.testing.assert_array_equal(first_seen, np.arange(k))


def test_result_api(frame):
    fit = quiet(sparse_hclust, frame, wbound=2.0, method="complete", k=3, cluster_features=True)
    assert isinstance(fit, SparseHClustResult)
    assert fit.labels.index.equals(frame.index)
    pd.testing.assert_series_equal(fit.cut(3), fit.labels)
    assert fit.cut(height=fit.height[-1]).nunique() == 1
    assert fit.cut(height=-1.0).nunique() == len(frame)
    U = fit.u_matrix()
    assert U.index.equals(frame.index) and np.allclose(U, U.T)
    assert np.linalg.norm(U.to_numpy()) == pytest.approx(1.0)
    assert fit.leaf_names == [frame.index[i] for i in fit.order]
    assert fit.linkage_features.shape == (fit.n_nonzero - 1, 4)
    X = frame[fit.feature_names]
    d = (2 * (1 - X.corr())).to_numpy()[np.triu_indices(fit.n_nonzero, 1)]
    np.testing.assert_allclose(fit.linkage_features, r_ordered(linkage(d, "average")))
    text = repr(fit)
    assert "Sparse hierarchical clustering (complete linkage, squared distance, wbound=2)" in text
    assert f"Non-zero weights: {fit.n_nonzero} of 10" in text
    s = fit.summary()
    assert list(s.tables) == ["parameters", "weights", "clusters", "profiles"]
    w = s.tables["weights"]
    assert w["weight"].is_monotonic_decreasing and len(w) == fit.n_nonzero
    uncut = quiet(sparse_hclust, frame, wbound=2.0)
    assert (uncut.labels == 0).all() and "Tree not cut" in repr(uncut)
    assert "profiles" not in uncut.summary().tables
    with pytest.raises(ValueError, match="exactly one of k= or height="):
        uncut.cut()


def r_ordered(Z: np.ndarray) -> np.ndarray:
    out = Z.copy()
    n = len(Z) + 1
    m = r_merge(Z)
    out[:, :2] = np.where(m < 0, -m - 1, m + n - 1)
    return out


def test_centroid_heights_are_lance_williams_on_u():
    """R's centroid on u: merging i, j gives d(k, ij) = (d_ki + d_kj)/2 - d_ij/4 (sizes 1)."""
    d = np.array([1.0, 4.0, 9.0, 2.0, 6.0, 3.0])  # 4 observations
    from sparseclust._sparse.tree import tree_linkage

    Z = tree_linkage(d, "centroid")
    assert Z[0, 2] == pytest.approx(1.0)  # pair (0, 1)
    # remaining: d(2,{01}) = (4+2)/2 - 1/4 = 2.75, d(3,{01}) = (9+6)/2 - 1/4 = 7.25, d(2,3) = 3
    assert Z[1, 2] == pytest.approx(2.75)


# --------------------------------------------------------------------- permute
@pytest.fixture(scope="module")
def perm_data() -> np.ndarray:
    X, _ = sim3(n_per=8, p=24, q=6, seed=9)
    return X


def test_permute_reproducible_and_parallel(perm_data):
    kw = dict(wbounds=[1.3, 2.0, 3.0], nperms=4, rng=11, niter=50)
    a = hclust_sparse_permute(perm_data, **kw)
    b = hclust_sparse_permute(perm_data, **kw, n_jobs=2)
    assert isinstance(a, PermuteResult) and a.method == "hclust"
    np.testing.assert_array_equal(a.permtots, b.permtots)
    np.testing.assert_array_equal(a.tots, b.tots)
    assert a.permtots.shape == (3, 4)
    c = hclust_sparse_permute(perm_data, **{**kw, "rng": 12})
    assert not np.array_equal(a.permtots, c.permtots)
    # tots are the fits on the data, and best is one of them
    single = sparse_hclust(perm_data, wbound=2.0, niter=50)
    assert a.tots[1] == pytest.approx(single.crit, rel=1e-12)
    assert a.best is a.fits[a.best_index] and a.best.wbound == a.best_wbound
    assert a.table["n_nonzero"].tolist() == [f.n_nonzero for f in a.fits]


def test_permute_rules_and_nulls(perm_data):
    kw = dict(wbounds=[1.3, 2.0, 3.0, 4.0], nperms=3, rng=5, niter=50)
    one = hclust_sparse_permute(perm_data, **kw, rule="1se")
    assert one.rule == "1se"
    gaps, sds = one.table["gap"], one.table["sd_gap"]
    ok = one.table["wbound"][gaps >= gaps.max() - sds[gaps.idxmax()]]
    assert one.best_wbound == ok.min()
    dis = hclust_sparse_permute(perm_data, **kw, null="dissimilarities", dissimilarity="absolute")
    assert dis.null == "dissimilarities" and np.isfinite(dis.permtots).all()
    again = hclust_sparse_permute(perm_data, **kw, null="dissimilarities", dissimilarity="absolute")
    np.testing.assert_array_equal(dis.permtots, again.permtots)
    assert dis.permtots.shape == (4, 3) and np.all(dis.permtots > 0)


def test_permute_bad_inputs(perm_data):
    with pytest.raises(ValueError, match="wbounds must hold at least 2 numbers"):
        hclust_sparse_permute(perm_data, wbounds=[2.0])
    with pytest.raises(ValueError, match=r"wbounds\[0\] must be a finite number > 1"):
        hclust_sparse_permute(perm_data, wbounds=[0.9, 2.0])
    with pytest.raises(ValueError, match="null must be one of"):
        hclust_sparse_permute(perm_data, null="rows")
    with pytest.raises(ValueError, match="rule must be one of"):
        hclust_sparse_permute(perm_data, rule="min")
    big = np.random.default_rng(0).standard_normal((400, 2000))
    with pytest.raises(ValueError, match=r"needs \d+\.\d+ GiB.*null='observations'"):
        hclust_sparse_permute(big, null="dissimilarities")


def test_permute_default_grid():
    X, _ = sim3(n_per=5, p=2, q=1)
    res = quiet(hclust_sparse_permute, X, nperms=2, rng=0)
    assert len(res.table) == 10 and res.table["wbound"].min() == pytest.approx(1.1)
    X, _ = sim3(n_per=5, p=50, q=5)
    res = quiet(hclust_sparse_permute, X, nperms=2, rng=0)
    np.testing.assert_allclose(res.table["wbound"], np.linspace(1.1, 0.7 * np.sqrt(50), 10))


# --------------------------------------------------------------------- plots
@pytest.fixture(scope="module")
def fitted():
    X, lab = sim3(n_per=10, p=30, q=10, seed=2)
    df = pd.DataFrame(X, index=[f"obs{i}" for i in range(30)])
    return quiet(sparse_hclust, df, wbound=3.0, k=3), pd.Series(lab, index=df.index, name="truth")


def _leaf_collection(ax):
    (lc,) = [c for c in ax.collections if c.get_gid() == "leaf_colours"]
    return lc


def test_color_dendrogram_structure(fitted, tmp_path):
    fit, truth = fitted
    shuffled = truth.sample(frac=1.0, random_state=0)  # aligned by index, not position
    ax = color_dendrogram(fit, shuffled, title="truth")
    lc = _leaf_collection(ax)
    assert len(lc.get_segments()) == 30
    colours = lc.get_colors()
    by_value = {}
    for pos, leaf in enumerate(fit.order):  # each leaf's colour is its y value's colour
        by_value.setdefault(int(truth.iloc[leaf]), set()).add(tuple(colours[pos]))
    assert all(len(c) == 1 for c in by_value.values()) and len(by_value) == 3
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["0", "1", "2"]
    assert legend.get_title().get_text() == "truth"
    (tree,) = [c for c in ax.collections if c.get_gid() == "dendrogram"]
    assert len(tree.get_segments()) == 29
    assert ax.get_title() == "truth" and ax.get_ylabel() == "Height"
    assert [t.get_text() for t in ax.get_xticklabels()] == fit.leaf_names  # n <= 50: labels
    ax.figure.savefig(tmp_path / "color_dendrogram.png")


def test_color_dendrogram_strings_and_linkage(fitted):
    fit, truth = fitted
    y = np.array(["ctrl", "case", "other"])[truth.to_numpy()]
    ax = color_dendrogram(fit.linkage, y, labels=False, palette=["red", "green", "blue"])
    assert len(_leaf_collection(ax).get_segments()) == 30
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["case", "ctrl", "other"]
    assert ax.get_xticks().size == 0
    with pytest.raises(ValueError, match="one value per observation"):
        color_dendrogram(fit, y[:5])
    with pytest.raises(TypeError, match="linkage"):
        color_dendrogram("tree", y)


def test_result_plots(fitted, tmp_path):
    fit, truth = fitted
    fig = fit.plot()
    assert len(fig.axes) == 2
    left, right = fig.axes
    assert left.get_title() == "Sparse Clustering"
    assert right.get_xlabel() == "Feature Index" and right.get_ylabel() == "Wj"
    plotted = np.concatenate([c.get_offsets()[:, 1] for c in right.collections])
    assert sorted(plotted.tolist()) == sorted(fit.weights.tolist())
    fig.savefig(tmp_path / "two_panel.png")
    ax = fit.plot_dendrogram()
    assert not [c for c in ax.collections if c.get_gid() == "leaf_colours"]
    ax = fit.plot_dendrogram(y=truth)
    assert len(_leaf_collection(ax).get_segments()) == 30
    ax = fit.plot_weights()
    assert ax.get_xlabel() == "Feature Index"
    import matplotlib.pyplot as plt

    _, given = plt.subplots()
    assert plot_dendrogram(fit, ax=given) is given
    assert len(plot_hclust(fit, y=truth).axes) == 2


def test_plot_negative_heights(fitted):
    fit, truth = fitted
    second = quiet(sparse_hclust, fit.table.frame, wbound=3.0, uorth=fit)
    assert second.height.min() < 0  # u orthogonal to a positive u has negative entries
    ax = second.plot_dendrogram(y=truth)
    (tree,) = [c for c in ax.collections if c.get_gid() == "dendrogram"]
    tops = [seg[1][1] for seg in tree.get_segments()]
    np.testing.assert_allclose(sorted(tops), sorted(second.height))


# --------------------------------------------------------------------- memory
def _peak_mb(func) -> float:
    tracemalloc.start()
    try:
        func()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def test_memory_never_holds_D():
    """n = 400, p = 2000: sparcl's D would be 1.2 GB (79800 x 2000 doubles); the peak
    here is a few n x p and n x n arrays (about 35 MB)."""
    n, p = 400, 2000
    X, _ = sim3(n_per=n // 4, p=p, q=50, seed=3)
    X = np.vstack([X, X[: n - X.shape[0]]])
    d_mb = n * (n - 1) // 2 * p * 8 / 2**20
    peak = _peak_mb(lambda: quiet(sparse_hclust, X, wbound=8.0))
    assert peak < 0.06 * d_mb, (peak, d_mb)
    op = make_operator(X, "absolute", "exact")
    peak = _peak_mb(lambda: op.utd(np.ones(op.npairs)))
    assert peak < 0.02 * d_mb, (peak, d_mb)


@pytest.mark.slow
def test_memory_2000_by_5000():
    """The target size: n = 2000, p = 5000 (sparcl cannot allocate its 74.5 GiB D)."""
    X, _ = sim3(n_per=2000 // 3 + 1, p=5000, q=50, seed=4)
    X = X[:2000]
    peak = _peak_mb(lambda: quiet(sparse_hclust, X))
    assert peak < 1024, peak
