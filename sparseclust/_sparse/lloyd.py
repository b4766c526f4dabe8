"""Lloyd's k-means over row blocks: R's Lloyd, the ``nstart`` multi-start, the NaN-aware
Lloyd of sparse k-means, and the per-cluster sums sparse k-means reads.

Every driver here runs over an executor of numeric row blocks (:mod:`._blocks`:
``LocalBlocks`` in memory, ``_dask.FutureBlocks`` on a cluster). A block keeps its
rows' labels as its state; only per-cluster counts, sums and flags travel, and the
driver adds them in block order. In memory the whole matrix is one block, so the
arrays and the arithmetic are those of a plain in-memory implementation, bit for bit.
With several blocks the cluster sums are added block by block (equal up to rounding),
while every decision that is read from exact quantities stays the same: the exact
nearest centre of :func:`lloyd`, the distinct rows, the first appearance of labels.

A *view* ``(cols, scale)`` clusters ``z = x[:, cols] * scale`` (the weighted space of
sparse k-means) one block at a time; ``None`` clusters ``x`` itself.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._data.params import as_rng
from .._engine.blocks import LocalBlocks
from .._engine.threads import single_blas_thread
from .hartigan_wong import (
    HWResult,
    HWRunner,
    RowScreen,
    _as_centers,
    _as_data,
    _check_max_iter,
    _empty_cluster_error,
    _from_deviations,
    _one_cluster,
    _Screen,
    _seq_cluster_sums,
    _seq_sqdist,
    _void_rows,
    _wss,
)
from .hartigan_wong_jit import wss_estimate
from .lloyd_jit import gram_lloyd

__all__ = [
    "kmeans_multi_start",
    "lloyd",
    "multi_start_blocks",
    "nan_lloyd_blocks",
    "one_block",
    "partial_sqdist",
]

_LLOYD_PRE_MAX_ITER = 30  # Lloyd phase of the multi-start before Hartigan-Wong refines
_N_REFINE = 3  # distinct best Lloyd solutions that Hartigan-Wong refines
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)

View = tuple[np.ndarray, np.ndarray] | None


# --------------------------------------------------------------------------- blocks
def one_block(x: np.ndarray) -> LocalBlocks:
    """The in-memory executor: the whole matrix as one block."""
    return LocalBlocks([x], [x.shape[0]])


def _z(block: np.ndarray, view: View) -> np.ndarray:
    if view is None:
        return block
    cols, scale = view
    z = block[:, np.asarray(cols)]  # a gathered copy (never a view of the data): 2-D
    z *= scale  # in place: one copy of the data, not two
    return z


def _add(parts: Sequence[Any]) -> Any:
    """Sum in block order (one block: the block's own value)."""
    return functools.reduce(operator.add, parts)


def _gather(ex: Any, kernel: Any, *args: Any) -> list[Any]:
    """A stateless kernel's results, block by block."""
    return ex.map(kernel, ex.initial_states(), *args)[1]


def _k_has_nan(block, offset, state, view):
    return state, bool(np.isnan(_z(block, view)).any())


def has_nan(ex: Any, view: View = None) -> bool:
    """Whether any cell of the (viewed) data is missing."""
    return any(_gather(ex, _k_has_nan, view))


def _k_colsum(block, offset, state, view, nan):
    z = _z(block, view)
    if nan:
        obs = ~np.isnan(z)
        return state, (obs.sum(axis=0), np.where(obs, z, 0.0).sum(axis=0))
    return state, (z.shape[0], z.sum(axis=0))


def col_means(ex: Any, view: View = None, *, nan: bool = False) -> np.ndarray:
    """Column means (``x.mean(axis=0)``; over observed cells with ``nan``, ``np.nanmean``)."""
    parts = _gather(ex, _k_colsum, view, nan)
    return _add([p[1] for p in parts]) / _add([p[0] for p in parts])


def _k_rows(block, offset, state, view, rows):
    return state, _z(block, view)[rows - offset]


def fetch_rows(ex: Any, rows: np.ndarray, view: View = None) -> np.ndarray:
    """The (viewed) rows at global positions ``rows``, in the order given."""
    rows = np.asarray(rows, dtype=np.int64)
    order = np.argsort(rows, kind="stable")
    srt = rows[order]
    got = []
    for j, (off, size) in enumerate(zip(ex.offsets, ex.sizes)):
        mine = srt[(srt >= off) & (srt < off + size)]
        if mine.size:
            got.append(ex.call(j, _k_rows, None, view, mine)[1])
    out = np.empty((rows.size, got[0].shape[1]))
    out[order] = np.vstack(got)
    return out


def _k_first(block, offset, state):
    _, first = np.unique(state, return_index=True)
    return state, state[np.sort(first)]


def _k_relabel(block, offset, state, rank):
    return rank[state], None


def first_appearance(ex: Any, states: list[Any]) -> tuple[list[Any], np.ndarray, np.ndarray]:
    """(states, rank, order): ``order`` lists the labels by first appearance in data
    order and ``rank[order] = 0, 1, ...``."""
    states, orders = ex.map(_k_first, states)
    seen: dict[int, None] = {}
    for o in orders:
        for v in o.tolist():
            seen.setdefault(v, None)
    order = np.fromiter(seen, dtype=np.int64, count=len(seen))
    rank = np.empty(int(order.max()) + 1, dtype=np.int64)
    rank[order] = np.arange(order.size)
    return states, rank, order


def canonical(ex: Any, states: list[Any]) -> list[Any]:
    """Relabel 0..k-1 by first appearance in data order."""
    states, rank, _ = first_appearance(ex, states)
    return ex.map(_k_relabel, states, rank)[0]


def local_labels(ex: Any, states: list[Any]) -> np.ndarray:
    """The labels of all rows, here (in memory, or fetched from the blocks)."""
    got = ex.fetch(states)
    return got[0] if len(got) == 1 else np.concatenate(got)


# ---------------------------------------------------------------------- distinct rows
def _unique_rows(x: np.ndarray) -> np.ndarray:
    """Indices of the first occurrence of each distinct row, in data order.

    Rows are grouped by (up to) 16 of their columns first; only rows sharing those
    values are compared in full, so continuous data cost one pass over 16 columns."""
    n, p = x.shape
    cols = np.unique(np.linspace(0, p - 1, min(p, 16)).astype(np.int64))
    _, first, inv = np.unique(_void_rows(x[:, cols]), return_index=True, return_inverse=True)
    if first.size == n or cols.size == p:
        return np.sort(first)
    keep = np.zeros(n, dtype=bool)
    keep[first] = True
    order = np.argsort(inv, kind="stable")
    bounds = np.flatnonzero(np.diff(inv[order])) + 1
    for members in np.split(order, bounds):
        if members.size > 1:
            _, f = np.unique(_void_rows(x[members]), return_index=True)
            keep[members[f]] = True
    return np.flatnonzero(keep)


def _row_hash(a: np.ndarray) -> np.ndarray:
    """64-bit FNV-1a hash of each row's bytes (-0.0 as 0.0): equal rows, equal hashes."""
    u = np.ascontiguousarray((a + 0.0).T).view(np.uint64)  # a column per row of u
    h = np.full(u.shape[1], _FNV_OFFSET)
    for col in u:
        h ^= col
        h *= _FNV_PRIME
    return h


def _k_unique(block, offset, state, view, with_hash):
    z = _z(block, view)
    if z.shape[0] == 0:
        return state, (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint64))
    first = _unique_rows(z)
    return state, (first + offset, _row_hash(z[first]) if with_hash else None)


