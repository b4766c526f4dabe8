"""The result of :func:`~sparseclust.dpmeans`: :class:`DPMeansResult`."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._data.params import check_choice
from .._data.table import transform_like
from .._results.base import ClusterResult, labels_series
from .._results.format import fmt
from .core import design_matrix, nearest

__all__ = ["DPMeansResult"]


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

    Examples
    --------
    >>> from sparseclust import dpmeans
    >>> from sparseclust.simulate import sparse_sim
    >>> fit = dpmeans(sparse_sim(means=(0.0, 2.0, 4.0), rng=1).data, k=3)
    >>> type(fit).__name__, fit.n_clusters, fit.centers.shape
    ('DPMeansResult', 3, (3, 100))
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
        """Within-cluster sum of squared distances to the centre, per cluster.

        Examples
        --------
        >>> from sparseclust import dpmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = dpmeans(sparse_sim(means=(0.0, 2.0, 4.0), rng=1).data, k=3)
        >>> fit.within_ss.size, bool((fit.within_ss > 0).all())
        (3, True)
        """
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
        return design_matrix(self.table, self.center_, self.scale_)[0]

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

    def predict(self, newdata: Any, *, missing: str = "raise", unseen: str = "raise") -> pd.Series:
        """Assign rows of ``newdata`` to the nearest fitted centre (no new clusters).

        ``newdata`` must have the fitted variables (same names, kinds and levels);
        with ``missing="drop"`` rows with missing values get ``<NA>``. A categorical
        level the fit did not see is an error naming it (``unseen="raise"``) or gives
        its row the label ``<NA>`` with a ``DataWarning`` (``unseen="na"``).

        Parameters
        ----------
        newdata : DataFrame
            Rows with the fitted variables.
        missing : {"raise", "drop"}, default "raise"
            Rows with missing values: an error naming them, or label ``<NA>``.
        unseen : {"raise", "na"}, default "raise"
            A categorical level the fit did not see, as above.

        Returns
        -------
        Series
            ``Int64`` cluster labels on ``newdata``'s index.

        Examples
        --------
        >>> from sparseclust import dpmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> sim = sparse_sim(means=(0.0, 2.0, 4.0), rng=1)
        >>> fit = dpmeans(sim.data, k=3)
        >>> bool((fit.predict(sim.data) == fit.labels).all())
        True
        """
        check_choice("missing", missing, ["raise", "drop"])
        t = transform_like(self.variables, newdata, missing=missing, unseen=unseen)
        X = design_matrix(t, self.center_, self.scale_)[0]
        idx, _ = nearest(X, self.centers.to_numpy())
        return labels_series(t, idx)

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """2-D projection (first two principal components) of the data coloured by cluster.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; by default a new figure.
        **kwargs
            Passed to :func:`~sparseclust.plotting.plot_clusters`.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.

        Examples
        --------
        >>> from sparseclust import dpmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = dpmeans(sparse_sim(means=(0.0, 2.0, 4.0), rng=1).data, k=3)
        >>> import matplotlib.pyplot as plt
        >>> ax = fit.plot()
        >>> ax.get_title()
        'DP-means: 3 clusters'
        >>> plt.close(ax.figure)
        """
        from .. import plotting

        return plotting.plot_clusters(self, ax=ax, **kwargs)

    def plot_objective(self, ax: Any = None, **kwargs: Any) -> Any:
        """The objective after each pass.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; by default a new figure.
        **kwargs
            Passed to :func:`~sparseclust.plotting.plot_objective`.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.

        Examples
        --------
        >>> from sparseclust import dpmeans
        >>> from sparseclust.simulate import sparse_sim
        >>> fit = dpmeans(sparse_sim(means=(0.0, 2.0, 4.0), rng=1).data, k=3)
        >>> import matplotlib.pyplot as plt
        >>> ax = fit.plot_objective()
        >>> ax.get_xlabel(), ax.get_ylabel()
        ('iteration', 'objective')
        >>> plt.close(ax.figure)
        """
        from .. import plotting

        return plotting.plot_objective(self, ax=ax, **kwargs)
