"""CRAFT: cluster-specific assorted feature selection (the public fronts).

:func:`craft` and :func:`craft_lambda` read top to bottom: the parameters (their rules
declared once with ``@rules``; those that depend on other arguments or on the data
checked in the body), the table (in memory, or persisted blocks on Dask:
:func:`~sparseclust._craft.dask.prepare_dask`), the executor, the fit (K selection in
:mod:`~sparseclust._craft.select_k`, the restarts in :mod:`~sparseclust._craft.restarts`,
lambda in :mod:`~sparseclust._craft.lam`) and the result
(:mod:`~sparseclust._craft.result`).
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from .._data.params import (
    Choice,
    Columns,
    Flag,
    Int,
    Number,
    Progress,
    Seed,
    Workers,
    as_rng,
    rules,
    user_stacklevel,
)
from .._data.screen import screens
from .._data.table import ColumnTable, build_table, empty_table
from .._engine.dask import route_backend
from .._engine.parallel import progress_bars
from .._results.base import warn_small_clusters
from .._results.format import call_string
from .._tuning.penalty import Penalty, resolve_penalty
from ..exceptions import CalibrationWarning, ConvergenceWarning, DataWarning
from . import core as core
from . import lam as lam_
from . import restarts as restarts
from . import select_k as select_k
from . import select_m as select_m
from .prepared import Prepared, prepare_table
from .result import CraftResult, build_result

__all__ = ["CraftResult", "craft", "craft_lambda"]

#: How missing cells may be handled (every CRAFT-family front).
MISSING = ("native", "drop", "raise")
#: Rules shared by the CRAFT-family fronts (``rho``'s range depends on ``m``: the body).
M_RULE = Number(min=0, max=1, min_inclusive=False, max_inclusive=False)
#: ``craft``'s ``m``: a budget in (0, 1), or ``"auto"`` (chosen by BIC: select_m).
M_AUTO_RULE = Number(min=0, max=1, min_inclusive=False, max_inclusive=False, also=("auto",))
RHO_RULE = Number(none=True)
K_RULE = Int(min=1, none=True)
ALPHA_RULE = Number(min=0, min_inclusive=False)
#: Rows the automatic choice of K runs on at most (``k_sample_rows``): larger data
#: choose K on a seeded subsample of this many rows, then fit on all rows.
K_SAMPLE_ROWS = 5_000
#: The settings a craft() result reports in ``params`` (with lambda and k).
_PARAMS = ("m", "rho", "budget", "eps_c", "eps_v", "sigma_floor", "max_iter", "shuffle")


# ------------------------------------------------------------------------ helpers
def default_rho(m: float) -> float:
    """The paper's default ``max(0.01, m(1-m) - 0.01)``, kept inside ``(0, m(1-m))``."""
    rho = max(0.01, m * (1 - m) - 0.01)
    return rho if rho < m * (1 - m) else m * (1 - m) / 2


def check_rho(m: float, rho: float | None) -> float:
    """``rho`` inside ``(0, m(1-m))`` for the (checked) ``m``, or the default for None."""
    if rho is None:
        return default_rho(m)
    if not 0 < rho < m * (1 - m):
        raise ValueError(
            f"rho must be in (0, m(1-m)) = (0, {m * (1 - m):.6g}) for m={m:g}; got rho={rho:g}. "
            "Values near m(1-m) give cluster-specific selection, near 0 global selection; "
            "leave rho=None for the paper's default max(0.01, m(1-m) - 0.01)."
        )
    return rho


def warn_owed(best: core.Fit, k: int | None, max_iter: int, name: str) -> None:
    """The warnings every CRAFT-family fit owes its caller."""
    if k is not None and best.state.K != k:
        warnings.warn(
            f"no restart reached k={k} clusters; returning the best run with "
            f"{best.state.K} clusters.",
            CalibrationWarning,
            stacklevel=user_stacklevel(),
        )
    if not best.converged:
        warnings.warn(
            f"{name} did not converge in max_iter={max_iter} passes; raise max_iter.",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )


