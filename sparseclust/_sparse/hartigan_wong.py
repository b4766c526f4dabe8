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

Speed, and why it is exact
--------------------------
The stages run compiled (:mod:`.hartigan_wong_jit`, Cython built with the package), one
point at a time as the Fortran does: every distance a decision reads is the squared distance summed
sequentially over the features, in double precision, and the stage's comparisons are
made in the Fortran's order (``DC >= R2/AN2(L)``, ``R2 < D(I)``, ``DD >= D(I)/AN2(L2)``).
(AS 136 caches ``D(I) = n_L1/(n_L1-1) d(i, L1)`` and refreshes it only when ``L1``
changed since; the cache is current whenever it is read, so evaluating it afresh gives
the same number.) With at least ``_SCREEN_MIN_P`` columns, on data near the origin, a
point's distances are first screened as ``|x|^2 + |c|^2 - 2 x.c`` with dot products in
partial sums side by side, under a rigorous error bound per point (``(8 (p + 10) + 1024) u (|x|^2 + max
|c|^2)`` with ``u = 2^-53``, valid in any order of summation, which also covers the
roundings of the comparisons' own arithmetic); a comparison closer than the bound is
made on the sequential sums. With at least ``_F32_MIN_P`` columns, on data of at most
``_F32_MAX_CELLS`` cells, a screen of the dot products in single precision (a float32
copy of the data, under its own rigorous bound, see :func:`_single_copy`) comes first,
and a comparison too close there goes to the double-precision screen. The multi-start's
refinements, after its Gram-space Lloyd phase on few rows of many columns, screen in the
rows' own space instead (:class:`RowScreen`: ``n`` terms a distance instead of ``p``,
under its own rigorous bound). The per-point stages are C functions on the arrays'
rows (no Python object, no reference count). The centres are kept bit for bit as the
Fortran keeps them (sequential sums in data order for the initial means, then ``(c n1 - x)/(n1 - 1)`` and
``(c n2 + x)/(n2 + 1)`` at each transfer), so every decision equals the one a sequential
double-precision run of AS 136 makes on the same input (assuming, as R's usual x86-64
builds do, that the compiler fuses no multiply-add: the kernels are built with
``-ffp-contract=off`` and no fast-math, ``sparseclust/meson.build``). The returned centres and within sums of squares are recomputed from the
final partition by matrix products: equal to R's up to rounding, not bit for bit.

References: Hartigan, J. A. and Wong, M. A. (1979) Algorithm AS 136: A K-means
clustering algorithm. *Applied Statistics* 28, 100-108. R's ``?kmeans``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._engine.threads import single_blas_thread
from .hartigan_wong_jit import as136

__all__ = ["HWResult", "HWRunner", "RowScreen", "hartigan_wong"]

_U = 2.0**-53  # unit roundoff of float64
_TOL_SCALE = 8.0  # error bound of a product distance: _TOL_SCALE (p + 10) u (|x|^2 + |c|^2)
_TOL_EXTRA = 1024.0  # + this many u (|x|^2 + |c|^2): the roundings of the comparisons' own
# arithmetic (products and quotients by n/(n +- 1), of values below 4 (|x|^2 + |c|^2))
_SCREEN_MIN_P = 16  # the compiled stages screen distances from this many columns
_U32 = 2.0**-24  # unit roundoff of float32
_TOL_SCALE32 = 3.0  # + _TOL_SCALE32 (p + 10) u32 (|x|^2 + |c|^2) for single-precision products
_F32_MIN_P = 64  # a single-precision screen first from this many columns
_F32_MAX_P = 2**17  # ... up to this many (keeps p u32 <= 1/100)
_F32_MAX_SQ = 2.0**100  # ... while squared norms stay below this (no float32 overflow)
_F32_MAX_CELLS = 2**24  # ... on data of at most this many cells (its copy: 64 MiB)
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
    return _from_deviations(ref, esum, esq, np.bincount(labels, minlength=k).astype(np.float64))


