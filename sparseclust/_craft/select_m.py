"""Choosing CRAFT's budget m from the data (``craft(m="auto")``, the default).

The paper's objective has no term that fixes m (it is the prior mean of the
selection probabilities), so the budget is chosen by a model criterion: the BIC of
the selected-feature model that CRAFT's objective is the small-variance limit of
(:func:`bic`), at the model's maximum-likelihood parameters: the cells a feature
is unselected in follow one background distribution fitted to them, not the whole
data's (:func:`neg_loglik`); budgets whose BICs tie (:data:`TIE`) describe the same
model and the smallest is kept. The budgets of :data:`M_GRID` (those giving the same
per-cluster feature counts as a smaller one left out: :func:`candidate_budgets`) are
searched (:func:`search_budgets`: three spread budgets, then the neighbours of the
best) and each fitted with the first few of the fit's restarts (:func:`first_stage`);
the budget with the lowest BIC is completed with the remaining restarts
(:func:`finish`), which gives ``craft(m=<that budget>)``'s result bit for bit: every
candidate's restarts are restarts of the final fit. :func:`choose_m` runs it and returns the criterion table.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from .._engine.threads import single_blas_thread
from . import core as core
from . import restarts as restarts

__all__ = [
    "COARSE",
    "K_REFERENCE_M",
    "M_GRID",
    "TIE",
    "Job",
    "MStage",
    "bic",
    "candidate_budgets",
    "choose_m",
    "finish",
    "first_stage",
    "m_choice_text",
    "n_parameters",
    "neg_loglik",
    "search_budgets",
]

#: The budgets ``m="auto"`` compares (before those with repeated counts are dropped).
M_GRID = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
#: The budget at which K is chosen when neither ``k`` nor ``m`` is given (the
#: fixed default of earlier versions; then m is chosen at that K).
K_REFERENCE_M = 0.5

Data = core.CraftData | core.Blocked


def candidate_budgets(P: int, Q: int, grid: Sequence[float] = M_GRID) -> list[float]:
    """The budgets of ``grid`` with distinct fixed-budget counts on ``P`` numeric and
    ``Q`` categorical features (``round(m P)`` and ``round(m Q)``, halves up, at least
    one of each kind present), in increasing order: of budgets that select as many
    features of each kind only the one nearest :data:`K_REFERENCE_M` (0.5, the paper's
    default, whose selection prior is symmetric) is fitted, the smaller of two as near
    (the selection, hence the model and its BIC, depends on m only through these counts).

    Examples
    --------
    >>> candidate_budgets(5, 2)  # Penguins: 5 numeric, 2 categorical columns
    [0.2, 0.4, 0.5, 0.7, 0.8, 0.9]
    >>> candidate_budgets(1, 1)  # one budget selects what any other would
    [0.5]
    """
    groups: dict[tuple[int, int], float] = {}
    for m in grid:
        counts = (core.fixed_count(m, P), core.fixed_count(m, Q))
        best = groups.get(counts)
        if best is None or abs(m - K_REFERENCE_M) < abs(best - K_REFERENCE_M) - 1e-12:
            groups[counts] = float(m)
    return sorted(groups.values())


def n_parameters(d: Data, st: core.State) -> int:
    """Free parameters of the selected-feature model of state ``st`` on ``d``.

    Per cluster and selected numeric feature a mean and a standard deviation (2); per
    cluster and selected categorical feature with ``L`` levels its ``L - 1`` level
    shares; the background parameters of each feature unselected in at least one
    cluster (2 per numeric feature, ``L - 1`` per categorical one: the distribution
    its unselected cells share); and ``K - 1`` cluster proportions.

    Examples
    --------
    >>> import numpy as np
    >>> d = core.prepare(np.zeros((4, 1)), np.array([[0], [1], [2], [0]]), [3], alpha=0.01)
    >>> st = core.State(np.zeros((2, 1)), np.ones((2, 1)), np.zeros((2, 3)), np.zeros((2, 3)),
    ...                 np.array([[True, False], [True, True]]))
    >>> n_parameters(d, st)  # 2 x 2 numeric + 2 categorical + background 2 + K - 1
    9
    """
    P = d.P
    L1 = np.asarray(d.L) - 1
    num = 2 * int(st.v[:, :P].sum())
    cat = int((st.v[:, P:] * L1[None, :]).sum())
    background = ~st.v.all(axis=0)
    glob = 2 * int(background[:P].sum()) + int(L1[background[P:]].sum())
    return num + cat + glob + st.K - 1


def _k_stats(block: core.CraftData, offset: int, state: Any, K: int) -> tuple[Any, Any]:
    """A block's :func:`~sparseclust._craft.core.block_stats` under its labels."""
    labels = np.asarray(state["labels"], dtype=np.int64)
    return state, core.block_stats(block, labels, K)


