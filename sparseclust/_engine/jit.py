"""The one door to numba: compiled kernels for the loops numpy cannot vectorise.

A module of kernels is named ``*_jit.py``, imports this module at its top and is
imported only inside the functions that call it, so ``import sparseclust`` never loads
numba (about 0.3 s). Kernels are compiled on their first call and cached on disk
(numba's ``cache=True``: next to the module when its folder is writable, else in the
user's cache directory), so a process pays the compilation once per machine, not once
per call. ``fastmath`` stays off: a kernel does the same floating-point operations in
the same order as the numpy code it replaces, so results do not depend on it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba


def kernel(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Compile ``fn`` with numba in nopython mode, cached on disk, releasing the GIL."""
    return numba.njit(cache=True, nogil=True)(fn)