def unique_rows(ex: Any, view: View = None) -> np.ndarray:
    """Global positions of the first occurrence of each distinct row, in data order.

    Each block finds its own distinct rows and hashes them; only rows whose hash
    occurs in several blocks are fetched and compared in full, so the answer is exact
    and costs one hash per row when rows repeat only within blocks."""
    parts = _gather(ex, _k_unique, view, len(ex) > 1)
    if len(parts) == 1:
        return parts[0][0]
    idx = np.concatenate([p[0] for p in parts])
    hashes = np.concatenate([p[1] for p in parts])
    _, inv, cnt = np.unique(hashes, return_inverse=True, return_counts=True)
    shared = np.flatnonzero(cnt[inv] > 1)
    if shared.size == 0:
        return idx
    _, f = np.unique(_void_rows(fetch_rows(ex, idx[shared], view)), return_index=True)
    return np.delete(idx, np.setdiff1d(shared, shared[f]))


# ------------------------------------------------------------------------------ Lloyd
def _exact_nearest(x: np.ndarray, c: np.ndarray, scr: _Screen) -> np.ndarray:
    """Nearest centre of every point (first index on ties), decisions as a sequential
    double-precision sum would make them."""
    n, k = x.shape[0], c.shape[0]
    scr.set_centers(c)
    d, tol = scr.dist(slice(None))
    lab = d.argmin(axis=1)
    if k == 1:
        return lab.astype(np.int64)
    r = np.arange(n)
    dmin = d[r, lab]
    d[r, lab] = np.inf
    for i in np.flatnonzero(d.min(axis=1) - dmin <= 2.0 * tol).tolist():
        dex = _seq_sqdist(x[i], c)
        best, arg = np.inf, 0
        for j, v in enumerate(dex.tolist()):
            if v < best:
                best, arg = v, j
        lab[i] = arg
    return lab.astype(np.int64)


def lloyd(x: Any, centers: Any, *, max_iter: int = 10) -> HWResult:
    """Lloyd's k-means from given centres, as R's ``kmeans(..., algorithm="Lloyd")``.

    Assign every point to its nearest centre (ties to the lower index); stop when no label
    changes, else replace the centres by the cluster means; at most ``max_iter`` passes.
    ``n_iter`` is R's ``$iter`` (``max_iter + 1`` and ``ifault`` 2 when the cap is hit;
    no warning here). An emptied cluster raises ``ValueError`` (R warns and returns a NaN
    centre).

    Examples
    --------
    >>> x = np.array([[0.0], [1.0], [2.0], [10.0], [11.0], [12.0]])
    >>> lloyd(x, np.array([[0.0], [1.0]])).labels
    array([0, 0, 0, 1, 1, 1])
    """
    x = _as_data(x)
    c = _as_centers(centers, *x.shape)
    max_iter = _check_max_iter(max_iter)
    if c.shape[0] == 1:
        return _one_cluster(x)
    ex = one_block(x)
    with single_blas_thread():
        states, c, wss, n_iter, converged = lloyd_blocks(ex, c, max_iter)
    return HWResult(states[0], c, wss, n_iter, converged, 0 if converged else 2)


def _k_ll_setup(block, offset, state, view):
    z = np.ascontiguousarray(_z(block, view))
    scr = _Screen(z) if z.shape[0] else None
    return {"z": z, "scr": scr, "lab": np.full(z.shape[0], -1, dtype=np.int64)}, None


