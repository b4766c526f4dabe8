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
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._hartigan_wong import hartigan_wong, kmeans_multi_start, lloyd
from ._weights import between_ss, column_totals, project_weights

__all__ = ["nan_lloyd", "sparse_kmeans_fit", "update_labels"]

TOL = 1e-4


def first_appearance_means(z: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cluster means of ``z`` in order of the labels' first appearance (and that order)."""
    _, first = np.unique(labels, return_index=True)
    order = labels[np.sort(first)]
    rank = np.empty(int(labels.max()) + 1, dtype=np.int64)
    rank[order] = np.arange(order.size)
    relab = rank[labels]
    k = order.size
    counts = np.bincount(relab, minlength=k).astype(np.float64)
    if np.isnan(z).any():
        obs = ~np.isnan(z)
        onehot = np.zeros((labels.size, k))
        onehot[np.arange(labels.size), relab] = 1.0
        c = onehot.T @ obs
        with np.errstate(invalid="ignore", divide="ignore"):
            means = (onehot.T @ np.where(obs, z, 0.0)) / c
        return np.where(c > 0, means, 0.0), relab
    onehot = np.zeros((labels.size, k))
    onehot[np.arange(labels.size), relab] = 1.0
    return (onehot.T @ z) / counts[:, None], relab


def partial_sqdist(z: np.ndarray, centers: np.ndarray) -> np.ndarray:
    """n x K squared distances; with NaN in ``z``, over observed features, rescaled to all."""
    if not np.isnan(z).any():
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


def nan_lloyd(
    z: np.ndarray, centers: np.ndarray, max_iter: int = 100
) -> tuple[np.ndarray, int, bool]:
    """Lloyd iterations with partial distances (NaN-aware). Returns (labels, n_iter, converged).

    An emptied cluster keeps its previous centre (it may win points back).
    """
    centers = np.array(centers, dtype=np.float64)
    k = centers.shape[0]
    obs = ~np.isnan(z)
    z0 = np.where(obs, z, 0.0)
    labels = partial_sqdist(z, centers).argmin(axis=1)
    for it in range(1, max_iter + 1):
        onehot = np.zeros((z.shape[0], k))
        onehot[np.arange(z.shape[0]), labels] = 1.0
        c = onehot.T @ obs
        with np.errstate(invalid="ignore", divide="ignore"):
            new = (onehot.T @ z0) / c
        centers = np.where(c > 0, new, centers)
        new_labels = partial_sqdist(z, centers).argmin(axis=1)
        if np.array_equal(new_labels, labels):
            return labels, it, True
        labels = new_labels
    return labels, max_iter, False


def initial_labels(
    x: np.ndarray,
    k: int,
    *,
    algorithm: str,
    nstart: int,
    centers: np.ndarray | None,
    rng: np.random.Generator,
    notes: list[str],
) -> np.ndarray:
    """The unweighted k-means partition sparse k-means starts from."""
    if np.isnan(x).any():
        if centers is not None:
            lab, _, ok = nan_lloyd(x, centers)
            if not ok:
                notes.append("the initial k-means did not converge")
            return lab
        best, best_wss = None, np.inf
        for _ in range(nstart):
            start = x[rng.choice(x.shape[0], size=k, replace=False)]
            start = np.where(np.isnan(start), np.nanmean(x, axis=0), start)
            lab, _, _ = nan_lloyd(x, start)
            wss = float(between_ss(x, lab, k)[1].sum())
            if wss < best_wss:
                best, best_wss = lab, wss
        return best
    if centers is not None:
        out = _from_centers(x, centers, algorithm, max_iter=10)
        if not out.converged:
            notes.append(f"the initial k-means stopped early (ifault {out.ifault})")
        return out.labels
    labels, _, _, _ = kmeans_multi_start(x, k, n_init=nstart, rng=rng, algorithm=algorithm)
    return np.asarray(labels, dtype=np.int64)


def _from_centers(z: np.ndarray, centers: np.ndarray, algorithm: str, max_iter: int) -> Any:
    if algorithm == "hartigan-wong":
        return hartigan_wong(z, centers, max_iter=max_iter)
    return lloyd(z, centers, max_iter=max_iter)


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
    """The partition step for fixed weights (sparcl's UpdateCs, with O(nKq) distances).

    Labels come back numbered by the first appearance of the incoming clusters (the
    rows of the starting means), as sparcl's.
    """
    keep = np.flatnonzero(w != 0)
    z = x[:, keep] * np.sqrt(w[keep])  # stays 2-D with one non-zero weight
    mus, _ = first_appearance_means(z, labels)
    if mus.shape[0] < k:
        notes.append("a cluster emptied; restarted the partition step")
        return initial_labels(
            z, k, algorithm=algorithm, nstart=10, centers=None, rng=rng, notes=notes
        )
    nearest = partial_sqdist(z, mus).argmin(axis=1)
    if np.unique(nearest).size < k:
        # Some mean is nobody's nearest: sparcl restarts k-means on z (nstart 10).
        notes.append("a mean was no point's nearest; restarted the partition step")
        return initial_labels(
            z, k, algorithm=algorithm, nstart=10, centers=None, rng=rng, notes=notes
        )
    if np.isnan(z).any():
        lab, _, ok = nan_lloyd(z, mus, max_iter=10)
        if not ok:
            notes.append("a partition step stopped at 10 Lloyd iterations")
        return lab
    try:
        out = _from_centers(z, mus, algorithm, max_iter=10)
    except ValueError:  # empty cluster in Hartigan-Wong: restart as sparcl's fallback would
        notes.append("a partition step emptied a cluster; restarted it")
        return initial_labels(
            z, k, algorithm=algorithm, nstart=10, centers=None, rng=rng, notes=notes
        )
    if not out.converged:
        notes.append(f"a partition step stopped early (k-means ifault {out.ifault})")
    return np.asarray(out.labels, dtype=np.int64)


def sparse_kmeans_fit(
    x: np.ndarray,
    k: int,
    wbound: float,
    *,
    init_labels: np.ndarray,
    mode: str = "exact",
    algorithm: str = "hartigan-wong",
    max_iter: int = 6,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """One sparse k-means fit from a starting partition. Returns a dict of arrays.

    Keys: ``labels`` (0-based, numbered by first appearance in data order), ``weights``,
    ``lam`` (threshold), ``bcss``, ``wcss``, ``tss``, ``objective_path`` (``sum w BCSS``
    after every round, sparcl's ``crit``), ``n_iter``, ``converged``, ``notes``.
    """
    p = x.shape[1]
    labels = np.asarray(init_labels, dtype=np.int64)
    w = np.full(p, 1.0 / np.sqrt(p))
    path: list[float] = []
    notes: list[str] = []
    converged = False
    lam = 0.0
    n_iter = 0
    bcss = wcss = tss = np.zeros(p)
    totals = None if np.isnan(x).any() else column_totals(x)
    while n_iter < max_iter:
        n_iter += 1
        w_old = w
        if n_iter > 1:
            labels = update_labels(x, k, w, labels, algorithm=algorithm, rng=rng, notes=notes)
        bcss, wcss, tss = between_ss(x, labels, k, totals=totals)
        w, lam = project_weights(bcss, wbound, mode)
        path.append(float(np.sum(bcss * w)))
        if np.sum(np.abs(w - w_old)) / np.sum(np.abs(w_old)) <= TOL:
            converged = True
            break
    _, first = np.unique(labels, return_index=True)
    order = labels[np.sort(first)]
    rank = np.empty(int(labels.max()) + 1, dtype=np.int64)
    rank[order] = np.arange(order.size)
    return {
        "labels": rank[labels],
        "weights": w,
        "lam": lam,
        "bcss": bcss,
        "wcss": wcss,
        "tss": tss,
        "objective_path": np.asarray(path),
        "n_iter": n_iter,
        "converged": converged,
        "notes": notes,
    }
