"""The result of a CRAFT fit: :class:`CraftResult` and its builder from the chosen restart."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._data.params import check_choice
from .._data.table import ColumnTable, transform_like
from .._results.base import ClusterResult, labels_series
from .._results.format import fmt
from . import core as core
from .prepared import Prepared
from .select_k import cap_note
from .select_m import m_verdict

__all__ = ["ALL_SELECTED_NOTE", "CraftResult", "build_result"]


#: The start of the summary note of a fit in which every cluster selected every feature.
ALL_SELECTED_NOTE = "All features were selected by every cluster"


@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class CraftResult(ClusterResult):
    """Result of :func:`craft`.

    Attributes
    ----------
    labels : Series (Int64)
        0-based clusters on the input index (``<NA>`` for rows dropped).
    selected : DataFrame of bool
        One row per cluster, one column per input variable: feature selected for
        the cluster (the paper's v).
    centers : DataFrame
        Numeric cluster means in the data's own units (clusters x numeric variables).
    sds : DataFrame
        Numeric within-cluster standard deviations (own units; the sigma used,
        floors included).
    level_shares : DataFrame
        Categorical level shares per cluster (smoothed), columns ``(variable, level)``.
    lam, m, rho, F0, F_delta : float
        Penalty and prior constants.
    lam_method : str
        ``"given"``, ``"calibrated"`` (``k=``: lambda set to give ``k`` clusters, by
        bisection or, for a seeded run, as its fixed-point lambda), ``"farthest_first"``
        or, with K chosen automatically, ``"stability"`` or ``"gap"`` (the ``k_method``).
    k : int or None
        The number of clusters asked for (or chosen automatically).
    objective : ndarray
        The CRAFT objective after every pass (the asymptotic objective of the paper).
    neg_loglik : float
        Negative log-likelihood with Gaussian normalisers (the restart criterion).
    budget, eps_c, eps_v : selection settings.
    restarts : DataFrame
        One row per restart: kind (``"calibrated"``, ``"seeded"``, ``"given"`` or
        ``"farthest_first"``), lambda, clusters, n_iter, converged, criterion, chosen.
        A seeded run's lambda is the smallest (>= 0) at which it is a fixed point.
    calibration : DataFrame or None
        (lam, n_clusters) of every fit tried while calibrating the chosen restart.
    k_selection : DataFrame or None
        When the number of clusters was chosen automatically, its criterion table:
        ``k``, ``stability`` and ``sd_stability`` (mean and sd of the adjusted Rand
        index over the pairs of subsample fits, K >= 2), ``se_stability`` (the
        jackknife standard error of that mean), ``fits`` (the subsamples fitted at
        K: fewer when the sequential test left K early), ``gap`` and ``sd_gap`` (K =
        1 and 2 for the stability method's test, every K for ``k_method="gap"``,
        which also gives ``nll`` and ``ref_nll``) and ``chosen``. Its ``attrs``
        record ``rows`` (the rows K was chosen on: a seeded subsample of
        ``k_sample_rows`` rows of larger data), ``n_obs`` (the data's rows),
        ``k_method``, ``flat`` (the chosen K does not beat a neighbour beyond noise)
        and ``at_cap`` (``"k_max"`` or ``"rows"`` when the chosen K is the largest
        candidate, else ``""``).
    m_selection : DataFrame or None
        When the budget was chosen from the data (``m="auto"``), its criterion table:
        one row per budget compared, ``m``, ``n_numeric`` and ``n_categorical``
        (features selected per cluster), ``n_clusters``, ``neg_loglik``, ``n_params``,
        ``bic`` (of the best of the budget's first restarts) and ``chosen``.

    Examples
    --------
    >>> from sparseclust import craft
    >>> from sparseclust.simulate import craft_fig2a
    >>> fit = craft(craft_fig2a(n_per_cluster=30, rng=0).data, m=1 / 3, k=3, rng=0)
    >>> type(fit).__name__, fit.n_clusters, fit.selected.shape
    ('CraftResult', 3, (3, 24))
    """

    selected: pd.DataFrame
    centers: pd.DataFrame
    sds: pd.DataFrame
    level_shares: pd.DataFrame
    lam: float
    lam_method: str
    k: int | None
    m: float
    rho: float
    F0: float
    F_delta: float
    objective: np.ndarray
    neg_loglik: float
    budget: str
    eps_c: float | None
    eps_v: float | None
    scale: bool
    restarts: pd.DataFrame
    calibration: pd.DataFrame | None = None
    k_selection: pd.DataFrame | None = None
    m_selection: pd.DataFrame | None = None
    _state: Any = None
    _prep: Any = None

    method_name: ClassVar[str] = "CRAFT"
    plot_hint: ClassVar[str] = ".plot_subspaces() for the selected features"

    @property
    def objective_path(self) -> np.ndarray:
        """Alias of ``objective`` (the trace).

        Examples
        --------
        >>> from sparseclust import craft
        >>> from sparseclust.simulate import craft_fig2a
        >>> fit = craft(craft_fig2a(n_per_cluster=30, rng=0).data, m=1 / 3, k=3, rng=0)
        >>> bool((fit.objective_path == fit.objective).all())
        True
        """
        return self.objective

    def _headline(self) -> str:
        return (
            f"CRAFT (m={fmt(self.m)}, lambda={fmt(self.lam)}, {self.lam_method}, "
            f"{self.budget} budget) with {self.n_clusters} clusters"
        )

    def _detail_lines(self) -> list[str]:
        sel = self.selected
        lines = [
            f"Features selected per cluster: {', '.join(str(int(s)) for s in sel.sum(axis=1))} "
            f"of {sel.shape[1]}"
        ]
        for k in range(min(len(sel), 6)):
            names = list(sel.columns[sel.iloc[k].to_numpy()])
            shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
            lines.append(f"  cluster {k}: {shown}")
        if len(sel) > 6:
            lines.append(f"  ... {len(sel) - 6} more clusters")
        if self.k is not None and self.k != self.n_clusters:
            lines.append(f"Asked for k={self.k}; got {self.n_clusters} clusters.")
        if self._k_subsample():
            lines.append(f"{self._k_subsample()}; the clusters were fitted on all rows.")
        if self.m_selection is not None:
            lines.append(f"{m_verdict(self.m_selection)} (see m_selection).")
        if self._chosen_run().startswith("seeded"):
            lines.append(
                f"Reported run: {self._chosen_run()}, at the smallest lambda where it is "
                "a fixed point."
            )
        return lines

    @cached_property
    def selection_frequency(self) -> pd.Series:
        """Share of clusters that select each variable, highest first.

        Examples
        --------
        >>> from sparseclust import craft
        >>> from sparseclust.simulate import craft_fig2a
        >>> fit = craft(craft_fig2a(n_per_cluster=30, rng=0).data, m=1 / 3, k=3, rng=0)
        >>> fit.selection_frequency.name, float(fit.selection_frequency.max()) <= 1
        ('share_of_clusters', True)
        """
        return (
            self.selected.mean(axis=0)
            .sort_values(ascending=False, kind="stable")
            .rename("share_of_clusters")
        )

    @cached_property
    def relevance(self) -> pd.DataFrame:
        """How much each variable separates each cluster: the drop in the CRAFT objective
        when the variable is selected for the cluster, in nats (clusters x variables,
        labelled as :attr:`selected`).

        For cluster k and variable d: the cost of the cluster's rows with d following
        the whole data's distribution (unselected) minus their cost with d following
        the cluster's own (selected), minus ``F_delta`` (the objective's price of one
        selected cell; 0 at ``m=0.5``), all else as fitted (no refit). Positive: the
        selection saves that much; near 0 or negative: the cluster does not differ
        from the whole data on d. Selected and unselected cells are computed alike,
        so an unselected cell says what selecting it would save.

        Categorical d: ``G_d - G_kd`` of the paper's selection step, the summed
        ``-log eta_0d(x) + log eta_kd(x)`` (about ``n_k`` times the Kullback-Leibler
        divergence of the cluster's level shares from the global ones). Numeric d:
        the generative model's Gaussian terms, ``(x - zeta_d)^2 / (2 sigma_d^2) + log
        sigma_d`` minus ``(x - zeta_kd)^2 / (2 sigma_kd^2) + log sigma_kd`` (about
        ``n_k`` times the divergence of the cluster's normal from the global one),
        the terms of the restart criterion :attr:`neg_loglik`: the asymptotic cost
        alone charges every selected numeric variable ``n_k / 2`` whatever the data,
        so it cannot rank them. Both are log-likelihood ratios, on one scale, and a
        numeric relevance does not depend on the variable's units or on ``scale=``.
        Missing cells add nothing. DP-RF (:func:`~sparseclust.dp_rf`) costs squared
        distances: its relevance is the cluster's between-cluster sum of squares on the
        column, ``n_k (zeta_kd - zeta_d)^2``, minus ``F_delta``. Needs the fit's rows
        in memory (not the Dask backend).

        Examples
        --------
        >>> from sparseclust import craft
        >>> from sparseclust.simulate import craft_fig2a
        >>> fit = craft(craft_fig2a(n_per_cluster=30, rng=0).data, m=1 / 3, k=3, rng=0)
        >>> rel = fit.relevance
        >>> rel.shape == fit.selected.shape, bool((rel.columns == fit.selected.columns).all())
        (True, True)
        >>> bool(rel.where(fit.selected).mean().mean() > rel.where(~fit.selected).mean().mean())
        True
        """
        from .relevance import relevance_matrix

        prep: Prepared = self._prep
        if isinstance(prep.data, core.Blocked):
            raise ValueError(
                "relevance needs the fit's rows in memory; this fit ran on the Dask backend. "
                "Fit a sample in memory (craft(ddf.sample(...).compute(), ...)) for relevance."
            )
        kept = ~prep.table.dropped
        lab = self.labels.to_numpy(dtype=np.float64, na_value=np.nan)[kept].astype(np.intp)
        R = relevance_matrix(prep.data, self._state, lab, self.F_delta, self._cost_sigma)
        t = prep.table
        internal = t.numeric_names + t.categorical_names
        if list(self.selected.columns) != internal and set(self.selected.columns) == set(internal):
            frame = pd.DataFrame(R, index=self.selected.index, columns=internal)
            return frame[self.selected.columns].rename_axis(columns=self.selected.columns.name)
        return pd.DataFrame(R, index=self.selected.index, columns=self.selected.columns)

    def _summary_tables(self) -> dict[str, pd.DataFrame]:
        clusters = pd.DataFrame(
            {"size": self.sizes, "n_selected": self.selected.sum(axis=1).to_numpy()}
        )
        params = pd.DataFrame(
            {
                "value": [
                    fmt(self.lam, 6),
                    self.lam_method,
                    self.k,
                    fmt(self.m),
                    self._m_set_by(),
                    fmt(self.rho),
                    fmt(self.F0, 6),
                    fmt(self.F_delta, 6),
                    self.budget,
                    self.eps_c,
                    self.eps_v,
                    self.scale,
                    fmt(self.objective[-1], 6),
                    fmt(self.neg_loglik, 6),
                    self.n_iter,
                    self.converged,
                    self._restart_counts(),
                    self._chosen_run(),
                ]
            },
            index=[
                "lambda",
                "lambda set by",
                "k",
                "m",
                "m set by",
                "rho",
                "F0",
                "F_delta",
                "budget",
                "eps_c",
                "eps_v",
                "scale",
                "objective",
                "neg. log-lik",
                "iterations",
                "converged",
                "restarts",
                "chosen run",
            ],
        )
        freq = self.selection_frequency.to_frame()
        tables = {
            "clusters": clusters,
            "parameters": params,
            "selection_frequency": freq,
            "selected": self.selected.astype(int),
        }
        if not isinstance(self._prep.data, core.Blocked):
            tables["relevance"] = self.relevance
        if self.table is not None:
            tables["selected_profiles"] = self.selected_profiles()
        if self.k_selection is not None:
            tables["k_selection"] = self.k_selection
        if self.m_selection is not None:
            tables["m_selection"] = self.m_selection
        return tables

    def _m_set_by(self) -> str:
        """``"BIC over 6 budgets"`` when m was chosen from the data, else ``"given"``."""
        if self.m_selection is None:
            return "given"
        return f"BIC over {len(self.m_selection)} budgets"

    def _restart_counts(self) -> str:
        """``"3"``, or ``"3 calibrated + 3 seeded"`` when the restarts are of two kinds."""
        counts = self.restarts["kind"].value_counts(sort=False)
        if len(counts) < 2:
            return str(len(self.restarts))
        return " + ".join(f"{n} {kind}" for kind, n in counts.items())

    def _k_subsample(self) -> str:
        """``"K = 4 chosen on a subsample of 5,000 of 2,000,000 rows (stability)"`` when
        K was chosen automatically on a subsample (``k_sample_rows``), else ``""``."""
        tab = self.k_selection
        rows, n_obs = (tab.attrs.get("rows"), tab.attrs.get("n_obs")) if tab is not None else (0, 0)
        if not rows or not n_obs or rows >= n_obs:
            return ""
        how = tab.attrs.get("k_method", self.lam_method)
        return f"K = {self.k} chosen on a subsample of {rows:,} of {n_obs:,} rows ({how})"

    def _chosen_run(self) -> str:
        """Kind and number of the restart reported, e.g. ``"seeded (restart 4)"``."""
        r = self.restarts
        i = int(np.flatnonzero(r["chosen"].to_numpy())[0])
        return f"{r['kind'].iloc[i]} (restart {r.index[i]})"

    def _html_hidden(self) -> tuple[str, ...]:
        # the 0/1 matrix and the blanked profiles repeat the profiles and frequencies
        return ("selected", "selected_profiles")

    def _text_hidden(self) -> tuple[str, ...]:
        # every feature selected: the selected profiles are the profiles (a note says so)
        return ("selected_profiles",) if self._selects_all() else ()

    def _selects_all(self) -> bool:
        """Whether every cluster selected every feature (its selected profiles are then
        its profiles)."""
        return bool(self.selected.to_numpy().all())

    def _unselected(self) -> tuple[str, ...]:
        chosen = self.selected.any(axis=0)
        return tuple(str(v) for v in chosen.index[~chosen.to_numpy()])

    def selected_profiles(self) -> pd.DataFrame:
        """The profiles (as :meth:`profiles`) with cells of unselected features blanked (NaN).

        Returns
        -------
        pandas.DataFrame
            As :meth:`profiles`, NaN where the cluster does not select the feature.

        Examples
        --------
        >>> from sparseclust import craft
        >>> from sparseclust.simulate import craft_fig2a
        >>> fit = craft(craft_fig2a(n_per_cluster=30, rng=0).data, m=1 / 3, k=3, rng=0)
        >>> prof = fit.selected_profiles()
        >>> prof.shape == fit.profiles().shape, bool(prof.isna().any().any())
        (True, True)
        """
        prof = self.profiles()
        out = prof.copy()
        for k in self.selected.index:
            mask = ~self.selected.loc[k]
            unselected = [v for v in mask.index[mask.to_numpy()]]
            if unselected:
                rows = prof.index.get_level_values(0).isin(unselected)
                out.loc[rows, k] = np.nan
        return out

    def _notes(self) -> list[str]:
        notes = super()._notes()
        if self.scale and self.variables.numeric_names:
            notes.append(
                "Numeric variables were standardised (mean 0, sd 1) before clustering; "
                "centres and sds are reported in the original units."
            )
        t = self.table
        if (
            t is not None
            and t.missing == "native"
            and (np.isnan(t.numeric).any() or (t.codes < 0).any())
        ):
            notes.append(
                "Missing cells were handled natively: they add nothing to a point's "
                "cost and are left out of the cluster statistics."
            )
        if self._selects_all():
            notes.append(
                f"{ALL_SELECTED_NOTE} (m={fmt(self.m)}): the selected profiles are the "
                'profiles, printed once ("Profiles"; both stay in .tables).'
            )
        notes.append(
            "Restarts are compared by the model's negative log-likelihood with the "
            "Gaussian normalisers kept (see craft() Notes)."
        )
        tab = self.k_selection
        if tab is not None and "stability" in tab.columns:
            row = tab.set_index("k").loc[self.k]
            how = (
                "the gap test kept K = 1 (Gap(1) >= Gap(2) - sd)"
                if self.k == 1
                else f"the most stable K (mean adjusted Rand {row['stability']:.3f} between "
                "fits on pairs of subsamples; the gap test rejected K = 1)"
            )
            notes.append(f"K = {self.k} was chosen automatically: {how}. See k_selection.")
        elif tab is not None:
            notes.append(f"K = {self.k} was chosen by the gap statistic. See k_selection.")
        if tab is not None and cap_note(tab, self.k):
            notes.append(cap_note(tab, self.k))
        if self.m_selection is not None:
            notes.append(
                f"{m_verdict(self.m_selection)}: the BIC of the selected-feature model "
                "(craft() Notes), each budget scored on its first restarts; the result is "
                f"craft(m={fmt(self.m)}) with the same restarts."
            )
        if self._k_subsample():
            notes.append(
                f"{self._k_subsample()}, a seeded uniform subsample (k_sample_rows); the "
                f"restarts at k = {self.k} then ran on all rows, as craft(k={self.k}) runs them."
            )
        if self.restarts["kind"][self.restarts["chosen"]].eq("seeded").any():
            notes.append(
                f"The run reported is a seeded {self.n_clusters}-cluster run (k-means++-style "
                "seeding under the CRAFT cost, then CAF passes without new clusters); lambda "
                "is the smallest (>= 0) at which it is a fixed point of Algorithm 1: the "
                "largest smallest cost of a point minus D F0, or 0 when that is negative."
            )
        return notes

    #: sigma used in the costs instead of the clusters' own (DP-RF: 1/sqrt(2)).
    _cost_sigma: ClassVar[float | None] = None

    def _new_arrays(self, t: ColumnTable) -> tuple[np.ndarray, np.ndarray]:
        """Numeric block and codes of new data, as the fit saw its own."""
        return t.numeric, t.codes

    def predict(self, newdata: Any, *, missing: str = "native", unseen: str = "raise") -> pd.Series:
        """Assign new rows to the fitted clusters by the fit's cost (no new clusters).

        Missing cells contribute nothing (``missing="native"``, default) or rows with
        them are dropped (``"drop"``) or rejected (``"raise"``, an error naming the
        rows). A row with no observed value cannot be placed: its label is ``<NA>``
        (as for the rows a fit drops), never a cluster picked by a tie. A categorical
        level the fit did not see is an error naming it (``unseen="raise"``) or gives
        its row the label ``<NA>`` with a ``DataWarning`` (``unseen="na"``).

        Parameters
        ----------
        newdata : DataFrame
            Rows with the fitted variables (same names, kinds and levels).
        missing : {"native", "drop", "raise"}, default "native"
            Missing cells, as above.
        unseen : {"raise", "na"}, default "raise"
            A categorical level the fit did not see, as above.

        Returns
        -------
        Series
            ``Int64`` cluster labels on ``newdata``'s index.

        Examples
        --------
        >>> from sparseclust import craft
        >>> from sparseclust.simulate import craft_fig2a
        >>> sim = craft_fig2a(n_per_cluster=30, rng=0)
        >>> fit = craft(sim.data, m=1 / 3, k=3, rng=0)
        >>> bool((fit.predict(sim.data.head(10)) == fit.labels.head(10)).all())
        True
        """
        check_choice("missing", missing, ["native", "drop", "raise"])
        t = transform_like(self.variables, newdata, missing=missing, unseen=unseen)
        prep: Prepared = self._prep
        num, codes = self._new_arrays(t)
        if prep.center is not None:
            num = (num - prep.center) / prep.scale
        d = prep.data
        new = core.with_training_stats(core.prepare(num, codes, list(d.L), alpha=d.alpha), d)
        D = core.costs(new, self._state, self.F_delta, sigma_override=self._cost_sigma)
        return labels_series(t, D.argmin(axis=1), unplaced=t.empty_rows())

    def plot_subspaces(
        self, truth: pd.DataFrame | None = None, *, relevance: bool = False, **kwargs: Any
    ) -> Any:
        """The clusters x features selection matrix (paper Figs. 2-4), beside ``truth`` if given.

        Parameters
        ----------
        truth : pandas.DataFrame, optional
            The true clusters x features selection, drawn beside the fitted one.
        relevance : bool, default False
            Shade the cells by :attr:`relevance` (sequential colour scale with a
            colourbar, selected cells outlined) instead of black and white.
        **kwargs
            Passed to :func:`~sparseclust.plotting.plot_subspaces`.

        Returns
        -------
        matplotlib.figure.Figure
            The figure, with one panel (or two with ``truth``).

        Examples
        --------
        >>> from sparseclust import craft
        >>> from sparseclust.simulate import craft_fig2a
        >>> fit = craft(craft_fig2a(n_per_cluster=30, rng=0).data, m=1 / 3, k=3, rng=0)
        >>> import matplotlib.pyplot as plt
        >>> fig = fit.plot_subspaces()
        >>> len(fig.axes) >= 1
        True
        >>> plt.close(fig)
        >>> fig = fit.plot_subspaces(relevance=True)
        >>> fig.axes[-1].get_ylabel()
        'relevance (nats)'
        >>> plt.close(fig)
        """
        from .. import plotting
        from .._data.params import check_bool

        rel = self.relevance if check_bool("relevance", relevance) else None
        return plotting.plot_subspaces(self.selected, truth, relevance=rel, **kwargs)

    def plot_profiles(self, ax: Any = None, **kwargs: Any) -> Any:
        """Heatmap of the cluster profiles.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; by default a new figure.
        **kwargs
            Passed to :func:`~sparseclust.plotting.plot_profiles`.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.

        Examples
        --------
        >>> from sparseclust import craft
        >>> from sparseclust.simulate import craft_fig2a
        >>> fit = craft(craft_fig2a(n_per_cluster=30, rng=0).data, m=1 / 3, k=3, rng=0)
        >>> import matplotlib.pyplot as plt
        >>> ax = fit.plot_profiles()
        >>> type(ax).__name__
        'Axes'
        >>> plt.close(ax.figure)
        """
        from .. import plotting

        return plotting.plot_profiles(self, ax=ax, **kwargs)

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
        >>> from sparseclust import craft
        >>> from sparseclust.simulate import craft_fig2a
        >>> fit = craft(craft_fig2a(n_per_cluster=30, rng=0).data, m=1 / 3, k=3, rng=0)
        >>> import matplotlib.pyplot as plt
        >>> ax = fit.plot_objective()
        >>> ax.get_xlabel(), ax.get_ylabel()
        ('iteration', 'objective')
        >>> plt.close(ax.figure)
        """
        from .. import plotting

        return plotting.plot_objective(self, ax=ax, **kwargs)

    def plot_k_selection(self, ax: Any = None, **kwargs: Any) -> Any:
        """The criterion that chose K (stability or gap statistic) against K.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; by default a new figure.
        **kwargs
            Passed to :func:`~sparseclust.plotting.plot_k_selection`.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.

        Raises
        ------
        ValueError
            If the number of clusters was given (``k=`` or ``lam=``), not chosen.

        Examples
        --------
        >>> import matplotlib.pyplot as plt
        >>> from sparseclust import craft
        >>> from sparseclust.simulate import craft_fig2a
        >>> fit = craft(craft_fig2a(n_per_cluster=15, rng=1).data, m=1 / 3, k_max=4, rng=0)
        >>> ax = fit.plot_k_selection()
        >>> ax.get_xlabel()
        'number of clusters K'
        >>> plt.close(ax.figure)
        """
        if self.k_selection is None:
            raise ValueError(
                "the number of clusters was not chosen automatically "
                "(call craft() without k= and lam= to get the criterion curve)."
            )
        from .. import plotting

        return plotting.plot_k_selection(self.k_selection, ax=ax, **kwargs)

    def plot_m_selection(self, ax: Any = None, **kwargs: Any) -> Any:
        """The BIC that chose the budget m, against m, with the choice.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; by default a new figure.
        **kwargs
            Passed to :func:`~sparseclust.plotting.plot_m_selection`.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.

        Raises
        ------
        ValueError
            If m was given (a number), not chosen.

        Examples
        --------
        >>> import matplotlib.pyplot as plt
        >>> from sparseclust import craft
        >>> from sparseclust.simulate import craft_fig2a
        >>> fit = craft(craft_fig2a(n_per_cluster=15, rng=1).data, k=3, n_init=5, rng=0)
        >>> ax = fit.plot_m_selection()
        >>> ax.get_xlabel()
        'budget m (share of features selected per cluster)'
        >>> plt.close(ax.figure)
        """
        if self.m_selection is None:
            raise ValueError(
                f"m was given (m={fmt(self.m)}), not chosen from the data; call craft() "
                "without m= (or with m='auto') to get the criterion curve."
            )
        from .. import plotting

        return plotting.plot_m_selection(self.m_selection, ax=ax, **kwargs)


def build_result(
    best: core.Fit,
    runs: list[core.Fit],
    prep: Prepared,
    *,
    call: str,
    method: str,
    k: int | None,
    consts: core.Constants,
    settings: core.Settings,
    params: dict[str, Any],
    scale: bool,
    keep_data: bool,
    k_selection: pd.DataFrame | None,
    dask_prep: Any = None,
    m_selection: pd.DataFrame | None = None,
) -> CraftResult:
    """The :class:`CraftResult` of the restart ``best`` among ``runs`` (centres and sds
    back in the data's units; on the Dask backend lazy labels). ``params``: the
    settings the result reports, to which lambda and ``k`` are added."""
    table = prep.table
    st: core.State = best.state
    idx = pd.Index(range(st.K), name="cluster")
    internal = table.numeric_names + table.categorical_names
    v = pd.DataFrame(st.v, index=idx, columns=internal)[table.spec.names]
    zeta, sigma = st.zeta.copy(), st.sigma.copy()
    if prep.center is not None:
        zeta = zeta * prep.scale + prep.center
        sigma = sigma * prep.scale
    centers = pd.DataFrame(zeta, index=idx, columns=table.numeric_names)
    sds = pd.DataFrame(sigma, index=idx, columns=table.numeric_names)
    labels, lazy_counts = _labels(best, table, idx, dask_prep)
    return CraftResult(
        labels=labels,
        lazy_counts=lazy_counts,
        n_iter=best.n_iter,
        converged=best.converged,
        call=call,
        params={**params, "lam": best.lam, "k": k},
        variables=table.spec,
        table=table if keep_data else None,
        selected=v,
        centers=centers,
        sds=sds,
        level_shares=_level_shares(table, st, idx),
        lam=float(best.lam),
        lam_method=method,
        k=k,
        m=settings.m,
        rho=settings.rho,
        F0=consts.F0,
        F_delta=consts.F_delta,
        objective=best.objective,
        neg_loglik=float(best.nll),
        budget=settings.budget,
        eps_c=settings.eps_c,
        eps_v=settings.eps_v,
        scale=scale,
        restarts=restart_table(runs, best),
        calibration=best.calibration,
        k_selection=k_selection,
        m_selection=m_selection,
        _state=st,
        _prep=prep,
    )


def restart_table(runs: list[core.Fit], best: core.Fit) -> pd.DataFrame:
    """One row per restart: kind, lambda, clusters, n_iter, converged, criterion, chosen."""
    return pd.DataFrame(
        {
            "kind": [r.kind for r in runs],
            "lam": [r.lam for r in runs],
            "n_clusters": [r.state.K for r in runs],
            "n_iter": [r.n_iter for r in runs],
            "converged": [r.converged for r in runs],
            "neg_loglik": [r.nll for r in runs],
            "chosen": [r is best for r in runs],
        },
        index=pd.Index(range(len(runs)), name="restart"),
    )


def _level_shares(table: ColumnTable, st: core.State, idx: pd.Index) -> pd.DataFrame:
    """Smoothed level shares per cluster, columns ``(variable, level)``."""
    cols = (
        pd.MultiIndex.from_tuples(
            [(c, str(lv)) for c in table.categorical_names for lv in table.levels[c]],
            names=["variable", "level"],
        )
        if table.categorical_names
        else pd.MultiIndex.from_tuples([], names=["variable", "level"])
    )
    return pd.DataFrame(np.exp(st.log_eta), index=idx, columns=cols)


def _labels(
    best: core.Fit, table: ColumnTable, idx: pd.Index, dask_prep: Any
) -> tuple[Any, tuple[pd.Series, int] | None]:
    """(labels, lazy counts): on the input's index, or lazy on the Dask backend with the
    cluster sizes and rows dropped known now."""
    if dask_prep is None:
        return labels_series(table, best.labels), None
    from .._engine.dask import labels_dask

    labels = labels_dask(dask_prep, best.states, best.labels)
    sizes = pd.Series(best.sizes.astype(np.int64), index=idx, name="size")
    return labels, (sizes, dask_prep.n_dropped)