def _k_ll_step(block, offset, state, c):
    z, k = state["z"], c.shape[0]
    new = _exact_nearest(z, c, state["scr"]) if z.shape[0] else state["lab"]
    changed = not np.array_equal(new, state["lab"])
    state["lab"] = new
    return state, (changed, np.bincount(new, minlength=k), _seq_cluster_sums(z, new, k))


def _k_ll_end(block, offset, state, c):
    return state["lab"], _wss(state["z"], state["lab"], c)


def lloyd_blocks(
    ex: Any, c: np.ndarray, max_iter: int, view: View = None
) -> tuple[list[Any], np.ndarray, np.ndarray, int, bool]:
    """:func:`lloyd` over blocks: (label states, centres, per-cluster WSS, n_iter, converged).

    Raises ``ValueError`` when a cluster empties."""
    states, _ = ex.map(_k_ll_setup, ex.initial_states(), view)
    n_iter = max_iter + 1  # R's $iter when the cap is hit
    for it in range(max_iter):
        states, res = ex.map(_k_ll_step, states, c)
        if not any(r[0] for r in res):
            n_iter = it + 1
            break
        nc = _add([r[1] for r in res])
        if (nc == 0).any():
            drop_states(ex, states)
            raise _empty_cluster_error(nc)
        c = _add([r[2] for r in res]) / nc[:, None].astype(np.float64)
    states, wss = ex.map(_k_ll_end, states, c)
    return states, c, _add(wss), n_iter, n_iter <= max_iter


# --------------------------------------------------------------------- NaN-aware Lloyd
def partial_sqdist(z: np.ndarray, centers: np.ndarray, nan: bool | None = None) -> np.ndarray:
    """n x K squared distances; with NaN in ``z``, over observed features, rescaled to all.

    ``nan`` says whether the data (all blocks of it) have missing cells; ``None``
    looks at ``z``."""
    if nan is None:
        nan = bool(np.isnan(z).any())
    if not nan:
        zz = np.einsum("ij,ij->i", z, z)
        cc = np.einsum("ij,ij->i", centers, centers)
        d = zz[:, None] - 2.0 * (z @ centers.T) + cc[None, :]
        return np.maximum(d, 0.0)
    obs = ~np.isnan(z)
    z0 = np.where(obs, z, 0.0)
    d = (
        np.einsum("ij,ij->i", z0, z0)[:, None]
        - 2.0 * (z0 @ centers.T)
        + obs.astype(np.float64) @ (centers * centers).T
    )
    n_obs = obs.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(n_obs > 0, z.shape[1] / n_obs, 0.0)
    return np.maximum(d, 0.0) * scale[:, None]


def _onehot(labels: np.ndarray, k: int) -> np.ndarray:
    onehot = np.zeros((labels.size, k))
    onehot[np.arange(labels.size), labels] = 1.0
    return onehot


def _k_nl_step(block, offset, state, view, centers):
    z = _z(block, view)
    obs = ~np.isnan(z)
    new = partial_sqdist(z, centers, nan=True).argmin(axis=1)
    changed = state is None or not np.array_equal(new, state)
    onehot = _onehot(new, centers.shape[0])
    return new, (changed, onehot.T @ obs, onehot.T @ np.where(obs, z, 0.0))


def nan_lloyd_blocks(
    ex: Any, centers: np.ndarray, max_iter: int = 100, view: View = None
) -> tuple[list[Any], int, bool]:
    """Lloyd iterations with partial distances (NaN-aware): (label states, n_iter, converged).

    An emptied cluster keeps its previous centre (it may win points back)."""
    centers = np.array(centers, dtype=np.float64)
    states, res = ex.map(_k_nl_step, ex.initial_states(), view, centers)
    for it in range(1, max_iter + 1):
        c = _add([r[1] for r in res])
        with np.errstate(invalid="ignore", divide="ignore"):
            new = _add([r[2] for r in res]) / c
        centers = np.where(c > 0, new, centers)
        states, res = ex.map(_k_nl_step, states, view, centers)
        if not any(r[0] for r in res):
            return states, it, True
    return states, max_iter, False


def nan_multi_start(
    ex: Any, k: int, n_init: int, rng: np.random.Generator, view: View = None
) -> list[Any]:
    """Best of ``n_init`` NaN-aware Lloyd runs from ``k`` random rows (their missing
    cells filled with the column means), by total within sum of squares."""
    fill = col_means(ex, view, nan=True)
    best, best_wss = None, np.inf
    for _ in range(n_init):
        start = fetch_rows(ex, rng.choice(ex.n, size=k, replace=False), view)
        start = np.where(np.isnan(start), fill, start)
        states, _, _ = nan_lloyd_blocks(ex, start, view=view)
        states, _, wcss, _ = between_ss_blocks(ex, states, k, nan=True, view=view)
        wss = float(wcss.sum())
        if best is None or wss < best_wss:  # a start is kept even if no wss is finite
            drop_states(ex, best)
            best, best_wss = states, (wss if np.isfinite(wss) else np.inf)
        else:
            drop_states(ex, states)
    return best


def drop_states(ex: Any, states: list[Any] | None) -> None:
    """Free states kept by the blocks (a no-op in memory)."""
    if states is not None and hasattr(ex, "release"):
        ex.release(states)


