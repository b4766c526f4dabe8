"""Trees of sparse hierarchical clustering with R's conventions: ``hclust`` linkages,
``$merge``, ``$order`` and ``cutree``, and sparcl's tree of the selected features.

scipy builds the tree; the functions here put it in R's order, so that a fit's
``merge``, ``order`` and ``cut(k)`` are those of sparcl's ``HierarchicalSparseCluster``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy.cluster.hierarchy import linkage as scipy_linkage

from .dissimilarity import _upper

__all__ = ["cutree", "feature_linkage", "r_merge", "r_order", "tree_linkage"]


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


def feature_linkage(X: np.ndarray, selected: np.ndarray, method: str) -> np.ndarray | None:
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
