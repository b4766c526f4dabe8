"""Sparse hierarchical clustering (Witten & Tibshirani 2010, section 4): the front.

:func:`sparse_hclust` and :func:`hclust_sparse_permute` (sparcl's
``HierarchicalSparseCluster`` and ``HierarchicalSparseCluster.permute``) and their
result. Each reads the table, prepares the matrix, builds the operator for the pair x
feature matrix ``D`` and runs the alternation on it (both in
:mod:`sparseclust._sparse.dissimilarity`, which never forms ``D``), then builds the
tree with R's conventions (:mod:`sparseclust._sparse.tree`).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy.spatial.distance import squareform

from .._data.params import Choice, Int, as_rng, check_int, rules, user_stacklevel
from .._data.screen import screens
from .._data.stages import warn_spread
from .._data.table import ColumnTable, read_numeric
from .._engine.parallel import progress_bar, run_shared
from .._results.base import ClusterResult, labels_series
from .._results.format import call_string, fmt
from .._results.summary import Summary
from ..exceptions import ConvergenceWarning
from .dissimilarity import (
    TOL,
    GramSquared,
    MaterialisedD,
    PairStream,
    SparclSquared,
    UWFit,
    _upper,
    first_step,
    get_uw,
    make_operator,
    prepare_matrix,
)
from .permute import PermuteResult, make_permute_result, warn_grid_edge
from .rules import (
    DATA_RULES,
    DISSIMILARITY,
    FLAG,
    MAX_ROUNDS,
    PERMUTE_RULES,
    SEED,
    default_wbound,
)
from .tree import cutree, feature_linkage, r_merge, r_order, tree_linkage

__all__ = [
    "SparseHClustResult",
    "hclust_sparse_permute",
    "sparse_hclust",
    "sparse_hclust_permute",
]

METHODS = ("average", "complete", "single", "centroid")
DISSIMILARITIES = ("squared", "absolute")
NULLS = ("observations", "dissimilarities")

#: Largest pair x feature matrix ``null="dissimilarities"`` may hold (it keeps the
#: matrix and its permuted copy: twice this).
D_BUDGET_BYTES = 1024 * 2**20

#: The rules both fronts declare (``k <= n`` and ``wbound`` are checked on the data, in
#: the body: the messages name the data's size and the default bound).
_FIT_RULES = {
    **DATA_RULES,
    "method": Choice(METHODS),
    "dissimilarity": DISSIMILARITY,
    "k": Int(min=1, none=True),
    "standardize_arrays": FLAG,
    "niter": Int(min=1),
    "block_size": Int(min=1, none=True),
}


# ------------------------------------------------------------------ parameter helpers
def _check_wbound(wbound: Any, p: int) -> float:
    if wbound is None:
        return default_wbound(p)
    if isinstance(wbound, bool | np.bool_) or not isinstance(wbound, int | float | np.number):
        raise TypeError(
            f"wbound must be a number > 1; got wbound={wbound!r} of type "
            f"{type(wbound).__name__}. For several bounds use hclust_sparse_permute(wbounds=...)."
        )
    s = float(wbound)
    if not np.isfinite(s) or s <= 1:
        raise ValueError(
            f"wbound must be a finite number > 1 (a bound <= 1 leaves at most one non-zero "
            f"weight; sparcl: 'Cannot have wbound <= 1'); got wbound={s:g}. Use e.g. "
            f"wbound=1.5, or leave the default (here {default_wbound(p):.4g})."
        )
    return s


def _check_wbounds(wbounds: Any, p: int) -> np.ndarray:
    if wbounds is None:
        hi = 0.7 * math.sqrt(p)
        if hi <= 1.1:  # p <= 2: sparcl's grid would end below its start
            hi = 1.5
        return np.linspace(1.1, hi, 10)
    arr = np.atleast_1d(np.asarray(wbounds, dtype=np.float64))
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(
            f"wbounds must be a sequence of at least 2 bounds to compare; got "
            f"wbounds={np.asarray(wbounds).tolist()}. Use sparse_hclust(..., wbound=<s>) for "
            f"one bound, or e.g. wbounds=np.linspace(1.1, 0.7 * np.sqrt(p), 10)."
        )
    if not np.isfinite(arr).all() or (arr <= 1).any():
        raise ValueError(
            f"wbounds must all be finite and > 1 (a bound <= 1 leaves at most one non-zero "
            f"weight; sparcl: 'Cannot have wbounds <= 1'); got wbounds={arr.tolist()}. Drop "
            f"the bounds <= 1."
        )
    return arr


# ------------------------------------------------------------------ result
@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class SparseHClustResult(ClusterResult):
    """Result of :func:`sparse_hclust` (sparcl's ``HierarchicalSparseCluster``).

    Attributes
    ----------
    labels : Series (Int64)
        ``cut(k)`` when ``k`` was given; otherwise 0 for every observation (the
        uncut tree is one cluster). ``<NA>`` on rows dropped for missing values.
    weights : Series
        Feature weights (``>= 0``, unit L2 norm, L1 norm ``<= wbound`` in exact
        mode), indexed by column name.
    u : ndarray
        The dissimilarity the tree is built from, condensed (pairs ``(0,1), (0,2),
        ..., (1,2), ...``: R's ``dist`` and scipy's order), divided by ``sqrt(2)`` as
        sparcl's ``$u`` (so ``u_matrix()`` has Frobenius norm 1).
    crit : float
        The criterion ``u'(D w)`` at the final ``u`` and ``w``.
    wbound : float
        The L1 bound ``s``.
    method, dissimilarity, weight_mode : str
        Linkage, ``"squared"``/``"absolute"``, ``"exact"``/``"sparcl"``.
    linkage : ndarray (n-1, 4)
        scipy linkage matrix (children in R's order, heights as R's ``hclust``:
        squared for ``centroid``).
    merge : ndarray (n-1, 2) of int
        R's ``hc$merge`` (``-i``: observation ``i``, 1-based; ``s > 0``: step ``s``).
    height : ndarray
        R's ``hc$height``.
    order : ndarray of int
        Leaf order, 0-based (R's ``hc$order`` minus 1).
    k : int or None
        The number of clusters ``labels`` was cut at.
    linkage_features : ndarray or None
        With ``cluster_features=True``: the tree of the selected features
        (``2 (1 - cor)``), as a scipy linkage; ``feature_names`` names its leaves.
    feature_names : list of str or None
    obs_names : Index
        Row labels of the observations in the tree (the kept rows).
    n_iter, converged : int, bool
        Alternation steps and whether the weights settled (relative L1 change
        ``<= 1e-4``) within ``niter``.
    dists : Dissimilarities or None
        The dissimilarities, for another fit on the same data
        (``sparse_hclust(dists=fit.dists, wbound=...)``, sparcl's ``$dists``); None
        with ``keep_data=False``.

    Examples
    --------
    >>> from sparseclust import sparse_hclust
    >>> from sparseclust.simulate import sparse_sim
    >>> fit = sparse_hclust(sparse_sim(rng=1).data, wbound=5, k=3)
    >>> type(fit).__name__, fit.cut(2).nunique()
    ('SparseHClustResult', 2)
    """

    weights: pd.Series
    u: np.ndarray
    crit: float
    wbound: float
    method: str
    dissimilarity: str
    weight_mode: str
    linkage: np.ndarray
    merge: np.ndarray
    height: np.ndarray
    order: np.ndarray
    obs_names: pd.Index
    k: int | None = None
    linkage_features: np.ndarray | None = None
    feature_names: list[str] | None = None
    standardize_arrays: bool = False
    scale: bool = False
    complementary: bool = False
    dists: Any = None

    method_name: ClassVar[str] = "Sparse hierarchical clustering"
    plot_hint: ClassVar[str] = (
        ".cut(k) for clusters, .plot() for the tree and weights, .plot_dendrogram(y=...)"
    )

    # ----------------------------------------------------------------- derived
    @cached_property
    def n_nonzero(self) -> int:
        """Number of non-zero weights.

        Examples
        --------
        >>> from sparseclust import sparse_hclust
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = sparse_hclust(sparse_sim(rng=1).data, wbound=5, k=3)
        >>> fit.n_nonzero == len(fit.selected)
        True
        """
        return int((self.weights != 0).sum())

    @property
    def selected(self) -> list[str]:
        """Names of the features with non-zero weight, largest weight first.

        Examples
        --------
        >>> from sparseclust import sparse_hclust
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = sparse_hclust(sparse_sim(rng=1).data, wbound=5, k=3)
        >>> fit.selected[:3]
        ['f3', 'f48', 'f34']
        """
        w = self.weights[self.weights != 0]
        return list(w.sort_values(ascending=False, kind="stable").index)

    def cut(self, k: int | None = None, *, height: float | None = None) -> pd.Series:
        """Cut the tree into ``k`` clusters (or at ``height``), like R's ``cutree``.

        Labels are 0-based, numbered by first appearance in data order (R's
        ``cutree`` minus 1), on the input index (``<NA>`` on dropped rows).
        ``height`` needs non-decreasing merge heights (not so for centroid trees
        with inversions), as in R.

        Parameters
        ----------
        k : int, optional
            Number of clusters.
        height : float, optional
            Cut height (instead of ``k``).

        Returns
        -------
        Series
            ``Int64`` labels on the input index.

        Examples
        --------
        >>> from sparseclust import sparse_hclust
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = sparse_hclust(sparse_sim(rng=1).data, wbound=5)
        >>> fit.cut(4).nunique()
        4
        """
        n = len(self.order)
        if (k is None) == (height is None):
            raise ValueError("cut needs exactly one of k= or height=; e.g. result.cut(3).")
        if height is not None:
            h = float(height)
            if np.any(np.diff(self.height) < 0):
                raise ValueError(
                    "cut(height=) needs non-decreasing merge heights; this tree (centroid "
                    "linkage) has inversions. Use cut(k=...)."
                )
            k = n - int(np.sum(self.height <= h))
        k = check_int("k", k, min=1, max=n)
        lab = cutree(self.merge, k)
        out = pd.Series(pd.array(np.full(len(self.labels), pd.NA), dtype="Int64"))
        out.index = self.labels.index
        out.iloc[np.flatnonzero(self.labels.notna().to_numpy())] = lab
        return out.rename("cluster")

    def u_matrix(self) -> pd.DataFrame:
        """``u`` as the symmetric ``n x n`` matrix with zero diagonal (sparcl's ``$u``).

        Returns
        -------
        pandas.DataFrame
            Indexed and labelled by the row names.

        Examples
        --------
        >>> from sparseclust import sparse_hclust
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = sparse_hclust(sparse_sim(rng=1).data, wbound=5, k=3)
        >>> u = fit.u_matrix()
        >>> u.shape, float(u.iloc[0, 0])
        ((60, 60), 0.0)
        """
        return pd.DataFrame(squareform(self.u), index=self.obs_names, columns=self.obs_names)

    @property
    def leaf_names(self) -> list:
        """Row labels of the leaves, left to right.

        Examples
        --------
        >>> from sparseclust import sparse_hclust
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = sparse_hclust(sparse_sim(rng=1).data, wbound=5, k=3)
        >>> len(fit.leaf_names), sorted(fit.leaf_names) == sorted(fit.obs_names)
        (60, True)
        """
        return list(self.obs_names[self.order])

    # ------------------------------------------------------------------- print
    def _headline(self) -> str:
        return (
            f"Sparse hierarchical clustering ({self.method} linkage, {self.dissimilarity} "
            f"distance, wbound={fmt(self.wbound)})"
        )

    def _detail_lines(self) -> list[str]:
        top = self.weights[self.weights > 0].sort_values(ascending=False).head(5)
        lines = [
            f"Non-zero weights: {self.n_nonzero} of {len(self.weights)} (sum of weights "
            f"{fmt(float(self.weights.sum()), 7)}); criterion u'Dw = {fmt(self.crit, 7)}",
            "Top weights: " + ", ".join(f"{k} {v:.3g}" for k, v in top.items()),
        ]
        if self.weight_mode == "sparcl":
            lines.append("Weights in sparcl-compatible mode (BinarySearch, float32 distances).")
        return lines

    def _lines(self) -> list[str]:
        lines = super()._lines()
        if self.k is None:
            lines[2] = "Tree not cut: use .cut(k) for cluster labels (or pass k=)."
        else:
            lines[2] = f"Cut at k={self.k}: cluster sizes {lines[2].split(': ', 1)[1]}"
        return lines

    def _notes(self) -> list[str]:
        notes = [n.replace("(raise max_iter)", "(raise niter)") for n in super()._notes()]
        if self.standardize_arrays:
            notes.append("Each observation (row) was standardised before the distances.")
        if self.scale:
            notes.append("Each feature was standardised (mean 0, sd 1) before the distances.")
        if self.complementary:
            notes.append("Complementary clustering: u was kept orthogonal to uorth.")
        if self.k is None:
            notes.append("The tree was not cut: labels are all 0; use .cut(k).")
        return notes

    def _summary_tables(self) -> dict[str, pd.DataFrame]:
        sel = self.weights[self.weights != 0].sort_values(ascending=False, kind="stable")
        pos = {name: i for i, name in enumerate(self.weights.index)}
        weights = pd.DataFrame(
            {"weight": sel.to_numpy(), "feature_index": [pos[c] for c in sel.index]},
            index=pd.Index(sel.index, name="feature"),
        )
        params = {
            "wbound": fmt(self.wbound, 6),
            "linkage": self.method,
            "dissimilarity": self.dissimilarity,
            "weights": self.weight_mode,
            "non-zero weights": f"{self.n_nonzero} of {len(self.weights)}",
            "sum of weights": fmt(float(self.weights.sum()), 7),
            "criterion": fmt(self.crit, 7),
            "iterations": self.n_iter,
            "converged": self.converged,
            "standardize_arrays": self.standardize_arrays,
            "scale": self.scale,
            "uorth": self.complementary,
        }
        tables = {
            "parameters": pd.DataFrame({"value": list(params.values())}, index=list(params)),
            "weights": weights,
        }
        if self.k is not None:
            tables["clusters"] = self.sizes.to_frame()
        return tables

    def summary(self) -> Summary:
        """The tables ``parameters``, ``weights`` (selected features), and with ``k``
        ``clusters`` and ``profiles``; plus notes.

        Returns
        -------
        Summary
            Prints like R's ``summary()``; ``.tables`` holds the DataFrames.

        Examples
        --------
        >>> from sparseclust import sparse_hclust
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = sparse_hclust(sparse_sim(rng=1).data, wbound=5, k=3)
        >>> sorted(fit.summary().tables)
        ['clusters', 'parameters', 'profiles', 'weights']
        """
        tables = self._summary_tables()
        if self.k is not None and self.table is not None:
            tables["profiles"] = self.profiles()
        return Summary(
            title=f"{self.method_name}: summary",
            call=self.call,
            tables=tables,
            notes=self._notes(),
            unselected=self._unselected(),
        )

    # ------------------------------------------------------------------- plots
    def plot(self, **kwargs: Any) -> Any:
        """Plot sparcl's two panels: the dendrogram (left) and weights vs feature index (right).

        Parameters
        ----------
        **kwargs
            Passed to :func:`~sparseclust.plotting.plot_hclust`.

        Returns
        -------
        matplotlib.figure.Figure
            The figure with its two panels.

        Examples
        --------
        >>> from sparseclust import sparse_hclust
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = sparse_hclust(sparse_sim(rng=1).data, wbound=5, k=3)
        >>> import matplotlib.pyplot as plt
        >>> fig = fit.plot()
        >>> len(fig.axes)
        2
        >>> plt.close(fig)
        """
        from .._plot.dendrogram import plot_hclust

        return plot_hclust(self, **kwargs)

    def plot_weights(self, ax: Any = None, **kwargs: Any) -> Any:
        """Plot the weights against feature index.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; by default a new figure.
        **kwargs
            Passed to ``Axes.scatter``.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.

        Examples
        --------
        >>> from sparseclust import sparse_hclust
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = sparse_hclust(sparse_sim(rng=1).data, wbound=5, k=3)
        >>> import matplotlib.pyplot as plt
        >>> ax = fit.plot_weights()
        >>> ax.get_xlabel()
        'Feature Index'
        >>> plt.close(ax.figure)
        """
        from .._plot.dendrogram import plot_weights_index

        return plot_weights_index(self, ax=ax, **kwargs)

    def plot_dendrogram(self, y: Any = None, ax: Any = None, **kwargs: Any) -> Any:
        """The dendrogram; with ``y`` the leaves are coloured by it (``color_dendrogram``).

        Parameters
        ----------
        y : array-like, optional
            One value per row (e.g. true classes) colouring the leaves.
        ax : matplotlib.axes.Axes, optional
            Where to draw; by default a new figure.
        **kwargs
            Passed to :func:`~sparseclust.plotting.plot_dendrogram`.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.

        Examples
        --------
        >>> import matplotlib.pyplot as plt
        >>> from sparseclust import sparse_hclust
        >>> from sparseclust.simulate import sparse_sim
        >>> sim = sparse_sim(rng=1)
        >>> fit = sparse_hclust(sim.data, wbound=5, k=3)
        >>> ax = fit.plot_dendrogram(y=sim.labels)
        >>> type(ax).__name__
        'Axes'
        >>> plt.close(ax.figure)
        """
        from .._plot.dendrogram import plot_dendrogram

        return plot_dendrogram(self, y=y, ax=ax, **kwargs)


# ------------------------------------------------------------------ public functions
def _uorth_vector(uorth: Any, n: int) -> np.ndarray | None:
    """A unit condensed vector from an n x n symmetric matrix, a condensed vector or a result."""
    if uorth is None:
        return None
    if isinstance(uorth, SparseHClustResult):
        vec = np.asarray(uorth.u, dtype=np.float64)
    else:
        arr = np.asarray(uorth.to_numpy() if isinstance(uorth, pd.DataFrame) else uorth)
        if arr.dtype.kind not in "biuf":
            raise TypeError(
                f"uorth must be numeric (an n x n symmetric matrix, a condensed vector or a "
                f"SparseHClustResult); got dtype {arr.dtype}."
            )
        arr = arr.astype(np.float64)
        if arr.ndim == 2:
            if arr.shape != (n, n):
                raise ValueError(
                    f"uorth must be {n} x {n} (one row and column per observation); got shape "
                    f"{arr.shape}."
                )
            asym = float(np.max(np.abs(arr - arr.T))) if n else 0.0
            if asym > 1e-10 * max(1.0, float(np.max(np.abs(arr)))):
                raise ValueError(
                    f"uorth must be symmetric (sparcl: 'Uorth must be symmetric'); got "
                    f"max |uorth - uorth.T| = {asym:.3g}. Pass a previous fit's u_matrix() or "
                    f"the fit itself."
                )
            vec = _upper(arr)
        elif arr.ndim == 1:
            vec = arr
        else:
            raise ValueError(
                f"uorth must be a matrix or a condensed vector; got shape {arr.shape}."
            )
    if vec.shape != (n * (n - 1) // 2,):
        raise ValueError(
            f"uorth must hold one value per pair of the {n} observations ({n * (n - 1) // 2}); "
            f"got {vec.size}. Use a fit on the same rows."
        )
    if not np.isfinite(vec).all():
        raise ValueError("uorth contains non-finite values; pass a finite matrix.")
    norm = float(np.linalg.norm(vec))
    if norm == 0:
        raise ValueError("uorth is all zero; there is nothing to be orthogonal to.")
    return vec / norm


def _read(
    x: Any, data: Any, *, missing: str, numeric: Any, categorical: Any, scale: bool
) -> tuple[ColumnTable, list[str]]:
    table = read_numeric(x, data=data, categorical=categorical, numeric=numeric, missing=missing)
    warn_spread(table.numeric, table.numeric_names, scale=scale)
    return table, list(table.numeric_names)


@dataclass(frozen=True, eq=False, repr=False)
class Dissimilarities:
    """The dissimilarities of one data set, ready for another fit: sparcl's ``dists``.

    sparcl passes its ``n(n-1)/2 x p`` matrix ``D`` (``perm.out$dists``) back to
    ``HierarchicalSparseCluster(dists = , wbound = )`` so that a second fit skips
    computing it. Here ``D`` is never formed; what a fit needs is the operator for
    ``D w`` and ``u'D`` (the centred data and, with missing values, the pair
    rescaling; for ``"absolute"`` and ``weights="sparcl"`` the data the pair blocks are
    computed from) and the first alternation step from ``w = 1``, the same for every
    bound. ``sparse_hclust(dists=perm.dists, wbound=...)`` reuses both, and the typed
    table, so the data are not read or prepared again.

    Attributes
    ----------
    op : GramSquared or PairStream
        The operator (:mod:`sparseclust._sparse.dissimilarity`).
    dissimilarity, weights : str
        What it was built for; a fit from it must use the same.
    table : ColumnTable
        The typed data (row and column names, the rows kept).
    standardize_arrays, scale : bool
        How the data were prepared.
    first : tuple or None
        ``(u, u'D)`` from ``w = 1`` once computed (without ``uorth``).
    """

    op: Any
    dissimilarity: str
    weights: str
    table: ColumnTable
    standardize_arrays: bool = False
    scale: bool = False
    first: list = field(default_factory=list)

    @property
    def shape(self) -> tuple[int, int]:
        """(observations, features)."""
        return int(self.op.n), int(self.op.p)

    def first_step(self) -> tuple[np.ndarray, np.ndarray]:
        """``(u, u'D)`` from ``w = 1``, computed once."""
        if not self.first:
            self.first.append(first_step(self.op))
        return self.first[0]

    def start(self, uorth: np.ndarray | None) -> tuple[np.ndarray, np.ndarray] | None:
        """The first step for one fit: cached; or computed now and kept for the next
        fit, except where a fit computes it more cheaply itself (with ``uorth``, or on
        sparcl's squared operator: its corrections then share one pass)."""
        if uorth is not None:
            return None
        if self.first or not isinstance(self.op, SparclSquared):
            return self.first_step()
        return None

    def __repr__(self) -> str:
        n, p = self.shape
        how = "Gram products" if isinstance(self.op, GramSquared) else "pair blocks on the fly"
        return (
            f"<Dissimilarities: {n} observations x {p} features, {self.dissimilarity}, "
            f"weights={self.weights!r} ({how}; the {n * (n - 1) // 2} x {p} matrix is never "
            f"formed)>"
        )


def _from_dists(dists: Any, x: Any, dissimilarity: str, weights: str, **prep: bool) -> None:
    """Check that ``dists`` can serve a fit with these settings."""
    if not isinstance(dists, Dissimilarities):
        raise TypeError(
            f"dists must be the .dists of a hclust_sparse_permute or sparse_hclust result "
            f"(a Dissimilarities); got {type(dists).__name__}. sparcl's n(n-1)/2 x p matrix is "
            f"not used here: pass the data as x instead."
        )
    if x is not None:
        raise ValueError("pass either x (the data) or dists=, not both (as sparcl).")
    for name, want, got in [
        ("dissimilarity", dists.dissimilarity, dissimilarity),
        ("weights", dists.weights, weights),
        *((k, getattr(dists, k), v) for k, v in prep.items()),
    ]:
        if want != got:
            raise ValueError(
                f"dists were made with {name}={want!r} but this call has {name}={got!r}; "
                f"pass {name}={want!r} (or fit from the data with x=)."
            )


def _warn_convergence(what: str, niter: int, change: float) -> None:
    warnings.warn(
        f"{what} did not converge in niter={niter} iterations: the weights still "
        f"changed by {change:.2g} (relative L1; tolerance {TOL:g}) at the last step. The result "
        f"is usually close; raise the cap (e.g. niter={max(2 * niter, 100)}) to converge. "
        "sparcl stops at 15 silently.",
        ConvergenceWarning,
        stacklevel=user_stacklevel(),
    )


def _build_result(
    fit: UWFit,
    *,
    table: ColumnTable,
    names: list[str],
    wbound: float,
    method: str,
    dissimilarity: str,
    mode: str,
    k: int | None,
    call: str,
    params: dict,
    keep_data: bool,
    standardize_arrays: bool,
    scale: bool,
    complementary: bool,
    cluster_features: bool = False,
    method_features: str = "average",
    dists: Dissimilarities | None = None,
) -> SparseHClustResult:
    u = fit.u / math.sqrt(2.0)
    Z = tree_linkage(u, method)
    merge = r_merge(Z)
    n = table.n_obs
    lab = cutree(merge, k) if k is not None else np.zeros(n, dtype=np.int64)
    w = pd.Series(fit.w, index=pd.Index(names), name="weight")
    lf = fnames = None
    if cluster_features:
        sel = np.flatnonzero(fit.w != 0)
        lf = feature_linkage(table.numeric, sel, method_features)
        fnames = [names[j] for j in sel]
    return SparseHClustResult(
        labels=labels_series(table, lab),
        n_iter=int(fit.n_iter),
        converged=bool(fit.converged),
        call=call,
        params=params,
        variables=table.spec,
        table=table if keep_data else None,
        weights=w,
        u=u,
        crit=float(fit.crit),
        wbound=float(wbound),
        method=method,
        dissimilarity=dissimilarity,
        weight_mode=mode,
        linkage=Z,
        merge=merge,
        height=Z[:, 2].copy(),
        order=r_order(merge),
        obs_names=table.kept_index,
        k=k,
        linkage_features=lf,
        feature_names=fnames,
        standardize_arrays=standardize_arrays,
        scale=scale,
        complementary=complementary,
        dists=dists,
    )


@rules(**_FIT_RULES, cluster_features=FLAG, method_features=Choice(METHODS))
@screens
def sparse_hclust(
    x: Any = None,
    /,
    *,
    data: Any = None,
    wbound: float | None = None,
    method: str = "average",
    dissimilarity: str = "squared",
    weights: str = "exact",
    k: int | None = None,
    uorth: Any = None,
    standardize_arrays: bool = False,
    cluster_features: bool = False,
    method_features: str = "average",
    niter: int = MAX_ROUNDS,
    missing: str = "native",
    scale: bool = False,
    numeric: Any = None,
    categorical: Any = None,
    screen: Any = True,
    keep_data: bool = True,
    block_size: int | None = None,
    dists: Any = None,
) -> SparseHClustResult:
    """Sparse hierarchical clustering (sparcl's ``HierarchicalSparseCluster``).

    Finds feature weights ``w`` (sparse: ``||w||_1 <= wbound``) and a dissimilarity
    ``u`` between observations that maximise ``sum_j w_j sum_{i<i'} d_ii'j u_ii'``
    (Witten & Tibshirani 2010), then builds a hierarchical tree on ``u``.

    Parameters
    ----------
    x : DataFrame, 2-D array or formula str
        Numeric data (rows are observations), or a formula such as ``"~ . - id"``
        with ``data=``. Categorical columns are an error.
    data : DataFrame, optional
        The data for a formula.
    wbound : float, optional
        The L1 bound ``s > 1`` on the weights (1 < s <= sqrt(p); larger gives no
        sparsity). Default ``0.5 * sqrt(p)`` as sparcl; for ``p <= 4``, where that is
        ``<= 1`` and sparcl fails, ``(1 + sqrt(p)) / 2`` (see :func:`default_wbound`).
    method : {"average", "complete", "single", "centroid"}
        Linkage (R's ``hclust`` methods; ``centroid`` as R defines it on ``u``).
    dissimilarity : {"squared", "absolute"}
        Per-feature ``(x_ij - x_i'j)^2`` or ``|x_ij - x_i'j|`` (sparcl's
        ``"squared.distance"`` / ``"absolute.value"`` are accepted).
    weights : {"exact", "sparcl"}
        ``"exact"``: exact L1/L2 projection in float64 (scale-invariant, the bound
        always holds). ``"sparcl"``: sparcl 1.0.4's numbers (its ``BinarySearch``
        with absolute tolerances, single-precision differences).
    k : int, optional
        Cut the tree into ``k`` clusters for ``labels`` (else ``labels`` are all 0;
        ``result.cut(k)`` cuts later).
    uorth : ndarray, condensed vector or SparseHClustResult, optional
        Complementary clustering: keep ``u`` orthogonal to this (a previous fit's
        ``u``), to find structure the first tree did not use.
    standardize_arrays : bool
        Standardise each observation (row: mean 0, sd 1) first, as sparcl's
        ``standardize.arrays``.
    cluster_features : bool
        Also cluster the selected features (``2 (1 - cor)``, pairwise complete
        correlations of the unstandardised data), stored as ``linkage_features``.
    method_features : str
        Linkage for ``cluster_features``.
    niter : int, default 50
        Cap on the alternating updates, stopped when the weights' relative L1 change
        is ``<= 1e-4`` (sparcl's tolerance). The default converges on ordinary data,
        as sparse k-means' ``max_iter`` (sparcl's 15 was reached before that
        tolerance on 14 % of fits of simulated and shipped data; all converged within
        41); pass ``niter=15`` for sparcl's cap. Hitting it without
        the weights settling issues a ``ConvergenceWarning`` (sparcl is silent).
    missing : {"native", "drop", "raise"}
        ``"native"`` (default): sparcl's rescaling: a pair's dissimilarities over the
        features both observe are scaled by ``p / #(features both observe)``, cells
        with a missing value count 0. ``"drop"`` drops incomplete rows.
    scale : bool
        Standardise each feature first (sparcl does not).
    numeric, categorical : list of str, optional
        Override detected column kinds (categorical remains an error).
    screen : bool or dict, default True
        Screen the columns whose kind was detected (identifiers and free text dropped,
        numbers stored as text parsed, rare levels of many-level categoricals lumped,
        integer codes named), each decision a ``DataWarning`` kept on the result
        (``.variables.screened``); ``False`` reads every column by its dtype;
        ``{"lump_min": 20}`` sets the rows a level needs not to be lumped. See the
        guide "How columns are read".
    keep_data : bool
        Keep the typed data on the result (for ``summary()`` profiles).
    block_size : int, optional
        Pairs per streamed block for the absolute distance and ``weights="sparcl"``
        (default: blocks of about 1 MB, which stay in cache).
    dists : Dissimilarities, optional
        Instead of ``x``: the ``.dists`` of an earlier :func:`hclust_sparse_permute` or
        :func:`sparse_hclust` result on the same data (sparcl's
        ``HierarchicalSparseCluster(dists = perm.out$dists, wbound = )``). The fit
        then skips reading and preparing the data and the first alternation step;
        ``dissimilarity``, ``weights``, ``standardize_arrays`` and ``scale`` must be
        the ones the dists were made with (an error says which).

    Returns
    -------
    SparseHClustResult
        The fit: the tree, the weights, labels of the cut, print and plots.

    Notes
    -----
    Never forms sparcl's ``n(n-1)/2 x p`` matrix: for the squared distance (exact
    mode) ``D w`` and ``u'D`` are matrix products of the data (weighted Gram
    identity), O(n^2 + np) memory; otherwise ``D`` is streamed in blocks of pairs.
    The alternation starts from ``w = 1`` and stops when the relative L1 change of
    ``w`` is ``<= 1e-4`` (sparcl's rule). R to Python: ``HierarchicalSparseCluster(x,
    wbound=, method=, dissimilarity=, uorth=, standardize.arrays=)`` is
    ``sparse_hclust(x, wbound=, method=, dissimilarity=, uorth=, standardize_arrays=)``;
    ``HierarchicalSparseCluster(dists=perm.out$dists, wbound=perm.out$bestw)`` is
    ``sparse_hclust(dists=perm.dists, wbound=perm.best_wbound)``;
    ``out$hc$merge`` is ``.merge``, ``out$hc$order`` is ``.order + 1``, ``out$u`` is
    ``.u_matrix()``, ``out$ws`` is ``.weights``, ``cutree(out$hc, k)`` is ``.cut(k) + 1``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> X = rng.standard_normal((30, 20))
    >>> X[:15, :3] += 3.0
    >>> fit = sparse_hclust(X, wbound=1.5, k=2)
    >>> fit.selected
    ['x0', 'x1', 'x2']
    >>> fit.labels.value_counts().sort_index().tolist()
    [15, 15]
    >>> fit.merge[:2].tolist()  # R's hc$merge convention
    [[...], [...]]
    """
    call = call_string(sparse_hclust, locals())
    prep = {"standardize_arrays": standardize_arrays, "scale": scale}
    if dists is None:
        table, _ = _read(
            x, data, missing=missing, numeric=numeric, categorical=categorical, scale=scale
        )
        X = prepare_matrix(table.numeric, **prep)
        op = make_operator(X, dissimilarity, weights, block_size, copy=False)
        dists = Dissimilarities(op, dissimilarity, weights, table, **prep)
        del X, op
    else:
        _from_dists(dists, x, dissimilarity, weights, **prep)
    table, names = dists.table, list(dists.table.numeric_names)
    n, p = dists.shape
    wbound = _check_wbound(wbound, p)
    k = _check_k(k, n)
    ut = _uorth_vector(uorth, n)
    first = dists.start(ut)
    fit = get_uw(dists.op, wbound, niter=niter, mode=weights, uorth=ut, first=first)
    if not fit.converged:
        _warn_convergence(f"sparse_hclust (wbound={wbound:g})", niter, fit.change)
    params = {
        "wbound": wbound,
        "method": method,
        "dissimilarity": dissimilarity,
        "weights": weights,
        "k": k,
        "niter": niter,
        "standardize_arrays": standardize_arrays,
        "scale": scale,
        "missing": missing,
        "uorth": ut is not None,
        "cluster_features": cluster_features,
        "method_features": method_features,
    }
    return _build_result(
        fit,
        table=table,
        names=names,
        wbound=wbound,
        method=method,
        dissimilarity=dissimilarity,
        mode=weights,
        k=k,
        call=call,
        params=params,
        keep_data=keep_data,
        standardize_arrays=standardize_arrays,
        scale=scale,
        complementary=ut is not None,
        cluster_features=cluster_features,
        method_features=method_features,
        dists=dists if keep_data else None,
    )


def _check_k(k: int | None, n: int) -> int | None:
    """``k`` (an integer >= 1 or None by its rule) against the number of observations."""
    return None if k is None else check_int("k", k, min=1, max=n)


def _crits(op: Any, wbounds: np.ndarray, niter: int, mode: str) -> list[float]:
    first = first_step(op)
    return [get_uw(op, s, niter=niter, mode=mode, first=first).crit for s in wbounds]


def _permuted_observations_task(
    X: np.ndarray,
    gen: np.random.Generator,
    wbounds: np.ndarray,
    dissimilarity: str,
    mode: str,
    niter: int,
    block_size: int | None,
) -> list[float]:
    """Objectives at every bound on ``X`` with each column permuted independently."""
    Xp = gen.permuted(X, axis=0)
    op = make_operator(Xp, dissimilarity, mode, block_size, copy=False)
    return _crits(op, wbounds, niter, mode)


@rules(**_FIT_RULES, **PERMUTE_RULES, null=Choice(NULLS), rng=SEED)
@screens
def hclust_sparse_permute(
    x: Any = None,
    /,
    *,
    data: Any = None,
    wbounds: Any = None,
    nperms: int = 10,
    dissimilarity: str = "squared",
    method: str = "average",
    weights: str = "exact",
    null: str = "observations",
    standardize_arrays: bool = False,
    rule: str = "max",
    k: int | None = None,
    niter: int = MAX_ROUNDS,
    missing: str = "native",
    scale: bool = False,
    numeric: Any = None,
    categorical: Any = None,
    screen: Any = True,
    keep_data: bool = True,
    block_size: int | None = None,
    n_jobs: int | None = None,
    progress: bool | None = None,
    rng: Any = None,
) -> PermuteResult:
    """Choose the L1 bound of :func:`sparse_hclust` by the gap statistic (sparcl's
    ``HierarchicalSparseCluster.permute``).

    For each bound ``s`` the criterion ``O(s) = u'Dw`` on the data is compared with
    its values ``O*_b(s)`` on ``nperms`` null data sets: ``gap(s) = log O(s) -
    mean_b log O*_b(s)``, sd the sample sd of ``log O*_b(s)``.

    Parameters
    ----------
    x, data : see :func:`sparse_hclust`
        The data, or a formula with its data.
    wbounds : sequence of float, optional
        At least two bounds, all ``> 1``. Default ``linspace(1.1, 0.7 sqrt(p), 10)``
        (sparcl's grid; for ``p <= 2``, where it would end below 1.1, up to 1.5).
    nperms : int
        Number of null data sets (sparcl's 10).
    dissimilarity, method, weights, standardize_arrays : see :func:`sparse_hclust`
        As in :func:`sparse_hclust`.
    niter, missing, scale, numeric, categorical, keep_data, block_size : see :func:`sparse_hclust`
        As in :func:`sparse_hclust`; ``method`` only shapes the trees of the returned fits (the criterion does not
        depend on it).
    screen : bool or dict, default True
        As in :func:`sparse_hclust`.
    null : {"observations", "dissimilarities"}
        ``"observations"`` (default; the null sparcl's documentation and the paper
        describe): permute each feature's values across the observations,
        independently per feature, and refit. ``"dissimilarities"``: what sparcl's
        code does: permute each column of the pair x feature matrix ``D``, each
        permutation applied to the previous one; this needs ``D`` in memory (at most
        1 GiB, else an error) and runs serially.
    rule : {"max", "1se"}
        First maximum of the gap (sparcl), or the smallest bound within one sd of it.
    k : int, optional
        Cut the returned fits into ``k`` clusters (their ``labels``).
    n_jobs : int, optional
        Parallel workers for the permutations (joblib); results do not depend on it.
    progress : bool, optional
        A tqdm progress bar over the permutations (shown once they have run 2 s).
        Default: on in an interactive terminal or a notebook, off otherwise.
    rng : None, int or Generator
        Seeds the permutations (one child generator per permutation).

    Returns
    -------
    PermuteResult
        ``table`` (wbound, n_nonzero, gap, sd_gap), ``best_wbound``, ``best`` (the
        fit on the data at the chosen bound: a :class:`SparseHClustResult`), ``fits``
        (every bound), ``tots``, ``permtots``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> X = rng.standard_normal((30, 12))
    >>> X[:15, :2] += 3.0
    >>> perm = hclust_sparse_permute(X, wbounds=[1.2, 2.0, 3.0], nperms=4, rng=0)
    >>> perm.table.columns.tolist()
    ['wbound', 'n_nonzero', 'gap', 'sd_gap']
    >>> perm.table["n_nonzero"].tolist()
    [2, 12, 12]
    >>> sorted(perm.fits[0].selected)
    ['x0', 'x1']
    """
    call = call_string(hclust_sparse_permute, locals())
    generator = as_rng(rng)
    table, names = _read(
        x, data, missing=missing, numeric=numeric, categorical=categorical, scale=scale
    )
    n, p = table.numeric.shape
    wbounds = _check_wbounds(wbounds, p)
    k = _check_k(k, n)
    X = prepare_matrix(table.numeric, scale=scale, standardize_arrays=standardize_arrays)
    if null == "dissimilarities":
        _check_d_budget(n, p)
    prep = {"standardize_arrays": standardize_arrays, "scale": scale}
    op = make_operator(X, dissimilarity, weights, block_size)
    dists = Dissimilarities(op, dissimilarity, weights, table, **prep)
    raw, elapsed = _fit_bounds(dists, wbounds, weights, niter)
    params = {
        "wbounds": wbounds.tolist(),
        "nperms": nperms,
        "dissimilarity": dissimilarity,
        "method": method,
        "weights": weights,
        "null": null,
        "standardize_arrays": standardize_arrays,
        "scale": scale,
        "rule": rule,
        "niter": niter,
        "missing": missing,
    }
    fits = [
        _build_result(
            f,
            table=table,
            names=names,
            wbound=s,
            method=method,
            dissimilarity=dissimilarity,
            mode=weights,
            k=k,
            call=call,
            params={**params, "wbound": float(s)},
            keep_data=keep_data,
            standardize_arrays=standardize_arrays,
            scale=scale,
            complementary=False,
            dists=dists,
        )
        for f, s in zip(raw, wbounds, strict=True)
    ]
    if progress is None:  # shown when the null is expected to take more than 10 s
        progress = elapsed * nperms / _null_workers(n_jobs, null) > 10.0
    gens = generator.spawn(nperms)
    settings = (wbounds, dissimilarity, weights, niter, block_size)
    if null == "observations":
        perm = _null_observations(X, gens, *settings, n_jobs=n_jobs, progress=progress)
    else:
        perm = _null_dissimilarities(X, gens, *settings, progress=progress)
    result = make_permute_result(
        wbounds=wbounds,
        fits=fits,
        tots=np.array([f.crit for f in raw]),
        permtots=np.array(perm, dtype=np.float64).T,  # bounds x permutations
        n_nonzero=np.array([int(np.sum(f.w != 0)) for f in raw]),
        rule=rule,
        null=null,
        call=call,
        params=params,
        method="hclust",
        dists=dists,
    )
    warn_grid_edge(result, X.shape[1], "hclust_sparse_permute", 1.1, 0.7)  # sparcl's grid
    return result


def _null_workers(n_jobs: int | None, null: str) -> int:
    """Processes the null runs on (the dissimilarity null runs serially)."""
    if null != "observations" or n_jobs in (None, 1):
        return 1
    return n_jobs if n_jobs > 0 else _cpu_count()


def _check_d_budget(n: int, p: int) -> None:
    """``null="dissimilarities"`` holds sparcl's pair x feature matrix (and a copy): refuse
    it beyond :data:`D_BUDGET_BYTES`."""
    need = 2 * 8 * (n * (n - 1) // 2) * p
    if need > D_BUDGET_BYTES:
        raise ValueError(
            f"null='dissimilarities' permutes sparcl's pair x feature matrix, which needs "
            f"{need / 2**30:.2f} GiB here (n={n}, p={p}; limit "
            f"{D_BUDGET_BYTES / 2**30:.0f} GiB). Use null='observations' (the default), "
            f"which never builds it."
        )


def _fit_bounds(
    dists: Dissimilarities, wbounds: np.ndarray, weights: str, niter: int
) -> tuple[list[UWFit], float]:
    """The fits on the data at every bound (one operator; the first step is shared), and
    the seconds they took. Warns when some did not converge."""
    t0 = time.perf_counter()
    first = dists.first_step()
    raw = [get_uw(dists.op, s, niter=niter, mode=weights, first=first) for s in wbounds]
    elapsed = time.perf_counter() - t0
    bad = [f for f in raw if not f.converged]
    if bad:
        _warn_convergence(
            f"{len(bad)} of {len(wbounds)} fits on the data",
            niter,
            max(f.change for f in bad),
        )
    return raw, elapsed


def _null_observations(
    X: np.ndarray,
    gens: list[np.random.Generator],
    wbounds: np.ndarray,
    dissimilarity: str,
    weights: str,
    niter: int,
    block_size: int | None,
    *,
    n_jobs: int | None,
    progress: bool,
) -> list[list[float]]:
    """Objectives per permutation (each column of ``X`` permuted by its generator) and
    bound, in parallel with joblib."""
    tasks = [(g, wbounds, dissimilarity, weights, niter, block_size) for g in gens]
    return run_shared(
        _permuted_observations_task,
        X,
        tasks,
        n_jobs=n_jobs,
        progress=progress,
        desc="permutations",
    )


def _null_dissimilarities(
    X: np.ndarray,
    gens: list[np.random.Generator],
    wbounds: np.ndarray,
    dissimilarity: str,
    weights: str,
    niter: int,
    block_size: int | None,
    *,
    progress: bool,
) -> list[list[float]]:
    """sparcl's null: the columns of ``D`` permuted, each permutation applied to the
    previous one; serial, ``D`` in memory."""
    D = PairStream(
        X, dissimilarity, single=(weights == "sparcl"), block_size=block_size
    ).materialise()
    iterator: Any = progress_bar(gens, progress, "permutations")
    perm = []
    for g in iterator:
        g.permuted(D, axis=0, out=D)  # accumulates, as sparcl
        perm.append(_crits(MaterialisedD(D), wbounds, niter, weights))
    del D
    return perm


def _cpu_count() -> int:
    import os

    return max(1, os.cpu_count() or 1)


#: Alias: ``sparse_hclust_permute`` next to the canonical name (sparcl users look for either).
sparse_hclust_permute = hclust_sparse_permute