# ------------------------------------------------------------------------ multi-start
def _starts(
    xs: np.ndarray | None,
    xq: np.ndarray | None,
    uniq: np.ndarray,
    k: int,
    n_init: int,
    init: str,
    rng: Any,
) -> np.ndarray:
    """(n_init, k) row indices of distinct starting centres (k-means++ needs the data here)."""
    m = uniq.size
    if init == "random":
        return np.stack([uniq[rng.choice(m, size=k, replace=False)] for _ in range(n_init)])
    # k-means++ (D^2 sampling) for all starts at once, over the distinct rows
    xu, qu = xs[uniq], xq[uniq]
    chosen = np.empty((n_init, k), dtype=np.int64)
    chosen[:, 0] = rng.integers(m, size=n_init)
    r = np.arange(n_init)
    d2 = None
    for j in range(1, k):
        last = chosen[:, j - 1]
        dj = np.maximum(qu[last][:, None] + qu[None, :] - 2.0 * (xu[last] @ xu.T), 0.0)
        dj[r, last] = 0.0
        d2 = dj if d2 is None else np.minimum(d2, dj)
        d2[r[:, None], chosen[:, :j]] = 0.0
        cum = np.cumsum(d2, axis=1)
        total = cum[:, -1]
        t = rng.random(n_init) * total
        pick = np.minimum((cum <= t[:, None]).sum(axis=1), m - 1)
        for s in np.flatnonzero((total <= 0) | (d2[r, pick] <= 0)).tolist():
            free = np.setdiff1d(np.arange(m), chosen[s, :j])  # degenerate: uniform
            pick[s] = free[rng.integers(free.size)]
        chosen[:, j] = pick
    return uniq[chosen]


def _label_dtype(k: int) -> type:
    return np.int16 if k < 2**15 else np.int64


def _k_ms_setup(block, offset, state, view, mu, S, k, keep):
    z = _z(block, view)
    xs = z - mu
    xq = np.einsum("ij,ij->i", xs, xs)
    st = {
        "lab": np.full((S, z.shape[0]), -1, dtype=_label_dtype(k)),
        "sums": np.zeros((S, k, z.shape[1])),
        "xq": xq,
        "pend": None,
        # the centred block, kept for the iterations when the data are small (else
        # recomputed: no second copy of large or distributed data)
        "xs": xs if keep else None,
    }
    return st, xq.sum()


#: Data of at most this many cells keep their centred copy through Lloyd's iterations.
_KEEP_CENTRED = 2**22


def _centred(block, state, view, mu):
    xs = state["xs"]
    return _z(block, view) - mu if xs is None else xs


def _ms_dist(block, state, view, mu, ca, k):
    xs = _centred(block, state, view, mu)
    g = xs @ ca.T  # (n, A k)
    dist = (np.einsum("ij,ij->i", ca, ca)[None, :] - 2.0 * g).reshape(
        xs.shape[0], ca.shape[0] // k, k
    )
    return xs, dist


def _k_ms_assign(block, offset, state, view, mu, ca, active, k):
    _, dist = _ms_dist(block, state, view, mu, ca, k)
    lab = dist.argmin(axis=2).T  # (A, n)
    changed = (lab != state["lab"][active]).any(axis=1)
    state["pend"] = lab
    cnt = np.stack([np.bincount(row, minlength=k) for row in lab])
    return state, (changed, cnt)


def _k_ms_far(block, offset, state, view, mu, ca, k, col, top):
    """The ``top`` rows farthest from their centre in start ``col`` (stable order)."""
    _, dist = _ms_dist(block, state, view, mu, ca, k)
    n = dist.shape[0]
    lab = state["pend"][col]
    own = dist[:, col, :][np.arange(n), lab] + state["xq"]
    order = np.argsort(-own, kind="stable")[:top]
    return state, (own[order], order + offset, lab[order], n)


def _stacked_onehot(lab: np.ndarray, k: int) -> np.ndarray:
    """``(A k, n)`` indicators of the ``(A, n)`` labels of ``A`` starts, start by start."""
    A, n = lab.shape
    onehot = np.zeros((A * k, n))
    onehot[(lab + (np.arange(A) * k)[:, None]).ravel(), np.tile(np.arange(n), A)] = 1.0
    return onehot


def _transfers(
    lab: np.ndarray, old: np.ndarray, moved: np.ndarray, rows: np.ndarray, k: int
) -> np.ndarray:
    """``(A k, rows)``: +1 where a row of ``rows`` joined a cluster, -1 where it left one
    (``moved``: ``lab != old``), so that ``delta @ x[rows]`` updates the cluster sums."""
    aa, ii = np.nonzero(moved)
    col = np.searchsorted(rows, ii)
    delta = np.zeros((lab.shape[0] * k, rows.size))
    np.add.at(delta, (aa * k + lab[aa, ii], col), 1.0)
    np.add.at(delta, (aa * k + old[aa, ii], col), -1.0)
    return delta


def _k_ms_commit(block, offset, state, view, mu, keep, active, moves, it, k):
    xs = _centred(block, state, view, mu)
    n, p = xs.shape
    lab = state["pend"][keep]
    for a, i, j in moves:
        if offset <= i < offset + n:
            lab[a, i - offset] = j
    old = state["lab"][active]
    state["lab"][active] = lab
    state["pend"] = None
    A = active.size
    moved = lab != old
    rows = np.flatnonzero(moved.any(axis=0))
    sums = state["sums"]
    if it % 10 == 0 or 2 * rows.size > n:
        sums[active] = (_stacked_onehot(lab, k) @ xs).reshape(A, k, p)
    else:
        sums[active] += (_transfers(lab, old, moved, rows, k) @ xs[rows]).reshape(A, k, p)
    return state, sums[active]


