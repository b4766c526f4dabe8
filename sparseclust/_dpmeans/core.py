"""DP-means on arrays and row blocks: the kernels, the pass, the loop, farthest-first.

Everything here works on a float64 design matrix, in memory or as row blocks on an
executor (:class:`DPBlocks`; see :mod:`sparseclust._engine.blocks`): the same
``_dk_*`` kernels run on one in-memory block or on the partitions of a Dask
DataFrame. :func:`dpmeans_core` returns a :class:`DPFit`; the public front
(:mod:`sparseclust._dpmeans.front`) reads the data, chooses lambda and builds the
result.

Examples
--------
>>> X = np.array([[0.0, 0.0], [0.0, 1.0], [10.0, 0.0], [10.0, 1.0]])
>>> fit = dpmeans_core(X, 20.0)
>>> fit.labels.tolist(), fit.centers.tolist(), fit.converged
([0, 0, 1, 1], [[0.0, 0.5], [10.0, 0.5]], True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from .._data.params import as_rng
from .._data.stages import repair_sd
from .._data.table import ColumnTable
from .._engine.blocks import LocalBlocks, call_on_row, call_on_sample
from .._engine.threads import single_blas_thread

__all__ = [
    "BLOCK_ROWS",
    "DPBlocks",
    "DPFit",
    "as_dp_blocks",
    "design_matrix",
    "dp_pass",
    "dpmeans_core",
    "farthest_first_core",
    "max_sq_dev",
    "nearest",
    "sample_design_rows",
    "scaled_design",
    "sq_dist_to",
]

#: Rows per block for distance computations: bounds temporaries at ``BLOCK_ROWS x
#: max(K, p)`` floats whatever n is, and keeps them in cache (measured 2-4x faster
#: than whole-array temporaries at n = 45,000, p = 105 on 2 cores).
BLOCK_ROWS = 4096


@dataclass(frozen=True, eq=False)
class DPFit:
    """One DP-means fit of :func:`dpmeans_core`.

    Attributes
    ----------
    labels : ndarray (n,) int64 or None
        The cluster of each row (rows in block order); ``None`` when the blocks live
        on a cluster's workers (then ``states`` holds them).
    states : list or None
        The blocks' final kernel states on their executor (each a dict whose
        ``"labels"`` are its rows' clusters); ``None`` in memory.
    centers : ndarray (K, p)
        The cluster means.
    objective_path : ndarray
        ``sum ||x - mu||^2 + lam K`` at the start and after every pass.
    n_iter : int
        Passes run.
    converged : bool
        Whether the last pass changed no assignment.
    sizes : ndarray (K,) float64
        Rows per cluster.
    """

    labels: np.ndarray | None
    states: list[Any] | None
    centers: np.ndarray
    objective_path: np.ndarray
    n_iter: int
    converged: bool
    sizes: np.ndarray


# ------------------------------------------------------------------ distances
def sq_dist_to(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Exact squared Euclidean distances (n, K), from differences ``sum((x - c)**2)``."""
    D = np.empty((X.shape[0], C.shape[0]))
    for k in range(C.shape[0]):
        diff = X - C[k]
        D[:, k] = np.einsum("ij,ij->i", diff, diff)
    return D


