"""Independent fits (restarts, permutations, wbounds) run in parallel with a progress bar.

:func:`run_parallel` sends every task's arguments to joblib workers. :func:`run_shared`
is for many tasks on the same (large) data, such as the permutation nulls of the
sparse methods: on Linux its workers are forked from this process, so they start in
milliseconds with every module already imported and read the data from the parent's
memory (copy-on-write: nothing is pickled but the small per-task arguments); each
worker's BLAS runs one thread (the workers are the parallelism). Elsewhere it falls
back to :func:`run_parallel`. Measured on 2 cores (``benchmarks/sparcl_side_by_side.py``):
joblib's loky workers cost seconds to start and import the package, more than a whole
permutation tuning at 200 x 1000.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from .._data.params import check_interrupt
from .threads import single_blas_thread

__all__ = [
    "BAR_DELAY",
    "progress_bar",
    "progress_bars",
    "run_parallel",
    "run_shared",
    "worker_count",
]

#: Seconds a run lasts before its progress bar appears: quick calls print nothing.
BAR_DELAY = 2.0
#: Whether the runs of the current call show bars (set by a front: :func:`progress_bars`).
_PROGRESS: ContextVar[bool] = ContextVar("_PROGRESS", default=False)


@contextmanager
def progress_bars(on: bool) -> Iterator[None]:
    """Inside the block, :func:`run_parallel` and :func:`run_shared` calls that do not
    say otherwise show progress bars when ``on`` (a front's checked ``progress=``)."""
    token = _PROGRESS.set(bool(on))
    try:
        yield
    finally:
        _PROGRESS.reset(token)


#: The data of the running :func:`run_shared` call, read by the forked workers.
_SHARED: Any = None


def worker_count(n_jobs: int | None, n_tasks: int) -> int:
    """Workers for ``n_tasks`` tasks: ``n_jobs`` (``-1``: every core; ``None``: 1), at
    most one per task."""
    if n_jobs in (None, 1) or n_tasks <= 1 or _IN_WORKER:
        return 1
    cores = os.cpu_count() or 1
    want = n_jobs if n_jobs > 0 else max(1, cores + 1 + n_jobs)
    return max(1, min(want, n_tasks))


def run_parallel(
    func: Callable[..., Any],
    tasks: Sequence[tuple],
    *,
    n_jobs: int | None = None,
    progress: bool | None = None,
    desc: str = "",
) -> list[Any]:
    """``[func(*args) for args in tasks]``, in parallel with joblib when ``n_jobs`` is not 1/None.

    Results come back in task order whatever the scheduling, so seeded tasks are
    reproducible for any ``n_jobs``. ``progress=True`` shows a tqdm bar (None: as the
    running front said, :func:`progress_bars`).
    """
    tasks = list(tasks)
    progress = _PROGRESS.get() if progress is None else progress
    if not tasks:
        return []
    if n_jobs in (None, 1) or len(tasks) == 1 or _IN_WORKER:
        return [_checked(func, *a) for a in _bar(tasks, progress, desc)]
    from joblib import Parallel, delayed

    calls = (delayed(func)(*a) for a in _bar(tasks, progress, desc))
    try:
        return list(Parallel(n_jobs=n_jobs)(calls))
    except KeyboardInterrupt:
        _stop_idle_workers()
        raise


def _checked(func: Callable[..., Any], *args: Any) -> Any:
    """``func(*args)`` once no lost Ctrl-C is pending (:func:`check_interrupt`)."""
    check_interrupt()
    return func(*args)


def _stop_idle_workers() -> None:
    """After Ctrl-C, stop joblib's worker processes: joblib kills the busy ones and
    starts fresh ones for the next call, which would stay behind, idle, for minutes."""
    from joblib.externals.loky import reusable_executor

    executor = getattr(reusable_executor, "_executor", None)
    if executor is not None:
        executor.shutdown(wait=True, kill_workers=True)


def progress_bar(items: Any, progress: bool, desc: str, total: int | None = None) -> Any:
    """``items`` behind a tqdm bar when ``progress`` (shown once the run has lasted
    :data:`BAR_DELAY` seconds), else ``items`` themselves."""
    if not progress:
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=desc, leave=False, total=total, delay=BAR_DELAY)


