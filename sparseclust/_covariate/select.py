"""Model selection and baselines for convex covariate clustering.

Array-level pieces of Andrade, Fukumizu & Okajima, *Convex covariate clustering for
classification* (section 3, appendix A.3 and A.5, and the baselines of section 4):

* :func:`summed_features` -- ``x^C = T^C x``, covariates summed within each cluster;
* :func:`fit_map` -- MAP multinomial logistic regression with a ``N(0, sigma^2)``
  prior on the coefficients and intercepts fitted by empirical Bayes;
* :func:`log_marginal_likelihood` -- Laplace approximation of ``p(y | X, C, beta_0)``
  with the diagonal Hessian (the paper's criterion) or the full one;
* :func:`choose_sigma` / :func:`cv_accuracy` -- stratified K-fold cross-validation;
* :func:`associated_class` -- each cluster's class and odds ratio (appendix A.5);
* :func:`convex_clustering_path` / :func:`convex_clustering` -- the convex-clustering
  baseline (Hocking et al. 2011; Chi & Lange 2015), solved by accelerated AMA;
* :func:`kmeans_covariates` -- the k-means baseline;
* :func:`covariate_points` -- an observation-based representation of the covariates.

Inputs are plain arrays: ``X`` (n, d) float, ``y`` (n,) integer codes ``0..c-1``,
``labels`` (d,) integer cluster codes ``0..K-1`` (every code used). No pandas except
the table :func:`choose_sigma` returns.

Decisions where the paper is open
---------------------------------
* All c classes carry coefficients (the paper's ``f``); the prior identifies them.
  Intercepts are unpenalised, maximised jointly with B (empirical Bayes) and
  returned centred. The Laplace value keeps every constant of the paper's formula.
* sigma: chosen once on the full model over the authors' grid; "accuracy" (ties to
  the smallest sigma, the authors' rule) or "loglik"; accuracy pooled over folds so
  that ties are exact; folds lowered to the smallest class size.
* Odds ratio (A.5.2): ``exp(B_top - B_second)`` per cluster.
* Baselines: section 4 says both "use the same similarity matrix S"; the points to
  cluster are passed in (``P = S`` for that protocol; :func:`covariate_points` for
  standardised columns). Convex clustering: kernel weights on a k-NN graph (or all
  pairs / k-NN + MST / given), accelerated AMA, fusion read off the dual exactly,
  default gamma grid between two computable bounds; k-means: scikit-learn,
  k-means++, ``n_init=10``, one seed per k from ``rng``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.optimize import minimize
from scipy.sparse.csgraph import connected_components, minimum_spanning_tree
from scipy.sparse.linalg import splu

from .._data.params import as_rng, check_choice, check_int, check_number, user_stacklevel
from .._engine.threads import _controller, single_blas_thread
from ..exceptions import ConvergenceWarning

__all__ = [
    "DEFAULT_SIGMA_GRID",
    "associated_class",
    "choose_sigma",
    "convex_clustering",
    "convex_clustering_path",
    "covariate_points",
    "cv_accuracy",
    "fit_map",
    "kmeans_covariates",
    "log_marginal_likelihood",
    "summed_features",
]

#: The authors' grid for sigma: 10^-3, 10^-2.5, ..., 10^1.5 (ten values).
DEFAULT_SIGMA_GRID = 10.0 ** np.arange(-3.0, 1.51, 0.5)


# ------------------------------------------------------------------ input helpers
def _as_codes(name: str, codes: Any, size: int | None = None) -> np.ndarray:
    arr = np.asarray(codes)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {arr.shape}.")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            raise ValueError(f"{name} must hold integer codes; got dtype {arr.dtype}.")
    arr = arr.astype(np.intp)
    if size is not None and arr.size != size:
        raise ValueError(f"{name} must have length {size}; got length {arr.size}.")
    if arr.size and arr.min() < 0:
        raise ValueError(f"{name} must hold codes >= 0; got a minimum of {arr.min()}.")
    return arr


def _check_labels(labels: Any, d: int) -> tuple[np.ndarray, int]:
    lab = _as_codes("labels", labels, d)
    k = int(lab.max()) + 1 if lab.size else 0
    if np.bincount(lab, minlength=k).min(initial=1) == 0:
        missing = np.flatnonzero(np.bincount(lab, minlength=k) == 0).tolist()
        raise ValueError(
            f"labels must use every code 0..{k - 1}; codes {missing} are unused. "
            "Relabel consecutively (e.g. np.unique(labels, return_inverse=True)[1])."
        )
    return lab, k


def _check_y(y: Any, n: int, n_classes: int) -> np.ndarray:
    yy = _as_codes("y", y, n)
    if yy.size and yy.max() >= n_classes:
        raise ValueError(
            f"y must hold class codes 0..n_classes-1 = 0..{n_classes - 1}; got a code "
            f"{int(yy.max())}."
        )
    return yy


def _as_matrix(name: str, X: Any) -> np.ndarray:
    arr = np.asarray(X, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array; got shape {arr.shape}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite; it contains NaN or infinite values.")
    return arr


def _classified(name: str, X: Any, y: Any, n_classes: Any) -> tuple[np.ndarray, int, np.ndarray]:
    """``X`` as a finite matrix, the number of classes (>= 2) and ``y`` checked as
    class codes of ``X``'s rows."""
    X = _as_matrix(name, X)
    c = check_int("n_classes", n_classes, min=2)
    return X, c, _check_y(y, X.shape[0], c)


def _coefficients(pair: Any, c: int, k: int, expected: str) -> tuple[np.ndarray, np.ndarray]:
    """``(B, beta)`` of ``pair`` as float arrays; a ``ValueError`` (``expected``, then
    the shapes got) unless ``B`` is ``(c, k)`` and ``beta`` ``(c,)``."""
    B = np.asarray(pair[0], dtype=float)
    beta = np.asarray(pair[1], dtype=float).ravel()
    if B.shape != (c, k) or beta.shape != (c,):
        raise ValueError(f"{expected}; got {B.shape} and {beta.shape}.")
    return B, beta