def _cluster_stats(d: Data, fit: core.Fit) -> dict[str, Any]:
    """Per-cluster counts, numeric sums, sums of squares, observed cells and level
    counts of ``fit``'s partition (:func:`~sparseclust._craft.core.block_stats`, added
    up over the blocks); a fit whose labels live on a cluster's workers is read from a
    copy of its states (the kernels consume the states they read)."""
    K = fit.state.K
    if isinstance(d, core.CraftData):
        return core.block_stats(d, np.asarray(fit.labels, dtype=np.int64), K)
    ex = d.executor
    if fit.states is None:
        states = [{"labels": fit.labels[a : a + n]} for a, n in zip(ex.offsets, ex.sizes)]
    else:
        states = ex.copy(fit.states)
    states, parts = ex.map(_k_stats, states, K)
    if fit.states is not None:
        core.release_states(d, replace(fit, states=states))
    return core.sum_stats(parts)


def _gauss(s1: Any, s2: Any, cnt: Any, mu: Any, sd: Any) -> Any:
    """``sum (x - mu)^2 / (2 sd^2) + log sd`` over cells with these sums."""
    return (s2 - 2.0 * mu * s1 + cnt * mu * mu) / (2.0 * sd * sd) + cnt * np.log(sd)


def neg_loglik(d: Data, fit: core.Fit, sigma_floor: float = 0.05) -> float:
    """Negative log-likelihood of ``fit``'s partition under the selected-feature model
    with every parameter at its maximum-likelihood value.

    A cell of a selected feature follows its cluster's distribution (numeric:
    Gaussian with the cluster's mean and sd, the fit's own; categorical: the cluster's
    smoothed level shares); the cells of a feature left unselected follow one
    background distribution, fitted to those cells only (numeric: their mean and sd,
    ddof 0, floored at ``sigma_floor`` global sds as a cluster's, the global sd below
    two cells; categorical: their level shares, smoothed by ``alpha``); the rows
    follow the cluster proportions (``-sum n_k log(n_k / n)``). Missing cells
    contribute nothing. The background is not the whole data's distribution: that
    holds the selected clusters' cells too (on data whose clusters differ on a few
    features each, the whole data's sd of a feature is inflated by the one cluster it
    separates, and every other cluster then gains by selecting it: the budget is
    driven to the largest)."""
    stats = _cluster_stats(d, fit)
    st, P = fit.state, d.P
    v, nk = st.v, stats["nk"]
    total = -float(np.sum(nk[nk > 0] * np.log(nk[nk > 0] / nk.sum())))
    if P:
        s1, s2, cnt = stats["s1"], stats["s2"], stats["cnt"]
        sel = v[:, :P]
        total += float(_gauss(s1, s2, cnt, st.zeta, st.sigma)[sel].sum())
        off = ~sel
        S1, S2, C = (np.where(off, a, 0.0).sum(axis=0) for a in (s1, s2, cnt))
        has = C > 0
        mu = np.divide(S1, C, out=np.zeros(P), where=has)
        var = np.maximum(np.divide(S2, C, out=np.zeros(P), where=has) - mu * mu, 0.0)
        sd_g = np.where(d.col_sd > 0, d.col_sd, 1.0)
        sd = np.where(C >= 2, np.maximum(np.sqrt(var), sigma_floor * sd_g), sd_g)
        total += float(_gauss(S1, S2, C, mu, sd)[has].sum())
    if d.Q:
        counts, lq = stats["counts"], d.level_q
        sel = v[:, P:][:, lq]  # (K, S): a level column's feature selected
        total -= float((counts * st.log_eta)[sel].sum())
        c = np.where(sel, 0.0, counts).sum(axis=0)  # background level counts
        n_q = np.bincount(lq, weights=c, minlength=d.Q)
        share = (c + d.alpha) / (n_q[lq] + d.alpha * np.asarray(d.L)[lq])
        total -= float((c * np.log(share)).sum())
    return total


