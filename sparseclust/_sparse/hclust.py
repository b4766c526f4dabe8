"""Sparse hierarchical clustering (Witten & Tibshirani 2010, section 4) without the pair matrix.

The criterion is

    maximise  sum_j w_j sum_{i<i'} d_ii'j u_ii'
    subject to ||u||_2 <= 1, ||w||_2 <= 1, ||w||_1 <= s, w >= 0,

where ``D`` (one row per pair of observations, one column per feature) holds the
per-feature dissimilarities ``d_ii'j``: ``(x_ij - x_i'j)^2`` ("squared") or
``|x_ij - x_i'j|`` ("absolute"). The alternating algorithm (sparcl's ``GetUW``)
needs only two products with ``D``: ``D w`` (a dissimilarity between observations)
and ``u'D`` (a score per feature). sparcl stores ``D`` (``n(n-1)/2 x p`` doubles,
12 GB at n = p = 1000); here it never exists:

* squared distance, ``weights="exact"`` (the default): the weighted Gram identity
  ``(D w)_ii' = a_i + a_i' - 2 x_i W x_i'`` with ``a_i = sum_j w_j x_ij^2``, and, for a
  symmetric ``U`` (zero diagonal) holding ``u``, ``(u'D)_j = sum_i r_i x_ij^2 - x_j' U x_j``
  with ``r = U 1``: two matrix products per iteration, O(n^2 + np) memory. Missing
  values enter through the observation mask ``M`` as two more products (see
  :class:`GramSquared`).
* absolute value, and every ``weights="sparcl"`` fit: ``D`` is computed block by
  block of observation pairs (``block_size`` pairs at a time) and each block is used
  and dropped (:class:`PairStream`). In "sparcl" mode the blocks reproduce sparcl
  exactly: single-precision differences, the NA rescaling in sparcl's order.

Only ``hclust_sparse_permute(null="dissimilarities")`` (sparcl's own null, which
permutes the columns of ``D``) materialises ``D``, under a memory budget.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy.cluster.hierarchy import linkage as scipy_linkage
from scipy.spatial.distance import pdist, squareform

from .._data.params import as_rng, check_bool, check_choice, check_int, user_stacklevel
from .._data.table import ColumnTable, read_numeric
from .._engine.parallel import run_parallel
from .._results.base import ClusterResult, labels_series
from .._results.format import call_string, fmt
from .._results.summary import Summary
from ..exceptions import ConvergenceWarning
from .permute import RULES, PermuteResult, make_permute_result
from .weights import WEIGHT_MODES, project_weights

__all__ = [
    "GramSquared",
    "MaterialisedD",
    "PairStream",
    "SparseHClustResult",
    "cutree",
    "default_wbound",
    "get_uw",
    "hclust_sparse_permute",
    "r_merge",
    "sparse_hclust_permute",
    "r_order",
    "sparse_hclust",
]

METHODS = ("average", "complete", "single", "centroid")
DISSIMILARITIES = ("squared", "absolute")
_SPELLINGS = {
    "squared": "squared",
    "squared.distance": "squared",
    "squared_distance": "squared",
    "absolute": "absolute",
    "absolute.value": "absolute",
    "absolute_value": "absolute",
}
NULLS = ("observations", "dissimilarities")

#: Relative L1 change of the weights below which the alternation stops (sparcl's).
TOL = 1e-4
#: Bytes per streamed block of pairs x features (when ``block_size=None``): cache-sized
#: blocks were measured 7-10x faster than 16-64 MB ones (n = 400, p = 2000, 2 cores).
BLOCK_BYTES = 2 * 2**20
#: Bytes of float64 per column block of the Gram products (n x columns).
GRAM_BLOCK_BYTES = 64 * 2**20
#: Largest pair x feature matrix ``null="dissimilarities"`` may hold (it keeps the
#: matrix and its permuted copy: twice this).
D_BUDGET_BYTES = 1024 * 2**20


# ------------------------------------------------------------------ parameter helpers
def default_wbound(p: int) -> float:
    """The default L1 bound: sparcl's ``0.5 sqrt(p)``, repaired for ``p <= 4``.

    sparcl's default is ``<= 1`` for ``p <= 4`` and then fails its own check
    ("Cannot have wbound <= 1"). There the midpoint ``(1 + sqrt(p)) / 2`` between one
    feature (bound 1) and no sparsity (bound ``sqrt(p)``) is used instead: 1.21, 1.37
    and 1.5 for ``p`` = 2, 3, 4. With ``p = 1`` any bound gives the single weight 1;
    1.5 is returned.

    Examples
    --------
    >>> default_wbound(100), default_wbound(4), round(default_wbound(2), 4), default_wbound(1)
    (5.0, 1.5, 1.2071, 1.5)
    """
    half = 0.5 * math.sqrt(p)
    if half > 1:
        return half
    if p <= 1:
        return 1.5
    return (1.0 + math.sqrt(p)) / 2.0


def _check_wbound(wbound: Any, p: int) -> float:
    if wbound is None:
        return default_wbound(p)
    if isinstance(wbound, bool | np.bool_) or not isinstance(wbound, int | float | np.number):
        raise TypeError(
            f"wbound must be a number > 1; got wbound={wbound!r} of type "
            f"{type(wbound).__name__}. For several bounds use hclust_sparse_permute(wbounds=...)."
        )
    s = float(wbound)
    if not np.isfinite(s) or s <= 1:
        raise ValueError(
            f"wbound must be a finite number > 1 (a bound <= 1 leaves at most one non-zero "
            f"weight; sparcl: 'Cannot have wbound <= 1'); got wbound={s:g}. Use e.g. "
            f"wbound=1.5, or leave the default (here {default_wbound(p):.4g})."
        )
    return s


def _check_wbounds(wbounds: Any, p: int) -> np.ndarray:
    if wbounds is None:
        hi = 0.7 * math.sqrt(p)
        if hi <= 1.1:  # p <= 2: sparcl's grid would end below its start
            hi = 1.5
        return np.linspace(1.1, hi, 10)
    arr = np.atleast_1d(np.asarray(wbounds, dtype=np.float64))
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(
            f"wbounds must be a sequence of at least 2 bounds to compare; got "
            f"wbounds={np.asarray(wbounds).tolist()}. Use sparse_hclust(..., wbound=<s>) for "
            f"one bound, or e.g. wbounds=np.linspace(1.1, 0.7 * np.sqrt(p), 10)."
        )
    if not np.isfinite(arr).all() or (arr <= 1).any():
        raise ValueError(
            f"wbounds must all be finite and > 1 (a bound <= 1 leaves at most one non-zero "
            f"weight; sparcl: 'Cannot have wbounds <= 1'); got wbounds={arr.tolist()}. Drop "
            f"the bounds <= 1."
        )
    return arr


def _check_dissimilarity(value: Any) -> str:
    if isinstance(value, str) and value in _SPELLINGS:
        return _SPELLINGS[value]
    raise ValueError(
        f"dissimilarity must be one of 'squared', 'absolute' (sparcl's 'squared.distance', "
        f"'absolute.value' are accepted too); got dissimilarity={value!r}."
    )


def _check_block_size(block_size: Any) -> int | None:
    if block_size is None:
        return None
    return check_int("block_size", block_size, min=1)


# ------------------------------------------------------------------ data preparation
def prepare_matrix(
    num: np.ndarray, *, scale: bool = False, standardize_arrays: bool = False
) -> np.ndarray:
    """The matrix the dissimilarities are computed from (a new float64 array, NaN kept).

    ``scale=True`` standardises each feature (column: mean 0, sd 1, ddof=1, over its
    observed values; constant columns are left centred). ``standardize_arrays=True``
    then standardises each observation (row), as sparcl's ``standardize.arrays``.
    """
    X = np.array(num, dtype=np.float64, copy=True)
    if scale:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mu = np.nanmean(X, axis=0)
            sd = np.nanstd(X, axis=0, ddof=1)
        sd = np.where(np.isfinite(sd) & (sd > 0), sd, 1.0)
        X -= mu
        X /= sd
    if standardize_arrays:
        n_obs = np.sum(~np.isnan(X), axis=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mu = np.nanmean(X, axis=1)
            sd = np.nanstd(X, axis=1, ddof=1)
        bad = np.flatnonzero(~((n_obs >= 2) & np.isfinite(sd) & (sd > 0)))
        if bad.size:
            raise ValueError(
                f"standardize_arrays=True divides each row by its sd, but rows at positions "
                f"{bad[:10].tolist()}{' ...' if bad.size > 10 else ''} are constant or have "
                f"fewer than 2 observed values; drop those rows or use standardize_arrays=False."
            )
        X -= mu[:, None]
        X /= sd[:, None]
    return X


def _condensed_starts(n: int) -> np.ndarray:
    """``starts[i]``: condensed index of the pair ``(i, i + 1)`` (R ``dist`` / scipy order)."""
    i = np.arange(n, dtype=np.int64)
    return i * n - i * (i + 1) // 2


def _upper(G: np.ndarray) -> np.ndarray:
    """The strict upper triangle of a square matrix in condensed order (a new array)."""
    return squareform(G, checks=False, force="tovector")


# ------------------------------------------------------------------ operators on D
class GramSquared:
    """``D w`` and ``u'D`` for squared distances from matrix products, never forming ``D``.

    With ``X0`` the column-centred data (missing cells set to 0), ``Q = X0**2`` and
    the observation mask ``M``::

        (D w)_ii' = f_ii' * [(Q W M')_ii' + (M W Q')_ii' - 2 (X0 W X0')_ii']
        (u'D)_j   = sum_i Q_ij (V M)_ij - sum_i X0_ij (V X0)_ij,   V = U * F

    where ``U`` is ``u`` as a symmetric matrix with zero diagonal and
    ``f_ii' = p / #{j: both observed}`` is sparcl's rescaling of a pair with missing
    values (0 for a pair with no feature in common). Without missing values ``M`` is
    all ones: ``(D w)_ii' = a_i + a_i' - 2 (X0 W X0')_ii'`` and
    ``(u'D)_j = r' Q_j - X0_j' U X0_j`` with ``r = U 1``. Centring the columns first
    (distances do not change) keeps the identity's cancellation small. Memory: a few
    ``n x n`` and ``n x p`` arrays. With few active features :meth:`step` also uses
    the low rank of ``U`` (O(nqp) instead of O(n^2 p) for ``u'D``).
    """

    def __init__(self, X: np.ndarray, *, copy: bool = True):
        X0 = np.array(X, dtype=np.float64, copy=copy)
        self.n, self.p = X0.shape
        self.npairs = self.n * (self.n - 1) // 2
        miss = np.isnan(X0)
        self.missing = bool(miss.any())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mu = np.nanmean(X0, axis=0) if self.missing else X0.mean(axis=0)
        X0 -= np.where(np.isfinite(mu), mu, 0.0)
        if self.missing:
            X0[miss] = 0.0
            self.M = (~miss).astype(np.float64)
            C = self.M @ self.M.T
            self.F = np.where(C > 0, self.p / np.where(C > 0, C, 1.0), 0.0)
            del C
        del miss
        self.X0 = X0
        self._colblock = max(1, GRAM_BLOCK_BYTES // (8 * max(self.n, 1)))

    def _blocks(self, cols: np.ndarray):
        for b0 in range(0, cols.size, self._colblock):
            yield cols[b0 : b0 + self._colblock]

    def dw(self, w: np.ndarray) -> np.ndarray:
        """``D w`` as a condensed vector (pairs in R ``dist`` order)."""
        act = np.flatnonzero(w)
        if act.size == 0:
            return np.zeros(self.npairs)
        G = np.zeros((self.n, self.n))
        a = np.zeros(self.n)
        for idx in self._blocks(act):
            wb = w[idx]
            Xb = self.X0[:, idx]
            Y = Xb * np.sqrt(wb)
            G += Y @ Y.T  # symmetric product (BLAS syrk)
            Y *= Y  # X0**2 W on the block
            if self.missing:
                G -= Y @ self.M[:, idx].T  # G = X0 W X0' - (Q W M')
            else:
                a += Y.sum(axis=1)
            del Y, Xb
        if self.missing:
            G *= -1.0
            G += G.T.copy()  # (QWM' - X0WX0') + its transpose
            G *= self.F
        else:
            G *= -2.0
            G += a[:, None]
            G += a[None, :]
        d = _upper(G)
        np.maximum(d, 0.0, out=d)
        return d

    def step(self, w: np.ndarray, ut: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """One alternation step: ``u`` = unit ``D w`` (projected off ``ut``) and ``u'D``.

        Without missing values and with few active features (``2 q < n``) the matrix
        of ``D w`` is ``G = a 1' + 1 a' - 2 Y Y'`` (``Y = X0_A W^(1/2)``, rank
        ``<= q + 2``), so ``U = (G - t Ut) / c`` and ``U X0`` cost O(nqp) instead of
        O(n^2 p) (``Ut X0`` for a ``uorth`` is computed once). Otherwise ``dw`` then
        ``utd``.
        """
        act = np.flatnonzero(w)
        if self.missing or act.size == 0 or 2 * act.size >= self.n:
            u = _unit(self.dw(w), ut)
            return u, self.utd(u)
        Y = self.X0[:, act] * np.sqrt(w[act])
        a = np.einsum("ij,ij->i", Y, Y)
        G = Y @ Y.T
        G *= -2.0
        G += a[:, None]
        G += a[None, :]
        d = _upper(G)
        del G
        np.maximum(d, 0.0, out=d)
        t = 0.0
        if ut is not None:
            t = float(ut @ d)
        u = _unit(d, ut)
        c = float(d @ u) - (t * float(ut @ u) if ut is not None else 0.0)  # = ||d - t ut||
        Yt1 = Y.sum(axis=0)
        r = (a * self.n + a.sum() - 2.0 * (Y @ Yt1)) / c
        if ut is not None:
            UtX, Ut1 = self._uorth_products(ut)
            r -= (t / c) * Ut1
        out = np.empty(self.p)
        for idx in self._blocks(np.arange(self.p)):
            sl = slice(int(idx[0]), int(idx[-1]) + 1)
            X0 = self.X0[:, sl]
            GX = Y @ (Y.T @ X0)
            GX *= -2.0
            GX += np.outer(a, X0.sum(axis=0))
            GX += a @ X0
            if ut is not None:
                GX -= t * UtX[:, sl]
            GX *= X0
            out[sl] = r @ (X0 * X0) - GX.sum(axis=0) / c
        return u, out

    def _uorth_products(self, ut: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cached = getattr(self, "_ut_cache", None)
        if cached is None or cached[0] is not ut:
            Ut = squareform(ut, checks=False, force="tomatrix")
            cached = (ut, Ut @ self.X0, Ut.sum(axis=1))
            self._ut_cache = cached
        return cached[1], cached[2]

    def utd(self, u: np.ndarray) -> np.ndarray:
        """``u'D`` (one score per feature) for a condensed ``u``."""
        U = squareform(u, checks=False, force="tomatrix")
        out = np.empty(self.p)
        if self.missing:
            U *= self.F
        else:
            r = U.sum(axis=1)
        for idx in self._blocks(np.arange(self.p)):
            sl = slice(int(idx[0]), int(idx[-1]) + 1)
            X0 = self.X0[:, sl]
            UX = U @ X0
            UX *= X0
            val = -UX.sum(axis=0)
            del UX
            Q = X0 * X0
            if self.missing:
                UM = U @ self.M[:, sl]
                UM *= Q
                val += UM.sum(axis=0)
                del UM
            else:
                val += r @ Q
            out[sl] = val
        return out


class PairStream:
    """``D w`` and ``u'D`` from blocks of observation pairs computed on the fly.

    Each block holds the rows of ``D`` for ``block_size`` consecutive pairs (R
    ``dist`` order) and is dropped after use, so memory is ``block_size x p`` floats
    whatever ``n``. ``single=True`` reproduces sparcl's Fortran: the data (missing
    cells set to 0) are cast to float32 and subtracted in float32, the differences
    taken back to float64; a pair with missing values is then multiplied by
    ``sqrt(p / c)`` (squared, before squaring) or ``p / c`` (absolute), ``c`` the
    number of features both observe, and cells where either value is missing are 0.
    """

    def __init__(
        self,
        X: np.ndarray,
        dissimilarity: str,
        *,
        single: bool = False,
        block_size: int | None = None,
    ):
        X = np.asarray(X, dtype=np.float64)
        self.n, self.p = X.shape
        self.npairs = self.n * (self.n - 1) // 2
        self.squared = dissimilarity == "squared"
        self.single = single
        miss = np.isnan(X)
        self.missing = bool(miss.any())
        X0 = np.where(miss, 0.0, X)
        self.X = X0.astype(np.float32) if single else X0
        self.starts = _condensed_starts(self.n)
        if self.missing:
            self.obs = ~miss
            Mf = self.obs.astype(np.float64)
            c = _upper(Mf @ Mf.T)
            with np.errstate(divide="ignore"):
                f = np.where(c > 0, self.p / np.where(c > 0, c, 1.0), 0.0)
            self.factor = np.sqrt(f) if self.squared else f
        self.block_size = block_size

    def _size(self, q: int) -> int:
        if self.block_size is not None:
            return self.block_size
        per_pair = 8 * max(q, 1) * (3 if self.missing else 2)
        return max(16, BLOCK_BYTES // per_pair)

    def blocks(self, cols: np.ndarray | None = None):
        """Yield ``(k0, k1, D[k0:k1, cols])`` over all pairs, block by block.

        A block's pairs are runs ``(i, j0..j1-1)`` of consecutive partners of one row,
        so each run is one broadcast subtraction of a slice of rows (no gathers).
        """
        A = self.X if cols is None else self.X[:, cols]
        obs = None if not self.missing else (self.obs if cols is None else self.obs[:, cols])
        step = self._size(A.shape[1])
        n, starts = self.n, self.starts
        for k0 in range(0, self.npairs, step):
            k1 = min(self.npairs, k0 + step)
            T = np.empty((k1 - k0, A.shape[1]), dtype=A.dtype)
            both = np.empty(T.shape, dtype=bool) if obs is not None else None
            i = int(np.searchsorted(starts, k0, side="right")) - 1
            k = k0
            while k < k1:
                j0 = k - int(starts[i]) + i + 1
                j1 = min(n, j0 + (k1 - k))
                seg = slice(k - k0, k - k0 + (j1 - j0))
                np.subtract(A[j0:j1], A[i], out=T[seg])
                if both is not None:
                    np.logical_and(obs[j0:j1], obs[i], out=both[seg])
                k += j1 - j0
                i += 1
            if self.single:
                T = T.astype(np.float64)
            np.abs(T, out=T)
            if both is not None:
                T *= self.factor[k0:k1, None]
                T[~both] = 0.0
            if self.squared:
                T *= T
            yield k0, k1, T

    def dw(self, w: np.ndarray) -> np.ndarray:
        act = np.flatnonzero(w)
        out = np.zeros(self.npairs)
        if act.size == 0:
            return out
        if not (self.single or self.squared or self.missing):
            # Exact absolute value without missing values: a weighted L1 distance.
            return pdist(self.X[:, act] * w[act], "cityblock")
        wa = w[act]
        for k0, k1, T in self.blocks(act):
            out[k0:k1] = T @ wa
        return out

    def utd(self, u: np.ndarray) -> np.ndarray:
        out = np.zeros(self.p)
        for k0, k1, T in self.blocks():
            out += u[k0:k1] @ T
        return out

    def materialise(self) -> np.ndarray:
        """The whole ``D`` (pairs x features): for sparcl's dissimilarity null only."""
        D = np.empty((self.npairs, self.p))
        for k0, k1, T in self.blocks():
            D[k0:k1] = T
        return D


class MaterialisedD:
    """``D`` held in memory (sparcl's representation; used by the dissimilarity null)."""

    def __init__(self, D: np.ndarray):
        self.D = D
        self.npairs, self.p = D.shape

    def dw(self, w: np.ndarray) -> np.ndarray:
        return self.D @ w

    def utd(self, u: np.ndarray) -> np.ndarray:
        return u @ self.D


def make_operator(
    X: np.ndarray,
    dissimilarity: str,
    mode: str,
    block_size: int | None = None,
    *,
    copy: bool = True,
) -> GramSquared | PairStream:
    """The operator for ``D``: Gram products (squared, exact) or streamed pair blocks.

    ``copy=False`` lets the Gram operator centre ``X`` in place (the caller's array).
    """
    if dissimilarity == "squared" and mode == "exact":
        return GramSquared(X, copy=copy)
    return PairStream(X, dissimilarity, single=(mode == "sparcl"), block_size=block_size)


# ------------------------------------------------------------------ the alternation
def _unit(u: np.ndarray, ut: np.ndarray | None) -> np.ndarray:
    if ut is not None:
        u = u - ut * (ut @ u)
    norm = math.sqrt(float(u @ u))
    if not norm > 0 or not np.isfinite(norm):
        raise ValueError(
            "D w is zero: every pair of observations has dissimilarity 0 on the features "
            "with non-zero weight (identical rows, or uorth= removes all of it); nothing to "
            "cluster."
        )
    return u / norm


def _step(op: Any, w: np.ndarray, ut: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """``(u, u'D)``: ``u`` = ``D w`` minus its projection on ``ut``, normalised."""
    if hasattr(op, "step"):
        return op.step(w, ut)
    u = _unit(op.dw(w), ut)
    return u, op.utd(u)


def first_step(op: Any, ut: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(u, u'D)`` from ``w = 1``: the first iteration, the same for every bound."""
    return _step(op, np.ones(op.p), ut)


def get_uw(
    op: Any,
    wbound: float,
    *,
    niter: int = 15,
    mode: str = "exact",
    uorth: np.ndarray | None = None,
    first: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, Any]:
    """The alternating maximisation (sparcl's ``GetUW``) on an operator for ``D``.

    From ``w = 1``: ``u <- D w`` (minus its projection on ``uorth``, a unit condensed
    vector), normalised; ``w <- projection of max(u'D, 0)`` (``mode`` "exact" or
    "sparcl", see :func:`~sparseclust._sparse.weights.project_weights`); until the relative
    L1 change of ``w`` is ``<= 1e-4`` or ``niter`` updates were made. Then ``u`` is
    recomputed from the final ``w`` and ``crit = u'(D w)``. Returns ``w``, ``u``
    (unit norm, condensed, not yet divided by sqrt 2), ``crit``, ``n_iter``,
    ``converged``.
    """
    w = np.ones(op.p)
    it = 0
    converged = False
    change = np.inf
    while it < niter:
        if it == 0 and first is not None:
            argw = first[1]
        else:
            _, argw = _step(op, w, uorth)
        argw = np.maximum(argw, 0.0)
        if not argw.max(initial=0.0) > 0:
            raise ValueError(
                "u'D has no positive entry (after the uorth projection): no feature separates "
                "the observations along u; nothing to cluster."
            )
        w_old = w
        w, _ = project_weights(argw, wbound, mode)
        it += 1
        change = float(np.sum(np.abs(w_old - w)) / np.sum(np.abs(w_old)))
        if change <= TOL:
            converged = True
            break
    dwv = op.dw(w)
    u = _unit(dwv / np.sum(w), uorth)
    crit = float(u @ dwv)
    return {"w": w, "u": u, "crit": crit, "n_iter": it, "converged": converged, "change": change}


# ------------------------------------------------------------------ trees (R conventions)
def tree_linkage(d: np.ndarray, method: str) -> np.ndarray:
    """scipy linkage of a condensed dissimilarity as R's ``hclust`` builds it.

    ``average``, ``complete`` and ``single`` are scipy's. R's ``centroid`` applies the
    Lance-Williams update for squared distances to the dissimilarities as given:
    scipy's centroid on ``sqrt(d)``, heights squared back.
    """
    if method == "centroid":
        if d.size and d.min() < 0:
            raise ValueError(
                f"method='centroid' needs non-negative dissimilarities, but u has negative "
                f"entries (min {d.min():.3g}; uorth= projections produce them). Use "
                f"method='average', 'complete' or 'single'."
            )
        Z = scipy_linkage(np.sqrt(d), "centroid")
        if not np.isfinite(Z[:, 2]).all():
            raise ValueError(
                "method='centroid' gave undefined merge heights (a Lance-Williams update "
                "went negative); use method='average', 'complete' or 'single'."
            )
        Z[:, 2] **= 2
    else:
        Z = scipy_linkage(d, method)
    return _r_ordered_linkage(Z)


def r_merge(Z: np.ndarray) -> np.ndarray:
    """R's ``hclust$merge`` from a scipy linkage (``-i``: observation i, ``+s``: step s, 1-based).

    In each row a singleton comes first, two singletons in increasing index, two
    clusters in increasing step (R's convention).

    Examples
    --------
    >>> Z = np.array([[0, 2, 1.0, 2], [1, 3, 2.0, 3]])
    >>> r_merge(Z).tolist()
    [[-1, -3], [-2, 1]]
    """
    n = Z.shape[0] + 1
    ab = Z[:, :2].astype(np.int64)
    m = np.where(ab < n, -(ab + 1), ab - n + 1)
    swap = (
        ((m[:, 0] > 0) & (m[:, 1] < 0))
        | ((m[:, 0] > 0) & (m[:, 1] > 0) & (m[:, 0] > m[:, 1]))
        | ((m[:, 0] < 0) & (m[:, 1] < 0) & (m[:, 0] < m[:, 1]))
    )
    m[swap] = m[swap][:, ::-1]
    return m


def _r_ordered_linkage(Z: np.ndarray) -> np.ndarray:
    """The linkage with each row's children in R's order (so scipy's leaf order is R's)."""
    n = Z.shape[0] + 1
    m = r_merge(Z)
    out = np.array(Z, dtype=np.float64, copy=True)
    out[:, :2] = np.where(m < 0, -m - 1, m + n - 1)
    return out


def r_order(merge: np.ndarray) -> np.ndarray:
    """R's ``hclust$order`` (0-based here): leaves left to right, children in merge order.

    Examples
    --------
    >>> r_order(np.array([[-1, -3], [-2, 1]])).tolist()
    [1, 0, 2]
    """
    merge = np.asarray(merge)
    n = merge.shape[0] + 1
    if n == 1:
        return np.zeros(1, dtype=np.int64)
    out = []
    stack = [n - 1]  # 1-based step n-1 (the root)
    while stack:
        node = stack.pop()
        if node < 0:
            out.append(-node - 1)
        else:
            a, b = merge[node - 1]
            stack.append(int(b))
            stack.append(int(a))
    return np.asarray(out, dtype=np.int64)


def cutree(merge: np.ndarray, k: int) -> np.ndarray:
    """R's ``cutree(tree, k)`` as 0-based labels: the first ``n - k`` merges, clusters
    numbered by first appearance in data order.

    Examples
    --------
    >>> cutree(np.array([[-1, -3], [-2, 1]]), 2).tolist()
    [0, 1, 0]
    """
    merge = np.asarray(merge)
    n = merge.shape[0] + 1
    parent = np.arange(n)

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    rep = np.empty(max(n - 1, 0), dtype=np.int64)  # an observation in each step's cluster
    for s in range(n - k):
        a, b = (int(v) for v in merge[s])
        ra = find(-a - 1 if a < 0 else int(rep[a - 1]))
        rb = find(-b - 1 if b < 0 else int(rep[b - 1]))
        parent[rb] = ra
        rep[s] = ra
    roots = np.array([find(i) for i in range(n)])
    _, first = np.unique(roots, return_index=True)
    rank = np.empty(n, dtype=np.int64)
    rank[roots[np.sort(first)]] = np.arange(first.size)
    return rank[roots]


def _feature_linkage(X: np.ndarray, selected: np.ndarray, method: str) -> np.ndarray | None:
    """sparcl's ``cluster.features``: hclust of ``2 (1 - cor)`` (pairwise complete) of the
    selected features; ``None`` with fewer than two. An undefined correlation (a
    feature constant on the rows it shares with another) counts as 0 (distance 2)."""
    if selected.size < 2:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        cor = pd.DataFrame(X[:, selected]).corr(min_periods=2).to_numpy()
    cor = np.where(np.isfinite(cor), cor, 0.0)
    np.fill_diagonal(cor, 1.0)
    d = np.maximum(_upper(2.0 * (1.0 - cor)), 0.0)
    return tree_linkage(d, method)


# ------------------------------------------------------------------ result
@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class SparseHClustResult(ClusterResult):
    """Result of :func:`sparse_hclust` (sparcl's ``HierarchicalSparseCluster``).

    Attributes
    ----------
    labels : Series (Int64)
        ``cut(k)`` when ``k`` was given; otherwise 0 for every observation (the
        uncut tree is one cluster). ``<NA>`` on rows dropped for missing values.
    weights : Series
        Feature weights (``>= 0``, unit L2 norm, L1 norm ``<= wbound`` in exact
        mode), indexed by column name.
    u : ndarray
        The dissimilarity the tree is built from, condensed (pairs ``(0,1), (0,2),
        ..., (1,2), ...``: R's ``dist`` and scipy's order), divided by ``sqrt(2)`` as
        sparcl's ``$u`` (so ``u_matrix()`` has Frobenius norm 1).
    crit : float
        The criterion ``u'(D w)`` at the final ``u`` and ``w``.
    wbound : float
        The L1 bound ``s``.
    method, dissimilarity, weight_mode : str
        Linkage, ``"squared"``/``"absolute"``, ``"exact"``/``"sparcl"``.
    linkage : ndarray (n-1, 4)
        scipy linkage matrix (children in R's order, heights as R's ``hclust``:
        squared for ``centroid``).
    merge : ndarray (n-1, 2) of int
        R's ``hc$merge`` (``-i``: observation ``i``, 1-based; ``s > 0``: step ``s``).
    height : ndarray
        R's ``hc$height``.
    order : ndarray of int
        Leaf order, 0-based (R's ``hc$order`` minus 1).
    k : int or None
        The number of clusters ``labels`` was cut at.
    linkage_features : ndarray or None
        With ``cluster_features=True``: the tree of the selected features
        (``2 (1 - cor)``), as a scipy linkage; ``feature_names`` names its leaves.
    feature_names : list of str or None
    obs_names : Index
        Row labels of the observations in the tree (the kept rows).
    n_iter, converged : int, bool
        Alternation steps and whether the weights settled (relative L1 change
        ``<= 1e-4``) within ``niter``.
    """

    weights: pd.Series
    u: np.ndarray
    crit: float
    wbound: float
    method: str
    dissimilarity: str
    weight_mode: str
    linkage: np.ndarray
    merge: np.ndarray
    height: np.ndarray
    order: np.ndarray
    obs_names: pd.Index
    k: int | None = None
    linkage_features: np.ndarray | None = None
    feature_names: list[str] | None = None
    standardize_arrays: bool = False
    scale: bool = False
    complementary: bool = False

    method_name: ClassVar[str] = "Sparse hierarchical clustering"
    plot_hint: ClassVar[str] = (
        ".cut(k) for clusters, .plot() for the tree and weights, .plot_dendrogram(y=...)"
    )

    # ----------------------------------------------------------------- derived
    @cached_property
    def n_nonzero(self) -> int:
        """Number of non-zero weights."""
        return int((self.weights != 0).sum())

    @property
    def selected(self) -> list[str]:
        """Names of the features with non-zero weight, largest weight first."""
        w = self.weights[self.weights != 0]
        return list(w.sort_values(ascending=False, kind="stable").index)

    def cut(self, k: int | None = None, *, height: float | None = None) -> pd.Series:
        """Cut the tree into ``k`` clusters (or at ``height``), like R's ``cutree``.

        Labels are 0-based, numbered by first appearance in data order (R's
        ``cutree`` minus 1), on the input index (``<NA>`` on dropped rows).
        ``height`` needs non-decreasing merge heights (not so for centroid trees
        with inversions), as in R.
        """
        n = len(self.order)
        if (k is None) == (height is None):
            raise ValueError("cut needs exactly one of k= or height=; e.g. result.cut(3).")
        if height is not None:
            h = float(height)
            if np.any(np.diff(self.height) < 0):
                raise ValueError(
                    "cut(height=) needs non-decreasing merge heights; this tree (centroid "
                    "linkage) has inversions. Use cut(k=...)."
                )
            k = n - int(np.sum(self.height <= h))
        k = check_int("k", k, min=1, max=n)
        lab = cutree(self.merge, k)
        out = pd.Series(pd.array(np.full(len(self.labels), pd.NA), dtype="Int64"))
        out.index = self.labels.index
        out.iloc[np.flatnonzero(self.labels.notna().to_numpy())] = lab
        return out.rename("cluster")

    def u_matrix(self) -> pd.DataFrame:
        """``u`` as the symmetric ``n x n`` matrix with zero diagonal (sparcl's ``$u``)."""
        return pd.DataFrame(squareform(self.u), index=self.obs_names, columns=self.obs_names)

    @property
    def leaf_names(self) -> list:
        """Row labels of the leaves, left to right."""
        return list(self.obs_names[self.order])

    # ------------------------------------------------------------------- print
    def _headline(self) -> str:
        return (
            f"Sparse hierarchical clustering ({self.method} linkage, {self.dissimilarity} "
            f"distance, wbound={fmt(self.wbound)})"
        )

    def _detail_lines(self) -> list[str]:
        top = self.weights[self.weights > 0].sort_values(ascending=False).head(5)
        lines = [
            f"Non-zero weights: {self.n_nonzero} of {len(self.weights)} (sum of weights "
            f"{fmt(float(self.weights.sum()), 7)}); criterion u'Dw = {fmt(self.crit, 7)}",
            "Top weights: " + ", ".join(f"{k} {v:.3g}" for k, v in top.items()),
        ]
        if self.weight_mode == "sparcl":
            lines.append("Weights in sparcl-compatible mode (BinarySearch, float32 distances).")
        return lines

    def _lines(self) -> list[str]:
        lines = super()._lines()
        if self.k is None:
            lines[2] = "Tree not cut: use .cut(k) for cluster labels (or pass k=)."
        else:
            lines[2] = f"Cut at k={self.k}: cluster sizes {lines[2].split(': ', 1)[1]}"
        return lines

    def _notes(self) -> list[str]:
        notes = [n.replace("(raise max_iter)", "(raise niter)") for n in super()._notes()]
        if self.standardize_arrays:
            notes.append("Each observation (row) was standardised before the distances.")
        if self.scale:
            notes.append("Each feature was standardised (mean 0, sd 1) before the distances.")
        if self.complementary:
            notes.append("Complementary clustering: u was kept orthogonal to uorth.")
        if self.k is None:
            notes.append("The tree was not cut: labels are all 0; use .cut(k).")
        return notes

    def _summary_tables(self) -> dict[str, pd.DataFrame]:
        sel = self.weights[self.weights != 0].sort_values(ascending=False, kind="stable")
        pos = {name: i for i, name in enumerate(self.weights.index)}
        weights = pd.DataFrame(
            {"weight": sel.to_numpy(), "feature_index": [pos[c] for c in sel.index]},
            index=pd.Index(sel.index, name="feature"),
        )
        params = pd.DataFrame(
            {
                "value": [
                    fmt(self.wbound, 6),
                    self.method,
                    self.dissimilarity,
                    self.weight_mode,
                    f"{self.n_nonzero} of {len(self.weights)}",
                    fmt(float(self.weights.sum()), 7),
                    fmt(self.crit, 7),
                    self.n_iter,
                    self.converged,
                    self.standardize_arrays,
                    self.scale,
                    self.complementary,
                ]
            },
            index=[
                "wbound",
                "linkage",
                "dissimilarity",
                "weights",
                "non-zero weights",
                "sum of weights",
                "criterion",
                "iterations",
                "converged",
                "standardize_arrays",
                "scale",
                "uorth",
            ],
        )
        tables = {"parameters": params, "weights": weights}
        if self.k is not None:
            tables["clusters"] = self.sizes.to_frame()
        return tables

    def summary(self) -> Summary:
        """Tables ``parameters``, ``weights`` (selected features), and with ``k``
        ``clusters`` and ``profiles``; plus notes."""
        tables = self._summary_tables()
        if self.k is not None and self.table is not None:
            tables["profiles"] = self.profiles()
        return Summary(
            title=f"{self.method_name}: summary",
            call=self.call,
            tables=tables,
            notes=self._notes(),
        )

    # ------------------------------------------------------------------- plots
    def plot(self, **kwargs: Any) -> Any:
        """sparcl's two panels: the dendrogram (left) and weights vs feature index (right)."""
        from .._plot.dendrogram import plot_hclust

        return plot_hclust(self, **kwargs)

    def plot_weights(self, ax: Any = None, **kwargs: Any) -> Any:
        """Weights against feature index."""
        from .._plot.dendrogram import plot_weights_index

        return plot_weights_index(self, ax=ax, **kwargs)

    def plot_dendrogram(self, y: Any = None, ax: Any = None, **kwargs: Any) -> Any:
        """The dendrogram; with ``y`` the leaves are coloured by it (``color_dendrogram``)."""
        from .._plot.dendrogram import plot_dendrogram

        return plot_dendrogram(self, y=y, ax=ax, **kwargs)


# ------------------------------------------------------------------ public functions
def _uorth_vector(uorth: Any, n: int) -> np.ndarray | None:
    """A unit condensed vector from an n x n symmetric matrix, a condensed vector or a result."""
    if uorth is None:
        return None
    if isinstance(uorth, SparseHClustResult):
        vec = np.asarray(uorth.u, dtype=np.float64)
    else:
        arr = np.asarray(uorth.to_numpy() if isinstance(uorth, pd.DataFrame) else uorth)
        if arr.dtype.kind not in "biuf":
            raise TypeError(
                f"uorth must be numeric (an n x n symmetric matrix, a condensed vector or a "
                f"SparseHClustResult); got dtype {arr.dtype}."
            )
        arr = arr.astype(np.float64)
        if arr.ndim == 2:
            if arr.shape != (n, n):
                raise ValueError(
                    f"uorth must be {n} x {n} (one row and column per observation); got shape "
                    f"{arr.shape}."
                )
            asym = float(np.max(np.abs(arr - arr.T))) if n else 0.0
            if asym > 1e-10 * max(1.0, float(np.max(np.abs(arr)))):
                raise ValueError(
                    f"uorth must be symmetric (sparcl: 'Uorth must be symmetric'); got "
                    f"max |uorth - uorth.T| = {asym:.3g}. Pass a previous fit's u_matrix() or "
                    f"the fit itself."
                )
            vec = _upper(arr)
        elif arr.ndim == 1:
            vec = arr
        else:
            raise ValueError(
                f"uorth must be a matrix or a condensed vector; got shape {arr.shape}."
            )
    if vec.shape != (n * (n - 1) // 2,):
        raise ValueError(
            f"uorth must hold one value per pair of the {n} observations ({n * (n - 1) // 2}); "
            f"got {vec.size}. Use a fit on the same rows."
        )
    if not np.isfinite(vec).all():
        raise ValueError("uorth contains non-finite values; pass a finite matrix.")
    norm = float(np.linalg.norm(vec))
    if norm == 0:
        raise ValueError("uorth is all zero; there is nothing to be orthogonal to.")
    return vec / norm


def _read(
    x: Any, data: Any, *, missing: str, numeric: Any, categorical: Any
) -> tuple[ColumnTable, list[str]]:
    table = read_numeric(x, data=data, categorical=categorical, numeric=numeric, missing=missing)
    return table, list(table.numeric_names)


def _warn_convergence(what: str, niter: int, change: float) -> None:
    warnings.warn(
        f"{what} did not converge in niter={niter} iterations: the weights still "
        f"changed by {change:.2g} (relative L1; tolerance {TOL:g}) at the last step. The result "
        f"is usually close; raise the cap (e.g. niter=50) to converge. sparcl stops at 15 "
        "silently.",
        ConvergenceWarning,
        stacklevel=user_stacklevel(),
    )


def _build_result(
    fit: dict,
    *,
    table: ColumnTable,
    names: list[str],
    wbound: float,
    method: str,
    dissimilarity: str,
    mode: str,
    k: int | None,
    call: str,
    params: dict,
    keep_data: bool,
    standardize_arrays: bool,
    scale: bool,
    complementary: bool,
    cluster_features: bool = False,
    method_features: str = "average",
) -> SparseHClustResult:
    u = fit["u"] / math.sqrt(2.0)
    Z = tree_linkage(u, method)
    merge = r_merge(Z)
    n = table.n_obs
    lab = cutree(merge, k) if k is not None else np.zeros(n, dtype=np.int64)
    w = pd.Series(fit["w"], index=pd.Index(names), name="weight")
    lf = fnames = None
    if cluster_features:
        sel = np.flatnonzero(fit["w"] != 0)
        lf = _feature_linkage(table.numeric, sel, method_features)
        fnames = [names[j] for j in sel]
    return SparseHClustResult(
        labels=labels_series(table, lab),
        n_iter=int(fit["n_iter"]),
        converged=bool(fit["converged"]),
        call=call,
        params=params,
        variables=table.spec,
        table=table if keep_data else None,
        weights=w,
        u=u,
        crit=float(fit["crit"]),
        wbound=float(wbound),
        method=method,
        dissimilarity=dissimilarity,
        weight_mode=mode,
        linkage=Z,
        merge=merge,
        height=Z[:, 2].copy(),
        order=r_order(merge),
        obs_names=table.kept_index,
        k=k,
        linkage_features=lf,
        feature_names=fnames,
        standardize_arrays=standardize_arrays,
        scale=scale,
        complementary=complementary,
    )


def sparse_hclust(
    x: Any = None,
    /,
    *,
    data: Any = None,
    wbound: float | None = None,
    method: str = "average",
    dissimilarity: str = "squared",
    weights: str = "exact",
    k: int | None = None,
    uorth: Any = None,
    standardize_arrays: bool = False,
    cluster_features: bool = False,
    method_features: str = "average",
    niter: int = 15,
    missing: str = "native",
    scale: bool = False,
    numeric: Any = None,
    categorical: Any = None,
    keep_data: bool = True,
    block_size: int | None = None,
) -> SparseHClustResult:
    """Sparse hierarchical clustering (sparcl's ``HierarchicalSparseCluster``).

    Finds feature weights ``w`` (sparse: ``||w||_1 <= wbound``) and a dissimilarity
    ``u`` between observations that maximise ``sum_j w_j sum_{i<i'} d_ii'j u_ii'``
    (Witten & Tibshirani 2010), then builds a hierarchical tree on ``u``.

    Parameters
    ----------
    x : DataFrame, 2-D array or formula string
        Numeric data (rows are observations), or a formula such as ``"~ . - id"``
        with ``data=``. Categorical columns are an error.
    data : DataFrame, optional
        The data for a formula.
    wbound : float, optional
        The L1 bound ``s > 1`` on the weights (1 < s <= sqrt(p); larger gives no
        sparsity). Default ``0.5 * sqrt(p)`` as sparcl; for ``p <= 4``, where that is
        ``<= 1`` and sparcl fails, ``(1 + sqrt(p)) / 2`` (see :func:`default_wbound`).
    method : {"average", "complete", "single", "centroid"}
        Linkage (R's ``hclust`` methods; ``centroid`` as R defines it on ``u``).
    dissimilarity : {"squared", "absolute"}
        Per-feature ``(x_ij - x_i'j)^2`` or ``|x_ij - x_i'j|`` (sparcl's
        ``"squared.distance"`` / ``"absolute.value"`` are accepted).
    weights : {"exact", "sparcl"}
        ``"exact"``: exact L1/L2 projection in float64 (scale-invariant, the bound
        always holds). ``"sparcl"``: sparcl 1.0.4's numbers (its ``BinarySearch``
        with absolute tolerances, single-precision differences).
    k : int, optional
        Cut the tree into ``k`` clusters for ``labels`` (else ``labels`` are all 0;
        ``result.cut(k)`` cuts later).
    uorth : ndarray, condensed vector or SparseHClustResult, optional
        Complementary clustering: keep ``u`` orthogonal to this (a previous fit's
        ``u``), to find structure the first tree did not use.
    standardize_arrays : bool
        Standardise each observation (row: mean 0, sd 1) first, as sparcl's
        ``standardize.arrays``.
    cluster_features : bool
        Also cluster the selected features (``2 (1 - cor)``, pairwise complete
        correlations of the unstandardised data), stored as ``linkage_features``.
    method_features : str
        Linkage for ``cluster_features``.
    niter : int
        Cap on the alternating updates (sparcl's 15). Hitting it without the weights
        settling issues a ``ConvergenceWarning`` (sparcl is silent).
    missing : {"native", "drop", "raise"}
        ``"native"`` (default): sparcl's rescaling: a pair's dissimilarities over the
        features both observe are scaled by ``p / #(features both observe)``, cells
        with a missing value count 0. ``"drop"`` drops incomplete rows.
    scale : bool
        Standardise each feature first (sparcl does not).
    numeric, categorical : list of str, optional
        Override detected column kinds (categorical remains an error).
    keep_data : bool
        Keep the typed data on the result (for ``summary()`` profiles).
    block_size : int, optional
        Pairs per streamed block for the absolute distance and ``weights="sparcl"``
        (default: blocks of about 1 MB, which stay in cache).

    Returns
    -------
    SparseHClustResult

    Notes
    -----
    Never forms sparcl's ``n(n-1)/2 x p`` matrix: for the squared distance (exact
    mode) ``D w`` and ``u'D`` are matrix products of the data (weighted Gram
    identity), O(n^2 + np) memory; otherwise ``D`` is streamed in blocks of pairs.
    The alternation starts from ``w = 1`` and stops when the relative L1 change of
    ``w`` is ``<= 1e-4`` (sparcl's rule). R to Python: ``HierarchicalSparseCluster(x,
    wbound=, method=, dissimilarity=, uorth=, standardize.arrays=)`` is
    ``sparse_hclust(x, wbound=, method=, dissimilarity=, uorth=, standardize_arrays=)``;
    ``out$hc$merge`` is ``.merge``, ``out$hc$order`` is ``.order + 1``, ``out$u`` is
    ``.u_matrix()``, ``out$ws`` is ``.weights``, ``cutree(out$hc, k)`` is ``.cut(k) + 1``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> X = rng.standard_normal((30, 20))
    >>> X[:15, :3] += 3.0
    >>> fit = sparse_hclust(X, wbound=1.5, k=2)
    >>> fit.selected
    ['x0', 'x1', 'x2']
    >>> fit.labels.value_counts().sort_index().tolist()
    [15, 15]
    >>> fit.merge[:2].tolist()  # R's hc$merge convention
    [[...], [...]]
    """
    call = call_string(sparse_hclust, locals())
    check_choice("method", method, METHODS)
    check_choice("method_features", method_features, METHODS)
    dissimilarity = _check_dissimilarity(dissimilarity)
    check_choice("weights", weights, WEIGHT_MODES)
    niter = check_int("niter", niter, min=1)
    standardize_arrays = check_bool("standardize_arrays", standardize_arrays)
    cluster_features = check_bool("cluster_features", cluster_features)
    scale = check_bool("scale", scale)
    keep_data = check_bool("keep_data", keep_data)
    block_size = _check_block_size(block_size)
    table, names = _read(x, data, missing=missing, numeric=numeric, categorical=categorical)
    n, p = table.numeric.shape
    wbound = _check_wbound(wbound, p)
    if k is not None:
        k = check_int("k", k, min=1, max=n)
    ut = _uorth_vector(uorth, n)
    X = prepare_matrix(table.numeric, scale=scale, standardize_arrays=standardize_arrays)
    op = make_operator(X, dissimilarity, weights, block_size, copy=False)
    del X
    fit = get_uw(op, wbound, niter=niter, mode=weights, uorth=ut)
    del op
    if not fit["converged"]:
        _warn_convergence(f"sparse_hclust (wbound={wbound:g})", niter, fit["change"])
    params = {
        "wbound": wbound,
        "method": method,
        "dissimilarity": dissimilarity,
        "weights": weights,
        "k": k,
        "niter": niter,
        "standardize_arrays": standardize_arrays,
        "scale": scale,
        "missing": missing,
        "uorth": ut is not None,
        "cluster_features": cluster_features,
        "method_features": method_features,
    }
    return _build_result(
        fit,
        table=table,
        names=names,
        wbound=wbound,
        method=method,
        dissimilarity=dissimilarity,
        mode=weights,
        k=k,
        call=call,
        params=params,
        keep_data=keep_data,
        standardize_arrays=standardize_arrays,
        scale=scale,
        complementary=ut is not None,
        cluster_features=cluster_features,
        method_features=method_features,
    )


def _crits(op: Any, wbounds: np.ndarray, niter: int, mode: str) -> list[float]:
    first = first_step(op)
    return [get_uw(op, s, niter=niter, mode=mode, first=first)["crit"] for s in wbounds]


def _permuted_observations_task(
    X: np.ndarray,
    gen: np.random.Generator,
    wbounds: np.ndarray,
    dissimilarity: str,
    mode: str,
    niter: int,
    block_size: int | None,
) -> list[float]:
    """Objectives at every bound on ``X`` with each column permuted independently."""
    Xp = gen.permuted(X, axis=0)
    op = make_operator(Xp, dissimilarity, mode, block_size, copy=False)
    return _crits(op, wbounds, niter, mode)


def hclust_sparse_permute(
    x: Any = None,
    /,
    *,
    data: Any = None,
    wbounds: Any = None,
    nperms: int = 10,
    dissimilarity: str = "squared",
    method: str = "average",
    weights: str = "exact",
    null: str = "observations",
    standardize_arrays: bool = False,
    rule: str = "max",
    k: int | None = None,
    niter: int = 15,
    missing: str = "native",
    scale: bool = False,
    numeric: Any = None,
    categorical: Any = None,
    keep_data: bool = True,
    block_size: int | None = None,
    n_jobs: int | None = None,
    progress: bool | None = None,
    rng: Any = None,
) -> PermuteResult:
    """Choose the L1 bound of :func:`sparse_hclust` by the gap statistic (sparcl's
    ``HierarchicalSparseCluster.permute``).

    For each bound ``s`` the criterion ``O(s) = u'Dw`` on the data is compared with
    its values ``O*_b(s)`` on ``nperms`` null data sets: ``gap(s) = log O(s) -
    mean_b log O*_b(s)``, sd the sample sd of ``log O*_b(s)``.

    Parameters
    ----------
    x, data : see :func:`sparse_hclust`.
    wbounds : sequence of float, optional
        At least two bounds, all ``> 1``. Default ``linspace(1.1, 0.7 sqrt(p), 10)``
        (sparcl's grid; for ``p <= 2``, where it would end below 1.1, up to 1.5).
    nperms : int
        Number of null data sets (sparcl's 10).
    dissimilarity, method, weights, standardize_arrays, niter, missing, scale,
    numeric, categorical, keep_data, block_size : see :func:`sparse_hclust`.
        ``method`` only shapes the trees of the returned fits (the criterion does not
        depend on it).
    null : {"observations", "dissimilarities"}
        ``"observations"`` (default; the null sparcl's documentation and the paper
        describe): permute each feature's values across the observations,
        independently per feature, and refit. ``"dissimilarities"``: what sparcl's
        code does: permute each column of the pair x feature matrix ``D``, each
        permutation applied to the previous one; this needs ``D`` in memory (at most
        1 GiB, else an error) and runs serially.
    rule : {"max", "1se"}
        First maximum of the gap (sparcl), or the smallest bound within one sd of it.
    k : int, optional
        Cut the returned fits into ``k`` clusters (their ``labels``).
    n_jobs : int, optional
        Parallel workers for the permutations (joblib); results do not depend on it.
    progress : bool, optional
        tqdm progress bar over the permutations. Default: shown when the permutations
        are expected to take more than 10 s (estimated from the fits on the data).
    rng : None, int or Generator
        Seeds the permutations (one child generator per permutation).

    Returns
    -------
    PermuteResult
        ``table`` (wbound, n_nonzero, gap, sd_gap), ``best_wbound``, ``best`` (the
        fit on the data at the chosen bound: a :class:`SparseHClustResult`), ``fits``
        (every bound), ``tots``, ``permtots``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> X = rng.standard_normal((30, 12))
    >>> X[:15, :2] += 3.0
    >>> perm = hclust_sparse_permute(X, wbounds=[1.2, 2.0, 3.0], nperms=4, rng=0)
    >>> perm.table.columns.tolist()
    ['wbound', 'n_nonzero', 'gap', 'sd_gap']
    >>> perm.table["n_nonzero"].tolist()
    [2, 12, 12]
    >>> sorted(perm.fits[0].selected)
    ['x0', 'x1']
    """
    call = call_string(hclust_sparse_permute, locals())
    check_choice("method", method, METHODS)
    dissimilarity = _check_dissimilarity(dissimilarity)
    check_choice("weights", weights, WEIGHT_MODES)
    check_choice("null", null, NULLS)
    check_choice("rule", rule, RULES)
    nperms = check_int("nperms", nperms, min=2)
    niter = check_int("niter", niter, min=1)
    standardize_arrays = check_bool("standardize_arrays", standardize_arrays)
    scale = check_bool("scale", scale)
    keep_data = check_bool("keep_data", keep_data)
    block_size = _check_block_size(block_size)
    if n_jobs is not None:
        n_jobs = check_int("n_jobs", n_jobs)
        if n_jobs == 0:
            raise ValueError("n_jobs must be a non-zero integer (or -1 for all cores); got 0.")
    if progress is not None:
        progress = check_bool("progress", progress)
    generator = as_rng(rng)
    table, names = _read(x, data, missing=missing, numeric=numeric, categorical=categorical)
    n, p = table.numeric.shape
    wbounds = _check_wbounds(wbounds, p)
    if k is not None:
        k = check_int("k", k, min=1, max=n)
    X = prepare_matrix(table.numeric, scale=scale, standardize_arrays=standardize_arrays)
    if null == "dissimilarities":
        need = 2 * 8 * (n * (n - 1) // 2) * p
        if need > D_BUDGET_BYTES:
            raise ValueError(
                f"null='dissimilarities' permutes sparcl's pair x feature matrix, which needs "
                f"{need / 2**30:.2f} GiB here (n={n}, p={p}; limit "
                f"{D_BUDGET_BYTES / 2**30:.0f} GiB). Use null='observations' (the default), "
                f"which never builds it."
            )

    # Fits on the data: one operator for every bound; the first step is shared.
    t0 = time.perf_counter()
    op = make_operator(X, dissimilarity, weights, block_size)
    first = first_step(op)
    raw = [get_uw(op, s, niter=niter, mode=weights, first=first) for s in wbounds]
    elapsed = time.perf_counter() - t0
    bad = [f for f in raw if not f["converged"]]
    if bad:
        _warn_convergence(
            f"{len(bad)} of {len(wbounds)} fits on the data",
            niter,
            max(f["change"] for f in bad),
        )
    params = {
        "wbounds": wbounds.tolist(),
        "nperms": nperms,
        "dissimilarity": dissimilarity,
        "method": method,
        "weights": weights,
        "null": null,
        "standardize_arrays": standardize_arrays,
        "scale": scale,
        "rule": rule,
        "niter": niter,
        "missing": missing,
    }
    fits = [
        _build_result(
            f,
            table=table,
            names=names,
            wbound=s,
            method=method,
            dissimilarity=dissimilarity,
            mode=weights,
            k=k,
            call=call,
            params={**params, "wbound": float(s)},
            keep_data=keep_data,
            standardize_arrays=standardize_arrays,
            scale=scale,
            complementary=False,
        )
        for f, s in zip(raw, wbounds, strict=True)
    ]
    tots = np.array([f["crit"] for f in raw])
    n_nonzero = np.array([int(np.sum(f["w"] != 0)) for f in raw])

    # The null.
    workers = 1 if n_jobs in (None, 1) else (n_jobs if n_jobs > 0 else _cpu_count())
    if progress is None:
        progress = elapsed * nperms / (workers if null == "observations" else 1) > 10.0
    gens = generator.spawn(nperms)
    if null == "observations":
        tasks = [(X, g, wbounds, dissimilarity, weights, niter, block_size) for g in gens]
        perm = run_parallel(
            _permuted_observations_task,
            tasks,
            n_jobs=n_jobs,
            progress=progress,
            desc="permutations",
        )
    else:
        D = PairStream(
            X, dissimilarity, single=(weights == "sparcl"), block_size=block_size
        ).materialise()
        iterator: Any = gens
        if progress:
            from tqdm.auto import tqdm

            iterator = tqdm(gens, desc="permutations", leave=False)
        perm = []
        for g in iterator:
            g.permuted(D, axis=0, out=D)  # accumulates, as sparcl
            perm.append(_crits(MaterialisedD(D), wbounds, niter, weights))
        del D
    permtots = np.array(perm, dtype=np.float64).T  # bounds x permutations
    return make_permute_result(
        wbounds=wbounds,
        fits=fits,
        tots=tots,
        permtots=permtots,
        n_nonzero=n_nonzero,
        rule=rule,
        null=null,
        call=call,
        params=params,
        method="hclust",
    )


def _cpu_count() -> int:
    import os

    return max(1, os.cpu_count() or 1)


#: Alias: ``sparse_hclust_permute`` next to the canonical name (sparcl users look for either).
sparse_hclust_permute = hclust_sparse_permute