def _canonical(labels: np.ndarray) -> np.ndarray:
    """Relabel to 0, 1, ... in order of first appearance (one label array per partition)."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.intp)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inverse.ravel()]


# --------------------------------------------------------------- summed features
def summed_features(X: Any, labels: Any) -> np.ndarray:
    """Covariates summed within each cluster: ``Z = X T^T``, i.e. ``x^C = T^C x``.

    Parameters
    ----------
    X : array (n, d)
        Observations.
    labels : int array (d,)
        Cluster code of each covariate, ``0..K-1``, every code used.

    Returns
    -------
    Z : array (n, K)
        ``Z[:, k] = X[:, labels == k].sum(axis=1)`` (section 3, ``T^C_{kj} = 1`` iff
        covariate ``j`` is in cluster ``k``).

    Examples
    --------
    >>> X = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    >>> summed_features(X, [0, 1, 0])
    array([[ 4.,  2.],
           [10.,  5.]])
    """
    X = _as_matrix("X", X)
    lab, k = _check_labels(labels, X.shape[1])
    order = np.argsort(lab, kind="stable")
    starts = np.searchsorted(lab[order], np.arange(k))
    if X.shape[0] == 0 or k == 0:
        return np.zeros((X.shape[0], k))
    return np.add.reduceat(X[:, order], starts, axis=1)


# ----------------------------------------------------- MAP logistic regression
def _softmax_parts(Z: np.ndarray, B: np.ndarray, beta: np.ndarray):
    """Linear predictor, log-sum-exp per row and class probabilities."""
    eta = Z @ B.T
    eta += beta
    m = eta.max(axis=1, keepdims=True)
    e = np.exp(eta - m)
    s = e.sum(axis=1, keepdims=True)
    lse = (m + np.log(s)).ravel()
    return eta, lse, e / s


def _loglik(Z: np.ndarray, y: np.ndarray, B: np.ndarray, beta: np.ndarray) -> float:
    eta, lse, _ = _softmax_parts(Z, B, beta)
    return float(eta[np.arange(y.size), y].sum() - lse.sum())


def _map_objective(
    theta: np.ndarray, Z: np.ndarray, y: np.ndarray, c: int, inv_s2: float
) -> tuple[float, np.ndarray]:
    """Negative log posterior (up to constants) and its gradient.

    ``theta = [B.ravel() (c*K), beta (c)]``; value ``sum_s lse_s - eta_{s,y_s} +
    ||B||^2 / (2 sigma^2)``, gradient ``(P - Y)^T Z + B / sigma^2`` and ``1^T (P - Y)``.
    """
    n, k = Z.shape
    ck = c * k
    B = theta[:ck].reshape(c, k)
    beta = theta[ck:]
    eta, lse, P = _softmax_parts(Z, B, beta)
    rows = np.arange(n)
    f = lse.sum() - eta[rows, y].sum() + 0.5 * inv_s2 * np.dot(theta[:ck], theta[:ck])
    P[rows, y] -= 1.0
    grad = np.empty_like(theta)
    grad[:ck] = (P.T @ Z + inv_s2 * B).ravel()
    grad[ck:] = P.sum(axis=0)
    return float(f), grad


def fit_map(
    Z: Any,
    y: Any,
    n_classes: int,
    sigma: float,
    *,
    init: tuple[np.ndarray, np.ndarray] | None = None,
    tol: float = 1e-10,
    max_iter: int = 15000,
) -> tuple[np.ndarray, np.ndarray, dict]:
    """MAP multinomial logistic regression with a Gaussian prior on the coefficients.

    Minimises (section 3, model (3) with ``pi = N(0, sigma^2)`` on every entry of B)::

        -sum_s log f(y_s | z_s, B, beta) + ||B||_F^2 / (2 sigma^2)

    over ``B`` (c x K) and the intercepts ``beta`` (c,), which are not penalised:
    the paper treats them as hyper-parameters fitted by empirical Bayes, which, for
    the Laplace approximation, means maximising them jointly with B. scipy's
    L-BFGS-B with the analytic gradient ``(P - Y)^T Z + B / sigma^2``,
    ``1^T (P - Y)`` (appendix A.3), under one BLAS thread.

    Parametrisation: every one of the ``c`` classes has its own coefficient row, as
    in the paper (``f(y|x) = exp(B_y x + beta_y) / sum_y' exp(B_y' x + beta_y')``).
    The likelihood is invariant to adding the same vector to every row of B; the
    prior removes that freedom (at the optimum every column of B sums to zero). The
    intercepts are only defined up to a common shift: they are returned centred
    (``beta.sum() == 0``). This equals scikit-learn's multinomial
    ``LogisticRegression(C=sigma**2)`` (its objective is ``C * sum(loss) + ||W||^2 / 2``).

    Parameters
    ----------
    Z : array (n, K)
        Features (e.g. :func:`summed_features`).
    y : int array (n,)
        Class codes ``0..n_classes-1``.
    n_classes : int
        Number of classes c (>= 2).
    sigma : float
        Prior standard deviation (> 0).
    init : (B, beta), optional
        Warm start.
    tol : float
        Convergence tolerance: L-BFGS stops when the largest absolute gradient entry
        is below ``tol * max(n, 1)`` or the relative decrease of the objective is
        below ``tol * 1e-3``.
    max_iter : int
        L-BFGS iteration cap, with ``2 max_iter`` function evaluations (a
        ``ConvergenceWarning`` is issued when either is reached, and
        ``info["converged"]`` is False).

    Returns
    -------
    B : array (c, K)
    beta : array (c,)
    info : dict
        ``objective`` (the minimised value), ``loglik`` (log-likelihood at the MAP),
        ``n_iter``, ``converged``, ``grad_max`` (largest absolute gradient entry),
        ``message``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(60, 2))
    >>> y = (Z[:, 0] > 0).astype(int)
    >>> B, beta, info = fit_map(Z, y, 2, sigma=1.0)
    >>> B.shape, beta.shape, bool(info["converged"])
    ((2, 2), (2,), True)
    >>> bool(np.allclose(B.sum(axis=0), 0, atol=1e-6))
    True
    """
    Z, c, yy = _classified("Z", Z, y, n_classes)
    n, k = Z.shape
    sigma = check_number("sigma", sigma, min=0, min_inclusive=False)
    max_iter = check_int("max_iter", max_iter, min=1)
    inv_s2 = 1.0 / sigma**2
    ck = c * k

    if init is None:
        theta0 = np.zeros(ck + c)
        counts = np.bincount(yy, minlength=c).astype(float)
        # intercepts at the empirical log class frequencies (the optimum when B = 0)
        theta0[ck:] = np.log((counts + 0.5) / (n + 0.5 * c))
    else:
        expected = f"init must be (B, beta) with shapes ({c}, {k}) and ({c},)"
        B0, b0 = _coefficients(init, c, k, expected)
        theta0 = np.concatenate([B0.ravel(), b0])

    def fun(theta: np.ndarray) -> tuple[float, np.ndarray]:
        return _map_objective(theta, Z, yy, c, inv_s2)

    with single_blas_thread():
        res = minimize(
            fun,
            theta0,
            jac=True,
            method="L-BFGS-B",
            options={
                "maxiter": max_iter,
                "maxfun": 2 * max_iter,
                "gtol": tol * max(n, 1),
                "ftol": tol * 1e-3,
                "maxcor": 20,
            },
        )
        f_opt, g_opt = fun(res.x)
    B = res.x[:ck].reshape(c, k).copy()
    beta = res.x[ck:].copy()
    beta -= beta.mean()
    n_iter = int(res.nit)
    grad_max = float(np.abs(g_opt).max()) if g_opt.size else 0.0
    # scipy's status 1: an iteration or evaluation cap (maxiter, maxfun) was reached
    converged = n_iter < max_iter and int(res.status) != 1
    if not converged:
        warnings.warn(
            f"fit_map stopped at its cap of max_iter={max_iter} L-BFGS iterations / "
            f"{2 * max_iter} evaluations (largest gradient entry {grad_max:.3g}); increase "
            "max_iter, or standardise badly scaled features.",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    info = {
        "objective": f_opt,
        "loglik": -(f_opt - 0.5 * inv_s2 * float(np.sum(B * B))),
        "n_iter": n_iter,
        "converged": converged,
        "grad_max": grad_max,
        "message": str(res.message),
    }
    return B, beta, info


def _neg_hessian_diag(Z: np.ndarray, P: np.ndarray, sigma: float) -> np.ndarray:
    """``-H`` on the diagonal: ``sum_s p_sk (1 - p_sk) z_sj^2 + 1/sigma^2``, shape (c, K)."""
    return (P * (1.0 - P)).T @ (Z * Z) + 1.0 / sigma**2


def _neg_hessian_full(Z: np.ndarray, P: np.ndarray, sigma: float) -> np.ndarray:
    """``-S(B)`` (appendix A.3), shape (cK, cK), blocks ordered by class."""
    n, k = Z.shape
    c = P.shape[1]
    H = np.empty((c * k, c * k))
    for a in range(c):
        for b in range(a, c):
            w = P[:, a] * ((a == b) - P[:, b])
            block = (Z * w[:, None]).T @ Z
            H[a * k : (a + 1) * k, b * k : (b + 1) * k] = block
            H[b * k : (b + 1) * k, a * k : (a + 1) * k] = block.T
    H[np.diag_indices_from(H)] += 1.0 / sigma**2
    return H


def log_marginal_likelihood(
    Z: Any,
    y: Any,
    n_classes: int,
    sigma: float,
    *,
    fit: tuple | None = None,
    hessian: str = "diag",
) -> float:
    """Laplace approximation of the log marginal likelihood ``log p(y | X, C, beta_0)``.

    Section 3 (the display after model (3)) with the diagonal Hessian of appendix
    A.3 / footnote 8::

        log p = sum_s log f(y_s | z_s, B^, beta^)              (log-likelihood at the MAP)
                - ||B^||_F^2 / (2 sigma^2) - (cK/2) log(2 pi sigma^2)   (log prior)
                + (cK/2) log(2 pi) - 1/2 sum_{k,j} log |H_kj|

    with ``H_kj = sum_s p_sk (p_sk - 1) z_sj^2 - 1/sigma^2`` for coefficient
    ``B_kj`` (``p_sk`` the fitted probability of class k for sample s). The constants
    cancel to ``- cK log sigma``; all are kept, so values compare across numbers of
    clusters K. The intercepts ``beta^`` are hyper-parameters (empirical Bayes): they
    are fixed at the MAP and not integrated over. ``hessian="full"`` uses
    ``log det(-S(B^))`` of the full ``cK x cK`` Hessian instead (the paper's formula
    before its diagonal simplification; cost ``O(n c^2 K^2 + (cK)^3)``).

    Parameters
    ----------
    Z : array (n, K)
    y : int array (n,)
    n_classes : int
    sigma : float
    fit : tuple, optional
        ``(B, beta[, info])`` from :func:`fit_map` on the same data and sigma;
        computed when omitted.
    hessian : {"diag", "full"}

    Returns
    -------
    float

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> Z = rng.normal(size=(80, 3))
    >>> y = (Z[:, 0] + 0.5 * rng.normal(size=80) > 0).astype(int)
    >>> lml = log_marginal_likelihood(Z, y, 2, sigma=1.0)
    >>> bool(lml < 0)
    True
    """
    Z, c, yy = _classified("Z", Z, y, n_classes)
    n, k = Z.shape
    sigma = check_number("sigma", sigma, min=0, min_inclusive=False)
    check_choice("hessian", hessian, ["diag", "full"])
    if fit is None:
        fit = fit_map(Z, yy, c, sigma)
    expected = f"fit must hold B of shape ({c}, {k}) and beta of shape ({c},)"
    B, beta = _coefficients(fit, c, k, expected)
    eta, lse, P = _softmax_parts(Z, B, beta)
    loglik = float(eta[np.arange(n), yy].sum() - lse.sum())
    ck = c * k
    log_prior = -0.5 * float(np.sum(B * B)) / sigma**2 - 0.5 * ck * np.log(2 * np.pi * sigma**2)
    if hessian == "diag":
        logdet = float(np.sum(np.log(_neg_hessian_diag(Z, P, sigma))))
    else:
        sign, logdet = np.linalg.slogdet(_neg_hessian_full(Z, P, sigma))
        logdet = float(logdet)
    return loglik + log_prior + 0.5 * ck * np.log(2 * np.pi) - 0.5 * logdet


# ------------------------------------------------------------ cross-validation
def _n_folds(y: np.ndarray, n_classes: int, n_folds: int) -> int:
    counts = np.bincount(y, minlength=n_classes)
    present = counts[counts > 0]
    smallest = int(present.min()) if present.size else 0
    folds = min(n_folds, smallest)
    if folds < 2:
        raise ValueError(
            f"cross-validation needs at least 2 samples in every class present; the "
            f"smallest class has {smallest}. Merge rare classes or pass sigma= directly."
        )
    return folds


def _fold_ids(y: np.ndarray, n_folds: int, rng: np.random.Generator) -> np.ndarray:
    """Stratified fold of each sample (scikit-learn StratifiedKFold, seeded from rng)."""
    from sklearn.model_selection import StratifiedKFold

    seed = int(rng.integers(0, 2**31 - 1))
    skf = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed)
    fold = np.empty(y.size, dtype=np.intp)
    for f, (_, test) in enumerate(skf.split(np.zeros((y.size, 1)), y)):
        fold[test] = f
    return fold


def _cv_scores(
    Z: np.ndarray, y: np.ndarray, n_classes: int, sigmas: np.ndarray, fold: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Held-out correct counts and summed log-likelihoods per sigma (pooled over folds).

    Within a fold the sigmas are fitted in increasing order, each warm-started from
    the previous one.
    """
    correct = np.zeros(sigmas.size, dtype=np.int64)
    loglik = np.zeros(sigmas.size)
    order = np.argsort(sigmas)
    for f in np.unique(fold):
        test = fold == f
        train = ~test
        init = None
        for i in order:
            B, beta, _ = fit_map(Z[train], y[train], n_classes, sigmas[i], init=init)
            init = (B, beta)
            eta, lse, _ = _softmax_parts(Z[test], B, beta)
            yt = y[test]
            correct[i] += int(np.sum(np.argmax(eta, axis=1) == yt))
            loglik[i] += float(eta[np.arange(yt.size), yt].sum() - lse.sum())
    return correct, loglik