def _reseed(ex, states, view, mu, ca, k, col, cnt_a) -> list[tuple[int, int]]:
    """Re-seed the empty clusters of one start, each at the point farthest from its centre
    whose own cluster keeps a member, in the order a sequential pass over all rows takes.

    Blocks return their farthest rows; a row is only taken when no row a block did not
    return could come before it (else the blocks are asked for more)."""
    top = 2 * k + 2
    while True:
        states, res = ex.map(_k_ms_far, states, view, mu, ca, k, col, top)
        own = np.concatenate([r[0] for r in res])
        idx = np.concatenate([r[1] for r in res])
        lab = np.concatenate([r[2] for r in res]).astype(np.int64)
        # rows a block did not return come after its last returned one
        bounds = [(r[0][-1], r[1][-1]) for r in res if r[0].size < r[3]]
        cnt = cnt_a.copy()
        moves, complete = _take_farthest(own, idx, lab, cnt, bounds)
        if complete:
            return states, moves, cnt
        top *= 4


def _take_farthest(
    own: np.ndarray, idx: np.ndarray, lab: np.ndarray, cnt: np.ndarray, bounds: list
) -> tuple[list[tuple[int, int]], bool]:
    """``(moves, complete)``: each empty cluster of ``cnt`` (in order) takes the row
    farthest from its centre (``own``; the first in data order, ``idx``, on ties) whose
    own cluster keeps a member; ``lab``, ``cnt`` and ``own`` are updated in place.
    ``bounds``: ``(own, idx)`` of the last row each block returned, when it did not
    return all; a row that a row not returned could precede is not taken (incomplete)."""
    moves = []
    for j in np.flatnonzero(cnt == 0).tolist():
        for i in np.argsort(-own, kind="stable").tolist():
            if any(own[i] < v or (own[i] == v and idx[i] > g) for v, g in bounds):
                return moves, False
            if cnt[lab[i]] > 1:
                cnt[lab[i]] -= 1
                lab[i] = j
                cnt[j] = 1
                own[i] = 0.0
                moves.append((int(idx[i]), j))
                break
        else:  # no returned row qualified: one not returned may
            if bounds:
                return moves, False
    return moves, True


def _batched_lloyd(
    ex: Any, view: View, mu: np.ndarray, c0: np.ndarray, max_iter: int
) -> tuple[Any, ...]:
    """Lloyd for all starts together: one product per iteration with the stacked
    ``(S k) x p`` centres. Cluster sums come from a one-hot product, then are updated
    with the rows that changed cluster only (recomputed in full every 10 iterations,
    or when more than half a block's rows moved). A cluster that empties is re-seeded
    at the point farthest from its centre (within that start). Starts whose labels
    stop changing leave the batch.

    Returns label states ((S, n_b) per block), centres (S, k, p), total WSS (S,),
    converged (S,), n_iter (S,)."""
    S, k, p = c0.shape
    c = c0.copy()
    keep = ex.n * p <= _KEEP_CENTRED
    states, xq = ex.map(_k_ms_setup, ex.initial_states(), view, mu, S, k, keep)
    counts = np.zeros((S, k), dtype=np.int64)
    converged = np.zeros(S, dtype=bool)
    n_iter = np.full(S, max_iter + 1, dtype=np.int64)  # R's $iter convention
    active = np.arange(S)
    for it in range(max_iter):
        A = active.size
        ca = c[active].reshape(A * k, p)
        states, res = ex.map(_k_ms_assign, states, view, mu, ca, active, k)
        changed = np.logical_or.reduce([r[0] for r in res])
        converged[active[~changed]] = True
        n_iter[active[~changed]] = it + 1
        keep = np.flatnonzero(changed)
        if keep.size == 0:
            break
        cnt = _add([r[1] for r in res])[keep]
        moves = []
        for a in np.flatnonzero((cnt == 0).any(axis=1)).tolist():
            states, found, cnt[a] = _reseed(ex, states, view, mu, ca, k, int(keep[a]), cnt[a])
            moves += [(a, i, j) for i, j in found]
        active = active[keep]
        states, sums = ex.map(_k_ms_commit, states, view, mu, keep, active, moves, it, k)
        counts[active] = cnt
        c[active] = _add(sums) / cnt[:, :, None]
    # every start's centres are the means of its labels: WSS = sum |x|^2 - sum n_j |c_j|^2
    wss = _add(xq) - np.einsum("sk,skp,skp->s", counts, c, c)
    return states, c, wss, converged, n_iter


def _use_gram(ex: Any, p: int, S: int, k: int) -> bool:
    """Whether the batched Lloyd phase runs in the rows' Gram space (:func:`_gram_lloyd`):
    in memory, one block, and cheaper there. Per iteration the data-space product costs
    ``2 n p S k`` flops and the Gram one ``2 n^2 S k``, after ``n^2 p`` once (counted
    over ten iterations); the ``n x n`` Gram matrix is kept below 128 MiB."""
    if not isinstance(ex, LocalBlocks) or len(ex) != 1:
        return False
    n = ex.n
    return n * n <= _GRAM_MAX_CELLS and n * n * (p + 20 * S * k) < 20 * n * p * S * k


#: Largest Gram matrix (cells) of the Gram-space Lloyd phase (128 MiB of float64).
_GRAM_MAX_CELLS = 2**24