def nearest(
    X: np.ndarray,
    C: np.ndarray,
    *,
    available_from: np.ndarray | None = None,
    x_norm: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Index of the nearest centre and the EXACT squared distance to it.

    Distances to all centres come from one matrix product per row block (the
    expansion ``|x|^2 - 2 x.c + |c|^2``); every row whose two smallest approximate
    distances lie within the expansion's rounding bound is re-evaluated exactly, and
    the distance returned is always recomputed from differences. So the result is
    the one a point-by-point loop gives (first index among exact ties), which the
    new-cluster test ``d > lambda`` needs: the farthest-first lambda is by
    construction the exact distance of one point.

    ``available_from[k]`` (optional) is the first row that may use centre ``k``
    (centres opened during a pass are unseen by earlier points).
    """
    n, p = X.shape
    K = C.shape[0]
    if x_norm is None:
        x_norm = np.einsum("ij,ij->i", X, X)
    c_norm = np.einsum("ij,ij->i", C, C)
    slack = 8.0 * (p + 2) * np.finfo(float).eps
    idx = np.empty(n, dtype=np.int64)
    for s in range(0, n, BLOCK_ROWS):
        xb = X[s : s + BLOCK_ROWS]
        D = xb @ C.T
        D *= -2.0
        D += x_norm[s : s + BLOCK_ROWS, None]
        D += c_norm[None, :]
        if available_from is not None:
            pos = np.arange(s, s + xb.shape[0])
            D[available_from[None, :] > pos[:, None]] = np.inf
        best = D.argmin(axis=1)
        if K > 1:
            two = np.partition(D, 1, axis=1)[:, :2]
            bound = slack * (x_norm[s : s + BLOCK_ROWS] + c_norm.max())
            with np.errstate(invalid="ignore"):  # inf - inf where no centre is available
                ambiguous = np.flatnonzero(two[:, 1] - two[:, 0] <= 2.0 * bound)
            if ambiguous.size:
                E = sq_dist_to(xb[ambiguous], C)
                if available_from is not None:
                    E[available_from[None, :] > (s + ambiguous)[:, None]] = np.inf
                best[ambiguous] = E.argmin(axis=1)
        idx[s : s + BLOCK_ROWS] = best
    return idx, _row_sq_dist(X, C, idx)


def _row_sq_dist(X: np.ndarray, C: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Exact ``|x_i - C[idx_i]|^2`` for every row, in blocks."""
    out = np.empty(X.shape[0])
    for s in range(0, X.shape[0], BLOCK_ROWS):
        diff = X[s : s + BLOCK_ROWS] - C[idx[s : s + BLOCK_ROWS]]
        out[s : s + BLOCK_ROWS] = np.einsum("ij,ij->i", diff, diff)
    return out


def dp_pass(
    X: np.ndarray, centers: np.ndarray, lam: float, x_norm: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """One sequential DP-means assignment pass, vectorised and exact.

    Points are visited in data order; a point whose smallest squared distance to the
    current centres exceeds ``lam`` opens a cluster centred on itself, which every
    later point sees. Equivalent to the sequential loop: all distances to the old
    centres at once; only the candidates (min > lam) are walked in order, each opener
    removing the later candidates within ``lam`` of it; finally every point takes the
    nearest of the old centres and the new ones opened at or before its position.
    (The pass of :func:`dpmeans_core`, through the same block kernels.)

    Returns ``(labels, new_centers)`` where ``new_centers`` stacks old + opened centres.
    """
    B = as_dp_blocks(X)
    ex = B.executor
    state = [{"labels": np.zeros(B.n, dtype=np.int64), "x_norm": x_norm}]
    states, res = ex.map(_dk_pass, state, centers, lam, None, centers)
    new, openers = None, np.zeros(0, dtype=np.int64)
    if res[0][0]:
        new, openers = _dp_open(B, states, np.array([res[0][0]]), lam)
    states, _ = ex.map(_dk_assign, states, new, openers, centers.shape[0])
    labels = states[0]["labels"]
    return labels, centers if new is None else np.vstack([centers, new])


# ---------------------------------------------------------------- row blocks
class DPBlocks:
    """A DP-means design matrix as row blocks on an executor (see :mod:`sparseclust._engine.blocks`).

    In memory the whole matrix is one block; the Dask backend holds one block per
    partition on the workers. Both run the kernels below.
    """

    def __init__(self, executor: Any, p: int) -> None:
        self.executor = executor
        self.n = executor.n
        self.p = p


def as_dp_blocks(X: np.ndarray | DPBlocks) -> DPBlocks:
    """``X`` as :class:`DPBlocks` (an in-memory array becomes one local block)."""
    if isinstance(X, DPBlocks):
        return X
    return DPBlocks(LocalBlocks([X], [X.shape[0]]), X.shape[1])


def _dk_sum(Xb, off, state):
    return state, Xb.sum(axis=0)


def _dk_row(Xb, off, state, i):
    return state, Xb[i - off].copy()


def _dk_pass(Xb, off, state, centers, lam, remap, prev_centers):
    """Pass, step 1: nearest old centre, rows beyond lambda; and the objective part
    of the previous update (its labels with the centres now in use)."""
    if state is None:
        state = {"labels": np.zeros(Xb.shape[0], dtype=np.int64), "x_norm": None}
    labels = state["labels"] if remap is None else remap[state["labels"]]
    xn = state["x_norm"]
    if xn is None:
        xn = np.einsum("ij,ij->i", Xb, Xb)
    obj = _row_sq_dist(Xb, prev_centers, labels).sum() if Xb.shape[0] else 0.0
    if Xb.shape[0]:
        idx, dmin = nearest(Xb, centers, x_norm=xn)
    else:
        idx, dmin = np.zeros(0, dtype=np.int64), np.zeros(0)
    cand = np.flatnonzero(dmin > lam)
    new_state = {"labels": labels, "x_norm": xn, "idx": idx, "dmin": dmin, "cand": cand}
    return new_state, (int(cand.size), float(obj))


def _dk_candidates(Xb, off, state, new, lam):
    """Pass, step 2 (one block): candidates farther than lambda from every centre
    opened so far in this pass (exact squared distances)."""
    cand = state["cand"]
    if new is not None and cand.size:
        keep = np.ones(cand.size, dtype=bool)
        for c in new:
            diff = Xb[cand] - c
            keep &= np.einsum("ij,ij->i", diff, diff) > lam
        cand = cand[keep]
    return state, (off + cand, Xb[cand])


def _dk_assign(Xb, off, state, new, openers, K_old):
    """Pass, step 3: nearest of the old centres and of the new ones opened at or
    before each row; the block's counts and sums per cluster."""
    idx, dmin, old = state["idx"], state["dmin"], state["labels"]
    K_tot = K_old if new is None else K_old + new.shape[0]
    n = Xb.shape[0]
    if new is None or n == 0:
        labels = idx
    else:
        local = openers - off
        j, dj = nearest(Xb, new, available_from=local, x_norm=state["x_norm"])
        dj[local[j] > np.arange(n)] = np.inf  # rows that see no new centre yet
        better = dj < dmin  # ties keep the earlier (old) cluster
        labels = np.where(better, K_old + j, idx)
        t = np.flatnonzero((local >= 0) & (local < n))
        labels[local[t]] = K_old + t
    counts = np.bincount(labels, minlength=K_tot).astype(np.float64)
    member = sparse.csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(K_tot, n))
    sums = np.asarray(member @ Xb)
    pairs = np.unique(old * K_tot + labels)
    return {"labels": labels, "x_norm": state["x_norm"]}, (counts, sums, pairs)


def _dk_final(Xb, off, state, centers, remap):
    labels = state["labels"] if remap is None else remap[state["labels"]]
    obj = _row_sq_dist(Xb, centers, labels).sum() if Xb.shape[0] else 0.0
    return {"labels": labels, "x_norm": state["x_norm"]}, float(obj)


def _dp_open(B: DPBlocks, states, n_cand, lam):
    """The sequential new-cluster rule over the candidates of all blocks, in order."""
    openers: list[int] = []
    new: np.ndarray | None = None
    for j in np.flatnonzero(n_cand):
        states[j], (gpos, rows) = B.executor.call(int(j), _dk_candidates, states[j], new, lam)
        cand = np.arange(rows.shape[0])
        opened = []
        while cand.size:
            i = cand[0]
            opened.append(i)
            rest = cand[1:]
            diff = rows[rest] - rows[i]
            cand = rest[np.einsum("ij,ij->i", diff, diff) > lam]
        if opened:
            openers.extend(int(g) for g in gpos[opened])
            new = rows[opened] if new is None else np.vstack([new, rows[opened]])
    return new, np.asarray(openers, dtype=np.int64)


# ----------------------------------------------------------------- the loop
def dpmeans_core(
    X: np.ndarray | DPBlocks,
    lam: float,
    *,
    init: str = "mean",
    max_iter: int = 100,
    rng: np.random.Generator | None = None,
) -> DPFit:
    """DP-means on a float64 array: labels, centers, objective path, n_iter, converged.

    ``init="mean"`` starts from one cluster centred at the global mean (Kulis &
    Jordan); ``init="random"`` from one cluster centred at a random data point (the
    CRAFT paper's DP-means(R)). Centres stay fixed during a pass (except opened
    ones), then become the means of their points; empty clusters are dropped.
    Converged when a pass changes no assignment (with ``init="random"`` not at the
    first pass, whose starting centre is not the mean of its cluster).

    ``X`` may also be a :class:`DPBlocks` (row blocks on any executor, e.g. Dask
    partitions): the same kernels, the same fit; ``labels`` is then None and the
    per-block states are returned as ``states``.
    """
    # Small per-pass matrix products: a multi-threaded BLAS is slower here (measured
    # 2x on 2 cores), so each fit runs single-threaded.
    with single_blas_thread():
        return _dpmeans_loop(as_dp_blocks(X), lam, init=init, max_iter=max_iter, rng=rng)


def _start_center(B: DPBlocks, states: list[Any], init: str, rng: Any) -> np.ndarray:
    """The one starting centre (1, p): the global mean, or a random row."""
    n = B.n
    if init == "mean":
        _, sums = B.executor.map(_dk_sum, states)
        return (np.sum(sums, axis=0) / n)[None, :] if len(sums) > 1 else sums[0][None] / n
    return _fetch(B, int(as_rng(rng).integers(n)))[None, :]


def _merge_assign(parts: list[tuple]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The blocks' (counts, sums, old-new label pairs) of step 3 of a pass, added up."""
    counts = np.sum([p[0] for p in parts], axis=0)
    sums = np.sum([p[1] for p in parts], axis=0) if len(parts) > 1 else parts[0][1]
    pairs = np.unique(np.concatenate([p[2] for p in parts]))
    return counts, sums, pairs


def _dpmeans_loop(
    B: DPBlocks, lam: float, *, init: str, max_iter: int, rng: np.random.Generator | None
) -> DPFit:
    """The passes of :func:`dpmeans_core` on row blocks."""
    ex = B.executor
    states = ex.initial_states()
    centers = _start_center(B, states, init, rng)
    path: list[float] = []
    prev, remap = centers, None
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        states, res = ex.map(_dk_pass, states, centers, lam, remap, prev)
        path.append(float(sum(r[1] for r in res)) + lam * prev.shape[0])
        new, openers = None, np.zeros(0, dtype=np.int64)
        n_cand = np.array([r[0] for r in res])
        if n_cand.any():
            new, openers = _dp_open(B, states, n_cand, lam)
        K_old = centers.shape[0]
        states, parts = ex.map(_dk_assign, states, new, openers, K_old)
        counts, sums, pairs = _merge_assign(parts)
        K_tot = counts.size
        keep = np.flatnonzero(counts)
        remap = np.full(K_tot, -1, dtype=np.int64)
        remap[keep] = np.arange(keep.size)
        new_centers = sums[keep] / counts[keep][:, None]
        # With init="random" the starting centre is a data point, not the mean of the
        # starting assignment (everything in cluster 0), so an unchanged first pass is no
        # fixed point yet: the centre moves to the mean, and the next pass may open clusters.
        same = (
            (it > 1 or init == "mean")
            and new_centers.shape[0] == centers.shape[0]
            and bool(np.all(remap[pairs % K_tot] == pairs // K_tot))
        )
        prev = centers = new_centers
        if same:
            converged = True
            break
    states, objs = ex.map(_dk_final, states, centers, remap)
    path.append(float(sum(objs)) + lam * centers.shape[0])
    local = isinstance(ex, LocalBlocks)
    return DPFit(
        labels=np.concatenate([s["labels"] for s in ex.fetch(states)]) if local else None,
        states=None if local else states,
        centers=centers,
        objective_path=np.asarray(path),
        n_iter=it,
        converged=converged,
        sizes=counts[keep],
    )


def _fetch(B: DPBlocks, i: int) -> np.ndarray:
    return call_on_row(B.executor, i, _dk_row)


# ------------------------------------------------------- farthest-first, spread
def _dk_far(Xb, off, state, point, taken):
    if Xb.shape[0] == 0:
        return state, (-np.inf, -1)
    diff = Xb - point
    d = np.einsum("ij,ij->i", diff, diff)
    dmin = d if state is None else np.minimum(state, d)
    j = int(dmin.argmax())
    return dmin, (float(dmin[j]), off + j)


def farthest_first_core(
    X: np.ndarray | DPBlocks, k: int, *, start: str = "mean", rng: np.random.Generator | None = None
) -> float:
    """Farthest-first lambda on an array (see :func:`farthest_first_lambda`)."""
    B = as_dp_blocks(X)
    ex = B.executor
    states = ex.initial_states()
    if start == "mean":
        _, sums = ex.map(_dk_sum, states)
        first = np.sum(sums, axis=0) / B.n if len(sums) > 1 else sums[0] / B.n
    else:
        first = _fetch(B, int(as_rng(rng).integers(B.n)))
    states, best = ex.map(_dk_far, states, first, -1)
    lam = np.nan
    for _ in range(k - 1):
        top = max(v for v, _ in best)
        i = next(g for v, g in best if v == top)
        lam = top
        states, best = ex.map(_dk_far, states, _fetch(B, i), i)
    release = getattr(ex, "release", None)
    if release is not None:
        release(states)
    return float(lam)


def _dk_max_dev(Xb, off, state, mean):
    if Xb.shape[0] == 0:
        return state, 0.0
    diff = Xb - mean
    return state, float(np.einsum("ij,ij->i", diff, diff).max())


def _dk_take(Xb, off, state, rows):
    return state, Xb[rows]


def sample_design_rows(B: DPBlocks, n_rows: int, rng: np.random.Generator) -> np.ndarray:
    """An in-memory random sample of the rows (in data order)."""
    return np.vstack(call_on_sample(B.executor, n_rows, rng, _dk_take))


def max_sq_dev(X: np.ndarray | DPBlocks) -> float:
    """Largest squared distance of a row to the global mean."""
    B = as_dp_blocks(X)
    ex = B.executor
    _, sums = ex.map(_dk_sum, ex.initial_states())
    mean = np.sum(sums, axis=0) / B.n if len(sums) > 1 else sums[0] / B.n
    _, m = ex.map(_dk_max_dev, ex.initial_states(), mean)
    return float(max(m))


# --------------------------------------------------------------------- design
def design_matrix(
    table: ColumnTable, center: np.ndarray | None, scale: np.ndarray | None
) -> tuple[np.ndarray, list[str]]:
    """The design DP-means clusters: the numeric block (standardised with ``center``
    and ``scale`` when given) then a full one-hot block per categorical; and its
    column names."""
    X, names, _ = table.to_numeric(one_hot=True)
    if center is not None:
        # to_numeric may hand back table.numeric itself (numeric-only data): never
        # standardise the table's own array in place.
        X = X.copy()
        p = len(table.numeric_names)
        X[:, :p] = (X[:, :p] - center) / scale
    return X, names


def scaled_design(
    table: ColumnTable, scale: bool
) -> tuple[np.ndarray, list[str], tuple[np.ndarray | None, np.ndarray | None]]:
    """:func:`design_matrix` with the numeric variables standardised (sd with ddof=1;
    a zero sd counts as 1; a tiny one is computed from scaled deviations,
    :func:`~sparseclust._data.stages.repair_sd`) when ``scale``; returns
    ``(X, names, (center, sd))``."""
    center = sd = None
    if scale and table.numeric_names:
        num = table.numeric
        center = num.mean(axis=0)
        sd = num.std(axis=0, ddof=1) if num.shape[0] > 1 else np.ones(num.shape[1])
        sd = repair_sd(num, center, sd)
        sd = np.where(sd > 0, sd, 1.0)
    X, names = design_matrix(table, center, sd)
    return X, names, (center, sd)