def choose_sigma(
    X: Any,
    y: Any,
    n_classes: int,
    *,
    grid: Sequence[float] | np.ndarray | None = None,
    rule: str = "accuracy",
    n_folds: int = 5,
    rng: Any = None,
) -> tuple[float, pd.DataFrame, bool]:
    """Choose the prior scale sigma once, on the full (unclustered, K = d) model.

    Section 3: "we estimate sigma using cross-validation on the full model, i.e. no
    clustering". Stratified K-fold over ``grid`` (default ``10^-3, 10^-2.5, ...,
    10^1.5``, the authors' grid); the folds come from scikit-learn's
    ``StratifiedKFold`` seeded from ``rng``. ``n_folds`` is lowered to the size of
    the smallest class when that is smaller (at least 2 are needed).

    * ``rule="accuracy"``: the highest CV accuracy, ties to the smallest sigma (the
      authors' rule). The accuracy is pooled over folds (correct held-out
      predictions / n), so ties are exact integer ties.
    * ``rule="loglik"``: the highest held-out log-likelihood (pooled; reported per
      held-out sample).

    Parameters
    ----------
    X : array (n, d)
    y : int array (n,)
    n_classes : int
    grid : sequence of float, optional
    rule : {"accuracy", "loglik"}
    n_folds : int
    rng : None, int or numpy Generator

    Returns
    -------
    sigma : float
        The chosen grid value.
    table : pandas.DataFrame
        Index ``sigma`` (the grid, increasing); columns ``cv_accuracy`` (pooled
        accuracy), ``cv_loglik`` (mean held-out log-likelihood per sample),
        ``n_correct``; ``table.attrs`` holds ``n_folds`` and ``rule``.
    on_edge : bool
        Whether the chosen sigma is the smallest or the largest grid value (the grid
        may be too narrow); False for a one-value grid.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 4))
    >>> y = (X[:, 0] + X[:, 1] + rng.normal(size=60) > 0).astype(int)
    >>> sigma, table, on_edge = choose_sigma(X, y, 2, rng=0)
    >>> list(table.columns)
    ['cv_accuracy', 'cv_loglik', 'n_correct']
    >>> bool(sigma in table.index)
    True
    """
    X, c, yy = _classified("X", X, y, n_classes)
    n = X.shape[0]
    check_choice("rule", rule, ["accuracy", "loglik"])
    n_folds = check_int("n_folds", n_folds, min=2)
    sigmas = np.sort(np.asarray(DEFAULT_SIGMA_GRID if grid is None else grid, dtype=float))
    if sigmas.ndim != 1 or sigmas.size == 0 or not np.all(sigmas > 0):
        raise ValueError("grid must be a non-empty sequence of positive sigmas.")
    if np.unique(sigmas).size != sigmas.size:
        raise ValueError("grid must not repeat a sigma value.")
    gen = as_rng(rng)
    folds = _n_folds(yy, c, n_folds)
    fold = _fold_ids(yy, folds, gen)
    correct, loglik = _cv_scores(X, yy, c, sigmas, fold)
    if rule == "accuracy":
        best = int(np.flatnonzero(correct == correct.max())[0])  # ties -> smallest sigma
    else:
        best = int(np.argmax(loglik))
    table = pd.DataFrame(
        {"cv_accuracy": correct / n, "cv_loglik": loglik / n, "n_correct": correct},
        index=pd.Index(sigmas, name="sigma"),
    )
    table.attrs["n_folds"] = folds
    table.attrs["rule"] = rule
    on_edge = best in (0, sigmas.size - 1) and sigmas.size > 1
    return float(sigmas[best]), table, bool(on_edge)


