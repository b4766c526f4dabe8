"""Entropy clustering (CRAFT supplementary Algorithm 3) and DP-RF (CRAFT paper Fig. 5).

Expected values are computed here by brute force from the formulas of the paper
(cross-entropy of a point, eq. (11), squared distance on the selected features),
never read back from the code under test.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from sparseclust import CraftResult, DPRFResult, EntropyResult, dp_rf, entropy_clustering
from sparseclust._craft import core as core
from sparseclust._craft.lam import farthest_first as _farthest_first
from sparseclust._craft.lam import singleton_selection as _singleton_selection
from sparseclust._craft.variants import SIGMA_DP
from sparseclust.datasets import load_house_votes_84, load_splice
from sparseclust.exceptions import CalibrationWarning
from sparseclust.metrics import ari, nmi, purity


# ------------------------------------------------------------------------ helpers
def binary_blocks(seed: int = 0, n_per: int = 40, d: int = 12) -> tuple[pd.DataFrame, np.ndarray]:
    """Two clusters: ones with probability 0.9 on the first half of the features for
    cluster 0, on the second half for cluster 1, 0.1 elsewhere."""
    g = np.random.default_rng(seed)
    p = np.full((2, d), 0.1)
    p[0, : d // 2] = 0.9
    p[1, d // 2 :] = 0.9
    truth = np.repeat([0, 1], n_per)
    X = (g.random((2 * n_per, d)) < p[truth]).astype(np.int64)
    return pd.DataFrame(X, columns=[f"f{j}" for j in range(d)]), truth


def smoothed_means(X: np.ndarray, labels: np.ndarray, alpha: float) -> np.ndarray:
    """mu_kd = (ones in cluster k + alpha) / (n_k + 2 alpha), by explicit loops."""
    K = labels.max() + 1
    mu = np.empty((K, X.shape[1]))
    for k in range(K):
        rows = X[labels == k]
        for j in range(X.shape[1]):
            mu[k, j] = (rows[:, j].sum() + alpha) / (len(rows) + 2 * alpha)
    return mu


def cross_entropy(x: np.ndarray, mu: np.ndarray) -> float:
    """-sum_d [x log mu + (1 - x) log(1 - mu)] for one point, term by term."""
    total = 0.0
    for xd, md in zip(x, mu):
        total -= xd * np.log(md) + (1 - xd) * np.log(1 - md)
    return total


def algorithm3_cost(x: np.ndarray, mu: np.ndarray) -> float:
    """Algorithm 3's d_nk = sum_d H(mu) + (mu - x) log(mu / (1 - mu))."""
    H = -mu * np.log(mu) - (1 - mu) * np.log(1 - mu)
    return float(np.sum(H + (mu - x) * np.log(mu / (1 - mu))))


