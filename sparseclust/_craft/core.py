"""CRAFT core (Garg, Rudin & Jaakkola, AISTATS 2016): Algorithm 1 + CAF on arrays.

Everything here works on the typed arrays of a :class:`~sparseclust._data.table.ColumnTable`
(numeric block with NaN for missing cells, categorical integer codes with ``-1``);
:func:`sparseclust.craft` is the public front. Costs for all points and clusters are
computed piece by piece of rows: matrix products for the numeric part, per-level
values gathered through the integer codes for the categorical part; the sequential
new-cluster rule is walked only over the points that would open a cluster.
"""

from __future__ import annotations

import math
import threading
import weakref
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np
from scipy import sparse

from .._engine.blocks import BLOCK_ROWS, LocalBlocks, block_bounds, call_on_row
from .._engine.threads import single_blas_thread
from . import fit_jit, loop_jit, nll_jit, seed_jit
from .costs_jit import (
    add_counts,
    add_rows,
    centres,
    cost_table,
    count_all,
    level_sums,
    row_costs,
    row_min,
)
from .costs_jit import feature_sums as _feature_sums

__all__ = [
    "Blocked",
    "Constants",
    "CraftData",
    "Fit",
    "Settings",
    "as_blocked",
    "craft_constants",
    "craft_fit",
    "prepare",
]


# ----------------------------------------------------------------------- constants
@dataclass(frozen=True)
class Constants:
    """The selection prior's constants for ``(m, rho)`` (paper eq. (1)).

    Attributes
    ----------
    a0, b0 : float
        Beta parameters of a feature's selection probability
        (``m^2 (1-m) / rho - m`` and ``m (1-m)^2 / rho + m``).
    a1, b1 : float
        ``a0 + 1`` and ``b0 - 1``.
    F0, F1 : float
        ``F(a0, b0)`` and ``F(a1, b1)``, ``F(a, b) = (a+b) log(a+b) - a log a - b log b``;
        a cluster costs ``D F0`` besides lambda.
    F_delta : float
        ``F1 - F0``: the cost of one selected feature in a cluster (exactly 0 at
        ``m = 0.5``, ``rho = 0.24``). Entropy clustering sets ``F0`` and ``F_delta``
        to 0 (no feature terms).
    """

    a0: float
    b0: float
    a1: float
    b1: float
    F0: float
    F1: float
    F_delta: float


def _F(a: float, b: float) -> float:
    return (a + b) * np.log(a + b) - a * np.log(a) - b * np.log(b)


def craft_constants(m: float, rho: float) -> Constants:
    """a0, b0, a1, b1, F0, F1, F_delta for ``(m, rho)`` (paper eq. (1)).

    Examples
    --------
    >>> c = craft_constants(0.5, 0.24)
    >>> bool(abs(c.F_delta) < 1e-12)
    True
    """
    a0 = m * m * (1 - m) / rho - m
    b0 = m * (1 - m) ** 2 / rho + m
    a1, b1 = a0 + 1.0, b0 - 1.0
    F0, F1 = _F(a0, b0), _F(a1, b1)
    F_delta = F1 - F0
    if abs(F_delta) <= 1e-12 * max(abs(F0), 1.0):  # m = 0.5, rho = 0.24: exactly 0 by symmetry
        F_delta = 0.0
    return Constants(a0=a0, b0=b0, a1=a1, b1=b1, F0=F0, F1=F1, F_delta=F_delta)


