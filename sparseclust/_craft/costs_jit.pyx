# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# cython: cdivision=True
"""CRAFT's categorical cost terms compiled: the per-row gathers of the level table.

Compiled ahead of time (Cython, at build time); imported only inside :mod:`.core`.
Each kernel does the additions of the numpy code it replaces, one element at a time
and in the same order (no fused multiply-add, no reassociation: the extension is built
with ``-ffp-contract=off`` and without ``-ffast-math``), so a cost is the same number
bit for bit: a row's table rows are added feature by feature in feature order,
starting from the first feature's row. The kernels release the GIL while they work.
(``cdivision``: strides are divided exactly by the item size; the one float division,
``centres``', is by a positive count.)
"""

from libc.math cimport sqrt
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from numpy cimport npy_bool

__all__ = [
    "add_counts",
    "add_rows",
    "centres",
    "cost_table",
    "count_all",
    "feature_sums",
    "level_sums",
    "row_costs",
    "row_min",
]


def level_sums(const code_t[:, :] codes_t, const int64_t[:] offsets, const double[:, :] table,
               Py_ssize_t a, Py_ssize_t b, out):
    """``out[r] = sum_q table[codes_t[q, a + r] + offsets[q] + q + 1]`` for ``r < b - a``,
    added in feature order (the first feature's row copied, the others added to it).
    One, two and four columns (three clusters are padded to four) add into scalars,
    more in blocks of eight and four columns, then one at a time: the same chain of
    additions for every output. ``codes_t``: the codes transposed (features, rows), any
    layout."""
    cdef double[:, :] o = out
    cdef Py_ssize_t Q = codes_t.shape[0], K = table.shape[1], r, q, k, s
    cdef double x0, x1, x2, x3, x4, x5, x6, x7
    cdef int64_t* base
    cdef Py_ssize_t* sidx
    if Q == 0:  # no feature: nothing to add (the numpy code never calls it so)
        o[:b - a, :] = 0.0
        return out
    base = <int64_t*> malloc(Q * sizeof(int64_t))
    sidx = <Py_ssize_t*> malloc(Q * sizeof(Py_ssize_t))
    if base == NULL or sidx == NULL:
        free(base)
        free(sidx)
        raise MemoryError()
    with nogil:
        for q in range(Q):
            base[q] = offsets[q] + q + 1
        if K == 1:
            for r in range(b - a):
                x0 = table[codes_t[0, a + r] + base[0], 0]
                for q in range(1, Q):
                    x0 += table[codes_t[q, a + r] + base[q], 0]
                o[r, 0] = x0
        elif K == 2:
            for r in range(b - a):
                s = codes_t[0, a + r] + base[0]
                x0, x1 = table[s, 0], table[s, 1]
                for q in range(1, Q):
                    s = codes_t[q, a + r] + base[q]
                    x0 += table[s, 0]
                    x1 += table[s, 1]
                o[r, 0], o[r, 1] = x0, x1
        elif K == 4:
            for r in range(b - a):
                s = codes_t[0, a + r] + base[0]
                x0, x1, x2, x3 = table[s, 0], table[s, 1], table[s, 2], table[s, 3]
                for q in range(1, Q):
                    s = codes_t[q, a + r] + base[q]
                    x0 += table[s, 0]
                    x1 += table[s, 1]
                    x2 += table[s, 2]
                    x3 += table[s, 3]
                o[r, 0], o[r, 1], o[r, 2], o[r, 3] = x0, x1, x2, x3
        else:  # blocks of eight and four clusters in registers, then one at a time
            for r in range(b - a):
                for q in range(Q):
                    sidx[q] = codes_t[q, a + r] + base[q]
                k = 0
                while k + 8 <= K:
                    s = sidx[0]
                    x0, x1, x2, x3 = table[s, k], table[s, k + 1], table[s, k + 2], table[s, k + 3]
                    x4, x5, x6, x7 = table[s, k + 4], table[s, k + 5], table[s, k + 6], table[s, k + 7]
                    for q in range(1, Q):
                        s = sidx[q]
                        x0 += table[s, k]
                        x1 += table[s, k + 1]
                        x2 += table[s, k + 2]
                        x3 += table[s, k + 3]
                        x4 += table[s, k + 4]
                        x5 += table[s, k + 5]
                        x6 += table[s, k + 6]
                        x7 += table[s, k + 7]
                    o[r, k], o[r, k + 1], o[r, k + 2], o[r, k + 3] = x0, x1, x2, x3
                    o[r, k + 4], o[r, k + 5], o[r, k + 6], o[r, k + 7] = x4, x5, x6, x7
                    k += 8
                if k + 4 <= K:
                    s = sidx[0]
                    x0, x1, x2, x3 = table[s, k], table[s, k + 1], table[s, k + 2], table[s, k + 3]
                    for q in range(1, Q):
                        s = sidx[q]
                        x0 += table[s, k]
                        x1 += table[s, k + 1]
                        x2 += table[s, k + 2]
                        x3 += table[s, k + 3]
                    o[r, k], o[r, k + 1], o[r, k + 2], o[r, k + 3] = x0, x1, x2, x3
                    k += 4
                while k < K:
                    x0 = table[sidx[0], k]
                    for q in range(1, Q):
                        x0 += table[sidx[q], k]
                    o[r, k] = x0
                    k += 1
    free(base)
    free(sidx)
    return out


