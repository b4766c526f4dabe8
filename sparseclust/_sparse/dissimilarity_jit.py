"""sparcl's single-precision rounding of the pair differences, compiled.

Imported only inside :mod:`.dissimilarity` (``import sparseclust`` loads no numba).
:func:`rounding_block` fills a block of the correction matrix ``C`` of
:class:`~sparseclust._sparse.dissimilarity.SparclSquared` one pair at a time, with the
operations of the numpy code it replaces, in the same order (numba's ``fastmath`` stays
off): ``d`` the double difference of the float32 values, ``t`` its float32 rounding
(the float32 subtraction sparcl's Fortran does: rounding the exact difference to
float32 through double gives the same float, since 53 >= 2 * 24 + 2), and
``c = (t - d) * (t + d) = t^2 - d^2``.
"""

from __future__ import annotations

import numpy as np

from .._engine.jit import kernel

__all__ = ["rounding_block"]


@kernel
def rounding_block(X, i, j, out):  # pragma: no cover - compiled
    """Fill ``out[r, f] = (t - d)(t + d)`` for ``out.shape[0]`` consecutive pairs from the
    pair ``(i, j)`` on (R ``dist`` order: ``(0, 1), (0, 2), ..., (1, 2), ...``), with
    ``d = X[j', f] - X[i', f]`` in double from the float32 data ``X`` and ``t`` its
    float32 rounding. Returns the pair after the block, ``(i, j)``."""
    n, p = X.shape
    for r in range(out.shape[0]):
        for f in range(p):
            d = np.float64(X[j, f]) - np.float64(X[i, f])
            t = np.float64(np.float32(d))
            out[r, f] = (t - d) * (t + d)
        j += 1
        if j == n:
            i += 1
            j = i + 1
    return i, j


@kernel
def rounding_block32(X, i, j, out):  # pragma: no cover - compiled
    """:func:`rounding_block` in single precision (``out`` float32), three times as fast:
    ``t = X[j'] - X[i']`` in float32 and its exact rounding error ``e = d - t`` by
    Knuth's TwoSum (six float32 operations, exact), then ``c = -e (2t + e)``, right to
    two float32 roundings (about 1e-7 of ``c``)."""
    n, p = X.shape
    for r in range(out.shape[0]):
        for f in range(p):
            a = X[j, f]
            b = -X[i, f]
            s = a + b
            bv = s - a
            av = s - bv
            e = (a - av) + (b - bv)
            out[r, f] = -e * (s + s + e)
        j += 1
        if j == n:
            i += 1
            j = i + 1
    return i, j