def bic(d: Data, fit: core.Fit, sigma_floor: float = 0.05) -> float:
    """The BIC of a fit: ``2 NLL + n_parameters log n``, NLL the negative
    log-likelihood of the selected-feature model at its maximum-likelihood parameters
    (:func:`neg_loglik`: a selected feature follows its cluster's distribution, an
    unselected one the background distribution of the cells it is unselected in, the
    rows the cluster proportions; in the units clustered), ``n`` the rows
    (:func:`n_parameters`)."""
    return _criterion(d, fit, sigma_floor)[2]


def _criterion(d: Data, fit: core.Fit, sigma_floor: float) -> tuple[float, int, float]:
    """(NLL, parameters, BIC) of a fit (:func:`bic`)."""
    nll = neg_loglik(d, fit, sigma_floor)
    p = n_parameters(d, fit.state)
    return nll, p, 2.0 * nll + p * math.log(d.n)


@dataclass
class MStage:
    """The restarts of one candidate budget so far: calibrated runs (the calibration's
    own, then those at its lambda), seeded runs, and the lambda the remaining restarts
    run at (None when no calibrated run reached ``k``: the candidate then finishes
    from scratch)."""

    m: float
    settings: core.Settings
    consts: core.Constants
    cal: list[core.Fit]
    rest: list[core.Fit]
    seeded: list[core.Fit]
    lam_ref: float | None

    @property
    def runs(self) -> list[core.Fit]:
        return self.cal + self.rest + self.seeded


@dataclass(frozen=True)
class Job:
    """What every candidate's restarts share: the data, the wanted ``k`` (None with a
    given lambda), the workers, and the Dask backend's in-memory sample that lambda is
    calibrated on (None in memory)."""

    d: Data
    k: int | None
    n_jobs: int | None
    sample: core.CraftData | None = None

    def run(
        self, st: MStage, seeds: Sequence[Any], seeded: Sequence[Any]
    ) -> tuple[list[core.Fit], list[core.Fit]]:
        """(runs at the stage's lambda for ``seeds``, seeded runs for ``seeded``), in one
        parallel batch."""
        d, s, k = self.d, st.settings, self.k
        if k is None:  # lambda given: independent runs at it
            tasks = [(restarts.fixed_run, (d, s, st.lam_ref, x, "given")) for x in seeds]
        else:
            tasks = [(restarts.restart_at, (d, s, k, x, st.lam_ref)) for x in seeds]
        n_at = len(tasks)
        if k is not None:
            tasks += restarts.seeded_tasks(d, s, k, seeded)
        out = restarts.parallel(self.n_jobs, tasks, d)
        return out[:n_at], out[n_at:]


def first_stage(job: Job, stage: MStage, seeds: Sequence[Any], seeded: Sequence[Any]) -> MStage:
    """The first restarts of a candidate, exactly as
    :func:`~sparseclust._craft.restarts.calibrated_runs` runs them for these seeds
    (``job.k`` None: runs at the given lambda ``stage.lam_ref``)."""
    k = job.k
    if k is not None and job.sample is None:
        cal = restarts._calibrate(job.d, stage.settings, stage.consts, k, seeds)
        hit = bool(cal) and cal[-1].state.K == k
        stage = replace(stage, cal=cal, lam_ref=cal[-1].lam if hit else None)
        seeds = seeds[len(cal) :] if hit else []
    elif k is not None:  # Dask: lambda calibrated on the in-memory sample
        on = restarts._calibrate(job.sample, stage.settings, stage.consts, k, seeds)
        stage = replace(stage, lam_ref=on[-1].lam if on else None)
    rest, seeded_runs = job.run(stage, seeds, seeded)
    return replace(stage, rest=rest, seeded=seeded_runs)


def finish(job: Job, stage: MStage, seeds: Sequence[Any], seeded: Sequence[Any]) -> list[core.Fit]:
    """All restarts of the chosen candidate: its first-stage runs and the rest of
    ``seeds`` / ``seeded``, in the order of
    :func:`~sparseclust._craft.restarts.calibrated_runs` (the result of
    ``craft(m=stage.m)`` with the same seeds, bit for bit)."""
    if job.k is not None and stage.lam_ref is None:
        return restarts.calibrated_runs(
            job.d, stage.settings, stage.consts, job.k, seeds, job.n_jobs, seeded, sample=job.sample
        )
    done = len(stage.cal) + len(stage.rest)
    rest, seeded_runs = job.run(stage, seeds[done:], seeded[len(stage.seeded) :])
    return stage.cal + stage.rest + rest + stage.seeded + seeded_runs