def eq11(X: np.ndarray, labels: np.ndarray, lam: float) -> float:
    """Supplementary eq. (11): sum_k n_k sum_d H(mu*_kd) + lam K, raw cluster means."""
    total = 0.0
    ks = np.unique(labels)
    for k in ks:
        rows = X[labels == k]
        mu = rows.mean(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            h = -(mu * np.log(mu)) - (1 - mu) * np.log(1 - mu)
        total += len(rows) * np.nansum(h)  # 0 log 0 = 0
    return total + lam * len(ks)


def binarised_splice() -> tuple[pd.DataFrame, pd.Series]:
    """Splice as in the paper's Fig. 5: A, C -> 0 and G, T -> 1; rows holding other
    codes (N, D, R, S: 15 of 3190) dropped."""
    s = load_splice()
    codes = s.drop(columns="class").apply(
        lambda c: c.astype(object).map({"A": 0, "C": 0, "G": 1, "T": 1})
    )
    ok = codes.notna().all(axis=1)
    return codes[ok].astype(np.int64), s.loc[ok, "class"]


@pytest.fixture(scope="module")
def blocks_fit():
    X, truth = binary_blocks()
    return X, truth, entropy_clustering(X, k=2, n_init=3, rng=1)


# ------------------------------------------------------------ entropy clustering
def test_entropy_cost_is_cross_entropy_with_smoothed_means(blocks_fit):
    X, _, fit = blocks_fit
    A = X.to_numpy()
    labels = fit.labels.to_numpy(dtype=np.int64)
    alpha = 0.01
    mu = smoothed_means(A, labels, alpha)
    # the reported level shares are these smoothed means (second level = 1)
    for j, c in enumerate(X.columns):
        np.testing.assert_allclose(fit.level_shares[(c, "1")].to_numpy(), mu[:, j], rtol=1e-12)
    d = fit._prep.data
    got = core.costs(d, fit._state, 0.0)
    for n in range(0, len(A), 7):
        for k in range(fit.n_clusters):
            want = cross_entropy(A[n], mu[k])
            assert got[n, k] == pytest.approx(want, rel=1e-10)
            assert algorithm3_cost(A[n], mu[k]) == pytest.approx(want, rel=1e-10)
    # converged: every point sits in its cheapest cluster, within lambda
    brute = np.array([[cross_entropy(a, mu[k]) for k in range(2)] for a in A])
    assert fit.converged
    np.testing.assert_array_equal(labels, brute.argmin(axis=1))
    assert brute.min(axis=1).max() <= fit.lam
    # the restart criterion is the summed cross-entropy
    assert fit.neg_loglik == pytest.approx(brute[np.arange(len(A)), labels].sum(), rel=1e-10)


def test_entropy_recovers_two_blocks(blocks_fit):
    X, truth, fit = blocks_fit
    assert isinstance(fit, EntropyResult) and isinstance(fit, CraftResult)
    assert fit.n_clusters == 2
    assert ari(truth, fit.labels) == 1.0
    assert fit.selected.shape == (2, 12) and bool(fit.selected.all(axis=None))
    assert fit.lam_method == "calibrated" and fit.k == 2
    assert fit.F0 == 0.0 and fit.F_delta == 0.0
    text = repr(fit)
    assert text.startswith("Entropy clustering (lambda=")
    assert "with 2 clusters on 80 obs" in text
    # 0/1 integer columns are read as two-level categories
    kinds = fit.variables.to_frame()
    assert (kinds["kind"] == "categorical").all() and (kinds["n_levels"] == 2).all()
    assert fit.predict(X.iloc[:10]).tolist() == fit.labels.iloc[:10].tolist()
    summary = fit.summary()
    assert "cross-entropy" in summary.tables["parameters"].index
    assert "selected" not in summary.tables


def test_eq11_objective(blocks_fit):
    X, truth, fit = blocks_fit
    A = X.to_numpy()
    labels = fit.labels.to_numpy(dtype=np.int64)
    lam = fit.lam
    ours = eq11(A, labels, lam)
    # smoothing only adds n_k KL(mu* || mu) >= 0, and little of it with alpha = 0.01
    raw = ours - lam * fit.n_clusters
    assert 0.0 <= fit.neg_loglik - raw <= 0.01 * raw
    assert fit.objective[-1] == pytest.approx(fit.neg_loglik + lam * fit.n_clusters, rel=1e-12)
    # the trace of the objective never increases
    assert np.all(np.diff(fit.objective) <= 1e-9 * abs(fit.objective[0]))
    # the partition found beats one cluster, random partitions and a split of one block
    g = np.random.default_rng(5)
    assert ours < eq11(A, np.zeros(len(A), dtype=int), lam)
    for _ in range(5):
        assert ours < eq11(A, g.integers(0, 2, len(A)), lam)
    three = truth.copy()
    three[:20] = 2
    assert ours < eq11(A, three, lam)


def test_entropy_given_lambda_tradeoff():
    # a larger lambda never gives more clusters here, and eq. (11) of each fit is no
    # worse than that of the other fit's partition at the same lambda
    X, _ = binary_blocks(seed=3, n_per=30)
    A = X.to_numpy()
    small = entropy_clustering(X, lam=5.0, n_init=2, rng=0)
    large = entropy_clustering(X, lam=60.0, n_init=2, rng=0)
    assert small.lam_method == "given" and small.k is None
    assert small.n_clusters >= large.n_clusters >= 1
    lab_s = small.labels.to_numpy(dtype=int)
    lab_l = large.labels.to_numpy(dtype=int)
    assert eq11(A, lab_l, 60.0) <= eq11(A, lab_s, 60.0) + 1e-9


def test_entropy_farthest_first_matches_brute_force():
    X, _ = binary_blocks(seed=2, n_per=15, d=6)
    A = X.to_numpy()
    fit = entropy_clustering(X, lam="farthest_first", k=2, n_init=2, rng=0)
    assert fit.lam_method == "farthest_first" and fit.lam > 0
    # the helper on the same data, against a hand-written farthest-first
    alpha = 0.01
    d = core.prepare(np.zeros((len(A), 0)), A, [2] * A.shape[1], alpha=alpha)
    got = _farthest_first(
        d,
        3,
        lambda _row: np.ones(A.shape[1], bool),
        F_delta=0.0,
        sigma_override=None,
        rng=np.random.default_rng(7),
    )
    T = [int(np.random.default_rng(7).integers(len(A)))]
    lam = None
    for _ in range(3):
        dist = np.array(
            [
                -np.inf
                if n in T
                else min(cross_entropy(A[n], (A[t] + alpha) / (1 + 2 * alpha)) for t in T)
                for n in range(len(A))
            ]
        )
        T.append(int(dist.argmax()))
        lam = dist.max()
    assert got == pytest.approx(lam, rel=1e-12)


def test_entropy_accepts_bool_strings_and_missing():
    votes = load_house_votes_84()
    fit = entropy_clustering("~ . - Class", data=votes, k=2, n_init=3, rng=0)
    assert fit.n_clusters == 2 and fit.labels.notna().all()
    assert purity(votes["Class"], fit.labels) > 0.85
    X, truth = binary_blocks(seed=4, n_per=20, d=6)
    mixed = pd.DataFrame(
        {
            "b": X["f0"].astype(bool),
            "s": np.where(X["f1"] == 1, "yes", "no"),
            "f": X["f2"].astype(float),
            **{c: X[c] for c in ["f3", "f4", "f5"]},
        }
    )
    mixed.loc[3, "f"] = np.nan
    res = entropy_clustering(mixed, k=2, n_init=2, rng=0)
    assert res.n_clusters == 2 and res.labels.notna().all()
    drop = entropy_clustering(mixed, k=2, n_init=2, rng=0, missing="drop")
    assert drop.labels.isna().sum() == 1


def test_entropy_rejects_non_binary_columns():
    X, _ = binary_blocks(n_per=10, d=4)
    bad = X.assign(count=np.arange(20) % 3, g=list("abc" * 6) + ["a", "b"], w=np.linspace(0, 1, 20))
    with pytest.raises(ValueError, match=r"columns \['count', 'g', 'w'\] are not") as err:
        entropy_clustering(bad, k=2)
    assert "3 levels" in str(err.value) and "values other than 0/1 (e.g. 2)" in str(err.value)
    unused = X.assign(g=pd.Categorical(["a", "b"] * 10, categories=["a", "b", "c"]))
    with pytest.raises(ValueError, match="remove_unused_categories"):
        entropy_clustering(unused, k=2)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "needs the new-cluster penalty"),
        ({"lam": "far"}, "lam must be a positive number, 'farthest_first' or None"),
        ({"lam": -1.0}, "lam"),
        ({"lam": 2.0, "k": 2}, "give either lam="),
        ({"lam": "farthest_first"}, "needs k="),
        ({"k": 0}, "k"),
        ({"k": 500}, "must be <= the number of observations"),
        ({"k": 2, "alpha": 0.0}, "alpha"),
        ({"k": 2, "n_init": 0}, "n_init"),
    ],
)
def test_entropy_validation(kwargs, match):
    X, _ = binary_blocks(n_per=10, d=4)
    with pytest.raises(ValueError, match=match):
        entropy_clustering(X, **kwargs)


