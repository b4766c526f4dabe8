"""CRAFT's categorical cost terms compiled: the per-row gathers of the level table.

Imported only inside :mod:`.core` (``import sparseclust`` loads no numba). Each kernel
does the additions of the numpy code it replaces, one element at a time and in the same
order (numba's ``fastmath`` stays off), so a cost is the same number bit for bit: a
row's table rows are added feature by feature in feature order, starting from the
first feature's row.
"""

from __future__ import annotations

from .._engine.jit import kernel

__all__ = ["level_sums"]


@kernel
def level_sums(codes, offsets, table, a, b, out):  # pragma: no cover - compiled
    """``out[r] = sum_q table[codes[a + r, q] + offsets[q] + q + 1]`` for ``r < b - a``,
    added in feature order (the first feature's row copied, the others added to it)."""
    Q = codes.shape[1]
    K = table.shape[1]
    for r in range(b - a):
        i = a + r
        s = codes[i, 0] + offsets[0] + 1
        for k in range(K):
            out[r, k] = table[s, k]
        for q in range(1, Q):
            s = codes[i, q] + offsets[q] + q + 1
            for k in range(K):
                out[r, k] += table[s, k]
    return out


@kernel
def cost_table(log_eta0, log_eta, v, P, offsets, L, out):  # pragma: no cover - compiled
    """The gather table of the categorical costs (``core._level_table`` of
    ``(log_eta0 - log_eta) * v``): row ``s + q + 1`` holds level ``s`` of feature ``q``,
    column ``k`` cluster ``k`` (zero where feature ``q`` is not selected: ``x * 0.0``,
    a negative ``x`` giving -0.0 as numpy's product does); the other rows and columns
    zero."""
    out[:] = 0.0
    for k in range(log_eta.shape[0]):
        for q in range(offsets.size):
            on = 1.0 if v[k, P + q] else 0.0
            o = offsets[q]
            for j in range(L[q]):
                out[o + j + q + 1, k] = (log_eta0[o + j] - log_eta[k, o + j]) * on
    return out


@kernel
def feature_sums(A, offsets, L, out):  # pragma: no cover - compiled
    """``out[k, q]``: the level columns of feature ``q`` in ``A[k]`` added in level order
    from the first, then ``+ 0.0`` (a -0.0 total becomes 0.0, as scipy's sum from 0
    and numpy's zero-padded accumulation give)."""
    for k in range(A.shape[0]):
        for q in range(offsets.size):
            o = offsets[q]
            s = A[k, o]
            for j in range(1, L[q]):
                s += A[k, o + j]
            out[k, q] = s + 0.0
    return out
