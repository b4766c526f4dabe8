"""Sparse k-means fits at a grid of bounds, on the data and on permuted copies.

The layer between the fronts of :mod:`sparseclust._sparse.kmeans` and the core
(:mod:`sparseclust._sparse.kmeans_core`): one initial partition per data set, then a
fit per bound (:func:`fit_bounds`); the permutation null of
``kmeans_sparse_permute`` runs the same on copies of the data with every column
permuted (:func:`run_permutations`). What a fit needs besides the data travels as one
:class:`FitSettings` (pickled to the joblib workers); what comes back is the core's
:class:`~sparseclust._sparse.kmeans_core.SparseKMeansFit`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np

from .._data.params import user_stacklevel
from .._engine.blocks import LocalBlocks
from .._engine.parallel import progress_bar, run_shared
from .._engine.threads import single_blas_thread
from ..exceptions import ConvergenceWarning
from .kmeans_core import SparseKMeansFit, initial_blocks, sparse_kmeans_blocks
from .lloyd import drop_states, local_labels, one_block

__all__ = [
    "FitSettings",
    "NullRun",
    "PermutationRuns",
    "fit_bounds",
    "refit_bound",
    "run_permutations",
    "warn_fits",
]


#: Cells times fits (``n p`` x bounds x (permutations + 1)) below which a permutation
#: tuning runs in this process whatever ``n_jobs`` (a worker's start, about 10 ms, is
#: then a noticeable share: 60 x 100 with 10 bounds and 10 permutations is 660,000).
PARALLEL_MIN_CELLS = 200_000


@dataclass(frozen=True, eq=False)
class FitSettings:
    """How every fit of one call runs (the same on the data and on permuted copies).

    Attributes
    ----------
    mode : {"exact", "sparcl"}
        The weight step (``weights=`` of the fronts).
    algorithm : {"hartigan-wong", "lloyd"}
        The k-means of the partition step (``"auto"`` already resolved).
    nstart : int
        Random starts of the initial, unweighted k-means.
    max_iter : int
        Rounds (partition step + weight step) per fit.
    centers : ndarray (k, p) or None
        Starting centres of the initial k-means, on the scale clustered on.
    warm : bool
        Whether each bound starts from the previous bound's partition (sparcl's path)
        rather than from the shared initial partition.
    """

    mode: str
    algorithm: str
    nstart: int
    max_iter: int
    centers: np.ndarray | None
    warm: bool


class NullRun(NamedTuple):
    """The fits on one permuted copy of the data: what the gap statistic needs."""

    #: Objective ``sum w BCSS`` at the end of each bound's fit.
    objectives: list[float]
    #: Whether each bound's fit converged.
    converged: list[bool]


class PermutationRuns(NamedTuple):
    """The fits on the data and the objectives on the permuted copies."""

    #: The fits on the (possibly sampled) data, one per bound.
    fits: list[SparseKMeansFit]
    #: Objective per bound on the data, ``O(s)``.
    tots: np.ndarray
    #: Objective per bound (rows) and permutation (columns), ``O*(s)``.
    permtots: np.ndarray
    #: Fits on permuted copies that did not converge (all bounds, all copies).
    perm_not_converged: int
    #: The initial partition of the data (label states of a one-block executor), for
    #: :func:`refit_bound` (None: make it again).
    init: Any = None


def fit_one(
    ex: Any, p: int, k: int, wbound: float, init: list[Any], settings: FitSettings, seed: int
) -> SparseKMeansFit:
    """One fit at one bound from the partition ``init`` (label states); in memory with
    the labels fetched."""
    with single_blas_thread():
        out = sparse_kmeans_blocks(
            ex,
            init,
            k,
            wbound,
            p=p,
            mode=settings.mode,
            algorithm=settings.algorithm,
            max_iter=settings.max_iter,
            rng=np.random.default_rng(seed),
        )
    if isinstance(ex, LocalBlocks):
        out = replace(out, labels=local_labels(ex, out.states))
    return out


def _initial(ex: Any, k: int, settings: FitSettings, seed: int) -> list[Any]:
    """The initial, unweighted k-means partition (label states)."""
    with single_blas_thread():
        return initial_blocks(
            ex,
            k,
            algorithm=settings.algorithm,
            nstart=settings.nstart,
            centers=settings.centers,
            rng=np.random.default_rng(seed),
            notes=[],
        )


def _bound_seeds(wb: np.ndarray, seed: int) -> tuple[int, list[int]]:
    """(seed of the initial partition, seed of each bound's fit) of one data set."""
    g = np.random.default_rng(seed)
    s_init, *pool = (int(v) for v in g.integers(2**63 - 1, size=wb.size + 1))
    # each bound's seed (for sparcl's random restart of a partition step) goes by its
    # rank among the bounds, so that independent fits do not depend on the order given
    return s_init, [pool[r] for r in np.argsort(np.argsort(wb, kind="stable"), kind="stable")]


def refit_bound(
    ex: Any,
    p: int,
    k: int,
    wb: np.ndarray,
    i: int,
    settings: FitSettings,
    seed: int,
    init: Any = None,
) -> SparseKMeansFit:
    """The independent fit at ``wb[i]``: from the data set's initial partition with that
    bound's seed, exactly as :func:`fit_bounds` with ``warm=False`` fits it (sparcl's
    refit ``KMeansSparseCluster(x, K, wbounds = bestw)`` after its permute, here from the
    same initial partition as the tuning). ``init``: that partition, when the tuning
    kept it (the same states: not made again)."""
    s_init, seeds = _bound_seeds(wb, seed)
    own = init is None
    if own:
        init = _initial(ex, k, settings, s_init)
    out = fit_one(ex, p, k, float(wb[i]), ex.copy(init), replace(settings, warm=False), seeds[i])
    if own:
        drop_states(ex, init)
    return out


def fit_bounds(
    ex: Any,
    p: int,
    k: int,
    wb: np.ndarray,
    settings: FitSettings,
    seed: int,
    progress: bool = False,
    keep_init: bool = False,
) -> Any:
    """Fits of one data set (an executor of row blocks, ``p`` columns) at every bound,
    from one initial partition; ``progress``: a bar over the bounds. ``keep_init``:
    ``(fits, initial partition's states)``, for :func:`refit_bound`."""
    s_init, seeds = _bound_seeds(wb, seed)
    init = _initial(ex, k, settings, s_init)
    outs, start = [], init
    bounds = progress_bar(zip(wb, seeds, strict=True), progress, "bounds", total=len(wb))
    for s, sd in bounds:
        out = fit_one(ex, p, k, float(s), ex.copy(start), settings, sd)
        outs.append(out)
        if settings.warm:
            start = out.states
    if keep_init:
        return outs, init
    drop_states(ex, init)
    return outs


def _permuted(X: np.ndarray, seed: int) -> np.ndarray:
    """Each column permuted independently (sparcl's null), from its own seed."""
    g = np.random.default_rng(seed)
    return g.permuted(X, axis=0)


def _perm_task(
    X: np.ndarray,
    k: int,
    wb: np.ndarray,
    settings: FitSettings,
    seed_perm: int | None,
    seed_fit: int,
) -> list[SparseKMeansFit] | NullRun:
    """Fits at every bound on the data (``seed_perm`` None: all outputs kept) or on one
    permuted copy (objectives and convergence only)."""
    if seed_perm is None:  # (fits, initial partition)
        return fit_bounds(one_block(X), X.shape[1], k, wb, settings, seed_fit, keep_init=True)
    Xp = _permuted(X, seed_perm)
    outs = fit_bounds(one_block(Xp), X.shape[1], k, wb, settings, seed_fit)
    return NullRun([o.objective for o in outs], [o.converged for o in outs])


def run_permutations(
    X: np.ndarray,
    k: int,
    wb: np.ndarray,
    settings: FitSettings,
    seed_real: int,
    seeds: np.ndarray,
    *,
    n_jobs: int | None,
    progress: bool,
) -> PermutationRuns:
    """The fits on ``X`` and on one permuted copy per row of ``seeds`` (permutation seed,
    fit seed), in parallel (:func:`~sparseclust._engine.parallel.run_shared`: forked
    workers read ``X`` from this process's memory)."""
    # The fits on the data are the first task, the permuted copies the others: every
    # process (this one and the forked workers) claims the next task when it is free,
    # so the data's fits overlap the permutations. Seeded: the same result on any
    # number of workers. Starting a worker costs about 10 ms: below
    # PARALLEL_MIN_CELLS cell-fits the whole call runs here.
    if X.shape[0] * X.shape[1] * len(wb) * (len(seeds) + 1) < PARALLEL_MIN_CELLS:
        n_jobs = None
    done = run_shared(
        _perm_task,
        X,
        [(k, wb, settings, None, seed_real)]
        + [(k, wb, settings, int(a), int(b)) for a, b in seeds],
        n_jobs=n_jobs,
        progress=progress,
        desc="permutations",
    )
    (outs, init), perm = done[0], done[1:]
    return PermutationRuns(
        fits=outs,
        tots=np.array([o.objective for o in outs]),
        permtots=np.array([r.objectives for r in perm]).T,  # bounds x perms
        perm_not_converged=int(sum(not c for r in perm for c in r.converged)),
        init=init,
    )


def warn_fits(outs: list[SparseKMeansFit], what: str, max_iter: int) -> None:
    """A ``ConvergenceWarning`` when some of ``outs`` did not converge."""
    bad = sum(not o.converged for o in outs)
    if bad:
        which = "the fit" if len(outs) == 1 else f"{bad} of {len(outs)} fits"
        warnings.warn(
            f"{what}: {which} did not converge in max_iter={max_iter} rounds (weights still "
            "changing by more than 1e-4 relative); raise max_iter.",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
