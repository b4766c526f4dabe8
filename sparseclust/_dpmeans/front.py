"""DP-means (Kulis & Jordan, 2012): k-means with a penalty lambda per cluster.

The public fronts :func:`dpmeans` and :func:`farthest_first_lambda` read top to
bottom: parameter rules (``@rules``) -> the data (:func:`~sparseclust._data.table.build_table`
in memory, or the Dask preparation of :mod:`sparseclust._dpmeans.dask`) -> lambda
(given, farthest-first or calibrated) -> the fit (:mod:`sparseclust._dpmeans.core`)
-> the result (:mod:`sparseclust._dpmeans.result`). Imports run one way: this module
imports ``dask``, ``core`` and ``result``, none of which imports it.

``dp_pass``, ``dpmeans_core``, ``farthest_first_core`` and the other core names are
re-exported here for older imports; they live in :mod:`sparseclust._dpmeans.core`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from .._data.params import Choice, Columns, Flag, Int, Seed, as_rng, rules, user_stacklevel
from .._data.screen import screens
from .._data.stages import warn_spread
from .._data.table import ColumnTable, VariableSpec, build_table
from .._engine.dask import DaskPrepared, labels_dask, route_backend
from .._results.base import labels_series, warn_small_clusters
from .._results.format import call_string
from .._tuning.penalty import Penalty, calibrate_lambda, resolve_penalty
from ..exceptions import CalibrationWarning, ConvergenceWarning
from .core import (
    DPBlocks,
    DPFit,
    dpmeans_core,
    farthest_first_core,
    max_sq_dev,
    sample_design_rows,
    scaled_design,
)
from .dask import prepare_dask_dp
from .result import DPMeansResult

__all__ = ["DPMeansResult", "dpmeans", "farthest_first_lambda"]


# --------------------------------------------------------------------- records
@dataclass(frozen=True, eq=False)
class DPData:
    """What :func:`dpmeans` fits on.

    Attributes
    ----------
    X : ndarray or DPBlocks
        The design: numeric variables (standardised when asked) then one-hot blocks;
        an array in memory, row blocks over the partitions on Dask.
    names : list of str
        The design's column names (``"var[level]"`` for one-hot columns).
    center, scale : ndarray or None
        The standardisation of the numeric variables (``None``: raw features).
    spec : VariableSpec
        How the variables were read.
    n_obs : int
        Rows fitted (after the missing-value policy).
    table : ColumnTable or None
        The typed table (in memory); ``None`` on Dask.
    dask : DaskPrepared or None
        The Dask preparation (the labels go back on its partitions); ``None`` in memory.
    """

    X: np.ndarray | DPBlocks
    names: list[str]
    center: np.ndarray | None
    scale: np.ndarray | None
    spec: VariableSpec
    n_obs: int
    table: ColumnTable | None = None
    dask: DaskPrepared | None = None

    @property
    def lazy(self) -> bool:
        """Whether the rows live on Dask."""
        return self.dask is not None


@dataclass(frozen=True, eq=False)
class LambdaChoice:
    """The penalty chosen and the fit kept.

    Attributes
    ----------
    fit : DPFit
        The fit at ``lam``.
    lam : float
        The penalty.
    method : str
        ``"given"``, ``"farthest_first"`` or ``"calibrated"``.
    calibration : DataFrame or None
        Every (lam, n_clusters) tried when lambda was calibrated (``None`` otherwise,
        and on Dask when the sample's lambda gave ``k`` clusters at once).
    """

    fit: DPFit
    lam: float
    method: str
    calibration: pd.DataFrame | None = None


class _Fits:
    """Fits of one design, all with the same seed; remembers them so the per-row
    states of the ones not kept can be released (on a cluster's workers)."""

    def __init__(self, X: np.ndarray | DPBlocks, *, init: str, max_iter: int, seed: int):
        self.X, self.init, self.max_iter, self.seed = X, init, max_iter, seed
        self.made: list[DPFit] = []

    def __call__(self, lam: float, on: np.ndarray | DPBlocks | None = None) -> DPFit:
        """The fit at ``lam`` on ``on`` (default: the whole design)."""
        fit = dpmeans_core(
            self.X if on is None else on,
            lam,
            init=self.init,
            max_iter=self.max_iter,
            rng=np.random.default_rng(self.seed),
        )
        self.made.append(fit)
        return fit

    def release_others(self, kept: DPFit) -> None:
        """Release the states of every fit but ``kept``."""
        release = getattr(getattr(self.X, "executor", None), "release", None)
        for other in self.made:
            if other is not kept and other.states is not None and release is not None:
                release(other.states)


# --------------------------------------------------------------------- stages
def _read_table(
    x: Any, *, data: Any, categorical: Any, numeric: Any, missing: str, min_rows: int = 1
) -> ColumnTable:
    """The typed table of a DP-means front, at least ``min_rows`` rows (constant
    columns dropped with a DataWarning: they add the same to every distance)."""
    return build_table(
        x,
        data=data,
        categorical=categorical,
        numeric=numeric,
        missing=missing,
        constant="drop",
        min_rows=min_rows,
    )


def _read_data(
    x: Any, data: Any, *, backend: str, categorical: Any, numeric: Any, missing: str, scale: bool
) -> DPData:
    """The design of ``x`` / ``data``: the typed table in memory, or the Dask preparation."""
    x, data, lazy = route_backend(x, data, backend)
    if lazy:
        prep = prepare_dask_dp(
            x, data, categorical=categorical, numeric=numeric, missing=missing, scale=scale
        )
        X = DPBlocks(prep.executor, len(prep.names))
        return DPData(X, prep.names, prep.center, prep.scale, prep.spec, X.n, dask=prep)
    table = _read_table(x, data=data, categorical=categorical, numeric=numeric, missing=missing)
    warn_spread(table.numeric, table.numeric_names, scale=scale)
    X, names, (center, sd) = scaled_design(table, scale)
    return DPData(X, names, center, sd, table.spec, table.n_obs, table=table)


def _n_clusters(fit: DPFit) -> int:
    """Clusters of a fit (what lambda is calibrated on)."""
    return fit.centers.shape[0]


def _choose_lambda(
    fits: _Fits, pen: Penalty, *, lazy: bool, calibrate: str, sample_rows: int
) -> LambdaChoice:
    """Lambda given, from the farthest-first heuristic, or calibrated to ``pen.k`` clusters."""
    if pen.method == "given":
        return LambdaChoice(fits(pen.lam), pen.lam, "given")
    if pen.method == "farthest_first":
        lam = farthest_first_core(
            fits.X, pen.k, start=fits.init, rng=np.random.default_rng(fits.seed)
        )
        if not lam > 0:
            raise ValueError(
                "the farthest-first heuristic gave lambda=0 (fewer than k distinct points); "
                "use a smaller k or lam=<number>."
            )
        return LambdaChoice(fits(lam), lam, "farthest_first")
    if lazy and calibrate == "sample":
        return _calibrate_on_sample(fits, pen.k, sample_rows)
    hi = 4.0 * max_sq_dev(fits.X) + 1e-12
    fit, lam, calibration = calibrate_lambda(fits, _n_clusters, pen.k, hi=hi)
    return LambdaChoice(fit, lam, "calibrated", calibration)


def _calibrate_on_sample(fits: _Fits, k: int, n_rows: int) -> LambdaChoice:
    """Lambda calibrated on an in-memory sample of ``n_rows`` rows, then the fit on all
    rows (re-calibrated briefly on all rows if it lands on another number of clusters)."""
    sample = sample_design_rows(fits.X, n_rows, np.random.default_rng(fits.seed))
    hi = 4.0 * max_sq_dev(sample) + 1e-12
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CalibrationWarning)
        _, lam, _ = calibrate_lambda(partial(fits, on=sample), _n_clusters, k, hi=hi)
    fit = fits(lam)
    calibration = None
    if _n_clusters(fit) != k:
        fit, lam, calibration = calibrate_lambda(fits, _n_clusters, k, hi=2.0 * lam, max_fits=8)
    return LambdaChoice(fit, lam, "calibrated", calibration)


def _labels(d: DPData, fit: DPFit, clusters: pd.Index) -> tuple[Any, Any]:
    """The labels on the input's rows, and (on Dask) the cluster sizes and rows dropped."""
    if d.lazy:
        labels = labels_dask(d.dask, fit.states, fit.labels)
        sizes = pd.Series(fit.sizes.astype(np.int64), index=clusters, name="size")
        return labels, (sizes, d.dask.n_dropped)
    return labels_series(d.table, fit.labels), None


# ------------------------------------------------------------------------ public
@rules(
    k=Int(min=2),
    start=Choice(("mean", "random")),
    scale=Flag(),
    categorical=Columns(),
    numeric=Columns(),
    missing=Choice(("raise", "drop")),
    rng=Seed(),
)
@screens
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
    screen: Any = True,
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

    Parameters
    ----------
    x : DataFrame, 2-D array or formula str
        The data, or a formula such as ``"~ . - id"`` with ``data=``.
    data : DataFrame, optional
        The data a formula ``x`` is read from.
    k : int
        The number of points added (the wanted number of clusters).
    start : {"mean", "random"}, default "mean"
        The first member of T: the global mean, or a random data point.
    scale : bool, default False
        Standardise the numeric columns first.
    missing : {"raise", "drop"}, default "raise"
        Rows with a missing value: an error naming the columns, or dropped.
    categorical, numeric : list of str, optional
        Columns whose kind is set by name, overriding detection by dtype.
    screen : bool or dict, default True
        Screen the columns whose kind was detected (identifiers and free text dropped,
        numbers stored as text parsed, rare levels of many-level categoricals lumped,
        integer codes named), each decision a ``DataWarning`` kept on the result
        (``.variables.screened``); ``False`` reads every column by its dtype;
        ``{"lump_min": 20}`` sets the rows a level needs not to be lumped. See the
        guide "How columns are read".
    rng : None, int or Generator
        Seeds a random first point.

    Returns
    -------
    float
        The lambda to pass to ``dpmeans(lam=...)``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [10.0, 0.0], [10.0, 1.0]])
    >>> farthest_first_lambda(X, k=2)
    25.25
    """
    table = _read_table(
        x, data=data, categorical=categorical, numeric=numeric, missing=missing, min_rows=k
    )
    X, _, _ = scaled_design(table, scale)
    return farthest_first_core(X, k, start=start, rng=as_rng(rng))


@rules(
    init=Choice(("mean", "random")),
    scale=Flag(),
    max_iter=Int(min=1),
    categorical=Columns(),
    numeric=Columns(),
    missing=Choice(("raise", "drop")),
    keep_data=Flag(),
    backend=Choice(("auto", "numpy", "dask")),
    calibrate=Choice(("sample", "full")),
    sample_rows=Int(min=2),
    rng=Seed(),
)
@screens
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
    screen: Any = True,
    missing: str = "raise",
    keep_data: bool = True,
    backend: str = "auto",
    calibrate: str = "sample",
    sample_rows: int = 50_000,
    rng: Any = None,
) -> DPMeansResult:
    """Cluster a DataFrame, array or formula by DP-means (Kulis & Jordan 2012).

    Parameters
    ----------
    x : DataFrame, 2-D array or formula str
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
    screen : bool or dict, default True
        Screen the columns whose kind was detected (identifiers and free text dropped,
        numbers stored as text parsed, rare levels of many-level categoricals lumped,
        integer codes named), each decision a ``DataWarning`` kept on the result
        (``.variables.screened``); ``False`` reads every column by its dtype;
        ``{"lump_min": 20}`` sets the rows a level needs not to be lumped. See the
        guide "How columns are read".
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
        The fit: labels, centres, profiles, print and plots.

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
    >>> from sparseclust.datasets import load_penguins
    >>> penguins = load_penguins()
    >>> fit = dpmeans(
    ...     "~ . - species - year", data=penguins, k=3, scale=True, missing="drop"
    ... )
    >>> fit.n_clusters
    3
    >>> fit.labels.value_counts().sort_index().tolist()
    [129, 85, 119]
    """
    call = call_string(dpmeans, locals())
    generator = as_rng(rng)
    d = _read_data(
        x,
        data,
        backend=backend,
        categorical=categorical,
        numeric=numeric,
        missing=missing,
        scale=scale,
    )
    pen = resolve_penalty(lam, k, n_obs=d.n_obs, func="dpmeans")
    seed = int(generator.integers(2**63 - 1))
    fits = _Fits(d.X, init=init, max_iter=max_iter, seed=seed)
    chosen = _choose_lambda(fits, pen, lazy=d.lazy, calibrate=calibrate, sample_rows=sample_rows)
    fits.release_others(chosen.fit)
    out = chosen.fit
    if not out.converged:
        warnings.warn(
            f"DP-means did not converge in max_iter={max_iter} passes; raise max_iter.",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    clusters = pd.Index(range(out.centers.shape[0]), name="cluster")
    labels, lazy_counts = _labels(d, out, clusters)
    res = DPMeansResult(
        labels=labels,
        lazy_counts=lazy_counts,
        n_iter=out.n_iter,
        converged=out.converged,
        call=call,
        params={
            "lam": chosen.lam,
            "k": pen.k,
            "init": init,
            "scale": scale,
            "max_iter": max_iter,
            "seed": seed,
        },
        variables=d.spec,
        table=d.table if keep_data else None,
        centers=pd.DataFrame(out.centers, columns=d.names, index=clusters),
        lam=float(chosen.lam),
        lam_method=chosen.method,
        k=pen.k,
        objective=float(out.objective_path[-1]),
        objective_path=out.objective_path,
        calibration=chosen.calibration,
        init=init,
        scale=scale,
        center_=d.center,
        scale_=d.scale,
    )
    warn_small_clusters(res.sizes, k, "dpmeans")
    return res