def test_entropy_reproducible():
    X, _ = binary_blocks(seed=6, n_per=25, d=8)
    a = entropy_clustering(X, lam=20.0, n_init=3, rng=11)
    b = entropy_clustering(X, lam=20.0, n_init=3, rng=np.random.default_rng(11))
    pd.testing.assert_series_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.objective, b.objective)
    pd.testing.assert_frame_equal(a.restarts, b.restarts)


# -------------------------------------------------------------------------- DP-RF
def test_dp_rf_cost_and_selection_by_hand():
    g = np.random.default_rng(0)
    X = pd.DataFrame(g.normal(size=(60, 4)), columns=list("abcd"))
    X.loc[30:, ["a", "b"]] += 8.0
    X["c"] *= 0.1  # the tightest column everywhere
    fit = dp_rf(X, m=0.5, k=2, n_init=3, rng=0)
    assert isinstance(fit, DPRFResult) and fit.n_clusters == 2
    A = X.to_numpy()
    labels = fit.labels.to_numpy(dtype=np.int64)
    assert ari(np.repeat([0, 1], 30), labels) == 1.0
    v = fit.selected.to_numpy()
    assert (v.sum(axis=1) == 2).all()  # round(0.5 * 4)
    zeta = np.array([A[labels == k].mean(axis=0) for k in range(2)])
    np.testing.assert_allclose(fit.centers.to_numpy(), zeta, rtol=1e-10)
    # selection: the lowest real within-cluster sds (floored at 0.05 x overall sd)
    floor = 0.05 * A.std(axis=0, ddof=1)
    for k in range(2):
        sd = np.maximum(A[labels == k].std(axis=0), floor)
        assert sd[v[k]].max() <= sd[~v[k]].min() + 1e-12
        assert v[k, 2]
    # cost: squared Euclidean distance on the selected columns + F_delta |v_k|
    got = core.costs(fit._prep.data, fit._state, fit.F_delta, sigma_override=SIGMA_DP)
    for n in range(0, 60, 5):
        for k in range(2):
            want = sum((A[n, j] - zeta[k, j]) ** 2 for j in range(4) if v[k, j])
            assert got[n, k] == pytest.approx(want + fit.F_delta * v[k].sum(), rel=1e-9)
    brute = np.array([[((a - zeta[k]) ** 2)[v[k]].sum() for k in range(2)] for a in A])
    np.testing.assert_array_equal(labels, brute.argmin(axis=1))
    # restart criterion: selected columns about the cluster mean, others about the mean
    crit = sum(
        ((A[n] - np.where(v[labels[n]], zeta[labels[n]], A.mean(axis=0))) ** 2).sum()
        for n in range(60)
    )
    assert fit.neg_loglik == pytest.approx(crit, rel=1e-10)
    assert fit.predict(X).tolist() == labels.tolist()
    assert repr(fit).startswith("DP-RF (m=0.5, lambda=")