def _from_deviations(
    ref: np.ndarray, esum: np.ndarray, esq: np.ndarray, nc: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Cluster means and within sums of squares from the deviations ``e`` of the rows
    from centres ``ref`` close to the means (their per-cluster sums ``esum``, sums of
    squares ``esq`` and counts ``nc``, one compiled pass, ``wss_estimate``), as
    :func:`_final` makes them: ``ref + mean(e)`` and ``sum |e|^2 - n_L
    |mean(e)|^2``, whose correction term is tiny, so nothing cancels."""
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
    """Matrix-product squared distances with a rigorous error bound per entry (Lloyd's
    nearest centres, :func:`~._lloyd.lloyd`).

    ``dist(rows)`` returns ``(d, tol)``: ``d[i, L]`` is within ``tol[i]`` of ``exact``, the
    squared distance summed sequentially over the features on the original data, and so
    is any value of the comparisons computed from ``d`` (``tol`` covers their roundings
    too, see ``_TOL_EXTRA``). The data are shifted by the mean of a sample of rows when
    that shrinks their squared norms substantially (the bound scales with them).
    """

    def __init__(self, x: np.ndarray) -> None:
        n, p = x.shape
        xsq = np.einsum("ij,ij->i", x, x)
        mu = x[:: max(1, x.shape[0] // 64)].mean(axis=0)  # the mean of <= 128 rows
        self.shift = _far_from_origin(mu, xsq)
        self.x = x  # shifted by ``mu`` a row block at a time (``_rows``), never all at once
        self.mu = mu if self.shift else None
        self.xq = xsq
        if self.shift:
            for a, b in _blocks(n, p):
                xs = self._rows(slice(a, b))
                self.xq[a:b] = np.einsum("ij,ij->i", xs, xs)
        self.p = p
        self.tolf, self.tola = _tolerances(p)
        self.txq = self.tolf * self.xq  # tol = txq + tolc, tolc from the centres
        self.cs = np.empty((0, p))
        self.cq = np.empty(0)

    def _rows(self, rows: Any) -> np.ndarray:
        """The (shifted) rows ``rows`` of the data."""
        xr = self.x[rows]
        if not self.shift:
            return xr
        if isinstance(rows, slice | int | np.integer):  # a view of the data
            return xr - self.mu
        return np.subtract(xr, self.mu, out=xr)  # a gathered copy

    def set_centers(self, c: np.ndarray) -> None:
        """The centres the distances are taken to."""
        self.cs = c - self.mu if self.shift else c.copy()
        self.cq = np.einsum("ij,ij->i", self.cs, self.cs)
        self.tolc = self.tolf * max(self.cq.tolist()) + self.tola

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


def _tolerances(p: int) -> tuple[float, float]:
    """``(tolf, tola)``: a product distance of a point with ``p`` columns is within
    ``tolf (|x|^2 + max |c|^2) + tola`` of the sequential sum (``tola``: the underflow of
    tiny squares)."""
    return (_TOL_SCALE * (p + 10) + _TOL_EXTRA) * _U, _TOL_SCALE * (p + 10) * 2.0**-1074


def _far_from_origin(mu: np.ndarray, xq: np.ndarray) -> bool:
    """Whether a shift by ``mu`` (the mean of a sample of rows) shrinks the squared norms
    ``xq`` substantially: then the bounds, which scale with them, would be loose."""
    return float(mu @ mu) > 0.25 * float(xq.mean())


def _single_copy(x: np.ndarray, xq: np.ndarray) -> np.ndarray:
    """The data in single precision for the compiled stages' first screen, or an empty
    array: none (no double-precision screen, few columns, squared norms beyond
    float32's range, or data so large that the copy would weigh on the peak memory).

    The screen's dot products ``x.c`` are then summed in float32 from the rounded
    values: within ``(p + 2) u32 (|x|^2 + |c|^2)`` (``u32 = 2^-24``, ``p u32 <=
    1/100``) of the exact ones, plus ``(p + 10) 2^-124 (1 + max |x| + max |c|)`` where
    float32 underflows; the bound adds ``_TOL_SCALE32 (p + 10) u32 (|x|^2 + max
    |c|^2)`` and that term to the double-precision screen's."""
    n, p = x.shape
    use = xq.size and _F32_MIN_P <= p <= _F32_MAX_P and n * p <= _F32_MAX_CELLS
    if not use or float(xq.max()) >= _F32_MAX_SQ:
        return np.empty((0, 0), dtype=np.float32)
    return x.astype(np.float32)


def _screen_norms(x: np.ndarray) -> np.ndarray:
    """The squared row norms for the compiled stages' screen, or an empty array: no
    screen (few columns, where a sequential sum is as fast, or data far from the origin,
    where the bound, relative to the squared norms, would decide little)."""
    n, p = x.shape
    if p < _SCREEN_MIN_P:
        return np.empty(0)
    xq = np.einsum("ij,ij->i", x, x)
    if _far_from_origin(x[:: max(1, n // 64)].mean(axis=0), xq):
        return np.empty(0)
    return xq


# -------------------------------------------------------------------- Hartigan-Wong core
def _as136_work(n: int, k: int, p: int, screen: bool, single: bool) -> tuple[np.ndarray, ...]:
    """The arrays of the compiled AS 136 (:func:`.hartigan_wong_jit.as136`, C-contiguous):
    labels IC1 and IC2, distances, the
    centres' squared norms (when screening), their single-precision copy (when
    screening in single precision), counts, centres, AN1, AN2, ITRAN, NCP, LIVE."""
    return (
        np.empty(n, dtype=np.int64),
        np.empty(n, dtype=np.int64),
        np.empty(k),
        np.empty(k if screen else 0),
        np.empty((k if single else 0, p), dtype=np.float32),
        np.zeros(k, dtype=np.int64),
        np.zeros((k, p)),
        np.empty(k),
        np.empty(k),
        np.ones(k, dtype=np.bool_),
        np.full(k, -1, dtype=np.int64),
        np.zeros(k, dtype=np.int64),
    )


@dataclass(frozen=True, eq=False)
class RowScreen:
    """A screen of the compiled stages in the rows' own space, for few rows of many
    columns, when the rows' Gram matrix is at hand (the Lloyd phase of the multi-start
    made it).

    With ``xs`` the data shifted by a constant row and ``G = xs xs'``, the lower
    Cholesky factor ``y`` of ``G + a 11'`` (``a`` the mean of ``G``'s diagonal, which
    makes it positive definite when ``xs`` has rank ``n - 1``: ``1' xs = 0`` for centred
    columns) has ``n`` columns and the distances of the data: ``G + a 11'`` is the Gram
    matrix of ``[xs, sqrt(a) 1]``, and a row's distance to a mean of rows is a quadratic
    form in it with coefficients summing to zero. The stages then screen a point's
    distances as ``|y_i - cy_L|^2`` (``n`` terms instead of ``p``; the centres ``cy`` kept
    as the data's are, from the same sums and the same transfers), and a comparison
    closer than the bound is made on the sequential sums, as with the other screens:
    every decision is still the sequential one.

    The bound, with ``R^2`` the largest squared norm of a row of ``x`` or of ``y``
    and ``t`` the transfers made: ``64 u R^2 ((p + n + 10) + (n + 1)(n + t))``. It
    covers (each term with a factor of at least 2 to spare) the sequential sums
    (``(p + 2) u d``, ``d <= 4 R^2``), the products of ``G`` (``gamma_p |x_i||x_j|``),
    the Cholesky factor's backward error (``gamma_{n+1} |y_i||y_j|``), times 4 for a
    quadratic form of 1-norm 2, the row-space sums (``gamma_n``), the centres' initial
    sums (``gamma_n R``) and the drift of the kept centres in either space (each
    transfer adds at most ``4 u (n + 1) R`` to a cluster's sum, at most that divided by
    its size >= 1 to its centre, moving a distance by at most ``4 R`` times it), and
    the comparisons' own roundings (factors ``n / (n +- 1) <= 2``, as for the other
    screens).

    Attributes
    ----------
    y : (n, n) ndarray
        The rows' coordinates.
    prm : (2,) ndarray
        The bound's base and its increase per transfer.
    """

    y: np.ndarray
    prm: np.ndarray

    @classmethod
    def from_gram(cls, x: np.ndarray, gram: np.ndarray) -> RowScreen | None:
        """The screen of the data ``x`` from the Gram matrix of its centred rows, or None
        (more columns than rows needed; a factor that does not exist: duplicated rows,
        or rank below ``n - 1``).

        Examples
        --------
        >>> rng = np.random.default_rng(0)
        >>> x = rng.standard_normal((5, 8))
        >>> xs = x - x.mean(axis=0)
        >>> rs = RowScreen.from_gram(x, xs @ xs.T)
        >>> d = ((rs.y[:, None] - rs.y[None]) ** 2).sum(-1)
        >>> bool(np.allclose(d, ((x[:, None] - x[None]) ** 2).sum(-1)))
        True
        """
        n, p = x.shape
        if p <= n or not n:
            return None
        diag = np.diagonal(gram)
        a = float(diag.mean())
        if not np.isfinite(a) or a <= 0.0:
            return None
        try:
            with single_blas_thread():  # 200 x 200: threads cost more than they save
                y = np.linalg.cholesky(gram + a)
        except np.linalg.LinAlgError:
            return None
        r2 = max(float(np.einsum("ij,ij->i", x, x).max()), float(diag.max()) + a)
        unit = 64.0 * _U * r2
        prm = np.array([unit * ((p + n + 10) + (n + 1) * n), unit * (n + 1)])
        return cls(np.ascontiguousarray(y), prm)

    def centres(self, labels: np.ndarray, k: int) -> np.ndarray:
        """The images of the means of the clusters ``labels`` (0..k-1)."""
        onehot = np.zeros((k, labels.size))
        onehot[labels, np.arange(labels.size)] = 1.0
        return (onehot @ self.y) / onehot.sum(axis=1)[:, None]

    def args(self, centres: np.ndarray) -> tuple[np.ndarray, ...]:
        """The kernel's ``rs`` for a run started from ``centres`` (row space)."""
        return (self.y, np.array(centres, dtype=np.float64), self.prm, np.zeros(1, np.int64))


_NO_ROWS = (np.empty((0, 0)), np.empty((0, 0)), np.zeros(2), np.zeros(1, np.int64))


def _blocks(n: int, p: int, start: int = 0) -> list[tuple[int, int]]:
    """``(a, b)`` of the row blocks of rows ``start .. n - 1``."""
    step = _block_rows(p)
    return [(a, min(a + step, n)) for a in range(start, n, step)]


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
    The module docstring describes the algorithm and why the compiled stages make the
    same decisions as the point-by-point Fortran.

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
    checked, and their screen (squared row norms) computed, once.

    Examples
    --------
    >>> x = np.array([[0.0], [1.0], [2.0], [10.0], [11.0], [12.0]])
    >>> run = HWRunner(x)
    >>> run(np.array([[0.0], [10.0]])).labels, run(np.array([[12.0], [1.0]])).labels
    (array([0, 0, 0, 1, 1, 1]), array([1, 1, 1, 0, 0, 0]))
    >>> labels, kept, n_iter, ifault = run.run(np.array([[12.0], [1.0]]))
    >>> labels, kept.ravel(), n_iter, ifault
    (array([1, 1, 1, 0, 0, 0]), array([11.,  1.]), 1, 0)
    """

    def __init__(self, x: Any, *, max_iter: int = 10) -> None:
        self.x = _as_data(x)
        self.max_iter = _check_max_iter(max_iter)
        self._xq: np.ndarray | None = None  # the screens' data, made on first use
        self._x32 = np.empty((0, 0), dtype=np.float32)

    def run(
        self, centers: Any, rows: tuple[RowScreen, np.ndarray] | None = None
    ) -> tuple[np.ndarray, np.ndarray | None, int, int]:
        """``(labels, centres, n_iter, ifault)`` of the run from ``centers``, without the
        final means and within sums of squares: the centres are those the algorithm
        kept up to date (None for k == 1), to hand to :func:`_final`. ``rows``: a
        :class:`RowScreen` of the data and the starting centres' images (the means of
        the rows ``centers`` are the means of), screening in place of the others."""
        x = self.x
        c = _as_centers(centers, *x.shape)
        k, n = c.shape[0], x.shape[0]
        if k == 1:
            return np.zeros(n, dtype=np.int64), None, 1, 0
        if k >= n:
            raise ValueError(
                f"number of cluster centres must lie between 1 and nrow(x) - 1 for "
                f"Hartigan-Wong; got k={k}, n={n}"
            )
        if rows is not None:
            xq, x32, rs = np.empty(0), np.empty((0, 0), np.float32), rows[0].args(rows[1])
        else:
            if self._xq is None:
                self._xq = _screen_norms(x)
                self._x32 = _single_copy(x, self._xq)
            xq, x32, rs = self._xq, self._x32, _NO_ROWS
        p = x.shape[1]
        tolf, tola = _tolerances(p)
        prm = np.array([tolf, tola, 0.0, 0.0])
        xqmax = float(xq.max()) if xq.size else 0.0
        prm32 = np.array([tolf + _TOL_SCALE32 * (p + 10) * _U32, tola, (p + 10) * 2.0**-124, xqmax])
        work = _as136_work(n, k, p, xq.size > 0, x32.size > 0)
        labels, kept, nc, n_iter, ifault = as136(
            x, x32, c, self.max_iter, _QTRAN_STEPS * n, xq, prm, prm32, work, rs
        )
        if ifault < 0:
            raise _empty_cluster_error(nc)
        return labels, kept, int(n_iter), int(ifault)

    def __call__(self, centers: Any) -> HWResult:
        labels, kept, n_iter, ifault = self.run(centers)
        if kept is None:
            return _one_cluster(self.x)
        with single_blas_thread():
            means, wss = _final(self.x, labels, kept)
        return HWResult(labels, means, wss, n_iter, ifault == 0, ifault)
