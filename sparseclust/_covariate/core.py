"""Convex covariate clustering for classification (Andrade, Fukumizu & Okajima): array core.

For one value of ``nu`` the problem is (paper eq. (1), the authors' scaling)::

    minimise_{B (c x d), beta (c)}  NLL(B, beta) + lam ||B||_F^2
                                    + nu_n sum_{edges (i, j)} S_ij ||B[:, i] - B[:, j]||_2

with ``NLL`` the multinomial logistic loss summed over the ``n`` samples, ``beta`` the
unpenalised intercepts, ``lam`` NOT scaled by ``n`` (0.1 in the paper) and
``nu_n = n * nu`` (the paper's nu of eq. (1) is ``nu_n``: its grid ``n 2^(-0.1 a)`` is
``nu = 2^(-0.1 a)`` here, :func:`default_nus`, as in the authors' scripts). The edges are the pairs with ``S_ij > 0``; they are stored as flat
arrays (``l`` edges; every per-edge quantity is an ``l x c`` or ``2l x c`` array),
never as a ``d x d x c`` array.

:func:`admm_fit` solves one ``nu`` with the ADMM of section 2.1 / appendix A.1-A.2:

* **B-step**: L-BFGS (:func:`_qn`, warm-started) on
  ``g(B, beta) = NLL + lam ||B||^2 + rho/2 sum_k ||z_k - b_{owner(k)} + u_k||^2``;
  the quadratic term is evaluated in ``O(dc)`` per call from ``q_all`` and
  ``q_up_i`` computed once per ADMM iteration in ``O(lc)`` (appendix A.1). The
  initial inverse Hessian is a preconditioner built from the Hessian of ``g`` (dense
  Cholesky up to ``DENSE_MAX`` variables; above it, when ``n < d + 1``, its per-class
  blocks through ``n x n`` eigendecompositions (low rank plus diagonal, no ``d x d``
  matrix), else its diagonal; rebuilt, also in the middle of a B-step, once the
  iterations a stale one wastes cost more than a rebuild; a change of ``rho`` alone
  does not refactor it; a dense factor of more than ``INVERSE_MAX`` variables is
  built (symmetric rank-n updates, lower triangle only) and factored in single
  precision: it is only an initial inverse Hessian, and building and factoring it
  in double precision took half of a cold solve at d = 200): a few iterations per
  B-step instead of ~50. :func:`_qn`
  (not scipy's L-BFGS-B) tries the unit step first, a Newton step with a fresh
  preconditioner (scipy's first step is ``1 / ||d||``), and has no per-call setup
  cost, which dominated B-steps of 0-2 iterations; where function values no longer
  resolve the predicted decrease (``|f| ~ 1e3`` at n = 4000) its line search accepts
  a step that does not raise ``f`` beyond ``FROUND |f|`` and lowers the gradient
  norm (the halvings could not succeed there: a refined path ADMM at n = 4000 took
  105 s for one ``nu`` before). The B-step is inexact: its
  gradient norm is kept below ``0.1 min(r, s)`` of the previous iteration (and
  ``0.1 eps`` at the end) and counts in the stopping test; L-BFGS stops at the first
  evaluated point whose gradient meets it. The first B-step of a run only reduces
  the gradient by ``FIRST_FACTOR`` (the cold start is far from the solution, where
  the preconditioner built at ``B = 0`` is poor; the later B-steps correct it).
  Tried and not kept (measured at d = 200, n = 400): over-relaxation (alpha 1.5-1.7:
  fewer iterations at nu = 1e-2, more at 1e-3 and 3e-4, no faster overall), residual
  balancing with ``mu = 3`` or ``5``, refreshing the preconditioner less often,
  carrying the L-BFGS pairs across B-steps (exact after ``y += d_rho deg * s``,
  as successive ``g`` differ by a linear term and ``rho``: no fewer iterations).
* **z-step**: the closed form per edge, vectorised over all edges:
  ``theta = max(1 - nu_n S_ij / (rho ||m1 - m2||), 0.5)`` (0.5 when ``m1 == m2``).
* **u-step**: ``u_k += z_k - b_{owner(k)}`` (scaled duals).
* **stop** when the primal residual ``||z - b||``, the dual residual
  ``rho ||z^{k+1} - z^k||`` and the B-step's gradient norm are all
  ``<= eps = sqrt(c (d + 2 l)) * tol``, or at ``max_iter``.
* **residual balancing** (Boyd et al. 2011, section 3.4.1; ``mu = 10``, ``tau = 2``):
  after an iteration that did not stop, ``rho`` is multiplied by 2 when
  ``r > 10 s`` and divided by 2 when ``s > 10 r``; the scaled duals ``U`` are divided /
  multiplied by the same factor so the unscaled duals ``rho U`` are unchanged.

Two covariates of an edge are *fused* iff ``theta == 0.5`` at the final iterate (an
exact test thanks to the clamp); clusters are the connected components of the fused
edges, labelled canonically (numbered by first appearance over covariates 0..d-1).

With ``certify=True`` (default) :func:`admm_fit` stops early once its clustering
passes the certificate of :func:`clustering_path` (the exact fused solution).

:func:`clustering_path` runs the grid from large to small ``nu`` with warm starts. The
top of the grid, where the solution is the components of ``S`` fully fused, is solved
in closed form (:func:`components_solution`) instead of by the ADMM, which stalls
there; on the plateaus where the clustering does not change, the previous clustering
is certified optimal (KKT, with a dual certificate from weighted least-squares edge
flows) instead of re-running the ADMM.

Layout: internally ``W = B.T`` is ``d x c`` so that per-edge arrays are row gathers
``W[idx]``; everything returned uses the paper's ``B`` (``c x d``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
from scipy import sparse
from scipy.linalg import cholesky, eigh, get_blas_funcs, solve_triangular
from scipy.optimize import minimize
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import splu

from .._engine.parallel import progress_bar
from .._engine.threads import single_blas_thread

__all__ = [
    "AdmmResult",
    "DistinctClustering",
    "PathRecord",
    "admm_fit",
    "canonical_labels",
    "check_magnitude",
    "clustering_path",
    "components_solution",
    "default_nus",
    "distinct_clusterings",
    "edges_from_similarity",
    "embedding_similarity",
    "knn_sparsify",
    "labels_from_edges",
    "ledoit_wolf_similarity",
    "magnitude_limit",
    "objective",
    "quad_penalty",
    "z_update",
]

#: Residual balancing constants (Boyd et al. 2011, eq. (3.13)).
BALANCE_MU = 10.0
BALANCE_TAU = 2.0
#: Inexact B-steps: inner gradient tolerance relative to the residuals / to eps.
INNER_FACTOR = 0.1
INNER_FLOOR = 0.1
#: Dense Newton preconditioner of the B-step up to this many variables ((d + 1) c);
#: above it a diagonal one.
DENSE_MAX = 1500
#: Above ``DENSE_MAX``: per-class low-rank blocks when ``n < LOWRANK_RATIO (d + 1)``.
LOWRANK_RATIO = 1.0
#: Low-rank blocks: at most this many eigenpairs per class, eigenvalues above this.
LOWRANK_RANK = 30
LOWRANK_EIG = 0.1
LOWRANK_POWER = 1
INVERSE_MAX = 400
#: L-BFGS iterations per B-step expected from a fresh preconditioner; more count as
#: waste towards rebuilding it.
REFRESH_NIT = 1
_RHO_MIN, _RHO_MAX = 1e-8, 1e8
#: First B-step of a run: gradient target relative to the gradient at the start.
FIRST_FACTOR = 5e-5
#: B-step L-BFGS: curvature pairs kept.
QN_MEM = 10
#: Early certification in the ADMM: a clustering unchanged for this many iterations
#: is tried (see ``_admm``).
CERT_STABLE = 5
#: L-BFGS iterations of the partition fit when a clustering is only tried (at the
#: start of a nu of the path, inside the ADMM): successful fits took at most ~190
#: on the section-4 data (median 3-5); a clustering that is too fine makes the
#: reduced problem non-smooth (clusters that want to merge) and the fit crawl to
#: the cap, so a try gives up there; the final certificate (_polish) keeps 5000.
CERT_TRY_ITER = 300
#: The same inside the ADMM (admm_fit's early certification): started from the
#: current iterate, successful fits took <= 25 iterations on the section-4 data
#: (<= 135 on a 5-NN graph); each failed try also doubles the stability required
#: before the next.
CERT_ADMM_ITER = 50
#: B-step line search: function differences below ``FROUND max(|f|, 1)`` are roundoff.
FROUND = 1e-12
#: B-step line search: the step is halved at most this many times (down to 2^-34,
#: below 1e-10), so one quasi-Newton iteration costs at most ``LS_MAX_HALVINGS + 1``
#: evaluations.
LS_MAX_HALVINGS = 34
#: Quasi-Newton iterations of one ADMM B-step (:func:`_qn`, see :func:`_qn_cap`), by
#: preconditioner. Measured on ordinary data (the section-4 designs, n = 40..4000,
#: d = 12..400; separable classes, 8 classes, raw Wine and Spambase): dense at most
#: 31 (17 evaluations), low rank at most 160; the diagonal one ((d + 1) c >
#: DENSE_MAX and n > d) hundreds to thousands (n = 800, d = 400: 100-600, some reach
#: 5000, its cap before). A B-step that reaches its cap (or stops at its numerical
#: floor, never seen on ordinary data) ends the ADMM of that ``nu`` unconverged
#: (``AdmmResult.inner_stalled``): the next ones would stall alike (a covariate at
#: 1e10 beside unit ones: 5000 iterations of ~30 evaluations each, for each of
#: ``max_iter`` ADMM iterations, was a hang; at 5e17 with 5 rows every B-step found
#: no descent at once, and 1000 such ADMM iterations took 1 s per ``nu``).
QN_MAX_ITER_DENSE = 200
QN_MAX_ITER_LOWRANK = 1000
QN_MAX_ITER_DIAG = 5000
#: :func:`clustering_path` stops after this many consecutive ``nu`` whose inner solver
#: stalled: the stall comes from the data's conditioning, not from ``nu``, so
#: the rest of the grid would stall alike (each ``nu`` a capped B-step and a failed
#: certificate: 0.3 s at n = 5, d = 4, 90 s for the default grid of 301 values).
PATH_STALL_MAX = 10
#: Largest single-precision float (the dense preconditioner's range above INVERSE_MAX).
FLT_MAX = float(np.finfo(np.float32).max)


# ============================================================================ input scale
def magnitude_limit(n: int) -> float:
    """The largest covariate magnitude :func:`check_magnitude` accepts for ``n`` rows:
    ``sqrt(FLT_MAX / (16 n))`` (9.4e17 for 24 rows, 4.6e15 for a million).

    The B-step's Newton preconditioner holds, above ``INVERSE_MAX`` variables, the
    Hessian of the logistic loss in single precision: entries up to ``n M^2 / 4`` for
    covariates of magnitude ``M``, kept within a quarter of ``FLT_MAX`` (3.4e38). This
    is the covariate method's own overflow bound, far below the data front's (1.7e75
    for 24 x 4): the baselines' squared similarities (``M^4``) and the Ledoit-Wolf
    fourth moments stay finite under it too.

    Examples
    --------
    >>> f"{magnitude_limit(24):.1e}", f"{magnitude_limit(10**6):.1e}"
    ('9.4e+17', '4.6e+15')
    """
    return float(np.sqrt(FLT_MAX / (16.0 * max(int(n), 1))))


def check_magnitude(X: np.ndarray, names: Any = None) -> None:
    """A ``ValueError`` naming the covariates whose magnitude exceeds
    :func:`magnitude_limit` (``names`` label the columns; default ``column <j>``).

    Covariates below it are fitted even when badly scaled (one at 1e10 beside unit
    ones): the solver then stops at its caps, reported as non-convergence.
    """
    if X.size == 0:
        return
    with np.errstate(invalid="ignore"):
        top = np.max(np.abs(X), axis=0)
    limit = magnitude_limit(X.shape[0])
    bad = np.flatnonzero(~(top <= limit))
    if bad.size == 0:
        return
    label = [f"column {j}" for j in range(X.shape[1])] if names is None else list(names)
    nonfinite = [label[j] for j in bad if not np.isfinite(top[j])]
    if nonfinite:
        raise ValueError(
            f"covariates with NaN or infinite values: {nonfinite[:5]}. Drop or impute them."
        )
    shown = ", ".join(f"{label[j]!r} (largest magnitude {top[j]:.3g})" for j in bad[:5])
    more = f" and {bad.size - 5} more" if bad.size > 5 else ""
    raise ValueError(
        f"covariate clustering takes covariates up to {limit:.1e} in magnitude for "
        f"{X.shape[0]} rows; got {shown}{more}. Its Newton preconditioner holds sums of "
        "squared covariates in single precision (largest 3.4e38), and at such scales the "
        "fit could not converge anyway. Standardise the covariates, e.g. "
        "(df - df.mean()) / df.std()."
    )


# ============================================================================ similarity
def _dense_or_sparse(S: Any, name: str = "S") -> np.ndarray | sparse.csr_array:
    if sparse.issparse(S):
        S = sparse.csr_array(S, dtype=np.float64)
        S.sum_duplicates()
        shape = S.shape
    else:
        S = np.asarray(S, dtype=np.float64)
        shape = S.shape
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(
            f"{name} must be a square d x d similarity matrix; got shape {shape}. "
            "Pass one similarity per pair of covariates."
        )
    return S


def _entry_scale(values: np.ndarray) -> float:
    """The largest absolute similarity entry of ``values`` (0 without any); a
    ``ValueError`` unless they are finite and >= 0."""
    if not np.isfinite(values).all():
        raise ValueError("S must be finite; it has NaN or infinite entries.")
    if values.size and values.min() < 0:
        raise ValueError(
            f"S must be non-negative; its smallest entry is {values.min():.6g}. "
            "Set negative similarities to 0 (e.g. np.maximum(S, 0))."
        )
    return float(np.abs(values).max()) if values.size else 0.0


def edges_from_similarity(S: Any, *, rtol: float = 1e-8) -> tuple[np.ndarray, np.ndarray]:
    """Edges ``(i, j)``, ``i < j``, with ``S_ij > 0``, and their weights.

    Parameters
    ----------
    S : (d, d) array-like or scipy sparse matrix/array
        Symmetric (within ``rtol`` of its largest entry), finite and non-negative. The
        diagonal is ignored.
    rtol : float, default 1e-8
        Tolerance of the symmetry check, relative to ``max |S|``.

    Returns
    -------
    edges : (l, 2) int64 array
        Row-major order of the upper triangle: sorted by ``i`` then ``j``, ``i < j``.
    weights : (l,) float64 array
        ``(S_ij + S_ji) / 2`` (positive).

    Raises
    ------
    ValueError
        Naming the problem: not square, not finite, negative entries, not symmetric.

    Examples
    --------
    >>> import numpy as np
    >>> S = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 1.0]])
    >>> edges, w = edges_from_similarity(S)
    >>> edges.tolist(), w.tolist()
    ([[0, 1], [1, 2]], [0.5, 0.2])
    """
    S = _dense_or_sparse(S)
    if sparse.issparse(S):
        vals = S.data
        T = S.T.tocsr()
        scale = _entry_scale(vals)
        diff = (S - T).tocoo()
        if diff.nnz and np.abs(diff.data).max() > rtol * max(scale, 1e-300):
            raise ValueError(
                f"S must be symmetric; max |S - S.T| = {np.abs(diff.data).max():.3g}. "
                "Use (S + S.T) / 2."
            )
        A = ((S + T) * 0.5).tocoo()
        keep = (A.row < A.col) & (A.data > 0)
        i, j, w = A.row[keep], A.col[keep], A.data[keep]
        order = np.lexsort((j, i))
        edges = np.column_stack([i[order], j[order]]).astype(np.int64)
        return edges, np.ascontiguousarray(w[order], dtype=np.float64)
    scale = _entry_scale(S)
    asym = float(np.abs(S - S.T).max()) if S.size else 0.0
    if asym > rtol * max(scale, 1e-300):
        raise ValueError(f"S must be symmetric; max |S - S.T| = {asym:.3g}. Use (S + S.T) / 2.")
    i, j = np.triu_indices(S.shape[0], k=1)
    w = 0.5 * (S[i, j] + S[j, i])
    keep = w > 0
    edges = np.column_stack([i[keep], j[keep]]).astype(np.int64)
    return edges, np.ascontiguousarray(w[keep])


def ledoit_wolf_similarity(X: Any, y: Any) -> np.ndarray:
    """Section 4's estimate of ``S``: Ledoit-Wolf covariance of the class-centred data.

    Each class is centred on its own mean, the centred samples are pooled, and
    scikit-learn's :class:`~sklearn.covariance.LedoitWolf` covariance is computed
    (``assume_centered=True``); negative entries are set to 0 and the diagonal to 0.

    Parameters
    ----------
    X : (n, d) array-like
    y : (n,) array-like of class labels (any hashable values)

    Returns
    -------
    (d, d) float64 ndarray, symmetric, non-negative, zero diagonal.

    Raises
    ------
    ValueError
        When the covariance itself overflows float64 (covariates near 1e154). Large
        covariates are otherwise handled: above 2^100 in magnitude the centred data
        are divided by a power of two (exact) before scikit-learn's fourth moments
        and the covariance multiplied back (Ledoit-Wolf is equivariant to a common
        scale: ``LW(s X) = s^2 LW(X)``); smaller ones are used as they are.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((50, 3)); X[:, 1] += X[:, 0]
    >>> S = ledoit_wolf_similarity(X, np.repeat([0, 1], 25))
    >>> S.shape, bool(S[0, 1] > 0.5), float(S[0, 0])
    ((3, 3), True, 0.0)
    """
    from sklearn.covariance import LedoitWolf

    X = np.asarray(X, dtype=np.float64)
    _, codes = np.unique(np.asarray(y), return_inverse=True)
    codes = codes.ravel()
    counts = np.bincount(codes)
    means = np.zeros((counts.size, X.shape[1]))
    np.add.at(means, codes, X)
    means /= counts[:, None]
    Xc = X - means[codes]
    top = float(np.abs(Xc).max()) if Xc.size else 0.0
    power = int(np.floor(np.log2(top))) if top > 2.0**100 else 0
    cov = LedoitWolf(assume_centered=True).fit(np.ldexp(Xc, -power)).covariance_
    with np.errstate(over="ignore"):
        cov = np.ldexp(cov, 2 * power)
    if not np.isfinite(cov).all():
        raise ValueError(
            f"the Ledoit-Wolf covariance of the covariates overflows float64 (largest "
            f"centred magnitude {top:.3g}). Standardise the covariates, e.g. "
            "(df - df.mean()) / df.std()."
        )
    S = np.maximum(0.5 * (cov + cov.T), 0.0)
    np.fill_diagonal(S, 0.0)
    return S


def knn_sparsify(S: Any, k: int) -> sparse.csr_array:
    """Keep each covariate's ``k`` largest similarities; symmetrise by union.

    Pair ``(i, j)`` is kept when ``j`` is among the ``k`` largest positive off-diagonal
    entries of row ``i`` or ``i`` among those of row ``j`` (ties broken by the smaller
    column index). Kept entries keep their value ``S_ij``.

    Parameters
    ----------
    S : (d, d) array-like or scipy sparse, symmetric non-negative
    k : int >= 1

    Returns
    -------
    scipy.sparse.csr_array (d, d), symmetric, zero diagonal.

    Examples
    --------
    >>> import numpy as np
    >>> S = np.array([[0, .9, .1, .2], [.9, 0, .3, .1], [.1, .3, 0, .8], [.2, .1, .8, 0]])
    >>> knn_sparsify(S, 1).toarray().tolist()
    [[0.0, 0.9, 0.0, 0.0], [0.9, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.8], [0.0, 0.0, 0.8, 0.0]]
    """
    k = int(k)
    if k < 1:
        raise ValueError(f"k must be an integer >= 1; got k={k}.")
    S = _dense_or_sparse(S)
    edges, w = edges_from_similarity(S)
    d = S.shape[0]
    # both directions of every edge, ranked within each row by (-weight, column)
    rows = np.concatenate([edges[:, 0], edges[:, 1]])
    cols = np.concatenate([edges[:, 1], edges[:, 0]])
    ww = np.concatenate([w, w])
    order = np.lexsort((cols, -ww, rows))
    rows_o = rows[order]
    starts = np.searchsorted(rows_o, np.arange(d))
    rank = np.arange(rows_o.size) - starts[rows_o]
    chosen = order[rank < k]
    e = chosen % max(edges.shape[0], 1)  # directed copy -> edge number
    keep = np.zeros(edges.shape[0], dtype=bool)
    keep[e] = True
    i, j, v = edges[keep, 0], edges[keep, 1], w[keep]
    out = sparse.coo_array(
        (np.concatenate([v, v]), (np.concatenate([i, j]), np.concatenate([j, i]))), shape=(d, d)
    )
    return out.tocsr()


def embedding_similarity(W: Any, k: int) -> sparse.csr_array:
    """Section 5.1: ``S_ij = exp(-||w_i - w_j||^2 / 2)`` on the k-nearest-neighbour graph.

    Parameters
    ----------
    W : (d, p) array-like
        One embedding vector per covariate (row).
    k : int >= 1
        Neighbours per covariate (Euclidean; the covariate itself excluded); the graph
        is symmetrised by union.

    Returns
    -------
    scipy.sparse.csr_array (d, d), symmetric, zero diagonal, entries in (0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> W = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.0, 5.2]])
    >>> S = embedding_similarity(W, 1)
    >>> np.round(S.toarray(), 3).tolist()[0], S.nnz
    ([0.0, 0.995, 0.0, 0.0], 4)
    """
    from sklearn.neighbors import NearestNeighbors

    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2:
        raise ValueError(f"W must be a 2-D (d, p) embedding array; got shape {W.shape}.")
    d = W.shape[0]
    k = int(k)
    if not 1 <= k <= d - 1:
        raise ValueError(f"k must be an integer in [1, d - 1] = [1, {d - 1}]; got k={k}.")
    nn = NearestNeighbors(n_neighbors=k + 1).fit(W)
    _, ind = nn.kneighbors(W)
    rows = np.repeat(np.arange(d), k + 1)
    cols = ind.ravel()
    off = rows != cols
    rows, cols = rows[off], cols[off]
    # union of both directions; the similarity from the vectors (exactly symmetric)
    i, j = np.minimum(rows, cols), np.maximum(rows, cols)
    key = np.unique(i * d + j)
    i, j = key // d, key % d
    v = np.exp(-0.5 * ((W[i] - W[j]) ** 2).sum(axis=1))
    v = np.maximum(v, np.finfo(float).tiny)  # far neighbours: keep the edge, positive weight
    out = sparse.coo_array(
        (np.concatenate([v, v]), (np.concatenate([i, j]), np.concatenate([j, i]))), shape=(d, d)
    )
    return out.tocsr()


# ============================================================================ problem data
@dataclass(frozen=True, eq=False)
class _Problem:
    """Arrays shared by every ADMM run on one data set and graph."""

    X: np.ndarray  # (n, d) float64
    y: np.ndarray  # (n,) int64 codes 0..c-1
    n: int
    d: int
    c: int
    edges: np.ndarray  # (l, 2) int64, i < j
    weights: np.ndarray  # (l,)
    idx: np.ndarray  # (2l,) owner of each copy: edges[:, 0] then edges[:, 1]
    AT: sparse.csr_array  # (d, 2l) incidence: AT @ Q sums the copies of each covariate
    deg: np.ndarray  # (d,) float64 number of edges at each covariate
    rows: np.ndarray = field(repr=False)  # arange(n)

    @property
    def l(self) -> int:  # noqa: E743
        return int(self.edges.shape[0])


def _prepare(
    X: Any, y: Any, n_classes: int, edges: Any, weights: Any, check: bool = True
) -> _Problem:
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D (n, d) array; got shape {X.shape}.")
    if check:
        check_magnitude(X)
    n, d = X.shape
    y = np.asarray(y)
    if y.shape != (n,):
        raise ValueError(f"y must have shape ({n},) to match X; got shape {y.shape}.")
    if not np.issubdtype(y.dtype, np.integer):
        raise ValueError(f"y must hold integer class codes 0..c-1; got dtype {y.dtype}.")
    c = int(n_classes)
    if c < 2:
        raise ValueError(f"n_classes must be >= 2; got n_classes={c}.")
    if y.size and (y.min() < 0 or y.max() >= c):
        raise ValueError(f"y must hold class codes in 0..{c - 1}; got {y.min()}..{y.max()}.")
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    weights = np.asarray(weights, dtype=np.float64).ravel()
    if weights.shape[0] != edges.shape[0]:
        raise ValueError(
            f"weights must have one entry per edge ({edges.shape[0]}); got {weights.shape[0]}."
        )
    if edges.size and (edges.min() < 0 or edges.max() >= d or np.any(edges[:, 0] >= edges[:, 1])):
        raise ValueError(f"edges must be pairs (i, j) with 0 <= i < j < d = {d}.")
    if weights.size and (not np.isfinite(weights).all() or weights.min() <= 0):
        raise ValueError("weights must be finite and > 0 (edges are the pairs with S_ij > 0).")
    l = edges.shape[0]  # noqa: E741
    idx = np.concatenate([edges[:, 0], edges[:, 1]])
    AT = sparse.csr_array(
        (np.ones(2 * l), (idx, np.arange(2 * l))), shape=(d, 2 * l), dtype=np.float64
    )
    deg = np.bincount(idx, minlength=d).astype(np.float64)
    return _Problem(
        X=X,
        y=y.astype(np.int64),
        n=n,
        d=d,
        c=c,
        edges=edges,
        weights=weights,
        idx=idx,
        AT=AT,
        deg=deg,
        rows=np.arange(n),
    )


# ============================================================================ pieces
def _nll(prob: _Problem, W: np.ndarray, beta: np.ndarray) -> tuple[float, np.ndarray]:
    """Multinomial NLL and ``P - Y`` (n x c) at ``W`` (d x c), ``beta`` (c)."""
    F = prob.X @ W
    F += beta
    mx = F.max(axis=1, keepdims=True)
    E = np.exp(F - mx)
    se = E.sum(axis=1, keepdims=True)
    nll = float(np.log(se).sum() + mx.sum() - F[prob.rows, prob.y].sum())
    E /= se
    E[prob.rows, prob.y] -= 1.0
    return nll, E


def quad_terms(Q: np.ndarray, AT: sparse.csr_array) -> tuple[float, np.ndarray]:
    """``q_all = sum_k ||q_k||^2`` and ``q_up = AT @ Q`` (``q_up_i`` = sum of ``i``'s copies).

    ``O(lc)``, done once per ADMM iteration (appendix A.1).
    """
    return float(np.einsum("ij,ij->", Q, Q)), AT @ Q


def quad_penalty(
    W: np.ndarray, q_all: float, q_up: np.ndarray, deg: np.ndarray, rho: float
) -> tuple[float, np.ndarray]:
    """``rho/2 sum_k ||q_k - w_{owner(k)}||^2`` and its gradient in ``W`` in ``O(dc)``.

    ``= rho/2 (q_all - 2 sum_i w_i . q_up_i + sum_i deg_i ||w_i||^2)`` (appendix A.1);
    gradient ``rho (deg_i w_i - q_up_i)``.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import sparse
    >>> W = np.array([[1.0, 0.0], [0.0, 1.0]]); Q = np.array([[1.0, 1.0], [0.0, 0.0]])
    >>> AT = sparse.csr_array(np.array([[1.0, 0.0], [0.0, 1.0]]))  # copy 0 of w_0, 1 of w_1
    >>> q_all, q_up = quad_terms(Q, AT)
    >>> val, grad = quad_penalty(W, q_all, q_up, np.array([1.0, 1.0]), 2.0)
    >>> val, grad.tolist()  # rho/2 (||(0, 1)||^2 + ||(0, -1)||^2) = 2
    (2.0, [[0.0, -2.0], [0.0, 2.0]])
    """
    ww = np.einsum("ij,ij->i", W, W)
    val = 0.5 * rho * (q_all - 2.0 * float(np.einsum("ij,ij->", W, q_up)) + float(deg @ ww))
    grad = rho * (deg[:, None] * W - q_up)
    return val, grad


def z_update(
    M1: np.ndarray, M2: np.ndarray, nu_w: np.ndarray, rho: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Closed-form z-step for all edges (eq. (2); Hallac et al. 2015).

    Minimises, per edge ``e``,
    ``nu_w[e] ||z1 - z2|| + rho/2 ||z1 - m1||^2 + rho/2 ||z2 - m2||^2`` with
    ``m1 = b_i - u_{i->j}`` and ``m2 = b_j - u_{j->i}``.

    Parameters
    ----------
    M1, M2 : (l, c) arrays
    nu_w : (l,) array, ``nu_n * S_ij`` (>= 0)
    rho : float > 0

    Returns
    -------
    Z1, Z2 : (l, c) arrays
        ``theta m1 + (1 - theta) m2`` and ``(1 - theta) m1 + theta m2``; when
        ``theta == 0.5`` both are computed by the same expression, so exactly equal.
    theta : (l,) array
        ``max(1 - nu_w / (rho ||m1 - m2||), 0.5)``; 0.5 when ``m1 == m2`` and
        ``nu_w > 0``; 1 when ``nu_w == 0`` (no coupling).

    Examples
    --------
    >>> import numpy as np
    >>> Z1, Z2, th = z_update(np.array([[4.0, 0.0]]), np.array([[0.0, 0.0]]), np.array([1.0]), 1.0)
    >>> Z1.tolist(), Z2.tolist(), th.tolist()
    ([[3.0, 0.0]], [[1.0, 0.0]], [0.75])
    >>> z_update(np.array([[2.0, 0.0]]), np.array([[0.0, 0.0]]), np.array([1.0]), 1.0)[2].tolist()
    [0.5]
    """
    D = M1 - M2
    h = np.sqrt(np.einsum("ij,ij->i", D, D))
    ratio = np.divide(nu_w, rho * h, out=np.full_like(h, np.inf), where=h > 0)
    theta = np.maximum(1.0 - ratio, 0.5)
    theta[nu_w == 0] = 1.0
    t = theta[:, None]
    Z1 = t * M1 + (1.0 - t) * M2
    Z2 = (1.0 - t) * M1 + t * M2
    half = theta == 0.5
    if half.any():  # the same expression for both copies: exactly equal
        mid = 0.5 * M1[half] + 0.5 * M2[half]
        Z1[half] = mid
        Z2[half] = mid
    return Z1, Z2, theta


def canonical_labels(labels: Any) -> np.ndarray:
    """Relabel so clusters are numbered 0, 1, ... by first appearance.

    Examples
    --------
    >>> canonical_labels([5, 5, 2, 7, 2]).tolist()
    [0, 0, 1, 2, 1]
    """
    labels = np.asarray(labels)
    _, first, inv = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inv.ravel()]


