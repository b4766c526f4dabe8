"""CRAFT: cluster-specific assorted feature selection (public front and result)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cached_property, partial
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from sklearn.metrics import adjusted_rand_score

from .._data.params import (
    as_rng,
    check_bool,
    check_choice,
    check_int,
    check_number,
    user_stacklevel,
)
from .._data.table import ColumnTable, build_table, empty_table, transform_like
from .._engine.dask import route_backend
from .._engine.parallel import run_parallel
from .._results.base import ClusterResult, labels_series
from .._results.format import call_string, fmt
from .._tuning.gap import choose_by_gap
from .._tuning.penalty import calibrate_lambda, resolve_penalty
from ..exceptions import CalibrationWarning, ConvergenceWarning
from . import core as core

__all__ = ["CraftResult", "craft", "craft_lambda"]


# ------------------------------------------------------------------------ helpers
def default_rho(m: float) -> float:
    """The paper's default ``max(0.01, m(1-m) - 0.01)``, kept inside ``(0, m(1-m))``."""
    rho = max(0.01, m * (1 - m) - 0.01)
    return rho if rho < m * (1 - m) else m * (1 - m) / 2


def _check_m_rho(m: Any, rho: Any) -> tuple[float, float]:
    m = check_number("m", m, min=0, max=1, min_inclusive=False, max_inclusive=False)
    if rho is None:
        return m, default_rho(m)
    rho = check_number("rho", rho)
    if not 0 < rho < m * (1 - m):
        raise ValueError(
            f"rho must be in (0, m(1-m)) = (0, {m * (1 - m):.6g}) for m={m:g}; got rho={rho:g}. "
            "Values near m(1-m) give cluster-specific selection, near 0 global selection; "
            "leave rho=None for the paper's default max(0.01, m(1-m) - 0.01)."
        )
    return m, rho


@dataclass(frozen=True)
class _Prepared:
    table: ColumnTable
    data: core.CraftData
    center: np.ndarray | None
    scale: np.ndarray | None


def _prepare(table: ColumnTable, scale: bool, alpha: float) -> _Prepared:
    num = table.numeric.copy()
    center = sd = None
    if scale and num.shape[1]:
        center = np.nanmean(num, axis=0)
        sd = np.nanstd(num, axis=0, ddof=1)
        sd = np.where(sd > 0, sd, 1.0)
        num = (num - center) / sd
    n_levels = [len(table.levels[c]) for c in table.categorical_names]
    return _Prepared(table, core.prepare(num, table.codes, n_levels, alpha=alpha), center, sd)


def _singleton_selection(data: core.CraftData, i: int, m: float) -> np.ndarray:
    """Features a singleton at point ``i`` uses in the farthest-first heuristic.

    Fixed budget: the categorical features whose level at ``i`` is rarest globally
    (largest ``G_d - G_kd``), and the numeric features where ``i`` lies farthest from
    the global mean in global-sd units (a singleton has no spread to rank by).
    """
    P, Q = data.P, data.Q
    v = np.zeros(P + Q, dtype=bool)
    if P:
        z = np.abs(data.X0[i] - data.col_mean) / np.where(data.col_sd > 0, data.col_sd, 1.0)
        if data.M is not None:
            z = np.where(data.M[i] > 0, z, -1.0)
        n_sel = min(P, max(1, core.round_half_up(m * P)))
        v[np.argsort(-z, kind="stable")[:n_sel]] = True
    if Q:
        st = core.singleton(data, i, v)
        score = core.category_scores(data, st)[0]
        n_sel = min(Q, max(1, core.round_half_up(m * Q)))
        v[P + np.argsort(-score, kind="stable")[:n_sel]] = True
    return v


def _farthest_first(
    d: core.CraftData | core.Blocked,
    k: int,
    selection,
    *,
    F_delta: float,
    rng: np.random.Generator,
    sigma_override: float | None = None,
) -> float:
    """The paper's farthest-first lambda on a given cost (section 4).

    T starts with a random point; ``k`` times the point whose smallest cost to a
    member of T (each a singleton cluster using the features ``selection(row)``, the
    point given as a one-row block) is largest is added; lambda is that cost of the
    last point added. Runs over row blocks (ties go to the earliest row).
    """
    first = int(rng.integers(d.n))
    lam = core.farthest_first(
        d, k, selection, first, F_delta=F_delta, sigma_override=sigma_override
    )
    if not lam > 0:
        raise ValueError(
            f"the farthest-first heuristic gave lambda={lam:g} (fewer than k+1={k + 1} distinct "
            f"points); use a smaller k, k= alone (calibration) or lam=<number>."
        )
    return lam


def _finish(best: dict, k: int | None, max_iter: int, name: str) -> None:
    """The warnings every CRAFT-family fit owes its caller."""
    if k is not None and best["state"].K != k:
        warnings.warn(
            f"no restart reached k={k} clusters; returning the best run with "
            f"{best['state'].K} clusters.",
            CalibrationWarning,
            stacklevel=user_stacklevel(),
        )
    if not best["converged"]:
        warnings.warn(
            f"{name} did not converge in max_iter={max_iter} passes; raise max_iter.",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )


def _fit_all(
    d, pen, settings, consts, seeds, n_jobs, ff_lambda, seeded=()
) -> tuple[list[dict], str, int | None]:
    """Runs for every restart, however lambda is set (given, calibrated to ``k`` or
    farthest-first: ``ff_lambda(rng)``). With ``k`` alone, one seeded ``k``-cluster run
    per seed in ``seeded`` is added (:func:`_seeded_tasks`). Returns (runs, lam_method, k)."""
    if pen.method == "calibrate":
        runs = _calibrated_runs(d, settings, consts, pen.k, seeds, n_jobs, seeded)
        return runs, "calibrated", pen.k
    if pen.method == "farthest_first":
        lam, method = ff_lambda(np.random.default_rng(seeds[0])), "farthest_first"
    else:
        lam, method = pen.lam, "given"
    runs = _parallel(n_jobs, [(_fixed_run, (d, settings, lam, s)) for s in seeds], d)
    for r in runs:
        r["kind"] = method
    return runs, method, pen.k


