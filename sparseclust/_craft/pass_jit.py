"""Pieces of CRAFT's compiled passes (:mod:`.loop_jit`) that match numpy's own
arithmetic: numpy's pairwise sum, and the fixed-budget selection.

Imported only by the ``*_jit`` modules (``import sparseclust`` loads no numba). Each
kernel does the numpy code's operations in the same order, so the results are the same
bit for bit: sums numpy reduces pairwise are reduced by :func:`pairwise_sum`, and the
tie keys of the selection are numpy's ``round(x / scale, 10)`` (``rint(y * 1e10) /
1e10``), sorted stably.
"""

from __future__ import annotations

import numpy as np

from .._engine.jit import kernel

__all__ = ["pairwise_sum", "select_fixed"]


@kernel(internal=True, refcount=False)
def _block_sum(a, lo, n):  # pragma: no cover - compiled
    """numpy's sum of a run of at most 128 values: below 8 one by one from 0, else in
    eight interleaved partial sums added as a tree, then the rest one by one."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[lo + i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    top = n - n % 8
    while i < top:
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@kernel
def pairwise_sum(a, n):  # pragma: no cover - compiled
    """``a[:n].sum()`` as numpy adds a contiguous float64 run: runs of up to 128 values
    by :func:`_block_sum`; a longer run as its two halves (the first a multiple of 8
    long) summed apart and added, first half + second. Walked with an explicit stack,
    not by recursion (numba's on-disk cache loads recursive kernels badly). A run of up
    to 128 values (a cluster's features) is one block: no stack made."""
    if n <= 128:
        return _block_sum(a, 0, n)
    s_lo, s_n, s_step = np.zeros(64, np.int64), np.empty(64, np.int64), np.zeros(64, np.int64)
    vals = np.empty(64)
    s_n[0], sp, nv = n, 1, 0
    while sp:
        t = sp - 1
        m = s_n[t]
        if m <= 128:
            vals[nv] = _block_sum(a, s_lo[t], m)
            nv += 1
            sp -= 1
            continue
        half = m // 2 - (m // 2) % 8
        if s_step[t] < 2:  # push the first half, then the second
            first = s_step[t] == 0
            s_step[t] += 1
            s_lo[sp] = s_lo[t] if first else s_lo[t] + half
            s_n[sp] = half if first else m - half
            s_step[sp] = 0
            sp += 1
        else:  # both halves summed
            vals[nv - 2] = vals[nv - 2] + vals[nv - 1]
            nv -= 1
            sp -= 1
    return vals[0]


@kernel(internal=True, refcount=False)
def _before(x, y, i, j):  # pragma: no cover - compiled
    """Key ``x`` of item ``i`` sorts before key ``y`` of item ``j`` (NaN last, ties
    by position): numpy's stable order."""
    if x != x:
        return y != y and i < j
    return y != y or x < y or (x == y and i < j)


@kernel(internal=True, refcount=False)
def _top(key, n_sel, row, v, first, a, b):  # pragma: no cover - compiled
    """``v[row, first + d] = True`` for the ``n_sel`` features of smallest ``key`` in
    numpy's stable order (ties to the earlier feature, NaN last): a bottom-up merge
    sort of the positions, in the caller's work arrays ``a`` and ``b`` (integers, at
    least ``key.size`` long)."""
    n = key.size
    for i in range(n):
        a[i] = i
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            i, j = lo, mid
            for t in range(lo, hi):
                if i < mid and (j >= hi or not _before(key[a[j]], key[a[i]], a[j], a[i])):
                    b[t] = a[i]
                    i += 1
                else:
                    b[t] = a[j]
                    j += 1
        a, b = b, a
        width *= 2
    for i in range(n_sel):
        v[row, first + a[i]] = True


@kernel(internal=True)
def select_fixed(sigma, counts, log_eta, log_eta0, offsets, L, n_num, n_cat, v):  # pragma: no cover
    """The fixed-budget selection (``core.select``): per cluster the ``n_num`` numeric
    features of least sd and the ``n_cat`` categorical ones of largest ``G_d - G_kd``,
    ranked by ``core._tie_key`` (values divided by the row's scale, rounded to 10
    decimals as numpy rounds: ``rint(y * 1e10) / 1e10``), sorted stably. ``G_d`` and
    ``G_kd`` are ``core.feature_sums`` of ``counts * log_eta0`` and ``counts * log_eta``
    negated; the scale of the categorical keys is ``max |G_d|``. ``v`` (clusters,
    features) comes in all False."""
    K, P = sigma.shape
    Q = offsets.size
    key = np.empty(P)
    wa, wb = np.empty(max(P, Q), np.int64), np.empty(max(P, Q), np.int64)  # _top's work
    for k in range(K if P else 0):
        scale = 0.0
        for p in range(P):
            a = abs(sigma[k, p])
            if a > scale or a != a:
                scale = a
        if not scale > 0:
            scale = 1.0
        for p in range(P):
            key[p] = np.rint(sigma[k, p] / scale * 1e10) / 1e10
        _top(key, n_num, k, v, 0, wa, wb)
    if Q == 0:
        return v
    G_d = np.empty(Q)
    neg = np.empty(Q)
    for k in range(K):
        for q in range(Q):
            o = offsets[q]
            a = counts[k, o] * log_eta0[o]
            b = counts[k, o] * log_eta[k, o]
            for j in range(1, L[q]):
                a += counts[k, o + j] * log_eta0[o + j]
                b += counts[k, o + j] * log_eta[k, o + j]
            G_d[q] = -(a + 0.0)
            neg[q] = -(G_d[q] - -(b + 0.0))
        scale = 0.0
        for q in range(Q):
            a = abs(G_d[q])
            if a > scale or a != a:
                scale = a
        if not scale > 0:
            scale = 1.0
        for q in range(Q):
            neg[q] = np.rint(neg[q] / scale * 1e10) / 1e10
        _top(neg, n_cat, k, v, P, wa, wb)
    return v