def test_dp_rf_one_hot_columns():
    X, _ = binary_blocks(seed=1, n_per=20, d=4)
    df = X.assign(g=np.where(X["f0"] == 1, "u", "v"), z=np.linspace(0, 1, 40))
    fit = dp_rf(df, m=0.5, k=2, n_init=2, rng=0)
    assert list(fit.selected.columns) == ["f0", "f1", "f2", "f3", "z", "g[u]", "g[v]"]
    assert fit.variables.names == list(df.columns)
    assert (fit.selected.sum(axis=1) == 4).all()  # round(0.5 * 7) = 4 (halves up)
    prof = fit.selected_profiles()
    for k in fit.selected.index:
        assert np.isnan(prof.loc[("g", "u"), k]) == (not fit.selected.loc[k, "g[u]"])
    assert fit.predict(df.iloc[:5]).tolist() == fit.labels.iloc[:5].tolist()


def test_dp_rf_splice_binarised():
    X, y = binarised_splice()
    assert X.shape == (3175, 60)
    pur = {}
    for m in (0.2, 0.8):
        fit = dp_rf(X, m=m, k=3, n_init=3, rng=0)
        assert fit.n_clusters == 3 and fit.lam_method == "calibrated"
        assert (fit.selected.sum(axis=1) == round(m * 60)).all()
        pur[m] = purity(y, fit.labels)
        # majority class share is 0.519; the paper's Fig. 5 has DP-RF near 0.5-0.6
        assert 0.519 <= pur[m] <= 0.75, pur
        assert 0.0 < nmi(y, fit.labels) < 0.4


