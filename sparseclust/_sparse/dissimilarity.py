"""The pair x feature matrix ``D`` of sparse hierarchical clustering, as operators that never form it.

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
* absolute value, and ``weights="sparcl"`` with missing values: ``D`` is computed
  block by block of observation pairs (``block_size`` pairs at a time) and each block
  is used and dropped (:class:`PairStream`). In "sparcl" mode the blocks reproduce
  sparcl exactly: single-precision differences, the NA rescaling in sparcl's order.
* squared distance, ``weights="sparcl"``, complete data: the Gram products of the
  float32 values plus the float32 rounding term, computed for a whole run in one
  compiled pass over the pairs (:class:`SparclSquared`).

Only ``hclust_sparse_permute(null="dissimilarities")`` (sparcl's own null, which
permutes the columns of ``D``) materialises ``D``, under a memory budget
(:class:`MaterialisedD`). :func:`get_uw` runs the alternation on any of the
operators; the front (:mod:`sparseclust._sparse.hclust`) reads the data, builds the
operator, calls it and builds the tree (:mod:`sparseclust._sparse.tree`).
"""

from __future__ import annotations

import math
import os
import warnings
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.linalg.blas import strmm
from scipy.spatial import distance

from .._data.stages import repair_sd
from .._engine.threads import blas_thread_count, single_blas_thread
from .dissimilarity_jit import rounding_block, rounding_block32
from .weights import project_weights

__all__ = [
    "GramSquared",
    "MaterialisedD",
    "PairStream",
    "UWFit",
    "first_step",
    "get_uw",
    "make_operator",
    "prepare_matrix",
]

#: Relative L1 change of the weights below which the alternation stops (sparcl's).
TOL = 1e-4
#: Bytes per streamed block of pairs x features (when ``block_size=None``): cache-sized
#: blocks were measured 7-10x faster than 16-64 MB ones (n = 400, p = 2000, 2 cores).
BLOCK_BYTES = 2 * 2**20
#: Bytes of float64 per column block of the Gram products (n x columns).
GRAM_BLOCK_BYTES = 64 * 2**20
#: Bytes of float64 per block of sparcl's rounding corrections (pairs x features): half
#: a megabyte stays in cache between the kernel that fills it and the products.
CORRECTION_BLOCK_BYTES = 2**19
#: Largest feature Gram matrix ``X0'X0`` (p x p float64) sparcl mode keeps; beyond it
#: the rows it needs are recomputed at each step.
FEATURE_GRAM_BYTES = 256 * 2**20
#: Chunks of pairs the corrections pass is cut into (run on the BLAS threads).
CORRECTION_CHUNKS = 8
#: n^2 p below which sparcl mode's products run on one BLAS thread (200 x 1000 is 4e7).
SMALL_BLAS_WORK = 2**27


# ------------------------------------------------------------------ data preparation
def prepare_matrix(
    num: np.ndarray, *, scale: bool = False, standardize_arrays: bool = False
) -> np.ndarray:
    """The matrix the dissimilarities are computed from (a new float64 array, NaN kept).

    ``scale=True`` standardises each feature (column: mean 0, sd 1, ddof=1, over its
    observed values; constant columns are left centred; a tiny sd is computed from
    scaled deviations, :func:`~sparseclust._data.stages.repair_sd`). ``standardize_arrays=True``
    then standardises each observation (row), as sparcl's ``standardize.arrays``.
    """
    X = np.array(num, dtype=np.float64, copy=True)
    if scale:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mu = np.nanmean(X, axis=0)
            sd = repair_sd(X, mu, np.nanstd(X, axis=0, ddof=1))
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
    return distance.squareform(G, checks=False, force="tovector")


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
            Ut = distance.squareform(ut, checks=False, force="tomatrix")
            cached = (ut, Ut @ self.X0, Ut.sum(axis=1))
            self._ut_cache = cached
        return cached[1], cached[2]

    def utd(self, u: np.ndarray) -> np.ndarray:
        """``u'D`` (one score per feature) for a condensed ``u``."""
        U = distance.squareform(u, checks=False, force="tomatrix")
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


