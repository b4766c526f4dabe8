"""CRAFT restarts: the runs of one fit, however lambda is set, and the one reported.

Every restart is a :class:`~sparseclust._craft.core.Fit` with its ``kind``:
``"given"`` or ``"farthest_first"`` (a run at a fixed lambda, :func:`fixed_run`),
``"calibrated"`` (lambda set to give ``k`` clusters: :func:`calibrated_runs`) or
``"seeded"`` (a run at ``k`` clusters, :func:`seeded_run`). :func:`parallel` runs them
through the package's one parallel runner (or together on a cluster); :func:`choose`
picks the one to report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from .._engine.parallel import run_parallel, run_shared
from .._engine.threads import single_blas_thread
from .._tuning.penalty import Penalty
from . import core as core
from . import lam as lam_

__all__ = [
    "calibrated_runs",
    "choose",
    "criterion",
    "fit_all",
    "fixed_run",
    "parallel",
    "restart_at",
    "seeded_run",
    "seeded_tasks",
]

Data = core.CraftData | core.Blocked
Task = tuple[Callable[..., Any], tuple]


# ------------------------------------------------------------------ one restart
def fixed_run(d: Data, settings: core.Settings, lam: float, seed: Any, kind: str) -> core.Fit:
    """A run at the lambda given (``kind`` "given" or "farthest_first")."""
    out = core.craft_fit(
        d, lam, rng=np.random.default_rng(seed), with_nll=True, **settings.kwargs()
    )
    return replace(out, lam=lam, kind=kind)


def restart_at(d: Data, settings: core.Settings, k: int, seed: Any, lam: float) -> core.Fit:
    """A restart at the first restart's calibrated lambda; re-calibrated briefly from
    it (:func:`~sparseclust._craft.lam.calibrated_run` with ``start=lam``: at most 8
    fits, this one included, fits past the cluster cap stopped early) when it lands on
    another number of clusters."""
    out = core.craft_fit(
        d, lam, rng=np.random.default_rng(seed), **lam_.stop_rules(k), **settings.kwargs()
    )
    if out.state.K != k:  # the calibration's first fit, at the hint, is this one
        return lam_.calibrated_run(d, settings, k, seed, None, 8, {lam: out}, start=lam)
    return core.add_nll(d, out, lam=lam, kind="calibrated")


def seeded_run(d: Data, settings: core.Settings, k: int, seed: Any) -> core.Fit:
    """A run at ``k`` clusters: seeded k-means++-style under the CRAFT cost, then CAF
    passes without the new-cluster rule (:func:`~sparseclust._craft.core.seeded_fit`);
    its lambda is the smallest (>= 0) at which it is a fixed point of Algorithm 1."""
    out = core.seeded_fit(d, k, rng=np.random.default_rng(seed), with_nll=True, **settings.kwargs())
    return replace(out, kind="seeded")


def seeded_tasks(d: Data, settings: core.Settings, k: int, seeds: Sequence[Any]) -> list[Task]:
    """One seeded ``k``-cluster run per seed (restart candidates beside the calibrated
    runs, chosen among them by the same criterion), as tasks for :func:`parallel`;
    none for ``k`` < 2."""
    return [(seeded_run, (d, settings, k, s)) for s in seeds] if k >= 2 else []


# ------------------------------------------------------------ all the restarts
def _calibrate(
    on: Data, settings: core.Settings, consts: core.Constants, k: int, seeds: Sequence[Any]
) -> list[core.Fit]:
    """Calibrated runs on ``on``, one per seed, until one reaches ``k`` clusters (for a
    given seed the number of clusters can jump over ``k``)."""
    hi = lam_.lambda_hi(on, consts, settings.sigma_override)
    runs: list[core.Fit] = []
    for j, seed in enumerate(seeds):
        runs.append(lam_.calibrated_run(on, settings, k, seed, hi, max_fits=40 if j == 0 else 15))
        if runs[-1].state.K == k:
            break
    return runs


def calibrated_runs(
    d: Data,
    settings: core.Settings,
    consts: core.Constants,
    k: int,
    seeds: Sequence[Any],
    n_jobs: int | None,
    seeded: Sequence[Any] = (),
    *,
    sample: core.CraftData | None = None,
) -> list[core.Fit]:
    """Calibrate lambda on the first restart that can reach ``k`` clusters, then run
    the remaining restarts at that lambda (each re-calibrated briefly if it lands
    elsewhere), and the seeded runs (one per seed in ``seeded``) in the same parallel
    batch.

    With an in-memory ``sample`` (Dask) lambda is calibrated on the sample (the last
    calibrated lambda when none reaches ``k``) and every restart runs on all rows at it;
    the sample's runs are not returned."""
    if sample is None:
        runs = _calibrate(d, settings, consts, k, seeds)
        lam_ref = runs[-1].lam if runs and runs[-1].state.K == k else None
        rest = seeds[len(runs) :] if lam_ref is not None else []
    else:
        on_sample = _calibrate(sample, settings, consts, k, seeds)
        runs, lam_ref, rest = [], on_sample[-1].lam if on_sample else None, seeds
    tasks: list[Task] = [(restart_at, (d, settings, k, s, lam_ref)) for s in rest]
    return runs + parallel(n_jobs, tasks + seeded_tasks(d, settings, k, seeded), d)