def choose_m(
    d: Data,
    settings: core.Settings,
    k: int | None,
    lam: float | None,
    seeds: Sequence[Any],
    seeded: Sequence[Any],
    n_jobs: int | None,
    *,
    rho_of: Callable[[float], float],
    sample: core.CraftData | None = None,
    on: core.CraftData | None = None,
    grid: Sequence[float] = M_GRID,
    verbose: bool = False,
) -> tuple[list[core.Fit], core.Settings, core.Constants, pd.DataFrame]:
    """Choose m by BIC and return (all restarts at it, its settings, its constants,
    the criterion table).

    The budgets of :func:`candidate_budgets` that :func:`search_budgets` visits (three
    spread ones, then the neighbours of the best so far) each run with the first
    ``min(len(seeds), 5)`` calibrated restarts and ``min(len(seeded), 2)`` seeded ones
    (``k`` None: the first 5 runs at ``lam``) and are scored by the :func:`bic` of
    their best restart (as :func:`~sparseclust._craft.restarts.choose` picks it); the
    lowest BIC wins (ties to the smaller m; a budget whose restarts missed ``k`` loses
    to one that reached it) and finishes with all the restarts (:func:`finish`).
    ``rho`` is ``rho_of(m)`` (the paper's default) for each m.

    ``on``: other rows the candidates run on (in memory: larger data's seeded
    subsample, the rows K is chosen on); the chosen budget then runs all its restarts
    on ``d`` (the result of ``craft(m=<chosen>)`` all the same, without the reuse).

    The table has one row per budget fitted, in increasing m: ``m``, ``n_numeric`` and
    ``n_categorical`` (features selected per cluster), ``n_clusters``, ``neg_loglik``,
    ``n_params``, ``bic`` and ``chosen``; ``attrs`` record ``criterion``,
    ``restarts``, ``grid``, ``candidates`` (every budget of :func:`candidate_budgets`,
    fitted or not) and ``rows`` (the rows the candidates ran on).
    """
    P, Q = d.P, d.Q
    full = Job(d, k, n_jobs, sample)
    job = full if on is None else Job(on, k, n_jobs)
    d = job.d
    n_first, n_first_seeded = min(len(seeds), 5), min(len(seeded), 2)
    fitted: dict[float, tuple[MStage, dict[str, Any]]] = {}

    def fit(m: float) -> None:
        if m not in fitted:
            s = replace(settings, m=m, rho=rho_of(m))
            st = MStage(m, s, core.craft_constants(m, s.rho), [], [], [], lam)
            st = first_stage(job, st, seeds[:n_first], seeded[:n_first_seeded])
            best = restarts.choose(st.runs, k, d, st.consts)
            nll, n_par, crit = _criterion(d, best, s.sigma_floor)
            core.release_states(d, *[r for r in st.runs if r is not best])
            row = {
                "m": m,
                "n_numeric": core.fixed_count(m, P),
                "n_categorical": core.fixed_count(m, Q),
                "n_clusters": best.state.K,
                "neg_loglik": nll,
                "n_params": n_par,
                "bic": crit,
            }
            fitted[m] = (st, row)

    def best(ms: list[float]) -> float:
        return ms[_choice(pd.DataFrame([fitted[m][1] for m in ms]), k)]

    candidates = candidate_budgets(P, Q, grid)
    with single_blas_thread():  # as every fit runs: set once, not per fit
        search_budgets(candidates, fit, best)
    table = pd.DataFrame([fitted[m][1] for m in sorted(fitted)])
    i = _choice(table, k)
    table["chosen"] = np.arange(len(table)) == i
    table.attrs.update(
        criterion="BIC",
        restarts=(n_first, n_first_seeded),
        grid=tuple(grid),
        candidates=tuple(candidates),
        rows=int(d.n),
    )
    if verbose:
        print(m_choice_text(table))
    st = fitted[float(table["m"].iloc[i])][0]
    if on is not None:  # the candidates ran on other rows: all restarts anew on d
        st = replace(st, cal=[], rest=[], seeded=[], lam_ref=lam if k is None else None)
    with single_blas_thread():
        runs = finish(full, st, seeds, seeded)
    return runs, st.settings, st.consts, table


#: The budgets fitted first by :func:`search_budgets` (the candidates nearest these).
COARSE = (0.2, 0.5, 0.8)


