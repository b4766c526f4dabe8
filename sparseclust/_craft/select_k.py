"""Choosing K for CRAFT when neither ``k`` nor ``lam`` is given.

``k_method="stability"`` (:func:`stability_select`): a gap test of K = 1 against
K = 2, then the K whose clustering is best reproduced across pairs of subsamples;
``k_method="gap"`` (:func:`gap_select`): the gap statistic on the model's negative
log-likelihood over K = 1..k_max. :func:`choose_k` runs the one asked for, on at
most ``k_sample_rows`` rows (:func:`k_sample`: a seeded uniform subsample of larger
data, in memory and on Dask alike), over K up to ``sqrt(n / 2)`` (:func:`k_cap`), with
lighter fits on small data (:func:`choice_fits`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from .._data.params import user_stacklevel
from .._tuning.gap import choose_by_gap
from ..exceptions import DataWarning
from . import core as core
from . import lam as lam_
from . import restarts as restarts
from .prepared import Prepared

__all__ = [
    "KChoice",
    "adjusted_rand",
    "agreement",
    "best_nll",
    "choice_fits",
    "cap_note",
    "cap_reason",
    "choose_k",
    "contenders",
    "fit_labels",
    "gap_select",
    "jackknife_se",
    "k_cap",
    "k_sample",
    "pair_mean",
    "ref_curve",
    "stability_choice",
    "stability_select",
    "stability_stats",
    "subsample_labels",
]


@dataclass(frozen=True)
class KChoice:
    """How :func:`sparseclust.craft` chooses K (its arguments of the same names).

    Attributes
    ----------
    method : str
        ``"stability"`` or ``"gap"`` (``k_method``).
    k_max : int
        Largest K considered (at most the number of rows).
    n_refs : int
        Permutation reference data sets of the gap statistic.
    n_restarts : int
        Calibrated restarts per fit (``min(n_init, 5)``).
    n_pairs : int
        Stability: pairs of subsamples.
    subsample : float
        Stability: the fraction of rows in each subsample.
    rule : str
        The gap rule of ``k_method="gap"`` (``k_rule``).
    sample_rows : int or None
        K is chosen on a seeded uniform subsample of this many rows of larger data
        (``k_sample_rows``; None: on all rows).
    verbose : bool
        Print what the choice does: the rows and candidates, each K's criterion and
        the verdict.
    """

    method: str
    k_max: int
    n_refs: int
    n_restarts: int
    n_pairs: int
    subsample: float
    rule: str
    sample_rows: int | None = None
    verbose: bool = False


def k_cap(n: int) -> int:
    """The largest K worth considering on ``n`` rows: ``sqrt(n / 2)`` (Mardia, Kent &
    Bibby's rule of thumb for the number of clusters), at least 2. Above it clusters
    hold a handful of rows, which have little spread to select features by, and a
    subsample fit at such K reproduces little but costs as much as any (the choice of
    K on 20 rows considered K up to 10 and took a minute). The default ``k_max=8``
    binds from 128 rows on.

    Examples
    --------
    >>> k_cap(20), k_cap(50), k_cap(128), k_cap(3)
    (3, 5, 8, 2)
    """
    return max(2, math.isqrt(n // 2))


#: Below this many rows the choice of K runs lighter fits (:func:`choice_fits`).
LIGHT_ROWS = 200
#: From :data:`LIGHT_ROWS` rows on: ((calibrated, seeded) restarts of each fit of the
#: gap test, (calibrated, seeded) of each subsample fit), each at most ``n_restarts``;
#: None: ``craft(k=)``'s procedure with ``n_restarts`` (earlier versions; Bank's
#: whole call 12.5 s CPU, 89 % of it calibrating subsample fits, against 3.5 s).
PAIR_FITS: tuple[tuple[int, int], tuple[int, int]] | None = ((2, 2), (0, 4))


def choice_fits(n: int, n_restarts: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(calibrated, seeded) restarts of each fit of the gap test and of each stability
    subsample fit, on ``n`` rows.

    With :data:`PAIR_FITS` None, from :data:`LIGHT_ROWS` rows on both are
    ``craft(k=)``'s procedure with ``n_restarts`` calibrated restarts and a quarter as
    many seeded ones. On fewer
    rows the calibration of lambda to K clusters is the cost (a subsample of a few
    dozen rows jumps over K at most lambdas: dozens of fits per restart): the gap test
    takes at most 2 calibrated and 2 seeded restarts, and the subsample fits 2 seeded
    ones (they always reach K). Same choices on the tests' designs (fig. 2c on 100
    rows, two clusters and one Gaussian cloud on 20 to 150 rows); 20 rows in 0.3-0.7 s
    instead of a minute.

    From :data:`LIGHT_ROWS` rows on the fits are :data:`PAIR_FITS`: the gap test 2
    calibrated and 2 seeded restarts, each subsample fit 4 seeded ones (the
    calibration of lambda was 89 % of the choice's cost on Bank, and the choice most
    of the whole call's). The paper's designs (fig. 2c, fig. 3c) and the Dask test's
    3-cluster design keep their K = 3 (with 2 seeded restarts fig. 3c's subsample fits
    landed in poor optima: K = 5).

    Examples
    --------
    >>> choice_fits(20, 5)
    ((2, 2), (0, 2))
    >>> choice_fits(500, 5)
    ((2, 2), (0, 4))
    """
    if n >= LIGHT_ROWS:
        same = (n_restarts, -(-n_restarts // 4))  # as craft(k=): a quarter, rounded up
        if PAIR_FITS is None:
            return same, same
        (g_cal, g_seed), (p_cal, p_seed) = PAIR_FITS
        return (min(g_cal, n_restarts), g_seed), (min(p_cal, n_restarts), p_seed)
    return (min(n_restarts, 2), 2), (0, 2)


def k_sample(
    d: core.CraftData, max_rows: int | None, seed: np.random.SeedSequence
) -> core.CraftData:
    """The rows K is chosen on: all of ``d`` when it has at most ``max_rows`` rows,
    else a uniform subsample of ``max_rows`` rows without replacement, in data order,
    drawn with ``default_rng(seed)`` (same global statistics: standardisation, level
    shares, the sd floor's reference). One rule in memory and on Dask, where ``d`` is
    the backend's in-memory sample (all rows when they fit in it, so that the Dask
    choice draws the rows the in-memory one draws)."""
    if max_rows is None or d.n <= max_rows:
        return d
    rows = np.sort(np.random.default_rng(seed).choice(d.n, size=max_rows, replace=False))
    return core.take_rows(d, rows)


def choose_k(
    prep: Prepared,
    settings: core.Settings,
    consts: core.Constants,
    how: KChoice,
    *,
    seed: np.random.SeedSequence,
    n_jobs: int | None,
    sample_seed: np.random.SeedSequence | None = None,
    n_obs: int | None = None,
) -> tuple[int, pd.DataFrame]:
    """(K, its criterion table) by the method of ``how``, on :func:`k_sample` of
    ``prep.data`` (drawn with ``sample_seed``) and K at most :func:`k_cap` of its rows.
    The table's ``attrs`` record ``rows`` (the rows K was chosen on), ``n_obs`` (the
    data's rows: ``n_obs``, else those of ``prep.data``) and ``k_method``."""
    n_obs = prep.data.n if n_obs is None else n_obs
    if sample_seed is not None:
        prep = replace(prep, data=k_sample(prep.data, how.sample_rows, sample_seed))
    common: dict[str, Any] = dict(
        k_max=min(how.k_max, k_cap(prep.data.n)),
        n_refs=how.n_refs,
        seed=seed,
        n_jobs=n_jobs,
        n_restarts=how.n_restarts,
    )
    if how.verbose:
        print(
            f"Choosing K by {how.method} on {prep.data.n} of {n_obs} rows: K = 1 .. "
            f"{common['k_max']} ({how.n_restarts} restarts per fit)"
        )
    if how.method == "gap":
        k, table = gap_select(prep, settings, consts, rule=how.rule, **common)
    else:
        k, table = stability_select(
            prep, settings, consts, n_pairs=how.n_pairs, subsample=how.subsample, **common
        )
    table.attrs.update(rows=int(prep.data.n), n_obs=int(n_obs), k_method=how.method)
    table.attrs["flat"] = curve_is_flat(table, k, how.n_pairs)
    table.attrs["at_cap"] = cap_reason(k, common["k_max"], how.k_max, prep.data.n)
    if how.verbose:
        print(verdict_text(table, k))
    if table.attrs["flat"]:
        flat = verdict_text(replace_attrs(table, at_cap=""), k).splitlines()[-1]
        warnings.warn(
            f"automatic K: {flat} Compare the fits at those K (fit.plot_k_selection()), "
            "or set k= yourself.",
            DataWarning,
            stacklevel=user_stacklevel(),
        )
    if table.attrs["at_cap"]:
        warnings.warn(
            f"automatic K: {cap_note(table, k)}", DataWarning, stacklevel=user_stacklevel()
        )
    return k, table


def replace_attrs(table: pd.DataFrame, **attrs: Any) -> pd.DataFrame:
    """A shallow copy of ``table`` with ``attrs`` updated."""
    out = table.copy(deep=False)
    out.attrs = {**table.attrs, **attrs}
    return out


def cap_note(table: pd.DataFrame, k: int) -> str:
    """The sentence that tells the user the chosen ``k`` is the largest candidate
    (``table.attrs["at_cap"]``, :func:`cap_reason`), else ``""``."""
    cap, rows = table.attrs.get("at_cap"), table.attrs.get("rows")
    name = "stability" if "stability" in table.columns else "gap"
    if cap == "k_max":
        room = f" (at most {k_cap(rows)} on these {rows:,} rows)" if rows else ""
        return (
            f"K = {k} is the largest K considered (k_max={k}): the {name} may peak "
            f"beyond it; pass a larger k_max{room}."
        )
    if cap == "rows":
        return (
            f"K = {k} is the largest K considered: sqrt(n / 2) of the {rows:,} rows K was "
            "chosen on (smaller clusters have little spread to select features by); pass "
            "k= to fit more clusters."
        )
    return ""


def cap_reason(k: int, k_top: int, k_max: int, n: int) -> str:
    """``""``, or when the chosen ``k`` (>= 2) is the largest candidate ``k_top``, what
    capped the candidates: ``"k_max"`` (the argument; the rows allowed more) or
    ``"rows"`` (:func:`k_cap` of the ``n`` rows K was chosen on).

    Examples
    --------
    >>> cap_reason(8, 8, 8, 683), cap_reason(18, 18, 30, 683), cap_reason(5, 8, 8, 683)
    ('k_max', 'rows', '')
    """
    if k < 2 or k != k_top:
        return ""
    return "k_max" if k_max <= k_cap(n) else "rows"


def _criterion(table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """(K, criterion, its sd, name) of a K-selection table: stability where it has one
    (K >= 2), else the gap statistic."""
    name = "stability" if "stability" in table.columns else "gap"
    k = table["k"].to_numpy(dtype=float)
    y = table[name].to_numpy(dtype=float)
    sd = table[f"sd_{name}"].to_numpy(dtype=float)
    return k, y, sd, name


def curve_is_flat(table: pd.DataFrame, k: int, n_pairs: int | None = None) -> bool:
    """Whether the chosen ``k`` (>= 2) does not beat a neighbouring K's criterion by
    more than the noise: the larger of the two standard errors of the mean stability
    (``se_stability``, the jackknife's over subsamples; sd / sqrt(``n_pairs``) for a
    table without it), or of the gap's ``sd_gap`` (Tibshirani's s_k). The curve
    is then flat there and the data do not support the choice between them. For the
    gap statistic only the step from ``k - 1`` counts (its rule already stops where
    ``k + 1`` adds nothing); an exact tie without noise (two perfectly stable K) is
    not flat.

    Examples
    --------
    >>> tab = pd.DataFrame({"k": [2, 3, 4], "stability": [0.50, 0.52, 0.40],
    ...                     "sd_stability": [0.05, 0.04, 0.05]})
    >>> curve_is_flat(tab, 3), curve_is_flat(tab.assign(stability=[0.2, 0.52, 0.3]), 3)
    (True, False)
    """
    ks, y, sd, name = _criterion(table)
    if name == "stability" and "se_stability" in table.columns:
        sd = table["se_stability"].to_numpy(dtype=float)  # of the mean over all pairs
    elif name == "stability" and n_pairs:
        sd = sd / np.sqrt(n_pairs)
    at = np.flatnonzero(ks == k)
    if k < 2 or at.size == 0 or not np.isfinite(y[at[0]]):
        return False
    i = int(at[0])
    # the gap rule already takes K where K + 1 adds nothing beyond noise: there only
    # the step up from K - 1 must stand out; a stability peak must stand out both ways
    for j in (i - 1,) if name == "gap" else (i - 1, i + 1):
        if 0 <= j < len(y) and ks[j] >= 2 and np.isfinite(y[j]):
            if y[i] - y[j] < max(sd[i], sd[j] if np.isfinite(sd[j]) else 0.0):
                return True
    return False


def verdict_text(table: pd.DataFrame, k: int) -> str:
    """Each K's criterion (mean +/- sd) and the verdict, one line each."""
    ks, y, sd, name = _criterion(table)
    fits = (
        table["fits"].to_numpy(dtype=float) if "fits" in table.columns else np.full(len(ks), np.nan)
    )
    top = np.nanmax(fits) if np.isfinite(fits).any() else np.nan
    lines = [
        f"  K = {int(kk)}: {name} {v:.3f} +/- {s:.3f}"
        + (f" (left after {int(f)} of {int(top)} subsamples)" if f < top else "")
        for kk, v, s, f in zip(ks, y, sd, fits, strict=True)
        if np.isfinite(v)
    ]
    if table.attrs.get("flat"):
        lines.append(
            f"K = {k} chosen, but its {name} does not beat a neighbouring K's beyond "
            "noise (one standard error): the curve is flat there."
        )
    else:
        lines.append(f"K = {k} chosen.")
    if cap_note(table, k):
        lines.append(cap_note(table, k))
    return "\n".join(lines)


# -------------------------------------------------------------------- gap statistic
def best_nll(
    d: core.CraftData,
    settings: core.Settings,
    consts: core.Constants,
    k: int,
    seeds: Sequence[np.random.SeedSequence],
    n_seeded: int,
) -> float:
    """The lowest negative log-likelihood at ``k`` clusters over ``len(seeds)``
    calibrated restarts and ``n_seeded`` seeded ones (what ``craft(k=)`` compares);
    NaN when no restart has ``k`` clusters."""
    spawned = seeds[-1].spawn(n_seeded) if n_seeded and k >= 2 else []
    runs = restarts.calibrated_runs(d, settings, consts, k, seeds, None, spawned)
    hits = [r.nll for r in runs if r.state.K == k]
    core.release_states(d, *runs)
    return min(hits) if hits else np.nan


def gap_select(
    prep: Prepared,
    settings: core.Settings,
    consts: core.Constants,
    *,
    k_max: int,
    n_refs: int,
    seed: np.random.SeedSequence,
    n_jobs: int | None,
    n_restarts: int,
    rule: str = "Tibs2001SEmax",
    n_seeded: int = 0,
) -> tuple[int, pd.DataFrame]:
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
            obs[j] = best_nll(d, settings, consts, kk, fit_seeds, n_seeded)
            continue
        runs = restarts.calibrated_runs(d, settings, consts, kk, fit_seeds, n_jobs)
        hits = [r.nll for r in runs if r.state.K == kk]
        obs[j] = min(hits) if hits else np.nan
    same = (n_restarts, n_seeded) if n_seeded else None
    tasks: list[restarts.Task] = [
        (ref_curve, (prep, settings, consts, ks, s, same)) for s in ref_seeds[1:]
    ]
    R = np.vstack(restarts.parallel(n_jobs, tasks)) / d.n
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


def ref_curve(
    prep: Prepared,
    settings: core.Settings,
    consts: core.Constants,
    ks: list[int],
    seed: np.random.SeedSequence,
    same: tuple[int, int] | None = None,
) -> np.ndarray:
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
        return np.array([best_nll(dd, settings, consts, kk, seeds, same[1]) for kk in ks])
    hi = lam_.lambda_hi(dd, consts)
    vals = np.full(len(ks), np.nan)
    for j, kk in enumerate(ks):
        r = lam_.calibrated_run(dd, settings, kk, seed, hi)
        vals[j] = r.nll if r.state.K == kk else np.nan
        hi = r.lam * 1.5
    return vals


# ------------------------------------------------------------------------ stability
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


def subsample_labels(
    d: core.CraftData,
    settings: core.Settings,
    consts: core.Constants,
    k: int,
    rows: np.ndarray,
    seed: np.random.SeedSequence,
    n_restarts: int,
    n_seeded: int,
) -> np.ndarray | None:
    """Fit ``k`` clusters on the rows ``rows`` as ``craft(k=)`` does (calibrated and
    seeded restarts, lowest negative log-likelihood) and assign every row of ``d`` to
    the fitted clusters by the fit's cost (as ``predict``); None when no restart
    reached ``k`` clusters."""
    return fit_labels(d, core.take_rows(d, rows), settings, consts, k, seed, n_restarts, n_seeded)


def fit_labels(
    d: core.CraftData,
    sub: core.CraftData,
    settings: core.Settings,
    consts: core.Constants,
    k: int,
    seed: np.random.SeedSequence,
    n_restarts: int,
    n_seeded: int,
) -> np.ndarray | None:
    """:func:`subsample_labels` on a subsample ``sub`` of ``d`` taken once
    (``core.take_rows``) and shared by the fits at every K: its blocking and row
    caches are built once, and the labels are those of a fresh copy bit for bit."""
    seeds = seed.spawn(n_restarts + n_seeded)
    runs = restarts.calibrated_runs(
        sub, settings, consts, k, seeds[:n_restarts], None, seeds[n_restarts:]
    )
    best = restarts.choose(runs, k, sub, consts)
    core.release_states(sub, *[r for r in runs if r is not best])
    if best.state.K != k:
        return None
    D = core.costs(d, best.state, consts.F_delta, sigma_override=settings.sigma_override)
    return D.argmin(axis=1)


#: The sequential stability test (:func:`stability_select`): (fits, z). Once every K
#: has been fitted on ``fits`` subsamples, after each further subsample a K is no
#: longer fitted when the leading K's mean agreement beats its own by more than ``z``
#: jackknife standard errors (one-sided 1 % at 2.33), and the fits stop once one K is
#: left. None: every K is fitted on every subsample (the complete table).
EARLY_DROP: tuple[int, float] | None = (4, 2.33)


def stability_select(
    prep: Prepared,
    settings: core.Settings,
    consts: core.Constants,
    *,
    k_max: int,
    n_pairs: int,
    subsample: float,
    n_refs: int,
    seed: np.random.SeedSequence,
    n_jobs: int | None,
    n_restarts: int,
) -> tuple[int, pd.DataFrame]:
    """Choose K by the reproducibility of the clustering across subsamples, after a
    gap test of K = 1 against K = 2.

    1. K = 1 or more: the gap statistic at K = 1 and 2 (:func:`gap_select` with
       ``n_seeded``: the observed and the ``n_refs`` column-permuted reference curves
       all take the best of ``craft(k=K)``'s calibrated and seeded restarts); K = 1
       when Gap(1) >= Gap(2) - s_2 (Tibshirani, Walther & Hastie's rule).
    2. Otherwise, for K = 2..k_max: ``2 n_pairs`` subsamples (``n_pairs`` pairs of
       them, each ``subsample`` of the rows, without replacement, independent of the
       others), the same rows for every K; each is clustered into K clusters as
       ``craft(k=K)`` does, every row of the data assigned to the fitted clusters by
       the fit's cost, and every two assignments compared by the adjusted Rand index.
       Stability(K) is the mean over all pairs of subsamples (a U-statistic: the
       expected agreement of two independent subsample fits, the quantity the mean
       over the ``n_pairs`` disjoint pairs estimates, with no larger variance); K is
       the most stable (:func:`stability_choice`). This is the clustering
       instability of Ben-Hur, Elisseeff & Guyon (2002) and Fang & Wang (2012), with
       the chance-corrected Rand index as the similarity: the raw share of agreeing
       pairs rises with K on data without clusters, the adjusted index does not.
       Subsamples keep the whole data's global statistics (standardisation, global
       level shares, the sd floor's reference).
    3. Sequentially (:data:`EARLY_DROP`): every K is fitted on the first subsamples,
       then one subsample at a time is added; a K whose mean agreement trails the
       leading K's by more than ``z`` jackknife standard errors of the difference
       (over the subsamples fitted so far, the same ones for both) is not fitted
       further, and cannot be chosen unless it comes back: a K left earlier is fitted
       again (first on the subsamples it missed) once the leader's mean is no longer
       above its own (a leader whose later fits fell apart); once a single K is left
       it is the choice and the fits stop. The table keeps each K's mean over the subsamples it was fitted
       on (column ``fits``) and ``se_stability`` its jackknife standard error. The K
       fitted on the most subsamples compete.
    """
    (n_gap, n_seeded), pair_fits = choice_fits(prep.data.n, n_restarts)
    gap_seed, pair_root = seed.spawn(2)
    _, gap_table = gap_select(
        prep,
        settings,
        consts,
        k_max=2,
        n_refs=n_refs,
        seed=gap_seed,
        n_jobs=n_jobs,
        n_restarts=n_gap,
        n_seeded=n_seeded,
    )
    g, s = gap_table["gap"].to_numpy(), gap_table["sd_gap"].to_numpy()
    one = choose_by_gap([1, 2], g, s, "Tibs2001SEmax") == 0
    ks = list(range(2, k_max + 1))
    size = max(int(round(subsample * prep.data.n)), k_max)
    A, fitted = agreement(
        prep.data, settings, consts, ks, pair_root, n_pairs, size, pair_fits, n_jobs, EARLY_DROP
    )
    stab, sd, se = stability_stats(A, fitted)
    last = fitted == fitted.max()  # those still in at the end (and left there) compete
    chosen = 1 if one else stability_choice(ks, np.where(last, stab, np.nan))
    nan = [np.nan] * (len(ks) - 1)
    table = pd.DataFrame(
        {
            "k": [1, *ks],
            "stability": [np.nan, *stab],
            "sd_stability": [np.nan, *sd],
            "se_stability": [np.nan, *se],
            "fits": [np.nan, *fitted.astype(float)],
            "gap": [g[0], g[1], *nan],
            "sd_gap": [s[0], s[1], *nan],
            "chosen": [kk == chosen for kk in [1, *ks]],
        }
    )
    table.attrs["gap_test"] = "K = 1" if one else "K > 1"  # the verdict plots draw
    return chosen, table


def _draw_subsamples(
    d: core.CraftData, pair_root: np.random.SeedSequence, n_pairs: int, size: int, n_k: int
) -> tuple[list[np.ndarray], list[list[np.random.SeedSequence]]]:
    """The ``2 n_pairs`` subsamples (rows, in data order) and each one's fit seed per
    K: pair ``b`` draws its two row sets from ``default_rng`` of its seed and the fit
    of side ``i`` at the ``j``-th K takes that seed's child ``2 j + i`` (the rows and
    seeds of earlier versions, which drew both per K)."""
    rows, seeds = [], []
    for ps in pair_root.spawn(n_pairs):
        g_rows = np.random.default_rng(ps)
        rows += [np.sort(g_rows.choice(d.n, size, replace=False)) for _ in range(2)]
        kids = ps.spawn(2 * n_k)
        seeds += [[kids[2 * j + side] for j in range(n_k)] for side in range(2)]
    return rows, seeds


def _fit_task(
    shared: tuple[core.CraftData, list[core.CraftData]],
    s: int,
    settings: core.Settings,
    consts: core.Constants,
    k: int,
    seed: np.random.SeedSequence,
    fits: tuple[int, int],
) -> np.ndarray | None:
    d, subs = shared
    return fit_labels(d, subs[s], settings, consts, k, seed, *fits)


def agreement(
    d: core.CraftData,
    settings: core.Settings,
    consts: core.Constants,
    ks: list[int],
    pair_root: np.random.SeedSequence,
    n_pairs: int,
    size: int,
    fits: tuple[int, int],
    n_jobs: int | None,
    early: tuple[int, float] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(A, fitted): ``A[j, s, t]`` the adjusted Rand index between the assignments of
    the fits of subsamples ``s`` and ``t`` at the ``j``-th K (NaN where either fit
    missed K or was not run; NaN diagonal) and ``fitted[j]`` the subsamples fitted at
    it (the first ``fitted[j]``). Each subsample (``size`` rows, :func:`_draw_subsamples`)
    is taken once and fitted at every K with ``fits = (n_restarts, n_seeded)``. With
    ``early = (first, z)`` the K still in contention (:func:`contenders`) are fitted
    one subsample at a time from ``first`` subsamples on (a K back in contention first
    catches up), until one is left (the winner: it stops there too) or those in are
    fitted on all subsamples; None: every K on all."""
    rows, seeds = _draw_subsamples(d, pair_root, n_pairs, size, len(ks))
    shared = (d, [core.take_rows(d, r) for r in rows])
    S = len(rows)
    labels: list[list[np.ndarray | None]] = [[None] * S for _ in ks]
    A = np.full((len(ks), S, S), np.nan)
    fitted = np.zeros(len(ks), dtype=np.int64)
    active = np.ones(len(ks), dtype=bool)
    r = S if early is None else min(max(early[0], 2), S)
    while True:
        cells = [(j, s) for j in np.flatnonzero(active) for s in range(fitted[j], r)]
        tasks: list[restarts.Task] = [
            (_fit_task, (shared, s, settings, consts, ks[j], seeds[s][j], fits)) for j, s in cells
        ]
        for (j, s), lab in zip(cells, restarts.parallel(n_jobs, tasks), strict=True):
            labels[j][s] = lab
            for t in range(s):
                if lab is not None and labels[j][t] is not None:
                    A[j, s, t] = A[j, t, s] = adjusted_rand(lab, labels[j][t])
        fitted[active] = r
        if early is None:
            return A, fitted
        active = contenders(ks, A, fitted, active, early[1])
        if active.sum() < 2 or (r == S and (fitted[active] == S).all()):
            return A, fitted  # the winner decided, or every K still in fitted on all
        r = min(r + 1, S)


def pair_mean(A: np.ndarray, idx: Sequence[int] | np.ndarray) -> float:
    """The mean agreement over the pairs of subsamples ``idx`` (NaN pairs left out;
    NaN when none is left).

    Examples
    --------
    >>> A = np.array([[np.nan, 0.5, 1.0], [0.5, np.nan, np.nan], [1.0, np.nan, np.nan]])
    >>> pair_mean(A, [0, 1, 2]), pair_mean(A, [1, 2])
    (0.75, nan)
    """
    v = _pair_values(A, idx)
    return float(v.mean()) if v.size else np.nan


def _pair_values(A: np.ndarray, idx: Sequence[int] | np.ndarray) -> np.ndarray:
    """The finite agreements of the pairs of subsamples ``idx`` (upper triangle)."""
    idx = np.asarray(idx)
    a, b = np.triu_indices(idx.size, 1)
    v = A[idx[a], idx[b]]
    return v[np.isfinite(v)]


def jackknife_se(A: np.ndarray, B: np.ndarray | None, r: int) -> float:
    """The jackknife standard error, over the first ``r`` subsamples, of
    ``pair_mean(A) - pair_mean(B)`` (two K's agreement matrices on the same
    subsamples; ``B`` None: of ``pair_mean(A)``): ``sqrt((r - 1) / r sum_i (D_-i -
    mean D_-i)^2)`` with ``D_-i`` the value without subsample ``i`` (NaN leave-outs
    left out; NaN when fewer than two are left).

    Examples
    --------
    >>> A = np.array([[np.nan, 1.0, 0.0], [1.0, np.nan, 0.5], [0.0, 0.5, np.nan]])
    >>> round(jackknife_se(A, None, 3), 6), jackknife_se(A, A, 3)
    (0.57735, 0.0)
    """
    full = np.arange(r)
    rest = [full[full != i] for i in full]
    d = np.array([pair_mean(A, x) - (0.0 if B is None else pair_mean(B, x)) for x in rest])
    d = d[np.isfinite(d)]
    if d.size < 2:
        return np.nan
    return float(np.sqrt((r - 1) / r * ((d - d.mean()) ** 2).sum()))


def contenders(
    ks: list[int], A: np.ndarray, fitted: np.ndarray, active: np.ndarray, z: float
) -> np.ndarray:
    """Which K are fitted further in the sequential stability test: the leading K
    (:func:`stability_choice` over those in, all fitted on the same ``r`` subsamples),
    every K in whose mean agreement does not trail the leader's by more than ``z``
    jackknife standard errors of the paired difference (:func:`jackknife_se`), and every
    K left earlier (fitted on fewer subsamples) whose mean is no longer below the
    leader's: a leader whose later subsample fits fell apart lets it in again. A K no
    fit of which reached K clusters is out.

    Examples
    --------
    >>> A = np.full((2, 4, 4), 0.9); A[1] = 0.3; A[1, 0, 1] = A[1, 1, 0] = 0.5
    >>> contenders([2, 3], A, np.array([4, 4]), np.array([True, True]), 2.33).tolist()
    [True, False]
    """
    means = np.array([pair_mean(A[j], np.arange(f)) for j, f in enumerate(fitted)])
    if not np.isfinite(means[active]).any():
        return active.copy()
    lead = ks.index(stability_choice(ks, np.where(active, means, np.nan)))
    r = int(fitted[lead])
    out = np.isfinite(means) & (fitted >= 2)
    for j in np.flatnonzero(out):
        if j == lead:
            continue
        if fitted[j] == r:  # on the same subsamples: the paired test
            se = jackknife_se(A[lead], A[j], r)
            out[j] = not (np.isfinite(se) and means[lead] - means[j] > z * se)
        else:  # left earlier: back once the leader's mean is no longer above its own
            out[j] = means[lead] <= means[j]
    return out


def stability_stats(A: np.ndarray, fitted: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per K: (mean agreement over the pairs of the subsamples it was fitted on, the sd
    of those pairs' indices, the jackknife standard error of the mean)."""
    stab, sd, se = (np.full(len(fitted), np.nan) for _ in range(3))
    for j, r in enumerate(fitted):
        v = _pair_values(A[j], np.arange(int(r)))
        if v.size:
            stab[j], sd[j] = v.mean(), v.std()
            se[j] = jackknife_se(A[j], None, int(r))
    return stab, sd, se


def adjusted_rand(a: np.ndarray, b: np.ndarray) -> float:
    """The adjusted Rand index of two labelings by non-negative integer codes, in exact
    integer arithmetic then one division: the value (bit for bit) of
    ``sklearn.metrics.adjusted_rand_score``, without importing scikit-learn (seconds,
    more than the whole choice of K on small data).

    Examples
    --------
    >>> adjusted_rand(np.array([0, 0, 1, 2]), np.array([0, 0, 1, 1]))
    0.5714285714285714
    >>> adjusted_rand(np.array([0, 0, 1, 1]), np.array([1, 1, 0, 0]))
    1.0
    """
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    n = int(a.size)
    nb = int(b.max()) + 1 if n else 1
    table = np.bincount(a * nb + b).astype(np.int64)
    sq = int((table * table).sum())
    rows = np.bincount(a).astype(np.int64)
    cols = np.bincount(b).astype(np.int64)
    tp = sq - n
    fp = int((cols * cols).sum()) - sq  # pairs together in b only
    fn = int((rows * rows).sum()) - sq  # together in a only
    tn = n * n - fp - fn - sq
    if fn == 0 and fp == 0:
        return 1.0
    return 2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn))