def cv_accuracy(
    X: Any,
    y: Any,
    labels: Any,
    n_classes: int,
    sigma: float,
    *,
    n_folds: int = 5,
    rng: Any = None,
) -> float:
    """Stratified K-fold CV accuracy of the MAP logistic regression on summed features.

    An alternative selection criterion to :func:`log_marginal_likelihood` (the
    paper's section 4 reports both). The accuracy is pooled over folds (correct
    held-out predictions / n); ``n_folds`` is lowered to the smallest class size.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 4))
    >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> acc = cv_accuracy(X, y, [0, 0, 1, 1], 2, sigma=1.0, rng=0)
    >>> 0.5 < acc <= 1.0
    True
    """
    X, c, yy = _classified("X", X, y, n_classes)
    n = X.shape[0]
    sigma = check_number("sigma", sigma, min=0, min_inclusive=False)
    n_folds = check_int("n_folds", n_folds, min=2)
    Z = summed_features(X, labels)
    folds = _n_folds(yy, c, n_folds)
    fold = _fold_ids(yy, folds, as_rng(rng))
    correct, _ = _cv_scores(Z, yy, c, np.array([sigma]), fold)
    return float(correct[0] / n)


# ------------------------------------------------------------ associated class
def associated_class(B: Any) -> tuple[np.ndarray, np.ndarray]:
    """Each cluster's associated class and its odds ratio (appendix A.5.2).

    "We associate each cluster to the class with highest entry in weight matrix B,
    and then calculate the odds ratio to the second largest weight": for cluster
    ``k`` the class is ``argmax_l B[l, k]`` (ties to the lowest class code) and the
    odds ratio is ``exp(B[top, k] - B[second, k])`` -- the factor by which the odds
    of the associated class against the runner-up class grow when the cluster's
    summed feature ``x^C_k`` grows by one unit (>= 1).

    Parameters
    ----------
    B : array (c, K)
        Coefficients of the logistic regression on the clustering (:func:`fit_map`).

    Returns
    -------
    classes : int array (K,)
    odds_ratios : float array (K,)

    Examples
    --------
    >>> B = np.array([[0.5, -1.0], [0.0, 1.0], [-0.5, 0.0]])
    >>> classes, odds = associated_class(B)
    >>> classes
    array([0, 1])
    >>> np.round(odds, 4)
    array([1.6487, 2.7183])
    """
    B = _as_matrix("B", B)
    if B.shape[0] < 2:
        raise ValueError(f"B must have at least 2 rows (classes); got shape {B.shape}.")
    classes = np.argmax(B, axis=0)
    top = B[classes, np.arange(B.shape[1])]
    second = np.partition(B, B.shape[0] - 2, axis=0)[B.shape[0] - 2]
    return classes.astype(np.intp), np.exp(top - second)