def _gram_lloyd(xs: np.ndarray, starts: np.ndarray, max_iter: int) -> tuple[Any, ...]:
    """:func:`_batched_lloyd` in the rows' Gram space, for few rows of many features.

    ``xs`` is the centred (viewed) data and ``starts`` the ``(S, k)`` rows that start
    each run. With ``G = xs xs'`` the products a centre ``c_j`` (the mean of its
    members ``C_j``) takes are ``xs c_j = G 1_{C_j} / |C_j|`` and
    ``|c_j|^2 = 1_{C_j}' G 1_{C_j} / |C_j|^2``: an iteration costs ``2 n^2 k`` flops a
    start instead of ``2 n p k``. The iterations, stopping, re-seeding and tie rules are
    those of :func:`_batched_lloyd` (the same partitions up to the rounding of the
    products), and so is the update of the sums with the rows that changed cluster
    only (in full every 10 iterations or when more than half the rows moved); compiled
    (:func:`~.lloyd_jit.gram_lloyd`), one start at a time. The centres (``S, k, p``)
    are made only for the starts that are refined (:class:`_GramCentres`)."""
    S, k = starts.shape
    n = xs.shape[0]
    with single_blas_thread():
        G = xs @ xs.T
    xq = np.diagonal(G).copy()
    labels = np.empty((S, n), dtype=np.int64)
    counts = np.zeros((S, k), dtype=np.int64)
    work = (np.empty((k, n)), np.empty((k, n)), np.empty(k), np.empty(n), np.empty(n, np.int64))
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    wss, converged, n_iter = gram_lloyd(G, xq, starts, max_iter, labels, counts, work)
    lab_all = labels.astype(_label_dtype(k))
    return [{"lab": lab_all}], _GramCentres(xs, lab_all, counts, G), wss, converged, n_iter


class _GramCentres:
    """The centres of the Gram-space Lloyd phase, start by start (``[s]``: the ``(k,
    p)`` means of its clusters, as one product), made only for the starts refined; and
    the Gram matrix (``gram``), for the refinements' row screen."""

    def __init__(self, xs: np.ndarray, labels: np.ndarray, counts: np.ndarray, gram: np.ndarray):
        self.xs, self.labels, self.counts, self.gram = xs, labels, counts, gram

    def __getitem__(self, s: int) -> np.ndarray:
        k = self.counts.shape[1]
        return (_stacked_onehot(self.labels[s][None], k) @ self.xs) / self.counts[s][:, None]


def _k_ms_pick(block, offset, state, s):
    return state["lab"][s].astype(np.int64), None


def _k_ms_labels(block, offset, state):
    return state, state["lab"]


def _k_means(block, offset, state, view, k):
    z = _z(block, view)
    onehot = np.zeros((k, z.shape[0]))
    onehot[state, np.arange(z.shape[0])] = 1.0
    return state, (onehot @ z, onehot.sum(axis=1))


def means_blocks(
    ex: Any, states: list[Any], k: int, view: View = None
) -> tuple[list[Any], np.ndarray]:
    """(states, cluster means) by one matrix product per block (for results; not
    bitwise sequential)."""
    states, parts = ex.map(_k_means, states, view, k)
    return states, _add([q[0] for q in parts]) / _add([q[1] for q in parts])[:, None]


def _k_wss(block, offset, state, view, centers):
    return state, _wss(_z(block, view), state, centers)


def kmeans_multi_start(
    x: Any,
    k: int,
    *,
    n_init: int,
    rng: Any,
    algorithm: str = "hartigan-wong",
    max_iter: int = 10,
    init: str = "random",
) -> tuple[np.ndarray, np.ndarray, float, dict[str, Any]]:
    """Best of ``n_init`` random starts, as R's ``kmeans(x, centers=k, nstart=n_init)``.

    Each start takes ``k`` distinct rows as centres (``init="random"``: drawn uniformly
    among the distinct rows, as R does; ``init="k-means++"``: D^2 sampling among them).

    The starts are not run one after another. Lloyd's iterations run for all starts
    together (one matrix product per iteration with the stacked ``(n_init k) x p``
    centres, cluster sums by a one-hot product; with few rows of many features in memory
    the same iterations run in the rows' Gram space, see :func:`_gram_lloyd`), until
    each start's labels stop changing
    (at most ``max_iter`` iterations for ``algorithm="lloyd"``, 30 before a Hartigan–Wong
    refinement). A cluster that empties during Lloyd is re-seeded at the point farthest
    from its centre. For ``"lloyd"`` the start with the lowest total within sum of
    squares is returned. For ``"hartigan-wong"``, :func:`hartigan_wong` (``max_iter``
    rounds) refines the best three distinct Lloyd partitions from their Lloyd centres and
    the best refinement is returned: a Hartigan–Wong local optimum, at least as good as
    its Lloyd start. This is deliberate: R's random streams cannot be replayed anyway, and
    Lloyd's phase is far cheaper per start than Hartigan–Wong's.

    Returns
    -------
    labels : (n,) int64
        0..k-1, numbered by first appearance in data order.
    centers : (k, p) float64
        The cluster means, in label order.
    total_wss : float
    info : dict
        ``algorithm``, ``init``, ``n_init``, ``lloyd_wss`` (per start), ``lloyd_converged``
        (per start), ``n_refined``, ``best_start``, ``n_iter``, ``converged``, ``ifault``
        (of the returned solution; 2 or 4 are reported here, never warned).

    Examples
    --------
    >>> g = np.random.default_rng(0)
    >>> x = np.vstack([g.normal(0, 1, (20, 2)), g.normal(8, 1, (20, 2))])
    >>> labels, centers, wss, info = kmeans_multi_start(x, 2, n_init=5, rng=1)
    >>> labels[:3], bool(labels[20:].min() == 1), centers.shape
    (array([0, 0, 0]), True, (2, 2))
    """
    x = _as_data(x)
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"k must be a positive int; got {k!r}")
    k = int(k)
    if isinstance(n_init, bool) or not isinstance(n_init, int | np.integer) or n_init < 1:
        raise ValueError(f"n_init must be a positive int; got {n_init!r}")
    n_init = int(n_init)
    if algorithm not in ("hartigan-wong", "lloyd"):
        raise ValueError(f"algorithm must be 'hartigan-wong' or 'lloyd'; got {algorithm!r}")
    if init not in ("random", "k-means++"):
        raise ValueError(f"init must be 'random' or 'k-means++'; got {init!r}")
    max_iter = _check_max_iter(max_iter)
    gen = as_rng(rng)
    with single_blas_thread():
        if k == 1:
            return _single(x, n_init)
        ex = one_block(x)
        states, info = multi_start_blocks(
            ex, k, n_init, gen, algorithm=algorithm, max_iter=max_iter, init=init, x=x
        )
        return states[0], info.pop("centers"), info.pop("total_wss"), info