def test_dp_rf_farthest_first_matches_brute_force():
    g = np.random.default_rng(2)
    A = g.normal(size=(30, 4))
    A[10:20, 0] += 10
    A[20:, 1] += 10
    m = 0.5
    c = core.craft_constants(m, 0.24)
    d = core.prepare(A, np.zeros((30, 0), dtype=np.int64), [], alpha=1.0)
    got = _farthest_first(
        d,
        2,
        lambda row: _singleton_selection(row, 0, m),
        F_delta=c.F_delta,
        sigma_override=SIGMA_DP,
        rng=np.random.default_rng(3),
    )
    # by hand: a singleton at t uses the 2 columns where t is farthest from the
    # overall mean in sd units; cost = squared distance on them + F_delta * 2
    z = np.abs(A - A.mean(axis=0)) / A.std(axis=0, ddof=1)
    sel = [np.argsort(-z[t], kind="stable")[:2] for t in range(30)]

    def cost(n, t):
        return float(((A[n, sel[t]] - A[t, sel[t]]) ** 2).sum()) + c.F_delta * 2

    T = [int(np.random.default_rng(3).integers(30))]
    lam = None
    for _ in range(2):
        dist = [-np.inf if n in T else min(cost(n, t) for t in T) for n in range(30)]
        T.append(int(np.argmax(dist)))
        lam = max(dist)
    assert got == pytest.approx(lam, rel=1e-12)
    X = pd.DataFrame(A, columns=list("wxyz"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CalibrationWarning)  # the heuristic may miss k
        ff = dp_rf(X, m=m, rho=0.24, lam="farthest_first", k=2, n_init=2, rng=0)
    assert ff.lam_method == "farthest_first" and ff.lam > 0
    given = dp_rf(X, m=m, lam=ff.lam, n_init=2, rng=0)
    assert given.lam == ff.lam and given.lam_method == "given" and given.k is None


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"k": 2, "m": 1.5}, "m"),
        ({"k": 2, "rho": 0.5}, r"rho must be in \(0, m\(1-m\)\)"),
        ({"lam": "far"}, "lam must be a positive number"),
        ({"lam": 1.0, "k": 2}, "give either lam="),
        ({"k": 2, "sigma_floor": -1}, "sigma_floor"),
        ({}, "needs the new-cluster penalty"),
    ],
)
def test_dp_rf_validation(kwargs, match):
    X, _ = binary_blocks(n_per=10, d=4)
    with pytest.raises(ValueError, match=match):
        dp_rf(X, **kwargs)


def test_dp_rf_reproducible_and_warns_when_k_unreachable():
    X, _ = binary_blocks(seed=8, n_per=20, d=6)
    a = dp_rf(X, k=2, n_init=2, rng=4)
    b = dp_rf(X, k=2, n_init=2, rng=np.random.default_rng(4))
    pd.testing.assert_series_equal(a.labels, b.labels)
    pd.testing.assert_frame_equal(a.selected, b.selected)
    pd.testing.assert_frame_equal(a.restarts, b.restarts)
    # squared distances on binary data: K jumps from 2 to 7 as lambda falls past ~1.39
    with pytest.warns(CalibrationWarning, match="no restart reached k=3 clusters"):
        c = dp_rf(X, k=3, n_init=2, rng=4)
    assert c.n_clusters != 3
