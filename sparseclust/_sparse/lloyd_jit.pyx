# cython: cdivision=True
"""The multi-start's Lloyd phase in the rows' Gram space, compiled, one start at a time.

Imported only inside :mod:`.lloyd`. The rules are those of
:func:`~.lloyd._batched_lloyd` and the numpy :func:`~.lloyd._gram_lloyd` (the same
partitions up to the rounding of the products): each row goes to the centre with the
smallest ``|c_j|^2 - 2 x_i.c_j`` (the first on ties); a start stops when no label
changes; a cluster that empties takes the row farthest from its centre whose own
cluster keeps a member (the first in data order on ties); the sums ``q_j = sum over the
members l of G_l`` are made in full every 10 iterations, or when more than half the rows
moved, and otherwise updated with the rows that moved. A start here counts its own
moved rows (the numpy version counted the rows moved in any start). Every sum is
sequential, in the order written (no reassociation, no fused multiply-add:
``sparseclust/meson.build``). ``cdivision``: the integer operands are non-negative and
no divisor is zero (every cluster has a member when its centre is taken).
"""

from libc.stdint cimport int64_t

import numpy as np

__all__ = ["gram_lloyd"]


cdef inline bint _assign(
    const double* cn, const double* xc, int64_t* lab, double* best, Py_ssize_t k, Py_ssize_t n
) noexcept nogil:
    """Each row's nearest centre (first on ties) into ``lab`` and ``|c|^2 - 2 x.c`` into
    ``best``; returns whether a label changed. ``xc``: (k, n)."""
    cdef bint changed = False
    cdef Py_ssize_t i, j
    cdef int64_t a
    cdef double b, v
    for i in range(n):
        b = cn[0] - 2.0 * xc[i]
        a = 0
        for j in range(1, k):
            v = cn[j] - 2.0 * xc[j * n + i]
            if v < b:
                b = v
                a = j
        best[i] = b
        if lab[i] != a:
            changed = True
        lab[i] = a
    return changed


cdef inline bint _lt(double a, double b) noexcept nogil:
    """numpy's order of floats (NaN last)."""
    return a < b or (b != b and a == a)


cdef void _argsort_stable(const double* key, int64_t* idx, int64_t* ws, Py_ssize_t m) noexcept nogil:
    """``idx[:m]`` sorted by ``key`` ascending, equal keys in their order in ``idx``
    (a stable merge sort: the permutation ``np.argsort(key, kind="mergesort")`` gives
    when ``idx`` starts as ``0 .. m-1``). ``ws``: at least ``m // 2`` entries."""
    cdef Py_ssize_t mid, a, b, t, i, j
    cdef int64_t v
    if m <= 20:  # insertion sort
        for a in range(1, m):
            b = a
            while b > 0 and _lt(key[idx[b]], key[idx[b - 1]]):
                v = idx[b]
                idx[b] = idx[b - 1]
                idx[b - 1] = v
                b -= 1
        return
    mid = m // 2
    _argsort_stable(key, idx, ws, mid)
    _argsort_stable(key, idx + mid, ws, m - mid)
    for a in range(mid):
        ws[a] = idx[a]
    i = 0
    j = mid
    t = 0
    while i < mid and j < m:
        if not _lt(key[idx[j]], key[ws[i]]):
            idx[t] = ws[i]
            i += 1
        else:
            idx[t] = idx[j]
            j += 1
        t += 1
    while i < mid:
        idx[t] = ws[i]
        i += 1
        t += 1


cdef inline void _reseed(
    int64_t* lab, int64_t* cnt, double* own, const int64_t* order, Py_ssize_t k, Py_ssize_t n
) noexcept nogil:
    """Each empty cluster (in order) takes the row farthest from its centre (``own``,
    the rows by decreasing ``own``, first in data order on ties, in ``order``) whose
    cluster keeps a member."""
    cdef Py_ssize_t j, t
    cdef int64_t i
    for j in range(k):
        if cnt[j] != 0:
            continue
        for t in range(n):
            i = order[t]
            if cnt[lab[i]] > 1:
                cnt[lab[i]] -= 1
                lab[i] = j
                cnt[j] = 1
                own[i] = 0.0
                break


cdef inline void _sums(
    const double* G, const int64_t* lab, const int64_t* old, double* qs, bint full,
    Py_ssize_t k, Py_ssize_t n,
) noexcept nogil:
    """The members' sums of Gram rows: in full, or updated with the moved rows."""
    cdef Py_ssize_t i, m
    cdef int64_t a, b
    if full:
        for i in range(k * n):
            qs[i] = 0.0
        for i in range(n):
            a = lab[i]
            for m in range(n):
                qs[a * n + m] += G[i * n + m]
        return
    for i in range(n):
        if lab[i] != old[i]:
            a = lab[i]
            b = old[i]
            for m in range(n):
                qs[a * n + m] += G[i * n + m]
                qs[b * n + m] -= G[i * n + m]