def _conclude(
    runs,
    prep,
    *,
    k,
    name,
    call,
    method,
    consts,
    settings,
    scale,
    keep_data,
    k_selection=None,
    dask_prep=None,
) -> CraftResult:
    """Choose the restart to report, warn as owed, and build the result."""
    best = _choose(runs, k, prep.data, consts)
    # per-row states of the other restarts, kept on a cluster's workers
    core.release_states(prep.data, *[r for r in runs if r is not best])
    _finish(best, k, settings["max_iter"], name)
    return _result(
        best,
        runs,
        prep,
        call=call,
        method=method,
        k=k,
        consts=consts,
        settings=settings,
        scale=scale,
        keep_data=keep_data,
        k_selection=k_selection,
        calibration=best.get("calibration"),
        dask_prep=dask_prep,
    )


# ------------------------------------------------------------------------- result
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
        index over subsample pairs, K >= 2), ``gap`` and ``sd_gap`` (K = 1 and 2 for
        the stability method's test, every K for ``k_method="gap"``, which also
        gives ``nll`` and ``ref_nll``) and ``chosen``.
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
    _state: Any = None
    _prep: Any = None

    method_name: ClassVar[str] = "CRAFT"
    plot_hint: ClassVar[str] = ".plot_subspaces() for the selected features"

    @property
    def objective_path(self) -> np.ndarray:
        """Alias of ``objective`` (the trace)."""
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
        if self._chosen_run().startswith("seeded"):
            lines.append(
                f"Reported run: {self._chosen_run()}, at the smallest lambda where it is "
                "a fixed point."
            )
        return lines

    @cached_property
    def selection_frequency(self) -> pd.Series:
        """Share of clusters that select each variable, highest first."""
        return (
            self.selected.mean(axis=0)
            .sort_values(ascending=False, kind="stable")
            .rename("share_of_clusters")
        )

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
        if self.table is not None:
            tables["selected_profiles"] = self.selected_profiles()
        if self.k_selection is not None:
            tables["k_selection"] = self.k_selection
        return tables

    def _restart_counts(self) -> str:
        """``"3"``, or ``"3 calibrated + 3 seeded"`` when the restarts are of two kinds."""
        counts = self.restarts["kind"].value_counts(sort=False)
        if len(counts) < 2:
            return str(len(self.restarts))
        return " + ".join(f"{n} {kind}" for kind, n in counts.items())

    def _chosen_run(self) -> str:
        """Kind and number of the restart reported, e.g. ``"seeded (restart 4)"``."""
        r = self.restarts
        i = int(np.flatnonzero(r["chosen"].to_numpy())[0])
        return f"{r['kind'].iloc[i]} (restart {r.index[i]})"

    def selected_profiles(self) -> pd.DataFrame:
        """Profiles (as :meth:`profiles`) with cells of unselected features blanked (NaN)."""
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

    def predict(self, newdata: Any, *, missing: str = "native") -> pd.Series:
        """Assign new rows to the fitted clusters by the fit's cost (no new clusters).

        Missing cells contribute nothing (``missing="native"``, default) or rows with
        them are dropped (``"drop"``) or rejected (``"raise"``).
        """
        check_choice("missing", missing, ["native", "drop", "raise"])
        t = transform_like(self.variables, newdata, missing=missing)
        prep: _Prepared = self._prep
        num, codes = self._new_arrays(t)
        if prep.center is not None:
            num = (num - prep.center) / prep.scale
        d = prep.data
        new = core.with_training_stats(core.prepare(num, codes, list(d.L), alpha=d.alpha), d)
        D = core.costs(new, self._state, self.F_delta, sigma_override=self._cost_sigma)
        return labels_series(t, D.argmin(axis=1))

    def plot_subspaces(self, truth: pd.DataFrame | None = None, **kwargs: Any) -> Any:
        """The clusters x features selection matrix (paper Figs. 2-4), beside ``truth`` if given."""
        from .. import plotting

        return plotting.plot_subspaces(self.selected, truth, **kwargs)

    def plot_profiles(self, ax: Any = None, **kwargs: Any) -> Any:
        """Heatmap of the cluster profiles."""
        from .. import plotting

        return plotting.plot_profiles(self, ax=ax, **kwargs)

    def plot_objective(self, ax: Any = None, **kwargs: Any) -> Any:
        """The objective after each pass."""
        from .. import plotting

        return plotting.plot_objective(self, ax=ax, **kwargs)

    def plot_k_selection(self, ax: Any = None, **kwargs: Any) -> Any:
        """The criterion that chose K (stability or gap statistic) against K."""
        if self.k_selection is None:
            raise ValueError(
                "the number of clusters was not chosen automatically "
                "(call craft() without k= and lam= to get the criterion curve)."
            )
        from .. import plotting

        return plotting.plot_k_selection(self.k_selection, ax=ax, **kwargs)


# ------------------------------------------------------------------------- public
def craft_lambda(
    x: Any = None,
    /,
    *,
    k: int,
    data: Any = None,
    m: float = 0.5,
    rho: float | None = None,
    categorical: Any = None,
    numeric: Any = None,
    scale: bool = True,
    missing: str = "native",
    alpha: float = 0.01,
    rng: Any = None,
) -> float:
    """The CRAFT paper's farthest-first heuristic for lambda (section 4).

    T starts with one random point; ``k`` times the point whose smallest CRAFT cost
    to a member of T is largest is added; lambda is that cost of the last point
    added. Each member of T is a singleton cluster (centre the point, sigma = 1,
    smoothed one-hot level shares) using the fixed-budget number of features: the
    categorical ones where its level is rarest, the numeric ones where it is
    farthest from the global mean (a singleton has no spread to rank by). Using all
    features instead collapses Monk-3 and scaled Wine to one cluster.

    Examples
    --------
    >>> from sparseclust.datasets import load_wine
    >>> wine = load_wine()
    >>> lam = craft_lambda("~ . - class", data=wine, k=3, rng=0)
    >>> lam > 0
    True
    """
    m, rho = _check_m_rho(m, rho)
    k = check_int("k", k, min=1)
    table = build_table(
        x,
        data=data,
        categorical=categorical,
        numeric=numeric,
        missing=missing,
        missing_choices=("native", "drop", "raise"),
        min_rows=k + 1,
    )
    prep = _prepare(
        table, check_bool("scale", scale), check_number("alpha", alpha, min=0, min_inclusive=False)
    )
    consts = core.craft_constants(m, rho)
    d = prep.data
    return _farthest_first(
        d,
        k,
        lambda row: _singleton_selection(row, 0, m),
        F_delta=consts["F_delta"],
        rng=as_rng(rng),
    )


