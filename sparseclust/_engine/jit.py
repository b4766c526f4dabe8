"""The one door to numba: compiled kernels for the loops numpy cannot vectorise.

A module of kernels is named ``*_jit.py``, imports this module at its top and is
imported only inside the functions that call it, so ``import sparseclust`` never loads
numba (about 0.3 s). Kernels are compiled on their first call and cached on disk
(numba's ``cache=True``: next to the module when its folder is writable, else in the
user's cache directory), so a process pays the compilation once per machine, not once
per call. Measured on an empty cache (2-core x86-64, CPU time, load 2.5-3): the first
``sparse_kmeans`` call compiles the Hartigan-Wong kernels in 7-9 s, the first
``craft`` call its compiled pass loop (``_craft/loop_jit.py``) in 17-21 s, the first
``sparse_hclust(weights="sparcl")`` call its two in 0.2 s; with the cache warm, a process
pays about 0.6 s (importing numba, loading the kernels). Numba compiles each kernel
for each type signature apart, to machine code of its own with that of every kernel it
calls linked in, and much of the cost is per compilation. So a kernel is called with
one signature where the caller can fix it (one array layout), arrays are made by the
Python caller rather than by numpy constructors inside a kernel (each constructor is
compiled apart), and a kernel called only from kernels is ``internal`` (no Python
entry). ``fastmath`` stays off: a kernel does the same floating-point operations in
the same order as the numpy code it replaces, so results do not depend on it. The one
exception is ``kernel(reassoc=True)``, for a sum whose every use is checked against an
error bound that holds in any order of summation (a distance screen backed by an exact
evaluation): its additions may be reordered, so that they vectorise.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import numba

_settled = False


def kernel(
    fn: Callable[..., Any] | None = None,
    *,
    reassoc: bool = False,
    internal: bool = False,
    refcount: bool = True,
) -> Callable[..., Any]:
    """Compile ``fn`` with numba in nopython mode, cached on disk, releasing the GIL.

    ``@kernel`` or ``@kernel(reassoc=True)``: the latter lets the compiler reorder the
    kernel's floating-point additions and multiplications (and only those: no
    assumption about NaN, infinities or signed zeros). ``internal=True`` marks a kernel
    called only from other kernels: numba then builds no Python entry (neither the
    CPython nor the C-callable wrapper), which saves about a third of its compile time;
    calling it from Python raises. ``refcount=False`` compiles the kernel without numba's
    reference counting of arrays: a kernel that takes arrays otherwise increments and
    decrements the count of each at every call (two atomic operations per array), which
    in a per-point helper of a few dozen instructions costs more than its work (the
    Hartigan-Wong stages ran 3-6 times slower). Only for internal kernels that allocate
    no array and return none (the count of an array handed back would be one short);
    numba refuses to compile an allocation there."""
    opts: dict[str, Any] = {"cache": True, "nogil": True}
    if reassoc:
        opts["fastmath"] = {"reassoc"}
    if internal:
        opts["no_cpython_wrapper"] = True
        opts["no_cfunc_wrapper"] = True
    if not refcount:
        opts["_nrt"] = False
    if fn is None:
        return numba.njit(**opts)
    return numba.njit(**opts)(fn)


def settle() -> None:
    """One full garbage collection per process, called after the first kernels ran.

    Importing numba and loading compiled kernels from the cache leave some 75,000 new
    objects for Python's cyclic collector; its first full pass over them (about 0.1 s)
    would otherwise fall into some later call, a small fit taking five times its usual
    time. Collecting once here puts that pass into the first call, which pays for the
    loading anyway; later calls are not affected (nothing is frozen or switched off)."""
    global _settled
    if not _settled:
        _settled = True
        gc.collect()
