# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# cython: cdivision=True
"""Pieces of CRAFT's compiled passes (:mod:`.loop_jit`) that match numpy's own
arithmetic: numpy's pairwise sum, and the fixed-budget selection.

Compiled ahead of time (Cython, at build time); the C functions are shared with the
other kernel modules through ``pass_jit.pxd``. Each function does the numpy code's
operations in the same order, so the results are the same bit for bit: sums numpy
reduces pairwise are reduced by :func:`pairwise_sum`, and the tie keys of the selection
are numpy's ``round(x / scale, 10)`` (``rint(y * 1e10) / 1e10``), sorted stably.
(``cdivision``: every integer division and modulo here has non-negative operands.)
"""

from libc.math cimport fabs, rint
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from numpy cimport npy_bool

__all__ = ["pairwise_sum"]


cdef inline double _block_sum(const double* a, Py_ssize_t lo, Py_ssize_t n,
                              Py_ssize_t st) noexcept nogil:
    """numpy's sum of a run of at most 128 values (``a[lo * st]``, ... step ``st``):
    below 8 one by one from 0, else in eight interleaved partial sums added as a
    tree, then the rest one by one."""
    cdef double res, r0, r1, r2, r3, r4, r5, r6, r7
    cdef Py_ssize_t i, top
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[(lo + i) * st]
        return res
    r0, r1, r2, r3 = a[lo * st], a[(lo + 1) * st], a[(lo + 2) * st], a[(lo + 3) * st]
    r4, r5, r6, r7 = a[(lo + 4) * st], a[(lo + 5) * st], a[(lo + 6) * st], a[(lo + 7) * st]
    i = 8
    top = n - n % 8
    while i < top:
        r0 += a[(lo + i) * st]
        r1 += a[(lo + i + 1) * st]
        r2 += a[(lo + i + 2) * st]
        r3 += a[(lo + i + 3) * st]
        r4 += a[(lo + i + 4) * st]
        r5 += a[(lo + i + 5) * st]
        r6 += a[(lo + i + 6) * st]
        r7 += a[(lo + i + 7) * st]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[(lo + i) * st]
        i += 1
    return res


cdef double pairwise_sum_c(const double* a, Py_ssize_t n, Py_ssize_t step) noexcept nogil:
    """``a[:n].sum()`` (elements ``step`` apart) as numpy adds a contiguous float64
    run: runs of up to 128 values by :func:`_block_sum`; a longer run as its two halves
    (the first a multiple of 8 long) summed apart and added, first half + second.
    Walked with an explicit stack (64 levels: halves of at least 128 values)."""
    cdef Py_ssize_t s_lo[64]
    cdef Py_ssize_t s_n[64]
    cdef Py_ssize_t s_step[64]
    cdef double vals[64]
    cdef Py_ssize_t sp, nv, t, m, half
    cdef bint first
    if n <= 128:
        return _block_sum(a, 0, n, step)
    s_lo[0], s_n[0], s_step[0] = 0, n, 0
    sp, nv = 1, 0
    while sp:
        t = sp - 1
        m = s_n[t]
        if m <= 128:
            vals[nv] = _block_sum(a, s_lo[t], m, step)
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


def pairwise_sum(const double[:] a, Py_ssize_t n):
    """``a[:n].sum()`` as numpy adds a contiguous float64 run (:func:`pairwise_sum_c`):
    the same number bit for bit."""
    if n > a.shape[0] or n < 0:
        raise ValueError(f"n={n} must be in 0..a.size={a.shape[0]}")
    cdef double s
    cdef const double* p = &a[0] if a.shape[0] else NULL
    cdef Py_ssize_t st = a.strides[0] // sizeof(double)
    with nogil:
        s = pairwise_sum_c(p, n, st)
    return s


cdef inline bint _before(double x, double y, int64_t i, int64_t j) noexcept nogil:
    """Key ``x`` of item ``i`` sorts before key ``y`` of item ``j`` (NaN last, ties
    by position): numpy's stable order."""
    if x != x:
        return y != y and i < j
    return y != y or x < y or (x == y and i < j)