def _single(x: np.ndarray, n_init: int) -> tuple[np.ndarray, np.ndarray, float, dict[str, Any]]:
    res = _one_cluster(x)
    info = {
        "algorithm": "hartigan-wong",
        "init": "random",
        "n_init": n_init,
        "lloyd_wss": np.full(n_init, res.tot_withinss),
        "lloyd_converged": np.ones(n_init, dtype=bool),
        "n_refined": 0,
        "best_start": 0,
        "n_iter": 1,
        "converged": True,
        "ifault": 0,
    }
    return res.labels, res.centers, res.tot_withinss, info


def multi_start_blocks(
    ex: Any,
    k: int,
    n_init: int,
    gen: np.random.Generator,
    *,
    algorithm: str = "lloyd",
    max_iter: int = 10,
    init: str = "random",
    view: View = None,
    x: np.ndarray | None = None,
) -> tuple[list[Any], dict[str, Any]]:
    """:func:`kmeans_multi_start` over blocks (``k >= 2``): (canonical label states, info).

    ``info`` also holds ``centers`` and ``total_wss``. Hartigan–Wong refinement and
    k-means++ starts need the (viewed) data here as ``x``."""
    info: dict[str, Any] = {"algorithm": algorithm, "init": init, "n_init": n_init}
    uniq = unique_rows(ex, view)
    if uniq.size < k:
        raise ValueError(f"more cluster centers ({k}) than distinct data points ({uniq.size})")
    if algorithm == "hartigan-wong" and k >= ex.n:
        raise ValueError(f"k must be below n for Hartigan-Wong; got k={k}, n={ex.n}")
    mu = col_means(ex, view)
    if init == "random":
        idx = _starts(None, None, uniq, k, n_init, init, gen)
        c0 = (fetch_rows(ex, idx.ravel(), view) - mu).reshape(n_init, k, -1)
    else:
        xs = x - mu
        idx = _starts(xs, np.einsum("ij,ij->i", xs, xs), uniq, k, n_init, init, gen)
        c0 = xs[idx]
    lloyd_iter = max_iter if algorithm == "lloyd" else max(max_iter, _LLOYD_PRE_MAX_ITER)
    if _use_gram(ex, c0.shape[2], n_init, k):
        xs = _z(ex.blocks[0], view) - mu
        states, cents, lwss, lconv, liter = _gram_lloyd(xs, idx, lloyd_iter)
    else:
        states, cents, lwss, lconv, liter = _batched_lloyd(ex, view, mu, c0, lloyd_iter)
    info.update(lloyd_wss=lwss, lloyd_converged=lconv)
    order = np.argsort(lwss, kind="stable")
    best: tuple[float, int, Any, np.ndarray, int, int] | None = None
    if algorithm == "hartigan-wong":
        states, labs = ex.map(_k_ms_labels, states)
        labs = np.concatenate(labs, axis=1).astype(np.int64)
        best, info["n_refined"] = _refine(x, labs, order, cents, mu, max_iter)
    if best is None:  # "lloyd", or no refinement possible
        s = int(order[0])
        lab, _ = ex.map(_k_ms_pick, states, s)
        lab, c = means_blocks(ex, lab, k, view)
        lab, wss = ex.map(_k_wss, lab, view, c)
        tot = float(_add(wss).sum())
        best = (tot, s, lab, c, int(liter[s]), 0 if lconv[s] else 2)
        info.setdefault("n_refined", 0)
    elif hasattr(ex, "release"):
        ex.release(states)
    tot, s, lab, c, n_iter, ifault = best
    lab, rank, order = first_appearance(ex, lab)
    perm = np.empty(k, dtype=np.int64)
    perm[: order.size] = order
    info.update(best_start=int(s), n_iter=int(n_iter), converged=ifault == 0, ifault=int(ifault))
    info.update(centers=c[perm], total_wss=float(tot))
    return ex.map(_k_relabel, lab, rank)[0], info


