"""Lambda for CRAFT: the paper's farthest-first heuristic and calibration to ``k`` clusters.

:func:`farthest_first` is the heuristic of section 4 (:func:`sparseclust.craft_lambda`,
``lam="farthest_first"``); :func:`calibrated_run` sets lambda for one restart by
bisection so that its converged clustering has ``k`` clusters, starting below
:func:`lambda_hi`, and stops fits that pass ``k`` clusters early (:func:`stop_rules`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tuning.penalty import calibrate_lambda
from . import core as core

__all__ = [
    "HINT_RTOL",
    "HINT_STEP",
    "PATIENCE",
    "PATIENCE_BELOW",
    "calibrated_run",
    "cluster_cap",
    "farthest_first",
    "lambda_hi",
    "singleton_selection",
    "stop_rules",
]


# --------------------------------------------------------------- farthest first
def singleton_selection(data: core.CraftData, i: int, m: float) -> np.ndarray:
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
        n_sel = core.fixed_count(m, P)
        v[np.argsort(-z, kind="stable")[:n_sel]] = True
    if Q:
        st = core.singleton(data, i, v)
        score = core.category_scores(data, st)[0]
        n_sel = core.fixed_count(m, Q)
        v[P + np.argsort(-score, kind="stable")[:n_sel]] = True
    return v


def farthest_first(
    d: core.CraftData | core.Blocked,
    k: int,
    selection: Callable[[core.CraftData], np.ndarray],
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


# ------------------------------------------------------------------ calibration
def cluster_cap(k: int) -> int:
    """Fits passing this many clusters are stopped during calibration (lambda too
    small): ``k + max(3, ceil(k / 4))`` (was ``2 k + 2``). On the panel's 12 data sets
    (3 seeds each, 4,376 calibration fits that ended with ``k`` clusters or fewer) no
    such fit ever had more than ``k + 2`` clusters; fits that pass the cap end above
    ``k`` and only tell the calibration that lambda is too small.

    Examples
    --------
    >>> [cluster_cap(k) for k in (1, 2, 3, 7, 19)]
    [4, 5, 6, 10, 24]
    """
    return k + max(3, -(-k // 4))


#: Calibration fits with more than k clusters for this many passes in a row are stopped
#: too (lambda too small): in about 1,900 calibration fits on the paper's synthetic
#: designs, Wine, Spambase, Splice, Monk-3 and Penguins, runs that ended with k
#: clusters or fewer had more than k for at most 4 passes in a row; in 4,096 on the
#: panel's 11 sets under 6,000 rows (3 seeds each, no such stop), at most 3 (one fit;
#: 4,092 never). 5 (was 6) saves 4-5 % of the passes with the same labels on those fits.
PATIENCE = 5


#: The first step (a factor) of a calibration from a hint (a lambda calibrated to ``k``
#: on another restart of the same fit). The number of clusters moves fast with lambda
#: near ``k``: on Soybean (K = 19) the restarts reach 19 clusters between 0.85 and 1.3
#: times the first restart's lambda and pass the cluster cap at 0.7 times it, so a
#: step of 2 (the halving from one cluster) mostly lands past ``k`` and is bisected back.
HINT_STEP = 1.25
#: A calibration from a hint stops bisecting when the bracket's lambdas are within this
#: share (``rtol``; 1e-3 from the one-cluster lambda): re-calibrated restarts that skip
#: ``k`` inside so narrow a bracket rarely reach it closer. On the panel (12 data sets,
#: 3 seeds) against 1e-3: the same restarts chosen on all 36 fits, 13 % fewer fits on
#: Soybean (K = 19).
HINT_RTOL = 0.02


#: Calibration fits three or more clusters short of k, and gaining none, for this many
#: passes in a row are stopped too (lambda too large): ``stop_below=(k - 2, 3)``. On the
#: panel's 11 sets under 6,000 rows (``craft(X, k=K)``, m chosen; seeds 0-7 on the sets
#: with K >= 3, 0-2 on the others: 12,472 calibration fits, 7,300 of them ending with k
#: clusters or more or stopped above), a fit that ended with k or more was 3 or more
#: short of k without gaining a cluster for at most 1 pass in a row (3 = that plus a
#: margin of 2), and a fit stopped by this rule would have gained at most 1 cluster
#: more when stopped 3 short (2 when 4 short, 3 when 7 short). A fit can stay one short
#: of k for 20 passes and still gain the cluster (Penguins). Saves a fifth of Soybean's
#: passes (K = 19); it never stops a fit when k <= 4 (fewer than k - 2 clusters for 3
#: passes: none, or one, and a fit with one cluster two passes in a row has converged).
PATIENCE_BELOW = 3


def stop_rules(k: int) -> dict[str, Any]:
    """:func:`~sparseclust._craft.core.craft_fit` keywords that stop a calibration fit
    once lambda is clearly too small (:func:`cluster_cap`, :data:`PATIENCE`) or too
    large (:data:`PATIENCE_BELOW`) for ``k`` clusters.

    Examples
    --------
    >>> stop_rules(19)
    {'max_clusters': 24, 'stop_above': (19, 5), 'stop_below': (17, 3)}
    """
    return {
        "max_clusters": cluster_cap(k),
        "stop_above": (k, PATIENCE),
        "stop_below": (k - 2, PATIENCE_BELOW),
    }


def lambda_hi(
    d: core.CraftData | core.Blocked, consts: core.Constants, sigma_override: float | None = None
) -> float:
    """A lambda large enough for one cluster: the largest cost of a point to the
    global cluster with every feature selected, plus margin."""
    return core.max_global_cost(d, consts.F_delta, sigma_override) * 2.0 + 1.0


def calibrated_run(
    d: core.CraftData | core.Blocked,
    settings: core.Settings,
    k: int,
    seed: Any,
    hi: float | None,
    max_fits: int = 40,
    known: dict[float, core.Fit] | None = None,
    *,
    start: float | None = None,
) -> core.Fit:
    """Lambda calibrated to ``k`` clusters for one seed: halved from ``hi`` (one
    cluster), or stepped from the hint ``start`` by :data:`HINT_STEP`, its square, ...
    and bisected to :data:`HINT_RTOL` (:func:`~sparseclust._tuning.penalty.calibrate_lambda`). A fit depends only on
    lambda here (same seed, same stopping rules), so a lambda tried twice, or one in
    ``known`` (lambda -> fit already made with this seed and ``k``), is not fitted
    again: the same fit, hence the same result, at no cost."""
    memo: dict[float, core.Fit] = dict(known or {})
    kw = {**stop_rules(k), **settings.kwargs()}
    rng = np.random.default_rng(seed)
    fresh = rng.bit_generator.state  # each fit starts from the seed's state

    def fit(lam: float) -> core.Fit:
        if lam not in memo:
            rng.bit_generator.state = fresh
            memo[lam] = core.craft_fit(d, lam, rng=rng, **kw)
        return memo[lam]

    # warn=False, not a warnings filter: restarts may run in threads (on a cluster)
    out, lam, trace = calibrate_lambda(
        fit,
        lambda r: r.state.K,
        k,
        hi=hi,
        start=start,
        step=HINT_STEP,
        max_fits=max_fits,
        rtol=1e-3 if start is None else HINT_RTOL,
        warn=False,
    )
    core.release_states(d, *[other for other in memo.values() if other is not out])
    return core.add_nll(d, out, lam=lam, calibration=trace, kind="calibrated")
