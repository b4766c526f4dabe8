"""DP-means (Kulis & Jordan, 2012): k-means with a penalty lambda per cluster.

The core works on a float64 array; :func:`dpmeans` is the public front.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import sparse

from .._data.params import as_rng, check_bool, check_choice, check_int, user_stacklevel
from .._data.table import ColumnTable, build_table, transform_like
from .._engine.blocks import LocalBlocks, call_on_row, call_on_sample
from .._engine.dask import route_backend
from .._engine.threads import single_blas_thread
from .._results.base import ClusterResult, labels_series
from .._results.format import call_string, fmt
from .._tuning.penalty import calibrate_lambda, resolve_penalty
from ..exceptions import CalibrationWarning, ConvergenceWarning

__all__ = ["DPMeansResult", "dpmeans", "farthest_first_lambda"]

#: Rows per block for distance computations: bounds temporaries at ``BLOCK_ROWS x
#: max(K, p)`` floats whatever n is, and keeps them in cache (measured 2-4x faster
#: than whole-array temporaries at n = 45,000, p = 105 on 2 cores).
BLOCK_ROWS = 4096


# --------------------------------------------------------------------------- core
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


def dpmeans_core(
    X: np.ndarray | DPBlocks,
    lam: float,
    *,
    init: str = "mean",
    max_iter: int = 100,
    rng: np.random.Generator | None = None,
) -> dict[str, Any]:
    """DP-means on a float64 array. Returns labels, centers, objective path, n_iter, converged.

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


def _dpmeans_loop(
    B: DPBlocks, lam: float, *, init: str, max_iter: int, rng: np.random.Generator | None
) -> dict[str, Any]:
    ex = B.executor
    n = B.n
    states = ex.initial_states()
    if init == "mean":
        _, sums = ex.map(_dk_sum, states)
        centers = (np.sum(sums, axis=0) / n)[None, :] if len(sums) > 1 else sums[0][None] / n
    else:
        centers = _fetch(B, int(as_rng(rng).integers(n)))[None, :]
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
        counts = np.sum([p[0] for p in parts], axis=0)
        sums = np.sum([p[1] for p in parts], axis=0) if len(parts) > 1 else parts[0][1]
        pairs = np.unique(np.concatenate([p[2] for p in parts]))
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
    return {
        "labels": np.concatenate([s["labels"] for s in ex.fetch(states)]) if local else None,
        "states": None if local else states,
        "centers": centers,
        "objective_path": np.asarray(path),
        "n_iter": it,
        "converged": converged,
        "sizes": counts[keep],
    }


def _fetch(B: DPBlocks, i: int) -> np.ndarray:
    return call_on_row(B.executor, i, _dk_row)


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


def _sample_rows(B: DPBlocks, n_rows: int, rng: np.random.Generator) -> np.ndarray:
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