def cost_table(const double[:] log_eta0, const double[:, :] log_eta, const npy_bool[:, :] v,
               Py_ssize_t P, const int64_t[:] offsets, const int64_t[:] L, out):
    """The gather table of the categorical costs (``core._level_table`` of
    ``(log_eta0 - log_eta) * v``): row ``s + q + 1`` holds level ``s`` of feature ``q``,
    column ``k`` cluster ``k`` (zero where feature ``q`` is not selected: ``x * 0.0``,
    a negative ``x`` giving -0.0 as numpy's product does); the other rows and columns
    zero."""
    cdef double[:, :] o = out
    cdef Py_ssize_t k, q, j, o_q
    cdef double on
    with nogil:
        o[:, :] = 0.0
        for k in range(log_eta.shape[0]):
            for q in range(offsets.shape[0]):
                on = 1.0 if v[k, P + q] else 0.0
                o_q = offsets[q]
                for j in range(L[q]):
                    o[o_q + j + q + 1, k] = (log_eta0[o_q + j] - log_eta[k, o_q + j]) * on
    return out


def feature_sums(const double[:, :] A, const int64_t[:] offsets, const int64_t[:] L, out):
    """``out[k, q]``: the level columns of feature ``q`` in ``A[k]`` added in level order
    from the first, then ``+ 0.0`` (a -0.0 total becomes 0.0, as scipy's sum from 0
    and numpy's zero-padded accumulation give)."""
    cdef double[:, :] o = out
    cdef Py_ssize_t k, q, j, o_q
    cdef double s
    with nogil:
        for k in range(A.shape[0]):
            for q in range(offsets.shape[0]):
                o_q = offsets[q]
                s = A[k, o_q]
                for j in range(1, L[q]):
                    s += A[k, o_q + j]
                o[k, q] = s + 0.0
    return out


def add_rows(const double[:, :] level, const double[:] g0, Py_ssize_t ga, const double[:] F_v,
             bint with_f, out):
    """``out[r, k] = level[r, k] + g0[ga + r]``, then ``+ F_v[k]`` when ``with_f``: two
    roundings, as numpy's two broadcast additions (``level`` may have more columns
    than ``out``: the padding of three clusters)."""
    cdef double[:, :] o = out
    cdef Py_ssize_t r, k
    cdef double g, x
    with nogil:
        for r in range(o.shape[0]):
            g = g0[ga + r]
            for k in range(o.shape[1]):
                x = level[r, k] + g
                if with_f:
                    x = x + F_v[k]
                o[r, k] = x
    return out