# ------------------------------------------------------- covariate representation
def covariate_points(X: Any, *, y: Any = None) -> np.ndarray:
    """Represent each covariate by its standardised column of observations, (d, n).

    Column ``j`` of ``X`` (centred within each class when ``y`` is given, as the
    paper centres before estimating the similarity S) is standardised and divided by
    ``sqrt(n)``, so every point has unit norm and ``||p_i - p_j||^2 = 2 (1 - r_ij)``
    with ``r_ij`` the (within-class) correlation of covariates i and j: the Gaussian
    kernel ``exp(-phi ||p_i - p_j||^2)`` is then a monotone function of the
    correlation, whatever n is. Constant columns give the zero vector.

    This is the observation-based representation for the baselines; the paper's
    section 4 protocol ("both use the same similarity matrix S") instead clusters the
    rows of S: pass ``P = S``.

    Examples
    --------
    >>> X = np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 1.0], [3.0, 6.0, 0.0]])
    >>> P = covariate_points(X)
    >>> P.shape
    (3, 3)
    >>> float(np.round(np.sum((P[0] - P[1]) ** 2), 12))
    0.0
    """
    X = _as_matrix("X", X)
    n = X.shape[0]
    Xc = X.copy()
    if y is not None:
        yy = _as_codes("y", y, n)
        for cls in np.unique(yy):
            rows = yy == cls
            Xc[rows] -= Xc[rows].mean(axis=0)
    else:
        Xc -= Xc.mean(axis=0)
    norm = np.sqrt(np.sum(Xc * Xc, axis=0))
    scale = np.divide(1.0, norm, out=np.zeros_like(norm), where=norm > 0)
    return (Xc * scale).T.copy()


# ------------------------------------------------------------ convex clustering
def _edges(P: np.ndarray, weights: Any, k: int, phi: float, min_weight: float = 0.0):
    """Edge arrays ``(i, j, w)`` with ``i < j`` and ``w > min_weight * max(w)`` (and > 0)."""
    d = P.shape[0]
    if isinstance(weights, str):
        check_choice("weights", weights, ["knn", "knn_mst", "exp"])
        if d < 2:
            empty = np.zeros(0, dtype=np.intp)
            return empty, empty, np.zeros(0)
        sq = np.einsum("ij,ij->i", P, P)
        D2 = sq[:, None] + sq[None, :] - 2.0 * (P @ P.T)
        np.maximum(D2, 0.0, out=D2)
        np.fill_diagonal(D2, 0.0)
        if weights == "exp":
            i, j = np.triu_indices(d, 1)
        else:
            kk = min(k, d - 1)
            Dn = D2 + np.diag(np.full(d, np.inf))
            nn = np.argpartition(Dn, kk - 1, axis=1)[:, :kk]
            a = np.repeat(np.arange(d), kk)
            b = nn.ravel()
            key = np.unique(np.minimum(a, b) * d + np.maximum(a, b))
            if weights == "knn_mst":
                # an MST is unchanged by adding a constant to every edge length, which
                # keeps zero distances (duplicate points) as edges

                T = minimum_spanning_tree(D2 + 1.0 - np.eye(d)).tocoo()
                key = np.union1d(key, np.minimum(T.row, T.col) * d + np.maximum(T.row, T.col))
            i, j = np.divmod(key, d)
        w = np.exp(-phi * D2[i, j])
    else:
        W = sparse.csr_matrix(weights, dtype=float) if not sparse.issparse(weights) else weights
        W = sparse.csr_matrix(W, dtype=float)
        if W.shape != (d, d):
            raise ValueError(f"weights must be a ({d}, {d}) matrix; got shape {W.shape}.")
        if abs(W - W.T).max() > 1e-12 * max(1.0, abs(W).max()) or (W.data < 0).any():
            raise ValueError("weights must be symmetric and non-negative.")
        U = sparse.triu(W, k=1).tocoo()
        i, j, w = U.row.astype(np.intp), U.col.astype(np.intp), U.data.astype(float)
    keep = w > (min_weight * w.max() if w.size else 0.0)
    keep &= w > 0
    return i[keep].astype(np.intp), j[keep].astype(np.intp), w[keep]