# ------------------------------------------------------------------------ result
@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class DPMeansResult(ClusterResult):
    """Result of :func:`dpmeans`.

    Attributes
    ----------
    labels : Series (Int64)
        0-based cluster of each row, on the input index (``<NA>`` for dropped rows).
    centers : DataFrame
        Cluster means (clusters x features) in the space clustered on: the numeric
        variables (standardised when ``scale=True``) then one column per level of
        each categorical variable (``"var[level]"``).
    lam : float
        The penalty used.
    lam_method : str
        ``"given"``, ``"calibrated"`` (from ``k=``) or ``"farthest_first"``.
    k : int or None
        The number of clusters asked for.
    objective : float
        Final value of sum ||x - mu||^2 + lam K.
    objective_path : ndarray
        Objective at the start and after every pass (non-increasing).
    calibration : DataFrame or None
        Every (lam, n_clusters) tried when lambda was calibrated to ``k``.
    init, scale : str, bool
        Settings used.
    """

    centers: pd.DataFrame
    lam: float
    lam_method: str
    k: int | None
    objective: float
    objective_path: np.ndarray
    calibration: pd.DataFrame | None
    init: str
    scale: bool
    center_: np.ndarray | None = None  # scaling used (mean, sd) for predict
    scale_: np.ndarray | None = None

    method_name: ClassVar[str] = "DP-means"
    plot_hint: ClassVar[str] = ".plot() for a 2-D projection, .plot_objective() for the trace"

    def _headline(self) -> str:
        return (
            f"DP-means (lambda={fmt(self.lam)}, {self.lam_method}) with {self.n_clusters} clusters"
        )

    def _detail_lines(self) -> list[str]:
        # the total within SS is the objective less the penalty (no data needed)
        within = self.objective - self.lam * len(self.centers)
        lines = [f"Objective: {fmt(self.objective, 6)} (within SS {fmt(within, 6)} + lambda x K)"]
        if self.k is not None and self.k != self.n_clusters:
            lines.append(f"Asked for k={self.k}; got {self.n_clusters} clusters.")
        return lines

    @cached_property
    def within_ss(self) -> pd.Series:
        """Within-cluster sum of squared distances to the centre, per cluster."""
        X = self._matrix()
        lab = self.labels.dropna().to_numpy(dtype=np.int64)
        diff = X - self.centers.to_numpy()[lab]
        wss = np.bincount(
            lab, weights=np.einsum("ij,ij->i", diff, diff), minlength=len(self.centers)
        )
        return pd.Series(wss, index=pd.Index(range(len(wss)), name="cluster"), name="within_ss")

    def _matrix(self) -> np.ndarray:
        if self.table is None:
            raise ValueError("this needs the data: refit with keep_data=True.")
        return _design(self.table, self.center_, self.scale_)[0]

    def _summary_tables(self) -> dict[str, pd.DataFrame]:
        clusters = pd.DataFrame({"size": self.sizes})
        if self.table is not None:
            clusters["within_ss"] = self.within_ss
            clusters["mean_sq_dist"] = self.within_ss / self.sizes
        params = pd.DataFrame(
            {
                "value": [
                    fmt(self.lam, 6),
                    self.lam_method,
                    self.k,
                    self.init,
                    self.scale,
                    fmt(self.objective, 6),
                    self.n_iter,
                    self.converged,
                ]
            },
            index=[
                "lambda",
                "lambda set by",
                "k asked",
                "init",
                "scale",
                "objective",
                "iterations",
                "converged",
            ],
        )
        return {"clusters": clusters, "parameters": params, "centers": self.centers}

    def _notes(self) -> list[str]:
        notes = super()._notes()
        if self.table is not None and self.table.categorical_names:
            notes.append("Categorical variables enter as full one-hot indicator columns.")
        if self.scale:
            notes.append("Numeric variables were standardised (mean 0, sd 1) before clustering.")
        return notes

    def predict(self, newdata: Any, *, missing: str = "raise") -> pd.Series:
        """Assign rows of ``newdata`` to the nearest fitted centre (no new clusters).

        ``newdata`` must have the fitted variables (same names, kinds and levels);
        with ``missing="drop"`` rows with missing values get ``<NA>``.
        """
        check_choice("missing", missing, ["raise", "drop"])
        t = transform_like(self.variables, newdata, missing=missing)
        X = _design(t, self.center_, self.scale_)[0]
        idx, _ = nearest(X, self.centers.to_numpy())
        return labels_series(t, idx)

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """2-D projection (first two principal components) of the data coloured by cluster."""
        from .. import plotting

        return plotting.plot_clusters(self, ax=ax, **kwargs)

    def plot_objective(self, ax: Any = None, **kwargs: Any) -> Any:
        """The objective after each pass."""
        from .. import plotting

        return plotting.plot_objective(self, ax=ax, **kwargs)


def _design(table: ColumnTable, center: np.ndarray | None, scale: np.ndarray | None):
    X, names, _ = table.to_numeric(one_hot=True)
    if center is not None:
        # to_numeric may hand back table.numeric itself (numeric-only data): never
        # standardise the table's own array in place.
        X = X.copy()
        p = len(table.numeric_names)
        X[:, :p] = (X[:, :p] - center) / scale
    return X, names


# ------------------------------------------------------------------------ public
def farthest_first_lambda(
    x: Any = None,
    /,
    *,
    k: int,
    data: Any = None,
    start: str = "mean",
    scale: bool = False,
    categorical: Any = None,
    numeric: Any = None,
    missing: str = "raise",
    rng: Any = None,
) -> float:
    """The farthest-first heuristic for the DP-means penalty (CRAFT paper, section 4).

    ``T`` starts with the global mean (``start="mean"``, or a random data point with
    ``start="random"``); points are added one at a time, each the point farthest (in
    squared Euclidean distance) from its nearest member of ``T``, until ``T`` has
    ``k`` members counting the start; lambda is the squared distance of the last
    point added. Raw features unless ``scale=True``; categoricals one-hot.

    This is the reading of the heuristic that reproduces the CRAFT paper's DP-means
    purities (0.61 Spam, 0.66 Wine, 0.52 Splice, 0.53 Monk-3, 0.61 Bank).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [10.0, 0.0], [10.0, 1.0]])
    >>> farthest_first_lambda(X, k=2)
    25.25
    """
    k = check_int("k", k, min=2)
    check_choice("start", start, ["mean", "random"])
    table = build_table(
        x,
        data=data,
        categorical=categorical,
        numeric=numeric,
        missing=missing,
        allow_constant=True,
        min_rows=k,
    )
    X, _, _ = _prepare(table, check_bool("scale", scale))
    return farthest_first_core(X, k, start=start, rng=as_rng(rng))