def labels_from_edges(d: int, edges: np.ndarray, keep: np.ndarray | None = None) -> np.ndarray:
    """Canonical labels of the connected components of the graph of ``edges[keep]``.

    Examples
    --------
    >>> import numpy as np
    >>> labels_from_edges(4, np.array([[0, 2], [1, 3]]), np.array([True, False])).tolist()
    [0, 1, 0, 2]
    """
    e = np.asarray(edges).reshape(-1, 2)
    if keep is not None:
        e = e[np.asarray(keep, dtype=bool)]

    g = sparse.coo_array((np.ones(e.shape[0]), (e[:, 0], e[:, 1])), shape=(d, d))
    _, lab = connected_components(g, directed=False)
    return canonical_labels(lab)


def objective(
    X: Any, y: Any, B: Any, beta: Any, edges: Any, weights: Any, nu_n: float, lam: float
) -> float:
    """``NLL(B, beta) + lam ||B||_F^2 + nu_n sum_e S_e ||B[:, i] - B[:, j]||`` (B is c x d).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.zeros((2, 2)); y = np.array([0, 1]); B = np.array([[1.0, 0.0], [0.0, 0.0]])
    >>> round(objective(X, y, B, np.zeros(2), np.array([[0, 1]]), np.array([0.5]), 2.0, 0.1), 6)
    2.486294
    """
    X = np.asarray(X, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    F = X @ B.T + np.asarray(beta, dtype=np.float64)
    mx = F.max(axis=1, keepdims=True)
    lse = np.log(np.exp(F - mx).sum(axis=1)) + mx[:, 0]
    nll = float(lse.sum() - F[np.arange(y.size), y].sum())
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    diff = B[:, e[:, 0]] - B[:, e[:, 1]]
    pen = float(np.asarray(weights, dtype=np.float64) @ np.sqrt((diff * diff).sum(axis=0)))
    return nll + lam * float((B * B).sum()) + nu_n * pen


# ============================================================================ B-step
class _Precond:
    """Newton preconditioner of the B-step: L-BFGS runs on ``v = L^T x``, ``H = L L^T``.

    ``x = [W.ravel(), beta]`` (``W`` row-major ``d x c``); ``H`` is the Hessian of the
    NLL at the point where it was built plus ``diag(2 lam + rho deg)`` on ``W`` (the
    exact Hessian of ``g`` there), with a small ridge on the unpenalised intercepts.
    Dense (Cholesky) up to ``DENSE_MAX`` variables; above it, when ``n < LOWRANK_RATIO
    (d + 1)``, the per-class blocks ``X1^T diag(p_k (1 - p_k)) X1 + D_k`` (cross-class
    terms dropped) in the factored form of :meth:`_factor_lowrank`, applied in
    ``O(r (d + 1) c)``; else its diagonal. The NLL part is
    rebuilt once the L-BFGS iterations beyond ``REFRESH_NIT`` per B-step (the cost of
    a stale Hessian) add up to the cost of a rebuild (a flop count, so the choice is
    deterministic); the factor is recomputed when ``rho`` changes. scipy's L-BFGS then
    needs a few iterations per B-step instead of ~50 (the NLL Hessian is far from a
    multiple of the identity: correlated covariates, nearly separable classes).
    """

    def __init__(self, prob: _Problem, lam: float, single: bool = False) -> None:
        self.prob = prob
        self.lam = lam
        self.N = (prob.d + 1) * prob.c
        self.dense = self.N <= DENSE_MAX
        # single precision for the dense factor above INVERSE_MAX (B-step only: the
        # preconditioner is only an initial inverse Hessian there, any SPD matrix is
        # valid; _lbfgs's iterates pass through to_x, so it keeps double precision)
        self.single = bool(single) and self.dense and self.N > INVERSE_MAX
        self.dtype = np.float32 if self.single else np.float64
        # above DENSE_MAX: per-class blocks through an n x n eigendecomposition when
        # the samples are fewer than the covariates, else the diagonal
        self.lowrank = not self.dense and prob.n < LOWRANK_RATIO * (prob.d + 1)
        self.H0: np.ndarray | None = None
        self.rho = np.nan
        self._X1 = self._Dk = self._Xs = self._K = None
        self._U: dict[int, np.ndarray] = {}
        # deterministic cost model (flops; matrix-matrix flops count 1/10, ~3e6 for
        # the Python overhead of a build, ~2e5 for an L-BFGS iteration): rebuild once
        # the iterations wasted by a stale Hessian cost more than a rebuild
        n, d, c, N = prob.n, prob.d, prob.c, self.N
        if self.dense:
            self.build_cost = 0.1 * (c * (c + 1) * n * (d + 1) ** 2 + N**3 / 3) + 3e6
            self.iter_cost = 4.0 * n * d * c + 2.0 * N**2 + 2e5
        elif self.lowrank:
            # ~10 L-BFGS iterations per B-step even with a fresh Hessian here (not
            # REFRESH_NIT), so the waste is over-counted ~10x: no 0.1 discount
            self.build_cost = c * (2.0 * n * n * (d + 1) + 10.0 * n**3) + 3e6
            self.iter_cost = 4.0 * n * d * c + 8.0 * LOWRANK_RANK * N + 2e5
        else:
            self.build_cost = 4.0 * n * d * c + 3e6
            self.iter_cost = 4.0 * n * d * c + 2e5
        self.wasted = 0.0

    def _to_double(self) -> None:
        """Leave single precision: rebuild ``H0`` in double at the last build's point."""
        self.single = False
        self.dtype = np.float64
        self._X1 = None
        self.build(*self._point)

    def build(self, W: np.ndarray, beta: np.ndarray) -> None:
        prob = self.prob
        d, c = prob.d, prob.c
        self._point = (W.copy(), beta.copy())
        F = prob.X @ W
        F += beta
        F -= F.max(axis=1, keepdims=True)
        P = np.exp(F)
        P /= P.sum(axis=1, keepdims=True)
        if self.dense:
            if self._X1 is None:
                self._X1 = np.empty((prob.n, d + 1), dtype=self.dtype)
                self._X1[:, :d] = prob.X
                self._X1[:, d] = 1.0
            X1 = self._X1

            (syrk,) = get_blas_funcs(("syrk",), (X1,))
            H = np.empty((d + 1, c, d + 1, c), dtype=self.dtype)
            for k in range(c):
                for m in range(k, c):
                    # the weights p_k (1 - p_k) >= 0, -p_k p_m <= 0: each block is
                    # +-(sqrt|a| X1)^T (sqrt|a| X1), a symmetric rank-n update (syrk),
                    # computed in its lower triangle only (zeros above)
                    a = P[:, k] * (float(k == m) - P[:, m])
                    sgn = 1.0 if k == m else -1.0
                    sw = np.sqrt(np.abs(a)).astype(self.dtype)[:, None]
                    blk = syrk(sgn, X1 * sw, trans=1, lower=1)
                    H[:, k, :, m] = blk
                    if m != k:
                        H[:, m, :, k] = blk
            # only the lower triangle of H0 is right (entries (i, k), (j, m) with i > j
            # come from the blocks' lower triangles; i == j from their diagonals), all
            # the Cholesky factorisation reads; above it, zeros or copies
            self.H0 = H.reshape(self.N, self.N)
        elif self.lowrank:
            # the class blocks X1^T diag(p_k (1 - p_k)) X1, kept as the weights
            self.H0 = P * (1.0 - P)  # (n, c)
        else:
            a = P * (1.0 - P)  # (n, c)
            hW = (prob.X * prob.X).T @ a  # (d, c)
            self.H0 = np.concatenate([hW.ravel(), a.sum(axis=0)])
        self.rho = np.nan  # force a new factor

    def _factor_lowrank(self, add: np.ndarray, extra: np.ndarray | None) -> None:
        """Per class ``k``: ``H_k = D_k + X1^T diag(a_k) X1 ~ L_k L_k^T`` with
        ``L_k = D_k^{1/2} (I + V_k diag(f) V_k^T)``, ``V_k`` from the leading
        eigenpairs of the ``n x n`` matrix ``Y_k Y_k^T``,
        ``Y_k = diag(a_k)^{1/2} X1 D_k^{-1/2}`` (no ``d x d`` matrix; ``O(n^2 d)`` when
        ``D`` changes, ``O(n^2 r + n d r)`` per class otherwise). Only the
        ``LOWRANK_RANK`` largest eigenvalues above ``LOWRANK_EIG`` are kept: the rest
        change ``L_k`` by less than a factor ``sqrt(1 + LOWRANK_EIG)`` along their
        directions (a preconditioner, so any such ``L`` is valid)."""
        prob = self.prob
        n, d, c = prob.n, prob.d, prob.c
        A = self.H0  # (n, c)
        D = np.broadcast_to(add.reshape(d + 1, c), (d + 1, c)).copy()
        if extra is not None:
            D += extra.reshape(d + 1, c)
        D[d] += 1e-3 * max(float(A.sum(axis=0).mean()), 1e-12)
        hmean = float((prob.X * prob.X).sum(axis=1) @ A.sum(axis=1)) / max(d * c, 1)
        D += 1e-12 * max(float(D.mean()), 1.0) + 1e-9 * hmean
        if self._X1 is None:
            self._X1 = np.empty((n, d + 1))
            self._X1[:, :d] = prob.X
            self._X1[:, d] = 1.0
        rmax = min(n, LOWRANK_RANK)
        Vs, fs = [], []
        lmax = 0.0
        for k in range(c):
            Dk = D[:, k]
            if self._Dk is None or not np.array_equal(self._Dk, Dk):
                self._Dk = Dk.copy()
                self._Xs = self._X1 / np.sqrt(Dk)
                self._K = self._Xs @ self._Xs.T
            sa = np.sqrt(A[:, k])
            G = self._K * sa[:, None]
            G *= sa
            e, U = self._leading(k, G, rmax)
            keep = e > LOWRANK_EIG
            e, U = e[keep], U[:, keep]
            # V = Y^T U e^{-1/2}: orthonormal columns
            Vs.append(self._Xs.T @ (U * (sa[:, None] / np.sqrt(e))))
            fs.append(e)
            top = float(e.max()) if e.size else 0.0
            lmax = max(lmax, float(Dk.max()) * (1.0 + top))
        r = max(v.shape[1] for v in Vs)
        V = np.zeros((c, d + 1, r))
        E = np.zeros((c, r))
        for k in range(c):
            V[k, :, : Vs[k].shape[1]] = Vs[k]
            E[k, : fs[k].size] = fs[k]
        self.V = V
        self.Vt = np.ascontiguousarray(V.transpose(0, 2, 1))
        self.fh = (np.sqrt(1.0 + E) - 1.0)[:, :, None]
        self.fi = (1.0 / np.sqrt(1.0 + E) - 1.0)[:, :, None]
        self.sqD = np.sqrt(D).T[:, :, None]  # (c, d + 1, 1)
        self.lmax = lmax

    def _leading(self, k: int, G: np.ndarray, r: int) -> tuple[np.ndarray, np.ndarray]:
        """Approximate leading ``r`` eigenpairs of ``G`` (PSD): ``LOWRANK_POWER`` block
        power steps from the previous ones of class ``k`` (a fixed random block at first),
        then Rayleigh-Ritz; the full eigendecomposition when ``r`` is most of ``n``."""
        n = G.shape[0]
        if 2 * r >= n:
            e, U = eigh(G, subset_by_index=(n - r, n - 1), driver="evr", check_finite=False)
            return np.maximum(e, 0.0), U
        Q = self._U.get(k)
        if Q is None or Q.shape != (n, r):
            Q = np.random.default_rng(k).standard_normal((n, r))
            steps = LOWRANK_POWER + 2
        else:
            steps = LOWRANK_POWER
        for _ in range(steps):
            Q = np.linalg.qr(G @ Q)[0]
        e, Wr = np.linalg.eigh(Q.T @ G @ Q)
        U = Q @ Wr
        self._U[k] = U
        return np.maximum(e, 0.0), U

    def _S(self, u: np.ndarray, f: np.ndarray) -> np.ndarray:
        """``(I + V diag(f) V^T) u`` per class; ``u`` is ``(c, d + 1, 1)``."""
        return u + self.V @ (f * (self.Vt @ u))

    def _blocks(self, x: np.ndarray) -> np.ndarray:
        c = self.prob.c
        return np.ascontiguousarray(x.reshape(-1, c).T)[:, :, None]

    @staticmethod
    def _flat(u: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(u[:, :, 0].T).ravel()

    def factor(self, rho: float, extra: np.ndarray | None = None) -> None:
        """Factor ``H0 + diag(2 lam + rho deg) (+ extra)``; ``extra`` is an ``N x N``
        matrix (dense) or the diagonal to add (diagonal and low-rank preconditioners)."""
        prob = self.prob
        c = prob.c
        add = np.concatenate([np.repeat(2.0 * self.lam + rho * prob.deg, c), np.zeros(c)])
        if self.lowrank:
            self._factor_lowrank(add, extra)
            self.rho = rho
            return
        if self.dense:
            H = self.H0.copy() if extra is None else self.H0 + extra
            diag = np.einsum("ii->i", H)
            diag += add
            jitter = 1e-3 * max(float(diag[-c:].mean()), 1e-12)
            diag[-c:] += jitter
            diag += (1e-6 if self.single else 1e-12) * max(float(diag.mean()), 1.0)

            if self.single:
                try:
                    self.L = cholesky(H, lower=True, check_finite=False)
                except np.linalg.LinAlgError:
                    # rounded to single precision, a badly scaled H (a covariate at
                    # 1e6 beside unit ones) is indefinite: rebuild it in double
                    self._to_double()
                    self.factor(rho, extra)
                    return
            else:
                self.L, H = _jittered_cholesky(H)
            # small: explicit inverse, then products (a triangular solve's call
            # overhead dominates there); large: triangular solves
            self.Linv = (
                solve_triangular(self.L, np.eye(self.N), lower=True, check_finite=False)
                if self.N <= INVERSE_MAX
                else None
            )
            # ||L||_2^2 = lambda_max(H) <= max absolute row sum (Gershgorin) of the
            # symmetric H read off its lower triangle (H holds zeros or duplicates
            # above the diagonal); only _lbfgs needs it (never the single precision)
            self.lmax = np.inf
            if not self.single:
                low = np.tril(np.abs(H))
                rows = low.sum(axis=1) + low.sum(axis=0) - np.einsum("ii->i", low)
                self.lmax = float(rows.max())
        else:
            h = self.H0 + add if extra is None else self.H0 + add + extra
            h[-c:] += 1e-3 * max(float(h[-c:].mean()), 1e-12)
            h += 1e-12 * max(float(h.mean()), 1.0)
            self.sq = np.sqrt(h)
            self.lmax = float(h.max())
        self.rho = rho

    def prepare(self, W: np.ndarray, beta: np.ndarray, rho: float) -> None:
        if self.H0 is None or self.wasted > self.build_cost:
            self.build(W, beta)
            self.wasted = 0.0
        if np.isnan(self.rho):  # new build; a change of rho alone keeps the factor
            self.factor(rho)

    def record(self, nit: int) -> None:
        """Account the L-BFGS iterations beyond ``REFRESH_NIT`` of a B-step as waste."""
        self.wasted += max(nit - REFRESH_NIT, 0) * self.iter_cost

    def inv_apply(self, g: np.ndarray) -> np.ndarray:
        """``(L L^T)^{-1} g``: the initial inverse Hessian of :func:`_qn` (for a large
        dense factor two triangular solves in its precision; LAPACK's ``potrs`` was
        3x slower here)."""
        if self.dense and self.Linv is None:
            L = self.L
            v = solve_triangular(L, g.astype(L.dtype), lower=True, check_finite=False)
            v = solve_triangular(L, v, lower=True, trans="T", check_finite=False)
            return v.astype(np.float64)
        return self.to_x(self.grad_v(g))

    def to_x(self, v: np.ndarray) -> np.ndarray:
        if self.lowrank:
            return self._flat(self._S(self._blocks(v), self.fi) / self.sqD)
        if not self.dense:
            return v / self.sq
        if self.Linv is not None:
            return self.Linv.T @ v

        v = v.astype(self.L.dtype)
        return solve_triangular(self.L, v, lower=True, trans="T", check_finite=False).astype(
            np.float64
        )

    def to_v(self, x: np.ndarray) -> np.ndarray:
        if self.lowrank:
            return self._flat(self._S(self._blocks(x) * self.sqD, self.fh))
        return (self.L.T @ x).astype(np.float64) if self.dense else x * self.sq

    def grad_v(self, gx: np.ndarray) -> np.ndarray:
        if self.lowrank:
            return self._flat(self._S(self._blocks(gx) / self.sqD, self.fi))
        if not self.dense:
            return gx / self.sq
        if self.Linv is not None:
            return self.Linv @ gx

        gx = gx.astype(self.L.dtype)
        return solve_triangular(self.L, gx, lower=True, check_finite=False).astype(np.float64)

    def grad_x(self, gv: np.ndarray) -> np.ndarray:
        if self.lowrank:
            return self._flat(self._S(self._blocks(gv), self.fh) * self.sqD)
        return (self.L @ gv).astype(np.float64) if self.dense else gv * self.sq


def _jittered_cholesky(H: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower Cholesky factor of the double-precision preconditioner matrix ``H`` (its
    lower triangle read), jittered when rounding left it indefinite.

    ``H`` is positive semi-definite plus a ridge in exact arithmetic, but with
    covariates of very different scales (one at 1e12 beside unit ones, few rows) its
    rounding can leave it indefinite. Then ``H + tau I`` with ``tau`` = 1e-12, 1e-10,
    ... 1e4 times the largest diagonal entry, and last the diagonal alone (plus that
    ``tau``): a preconditioner is only an initial inverse Hessian, any positive
    definite matrix is valid. Returns the factor and the matrix factored (the
    Lipschitz bound of ``_lbfgs`` is read off it); a definite ``H`` is factored as it
    is.
    """
    try:
        return cholesky(H, lower=True, check_finite=False), H
    except np.linalg.LinAlgError:
        pass
    diag = np.einsum("ii->i", H).copy()
    top = float(np.max(np.abs(diag))) if diag.size else 1.0
    top = top if np.isfinite(top) and top > 0 else 1.0
    for tau in top * 10.0 ** np.arange(-12, 5, 2):
        J = H.copy()
        np.einsum("ii->i", J)[:] = diag + tau
        try:
            return cholesky(J, lower=True, check_finite=False), J
        except np.linalg.LinAlgError:
            continue
    J = np.diag(np.maximum(diag, 0.0) + 1e4 * top)
    return np.sqrt(J), J


class _Reached(Exception):
    """Raised by the objective once a point meets the B-step's gradient target."""

    def __init__(self, x: np.ndarray, gnorm: float) -> None:
        self.x, self.gnorm = x, gnorm


def _lbfgs(
    fg_x: Any, x0: np.ndarray, pre: _Precond, target: float, max_iter: int = 5000
) -> tuple[np.ndarray, int, float]:
    """scipy L-BFGS on ``v = L^T x``; stops once ``||grad_x||_2 <= target``.

    ``fg_x(x) -> (value, gradient in x)``. Every evaluated point whose gradient in
    ``x`` has 2-norm ``<= target`` ends the run (the exact test, at no extra cost);
    scipy's own ``gtol`` test (a bound through ``||L||_2``) stays as a fallback.
    Returns ``x``, the iterations and the 2-norm of the gradient in ``x`` at the
    returned point.
    """
    nit = [0]

    def fg(v: np.ndarray) -> tuple[float, np.ndarray]:
        x = pre.to_x(v)
        val, gx = fg_x(x)
        gn = float(np.sqrt(gx @ gx))
        if gn <= target:
            raise _Reached(x, gn)
        return val, pre.grad_v(gx)

    def count(intermediate_result: Any) -> None:
        nit[0] += 1

    # ||g_x||_2 <= ||L||_2 ||g_v||_2 <= sqrt(lmax N) ||g_v||_inf
    gtol = target / np.sqrt(pre.lmax * pre.N)
    try:
        res = minimize(
            fg,
            pre.to_v(x0),
            jac=True,
            method="L-BFGS-B",
            callback=count,
            options={"maxcor": 10, "gtol": gtol, "ftol": 1e-15, "maxiter": int(max_iter)},
        )
    except _Reached as done:
        return done.x, nit[0], done.gnorm
    g = pre.grad_x(np.asarray(res.jac))
    return pre.to_x(res.x), int(res.nit), float(np.sqrt(g @ g))


class _Memory:
    """L-BFGS curvature pairs ``(s, y)`` in ``x`` for one B-step (see :func:`_qn`)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.S: list[np.ndarray] = []
        self.Y: list[np.ndarray] = []

    def add(self, s: np.ndarray, y: np.ndarray) -> None:
        if float(s @ y) <= 1e-12 * float(y @ y):
            return
        self.S.append(s)
        self.Y.append(y)
        if len(self.S) > self.size:
            del self.S[0], self.Y[0]

    def direction(self, g: np.ndarray, pre: _Precond) -> np.ndarray:
        """``-H g``: two-loop recursion with ``H0 = (L L^T)^{-1}``."""
        q = g.copy()
        al = []
        rs = [1.0 / float(y @ s) for s, y in zip(self.S, self.Y, strict=True)]
        for s, y, r in zip(reversed(self.S), reversed(self.Y), reversed(rs), strict=True):
            a = r * float(s @ q)
            q -= a * y
            al.append(a)
        q = pre.inv_apply(q)
        for s, y, r, a in zip(self.S, self.Y, rs, reversed(al), strict=True):
            b = r * float(y @ q)
            q += (a - b) * s
        return -q


def _qn(
    fg_x: Any,
    x0: np.ndarray,
    pre: _Precond,
    target: float,
    mem: _Memory,
    max_iter: int = 5000,
    rel: float = 0.0,
    rebuild: Any = None,
) -> tuple[np.ndarray, int, float]:
    """Preconditioned L-BFGS in ``x`` (initial inverse Hessian ``(L L^T)^{-1}``).

    Unit first step (a Newton step with a fresh preconditioner), Armijo backtracking;
    stops once ``||grad||_2 <= max(target, rel ||grad(x0)||_2)``. ``rebuild(x)``, if
    given, refreshes ``pre`` at ``x`` once the iterations beyond ``REFRESH_NIT`` cost
    more than a rebuild (the pairs in ``mem`` stay valid: they are in ``x``). Returns
    ``x``, the iterations and the gradient's 2-norm at ``x``.
    """
    x = x0
    f, g = fg_x(x)
    gn = float(np.sqrt(g @ g))
    target = max(target, rel * gn)
    nit = 0
    while gn > target and nit < max_iter:
        d = mem.direction(g, pre)
        slope = float(g @ d)
        if not slope < 0.0:
            mem.S.clear()
            mem.Y.clear()
            d = mem.direction(g, pre)
            slope = float(g @ d)
            if not slope < 0.0:
                break
        t = 1.0
        # below ~1e-12 |f| the function values no longer resolve the decrease of a
        # (quasi-)Newton step (n = 4000: |f| ~ 1e3, predicted decrease ~ 1e-15 near
        # the B-step targets of a refined ADMM): there a step that does not raise f
        # beyond that and lowers the gradient norm is accepted (the gradient is what
        # the stop tests), instead of 34 halvings that cannot succeed
        fround = FROUND * max(abs(f), 1.0)
        while True:  # at most LS_MAX_HALVINGS halvings: 2^-34 < 1e-10
            xn = x + t * d
            fn, gnew = fg_x(xn)
            if fn <= f + 1e-4 * t * slope or t < 1e-10:
                break
            if fn <= f + fround and float(gnew @ gnew) < gn * gn:
                break
            t *= 0.5
        if not (
            fn <= f + 1e-4 * t * slope or (fn <= f + fround and float(gnew @ gnew) < gn * gn)
        ):  # no decrease: numerical floor
            if mem.S:
                mem.S.clear()
                mem.Y.clear()
                continue
            break
        nit += 1
        if rebuild is not None and nit > REFRESH_NIT:
            pre.wasted += pre.iter_cost  # an iteration beyond REFRESH_NIT: waste
            if pre.wasted > pre.build_cost:
                rebuild(xn)
        mem.add(xn - x, gnew - g)
        x, f, g = xn, fn, gnew
        gn = float(np.sqrt(g @ g))
    return x, nit, gn


def _qn_cap(pre: _Precond) -> int:
    """Quasi-Newton iterations allowed to one B-step with preconditioner ``pre``."""
    if pre.dense:
        return QN_MAX_ITER_DENSE
    return QN_MAX_ITER_LOWRANK if pre.lowrank else QN_MAX_ITER_DIAG


def _smooth_fg(prob: _Problem, coef: np.ndarray, rq: np.ndarray | None, const: float) -> Any:
    """``x -> (NLL + sum_i coef_i ||w_i||^2 - <W, rq> + const, gradient)`` in ``O(ndc)``."""
    d, c = prob.d, prob.c
    dc = d * c
    X = prob.X
    flat = prob.rows * c + prob.y  # positions of the observed classes in F.ravel()
    coef2 = (2.0 * coef)[:, None]
    gx = np.empty(dc + c)
    gW = gx[:dc].reshape(d, c)

    def fg_x(x: np.ndarray) -> tuple[float, np.ndarray]:
        Wx = x[:dc].reshape(d, c)
        F = X @ Wx
        F += x[dc:]
        mx = F.max(axis=1, keepdims=True)
        F -= mx
        E = np.exp(F)
        se = E.sum(axis=1, keepdims=True)
        val = float(np.log(se).sum() - F.take(flat).sum())
        E /= se
        E.ravel()[flat] -= 1.0
        np.matmul(X.T, E, out=gW)
        gW[:] += coef2 * Wx
        val += float(coef @ np.einsum("ij,ij->i", Wx, Wx)) + const
        if rq is not None:
            val -= float(np.einsum("ij,ij->", Wx, rq))
            gW[:] -= rq
        gx[dc:] = E.sum(axis=0)
        return val, gx.copy()

    return fg_x


def _b_step(
    prob: _Problem,
    W: np.ndarray,
    beta: np.ndarray,
    lam: float,
    rho: float,
    q_all: float,
    q_up: np.ndarray | None,
    target: float,
    pre: _Precond | None = None,
    rel: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, int, float]:
    """L-BFGS on ``NLL + lam ||W||^2 + rho/2 sum ||q_k - w_owner(k)||^2`` (warm start).

    ``q_all``, ``q_up`` from :func:`quad_terms` make each evaluation ``O(ndc + dc)``
    (no per-edge work). Stops when the gradient's 2-norm is surely ``<= target``, or
    after ``_qn_cap(pre)`` iterations (then the gradient norm returned is above it).

    Returns ``W``, ``beta``, the L-BFGS iterations and the 2-norm of the gradient at
    the returned point (the B-step's inexactness).
    """
    d, c = prob.d, prob.c
    if pre is None:
        pre = _Precond(prob, lam, single=True)
    pre.prepare(W, beta, rho)
    coef = lam + 0.5 * rho * prob.deg  # (d,)
    rq = rho * q_up if q_up is not None else None
    fg_x = _smooth_fg(prob, coef, rq, 0.5 * rho * q_all)

    def rebuild(x: np.ndarray) -> None:
        pre.build(x[: d * c].reshape(d, c), x[d * c :])
        pre.wasted = 0.0
        pre.factor(rho)

    x0 = np.concatenate([W.ravel(), beta])
    cap = _qn_cap(pre)
    x, nit, gnorm = _qn(
        fg_x, x0, pre, target, _Memory(QN_MEM), max_iter=cap, rel=rel, rebuild=rebuild
    )
    return x[: d * c].reshape(d, c).copy(), x[d * c :].copy(), nit, gnorm


# ============================================================================ ADMM
@dataclass(frozen=True, eq=False)
class AdmmResult:
    """The ADMM state and clustering for one ``nu`` (returned by :func:`admm_fit`).

    Attributes
    ----------
    B : (c, d) ndarray
        Class weights at the final iterate (column ``i`` = covariate ``i``).
    beta : (c,) ndarray
        Intercepts (mean zero: the softmax is invariant to a common shift).
    Z, U : (2l, c) ndarrays
        Copies ``z`` and scaled duals ``u``: rows ``0..l-1`` are ``z_{i->j}`` of edge
        ``(i, j)``, rows ``l..2l-1`` are ``z_{j->i}`` (edge order of ``edges``).
    rho : float
        Penalty parameter at the end (after residual balancing); pass on to warm-start.
    nu, nu_n : float
        The ``nu`` given and ``nu_n = n * nu``, the multiplier actually used.
    n_iter : int
        ADMM iterations run (0 for a solution obtained in closed form).
    converged : bool
        Both residuals (and the B-step's gradient) below ``eps`` within ``max_iter``,
        no B-step having stalled (``inner_stalled``).
    fused : (l,) bool ndarray
        ``theta == 0.5`` at the final z-step (edge order of ``edges``).
    labels : (d,) int64 ndarray
        Canonical clusters: connected components of the fused edges, numbered by
        first appearance over covariates ``0..d-1``.
    n_clusters : int
    objective : float
        ``NLL + lam ||B||^2 + nu_n sum_e S_e ||b_i - b_j||`` at ``(B, beta)``.
    primal_residual, dual_residual, eps : float
        ``||z - b||``, ``rho ||z^k - z^{k-1}||`` at the last iteration and the
        threshold ``sqrt(c (d + 2l)) * tol``.
    lbfgs_iter : int
        Total L-BFGS iterations over all B-steps.
    inner_stalled : bool
        A B-step stopped short of its gradient target, at its iteration cap
        (:func:`_qn_cap`) or at its numerical floor (no descent direction left); the
        ADMM stopped there (``converged`` is False).
    method : str
        ``"admm"`` (:func:`admm_fit`); in :func:`clustering_path` also
        ``"components"`` (closed form, :func:`components_solution`), ``"certified"``
        (the previous ``nu``'s clustering, certified optimal, no ADMM) or
        ``"admm-certified"`` (the ADMM's clustering, then certified; ``B``, ``beta``
        the exact fused solution). For the last three ``Z`` = copies of ``B``, ``U``
        the certificate's duals, ``primal_residual = 0`` and ``dual_residual`` the
        certificate's stationarity error.
    """

    B: np.ndarray
    beta: np.ndarray
    Z: np.ndarray
    U: np.ndarray
    rho: float
    nu: float
    nu_n: float
    n_iter: int
    converged: bool
    fused: np.ndarray
    labels: np.ndarray
    n_clusters: int
    objective: float
    primal_residual: float
    dual_residual: float
    eps: float
    lbfgs_iter: int = 0
    method: str = "admm"
    inner_stalled: bool = False


def _warm_arrays(
    prob: _Problem, warm: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    d, c, l = prob.d, prob.c, prob.l  # noqa: E741
    if warm is None:
        counts = np.bincount(prob.y, minlength=c).astype(float)
        beta = np.log(np.maximum(counts, 0.5) / prob.n)
        beta -= beta.mean()
        W = np.zeros((d, c))
        return W, beta, W[prob.idx].copy(), np.zeros((2 * l, c))
    get = warm.get if isinstance(warm, dict) else lambda k, default=None: getattr(warm, k, default)
    B = np.asarray(get("B"), dtype=np.float64)
    if B.shape != (c, d):
        raise ValueError(f"warm['B'] must have shape ({c}, {d}); got {B.shape}.")
    W = np.ascontiguousarray(B.T)
    beta = np.asarray(get("beta"), dtype=np.float64).copy()
    beta -= beta.mean()
    Z = get("Z", None)
    U = get("U", None)
    Z = W[prob.idx].copy() if Z is None else np.array(Z, dtype=np.float64)
    U = np.zeros((2 * l, c)) if U is None else np.array(U, dtype=np.float64)
    if Z.shape != (2 * l, c) or U.shape != (2 * l, c):
        raise ValueError(f"warm['Z'] and warm['U'] must have shape ({2 * l}, {c}).")
    return W, beta, Z, U


class _ClusterWatch:
    """Early certification inside the ADMM (``admm_fit(certify=True)``).

    Tracks the clustering read off ``theta`` across iterations; once it has not
    changed for ``CERT_STABLE`` iterations (doubled per failed try, see
    :meth:`candidate`) it is offered for certification, each clustering once.
    """

    def __init__(self, d: int, edges: np.ndarray) -> None:
        self.d, self.edges = d, edges
        self.tried: set[bytes] = set()
        self.fused_prev: np.ndarray | None = None
        self.key_prev = b""
        self.stable = 0

    def candidate(self, theta: np.ndarray) -> np.ndarray | None:
        """The clustering to try certifying after this iteration, or None."""
        fused_now = theta == 0.5
        if self.fused_prev is None or not np.array_equal(fused_now, self.fused_prev):
            key = labels_from_edges(self.d, self.edges, fused_now).tobytes()
            self.stable = self.stable + 1 if key == self.key_prev else 0
            self.key_prev, self.fused_prev = key, fused_now
        else:
            self.stable += 1
        if self.stable >= CERT_STABLE << min(len(self.tried), 10) and (
            self.key_prev not in self.tried
        ):
            self.tried.add(self.key_prev)
            return np.frombuffer(self.key_prev, dtype=np.int64)
        return None


def _admm_step(
    prob: _Problem,
    W: np.ndarray,
    beta: np.ndarray,
    Z: np.ndarray,
    U: np.ndarray,
    lam: float,
    rho: float,
    nu_w: np.ndarray,
    gtol: float,
    pre: _Precond,
    rel: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, float, float, int]:
    """One ADMM iteration: B-step, z-step, u-step (``U`` updated in place).

    Returns ``W``, ``beta``, the new ``Z``, ``theta``, the primal and dual residuals
    ``r``, ``s``, the B-step's gradient norm and its L-BFGS iterations.
    """
    l = prob.l  # noqa: E741
    Q = Z + U
    q_all, q_up = quad_terms(Q, prob.AT)
    W, beta, nit, gnorm = _b_step(prob, W, beta, lam, rho, q_all, q_up, gtol, pre, rel)
    Wc = W[prob.idx]
    M = Wc - U
    Z1, Z2, theta = z_update(M[:l], M[l:], nu_w, rho)
    Znew = np.concatenate([Z1, Z2])
    R = Znew - Wc
    U += R
    r = float(np.sqrt(np.einsum("ij,ij->", R, R)))
    dZ = Znew - Z
    s = rho * float(np.sqrt(np.einsum("ij,ij->", dZ, dZ)))
    return W, beta, Znew, theta, r, s, gnorm, nit


def _balance(rho: float, r: float, s: float, U: np.ndarray) -> float:
    """Residual balancing: the new ``rho`` (``U`` rescaled in place so ``rho U`` stays)."""
    if r > BALANCE_MU * s and rho * BALANCE_TAU <= _RHO_MAX:
        rho *= BALANCE_TAU
        U /= BALANCE_TAU
    elif s > BALANCE_MU * r and rho / BALANCE_TAU >= _RHO_MIN:
        rho /= BALANCE_TAU
        U *= BALANCE_TAU
    return rho


def _result_at(
    prob: _Problem,
    lam: float,
    rho: float,
    nu: float,
    B: np.ndarray,
    beta: np.ndarray,
    Z: np.ndarray,
    U: np.ndarray,
    *,
    fused: np.ndarray,
    labels: np.ndarray,
    **run: Any,
) -> AdmmResult:
    """The :class:`AdmmResult` of the problem at ``(lam, rho, nu)`` for the iterate
    ``(B, beta, Z, U)`` and its clustering: ``nu_n``, the number of clusters and the
    objective derived; ``run``: how it was obtained (``n_iter``, ``converged``, the
    residuals, ``eps``, ``lbfgs_iter`` or ``method``)."""
    nu_n = prob.n * nu
    return AdmmResult(
        B=B,
        beta=beta,
        Z=Z,
        U=U,
        rho=rho,
        nu=nu,
        nu_n=nu_n,
        fused=fused,
        labels=labels,
        n_clusters=int(labels.max()) + 1 if labels.size else 0,
        objective=objective(prob.X, prob.y, B, beta, prob.edges, prob.weights, nu_n, lam),
        **run,
    )


def _admm(
    prob: _Problem,
    nu: float,
    lam: float,
    rho: float,
    tol: float,
    max_iter: int,
    W: np.ndarray,
    beta: np.ndarray,
    Z: np.ndarray,
    U: np.ndarray,
    balance: bool = True,
    pre: _Precond | None = None,
    certify: bool = False,
) -> AdmmResult:
    """The ADMM for one ``nu`` from the given iterate (see :func:`admm_fit`)."""
    d, c, l = prob.d, prob.c, prob.l  # noqa: E741
    if pre is None:
        pre = _Precond(prob, lam, single=True)
    nu_n = prob.n * float(nu)
    nu_w = nu_n * prob.weights
    eps = float(np.sqrt(c * (d + 2 * l)) * tol)
    # Inexact B-steps: the gradient g left by L-BFGS adds to the dual residual (both
    # are stationarity errors in gradient units), so the inner tolerance follows the
    # residuals: ||g||_2 <= max(INNER_FACTOR * min(r, s) of the previous iteration,
    # INNER_FLOOR * eps), and the ADMM only stops once ||g||_2 <= eps too.
    floor = INNER_FLOOR * eps
    r = s = np.inf
    gnorm = 0.0
    converged = False
    theta = np.ones(l)
    n_iter = 0
    lbfgs = 0
    U = U.copy()
    # early certification (admm_fit): once the clustering read off theta has not
    # changed for CERT_STABLE iterations, try to certify it (_certify: the exact fused
    # solution, KKT at the stopping accuracy); each clustering is tried once. Not used
    # along the path (warm starts; measured: no faster, more failed tries), which
    # certifies before and after its ADMM runs instead.
    watch = _ClusterWatch(d, prob.edges)
    # a B-step that stops short of its target, at its cap or at its numerical floor
    # (no descent left: never seen on ordinary data), ends the run unconverged: the
    # next B-steps would stall alike. The first B-step's target is relative
    # (FIRST_FACTOR): there only the cap is read as a stall.
    cap = _qn_cap(pre)
    stalled = False
    if l == 0:
        W, beta, nit, gnorm = _b_step(prob, W, beta, lam, rho, 0.0, None, floor, pre)
        stalled = gnorm > floor
        n_iter, lbfgs, converged, r, s = 1, nit, not stalled, 0.0, 0.0
    for it in range(1, max_iter + 1 if l else 0):
        gtol = max(floor, INNER_FACTOR * min(r, s)) if it > 1 else floor
        rel = FIRST_FACTOR if it == 1 else 0.0
        W, beta, Z, theta, r, s, gnorm, nit = _admm_step(
            prob, W, beta, Z, U, lam, rho, nu_w, gtol, pre, rel
        )
        lbfgs += nit
        n_iter = it
        if r <= eps and s <= eps and gnorm <= eps:
            converged = True
            break
        if gnorm > gtol and (nit >= cap or it > 1):
            stalled = True
            break
        if certify and nu_w.size and nu_n > 0:
            labels_now = watch.candidate(theta)
            if labels_now is not None:
                sol = _certify(prob, labels_now, nu, lam, W, beta, floor, CERT_ADMM_ITER)
                if sol is not None:
                    out = _certified_result(
                        prob, sol, rho, nu, lam, eps, "admm-certified", labels_now
                    )
                    return replace(out, n_iter=it, lbfgs_iter=lbfgs)
        if balance:
            rho = _balance(rho, r, s, U)
    fused = (theta == 0.5) & (nu_w > 0)
    labels = labels_from_edges(d, prob.edges, fused)
    return _result_at(
        prob,
        lam,
        float(rho),
        float(nu),
        np.ascontiguousarray(W.T),
        beta - beta.mean(),
        Z,
        U,
        fused=fused,
        labels=labels,
        n_iter=n_iter,
        converged=converged,
        primal_residual=r,
        dual_residual=s,
        eps=eps,
        lbfgs_iter=lbfgs,
        inner_stalled=stalled,
    )


def admm_fit(
    X: Any,
    y: Any,
    n_classes: int,
    edges: Any,
    weights: Any,
    nu: float,
    *,
    lam: float = 0.1,
    rho: float | None = None,
    tol: float = 1e-5,
    max_iter: int = 1000,
    warm: Any = None,
    balance: bool = True,
    certify: bool = True,
) -> AdmmResult:
    """Solve the convex covariate clustering problem for one ``nu`` by ADMM.

    Parameters
    ----------
    X : (n, d) array
        Covariates (used as given: no centring or scaling here).
    y : (n,) int array
        Class codes ``0 .. n_classes - 1``.
    n_classes : int >= 2
    edges, weights : (l, 2) int array with ``i < j``, (l,) positive array
        From :func:`edges_from_similarity`.
    nu : float >= 0
        The penalty on the authors' scale: the multiplier is ``nu_n = n * nu``.
    lam : float >= 0, default 0.1
        Ridge penalty ``lam ||B||_F^2`` (not scaled by ``n``).
    rho : float > 0, optional
        Starting ADMM penalty; default ``warm.rho`` when warm-starting, else 1.
    tol : float, default 1e-5
        ``eps`` of appendix A.2: stop when both residuals are below
        ``sqrt(c (d + 2 l)) * tol``.
    max_iter : int, default 1000
    warm : AdmmResult or dict with ``B`` (c x d), ``beta`` (c) and optionally ``Z``,
        ``U`` (2l x c), ``rho``; default: cold start (``B = 0``, ``Z = 0``, ``U = 0``,
        ``beta`` = centred log class frequencies).
    balance : bool, default True
        Residual balancing of ``rho`` (``mu = 10``, ``tau = 2``).
    certify : bool, default True
        Early stop by a certificate: once the clustering read off ``theta`` has not
        changed for ``CERT_STABLE`` (5) iterations, the objective is minimised over
        ``B`` constant on its clusters and the KKT conditions of the full problem are
        checked with a dual certificate (reduced gradient ``<= 0.1 eps``, edge flows
        within ``nu_n S_e``; see :func:`clustering_path`). When they hold, that exact
        solution is returned (``method="admm-certified"``; ``Z`` the copies of ``B``,
        ``U`` the certificate's scaled duals, ``primal_residual = 0``,
        ``dual_residual`` the reduced gradient norm), usually long before the
        residuals reach ``eps`` (section-4 data, d = 200, n = 400, nu = 1e-2: 53
        iterations instead of 123, and an objective 1e-3 relative below the
        iterate's at ``eps``). Each clustering is tried once, with at most
        ``CERT_ADMM_ITER`` L-BFGS iterations of the partition fit, and each failed
        try doubles the stability required before the next; otherwise the ADMM stops
        as without.

    Returns
    -------
    AdmmResult

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 20)
    >>> X = rng.standard_normal((40, 3)) + np.where(y[:, None] == 1, [1.0, 1.0, -1.0], 0.0)
    >>> edges = np.array([[0, 1], [0, 2], [1, 2]]); w = np.ones(3)
    >>> res = admm_fit(X, y, 2, edges, w, 0.1)
    >>> res.converged, res.labels.tolist(), res.B.shape
    (True, [0, 0, 1], (2, 3))
    >>> admm_fit(X, y, 2, edges, w, 0.0).labels.tolist()
    [0, 1, 2]
    """
    prob = _prepare(X, y, n_classes, edges, weights)
    if not np.isfinite(nu) or nu < 0:
        raise ValueError(f"nu must be a finite number >= 0; got nu={nu}.")
    W, beta, Z, U = _warm_arrays(prob, warm)
    if rho is None:
        rho = 1.0
        if warm is not None:
            wr = warm.get("rho") if isinstance(warm, dict) else getattr(warm, "rho", None)
            rho = float(wr) if wr is not None else 1.0
    with single_blas_thread():
        return _admm(
            prob, nu, lam, float(rho), tol, int(max_iter), W, beta, Z, U, balance, certify=certify
        )


# ============================================================================ components
#: Iteratively reweighted least-squares passes when searching a dual certificate.
IRLS_ITER = 12


@dataclass(frozen=True, eq=False)
class _PartitionFit:
    """The objective minimised over ``B`` constant on a clustering (:func:`_partition_fit`).

    Attributes
    ----------
    W : (d, c) ndarray
        The fitted class weights per covariate (each cluster's row repeated).
    beta : (c,) ndarray
        Intercepts (not centred).
    gnorm : float
        2-norm of the reduced gradient at the returned point.
    sep : float
        Smallest ``||b_k - b_k'||`` over the pairs of clusters joined by an edge
        (inf when there is none).
    inside : (l,) bool ndarray
        Mask of the edges inside clusters.
    """

    W: np.ndarray
    beta: np.ndarray
    gnorm: float
    sep: float
    inside: np.ndarray


@dataclass(frozen=True, eq=False)
class _Certificate:
    """The exact solution at one ``nu`` for a certified clustering (:func:`_certify`).

    Attributes
    ----------
    W : (d, c) ndarray
        Class weights per covariate, constant on the clusters.
    beta : (c,) ndarray
        Intercepts, centred.
    flow : (l, c) ndarray
        Edge flows ``v_e`` on all edges: the dual certificate.
    kkt : float
        2-norm of the reduced gradient (the stationarity error).
    """

    W: np.ndarray
    beta: np.ndarray
    flow: np.ndarray
    kkt: float


@dataclass(frozen=True, eq=False)
class _Components:
    """The fully fused solution and its certificate (:func:`_components`); the fields
    are the keys of :func:`components_solution`'s dict.

    Attributes
    ----------
    B : (c, d) ndarray
        Class weights, constant on each connected component of ``S``.
    beta : (c,) ndarray
        Intercepts, centred.
    labels : (d,) int64 ndarray
        Canonical components.
    nu_max : float
        The ``nu`` above which this solution is certified optimal.
    flow : (l, c) ndarray
        Edge flows ``v_e`` (the dual certificate).
    objective_smooth : float
        ``NLL + lam ||B||^2`` at the solution.
    converged : bool
        The reduced fit reached its gradient target within its L-BFGS cap.
    """

    B: np.ndarray
    beta: np.ndarray
    labels: np.ndarray
    nu_max: float
    flow: np.ndarray
    objective_smooth: float
    converged: bool = True

    def as_dict(self) -> dict[str, Any]:
        """The fields as a dict (the documented result of :func:`components_solution`)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _reduced_problem(prob: _Problem, labels: np.ndarray) -> tuple[_Problem, np.ndarray]:
    """The problem restricted to ``B`` constant on each cluster of ``labels``.

    Returns the reduced problem (design: the cluster sums of the covariates, ``n x K``;
    edges: the pairs of clusters joined by edges of ``S``, weight the sum of their
    ``S_ij``; ``deg`` replaced by the cluster sizes, so that ``lam' = 0, rho = 2 lam``
    in :class:`_Precond` and coefficients ``lam * sizes`` in :func:`_smooth_fg` give
    the ridge ``lam sum_k |C_k| ||b_k||^2``) and the mask of the edges inside clusters.
    """
    K = int(labels.max()) + 1
    T = sparse.csr_array((np.ones(prob.d), (labels, np.arange(prob.d))), shape=(K, prob.d))
    Xr = (T @ prob.X.T).T  # (n, K)
    sizes = np.bincount(labels, minlength=K).astype(np.float64)
    li, lj = labels[prob.edges[:, 0]], labels[prob.edges[:, 1]]
    inside = li == lj
    a, b = np.minimum(li, lj)[~inside], np.maximum(li, lj)[~inside]
    key, inv = np.unique(a * K + b, return_inverse=True)
    A = np.bincount(inv.ravel(), weights=prob.weights[~inside], minlength=key.size)
    pairs = np.column_stack([key // K, key % K])
    red = _prepare(Xr, prob.y, prob.c, pairs, A, check=False)
    return replace(red, deg=sizes), inside


def _partition_fit(
    prob: _Problem,
    labels: np.ndarray,
    nu_n: float,
    lam: float,
    W0: np.ndarray | None,
    beta0: np.ndarray,
    target: float,
    max_iter: int = 5000,
) -> _PartitionFit:
    """Minimise the objective over ``B`` constant on the clusters of ``labels``.

    ``NLL + lam sum_k |C_k| ||b_k||^2 + nu_n sum_{pairs} A_kk' ||b_k - b_k'||`` by
    scipy's L-BFGS, preconditioned with the Hessian at the start (the penalty's
    curvature ``nu_n A_kk' / ||b_k - b_k'||`` included as a graph Laplacian); smooth
    while the clusters stay apart. ``W0`` (d x c) is averaged over each cluster for
    the start. Returns a :class:`_PartitionFit`.
    """
    red, inside = _reduced_problem(prob, labels)
    K, c = red.d, red.c
    sizes = red.deg
    Wr0 = np.zeros((K, c))
    if W0 is not None:
        np.add.at(Wr0, labels, W0)
        Wr0 /= sizes[:, None]
    smooth = _smooth_fg(red, lam * sizes, None, 0.0)
    p0, p1 = red.edges[:, 0], red.edges[:, 1]
    wA = nu_n * red.weights
    Kc = K * c
    lp = red.l

    Dt = (red.AT[:, :lp] - red.AT[:, lp:]).tocsr()  # (K, lp): +1 at p0, -1 at p1

    def fg_x(x: np.ndarray) -> tuple[float, np.ndarray]:
        val, g = smooth(x)
        if lp:
            Wx = x[:Kc].reshape(K, c)
            D = Wx[p0] - Wx[p1]
            h = np.sqrt(np.einsum("ij,ij->i", D, D))
            val += float(wA @ h)
            Gp = (wA / np.maximum(h, 1e-300))[:, None] * D
            g[:Kc] += (Dt @ Gp).ravel()
        return val, g

    pre = _Precond(red, 0.0)
    pre.build(Wr0, beta0)
    extra = None
    if lp:
        D = Wr0[p0] - Wr0[p1]
        h = np.sqrt(np.einsum("ij,ij->i", D, D))
        cw = wA / np.maximum(h, 1e-3 * max(float(np.abs(Wr0).max()), 1e-3))
        if pre.dense:
            Lp = np.zeros((K + 1, K + 1))
            np.add.at(Lp, (p0, p0), cw)
            np.add.at(Lp, (p1, p1), cw)
            np.add.at(Lp, (p0, p1), -cw)
            np.add.at(Lp, (p1, p0), -cw)
            extra = np.kron(Lp, np.eye(c))
        else:
            extra = np.zeros(pre.N)
            extra[:Kc] = np.repeat(np.bincount(p0, cw, K) + np.bincount(p1, cw, K), c)
    pre.factor(2.0 * lam, extra)
    x, _, gnorm = _lbfgs(fg_x, np.concatenate([Wr0.ravel(), beta0]), pre, target, max_iter)
    Wr = x[:Kc].reshape(K, c)
    sep = np.inf
    if lp:
        D = Wr[p0] - Wr[p1]
        sep = float(np.sqrt(np.einsum("ij,ij->i", D, D)).min())
    return _PartitionFit(W=Wr[labels], beta=x[Kc:].copy(), gnorm=gnorm, sep=sep, inside=inside)


def _fused_flows(
    prob: _Problem,
    labels: np.ndarray,
    inside: np.ndarray,
    R: np.ndarray,
    caps: np.ndarray,
    stop: float = 1.0,
    target: float = np.inf,
) -> tuple[np.ndarray, float]:
    """Flows ``v_e`` on the edges inside clusters with ``D^T V = -R`` and small
    ``max_e ||v_e|| / caps_e``.

    Weighted least squares (``min sum ||v_e||^2 / w_e``: a graph-Laplacian solve with
    one grounded covariate per cluster), first with ``w_e = caps_e^2``, then with the
    weights of the edges below the largest ratio raised (``w_e *= (max ratio /
    ratio_e)^(1/2)``, kept within ``[1e-4, 1e4] caps_e^2``: reweighted least squares
    towards the minimax flow) until the largest ratio is ``<= stop`` or after
    ``IRLS_ITER`` passes. A pass whose flows miss the balance by more than ``target``
    (2-norm; ``R`` must sum to zero over each cluster) is discarded. With ``stop > 0``
    the search gives up at once when no flow can fit: a covariate's ``||R_i||`` (less
    ``target``) beyond ``stop`` times the sum of the caps at it (a rule that extrapolated
    the passes' decrease also rejected feasible certificates, so none). Returns the flows of the best pass (``l_inside x c``) and
    its largest ratio (inf if none was kept).
    """
    e = prob.edges[inside]
    capf = caps[inside]
    c, d = prob.c, prob.d
    if e.shape[0] == 0:
        return np.zeros((0, c)), 0.0
    e0, e1 = e[:, 0], e[:, 1]
    _, first = np.unique(labels, return_index=True)
    free = np.ones(d, dtype=bool)
    free[first] = False
    rhs = np.ascontiguousarray(-R[free])
    best, best_ratio = np.zeros((e.shape[0], c)), np.inf
    if stop > 0:
        # a lower bound: the flows at covariate i balance R_i (to ``target``), so
        # ||R_i|| - target <= max ratio * (sum of the caps at i)
        at = np.bincount(e0, capf, d) + np.bincount(e1, capf, d)
        rn = np.sqrt(np.einsum("ij,ij->i", R, R))
        has = at > 0
        if has.any() and float((np.maximum(rn[has] - target, 0.0) / at[has]).max()) > stop:
            return best, best_ratio
    w0 = capf * capf
    w = w0.copy()
    rows = np.concatenate([e0, e1, e0, e1])
    cols = np.concatenate([e0, e1, e1, e0])
    for _ in range(IRLS_ITER):
        Lap = sparse.coo_array((np.concatenate([w, w, -w, -w]), (rows, cols)), shape=(d, d)).tocsc()
        phi = np.zeros((d, c))
        try:
            phi[free] = splu(Lap[free][:, free].tocsc()).solve(rhs)
        except RuntimeError:  # singular (should not happen: every cluster connected)
            break
        V = w[:, None] * (phi[e0] - phi[e1])
        bal = R.copy()
        np.add.at(bal, e0, V)
        np.subtract.at(bal, e1, V)
        ratio = np.sqrt(np.einsum("ij,ij->i", V, V)) / capf
        top = float(ratio.max())
        if float(np.sqrt(np.einsum("ij,ij->", bal, bal))) <= target and top < best_ratio:
            best, best_ratio = V, top
        if best_ratio <= stop or top == 0:
            break
        w = np.clip(w * np.sqrt(top / np.maximum(ratio, 1e-3 * top)), 1e-4 * w0, 1e4 * w0)
    return best, best_ratio


def _certify(
    prob: _Problem,
    labels: np.ndarray,
    nu: float,
    lam: float,
    W0: np.ndarray,
    beta0: np.ndarray,
    target: float,
    max_iter: int = 5000,
) -> _Certificate | None:
    """The exact solution at ``nu`` if ``labels`` is its clustering, else None.

    Fits the partition (:func:`_partition_fit`) and searches a dual certificate: with
    ``G`` the gradient of ``NLL + lam ||B||^2`` and ``v_e = nu_n S_e (b_i - b_j) /
    ||b_i - b_j||`` on the edges between clusters, KKT holds iff flows ``v_e``,
    ``||v_e|| <= nu_n S_e``, on the edges inside clusters close the balance
    ``G + D^T V = 0``. Accepted when the reduced gradient is ``<= target`` (the same
    stationarity accuracy the ADMM stops at), the clusters stay apart and the flows
    fit. Returns a :class:`_Certificate` (its ``flow`` on all edges is the dual, as
    in :func:`components_solution`).
    """
    nu_n = prob.n * nu
    fit = _partition_fit(prob, labels, nu_n, lam, W0, beta0, target, max_iter)
    if fit.gnorm > target:
        return None
    W, beta, inside = fit.W, fit.beta, fit.inside
    scale = max(float(np.abs(W).max()), 1.0)
    if fit.sep <= 1e-6 * scale:
        return None
    _, G = _nll(prob, W, beta)
    R = prob.X.T @ G + 2.0 * lam * W
    caps = nu_n * prob.weights
    flow = np.zeros((prob.l, prob.c))
    out = ~inside
    if out.any():
        e = prob.edges[out]
        D = W[e[:, 0]] - W[e[:, 1]]
        h = np.sqrt(np.einsum("ij,ij->i", D, D))
        V = (caps[out] / h)[:, None] * D
        flow[out] = V
        R = R.copy()
        np.add.at(R, e[:, 0], V)
        np.subtract.at(R, e[:, 1], V)
    if inside.any():
        if nu_n == 0:
            return None
        Vin, top = _fused_flows(prob, labels, inside, R, caps, target=target)
        if top > 1.0:
            return None
        flow[inside] = Vin
    return _Certificate(W=W, beta=beta - beta.mean(), flow=flow, kkt=fit.gnorm)


def components_solution(
    X: Any,
    y: Any,
    n_classes: int,
    edges: Any,
    weights: Any,
    *,
    lam: float = 0.1,
    tol: float = 1e-5,
) -> dict:
    """The fully fused solution (one column per connected component of ``S``) and the
    smallest ``nu`` at which it is certified optimal.

    For every ``nu`` the solution cannot fuse covariates of different components of the
    graph; for ``nu`` large enough it fuses each component. Its ``B`` is the ridge
    logistic regression on the component sums of the covariates (penalty
    ``lam sum_k |C_k| ||b_k||^2``), independent of ``nu``. It is optimal at ``nu`` iff
    the gradient ``G`` (d x c) of ``NLL + lam ||B||^2`` is balanced by edge flows
    ``v_e`` with ``||v_e|| <= nu_n S_e`` (KKT: ``G_i + sum_{e=(i,.)} v_e -
    sum_{e=(.,i)} v_e = 0``). Weighted least-squares flows (a graph-Laplacian solve,
    then a few reweighted passes towards the flow with the smallest largest
    ``||v_e|| / S_e``) give the certificate ``nu_max = max_e ||v_e|| / (n S_e)``: for
    every ``nu >= nu_max`` the components are the exact solution (``nu_max`` bounds
    the smallest such ``nu`` from above).

    Parameters
    ----------
    X, y, n_classes, edges, weights, lam
        As :func:`admm_fit`.
    tol : float, default 1e-5
        The reduced fit stops at gradient norm ``0.1 sqrt(c (d + 2 l)) tol`` (the
        accuracy the ADMM stops at).

    Returns
    -------
    dict with ``B`` (c x d), ``beta`` (c,), ``labels`` (d,) canonical components,
    ``nu_max`` (float), ``flow`` (l x c: ``v_e``, a dual certificate; the ADMM's scaled
    duals for ``nu`` are ``U = [-v; v] / rho`` with ``v`` clipped to norm
    ``nu_n S_e``), ``objective_smooth`` (NLL + ridge at the solution), ``converged``
    (the reduced fit reached its gradient target within its L-BFGS cap of 5000
    iterations).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 20); X = rng.standard_normal((40, 3))
    >>> sol = components_solution(X, y, 2, np.array([[0, 1]]), np.array([1.0]))
    >>> sol["labels"].tolist(), bool(np.allclose(sol["B"][:, 0], sol["B"][:, 1]))
    ([0, 0, 1], True)
    >>> res = admm_fit(X, y, 2, np.array([[0, 1]]), np.array([1.0]), 1.01 * sol["nu_max"])
    >>> res.labels.tolist()
    [0, 0, 1]
    """
    prob = _prepare(X, y, n_classes, edges, weights)
    with single_blas_thread():
        eps = float(np.sqrt(prob.c * (prob.d + 2 * prob.l))) * tol
        return _components(prob, lam, INNER_FLOOR * eps).as_dict()


def _components(prob: _Problem, lam: float, target: float | None = None) -> _Components:
    """The fully fused solution and its ``nu_max`` (see :func:`components_solution`)."""
    labels = labels_from_edges(prob.d, prob.edges)
    counts = np.bincount(prob.y, minlength=prob.c).astype(float)
    beta0 = np.log(np.maximum(counts, 0.5) / prob.n)
    beta0 -= beta0.mean()
    if target is None:
        target = INNER_FLOOR * float(np.sqrt(prob.c * (prob.d + 2 * prob.l))) * 1e-5
    fit = _partition_fit(prob, labels, 0.0, lam, None, beta0, target)
    W, beta = fit.W, fit.beta
    nll, G = _nll(prob, W, beta)
    grad = prob.X.T @ G + 2.0 * lam * W  # (d, c)
    flow = np.zeros((prob.l, prob.c))
    nu_max = 0.0
    if prob.l:
        # every edge is inside a component; caps S_e: the ratios are nu_n at which
        # each flow fits, so the smallest largest ratio over the IRLS passes / n
        flow, top = _fused_flows(
            prob, labels, fit.inside, grad, prob.weights, stop=0.0, target=10.0 * target
        )
        nu_max = top / prob.n
    return _Components(
        B=np.ascontiguousarray(W.T),
        beta=beta - beta.mean(),
        labels=labels,
        nu_max=nu_max,
        flow=flow,
        objective_smooth=nll + lam * float((W * W).sum()),
        converged=bool(fit.gnorm <= target),
    )


# ============================================================================ path
def default_nus(*, n_steps: int = 300, step: float = 0.1) -> np.ndarray:
    """The paper's grid: ``nu = 2^(-step a)``, ``a = 0 .. n_steps - 1``, then 0 (descending).

    ``nu`` is per sample: the penalty multiplier is ``nu_n = n nu``, so the multipliers
    are the paper's ``n 2^(-0.1 a)`` (section 3: "nu in {n 2^(-0.1 a)}", where nu
    multiplies the penalty of eq. (1)), as in the authors' scripts (grid ``2^(-0.1 a)``
    and 0, multiplied by the sample size inside the ADMM).

    Examples
    --------
    >>> g = default_nus()
    >>> g.size, float(g[0]), float(g[10]), float(g[-1])
    (301, 1.0, 0.5, 0.0)
    """
    a = np.arange(n_steps, dtype=np.float64)
    return np.concatenate([2.0 ** (-step * a), [0.0]])


@dataclass(frozen=True, eq=False)
class PathRecord:
    """One ``nu`` of :func:`clustering_path` (no ``Z``/``U``: ``2l x c`` each).

    Attributes
    ----------
    nu, nu_n : float
        Grid value and ``n * nu``.
    labels : (d,) int64 ndarray
        Canonical covariate clusters.
    n_clusters : int
    B : (c, d) ndarray; beta : (c,) ndarray
    n_iter : int
        ADMM iterations (0 for ``"components"`` and ``"certified"``).
    converged : bool
        ADMM residuals below ``eps`` (for the closed form and the certified
        solutions: their fit reached its target); False where a cap was reached.
    rho : float
        ``rho`` at the end of this ``nu`` (carried to the next).
    objective, primal_residual, dual_residual, eps : float
    n_fused : int
        Number of fused edges.
    method : str
        ``"components"`` (``nu >= nu_max``: the components of ``S``, exact),
        ``"certified"`` (previous clustering certified, no ADMM), ``"admm-certified"``
        or ``"admm"``: see :func:`clustering_path`.
    seconds : float
        Wall time of this ``nu``.
    inner_stalled : bool
        An inner solver stopped short of its target (its cap, or its numerical floor):
        a B-step of the ADMM (:func:`_qn_cap`) or, for ``"components"``, the closed
        form's fit; then ``converged`` is False.
    """

    nu: float
    nu_n: float
    labels: np.ndarray
    n_clusters: int
    B: np.ndarray
    beta: np.ndarray
    n_iter: int
    converged: bool
    rho: float
    objective: float
    primal_residual: float
    dual_residual: float
    eps: float
    n_fused: int
    method: str
    seconds: float
    inner_stalled: bool = False


def _record(res: AdmmResult, seconds: float) -> PathRecord:
    return PathRecord(
        nu=res.nu,
        nu_n=res.nu_n,
        labels=res.labels,
        n_clusters=res.n_clusters,
        B=res.B,
        beta=res.beta,
        n_iter=res.n_iter,
        converged=res.converged,
        rho=res.rho,
        objective=res.objective,
        primal_residual=res.primal_residual,
        dual_residual=res.dual_residual,
        eps=res.eps,
        n_fused=int(res.fused.sum()),
        method=res.method,
        seconds=seconds,
        inner_stalled=res.inner_stalled,
    )


def _clip_duals(U: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """Scale each copy's scaled dual to norm ``<= cap`` (``nu_n S_e / rho``)."""
    norm = np.sqrt(np.einsum("ij,ij->i", U, U))
    cap2 = np.concatenate([cap, cap])
    scale = np.minimum(1.0, np.divide(cap2, norm, out=np.ones_like(norm), where=norm > 0))
    return U * scale[:, None]


def _predict_duals(
    U: np.ndarray, prev_nu: float, prev_fused: np.ndarray, nu: float, cap: np.ndarray
) -> np.ndarray:
    """Warm-start duals for ``nu`` from the solution at ``prev_nu``.

    At a solution, ``rho u_{i->j} = -nu_n S_e (b_i - b_j) / ||b_i - b_j||`` on an
    unfused edge (the dual scales with ``nu``) and has norm ``<= nu_n S_e`` on a fused
    one: unfused rows are rescaled by ``nu / prev_nu``, fused rows clipped.
    """
    out = U.copy()
    if prev_nu > 0:
        free = np.concatenate([~prev_fused, ~prev_fused])
        out[free] *= nu / prev_nu
    return _clip_duals(out, cap) if cap.size else out


def clustering_path(
    X: Any,
    y: Any,
    n_classes: int,
    edges: Any,
    weights: Any,
    nus: Any = None,
    *,
    lam: float = 0.1,
    tol: float = 1e-5,
    max_iter: int = 1000,
    rho: float = 1.0,
    progress: bool = False,
    stop_at_components: bool = True,
    stop_at_singletons: bool = False,
    certify: bool = True,
    refine: int = 2,
) -> list[PathRecord]:
    """Solve the grid of ``nu`` from large to small with warm starts.

    **Direction.** The grid is sorted in decreasing ``nu`` and solved in that order,
    each ``nu`` warm-started from the previous one: ``B``, ``beta``, ``Z``, ``U`` and
    ``rho`` (which keeps its residual-balanced value); on the edges that were not
    fused the duals are rescaled by ``nu / nu_prev`` (they equal ``nu_n S_e`` times a
    unit vector at a solution), on the fused ones clipped to ``nu_n S_e / rho``.

    **Top of the grid (early stop).** The ADMM stalls at the largest ``nu`` (the
    duals have to grow to ``nu_n S_e``). With ``stop_at_components=True`` (default)
    the fully fused solution (one column per connected component of ``S``, the
    coarsest clustering reachable: components are never fused together) and the
    ``nu_max`` above which it is optimal are computed in closed form
    (:func:`components_solution`); every grid value ``>= nu_max`` gets it
    (``method="components"``, ``n_iter=0``) without running the ADMM, and the path
    goes on below ``nu_max`` from that solution and its dual certificate. With
    ``False`` every ``nu`` is run through the ADMM, the top one from a cold start.

    **Certified steps.** With ``certify=True`` (default) each ``nu`` first tries the
    clustering of the previous ``nu``: the objective is minimised over ``B`` constant
    on its clusters (a small smooth problem while the clusters stay apart) and a dual
    certificate is searched (the KKT conditions of the full problem; see
    ``_certify``). If it holds, that exact solution is the answer
    (``method="certified"``, ``n_iter=0``): most of a path is plateaus where the
    clustering does not change, and there the ADMM needs tens to hundreds of
    iterations per ``nu``. Otherwise the ADMM runs; its clustering is then certified
    in turn (``method="admm-certified"``: ``B``, ``beta`` replaced by the exact fused
    solution), and when that fails the ADMM continues with ``tol / 10`` (at most
    ``refine`` times) before the result is kept as it is (``method="admm"``). The
    certificate demands the same stationarity accuracy as the ADMM's stop (reduced
    gradient ``<= 0.1 sqrt(c (d + 2 l)) tol``) and exactly feasible edge flows, so a
    certified clustering is at least as reliable as the ``theta == 0.5`` test; near
    a split the ADMM at ``tol = 1e-5`` tends to report an extra cluster that a tight
    solve (``tol = 1e-9``) does not (seen on the section-4 data).

    ``stop_at_singletons=True`` ends the path at the first ``nu`` whose clustering has
    every covariate alone (smaller ``nu`` are not solved, so the list is shorter).

    **Bounds.** Every inner loop is capped: the ADMM at ``max_iter`` per ``nu``, each
    of its B-steps at :func:`_qn_cap` quasi-Newton iterations (a B-step stopped short
    of its target, at that cap or at its numerical floor, ends that ``nu``'s ADMM),
    each line search at ``LS_MAX_HALVINGS`` halvings, the partition fits at 5000
    L-BFGS iterations (``CERT_TRY_ITER`` for a try). A solver stopped short of its
    target makes the record ``converged=False`` (with ``inner_stalled=True`` for the
    inner ones), and after ``PATH_STALL_MAX`` (10) consecutive ``nu`` with a stalled
    inner solver the path stops there (the list is shorter):
    badly scaled covariates (one at 1e10 beside unit ones) leave the B-step
    ill-conditioned at every ``nu``.

    Parameters
    ----------
    X, y, n_classes, edges, weights
        As :func:`admm_fit`.
    nus : array-like of float >= 0, optional
        Default :func:`default_nus`: ``2^(-0.1 a)``, ``a = 0..299``, and 0 (penalty
        multipliers ``n 2^(-0.1 a)``, the paper's grid).
        Sorted decreasing, duplicates removed.
    lam, tol, max_iter
        As :func:`admm_fit` (per ``nu``).
    rho : float, default 1
        Starting ``rho`` (then carried along the path).
    progress : bool, default False
        tqdm progress bar over the grid.
    stop_at_components, stop_at_singletons, certify : bool
        See above.
    refine : int, default 2
        ADMM continuations with ``tol / 10, tol / 100, ...`` when its clustering cannot
        be certified (``certify=True`` only).

    Returns
    -------
    list of PathRecord
        One per solved ``nu``, in decreasing ``nu``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 20)
    >>> X = rng.standard_normal((40, 3)) + np.where(y[:, None] == 1, [1.0, 1.0, -1.0], 0.0)
    >>> path = clustering_path(X, y, 2, np.array([[0, 1], [0, 2], [1, 2]]), np.ones(3))
    >>> len(path), path[0].n_clusters, path[-1].n_clusters, all(r.converged for r in path)
    (301, 1, 3, True)
    >>> [(c.n_clusters, c.labels.tolist()) for c in distinct_clusterings(path)]
    [(1, [0, 0, 0]), (2, [0, 0, 1]), (3, [0, 1, 2])]
    """
    import time

    prob = _prepare(X, y, n_classes, edges, weights)
    grid = default_nus() if nus is None else np.asarray(nus, dtype=np.float64).ravel()
    if grid.size == 0 or not np.isfinite(grid).all() or grid.min() < 0:
        raise ValueError("nus must be a non-empty sequence of finite numbers >= 0.")
    grid = np.unique(grid)[::-1]
    records: list[PathRecord] = []
    iterator: Any = progress_bar(grid, progress, "nu path")
    eps = float(np.sqrt(prob.c * (prob.d + 2 * prob.l)) * tol)
    target = INNER_FLOOR * eps
    with single_blas_thread():
        t0 = time.perf_counter()
        W, beta, Z, U = _warm_arrays(prob, None)
        rho = float(rho)
        comp = None
        guess = None  # clustering to try certifying at the next nu
        if stop_at_components and prob.l:
            comp = _components(prob, lam, target)
            W = np.ascontiguousarray(comp.B.T)
            beta = comp.beta
            Z = W[prob.idx].copy()
            guess = comp.labels
        prev_nu: float | None = None
        prev_fused = np.zeros(prob.l, dtype=bool)
        stalled = 0  # consecutive nu whose inner solver reached its cap
        pre = _Precond(prob, lam, single=True)  # carried along the path, rebuilt as it degrades
        setup = time.perf_counter() - t0
        for nu in iterator:
            t0 = time.perf_counter()
            nu = float(nu)
            nu_n = prob.n * nu
            cap = nu_n * prob.weights / rho
            res = None
            if comp is not None and nu >= comp.nu_max:
                res = _exact_result(
                    prob, comp.B, comp.beta, Z, U, rho, nu, lam, eps, 0.0, "components"
                )
                if not comp.converged:
                    res = replace(res, converged=False, inner_stalled=True)
            if res is None and certify and guess is not None and prob.l:
                sol = _certify(prob, guess, nu, lam, W, beta, target, CERT_TRY_ITER)
                if sol is not None:
                    res = _certified_result(prob, sol, rho, nu, lam, eps, "certified", guess)
            if res is None:
                if prev_nu is None and comp is not None:
                    # first ADMM nu below nu_max: duals from the components' certificate
                    U = _clip_duals(np.concatenate([-comp.flow, comp.flow]) / rho, cap)
                elif prev_nu is not None:
                    U = _predict_duals(U, prev_nu, prev_fused, nu, cap)
                res = _admm(prob, nu, lam, rho, tol, int(max_iter), W, beta, Z, U, pre=pre)
                if certify:
                    res = _polish(prob, res, lam, tol, int(max_iter), target, int(refine), pre)
            W, beta, Z, U, rho = np.ascontiguousarray(res.B.T), res.beta, res.Z, res.U, res.rho
            if res.method != "components":
                prev_nu, prev_fused = nu, res.fused
                guess = res.labels
            records.append(_record(res, time.perf_counter() - t0 + setup))
            setup = 0.0
            stalled = stalled + 1 if res.inner_stalled else 0
            if (stop_at_singletons and res.n_clusters == prob.d) or stalled >= PATH_STALL_MAX:
                break
    return records


def _polish(
    prob: _Problem,
    res: AdmmResult,
    lam: float,
    tol: float,
    max_iter: int,
    target: float,
    refine: int,
    pre: _Precond,
) -> AdmmResult:
    """Certify the ADMM's clustering; if that fails, continue the ADMM with ``tol / 10``
    (at most ``refine`` times) and retry. Returns an exact ``"admm-certified"`` result
    or the last ADMM result (``"admm"``). A refinement that hits ``max_iter`` with its
    residuals within the requested tolerance (``res.eps``) still counts as converged at
    that tolerance (its iterate is kept: it is the more accurate one). A refinement
    whose B-step reached its cap is not: the previous iterate is kept, flagged
    unconverged (``inner_stalled``)."""
    n_iter = res.n_iter
    eps0 = res.eps
    for k in range(refine + 1):
        W = np.ascontiguousarray(res.B.T)
        sol = _certify(prob, res.labels, res.nu, lam, W, res.beta, target)
        if sol is not None:
            out = _certified_result(
                prob, sol, res.rho, res.nu, lam, res.eps, "admm-certified", res.labels
            )
            return replace(out, n_iter=n_iter, lbfgs_iter=res.lbfgs_iter)
        if k == refine or not res.converged:
            break
        prev = res
        res = _admm(
            prob,
            res.nu,
            lam,
            res.rho,
            tol / 10.0 ** (k + 1),
            max_iter,
            W,
            res.beta,
            res.Z,
            res.U,
            pre=pre,
        )
        n_iter += res.n_iter
        if res.inner_stalled:
            res = replace(prev, converged=False, inner_stalled=True)
            break
        if not res.converged and max(res.primal_residual, res.dual_residual) <= eps0:
            res = replace(res, converged=True, eps=eps0)
    return replace(res, n_iter=n_iter)


def _certified_result(
    prob: _Problem,
    sol: _Certificate,
    rho: float,
    nu: float,
    lam: float,
    eps: float,
    method: str,
    labels: np.ndarray,
) -> AdmmResult:
    """The :class:`AdmmResult` of a :func:`_certify` solution: ``Z`` the copies of
    ``B``, ``U`` the certificate's edge flows as scaled duals."""
    Wc = sol.W
    flow = sol.flow
    return _exact_result(
        prob,
        np.ascontiguousarray(Wc.T),
        sol.beta,
        Wc[prob.idx],
        np.concatenate([-flow, flow]) / rho,
        rho,
        nu,
        lam,
        eps,
        sol.kkt,
        method,
        labels,
    )


def _exact_result(
    prob: _Problem,
    B: np.ndarray,
    beta: np.ndarray,
    Z: np.ndarray,
    U: np.ndarray,
    rho: float,
    nu: float,
    lam: float,
    eps: float,
    kkt: float,
    method: str,
    labels: np.ndarray | None = None,
) -> AdmmResult:
    """An :class:`AdmmResult` for a solution obtained in closed form / certified."""
    if labels is None:
        fused = np.ones(prob.l, dtype=bool)
        labels = labels_from_edges(prob.d, prob.edges)
    else:
        labels = canonical_labels(labels)
        fused = labels[prob.edges[:, 0]] == labels[prob.edges[:, 1]]
    return _result_at(
        prob,
        lam,
        rho,
        nu,
        B,
        beta,
        Z,
        U,
        fused=fused,
        labels=labels,
        n_iter=0,
        converged=True,
        primal_residual=0.0,
        dual_residual=kkt,
        eps=eps,
        method=method,
    )


# ============================================================================ distinct
@dataclass(frozen=True, eq=False)
class DistinctClustering:
    """One distinct clustering of a path (see :func:`distinct_clusterings`).

    Attributes
    ----------
    labels : (d,) int64 ndarray
        Canonical labels.
    n_clusters : int
    nu_min, nu_max : float
        Smallest and largest ``nu`` of the path that produced this clustering.
    nus : (m,) ndarray
        Every such ``nu`` (decreasing).
    contiguous : bool
        Whether those ``nu`` are consecutive on the path (no other clustering between).
    converged : bool
        Every one of those ``nu`` converged.
    n_unconverged : int
        How many did not (a capped ``nu`` keeps its clustering, flagged here).
    index : int
        Position in the path of the record with the largest ``nu`` (its ``B``, ``beta``).
    """

    labels: np.ndarray
    n_clusters: int
    nu_min: float
    nu_max: float
    nus: np.ndarray
    contiguous: bool
    converged: bool
    n_unconverged: int
    index: int


def distinct_clusterings(records: Any) -> list[DistinctClustering]:
    """Keep each distinct clustering of a path once, with the ``nu`` range producing it.

    Parameters
    ----------
    records : sequence of PathRecord (or objects with ``nu``, ``labels``, ``converged``)

    Returns
    -------
    list of DistinctClustering
        In order of first appearance along the path (decreasing ``nu`` for
        :func:`clustering_path`: coarsest first).

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace as R
    >>> recs = [R(nu=4.0, labels=np.array([0, 0]), converged=True),
    ...         R(nu=2.0, labels=np.array([0, 0]), converged=False),
    ...         R(nu=0.0, labels=np.array([0, 1]), converged=True)]
    >>> [(c.n_clusters, c.nu_min, c.nu_max, c.n_unconverged) for c in distinct_clusterings(recs)]
    [(1, 2.0, 4.0, 1), (2, 0.0, 0.0, 0)]
    """
    groups: dict[bytes, list[int]] = {}
    labels_of: dict[bytes, np.ndarray] = {}
    for pos, rec in enumerate(records):
        lab = canonical_labels(rec.labels)
        key = lab.tobytes()
        groups.setdefault(key, []).append(pos)
        labels_of.setdefault(key, lab)
    out = []
    for key, pos in groups.items():
        nus = np.array([float(records[p].nu) for p in pos])
        conv = np.array([bool(records[p].converged) for p in pos])
        lab = labels_of[key]
        out.append(
            DistinctClustering(
                labels=lab,
                n_clusters=int(lab.max()) + 1 if lab.size else 0,
                nu_min=float(nus.min()),
                nu_max=float(nus.max()),
                nus=nus,
                contiguous=bool(np.all(np.diff(pos) == 1)),
                converged=bool(conv.all()),
                n_unconverged=int((~conv).sum()),
                index=int(pos[int(np.argmax(nus))]),
            )
        )
    return out