def _refine(
    x: np.ndarray, labs: np.ndarray, order: np.ndarray, cents: Any, mu: np.ndarray, max_iter: int
) -> tuple[tuple[float, int, Any, np.ndarray, int, int] | None, int]:
    """Hartigan-Wong from the centres of the best ``_N_REFINE`` distinct Lloyd partitions
    (``labs``, ranked by ``order``; ``cents[s] + mu`` the centres of start ``s``):
    ``((total WSS, start, [labels], centres, n_iter, ifault) of the best run (the first
    with the smallest total within sum of squares) or None, partitions tried)``. After
    the Gram-space phase the runs screen their distances in the rows' space
    (:class:`~.hartigan_wong.RowScreen`; the same decisions)."""
    seen: list[bytes] = []
    best: tuple[float, int, Any, np.ndarray, int, int] | None = None
    refine = HWRunner(x, max_iter=max_iter)  # one set-up of x for the refinements
    gram = getattr(cents, "gram", None)
    screen = None if gram is None else RowScreen.from_gram(x, gram)
    for s in order.tolist():
        key = _canonical(labs[s]).tobytes()
        if key in seen:
            continue
        seen.append(key)
        c0 = cents[s] + mu
        rows = None if screen is None else (screen, screen.centres(labs[s], c0.shape[0]))
        try:
            labels, kept, n_iter, ifault = refine.run(c0, rows)
        except ValueError:  # coincident Lloyd centres or an emptied cluster: skip
            continue
        k = kept.shape[0]
        sums = (np.zeros((k, x.shape[1])), np.zeros(k), np.zeros(k))
        wss_estimate(x, labels, kept, *sums)  # fills the sums
        centers, wss = _from_deviations(kept, *sums)
        tot = float(np.sum(wss))
        if best is None or tot < best[0]:
            best = (tot, s, [labels], centers, n_iter, ifault)
        if len(seen) == _N_REFINE:
            break
    return best, len(seen)


def _canonical(labels: np.ndarray) -> np.ndarray:
    """Relabel 0..k-1 by first appearance in data order."""
    ex = one_block(labels[:, None])
    return canonical(ex, [labels])[0]


# ---------------------------------------------------------------- sums of squares
def _k_tss(block, offset, state, view, grand):
    centred = _z(block, view) - grand
    return state, np.einsum("ij,ij->j", centred, centred)


def column_totals_blocks(ex: Any, view: View = None) -> tuple[np.ndarray, np.ndarray]:
    """Column means and total sums of squares (two-pass) of complete data."""
    grand = col_means(ex, view)
    return grand, _add(_gather(ex, _k_tss, view, grand))


def _k_bss(block, offset, state, view, k, nan):
    z = _z(block, view)
    onehot = _onehot(state, k)
    if not nan:
        return state, (onehot.sum(axis=0), onehot.T @ z)
    obs = ~np.isnan(z)
    x0 = np.where(obs, z, 0.0)
    return state, (onehot.T @ obs, onehot.T @ x0, obs.sum(axis=0), x0.sum(axis=0))


def _k_tss_nan(block, offset, state, view, grand):
    z = _z(block, view)
    obs = ~np.isnan(z)
    centred = np.where(obs, z - grand, 0.0)
    return state, np.einsum("ij,ij->j", centred, centred)


def between_ss_blocks(
    ex: Any,
    states: list[Any],
    k: int,
    *,
    nan: bool,
    totals: tuple[np.ndarray, np.ndarray] | None = None,
    view: View = None,
) -> tuple[list[Any], np.ndarray, np.ndarray, np.ndarray]:
    """(states, bcss, wcss, tss) of the partition in ``states``; see
    :func:`~._weights.between_ss` for the definitions (``nan``: available-case)."""
    states, parts = ex.map(_k_bss, states, view, k, nan)
    if not nan:
        grand, tss = totals if totals is not None else column_totals_blocks(ex, view)
        counts, sums = _add([q[0] for q in parts]), _add([q[1] for q in parts])
        with np.errstate(invalid="ignore", divide="ignore"):
            dev = np.where(counts[:, None] > 0, sums / counts[:, None], 0.0) - grand
        bcss = np.einsum("k,kj,kj->j", counts, dev, dev)
        return states, bcss, tss - bcss, tss
    counts, sums, n_obs, tot = (_add([q[i] for q in parts]) for i in range(4))
    with np.errstate(invalid="ignore", divide="ignore"):
        dev = np.where(counts > 0, sums / counts, 0.0)
        grand = np.where(n_obs > 0, tot / n_obs, 0.0)
        factor = np.where(n_obs > 0, ex.n / n_obs, 0.0)
    dev = np.where(counts > 0, dev - grand, 0.0)
    bcss = np.einsum("kj,kj,kj->j", counts, dev, dev) * factor
    tss = _add(_gather(ex, _k_tss_nan, view, grand)) * factor
    return states, bcss, tss - bcss, tss


def _k_center_sums(block, offset, state, k):
    onehot = _onehot(state, k)
    sizes = onehot.sum(axis=0)
    if not np.isnan(block).any():  # complete: every cell observed, no copy needed
        return state, (
            sizes,
            np.broadcast_to(sizes[:, None], (k, block.shape[1])),
            onehot.T @ block,
        )
    obs = ~np.isnan(block)
    return state, (sizes, onehot.T @ obs, onehot.T @ np.where(obs, block, 0.0))


def cluster_means(ex: Any, states: list[Any], k: int) -> tuple[list[Any], np.ndarray, np.ndarray]:
    """(states, cluster sizes, cluster means over the observed cells: NaN where a
    cluster has no observed value of a column)."""
    states, parts = ex.map(_k_center_sums, states, k)
    sizes, c, sums = (_add([q[i] for q in parts]) for i in range(3))
    with np.errstate(invalid="ignore", divide="ignore"):
        return states, sizes, sums / c