def fit_all(
    d: Data,
    pen: Penalty,
    settings: core.Settings,
    consts: core.Constants,
    seeds: Sequence[Any],
    n_jobs: int | None,
    ff_lambda: Callable[[np.random.Generator], float],
    seeded: Sequence[Any] = (),
) -> tuple[list[core.Fit], str, int | None]:
    """Runs for every restart, however lambda is set (given, calibrated to ``k`` or
    farthest-first: ``ff_lambda(rng)``). With ``k`` alone, one seeded ``k``-cluster run
    per seed in ``seeded`` is added (:func:`seeded_tasks`). Returns (runs, lam_method, k)."""
    if pen.method == "calibrate":
        with single_blas_thread():  # as every fit runs: set once, not per fit
            runs = calibrated_runs(d, settings, consts, pen.k, seeds, n_jobs, seeded)
        return runs, "calibrated", pen.k
    if pen.method == "farthest_first":
        lam, method = ff_lambda(np.random.default_rng(seeds[0])), "farthest_first"
    else:
        lam, method = pen.lam, "given"
    runs = parallel(n_jobs, [(fixed_run, (d, settings, lam, s, method)) for s in seeds], d)
    return runs, method, pen.k


def _apply(f: Callable[..., Any], *args: Any) -> Any:
    return f(*args)


def _apply_to(shared: Any, f: Callable[..., Any], *args: Any) -> Any:
    return f(shared, *args)


def parallel(n_jobs: int | None, tasks: list[Task], d: Any = None) -> list[Any]:
    """``[f(*a) for f, a in tasks]`` through the package's parallel runners; on a
    cluster (``d``'s executor runs fits together) the fits run at once, their passes
    batched into one task per worker. Tasks whose first argument is one and the same
    object (the data every restart reads) run on forked workers that read it from
    this process's memory (:func:`~sparseclust._engine.parallel.run_shared`: they start
    in milliseconds and only seeds and results travel); others through joblib."""
    together = getattr(getattr(d, "executor", None), "run_together", None)
    if together is not None:
        return together([partial(f, *a) for f, a in tasks])
    shared = tasks[0][1][0] if tasks and tasks[0][1] else None
    if shared is not None and all(a and a[0] is shared for _, a in tasks):
        rest = [(f, *a[1:]) for f, a in tasks]
        return run_shared(_apply_to, shared, rest, n_jobs=n_jobs, desc="CRAFT fits")
    return run_parallel(_apply, [(f, *a) for f, a in tasks], n_jobs=n_jobs, desc="CRAFT fits")


# ---------------------------------------------------------------- the reported
def criterion(run: core.Fit, consts: core.Constants, d: Data) -> float:
    """Likelihood plus the objective's penalties (the choice with a given lambda)."""
    st = run.state
    return run.nll + (run.lam + (d.P + d.Q) * consts.F0) * st.K + consts.F_delta * float(st.v.sum())


def choose(runs: list[core.Fit], k: int | None, d: Data, consts: core.Constants) -> core.Fit:
    """The restart to report: among runs with the wanted number of clusters (else the
    nearest), converged ones first, the lowest negative log-likelihood (with a given
    lambda: likelihood plus the objective's penalties). Calibrated and seeded runs
    compete alike (a seeded run that lost a cluster is not at ``k``)."""
    runs = [r for r in runs if r.converged] or runs
    pool = [r for r in runs if k is None or r.state.K == k] or runs
    if k is not None and pool is runs:
        pool = sorted(runs, key=lambda r: abs(r.state.K - k))
        pool = [r for r in pool if abs(r.state.K - k) == abs(pool[0].state.K - k)]
    if k is not None:
        return min(pool, key=lambda r: r.nll)
    return min(pool, key=lambda r: criterion(r, consts, d))