def pair_runs(starts: np.ndarray, n: int, k0: int, k1: int):
    """The pairs ``k0..k1-1`` (R ``dist`` order) as runs of one row ``i`` against
    consecutive partners ``j0..j1-1``: yields ``(slice in the block, i, j0, j1)``."""
    i = int(np.searchsorted(starts, k0, side="right")) - 1
    k = k0
    while k < k1:
        j0 = k - int(starts[i]) + i + 1
        j1 = min(n, j0 + (k1 - k))
        yield slice(k - k0, k - k0 + (j1 - j0)), i, j0, j1
        k += j1 - j0
        i += 1


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
        for k0 in range(0, self.npairs, step):
            k1 = min(self.npairs, k0 + step)
            T = np.empty((k1 - k0, A.shape[1]), dtype=A.dtype)
            both = np.empty(T.shape, dtype=bool) if obs is not None else None
            for seg, i, j0, j1 in pair_runs(self.starts, self.n, k0, k1):
                np.subtract(A[j0:j1], A[i], out=T[seg])
                if both is not None:
                    np.logical_and(obs[j0:j1], obs[i], out=both[seg])
            if both is None and self.single:
                # one pass from the float32 differences: |t| or t^2 in double (exact:
                # a float32's square fits a double), no float64 copy of t first
                T = np.square(T, dtype=np.float64) if self.squared else np.abs(T, dtype=np.float64)
                yield k0, k1, T
                continue
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
            return distance.pdist(self.X[:, act] * w[act], "cityblock")
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