def conclude(
    runs: list[core.Fit],
    prep: Prepared,
    *,
    k: int | None,
    name: str,
    call: str,
    method: str,
    consts: core.Constants,
    settings: core.Settings,
    params: dict[str, Any],
    scale: bool,
    keep_data: bool,
    k_selection: pd.DataFrame | None = None,
    dask_prep: Any = None,
    m_selection: pd.DataFrame | None = None,
) -> CraftResult:
    """Choose the restart to report, warn as owed, and build the result."""
    best = restarts.choose(runs, k, prep.data, consts)
    # per-row states of the other restarts, kept on a cluster's workers
    core.release_states(prep.data, *[r for r in runs if r is not best])
    warn_owed(best, k, settings.max_iter, name)
    res = build_result(
        best,
        runs,
        prep,
        call=call,
        method=method,
        k=k,
        consts=consts,
        settings=settings,
        params=params,
        scale=scale,
        keep_data=keep_data,
        k_selection=k_selection,
        dask_prep=dask_prep,
        m_selection=m_selection,
    )
    warn_small_clusters(res.sizes, k, name)
    _warn_empty_selection(res)
    return res


def _warn_empty_selection(res: CraftResult) -> None:
    """A :class:`~sparseclust.exceptions.DataWarning` when an approximate-budget fit
    has clusters that select no feature (nothing distinguishes them: eps_c / eps_v
    too strict)."""
    if res.budget != "approximate":
        return
    empty = [int(c) for c, n in res.selected.sum(axis=1).items() if n == 0]
    if empty:
        warnings.warn(
            f"budget='approximate': clusters {empty} select no feature (eps_c={res.eps_c}, "
            f"eps_v={res.eps_v}); no variable distinguishes them. Loosen eps_c / eps_v, or "
            "use the fixed budget (m=).",
            DataWarning,
            stacklevel=user_stacklevel(),
        )


def _singleton_lambda(
    d: core.CraftData | core.Blocked, k: int, m: float, consts: core.Constants, rng: Any
) -> float:
    """The farthest-first lambda of CRAFT (singletons with the fixed-budget features)."""
    return lam_.farthest_first(
        d, k, lambda row: lam_.singleton_selection(row, 0, m), F_delta=consts.F_delta, rng=rng
    )


def read_table(
    x: Any, *, data: Any, categorical: Any, numeric: Any, missing: str, min_rows: int = 2
) -> ColumnTable:
    """The typed table of a CRAFT-family front (its missing-value policies
    :data:`MISSING`, at least ``min_rows`` rows; constant columns dropped with a
    DataWarning)."""
    return build_table(
        x,
        data=data,
        categorical=categorical,
        numeric=numeric,
        missing=missing,
        missing_choices=MISSING,
        min_rows=min_rows,
        constant="drop",
    )


def _build_table(
    x: Any,
    data: Any,
    lazy: bool,
    categorical: list[str] | None,
    numeric: list[str] | None,
    missing: str,
    scale: bool,
    alpha: float,
) -> tuple[ColumnTable, Any]:
    """(typed table, None) in memory; on the Dask backend (an empty table with the
    variables' spec, the persisted blocks of
    :func:`~sparseclust._craft.dask.prepare_dask`)."""
    if not lazy:
        table = read_table(x, data=data, categorical=categorical, numeric=numeric, missing=missing)
        return table, None
    from .dask import prepare_dask

    dask_prep = prepare_dask(
        x, data, categorical=categorical, numeric=numeric, missing=missing, scale=scale, alpha=alpha
    )
    return empty_table(dask_prep.spec), dask_prep


def _prepared(table: ColumnTable, dask_prep: Any, scale: bool, alpha: float) -> Prepared:
    """The data the fits run on: the table's arrays, or the Dask backend's blocks."""
    if dask_prep is None:
        return prepare_table(table, scale, alpha)
    return Prepared(table, dask_prep.data, dask_prep.center, dask_prep.scale)


