"""covariate_clustering() on huge and badly scaled covariates (issue 22, items 2 and 3), kept
in raw units (scale=False; standardised, none of these cases arise).

Every inner loop is bounded and a bound that is hit is reported as non-convergence
(a ConvergenceWarning and the path's ``converged`` flag), never a hang; a covariate too
large for the solver is refused with a ValueError naming it; a badly scaled one below
that is fitted (a jittered Cholesky where rounding leaves the preconditioner
indefinite), never a LinAlgError, a misleading "Input contains NaN" or a RuntimeWarning.
"""

from __future__ import annotations

import signal
import warnings
from contextlib import contextmanager
from functools import partial

import numpy as np
import pandas as pd
import pytest

import sparseclust._covariate.core as cc
import sparseclust._covariate.select as sel
from sparseclust import CovariateClusteringResult, covariate_clustering
from sparseclust.exceptions import CalibrationWarning, ConvergenceWarning

GUARD_SECONDS = 60


@contextmanager
def wall_clock_guard(seconds: int = GUARD_SECONDS):
    """Fail (instead of hanging the suite) when the block runs longer than ``seconds``."""
    if not hasattr(signal, "SIGALRM"):  # pragma: no cover - not on Windows
        yield
        return

    def expired(signum, frame):
        raise TimeoutError(f"still running after {seconds} s: an unbounded inner loop?")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@contextmanager
def recorded():
    """Record every warning; none may be a numpy RuntimeWarning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught
    leaked = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    assert not leaked, [str(w.message) for w in leaked]


def convergence_messages(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]


def brief_frame() -> tuple[pd.DataFrame, np.random.Generator]:
    r = np.random.default_rng(0)
    return pd.DataFrame(r.normal(size=(24, 3)), columns=list("abc")), r


# ------------------------------------------------------------------ item 2: bounds
def test_1e10_column_returns_quickly_with_the_capped_nus_flagged():
    """The issue's reproducer hung (> 60 s) in the B-step's quasi-Newton loop, which
    max_iter did not bound; now the B-step's cap ends the ADMM of that nu, flagged."""
    X, r = brief_frame()
    X["big"] = r.normal(size=24) * 1e10
    before = X.copy()
    with wall_clock_guard(), recorded() as caught:
        fit = covariate_clustering(
            X, scale=False, y=np.arange(24) % 2, nu=[1, 0.1, 0], sigma=0.1, max_iter=100
        )
    assert isinstance(fit, CovariateClusteringResult)
    assert not fit.path["converged"].all()
    messages = convergence_messages(caught)
    assert any("stopped short of its target" in m for m in messages), messages
    assert any("'big'" in m and "standardise" in m for m in messages), messages
    pd.testing.assert_frame_equal(X, before)  # the caller's data is not modified


def test_a_stalled_path_stops_after_ten_stalled_nus():
    """The default grid (301 values of nu) on the same data: every nu stalls, so the
    path stops after PATH_STALL_MAX of them instead of 301 stalled ADMM runs."""
    X, r = brief_frame()
    X["big"] = r.normal(size=24) * 1e10
    with wall_clock_guard(), recorded() as caught:
        fit = covariate_clustering(X, scale=False, y=np.arange(24) % 2, sigma=0.1)
    assert not fit.path["converged"].any()
    assert any(
        f"after {cc.PATH_STALL_MAX} such stalls in a row" in m for m in convergence_messages(caught)
    )


def test_a_b_step_with_no_descent_left_ends_the_admm():
    """5 rows and a covariate at 5e17 (below the solver's limit, 2.1e18 for 5 rows):
    every B-step found no descent direction at once and the ADMM ran its 1000
    iterations at each of the 301 nu (5 min); the numerical floor is a stall too."""
    X, r = brief_frame()
    X5 = X.iloc[:5].assign(big=r.normal(size=5) * 5e17)
    with wall_clock_guard(), recorded() as caught:
        warnings.simplefilter("ignore", CalibrationWarning)
        fit = covariate_clustering(X5, scale=False, y=np.arange(5) % 2, rng=0)
    assert not fit.path["converged"].any()
    assert any("numerical floor" in m for m in convergence_messages(caught))


def test_single_precision_preconditioner_falls_back_to_double():
    """Above INVERSE_MAX variables the preconditioner is factored in single precision;
    a covariate at 1e6 beside unit ones left it indefinite (LinAlgError in HEAD): it
    is rebuilt in double precision, which the fit then converges with."""
    rng = np.random.default_rng(0)
    n, d, c = 40, 120, 4
    X = rng.normal(size=(n, d))
    X[:, 60:] += X[:, :60]
    X[:, -1] = rng.normal(size=n) * 1e6
    edges = np.column_stack([np.arange(d - 1), np.arange(1, d)])
    prob = cc._prepare(X, np.arange(n) % c, c, edges, np.ones(d - 1))
    W0, beta0, _, _ = cc._warm_arrays(prob, None)
    pre = cc._Precond(prob, 0.1, single=True)
    assert pre.single and pre.N > cc.INVERSE_MAX
    pre.prepare(W0, beta0, 1.0)
    assert not pre.single and pre.L.dtype == np.float64 and np.isfinite(pre.L).all()