class _AMA:
    """Accelerated AMA for convex clustering on fixed edges (Chi & Lange 2015, alg. 3).

    Problem: ``min_U 1/2 sum_i ||x_i - u_i||^2 + gamma sum_l w_l ||u_l1 - u_l2||``.
    Its dual is ``min_lambda 1/2 ||X + A^T lambda||^2`` subject to
    ``||lambda_l|| <= gamma w_l`` (A the l x d edge incidence matrix), whose
    projected-gradient step is the AMA update
    ``u = x + A^T lambda;  g = A u;  lambda_l <- P_l(lambda_l - nu g_l)``;
    we run it with Nesterov (FISTA) momentum, adaptive restart and ``nu = 1/L``,
    ``L = lambda_max(A^T A)`` (largest eigenvalue of the unweighted graph Laplacian).
    All updates are vectorised over edges (sparse incidence products); nothing of
    size ``d x d x p`` is formed.

    The data are centred and rotated onto their row space first (exact: the
    objective is invariant to translations and rotations of the feature space, and
    the optimal centroids lie in the affine hull of the points), so the working
    dimension is ``min(p, d - 1)``.

    Stopping: the duality gap ``P(U) - D(lambda) = <U, U - X> + gamma sum_l w_l
    ||g_l||`` at a feasible lambda is below ``tol * max(P(U), tiny)``.

    Fusion: edge l is fused iff the projection in the AMA step is inactive at the
    final lambda, ``||lambda_l - nu g_l|| <= gamma w_l`` -- equivalently the primal
    variable ``v_l = prox(g_l - lambda_l / nu)`` of AMA is exactly zero (Chi & Lange
    read clusters off ``V`` the same way); clusters are the connected components of
    the fused edges.
    """

    def __init__(self, P: np.ndarray, i: np.ndarray, j: np.ndarray, w: np.ndarray):
        d, p = P.shape
        self.d = d
        self.mean = P.mean(axis=0)
        Xc = P - self.mean
        self._Xc = None
        if p > d:
            # rotate onto the row space via the (d, d) Gram matrix: Xc = Q S V^T, so
            # Q S are the coordinates and V^T = S^-1 Q^T Xc maps centroids back
            evals, Q = np.linalg.eigh(Xc @ Xc.T)
            keep = evals > max(evals[-1], 0.0) * 1e-13
            if not keep.any():
                keep[-1] = True
            sv = np.sqrt(np.maximum(evals[keep], 0.0))
            self.X = Q[:, keep] * sv
            self._Q, self._sv, self._Xc = Q[:, keep], sv, Xc
        else:
            self.X = Xc
        self.i, self.j, self.w = i, j, w
        m = i.size
        rows = np.concatenate([np.arange(m), np.arange(m)])
        cols = np.concatenate([i, j])
        vals = np.concatenate([np.ones(m), -np.ones(m)])
        self.A = sparse.csr_matrix((vals, (rows, cols)), shape=(m, d))
        self.At = self.A.T.tocsr()

        self.ncomp, self.comp = connected_components(
            sparse.csr_matrix((np.ones(m), (i, j)), shape=(d, d)), directed=False
        )
        self.nu = 1.0 / max(self._lipschitz(), 1e-12)
        self._last = None

    def _lipschitz(self) -> float:
        L = (self.At @ self.A).toarray() if self.d <= 2000 else None
        if L is not None:
            return float(np.linalg.eigvalsh(L)[-1]) * (1 + 1e-10) if self.A.shape[0] else 0.0
        deg = np.bincount(np.concatenate([self.i, self.j]), minlength=self.d)
        return float(np.max(deg[self.i] + deg[self.j]))  # Anderson-Morley bound

    def gamma_bounds(self) -> tuple[float, float]:
        """``(lo, hi)``: no edge fuses below ``lo``; every component is fused at ``hi``.

        ``hi``: the electrical flow ``lambda = W A Phi`` with ``L_w Phi = Xbar - X``
        (component means) is dual-feasible at ``gamma = max_l ||Phi_l1 - Phi_l2||``
        and gives ``U = Xbar``, so everything within a component is fused there.
        ``lo``: ``||u_i - x_i|| <= gamma s_i`` (``s_i`` the weight sum at i), so edge
        (i, j) cannot fuse while ``gamma < ||x_i - x_j|| / (s_i + s_j)``; the minimum
        over edges between distinct points (0 when there are none).
        """
        X = self.X
        if self.i.size == 0:
            return 0.0, 0.0
        Lw = (self.At @ sparse.diags(self.w) @ self.A).tocsc()
        Phi = np.zeros_like(X)
        for comp in range(self.ncomp):
            idx = np.flatnonzero(self.comp == comp)
            if idx.size < 2:
                continue
            R = X[idx].mean(axis=0) - X[idx[1:]]
            sub = Lw[idx][:, idx][1:, 1:]
            # grounded Laplacian (node idx[0] fixed at 0): symmetric positive definite
            if idx.size <= 2000:
                Phi[idx[1:]] = np.linalg.solve(sub.toarray(), R)
            else:
                Phi[idx[1:]] = splu(sub.tocsc()).solve(np.ascontiguousarray(R))
        diff = Phi[self.i] - Phi[self.j]
        hi = float(np.sqrt(np.max(np.einsum("ij,ij->i", diff, diff))))
        s = np.bincount(self.i, self.w, self.d) + np.bincount(self.j, self.w, self.d)
        dx = X[self.i] - X[self.j]
        ratio = np.sqrt(np.einsum("ij,ij->i", dx, dx)) / (s[self.i] + s[self.j])
        # duplicate points (distance 0) fuse at any gamma > 0: bound the others
        lo = float(np.min(ratio[ratio > 0])) if np.any(ratio > 0) else 0.0
        return lo, hi

    def solve(self, gamma: float, lam: np.ndarray, tol: float, max_iter: int):
        """Return ``(lam, U, G, n_iter, converged)`` at ``gamma`` from warm start ``lam``.

        ``U = X + A^T lam`` and ``G = A U`` are evaluated at the returned ``lam``.
        Everything linear in lam is carried in the small (d, p) space: ``U`` at the
        extrapolated point is the same combination of the ``U``s as the point is of
        the lams, so each iteration costs one product with ``A`` and one with
        ``A^T``.
        """
        X, A, At, nu = self.X, self.A, self.At, self.nu
        r = gamma * self.w

        def project(V: np.ndarray) -> None:  # in place, onto ||V_l|| <= r_l
            norms = np.sqrt(np.einsum("ij,ij->i", V, V))
            over = norms > r
            if over.any():
                scale = np.ones_like(norms)
                scale[over] = r[over] / norms[over]
                V *= scale[:, None]

        lam = np.array(lam, dtype=float, copy=True)
        project(lam)
        U_lam = At @ lam
        U_lam += X
        f_lam = 0.5 * float(np.einsum("ij,ij->", U_lam, U_lam))
        yv, U_y = lam, U_lam
        t = 1.0
        converged = False
        it = 0
        since_check = 0
        check_every = 5
        while True:
            at_lam = yv is lam
            G = A @ U_y
            if at_lam or since_check >= check_every or it >= max_iter:
                # duality gap at the feasible lam: P(U) - D(lam) = <U, U - X> + sum r ||g||
                since_check = 0
                Gl = G if at_lam else A @ U_lam
                gn = np.sqrt(np.einsum("ij,ij->i", Gl, Gl))
                penalty = float(r @ gn)
                D = U_lam - X
                dd = float(np.einsum("ij,ij->", D, D))
                gap = dd + float(np.einsum("ij,ij->", X, D)) + penalty
                primal = 0.5 * dd + penalty
                if gap <= tol * max(primal, 1e-300) or it >= max_iter:
                    converged = gap <= tol * max(primal, 1e-300)
                    G = Gl
                    break
            it += 1
            since_check += 1
            # lam_new = P(yv - nu A U_y)
            V = G
            V *= -nu
            V += yv
            project(V)
            U_new = At @ V
            U_new += X
            f_new = 0.5 * float(np.einsum("ij,ij->", U_new, U_new))
            if f_new > f_lam:
                # function-value restart (O'Donoghue & Candes): drop the momentum
                t = 1.0
                lam, U_lam, f_lam = V, U_new, f_new
                yv, U_y = lam, U_lam
                continue
            t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
            beta = (t - 1.0) / t_new
            t = t_new
            if beta > 0:
                # yv = V + beta (V - lam), reusing lam's buffer when it is not yv's
                Y = lam if lam is not yv else lam.copy()
                Y *= -beta
                Y += (1.0 + beta) * V
                yv = Y
                U_y = (1.0 + beta) * U_new - beta * U_lam
            else:
                yv, U_y = V, U_new
            lam, U_lam, f_lam = V, U_new, f_new
        return lam, U_lam, G, it, converged

    def fused_labels(self, gamma: float, lam: np.ndarray, G: np.ndarray) -> np.ndarray:
        V = lam - self.nu * G
        inside = np.einsum("ij,ij->i", V, V) <= (gamma * self.w) ** 2 * (1 + 1e-12)
        if self._last is not None and np.array_equal(inside, self._last[0]):
            return self._last[1]
        m = int(inside.sum())
        graph = sparse.csr_matrix(
            (np.ones(m), (self.i[inside], self.j[inside])), shape=(self.d, self.d)
        )

        labels = _canonical(connected_components(graph, directed=False)[1])
        self._last = (inside, labels)
        return labels

    def centroids(self, U: np.ndarray) -> np.ndarray:
        if self._Xc is None:
            return U + self.mean
        basis = (self._Q / np.where(self._sv > 0, self._sv, 1.0)).T @ self._Xc
        return U @ basis + self.mean