cdef inline void _centres(
    const int64_t* lab, const int64_t* cnt, const double* qs, double* xc, double* cn,
    Py_ssize_t k, Py_ssize_t n,
) noexcept nogil:
    """``x_i.c_j = q_j[i] / n_j`` and ``|c_j|^2 = sum over members of q_j / n_j^2``."""
    cdef Py_ssize_t i, j
    cdef double size
    for j in range(k):
        cn[j] = 0.0
    for i in range(n):
        cn[lab[i]] += qs[lab[i] * n + i]
    for j in range(k):
        size = <double>cnt[j]
        for i in range(n):
            xc[j * n + i] = qs[j * n + i] / size
        cn[j] = cn[j] / (size * size)


def gram_lloyd(
    const double[:, ::1] G,
    const double[::1] xq,
    const int64_t[:, ::1] starts,
    Py_ssize_t max_iter,
    int64_t[:, ::1] labels,
    int64_t[:, ::1] counts,
    tuple work,
):
    """Lloyd from each row of ``starts`` (``(S, k)`` row indices) in the Gram space of
    ``G`` (``xq`` its diagonal): fills ``labels`` ``(S, n)`` and ``counts`` ``(S, k)``;
    returns ``(wss, converged, n_iter)`` per start (``n_iter``: R's ``$iter``, ``max_iter
    + 1`` when it did not converge). ``work``: ``(xc, qs, cn, best, old)`` arrays
    (C-contiguous: ``(k, n)``, ``(k, n)``, ``(k,)``, ``(n,)`` float64 and ``(n,)``
    int64)."""
    cdef Py_ssize_t S = starts.shape[0], k = starts.shape[1], n = G.shape[0]
    cdef double[:, ::1] xc = work[0]
    cdef double[:, ::1] qs = work[1]
    cdef double[::1] cn = work[2]
    cdef double[::1] best = work[3]
    cdef int64_t[::1] old = work[4]
    wss_a = np.empty(S)
    converged_a = np.zeros(S, dtype=np.bool_)
    n_iter_a = np.full(S, max_iter + 1, dtype=np.int64)
    own_a = np.empty(n)  # best + xq, and its negation (the sort's key)
    neg_a = np.empty(n)
    order_a = np.empty(n, dtype=np.int64)
    ws_a = np.empty(n // 2 + 1, dtype=np.int64)
    cdef double[::1] wss = wss_a
    cdef unsigned char[::1] conv = converged_a.view(np.uint8)
    cdef int64_t[::1] n_iter = n_iter_a
    cdef double[::1] own = own_a
    cdef double[::1] neg = neg_a
    cdef int64_t[::1] order = order_a
    cdef int64_t[::1] ws = ws_a
    cdef Py_ssize_t s, j, m, i, it, moved
    cdef int64_t* lab
    cdef int64_t* cnt
    cdef bint empty
    cdef double tot, xqsum
    with nogil:
        for s in range(S):
            lab = &labels[s, 0]
            cnt = &counts[s, 0]
            for i in range(n):
                lab[i] = -1
            for j in range(k):
                for m in range(n):
                    xc[j, m] = G[starts[s, j], m]
                cn[j] = xq[starts[s, j]]
            for it in range(max_iter):
                for i in range(n):
                    old[i] = lab[i]
                if not _assign(&cn[0], &xc[0, 0], lab, &best[0], k, n):
                    conv[s] = True
                    n_iter[s] = it + 1
                    break
                for j in range(k):
                    cnt[j] = 0
                for i in range(n):
                    cnt[lab[i]] += 1
                empty = False
                for j in range(k):
                    empty = empty or cnt[j] == 0
                if empty:
                    for i in range(n):
                        own[i] = best[i] + xq[i]
                        neg[i] = -own[i]
                        order[i] = i
                    _argsort_stable(&neg[0], &order[0], &ws[0], n)
                    _reseed(lab, cnt, &own[0], &order[0], k, n)
                moved = 0
                for i in range(n):
                    if lab[i] != old[i]:
                        moved += 1
                _sums(&G[0, 0], lab, &old[0], &qs[0, 0], it % 10 == 0 or 2 * moved > n, k, n)
                _centres(lab, cnt, &qs[0, 0], &xc[0, 0], &cn[0], k, n)
            tot = 0.0
            for j in range(k):
                tot += <double>cnt[j] * cn[j]
            xqsum = 0.0
            for i in range(n):
                xqsum += xq[i]
            wss[s] = xqsum - tot
    return wss_a, converged_a, n_iter_a