@dataclass(frozen=True)
class Settings:
    """The settings of a CRAFT fit shared by every restart (:func:`craft_fit`'s keywords).

    Attributes
    ----------
    m, rho : float
        Prior mean and variance of the selection probabilities.
    budget : str
        ``"fixed"`` or ``"approximate"``.
    eps_c, eps_v : float or None
        Thresholds of the approximate budget (None with the fixed one).
    sigma_floor : float
        A cluster's sd is at least this times the feature's global sd.
    max_iter : int
        Cap on passes.
    shuffle : bool
        Visit the rows in a fresh random order each pass.
    select_all : bool
        Every feature kept (no selection, no Bernoulli draws: entropy clustering).
    sigma_override : float or None
        Sigma used in the costs instead of the clusters' own (DP-RF: ``1/sqrt(2)``).
    feature_terms : bool
        False drops the F0 / F_delta terms (entropy clustering).
    """

    m: float
    rho: float
    budget: str = "fixed"
    eps_c: float | None = None
    eps_v: float | None = None
    sigma_floor: float = 0.05
    max_iter: int = 100
    shuffle: bool = False
    select_all: bool = False
    sigma_override: float | None = None
    feature_terms: bool = True

    def kwargs(self) -> dict[str, Any]:
        """The settings as :func:`craft_fit` keywords."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def pick(self, *names: str) -> dict[str, Any]:
        """The settings ``names`` as a dict (a result's ``params``)."""
        return {name: getattr(self, name) for name in names}


@dataclass(frozen=True, eq=False)
class Fit:
    """One finished CRAFT run (:func:`craft_fit`; a restart of the fronts).

    Attributes
    ----------
    lam : float
        The lambda of the run: the one given, or for a fit at a fixed number of
        clusters the smallest at which it is a fixed point (:func:`fixed_point_lambda`).
    labels : ndarray or None
        0-based labels of all rows (None when the blocks live on a cluster: ``states``).
    states : list or None
        Each block's final state on a remote executor (its labels), else None.
    state : State
        The clusters' parameters and selection.
    objective : ndarray
        The objective after every pass.
    n_iter : int
        Passes run.
    converged : bool
        The last pass changed no label.
    aborted : bool
        Stopped early (past ``max_clusters``, ``stop_above`` or ``stop_below``).
    consts : Constants
        The prior's constants used.
    start : int
        The row the first cluster was centred at.
    sizes : ndarray
        Rows per cluster.
    nll : float or None
        Negative log-likelihood (restart criterion): with ``with_nll=True`` or added
        by :func:`add_nll`; DP-RF puts its squared error here.
    kind : str or None
        Set by the restarts: ``"calibrated"``, ``"seeded"``, ``"given"`` or
        ``"farthest_first"``.
    calibration : DataFrame or None
        Set by lambda calibration: (lam, n_clusters) of every fit tried.
    """

    lam: float
    labels: np.ndarray | None
    states: list[Any] | None
    state: State
    objective: np.ndarray
    n_iter: int
    converged: bool
    aborted: bool
    consts: Constants
    start: int
    sizes: np.ndarray
    nll: float | None = None
    kind: str | None = None
    calibration: Any = None


def round_half_up(x: float) -> int:
    """``round`` with halves up (6.5 -> 7), not Python's banker's rounding."""
    return int(np.floor(x + 0.5))


def fixed_count(m: float, n: int) -> int:
    """Features a fixed budget ``m`` selects per cluster among ``n`` of one kind:
    ``round(m n)`` with halves up, at least one (none when there are none)."""
    return min(n, max(1, round_half_up(m * n)))


# -------------------------------------------------------------------- prepared data
@dataclass(frozen=True, eq=False)
class CraftData:
    """Arrays shared by every fit on one data set (built once by :func:`prepare`).

    Per row only what the costs and statistics read (``X0``, ``M``, ``codes``, ``g0``):
    squares of ``X0`` and the one-hot matrix of the codes are formed piece by piece
    where they are used (on the Dask benchmark's 10 + 10 columns they took 208 of 336
    bytes a row).
    """

    n: int
    P: int  # numeric features
    Q: int  # categorical features
    X0: np.ndarray  # (n, P) numeric, missing -> 0
    M: np.ndarray | None  # (n, P) bool observed mask, None when nothing is missing
    col_mean: np.ndarray  # (P,) mean of observed values (the filler for a missing centre)
    col_sd: np.ndarray  # (P,) sd of observed values (for the sigma floor)
    L: np.ndarray  # (Q,) levels per feature
    level_q: np.ndarray  # (S,) feature of each level column
    level_sum: sparse.csr_matrix  # (S, Q) sums level columns per feature
    codes: np.ndarray  # (n, Q) codes, -1 missing; the smallest integer type that holds them
    offsets: np.ndarray  # (Q,) first level column of each feature
    log_eta0: np.ndarray  # (S,) log of the smoothed global level shares
    g0: np.ndarray  # (n,) sum over categorical features of -log eta0(x_nd)
    alpha: float  # pseudo-count on level shares

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the cached row blocks (:func:`as_blocked`), which would
        copy the rows a second time (restarts in worker processes)."""
        state = dict(self.__dict__)
        state.pop("_blocked", None)
        return state


def _code_type(L: np.ndarray) -> type:
    """The smallest signed integer type holding codes ``-1 .. max(L) - 1``."""
    top = int(L.max(initial=0))
    return np.int8 if top <= 128 else np.int16 if top <= 32768 else np.int32


def prepare(
    numeric: np.ndarray,
    codes: np.ndarray,
    n_levels: list[int],
    *,
    alpha: float,
    overwrite: bool = False,
) -> CraftData:
    """Build :class:`CraftData` from a numeric block (NaN = missing) and integer codes.

    ``overwrite=True``: ``numeric`` is the caller's own scratch copy, used for the
    deviations from the column means (one block less at the peak; same numbers)."""
    P = numeric.shape[1]
    obs = ~np.isnan(numeric)
    X0 = np.where(obs, numeric, 0.0)
    cnt = obs.sum(axis=0)
    col_mean = np.divide(X0.sum(axis=0), cnt, out=np.zeros(P), where=cnt > 0)
    dev = np.subtract(numeric, col_mean, out=numeric if overwrite else None)
    np.copyto(dev, 0.0, where=~obs)
    col_sd = np.sqrt(np.divide(np.multiply(dev, dev, out=dev).sum(axis=0), np.maximum(cnt - 1, 1)))
    M = None if obs.all() else obs
    return prepare_block(
        X0, M, codes, n_levels, alpha=alpha, col_mean=col_mean, col_sd=col_sd, log_eta0=None
    )


def prepare_block(
    X0: np.ndarray,
    M: np.ndarray | None,
    codes: np.ndarray,
    n_levels: list[int],
    *,
    alpha: float,
    col_mean: np.ndarray,
    col_sd: np.ndarray,
    log_eta0: np.ndarray | None,
) -> CraftData:
    """:class:`CraftData` from numeric cells ready for use (``X0``: missing cells 0,
    observed mask ``M`` or None) and integer codes, with the given column statistics.

    ``log_eta0``: the global level shares of the data set this block belongs to
    (None: the codes' own, smoothed by ``alpha``).
    """
    n = max(X0.shape[0], codes.shape[0])
    P, Q = X0.shape[1], codes.shape[1]
    L = np.asarray(n_levels, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(L)[:-1]]).astype(np.int64) if Q else np.zeros(0, int)
    S = int(L.sum())
    level_q = np.repeat(np.arange(Q), L)
    # column-major: the kernels read one feature's codes at a time
    codes = np.asarray(codes, dtype=_code_type(L), order="F")
    level_sum = sparse.csr_matrix((np.ones(S), (np.arange(S), level_q)), shape=(S, Q))
    if log_eta0 is None:
        counts = np.zeros(S)
        n_obs_q = np.zeros(Q, dtype=np.int64)
        for q in range(Q):
            c = codes[:, q]
            c = c[c >= 0]
            counts[offsets[q] : offsets[q] + L[q]] = np.bincount(c, minlength=L[q])
            n_obs_q[q] = c.size
        eta0 = (counts + alpha) / (n_obs_q[level_q] + alpha * L[level_q]) if Q else np.zeros(0)
        log_eta0 = np.log(eta0)
    g0 = _global_cost(codes, offsets, log_eta0)
    return CraftData(
        n,
        P,
        Q,
        X0,
        M,
        col_mean,
        col_sd,
        L,
        level_q,
        level_sum,
        codes,
        offsets,
        log_eta0,
        g0,
        alpha,
    )


def _global_cost(codes: np.ndarray, offsets: np.ndarray, log_eta0: np.ndarray) -> np.ndarray:
    """g0: per row, the sum over its observed categorical cells of ``-log eta0``."""
    n = codes.shape[0]
    g0 = np.zeros(n)
    if codes.shape[1]:
        table = _level_table(offsets, log_eta0[None, :])
        for a in range(0, n, PIECE_ROWS):
            b = min(a + PIECE_ROWS, n)
            np.negative(_level_sums(codes, offsets, table, a, b)[:, 0], out=g0[a:b])
    return g0


def with_training_stats(new: CraftData, fitted: CraftData) -> CraftData:
    """New data carrying the fitted data's global statistics (level shares, column
    means and sds), so that costs on it are the fitted model's costs."""
    return replace(
        new,
        col_mean=fitted.col_mean,
        col_sd=fitted.col_sd,
        log_eta0=fitted.log_eta0,
        g0=_global_cost(new.codes, new.offsets, fitted.log_eta0),
    )


def feature_sums(data: CraftData, A: np.ndarray) -> np.ndarray:
    """(K, Q): each feature's level columns of ``A`` (K, S) added up, the numbers of
    ``A @ data.level_sum`` (scipy adds them to 0 in level order) without a sparse
    product: each feature's levels added in order from the first, then ``+ 0.0``, which
    turns a -0.0 total into the 0.0 that starting from 0 gives (otherwise x + 0.0 == x);
    compiled (:func:`~sparseclust._craft.costs_jit.feature_sums`)."""
    K, Q = A.shape[0], data.Q
    if Q == 0:
        return np.zeros((K, 0))
    return _feature_sums(
        np.ascontiguousarray(A, dtype=np.float64), data.offsets, data.L, np.empty((K, Q))
    )


# ---------------------------------------------------------------- pieces of rows
#: Rows per piece: the kernels walk a block piece by piece, with each piece's
#: temporaries in buffers reused from piece to piece and call to call. The in-memory
#: blocks are one piece each, so their results are those of whole-block products
#: (BLAS may round a row's products differently in matrices of other sizes).
PIECE_ROWS = BLOCK_ROWS
#: Largest buffer kept between calls (a piece's costs for up to 32 clusters); larger
#: ones, for many clusters, are allocated per piece, where their cost is small next
#: to the products that fill them.
SCRATCH_BYTES = 1 << 22
#: Rows per piece of :func:`block_stats` on blocks of more than :data:`PIECE_ROWS` rows
#: (Dask partitions): OpenBLAS's small-matrix GEMM behind ``Z @ X`` allocates 16 bytes
#: per row, and stays below glibc's 128 kB mmap threshold up to 8,191 rows.
STATS_ROWS = 8000
_ROWS = np.arange(PIECE_ROWS)
_SCRATCH = threading.local()


def _scratch(name: str, shape: tuple[int, ...], dtype: Any = np.float64) -> np.ndarray:
    """A buffer of ``shape`` kept by this thread under ``name`` (contents undefined).

    Dask's nanny starts workers with ``MALLOC_TRIM_THRESHOLD_`` set, which makes glibc
    map every allocation over 128 kB and unmap it when freed: a fresh temporary costs
    page faults on every call. A buffer grows to the largest size asked for (up to
    :data:`SCRATCH_BYTES`) and stays; one set per thread, as a worker's threads run
    kernels at the same time.
    """
    size = math.prod(shape)
    if size * np.dtype(dtype).itemsize > SCRATCH_BYTES:
        return np.empty(shape, dtype=dtype)
    store = _SCRATCH.__dict__
    buf = store.get(name)
    if buf is None or buf.size < size or buf.dtype != dtype:
        buf = store[name] = np.empty(size, dtype=dtype)
    return buf[:size].reshape(shape)


def _level_table(offsets: np.ndarray, A: np.ndarray) -> np.ndarray:
    """Values ``A`` (K, S) per cluster and level as a gather table (S + Q, K').

    Row ``s + q + 1`` holds level column ``s`` of feature ``q``; the zero row just
    before a feature's levels is where its missing code -1 lands. Three clusters get
    a fourth zero column: numpy's ``take`` copies rows of 8, 16 or 32 bytes fastest.
    """
    K, S = A.shape
    Q = offsets.size
    T = np.zeros((S + Q, 4 if K == 3 else K))
    L_all = np.diff(np.append(offsets, S))
    T[np.arange(S) + np.repeat(np.arange(Q), L_all) + 1, :K] = A.T
    return T


#: A block's categorical cost terms are computed once per distinct row of codes, and
#: gathered to its rows, when it has at most this share of distinct rows (Adult's
#: 16,384-row blocks have about 5,000: the per-feature gathers then run on a third of
#: the rows). A row's terms are the same numbers either way (the same additions).
DISTINCT_SHARE = 0.5
_DISTINCT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _unique_rows(codes: np.ndarray, L: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first row of each distinct row of ``codes``, index of every row's distinct row)."""
    n, Q = codes.shape
    radix = (L + 1).astype(float)
    if float(np.prod(radix)) < 2.0**62:  # one integer key per row
        key = np.zeros(n, dtype=np.int64)
        for q in range(Q):
            key *= int(L[q]) + 1
            key += codes[:, q]
            key += 1
    else:
        c = np.ascontiguousarray(codes)
        key = c.view(np.dtype((np.void, c.dtype.itemsize * Q)))[:, 0]
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    return first, inv.reshape(n)


def distinct_rows(data: CraftData) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The block's distinct rows of codes, when few enough (:data:`DISTINCT_SHARE`):
    ``(their codes, column-major; first row of each; every row's distinct row)``,
    else None. Computed once per block and kept while the block lives; the costs
    read it (:func:`_cost_pieces`) once a per-pass kernel has asked for it."""
    try:
        return _DISTINCT[data]
    except KeyError:
        pass
    out = None
    if data.Q >= 2 and data.n >= 1024:
        first, inv = _unique_rows(data.codes, data.L)
        if first.size <= DISTINCT_SHARE * data.n:
            index_type = np.int32 if first.size < 2**31 else np.intp
            out = (np.asfortranarray(data.codes[first]), first, inv.astype(index_type))
    _DISTINCT[data] = out
    return out


#: Data of at most this many numeric cells keep per-row arrays that every pass would
#: otherwise recompute (the squares of ``X0``; the likelihood's terms of unselected
#: features), one copy per block (:func:`row_cache`): the same numbers, computed once.
CACHE_CELLS = 1 << 21
_ROW_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def row_cache(block: CraftData, name: str, make: Any) -> np.ndarray | None:
    """``make()`` computed once per in-memory block of data small enough
    (:data:`CACHE_CELLS`, registered by :func:`as_blocked`) and kept under ``name``;
    None for other blocks (the caller computes it in its buffers)."""
    cache = _ROW_CACHE.get(block)
    if cache is None:
        return None
    out = cache.get(name)
    if out is None:
        out = cache[name] = make()
    return out


def _squares(data: CraftData, a: int, b: int, name: str) -> np.ndarray:
    """``X0[a:b] ** 2`` (as ``X * X``): kept for small data, else in a buffer."""
    sq = row_cache(data, "squares", lambda: np.multiply(data.X0, data.X0))
    if sq is not None:
        return sq[a:b]
    X = data.X0[a:b]
    return np.multiply(X, X, out=_scratch(name, X.shape))


def _level_sums(codes, offsets, table, a: int, b: int) -> np.ndarray:
    """(b - a, K'): per row of ``a:b``, the table rows of its levels summed feature by
    feature in feature order (the rounding of the one-hot product ``onehot @ A.T``
    this replaces: each row's observed levels added in column order), in this
    thread's buffers; compiled (:func:`~sparseclust._craft.costs_jit.level_sums`)."""

    out = _scratch("level_sums", (b - a, table.shape[1]))
    return level_sums(codes.T, offsets, table, a, b, out)


# ------------------------------------------------------------------- cluster state
@dataclass(frozen=True, eq=False)
class State:
    """Parameters of K clusters: numeric means/sds, log level shares, selection."""

    zeta: np.ndarray  # (K, P)
    sigma: np.ndarray  # (K, P)
    log_eta: np.ndarray  # (K, S)
    counts: np.ndarray  # (K, S) level counts (zeros for a cluster opened at a point)
    v: np.ndarray  # (K, D) bool: numeric features first, then categorical

    @property
    def K(self) -> int:
        return self.v.shape[0]


def _cost_pieces(data: CraftData, st: State, F_delta: float, sigma_override: float | None = None):
    """CAF costs d_nk (paper Algorithm 2) of all rows and clusters, piece by piece.

    Yields ``(a, b, D)``: ``D`` (b - a, K) holds the costs of rows ``a:b``, in this
    thread's buffers (valid until the next piece). A missing cell contributes nothing
    (neither to numeric nor to categorical terms). The terms are added in one fixed
    order, so that a row's costs do not depend on the piece it falls in.
    """
    P, Q, K = data.P, data.Q, st.K
    dist = _DISTINCT.get(data) if Q else None
    F_v = F_delta * st.v.sum(axis=1)
    if Q:  # _level_table of (log_eta0 - log_eta) * v, compiled
        table = np.empty((data.level_q.size + Q, 4 if K == 3 else K))
        cost_table(data.log_eta0, st.log_eta, st.v, P, data.offsets, data.L, table)
        if dist is not None:  # categorical terms + g0 of each distinct row
            ucodes, first, inv = dist
            level = _level_sums(ucodes, data.offsets, table, 0, first.size)
            cat = _scratch("cost_cat", (first.size, K))
            add_rows(level, data.g0[first], 0, F_v, False, cat)
    if P:
        W, Wz, wz2, wz2_sum = _numeric_weights(st, P, sigma_override)
        W2 = Wz.T
    for a in range(0, data.n, PIECE_ROWS):
        b = min(a + PIECE_ROWS, data.n)
        m = b - a
        D = _scratch("cost", (m, K))
        if dist is not None:
            rows = _scratch("cost_rows", (m,), np.intp)
            np.copyto(rows, inv[a:b])
            np.take(cat, rows, axis=0, out=D, mode="clip")
        elif Q:  # level sums + g0 (+ F_v when nothing follows: categorical data)
            level = _level_sums(data.codes, data.offsets, table, a, b)
            add_rows(level, data.g0, a, F_v, not P, D)
            if not P:
                yield a, b, D
                continue
        else:
            D.fill(0.0)
        if P:
            X = data.X0[a:b]
            X2 = _squares(data, a, b, "cost_sq")
            tmp = _scratch("cost_tmp", (m, K))
            D += np.matmul(X2, W.T, out=tmp)
            D += np.matmul(X, W2, out=tmp)
            if data.M is None:
                _add(D, D, wz2_sum)
            else:
                Mf = _scratch("cost_mask", (m, P))
                np.copyto(Mf, data.M[a:b])
                D += np.matmul(Mf, wz2.T, out=tmp)
        _add(D, D, F_v)
        yield a, b, D


def _numeric_weights(st: State, P: int, sigma_override: float | None) -> tuple[np.ndarray, ...]:
    """The numeric costs' per-cluster terms (K, P): ``W = v / (2 sigma^2)``,
    ``Wz = -2 W zeta``, ``wz2 = W zeta^2`` and its row sums ``wz2_sum``."""
    sig = st.sigma if sigma_override is None else sigma_override
    W = st.v[:, :P] / (2.0 * sig * sig)
    wz2 = W * st.zeta * st.zeta
    return W, -2.0 * (W * st.zeta), wz2, wz2.sum(axis=1)


def _add(D: np.ndarray, x: np.ndarray, y: np.ndarray) -> None:
    """``D[:] = x + y`` broadcast to ``D`` (rows x clusters): column by column when there
    are few clusters, as numpy loops over a short last axis one row at a time."""
    if D.shape[1] > 8:
        np.add(x, y, out=D)
        return
    if x is D and y.ndim == 1:  # a value per cluster (the usual call: no broadcasting)
        for k in range(D.shape[1]):
            np.add(D[:, k], y[k], out=D[:, k])
        return
    x, y = np.broadcast_to(x, D.shape), np.broadcast_to(y, D.shape)
    for k in range(D.shape[1]):
        np.add(x[:, k], y[:, k], out=D[:, k])


def costs(
    data: CraftData,
    st: State,
    F_delta: float,
    rows: np.ndarray | None = None,
    sigma_override: float | None = None,
) -> np.ndarray:
    """CAF costs d_nk (paper Algorithm 2) for ``rows`` (all by default) and all clusters.

    A missing cell contributes nothing (neither to numeric nor to categorical terms).
    """
    if rows is not None:
        data = take_rows(data, rows)
    out = np.empty((data.n, st.K))
    for a, b, D in _cost_pieces(data, st, F_delta, sigma_override):
        out[a:b] = D
    return out


def _pick(D: np.ndarray, j: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out[i] = D[i, j[i]]`` for a C-contiguous ``D``, without temporaries."""
    m, K = D.shape
    flat = _scratch("pick", (m,), np.intp)
    np.multiply(_ROWS[:m], K, out=flat)
    flat += j
    return np.take(D.reshape(-1), flat, out=out, mode="clip")


def _row_min(D: np.ndarray, idx: np.ndarray, dmin: np.ndarray) -> None:
    """``idx = D.argmin(axis=1)`` (the first of equal minima, numpy's rule for NaN) and
    ``dmin = D[i, idx]``, compiled (:func:`~sparseclust._craft.costs_jit.row_min`)."""

    row_min(D, idx, dmin)


def singleton(data: CraftData, i: int, v: np.ndarray) -> State:
    """A cluster opened at point ``i``: centre x_i, sigma = 1, smoothed one-hot shares."""
    P, S = data.P, int(data.L.sum())
    zeta = np.where(data.M is None or data.M[i].astype(bool), data.X0[i], data.col_mean)[None, :]
    counts = np.zeros((1, S))
    if data.Q:
        c = data.codes[i]
        ok = c >= 0
        counts[0, (c + data.offsets)[ok]] = 1.0
        nq = ok.astype(float)[data.level_q]
        log_eta = np.log((counts + data.alpha) / (nq + data.alpha * data.L[data.level_q]))
    else:
        log_eta = np.zeros((1, 0))
    return State(zeta.reshape(1, P), np.ones((1, P)), log_eta, counts, v[None, :].astype(bool))


def stack(a: State, b: State) -> State:
    """The clusters of ``a``, then those of ``b``."""
    return stack_all(a, [b])


def stack_all(first: State | None, more: list[State]) -> State | None:
    """``first`` with the clusters of ``more`` appended (one copy for all; ``more`` is
    emptied); ``first`` itself when ``more`` is empty."""
    parts = ([] if first is None else [first]) + more
    more.clear()
    if len(parts) <= 1:
        return parts[0] if parts else None
    return State(
        *(
            np.vstack([getattr(p, f) for p in parts])
            for f in ("zeta", "sigma", "log_eta", "counts", "v")
        )
    )


#: Clusters up to which the membership matrix of :func:`block_stats` is filled one
#: cluster at a time (a comparison per cluster beats a scattered assignment).
_MEMBER_BY_CLUSTER = 6
#: Level counts are updated from the rows whose label changed when at most this share
#: of a block's rows did (the usual case after the first passes); else recounted.
_RECOUNT_SHARE = 0.125


def level_counts(
    data: CraftData,
    labels: np.ndarray,
    K: int,
    prev: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Integer level counts (K, slots) of the block's rows under ``labels`` (slots: the
    level columns plus one missing slot per feature, as in :func:`_level_table`).

    ``prev = (old_labels, old_counts)``: the counts of the same rows under earlier
    labels (cluster numbers below ``K``, the same numbering): when few rows changed
    (:data:`_RECOUNT_SHARE`) the rows that changed are moved from their old cell to
    their new one. Counts are integers, so either way gives the same numbers
    (compiled: :func:`~sparseclust._craft.costs_jit.add_counts`).
    """

    slots = data.level_q.size + data.Q
    n = labels.size
    if prev is not None:
        old, old_counts = prev
        changed = np.flatnonzero(labels != old)
        if changed.size <= _RECOUNT_SHARE * n:
            out = np.zeros((K, slots), dtype=np.int64)
            out[: old_counts.shape[0]] = old_counts
            if changed.size:
                add_counts(data.codes, data.offsets, changed, labels[changed], 1, out)
                add_counts(data.codes, data.offsets, changed, old[changed], -1, out)
            return out
    return count_all(data.codes, data.offsets, labels, np.zeros((K, slots), dtype=np.int64))


def block_stats(
    data: CraftData, labels: np.ndarray, K: int, counts: np.ndarray | None = None
) -> dict[str, Any]:
    """Sufficient statistics of ``K`` clusters on one block of rows.

    Counts ``nk`` (K,), sums ``s1`` and sums of squares ``s2`` of the numeric cells
    (K, P), observed-cell counts ``cnt`` (K, P), level counts ``counts`` (K, S).
    Missing cells (zeros in ``X0``, code -1) add nothing. A block of up to
    :data:`PIECE_ROWS` rows is summed in one piece; larger ones in pieces of
    :data:`STATS_ROWS` rows added up in row order. ``counts``: the block's integer
    level counts under ``labels`` (:func:`level_counts`), when already known.
    """
    P, Q, n = data.P, data.Q, labels.size
    S = data.level_q.size
    if Q and counts is None:
        counts = level_counts(data, labels, K)
    if Q:  # every row has one slot of the first feature (a level or missing)
        nk = counts[:, : int(data.L[0]) + 1].sum(axis=1).astype(np.float64)
    else:
        nk = np.bincount(labels, minlength=K).astype(np.float64)
    sums = {"s1": np.zeros((K, P)), "s2": np.zeros((K, P)), "cnt": np.zeros((K, P))}
    step = n if n <= PIECE_ROWS else STATS_ROWS
    for a in range(0, n, max(step, 1)) if P else ():
        b = min(a + step, n)
        m, lab = b - a, labels[a:b]
        if K <= _MEMBER_BY_CLUSTER:  # the same 0/1 matrix, filled by comparisons
            Z = _scratch("member", (K, m))
            hit = _scratch("member_hit", (m,), bool)
            for k in range(K):
                np.copyto(Z[k], np.equal(lab, k, out=hit))
        elif K <= 32:  # a dense membership matrix: one small GEMM beats sparse products
            Z = _scratch("member", (K, m))
            Z.fill(0.0)
            Z[lab, _ROWS[:m]] = 1.0
        else:
            Z = sparse.csr_matrix((np.ones(m), (lab, np.arange(m))), shape=(K, m))
        X = data.X0[a:b]
        X2 = _squares(data, a, b, "stats_sq")
        parts = {"s1": Z @ X, "s2": Z @ X2}
        if data.M is not None:
            Mf = _scratch("stats_mask", (m, P))
            np.copyto(Mf, data.M[a:b])
            parts["cnt"] = Z @ Mf
        for key, part in parts.items():
            if a == 0:  # the first piece as it comes (a block of one piece: bit for bit)
                sums[key] = np.asarray(part)
            else:
                sums[key] += part
    out: dict[str, Any] = {"nk": nk, "s1": sums["s1"], "s2": sums["s2"]}
    out["cnt"] = sums["cnt"] if data.M is not None else np.repeat(nk[:, None], P, 1)
    if Q:
        cols = np.arange(S) + data.level_q + 1
        out["counts"] = counts[:, cols].astype(np.float64)
    else:
        out["counts"] = np.zeros((K, S))
    return out


def sum_stats(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Block statistics added up in block order (the driver's reduction)."""
    out = {key: parts[0][key].copy() for key in ("nk", "s1", "s2", "cnt", "counts")}
    for p in parts[1:]:
        for key in out:
            out[key] += p[key]
    for key in ("cost", "nll"):
        if key in parts[0]:
            out[key] = float(sum(p[key] for p in parts))
    return out


def state_from_stats(
    data: CraftData, stats: dict[str, Any], v: np.ndarray, sigma_floor: float
) -> tuple[State, np.ndarray]:
    """Means, sds and level shares of the non-empty clusters (empty ones dropped).

    Returns the new state (selection ``v`` carried over, to be re-selected) and the
    map old cluster -> new cluster (``-1`` for a dropped one). sigma: the
    within-cluster sd (ddof=0), 1 for clusters of fewer than two points (the paper's
    value for a new cluster), floored at ``sigma_floor * global sd`` of the feature.
    """
    nk_all = stats["nk"]
    keep = np.flatnonzero(nk_all)
    remap = np.full(nk_all.size, -1, dtype=np.int64)
    remap[keep] = np.arange(keep.size)
    K2 = keep.size
    P = data.P
    if P:  # compiled: the same operations element by element
        zeta, sigma = centres(
            *(np.ascontiguousarray(stats[key]) for key in ("s1", "s2", "cnt")),
            nk_all,
            keep,
            data.col_mean,
            data.col_sd,
            float(sigma_floor),
            np.empty((K2, P)),
            np.empty((K2, P)),
        )
    else:
        zeta = sigma = np.zeros((K2, 0))
    if data.Q:
        counts = stats["counts"][keep]
        nq = feature_sums(data, counts)  # (K, Q)
        log_eta = np.log(counts + data.alpha) - np.log(
            nq[:, data.level_q] + data.alpha * data.L[data.level_q]
        )
    else:
        counts = log_eta = np.zeros((K2, 0))
    return State(zeta, sigma, log_eta, counts, v[keep]), remap


def update(
    data: CraftData, labels: np.ndarray, K: int, v: np.ndarray, sigma_floor: float
) -> tuple[State, np.ndarray]:
    """Means, sds and level shares of the non-empty clusters of one in-memory data set.

    Returns the new state (see :func:`state_from_stats`) and the relabelled labels.
    """
    st, remap = state_from_stats(data, block_stats(data, labels, K), v, sigma_floor)
    return st, remap[labels]


def _tie_key(x: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
    """Sort keys with rounding noise removed: values equal to 10 significant digits
    (relative to ``scale`` per row, by default the row's largest magnitude) tie, and
    ties go to the earlier feature.
    Without this, features tied in exact arithmetic (one cluster: every
    ``G_d - G_kd`` is 0, every sd is the global one) are ranked by ~1e-13 noise,
    which depends on the column order and on how the sums were blocked."""
    if scale is None:
        scale = np.abs(x).max(axis=1) if x.size else np.ones(x.shape[0])
    scale = np.where(scale > 0, scale, 1.0)[:, None]
    return np.round(x / scale, 10)


def select(
    data: CraftData, st: State, *, m: float, budget: str, eps_c: float | None, eps_v: float | None
) -> np.ndarray:
    """Feature selection v for every cluster (fixed or approximate budget).

    Fixed: the ``round(m |Num|)`` numeric features with the lowest sigma and the
    ``round(m |Cat|)`` categorical features with the largest ``G_d - G_kd`` (rounding
    halves up; at least one of each type present; ties to the earlier feature).
    Approximate: categorical ``G_d - G_kd > eps_c G_d``; numeric ``sigma^2 < eps_v``.
    """
    P, Q, K = data.P, data.Q, st.K
    v = np.zeros((K, P + Q), dtype=bool)
    if P:
        if budget == "fixed":
            n_sel = fixed_count(m, P)
            order = np.argsort(_tie_key(st.sigma), axis=1, kind="stable")[:, :n_sel]
            np.put_along_axis(v[:, :P], order, True, axis=1)
        else:
            v[:, :P] = st.sigma * st.sigma < eps_v
    if Q:
        G_d = -feature_sums(data, st.counts * data.log_eta0[None, :])
        G_kd = -feature_sums(data, st.counts * st.log_eta)
        score = G_d - G_kd
        if budget == "fixed":
            n_sel = fixed_count(m, Q)
            order = np.argsort(_tie_key(-score, np.abs(G_d).max(axis=1)), axis=1, kind="stable")[
                :, :n_sel
            ]
            sub = np.zeros((K, Q), dtype=bool)
            np.put_along_axis(sub, order, True, axis=1)
            v[:, P:] = sub
        else:
            v[:, P:] = score > eps_c * G_d
    return v


def category_scores(data: CraftData, st: State) -> np.ndarray:
    """G_d - G_kd per cluster and categorical feature (n_k KL(eta_k || eta_0))."""
    G_d = -feature_sums(data, st.counts * data.log_eta0[None, :])
    G_kd = -feature_sums(data, st.counts * st.log_eta)
    return G_d - G_kd


# ------------------------------------------------------------------- row blocks
class Blocked:
    """A data set as row blocks on an executor (:mod:`sparseclust._engine.blocks`).

    ``header`` carries the global statistics (column means and sds, global level
    shares, level layout, ``n`` = all rows); every block is a :class:`CraftData` of
    its own rows with the same global statistics. The in-memory path and the Dask
    backend run the same kernels over their blocks.
    """

    def __init__(self, header: CraftData, executor: Any) -> None:
        self.header = header
        self.executor = executor

    def __getattr__(self, name: str) -> Any:
        return getattr(self.header, name)

    @property
    def local(self) -> bool:
        return isinstance(self.executor, LocalBlocks)


def _with_rows(data: CraftData, rows: Any) -> CraftData:
    """``data`` with its per-row arrays indexed by ``rows`` (the other fields shared;
    ``dataclasses.replace`` without its per-call field checks, as the opening walk
    takes rows for every cluster it opens; no cached blocking carried over). Taken
    codes stay column-major, as the block's are (the compiled level sums read one
    feature's codes at a time)."""
    new = object.__new__(CraftData)
    fields_ = {f: v for f, v in data.__dict__.items() if f != "_blocked"}
    codes = data.codes[rows]
    fields_.update(
        X0=data.X0[rows],
        M=None if data.M is None else data.M[rows],
        codes=codes if isinstance(rows, slice) else np.asfortranarray(codes),
        g0=data.g0[rows],
    )
    fields_["n"] = int(fields_["g0"].shape[0])
    new.__dict__.update(fields_)
    return new


def take_rows(data: CraftData, rows: np.ndarray) -> CraftData:
    """The rows ``rows`` of a block (same global statistics)."""
    return _with_rows(data, rows)


def slice_rows(data: CraftData, start: int, stop: int) -> CraftData:
    """Rows ``start:stop`` of a block (views of the dense arrays)."""
    return _with_rows(data, slice(start, stop))


def as_blocked(data: CraftData | Blocked, block_rows: int = BLOCK_ROWS) -> Blocked:
    """``data`` in row blocks of ``block_rows`` held in memory (cached per data set).

    The blocking is kept on the data object itself (a reference cycle the garbage
    collector frees with the data; a weak-keyed table would keep every data set
    alive, as its value refers to the data)."""
    if isinstance(data, Blocked):
        return data
    cached = data.__dict__.get("_blocked")
    if cached is not None and cached[0] == block_rows:
        return cached[1]
    bounds = block_bounds(data.n, block_rows)
    blocks = [slice_rows(data, a, b) for a, b in bounds]
    if data.n * data.P <= CACHE_CELLS:
        for block in blocks:
            _ROW_CACHE[block] = {}
    out = Blocked(data, LocalBlocks(blocks, [b - a for a, b in bounds]))
    object.__setattr__(data, "_blocked", (block_rows, out))
    return out


def _k_row(block: CraftData, offset: int, state: Any, i: int) -> tuple[Any, CraftData]:
    return state, take_rows(block, np.array([i - offset]))


def fetch_row(data: Blocked, i: int) -> CraftData:
    """Row ``i`` (global position) as a one-row block."""
    return call_on_row(data.executor, i, _k_row)


def _relabel(labels: np.ndarray, remap: np.ndarray | None) -> np.ndarray:
    """``remap[labels]``; the same array when no cluster was dropped (the usual case:
    no copy of the rows' labels)."""
    if remap is None or np.array_equal(remap, np.arange(remap.size)):
        return labels
    return remap[labels]


def _k_costs(block, offset, state, st, F_delta, threshold, sigma_override, remap):
    """Pass, step 1: every row's best existing cluster; rows beyond the threshold."""
    labels = state["labels"] if state is not None else np.zeros(block.n, dtype=np.int64)
    labels = _relabel(labels, remap)
    counts = None if state is None else state.get("counts")
    if counts is not None and remap is not None:  # a dropped cluster has no rows here
        counts = counts[remap >= 0]
    distinct_rows(block)
    idx = np.empty(block.n, dtype=np.int64)
    dmin = np.empty(block.n)
    cand = [np.zeros(0, dtype=np.int64)]
    for a, b, D in _cost_pieces(block, st, F_delta, sigma_override):
        _row_min(D, idx[a:b], dmin[a:b])
        beyond = np.greater(dmin[a:b], threshold, out=_scratch("beyond", (b - a,), bool))
        cand.append(a + np.flatnonzero(beyond))
    cand = np.concatenate(cand)
    out = {"labels": labels, "idx": idx, "dmin": dmin, "cand": cand, "counts": counts}
    return out, int(cand.size)


def _k_costs_assign(block, offset, state, st, F_delta, threshold, sigma_override, remap):
    """Pass, steps 1 and 3 in one call (for executors where a call is a round trip):
    a block without candidates also takes its assignment as if no cluster opens,
    which is the pass's assignment unless another block opens one. Its state then
    keeps step 1's under ``"pass"`` for :func:`_k_assign` in that case. Returns
    (number of candidates, the block's statistics or None)."""
    s1, n = _k_costs(block, offset, state, st, F_delta, threshold, sigma_override, remap)
    if n:
        return s1, (n, None)
    s3, stats = _k_assign(block, offset, s1, None, None, st.K, F_delta, sigma_override)
    return {**s3, "pass": s1}, (0, stats)


def _k_candidates(block, offset, state, new, threshold, F_delta, sigma_override):
    """Pass, step 2 (one block): its candidates not covered by the clusters opened so
    far in this pass (all opened at earlier rows), as a block of their own rows."""
    state = state.get("pass", state)
    cand = state["cand"]
    if new is not None and cand.size:
        c = costs(block, new, F_delta, rows=cand, sigma_override=sigma_override)
        cand = cand[(c > threshold).all(axis=1)]
    return state, (offset + cand, take_rows(block, cand))


def _k_assign(block, offset, state, new, openers, K_old, F_delta, sigma_override):
    """Pass, step 3: every row takes the best of the old clusters and of the new ones
    opened at or before its position; the block's sufficient statistics."""
    state = state.get("pass", state)  # step 1's state (see _k_costs_assign)
    idx, dmin, old = state["idx"], state["dmin"], state["labels"]
    K_tot = K_old if new is None else K_old + new.K
    if new is None:
        labels, cost = idx, dmin
    else:
        labels, cost = idx.copy(), dmin.copy()  # states are never changed in place
        for a, b, Dn in _cost_pieces(block, new, F_delta, sigma_override):
            m = b - a
            pos = np.add(_ROWS[:m], offset + a, out=_scratch("pos", (m,), np.intp))
            late = _scratch("late", (m, new.K), bool)
            np.greater(openers[None, :], pos[:, None], out=late)
            np.copyto(Dn, np.inf, where=late)  # not yet open when visited
            j = np.argmin(Dn, axis=1, out=_scratch("j", (m,), np.intp))
            dj = _pick(Dn, j, _scratch("dj", (m,)))
            # ties keep the earlier (old) cluster, as a sequential argmin
            better = np.less(dj, dmin[a:b], out=_scratch("better", (m,), bool))
            j += K_old
            np.copyto(labels[a:b], j, where=better)
            np.copyto(cost[a:b], dj, where=better)
            t = np.flatnonzero((openers >= offset + a) & (openers < offset + b))
            r = openers[t] - offset - a
            labels[a + r] = K_old + t
            cost[a + r] = Dn[r, t]
    if K_tot == 1:  # every row in the one cluster
        counts, stats = _one_cluster_stats(block)
        stats = dict(stats)
    else:
        counts = None
        if block.Q:  # updated from the previous pass's counts when few labels changed
            prev = None if state.get("counts") is None else (old, state["counts"])
            counts = level_counts(block, labels, K_tot, prev)
        stats = block_stats(block, labels, K_tot, counts)
    stats["cost"] = float(cost.sum())
    stats["pairs"] = _label_pairs(old, labels, K_old, K_tot)
    return {"labels": labels, "cost": cost, "counts": counts}, stats


_ONE_CLUSTER: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _one_cluster_stats(block: CraftData) -> tuple[np.ndarray | None, dict[str, Any]]:
    """(level counts, :func:`block_stats`) of the block with every row in one cluster,
    computed once per block (every fit starts there, and a fit at a large lambda stays
    there); the arrays are shared, and never changed in place."""
    try:
        return _ONE_CLUSTER[block]
    except KeyError:
        pass
    labels = np.zeros(block.n, dtype=np.int64)
    counts = level_counts(block, labels, 1) if block.Q else None
    out = _ONE_CLUSTER[block] = (counts, block_stats(block, labels, 1, counts))
    return out


def _label_pairs(old: np.ndarray, labels: np.ndarray, K_old: int, K_tot: int) -> np.ndarray:
    """The distinct ``old * K_tot + labels`` in increasing order (``old < K_old``):
    marked in a table of all pairs when it is small, which spares sorting the rows."""
    size = K_old * K_tot
    if size > 1 << 20:
        return np.unique(old * K_tot + labels)
    seen = _scratch("pairs", (size,), bool)
    seen.fill(False)
    for a in range(0, old.size, PIECE_ROWS):
        b = min(a + PIECE_ROWS, old.size)
        pair = np.multiply(old[a:b], K_tot, out=_scratch("pair", (b - a,), np.intp))
        pair += labels[a:b]
        seen[pair] = True
    return np.flatnonzero(seen)


def _same_parameters(a: State, b: State) -> bool:
    """The costs of ``a`` and ``b`` are the same numbers (every parameter equal)."""
    return all(
        np.array_equal(getattr(a, f), getattr(b, f)) for f in ("v", "zeta", "sigma", "log_eta")
    )


def _k_final(
    block, offset, state, st, F_delta, sigma_override, remap, with_nll, known=False, top=False
):
    """After the last pass: relabel, own costs (the objective) and the likelihood.

    ``known``: ``st`` has the parameters the last pass used (a converged fit), whose
    own costs the block kept; they are not computed again. ``top``: also the largest
    smallest cost of a row (``"top"``; with ``known`` the kept costs are the smallest,
    as such a pass opened no cluster)."""
    labels = _relabel(state["labels"], remap)
    out = {"cost": 0.0, "nll": 0.0, "top": -np.inf}
    if block.n:
        if known:
            own = state["cost"]
            if top:
                out["top"] = float(own.max())
        else:
            own = np.empty(block.n)
            for a, b, D in _cost_pieces(block, st, F_delta, sigma_override):
                _pick(D, labels[a:b], own[a:b])
                if top:
                    out["top"] = max(out["top"], float(D.min(axis=1).max()))
        out["cost"] = float(own.sum())
        if with_nll:
            out["nll"] = neg_loglik(block, st, labels)
    return {"labels": labels}, out


def _k_final_compiled(
    block, offset, state, st, F_delta, sigma_override, remap, with_nll, known, top
):
    """:func:`_k_final` of a fit whose passes ran compiled and whose last pass's costs
    are not the final ones (a fit stopped early): the final costs in one compiled call
    (:func:`~sparseclust._craft.fit_jit.final_costs`, the loop's own costs) instead of
    the numpy pieces; the same numbers, picked and summed as there."""
    labels = state["labels"]
    out = {"cost": 0.0, "nll": 0.0, "top": -np.inf}
    if block.n:
        so = -1.0 if sigma_override is None else float(sigma_override)
        cur = (st.zeta, st.sigma, st.log_eta, st.counts, st.v)
        dat = _block_inputs(block)
        fp = (np.inf, F_delta, 0.0, 0.0, 0.0, so)
        D = fit_jit.final_costs(cur, st.K, dat, fp, block.M is not None)
        own = _pick(D, labels, np.empty(block.n))
        if top:
            out["top"] = float(D.min(axis=1).max())
        out["cost"] = float(own.sum())
        if with_nll:
            out["nll"] = neg_loglik(block, st, labels)
    return {"labels": labels}, out


def _k_nll(block, offset, state, st):
    return state, neg_loglik(block, st, state["labels"]) if block.n else 0.0


def _costs_to(sub: CraftData, one: State, F_delta: float, rows: np.ndarray, so: Any) -> np.ndarray:
    """The costs of ``rows`` to the one cluster ``one`` (:func:`costs`); on categorical
    data in one compiled call (the same additions), without taking the rows."""
    if sub.P or sub.Q == 0:
        return costs(sub, one, F_delta, rows=rows, sigma_override=so)[:, 0]

    table = np.empty((sub.level_q.size + sub.Q, 1))
    cost_table(sub.log_eta0, one.log_eta, one.v, 0, sub.offsets, sub.L, table)
    f_v = float((F_delta * one.v.sum(axis=1))[0])
    return row_costs(sub.codes, rows, sub.offsets, table, sub.g0, f_v, np.empty(rows.size))


def _open_clusters(
    data: Blocked, states, n_cand, st, threshold, consts, rng, select_all, so, cap=None
):
    """Pass, step 2: the sequential new-cluster rule over the candidates, exact.

    Blocks are visited in data order; each hands over its candidates not covered by
    the clusters opened at earlier rows, which are then walked in order here (a
    candidate opens a cluster when its cost to every cluster opened before it still
    exceeds the threshold). Bernoulli draws happen here, in row order, so they do
    not depend on the blocking. Past ``cap`` clusters no more are opened (the fit is
    being stopped: lambda is too small).
    """
    F_delta, a0, b0 = consts.F_delta, consts.a0, consts.b0
    vsum = st.v.sum(axis=0).astype(float)
    K_now = st.K
    openers: list[int] = []
    new: State | None = None
    ones: list[State] = []  # opened since ``new`` was last stacked
    for j in np.flatnonzero(n_cand):
        if cap is not None and K_now > cap:
            break
        new = stack_all(new, ones)
        states[j], (gpos, sub) = data.executor.call(
            int(j), _k_candidates, states[j], new, threshold, F_delta, so
        )
        cand = np.arange(sub.n)
        while cand.size and (cap is None or K_now <= cap):
            i = int(cand[0])
            p = (a0 * K_now + vsum) / (K_now * (a0 + b0))
            v_new = np.ones(p.size, dtype=bool) if select_all else rng.random(p.size) < p
            one = singleton(sub, i, v_new)
            ones.append(one)
            openers.append(int(gpos[i]))
            vsum += v_new
            K_now += 1
            rest = cand[1:]
            if rest.size:
                c = _costs_to(sub, one, F_delta, rest, so)
                cand = rest[c > threshold]
            else:
                cand = rest
    return stack_all(new, ones), np.asarray(openers, dtype=np.int64)


def _pass(data: Blocked, states, st, threshold, consts, rng, select_all, so, remap, cap=None):
    """One CAF pass over all blocks: (states, state with opened clusters appended,
    summed statistics of the pass's assignment). ``cap``: see :func:`_open_clusters`."""
    ex = data.executor
    F_delta = consts.F_delta
    if getattr(ex, "calls_are_round_trips", False):  # one call for steps 1 and 3 when it can
        states, res = ex.map(_k_costs_assign, states, st, F_delta, threshold, so, remap)
        n_cand = [r[0] for r in res]
        parts = None if any(n_cand) else [r[1] for r in res]
    else:
        states, n_cand = ex.map(_k_costs, states, st, F_delta, threshold, so, remap)
        parts = None
    new, openers = None, np.zeros(0, dtype=np.int64)
    if any(n_cand):
        new, openers = _open_clusters(
            data, states, np.asarray(n_cand), st, threshold, consts, rng, select_all, so, cap
        )
    if parts is None:
        states, parts = ex.map(_k_assign, states, new, openers, st.K, F_delta, so)
    tot = sum_stats(parts)
    tot["pairs"] = np.unique(np.concatenate([p["pairs"] for p in parts]))
    return states, (st if new is None else stack(st, new)), tot


def caf_pass(
    data: CraftData,
    st: State,
    threshold: float,
    consts: Constants,
    rng: np.random.Generator,
    *,
    select_all: bool = False,
    sigma_override: float | None = None,
    block_rows: int = BLOCK_ROWS,
) -> tuple[np.ndarray, State, np.ndarray]:
    """One CAF assignment pass in data order, exact to the sequential rule.

    Returns (labels, state with opened clusters appended, cost of each point to
    the cluster it took).
    """
    B = as_blocked(data, block_rows)
    states, cand_state, _ = _pass(
        B, B.executor.initial_states(), st, threshold, consts, rng, select_all, sigma_override, None
    )
    states = B.executor.fetch(states)
    labels = np.concatenate([s["labels"] for s in states])
    cost = np.concatenate([s["cost"] for s in states])
    return labels, cand_state, cost


def objective(
    data: CraftData,
    st: State,
    labels: np.ndarray,
    lam: float,
    consts: Constants,
    own_cost: np.ndarray | None = None,
    sigma_override: float | None = None,
) -> float:
    """The CRAFT objective: discrepancies + (lambda + D F0) K + F_delta sum v."""
    if own_cost is None:
        own_cost = costs(data, st, consts.F_delta, sigma_override=sigma_override)[
            np.arange(data.n), labels
        ]
    nv = st.v.sum(axis=1)
    discrepancy = float(own_cost.sum() - consts.F_delta * nv[labels].sum())
    D = data.P + data.Q
    return discrepancy + (lam + D * consts.F0) * st.K + consts.F_delta * float(nv.sum())


def discrepancy(data: CraftData, st: State, labels: np.ndarray, consts: Constants) -> float:
    """Numeric + categorical discrepancy terms only (the data-fit part of the objective)."""
    own = costs(data, st, consts.F_delta)[np.arange(data.n), labels]
    return float(own.sum() - consts.F_delta * st.v.sum(axis=1)[labels].sum())


# ------------------------------------------------------------------------ the fit
def craft_fit(
    data: CraftData | Blocked,
    lam: float | None,
    *,
    m: float,
    rho: float,
    budget: str = "fixed",
    eps_c: float | None = None,
    eps_v: float | None = None,
    sigma_floor: float = 0.05,
    max_iter: int = 100,
    shuffle: bool = False,
    select_all: bool = False,
    sigma_override: float | None = None,
    feature_terms: bool = True,
    max_clusters: int | None = None,
    stop_above: tuple[int, int] | None = None,
    stop_below: tuple[int, int] | None = None,
    with_nll: bool = False,
    fixed_k: int | None = None,
    rng: np.random.Generator,
) -> Fit:
    """One run of CRAFT (Algorithm 1 with CAF) at a given lambda.

    ``max_clusters``: stop early (``aborted=True``, not converged) once a pass leaves
    more clusters than this (the pass stops opening clusters past it);
    ``stop_above=(k, n)``: stop early once more than ``k`` clusters have remained for
    ``n`` passes in a row; ``stop_below=(k, n)``: stop early once fewer than ``k``
    clusters, and no more than the pass before, have remained for ``n`` passes in a
    row (the first pass starts from one cluster). Lambda calibration only needs to
    know that lambda is too small (or too large), and such fits are the expensive ones.

    Returns a :class:`Fit`: labels (0-based), the final :class:`State`, objective
    trace (one value per pass, computed with the parameters the pass used), n_iter,
    converged.

    The degenerate methods share this loop: ``select_all=True`` keeps every feature
    (no selection, no Bernoulli draws); ``sigma_override`` fixes the sigma used in
    the costs (``1/sqrt(2)`` turns the numeric cost into the squared Euclidean
    distance of DP-means) while selection still ranks features by their real sd;
    ``feature_terms=False`` drops the F0 / F_delta terms (threshold = lambda).
    ``with_nll=True`` adds the negative log-likelihood (:func:`neg_loglik`) as ``nll``.

    ``fixed_k=K`` (with ``lam=None``): a fit at a fixed number of clusters. ``K``
    singletons seeded k-means++-style under the CRAFT cost (:func:`seed_clusters`)
    replace step 1, and the passes run without the new-cluster rule until no label
    changes (clusters that empty are dropped: then fewer than ``K``). ``lam`` in the
    result is the smallest lambda at which it is a fixed point of Algorithm 1, the
    largest smallest cost of a point minus ``D F0``, at least 0 (:func:`fixed_point_lambda`): at
    that lambda, and any larger one, a CAF pass from the final state opens no cluster
    and changes no label; the objective trace uses it.

    ``data`` is a :class:`CraftData` (run in row blocks of :data:`BLOCK_ROWS`) or a
    :class:`Blocked` data set on any executor (the Dask backend): the same kernels,
    the same random draws in the same order, hence the same fit.
    """
    settings, consts = _fit_settings(
        m, rho, budget, eps_c, eps_v, sigma_floor, max_iter, shuffle, select_all,
        sigma_override, feature_terms,
    )  # fmt: skip
    if (fixed_k is None) == (lam is None):
        raise ValueError("craft_fit needs a lambda or fixed_k=, not both.")
    with single_blas_thread():
        init = None
        if fixed_k is not None:
            init = seed_clusters(
                as_blocked(data),
                fixed_k,
                m=m,
                F_delta=consts.F_delta,
                select_all=select_all,
                sigma_override=sigma_override,
                rng=rng,
            )
        return _fit(
            data,
            lam,
            settings,
            consts,
            init=init,
            max_clusters=max_clusters,
            stop_above=stop_above,
            stop_below=stop_below,
            with_nll=with_nll,
            rng=rng,
        )


def _fit_settings(*args: Any) -> tuple[Settings, Constants]:
    """:class:`Settings` and :class:`Constants` of :func:`craft_fit`'s keywords (in
    :class:`Settings`' field order), made once per distinct set (a call to restart,
    calibrate or choose the budget makes hundreds of fits with the same ones; both are
    frozen, so shared)."""
    try:
        return _settings_of(*args)
    except TypeError:  # an unhashable keyword (an array): made for this fit
        return _settings_of.__wrapped__(*args)


@lru_cache(maxsize=64, typed=True)
def _settings_of(*args: Any) -> tuple[Settings, Constants]:
    settings = Settings(*args)
    consts = craft_constants(settings.m, settings.rho)
    if not settings.feature_terms:
        consts = replace(consts, F0=0.0, F_delta=0.0)
    return settings, consts


def _first_cluster(B: Blocked, i: int, v: np.ndarray) -> State:
    """:func:`singleton` at row ``i`` (global position): read in place when the data are
    one block in memory, else from the row fetched from its block (the same numbers)."""
    ex = B.executor
    if B.local and len(ex.blocks) == 1:
        return singleton(ex.blocks[0], i, v)
    return singleton(fetch_row(B, i), 0, v)


class _Opening(NamedTuple):
    """A fit's first cluster, to be opened at ``row`` with the selection ``v`` by the
    compiled passes (:func:`_compiled_passes`) in their own buffers."""

    row: int
    v: np.ndarray


class _Loop(NamedTuple):
    """Where the passes of :func:`_fit` ended."""

    states: list[Any]  # each block's state (its labels under "labels")
    remap: np.ndarray | None  # old cluster -> new cluster of the last update
    state: State  # the clusters after the last update and selection
    trace: list[tuple[float, int, float]]  # per pass: objective without lambda terms
    tot: dict[str, Any]  # the last pass's summed statistics
    n_iter: int
    converged: bool
    aborted: bool
    known: bool  # the last pass's own costs are the final ones


def _fit(
    data: CraftData | Blocked,
    lam: float | None,
    settings: Settings,
    consts: Constants,
    *,
    max_clusters: int | None,
    stop_above: tuple[int, int] | None,
    with_nll: bool,
    rng: np.random.Generator,
    init: tuple[State, int] | None = None,
    stop_below: tuple[int, int] | None = None,
) -> Fit:
    """The loop of :func:`craft_fit`. ``init=(state, start)``: begin from these
    clusters instead of one at a random point; ``lam=None``: no cluster is opened
    (threshold infinite) and the result's ``lam`` is the smallest lambda at which the
    final state is a fixed point (:func:`seeded_fit`)."""
    B = as_blocked(data)
    if settings.shuffle and not B.local:
        raise ValueError(
            "shuffle=True visits the rows in a fresh random order each pass, which needs the "
            "data in memory; use shuffle=False (data order) with the Dask backend."
        )
    D = B.P + B.Q
    threshold = np.inf if lam is None else lam + D * consts.F0
    if init is not None:
        st, start = init
    else:
        # Step 1: one cluster holding every point, centred at a random data point,
        # v_1 ~ Bernoulli(m)^D, sigma_1 = 1.
        start = int(rng.integers(B.n))
        v1 = np.ones(D, dtype=bool) if settings.select_all else rng.random(D) < settings.m
        st = _Opening(start, v1) if _compiles(B, settings) else _first_cluster(B, start, v1)
    stops = (max_clusters, stop_above, stop_below)
    loop = _passes(B, st, threshold, settings, consts, rng, *stops)
    return _final_fit(B, lam, loop, settings, consts, with_nll, start)


def _passes(
    B: Blocked,
    st: State,
    threshold: float,
    settings: Settings,
    consts: Constants,
    rng: np.random.Generator,
    max_clusters: int | None,
    stop_above: tuple[int, int] | None,
    stop_below: tuple[int, int] | None = None,
) -> _Loop:
    """CAF passes, parameter updates and selection until no label changes (or a stop);
    in one compiled call when the data are one block in memory (:func:`_compiled_passes`)."""
    if isinstance(st, _Opening) or _compiles(B, settings):  # _fit checked it already
        stops = (max_clusters, stop_above, stop_below)
        return _compiled_passes(B, st, threshold, settings, consts, rng, stops)
    ex = B.executor
    shuffle, so = settings.shuffle, settings.sigma_override
    states, remap = ex.initial_states(), None
    labels = np.zeros(B.n, dtype=np.int64) if shuffle else None
    trace: list[tuple[float, int, float]] = []  # objective without and with lambda
    converged = aborted = known = False
    it = over = 0
    tot: dict[str, Any] = {"nk": np.array([float(B.n)])}
    for it in range(1, settings.max_iter + 1):
        if shuffle:  # the same pass on the rows in a fresh random order
            raw, cand_state, tot = _shuffled_pass(
                B, labels, st, threshold, consts, rng, settings, max_clusters
            )
        else:
            states, cand_state, tot = _pass(
                B, states, st, threshold, consts, rng, settings.select_all, so, remap, max_clusters
            )
        # objective of the configuration the pass produced, with the parameters it used
        nv = cand_state.v.sum(axis=1)
        used = np.flatnonzero(tot["nk"])
        trace.append(
            (
                tot["cost"] - consts.F_delta * float(tot["nk"] @ nv),
                used.size,
                consts.F_delta * float(nv[used].sum()),
            )
        )
        st_new, remap = state_from_stats(B, tot, cand_state.v, settings.sigma_floor)
        if shuffle:
            labels = remap[raw]
        if settings.select_all:
            v = np.ones_like(st_new.v)
        else:
            s = settings
            v = select(B, st_new, m=s.m, budget=s.budget, eps_c=s.eps_c, eps_v=s.eps_v)
        st_new = replace(st_new, v=v)
        K_tot = cand_state.K
        pairs = tot["pairs"]
        same = it > 1 and st_new.K == st.K and bool(np.all(remap[pairs % K_tot] == pairs // K_tot))
        # the same labels give the same parameters: the pass's own costs are then the
        # final ones (checked, not assumed)
        known = same and not shuffle and _same_parameters(cand_state, st_new)
        st = st_new
        if same:
            converged = True
            break
        if max_clusters is not None and st.K > max_clusters:
            aborted = True
            break
        if stop_above is not None:
            over = over + 1 if st.K > stop_above[0] else 0
            if over >= stop_above[1]:
                aborted = True
                break
        if stop_below is not None:  # the cluster counts from the start (one cluster)
            ks = [1, *(t[1] for t in trace)][-stop_below[1] - 1 :]
            if len(ks) > stop_below[1] and all(
                b < stop_below[0] and b <= a for a, b in zip(ks, ks[1:])
            ):
                aborted = True
                break
    if shuffle:
        states = [{"labels": labels[a : a + n]} for a, n in zip(ex.offsets, ex.sizes)]
        remap = None
    return _Loop(states, remap, st, trace, tot, it, converged, aborted, known)


#: Data in one block of at most this many (rows + 1) x (categorical features + 1) run
#: their passes compiled (:func:`_compiled_passes`: the log tables take that many floats).
COMPILED_CELLS = 1 << 22


def _compiles(B: Blocked, settings: Settings) -> bool:
    """Whether :func:`_passes` runs compiled: data the kernels take
    (:func:`_block_compiles`), rows in data order, the fixed budget (or every feature
    kept)."""
    return (
        _block_compiles(B)
        and not settings.shuffle
        and (settings.budget == "fixed" or settings.select_all)
    )


def _block_compiles(B: Blocked) -> bool:
    """Whether the compiled kernels (passes, seeding) take the data: one in-memory
    block of at most :data:`PIECE_ROWS` rows whose log tables fit
    :data:`COMPILED_CELLS`."""
    return (
        B.local
        and len(B.executor.sizes) == 1
        and B.n <= PIECE_ROWS
        and (B.n + 1) * (B.Q + 1) <= COMPILED_CELLS
    )


def _log_tables(d: CraftData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """numpy's logs of every value the level shares of :func:`state_from_stats` and
    :func:`singleton` can take on ``d`` (counts are integers from 0 to ``n``):
    ``log(c + alpha)``; per feature ``log(c + alpha L_q)``; and a singleton's
    ``log((c + alpha) / (o + alpha L))`` for (count, observed) = (0, 0), (0, 1), (1, 1)."""
    c = np.arange(d.n + 1, dtype=np.float64)
    aL = d.alpha * d.L
    logc = np.log(c + d.alpha)
    logn = np.log(c[None, :] + aL[:, None]) if d.Q else np.zeros((0, d.n + 1))
    S = d.level_q.size
    sing = np.empty((3, S))
    for row, (k, o) in enumerate(((0.0, 0.0), (0.0, 1.0), (1.0, 1.0))):
        sing[row] = np.log((np.full(S, k) + d.alpha) / (np.full(S, o) + aL[d.level_q]))
    return logc, logn, sing


_LOOP_INPUTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _block_inputs(d: CraftData) -> tuple:
    """:func:`_loop_inputs` of block ``d``, made on its first compiled use and kept
    while it lives."""
    dat = _LOOP_INPUTS.get(d)
    if dat is None:
        dat = _LOOP_INPUTS[d] = _loop_inputs(d)
    return dat


def _loop_inputs(d: CraftData) -> tuple:
    """A block's arrays as :func:`~sparseclust._craft.loop_jit.run_passes` reads them,
    made once per block (kept while it lives): the codes row-major as int32 (the one
    type the compiled loop takes), the observed mask as floats, the log tables
    (:func:`_log_tables`), the distinct rows of codes (:func:`distinct_rows`: every
    row's distinct row, their codes and ``g0``; empty when not used), and ``X0 * X0``."""
    codes = np.ascontiguousarray(d.codes, dtype=np.int32)
    Mf = d.M.astype(np.float64) if d.M is not None else np.zeros((0, d.P))
    dist = distinct_rows(d)  # categorical terms once per distinct row (the same numbers)
    if dist is None:
        dist = (np.zeros(0, dtype=np.int64), codes[:0], d.g0[:0])
    else:
        _, first, inv = dist
        dist = (inv.astype(np.int64), codes[first], d.g0[first])
    return (codes, d.offsets, d.L, d.g0, d.X0, Mf, d.col_mean, d.col_sd, d.level_q,
            d.log_eta0, *_log_tables(d), *dist, np.multiply(d.X0, d.X0))  # fmt: skip


def _compiled_passes(
    B: Blocked, st: State, threshold: float, settings: Settings, consts: Constants, rng, stops
) -> _Loop:
    """:func:`_passes` on one in-memory block in one compiled call
    (:func:`~sparseclust._craft.loop_jit.run_passes`): the same operations in the same
    order, the same draws from ``rng``, hence the same fit bit for bit. ``stops``:
    ``(max_clusters, stop_above, stop_below)``."""
    max_clusters, stop_above, stop_below = stops
    GROW, run_passes = loop_jit.GROW, loop_jit.run_passes
    d = B.executor.blocks[0]
    masked = d.M is not None
    dat = _block_inputs(d)
    s = settings
    fp = (float(threshold), consts.F_delta, consts.a0, consts.b0, float(s.sigma_floor),
          -1.0 if s.sigma_override is None else float(s.sigma_override))  # fmt: skip
    n_num, n_cat = _fixed_counts(s.m, d.P, d.Q)
    stop_k, stop_n = stop_above if stop_above is not None else (-1, -1)
    below_k, below_n = stop_below if stop_below is not None else (-1, -1)
    ip = np.array([masked, s.select_all, n_num, n_cat, s.max_iter,
                   -1 if max_clusters is None else max_clusters, stop_k, stop_n,
                   below_k, below_n], dtype=np.int64)  # fmt: skip
    trace = np.empty((s.max_iter, 3))
    K = 1 if isinstance(st, _Opening) else st.K
    cap = K if threshold == np.inf else max(2 * K, 64, (max_clusters or 0) + 2)
    buf = _loop_buffers(d, cap)
    cur, nxt, labels, cost, tot_nk, ints = buf.cur, buf.nxt, buf.labels, buf.cost, buf.nk, buf.ints
    if isinstance(st, _Opening):
        fit_jit.open_at(cur, st.row, st.v, dat)
    else:
        for a, b in zip(cur, (st.zeta, st.sigma, st.log_eta, st.counts, st.v)):
            a[:K] = b
    labels.fill(0)
    ints.fill(0)
    ints[1] = K
    # the Bernoulli draws: uniforms taken from rng ahead, in its order (as many as the
    # block's fits have needed so far: a call that runs out returns for more); rng is
    # put back where the draws used leave it
    D = d.P + d.Q
    before = rng.bit_generator.state
    u = _uniforms(buf, rng, before, 0 if s.select_all else max(64 * D, int(buf.draws[0])))
    while run_passes(dat, cur, nxt, labels, cost, tot_nk, trace, ints, u, fp, ip) == GROW:
        if ints[6] > cur[0].shape[0]:  # larger buffers, the clusters so far copied over
            old = cur
            buf = _loop_buffers(d, int(ints[6]))
            cur, nxt, tot_nk = buf.cur, buf.nxt, buf.nk
            for a, b in zip(cur, old):
                a[: ints[1]] = b[: ints[1]]
        if ints[7] + (ints[6] - ints[1]) * D > u.size:
            need = int(ints[7] + (ints[6] - ints[1]) * D)
            buf.draws[0] = max(buf.draws[0], need)
            u = _uniforms(buf, rng, before, max(2 * u.size, need))
    if u.size:
        rng.bit_generator.state = before
        rng.random(int(ints[7]))
    it, K, K_tot = int(ints[0]), int(ints[1]), int(ints[6])
    state = State(*[a[:K].copy() for a in cur])  # the buffers are reused by the next fit
    return _Loop(
        [{"labels": labels, "cost": cost, "counts": None}],
        None,
        state,
        [(a, int(k), c) for a, k, c in trace[:it].tolist()],
        {"nk": tot_nk[:K_tot].copy()},
        it,
        bool(ints[3]),
        bool(ints[4]),
        bool(ints[5]),
    )


def _uniforms(buf: _LoopBuffers, rng: np.random.Generator, before: dict, size: int) -> np.ndarray:
    """``rng.random(size)`` drawn from the generator state ``before`` (``rng`` left
    anywhere: the caller puts it back), or the same numbers kept from the last fit on the
    block that drew from that state (every fit of a calibration starts from its seed's:
    the same draws)."""
    held = buf.held
    if size and held and held[1].size >= size and _same_state(held[0], before):
        return held[1]
    rng.bit_generator.state = before
    u = rng.random(size)
    if size and 8 * size <= LOOP_KEEP_BYTES:
        held[:] = [before, u]
    return u


def _same_state(a: Any, b: Any) -> bool:
    """Two generator states (``bit_generator.state``) equal. States holding arrays (the
    Mersenne Twister's key, ...) are compared element by element."""
    try:
        return bool(a == b)
    except ValueError:  # an array of several elements compared
        pass
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_state(a[key], b[key]) for key in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    return bool(type(a) is type(b) and a == b)


@lru_cache(maxsize=256)
def _fixed_counts(m: float, P: int, Q: int) -> tuple[int, int]:
    """:func:`fixed_count` of the numeric and the categorical features (0 for none)."""
    return (fixed_count(m, P) if P else 0), (fixed_count(m, Q) if Q else 0)


class _LoopBuffers(NamedTuple):
    """The arrays :func:`~sparseclust._craft.loop_jit.run_passes` works in: clusters
    (zeta, sigma, log_eta, counts, v) of this and the next pass, each row's label and
    own cost, cluster sizes, the loop's counters, the most uniforms a fit on the block
    has drawn (the next fits draw as many up front) and the last uniforms drawn with the
    generator state they were drawn from (:func:`_uniforms`)."""

    cur: tuple
    nxt: tuple
    labels: np.ndarray
    cost: np.ndarray
    nk: np.ndarray
    ints: np.ndarray
    draws: np.ndarray
    held: list


_LOOP_BUFFERS = threading.local()
#: Largest set of cluster buffers (:func:`_loop_buffers`) kept between fits; larger
#: ones (hundreds of clusters of many levels) are made per fit.
LOOP_KEEP_BYTES = 1 << 24


def _loop_buffers(d: CraftData, cap: int) -> _LoopBuffers:
    """:class:`_LoopBuffers` of at least ``cap`` clusters for block ``d``, kept by this
    thread while the block lives and reused fit after fit (a calibration makes hundreds
    of fits on small data, where making them took as long as the passes). Contents are
    undefined: the loop reads no cluster row it has not written, and a fit's results
    are copies (nothing returned refers to them, except the labels and costs, which the
    fit's end reads and copies)."""
    store = _LOOP_BUFFERS.__dict__.get("store")
    if store is None:
        store = _LOOP_BUFFERS.store = weakref.WeakKeyDictionary()
    buf = store.get(d)
    if buf is not None and buf.nk.size >= cap:
        return buf
    if buf is not None:
        cap = max(cap, 2 * buf.nk.size)
    S, D = d.level_q.size, d.P + d.Q

    def clusters() -> tuple:
        return tuple(
            np.zeros((cap, w), dtype=np.bool_ if j == 4 else np.float64)
            for j, w in enumerate((d.P, d.P, S, S, D))
        )

    labels = buf.labels if buf is not None else np.zeros(d.n, dtype=np.int64)
    cost = buf.cost if buf is not None else np.empty(d.n)
    ints = buf.ints if buf is not None else np.zeros(8, dtype=np.int64)
    draws = buf.draws if buf is not None else np.zeros(1, dtype=np.int64)
    held = buf.held if buf is not None else []
    new = _LoopBuffers(clusters(), clusters(), labels, cost, np.empty(cap), ints, draws, held)
    if cap * (2 * d.P + 2 * S + D) * 16 <= LOOP_KEEP_BYTES:
        store[d] = new
    return new


def _shuffled_pass(
    B: Blocked,
    labels: np.ndarray,
    st: State,
    threshold: float,
    consts: Constants,
    rng: np.random.Generator,
    settings: Settings,
    max_clusters: int | None,
) -> tuple[np.ndarray, State, dict[str, Any]]:
    """One pass on the rows in a fresh random order: (labels before the update in data
    order, state with opened clusters appended, summed statistics)."""
    order = rng.permutation(B.n)
    Bp = as_blocked(take_rows(B.header, order))
    lab_p = labels[order]
    pstates = [{"labels": lab_p[a : a + n]} for a, n in zip(Bp.executor.offsets, Bp.executor.sizes)]
    so = settings.sigma_override
    pstates, cand_state, tot = _pass(
        Bp, pstates, st, threshold, consts, rng, settings.select_all, so, None, max_clusters
    )
    raw = np.empty(B.n, dtype=np.int64)
    raw[order] = np.concatenate([s["labels"] for s in pstates])
    return raw, cand_state, tot


def _final_fit(
    B: Blocked,
    lam: float | None,
    loop: _Loop,
    settings: Settings,
    consts: Constants,
    with_nll: bool,
    start: int,
) -> Fit:
    """After the last pass: own costs, objective, likelihood, and the fit's record."""
    ex, head = B.executor, B.header
    D = head.P + head.Q
    st = loop.state
    threshold = np.inf if lam is None else lam + D * consts.F0
    fixed_k = lam is None
    args = (st, consts.F_delta, settings.sigma_override, loop.remap, with_nll, loop.known, fixed_k)
    if B.local and len(ex.blocks) == 1:  # one block in memory (the compiled passes): no map
        final = _k_final
        if not loop.known and loop.remap is None and _compiles(B, settings):
            final = _k_final_compiled  # the costs by the loop's kernel (the same numbers)
        state, part = final(ex.blocks[0], 0, loop.states[0], *args)
        states, parts = [state], [part]
    else:
        states, parts = ex.map(_k_final, loop.states, *args)
    if fixed_k:
        lam = fixed_point_lambda(max(p["top"] for p in parts), D * consts.F0)
        threshold = lam + D * consts.F0
    nk = loop.tot["nk"][loop.tot["nk"] > 0]
    nv = st.v.sum(axis=1)
    own = float(sum(p["cost"] for p in parts))
    trace = [
        *loop.trace,
        (own - consts.F_delta * float(nk @ nv), st.K, consts.F_delta * float(nv.sum())),
    ]
    return Fit(
        lam=lam,
        labels=(compact_labels([s["labels"] for s in ex.fetch(states)]) if B.local else None),
        states=None if B.local else states,
        state=st,
        objective=np.array([a + threshold * k + c for a, k, c in trace]),
        n_iter=loop.n_iter,
        converged=loop.converged,
        aborted=loop.aborted,
        consts=consts,
        start=start,
        sizes=nk,
        nll=float(sum(p["nll"] for p in parts)) if with_nll else None,
    )


def fixed_point_lambda(top: float, DF0: float) -> float:
    """The smallest lambda at which no point opens a cluster: a point does when its
    smallest cost exceeds ``lambda + D F0``, so ``top - D F0`` for ``top`` the largest
    smallest cost, moved up by rounding steps until ``lambda + D F0 >= top`` holds in
    floating point too; never below 0 (when every point's smallest cost is below
    ``D F0`` the clustering is a fixed point at every lambda >= 0; a negative lambda
    would only confuse: the paper's lambda, and ``craft(lam=)``, are positive)."""
    lam = top - DF0
    if lam <= 0.0:
        return 0.0
    while lam + DF0 < top:
        lam = float(np.nextafter(lam, np.inf))
    return float(lam)


# ----------------------------------------------------- fits at a fixed number of clusters
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def row_uniforms(key: int, start: int, n: int) -> np.ndarray:
    """Uniforms in (0, 1) of rows ``start .. start+n-1`` for a draw ``key``: SplitMix64
    of ``key + (row + 1) * golden``, so a row's number depends on its position only,
    never on the row blocks."""
    return _splitmix_unit(np.uint64(key) + _row_steps(start, n))


def _row_steps(start: int, n: int) -> np.ndarray:
    """``(row + 1) * golden`` of rows ``start .. start+n-1`` (wrapping, as uint64)."""
    return (np.arange(start, start + n, dtype=np.uint64) + np.uint64(1)) * _GOLDEN


def _splitmix_unit(z: np.ndarray) -> np.ndarray:
    """SplitMix64's mix of each ``z``, as a double in (0, 1)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    return ((z >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0**-53


def _smallest_cost(block, prev, one, F_delta, sigma_override) -> np.ndarray:
    """Each row's cost to the one-cluster state ``one``, or the smaller of it and
    ``prev`` (the smallest cost to the singletons before it)."""
    dmin = np.empty(block.n)
    for a, b, D in _cost_pieces(block, one, F_delta, sigma_override):
        if prev is None:
            dmin[a:b] = D[:, 0]
        else:
            np.minimum(prev[a:b], D[:, 0], out=dmin[a:b])
    return dmin


def _k_seed_costs(block, offset, state, one, F_delta, sigma_override):
    """Seeding: each row's smallest cost to the singletons so far (the block's state)."""
    dmin = _smallest_cost(block, state, one, F_delta, sigma_override)
    return dmin, (float(dmin.min()) if block.n else np.inf)


def _k_seed_draw(block, offset, state, floor, key, taken):
    """Seeding: a row drawn with probability proportional to ``dmin - floor`` (rows
    taken excluded) as the largest ``log(u) / w`` (Efraimidis & Spirakis), u from
    :func:`row_uniforms`; ``(-inf, -1)`` when no row has weight."""
    w = state - floor
    mine = [t - offset for t in taken if offset <= t < offset + block.n]
    w[mine] = 0.0
    ok = np.flatnonzero(w > 0)
    if ok.size == 0:
        return state, (-np.inf, -1)
    score = np.log(row_uniforms(key, offset, block.n)[ok]) / w[ok]
    j = int(np.argmax(score))
    return state, (float(score[j]), offset + int(ok[j]))


def seed_clusters(
    data: Blocked,
    K: int,
    *,
    m: float,
    F_delta: float,
    select_all: bool,
    sigma_override: float | None,
    rng: np.random.Generator,
) -> tuple[State, int]:
    """``K`` singleton clusters seeded k-means++-style under the CRAFT cost.

    The first at a random point; each next at a point drawn with probability
    proportional to its smallest cost to the singletons so far minus the smallest
    such cost over all points (points already taken excluded). Each singleton uses
    ``v ~ Bernoulli(m)^D`` (all features with ``select_all``). Fewer than ``K`` when
    no point is left with a positive weight. Returns (state, first point). On one
    in-memory block the seeding runs compiled (:func:`_compiled_seeds`), the same seeds.
    """
    if _block_compiles(data):
        return _compiled_seeds(data, K, m, F_delta, select_all, sigma_override, rng)
    ex = data.executor
    D = data.P + data.Q
    states = ex.initial_states()
    taken = [int(rng.integers(data.n))]
    st = None
    while True:
        v = np.ones(D, dtype=bool) if select_all else rng.random(D) < m
        one = singleton(fetch_row(data, taken[-1]), 0, v)
        st = one if st is None else stack(st, one)
        if st.K == K:
            break
        states, mins = ex.map(_k_seed_costs, states, one, F_delta, sigma_override)
        key = int(rng.integers(2**63))
        states, best = ex.map(_k_seed_draw, states, min(mins), key, taken)
        top = max(b[0] for b in best)
        if top == -np.inf:
            break
        taken.append(min(i for sc, i in best if sc == top))
    release = getattr(ex, "release", None)
    if release is not None:
        release(states)
    return st, taken[0]


def _compiled_seeds(data: Blocked, K, m, F_delta, select_all, sigma_override, rng):
    """:func:`seed_clusters` on one in-memory block in one compiled call
    (:func:`~sparseclust._craft.seed_jit.seed_rows`): the same draws from ``rng`` in the
    same order (made up front; when the seeding stops early, ``rng`` is put back where
    the numpy code's draws leave it), numpy's logs of the rows' uniforms, the compiled
    passes' costs and singletons: the same seeds bit for bit."""
    d = data.executor.blocks[0]
    dat = _block_inputs(d)
    D, S = d.P + d.Q, d.level_q.size
    before = rng.bit_generator.state
    first = int(rng.integers(d.n))
    V = np.ones((K, D), dtype=bool)
    keys = np.empty(K - 1, dtype=np.uint64)
    for j in range(K):
        if not select_all:
            V[j] = rng.random(D) < m
        if j < K - 1:
            keys[j] = int(rng.integers(2**63))
    logu = np.log(_splitmix_unit(keys[:, None] + _row_steps(0, d.n)))
    cur = (np.zeros((K, d.P)), np.zeros((K, d.P)), np.zeros((K, S)), np.zeros((K, S)),
           np.zeros((K, D), dtype=bool))  # fmt: skip
    so = -1.0 if sigma_override is None else float(sigma_override)
    fp = (np.inf, float(F_delta), 0.0, 0.0, 0.0, so)
    taken = np.empty(K, dtype=np.int64)
    got = int(seed_jit.seed_rows(dat, cur, V, logu, first, fp, d.M is not None, taken))
    if got < K:  # the numpy code stops after the key of the round that found no row
        rng.bit_generator.state = before
        rng.integers(d.n)
        for _ in range(got):
            if not select_all:
                rng.random(D)
            rng.integers(2**63)
    return State(*(a[:got] for a in cur)), first


def seeded_fit(data: CraftData | Blocked, K: int, **kw: Any) -> Fit:
    """A CRAFT fit at a fixed number of clusters ``K``: ``craft_fit(data, None,
    fixed_k=K, **kw)`` (see there)."""
    return craft_fit(data, None, fixed_k=K, **kw)


def _k_global_stats(block, offset, state):
    return state, block_stats(block, np.zeros(block.n, dtype=np.int64), 1)


def _k_max_cost(block, offset, state, st, F_delta, sigma_override):
    top = -np.inf
    for _, _, D in _cost_pieces(block, st, F_delta, sigma_override):
        top = max(top, float(D.max()))
    return state, top


def max_global_cost(
    data: CraftData | Blocked, F_delta: float, sigma_override: float | None = None
) -> float:
    """Largest cost of a point to the one global cluster with every feature selected."""
    B = as_blocked(data)
    ex = B.executor
    _, parts = ex.map(_k_global_stats, ex.initial_states())
    st, _ = state_from_stats(B, sum_stats(parts), np.ones((1, B.P + B.Q), dtype=bool), 0.05)
    _, mx = ex.map(_k_max_cost, ex.initial_states(), st, F_delta, sigma_override)
    return float(max(mx))


def _k_farthest(block, offset, state, st, F_delta, sigma_override, taken):
    """Farthest-first step: each row's smallest cost to the points taken so far."""
    if block.n == 0:
        return state, (-np.inf, -1)
    dmin = _smallest_cost(block, state, st, F_delta, sigma_override)
    if offset <= taken < offset + block.n:
        dmin[taken - offset] = -np.inf
    j = int(np.argmax(dmin))
    return dmin, (float(dmin[j]), offset + j)


def farthest_first(
    data: CraftData | Blocked,
    k: int,
    selection,
    first: int,
    *,
    F_delta: float,
    sigma_override: float | None = None,
) -> float:
    """The cost of the ``k``-th point added by farthest-first traversal from ``first``.

    ``selection(row)`` gives the features a singleton at a point (a one-row block)
    uses. The largest smallest-cost is taken at its earliest row, as ``np.argmax``.
    """
    B = as_blocked(data)
    ex = B.executor
    states = ex.initial_states()
    taken = first
    lam = np.nan
    for _ in range(k):
        row = fetch_row(B, taken)
        st = singleton(row, 0, selection(row))
        states, best = ex.map(_k_farthest, states, st, F_delta, sigma_override, taken)
        top = max(v for v, _ in best)
        taken = next(i for v, i in best if v == top)
        lam = top
    release = getattr(ex, "release", None)
    if release is not None:
        release(states)
    return float(lam)


def release_states(data: CraftData | Blocked, *outs: Fit) -> None:
    """Free finished fits' per-row states held by a remote executor (one call).

    The records are not changed: release a fit once, and only when its labels are no
    longer needed.
    """
    release = getattr(getattr(data, "executor", None), "release", None)
    held = [out.states for out in outs if out.states is not None]
    if release is not None and held:
        release(*held)


def add_nll(data: CraftData | Blocked, out: Fit, **changes: Any) -> Fit:
    """The fit with its negative log-likelihood (:func:`neg_loglik` over the blocks)
    as ``nll``, and the other fields ``changes`` (one copy of the record); a remote
    fit's states are those the kernel left (it consumes the states it reads)."""
    if out.nll is not None:
        return replace(out, **changes) if changes else out
    if out.labels is not None and not isinstance(data, Blocked):
        return replace(out, nll=neg_loglik(data, out.state, out.labels), **changes)
    B = as_blocked(data)
    states = out.states
    if states is None:
        states = [
            {"labels": out.labels[a : a + n]} for a, n in zip(B.executor.offsets, B.executor.sizes)
        ]
    states, parts = B.executor.map(_k_nll, states, out.state)
    held = states if out.states is not None else None
    return replace(out, nll=float(sum(parts)), states=held, **changes)


def compact_labels(parts: list[np.ndarray]) -> np.ndarray:
    """A fit's labels (the blocks' in order) in the smallest signed integer type that
    holds them: every restart keeps its labels until the restarts are compared, 1 byte
    a row instead of 8 below 128 clusters (13 restarts on 2,000,000 rows: 26 MB, not
    208).

    Examples
    --------
    >>> compact_labels([np.array([0, 2]), np.array([1])]).tolist(), compact_labels([np.array([0, 2])]).dtype
    ([0, 2, 1], dtype('int8'))
    """
    labels = np.concatenate(parts)
    top = int(labels.max(initial=0))
    return labels.astype(np.min_scalar_type(-top - 1), copy=False)


def neg_loglik(data: CraftData, st: State, labels: np.ndarray) -> float:
    """Negative log-likelihood of the generative model with the Gaussian normalisers kept.

    Selected numeric features: ``(x - zeta_kd)^2 / (2 sigma_kd^2) + log sigma_kd``;
    unselected ones: the same with the global mean and sd; categorical features:
    ``-log eta_kd(x)`` when selected, ``-log eta_0d(x)`` otherwise (the paper's terms
    I and II); missing cells contribute nothing. Used to compare restarts: the
    asymptotic numeric discrepancy alone equals ``n_k / 2`` per selected feature
    whatever the clustering, so it cannot tell a good partition from a bad one.
    """
    total = 0.0
    P = data.P
    lab = np.asarray(labels, dtype=np.int64)  # the kernels' label type, converted once
    if P:
        sd = np.where(data.col_sd > 0, data.col_sd, 1.0)
        # per cluster (numpy), then each cell's term compiled: the same numbers
        den, log_sig = 2 * st.sigma * st.sigma, np.log(st.sigma)
        uden, ulog = 2 * sd * sd, np.log(sd)
        v = np.ascontiguousarray(st.v[:, :P])
        M = data.M if data.M is not None else np.zeros((0, P), dtype=bool)
        buf = np.empty((min(data.n, 8192), P))
        for s in range(0, data.n, 8192):
            piece = lab[s : s + 8192]
            term = nll_jit.numeric_terms(
                data.X0,
                M,
                piece,
                st.zeta,
                den,
                log_sig,
                v,
                data.col_mean,
                uden,
                ulog,
                s,
                buf[: piece.size],
            )
            total += float(term.sum())
    if data.Q:
        vcat = st.v[:, P:]
        A = (data.log_eta0[None, :] - st.log_eta) * vcat[:, data.level_q]
        table = _level_table(data.offsets, A)
        per = nll_jit.own_level_sums(data.codes.T, data.offsets, table, lab, np.empty(data.n))
        total += float(per.sum() + data.g0.sum())
    return total