cdef inline double _np_max(double a, double b) noexcept nogil:
    """numpy's ``maximum`` of two floats: ``a`` when ``a >= b`` or ``a`` is NaN."""
    return a if (a >= b or a != a) else b


cdef void centres_c(
    const double* s1, const double* s2, const double* cnt, const double* nk,
    const int64_t* keep, Py_ssize_t K2, const double* col_mean, const double* col_sd,
    Py_ssize_t P, double sigma_floor, double* zeta, double* sigma,
) noexcept nogil:
    """:func:`centres` on row-major arrays (``s1``, ``s2``, ``cnt``: (clusters, P);
    ``zeta``, ``sigma``: (K2, P))."""
    cdef Py_ssize_t j, k, p
    cdef double c, z, var, sg
    for j in range(K2):
        k = keep[j]
        for p in range(P):
            c = cnt[k * P + p]
            if c > 0:
                z = s1[k * P + p] / c
                var = s2[k * P + p] / c - z * z
            else:
                z = col_mean[p]
                var = 0.0
            sg = sqrt(_np_max(var, 0.0))
            sg = _np_max(sg, sigma_floor * col_sd[p])
            if nk[k] < 2:
                sg = 1.0
            if not c > 0:
                sg = _np_max(col_sd[p], 1e-12)
            if not sg > 0:
                sg = 1.0
            zeta[j * P + p] = z
            sigma[j * P + p] = sg


def centres(const double[:, ::1] s1, const double[:, ::1] s2, const double[:, ::1] cnt,
            const double[::1] nk, const int64_t[::1] keep, const double[::1] col_mean,
            const double[::1] col_sd, double sigma_floor, zeta, sigma):
    """Means and sds of the kept clusters (``core.state_from_stats``, element by element
    the same operations): ``zeta = s1 / cnt`` (the global mean where no cell is
    observed), ``sigma = sqrt(max(s2 / cnt - zeta^2, 0))`` floored at ``sigma_floor``
    global sds, 1 below two points, the global sd (at least 1e-12) where no cell is
    observed, and 1 where not positive."""
    cdef double[:, ::1] z = zeta
    cdef double[:, ::1] sg = sigma
    cdef Py_ssize_t P = col_mean.shape[0], K2 = keep.shape[0]
    if P == 0 or K2 == 0:
        return zeta, sigma
    with nogil:
        centres_c(&s1[0, 0], &s2[0, 0], &cnt[0, 0], &nk[0], &keep[0], K2, &col_mean[0],
                  &col_sd[0], P, sigma_floor, &z[0, 0], &sg[0, 0])
    return zeta, sigma


cdef inline void _count_rows(
    const code_t* codes, Py_ssize_t cs0, Py_ssize_t cs1, Py_ssize_t Q,
    const int64_t* offsets, const int64_t* rows, Py_ssize_t rs, const int64_t* labels,
    Py_ssize_t ls, Py_ssize_t n, int64_t sign, int64_t* out, Py_ssize_t os0,
    Py_ssize_t os1,
) noexcept nogil:
    """``out[labels[i], codes[r, q] + offsets[q] + q + 1] += sign`` for ``i < n``,
    ``r = rows[i]`` (``r = i`` when ``rows`` is NULL), every feature ``q``; strides
    in elements."""
    cdef Py_ssize_t i, r, q
    cdef int64_t k
    for i in range(n):
        r = rows[i * rs] if rows != NULL else i
        k = labels[i * ls]
        for q in range(Q):
            out[k * os0 + (codes[r * cs0 + q * cs1] + offsets[q] + q + 1) * os1] += sign


cdef void count_all_c(
    const int* codes, Py_ssize_t cs0, Py_ssize_t cs1, Py_ssize_t Q,
    const int64_t* offsets, const int64_t* labels, Py_ssize_t n,
    int64_t* out, Py_ssize_t slots,
) noexcept nogil:
    """:func:`count_all` of int32 codes (strides in elements) into a row-major
    ``out`` (clusters, slots)."""
    _count_rows(codes, cs0, cs1, Q, offsets, NULL, 0, labels, 1, n, 1, out, slots, 1)


