"""Hartigan–Wong k-means (AS 136) as R's ``stats::kmeans`` runs it.

Array-level core (no pandas). :func:`hartigan_wong` reproduces
``kmeans(x, centers=<matrix>, iter.max=, algorithm="Hartigan-Wong")``: from the same
centre matrix it returns R's partition. Lloyd (R's ``algorithm="Lloyd"``) and the
``nstart`` multi-start live in :mod:`._lloyd`, which runs them over row blocks.

How the algorithm runs (Hartigan & Wong 1979, Applied Statistics algorithm AS 136, with
the details R adds)
------------------------------------------------------------------------------------
* Start: each point's nearest centre ``IC1`` and second nearest ``IC2`` (ties to the
  lower centre index); the centres are replaced by the means of that assignment. An
  empty cluster is R's ``ifault 1`` (an error here).
* Optimal-transfer stage (OPTRA): one pass over the points in data order. Point ``i``
  of cluster ``L1`` (with more than one member) leaves for the cluster ``L2`` that
  minimises ``R2 = n_L/(n_L+1) d(i, L)`` when ``R2 < n_L1/(n_L1-1) d(i, L1)``; the two
  centres are updated at once. ``L2`` is searched among all clusters when ``L1`` is in
  the *live set* (updated within the last ``n`` optimal-transfer steps, or in the last
  quick-transfer stage), else among live clusters only; the current ``IC2`` is always a
  candidate and wins ties. Without a transfer, ``L2`` becomes the new ``IC2``.
* Quick-transfer stage (QTRAN): cycle through the points, testing only the swap
  ``IC1 -> IC2`` and only while one of the two clusters changed within the last ``n``
  steps; stop after ``n`` steps without a transfer. R caps one stage at ``50 n`` steps
  (``ifault 4``, "Quick-TRANSfer stage steps exceeded maximum").
* Stop when ``n`` consecutive optimal-transfer steps made no transfer, after the first
  quick-transfer stage when ``k == 2``, or after ``max_iter`` rounds (R's ``iter.max``,
  ``ifault 2``, "did not converge in ... iterations"). ``k == 1`` is R's special case
  (one cluster, its mean). The result's centres and within sums of squares are
  recomputed from the final partition.

Speed, and why it is still exact
--------------------------------
The reference algorithm examines one point at a time. Here every stage evaluates its
rule for a whole block of upcoming points at once, with one matrix product for the
point-centre distances (``|x|^2 + |c|^2 - 2 x.c``, squared norms precomputed), because
nothing a point's test reads changes until some point transfers: the centres, counts,
live set and step counters only change at a transfer, and a non-transferring point only
rewrites its own ``IC2``. (AS 136 caches ``D(I) = n_L1/(n_L1-1) d(i, L1)`` and refreshes
it only when ``L1`` changed since; the cache is current whenever it is read, so
evaluating it afresh gives the same number.) So the first point of the block, in the
algorithm's order (data order in OPTRA with its step counter ``INDX``; cyclic order with
``ISTEP``/``ICOUN`` in QTRAN), whose test says "transfer" is the next transfer: the
points before it are settled with their vectorised outcome, the transfer is applied (two
centres, counts, live set, step counters: O(p)), and evaluation resumes at the following
point. Python loops run per transfer, not per point. Block sizes adapt: they double while
nothing transfers, and where transfers come every point or two the points are evaluated
one by one (exactly, see below). A block is always a contiguous run of rows (a QTRAN
block ends where the cycle wraps around), so its product reads a slice of the data, not a
gathered copy; with ``k == 3`` OPTRA's candidate search is the comparison of ``IC2`` with
the third cluster.

Floating point: the matrix-product distances differ from a direct sum of squared
differences by rounding. Each point's product distances carry a rigorous error bound
(``(8 (p + 10) + 1024) u (|x|^2 + max |c|^2)`` with ``u = 2^-53``, which also covers the
roundings of the comparisons' own arithmetic; the data are shifted towards the origin
first when that shrinks the norms); whenever a comparison of the stage (nearest centre,
best ``R2`` candidate, transfer test) is closer than the combined bounds, that point is
re-evaluated exactly: its distances are summed sequentially over the features, in double
precision, as AS 136's Fortran loops do, and the stage's comparisons are made in the same
order (``DC >= R2/AN2(L)``, ``R2 < D(I)``, ``DD >= D(I)/AN2(L2)``). With at least
``_COARSE_MIN_P`` columns the blocks (and the initial assignment) are screened first by a
single-precision product, which moves half the bytes, under its own rigorous bound (the
float32 roundings add ``3 (p + 10) u32 (|x|^2 + max |c|^2)``, ``u32 = 2^-24``, see
``_Screen.screen``); a point too close to call there is re-screened with double-precision
products, and re-evaluated exactly if still too close. The centres are kept bit for bit
as the Fortran keeps them (sequential sums in data order for the initial means, then
``(c n1 - x)/(n1 - 1)`` and ``(c n2 + x)/(n2 + 1)`` at each transfer), so every decision
equals the one a sequential double-precision run of AS 136 makes on the same input
(assuming, as R's usual x86-64 builds do, that the compiler fuses no multiply-add). The
returned centres and within sums of squares are recomputed from the final partition by
matrix products: equal to R's up to rounding, not bit for bit.

BLAS runs single-threaded inside these functions: the products here are thin (k or
``n_init k`` columns) and were measured faster on one thread.

References: Hartigan, J. A. and Wong, M. A. (1979) Algorithm AS 136: A K-means
clustering algorithm. *Applied Statistics* 28, 100-108. R's ``?kmeans``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._engine.threads import single_blas_thread

__all__ = ["HWResult", "HWRunner", "hartigan_wong"]

_U = 2.0**-53  # unit roundoff of float64
_TOL_SCALE = 8.0  # error bound of a product distance: _TOL_SCALE (p + 10) u (|x|^2 + |c|^2)
_TOL_EXTRA = 1024.0  # + this many u (|x|^2 + |c|^2): the roundings of the comparisons' own
# arithmetic (products and quotients by n/(n +- 1), of values below 4 (|x|^2 + |c|^2))
_BLOCK0 = 128  # first block size of a stage (doubles while nothing transfers)
_U32 = 2.0**-24  # unit roundoff of float32
_TOL_SCALE32 = 3.0  # + _TOL_SCALE32 (p + 10) u32 (|x|^2 + |c|^2) for single-precision products
_COARSE_MIN_P = 64  # single-precision screening of the blocks from this many columns
_COARSE_MAX_P = 2**17  # ... up to this many (keeps p u32 <= 1/100)
_COARSE_MAX_SQ = 2.0**100  # ... while squared norms stay below this (no float32 overflow)
_SCALAR = 4  # below this block size, points are evaluated one by one
_QTRAN_STEPS = 50  # R caps a quick-transfer stage at 50 n steps (ifault 4)


@dataclass(frozen=True, eq=False)
class HWResult:
    """Result of :func:`hartigan_wong` or :func:`lloyd` from given centres.

    Attributes
    ----------
    labels : (n,) int64
        0-based cluster of each row; label ``j`` is the cluster started from row ``j`` of
        the given ``centers`` (R's ``$cluster`` minus 1).
    centers : (k, p) float64
        Final cluster means.
    wss : (k,) float64
        Within-cluster sums of squares (R's ``$withinss``).
    n_iter : int
        R's ``$iter``: the outer iterations used; ``max_iter + 1`` when the iteration cap
        was hit (``ifault == 2``), as R reports it.
    converged : bool
        ``ifault == 0``.
    ifault : int
        R's code: 0 converged; 2 ``max_iter`` reached (R warns "did not converge in
        max_iter iterations"); 4 the quick-transfer stage exceeded ``50 n`` steps (R warns
        "Quick-TRANSfer stage steps exceeded maximum (= 50 n)"). The core never warns:
        the caller decides.
    """

    labels: np.ndarray
    centers: np.ndarray
    wss: np.ndarray
    n_iter: int
    converged: bool
    ifault: int

    @property
    def tot_withinss(self) -> float:
        """Total within-cluster sum of squares."""
        return float(np.sum(self.wss))


# ------------------------------------------------------------------------------ helpers
def _as_data(x: Any) -> np.ndarray:
    """float64 C-contiguous 2-D data, finite, with finite squared row norms.

    The array functions (:func:`hartigan_wong`, ``lloyd``, ``kmeans_multi_start``)
    check here; the block kernels trust their data (the public fronts refuse columns
    too large for the sums of squares, ``_data.stages.check_magnitudes``)."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"x must be a 2-D array; got {x.ndim} dimension(s)")
    if x.shape[0] < 1:
        raise ValueError("x has no rows")
    with np.errstate(over="ignore", invalid="ignore"):
        q = np.einsum("ij,ij->i", x, x)
    if not np.isfinite(q).all():
        raise _not_finite(x)
    return x


def _not_finite(x: np.ndarray) -> ValueError:
    """The error naming the columns (0-based) with NaN or infinite values, else those
    whose squares overflow the squared row norms."""
    bad = np.flatnonzero(~np.isfinite(x).all(axis=0))
    if bad.size:
        return ValueError(
            f"x must be finite: column(s) {bad.tolist()} (0-based) hold NaN or infinite "
            "values; impute or drop them."
        )
    top = np.abs(x).max(axis=0)
    big = np.flatnonzero(top > np.sqrt(np.finfo(np.float64).max / x.shape[1]))
    big = big if big.size else np.array([int(np.argmax(top))])
    return ValueError(
        f"x column(s) {big.tolist()} (0-based) are too large: their squares overflow "
        f"float64 (largest magnitude {float(top[big].max()):.3g}); rescale them, e.g. "
        "divide each by its largest magnitude."
    )


def _as_centers(centers: Any, n: int, p: int) -> np.ndarray:
    """Validated starting centres for ``n`` points with ``p`` columns."""
    c = np.array(centers, dtype=np.float64, order="C", copy=True)
    if c.ndim != 2 or c.shape[0] < 1:
        raise ValueError("centers must be a 2-D array with at least one row")
    if c.shape[1] != p:
        raise ValueError(
            f"x and centers must have the same number of columns; got {p} and {c.shape[1]}"
        )
    if not np.isfinite(c).all():
        raise ValueError("centers must be finite")
    k = c.shape[0]
    if k > n:
        raise ValueError(f"more cluster centers ({k}) than data points ({n})")
    if k > 1 and np.unique(_void_rows(c)).size < k:
        raise ValueError("initial centers are not distinct")
    return c


def _check_max_iter(max_iter: Any) -> int:
    if isinstance(max_iter, bool) or not isinstance(max_iter, int | np.integer):
        raise TypeError(f"max_iter must be an int; got {type(max_iter).__name__}")
    if max_iter < 1:
        raise ValueError(f"max_iter must be positive; got {max_iter}")
    return int(max_iter)


def _void_rows(a: np.ndarray) -> np.ndarray:
    """Rows as opaque byte strings (``+ 0.0`` turns -0.0 into 0.0, as R's unique sees them)."""
    a = np.ascontiguousarray(a + 0.0)
    return a.view(np.dtype((np.void, a.dtype.itemsize * a.shape[1]))).ravel()


def _seq_sqdist(xrow: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Squared distances of one point to the rows of ``c``, each summed sequentially
    over the features (left to right, as the Fortran loops): ``np.cumsum`` accumulates
    in order, where ``np.sum`` would use pairwise summation."""
    diff = xrow - c
    diff *= diff
    return np.cumsum(diff, axis=1)[:, -1]


def _seq_cluster_sums(x: np.ndarray, labels: np.ndarray, k: int) -> np.ndarray:
    """Per-cluster column sums accumulated in data order (bitwise as the Fortran).

    A reduction over the rows of a C-contiguous array adds them one after the other
    (numpy sums pairwise only along the fast axis in memory); ``+ 0.0`` turns the -0.0
    of a column of -0.0s into the 0.0 that a sum started from 0.0 gives. One column:
    a plain loop (the reduction would be along the fast axis)."""
    n, p = x.shape
    sums = np.zeros((k, p))
    if p == 1 or not x.flags.c_contiguous:
        for i, lab in enumerate(labels.tolist()):
            sums[lab] += x[i]
        return sums
    # A cluster's rows are gathered a row block at a time (not all at once: that copy was
    # up to two thirds of the data), behind the cluster's running sum in row 0, so that
    # the reduction goes on adding rows one after the other: the same sums (a start from
    # 0.0 changes only the sign of a zero, which the final ``+ 0.0`` clears).
    step = _block_rows(p)
    buf = np.empty((step + 1, p))
    for a in range(0, n, step):
        lab = labels[a : a + step]
        for j in range(k):
            rows = np.flatnonzero(lab == j)
            if rows.size:
                buf[0] = sums[j]
                np.take(x[a : a + step], rows, axis=0, out=buf[1 : rows.size + 1])
                np.add.reduce(buf[: rows.size + 1], axis=0, out=sums[j])
    return np.add(sums, 0.0, out=sums)


def _block_rows(p: int) -> int:
    """Rows of a row block of ``p`` columns: about 1 MiB of float64."""
    return max(1, 2**17 // max(1, p))


def _means(x: np.ndarray, labels: np.ndarray, k: int) -> np.ndarray:
    """Cluster means by one matrix product (for results; not bitwise sequential)."""
    onehot = np.zeros((k, x.shape[0]))
    onehot[labels, np.arange(x.shape[0])] = 1.0
    return (onehot @ x) / onehot.sum(axis=1)[:, None]


def _final(x: np.ndarray, labels: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cluster means and within sums of squares in one pass over ``x``.

    ``ref`` are centres close to the means (the incrementally updated ones): with
    ``e_i = x_i - ref_L``, the mean is ``ref_L + mean(e)`` and the within sum of squares
    ``sum |e_i|^2 - n_L |mean(e)|^2``, whose correction term is tiny, so nothing cancels.
    """
    k, p = ref.shape
    esum = np.zeros((k, p))
    esq = np.zeros(k)
    step = max(1, 2**16 // max(1, p))
    for a in range(0, x.shape[0], step):
        lab = labels[a : a + step]
        e = x[a : a + step] - ref[lab]
        onehot = np.zeros((k, lab.size))
        onehot[lab, np.arange(lab.size)] = 1.0
        esum += onehot @ e
        esq += np.bincount(lab, weights=np.einsum("ij,ij->i", e, e), minlength=k)
    nc = np.bincount(labels, minlength=k).astype(np.float64)
    emean = esum / nc[:, None]
    return ref + emean, np.maximum(esq - nc * np.einsum("ij,ij->i", emean, emean), 0.0)


def _wss(x: np.ndarray, labels: np.ndarray, centers: np.ndarray) -> np.ndarray:
    """Within sums of squares from direct differences (in cache-sized row blocks)."""
    k = centers.shape[0]
    out = np.zeros(k)
    step = max(1, 2**16 // max(1, x.shape[1]))
    for a in range(0, x.shape[0], step):
        lab = labels[a : a + step]
        diff = x[a : a + step] - centers[lab]
        out += np.bincount(lab, weights=np.einsum("ij,ij->i", diff, diff), minlength=k)
    return out


def _one_cluster(x: np.ndarray) -> HWResult:
    """k == 1: R hands this to its MacQueen code, which returns the mean at once."""
    labels = np.zeros(x.shape[0], dtype=np.int64)
    centers = _means(x, labels, 1)
    return HWResult(labels, centers, _wss(x, labels, centers), 1, True, 0)


def _empty_cluster_error(nc: np.ndarray) -> ValueError:
    empty = np.flatnonzero(nc == 0).tolist()
    return ValueError(
        "empty cluster: try a better set of initial centers (no point is nearest to "
        f"centre row(s) {empty})"
    )


class _Screen:
    """Matrix-product squared distances with a rigorous error bound per entry.

    ``dist(rows)`` returns ``(d, tol)``: ``d[i, L]`` is within ``tol[i]`` of ``exact``, the
    squared distance summed sequentially over the features on the original data, and so
    is any value of the stages' comparisons computed from ``d`` (``tol`` covers their
    roundings too, see ``_TOL_EXTRA``).
    The data are shifted by the mean of a sample of rows when that shrinks their squared
    norms substantially (the bound scales with them).

    ``screen(rows)`` is ``dist`` for the stages' blocks: from single-precision products
    when ``coarse`` (see there), with its own, wider, rigorous ``tol``.
    """

    def __init__(self, x: np.ndarray, coarse: bool = False) -> None:
        n, p = x.shape
        xsq = np.einsum("ij,ij->i", x, x)
        mu = x[:: max(1, x.shape[0] // 64)].mean(axis=0)  # the mean of <= 128 rows
        musq = float(mu @ mu)
        self.shift = musq > 0.25 * float(xsq.mean())
        self.x = x  # shifted by ``mu`` a row block at a time (``_rows``), never all at once
        self.mu = mu if self.shift else None
        self.xq = xsq
        if self.shift:
            for a, b in _blocks(n, p):
                xs = self._rows(slice(a, b))
                self.xq[a:b] = np.einsum("ij,ij->i", xs, xs)
        self.p = p
        self.tolf = (_TOL_SCALE * (p + 10) + _TOL_EXTRA) * _U
        self.tola = _TOL_SCALE * (p + 10) * 2.0**-1074  # underflow of tiny squares
        self.txq = self.tolf * self.xq  # tol = txq + tolc, tolc from the centres
        self.cs = np.empty((0, p))
        self.cq = np.empty(0)
        self.xqmax = float(self.xq.max())
        self.coarse = coarse and _COARSE_MIN_P <= p <= _COARSE_MAX_P
        self.coarse = self.coarse and self.xqmax < _COARSE_MAX_SQ
        self.use32 = False
        if self.coarse:  # rows [-2 x, |x|^2, 1] in single precision
            xa = np.empty((n, p + 2), dtype=np.float32)
            for a, b in _blocks(n, p):
                np.multiply(self._rows(slice(a, b)), -2.0, out=xa[a:b, :p], casting="same_kind")
            xa[:, p] = self.xq
            xa[:, p + 1] = 1.0
            self.xa = xa
            self.tolf32 = self.tolf + _TOL_SCALE32 * (p + 10) * _U32
            self.txq32 = self.tolf32 * self.xq
            self.tola32 = (p + 10) * 2.0**-124  # times 1 + max |x| + max |c|: underflow

    def _rows(self, rows: Any) -> np.ndarray:
        """The (shifted) rows ``rows`` of the data."""
        xr = self.x[rows]
        if not self.shift:
            return xr
        if isinstance(rows, slice | int | np.integer):  # a view of the data
            return xr - self.mu
        return np.subtract(xr, self.mu, out=xr)  # a gathered copy

    def _centre_tol(self) -> None:
        cqmax = max(self.cq.tolist())
        self.cqmax = cqmax
        self.tolc = self.tolf * cqmax + self.tola
        if self.coarse:
            self.use32 = cqmax < _COARSE_MAX_SQ
            under = self.tola32 * (1.0 + math.sqrt(self.xqmax) + math.sqrt(cqmax))
            self.tolc32 = self.tolf32 * cqmax + self.tola + under

    def set_centers(self, c: np.ndarray, alias: bool = False) -> None:
        """Centres ``c``; with ``alias``, ``c`` is updated in place and ``update_rows``
        announces each change."""
        self.cs = c - self.mu if self.shift else c if alias else c.copy()
        self.cq = np.einsum("ij,ij->i", self.cs, self.cs)
        if self.coarse:  # rows [c, 1, |c|^2] in single precision
            k, p = self.cs.shape
            ca = np.empty((k, p + 2), dtype=np.float32)
            ca[:, :p] = self.cs
            ca[:, p] = 1.0
            ca[:, p + 1] = self.cq
            self.ca = ca
        self._centre_tol()

    def update_rows(self, c: np.ndarray, r1: int, r2: int) -> None:
        """Refresh centre rows ``r1`` and ``r2`` (after a transfer between them)."""
        cs, cq, p = self.cs, self.cq, self.p
        for r in (r1, r2):
            row = cs[r]
            if self.shift:
                np.subtract(c[r], self.mu, out=row)
            elif cs is not c:
                row[:] = c[r]
            cq[r] = q = row @ row
            if self.coarse:
                ca = self.ca[r]
                ca[:p] = row
                ca[p + 1] = q
        self._centre_tol()

    def dist_one(self, i: int) -> tuple[list[float], float]:
        """``dist`` for a single point, as Python floats."""
        xq = float(self.xq[i])
        d = (xq + self.cq) - 2.0 * (self.cs @ self._rows(i))
        return d.tolist(), self.tolf * (xq + self.cqmax) + self.tola

    def dist(self, rows: Any) -> tuple[np.ndarray, np.ndarray]:
        if self.shift and isinstance(rows, slice) and rows.step in (None, 1):  # in blocks
            a, b, _ = rows.indices(self.xq.size)
            g = np.empty((max(0, b - a), self.cs.shape[0]))
            for a1, b1 in _blocks(b, self.p, start=a):
                np.matmul(self._rows(slice(a1, b1)), self.cs.T, out=g[a1 - a : b1 - a])
        else:
            g = self._rows(rows) @ self.cs.T
        g *= -2.0
        g += self.xq[rows][:, None] + self.cq  # (|x|^2 + |c|^2) - 2 x.c
        return g, self.txq[rows] + self.tolc

    def screen(self, rows: Any) -> tuple[np.ndarray, np.ndarray]:
        """``dist`` from one single-precision product when ``coarse``.

        ``d = [-2 x, |x|^2, 1] . [c, 1, |c|^2]``: the ``p + 2`` terms are rounded to float32
        (the norms are double-precision values) and accumulated in float32, in any order,
        fused or not. So with ``u32 = 2^-24`` and ``p u32 <= 1/100``, ``d`` is within
        ``1.01 (p + 2) u32`` times the sum of the terms' magnitudes (at most
        ``2 (|x|^2 + |c|^2)``) plus ``3 u32 (|x|^2 + |c|^2)`` (their rounding) of the value
        the double-precision norms give in exact arithmetic, and within
        ``(p + 10) 2^-124 (1 + max |x| + max |c|)`` more where float32 underflows or
        flushes to zero. ``tol`` is ``dist``'s (which covers the norms, the shift and
        the comparisons) plus ``_TOL_SCALE32 (p + 10) u32 (|x|^2 + max |c|^2)`` (at least
        ``(2.03 p + 7.1) u32 (...)``) and that underflow term. Overflow is excluded by the
        limit on the squared norms (``_COARSE_MAX_SQ``). Otherwise this is ``dist``."""
        if self.use32:
            d = (self.xa[rows] @ self.ca.T).astype(np.float64)
            return d, self.txq32[rows] + self.tolc32
        return self.dist(rows)


# -------------------------------------------------------------------- Hartigan-Wong core
def _blocks(n: int, p: int, start: int = 0) -> list[tuple[int, int]]:
    """``(a, b)`` of the row blocks of rows ``start .. n - 1``."""
    step = _block_rows(p)
    return [(a, min(a + step, n)) for a in range(start, n, step)]


def _two_nearest(d: np.ndarray, tol: np.ndarray) -> tuple[np.ndarray, ...]:
    """Nearest and second nearest column of each row of ``d`` (first index on ties, as
    a stable sort orders them) and whether either choice is too close to call."""
    m, k = d.shape
    flat = np.arange(m) * k
    df = d.ravel()  # d is a fresh C-contiguous array: overwritten below
    tol2 = tol + tol
    ic1 = d.argmin(axis=1).astype(np.int64)
    d1 = df[flat + ic1]
    df[flat + ic1] = np.inf
    ic2 = d.argmin(axis=1).astype(np.int64)
    d2 = df[flat + ic2]
    unc = d2 - d1 <= tol2
    if k > 2:
        df[flat + ic2] = np.inf
        unc |= d.min(axis=1) - d2 <= tol2
    return ic1, ic2, unc


class _HW:
    """State of one AS 136 run; integer bookkeeping as in the Fortran (1-based steps)."""

    def __init__(
        self, x: np.ndarray, c: np.ndarray, max_iter: int, scr: _Screen | None = None
    ) -> None:
        self.x = x
        self.n, self.p = x.shape
        self.k = c.shape[0]
        self.max_iter = max_iter
        # the data's part of the screen is read-only: runs on the same x may share it
        self.scr = _Screen(x, coarse=True) if scr is None else scr
        self.c = c
        self.imaxqtr = _QTRAN_STEPS * self.n  # R: isteps.Qtran = 50 * m
        self._ar = np.arange(self.n + 1)
        self._ark = self._ar * self.k  # flat offsets of the rows of an (m, k) array

    # ------------------------------------------------------------------ set-up
    def initial_assignment(self) -> None:
        """IC1/IC2 = nearest and second nearest centre (ties to the lower index)."""
        k = self.k
        scr = self.scr
        scr.set_centers(self.c)
        ic1, ic2, unc = _two_nearest(*scr.screen(slice(None)))
        rows = np.flatnonzero(unc)
        if rows.size and scr.coarse:  # too close in single precision: in double
            j1, j2, unc = _two_nearest(*scr.dist(rows))
            ic1[rows] = j1
            ic2[rows] = j2
            rows = rows[unc]
        for i in rows.tolist():  # still too close: exactly
            ic1[i], ic2[i] = self._exact_two_nearest(i)
        self.ic1, self.ic2 = ic1, ic2
        nc = np.bincount(ic1, minlength=k)
        if (nc == 0).any():
            raise _empty_cluster_error(nc)
        self.nc = nc.astype(np.int64)
        self.ncl = self.nc.tolist()  # the counts as Python ints
        self.single = 1 in self.ncl  # some cluster has one member
        self.c = _seq_cluster_sums(self.x, ic1, k) / nc[:, None].astype(np.float64)
        scr.set_centers(self.c, alias=True)  # _transfer updates self.c in place
        ncf = self.nc.astype(np.float64)
        self.an2 = ncf / (ncf + 1.0)
        self.an1 = np.where(self.nc > 1, ncf / np.maximum(ncf - 1.0, 1.0), np.inf)
        self.itran = np.ones(k, dtype=bool)
        self.ncp = np.full(k, -1, dtype=np.int64)
        self.live = np.zeros(k, dtype=np.int64)
        self.indx = 0

    def _exact_two_nearest(self, i: int) -> tuple[int, int]:
        dex = _seq_sqdist(self.x[i], self.c).tolist()
        ic1, ic2 = 0, 1
        dt1, dt2 = dex[0], dex[1]
        if dt1 > dt2:
            ic1, ic2, dt1, dt2 = 1, 0, dt2, dt1
        for L in range(2, self.k):
            db = dex[L]
            if db >= dt2:
                continue
            if db >= dt1:
                dt2, ic2 = db, L
            else:
                dt2, ic2, dt1, ic1 = dt1, ic1, db, L
        return ic1, ic2

    # ---------------------------------------------------------------- transfer
    def _transfer(self, i: int, l1: int, l2: int) -> None:
        """Move point ``i`` from ``l1`` to ``l2``: incremental centre update as AS 136."""
        ncl = self.ncl
        n1, n2 = ncl[l1] - 1, ncl[l2] + 1
        al1 = float(n1 + 1)
        alw = float(n1)
        al2 = float(n2 - 1)
        alt = float(n2)
        xi = self.x[i]
        c1 = self.c[l1]  # in place, the same operations as (c1 al1 - xi) / alw
        c1 *= al1
        c1 -= xi
        c1 /= alw
        c2 = self.c[l2]  # (c2 al2 + xi) / alt
        c2 *= al2
        c2 += xi
        c2 /= alt
        ncl[l1] = n1
        ncl[l2] = n2
        self.nc[l1] = n1
        self.nc[l2] = n2
        self.single = 1 in ncl
        an1, an2 = self.an1, self.an2
        an2[l1] = alw / al1
        an1[l1] = alw / (alw - 1.0) if alw > 1.0 else np.inf
        an1[l2] = alt / al2
        an2[l2] = alt / (alt + 1.0)
        self.ic1[i] = l2
        self.ic2[i] = l1
        self.scr.update_rows(self.c, l1, l2)

    # ------------------------------------------------------------------- OPTRA
    def _optra_candidates(self, i: int, l1: int, ll: int) -> list[int]:
        """The clusters point ``i``'s optimal-transfer test weighs against ``IC2`` (``ll``),
        in order: all but ``l1`` and ``ll``, only the live ones when ``l1`` is not live."""
        step = i + 1
        live = self.live
        if step < live[l1]:
            return [L for L in range(self.k) if L != l1 and L != ll]
        return [L for L in range(self.k) if step < live[L] and L != l1 and L != ll]

    def _optra_exact(self, i: int) -> tuple[bool, int]:
        """Point ``i``'s optimal-transfer test evaluated as the Fortran does."""
        l1, ll = int(self.ic1[i]), int(self.ic2[i])
        dex = _seq_sqdist(self.x[i], self.c).tolist()
        an1, an2 = self.an1, self.an2
        d_i = dex[l1] * float(an1[l1])
        r2 = dex[ll] * float(an2[ll])
        l2 = ll
        for L in self._optra_candidates(i, l1, ll):
            rr = r2 / float(an2[L])
            if dex[L] < rr:
                r2 = dex[L] * float(an2[L])
                l2 = L
        return r2 < d_i, l2

    def _optra_one(self, i: int) -> tuple[bool, int]:
        """Point ``i``'s optimal-transfer test: the Fortran's sequence of comparisons on
        product distances, or exactly (``_optra_exact``) if any of them is too close."""
        l1, ll = int(self.ic1[i]), int(self.ic2[i])
        d, tol = self.scr.dist_one(i)
        an2 = self.an2
        d_i = d[l1] * float(self.an1[l1])
        r2 = d[ll] * float(an2[ll])
        l2 = ll
        for L in self._optra_candidates(i, l1, ll):
            v = d[L] * float(an2[L])
            if abs(v - r2) <= 2.0 * tol:
                return self._optra_exact(i)
            if v < r2:
                r2, l2 = v, L
        if abs(r2 - d_i) <= 3.0 * tol:
            return self._optra_exact(i)
        return r2 < d_i, l2

    def _optra_block(self, a: int, b: int) -> tuple[np.ndarray, ...]:
        """Vectorised OPTRA tests for points a..b-1 against the current state.

        Returns ``chosen`` (the new ``IC2`` of each point without a transfer: the ``L2``
        of its test, or its current ``IC2`` when its cluster is a singleton), ``trans``
        (the test says transfer) and ``unc`` (too close to call: evaluate exactly)."""
        m = b - a
        rk = self._ark[:m]
        l1 = self.ic1[a:b]
        ll = self.ic2[a:b]
        d, tol = self.scr.screen(slice(a, b))
        df = d.ravel()
        d1 = df[rk + l1]
        an2 = self.an2
        # point a+j (step a+1+j) may move to L when L or its own cluster is live there
        all_live = a + m < min(self.live.tolist())
        if not all_live:
            lim = self.live - (a + 1)
        if self.k == 3:
            # the candidates are IC2 and the third cluster: the smaller R2 is L2 (IC2 on
            # ties), the other one the runner-up
            lo = 3 - l1 - ll
            r2 = df[rk + ll] * an2[ll]
            r2o = df[rk + lo] * an2[lo]
            if not all_live:
                r = self._ar[:m]
                r2o = np.where((r < lim[l1]) | (r < lim[lo]), r2o, np.inf)
            keep = r2 <= r2o
            chosen = np.where(keep, ll, lo)
            m1 = np.where(keep, r2, r2o)
            gap = np.abs(r2o - r2)  # runner-up minus best
        else:
            i2 = rk + ll
            cm = d * an2  # R2 of every cluster
            if not all_live:
                alive = self._ar[:m, None] < lim
                cand = alive | alive.ravel()[rk + l1][:, None]  # all when L1 is live
                cand.ravel()[i2] = True  # IC2 is always the first candidate, wins ties
                cm = np.where(cand, cm, np.inf)
            cf = cm.ravel()
            cf[rk + l1] = np.inf
            m1 = cm.min(axis=1)
            chosen = np.where(cf[i2] == m1, ll, cm.argmin(axis=1))
            cf[rk + chosen] = np.inf
            gap = cm.min(axis=1) - m1
        tol2 = tol + tol
        if not self.single:
            dv = d1 * self.an1[l1]  # D(I); an1 <= 2 here
            trans = m1 < dv
            unc = (gap <= tol2) | (np.abs(m1 - dv) <= tol2 + tol)
        else:
            skip = self.nc[l1] == 1
            dv = d1 * np.where(skip, 0.0, self.an1[l1])
            trans = ~skip & (m1 < dv)
            unc = ~skip & ((gap <= tol2) | (np.abs(m1 - dv) <= tol2 + tol))
            chosen = np.where(skip, ll, chosen)
        return chosen, trans, unc

    def _optra_move(self, row: int, l2: int) -> None:
        l1 = int(self.ic1[row])
        self.indx = 0
        self.live[l1] = self.live[l2] = self.n + row + 1
        self.ncp[l1] = self.ncp[l2] = row + 1
        self._transfer(row, l1, l2)

    def optra(self) -> None:
        n = self.n
        ic2 = self.ic2
        coarse = self.scr.coarse
        self.live[self.itran] = n + 1
        i = 0
        block = _BLOCK0
        while i < n:
            if block <= _SCALAR:
                # Transfers are dense here: one point at a time, evaluated exactly.
                self.indx += 1
                block *= 2
                if self.ncl[self.ic1[i]] > 1:
                    t, l2 = self._optra_one(i)
                    if t:
                        self._optra_move(i, l2)
                        block = 2
                    else:
                        ic2[i] = l2
                if self.indx == n:
                    return
                i += 1
                continue
            b = min(n, i + block)
            chosen, trans, unc = self._optra_block(i, b)
            m = b - i
            # INDX counts steps since the last transfer; the stage returns once it hits n.
            stop_at = n - self.indx - 1  # block offset where INDX reaches n
            flags = trans | unc
            pos = 0
            moved = False
            e = int(flags.argmax())
            while flags[e] and e <= stop_at:
                ic2[i + pos : i + e] = chosen[pos:e]
                self.indx += e - pos + 1
                row = i + e
                if unc[e]:  # too close: in double precision, else exactly
                    t, l2 = self._optra_one(row) if coarse else self._optra_exact(row)
                else:
                    t, l2 = True, int(chosen[e])
                if t:
                    self._optra_move(row, l2)
                    i = row + 1
                    block = 2 * (e + 1)
                    moved = True
                    break
                ic2[row] = l2
                if self.indx == n:
                    return
                pos = e + 1
                if pos == m:
                    break
                e = pos + int(flags[pos:].argmax())
            if moved:
                continue
            if stop_at < m:
                ic2[i + pos : i + stop_at + 1] = chosen[pos : stop_at + 1]
                self.indx = n
                return
            ic2[i + pos : b] = chosen[pos:]
            self.indx += m - pos
            i = b
            block = min(2 * block, n)
        self.itran[:] = False
        self.live -= n

    # ------------------------------------------------------------------- QTRAN
    def _qtran_exact(self, i: int) -> bool:
        l1, l2 = int(self.ic1[i]), int(self.ic2[i])
        dex = _seq_sqdist(self.x[i], self.c[[l1, l2]]).tolist()
        r2 = (dex[0] * float(self.an1[l1])) / float(self.an2[l2])
        return dex[1] < r2

    def _qtran_one(self, i: int) -> bool:
        l1, l2 = int(self.ic1[i]), int(self.ic2[i])
        d, tol = self.scr.dist_one(i)
        r2 = d[l1] * float(self.an1[l1]) / float(self.an2[l2])
        if abs(d[l2] - r2) <= 5.0 * tol:
            return self._qtran_exact(i)
        return d[l2] < r2

    def _qtran_find(self, a: int, m: int, istep: int) -> int:
        """Offset in ``0..m-1`` of the first of the points ``a..a+m-1`` (steps
        ``istep+1..istep+m``) whose quick-transfer test says transfer, else -1."""
        b = a + m
        l1 = self.ic1[a:b]
        l2 = self.ic2[a:b]
        ncp, nc = self.ncp, self.nc
        # a point is tested while one of its two clusters changed within the last n steps
        # (step < NCP) and its own cluster is no singleton; the larger NCP of two distinct
        # clusters is at least the second largest of all
        singles = self.single
        if not singles and istep + m < sorted(ncp.tolist())[-2]:
            act = None
            if m <= _SCALAR:
                for j in range(m):
                    if self._qtran_one(a + j):
                        return j
                return -1
        else:
            lim = ncp - (istep + 1)
            actm = (self._ar[:m] < np.maximum(lim[l1], lim[l2])) & (nc[l1] != 1)
            act = np.flatnonzero(actm)
            if act.size <= _SCALAR:
                for j in act.tolist():
                    if self._qtran_one(a + j):
                        return j
                return -1
        # the whole run of rows (a slice, no gather) unless few of them are tested or a
        # singleton's an1 = inf would enter the arithmetic
        whole = act is None or (2 * act.size >= m and not singles)
        if whole:
            d, tol = self.scr.screen(slice(a, b))
        else:
            d, tol = self.scr.screen(act + a)
            l1 = l1[act]
            l2 = l2[act]
        rk = self._ark[: d.shape[0]]
        df = d.ravel()
        r2 = df[rk + l1] * (self.an1[l1] / self.an2[l2])  # an1 / an2 <= 2 / (1/2) here
        diff = df[rk + l2] - r2  # transfer when < 0
        tol *= 5.0
        test = diff <= tol  # transfer, or too close to call
        if whole and act is not None:
            test &= actm
        e = int(test.argmax())
        while test[e]:
            j = e if whole else int(act[e])
            if diff[e] < -tol[e]:
                return j
            if self._qtran_one(a + j) if self.scr.coarse else self._qtran_exact(a + j):
                return j  # too close: decided in double precision, else exactly
            e += 1
            if e == test.size:
                break
            e += int(test[e:].argmax())
        return -1

    def qtran(self) -> bool:
        """Quick-transfer stage; False when R's 50 n step cap was hit (ifault 4)."""
        n = self.n
        ncp = self.ncp
        istep = 0  # steps done in this stage (R's ISTEP)
        quiet = 0  # steps since the last transfer (R's ICOUN); the stage ends at n
        pos = 0  # point of the next step
        block = _BLOCK0
        while True:
            m = min(block, n - quiet, n - pos)  # contiguous points, in cyclic order
            jcap = self.imaxqtr - istep - 1  # offset of the step R refuses
            capped = jcap < m
            if capped:
                m = jcap
            found = self._qtran_find(pos, m, istep) if m > 0 else -1
            if found >= 0:
                row = pos + found
                l1, l2 = int(self.ic1[row]), int(self.ic2[row])
                istep += found + 1
                self.indx = 0
                self.itran[l1] = self.itran[l2] = True
                ncp[l1] = ncp[l2] = istep + n
                self._transfer(row, l1, l2)
                pos = row + 1 if row + 1 < n else 0
                quiet = 0
                block = 2 * (found + 1)
                continue
            if capped:
                return False
            istep += m
            quiet += m
            if quiet == n:
                return True
            pos += m
            if pos == n:
                pos = 0
            block *= 2

    # --------------------------------------------------------------------- run
    def run(self) -> HWResult:
        self.initial_assignment()
        ifault = 2
        it = self.max_iter + 1  # R reports iter.max + 1 when the cap is hit
        for ij in range(1, self.max_iter + 1):
            self.optra()
            if self.indx == self.n:  # n optimal-transfer steps without a transfer
                ifault, it = 0, ij
                break
            if not self.qtran():
                ifault, it = 4, ij
                break
            if self.k == 2:  # no need to re-enter the optimal-transfer stage
                ifault, it = 0, ij
                break
            self.ncp[:] = 0
        labels = self.ic1
        centers, wss = _final(self.x, labels, self.c)
        return HWResult(labels, centers, wss, it, ifault == 0, ifault)


def hartigan_wong(x: Any, centers: Any, *, max_iter: int = 10) -> HWResult:
    """Hartigan–Wong k-means from given centres, as R's ``kmeans(x, centers, iter.max)``.

    Parameters
    ----------
    x : (n, p) array
        Finite data.
    centers : (k, p) array
        Distinct starting centres; label ``j`` of the result is the cluster started from
        row ``j``.
    max_iter : int
        R's ``iter.max`` (default 10).

    Returns
    -------
    HWResult
        ``labels`` 0-based (R's ``$cluster - 1``), final ``centers`` (means), per-cluster
        ``wss``, ``n_iter`` (R's ``$iter``), ``converged`` and ``ifault``. On ``ifault``
        2 (iteration cap) or 4 (quick-transfer step cap) the result is returned without
        a warning; the caller warns.

    Raises
    ------
    ValueError
        An empty cluster after the initial assignment (R: "empty cluster: try a better
        set of initial centers"), centres not distinct, ``k > n``, or ``1 < k == n`` (R:
        "number of cluster centres must lie between 1 and nrow(x)").

    Notes
    -----
    The module docstring describes the algorithm and why the vectorised evaluation makes
    the same decisions as the point-by-point Fortran.

    Examples
    --------
    >>> x = np.array([[0.0], [1.0], [2.0], [10.0], [11.0], [12.0]])
    >>> res = hartigan_wong(x, np.array([[0.0], [10.0]]))
    >>> res.labels
    array([0, 0, 0, 1, 1, 1])
    >>> res.wss, res.converged
    (array([2., 2.]), True)
    """
    return HWRunner(x, max_iter=max_iter)(centers)


class HWRunner:
    """:func:`hartigan_wong` on fixed data from several sets of centres: the data are
    checked, and their screen (shift, norms, single-precision rows) built, once.

    Examples
    --------
    >>> x = np.array([[0.0], [1.0], [2.0], [10.0], [11.0], [12.0]])
    >>> run = HWRunner(x)
    >>> run(np.array([[0.0], [10.0]])).labels, run(np.array([[12.0], [1.0]])).labels
    (array([0, 0, 0, 1, 1, 1]), array([1, 1, 1, 0, 0, 0]))
    """

    def __init__(self, x: Any, *, max_iter: int = 10) -> None:
        self.x = _as_data(x)
        self.max_iter = _check_max_iter(max_iter)
        self._scr: _Screen | None = None

    def __call__(self, centers: Any) -> HWResult:
        x = self.x
        c = _as_centers(centers, *x.shape)
        k, n = c.shape[0], x.shape[0]
        if k == 1:
            return _one_cluster(x)
        if k >= n:
            raise ValueError(
                f"number of cluster centres must lie between 1 and nrow(x) - 1 for "
                f"Hartigan-Wong; got k={k}, n={n}"
            )
        with single_blas_thread():
            if self._scr is None:
                self._scr = _Screen(x, coarse=True)
            return _HW(x, c, self.max_iter, self._scr).run()