def test_capped_path_records_are_never_converged():
    """On the path of the reproducer every nu whose inner solver hit its cap is
    flagged, and the flags reach the distinct clusterings."""
    X, r = brief_frame()
    X["big"] = r.normal(size=24) * 1e10
    y = np.arange(24) % 2
    edges, w = cc.edges_from_similarity(cc.ledoit_wolf_similarity(X.to_numpy(), y))
    with wall_clock_guard(), recorded():
        records = cc.clustering_path(X.to_numpy(), y, 2, edges, w, [1.0, 0.1, 0.0], max_iter=100)
    capped = [rec for rec in records if rec.inner_stalled]
    assert capped
    assert not any(rec.converged for rec in capped)
    distinct = cc.distinct_clusterings(records)
    assert sum(dc.n_unconverged for dc in distinct) >= len(capped)


def test_b_step_cap_ends_the_admm_unconverged(monkeypatch):
    """The mechanism on ordinary data: with a B-step cap of one iteration the ADMM
    stops at the first B-step that misses its target and says so."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 20)
    X = rng.standard_normal((40, 3)) + np.where(y[:, None] == 1, [1.0, 1.0, -1.0], 0.0)
    edges, w = np.array([[0, 1], [0, 2], [1, 2]]), np.ones(3)
    free = cc.admm_fit(X, y, 2, edges, w, 0.05, certify=False)
    assert free.converged and not free.inner_stalled
    monkeypatch.setattr(cc, "QN_MAX_ITER_DENSE", 1)
    res = cc.admm_fit(X, y, 2, edges, w, 0.05, certify=False)
    assert res.inner_stalled and not res.converged
    assert res.n_iter < free.n_iter
    assert res.lbfgs_iter <= res.n_iter


def test_cap_constants_are_bounds_of_every_b_step():
    pre_dense = cc._Precond(
        cc._prepare(np.eye(4), np.array([0, 1, 0, 1]), 2, np.array([[0, 1]]), [1.0]), 0.1
    )
    assert pre_dense.dense and cc._qn_cap(pre_dense) == cc.QN_MAX_ITER_DENSE
    assert cc.QN_MAX_ITER_DENSE <= cc.QN_MAX_ITER_LOWRANK <= cc.QN_MAX_ITER_DIAG


def test_map_fit_cap_is_flagged_in_the_path(monkeypatch):
    """fit_map's optimizer is bounded; reaching its cap is a ConvergenceWarning and the
    clustering's converged flag."""
    X, _ = brief_frame()
    monkeypatch.setattr(sel, "fit_map", partial(sel.fit_map, max_iter=1))
    with wall_clock_guard(), recorded() as caught:
        fit = covariate_clustering(X, scale=False, y=np.arange(24) % 2, nu=[1, 0.1, 0], sigma=0.1)
    assert not fit.path["converged"].any()
    assert any("fit_map" in m and "cap" in m for m in convergence_messages(caught))


def test_fit_map_reports_its_cap():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(60, 2))
    y = (Z[:, 0] > 0).astype(int)
    with recorded() as caught:
        _, _, info = sel.fit_map(Z, y, 2, sigma=1.0, max_iter=1)
    assert not info["converged"]
    assert convergence_messages(caught)


def test_convex_clustering_baseline_cap_is_flagged(monkeypatch):
    """The AMA of the convex clustering baseline: capped gammas flag their clusterings."""
    X, _ = brief_frame()
    monkeypatch.setattr(sel, "_convex_runs", partial(sel._convex_runs, max_iter=1))
    with wall_clock_guard(), recorded() as caught:
        fit = covariate_clustering(
            X, scale=False, y=np.arange(24) % 2, method="convex_clustering", sigma=0.1
        )
    assert any("max_iter=1" in m for m in convergence_messages(caught))
    assert not fit.path["converged"].all()


def test_kmeans_baseline_cap_is_flagged(monkeypatch):
    """scikit-learn's k-means stops silently at max_iter: its n_iter_ flags it."""
    import sklearn.cluster

    class OneStep(sklearn.cluster.KMeans):
        def __init__(self, n_clusters=8, *, n_init=10, random_state=None):
            super().__init__(
                n_clusters=n_clusters, n_init=n_init, random_state=random_state, max_iter=1
            )

    monkeypatch.setattr(sklearn.cluster, "KMeans", OneStep)
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(40, 8)), columns=[f"x{j}" for j in range(8)])
    X.iloc[:, 4:] += X.iloc[:, :4].to_numpy()
    with wall_clock_guard(), recorded() as caught:
        fit = covariate_clustering(
            X, scale=False, y=np.arange(40) % 2, method="kmeans", sigma=0.1, rng=0
        )
    assert any("k-means" in m for m in convergence_messages(caught))
    assert not fit.path["converged"].iloc[1:].any()  # k >= 2: one step, capped
    assert fit.path["converged"].iloc[0]  # k = 1 needs no iteration