def _prepare_convex(P: Any, weights: Any, k: int, phi: float, min_weight: float = 0.0) -> _AMA:
    P = _as_matrix("P", P)
    if P.shape[0] < 1:
        raise ValueError("P must have at least one row (point).")
    k = check_int("k", k, min=1)
    phi = check_number("phi", phi, min=0)
    min_weight = check_number("min_weight", min_weight, min=0, max=1)
    with single_blas_thread():
        i, j, w = _edges(P, weights, k, phi, min_weight)
        return _AMA(P, i, j, w)


def convex_clustering(
    P: Any,
    gamma: float,
    *,
    weights: Any = "knn",
    k: int = 10,
    phi: float = 0.5,
    min_weight: float = 1e-8,
    tol: float = 1e-7,
    max_iter: int = 20000,
) -> tuple[np.ndarray, np.ndarray]:
    """Convex clustering of the rows of ``P`` at one ``gamma`` (centroids and clusters).

    Solves ``min_U 1/2 sum_i ||p_i - u_i||^2 + gamma sum_{i<j} w_ij ||u_i - u_j||_2``
    (Hocking et al. 2011; Chi & Lange 2015) by accelerated AMA; see
    :func:`convex_clustering_path` for the weights, the solver and how clusters are
    read off. ``min_weight`` as there; at ``gamma`` at or above the level where
    every connected component of the weight graph is fused (an exact certificate)
    the component means are returned without iterating.

    Returns
    -------
    centroids : array (d, p)
    labels : int array (d,)

    Examples
    --------
    >>> P = np.array([[0.0, 0.0], [0.1, 0.0], [3.0, 3.0], [3.0, 3.1]])
    >>> U, labels = convex_clustering(P, 1.0, weights="exp", phi=0.1)
    >>> labels
    array([0, 0, 1, 1])
    """
    gamma = check_number("gamma", gamma, min=0)
    max_iter = check_int("max_iter", max_iter, min=1)
    solver = _prepare_convex(P, weights, k, phi, min_weight)
    comp_labels = _canonical(solver.comp)
    with single_blas_thread():
        hi = solver.gamma_bounds()[1] if solver.i.size else 0.0
    if gamma >= hi:  # every connected component fused (the flow certificate): exact
        sums = np.zeros((solver.ncomp, solver.mean.size))
        P_arr = _as_matrix("P", P)
        np.add.at(sums, solver.comp, P_arr)
        means = sums / np.bincount(solver.comp)[:, None]
        return means[solver.comp], comp_labels
    lam0 = np.zeros((solver.i.size, solver.X.shape[1]))
    with single_blas_thread():
        lam, U, G, n_iter, converged = solver.solve(gamma, lam0, tol, max_iter)
    if not converged:
        warnings.warn(
            f"convex_clustering stopped at max_iter={max_iter} AMA iterations before the "
            f"duality gap reached tol={tol}; increase max_iter.",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    return solver.centroids(U), solver.fused_labels(gamma, lam, G)


def convex_clustering_path(
    P: Any,
    *,
    weights: Any = "knn",
    k: int = 10,
    phi: float = 0.5,
    min_weight: float = 1e-8,
    gammas: Sequence[float] | np.ndarray | None = None,
    n_gammas: int = 100,
    tol: float = 1e-6,
    max_iter: int = 5000,
) -> list[tuple[float, np.ndarray]]:
    """Convex-clustering baseline: the distinct clusterings along a path of gammas.

    Clusters the ``d`` rows of ``P`` (one point per covariate) by convex clustering,
    ``min_U 1/2 sum_i ||p_i - u_i||^2 + gamma sum_{i<j} w_ij ||u_i - u_j||_2``
    (Hocking et al. 2011; Chi & Lange 2015), the paper's section 4 baseline.

    Which points: section 4 says both baselines "use the same similarity matrix S";
    for the paper's protocol pass ``P = S`` (each covariate is its row of
    similarities). :func:`covariate_points` gives an observation-based alternative.
    The kernel uses raw squared distances, so P's scale matters (weights underflow
    to zero, i.e. no edges, for far-apart points).

    Weights: ``w_ij = exp(-phi ||p_i - p_j||^2)`` on the edges of
    ``"knn"`` -- the union of each point's ``k`` nearest neighbours (default);
    ``"knn_mst"`` -- that plus a minimum spanning tree (one connected graph);
    ``"exp"`` -- all pairs (the paper's choice for d <= 1000); or a given symmetric
    non-negative (d, d) array / scipy sparse matrix. Zero weights are no edges.

    Solver: accelerated AMA (Chi & Lange's alternating minimisation algorithm on the
    dual, with FISTA momentum and restart), vectorised over edges, warm-started
    along increasing gammas; stops at a relative duality gap ``tol``. Fusion is read
    from the dual exactly: edge (i, j) is fused when the AMA projection of its dual
    variable is inactive (AMA's primal difference variable is then exactly 0);
    clusters are the connected components of the fused edges.

    Parameters
    ----------
    P : array (d, p)
        Points to cluster (rows).
    weights : {"knn", "knn_mst", "exp"} or array / sparse matrix (d, d)
    k : int
        Neighbours for the k-NN graph.
    phi : float
        Kernel scale (the paper's 0.5).
    min_weight : float
        Edges whose weight is below ``min_weight`` times the largest weight are
        dropped (0 keeps every positive weight). Such edges act only at gammas about
        ``1 / min_weight`` times larger than the others, where fusing across them
        makes the path very slow (e.g. the rows of a block-structured S, whose
        cross-block kernel weights are ~1e-14).
    gammas : sequence of float, optional
        The path (solved in increasing order). Default: ``n_gammas`` geometric
        values from a gamma below which no edge can fuse (``min ||p_i - p_j|| /
        (s_i + s_j)``, ``s`` the weight sums) to one at which every connected
        component of the weight graph is fused (an electrical-flow dual certificate).
        The paper used 0 to 5 in steps of 1/300.
    n_gammas : int
    tol : float
        Relative duality gap at which a gamma is solved.
    max_iter : int
        AMA iterations per gamma (a ``ConvergenceWarning`` counts the gammas capped;
        their clusterings are kept).

    Returns
    -------
    list of (gamma, labels)
        Each distinct clustering once, with the smallest gamma that produced it, in
        path order; ``labels`` (d,) are canonical codes (0, 1, ... by first
        appearance). The path stops once every connected component of the weight
        graph is one cluster (larger gammas cannot change it).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> P = np.vstack([rng.normal(0, 0.05, (5, 2)), rng.normal(2, 0.05, (5, 2))])
    >>> path = convex_clustering_path(P, weights="knn_mst", k=3)
    >>> [int(lab.max()) + 1 for _, lab in path][:1], int(path[-1][1].max()) + 1
    ([10], 1)
    >>> any(np.array_equal(lab, [0] * 5 + [1] * 5) for _, lab in path)
    True
    """
    runs = _convex_runs(
        P,
        weights=weights,
        k=k,
        phi=phi,
        min_weight=min_weight,
        gammas=gammas,
        n_gammas=n_gammas,
        tol=tol,
        max_iter=max_iter,
    )
    return [(gamma, labels) for gamma, labels, _ in runs]


def _convex_runs(
    P: Any,
    *,
    weights: Any = "knn",
    k: int = 10,
    phi: float = 0.5,
    min_weight: float = 1e-8,
    gammas: Sequence[float] | np.ndarray | None = None,
    n_gammas: int = 100,
    tol: float = 1e-6,
    max_iter: int = 5000,
) -> list[tuple[float, np.ndarray, bool]]:
    """:func:`convex_clustering_path` with, for each distinct clustering, whether every
    gamma that produced it reached ``tol`` within ``max_iter`` AMA iterations."""
    n_gammas = check_int("n_gammas", n_gammas, min=1)
    max_iter = check_int("max_iter", max_iter, min=1)
    tol = check_number("tol", tol, min=0, min_inclusive=False)
    solver = _prepare_convex(P, weights, k, phi, min_weight)
    comp_labels = _canonical(solver.comp)
    if solver.i.size == 0:  # no edges: every point is its own component
        first = 0.0 if gammas is None else float(np.min(gammas))
        return [(first, comp_labels, True)]
    with single_blas_thread():
        lo, hi = solver.gamma_bounds()
    if gammas is None:
        if lo <= 0:
            lo = hi * 1e-6
        grid = np.geomspace(lo, hi, n_gammas) if hi > lo else np.array([hi])
    else:
        grid = np.sort(np.asarray(gammas, dtype=float).ravel())
        if grid.size == 0 or np.any(grid < 0) or not np.all(np.isfinite(grid)):
            raise ValueError("gammas must be a non-empty sequence of finite values >= 0.")
    out: list[tuple[float, np.ndarray, bool]] = []
    seen: dict[bytes, int] = {}
    lam = np.zeros((solver.i.size, solver.X.shape[1]))
    prev = None
    n_capped = 0
    with single_blas_thread():
        for gamma in grid:
            converged = True
            if gamma >= hi:
                # the electrical-flow certificate: every component is fused (exactly)
                labels = comp_labels
            else:
                if prev:  # warm start: the previous dual, scaled with the radii
                    lam *= gamma / prev
                prev = float(gamma)
                lam, U, G, n_iter, converged = solver.solve(float(gamma), lam, tol, max_iter)
                n_capped += not converged
                labels = solver.fused_labels(float(gamma), lam, G)
            key = labels.astype(np.int64).tobytes()
            if key not in seen:
                seen[key] = len(out)
                out.append((float(gamma), labels, bool(converged)))
            elif not converged:
                g0, lab0, _ = out[seen[key]]
                out[seen[key]] = (g0, lab0, False)
            if np.array_equal(labels, comp_labels):
                break
    if n_capped:
        warnings.warn(
            f"convex_clustering_path: {n_capped} of the gammas stopped at max_iter={max_iter} "
            f"AMA iterations before the duality gap reached tol={tol}; their clusterings "
            "are kept. Increase max_iter or tol.",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    return out


# ------------------------------------------------------------------- k-means
def kmeans_covariates(P: Any, ks: Sequence[int], rng: Any = None) -> list[tuple[int, np.ndarray]]:
    """k-means baseline: scikit-learn ``KMeans`` (k-means++, ``n_init=10``) of the rows of P.

    Section 4's second baseline ("k-means with the initialisation of Arthur and
    Vassilvitskii", k in 1..d). As for :func:`convex_clustering_path`, pass
    ``P = S`` for the paper's protocol, or :func:`covariate_points` (standardised
    columns) for an observation-based one. Each k gets its own seed drawn from
    ``rng``; values of k above the number of distinct points are skipped.

    Returns
    -------
    list of (k, labels)
        Each distinct clustering once (the first k giving it), in the order of
        ``ks``; canonical labels (0, 1, ... by first appearance).

    Examples
    --------
    >>> P = np.array([[0.0], [0.1], [5.0], [5.1]])
    >>> [(k, lab.tolist()) for k, lab in kmeans_covariates(P, [1, 2], rng=0)]
    [(1, [0, 0, 0, 0]), (2, [0, 0, 1, 1])]
    """
    return [(kk, labels) for kk, labels, _ in _kmeans_runs(P, ks, rng)]


def _kmeans_runs(P: Any, ks: Sequence[int], rng: Any) -> list[tuple[int, np.ndarray, bool]]:
    """:func:`kmeans_covariates` with, for each clustering, whether its k-means stopped
    before scikit-learn's cap of ``max_iter`` (300) iterations."""
    from sklearn.cluster import KMeans

    P = _as_matrix("P", P)
    d = P.shape[0]
    ks = [check_int("k", kk, min=1, max=d) for kk in np.atleast_1d(np.asarray(ks)).tolist()]
    gen = as_rng(rng)
    seeds = gen.integers(0, 2**31 - 1, size=len(ks))
    n_distinct = np.unique(P, axis=0).shape[0]
    out: list[tuple[int, np.ndarray, bool]] = []
    seen: set[bytes] = set()
    # one thread (BLAS and OpenMP): measured 40x faster on small problems on 2 busy cores
    with _controller().limit(limits=1):
        for kk, seed in zip(ks, seeds):
            if kk > n_distinct:
                continue
            converged = True
            if kk == 1:
                labels = np.zeros(d, dtype=np.intp)
            else:
                km = KMeans(n_clusters=kk, n_init=10, random_state=int(seed)).fit(P)
                labels = _canonical(km.labels_)
                converged = int(km.n_iter_) < int(km.max_iter)
            key = labels.astype(np.int64).tobytes()
            if key not in seen:
                seen.add(key)
                out.append((kk, labels, converged))
    return out