def _prepare(table: ColumnTable, scale: bool):
    center = sd = None
    if scale and table.numeric_names:
        num = table.numeric
        center = num.mean(axis=0)
        sd = num.std(axis=0, ddof=1) if num.shape[0] > 1 else np.ones(num.shape[1])
        sd = np.where(sd > 0, sd, 1.0)
    X, names = _design(table, center, sd)
    return X, names, (center, sd)


def dpmeans(
    x: Any = None,
    /,
    *,
    data: Any = None,
    lam: float | str | None = None,
    k: int | None = None,
    init: str = "mean",
    scale: bool = False,
    max_iter: int = 100,
    categorical: Any = None,
    numeric: Any = None,
    missing: str = "raise",
    keep_data: bool = True,
    backend: str = "auto",
    calibrate: str = "sample",
    sample_rows: int = 50_000,
    rng: Any = None,
) -> DPMeansResult:
    """DP-means clustering (Kulis & Jordan 2012) of a DataFrame, array or formula.

    Parameters
    ----------
    x : DataFrame, 2-D array or formula string
        The data, or a formula such as ``"~ . - class"`` with ``data=``.
        Types are detected automatically (see :mod:`sparseclust._data.dtypes`):
        categorical variables enter as full one-hot indicators.
    data : DataFrame, optional
        The data for a formula.
    lam : float, "farthest_first" or None
        The penalty for opening a cluster (in squared-distance units). Give a
        number, or ``"farthest_first"`` with ``k`` for the CRAFT paper's heuristic
        (:func:`farthest_first_lambda`, started at the global mean for
        ``init="mean"`` and at a random point for ``init="random"``).
    k : int, optional
        Alone: lambda is calibrated by bisection so that the converged clustering
        has exactly ``k`` clusters (a ``CalibrationWarning`` if impossible).
    init : {"mean", "random"}
        Start from one cluster at the global mean (Kulis & Jordan) or at a random
        data point (the paper's DP-means(R)).
    scale : bool
        Standardise numeric variables (sd with ddof=1) first. Default False: the
        method and the paper's baselines use raw features.
    max_iter : int
        Cap on passes; hitting it issues a ``ConvergenceWarning``.
    categorical, numeric : list of str, optional
        Override the detected kind of these columns.
    missing : {"raise", "drop"}
        Rows with missing values are an error (default) or dropped (labels ``<NA>``).
    keep_data : bool
        Keep the typed data on the result (for summaries, plots and ``within_ss``).
        Always False on the Dask backend.
    backend : {"auto", "numpy", "dask"}
        ``"auto"``: Dask for a ``dask.dataframe.DataFrame`` (labels come back as a
        lazy Dask Series on its index; everything else concrete), else in memory.
        The same kernels run over the partitions; with a given lambda the fit equals
        the in-memory one. Install ``sparseclust[dask]``.
    calibrate : {"sample", "full"}
        Dask backend with ``k=`` alone: lambda calibrated on an in-memory random
        sample of ``sample_rows`` rows, then the fit on all rows (re-calibrated
        briefly on all rows, at most 8 fits, if it lands on another number of
        clusters); ``"full"``: on all rows, the in-memory result exactly.
    sample_rows : int
        Rows of that sample.
    rng : None, int or Generator
        Seed for ``init="random"`` and the random start of the heuristic.

    Returns
    -------
    DPMeansResult

    Notes
    -----
    Each pass visits the points in data order; a point whose squared distance to
    every current centre exceeds lambda opens a cluster at itself, seen by the
    points after it. Then centres become cluster means and empty clusters are
    dropped. The objective sum ||x - mu||^2 + lambda K never increases. Converged
    when a pass changes no assignment. The pass is vectorised exactly (see
    ``dp_pass``): only points that would open a cluster are walked in order.

    Examples
    --------
    >>> from sparseclust import dpmeans
    >>> from sparseclust.datasets import load_wine
    >>> wine = load_wine()
    >>> fit = dpmeans("~ . - class", data=wine, k=3)
    >>> fit.n_clusters
    3
    >>> fit.labels.value_counts().sort_index().tolist()
    [...]
    """
    call = call_string(dpmeans, locals())
    check_choice("init", init, ["mean", "random"])
    scale = check_bool("scale", scale)
    keep_data = check_bool("keep_data", keep_data)
    max_iter = check_int("max_iter", max_iter, min=1)
    generator = as_rng(rng)
    check_choice("backend", backend, ["auto", "numpy", "dask"])
    check_choice("calibrate", calibrate, ["sample", "full"])
    sample_rows = check_int("sample_rows", sample_rows, min=2)
    x, data, lazy = route_backend(x, data, backend)
    dask_prep = None
    if lazy:
        from .dask import prepare_dask_dp

        check_choice("missing", missing, ["raise", "drop"])
        dask_prep = prepare_dask_dp(
            x, data, categorical=categorical, numeric=numeric, missing=missing, scale=scale
        )
        names = dask_prep.names
        X = DPBlocks(dask_prep.executor, len(names))
        center, sd = dask_prep.center, dask_prep.scale
        table, spec, n_obs, keep_data = None, dask_prep.spec, X.n, False
    else:
        table = build_table(
            x,
            data=data,
            categorical=categorical,
            numeric=numeric,
            missing=missing,
            allow_constant=True,
        )
        X, names, (center, sd) = _prepare(table, scale)
        spec, n_obs = table.spec, table.n_obs
    pen = resolve_penalty(lam, k, n_obs=n_obs, func="dpmeans")
    seed = int(generator.integers(2**63 - 1))
    made: list[dict] = []

    def fit(lam_value: float, on: Any = X) -> dict:
        made.append(
            dpmeans_core(
                on, lam_value, init=init, max_iter=max_iter, rng=np.random.default_rng(seed)
            )
        )
        return made[-1]

    calibration = None
    if pen.method == "given":
        lam_value, method = pen.lam, "given"
        out = fit(lam_value)
    elif pen.method == "farthest_first":
        lam_value = farthest_first_core(X, pen.k, start=init, rng=np.random.default_rng(seed))
        method = "farthest_first"
        if not lam_value > 0:
            raise ValueError(
                "the farthest-first heuristic gave lambda=0 (fewer than k distinct points); "
                "use a smaller k or lam=<number>."
            )
        out = fit(lam_value)
    elif lazy and calibrate == "sample":
        sample = _sample_rows(X, sample_rows, np.random.default_rng(seed))
        hi = 4.0 * max_sq_dev(sample) + 1e-12
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CalibrationWarning)
            _, lam_value, _ = calibrate_lambda(
                lambda v: fit(v, sample), lambda r: r["centers"].shape[0], pen.k, hi=hi
            )
        out = fit(lam_value)
        if out["centers"].shape[0] != pen.k:
            out, lam_value, calibration = calibrate_lambda(
                fit, lambda r: r["centers"].shape[0], pen.k, hi=2.0 * lam_value, max_fits=8
            )
        method = "calibrated"
    else:
        hi = 4.0 * max_sq_dev(X) + 1e-12
        out, lam_value, calibration = calibrate_lambda(
            fit, lambda r: r["centers"].shape[0], pen.k, hi=hi
        )
        method = "calibrated"
    release = getattr(getattr(X, "executor", None), "release", None)
    for other in made:  # per-row states of fits not kept (on a cluster's workers)
        if other is not out and other.get("states") is not None and release is not None:
            release(other["states"])
    if not out["converged"]:
        warnings.warn(
            f"DP-means did not converge in max_iter={max_iter} passes; raise max_iter.",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    centers = pd.DataFrame(
        out["centers"],
        columns=names,
        index=pd.Index(range(out["centers"].shape[0]), name="cluster"),
    )
    lazy_counts = None
    if lazy:
        from .._engine.dask import labels_dask

        labels = labels_dask(dask_prep, out["states"], out.get("labels"))
        sizes = pd.Series(out["sizes"].astype(np.int64), index=centers.index, name="size")
        lazy_counts = (sizes, dask_prep.n_dropped)
    else:
        labels = labels_series(table, out["labels"])
    return DPMeansResult(
        labels=labels,
        lazy_counts=lazy_counts,
        n_iter=out["n_iter"],
        converged=out["converged"],
        call=call,
        params={
            "lam": lam_value,
            "k": pen.k,
            "init": init,
            "scale": scale,
            "max_iter": max_iter,
            "seed": seed,
        },
        variables=spec,
        table=table if keep_data else None,
        centers=centers,
        lam=float(lam_value),
        lam_method=method,
        k=pen.k,
        objective=float(out["objective_path"][-1]),
        objective_path=out["objective_path"],
        calibration=calibration,
        init=init,
        scale=scale,
        center_=center,
        scale_=sd,
    )