class SparclSquared:
    """sparcl's squared ``D`` (single-precision differences) as Gram products plus a
    correction, for complete data.

    sparcl's entry is ``t^2`` with ``t = fl32(a_i - a_i')`` the float32 difference of
    the float32-rounded values; ``d = a_i - a_i'`` is that difference exact (in
    double), and ``t^2 = d^2 + c`` with the rounding term ``c = (t - d)(t + d)``,
    about 1e-8 of ``d^2``. ``D w`` and ``u'D`` are the Gram products of the float32
    values (:class:`GramSquared`, O(n^2 + np) memory) plus ``C w`` and ``u'C``; ``C``
    is computed block by block of pairs by a compiled kernel
    (:func:`~sparseclust._sparse.dissimilarity_jit.rounding_block`) and used and
    dropped. :func:`get_uw` runs the alternation twice without any ``n^2 p`` product
    per step (:meth:`scores`: the Gram part of ``u'D`` from the feature Gram matrix
    ``X0'X0``): first on the Gram products alone, recording each step's ``w`` and
    (in float32) ``D w``; then one pass over the pairs gives ``C w`` and ``(D w)'C``
    for all of them, and the second run adds these corrections (its vectors differ
    from the first's by about 1e-8, so the corrections are right to about 1e-16; a
    vector that moved by more than 1e-6 gets its own exact pass). Each call of
    :meth:`dw` / :meth:`utd` alone is exact (one pass each). A fit that does not
    converge within ``niter`` (weights still oscillating: the result then depends on
    rounding along the way) is replayed on the streamed pairs (:class:`PairStream`),
    whose arithmetic is sparcl's.
    """

    def __init__(self, X: np.ndarray, *, block_size: int | None = None):
        X32 = np.asarray(X, dtype=np.float64).astype(np.float32)
        self.X32 = X32
        self.X64 = X32.astype(np.float64)
        self.gram = GramSquared(self.X64)
        self.n, self.p = X32.shape
        self.npairs = self.n * (self.n - 1) // 2
        self.block_size = block_size
        self._feature = None  # (X0'X0 or None, X0'1, X0**2), built on first use
        self._ut = None  # (ut, ut'D) of the last uorth
        self._X0_32 = None  # (X0, X0**2) in float32, built on first use

    # ------------------------------------------------------------ the corrections
    def corrections(
        self, W: np.ndarray, Us: np.ndarray, *, dtype: Any = np.float64
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(C W, Us C)`` for weight columns ``W`` (p x a) and pair rows ``Us`` (b x pairs),
        in one pass over blocks of pairs (``C`` never held whole). ``dtype=np.float32``
        takes the blocks and their products in single precision (twice as fast; each
        product right to about 1e-6 of itself, for corrections that are 1e-8 of ``D``).

        The pairs are cut into at most :data:`CORRECTION_CHUNKS` chunks, run on as many
        threads as BLAS may use (:func:`~sparseclust._engine.threads.blas_thread_count`;
        the kernel releases the GIL) with one-thread BLAS inside; the chunks' ``Us C``
        are added in chunk order, so the result does not depend on the thread count.
        """
        size = np.dtype(dtype).itemsize
        step = self.block_size or max(16, CORRECTION_BLOCK_BYTES // (size * max(self.p, 1)))
        W = np.ascontiguousarray(W, dtype=dtype)
        Us = np.asarray(Us, dtype=dtype)
        cw = np.empty((self.npairs, W.shape[1]), dtype=dtype)
        bounds = np.arange(0, self.npairs, step)
        chunks = [c for c in np.array_split(bounds, CORRECTION_CHUNKS) if c.size]
        workers = min(blas_thread_count(), os.cpu_count() or 1, len(chunks))

        def run(starts: np.ndarray) -> np.ndarray:
            return self._correction_chunk(starts, step, W, Us, cw)

        if workers <= 1:
            parts = [run(c) for c in chunks]
        else:
            from concurrent.futures import ThreadPoolExecutor

            with single_blas_thread(), ThreadPoolExecutor(workers) as ex:
                parts = list(ex.map(run, chunks))
        uc = np.zeros((Us.shape[0], self.p))
        for part in parts:
            uc += part
        return cw, uc

    def _correction_chunk(
        self, starts: np.ndarray, step: int, W: np.ndarray, Us: np.ndarray, cw: np.ndarray
    ) -> np.ndarray:
        """The blocks of pairs from ``starts``: fills ``cw`` there, returns their ``Us C``."""
        fill = rounding_block32 if W.dtype == np.float32 else rounding_block
        k = int(starts[0])
        i = int(np.searchsorted(_condensed_starts(self.n), k, side="right")) - 1
        j = k - (i * self.n - i * (i + 1) // 2) + i + 1
        buf = np.empty((min(step, self.npairs), self.p), dtype=W.dtype)
        uc = np.zeros((Us.shape[0], self.p))
        for k0 in starts:
            k1 = min(self.npairs, int(k0) + step)
            c = buf[: k1 - k0]
            i, j = fill(self.X32, i, j, c)
            np.matmul(c, W, out=cw[k0:k1])
            uc += Us[:, k0:k1] @ c
        return uc

    def dw(self, w: np.ndarray) -> np.ndarray:
        return self.gram.dw(w) + self.corrections(w[:, None], np.zeros((0, self.npairs)))[0][:, 0]

    def utd(self, u: np.ndarray) -> np.ndarray:
        return self.gram.utd(u) + self.corrections(np.zeros((self.p, 0)), u[None, :])[1][0]

    # ------------------------------------------------- the Gram part without n^2 p
    def _features(self) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
        """``((X0'X0)**2 or None, X0'1, X0**2)``, computed once."""
        if self._feature is None:
            X0 = self.gram.X0
            S2 = None
            if 8 * self.p**2 <= FEATURE_GRAM_BYTES:
                S2 = X0.T @ X0
                S2 *= S2
            self._feature = (S2, X0.sum(axis=0), X0 * X0)
        return self._feature

    def scores(self, w: np.ndarray) -> tuple[np.ndarray, float]:
        """``((D w)' D, ||D w||^2)`` for the Gram part of ``D``, in O(np + qp + q^2).

        With ``G = a 1' + 1 a' - 2 Y Y'`` the matrix of ``D w`` (``Y = X0_A W^(1/2)``,
        ``a_i = ||y_i||^2``; its diagonal is 0), ``r = G 1`` and ``S = X0'X0``:
        ``((D w)'D)_j = r'Q_j - x_j'G x_j`` with ``x_j'G x_j = 2 (a'x_j)(1'x_j) -
        2 sum_l w_l S_lj^2``, and ``||D w||^2 = ||G||_F^2 / 2`` with ``||G||_F^2 =
        2n||a||^2 + 2(1'a)^2 - 8 (Y'a)'(Y'1) + 4 sum_lm w_l w_m S_lm^2``.
        """
        S2, s1, Q = self._features()
        X0 = self.gram.X0
        a = Q @ w
        sa = float(a.sum())
        ws1 = w * s1
        r = self.n * a + sa - 2.0 * (X0 @ ws1)
        if S2 is not None:
            sw = S2 @ w  # sum_l w_l S_lj^2 (S2 symmetric)
        else:
            act = np.flatnonzero(w)
            SA = X0[:, act].T @ X0
            SA *= SA
            sw = w[act] @ SA
        xa = X0.T @ a
        score = r @ Q - 2.0 * xa * s1 + 2.0 * sw
        g2 = 2.0 * self.n * float(a @ a) + 2.0 * sa * sa - 8.0 * float(xa @ ws1)
        g2 += 4.0 * float(w @ sw)
        # D w = 0 (rows equal on the active features) leaves rounding of the terms' size
        if g2 <= 1e-12 * (self.n * float(a @ a) + sa * sa):
            g2 = 0.0
        return score, 0.5 * g2

    def ut_scores(self, ut: np.ndarray) -> np.ndarray:
        """``ut'D`` for the Gram part (one full product per ``uorth``, kept)."""
        if self._ut is None or self._ut[0] is not ut:
            self._ut = (ut, self.gram.utd(ut))
        return self._ut[1]

    def blas_threads(self) -> AbstractContextManager:
        """One BLAS thread (and a serial pass) below :data:`SMALL_BLAS_WORK`: on small
        matrices a multi-threaded BLAS spends more than the product (measured 20 ms
        against 0.2 ms for ``e'D`` at 120 x 300 on 2 busy cores)."""
        if self.n * self.n * self.p < SMALL_BLAS_WORK:
            return single_blas_thread()
        return nullcontext()

    def release(self) -> None:
        """Drop what :meth:`scores` and :meth:`e_scores` keep between the steps of a fit
        (``X0'X0`` squared, ``X0**2``, the float32 data: ``p^2 + 2np`` floats), so that
        an operator kept for another fit (a result's ``dists``) holds only the data."""
        self._feature = self._X0_32 = self._ut = None

    def _single(self) -> tuple[np.ndarray, np.ndarray]:
        """``(X0, X0**2)`` in float32 (column-major, as BLAS takes them), made once."""
        if self._X0_32 is None:
            self._X0_32 = (
                np.asfortranarray(self.gram.X0, dtype=np.float32),
                self._features()[2].astype(np.float32),
            )
        return self._X0_32

    def e_scores(self, e: np.ndarray) -> np.ndarray:
        """``e'D`` for the Gram part and a correction ``e = C w`` (about 1e-8 of ``D w``),
        in single precision: its relative error of about 1e-6 is 1e-14 of ``u'D``.

        ``(e'D)_j = r'Q_j - x_j'E x_j`` (``E`` symmetric, zero diagonal, ``r = E 1``) with
        ``x_j'E x_j = 2 x_j'L x_j``, ``L`` the lower triangle of ``E``: a triangular
        product (BLAS ``strmm``), half the multiplications of ``E X0``."""
        E = distance.squareform(e.astype(np.float32), checks=False, force="tomatrix")
        X0, Q32 = self._single()
        LX = strmm(1.0, E.T, X0, lower=1)  # E.T: the same matrix, column-major
        out = E.sum(axis=1) @ Q32 - 2.0 * np.einsum("ij,ij->j", LX, X0)
        return out.astype(np.float64)

    def dw32(self, w: np.ndarray) -> np.ndarray:
        """``D w`` for the Gram part in single precision (condensed, float32): the vector
        the corrections pass multiplies ``C`` by (it only needs ~1e-6)."""
        act = np.flatnonzero(w)
        Y = self._single()[0][:, act]
        Y *= np.sqrt(w[act]).astype(np.float32)
        a = np.einsum("ij,ij->i", Y, Y)
        G = Y @ Y.T
        G *= -2.0
        G += a[:, None]
        G += a[None, :]
        return _upper(G)


def _vnorm(norm2: float, t: float) -> float:
    """``||d - t ut||`` from ``||d||^2`` and ``t = ut'd`` (``ut`` of unit norm)."""
    v2 = norm2 - t * t
    if not v2 > 0 or not np.isfinite(v2):
        _unit(np.zeros(1), None)  # raises the zero-D-w error
    return math.sqrt(v2)


class _Recorded:
    """The first run on a :class:`SparclSquared`: Gram scores, recording each step's
    ``w``, ``D w`` (float32), ``t = ut'D w`` and ``||D w - t ut||``."""

    def __init__(self, op: SparclSquared):
        self.op, self.n, self.p = op, op.n, op.p
        self.ws: list[np.ndarray] = []
        self.dws: list[np.ndarray] = []
        self.ts: list[float] = []
        self.norms: list[float] = []

    def step(self, w: np.ndarray, ut: np.ndarray | None) -> tuple[None, np.ndarray]:
        score, norm2 = self.op.scores(w)
        utd = self.op.ut_scores(ut) if ut is not None else None
        t = float(utd @ w) if utd is not None else 0.0
        c = _vnorm(norm2, t)
        if utd is not None:
            score = score - t * utd
        self.ws.append(w.copy())
        self.dws.append(self.op.dw32(w))
        self.ts.append(t)
        self.norms.append(c)
        return None, score / c

    def dw(self, w: np.ndarray) -> np.ndarray:
        # the final w: recorded for its correction; this run's u and crit are not used
        self.ws.append(w.copy())
        return np.ones(self.op.npairs)


class _Corrected:
    """The second run: the Gram scores plus the corrections computed for the recorded
    run (exact ones for a vector that moved by more than 1e-6 from the recorded one)."""

    def __init__(self, rec: _Recorded, ut: np.ndarray | None):
        op = rec.op
        W = np.stack(rec.ws, axis=1) if rec.ws else np.zeros((op.p, 0))
        rows = rec.dws + ([ut] if ut is not None else [])
        U = np.stack(rows) if rows else np.zeros((0, op.npairs), dtype=np.float32)
        self.cw, uc = op.corrections(W, U, dtype=np.float32)
        self.dwc = uc[: len(rec.dws)]  # (D w_rec)'C
        self.utc = uc[len(rec.dws)] if ut is not None else None
        self.op, self.n, self.p, self.rec = op, op.n, op.p, rec
        self.i = 0

    @staticmethod
    def _close(a: np.ndarray, b: np.ndarray) -> bool:
        return float(np.abs(a - b).sum()) <= 1e-6 * float(np.abs(b).sum())

    def step(self, w: np.ndarray, ut: np.ndarray | None) -> tuple[np.ndarray | None, np.ndarray]:
        i, self.i = self.i, self.i + 1
        rec = self.rec
        if not (i < len(rec.dws) and self._close(w, rec.ws[i])):
            u = _unit(self.op.dw(w), ut)  # an exact pass each
            return u, self.op.utd(u)
        op, e = self.op, self.cw[:, i]
        score, norm2 = op.scores(w)
        score += op.e_scores(e)
        # ||D w + e||^2 with (D w)'e = (D w_rec)'C w_rec (right to ~1e-16 of the norm)
        norm2 += 2.0 * float(self.dwc[i] @ rec.ws[i]) + float(e @ e)
        uc = self.dwc[i]
        t = 0.0
        if ut is not None:
            utd = op.ut_scores(ut)
            t = float(utd @ w) + float(ut @ e)
            score -= t * utd
            uc = uc - rec.ts[i] * self.utc
        return None, score / _vnorm(norm2, t) + uc / rec.norms[i]

    def dw(self, w: np.ndarray) -> np.ndarray:
        i, self.i = self.i, self.i + 1
        if i < len(self.rec.ws) and self._close(w, self.rec.ws[i]):
            return self.op.gram.dw(w) + self.cw[:, i]
        return self.op.dw(w)


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
    if dissimilarity == "squared" and not np.isnan(X).any():
        return SparclSquared(X, block_size=block_size)
    return PairStream(X, dissimilarity, single=(mode == "sparcl"), block_size=block_size)


# ------------------------------------------------------------------ the alternation
@dataclass(frozen=True, eq=False)
class UWFit:
    """The alternation's result at one bound (:func:`get_uw`, sparcl's ``GetUW``).

    Attributes
    ----------
    w : ndarray (p,)
        Feature weights.
    u : ndarray
        Unit-norm dissimilarity between observations, condensed (R ``dist`` order),
        not yet divided by ``sqrt(2)``.
    crit : float
        The criterion ``u'(D w)``.
    n_iter : int
        Weight updates made.
    converged : bool
        Whether the relative L1 change of ``w`` reached ``TOL`` within ``niter``.
    change : float
        The relative L1 change of ``w`` at the last update.
    """

    w: np.ndarray
    u: np.ndarray
    crit: float
    n_iter: int
    converged: bool
    change: float


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
    """``(u, u'D)`` from ``w = 1``: the first iteration, the same for every bound (on a
    :class:`SparclSquared`: Gram scores, then both corrections in one pass; ``u`` is
    then None, as the alternation only needs ``u'D``)."""
    if isinstance(op, SparclSquared):
        with op.blas_threads():
            rec = _Recorded(op)
            _step(rec, np.ones(op.p), ut)
            return _step(_Corrected(rec, ut), np.ones(op.p), ut)
    return _step(op, np.ones(op.p), ut)


def get_uw(
    op: Any,
    wbound: float,
    *,
    niter: int = 15,
    mode: str = "exact",
    uorth: np.ndarray | None = None,
    first: tuple[np.ndarray, np.ndarray] | None = None,
) -> UWFit:
    """The alternating maximisation (sparcl's ``GetUW``) on an operator for ``D``.

    From ``w = 1``: ``u <- D w`` (minus its projection on ``uorth``, a unit condensed
    vector), normalised; ``w <- projection of max(u'D, 0)`` (``mode`` "exact" or
    "sparcl", see :func:`~sparseclust._sparse.weights.project_weights`); until the relative
    L1 change of ``w`` is ``<= 1e-4`` or ``niter`` updates were made. Then ``u`` is
    recomputed from the final ``w`` and ``crit = u'(D w)`` (see :class:`UWFit`).
    On a :class:`SparclSquared` it runs twice: on the Gram products alone, then with
    the float32 corrections of that run's vectors (one streamed pass).
    """
    if isinstance(op, SparclSquared):
        rec = _Recorded(op)
        first0 = None if first is None else (first[0], first[1])
        try:
            with op.blas_threads():
                get_uw(rec, wbound, niter=niter, mode=mode, uorth=uorth, first=first0)
                corrected = _Corrected(rec, uorth)
                fit = get_uw(corrected, wbound, niter=niter, mode=mode, uorth=uorth, first=first)
        finally:
            op.release()
        if fit.converged:
            return fit
        # Not converged in niter steps: the weights still oscillate and sparcl's result
        # depends on its rounding along the way; replay its arithmetic on the stream.
        stream = PairStream(op.X64, "squared", single=True, block_size=op.block_size)
        return get_uw(stream, wbound, niter=niter, mode=mode, uorth=uorth)
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
    return UWFit(w=w, u=u, crit=crit, n_iter=it, converged=converged, change=change)