def search_budgets(
    candidates: Sequence[float],
    fit: Callable[[float], Any],
    best: Callable[[list[float]], float],
) -> list[float]:
    """The budgets the choice fits, in the order fitted: the candidates nearest
    :data:`COARSE` (all of them when there are at most 3), then, as long as the best
    budget so far (``best(fitted)``) has a neighbour among the candidates not yet
    fitted, those neighbours. ``fit(m)`` fits budget ``m``.

    The budget chosen is thus no worse than both its neighbours in the grid (a local
    minimum of the BIC, reached from the best of three spread budgets): on the panel's
    11 data sets under 6,000 rows x 3 seeds this chose the full grid's budget on every
    run, fitting 4-6 of 8 candidates.

    Examples
    --------
    >>> bic = {0.2: 5.0, 0.3: 4.0, 0.4: 3.0, 0.5: 4.5, 0.6: 6.0, 0.7: 7.0, 0.8: 6.5, 0.9: 8.0}
    >>> search_budgets(list(bic), lambda m: None, lambda ms: min(ms, key=bic.get))
    [0.2, 0.5, 0.8, 0.4, 0.6, 0.3]
    """
    cands = sorted(candidates)
    if len(cands) <= len(COARSE):
        order = cands
    else:
        order = list(dict.fromkeys(min(cands, key=lambda m: (abs(m - c), m)) for c in COARSE))
    for m in order:
        fit(m)
    while True:
        i = cands.index(best(sorted(order)))
        todo = [cands[j] for j in (i - 1, i + 1) if 0 <= j < len(cands) and cands[j] not in order]
        if not todo:
            return order
        for m in todo:
            fit(m)
        order += todo


def _choice(table: pd.DataFrame, k: int | None) -> int:
    """The row of the lowest BIC (ties: the smallest m, :func:`_lowest`), among the
    budgets whose best restart reached ``k`` clusters when any did."""
    score = table["bic"].where(np.isfinite(table["bic"]), np.inf)
    if k is not None:  # a budget whose restarts missed k loses to one that reached it
        score = score.where(table["n_clusters"] == k, np.inf)
    if np.isfinite(score).any():
        return _lowest(score.to_numpy())
    return _lowest(table["bic"].to_numpy())


#: BICs within this share of the lowest (at least this much in absolute value) tie:
#: equal models reached by different selections (a feature unselected in one cluster
#: only is that cluster's own distribution, as if selected) differ by rounding alone.
TIE = 1e-9


def _lowest(score: np.ndarray) -> int:
    """The first (smallest m) of the budgets whose score ties with the lowest (:data:`TIE`).

    Examples
    --------
    >>> _lowest(np.array([5.0, -1129.622111, -1129.622111 - 1e-10, np.inf]))
    1
    """
    best = float(np.nanmin(score))
    return int(np.flatnonzero(score <= best + TIE * max(1.0, abs(best)))[0])


def m_choice_text(table: pd.DataFrame) -> str:
    """Each budget's BIC and the verdict, one line each (``verbose=True``).

    Examples
    --------
    >>> tab = pd.DataFrame({"m": [0.2, 0.5], "n_numeric": [1, 2], "n_categorical": [0, 0],
    ...                     "bic": [120.0, 100.0], "chosen": [False, True]})
    >>> print(m_choice_text(tab))
      m = 0.2 (1 numeric, 0 categorical per cluster): BIC 120.0
      m = 0.5 (2 numeric, 0 categorical per cluster): BIC 100.0
    m = 0.5 chosen by BIC over 2 budgets.
    """
    lines = [
        f"  m = {r.m:g} ({r.n_numeric} numeric, {r.n_categorical} categorical per "
        f"cluster): BIC {r.bic:.1f}"
        for r in table.itertuples()
    ]
    lines.append(f"{m_verdict(table)}.")
    return "\n".join(lines)


def m_verdict(table: pd.DataFrame) -> str:
    """``"m = 0.7 chosen by BIC over 6 budgets"`` (``"over 5 of 8 budgets"`` when the
    search left candidates unfitted)."""
    m = float(table.loc[table["chosen"], "m"].iloc[0])
    n_cand = len(table.attrs.get("candidates", table["m"]))
    of = f" of {n_cand}" if n_cand > len(table) else ""
    return f"m = {m:g} chosen by BIC over {len(table)}{of} budgets"