_bar = progress_bar


def _fork_available() -> bool:
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def _worker_start() -> None:
    """Worker initialiser: marks the process as a worker. Its BLAS runs one thread (two
    workers on two cores would otherwise run four BLAS threads): the limit is set in
    the parent around the fork and inherited, which costs a worker nothing (setting
    it in each worker took about 50 ms of its start on a busy machine).

    Ctrl-C is the caller's to handle: a worker ignores SIGINT (a terminal sends it to
    the whole process group) and is stopped by the caller, whose KeyboardInterrupt
    ends the pool's ``with`` block. A worker that took the signal itself died in
    whatever it was doing, printing tracebacks over the user's terminal, and a
    signal landing inside a compiled kernel surfaced there as a SystemError."""
    global _IN_WORKER
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _IN_WORKER = True


#: True in a worker of :func:`run_shared`: its own parallel calls run serially (a
#: pool's workers cannot start processes, and the cores are taken).
_IN_WORKER = False


#: The task queue of the running :func:`run_shared` call: (next-task counter, func, tasks).
_QUEUE: Any = None


def _drain(_: Any, bar: Any = None) -> list[tuple[int, Any]]:
    """``(index, result)`` of the tasks this process claims until none is left
    (``bar``: a progress bar of every process's claims, in the calling process)."""
    counter, func, tasks = _QUEUE
    out = []
    while True:
        with counter.get_lock():
            i = counter.value
            counter.value = i + 1
        if bar is not None:
            bar.update(min(i, len(tasks)) - bar.n)
        if i >= len(tasks):
            break
        check_interrupt()
        out.append((i, func(_SHARED, *tasks[i])))
    if bar is not None:
        bar.update(len(tasks) - bar.n)
        bar.close()
    return out


def run_shared(
    func: Callable[..., Any],
    shared: Any,
    tasks: Sequence[tuple],
    *,
    n_jobs: int | None = None,
    progress: bool | None = None,
    desc: str = "",
) -> list[Any]:
    """``[func(shared, *args) for args in tasks]``, in task order, on ``n_jobs`` workers.

    ``shared`` (the data every task reads, never modified by them) reaches forked
    workers through the parent's memory; only ``args`` and the results are pickled.
    ``func`` must be a module-level function. This process is one of the ``n_jobs``
    (it forks ``n_jobs - 1`` workers and works beside them), and every one of them
    claims the next task from a shared counter when it finishes one, so a slow task
    does not hold back a batch and no core waits while the caller collects: with two
    cores a pool of two workers left this process idle and paid two starts.
    """
    tasks = list(tasks)
    progress = _PROGRESS.get() if progress is None else progress
    workers = worker_count(n_jobs, len(tasks))
    if workers == 1:
        return [_checked(func, shared, *a) for a in _bar(tasks, progress, desc)]
    if not _fork_available():
        return run_parallel(
            func, [(shared, *a) for a in tasks], n_jobs=workers, progress=progress, desc=desc
        )
    global _SHARED, _QUEUE
    ctx = multiprocessing.get_context("fork")
    _SHARED = shared
    _QUEUE = (ctx.Value("l", 0), func, tasks)  # next unclaimed task, under its lock
    try:
        with warnings.catch_warnings():
            # Python >= 3.12 warns on fork() when the parent has threads (BLAS pools); the
            # workers run numpy code only, which OpenBLAS's fork handlers make safe.
            warnings.filterwarnings("ignore", message=".*fork.*", category=DeprecationWarning)
            with single_blas_thread():  # the workers inherit one BLAS thread
                pool = ctx.Pool(workers - 1, initializer=_worker_start)
        with pool:
            theirs = pool.map_async(_drain, range(workers - 1), chunksize=1)
            with single_blas_thread():  # this process is one of the workers
                done = dict(_drain(None, _bar(None, progress, desc, total=len(tasks))))
            for part in theirs.get():
                done.update(part)
        return [done[i] for i in range(len(tasks))]
    finally:
        _SHARED = _QUEUE = None