def add_counts(const code_t[:, :] codes, const int64_t[::1] offsets, const int64_t[:] rows,
               const int64_t[:] labels, int64_t sign, out):
    """``out[labels[i], codes[rows[i], q] + offsets[q] + q + 1] += sign`` for every
    ``i`` and feature ``q`` (the level slots of ``core._level_cells``; integer
    counts, so the order of the additions does not matter)."""
    cdef int64_t[:, :] o = out
    cdef Py_ssize_t n = rows.shape[0], sz = sizeof(code_t), i8 = sizeof(int64_t)
    if n == 0 or codes.shape[1] == 0:
        return out
    with nogil:
        _count_rows(&codes[0, 0], codes.strides[0] // sz, codes.strides[1] // sz,
                    codes.shape[1], &offsets[0], &rows[0], rows.strides[0] // i8, &labels[0],
                    labels.strides[0] // i8, n, sign, &o[0, 0], o.strides[0] // i8,
                    o.strides[1] // i8)
    return out


def count_all(const code_t[:, :] codes, const int64_t[::1] offsets, const int64_t[:] labels,
              out):
    """:func:`add_counts` of every row with ``sign = 1``."""
    cdef int64_t[:, :] o = out
    cdef Py_ssize_t n = labels.shape[0], sz = sizeof(code_t), i8 = sizeof(int64_t)
    if n == 0 or codes.shape[1] == 0:
        return out
    with nogil:
        _count_rows(&codes[0, 0], codes.strides[0] // sz, codes.strides[1] // sz,
                    codes.shape[1], &offsets[0], NULL, 0, &labels[0], labels.strides[0] // i8,
                    n, 1, &o[0, 0], o.strides[0] // i8, o.strides[1] // i8)
    return out


cdef void row_min_c(
    const double* D, Py_ssize_t n, Py_ssize_t K, int64_t* idx, double* dmin
) noexcept nogil:
    """:func:`row_min` of a row-major ``D`` (n, K)."""
    cdef Py_ssize_t r, k, j
    cdef double best, x
    for r in range(n):
        best = D[r * K]
        j = 0
        if best == best:
            for k in range(1, K):
                x = D[r * K + k]
                if x < best or x != x:
                    best = x
                    j = k
                    if x != x:
                        break
        idx[r] = j
        dmin[r] = best


def row_min(const double[:, ::1] D, idx, dmin):
    """``idx = D.argmin(axis=1)`` (the first of equal minima; the first NaN, as numpy
    takes a NaN for the minimum) and ``dmin = D[r, idx]``."""
    cdef int64_t[::1] ix = idx
    cdef double[::1] dm = dmin
    if D.shape[0] == 0 or D.shape[1] == 0:
        return idx
    with nogil:
        row_min_c(&D[0, 0], D.shape[0], D.shape[1], &ix[0], &dm[0])
    return idx


def row_costs(const code_t[:, :] codes, const int64_t[:] rows, const int64_t[:] offsets,
              const double[:, :] table, const double[:] g0, double f_v, out):
    """Categorical data: the cost of rows ``rows`` to the one cluster of ``table``
    (one column), as :func:`level_sums` then :func:`add_rows` give it:
    ``(sum_q table[...] + g0[r]) + f_v``."""
    cdef double[:] o = out
    cdef Py_ssize_t Q = codes.shape[1], i, r, q
    cdef double x
    if Q == 0:
        raise ValueError("row_costs needs categorical features")
    with nogil:
        for i in range(rows.shape[0]):
            r = rows[i]
            x = table[codes[r, 0] + offsets[0] + 1, 0]
            for q in range(1, Q):
                x += table[codes[r, q] + offsets[q] + q + 1, 0]
            o[i] = (x + g0[r]) + f_v
    return out