def test_components_solution_reports_convergence():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 20)
    X = rng.standard_normal((40, 3))
    sol = cc.components_solution(X, y, 2, np.array([[0, 1]]), np.array([1.0]))
    assert sol["converged"] is True


# ------------------------------------------------------------------ item 3: scale
def test_five_rows_and_a_1e12_column_are_fitted_not_linalgerror():
    """Rounding left the preconditioner of a certificate's partition fit indefinite:
    scipy's LinAlgError ("not positive definite") leaked. The Cholesky is now
    jittered: the call returns, non-convergence reported where a cap was hit."""
    r = np.random.default_rng(1)
    X = pd.DataFrame(r.normal(size=(24, 3)), columns=list("abc"))
    X5 = X.iloc[:5].assign(big=r.normal(size=5) * 1e12)
    with wall_clock_guard(), recorded():
        fit = covariate_clustering(X5, scale=False, y=np.arange(5) % 2, sigma=0.1)
    assert isinstance(fit, CovariateClusteringResult)
    assert len(fit.clusters) == 4


def test_the_issue_5_row_reproducer_returns():
    """The issue's form (the rng of the brief carried on): it hung in HEAD."""
    X, r = brief_frame()
    X5 = X.iloc[:5].assign(big=r.normal(size=5) * 1e12)
    with wall_clock_guard(), recorded():
        warnings.simplefilter("ignore", CalibrationWarning)
        fit = covariate_clustering(X5, scale=False, y=np.arange(5) % 2)
    assert isinstance(fit, CovariateClusteringResult)


def test_jittered_cholesky():
    from scipy.linalg import cholesky

    H = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    L, J = cc._jittered_cholesky(H.copy())
    assert np.array_equal(L, cholesky(H, lower=True))  # a definite H: untouched
    assert J is not None and np.array_equal(J, H)
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])  # indefinite
    L, J = cc._jittered_cholesky(bad)
    np.testing.assert_allclose(np.tril(L @ L.T), np.tril(J), rtol=1e-12)
    off = J - bad
    assert np.array_equal(off, np.diag(np.diag(off))) and (np.diag(off) > 0).all()
    assert np.isfinite(L).all()


def test_1e300_column_is_refused_naming_it():
    """It said "Input contains NaN." (scikit-learn's Ledoit-Wolf overflowed)."""
    X, r = brief_frame()
    X["big"] = r.normal(size=24) * 1e300
    with recorded(), pytest.raises(ValueError) as err:
        covariate_clustering(X, scale=False, y=np.arange(24) % 2, sigma=0.1)
    msg = str(err.value)
    assert "'big'" in msg and "e+300" in msg
    assert "NaN" not in msg


def test_column_too_large_for_the_solver_is_refused_naming_it():
    """Below the data front's limit (1.7e75 for 24 x 4) but above the covariate
    solver's own, sqrt(3.4e38 / (16 n)) (single-precision preconditioner)."""
    X, r = brief_frame()
    X["big"] = r.normal(size=24) * 1e20
    with recorded(), pytest.raises(ValueError) as err:
        covariate_clustering(X, scale=False, y=np.arange(24) % 2, sigma=0.1)
    msg = str(err.value)
    assert "'big'" in msg and "e+20" in msg and "9.4e+17" in msg
    assert "(df - df.mean()) / df.std()" in msg


def test_magnitude_limit_and_core_entry_points():
    assert cc.magnitude_limit(24) == pytest.approx(9.4e17, rel=0.01)
    X = np.ones((24, 2))
    X[:, 1] = np.linspace(-1e19, 1e19, 24)
    with pytest.raises(ValueError, match="'column 1'"):
        cc.admm_fit(X, np.arange(24) % 2, 2, np.array([[0, 1]]), np.ones(1), 0.1)


def test_ledoit_wolf_similarity_of_huge_covariates():
    """Huge covariates are divided by a power of two before scikit-learn's fourth
    moments (exact; Ledoit-Wolf is equivariant to a common scale): S at 1e100 is S at
    1e20 scaled, where it said "Input contains NaN"; a covariance that overflows
    float64 itself is a ValueError naming the fix."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(24, 4))
    X[:, 1] += X[:, 0]
    X[:, 3] += X[:, 0]
    y = np.arange(24) % 2

    def scaled(s: float) -> np.ndarray:
        Z = X.copy()
        Z[:, 3] *= s
        return Z

    with recorded():
        S20 = cc.ledoit_wolf_similarity(scaled(1e20), y)
        S100 = cc.ledoit_wolf_similarity(scaled(1e100), y)
    assert np.isfinite(S100).all() and (S100[3, :3] > 0).all()
    np.testing.assert_allclose(S100[3, :3] / 1e100, S20[3, :3] / 1e20, rtol=1e-10)
    np.testing.assert_allclose(S100[:3, :3], S20[:3, :3], rtol=1e-10)
    with recorded(), pytest.raises(ValueError, match="overflows float64"):
        cc.ledoit_wolf_similarity(scaled(1e300), y)