cdef void _top(const double* key, Py_ssize_t n, Py_ssize_t n_sel, npy_bool* vrow,
               int64_t* a, int64_t* b) noexcept nogil:
    """``vrow[d] = True`` for the ``n_sel`` of the ``n`` features of smallest ``key`` in
    numpy's stable order (ties to the earlier feature, NaN last): a bottom-up merge
    sort of the positions, in the caller's work arrays ``a`` and ``b`` (at least ``n``
    long)."""
    cdef Py_ssize_t i, j, t, lo, mid, hi, width
    cdef int64_t* tmp
    for i in range(n):
        a[i] = i
    width = 1
    while width < n:
        lo = 0
        while lo < n:
            mid = lo + width if lo + width < n else n
            hi = lo + 2 * width if lo + 2 * width < n else n
            i, j = lo, mid
            for t in range(lo, hi):
                if i < mid and (j >= hi or not _before(key[a[j]], key[a[i]], a[j], a[i])):
                    b[t] = a[i]
                    i += 1
                else:
                    b[t] = a[j]
                    j += 1
            lo += 2 * width
        tmp = a
        a = b
        b = tmp
        width *= 2
    for i in range(n_sel):
        vrow[a[i]] = True


cdef int select_fixed_c(
    const double* sigma, Py_ssize_t K, Py_ssize_t P,
    const double* counts, const double* log_eta, const double* log_eta0, Py_ssize_t S,
    const int64_t* offsets, const int64_t* L, Py_ssize_t Q,
    Py_ssize_t n_num, Py_ssize_t n_cat, npy_bool* v, Py_ssize_t D,
) noexcept nogil:
    """The fixed-budget selection (``core.select``): per cluster the ``n_num`` numeric
    features of least sd and the ``n_cat`` categorical ones of largest ``G_d - G_kd``,
    ranked by ``core._tie_key`` (values divided by the row's scale, rounded to 10
    decimals as numpy rounds: ``rint(y * 1e10) / 1e10``), sorted stably. ``G_d`` and
    ``G_kd`` are ``core.feature_sums`` of ``counts * log_eta0`` and ``counts * log_eta``
    negated; the scale of the categorical keys is ``max |G_d|``. ``sigma`` (K, P),
    ``counts`` and ``log_eta`` (K, S) and ``v`` (K, D, all False on entry) row-major.
    Returns 0, or -1 when its work arrays could not be allocated."""
    cdef Py_ssize_t k, p, q, j, o, W = P if P > Q else Q
    cdef double scale, x, a, b
    cdef double* key = <double*> malloc((P + 2 * Q + 1) * sizeof(double))
    cdef int64_t* wa = <int64_t*> malloc((2 * W + 1) * sizeof(int64_t))
    cdef double* G_d
    cdef double* neg
    cdef int64_t* wb
    if key == NULL or wa == NULL:
        free(key)
        free(wa)
        return -1
    wb = wa + W
    G_d = key + P
    neg = G_d + Q
    for k in range(K if P else 0):
        scale = 0.0
        for p in range(P):
            x = fabs(sigma[k * P + p])
            if x > scale or x != x:
                scale = x
        if not scale > 0:
            scale = 1.0
        for p in range(P):
            key[p] = rint(sigma[k * P + p] / scale * 1e10) / 1e10
        _top(key, P, n_num, v + k * D, wa, wb)
    if Q == 0:
        free(key)
        free(wa)
        return 0
    for k in range(K):
        for q in range(Q):
            o = offsets[q]
            a = counts[k * S + o] * log_eta0[o]
            b = counts[k * S + o] * log_eta[k * S + o]
            for j in range(1, L[q]):
                a += counts[k * S + o + j] * log_eta0[o + j]
                b += counts[k * S + o + j] * log_eta[k * S + o + j]
            G_d[q] = -(a + 0.0)
            neg[q] = -(G_d[q] - -(b + 0.0))
        scale = 0.0
        for q in range(Q):
            x = fabs(G_d[q])
            if x > scale or x != x:
                scale = x
        if not scale > 0:
            scale = 1.0
        for q in range(Q):
            neg[q] = rint(neg[q] / scale * 1e10) / 1e10
        _top(neg, Q, n_cat, v + k * D + P, wa, wb)
    free(key)
    free(wa)
    return 0
