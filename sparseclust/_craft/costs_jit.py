"""CRAFT's categorical cost terms compiled: the per-row gathers of the level table.

Imported only inside :mod:`.core` (``import sparseclust`` loads no numba). Each kernel
does the additions of the numpy code it replaces, one element at a time and in the same
order (numba's ``fastmath`` stays off), so a cost is the same number bit for bit: a
row's table rows are added feature by feature in feature order, starting from the
first feature's row.
"""

from __future__ import annotations

import numpy as np

from .._engine.jit import kernel

__all__ = ["level_sums"]


@kernel
def level_sums(codes_t, offsets, table, a, b, out):  # pragma: no cover - compiled
    """``out[r] = sum_q table[codes_t[q, a + r] + offsets[q] + q + 1]`` for ``r < b - a``,
    added in feature order (the first feature's row copied, the others added to it).
    One, two and four columns (three clusters are padded to four) add into scalars.
    ``codes_t``: the codes transposed, row-major for the blocks' column-major codes, so
    that one layout serves every call (a block of one row is both, and numba would
    compile it apart as row-major)."""
    Q = codes_t.shape[0]
    K = table.shape[1]
    base = np.empty(Q, np.int64)
    for q in range(Q):
        base[q] = offsets[q] + q + 1
    if K == 1:
        for r in range(b - a):
            x0 = table[codes_t[0, a + r] + base[0], 0]
            for q in range(1, Q):
                x0 += table[codes_t[q, a + r] + base[q], 0]
            out[r, 0] = x0
        return out
    if K == 2:
        for r in range(b - a):
            s = codes_t[0, a + r] + base[0]
            x0, x1 = table[s, 0], table[s, 1]
            for q in range(1, Q):
                s = codes_t[q, a + r] + base[q]
                x0 += table[s, 0]
                x1 += table[s, 1]
            out[r, 0], out[r, 1] = x0, x1
        return out
    if K == 4:
        for r in range(b - a):
            s = codes_t[0, a + r] + base[0]
            x0, x1, x2, x3 = table[s, 0], table[s, 1], table[s, 2], table[s, 3]
            for q in range(1, Q):
                s = codes_t[q, a + r] + base[q]
                x0 += table[s, 0]
                x1 += table[s, 1]
                x2 += table[s, 2]
                x3 += table[s, 3]
            out[r, 0], out[r, 1], out[r, 2], out[r, 3] = x0, x1, x2, x3
        return out
    acc = np.empty(K)
    for r in range(b - a):
        s = codes_t[0, a + r] + base[0]
        for k in range(K):
            acc[k] = table[s, k]
        for q in range(1, Q):
            s = codes_t[q, a + r] + base[q]
            for k in range(K):
                acc[k] += table[s, k]
        for k in range(K):
            out[r, k] = acc[k]
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


@kernel
def add_rows(level, g0, ga, F_v, with_f, out):  # pragma: no cover - compiled
    """``out[r, k] = level[r, k] + g0[ga + r]``, then ``+ F_v[k]`` when ``with_f``: two
    roundings, as numpy's two broadcast additions (``level`` may have more columns
    than ``out``: the padding of three clusters)."""
    for r in range(out.shape[0]):
        g = g0[ga + r]
        for k in range(out.shape[1]):
            x = level[r, k] + g
            if with_f:
                x = x + F_v[k]
            out[r, k] = x
    return out


@kernel(internal=True)
def _np_max(a, b):  # pragma: no cover - compiled
    """numpy's ``maximum`` of two floats: ``a`` when ``a >= b`` or ``a`` is NaN."""
    return a if (a >= b or a != a) else b


@kernel
def centres(s1, s2, cnt, nk, keep, col_mean, col_sd, sigma_floor, zeta, sigma):  # pragma: no cover
    """Means and sds of the kept clusters (``core.state_from_stats``, element by element
    the same operations): ``zeta = s1 / cnt`` (the global mean where no cell is
    observed), ``sigma = sqrt(max(s2 / cnt - zeta^2, 0))`` floored at ``sigma_floor``
    global sds, 1 below two points, the global sd (at least 1e-12) where no cell is
    observed, and 1 where not positive."""
    for j in range(keep.size):
        k = keep[j]
        for p in range(col_mean.size):
            c = cnt[k, p]
            if c > 0:
                z = s1[k, p] / c
                var = s2[k, p] / c - z * z
            else:
                z = col_mean[p]
                var = 0.0
            sg = np.sqrt(_np_max(var, 0.0))
            sg = _np_max(sg, sigma_floor * col_sd[p])
            if nk[k] < 2:
                sg = 1.0
            if not c > 0:
                sg = _np_max(col_sd[p], 1e-12)
            if not sg > 0:
                sg = 1.0
            zeta[j, p] = z
            sigma[j, p] = sg
    return zeta, sigma


@kernel
def add_counts(codes, offsets, rows, labels, sign, out):  # pragma: no cover - compiled
    """``out[labels[i], codes[rows[i], q] + offsets[q] + q + 1] += sign`` for every
    ``i`` and feature ``q`` (the level slots of ``core._level_cells``; integer
    counts, so the order of the additions does not matter)."""
    for i in range(rows.size):
        r = rows[i]
        k = labels[i]
        for q in range(codes.shape[1]):
            out[k, codes[r, q] + offsets[q] + q + 1] += sign
    return out


@kernel
def count_all(codes, offsets, labels, out):  # pragma: no cover - compiled
    """:func:`add_counts` of every row with ``sign = 1``."""
    for r in range(labels.size):
        k = labels[r]
        for q in range(codes.shape[1]):
            out[k, codes[r, q] + offsets[q] + q + 1] += 1
    return out


@kernel
def row_min(D, idx, dmin):  # pragma: no cover - compiled
    """``idx = D.argmin(axis=1)`` (the first of equal minima; the first NaN, as numpy
    takes a NaN for the minimum) and ``dmin = D[r, idx]``."""
    for r in range(D.shape[0]):
        best = D[r, 0]
        j = 0
        if best == best:
            for k in range(1, D.shape[1]):
                x = D[r, k]
                if x < best or x != x:
                    best = x
                    j = k
                    if x != x:
                        break
        idx[r] = j
        dmin[r] = best
    return idx


@kernel
def row_costs(codes, rows, offsets, table, g0, f_v, out):  # pragma: no cover - compiled
    """Categorical data: the cost of rows ``rows`` to the one cluster of ``table``
    (one column), as :func:`level_sums` then :func:`add_rows` give it:
    ``(sum_q table[...] + g0[r]) + f_v``."""
    Q = codes.shape[1]
    for i in range(rows.size):
        r = rows[i]
        x = table[codes[r, 0] + offsets[0] + 1, 0]
        for q in range(1, Q):
            x += table[codes[r, q] + offsets[q] + q + 1, 0]
        out[i] = (x + g0[r]) + f_v
    return out
