"""Model selection and baselines of convex covariate clustering (``_covariate_select``).

Every expected value here comes from outside the code under test: hand
calculations, scikit-learn, scipy's numerical integration and finite differences,
or CVXPY (Clarabel).
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from scipy import integrate, optimize

from sparseclust._covariate.select import (
    DEFAULT_SIGMA_GRID,
    _map_objective,
    _prepare_convex,
    associated_class,
    choose_sigma,
    convex_clustering,
    convex_clustering_path,
    covariate_points,
    cv_accuracy,
    fit_map,
    kmeans_covariates,
    log_marginal_likelihood,
    summed_features,
)


def _same_partition(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    pairs = {(x, y) for x, y in zip(a.tolist(), b.tolist())}
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def _logistic_data(rng, n=120, k=3, c=3, scale=1.0):
    Z = rng.normal(size=(n, k))
    W = scale * rng.normal(size=(c, k))
    eta = Z @ W.T + rng.normal(size=c) * 0.3
    p = np.exp(eta - eta.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    y = np.array([rng.choice(c, p=row) for row in p])
    return Z, y


# ------------------------------------------------------------ summed features
def test_summed_features_hand_example():
    X = np.array([[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 10.0]])
    labels = [1, 0, 1, 2]
    # cluster 0 = {x1}, cluster 1 = {x0, x2}, cluster 2 = {x3}
    expected = np.array([[2.0, 4.0, 4.0], [-1.0, 2.5, 10.0]])
    np.testing.assert_array_equal(summed_features(X, labels), expected)
    # identity clustering returns X itself
    np.testing.assert_array_equal(summed_features(X, [0, 1, 2, 3]), X)


def test_summed_features_rejects_unused_codes():
    with pytest.raises(ValueError, match="every code"):
        summed_features(np.ones((2, 3)), [0, 2, 2])


# ------------------------------------------------------------------- fit_map
def test_map_gradient_matches_finite_differences(rng):
    Z, y = _logistic_data(rng, n=50, k=4, c=3)
    theta = rng.normal(size=3 * 4 + 3)
    inv_s2 = 1.0 / 0.7**2
    _, grad = _map_objective(theta, Z, y, 3, inv_s2)
    h = 1e-6
    fd = np.empty_like(theta)
    for a in range(theta.size):
        e = np.zeros_like(theta)
        e[a] = h
        fd[a] = (
            _map_objective(theta + e, Z, y, 3, inv_s2)[0]
            - _map_objective(theta - e, Z, y, 3, inv_s2)[0]
        ) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-6)


def test_map_objective_value_by_hand():
    # n = 1, K = 1, c = 2: -log softmax + B^2 / (2 sigma^2)
    Z = np.array([[2.0]])
    y = np.array([1])
    theta = np.array([0.5, -0.25, 0.1, 0.0])  # B = [0.5, -0.25], beta = [0.1, 0]
    eta = np.array([0.5 * 2 + 0.1, -0.25 * 2])
    expected = -(eta[1] - np.log(np.exp(eta).sum())) + (0.25 + 0.0625) / (2 * 4.0)
    f, _ = _map_objective(theta, Z, y, 2, 1 / 4.0)
    assert f == pytest.approx(expected, rel=1e-14)


@pytest.mark.parametrize("sigma", [0.1, 1.0, 5.0])
def test_fit_map_matches_sklearn_multinomial(rng, sigma):
    from sklearn.linear_model import LogisticRegression

    Z, y = _logistic_data(rng, n=150, k=4, c=3)
    B, beta, info = fit_map(Z, y, 3, sigma)
    assert info["converged"]
    # sklearn: C * sum(loss) + ||W||^2 / 2  ==  sigma^2 * [sum(loss) + ||W||^2 / (2 sigma^2)]
    lr = LogisticRegression(C=sigma**2, tol=1e-12, max_iter=100_000).fit(Z, y)
    np.testing.assert_allclose(B, lr.coef_, atol=1e-4)
    np.testing.assert_allclose(beta, lr.intercept_ - lr.intercept_.mean(), atol=1e-4)
    np.testing.assert_allclose(B.sum(axis=0), 0.0, atol=1e-6)
    assert beta.sum() == pytest.approx(0.0, abs=1e-12)
    # info["loglik"] is the log-likelihood at the MAP
    probs = lr.predict_proba(Z)
    assert info["loglik"] == pytest.approx(np.log(probs[np.arange(y.size), y]).sum(), abs=1e-4)


def test_fit_map_two_classes_matches_binary_sklearn(rng):
    from sklearn.linear_model import LogisticRegression

    Z, y = _logistic_data(rng, n=100, k=3, c=2)
    sigma = 0.8
    B, beta, _ = fit_map(Z, y, 2, sigma)
    # symmetric rows b1 = -b0, w = b1 - b0: ||B||^2 / (2 s^2) = ||w||^2 / (4 s^2) -> C = 2 s^2
    lr = LogisticRegression(C=2 * sigma**2, tol=1e-12, max_iter=100_000).fit(Z, y)
    np.testing.assert_allclose(B[1] - B[0], lr.coef_[0], atol=1e-4)
    assert beta[1] - beta[0] == pytest.approx(lr.intercept_[0], abs=1e-4)


def test_fit_map_warm_start_reaches_same_optimum(rng):
    Z, y = _logistic_data(rng, n=80, k=3, c=3)
    B1, b1, _ = fit_map(Z, y, 3, 1.0)
    B2, b2, info = fit_map(Z, y, 3, 1.0, init=(B1 + 0.3, b1 - 0.2))
    np.testing.assert_allclose(B2, B1, atol=1e-6)
    np.testing.assert_allclose(b2, b1, atol=1e-6)


def test_fit_map_validates():
    with pytest.raises(ValueError, match="class codes"):
        fit_map(np.ones((3, 2)), [0, 1, 2], 2, 1.0)
    with pytest.raises(ValueError, match="sigma"):
        fit_map(np.ones((3, 2)), [0, 1, 1], 2, 0.0)


# ------------------------------------------------------- marginal likelihood
def _log_joint(Bflat, beta, Z, y, sigma, c):
    """Independent log p(y, B | beta): log-likelihood + log N(0, sigma^2) density."""
    B = Bflat.reshape(c, -1)
    eta = Z @ B.T + beta
    ll = np.sum(eta[np.arange(y.size), y]) - np.sum(np.log(np.sum(np.exp(eta), axis=1)))
    lp = np.sum(-0.5 * B**2 / sigma**2 - 0.5 * np.log(2 * np.pi * sigma**2))
    return ll + lp


def test_log_marginal_likelihood_matches_bruteforce_laplace(rng):
    """Independent Laplace: MAP by Nelder-Mead/BFGS without gradients, Hessian diagonal
    by central second differences, formula of section 3 with the diagonal of A.3."""
    c, k, sigma = 3, 2, 0.9
    Z, y = _logistic_data(rng, n=40, k=k, c=c)

    def negpost(v):
        return -_log_joint(v[: c * k], v[c * k :], Z, y, sigma, c)

    res = optimize.minimize(negpost, np.zeros(c * k + c), method="BFGS", options={"gtol": 1e-9})
    Bhat, bhat = res.x[: c * k], res.x[c * k :]
    h = 1e-4
    f0 = _log_joint(Bhat, bhat, Z, y, sigma, c)
    diag = np.empty(c * k)
    for a in range(c * k):
        e = np.zeros(c * k)
        e[a] = h
        diag[a] = (
            _log_joint(Bhat + e, bhat, Z, y, sigma, c)
            - 2 * f0
            + _log_joint(Bhat - e, bhat, Z, y, sigma, c)
        ) / h**2
    expected = f0 + 0.5 * c * k * np.log(2 * np.pi) - 0.5 * np.sum(np.log(-diag))
    got = log_marginal_likelihood(Z, y, c, sigma)
    assert got == pytest.approx(expected, abs=1e-5)


def test_log_marginal_likelihood_full_laplace_vs_numerical_integration(rng):
    """K = 1, c = 2: the marginal likelihood at the MAP intercepts by quadrature.

    The likelihood depends on (b0, b1) only through b1 - b0 and the prior is
    isotropic, so in the rotated coordinates t = (b1 - b0) / sqrt(2),
    s = (b0 + b1) / sqrt(2) the s-integral is exactly 1 and
    p(y) = int L(sqrt(2) t) N(t; 0, sigma^2) dt.
    """
    c, sigma, n = 2, 1.0, 200
    z = rng.normal(size=(n, 1))
    y = (rng.random(n) < 1 / (1 + np.exp(-1.2 * z[:, 0]))).astype(int)
    B, beta, info = fit_map(z, y, c, sigma)
    t_hat = (B[1, 0] - B[0, 0]) / np.sqrt(2)

    def log_integrand(t):
        eta = np.sqrt(2) * t * z[:, 0] + beta[1] - beta[0]  # log-odds of class 1
        ll = np.sum(y * eta - np.logaddexp(0.0, eta))
        return ll - 0.5 * t**2 / sigma**2 - 0.5 * np.log(2 * np.pi * sigma**2)

    f_max = log_integrand(t_hat)
    val, err = integrate.quad(
        lambda t: np.exp(log_integrand(t) - f_max),
        t_hat - 3,
        t_hat + 3,
        epsabs=1e-13,
        epsrel=1e-12,
        limit=200,
    )
    exact = f_max + np.log(val)
    full = log_marginal_likelihood(z, y, c, sigma, fit=(B, beta, info), hessian="full")
    diag = log_marginal_likelihood(z, y, c, sigma, fit=(B, beta, info))
    assert full == pytest.approx(exact, abs=1e-2)  # Laplace error O(1/n): 0.003 here
    # the diagonal version differs exactly by the Hessian's off-diagonal term (2 x 2)
    p = 1 / (1 + np.exp(-(z[:, 0] * (B[1, 0] - B[0, 0]) + beta[1] - beta[0])))
    h = np.sum(p * (1 - p) * z[:, 0] ** 2)
    a = h + 1 / sigma**2
    assert diag - full == pytest.approx(0.5 * np.log(a * a - h * h) - np.log(a), abs=1e-10)


def test_log_marginal_likelihood_uses_given_fit(rng):
    Z, y = _logistic_data(rng, n=60, k=2, c=2)
    fit = fit_map(Z, y, 2, 1.0)
    assert log_marginal_likelihood(Z, y, 2, 1.0, fit=fit) == log_marginal_likelihood(Z, y, 2, 1.0)


# ---------------------------------------------------------------- choose_sigma
def _separable(rng, n_per=15):
    X = np.vstack([rng.normal(-3, 0.3, (n_per, 3)), rng.normal(3, 0.3, (n_per, 3))])
    y = np.repeat([0, 1], n_per)
    return X, y


def test_choose_sigma_accuracy_ties_go_to_smallest_sigma(rng):
    X, y = _separable(rng)
    sigma, table, on_edge = choose_sigma(X, y, 2, rng=1)
    assert (table["cv_accuracy"] == 1.0).all()  # every sigma classifies perfectly
    assert sigma == DEFAULT_SIGMA_GRID[0]
    assert on_edge
    np.testing.assert_allclose(table.index.to_numpy(), DEFAULT_SIGMA_GRID)


def test_choose_sigma_loglik_picks_the_maximum(rng):
    Z, y = _logistic_data(rng, n=90, k=4, c=3, scale=0.7)
    grid = [0.01, 0.1, 0.3, 1.0, 3.0, 100.0]
    sigma, table, on_edge = choose_sigma(Z, y, 3, grid=grid, rule="loglik", rng=2)
    assert sigma == table["cv_loglik"].idxmax()
    assert on_edge == (sigma in (min(grid), max(grid)))
    # the accuracy rule reads the same table: max accuracy, smallest sigma among ties
    s_acc, t_acc, _ = choose_sigma(Z, y, 3, grid=grid, rule="accuracy", rng=2)
    best = t_acc["n_correct"].max()
    assert s_acc == t_acc.index[t_acc["n_correct"] == best].min()
    assert t_acc.equals(table)


def test_choose_sigma_interior_choice_is_not_on_edge(rng):
    Z, y = _logistic_data(rng, n=150, k=3, c=2, scale=0.5)
    grid = 10.0 ** np.arange(-4.0, 4.01, 1.0)
    sigma, table, on_edge = choose_sigma(Z, y, 2, grid=grid, rule="loglik", rng=0)
    assert grid[0] < sigma < grid[-1]
    assert not on_edge


def test_choose_sigma_reproducible_and_fold_count(rng):
    Z, y = _logistic_data(rng, n=60, k=3, c=2)
    a = choose_sigma(Z, y, 2, rng=5)
    b = choose_sigma(Z, y, 2, rng=np.random.default_rng(5))
    assert a[0] == b[0] and a[2] == b[2]
    assert a[1].equals(b[1])
    assert a[1].attrs["n_folds"] == 5
    # a class with 3 members lowers the number of folds to 3 (no warning)
    y2 = np.zeros(30, dtype=int)
    y2[:3] = 1
    _, table, _ = choose_sigma(rng.normal(size=(30, 2)), y2, 2, grid=[1.0], rng=0)
    assert table.attrs["n_folds"] == 3


def test_choose_sigma_needs_two_per_class(rng):
    with pytest.raises(ValueError, match="at least 2 samples"):
        choose_sigma(rng.normal(size=(5, 2)), [0, 0, 0, 0, 1], 2)


def test_cv_accuracy(rng):
    X, y = _separable(rng)
    assert cv_accuracy(X, y, [0, 0, 1], 2, 1.0, rng=0) == 1.0
    Z, y = _logistic_data(rng, n=80, k=4, c=2)
    a = cv_accuracy(Z, y, [0, 1, 1, 2], 2, 0.5, n_folds=4, rng=3)
    assert a == cv_accuracy(Z, y, [0, 1, 1, 2], 2, 0.5, n_folds=4, rng=3)
    assert 0.0 <= a <= 1.0 and (a * 80) == pytest.approx(round(a * 80))


# ---------------------------------------------------------- associated class
def test_associated_class_hand_made():
    B = np.array(
        [
            [2.0, -1.0, 0.0, 0.3],
            [0.5, 1.5, 0.0, 0.3],
            [1.0, 1.0, -1.0, 0.1],
        ]
    )
    classes, odds = associated_class(B)
    np.testing.assert_array_equal(classes, [0, 1, 0, 0])  # tie in column 2 and 3 -> lowest
    np.testing.assert_allclose(odds, [np.exp(1.0), np.exp(0.5), 1.0, 1.0])


# --------------------------------------------------------- convex clustering
def _groups(rng, sizes=(6, 6, 6), dim=5, spread=0.05, sep=3.0):
    centres = sep * np.eye(len(sizes), dim)
    P = np.vstack([c + spread * rng.normal(size=(m, dim)) for c, m in zip(centres, sizes)])
    truth = np.repeat(np.arange(len(sizes)), sizes)
    return P, truth


def test_convex_path_recovers_separated_groups(rng):
    P, truth = _groups(rng)
    path = convex_clustering_path(P, weights="knn_mst", k=4, phi=0.5)
    nclust = [int(lab.max()) + 1 for _, lab in path]
    assert nclust[0] == P.shape[0]  # smallest gamma: singletons
    assert nclust[-1] == 1  # MST makes the graph connected
    assert any(_same_partition(lab, truth) for _, lab in path)
    gammas = [g for g, _ in path]
    assert gammas == sorted(gammas)
    keys = {lab.tobytes() for _, lab in path}
    assert len(keys) == len(path)  # distinct clusterings


def test_convex_limits_singletons_and_components(rng):
    P, truth = _groups(rng, sizes=(5, 4))
    # weights only inside the two groups -> two connected components
    W = np.exp(-0.5 * ((P[:, None, :] - P[None, :, :]) ** 2).sum(-1))
    W[truth[:, None] != truth[None, :]] = 0.0
    np.fill_diagonal(W, 0.0)
    _, tiny = convex_clustering(P, 1e-8, weights=W)
    np.testing.assert_array_equal(tiny, np.arange(P.shape[0]))
    U, huge = convex_clustering(P, 1e6, weights=W)
    assert _same_partition(huge, truth)
    np.testing.assert_allclose(U[truth == 0], np.tile(P[truth == 0].mean(0), (5, 1)))
    path = convex_clustering_path(P, weights=W)
    assert int(path[0][1].max()) + 1 == P.shape[0]
    assert _same_partition(path[-1][1], truth)


def _cvxpy_convex_clustering(P, W, gamma):
    cp = pytest.importorskip("cvxpy")
    d = P.shape[0]
    i, j = np.nonzero(np.triu(W, 1))
    U = cp.Variable(P.shape)
    pen = sum(W[a, b] * cp.norm(U[a] - U[b], 2) for a, b in zip(i, j))
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(P - U) + gamma * pen))
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-9, tol_gap_rel=1e-9, tol_feas=1e-9)
    assert prob.status == "optimal"
    assert d == U.value.shape[0]
    return U.value


@pytest.mark.parametrize("dim", [3, 12])  # 12 > d - 1 exercises the row-space rotation
def test_ama_agrees_with_cvxpy(rng, dim):
    P = rng.normal(size=(8, dim))
    P[:4] += 2.0
    W = np.exp(-0.5 * ((P[:, None, :] - P[None, :, :]) ** 2).sum(-1) / dim)
    np.fill_diagonal(W, 0.0)
    for gamma in (0.05, 0.3):
        ref = _cvxpy_convex_clustering(P, W, gamma)
        U, labels = convex_clustering(P, gamma, weights="exp", phi=0.5 / dim, tol=1e-12)
        U2, labels2 = convex_clustering(P, gamma, weights=W, tol=1e-12)
        np.testing.assert_allclose(U, ref, atol=1e-4)
        np.testing.assert_allclose(U2, ref, atol=1e-4)
        np.testing.assert_array_equal(labels, labels2)
        # clusters read off the dual agree with the reference centroids
        for a in range(8):
            for b in range(8):
                if labels[a] == labels[b]:
                    assert np.linalg.norm(ref[a] - ref[b]) < 1e-4


def test_gamma_bounds_bracket_the_path(rng):
    P, truth = _groups(rng, sizes=(4, 4), dim=3, spread=0.3, sep=2.0)
    solver = _prepare_convex(P, "exp", 10, 0.5)
    lo, hi = solver.gamma_bounds()
    assert 0 < lo < hi
    _, below = convex_clustering(P, 0.999 * lo, weights="exp", tol=1e-10)
    assert int(below.max()) + 1 == P.shape[0]
    # at hi the electrical-flow certificate makes every point one cluster; check by CVXPY
    ref = _cvxpy_convex_clustering(
        P, np.exp(-0.5 * ((P[:, None] - P[None]) ** 2).sum(-1)) - np.eye(8), hi
    )
    np.testing.assert_allclose(ref, np.tile(P.mean(0), (8, 1)), atol=1e-5)


def test_convex_path_timing_200_points_in_400_dims():
    """Speed target: 200 points in R^400, k-NN(10), phi = 0.5, 100 gammas (CCMM 0.64 s)."""
    rng = np.random.default_rng(1)
    d, p, g = 200, 400, 4
    centres = rng.normal(size=(g, p)) / np.sqrt(p)
    P = centres[np.repeat(np.arange(g), d // g)] + 0.5 * rng.normal(size=(d, p)) / np.sqrt(p)
    t0 = time.perf_counter()
    path = convex_clustering_path(P, weights="knn", k=10, phi=0.5, n_gammas=100)
    elapsed = time.perf_counter() - t0
    print(
        f"\nconvex clustering path, 200 x 400, kNN(10), 100 gammas: {elapsed:.2f} s "
        f"({len(path)} distinct clusterings; CCMM 0.64 s, target ~2 s)"
    )
    truth = np.repeat(np.arange(g), d // g)
    assert _same_partition(path[-1][1], truth)  # the 4 groups are the kNN components


# ------------------------------------------------------------------- k-means
def test_kmeans_covariates_reproducible_and_distinct(rng):
    P, truth = _groups(rng, sizes=(5, 5, 5), dim=4, spread=0.2)
    a = kmeans_covariates(P, range(1, 8), rng=11)
    b = kmeans_covariates(P, range(1, 8), rng=np.random.default_rng(11))
    assert [k for k, _ in a] == [k for k, _ in b]
    for (_, la), (_, lb) in zip(a, b):
        np.testing.assert_array_equal(la, lb)
    assert a[0][0] == 1 and (a[0][1] == 0).all()
    assert _same_partition(dict(a)[3], truth)
    assert len({lab.tobytes() for _, lab in a}) == len(a)
    for _, lab in a:  # canonical codes: first appearance order
        first = [lab.tolist().index(v) for v in range(lab.max() + 1)]
        assert first == sorted(first)


def test_kmeans_covariates_skips_k_above_distinct_points():
    P = np.array([[0.0], [0.0], [1.0]])
    out = kmeans_covariates(P, [1, 2, 3], rng=0)
    assert [k for k, _ in out] == [1, 2]


# --------------------------------------------------------- covariate points
def test_covariate_points_distance_is_correlation(rng):
    X = rng.normal(size=(50, 4))
    X[:, 1] = 2 * X[:, 0] + 0.5 * rng.normal(size=50)
    P = covariate_points(X)
    np.testing.assert_allclose(np.linalg.norm(P, axis=1), 1.0)
    r = np.corrcoef(X.T)
    d2 = ((P[:, None] - P[None]) ** 2).sum(-1)
    np.testing.assert_allclose(d2, 2 * (1 - r), atol=1e-12)
    y = np.repeat([0, 1], 25)
    Pc = covariate_points(X + 3 * y[:, None], y=y)  # class shifts removed
    np.testing.assert_allclose(Pc, covariate_points(X, y=y), atol=1e-12)
