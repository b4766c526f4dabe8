"""Sparse k-means on arrays (Witten & Tibshirani 2010): the core behind :func:`sparse_kmeans`.

The criterion is ``max_{C, w} sum_j w_j BCSS_j(C)`` subject to ``||w||_2 <= 1``,
``||w||_1 <= s``, ``w >= 0``, solved by alternating

* the partition step (``update_labels``): k-means on ``z = x[:, w > 0] * sqrt(w)``
  started from the current clusters' means (numbered by first appearance, as
  sparcl), by Hartigan–Wong (R's default, AS 136) or Lloyd; when some mean is no
  point's nearest, a fresh multi-start k-means on ``z`` (sparcl's fallback);
* the weight step: ``w`` = projection of the per-feature BCSS (:mod:`._weights`).

It starts from an unweighted k-means partition, with ``w = 1/sqrt(p)``, and stops when
``sum|w - w_old| / sum|w_old| <= 1e-4`` (sparcl's rule) or after ``max_iter`` rounds;
the last step of a round is always a weight update, so ``w`` is optimal for the
returned partition. The distances are O(nKq): no n x n matrix.

Missing values (NaN) are handled by partial distances: a point's distance to a centre
sums over its observed features, rescaled by ``q / q_observed``; centres and BCSS use
the observed cells (available-case, :func:`~._weights.between_ss`). Hartigan–Wong has no
partial-distance form, so with missing values the partition step runs Lloyd.

Everything runs over row blocks (:mod:`._lloyd`): in memory the data are one block, on
Dask one block per partition, and the labels stay with their block. Hartigan–Wong is a
point-by-point algorithm and needs the data in one block (in memory).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from .._engine.blocks import LocalBlocks
from .hartigan_wong import HWRunner, _as_centers
from .lloyd import (
    View,
    _add,
    _gather,
    _onehot,
    _z,
    between_ss_blocks,
    canonical,
    column_totals_blocks,
    drop_states,
    first_appearance,
    has_nan,
    lloyd_blocks,
    local_labels,
    multi_start_blocks,
    nan_lloyd_blocks,
    nan_multi_start,
    one_block,
    partial_sqdist,
)
from .rules import MAX_ROUNDS
from .weights import project_weights

__all__ = [
    "SparseKMeansFit",
    "partial_sqdist",
    "sparse_kmeans_fit",
    "update_labels",
]

TOL = 1e-4


@dataclass(frozen=True, eq=False)
class SparseKMeansFit:
    """One sparse k-means fit at one bound, as the core returns it (:func:`sparse_kmeans_blocks`).

    Attributes
    ----------
    states : list
        The partition: each row block's label state (labels 0-based, numbered by first
        appearance in data order). In memory one array; on Dask kept by the workers.
    weights : ndarray (p,)
        Feature weights after the last weight step.
    lam : float
        The soft-threshold of the last weight step.
    bcss, wcss, tss : ndarray (p,)
        Per-feature between-, within- and total sums of squares of the partition.
    objective_path : ndarray
        ``sum w BCSS`` after every round (sparcl's ``crit``).
    n_iter : int
        Rounds made.
    converged : bool
        Whether the weights settled (relative L1 change ``<= 1e-4``).
    notes : list of str
        What happened on the way (restarted partition steps, early stops).
    labels : ndarray or None
        All rows' labels, here: set once fetched from ``states`` (in memory), else None.
    """

    states: list[Any]
    weights: np.ndarray
    lam: float
    bcss: np.ndarray
    wcss: np.ndarray
    tss: np.ndarray
    objective_path: np.ndarray
    n_iter: int
    converged: bool
    notes: list[str]
    labels: np.ndarray | None = None

    @property
    def objective(self) -> float:
        """The objective at the end, ``sum w BCSS`` of the last round."""
        return float(self.objective_path[-1])


def _local_z(ex: Any, view: View) -> np.ndarray:
    """The (viewed) data of an in-memory executor, as one array."""
    if not isinstance(ex, LocalBlocks) or len(ex.blocks) != 1:
        raise ValueError(
            "algorithm='hartigan-wong' needs the data in memory (it moves one point at a "
            "time); use algorithm='lloyd' on Dask."
        )
    if view is None:
        return np.ascontiguousarray(ex.blocks[0])
    cols, scale = view  # as ``_z`` but gathered in row order: one copy, not three
    z = np.take(ex.blocks[0], cols, axis=1)
    z *= scale
    return z


def _k_fa_sums(block, offset, state, view, rank, k, nan):
    z = _z(block, view)
    relab = rank[state]
    onehot = _onehot(relab, k)
    if nan:
        obs = ~np.isnan(z)
        return state, (onehot.T @ obs, onehot.T @ np.where(obs, z, 0.0))
    return state, (np.bincount(relab, minlength=k).astype(np.float64), onehot.T @ z)


def first_appearance_means(
    ex: Any, states: list[Any], view: View, nan: bool
) -> tuple[list[Any], np.ndarray]:
    """(states, means of the clusters in order of their first appearance in data order)."""
    states, rank, order = first_appearance(ex, states)
    k = order.size
    states, parts = ex.map(_k_fa_sums, states, view, rank, k, nan)
    c, sums = _add([q[0] for q in parts]), _add([q[1] for q in parts])
    if nan:
        with np.errstate(invalid="ignore", divide="ignore"):
            means = sums / c
        return states, np.where(c > 0, means, 0.0)
    return states, sums / c[:, None]


def _k_nearest_counts(block, offset, state, view, centers, nan):
    near = partial_sqdist(_z(block, view), centers, nan=nan).argmin(axis=1)
    return state, np.bincount(near, minlength=centers.shape[0])


def _from_centers(
    ex: Any, centers: np.ndarray, algorithm: str, view: View, max_iter: int
) -> tuple[list[Any], bool, int]:
    """(label states, converged, ifault) of a k-means started from ``centers``."""
    centers = _as_centers(centers, ex.n, centers.shape[1])
    if algorithm == "hartigan-wong":
        labels, _, _, ifault = HWRunner(_local_z(ex, view), max_iter=max_iter).run(centers)
        return [labels], ifault == 0, ifault
    states, _, _, _, converged = lloyd_blocks(ex, centers, max_iter, view)
    return states, converged, 0 if converged else 2


def initial_blocks(
    ex: Any,
    k: int,
    *,
    algorithm: str,
    nstart: int,
    centers: np.ndarray | None,
    rng: np.random.Generator,
    notes: list[str],
    view: View = None,
    nan: bool | None = None,
) -> list[Any]:
    """The unweighted k-means partition sparse k-means starts from (label states)."""
    if nan is None:
        nan = has_nan(ex, view)
    if nan:
        if centers is not None:
            states, _, ok = nan_lloyd_blocks(ex, centers, view=view)
            if not ok:
                notes.append("the initial k-means did not converge")
            return states
        return nan_multi_start(ex, k, nstart, rng, view)
    if centers is not None:
        states, converged, ifault = _from_centers(ex, centers, algorithm, view, 10)
        if not converged:
            notes.append(f"the initial k-means stopped early (ifault {ifault})")
        return states
    x = _local_z(ex, view) if algorithm == "hartigan-wong" else None
    states, _ = multi_start_blocks(ex, k, nstart, rng, algorithm=algorithm, view=view, x=x)
    return states


def update_blocks(
    ex: Any,
    states: list[Any],
    k: int,
    w: np.ndarray,
    *,
    algorithm: str,
    rng: np.random.Generator,
    notes: list[str],
    nan: bool,
) -> list[Any]:
    """The partition step for fixed weights (sparcl's UpdateCs, with O(nKq) distances).

    Labels come back numbered by the first appearance of the incoming clusters (the
    rows of the starting means), as sparcl's. ``nan``: whether the data have missing
    cells (the weighted columns may not)."""
    keep = np.flatnonzero(w != 0)
    view: View = (keep, np.sqrt(w[keep]))
    if isinstance(ex, LocalBlocks) and len(ex.blocks) == 1:
        # in memory: the weighted data made once (the same numbers as each pass's
        # view would gather), for the means, the nearest counts and the k-means
        ex, view = one_block(_local_z(ex, view)), None
    nan = nan and has_nan(ex, view)
    states, mus = first_appearance_means(ex, states, view, nan)

    def restart(why: str) -> list[Any]:
        # sparcl restarts k-means on z (nstart 10)
        notes.append(f"{why}; restarted the partition step")
        drop_states(ex, states)
        return initial_blocks(
            ex,
            k,
            algorithm=algorithm,
            nstart=10,
            centers=None,
            rng=rng,
            notes=notes,
            view=view,
            nan=nan,
        )

    if mus.shape[0] < k:
        return restart("a cluster emptied")
    if (_add(_gather(ex, _k_nearest_counts, view, mus, nan)) == 0).any():
        return restart("a mean was no point's nearest")
    if nan:
        new, _, ok = nan_lloyd_blocks(ex, mus, max_iter=10, view=view)
        if not ok:
            notes.append("a partition step stopped at 10 Lloyd iterations")
        drop_states(ex, states)
        return new
    try:
        new, converged, ifault = _from_centers(ex, mus, algorithm, view, 10)
    except ValueError:  # empty cluster: restart as sparcl's fallback would
        return restart("a partition step emptied a cluster")
    if not converged:
        notes.append(f"a partition step stopped early (k-means ifault {ifault})")
    drop_states(ex, states)
    return new


def update_labels(
    x: np.ndarray,
    k: int,
    w: np.ndarray,
    labels: np.ndarray,
    *,
    algorithm: str,
    rng: np.random.Generator,
    notes: list[str],
) -> np.ndarray:
    """:func:`update_blocks` on an in-memory matrix: the new labels."""
    ex = one_block(x)
    nan = bool(np.isnan(x).any())
    states = update_blocks(ex, [labels], k, w, algorithm=algorithm, rng=rng, notes=notes, nan=nan)
    return local_labels(ex, states)


def sparse_kmeans_blocks(
    ex: Any,
    states: list[Any],
    k: int,
    wbound: float,
    *,
    p: int,
    mode: str = "exact",
    algorithm: str = "hartigan-wong",
    max_iter: int = MAX_ROUNDS,
    rng: np.random.Generator,
) -> SparseKMeansFit:
    """One sparse k-means fit over blocks from a starting partition (label states)."""
    w = np.full(p, 1.0 / np.sqrt(p))
    path: list[float] = []
    notes: list[str] = []
    converged = False
    lam = 0.0
    n_iter = 0
    bcss = wcss = tss = np.zeros(p)
    nan = has_nan(ex)
    totals = None if nan else column_totals_blocks(ex)
    while n_iter < max_iter:
        n_iter += 1
        w_old = w
        if n_iter > 1:
            states = update_blocks(
                ex, states, k, w, algorithm=algorithm, rng=rng, notes=notes, nan=nan
            )
        states, bcss, wcss, tss = between_ss_blocks(ex, states, k, nan=nan, totals=totals)
        w, lam = project_weights(bcss, wbound, mode)
        path.append(float(np.sum(bcss * w)))
        if np.sum(np.abs(w - w_old)) / np.sum(np.abs(w_old)) <= TOL:
            converged = True
            break
    return SparseKMeansFit(
        states=canonical(ex, states),
        weights=w,
        lam=lam,
        bcss=bcss,
        wcss=wcss,
        tss=tss,
        objective_path=np.asarray(path),
        n_iter=n_iter,
        converged=converged,
        notes=notes,
    )


def sparse_kmeans_fit(
    x: np.ndarray,
    k: int,
    wbound: float,
    *,
    init_labels: np.ndarray,
    mode: str = "exact",
    algorithm: str = "hartigan-wong",
    max_iter: int = MAX_ROUNDS,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """:func:`sparse_kmeans_blocks` on an in-memory matrix, as a dict keyed by the fields
    of :class:`SparseKMeansFit`, with ``labels`` (an array) instead of ``states``."""
    ex = one_block(x)
    out = sparse_kmeans_blocks(
        ex,
        [np.asarray(init_labels, dtype=np.int64)],
        k,
        wbound,
        p=x.shape[1],
        mode=mode,
        algorithm=algorithm,
        max_iter=max_iter,
        rng=rng,
    )
    got = {f.name: getattr(out, f.name) for f in fields(out) if f.name != "states"}
    got["labels"] = local_labels(ex, out.states)
    return got
