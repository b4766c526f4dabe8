"""Permutation (gap) tuning of the L1 bound: the shared statistics and result.

``kmeans_sparse_permute`` (in :mod:`sparseclust._sparse.kmeans`) and
``hclust_sparse_permute`` (in :mod:`sparseclust._sparse.hclust`) compute the objective on the
data, ``O(s)``, and on ``nperms`` permuted data sets, ``O*(s)``, for every bound ``s``;
this module turns them into the gap table and the choice of ``s`` and holds the result.

The gap is sparcl's: ``log O(s) - mean_b log O*_b(s)``, its sd the sample sd
(``ddof=1``) of ``log O*_b(s)`` (no ``sqrt(1 + 1/B)`` factor). ``rule="max"`` picks
the first maximum (sparcl); ``rule="1se"`` the smallest ``s`` whose gap is within one
sd of the maximum (the rule sparcl's documentation describes but does not implement).
"""

from __future__ import annotations

import html
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._data.params import user_stacklevel
from .._results.base import Printed
from .._results.format import fmt
from .._results.summary import Summary
from .._tuning.gap import choose_by_gap, gap_statistics
from ..exceptions import CalibrationWarning

__all__ = ["PermuteResult", "make_permute_result", "warn_grid_edge"]


@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class PermuteResult(Printed):
    """Result of :func:`~sparseclust.kmeans_sparse_permute` / :func:`~sparseclust.hclust_sparse_permute`.

    Attributes
    ----------
    table : DataFrame
        One row per bound: ``wbound``, ``n_nonzero`` (non-zero weights of the fit on
        the data), ``gap``, ``sd_gap`` (printed like sparcl's table).
    best_wbound : float
        The chosen bound (by ``rule``).
    best_index : int
        Its row in ``table``.
    best : SparseKMeansResult or SparseHClustResult
        The fitted model at ``best_wbound`` (sparcl returns none and refits with new
        random starts). Hierarchical, and k-means with ``warm_start=False``: the very
        fit whose objective entered the gap statistic. K-means with the warm-started
        path (the default): the fit at ``best_wbound`` from the data's initial
        partition (sparcl's refit ``KMeansSparseCluster(x, K, wbounds = bestw)``; the
        path can lock in a poorer partition).
    fits : tuple
        The fit on the data at every bound, in ``table`` order (the tuning's fits:
        along the path when warm-started).
    tots : ndarray
        Objective on the data per bound, ``O(s)``.
    permtots : ndarray
        Objective per bound (rows) and permutation (columns), ``O*(s)``.
    rule : {"max", "1se"}
    null : str
        What was permuted (``"observations"``: each feature's values across rows;
        ``"dissimilarities"``: sparcl's hierarchical null).
    nperms : int
    call : str
    params : dict
    dists : Dissimilarities or None
        Hierarchical: the data's dissimilarities, for the fit at the chosen bound
        without preparing them again, ``sparse_hclust(dists=perm.dists,
        wbound=perm.best_wbound, method="complete")`` (sparcl's ``perm.out$dists``).

    Examples
    --------
    >>> from sparseclust import kmeans_sparse_permute
    >>> from sparseclust.simulate import sparse_sim
    >>> perm = kmeans_sparse_permute(sparse_sim(rng=1).data, 3, wbounds=[2, 5], nperms=3, rng=1)
    >>> type(perm).__name__, len(perm.table), perm.best_wbound in (2.0, 5.0)
    ('PermuteResult', 2, True)
    """

    table: pd.DataFrame
    best_wbound: float
    best_index: int
    best: Any
    fits: tuple
    tots: np.ndarray
    permtots: np.ndarray
    rule: str
    null: str
    nperms: int
    call: str
    params: dict
    method: str = "kmeans"
    dists: Any = None

    titles: ClassVar[dict[str, str]] = {
        "kmeans": "Sparse K-means Clustering",
        "hclust": "Sparse Hierarchical Clustering",
    }

    @property
    def labels(self) -> pd.Series:
        """Cluster labels of the best fit (k-means; for hierarchical fits use ``best.cut(k)``).

        Examples
        --------
        >>> from sparseclust import kmeans_sparse_permute
        >>> from sparseclust.simulate import sparse_sim
        >>> sim = sparse_sim(n_per_cluster=10, p=30, q=5, rng=0)
        >>> perm = kmeans_sparse_permute(sim.data, 3, nperms=5, rng=1)
        >>> perm.labels.equals(perm.best.labels)
        True
        """
        return self.best.labels

    @property
    def weights(self) -> pd.Series:
        """Feature weights of the best fit.

        Examples
        --------
        >>> from sparseclust import kmeans_sparse_permute
        >>> from sparseclust.simulate import sparse_sim
        >>> sim = sparse_sim(n_per_cluster=10, p=30, q=5, rng=0)
        >>> perm = kmeans_sparse_permute(sim.data, 3, nperms=5, rng=1)
        >>> perm.weights.size, bool(perm.weights.equals(perm.best.weights))
        (30, True)
        """
        return self.best.weights

    def _printed_table(self) -> pd.DataFrame:
        t = self.table.rename(
            columns={
                "wbound": "Wbound",
                "n_nonzero": "# Non-Zero W's",
                "gap": "Gap Statistic",
                "sd_gap": "Standard Deviation",
            }
        )
        t.index = pd.RangeIndex(1, len(t) + 1)
        return t.round(4)

    def _lines(self) -> list[str]:
        rule = "largest gap statistic" if self.rule == "max" else "one-SE rule on the gap"
        return [
            f"Tuning parameter selection results for {self.titles[self.method]}:",
            f"Call: {self.call}",
            self._printed_table().to_string(),
            f"Tuning parameter chosen by the {rule}: {fmt(self.best_wbound)} "
            f"({int(self.table['n_nonzero'].iloc[self.best_index])} non-zero weights; "
            f"{self.nperms} permutations of the {self.null})",
            "The fit at it is .best; .plot() shows the gap curve.",
        ]

    def _repr_html_(self) -> str:
        # the printed table's place (line 2) taken by its HTML rendering
        lines = self._lines()
        return (
            f"<div><b>{html.escape(lines[0])}</b><br>{html.escape(lines[1])}"
            f"{self._printed_table().to_html()}{html.escape(lines[3])}</div>"
        )

    # ------------------------------------------------------------ broom-style tables
    def tidy(self) -> pd.DataFrame:
        """One row per bound tried: ``wbound``, ``n_nonzero``, ``gap``, ``sd_gap`` and
        ``chosen``.

        Returns
        -------
        pandas.DataFrame
            One row per bound tried.

        Examples
        --------
        >>> from sparseclust import kmeans_sparse_permute
        >>> from sparseclust.simulate import sparse_sim
        >>> sim = sparse_sim(n_per_cluster=10, p=30, q=5, rng=0)
        >>> perm = kmeans_sparse_permute(sim.data, 3, nperms=5, rng=1)
        >>> tidy = perm.tidy()
        >>> list(tidy.columns), int(tidy["chosen"].sum())
        (['wbound', 'n_nonzero', 'gap', 'sd_gap', 'chosen'], 1)
        """
        out = self.table.reset_index(drop=True)
        out["chosen"] = np.arange(len(out)) == self.best_index
        return out

    def glance(self) -> pd.DataFrame:
        """The best fit's :meth:`glance` row with the tuning: ``rule``, ``nperms``,
        ``gap`` and ``sd_gap`` at the chosen bound.

        Returns
        -------
        pandas.DataFrame
            One row.

        Examples
        --------
        >>> from sparseclust import kmeans_sparse_permute
        >>> from sparseclust.simulate import sparse_sim
        >>> sim = sparse_sim(n_per_cluster=10, p=30, q=5, rng=0)
        >>> perm = kmeans_sparse_permute(sim.data, 3, nperms=5, rng=1)
        >>> row = perm.glance().iloc[0]
        >>> row["rule"], int(row["nperms"])
        ('max', 5)
        """
        row = self.table.iloc[self.best_index]
        return self.best.glance().assign(
            rule=self.rule, nperms=self.nperms, gap=float(row["gap"]), sd_gap=float(row["sd_gap"])
        )

    def augment(self, data: pd.DataFrame) -> pd.DataFrame:
        """``data`` with the best fit's ``.cluster`` (:meth:`ClusterResult.augment`).

        Parameters
        ----------
        data : pandas.DataFrame
            The rows the fit was given (same index).

        Returns
        -------
        pandas.DataFrame
            A copy of ``data`` with the ``.cluster`` column.

        Examples
        --------
        >>> from sparseclust import kmeans_sparse_permute
        >>> from sparseclust.simulate import sparse_sim
        >>> sim = sparse_sim(n_per_cluster=10, p=30, q=5, rng=0)
        >>> perm = kmeans_sparse_permute(sim.data, 3, nperms=5, rng=1)
        >>> perm.augment(sim.data)[".cluster"].nunique()
        3
        """
        return self.best.augment(data)

    def summary(self) -> Summary:
        """The gap table and the chosen bound, plus the best fit's weights.

        Returns
        -------
        Summary
            Prints like R's ``summary()``; ``.tables`` holds the DataFrames.

        Examples
        --------
        >>> from sparseclust import kmeans_sparse_permute
        >>> from sparseclust.simulate import sparse_sim
        >>> sim = sparse_sim(n_per_cluster=10, p=30, q=5, rng=0)
        >>> perm = kmeans_sparse_permute(sim.data, 3, nperms=5, rng=1)
        >>> sorted(perm.summary().tables)
        ['best_weights', 'chosen', 'gap']
        """
        chosen = pd.DataFrame(
            {
                "rule": [self.rule],
                "best_wbound": [self.best_wbound],
                "n_nonzero": [int(self.table["n_nonzero"].iloc[self.best_index])],
                "nperms": [self.nperms],
                "null": [self.null],
            }
        )
        nz = self.best.weights[self.best.weights > 0].sort_values(ascending=False)
        return Summary(
            title=f"{self.titles[self.method]}: permutation tuning",
            call=self.call,
            tables={"gap": self.table, "chosen": chosen, "best_weights": nz.to_frame("weight")},
            notes=[
                "gap = log O(s) - mean log O*(s) over permuted data; sd_gap is the sample "
                "sd of log O*(s) (as sparcl)."
            ],
        )

    def to_frame(self) -> pd.DataFrame:
        """The gap table.

        Returns
        -------
        pandas.DataFrame
            A copy of ``table``: one row per bound tried.

        Examples
        --------
        >>> from sparseclust import kmeans_sparse_permute
        >>> from sparseclust.simulate import sparse_sim
        >>> sim = sparse_sim(n_per_cluster=10, p=30, q=5, rng=0)
        >>> perm = kmeans_sparse_permute(sim.data, 3, nperms=5, rng=1)
        >>> perm.to_frame().columns.tolist()
        ['wbound', 'n_nonzero', 'gap', 'sd_gap']
        """
        return self.table.copy()

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Plot the gap against the number of non-zero weights (log x axis), as sparcl's plot.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; by default a new figure.
        **kwargs
            Passed to :func:`~sparseclust.plotting.plot_gap`.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.

        Examples
        --------
        >>> from sparseclust import kmeans_sparse_permute
        >>> from sparseclust.simulate import sparse_sim
        >>> sim = sparse_sim(n_per_cluster=10, p=30, q=5, rng=0)
        >>> perm = kmeans_sparse_permute(sim.data, 3, nperms=5, rng=1)
        >>> import matplotlib.pyplot as plt
        >>> ax = perm.plot()
        >>> ax.get_xscale()
        'log'
        >>> plt.close(ax.figure)
        """
        from ..plotting import plot_gap

        return plot_gap(self, ax=ax, **kwargs)

    plot_gap = plot

    def plot_weights(self, ax: Any = None, **kwargs: Any) -> Any:
        """Plot the weights of the best fit against feature index.

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
        >>> from sparseclust import kmeans_sparse_permute
        >>> from sparseclust.simulate import sparse_sim
        >>> sim = sparse_sim(n_per_cluster=10, p=30, q=5, rng=0)
        >>> perm = kmeans_sparse_permute(sim.data, 3, nperms=5, rng=1)
        >>> import matplotlib.pyplot as plt
        >>> ax = perm.plot_weights()
        >>> ax.get_xlabel()
        'feature index'
        >>> plt.close(ax.figure)
        """
        return self.best.plot_weights(ax=ax, **kwargs)


#: A grid starting at or below this bound reaches the sparsest fits (about two
#: features): its first bound chosen needs no warning.
LOW_ENOUGH = 1.5


def warn_grid_edge(result: PermuteResult, p: int, func: str, low: float, high: float) -> None:
    """A :class:`~sparseclust.exceptions.CalibrationWarning` when the chosen bound is
    the first or the last of a grid of 3 or more that stops short of sparcl's default
    range (``low`` to ``high sqrt(p)``: 1.2 to 0.9 sqrt(p) for k-means, 1.1 to
    0.7 sqrt(p) hierarchical; a first bound up to :data:`LOW_ENOUGH` counts as the
    start): the best bound may lie beyond the grid."""
    wb = result.table["wbound"].to_numpy()
    i, last = result.best_index, len(wb) - 1
    at_low = i == 0 and wb[0] > max(low, LOW_ENOUGH)
    at_high = i == last and wb[-1] < high * np.sqrt(p) * (1 - 1e-9)
    if len(wb) < 3 or not (at_low or at_high):
        return
    if at_low:
        side, towards = "smallest", f"down to {max(low, LOW_ENOUGH):g} or below"
    else:
        side, towards = "largest", f"up to {high * np.sqrt(p):.3g} ({high:g} sqrt(p))"
    warnings.warn(
        f"{func}: the chosen bound {fmt(wb[i])} is the {side} of wbounds "
        f"[{fmt(wb[0])} ... {fmt(wb[-1])}]: the gap may be larger beyond the grid. Extend "
        f"the bounds {towards}, or omit them for sparcl's default grid.",
        CalibrationWarning,
        stacklevel=user_stacklevel(),
    )


def make_permute_result(
    *,
    wbounds: np.ndarray,
    fits: list,
    tots: np.ndarray,
    permtots: np.ndarray,
    n_nonzero: np.ndarray,
    rule: str,
    null: str,
    call: str,
    params: dict,
    method: str,
    refit: Callable[[int], Any] | None = None,
    dists: Any = None,
) -> PermuteResult:
    """Gap table, choice and result from the objectives (shared by both methods).

    ``refit(i)``, when given, makes the returned ``best`` at the chosen row ``i`` (else
    ``fits[i]``)."""
    wbounds = np.asarray(wbounds, dtype=np.float64)
    permtots = np.asarray(permtots, dtype=np.float64).reshape(wbounds.size, -1)
    gaps, sds = gap_statistics(tots, permtots)
    best = choose_by_gap(wbounds, gaps, sds, rule)
    table = pd.DataFrame(
        {
            "wbound": wbounds,
            "n_nonzero": np.asarray(n_nonzero, dtype=np.int64),
            "gap": gaps,
            "sd_gap": sds,
        }
    )
    return PermuteResult(
        table=table,
        best_wbound=float(wbounds[best]),
        best_index=best,
        best=fits[best] if refit is None else refit(best),
        fits=tuple(fits),
        tots=np.asarray(tots, dtype=np.float64),
        permtots=permtots,
        rule=rule,
        null=null,
        nperms=permtots.shape[1],
        call=call,
        params=params,
        method=method,
        dists=dists,
    )