def _approximate_eps_c(budget: str, eps_c: float | None, eps_v: float | None) -> float | None:
    """``eps_c`` of the approximate budget (0.8 by default); ``eps_c`` / ``eps_v`` given
    with the fixed budget are an error."""
    if budget == "approximate":
        return 0.8 if eps_c is None else eps_c
    if eps_c is not None or eps_v is not None:
        raise ValueError("eps_c / eps_v apply to budget='approximate'; got budget='fixed'.")
    return eps_c


def _approximate_eps_v(budget: str, eps_v: float | None, d: Any) -> float | None:
    """``eps_v`` of the approximate budget: by default half the median variance of the
    numeric columns in the units clustered (0.5 without numeric columns)."""
    if budget != "approximate" or eps_v is not None:
        return eps_v
    var = d.col_sd**2 if d.P else np.ones(1)
    return 0.5 * float(np.median(var)) if d.P else 0.5


def _restart_counts(
    n_init: int | str, n_seeded: int | str, cells: int, rows: int
) -> tuple[int, int]:
    """``n_init`` and ``n_seeded`` with ``"auto"`` resolved (by the data's cells, and at
    most one restart per row, at least 5: a restart starts at a random row).

    Examples
    --------
    >>> _restart_counts("auto", "auto", 60, 20), _restart_counts("auto", "auto", 4000, 200)
    ((20, 5), (40, 10))
    """
    if n_init == "auto":
        n_init = 40 if cells <= 50_000 else 20 if cells <= 500_000 else 10
        n_init = min(n_init, max(5, rows))
    if n_seeded == "auto":
        n_seeded = -(-n_init // 4)  # a quarter of n_init, rounded up
    return int(n_init), int(n_seeded)


def _draws(
    d: core.CraftData | core.Blocked,
    pen: Penalty,
    m: float,
    consts: core.Constants,
    generator: np.random.Generator,
    n_init: int,
    n_seeded: int,
) -> tuple[float | None, list[Any], list[Any], Any]:
    """The fit's draws from the caller's rng, in this order: the farthest-first lambda
    (first, so that it equals ``craft_lambda(..., rng=rng)``; None unless asked for),
    then the root of the restarts' seeds: (lambda, ``n_init`` seeds, ``n_seeded`` seeds
    of the seeded runs, the seed of the rows K is chosen on). The last is spawned after
    the others, which it leaves as they were."""
    ff_lam = None
    if pen.method == "farthest_first":
        ff_lam = _singleton_lambda(d, pen.k, m, consts, generator)
    root = np.random.SeedSequence(int(generator.integers(2**63 - 1)))
    return ff_lam, root.spawn(n_init), root.spawn(n_seeded), root.spawn(1)[0]


def _sample(
    dask_prep: Any, pen: Penalty, calibrate: str, sample_rows: int, seed: Any
) -> core.CraftData | None:
    """Dask: the in-memory sample that the choice of K and the lambda calibration
    (``calibrate="sample"``) run on; None otherwise."""
    if dask_prep is None:
        return None
    if not (pen.method == "auto" or (pen.method == "calibrate" and calibrate == "sample")):
        return None
    from .dask import sample_data

    return sample_data(dask_prep, sample_rows, np.random.default_rng(seed))


def _fit_restarts(
    prep: Prepared,
    sample: core.CraftData | None,
    pen: Penalty,
    settings: core.Settings,
    consts: core.Constants,
    how: select_k.KChoice,
    seeds: list[Any],
    seeded: list[Any],
    n_jobs: int | None,
    ff_lam: float | None,
    k_seed: Any = None,
    calibrate: str = "sample",
    auto_m: bool = False,
) -> tuple[list[core.Fit], str, int | None, pd.DataFrame | None, Any]:
    """Every restart of :func:`craft`: (runs, lam_method, k, k_selection, chosen), with
    ``chosen`` None, or with ``auto_m`` the budget chosen by
    :func:`~sparseclust._craft.select_m.choose_m` (settings, constants, criterion
    table; at the K chosen when K is automatic: K is chosen at ``settings``). With neither
    ``k`` nor ``lam`` K is chosen first, on at most ``how.sample_rows`` rows drawn with
    ``k_seed`` (:func:`~sparseclust._craft.select_k.k_sample`; of the Dask sample when
    there is one), then every restart runs on all rows as ``craft(k=K)`` runs them; on
    Dask with ``calibrate="sample"`` lambda is calibrated on the sample and the
    restarts run on all rows."""
    k_selection, method = None, None
    if pen.method == "auto":
        on = prep if sample is None else replace(prep, data=sample)
        k, k_selection = select_k.choose_k(
            on,
            settings,
            consts,
            how,
            seed=seeds[0],
            n_jobs=n_jobs,
            sample_seed=k_seed,
            n_obs=prep.data.n,
        )
        pen, method = Penalty("calibrate", None, k), how.method
    on_sample = sample if calibrate == "sample" else None
    if auto_m and pen.k != 1:  # one cluster: every budget is the one-cluster model
        kk = pen.k if pen.method == "calibrate" else None
        rows = None  # in memory, larger data choose m on the rows K is (or would be) chosen on
        if isinstance(prep.data, core.CraftData) and prep.data.n > (how.sample_rows or prep.data.n):
            rows = select_k.k_sample(prep.data, how.sample_rows, k_seed)
        elif on_sample is not None:  # Dask: budgets compared on the in-memory sample
            rows = on_sample
        chosen = select_m.choose_m(
            prep.data,
            settings,
            kk,
            pen.lam if kk is None else None,
            seeds,
            seeded if kk is not None else [],
            n_jobs,
            rho_of=default_rho,
            sample=on_sample,
            on=rows,
            verbose=how.verbose,
        )
        lam_method = "calibrated" if kk is not None else "given"
        return chosen[0], method or lam_method, pen.k, k_selection, chosen[1:]
    if pen.method == "calibrate" and on_sample is not None:
        runs = restarts.calibrated_runs(
            prep.data, settings, consts, pen.k, seeds, n_jobs, seeded, sample=sample
        )
        return runs, method or "calibrated", pen.k, k_selection, None
    runs, lam_method, k = restarts.fit_all(
        prep.data, pen, settings, consts, seeds, n_jobs, lambda _g: ff_lam, seeded
    )
    return runs, method or lam_method, k, k_selection, None


def _fit_budget(m: Any, rho: float | None, lam: Any, budget: str) -> tuple[float, bool]:
    """(the m the fit starts from, whether m is chosen from the data). ``m="auto"``:
    K (when automatic) is chosen at :data:`~sparseclust._craft.select_m.K_REFERENCE_M`
    and then m by BIC; with ``budget="approximate"`` the thresholds select the
    features and m is the prior mean 0.5 (no choice)."""
    if not (isinstance(m, str) and m == "auto"):
        return m, False
    if rho is not None:
        raise ValueError(
            f"rho={rho:g} needs a numeric m (rho must lie in (0, m(1-m))); got m='auto'. "
            "Leave rho=None (each budget then uses the paper's default) or give m=."
        )
    if isinstance(lam, str) and lam == "farthest_first":
        raise ValueError(
            "m='auto' chooses the budget at a number of clusters; lam='farthest_first' "
            "needs a numeric m (the paper used m=0.5 and m=0.8): pass m=0.5, or k= alone."
        )
    return select_m.K_REFERENCE_M, budget == "fixed"


# ------------------------------------------------------------------------- public
@rules(
    k=Int(min=1),
    m=M_RULE,
    rho=RHO_RULE,
    categorical=Columns(),
    numeric=Columns(),
    scale=Flag(),
    missing=Choice(MISSING),
    alpha=ALPHA_RULE,
    rng=Seed(),
)
@screens
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
    screen: Any = True,
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

    Parameters
    ----------
    x : DataFrame, 2-D array or formula str
        The data, or a formula such as ``"~ . - id"`` with ``data=``.
    data : DataFrame, optional
        The data a formula ``x`` is read from.
    k : int
        The number of points added to T (the wanted number of clusters).
    m, rho, alpha, scale, missing : see :func:`craft`
        As in :func:`craft`.
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
        Seeds the random first point.

    Returns
    -------
    float
        The lambda to pass to ``craft(lam=...)``.

    Examples
    --------
    >>> from sparseclust.datasets import load_wine
    >>> wine = load_wine()
    >>> lam = craft_lambda("~ . - class", data=wine, k=3, rng=0)
    >>> lam > 0
    True
    """
    rho = check_rho(m, rho)
    table = read_table(
        x, data=data, categorical=categorical, numeric=numeric, missing=missing, min_rows=k + 1
    )
    prep = prepare_table(table, scale, alpha)
    consts = core.craft_constants(m, rho)
    return _singleton_lambda(prep.data, k, m, consts, as_rng(rng))


@rules(
    m=M_AUTO_RULE,
    k=K_RULE,
    rho=RHO_RULE,
    budget=Choice(("fixed", "approximate")),
    eps_c=Number(min=0, max=1, min_inclusive=False, max_inclusive=False, none=True),
    eps_v=Number(min=0, min_inclusive=False, none=True),
    categorical=Columns(),
    numeric=Columns(),
    scale=Flag(),
    missing=Choice(MISSING),
    alpha=ALPHA_RULE,
    sigma_floor=Number(min=0),
    n_init=Int(min=1, also=("auto",)),
    n_seeded=Int(min=0, also=("auto",)),
    max_iter=Int(min=1),
    shuffle=Flag(),
    k_max=Int(min=2),
    k_method=Choice(("stability", "gap")),
    n_pairs=Int(min=1),
    subsample=Number(min=0, max=1, min_inclusive=False, max_inclusive=False),
    n_refs=Int(min=1),
    k_rule=Choice(("Tibs2001SEmax", "firstSEmax", "globalmax")),
    k_sample_rows=Int(min=2),
    n_jobs=Workers(),
    keep_data=Flag(),
    backend=Choice(("auto", "numpy", "dask")),
    calibrate=Choice(("sample", "full")),
    sample_rows=Int(min=2),
    progress=Progress(),
    verbose=Flag(),
    rng=Seed(),
)
@screens
def craft(
    x: Any = None,
    /,
    *,
    data: Any = None,
    m: float | str = "auto",
    lam: float | str | None = None,
    k: int | None = None,
    rho: float | None = None,
    budget: str = "fixed",
    eps_c: float | None = None,
    eps_v: float | None = None,
    categorical: Any = None,
    numeric: Any = None,
    screen: Any = True,
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
    k_sample_rows: int = K_SAMPLE_ROWS,
    n_jobs: int | None = None,
    keep_data: bool = True,
    backend: str = "auto",
    calibrate: str = "sample",
    sample_rows: int = 50_000,
    progress: bool | None = None,
    verbose: bool = False,
    rng: Any = None,
) -> CraftResult:
    """CRAFT clustering with cluster-specific feature selection (Garg, Rudin & Jaakkola 2016).

    Parameters
    ----------
    x : DataFrame, 2-D array or formula str
        The data (numeric and categorical columns, detected by dtype), or a formula
        such as ``"~ . - id"`` with ``data=``.
    data : DataFrame, optional
        The data a formula ``x`` is read from.
    m : float in (0, 1) or "auto", default "auto"
        Fraction of features selected per cluster (fixed budget), the prior mean of
        the selection probabilities. ``"auto"``: chosen from the data by the BIC of
        the selected-feature model among 0.2, 0.3, ..., 0.9 (see Notes; the table in
        ``m_selection``, the curve in ``plot_m_selection()``); a number keeps that
        budget exactly. With ``budget="approximate"`` (features chosen by ``eps_c`` /
        ``eps_v``) ``"auto"`` stands for 0.5. ``rho=`` and ``lam="farthest_first"``
        need a numeric m.
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
    eps_c : float in (0, 1), default 0.8
        Approximate budget: the share of a cluster's spread its selected features keep.
    eps_v : float > 0, optional
        Approximate budget, numeric features. Default half the median variance of the numeric columns in the
        units clustered (0.5 when ``scale=True``; the paper's 4-6 on its raw data).
    categorical, numeric : list of str, optional
        Override detected kinds.
    screen : bool or dict, default True
        Screen the columns whose kind was detected (identifiers and free text dropped,
        numbers stored as text parsed, rare levels of many-level categoricals lumped,
        integer codes named), each decision a ``DataWarning`` kept on the result
        (``.variables.screened``); ``False`` reads every column by its dtype;
        ``{"lump_min": 20}`` sets the rows a level needs not to be lumped. See the
        guide "How columns are read".
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
        to 500,000, else 10, and at most one per row on fewer than 40 rows (at least
        5; a restart starts at a random row) (more restarts find better likelihoods: on Wine, 40
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
        Largest K considered when K is chosen automatically (at most ``sqrt(n / 2)``
        of the ``n`` rows K is chosen on, and at least 2: Mardia's rule of thumb;
        a cluster of a few rows has little spread to select features by). A fixed
        default, as mclust's ``G = 1:9`` (VarSelLCM asks for ``gvals``): pass more
        when more clusters are plausible. When the chosen K is the largest candidate
        a ``DataWarning``, the verbose print, ``summary()`` and
        ``k_selection.attrs["at_cap"]`` say so and what capped it.
    k_method : {"stability", "gap"}
        How K is chosen with neither ``k`` nor ``lam`` (see Notes). ``"stability"``
        (default): a gap test of K = 1 against K = 2, then the K = 2..k_max whose
        clustering is best reproduced across pairs of subsamples. ``"gap"``: the gap
        statistic over K = 1..k_max. ``k_selection`` holds the curve,
        ``plot_k_selection()`` draws it.
    n_pairs, subsample : int, float
        Stability: ``2 n_pairs`` subsamples (all their pairs compared) and the
        fraction of rows in each.
    n_refs : int
        Permutation reference data sets for the gap statistic (both methods).
    k_rule : {"Tibs2001SEmax", "firstSEmax", "globalmax"}
        How the gap curve picks K with ``k_method="gap"`` (R's ``cluster::maxSE``
        rules).
    k_sample_rows : int
        K is chosen automatically on at most this many rows: on larger data on a
        seeded uniform subsample of them (drawn from ``rng``), after which the
        restarts at the K chosen run on all rows, exactly as ``craft(k=K)`` runs
        them. ``k_selection.attrs`` records the rows used (``rows``, ``n_obs``) and
        the print says so. The default 5,000 keeps every data set of
        ``benchmarks/craft_k_selection.py`` (at most 4,601 rows) on all its rows;
        the choice costs at most ``2 n_pairs (k_max - 1)`` subsample fits whatever
        the data's size (``benchmarks/craft_auto_k.py``). On Dask the subsample is
        drawn from the in-memory sample of ``sample_rows`` rows (the same rows as
        in memory when all rows fit in that sample).
    n_jobs : int, optional
        Parallel restarts (None, the default: in this process). On Linux the workers
        are forked from this process and read the data from its memory (tens of
        milliseconds to start; only seeds and fits travel); elsewhere joblib's workers,
        which cost seconds to start. The result is the same for any ``n_jobs``. Pays
        on an otherwise idle machine when the restarts take most of the call (Soybean,
        K = 19: CPU critical path 1.7 -> 1.1 s with 2 workers); on a busy one the
        workers share the caller's share of the CPU.
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
        ``lam``) runs on that sample, or on ``k_sample_rows`` rows of it
        (its subsample fits and gap test alike); the restarts at the K chosen then
        run as with ``k=K``.
    sample_rows : int
        Rows of that sample.
    progress : bool, optional
        Show tqdm progress bars over the restarts and the fits of the choice of K (shown
        once a batch has run 2 s). Default: on in an interactive terminal or a
        notebook, off otherwise.
    verbose : bool, default False
        Print what the automatic choice of K does: the rows and the candidates,
        each K's criterion (mean +/- sd) and the verdict.
    rng : None, int or Generator
        Seeds the restarts and the choice of K.

    Returns
    -------
    CraftResult
        The fit: labels, selected features, profiles, print and plots.
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

    Choosing m (``m="auto"``, the default). The paper's objective is the
    small-variance limit of a likelihood in which a selected feature follows its
    cluster's distribution and an unselected one a background distribution, and has no term
    that fixes m (it is the Beta prior's mean). The budget is chosen by the BIC of
    that selected-feature model, VarSelLCM's criterion (Marbac & Sedki 2017) for
    cluster-specific selection: ``BIC = 2 NLL + p log n``, NLL the negative
    log-likelihood of the partition at the model's maximum-likelihood parameters (a
    selected numeric feature Gaussian with the cluster's mean and sd, ddof 0 and
    floored as in the fit; a selected categorical feature with the cluster's smoothed
    level shares; the cells a feature is unselected in share one background
    distribution fitted to those cells alone, not to the whole data, whose
    distribution holds the selecting clusters' cells too; the rows with the cluster
    proportions; in the units clustered), ``p`` the free parameters: per cluster 2
    for each selected numeric feature and ``L - 1`` for each selected categorical one
    with ``L`` levels, as many for the background of each feature unselected
    somewhere, and ``K - 1`` proportions. Budgets whose BICs agree to 1e-9 describe
    the same model (a feature unselected in one cluster only has that cluster's
    distribution as its background); the smallest is kept. Candidates: m = 0.2, ...,
    0.9, each with the default rho; of budgets selecting as many features of each
    kind only the one nearest 0.5 is fitted, and not all are: those nearest 0.2, 0.5
    and 0.8 first, then the neighbours of the best so far until it has both fitted (a
    local minimum of the BIC; select_m.search_budgets). Each runs the first ``min(n_init, 5)``
    calibrated and ``min(n_seeded, 2)`` seeded restarts of the fit (the same seeds
    for every budget) and is scored by its best restart (among those at ``k``); the
    lowest BIC wins and finishes with the remaining restarts, so the result is
    ``craft(m=<chosen>)`` with the same ``rng``, bit for bit, at 1.2-3.4 times its
    CPU time on the panel's data sets. On more than ``k_sample_rows`` rows the budgets are compared on the
    seeded subsample of that many rows that K is (or would be) chosen on, and the
    chosen budget then runs all its restarts on all rows (the same result again). With neither ``k`` nor ``lam`` K is chosen first, at m = 0.5 (as
    ``craft(m=0.5)`` chooses it), then m at that K; at K = 1 (given or chosen) every
    budget describes the same one-cluster model and m stays 0.5. Why BIC and not the stability of
    the partition across subsamples: BIC comes from the model CRAFT is derived
    from, costs a few restarts per budget, and on the real data sets of
    ``benchmarks/craft_auto_m.py`` it chose budgets whose adjusted Rand index was
    within 0.01 of that of m = 0.5 or above on 11 of 12 (Wine 0.88-0.90 at m = 0.9
    against 0.61-0.69; Zoo lower, 0.64 against 0.84; docs/decisions.md has the table). BIC was not used for K: this likelihood keeps
    improving with K on real data (Wine and Penguins: K = 5-7 for 3 classes).

    Choosing K (neither ``k`` nor ``lam``; ``k_method="stability"``, the default).
    First a test of K = 1 against K = 2: the gap statistic on the negative
    log-likelihood at K = 1 and 2, the observed and ``n_refs`` column-permuted
    reference data sets all fitted as ``craft(k=K)`` fits them (calibrated and seeded
    restarts, the best likelihood); K = 1 when Gap(1) >= Gap(2) - s_2 (Tibshirani,
    Walther & Hastie 2001). Otherwise K in 2..k_max by stability (Ben-Hur, Elisseeff &
    Guyon 2002; Fang & Wang 2012): ``2 n_pairs`` independent subsamples of
    ``subsample`` of the rows, the same rows for every K, each clustered into K
    clusters (four seeded restarts, two below 200 rows; the gap test's fits two
    calibrated and two seeded), every row assigned to each fit's clusters by its cost
    (as ``predict``), and every two assignments compared by the adjusted Rand index;
    the stability of K is the mean over all pairs of subsamples (the expected
    agreement of two independent subsample fits; no noisier than the mean over
    ``n_pairs`` disjoint pairs of the same fits). The K are fitted sequentially: each
    on the first 4 subsamples, then one more subsample at a time, and a K whose mean
    trails the leading K's by more than 2.33 jackknife standard errors of the
    difference (one-sided 1 %) is fitted no further (``k_selection["fits"]``) unless
    the leader's later fits fall back below its mean (then it catches up); once one K
    is left it is chosen and the fits stop. Of the K still in at the
    end the one with the highest mean is chosen, exact ties going to the larger K
    (the finer of two partitions reproduced alike).
    The adjusted index, not the raw share of agreeing pairs (which rises with K on
    data without clusters). Why not the gap statistic over every K
    (``k_method="gap"``): it recovers the paper's designs less often (fig3a and 3c 8
    of 10 seeds against 10 of 10) and on real data its curve rises with K as long as
    clusters capture dependence that the permuted reference lacks (Spambase 4-6
    clusters for 2 classes; Splice 1 for 3, its calibrated 2-cluster fit isolating a
    single point). K = 1 is decided by the gap test because stability cannot judge it
    (one cluster always agrees with itself). Cost: at most ``2 n_pairs (k_max - 1)``
    fits on ``subsample`` of the rows, about half of them on the panel's data sets
    (``benchmarks/craft_auto_k.py --panel``), in parallel with ``n_jobs``; on data of more
    than ``k_sample_rows`` rows all of it runs on a seeded subsample of that many
    rows, and only the final restarts (as ``craft(k=K)``) on all rows.

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
    m, auto_m = _fit_budget(m, rho, lam, budget)
    rho = check_rho(m, rho)
    generator = as_rng(rng)
    # the table: in memory, or persisted blocks on the Dask backend
    x, data, lazy = route_backend(x, data, backend)
    table, dask_prep = _build_table(x, data, lazy, categorical, numeric, missing, scale, alpha)
    n_obs = dask_prep.data.n if lazy else table.n_obs
    eps_c = _approximate_eps_c(budget, eps_c, eps_v)
    pen = resolve_penalty(lam, k, n_obs=n_obs, func="craft", allow_none=True)
    prep = _prepared(table, dask_prep, scale, alpha)
    # the executor: on a cluster one fit at a time (the cluster runs each in parallel)
    if lazy and not prep.data.local:
        n_jobs = None
    settings = core.Settings(
        m=m,
        rho=rho,
        budget=budget,
        eps_c=eps_c,
        eps_v=_approximate_eps_v(budget, eps_v, prep.data),
        sigma_floor=sigma_floor,
        max_iter=max_iter,
        shuffle=shuffle,
    )
    consts = core.craft_constants(m, rho)
    # the fit
    n_init, n_seeded = _restart_counts(n_init, n_seeded, n_obs * len(table.names), n_obs)
    ff_lam, seeds, seeded, k_seed = _draws(prep.data, pen, m, consts, generator, n_init, n_seeded)
    how = select_k.KChoice(
        k_method, min(k_max, n_obs), n_refs, min(n_init, 5), n_pairs, subsample, k_rule
    )
    how = replace(how, sample_rows=k_sample_rows, verbose=verbose)
    sample = _sample(dask_prep, pen, calibrate, sample_rows, seeds[0])
    inputs = (prep, sample, pen, settings, consts, how, seeds, seeded, n_jobs, ff_lam, k_seed)
    with progress_bars(progress):
        runs, method, k_wanted, k_selection, chosen = _fit_restarts(*inputs, calibrate, auto_m)
    settings, consts, m_selection = chosen if chosen is not None else (settings, consts, None)
    return conclude(
        runs,
        prep,
        k=k_wanted,
        name="CRAFT",
        call=call,
        method=method,
        consts=consts,
        settings=settings,
        params=settings.pick(*_PARAMS),
        scale=scale,
        keep_data=keep_data and not lazy,
        k_selection=k_selection,
        dask_prep=dask_prep,
        m_selection=m_selection,
    )
