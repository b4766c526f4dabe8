"""One BLAS thread for the small per-pass matrix products of the iterative cores.

A multi-threaded BLAS was measured 2x slower on these products on two cores. The
threadpoolctl controller is built once (scanning the loaded libraries costs about
2 ms, more than a whole CRAFT pass on Spambase).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import lru_cache

from threadpoolctl import ThreadpoolController

__all__ = ["blas_thread_count", "single_blas_thread"]


def _controller():
    """The controller, rebuilt when modules were imported since it was built: a BLAS
    loaded later (scipy's own, with ``scipy.linalg``) would otherwise not be limited."""
    return _controller_at(len(sys.modules))


@lru_cache(maxsize=1)
def _controller_at(n_modules: int) -> ThreadpoolController:
    return ThreadpoolController()


_inside = threading.local()  # how deep this thread is in single_blas_thread blocks


def single_blas_thread() -> AbstractContextManager:
    """Context manager limiting BLAS to one thread. Inside another such block of the
    same thread it does nothing (setting and restoring the limit costs about 0.1 ms)."""
    return _single()


@contextmanager
def _single() -> Iterator[None]:
    depth = getattr(_inside, "depth", 0)
    _inside.depth = depth + 1
    try:
        if depth:
            yield
        else:
            with _controller().limit(limits=1, user_api="blas"):
                yield
    finally:
        _inside.depth = depth


def blas_thread_count() -> int:
    """The threads BLAS may use now (1 inside a ``single_blas_thread()`` or a
    ``threadpoolctl.threadpool_limits(1)`` block, and in the forked workers of
    :func:`~sparseclust._engine.parallel.run_shared`): the budget a compiled pass that
    replaces BLAS products runs its threads on. With several BLAS libraries loaded, the
    smallest count (a library loaded after a limit was set keeps its default)."""
    infos = _controller().select(user_api="blas").info()
    counts = [int(i.get("num_threads") or 1) for i in infos]
    return max(1, min(counts)) if counts else 1
