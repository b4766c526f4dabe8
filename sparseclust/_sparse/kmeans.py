"""Sparse k-means (Witten & Tibshirani 2010): ``sparse_kmeans``, ``sparse_kmeans_path``,
``kmeans_sparse_permute`` and ``sparse_weights`` — R's sparcl ``KMeansSparseCluster``
family on pandas, with exact weights, returned centres, ``predict`` and parallel tuning.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._data.params import (
    Int,
    Progress,
    as_rng,
    check_choice,
    check_int,
    check_number,
    rules,
)
from .._data.screen import screens
from .._data.stages import repair_sd, warn_spread
from .._data.table import empty_table, read_numeric, transform_like
from .._engine.blocks import LocalBlocks
from .._engine.dask import route_backend
from .._results.base import ClusterResult, labels_series
from .._results.format import call_string, fmt
from .kmeans_core import SparseKMeansFit
from .kmeans_fit import FitSettings, fit_bounds, refit_bound, run_permutations, warn_fits
from .lloyd import cluster_means, fetch_rows, one_block, partial_sqdist
from .permute import PermuteResult, make_permute_result, warn_grid_edge
from .rules import (
    ALGORITHM,
    BACKEND,
    DATA_RULES,
    FLAG,
    MAX_ROUNDS,
    MISSING,
    PERMUTE_RULES,
    SEED,
    WBOUNDS,
    WEIGHTS,
    default_wbound,
)
from .weights import between_ss, project_weights

__all__ = [
    "SparseKMeansPath",
    "SparseKMeansResult",
    "kmeans_sparse_permute",
    "sparse_kmeans",
    "sparse_kmeans_path",
    "sparse_weights",
]

#: The rules every sparse k-means front declares (``k <= n`` and ``wbound`` are checked
#: on the data, in the body: the messages name the data's size).
_FIT_RULES = {
    **DATA_RULES,
    "k": Int(min=2, none=True),
    "algorithm": ALGORITHM,
    "nstart": Int(min=1),
    "max_iter": Int(min=1),
    "rng": SEED,
}


# ------------------------------------------------------------------------ result
@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class SparseKMeansResult(ClusterResult):
    """Result of :func:`sparse_kmeans` (sparcl's ``KMeansSparseCluster`` element, and more).

    Attributes
    ----------
    labels : Series (Int64)
        0-based cluster of each row on the input index (numbered by first appearance
        in data order; sparcl's ``Cs`` are 1-based).
    weights : Series
        Feature weights ``w`` (``||w||_2 = 1``, ``w >= 0``, ``||w||_1 <= wbound``), by column.
    wbound : float
        The L1 bound ``s``.
    k : int
        Number of clusters.
    bcss, wcss, tss : Series
        Per-feature between-, within- and total sums of squares of the partition.
    objective : float
        ``sum_j w_j BCSS_j`` at the end.
    objective_path : ndarray
        The objective after every round (sparcl's ``crit``).
    centers : DataFrame
        Cluster means (clusters x features) on the scale clustered on (standardised
        when ``scale=True``).
    threshold : float
        The soft-threshold applied to the BCSS in the last weight step.
    weights_mode, algorithm : str
        Settings used.

    Examples
    --------
    >>> from sparseclust import sparse_kmeans
    >>> from sparseclust.simulate import sparse_sim
    >>> fit = sparse_kmeans(sparse_sim(rng=1).data, 3, wbound=5, rng=0)
    >>> type(fit).__name__, fit.weights.size, bool(fit.weights.sum() > 0)
    ('SparseKMeansResult', 100, True)
    """

    weights: pd.Series
    wbound: float
    k: int
    bcss: pd.Series
    wcss: pd.Series
    tss: pd.Series
    objective: float
    objective_path: np.ndarray
    centers: pd.DataFrame
    threshold: float
    weights_mode: str
    algorithm: str
    scale: bool = False
    center_: np.ndarray | None = None
    scale_: np.ndarray | None = None

    method_name: ClassVar[str] = "Sparse k-means"
    plot_hint: ClassVar[str] = ".plot_weights() for the weights"

    @cached_property
    def n_nonzero(self) -> int:
        """Number of non-zero weights.

        Examples
        --------
        >>> from sparseclust import sparse_kmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = sparse_kmeans(sparse_sim(rng=1).data, 3, wbound=5, rng=0)
        >>> fit.n_nonzero <= fit.weights.size
        True
        """
        return int((self.weights != 0).sum())

    @cached_property
    def selected(self) -> pd.Series:
        """The non-zero weights, largest first.

        Examples
        --------
        >>> from sparseclust import sparse_kmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = sparse_kmeans(sparse_sim(rng=1).data, 3, wbound=5, rng=0)
        >>> fit.selected.index[:3].tolist()
        ['f15', 'f14', 'f11']
        """
        w = self.weights[self.weights != 0]
        return w.sort_values(ascending=False)

    @cached_property
    def weighted_centers(self) -> pd.DataFrame:
        """Centres in the weighted space, ``mean * sqrt(w)`` (the space ``predict`` uses).

        Examples
        --------
        >>> from sparseclust import sparse_kmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = sparse_kmeans(sparse_sim(rng=1).data, 3, wbound=5, rng=0)
        >>> fit.weighted_centers.shape
        (3, 100)
        """
        return self.centers * np.sqrt(self.weights.to_numpy())

    def _headline(self) -> str:
        return f"Sparse k-means (k={self.k}, wbound={self.wbound:.6g})"

    def _detail_lines(self) -> list[str]:
        top = ", ".join(f"{n} {v:.2f}" for n, v in self.selected.head(5).items())
        more = ", ..." if self.n_nonzero > 5 else ""
        return [
            f"Non-zero weights: {self.n_nonzero} of {len(self.weights)} "
            f"(sum {fmt(float(self.weights.sum()), 7)}); objective sum(w * BCSS) = "
            f"{fmt(self.objective, 6)}",
            f"Top weights: {top}{more}",
        ]

    def _summary_tables(self) -> dict[str, pd.DataFrame]:
        clusters = pd.DataFrame({"size": self.sizes})
        weights = pd.DataFrame(
            {
                "weight": self.weights,
                "bcss": self.bcss,
                "wcss": self.wcss,
                "bcss_share": self.bcss / self.tss.where(self.tss > 0),
            }
        )
        weights = weights[weights["weight"] != 0].sort_values("weight", ascending=False)
        params = {
            "k": self.k,
            "wbound": fmt(self.wbound),
            "non-zero weights": self.n_nonzero,
            "sum of weights": fmt(float(self.weights.sum()), 7),
            "objective": fmt(self.objective, 6),
            "weights": self.weights_mode,
            "algorithm": self.algorithm,
            "scale": self.scale,
            "iterations": self.n_iter,
            "converged": self.converged,
        }
        sel = list(self.selected.index)
        return {
            "clusters": clusters,
            "parameters": pd.DataFrame({"value": list(params.values())}, index=list(params)),
            "weights": weights,
            "centers": self.centers[sel],
        }

    def _notes(self) -> list[str]:
        notes = super()._notes()
        notes.append(
            "Features with weight 0 do not affect the clustering; the table lists the "
            "selected ones."
        )
        if self.scale:
            notes.append("Features were standardised (mean 0, sd 1) before clustering.")
        return notes

    def profiles(self) -> pd.DataFrame:
        """Mean and sd of each selected feature by cluster (largest weights first).

        Returns
        -------
        pandas.DataFrame
            One row per selected feature and statistic, one column per cluster.

        Examples
        --------
        >>> from sparseclust import sparse_kmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = sparse_kmeans(sparse_sim(rng=1).data, 3, wbound=5, rng=0)
        >>> fit.profiles().shape
        (88, 4)
        """
        prof = super().profiles()
        keep = [v for v in self.selected.index if v in prof.index.get_level_values(0)]
        return prof.loc[keep]

    def predict(self, newdata: Any, *, missing: str = "native") -> pd.Series:
        """Nearest centre in the weighted space, ``sum_j w_j (x_j - c_j)^2``.

        ``newdata`` needs the fitted columns. Missing cells use partial distances
        (``missing="native"``), or drop the row (``"drop"``, label ``<NA>``) or raise
        (naming the rows). A row with no observed value on the selected (non-zero
        weight) features cannot be placed: its label is ``<NA>``.

        Parameters
        ----------
        newdata : DataFrame
            Rows with the fitted columns.
        missing : {"native", "drop", "raise"}, default "native"
            Missing cells, as above.

        Returns
        -------
        Series
            ``Int64`` cluster labels on ``newdata``'s index.

        Examples
        --------
        >>> from sparseclust import sparse_kmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> sim = sparse_sim(rng=1)
        >>> fit = sparse_kmeans(sim.data, 3, wbound=5, rng=0)
        >>> fit.predict(sim.data.head(3)).dtype
        Int64Dtype()
        """
        t, d, unplaced = self.weighted_sqdist(newdata, missing=missing)
        return labels_series(t, d.argmin(axis=1), unplaced=unplaced)

    def weighted_sqdist(self, newdata: Any, *, missing: str = "native") -> tuple:
        """``(table, d, unplaced)``: the typed new data, the weighted squared distance
        ``sum_j w_j (x_j - c_kj)^2`` of each kept row to each centre (partial distances
        over the observed cells, on the scale clustered on) and the rows with nothing
        observed on the selected features (their distances are not meaningful).

        Parameters
        ----------
        newdata : DataFrame or array-like
            New rows with the fitted columns.
        missing : {"native", "drop", "raise"}, default "native"
            How rows with missing values are handled, as in :meth:`predict`.

        Returns
        -------
        table : ColumnTable
            The typed new data.
        d : numpy.ndarray
            Weighted squared distances, one row per kept row and one column per centre.
        unplaced : numpy.ndarray
            Boolean, one per kept row: nothing observed on the selected features.

        Examples
        --------
        >>> from sparseclust import sparse_kmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> sim = sparse_sim(rng=1)
        >>> fit = sparse_kmeans(sim.data, 3, wbound=5, rng=0)
        >>> table, d, unplaced = fit.weighted_sqdist(sim.data.head(4))
        >>> d.shape, int(unplaced.sum())
        ((4, 3), 0)
        """
        check_choice("missing", missing, ["raise", "drop", "native"])
        t = transform_like(self.variables, newdata, missing=missing)
        X = _standardise(t.numeric, self.center_, self.scale_)
        w = self.weights.to_numpy()
        keep = np.flatnonzero(w != 0)
        z = X[:, keep] * np.sqrt(w[keep])
        c = self.centers.to_numpy()[:, keep] * np.sqrt(w[keep])
        unplaced = np.isnan(z).all(axis=1)
        d = partial_sqdist(np.where(unplaced[:, None], 0.0, z), c)
        return t, d, unplaced

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Plot the weights against feature index (sparcl's plot).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; by default a new figure.
        **kwargs
            Passed to :func:`~sparseclust.plotting.plot_weights`.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.

        Examples
        --------
        >>> from sparseclust import sparse_kmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = sparse_kmeans(sparse_sim(rng=1).data, 3, wbound=5, rng=0)
        >>> import matplotlib.pyplot as plt
        >>> ax = fit.plot()
        >>> ax.get_xlabel()
        'feature index'
        >>> plt.close(ax.figure)
        """
        return self.plot_weights(ax=ax, **kwargs)

    def plot_weights(self, ax: Any = None, **kwargs: Any) -> Any:
        """Plot the weights against feature index, selected features labelled.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; by default a new figure.
        **kwargs
            Passed to :func:`~sparseclust.plotting.plot_weights`.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.

        Examples
        --------
        >>> from sparseclust import sparse_kmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = sparse_kmeans(sparse_sim(rng=1).data, 3, wbound=5, rng=0)
        >>> import matplotlib.pyplot as plt
        >>> ax = fit.plot_weights()
        >>> ax.get_xlabel(), ax.get_ylabel()
        ('feature index', 'weight')
        >>> plt.close(ax.figure)
        """
        from .. import plotting

        return plotting.plot_weights(self, ax=ax, **kwargs)

    def plot_clusters(self, ax: Any = None, **kwargs: Any) -> Any:
        """The rows on the two selected features with the largest weights, coloured by cluster.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; by default a new figure.
        **kwargs
            Passed to :func:`~sparseclust.plotting.plot_feature_pair`.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.

        Examples
        --------
        >>> from sparseclust import sparse_kmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = sparse_kmeans(sparse_sim(rng=1).data, 3, wbound=5, rng=0)
        >>> import matplotlib.pyplot as plt
        >>> ax = fit.plot_clusters()
        >>> ax.get_xlabel() in fit.selected.index
        True
        >>> plt.close(ax.figure)
        """
        from .. import plotting

        return plotting.plot_feature_pair(self, ax=ax, **kwargs)


@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class SparseKMeansPath:
    """Result of :func:`sparse_kmeans_path`: one :class:`SparseKMeansResult` per bound.

    Attributes
    ----------
    fits : tuple of SparseKMeansResult
        In the order of ``wbounds``.
    table : DataFrame
        ``wbound``, ``n_nonzero``, ``sum_weights``, ``objective``, ``n_iter``, ``converged``.
    warm_start : bool
        Whether each bound started from the previous bound's partition (sparcl).
    call : str

    Examples
    --------
    >>> from sparseclust import sparse_kmeans_path
    >>> from sparseclust.simulate import sparse_sim
    >>> path = sparse_kmeans_path(sparse_sim(rng=1).data, 3, wbounds=[2, 5], rng=0)
    >>> len(path), path.table["wbound"].tolist()
    (2, [2.0, 5.0])
    """

    fits: tuple
    table: pd.DataFrame
    warm_start: bool
    call: str

    def __len__(self) -> int:
        return len(self.fits)

    def __getitem__(self, i: int) -> SparseKMeansResult:
        return self.fits[i]

    @property
    def weights(self) -> pd.DataFrame:
        """Weights per bound (rows: bounds, columns: features).

        Examples
        --------
        >>> from sparseclust import sparse_kmeans_path
        >>> from sparseclust.simulate import sparse_sim
        >>> path = sparse_kmeans_path(sparse_sim(rng=1).data, 3, wbounds=[2, 5], rng=0)
        >>> path.weights.shape
        (2, 100)
        """
        return pd.DataFrame(
            [f.weights for f in self.fits], index=pd.Index(self.table["wbound"], name="wbound")
        )

    def _lines(self) -> list[str]:
        lines = [
            f"Sparse k-means path over {len(self.fits)} bounds "
            f"({'warm-started, as sparcl' if self.warm_start else 'independent fits'})",
            f"Call: {self.call}",
        ]
        for f in self.fits:  # sparcl's print: one block per wbound
            lines += [
                f"Wbound is {fmt(f.wbound)}: {f.n_nonzero} non-zero weights, "
                f"sum {fmt(float(f.weights.sum()))}; cluster sizes "
                f"{', '.join(map(str, f.sizes.tolist()))}",
            ]
        lines.append("Index it (path[i]) for a fit; .plot() shows the weights per bound.")
        return lines

    def __repr__(self) -> str:
        return "\n".join(self._lines())

    def _repr_html_(self) -> str:
        return f"<div><b>{self._lines()[0]}</b><br>{self.table.to_html()}</div>"

    def summary(self) -> Any:
        """The path table.

        Returns
        -------
        Summary
            Prints the path table; ``.tables["path"]`` holds it.

        Examples
        --------
        >>> from sparseclust import sparse_kmeans_path
        >>> from sparseclust.simulate import sparse_sim
        >>> path = sparse_kmeans_path(sparse_sim(rng=1).data, 3, wbounds=[2, 5], rng=0)
        >>> path.summary().tables["path"]["wbound"].tolist()
        [2.0, 5.0]
        """
        from .._results.summary import Summary

        return Summary(title="Sparse k-means path", call=self.call, tables={"path": self.table})

    def plot(self, **kwargs: Any) -> Any:
        """Plot the weights against feature index, one panel per bound (sparcl's plot).

        Parameters
        ----------
        **kwargs
            Passed to :func:`~sparseclust.plotting.plot_weights_path`.

        Returns
        -------
        matplotlib.figure.Figure
            The figure, one panel per bound.

        Examples
        --------
        >>> from sparseclust import sparse_kmeans_path
        >>> from sparseclust.simulate import sparse_sim
        >>> path = sparse_kmeans_path(sparse_sim(rng=1).data, 3, wbounds=[2, 5], rng=0)
        >>> import matplotlib.pyplot as plt
        >>> fig = path.plot()
        >>> len(fig.axes)
        2
        >>> plt.close(fig)
        """
        from .. import plotting

        return plotting.plot_weights_path(self, **kwargs)


# ------------------------------------------------------------------------ helpers
def _standardise(X: np.ndarray, center: np.ndarray | None, sd: np.ndarray | None) -> np.ndarray:
    if center is None:
        return X
    return (X - center) / sd


def _read(x, data, numeric, categorical, missing, scale, min_rows):
    table = read_numeric(
        x, data=data, categorical=categorical, numeric=numeric, missing=missing, min_rows=min_rows
    )
    X = table.numeric
    warn_spread(X, table.numeric_names, scale=scale)
    # missing cells only with missing="native" (else an error, or their rows dropped);
    # on complete data the plain mean and sd (the nan-functions copy; same numbers)
    nan = table.missing == "native" and bool(np.isnan(X).any())
    center = sd = None
    if scale:
        center = np.nanmean(X, axis=0) if nan else X.mean(axis=0)
        sd = X.std(axis=0, ddof=1) if not nan else np.nanstd(X, axis=0, ddof=1)
        sd = repair_sd(X, center, sd)
        sd = np.where(sd > 0, sd, 1.0)
        X = np.subtract(X, center)
        X /= sd
    if nan and np.isnan(X).all(axis=1).any():
        bad = table.kept_index[np.isnan(X).all(axis=1)].tolist()[:5]
        raise ValueError(
            f"rows {bad} have no observed value; drop them (missing='drop' drops any row "
            "with a missing cell) or impute."
        )
    return table, X, (center, sd)


def _read_blocks(x, data, numeric, categorical, missing, scale, lazy) -> tuple:
    """(table, executor of row blocks, (center, sd), Dask preparation or None)."""
    if not lazy:
        table, X, sc = _read(x, data, numeric, categorical, missing, scale, 2)
        return table, one_block(X), sc, None
    from .dask import prepare_dask_numeric

    prep = prepare_dask_numeric(
        x, data, categorical=categorical, numeric=numeric, missing=missing, scale=scale
    )
    return empty_table(prep.spec), prep.executor, (prep.center, prep.scale), prep


def _check_wbound(wbound: Any, p: int, name: str = "wbound") -> float:
    """``wbound`` checked; ``None`` is :func:`~.rules.default_wbound` (sparcl's
    ``0.5 sqrt(p)``, the default of the hierarchical method and of the wrappers)."""
    if wbound is None:
        return default_wbound(p)
    w = check_number(name, wbound, min=1, min_inclusive=False)
    return w


def _check_k(k: Any, n: int, centers: Any, p: int) -> tuple[int, np.ndarray | None]:
    if centers is not None:
        try:
            c = np.asarray(centers.to_numpy() if hasattr(centers, "to_numpy") else centers, float)
        except (TypeError, ValueError) as err:
            raise TypeError(
                f"centers must be a (k, {p}) array of numbers, one row per starting centre; "
                f"got centers={centers!r:.80} ({err}). Use e.g. centers=X[:k] or leave "
                "centers=None for random starts."
            ) from None
        if c.ndim != 2 or c.shape[1] != p:
            raise ValueError(
                f"centers must be a (k, {p}) array, one row per cluster and one column per "
                f"feature; got shape {c.shape}."
            )
        if not np.isfinite(c).all():
            raise ValueError("centers must be finite; got NaN or inf in centers.")
        if k is not None and int(k) != c.shape[0]:
            raise ValueError(
                f"k={k} but centers has {c.shape[0]} rows; pass one of them, or make them agree."
            )
        if np.unique(c, axis=0).shape[0] < c.shape[0]:
            raise ValueError("centers has duplicated rows; give k distinct starting centres.")
        k = c.shape[0]
        kk = check_int("k", k, min=2, max=n)
        return kk, c
    if k is None:
        raise ValueError("k is required: the number of clusters (or pass centers=).")
    if k > n:
        raise ValueError(f"k={k} is more than the {n} rows; use k <= {n}.")
    return k, None


def _algorithm(algorithm: str, lazy: bool = False) -> str:
    """The k-means of the partition step (``algorithm`` as its rule returns it):
    ``"auto"`` is Hartigan-Wong in memory and Lloyd on Dask (Hartigan-Wong moves one
    point at a time: it needs the rows here)."""
    if algorithm == "auto":
        return "lloyd" if lazy else "hartigan-wong"
    if lazy and algorithm == "hartigan-wong":
        raise ValueError(
            "algorithm='hartigan-wong' needs the data in memory (it moves one point at a "
            "time); on Dask use algorithm='lloyd' (or 'auto'), or backend='numpy' to "
            "compute the data into memory."
        )
    return algorithm


def _centers_scaled(c: np.ndarray | None, sc: tuple) -> np.ndarray | None:
    """Given starting centres on the data's scale, on the scale clustered on."""
    if c is not None and sc[0] is not None:
        return (c - sc[0]) / sc[1]
    return c


def _result(
    fit: SparseKMeansFit,
    *,
    table,
    ex,
    k,
    wbound,
    mode,
    algorithm,
    call,
    params,
    scale,
    keep_data,
    prep,
) -> SparseKMeansResult:
    """The result of one fit (its centres computed over the blocks)."""
    names = table.numeric_names
    idx = pd.Index(names, name="variable")
    states, sizes, means = cluster_means(ex, fit.states, k)
    centers = pd.DataFrame(means, columns=idx, index=pd.Index(range(k), name="cluster"))
    lazy_counts = None
    if prep is None:
        labels = labels_series(table, fit.labels)
    else:
        from .._engine.dask import labels_dask

        here = isinstance(ex, LocalBlocks)  # no distributed client: the labels are here
        labels = labels_dask(prep, None if here else states, fit.labels, key=None)
        n_dropped = prep.n_dropped
        lazy_counts = (pd.Series(sizes.astype(np.int64), name="size").rename_axis("cluster"),
                       n_dropped)  # fmt: skip
    return SparseKMeansResult(
        labels=labels,
        lazy_counts=lazy_counts,
        n_iter=fit.n_iter,
        converged=fit.converged,
        call=call,
        params=params,
        variables=table.spec,
        table=table if keep_data and prep is None else None,
        weights=pd.Series(fit.weights, index=idx, name="weight"),
        wbound=wbound,
        k=k,
        bcss=pd.Series(fit.bcss, index=idx, name="bcss"),
        wcss=pd.Series(fit.wcss, index=idx, name="wcss"),
        tss=pd.Series(fit.tss, index=idx, name="tss"),
        objective=fit.objective,
        objective_path=fit.objective_path,
        centers=centers,
        threshold=float(fit.lam),
        weights_mode=mode,
        algorithm=algorithm,
        scale=scale[0] is not None,
        center_=scale[0],
        scale_=scale[1],
    )


# ------------------------------------------------------------------------ public
@rules(weights=WEIGHTS, scale=FLAG, missing=MISSING)
def sparse_weights(
    x: Any = None,
    /,
    labels: Any = None,
    wbound: float | None = None,
    *,
    data: Any = None,
    weights: str = "exact",
    scale: bool = False,
    missing: str = "native",
) -> pd.Series:
    """Feature weights for a given partition (sparcl's ``UpdateWs``).

    The weights maximise ``sum_j w_j BCSS_j`` under ``||w||_2 <= 1``,
    ``||w||_1 <= wbound``, ``w >= 0`` for the partition ``labels`` (any hashable
    labels, one per row; ``<NA>`` rows are left out).

    Parameters
    ----------
    x : DataFrame, 2-D array or formula
        Numeric data (``data=`` with a formula).
    data : DataFrame, optional
        The data a formula ``x`` is read from.
    labels : array-like or Series
        Cluster of each row.
    wbound : float
        The L1 bound (> 1).
    weights : {"exact", "sparcl"}
        Exact projection (default) or sparcl's BinarySearch replica.
    scale : bool
        Standardise the features first.
    missing : {"native", "drop", "raise"}, default "native"
        Missing cells, as in :func:`sparse_kmeans`.

    Returns
    -------
    Series
        Weights by column name.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0, 1.0], [0.1, 5.0, 0.0], [3.0, 0.2, 1.0], [3.1, 5.1, 0.0]])
    >>> sparse_weights(X, [0, 0, 1, 1], wbound=1.2).round(3).tolist()
    [1.0, 0.002, 0.0]
    """
    table, X, _ = _read(x, data, None, None, missing, scale, 2)
    if labels is None:
        raise ValueError("labels are required: one cluster label per row.")
    lab = pd.Series(np.asarray(labels, dtype=object) if not hasattr(labels, "index") else labels)
    if len(lab) != len(table.index):
        raise ValueError(f"labels has {len(lab)} entries but the data has {len(table.index)} rows.")
    lab = lab.iloc[np.flatnonzero(~table.dropped)]
    ok = lab.notna().to_numpy()
    codes, _ = pd.factorize(lab[ok])
    s = _check_wbound(wbound, X.shape[1])
    bcss, _, _ = between_ss(X[ok], codes, int(codes.max()) + 1)
    w, _ = project_weights(bcss, s, weights)
    return pd.Series(w, index=pd.Index(table.numeric_names, name="variable"), name="weight")


@rules(**_FIT_RULES, backend=BACKEND)
@screens
def sparse_kmeans(
    x: Any = None,
    /,
    k: int | None = None,
    *,
    wbound: float | None = None,
    data: Any = None,
    weights: str = "exact",
    algorithm: str = "auto",
    nstart: int = 20,
    max_iter: int = MAX_ROUNDS,
    centers: Any = None,
    scale: bool = False,
    missing: str = "native",
    numeric: Any = None,
    categorical: Any = None,
    screen: Any = True,
    keep_data: bool = True,
    backend: str = "auto",
    rng: Any = None,
) -> SparseKMeansResult:
    """Sparse k-means clustering (Witten & Tibshirani 2010) for one L1 bound.

    Maximises the weighted between-cluster sum of squares ``sum_j w_j BCSS_j(C)``
    over partitions ``C`` into ``k`` clusters and weights with ``||w||_2 <= 1``,
    ``||w||_1 <= wbound``, ``w >= 0``: features with weight 0 do not take part.

    Parameters
    ----------
    x : DataFrame, 2-D array or formula
        Numeric data (rows = observations), or a formula (``"~ . - id"``) with
        ``data=``. Categorical columns are an error (use :func:`craft` for mixed data,
        or encode them yourself).
    data : DataFrame, optional
        The data a formula ``x`` is read from.
    k : int
        Number of clusters (or give ``centers``).
    wbound : float, optional
        L1 bound ``s`` on the weights, ``1 < s``; about ``sqrt(p)`` keeps every
        feature. Default ``0.5 sqrt(p)`` (``(1 + sqrt(p)) / 2`` for ``p <= 4``), as
        :func:`sparse_hclust` and the scikit-learn wrapper; choose it with
        :func:`kmeans_sparse_permute`.
    weights : {"exact", "sparcl"}
        ``"exact"``: the weight step is solved exactly (the L1 bound always holds;
        scale-invariant). ``"sparcl"``: sparcl 1.0.4's BinarySearch with its absolute
        tolerances, to reproduce published sparcl numbers.
    algorithm : {"auto", "hartigan-wong", "lloyd"}
        The k-means of the partition step. ``"auto"`` (default) is Hartigan–Wong in
        memory and Lloyd on Dask. Hartigan–Wong is R's ``kmeans`` default: it reaches
        lower within-cluster sums than Lloyd and, from the same centres, reproduces
        sparcl's partitions exactly; with random starts, the starts run as batched
        Lloyd iterations and the best are finished by Hartigan–Wong (see
        ``_lloyd.kmeans_multi_start``). It moves one point at a time, so it needs the
        rows in memory: on Dask, ``"hartigan-wong"`` is refused. ``"lloyd"`` is R's
        ``algorithm="Lloyd"`` (exact nearest centres, sequential sums) and gives the
        same result in memory and on Dask. R's spellings are accepted in any case
        (``"Hartigan-Wong"``, ``"Lloyd"``, ``"Forgy"``).
    nstart : int
        Random starts of the initial, unweighted k-means (sparcl's ``nstart=20``).
    max_iter : int, default 50
        Cap on the rounds (partition step + weight step), stopped when the weights'
        relative L1 change is ``<= 1e-4`` (sparcl's tolerance). The default converges
        on ordinary data (all of 321 fits of simulated and shipped data converged
        within 18 rounds); sparcl's cap is ``max_iter=6``, which stopped 22 % of them
        short: pass it to reproduce sparcl's numbers. A ``ConvergenceWarning`` when the
        weights are still changing by more than 1e-4 (relative L1) after the cap.
    centers : array (k, p), optional
        Starting centres for the initial k-means (``nstart`` is then ignored), as
        sparcl's ``centers``.
    scale : bool
        Standardise each feature (mean 0, sd 1) first. Default False, as sparcl
        (which never scales; its examples call ``scale(x)`` first).
    missing : {"native", "drop", "raise"}
        ``"native"`` (default): missing cells are skipped — partial distances in the
        partition step (which then runs Lloyd) and available-case sums of squares
        (each feature's rescaled by ``n / n_observed``). sparcl fails on NA.
    numeric, categorical : list of str, optional
        Override type detection.
    screen : bool or dict, default True
        Screen the columns whose kind was detected (identifiers and free text dropped,
        numbers stored as text parsed, rare levels of many-level categoricals lumped,
        integer codes named), each decision a ``DataWarning`` kept on the result
        (``.variables.screened``); ``False`` reads every column by its dtype;
        ``{"lump_min": 20}`` sets the rows a level needs not to be lumped. See the
        guide "How columns are read".
    keep_data : bool
        Keep the data on the result (for ``profiles`` and plots; never on Dask).
    backend : {"auto", "numpy", "dask"}
        ``"auto"``: the Dask backend when ``x`` (or ``data``) is a
        ``dask.dataframe.DataFrame``, else in memory. ``"numpy"`` computes a Dask
        DataFrame into memory first; ``"dask"`` runs an in-memory frame through the
        Dask backend. On Dask every step runs over the partitions (the labels stay
        with their partition; only per-cluster sums travel) and the result equals the
        in-memory ``algorithm="lloyd"`` fit: same labels, iterations and convergence,
        weights, centres and objectives equal up to rounding (1e-12 relative).
        ``labels`` is then a lazy Dask Series on the input's index. Install
        ``sparseclust[dask]``.
    rng : None, int or Generator
        Seed of the random starts (and sparcl's random restart of a partition step).

    Returns
    -------
    SparseKMeansResult
        The fit: labels, weights, centres, print and plots.

    Notes
    -----
    Follows sparcl's ``KMeansSparseCluster`` for one bound: initial partition by
    unweighted k-means; ``w = 1/sqrt(p)``; rounds of (partition step from the current
    clusters' means on ``x[:, w > 0] * sqrt(w)``, weights from the partition's BCSS)
    until the weights settle. Differences from sparcl: exact weights by default; a
    single non-zero weight works; distances to the k centres, O(nkq), instead of an
    (n+k)^2 matrix; labels are 0-based; centres, convergence and ``predict`` are
    returned; missing values are handled. R -> Python:
    ``KMeansSparseCluster(x, K=3, wbounds=4)[[1]]`` is ``sparse_kmeans(x, 3, wbound=4)``.

    Examples
    --------
    >>> from sparseclust.simulate import sparse_sim
    >>> sim = sparse_sim(n_per_cluster=20, p=50, q=10, rng=0)
    >>> fit = sparse_kmeans(sim.data, 3, wbound=3, rng=1)
    >>> fit.n_nonzero <= 50, round(float(fit.weights.sum()), 6) <= 3
    (True, True)
    """
    call = call_string(sparse_kmeans, locals())
    x, data, lazy = route_backend(x, data, backend)
    algorithm = _algorithm(algorithm, lazy)
    generator = as_rng(rng)
    table, ex, sc, prep = _read_blocks(x, data, numeric, categorical, missing, scale, lazy)
    n, p = ex.n, len(table.numeric_names)
    k, c = _check_k(k, n, centers, p)
    s = _check_wbound(wbound, p)
    c = _centers_scaled(c, sc)
    seed = int(generator.integers(2**63 - 1))
    settings = FitSettings(weights, algorithm, nstart, max_iter, c, warm=False)
    (out,) = fit_bounds(ex, p, k, np.array([s]), settings, seed)
    warn_fits([out], "sparse_kmeans", max_iter)
    params = {
        "k": k,
        "wbound": s,
        "weights": weights,
        "algorithm": algorithm,
        "nstart": nstart,
        "max_iter": max_iter,
        "scale": scale,
        "seed": seed,
        "backend": "dask" if lazy else "numpy",
    }
    return _result(
        out,
        table=table,
        ex=ex,
        k=k,
        wbound=s,
        mode=weights,
        algorithm=algorithm,
        call=call,
        params=params,
        scale=sc,
        keep_data=keep_data,
        prep=prep,
    )


def _check_wbounds(wbounds: Any, p: int, *, min_len: int = 1) -> np.ndarray:
    w = np.atleast_1d(np.asarray(wbounds, dtype=np.float64))
    if w.ndim != 1 or w.size < min_len:
        raise ValueError(
            f"wbounds must be a sequence of at least {min_len} bounds; got {wbounds!r}."
        )
    if not np.isfinite(w).all() or (w <= 1).any():
        raise ValueError(
            f"wbounds must all be finite and > 1 (a bound <= 1 leaves one non-zero weight at "
            f"most); got {w.tolist()}."
        )
    return w


@rules(**_FIT_RULES, warm_start=FLAG, wbounds=replace(WBOUNDS, min_len=1), progress=Progress())
@screens
def sparse_kmeans_path(
    x: Any = None,
    /,
    k: int | None = None,
    *,
    wbounds: Any = None,
    warm_start: bool = True,
    data: Any = None,
    weights: str = "exact",
    algorithm: str = "hartigan-wong",
    nstart: int = 20,
    max_iter: int = MAX_ROUNDS,
    centers: Any = None,
    scale: bool = False,
    missing: str = "native",
    numeric: Any = None,
    categorical: Any = None,
    screen: Any = True,
    keep_data: bool = True,
    progress: bool | None = None,
    rng: Any = None,
) -> SparseKMeansPath:
    """Sparse k-means over a sequence of bounds (sparcl's ``KMeansSparseCluster`` with a vector).

    ``wbounds`` defaults to sparcl's ``seq(1.1, sqrt(p), length = 20)``. With
    ``warm_start=True`` (default, as sparcl) every bound starts from the previous
    bound's final partition, in the order given, so the answer depends on the order
    (and can lock in a poorer partition than an independent fit);
    ``warm_start=False`` starts every bound from the same initial k-means partition.
    Other arguments as :func:`sparse_kmeans`.

    Parameters
    ----------
    x : DataFrame, 2-D array or formula str
        The data, or a formula such as ``"~ . - id"`` with ``data=``.
    data : DataFrame, optional
        The data a formula ``x`` is read from.
    k : int
        Number of clusters.
    wbounds : sequence of float, optional
        The L1 bounds (each > 1), fitted in this order.
    warm_start : bool, default True
        Start every bound from the previous bound's partition (sparcl).
    weights, algorithm, nstart, max_iter, centers, scale, missing : see :func:`sparse_kmeans`
        As in :func:`sparse_kmeans`, passed to every fit.
    categorical, numeric : list of str, optional
        Columns whose kind is set by name, overriding detection by dtype.
    screen : bool or dict, default True
        Screen the columns whose kind was detected (identifiers and free text dropped,
        numbers stored as text parsed, rare levels of many-level categoricals lumped,
        integer codes named), each decision a ``DataWarning`` kept on the result
        (``.variables.screened``); ``False`` reads every column by its dtype;
        ``{"lump_min": 20}`` sets the rows a level needs not to be lumped. See the
        guide "How columns are read".
    keep_data : bool, default True
        Keep the data on the fits (for profiles and plots).
    progress : bool, optional
        A tqdm progress bar over the bounds (shown once they have run 2 s); default: on
        in an interactive terminal or notebook.
    rng : None, int or Generator
        Seeds the starts.

    Returns
    -------
    SparseKMeansPath
        One fit per bound and their table.

    Examples
    --------
    >>> from sparseclust.simulate import sparse_sim
    >>> sim = sparse_sim(n_per_cluster=10, p=20, q=5, rng=0)
    >>> path = sparse_kmeans_path(sim.data, 3, wbounds=[1.5, 2.5, 4.0], max_iter=30, rng=1)
    >>> path.table["n_nonzero"].is_monotonic_increasing
    True
    """
    call = call_string(sparse_kmeans_path, locals())
    algorithm = _algorithm(algorithm)
    generator = as_rng(rng)
    table, X, sc = _read(x, data, numeric, categorical, missing, scale, 2)
    n, p = X.shape
    k, c = _check_k(k, n, centers, p)
    if wbounds is None:
        wbounds = np.linspace(1.1, max(np.sqrt(p), 1.2), 20)
    wb = _check_wbounds(wbounds, p)
    c = _centers_scaled(c, sc)
    ex = one_block(X)
    settings = FitSettings(weights, algorithm, nstart, max_iter, c, warm=warm_start)
    seed = int(generator.integers(2**63 - 1))
    outs = fit_bounds(ex, p, k, wb, settings, seed, progress=bool(progress))
    warn_fits(outs, "sparse_kmeans_path", max_iter)
    fits = [
        _result(
            o,
            table=table,
            ex=ex,
            k=k,
            wbound=float(s),
            mode=weights,
            algorithm=algorithm,
            call=call,
            params={"k": k, "wbound": float(s), "weights": weights, "warm_start": warm_start},
            scale=sc,
            keep_data=keep_data,
            prep=None,
        )
        for o, s in zip(outs, wb, strict=True)
    ]
    tab = pd.DataFrame(
        {
            "wbound": wb,
            "n_nonzero": [f.n_nonzero for f in fits],
            "sum_weights": [float(f.weights.sum()) for f in fits],
            "objective": [f.objective for f in fits],
            "n_iter": [f.n_iter for f in fits],
            "converged": [f.converged for f in fits],
        }
    )
    return SparseKMeansPath(fits=tuple(fits), table=tab, warm_start=warm_start, call=call)


@rules(
    **_FIT_RULES,
    **PERMUTE_RULES,
    nvals=Int(min=2),
    warm_start=FLAG,
    backend=BACKEND,
    sample_rows=Int(min=2),
)
@screens
def kmeans_sparse_permute(
    x: Any = None,
    /,
    k: int | None = None,
    *,
    wbounds: Any = None,
    nperms: int = 25,
    nvals: int = 10,
    data: Any = None,
    rule: str = "max",
    weights: str = "exact",
    algorithm: str = "auto",
    nstart: int = 20,
    max_iter: int = MAX_ROUNDS,
    centers: Any = None,
    warm_start: bool = True,
    scale: bool = False,
    missing: str = "native",
    numeric: Any = None,
    categorical: Any = None,
    screen: Any = True,
    n_jobs: int | None = None,
    progress: bool | None = None,
    keep_data: bool = True,
    backend: str = "auto",
    sample_rows: int = 20_000,
    rng: Any = None,
) -> PermuteResult:
    """Choose the L1 bound of sparse k-means by the permutation gap statistic (sparcl's
    ``KMeansSparseCluster.permute``) and return the fit at it.

    For each bound ``s`` the objective ``O(s) = sum_j w_j BCSS_j`` of the fit on the
    data is compared with ``O*_b(s)`` on ``nperms`` data sets whose columns were
    permuted independently: ``gap(s) = log O(s) - mean_b log O*_b(s)``.

    Parameters
    ----------
    x, k, data : see :func:`sparse_kmeans`
        As :func:`sparse_kmeans`.
    wbounds : sequence of float, optional
        At least two bounds > 1. Default sparcl's
        ``exp(seq(log(1.2), log(0.9 sqrt(p)), length = nvals))``.
    nperms : int
        Permuted data sets (sparcl's 25).
    nvals : int
        Length of the default grid.
    rule : {"max", "1se"}
        The bound with the largest gap (sparcl), or the smallest bound whose gap is
        within one sd of the largest (the rule sparcl's documentation describes).
    weights, algorithm, nstart, max_iter, centers, scale, missing : see :func:`sparse_kmeans`
        As :func:`sparse_kmeans`, and passed to every fit (sparcl ignores its
        ``nstart``/``maxiter`` here).
    warm_start : bool
        True (default, as sparcl): the gap statistic is computed along sparcl's
        warm-started path, on the data and on every permuted copy: each bound is
        fitted from the previous bound's partition, in the order given (the default
        grid increases; so should a grid given for this purpose). Along
        the path the weights stop changing once the L1 bound no longer binds, so the
        gap curve is flat there and its first maximum is the first bound that
        reaches the plateau: the bound sparcl chooses (20 of 20 seeds of the slides'
        design, ``tests/_sparse/test_sparcl_choice.py``). The returned ``best`` is
        then refitted at the chosen bound from the data's initial partition (sparcl's
        refit ``KMeansSparseCluster(x, K, wbounds = bestw)``, with the tuning's
        start): the path can lock in a poorer partition. False: every bound is an
        independent fit from the same initial partition and ``best`` is the very fit
        the gap saw; its gap keeps creeping up (by about 1e-3) past the point where
        every weight is non-zero, so the first maximum tends to be the largest bound
        (sparcl chose the same bound on 5 of those 20 seeds).
    categorical, numeric : list of str, optional
        Columns whose kind is set by name, overriding detection by dtype.
    screen : bool or dict, default True
        Screen the columns whose kind was detected (identifiers and free text dropped,
        numbers stored as text parsed, rare levels of many-level categoricals lumped,
        integer codes named), each decision a ``DataWarning`` kept on the result
        (``.variables.screened``); ``False`` reads every column by its dtype;
        ``{"lump_min": 20}`` sets the rows a level needs not to be lumped. See the
        guide "How columns are read".
    keep_data : bool, default True
        Keep the data on the fits (for profiles and plots).
    n_jobs : int, optional
        Permutations run in parallel with joblib (``-1``: all cores).
    progress : bool, optional
        A tqdm progress bar over the permutations (shown once they have run 2 s).
        Default: on in an interactive terminal or a notebook, off otherwise.
    backend : {"auto", "numpy", "dask"}
        As :func:`sparse_kmeans`.
    sample_rows : int
        Dask backend only: the permutation null needs every column permuted over all
        rows, which a partitioned data set cannot do cheaply, so the gaps (on the
        data and on the permuted copies) are computed in memory on a uniform random
        sample of this many rows (all rows when there are fewer: then the gaps are
        the in-memory ones). The fits at every bound, ``best`` among them, are on
        all rows, on Dask. ``params["gap_rows"]`` records the rows used.
    rng : None, int or Generator
        Each permutation draws its own seed from ``rng``: reproducible for any
        ``n_jobs``.

    Returns
    -------
    PermuteResult
        ``table`` (wbound, n_nonzero, gap, sd_gap), ``best_wbound``, ``best`` (the fit
        on the data at it), ``fits`` (every bound), ``tots``, ``permtots``.

    Examples
    --------
    >>> from sparseclust.simulate import sparse_sim
    >>> sim = sparse_sim(n_per_cluster=10, p=30, q=5, rng=0)
    >>> perm = kmeans_sparse_permute(sim.data, 3, nperms=5, rng=1)
    >>> list(perm.table.columns)
    ['wbound', 'n_nonzero', 'gap', 'sd_gap']
    >>> perm.best.wbound == perm.best_wbound
    True
    """
    call = call_string(kmeans_sparse_permute, locals())
    x, data, lazy = route_backend(x, data, backend)
    algorithm = _algorithm(algorithm, lazy)
    generator = as_rng(rng)
    table, ex, sc, prep = _read_blocks(x, data, numeric, categorical, missing, scale, lazy)
    n, p = ex.n, len(table.numeric_names)
    wb = _check_wbounds(_default_grid(p, nvals) if wbounds is None else wbounds, p, min_len=2)
    k, c = _check_k(k, n, centers, p)
    c = _centers_scaled(c, sc)
    settings = FitSettings(weights, algorithm, nstart, max_iter, c, warm=warm_start)
    seed_real = int(generator.integers(2**63 - 1))
    seeds = generator.integers(2**63 - 1, size=(nperms, 2))
    X, k = _gap_rows(ex, k, c, p, sample_rows, generator) if lazy else (ex.blocks[0], k)
    runs = run_permutations(
        X, k, wb, settings, seed_real, seeds, n_jobs=n_jobs, progress=bool(progress)
    )
    # on Dask the gaps are on a sample of the rows; the returned fits are on all rows
    outs = fit_bounds(ex, p, k, wb, settings, seed_real) if lazy else runs.fits
    params = {
        "k": k,
        "nperms": nperms,
        "rule": rule,
        "weights": weights,
        "algorithm": algorithm,
        "nstart": nstart,
        "max_iter": max_iter,
        "warm_start": warm_start,
        "scale": scale,
        "seed": seed_real,
        "backend": "dask" if lazy else "numpy",
        "gap_rows": X.shape[0],
        "perm_not_converged": runs.perm_not_converged,
    }
    same = {"table": table, "ex": ex, "k": k, "mode": weights, "algorithm": algorithm}
    same |= {"call": call, "scale": sc, "keep_data": keep_data, "prep": prep}
    fits = [
        _result(o, wbound=float(s), params={**params, "wbound": float(s)}, **same)
        for o, s in zip(outs, wb, strict=True)
    ]
    chosen = [outs[0]]

    def refit(i: int) -> SparseKMeansResult:  # the path's bound, refitted from the start
        init = None if lazy else runs.init  # in memory: the tuning's own partition
        chosen[0] = refit_bound(ex, p, k, wb, i, settings, seed_real, init)
        return _result(
            chosen[0], wbound=float(wb[i]), params={**params, "wbound": float(wb[i])}, **same
        )

    result = make_permute_result(
        wbounds=wb,
        fits=fits,
        tots=runs.tots,
        permtots=runs.permtots,
        n_nonzero=np.array([f.n_nonzero for f in fits]),
        rule=rule,
        null="observations",
        call=call,
        params=params,
        method="kmeans",
        refit=refit if warm_start else None,
    )
    # Only the returned fit warns; the others' convergence is counted in params (sparcl
    # stops every fit at maxiter silently).
    best = chosen[0] if warm_start else outs[result.best_index]
    warn_fits([best], "kmeans_sparse_permute (the chosen fit)", max_iter)
    params["data_not_converged"] = int(sum(not o.converged for o in outs))
    warn_grid_edge(result, p, "kmeans_sparse_permute", 1.2, 0.9)  # as _default_grid
    return result


def _default_grid(p: int, nvals: int) -> np.ndarray:
    """sparcl's default bounds, ``exp(seq(log(1.2), log(0.9 sqrt(p)), length = nvals))``."""
    if 0.9 * np.sqrt(p) <= 1.2:
        raise ValueError(
            f"the default grid of bounds needs p >= 2 features (got p={p}); with one "
            "feature there is nothing to select: use a plain k-means."
        )
    return np.exp(np.linspace(np.log(1.2), np.log(0.9 * np.sqrt(p)), nvals))


def _gap_rows(
    ex: Any, k: int, c: np.ndarray | None, p: int, sample_rows: int, generator: np.random.Generator
) -> tuple[np.ndarray, int]:
    """(rows, k) the gaps are computed on, on Dask: the null needs every column permuted
    over all rows, so a uniform random sample of ``sample_rows`` rows, in memory."""
    X = fetch_rows(ex, np.sort(generator.choice(ex.n, size=min(sample_rows, ex.n), replace=False)))
    return X, _check_k(k, X.shape[0], c, p)[0]
