"""Tests of DP-means against numbers the code under test did not produce.

References used: a plain sequential transcription of Kulis & Jordan (2012),
Algorithm 1 (written here, one point at a time, no vectorisation); the
farthest-first heuristic worked by hand on tiny data; closed forms (one cluster
when lambda is at least the largest squared distance to the mean, one cluster per
distinct point when lambda is tiny); blobs whose partition is known; and the CRAFT
paper's DP-means purities.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest

import sparseclust._dpmeans.core as dpm
from sparseclust import (
    CalibrationWarning,
    ConvergenceWarning,
    DataWarning,
    DPMeansResult,
    dpmeans,
    farthest_first_lambda,
)
from sparseclust._dpmeans.core import dp_pass, dpmeans_core, farthest_first_core
from sparseclust.datasets import load_dataset, load_wine
from sparseclust.metrics import ari, purity

# DP-means on raw Wine is the CRAFT paper's baseline: its spread warning (proline's sd
# is 2,500 times nonflavanoid_phenols') is tested in tests/_results/test_analyst.py.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Numeric columns differ in spread"),
    pytest.mark.filterwarnings("ignore:.*found tiny clusters"),  # the paper's baselines
]


# --------------------------------------------------------------------- reference
def sqdist(a: np.ndarray, b: np.ndarray) -> float:
    """Squared Euclidean distance as a sum of squared differences (the package's formula)."""
    return float(np.sum((a - b) ** 2))


def textbook_pass(X: np.ndarray, centers: list, lam: float) -> tuple[np.ndarray, list, list]:
    """One pass of Kulis & Jordan Algorithm 1, strictly point by point.

    Centres are fixed during the pass except the ones opened in it. Returns the
    labels, the centres (old then opened) and the indices of the openers.
    """
    centers = [np.array(c, dtype=float) for c in centers]
    z = np.empty(X.shape[0], dtype=np.int64)
    openers = []
    for i in range(X.shape[0]):
        d = [sqdist(X[i], c) for c in centers]
        if min(d) > lam:
            centers.append(X[i].copy())
            z[i] = len(centers) - 1
            openers.append(i)
        else:
            z[i] = int(np.argmin(d))  # first of equal minima
    return z, centers, openers


def textbook_dpmeans(
    X: np.ndarray, lam: float, start: np.ndarray, *, start_is_mean: bool, max_iter: int = 100
) -> dict:
    """Kulis & Jordan Algorithm 1: passes, then means, empty clusters dropped in order.

    Stops when a pass leaves the assignment unchanged. With a random start the
    initial "everything in cluster 1" is not an assignment the centre is the mean of,
    so the first pass cannot count as unchanged.
    """
    n = X.shape[0]
    centers = [np.array(start, dtype=float)]
    z_prev = np.zeros(n, dtype=np.int64) if start_is_mean else None
    path = [sum(sqdist(X[i], centers[0]) for i in range(n)) + lam]
    converged = False
    n_iter = 0
    for it in range(1, max_iter + 1):
        n_iter = it
        z, cand, _ = textbook_pass(X, centers, lam)
        used = [k for k in range(len(cand)) if np.any(z == k)]
        remap = {k: j for j, k in enumerate(used)}
        z = np.array([remap[k] for k in z], dtype=np.int64)
        centers = [X[z == j].mean(axis=0) for j in range(len(used))]
        path.append(sum(sqdist(X[i], centers[z[i]]) for i in range(n)) + lam * len(centers))
        if z_prev is not None and np.array_equal(z, z_prev):
            converged = True
            break
        z_prev = z
    return {
        "labels": z,
        "centers": np.array(centers),
        "objective_path": np.array(path),
        "n_iter": n_iter,
        "converged": converged,
    }


def random_problem(seed: int) -> tuple[np.ndarray, float]:
    """Small clustered data and a continuous random lambda spanning 1 to many clusters."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 45))
    p = int(rng.integers(1, 5))
    n_blobs = int(rng.integers(1, 6))
    means = rng.normal(scale=rng.uniform(1.0, 6.0), size=(n_blobs, p))
    X = means[rng.integers(n_blobs, size=n)] + rng.normal(size=(n, p))
    spread = float(((X - X.mean(axis=0)) ** 2).sum(axis=1).max())
    lam = float(np.exp(rng.uniform(np.log(0.02), np.log(1.2))) * spread)
    return X, lam


# ---------------------------------------------------------------------- exactness
@pytest.mark.parametrize("block", [dpm.BLOCK_ROWS, 3])
@pytest.mark.parametrize("seed", range(40))
def test_dp_pass_equals_sequential_pass(seed, block, monkeypatch):
    monkeypatch.setattr(dpm, "BLOCK_ROWS", block)
    X, lam = random_problem(seed)
    rng = np.random.default_rng(1000 + seed)
    K0 = int(rng.integers(1, 4))
    C0 = X[rng.choice(X.shape[0], size=min(K0, X.shape[0]), replace=False)] + rng.normal(
        scale=0.5, size=(min(K0, X.shape[0]), X.shape[1])
    )
    labels, centers = dp_pass(X, C0, lam)
    z, ref_centers, _ = textbook_pass(X, list(C0), lam)
    np.testing.assert_array_equal(labels, z)
    np.testing.assert_array_equal(centers, np.array(ref_centers))


@pytest.mark.parametrize("block", [dpm.BLOCK_ROWS, 5])
@pytest.mark.parametrize("seed", range(40))
def test_dpmeans_core_equals_textbook_mean_start(seed, block, monkeypatch):
    monkeypatch.setattr(dpm, "BLOCK_ROWS", block)
    X, lam = random_problem(seed)
    out = dpmeans_core(X, lam, init="mean")
    ref = textbook_dpmeans(X, lam, X.mean(axis=0), start_is_mean=True)
    np.testing.assert_array_equal(out.labels, ref["labels"])
    np.testing.assert_allclose(out.centers, ref["centers"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out.objective_path, ref["objective_path"], rtol=1e-12)
    assert out.n_iter == ref["n_iter"]
    assert out.converged is ref["converged"] is True


@pytest.mark.parametrize("seed", range(40))
def test_dpmeans_core_equals_textbook_random_start(seed):
    X, lam = random_problem(seed)
    r = int(np.random.default_rng(seed).integers(X.shape[0]))  # the random data point
    out = dpmeans_core(X, lam, init="random", rng=np.random.default_rng(seed))
    ref = textbook_dpmeans(X, lam, X[r], start_is_mean=False)
    np.testing.assert_array_equal(out.labels, ref["labels"])
    np.testing.assert_allclose(out.centers, ref["centers"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out.objective_path, ref["objective_path"], rtol=1e-12)
    assert out.n_iter == ref["n_iter"]
    assert out.converged


@pytest.mark.parametrize("init", ["mean", "random"])
@pytest.mark.parametrize("seed", range(40))
def test_converged_fit_is_a_fixed_point(seed, init):
    """Converged means one more pass changes nothing: no cluster opens, no label moves."""
    X, lam = random_problem(seed)
    out = dpmeans_core(X, lam, init=init, rng=np.random.default_rng(seed))
    assert out.converged
    labels, centers = dp_pass(X, out.centers, lam)
    np.testing.assert_array_equal(labels, out.labels)
    assert centers.shape == out.centers.shape


def test_random_start_is_not_converged_after_one_unchanged_pass():
    # Start at the point 0 with lambda 1.5: every point is within lambda of it, so the
    # first pass keeps one cluster, whose mean (19/22) is then 3.5 > 1.5 from -1.
    X = np.array([[0.0]] + [[1.0]] * 20 + [[-1.0]])
    seed = next(s for s in range(100) if np.random.default_rng(s).integers(X.shape[0]) == 0)
    out = dpmeans_core(X, 1.5, init="random", rng=np.random.default_rng(seed))
    assert out.converged
    assert out.n_iter > 1
    assert out.centers.shape[0] == 2
    np.testing.assert_allclose(np.sort(out.centers.ravel()), [-1.0, 20 / 21])


# ---------------------------------------------------------------------- invariants
@pytest.mark.parametrize("seed", range(40))
def test_dp_pass_cost_at_most_lambda_or_opener(seed):
    X, lam = random_problem(seed)
    rng = np.random.default_rng(seed + 7)
    C0 = rng.normal(scale=3.0, size=(int(rng.integers(1, 4)), X.shape[1]))
    K0 = C0.shape[0]
    labels, centers = dp_pass(X, C0, lam)
    assert np.array_equal(centers[:K0], C0)
    openers = [int(np.flatnonzero(labels == k)[0]) for k in range(K0, centers.shape[0])]
    assert openers == sorted(openers)
    for i in range(X.shape[0]):
        available = list(range(K0)) + [K0 + j for j, o in enumerate(openers) if o < i]
        d_avail = [sqdist(X[i], centers[c]) for c in available]
        if i in openers:
            assert labels[i] == K0 + openers.index(i)
            np.testing.assert_array_equal(centers[labels[i]], X[i])
            assert min(d_avail) > lam
        else:
            d_own = sqdist(X[i], centers[labels[i]])
            assert labels[i] in available
            assert d_own <= lam
            assert d_own == min(d_avail)


@pytest.mark.parametrize("init", ["mean", "random"])
@pytest.mark.parametrize("seed", range(25))
def test_objective_path_non_increasing(seed, init):
    X, lam = random_problem(seed)
    out = dpmeans_core(X, lam, init=init, rng=np.random.default_rng(seed))
    path = out.objective_path
    assert np.all(np.diff(path) <= 1e-9 * np.abs(path[:-1]))


def test_objective_path_non_increasing_on_wine():
    X = load_wine().drop(columns="class")
    for lam in [1e3, 3e4, 2.6e5]:
        fit = dpmeans(X, lam=lam)
        path = fit.objective_path
        assert np.all(np.diff(path) <= 1e-9 * np.abs(path[:-1]))
        assert fit.objective == path[-1]


# ---------------------------------------------------------------- farthest first
def test_farthest_first_by_hand():
    # Three points at the origin and one at (4, 4); the mean is (1, 1): squared
    # distances 2, 2, 2, 18. k=2 adds (4, 4) at 18; then the origin points are 2 from
    # their nearest member (the mean) -> k=3 gives 2; k=4 adds an origin point: all 0.
    X = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [4.0, 4.0]])
    assert farthest_first_lambda(X, k=2) == 18.0
    assert farthest_first_lambda(X, k=3) == 2.0
    assert farthest_first_lambda(X, k=4) == 0.0
    # two corners, two points each: every point is 5^2 + 0.5^2 from the mean; then
    # the far corner is 10^2 from the first pick but 25.25 from the mean.
    Y = np.array([[0.0, 0.0], [0.0, 1.0], [10.0, 0.0], [10.0, 1.0]])
    assert farthest_first_lambda(Y, k=2) == 25.25
    assert farthest_first_lambda(Y, k=3) == 25.25
    assert farthest_first_lambda(Y, k=4) == 1.0


@pytest.mark.parametrize("seed", range(5))
def test_farthest_first_k2_is_max_squared_distance_to_mean(seed):
    X = np.random.default_rng(seed).normal(size=(30, 3))
    expected = max(sqdist(x, X.mean(axis=0)) for x in X)
    assert farthest_first_lambda(X, k=2) == pytest.approx(expected, rel=1e-12)


def test_farthest_first_random_start():
    X = np.random.default_rng(3).normal(size=(25, 2))
    a = farthest_first_lambda(X, k=2, start="random", rng=11)
    assert a == farthest_first_lambda(X, k=2, start="random", rng=11)
    assert a == farthest_first_lambda(X, k=2, start="random", rng=np.random.default_rng(11))
    # k=2 from a data point: the largest squared distance from that point
    candidates = [max(sqdist(X[r], x) for x in X) for r in range(X.shape[0])]
    assert min(abs(a - c) for c in candidates) <= 1e-12 * a
    values = {farthest_first_lambda(X, k=2, start="random", rng=s) for s in range(10)}
    assert len(values) > 1


def test_farthest_first_bad_k():
    X = np.eye(3)
    with pytest.raises(ValueError, match="k must be an integer >= 2; got k=1"):
        farthest_first_lambda(X, k=1)
    with pytest.raises(TypeError, match="k must be an integer"):
        farthest_first_lambda(X, k=2.5)
    with pytest.raises(ValueError, match="start must be one of 'mean', 'random'"):
        farthest_first_lambda(X, k=2, start="median")
    with pytest.raises(ValueError, match="n_obs=3 must be >= 4"):
        farthest_first_lambda(X, k=4)


def test_farthest_first_core_random_start_uses_a_data_point():
    X = np.array([[0.0], [1.0], [5.0]])
    lam = farthest_first_core(X, 2, start="random", rng=np.random.default_rng(0))
    assert lam in {25.0, 16.0}  # from 0 -> 5 (25), from 1 -> 5 (16), from 5 -> 0 (25)


# --------------------------------------------------------------------- lam given
def test_one_cluster_when_lambda_at_least_max_distance_to_mean():
    X = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [4.0, 4.0]])  # distances 2, 2, 2, 18
    fit = dpmeans(X, lam=18.0)
    assert fit.n_clusters == 1 and fit.converged and fit.n_iter == 1
    np.testing.assert_array_equal(fit.centers.to_numpy(), [[1.0, 1.0]])
    assert fit.objective == 2 + 2 + 2 + 18 + 18.0
    fit = dpmeans(X, lam=17.5)
    assert fit.n_clusters == 2
    assert fit.labels.tolist() == [0, 0, 0, 1]
    Z = np.random.default_rng(0).normal(size=(50, 4))
    dmax = max(sqdist(z, Z.mean(axis=0)) for z in Z)
    assert dpmeans(Z, lam=dmax * (1 + 1e-9)).n_clusters == 1


def test_tiny_lambda_one_cluster_per_distinct_point():
    rng = np.random.default_rng(5)
    base = rng.normal(size=(12, 3))
    X = base[rng.integers(12, size=30)]
    n_distinct = np.unique(X, axis=0).shape[0]
    fit = dpmeans(X, lam=1e-10)
    assert fit.n_clusters == n_distinct
    lab = fit.labels.to_numpy(dtype=int)
    for i in range(30):
        for j in range(30):
            assert (lab[i] == lab[j]) == bool(np.array_equal(X[i], X[j]))


# ------------------------------------------------------------------- calibration
def _blobs(k: int, per: int = 15, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = np.array([[0, 0], [100, 0], [0, 100], [100, 100], [50, 200], [200, 50]], float)
    truth = np.repeat(np.arange(k), per)
    X = centres[truth] + rng.normal(size=(k * per, 2))
    perm = rng.permutation(k * per)
    return X[perm], truth[perm]


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
def test_calibration_hits_k_on_blobs(k):
    X, truth = _blobs(k)
    fit = dpmeans(X, k=k)
    assert fit.n_clusters == k
    assert fit.lam_method == "calibrated" and fit.k == k
    assert ari(truth, fit.labels.to_numpy()) == 1.0
    cal = fit.calibration
    assert isinstance(cal, pd.DataFrame)
    assert list(cal.columns) == ["lam", "n_clusters"]
    assert len(cal) >= 1
    hit = cal[cal["lam"] == fit.lam]
    assert hit["n_clusters"].tolist() == [k]
    assert dpmeans(X, lam=fit.lam).labels.equals(fit.labels)


def test_calibration_impossible_k_warns_and_returns_nearest():
    # Four corners of a square and its centre (the mean): lambda >= 2 gives 1 cluster,
    # lambda < 2 gives 5 (each corner opens; the centre stays at the mean).
    X = np.array([[1.0, 1.0], [-1.0, 1.0], [0.0, 0.0], [1.0, -1.0], [-1.0, -1.0]])
    assert dpmeans(X, lam=2.0).n_clusters == 1
    assert dpmeans(X, lam=1.999).n_clusters == 5
    with pytest.warns(CalibrationWarning, match="no lambda gave exactly k=4 clusters"):
        fit = dpmeans(X, k=4)
    assert fit.n_clusters == 5
    assert fit.lam < 2.0
    assert "Asked for k=4; got 5 clusters." in repr(fit)
    assert set(fit.calibration["n_clusters"]) == {1, 5}
    # k=3: 1 and 5 are equally near; the larger lambda (one cluster) is returned
    with pytest.warns(CalibrationWarning, match=r"returning lambda=.* with 1 clusters"):
        fit = dpmeans(X, k=3)
    assert fit.n_clusters == 1 and fit.lam >= 2.0


def test_calibration_k1():
    X, _ = _blobs(3)
    fit = dpmeans(X, k=1)
    assert fit.n_clusters == 1


# -------------------------------------------------------------------- init random
def test_init_random_reproducible():
    X, _ = _blobs(4, seed=2)
    a = dpmeans(X, lam=800.0, init="random", rng=3)
    b = dpmeans(X, lam=800.0, init="random", rng=3)
    c = dpmeans(X, lam=800.0, init="random", rng=np.random.default_rng(3))
    for other in (b, c):
        assert a.labels.equals(other.labels)
        np.testing.assert_array_equal(a.objective_path, other.objective_path)
        np.testing.assert_array_equal(a.centers.to_numpy(), other.centers.to_numpy())
    starts = {
        float(dpmeans(X, lam=800.0, init="random", rng=s).objective_path[0]) for s in range(6)
    }
    assert len(starts) > 1  # different random starting points
    assert a.init == "random"


def test_init_random_with_k_and_farthest_first():
    X, truth = _blobs(3, seed=4)
    fit = dpmeans(X, k=3, init="random", rng=0)
    assert fit.n_clusters == 3 and fit.converged
    fit = dpmeans(X, lam="farthest_first", k=3, init="random", rng=0)
    assert fit.lam_method == "farthest_first"
    assert fit.lam > 0


# -------------------------------------------------------------------- convergence
def test_convergence_warning():
    wine = load_wine().drop(columns="class")
    lam = farthest_first_lambda(wine, k=3)
    assert dpmeans(wine, lam=lam).n_iter > 1
    with pytest.warns(ConvergenceWarning, match="did not converge in max_iter=1 passes"):
        fit = dpmeans(wine, lam=lam, max_iter=1)
    assert fit.converged is False
    assert fit.n_iter == 1
    assert "Did NOT converge in 1 iterations" in repr(fit)
    assert any("Did NOT converge" in note for note in fit.summary().notes)


# ------------------------------------------------------------------------ missing
def _frame_with_missing(n_missing: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        rng.normal(size=(20, 2)), columns=["a", "b"], index=[f"r{i}" for i in range(20)]
    )
    df.iloc[:n_missing, 1] = np.nan
    return df


def test_missing_raises_by_default():
    with pytest.raises(ValueError, match=r"1 of 20 rows have missing values.*missing='drop'"):
        dpmeans(_frame_with_missing(1), lam=1.0)


def test_missing_drop_labels_aligned():
    df = _frame_with_missing(2)
    df = df.iloc[[5, 0, 10, 1] + list(range(11, 20)) + [2, 3, 4, 6, 7, 8, 9]]
    fit = dpmeans(df, lam=1.0, missing="drop")  # 2 of 20 = 10%: no warning
    assert fit.labels.index.equals(df.index)
    assert fit.labels.dtype == "Int64"
    assert fit.labels[["r0", "r1"]].isna().all()
    assert fit.labels.drop(["r0", "r1"]).notna().all()
    assert fit.n_obs == 18 and fit.n_dropped == 2
    complete = dpmeans(df.dropna(), lam=1.0)
    assert fit.labels.drop(["r0", "r1"]).equals(complete.labels)
    assert fit.to_frame().index.equals(df.index)


def test_missing_drop_warns_above_ten_percent():
    with pytest.warns(DataWarning, match="dropped 3 of 20 rows"):
        fit = dpmeans(_frame_with_missing(3), lam=1.0, missing="drop")
    assert fit.n_dropped == 3


def test_missing_invalid_choice():
    with pytest.raises(ValueError, match="missing must be one of 'raise', 'drop'"):
        dpmeans(_frame_with_missing(0), lam=1.0, missing="impute")


# ------------------------------------------------------------ inputs and predict
def _mixed() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    g = rng.choice(["a", "b", "c"], size=40)
    x = rng.normal(size=40) + (g == "b") * 3.0
    return pd.DataFrame({"x": x, "g": pd.Categorical(g)})


def test_categorical_one_hot():
    df = _mixed()
    fit = dpmeans(df, lam=1.5)
    assert list(fit.centers.columns) == ["x", "g[a]", "g[b]", "g[c]"]
    onehot = np.column_stack([df["x"], *[(df["g"] == lv).to_numpy(float) for lv in "abc"]])
    ref = dpmeans(onehot, lam=1.5)
    assert fit.labels.equals(ref.labels)
    np.testing.assert_allclose(fit.centers.to_numpy(), ref.centers.to_numpy(), rtol=1e-12)
    assert any("one-hot" in note for note in fit.summary().notes)


def test_formula_and_array_inputs_agree():
    wine = load_wine()
    X = wine.drop(columns="class")
    a = dpmeans("~ . - class", data=wine, lam=3e4)
    b = dpmeans(X, lam=3e4)
    c = dpmeans(X.to_numpy(), lam=3e4)
    assert a.labels.equals(b.labels) and b.labels.equals(c.labels)
    assert list(c.centers.columns) == [f"x{j}" for j in range(13)]
    assert list(a.centers.columns) == list(X.columns)


def test_predict_training_data_equals_labels():
    wine = load_wine()
    fit = dpmeans("~ . - class", data=wine, lam=3e4)
    assert fit.converged
    assert fit.predict(wine).equals(fit.labels)
    df = _mixed()
    fit = dpmeans(df, lam=1.5, scale=True)
    assert fit.predict(df).equals(fit.labels)
    pred = fit.predict(df.iloc[::-1])
    assert pred.equals(fit.labels.iloc[::-1])


def test_predict_unseen_level_and_missing():
    df = _mixed()
    fit = dpmeans(df, lam=1.5)
    new = pd.DataFrame({"x": [0.0, 1.0], "g": ["a", "z"]})
    with pytest.raises(ValueError, match=r"'g' has values not among its .*levels: \['z'\]"):
        fit.predict(new)
    new = pd.DataFrame({"x": [0.0, np.nan], "g": ["a", "b"]}, index=["p", "q"])
    with pytest.raises(ValueError, match="missing values"):
        fit.predict(new)
    pred = fit.predict(new, missing="drop")
    assert pred.index.tolist() == ["p", "q"] and pd.isna(pred["q"]) and pred.notna()["p"]


def test_scale_invariant_to_affine_rescaling():
    X = load_wine().drop(columns="class")
    rng = np.random.default_rng(0)
    a = rng.uniform(0.01, 100.0, size=X.shape[1]) * rng.choice([-1, 1], size=X.shape[1])
    b = rng.normal(scale=50.0, size=X.shape[1])
    fit = dpmeans(X, lam=20.0, scale=True)
    fit2 = dpmeans(X * a + b, lam=20.0, scale=True)
    assert 1 < fit.n_clusters < len(X)
    assert fit.labels.equals(fit2.labels)
    Z = (X - X.mean()) / X.std(ddof=1)
    assert dpmeans(Z, lam=20.0).labels.equals(fit.labels)
    assert any("standardised" in note for note in fit.summary().notes)


def test_scale_leaves_data_and_within_ss_consistent():
    # Regression: scale=True on numeric-only data standardised the kept table in place,
    # so within_ss/profiles/plots standardised it a second time.
    X = load_wine().drop(columns="class")
    fit = dpmeans(X, lam=20.0, scale=True)
    np.testing.assert_array_equal(fit.table.numeric, X.to_numpy())
    assert fit.within_ss.sum() + fit.lam * fit.n_clusters == pytest.approx(fit.objective, rel=1e-10)
    prof = fit.profiles()
    assert prof.loc[("alcohol", "mean"), "overall"] == pytest.approx(X["alcohol"].mean())


# ---------------------------------------------------------------- bad parameters
@pytest.fixture(scope="module")
def wine_x() -> pd.DataFrame:
    return load_wine().drop(columns="class")


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"lam": -1.0}, ValueError, r"lam must be a finite number > 0; got lam=-1.0"),
        ({"lam": 0}, ValueError, r"lam must be a finite number > 0; got lam=0"),
        ({"lam": np.inf}, ValueError, r"lam must be a finite number > 0; got lam=inf"),
        ({"lam": np.nan}, ValueError, r"lam must be a finite number > 0"),
        (
            {"lam": "auto"},
            ValueError,
            r"lam must be a positive number, 'farthest_first' or None; got lam='auto'",
        ),
        ({"lam": True}, TypeError, r"lam must be a finite number"),
        ({"lam": 1.0, "k": 2}, ValueError, r"give either lam= \(a number\) or k= .* not both"),
        ({"k": 500}, ValueError, r"k=500 must be <= the number of observations n_obs=178"),
        ({"k": 2.5}, TypeError, r"k must be an integer >= 1; got k=2.5"),
        ({"k": 0}, ValueError, r"k must be an integer >= 1; got k=0"),
        ({"lam": "farthest_first"}, ValueError, r"lam='farthest_first' needs k="),
        ({"lam": "farthest_first", "k": 1}, ValueError, r"needs k >= 2; got k=1"),
        (
            {"lam": 1.0, "init": "kmeans++"},
            ValueError,
            r"init must be one of 'mean', 'random'; got init='kmeans\+\+'",
        ),
        ({"lam": 1.0, "max_iter": 0}, ValueError, r"max_iter must be an integer >= 1"),
        (
            {},
            ValueError,
            r"dpmeans needs the new-cluster penalty: pass lam=<number>, k=<int> .*"
            r"or lam='farthest_first' with k=<int>",
        ),
        (
            {"lam": 1.0, "rng": "seed"},
            TypeError,
            r"rng must be None, an int seed or a numpy.random.Generator",
        ),
        ({"lam": 1.0, "rng": -1}, ValueError, r"rng must be a non-negative integer seed"),
        ({"lam": 1.0, "scale": "yes"}, TypeError, r"scale must be True or False"),
    ],
)
def test_bad_parameters(wine_x, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        dpmeans(wine_x, **kwargs)


def test_farthest_first_lambda_zero_is_an_error():
    # by hand (see test_farthest_first_by_hand): k=4 spreads onto a duplicate -> 0
    X = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [4.0, 4.0]])
    with pytest.raises(ValueError, match="farthest-first heuristic gave lambda=0"):
        dpmeans(X, lam="farthest_first", k=4)
    assert dpmeans(X, lam="farthest_first", k=3).lam == 2.0


# -------------------------------------------------------------------- result API
def test_result_api(wine_x):
    fit = dpmeans(wine_x, lam=3e4)
    assert isinstance(fit, DPMeansResult)
    text = repr(fit)
    assert "Call: dpmeans(wine_x, lam=30000" in text
    assert text.startswith("DP-means (lambda=3e+04, given) with")
    assert str(fit) == text
    assert "<b>DP-means" in fit._repr_html_()
    s = fit.summary()
    assert set(s.tables) == {"clusters", "parameters", "centers", "profiles"}
    assert "DP-means: summary" in str(s)
    assert s.tables["parameters"].loc["lambda set by", "value"] == "given"
    frame = fit.to_frame()
    assert list(frame.columns) == ["cluster"] and frame.index.equals(wine_x.index)
    assert fit.sizes.sum() == len(wine_x) == fit.n_obs
    assert fit.n_clusters == len(fit.centers) == fit.labels.nunique()
    # within SS from the data, by hand
    X = wine_x.to_numpy()
    lab = fit.labels.to_numpy(dtype=int)
    wss = [
        sum(sqdist(X[i], X[lab == k].mean(axis=0)) for i in np.flatnonzero(lab == k))
        for k in range(fit.n_clusters)
    ]
    np.testing.assert_allclose(fit.within_ss.to_numpy(), wss, rtol=1e-10)
    assert fit.objective == pytest.approx(sum(wss) + fit.lam * fit.n_clusters, rel=1e-12)
    assert fit.params["lam"] == 3e4 and fit.k is None and fit.lam_method == "given"


def test_result_without_data(wine_x):
    fit = dpmeans(wine_x, lam=3e4, keep_data=False)
    with pytest.raises(ValueError, match="refit with keep_data=True"):
        _ = fit.within_ss
    s = fit.summary()
    assert "profiles" not in s.tables
    assert any("keep_data=False" in note for note in s.notes)


def test_plots(wine_x):
    import matplotlib.pyplot as plt

    fit = dpmeans(wine_x, lam=3e4)
    try:
        ax = fit.plot()
        assert len(ax.collections) >= 1
        ax = fit.plot_objective()
        assert len(ax.lines[0].get_ydata()) == len(fit.objective_path)
    finally:
        plt.close("all")


# ------------------------------------------------------------------ paper numbers
@pytest.mark.parametrize(
    ("name", "k", "expected"),
    [("wine", 3, 0.685), ("monk3", 2, 0.528), ("splice", 3, 0.519)],
)
def test_paper_purities_farthest_first(name, k, expected):
    # CRAFT paper, DP-means: 0.66 Wine, 0.53 Monk-3, 0.52 Splice
    df = load_dataset(name)
    fit = dpmeans("~ . - class", data=df, lam="farthest_first", k=k)
    assert fit.lam_method == "farthest_first"
    assert purity(df["class"], fit.labels) == pytest.approx(expected, abs=0.005)


def test_result_without_data_prints_and_summarises():
    """keep_data=False (and the Dask backend) keep no rows: print and summary still work,
    the within SS read off the objective."""
    X = np.random.default_rng(3).normal(size=(60, 3))
    X[30:] += 6
    kept = dpmeans(X, k=2)
    lean = dpmeans(X, k=2, keep_data=False)
    assert repr(lean).splitlines()[2:] == repr(kept).splitlines()[2:]
    assert "within_ss" not in lean.summary().tables["clusters"]
    assert lean.objective - lean.lam * 2 == pytest.approx(kept.within_ss.sum(), rel=1e-12)


# ------------------------------------------------------------- module layout
def test_core_returns_a_typed_record():
    import dataclasses

    from sparseclust._dpmeans.core import DPFit

    X, lam = random_problem(0)
    out = dpmeans_core(X, lam)
    assert isinstance(out, DPFit)
    assert out.states is None and out.labels.shape == (X.shape[0],)
    assert out.sizes.sum() == X.shape[0] and out.centers.shape[0] == out.sizes.size
    with pytest.raises(dataclasses.FrozenInstanceError):
        out.n_iter = 0
