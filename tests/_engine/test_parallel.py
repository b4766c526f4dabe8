"""run_shared: forked workers read the shared data from the parent; results in task order."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

from sparseclust._engine.parallel import _fork_available, run_parallel, run_shared, worker_count


def _task(shared, i, scale):
    time.sleep(0.02)  # long enough for the forked worker to claim tasks too
    return float(shared[i].sum() * scale), os.getpid()


def _blas_threads(shared):
    from threadpoolctl import threadpool_info

    return max((m["num_threads"] for m in threadpool_info() if m["user_api"] == "blas"), default=1)


def test_results_in_task_order_for_any_n_jobs():
    X = np.arange(40.0).reshape(10, 4)
    tasks = [(i, 2.0) for i in range(10)]
    serial = run_shared(_task, X, tasks, n_jobs=1)
    par = run_shared(_task, X, tasks, n_jobs=2)
    assert [v for v, _ in par] == [v for v, _ in serial] == [2.0 * X[i].sum() for i in range(10)]
    if _fork_available():
        pids = {pid for _, pid in par}
        assert pids - {os.getpid()}  # ran in another process
        assert os.getpid() in pids  # and here: the caller is one of the n_jobs


@pytest.mark.skipif(not _fork_available(), reason="forked workers on Linux only")
def test_workers_run_one_blas_thread():
    assert run_shared(_blas_threads, None, [(), ()], n_jobs=2) == [1, 1]


def _sigint_handling(shared, i):
    time.sleep(0.05)  # long enough for the forked worker to claim one
    return os.getpid(), signal.getsignal(signal.SIGINT)


@pytest.mark.skipif(not _fork_available(), reason="forked workers on Linux only")
def test_ctrl_c_is_the_callers_workers_ignore_sigint():
    """A terminal's Ctrl-C reaches the whole process group: the workers ignore it and the
    caller, whose handler stays Python's, stops them (tests/test_interrupts.py)."""
    got = run_shared(_sigint_handling, None, [(i,) for i in range(40)], n_jobs=2)
    theirs = {h for pid, h in got if pid != os.getpid()}
    mine = {h for pid, h in got if pid == os.getpid()}
    assert theirs == {signal.SIG_IGN}
    assert mine == {signal.default_int_handler}
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_worker_count():
    assert worker_count(None, 5) == 1 and worker_count(1, 5) == 1
    assert worker_count(4, 2) == 2 and worker_count(2, 10) == 2
    assert worker_count(-1, 100) == (os.cpu_count() or 1)


def test_errors_in_a_worker_reach_the_caller():
    with pytest.raises(IndexError):
        run_shared(_task, np.zeros((2, 2)), [(0, 1.0), (5, 1.0)], n_jobs=2)


def test_run_parallel_unchanged():
    assert run_parallel(max, [(1, 2), (5, 3)], n_jobs=2) == [2, 5]