def craft(
    x: Any = None,
    /,
    *,
    data: Any = None,
    m: float = 0.5,
    lam: float | str | None = None,
    k: int | None = None,
    rho: float | None = None,
    budget: str = "fixed",
    eps_c: float | None = None,
    eps_v: float | None = None,
    categorical: Any = None,
    numeric: Any = None,
    scale: bool = True,
    missing: str = "native",
    alpha: float = 0.01,
    sigma_floor: float = 0.05,
    n_init: int | str = "auto",
    n_seeded: int | str = "auto",
    max_iter: int = 100,
    shuffle: bool = False,
    k_max: int = 8,
    k_method: str = "stability",
    n_pairs: int = 5,
    subsample: float = 0.8,
    n_refs: int = 5,
    k_rule: str = "Tibs2001SEmax",
    n_jobs: int | None = None,
    keep_data: bool = True,
    backend: str = "auto",
    calibrate: str = "sample",
    sample_rows: int = 50_000,
    rng: Any = None,
) -> CraftResult:
    """CRAFT clustering with cluster-specific feature selection (Garg, Rudin & Jaakkola 2016).

    Parameters
    ----------
    x : DataFrame, 2-D array or formula string
        The data (numeric and categorical columns, detected by dtype), or a formula
        such as ``"~ . - id"`` with ``data=``.
    m : float in (0, 1)
        Fraction of features selected per cluster (fixed budget), the prior mean of
        the selection probabilities.
    lam : float, "farthest_first" or None
        Penalty for a new cluster. With ``k`` alone lambda is calibrated so that the
        converged clustering has exactly ``k`` clusters (bisection); with
        ``lam="farthest_first", k=`` the paper's heuristic (:func:`craft_lambda`).
        With neither, the number of clusters is chosen automatically (``k_method``).
    k : int, optional
        Number of clusters wanted.
    rho : float in (0, m(1-m)), optional
        Prior variance of the selection probabilities: near ``m(1-m)`` cluster-specific
        selection, near 0 global selection. Default ``max(0.01, m(1-m) - 0.01)``.
    budget : {"fixed", "approximate"}
        Fixed: ``round(m |Num|)`` numeric and ``round(m |Cat|)`` categorical features
        per cluster (halves rounded up, at least one of each type present).
        Approximate: categorical features with ``G_d - G_kd > eps_c G_d`` and numeric
        ones with variance below ``eps_v``. A cluster that then selects no feature
        costs nothing for every point (when ``F_delta <= 0``, i.e. m <= 0.5) and
        absorbs them all, so the approximate budget needs ``eps_v`` below the spread
        of the true clusters but above that of the whole data, as in the paper's
        Fig. 4 designs; prefer the fixed budget on data without such structure.
    eps_c : float in (0, 1), default 0.8 (approximate budget).
    eps_v : float > 0, default half the median variance of the numeric columns in the
        units clustered (0.5 when ``scale=True``; the paper's 4-6 on its raw data).
    categorical, numeric : list of str, optional
        Override detected kinds.
    scale : bool, default True
        Standardise numeric columns (real data in different units need it; the
        paper's synthetic numeric designs use ``scale=False``).
    missing : {"native", "drop", "raise"}
        ``"native"``: a missing cell adds nothing to the point's cost and is left out
        of the cluster statistics (rows are kept).
    alpha : float > 0
        Pseudo-count added to every level count of a cluster's level shares (so a
        level unseen in a cluster has a finite cost); also used for the global shares.
    sigma_floor : float >= 0
        A cluster's sd is at least ``sigma_floor`` times the feature's global sd
        (clusters under two points use sigma = 1, the paper's value for a new cluster).
    n_init : int or "auto"
        Independent restarts (random start and Bernoulli draws); the one with the
        lowest negative log-likelihood among those with the wanted number of
        clusters is kept. ``"auto"``: 40 restarts when n x D <= 50,000 cells, 20 up
        to 500,000, else 10 (more restarts find better likelihoods: on Wine, 40
        instead of 10 raised the purity from .81 to .86 at m = 0.5, while each fit
        on large data costs more).
    n_seeded : int or "auto"
        With ``k`` (or K chosen automatically): restarts at a fixed number of
        clusters added beside the ``n_init`` calibrated ones, and chosen among them by
        the same criterion. Each seeds ``k`` singleton clusters k-means++-style under
        the CRAFT cost, then runs CAF passes without the new-cluster rule until no
        label changes; its lambda is the smallest at which the result is a fixed point
        of Algorithm 1 (see Notes). ``"auto"``: a quarter of ``n_init``, rounded up
        (10 of 40 restarts on small data, 3 of 10 on large); 0: calibrated runs only
        (the results of earlier versions). ``restarts["kind"]`` tells them
        apart.
    max_iter : int
        Cap on passes per run (``ConvergenceWarning`` when hit).
    shuffle : bool
        Visit points in a fresh random order each pass (default: data order).
    k_max : int
        Largest K considered when K is chosen automatically.
    k_method : {"stability", "gap"}
        How K is chosen with neither ``k`` nor ``lam`` (see Notes). ``"stability"``
        (default): a gap test of K = 1 against K = 2, then the K = 2..k_max whose
        clustering is best reproduced across pairs of subsamples. ``"gap"``: the gap
        statistic over K = 1..k_max. ``k_selection`` holds the curve,
        ``plot_k_selection()`` draws it.
    n_pairs, subsample
        Stability: pairs of subsamples and the fraction of rows in each.
    n_refs : int
        Permutation reference data sets for the gap statistic (both methods).
    k_rule : {"Tibs2001SEmax", "firstSEmax", "globalmax"}
        How the gap curve picks K with ``k_method="gap"`` (R's ``cluster::maxSE``
        rules).
    n_jobs : int, optional
        Parallel restarts with joblib (None, the default: in this process; on Adult's
        45,222 rows the restarts take about 0.6 s, less than starting and feeding
        workers).
    keep_data : bool
        Keep the typed data on the result (profiles, summaries). Always False on
        the Dask backend (the data stay on the cluster).
    backend : {"auto", "numpy", "dask"}
        ``"auto"``: Dask when ``x`` (or ``data=`` with a formula) is a
        ``dask.dataframe.DataFrame``, else in memory. ``"numpy"`` computes a Dask
        DataFrame into memory first; ``"dask"`` runs an in-memory frame through the
        Dask backend (partitions of 1,000,000 rows). Install ``sparseclust[dask]``.
    calibrate : {"sample", "full"}
        Dask backend, ``k=`` without ``lam=``: calibrate lambda on an in-memory
        random sample of ``sample_rows`` rows (default), then run every restart on
        all rows at that lambda, re-calibrating briefly (at most 8 fits) a restart
        that lands on another number of clusters - the one documented difference
        from the in-memory result; ``"full"``: calibrate on all rows, which gives the
        in-memory result exactly. The automatic choice of K (neither ``k`` nor
        ``lam``) runs on the sample (its subsample fits and gap test alike).
    sample_rows : int
        Rows of that sample.
    rng : None, int or Generator

    Returns
    -------
    CraftResult
        On the Dask backend ``labels`` is a lazy Dask Series on the input's index
        and partitions; everything else is concrete.

    Notes
    -----
    Algorithm 1 with the CAF routine: one cluster centred at a random point with
    ``v ~ Bernoulli(m)^D``; each pass visits the points in order and a point whose
    smallest cost exceeds ``lambda + D F0`` opens a cluster centred on itself with
    sigma = 1 and ``v_d ~ Bernoulli(mean_j (a0 + v_jd) / (a0 + b0))``; then empty
    clusters are dropped, means, sds (ddof=0) and level shares updated, and the
    features re-selected. Until no assignment changes. The costs are computed for all
    points at once; only points that would open a cluster are walked in order.

    Choices the paper leaves open: level shares smoothed with ``alpha`` (0.01;
    larger values merged Monk-3 into one cluster); sd floored relative to the
    feature's global sd; fixed-budget counts rounded half up; restarts compared by
    the negative log-likelihood with Gaussian normalisers, because the asymptotic
    numeric discrepancy is ``n_k / 2`` per selected feature for every partition.

    Seeded restarts (``n_seeded``): the calibrated runs start from one cluster and
    open the others point by point, and on some data the first cluster to open at a
    lambda that gives ``k`` clusters holds a single outlying point (Splice, k = 3:
    sizes 2200, 989, 1 in every calibrated restart, purity 0.71). A seeded run puts
    ``k`` singletons at points drawn with probability proportional to their smallest
    cost to the singletons so far (minus the least such cost; each with
    ``v ~ Bernoulli(m)^D``; the draw uses per-row uniforms fixed by the row's
    position, so row blocks and Dask partitions do not change it), then alternates
    assignment, parameters and selection as Algorithm 1 does, without opening
    clusters. Its result is a converged fixed point of Algorithm 1 at every lambda
    with ``lambda + D F0 >= max_n min_k d_nk``: no point opens a cluster and no label
    changes. The smallest such lambda >= 0, ``max(max_n min_k d_nk - D F0, 0)``, is reported
    (Splice: purity 0.95, negative log-likelihood 255,000 against 259,000-262,000).

    Choosing K (neither ``k`` nor ``lam``; ``k_method="stability"``, the default).
    First a test of K = 1 against K = 2: the gap statistic on the negative
    log-likelihood at K = 1 and 2, the observed and ``n_refs`` column-permuted
    reference data sets all fitted as ``craft(k=K)`` fits them (calibrated and seeded
    restarts, the best likelihood); K = 1 when Gap(1) >= Gap(2) - s_2 (Tibshirani,
    Walther & Hastie 2001). Otherwise K in 2..k_max by stability (Ben-Hur, Elisseeff &
    Guyon 2002; Fang & Wang 2012): ``n_pairs`` pairs of independent subsamples of
    ``subsample`` of the rows, each clustered into K clusters as ``craft(k=K)`` does
    (``min(n_init, 5)`` calibrated and a quarter as many seeded restarts), every row
    assigned to each fit's clusters by its cost (as ``predict``), the two assignments
    compared by the adjusted Rand index; the K with the highest mean index is chosen,
    exact ties going to the larger K (the finer of two partitions reproduced alike).
    The adjusted index, not the raw share of agreeing pairs (which rises with K on
    data without clusters). Why not the gap statistic over every K
    (``k_method="gap"``): it recovers the paper's designs less often (fig3a and 3c 8
    of 10 seeds against 10 of 10) and on real data its curve rises with K as long as
    clusters capture dependence that the permuted reference lacks (Spambase 4-6
    clusters for 2 classes; Splice 1 for 3, its calibrated 2-cluster fit isolating a
    single point). K = 1 is decided by the gap test because stability cannot judge it
    (one cluster always agrees with itself). Cost: about ``2 n_pairs (k_max - 1)``
    fits on ``subsample`` of the rows, in parallel with ``n_jobs``.

    Examples
    --------
    >>> from sparseclust import craft
    >>> from sparseclust.datasets import load_wine
    >>> wine = load_wine()
    >>> fit = craft("~ . - class", data=wine, m=0.5, k=3, rng=0)
    >>> fit.n_clusters
    3
    >>> fit.selected.shape
    (3, 13)
    """
    call = call_string(craft, locals())
    m, rho = _check_m_rho(m, rho)
    check_choice("budget", budget, ["fixed", "approximate"])
    scale = check_bool("scale", scale)
    keep_data = check_bool("keep_data", keep_data)
    shuffle = check_bool("shuffle", shuffle)
    alpha = check_number("alpha", alpha, min=0, min_inclusive=False)
    sigma_floor = check_number("sigma_floor", sigma_floor, min=0)
    if not (isinstance(n_init, str) and n_init == "auto"):
        n_init = check_int("n_init", n_init, min=1)
    if not (isinstance(n_seeded, str) and n_seeded == "auto"):
        n_seeded = check_int("n_seeded", n_seeded, min=0)
    max_iter = check_int("max_iter", max_iter, min=1)
    k_max = check_int("k_max", k_max, min=2)
    check_choice("k_method", k_method, ["stability", "gap"])
    n_pairs = check_int("n_pairs", n_pairs, min=1)
    subsample = check_number(
        "subsample", subsample, min=0, max=1, min_inclusive=False, max_inclusive=False
    )
    n_refs = check_int("n_refs", n_refs, min=1)
    check_choice("k_rule", k_rule, ["Tibs2001SEmax", "firstSEmax", "globalmax"])
    generator = as_rng(rng)
    check_choice("backend", backend, ["auto", "numpy", "dask"])
    check_choice("calibrate", calibrate, ["sample", "full"])
    sample_rows = check_int("sample_rows", sample_rows, min=2)
    x, data, lazy = route_backend(x, data, backend)
    dask_prep = None
    if lazy:
        from .dask import prepare_dask

        check_choice("missing", missing, ["native", "drop", "raise"])
        dask_prep = prepare_dask(
            x,
            data,
            categorical=categorical,
            numeric=numeric,
            missing=missing,
            scale=scale,
            alpha=alpha,
        )
        table = empty_table(dask_prep.spec)
        prep = _Prepared(table, dask_prep.data, dask_prep.center, dask_prep.scale)
        n_obs = dask_prep.data.n
        keep_data = False
        if not dask_prep.data.local:
            n_jobs = None  # one fit at a time; the cluster runs each one in parallel
    else:
        table = build_table(
            x,
            data=data,
            categorical=categorical,
            numeric=numeric,
            missing=missing,
            missing_choices=("native", "drop", "raise"),
            min_rows=2,
        )
        n_obs = table.n_obs
    if budget == "approximate":
        eps_c = (
            0.8
            if eps_c is None
            else check_number(
                "eps_c", eps_c, min=0, max=1, min_inclusive=False, max_inclusive=False
            )
        )
    elif eps_c is not None or eps_v is not None:
        raise ValueError("eps_c / eps_v apply to budget='approximate'; got budget='fixed'.")
    pen = resolve_penalty(lam, k, n_obs=n_obs, func="craft", allow_none=True)
    if not lazy:
        prep = _prepare(table, scale, alpha)
    d = prep.data
    if budget == "approximate":
        if eps_v is None:
            var = d.col_sd**2 if d.P else np.ones(1)
            eps_v = 0.5 * float(np.median(var)) if d.P else 0.5
        else:
            eps_v = check_number("eps_v", eps_v, min=0, min_inclusive=False)
    consts = core.craft_constants(m, rho)
    settings = dict(
        m=m,
        rho=rho,
        budget=budget,
        eps_c=eps_c,
        eps_v=eps_v,
        sigma_floor=sigma_floor,
        max_iter=max_iter,
        shuffle=shuffle,
    )
    ff_lam = None
    if pen.method == "farthest_first":
        # drawn from the caller's rng first, so it equals craft_lambda(..., rng=rng)
        ff_lam = _farthest_first(
            d,
            pen.k,
            lambda row: _singleton_selection(row, 0, m),
            F_delta=consts["F_delta"],
            rng=generator,
        )
    if n_init == "auto":
        cells = n_obs * len(table.names)
        n_init = 40 if cells <= 50_000 else 20 if cells <= 500_000 else 10
    root = np.random.SeedSequence(int(generator.integers(2**63 - 1)))
    seeds = root.spawn(n_init)
    if n_seeded == "auto":
        n_seeded = -(-n_init // 4)  # a quarter of n_init, rounded up
    seeded = root.spawn(n_seeded)

    k_selection = None
    sampled = lazy and (
        pen.method == "auto" or (pen.method == "calibrate" and calibrate == "sample")
    )
    if sampled:
        from .dask import sample_data

        sample = sample_data(dask_prep, sample_rows, np.random.default_rng(seeds[0]))
        prep_s = _Prepared(table, sample, prep.center, prep.scale)
    if pen.method == "auto":
        common = dict(
            k_max=min(k_max, n_obs),
            n_refs=n_refs,
            seed=seeds[0],
            n_jobs=n_jobs,
            n_restarts=min(n_init, 5),
        )
        if k_method == "gap":
            k_wanted, k_selection = _gap_select(
                prep_s if sampled else prep, settings, consts, rule=k_rule, **common
            )
        else:
            k_wanted, k_selection = _stability_select(
                prep_s if sampled else prep,
                settings,
                consts,
                n_pairs=n_pairs,
                subsample=subsample,
                **common,
            )
        if sampled:
            runs = _sample_calibrated_runs(
                sample, d, settings, consts, k_wanted, seeds, n_jobs, seeded
            )
        else:
            runs = _calibrated_runs(d, settings, consts, k_wanted, seeds, n_jobs, seeded)
        method = k_method
    elif sampled:
        runs = _sample_calibrated_runs(sample, d, settings, consts, pen.k, seeds, n_jobs, seeded)
        method, k_wanted = "calibrated", pen.k
    else:
        runs, method, k_wanted = _fit_all(
            d, pen, settings, consts, seeds, n_jobs, lambda _g: ff_lam, seeded
        )
    return _conclude(
        runs,
        prep,
        k=k_wanted,
        name="CRAFT",
        call=call,
        method=method,
        consts=consts,
        settings=settings,
        scale=scale,
        keep_data=keep_data,
        k_selection=k_selection,
        dask_prep=dask_prep,
    )


def _sample_calibrated_runs(sample, d, settings, consts, k, seeds, n_jobs, seeded) -> list[dict]:
    """Lambda calibrated on an in-memory sample, every restart on all rows at it
    (re-calibrated briefly on all rows when it lands on another number of clusters);
    the seeded runs (on all rows) in the same batch."""
    hi = _lambda_hi(sample, consts, settings.get("sigma_override"))
    lam_ref = None
    for j, seed in enumerate(seeds):
        r = _calibrated_run(sample, settings, k, seed, hi, max_fits=40 if j == 0 else 15)
        lam_ref = r["lam"]
        if r["state"].K == k:
            break
    tasks = [(_restart_at, (d, settings, k, s, lam_ref)) for s in seeds]
    return _parallel(n_jobs, tasks + _seeded_tasks(d, settings, k, seeded), d)


# ---------------------------------------------------------------- runs & choosing
def _fixed_run(d, settings, lam, seed) -> dict:
    out = core.craft_fit(d, lam, rng=np.random.default_rng(seed), with_nll=True, **settings)
    out["lam"] = lam
    return out


def _cluster_cap(k: int) -> int:
    """Fits passing this many clusters are stopped during calibration (lambda too small)."""
    return 2 * k + 2


#: Calibration fits with more than k clusters for this many passes in a row are stopped
#: too (lambda too small): in about 1,900 calibration fits on the paper's synthetic
#: designs, Wine, Spambase, Splice, Monk-3 and Penguins, runs that ended with k
#: clusters or fewer had more than k for at most 4 passes in a row.
_PATIENCE = 6


def _stop(k: int) -> dict:
    return {"max_clusters": _cluster_cap(k), "stop_above": (k, _PATIENCE)}


def _calibrated_run(d, settings, k, seed, hi, max_fits=40, known=None) -> dict:
    """Lambda calibrated to ``k`` clusters for one seed. A fit depends only on lambda
    here (same seed, same stopping rules), so a lambda tried twice, or one in
    ``known`` (lambda -> fit already made with this seed and ``k``), is not fitted
    again: the same fit, hence the same result, at no cost."""
    memo: dict[float, dict] = dict(known or {})

    def fit(lam):
        if lam not in memo:
            memo[lam] = core.craft_fit(
                d, lam, rng=np.random.default_rng(seed), **_stop(k), **settings
            )
        return memo[lam]

    # warn=False, not a warnings filter: restarts may run in threads (on a cluster)
    out, lam, trace = calibrate_lambda(
        fit, lambda r: r["state"].K, k, hi=hi, max_fits=max_fits, rtol=1e-3, warn=False
    )
    core.release_states(d, *[other for other in memo.values() if other is not out])
    out["lam"] = lam
    out["calibration"] = trace
    out["nll"] = core.fit_nll(d, out)
    out["kind"] = "calibrated"
    return out


def _restart_at(d, settings, k, seed, lam) -> dict:
    """A restart at the first restart's calibrated lambda; re-calibrated briefly
    (at most 8 fits, fits past the cluster cap stopped early) when it lands on
    another number of clusters."""
    out = core.craft_fit(d, lam, rng=np.random.default_rng(seed), **_stop(k), **settings)
    if out["state"].K != k:  # the calibration halves 2 lambda to lambda: this fit again
        return _calibrated_run(d, settings, k, seed, 2.0 * lam, max_fits=8, known={lam: out})
    out["lam"] = lam
    out["nll"] = core.fit_nll(d, out)
    out["kind"] = "calibrated"
    return out


def _seeded_run(d, settings, k, seed) -> dict:
    """A run at ``k`` clusters: seeded k-means++-style under the CRAFT cost, then CAF
    passes without the new-cluster rule (:func:`~sparseclust._craft.core.seeded_fit`);
    its lambda is the smallest (>= 0) at which it is a fixed point of Algorithm 1."""
    out = core.seeded_fit(d, k, rng=np.random.default_rng(seed), with_nll=True, **settings)
    out["kind"] = "seeded"
    return out


def _seeded_tasks(d, settings, k, seeds) -> list[tuple]:
    """One seeded ``k``-cluster run per seed (restart candidates beside the calibrated
    runs, chosen among them by the same criterion), as tasks for :func:`_parallel`;
    none for ``k`` < 2."""
    return [(_seeded_run, (d, settings, k, s)) for s in seeds] if k >= 2 else []


def _lambda_hi(d, consts: dict, sigma_override: float | None = None) -> float:
    """A lambda large enough for one cluster: the largest cost of a point to the
    global cluster with every feature selected, plus margin."""
    return core.max_global_cost(d, consts["F_delta"], sigma_override) * 2.0 + 1.0


def _calibrated_runs(d, settings, consts, k, seeds, n_jobs, seeded=()) -> list[dict]:
    """Calibrate lambda on the first restart that can reach ``k`` clusters (for a
    given seed the number of clusters can jump over ``k``), then run the remaining
    restarts at that lambda (each re-calibrated briefly if it lands elsewhere), and
    the seeded runs (one per seed in ``seeded``) in the same parallel batch."""
    hi = _lambda_hi(d, consts, settings.get("sigma_override"))
    runs: list[dict] = []
    lam_ref = None
    for j, seed in enumerate(seeds):
        r = _calibrated_run(d, settings, k, seed, hi, max_fits=40 if j == 0 else 15)
        runs.append(r)
        if r["state"].K == k:
            lam_ref = r["lam"]
            break
    rest = seeds[len(runs) :] if lam_ref is not None else []
    tasks = [(_restart_at, (d, settings, k, s, lam_ref)) for s in rest]
    return runs + _parallel(n_jobs, tasks + _seeded_tasks(d, settings, k, seeded), d)


def _apply(f, *args):
    return f(*args)


def _parallel(n_jobs, tasks, d=None) -> list:
    """``[f(*a) for f, a in tasks]`` through the package's one parallel runner; on a
    cluster (``d``'s executor runs fits together) the fits run at once, their passes
    batched into one task per worker."""
    together = getattr(getattr(d, "executor", None), "run_together", None)
    if together is not None:
        return together([partial(f, *a) for f, a in tasks])
    return run_parallel(_apply, [(f, *a) for f, a in tasks], n_jobs=n_jobs)


def _criterion(run: dict, consts: dict, d: core.CraftData) -> float:
    st = run["state"]
    return (
        run["nll"]
        + (run["lam"] + (d.P + d.Q) * consts["F0"]) * st.K
        + consts["F_delta"] * float(st.v.sum())
    )


def _choose(runs: list[dict], k: int | None, d, consts) -> dict:
    """The restart to report: among runs with the wanted number of clusters (else the
    nearest), converged ones first, the lowest negative log-likelihood (with a given
    lambda: likelihood plus the objective's penalties). Calibrated and seeded runs
    compete alike (a seeded run that lost a cluster is not at ``k``)."""
    runs = [r for r in runs if r["converged"]] or runs
    pool = [r for r in runs if k is None or r["state"].K == k] or runs
    if k is not None and pool is runs:
        pool = sorted(runs, key=lambda r: abs(r["state"].K - k))
        pool = [r for r in pool if abs(r["state"].K - k) == abs(pool[0]["state"].K - k)]
    key = (lambda r: r["nll"]) if k is not None else (lambda r: _criterion(r, consts, d))
    return min(pool, key=key)


# -------------------------------------------------------------------- gap statistic
def _best_nll(d, settings, consts, k, seeds, n_seeded) -> float:
    """The lowest negative log-likelihood at ``k`` clusters over ``len(seeds)``
    calibrated restarts and ``n_seeded`` seeded ones (what ``craft(k=)`` compares);
    NaN when no restart has ``k`` clusters."""
    spawned = seeds[-1].spawn(n_seeded) if n_seeded and k >= 2 else []
    runs = _calibrated_runs(d, settings, consts, k, seeds, None, spawned)
    hits = [r["nll"] for r in runs if r["state"].K == k]
    core.release_states(d, *runs)
    return min(hits) if hits else np.nan


def _gap_select(
    prep: _Prepared,
    settings,
    consts,
    *,
    k_max,
    n_refs,
    seed,
    n_jobs,
    n_restarts,
    rule="Tibs2001SEmax",
    n_seeded=0,
):
    """Choose K by a gap statistic on the model's negative log-likelihood.

    For K = 1..k_max: NLL_K, the lowest negative log-likelihood over ``n_restarts``
    restarts calibrated to K clusters, on the data; NLL*_bK, one calibrated fit, on
    each of ``n_refs`` reference data sets made by permuting every column
    independently (which keeps each variable's distribution, missing cells included,
    and destroys the clusters, as sparcl's permutation tuning does).
    Gap(K) = (mean_b NLL*_bK - NLL_K) / n and s_K = sd_b(NLL*_bK / n) sqrt(1 + 1/B).
    K is chosen by ``rule`` (:func:`~sparseclust._tuning.gap.choose_by_gap`; default Tibshirani et al.'s own rule,
    the first K whose gap is within one sd of the next one's). K values that no
    calibrated fit reached are left out (NaN in the table).

    ``n_seeded > 0`` (the stability method's test of K = 1 against K = 2): every
    curve, observed and reference alike, takes the best of ``n_restarts``
    calibrated and ``n_seeded`` seeded restarts per K, i.e. the procedure of
    ``craft(k=K)`` (Tibshirani et al.'s "same procedure" for the reference).
    """
    d = prep.data
    ref_seeds = seed.spawn(n_refs + 1)
    ks = list(range(1, k_max + 1))
    fit_seeds = ref_seeds[0].spawn(n_restarts)
    obs = np.full(len(ks), np.nan)
    for j, kk in enumerate(ks):
        if n_seeded:
            obs[j] = _best_nll(d, settings, consts, kk, fit_seeds, n_seeded)
            continue
        runs = _calibrated_runs(d, settings, consts, kk, fit_seeds, n_jobs)
        hits = [r["nll"] for r in runs if r["state"].K == kk]
        obs[j] = min(hits) if hits else np.nan
    same = (n_restarts, n_seeded) if n_seeded else None
    refs = _parallel(
        n_jobs, [(_ref_curve, (prep, settings, consts, ks, s, same)) for s in ref_seeds[1:]]
    )
    R = np.vstack(refs) / d.n
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
        ref_mean = np.nanmean(R, axis=0)
        ref_sd = np.nanstd(R, axis=0) * np.sqrt(1 + 1 / n_refs)
    gap = ref_mean - obs / d.n
    chosen = ks[choose_by_gap(ks, gap, ref_sd, rule)]
    table = pd.DataFrame(
        {
            "k": ks,
            "nll": obs,
            "ref_nll": ref_mean * d.n,
            "gap": gap,
            "sd_gap": ref_sd,
            "chosen": [kk == chosen for kk in ks],
        }
    )
    return chosen, table


def stability_choice(ks: list[int], stability: np.ndarray) -> int:
    """K from a stability curve: the highest mean stability, exact ties to the larger K
    (the finer of equally reproducible partitions); K values never reached are skipped.

    Examples
    --------
    >>> stability_choice([2, 3, 4], np.array([1.0, 1.0, 0.93]))
    3
    >>> stability_choice([2, 3, 4], np.array([0.97, 0.84, np.nan]))
    2
    """
    ok = np.flatnonzero(np.isfinite(stability))
    if ok.size == 0:
        return ks[0]
    top = stability[ok].max()
    return ks[int(ok[stability[ok] == top][-1])]


def _subsample_labels(d, settings, consts, k, rows, seed, n_restarts, n_seeded):
    """Fit ``k`` clusters on the rows ``rows`` as ``craft(k=)`` does (calibrated and
    seeded restarts, lowest negative log-likelihood) and assign every row of ``d`` to
    the fitted clusters by the fit's cost (as ``predict``); None when no restart
    reached ``k`` clusters."""
    sub = core.take_rows(d, rows)
    seeds = seed.spawn(n_restarts + n_seeded)
    runs = _calibrated_runs(sub, settings, consts, k, seeds[:n_restarts], None, seeds[n_restarts:])
    best = _choose(runs, k, sub, consts)
    core.release_states(sub, *[r for r in runs if r is not best])
    if best["state"].K != k:
        return None
    D = core.costs(
        d, best["state"], consts["F_delta"], sigma_override=settings.get("sigma_override")
    )
    return D.argmin(axis=1)


def _stability_select(
    prep: _Prepared,
    settings,
    consts,
    *,
    k_max,
    n_pairs,
    subsample,
    n_refs,
    seed,
    n_jobs,
    n_restarts,
):
    """Choose K by the reproducibility of the clustering across subsamples, after a
    gap test of K = 1 against K = 2.

    1. K = 1 or more: the gap statistic at K = 1 and 2 (:func:`_gap_select` with
       ``n_seeded``: the observed and the ``n_refs`` column-permuted reference curves
       all take the best of ``craft(k=K)``'s calibrated and seeded restarts); K = 1
       when Gap(1) >= Gap(2) - s_2 (Tibshirani, Walther & Hastie's rule).
    2. Otherwise, for K = 2..k_max: ``n_pairs`` pairs of subsamples (each
       ``subsample`` of the rows, without replacement, independent of the other);
       each subsample is clustered into K clusters as ``craft(k=K)`` does, every row
       of the data assigned to the fitted clusters by the fit's cost, and the two
       assignments compared by the adjusted Rand index. Stability(K) is the mean over
       pairs; K is the most stable (:func:`stability_choice`). This is the clustering
       instability of Ben-Hur, Elisseeff & Guyon (2002) and Fang & Wang (2012), with
       the chance-corrected Rand index as the similarity: the raw share of agreeing
       pairs rises with K on data without clusters, the adjusted index does not.
       Subsamples keep the whole data's global statistics (standardisation, global
       level shares, the sd floor's reference).
    """
    d = prep.data
    n_seeded = -(-n_restarts // 4)  # as craft(k=): a quarter, rounded up
    gap_seed, pair_root = seed.spawn(2)
    _, gap_table = _gap_select(
        prep,
        settings,
        consts,
        k_max=2,
        n_refs=n_refs,
        seed=gap_seed,
        n_jobs=n_jobs,
        n_restarts=n_restarts,
        n_seeded=n_seeded,
    )
    g, s = gap_table["gap"].to_numpy(), gap_table["sd_gap"].to_numpy()
    one = choose_by_gap([1, 2], g, s, "Tibs2001SEmax") == 0
    ks = list(range(2, k_max + 1))
    size = max(int(round(subsample * d.n)), k_max)
    tasks, cells = [], []
    for b, ps in enumerate(pair_root.spawn(n_pairs)):
        g_rows = np.random.default_rng(ps)
        rows = [np.sort(g_rows.choice(d.n, size, replace=False)) for _ in range(2)]
        for j, kk in enumerate(ks):
            for side, fs in enumerate(ps.spawn(2)):
                args = (d, settings, consts, kk, rows[side], fs, n_restarts, n_seeded)
                tasks.append((_subsample_labels, args))
                cells.append((b, j, side))
    labels = _parallel(n_jobs, tasks)
    ari = np.full((n_pairs, len(ks)), np.nan)
    got: dict[tuple[int, int], list] = {}
    for (b, j, _side), lab in zip(cells, labels):
        got.setdefault((b, j), []).append(lab)
    for (b, j), (la, lb) in got.items():
        if la is not None and lb is not None:
            ari[b, j] = adjusted_rand_score(la, lb)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # K never reached
        stab = np.nanmean(ari, axis=0)
        sd = np.nanstd(ari, axis=0)
    chosen = 1 if one else stability_choice(ks, stab)
    table = pd.DataFrame(
        {
            "k": [1, *ks],
            "stability": [np.nan, *stab],
            "sd_stability": [np.nan, *sd],
            "gap": [g[0], g[1], *([np.nan] * (len(ks) - 1))],
            "sd_gap": [s[0], s[1], *([np.nan] * (len(ks) - 1))],
            "chosen": [kk == chosen for kk in [1, *ks]],
        }
    )
    table.attrs["gap_test"] = "K = 1" if one else "K > 1"  # the verdict plots draw
    return chosen, table


def _ref_curve(prep: _Prepared, settings, consts, ks, seed, same=None) -> np.ndarray:
    """The curve on one column-permuted copy of the data: one calibrated fit per K,
    or with ``same = (n_restarts, n_seeded)`` the observed curve's procedure."""
    rng = np.random.default_rng(seed)
    t = prep.data
    num = np.where(t.M.astype(bool), t.X0, np.nan) if t.M is not None else t.X0.copy()
    num = np.column_stack([rng.permutation(num[:, j]) for j in range(t.P)]) if t.P else num
    codes = (
        np.column_stack([rng.permutation(t.codes[:, j]) for j in range(t.Q)]) if t.Q else t.codes
    )
    dd = core.prepare(num.reshape(t.n, t.P), codes.reshape(t.n, t.Q), list(t.L), alpha=t.alpha)
    if same is not None:
        seeds = seed.spawn(same[0])
        return np.array([_best_nll(dd, settings, consts, kk, seeds, same[1]) for kk in ks])
    hi = _lambda_hi(dd, consts)
    vals = np.full(len(ks), np.nan)
    for j, kk in enumerate(ks):
        r = _calibrated_run(dd, settings, kk, seed, hi)
        vals[j] = r["nll"] if r["state"].K == kk else np.nan
        hi = r["lam"] * 1.5
    return vals


# ------------------------------------------------------------------------- result
def _result(
    best,
    runs,
    prep: _Prepared,
    *,
    call,
    method,
    k,
    consts,
    settings,
    scale,
    keep_data,
    k_selection,
    calibration,
    dask_prep=None,
) -> CraftResult:
    table = prep.table
    st: core.State = best["state"]
    K = st.K
    idx = pd.Index(range(K), name="cluster")
    spec = table.spec
    internal = table.numeric_names + table.categorical_names
    v = pd.DataFrame(st.v, index=idx, columns=internal)[spec.names]
    P = len(table.numeric_names)
    zeta, sigma = st.zeta.copy(), st.sigma.copy()
    if prep.center is not None:
        zeta = zeta * prep.scale + prep.center
        sigma = sigma * prep.scale
    centers = pd.DataFrame(zeta, index=idx, columns=table.numeric_names)
    sds = pd.DataFrame(sigma, index=idx, columns=table.numeric_names)
    cols = (
        pd.MultiIndex.from_tuples(
            [(c, str(lv)) for c in table.categorical_names for lv in table.levels[c]],
            names=["variable", "level"],
        )
        if table.categorical_names
        else pd.MultiIndex.from_tuples([], names=["variable", "level"])
    )
    shares = pd.DataFrame(np.exp(st.log_eta), index=idx, columns=cols)
    restarts = pd.DataFrame(
        {
            "kind": [r["kind"] for r in runs],
            "lam": [r["lam"] for r in runs],
            "n_clusters": [r["state"].K for r in runs],
            "n_iter": [r["n_iter"] for r in runs],
            "converged": [r["converged"] for r in runs],
            "neg_loglik": [r["nll"] for r in runs],
            "chosen": [r is best for r in runs],
        },
        index=pd.Index(range(len(runs)), name="restart"),
    )
    del P
    lazy_counts = None
    if dask_prep is not None:
        from .._engine.dask import labels_dask

        labels = labels_dask(dask_prep, best["states"], best.get("labels"))
        sizes = pd.Series(best["sizes"].astype(np.int64), index=idx, name="size")
        lazy_counts = (sizes, dask_prep.n_dropped)
    else:
        labels = labels_series(table, best["labels"])
    return CraftResult(
        labels=labels,
        lazy_counts=lazy_counts,
        n_iter=best["n_iter"],
        converged=best["converged"],
        call=call,
        params={**settings, "lam": best["lam"], "k": k},
        variables=spec,
        table=table if keep_data else None,
        selected=v,
        centers=centers,
        sds=sds,
        level_shares=shares,
        lam=float(best["lam"]),
        lam_method=method,
        k=k,
        m=settings["m"],
        rho=settings["rho"],
        F0=consts["F0"],
        F_delta=consts["F_delta"],
        objective=best["objective"],
        neg_loglik=float(best["nll"]),
        budget=settings["budget"],
        eps_c=settings["eps_c"],
        eps_v=settings["eps_v"],
        scale=scale,
        restarts=restarts,
        calibration=calibration,
        k_selection=k_selection,
        _state=st,
        _prep=prep,
    )
