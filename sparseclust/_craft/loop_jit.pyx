# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# cython: cdivision=True
"""CRAFT's passes on data held in one block of rows, compiled: one call runs the
passes of a fit (:func:`~sparseclust._craft.core._passes`) from its first cluster
until no label changes or a stop.

Compiled ahead of time (Cython, at build time); imported only inside :mod:`.core`. The
loop does what the numpy pass does (:func:`~sparseclust._craft.core._pass`: costs, the
sequential new-cluster rule with its Bernoulli draws, assignment, statistics; then the
update and the fixed-budget selection), operation by operation in the same order, so a
fit is the same bit for bit (and the same as the numba kernels this module replaced):

* matrix products are the GEMMs (GEMVs, dot products for a single row or column)
  numba's ``np.dot`` made: those of ``scipy.linalg.cython_blas``, with the same
  operands, transposition flags, dimensions and leading dimensions (:func:`_dot`);
* a row's cost terms are added in :func:`~sparseclust._craft.core._cost_pieces`'s
  order; sums numpy reduces pairwise are reduced by
  :func:`~sparseclust._craft.pass_jit.pairwise_sum`; the C code is built with
  ``-ffp-contract=off`` and without ``-ffast-math`` (no fused multiply-add, no
  reordering);
* logarithms are numpy's own: a level share's log is read from tables the caller
  fills with ``np.log`` (counts are integers, so every value the update can meet is
  in them);
* the Bernoulli draws compare the caller's uniforms (``u``, drawn from its
  ``Generator`` ahead), in the numpy code's order.

The clusters live in buffers of ``cap`` rows; when a pass would open more clusters than
fit, the call returns :data:`GROW` before the pass draws anything, and the caller
enlarges the buffers and calls again (the pass starts over, the same numbers). The
passes run without the GIL (fits in threads run in parallel); the integer divisions
here have non-negative operands (``cdivision``).
"""

cimport numpy as cnp
cimport scipy.linalg.cython_blas as blas
from libc.math cimport INFINITY
from libc.stdint cimport int64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memset
from numpy cimport npy_bool

from .costs_jit cimport centres_c, count_all_c, row_min_c
from .pass_jit cimport pairwise_sum_c, select_fixed_c

import numpy as np

cnp.import_array()

__all__ = ["DONE", "GROW", "run_passes"]

DONE, GROW = 0, 1
# ints[]: pass reached, clusters, passes above stop_above's k, converged, aborted, known,
# clusters of the last pass (or wanted), uniforms used
IT, K_, OVER, CONV, ABORT, KNOWN = range(6)
cdef enum:
    _DONE = 0
    _GROW = 1
    _IT = 0
    _K = 1
    _OVER = 2
    _CONV = 3
    _ABORT = 4
    _KNOWN = 5


# ------------------------------------------------------------------ unpacking (GIL held)
cdef cnp.ndarray _array(object o, char kind, int itemsize, int ndim, str what):
    """``o`` as an ndarray of ``kind`` (``b"f"`` float, ``b"i"`` signed integer, ``b"b"``
    bool) / ``itemsize`` / ``ndim`` (TypeError otherwise)."""
    if not isinstance(o, cnp.ndarray):
        raise TypeError(f"{what}: expected a numpy array, got {type(o).__name__}")
    cdef cnp.ndarray a = <cnp.ndarray> o
    cdef bint ok = (
        (cnp.PyArray_ISFLOAT(a) if kind == b"f" else
         cnp.PyArray_ISBOOL(a) if kind == b"b" else
         cnp.PyArray_ISINTEGER(a) and cnp.PyArray_ISSIGNED(a))
        and cnp.PyArray_NDIM(a) == ndim and cnp.PyArray_ITEMSIZE(a) == itemsize
    )
    if not ok:
        raise TypeError(f"{what}: expected a {ndim}-d array of kind {chr(kind)!r} and "
                        f"itemsize {itemsize}, got {o.dtype} with shape {o.shape}")
    return a


cdef cnp.ndarray _behaved(cnp.ndarray a, bint write, bint contiguous, list keep, str what):
    """``a`` itself when aligned, in native byte order (and writeable, when
    ``write``; C- or F-contiguous, when ``contiguous``), else a C-contiguous copy
    kept alive in ``keep`` (numba copied non-contiguous operands of ``np.dot`` so)."""
    cdef bint ok = cnp.PyArray_ISBEHAVED_RO(a)
    if contiguous and not (cnp.PyArray_IS_C_CONTIGUOUS(a) or cnp.PyArray_IS_F_CONTIGUOUS(a)):
        ok = False
    if write:
        if not (ok and cnp.PyArray_ISWRITEABLE(a)):
            raise ValueError(f"{what}: an output must be a writeable, aligned, "
                             f"{'contiguous ' if contiguous else ''}native array")
        return a
    if not ok:
        a = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("="))
        keep.append(a)
    return a


cdef int unpack_f2(object o, F2* out, bint write, bint contiguous, list keep,
                   str what) except -1:
    """A 2-D float64 array as :class:`F2` (``contiguous``: C- or F-contiguous, a
    read-only one copied when it is not)."""
    cdef cnp.ndarray a = _behaved(_array(o, b"f", 8, 2, what), write, contiguous, keep, what)
    out.p = <double*> cnp.PyArray_DATA(a)
    out.n0, out.n1 = cnp.PyArray_DIM(a, 0), cnp.PyArray_DIM(a, 1)
    out.s0, out.s1 = cnp.PyArray_STRIDE(a, 0) // 8, cnp.PyArray_STRIDE(a, 1) // 8
    out.f = not cnp.PyArray_IS_C_CONTIGUOUS(a) and cnp.PyArray_IS_F_CONTIGUOUS(a)
    return 0


cdef int _i2(object o, I2* out, list keep, str what) except -1:
    cdef cnp.ndarray a = _behaved(_array(o, b"i", 4, 2, what), False, False, keep, what)
    out.p = <int*> cnp.PyArray_DATA(a)
    out.n0, out.n1 = cnp.PyArray_DIM(a, 0), cnp.PyArray_DIM(a, 1)
    out.s0, out.s1 = cnp.PyArray_STRIDE(a, 0) // 4, cnp.PyArray_STRIDE(a, 1) // 4
    return 0


cdef int unpack_b2(object o, B2* out, bint write, list keep) except -1:
    """A 2-D bool array as :class:`B2` (strides in bytes = elements)."""
    cdef cnp.ndarray a = _behaved(_array(o, b"b", 1, 2, "v"), write, False, keep, "v")
    out.p = <npy_bool*> cnp.PyArray_DATA(a)
    out.n0, out.n1 = cnp.PyArray_DIM(a, 0), cnp.PyArray_DIM(a, 1)
    out.s0, out.s1 = cnp.PyArray_STRIDE(a, 0), cnp.PyArray_STRIDE(a, 1)
    return 0


cdef void* unpack_1d(object o, char kind, int itemsize, bint write, list keep, str what,
                     Py_ssize_t* size) except NULL:
    """The data of a 1-D array (contiguous; a read-only one copied when it is not)."""
    cdef cnp.ndarray a = _array(o, kind, itemsize, 1, what)
    if cnp.PyArray_STRIDE(a, 0) != itemsize and cnp.PyArray_DIM(a, 0) > 1:
        if write:
            raise ValueError(f"{what}: an output must be contiguous")
        a = np.ascontiguousarray(a)
        keep.append(a)
    a = _behaved(a, write, True, keep, what)
    if size != NULL:
        size[0] = cnp.PyArray_DIM(a, 0)
    return <char*> cnp.PyArray_DATA(a) if cnp.PyArray_DATA(a) != NULL else <char*> 1


cdef int unpack_dat(object dat, Dat* d, list keep) except -1:
    """The block's loop inputs (``core._loop_inputs``, a tuple of 17 arrays) as
    :class:`Dat`. Arrays copied for the call are appended to ``keep``."""
    cdef Py_ssize_t n_off, n_L, n_m, n_sd
    if len(dat) != 17:
        raise ValueError(f"dat: expected the 17 loop inputs, got {len(dat)}")
    _i2(dat[0], &d.codes, keep, "codes")
    d.offsets = <int64_t*> unpack_1d(dat[1], b"i", 8, False, keep, "offsets", &n_off)
    d.L = <int64_t*> unpack_1d(dat[2], b"i", 8, False, keep, "L", &n_L)
    d.g0 = <double*> unpack_1d(dat[3], b"f", 8, False, keep, "g0", &d.n_g0)
    unpack_f2(dat[4], &d.X0, False, True, keep, "X0")
    unpack_f2(dat[5], &d.Mf, False, True, keep, "Mf")
    d.col_mean = <double*> unpack_1d(dat[6], b"f", 8, False, keep, "col_mean", &n_m)
    d.col_sd = <double*> unpack_1d(dat[7], b"f", 8, False, keep, "col_sd", &n_sd)
    d.log_eta0 = <double*> unpack_1d(dat[9], b"f", 8, False, keep, "log_eta0", &d.S)
    d.logc = <double*> unpack_1d(dat[10], b"f", 8, False, keep, "logc", NULL)
    unpack_f2(dat[11], &d.logn, False, False, keep, "logn")
    unpack_f2(dat[12], &d.sing, False, False, keep, "sing")
    d.inv = <int64_t*> unpack_1d(dat[13], b"i", 8, False, keep, "inv", &d.n_inv)
    _i2(dat[14], &d.dcodes, keep, "distinct codes")
    d.dg0 = <double*> unpack_1d(dat[15], b"f", 8, False, keep, "distinct g0", NULL)
    unpack_f2(dat[16], &d.X2, False, True, keep, "X0 * X0")
    d.P, d.Q = d.X0.n1, n_off
    if (n_L != d.Q or d.codes.n1 != d.Q or d.dcodes.n1 != d.Q or n_m != d.P or n_sd != d.P
            or d.X2.n0 != d.X0.n0 or d.X2.n1 != d.P or d.Mf.n1 != d.P):
        raise ValueError("dat: inconsistent shapes of the loop inputs")
    return 0


cdef int unpack_cur(object cur, Cur* c, bint write, list keep) except -1:
    """The clusters ``(zeta, sigma, log_eta, counts, v)`` as :class:`Cur`."""
    if len(cur) != 5:
        raise ValueError(f"cur: expected (zeta, sigma, log_eta, counts, v), got {len(cur)}")
    unpack_f2(cur[0], &c.zeta, write, False, keep, "zeta")
    unpack_f2(cur[1], &c.sigma, write, False, keep, "sigma")
    unpack_f2(cur[2], &c.log_eta, write, False, keep, "log_eta")
    unpack_f2(cur[3], &c.counts, write, False, keep, "counts")
    unpack_b2(cur[4], &c.v, write, keep)
    if not (c.sigma.n0 == c.log_eta.n0 == c.counts.n0 == c.v.n0 == c.zeta.n0
            and c.sigma.n1 == c.zeta.n1 and c.counts.n1 == c.log_eta.n1):
        raise ValueError("cur: inconsistent shapes of the cluster arrays")
    return 0


cdef int unpack_fp(object fp, FP* f) except -1:
    """The loop's floats ``(threshold, F_delta, a0, b0, sigma_floor, sigma_override)``."""
    f.threshold, f.F_delta, f.a0, f.b0, f.sigma_floor, f.sigma_override = fp
    return 0


cdef int raise_status(int status) except -1:
    """The exception of a negative status: :data:`NOMEM` MemoryError, :data:`ZERODIV`
    ZeroDivisionError (where numba's kernels raised it: a float divided by zero)."""
    if status == NOMEM:
        raise MemoryError()
    if status == ZERODIV:
        raise ZeroDivisionError("division by zero")
    return 0


# ------------------------------------------------------------------ small helpers
cdef inline void* _alloc(size_t nbytes) noexcept nogil:
    return malloc(nbytes if nbytes else 1)


cdef inline void* _zalloc(size_t nbytes) noexcept nogil:
    return calloc(nbytes if nbytes else 1, 1)


cdef void _dot(const double* x, bint x_f, Py_ssize_t m, Py_ssize_t k, const double* y,
               bint y_f, Py_ssize_t n, double* out) noexcept nogil:
    """``out (m, n) = x (m, k) @ y (k, n)``, ``out`` row-major, as numba's ``np.dot(x,
    y, out)`` does it (``numba/np/linalg.py``: ``dot_3_mm``, ``call_xxgemm``,
    ``call_xxgemv``, ``call_xxdot``): zeros when a dimension is 0, ``ddot`` for one row
    times one column, ``dgemv`` for a single row or column, else ``dgemm`` on the
    row-major product seen column-major (``out' = y' x'``), each operand transposed
    when its layout (``x_f``, ``y_f``: F-ordered, else C) differs from the output's,
    leading dimensions those of the operands' physical order; alpha 1, beta 0."""
    cdef int im = <int> m, ik = <int> k, i_n = <int> n, inc = 1, lda, ldb
    cdef double one = 1.0, zero = 0.0
    cdef char ta, tb
    if k == 0 or m == 0 or n == 0:
        memset(out, 0, m * n * sizeof(double))
        return
    if n == 1:
        if m == 1:
            out[0] = blas.ddot(&ik, <double*> x, &inc, <double*> y, &inc)
        elif not x_f:
            ta = b"t"
            blas.dgemv(&ta, &ik, &im, &one, <double*> x, &ik, <double*> y, &inc, &zero,
                       out, &inc)
        else:
            ta = b"n"
            blas.dgemv(&ta, &im, &ik, &one, <double*> x, &im, <double*> y, &inc, &zero,
                       out, &inc)
    elif m == 1:
        if y_f:
            ta = b"t"
            blas.dgemv(&ta, &ik, &i_n, &one, <double*> y, &ik, <double*> x, &inc, &zero,
                       out, &inc)
        else:
            ta = b"n"
            blas.dgemv(&ta, &i_n, &ik, &one, <double*> y, &i_n, <double*> x, &inc, &zero,
                       out, &inc)
    else:
        ta = b"t" if y_f else b"n"
        lda = ik if y_f else i_n
        tb = b"t" if x_f else b"n"
        ldb = im if x_f else ik
        blas.dgemm(&ta, &tb, &i_n, &im, &ik, &one, <double*> y, &lda, <double*> x, &ldb,
                   &zero, out, &i_n)


cdef inline Py_ssize_t _count(const B2* v, Py_ssize_t k) noexcept nogil:
    """Features selected in cluster ``k`` (``v[k].sum()``)."""
    cdef Py_ssize_t c = 0, d
    for d in range(v.n1):
        c += v.p[k * v.s0 + d * v.s1]
    return c


# ------------------------------------------------------------------ costs
cdef struct Wts:
    double* W
    double* Wz
    double* wz2
    double* wz2_sum
    double* F_v
    double* table
    Py_ssize_t K, tw


cdef inline void _free_wts(Wts* w) noexcept nogil:
    free(w.W)
    free(w.Wz)
    free(w.wz2)
    free(w.wz2_sum)
    free(w.F_v)
    free(w.table)


cdef int _weights(const Cur* cur, Py_ssize_t lo, Py_ssize_t hi, const Dat* dat,
                  const FP* fp, Wts* w) noexcept nogil:
    """Clusters ``lo:hi``'s cost terms (``core._numeric_weights``, ``F_v`` and
    ``costs_jit.cost_table``), row-major: ``W = v / (2 sig sig)`` (``sig`` the
    cluster's sd, or ``sigma_override`` when positive), ``Wz = -2 (W zeta)``,
    ``wz2 = W zeta zeta`` and its row sums (pairwise), ``F_v = F_delta * (selected
    features)``, and the categorical gather table ((S + Q, tw), zero where not
    written; ``tw`` 4 columns for 2-4 clusters, see :func:`_cat_terms`). Returns 0,
    :data:`NOMEM` or :data:`ZERODIV` (a zero ``2 sig sig``: numba raised
    ZeroDivisionError), nothing to free then."""
    cdef Py_ssize_t P = dat.P, K = hi - lo, Q = dat.Q, S = dat.S, k, c, p, q, j, tw
    cdef double so = fp.sigma_override, s, den, ww, wz, on
    tw = 4 if 2 <= K <= 4 else K
    w.K, w.tw = K, tw
    w.W = <double*> _alloc(K * P * sizeof(double))
    w.Wz = <double*> _alloc(K * P * sizeof(double))
    w.wz2 = <double*> _alloc(K * P * sizeof(double))
    w.wz2_sum = <double*> _alloc(K * sizeof(double))
    w.F_v = <double*> _alloc(K * sizeof(double))
    w.table = <double*> _zalloc((S + Q) * tw * sizeof(double))
    if (w.W == NULL or w.Wz == NULL or w.wz2 == NULL or w.wz2_sum == NULL or w.F_v == NULL
            or w.table == NULL):
        _free_wts(w)
        return NOMEM
    cdef const F2* zeta = &cur.zeta
    cdef const F2* sigma = &cur.sigma
    cdef const F2* log_eta = &cur.log_eta
    cdef const B2* v = &cur.v
    for k in range(K):
        c = lo + k
        for p in range(P):
            s = so if so > 0 else sigma.p[c * sigma.s0 + p * sigma.s1]
            den = 2.0 * s * s
            if den == 0:
                _free_wts(w)
                return ZERODIV
            ww = (1.0 if v.p[c * v.s0 + p * v.s1] else 0.0) / den
            wz = ww * zeta.p[c * zeta.s0 + p * zeta.s1]
            w.W[k * P + p] = ww
            w.Wz[k * P + p] = -2.0 * wz
            w.wz2[k * P + p] = wz * zeta.p[c * zeta.s0 + p * zeta.s1]
        w.wz2_sum[k] = pairwise_sum_c(w.wz2 + k * P, P, 1)
        w.F_v[k] = fp.F_delta * <double> _count(v, c)
        for q in range(Q):
            on = 1.0 if v.p[c * v.s0 + (P + q) * v.s1] else 0.0
            for j in range(dat.offsets[q], dat.offsets[q] + dat.L[q]):
                w.table[(j + q + 1) * tw + k] = (
                    (dat.log_eta0[j] - log_eta.p[c * log_eta.s0 + j * log_eta.s1]) * on
                )
    return 0


cdef int _cat_terms(const I2* codes, const double* g0, const int64_t* rows, Py_ssize_t m,
                    const Wts* w, const Dat* dat, double* out) noexcept nogil:
    """Per row ``rows[i]`` of ``codes`` (``i`` when ``rows`` is NULL), ``i < m``: its
    categorical cost terms to each cluster, the table rows of its levels added feature
    by feature from the first (``core._level_sums``; the clusters side by side),
    ``+ g0``, into ``out`` (m, K) row-major. Only with categorical features. Each
    output is the same chain of additions whatever the path: one to four clusters
    (the table has four columns for two to four) and, beyond, blocks of eight and four
    clusters add in registers, the last ones one at a time. Returns 0 or
    :data:`NOMEM`."""
    cdef Py_ssize_t Q = dat.Q, K = w.K, tw = w.tw, i, r, q, k, s
    cdef Py_ssize_t cs0 = codes.s0, cs1 = codes.s1
    cdef const int* cp = codes.p
    cdef const int64_t* off = dat.offsets
    cdef const double* table = w.table
    cdef const double* t
    cdef double* o
    cdef double x, x0, x1, x2, x3, x4, x5, x6, x7, g
    cdef Py_ssize_t* sidx
    if K == 1:  # one cluster (a cluster just opened): a scalar sum
        for i in range(m):
            r = rows[i] if rows != NULL else i
            x = table[(cp[r * cs0] + off[0] + 1) * tw]
            for q in range(1, Q):
                x += table[(cp[r * cs0 + q * cs1] + off[q] + q + 1) * tw]
            out[i] = x + g0[r]
        return 0
    if 2 <= K <= 4:  # four sums in registers (the table has four columns)
        for i in range(m):
            r = rows[i] if rows != NULL else i
            s = (cp[r * cs0] + off[0] + 1) * tw
            x0, x1, x2, x3 = table[s], table[s + 1], table[s + 2], table[s + 3]
            for q in range(1, Q):
                s = (cp[r * cs0 + q * cs1] + off[q] + q + 1) * tw
                x0 += table[s]
                x1 += table[s + 1]
                x2 += table[s + 2]
                x3 += table[s + 3]
            g = g0[r]
            out[i * K] = x0 + g
            out[i * K + 1] = x1 + g
            if K > 2:
                out[i * K + 2] = x2 + g
            if K > 3:
                out[i * K + 3] = x3 + g
        return 0
    sidx = <Py_ssize_t*> _alloc(Q * sizeof(Py_ssize_t))
    if sidx == NULL:
        return NOMEM
    for i in range(m):
        r = rows[i] if rows != NULL else i
        for q in range(Q):  # the row's table rows
            sidx[q] = (cp[r * cs0 + q * cs1] + off[q] + q + 1) * tw
        g = g0[r]
        o = out + i * K
        k = 0
        while k + 8 <= K:
            t = table + sidx[0] + k
            x0, x1, x2, x3, x4, x5, x6, x7 = t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]
            for q in range(1, Q):
                t = table + sidx[q] + k
                x0 += t[0]
                x1 += t[1]
                x2 += t[2]
                x3 += t[3]
                x4 += t[4]
                x5 += t[5]
                x6 += t[6]
                x7 += t[7]
            o[k], o[k + 1], o[k + 2], o[k + 3] = x0 + g, x1 + g, x2 + g, x3 + g
            o[k + 4], o[k + 5], o[k + 6], o[k + 7] = x4 + g, x5 + g, x6 + g, x7 + g
            k += 8
        if k + 4 <= K:
            t = table + sidx[0] + k
            x0, x1, x2, x3 = t[0], t[1], t[2], t[3]
            for q in range(1, Q):
                t = table + sidx[q] + k
                x0 += t[0]
                x1 += t[1]
                x2 += t[2]
                x3 += t[3]
            o[k], o[k + 1], o[k + 2], o[k + 3] = x0 + g, x1 + g, x2 + g, x3 + g
            k += 4
        while k < K:
            x = table[sidx[0] + k]
            for q in range(1, Q):
                x += table[sidx[q] + k]
            o[k] = x + g
            k += 1
    free(sidx)
    return 0


cdef int _costs(const double* cat, const int64_t* inv, Py_ssize_t n_inv, Py_ssize_t Q,
                const F2* X, const F2* X2, const F2* Mf, const Wts* w, bint masked,
                Py_ssize_t n, double* D) noexcept nogil:
    """``D`` (n, K) row-major: the costs of the rows given (``X`` their numeric cells)
    as :func:`~sparseclust._craft.core._cost_pieces` adds them: the categorical terms
    ``cat`` (:func:`_cat_terms`: of the rows themselves, or with ``inv`` not empty of
    their distinct rows, row ``r`` taking row ``inv[r]``; 0.0 without categorical
    features), ``+ F_v`` on categorical data; with numeric features ``+ X2 W' + X Wz' +
    wz2_sum`` (``X2 = X * X``; ``Mf wz2'`` with missing cells) ``+ F_v``. Returns 0, or
    :data:`NOMEM`."""
    cdef Py_ssize_t K = w.K, P = X.n1, r, k, u
    cdef double* t1 = NULL
    cdef double* t2 = NULL
    cdef double* t3 = NULL
    cdef double x
    if P:
        t1 = <double*> _alloc(n * K * sizeof(double))
        t2 = <double*> _alloc(n * K * sizeof(double))
        t3 = <double*> _alloc(n * K * sizeof(double)) if masked else t1
        if t1 == NULL or t2 == NULL or t3 == NULL:
            free(t1)
            free(t2)
            if masked:
                free(t3)
            return NOMEM
        _dot(X2.p, X2.f, n, P, w.W, True, K, t1)  # W.T: the transpose of a C array
        _dot(X.p, X.f, n, P, w.Wz, True, K, t2)
        if masked:
            _dot(Mf.p, Mf.f, n, P, w.wz2, True, K, t3)
    for r in range(n):
        u = inv[r] if n_inv else r
        for k in range(K):
            x = cat[u * K + k] if Q else 0.0
            if Q and not P:
                x = x + w.F_v[k]
            if P:
                x = x + t1[r * K + k]
                x = x + t2[r * K + k]
                x = x + (t3[r * K + k] if masked else w.wz2_sum[k])
                x = x + w.F_v[k]
            D[r * K + k] = x
    free(t1)
    free(t2)
    if masked:
        free(t3)
    return 0


cdef int _costs_of(const int64_t* rows, Py_ssize_t m, const Cur* cur, Py_ssize_t lo,
                   Py_ssize_t hi, const Dat* dat, const FP* fp, bint masked,
                   double* D) noexcept nogil:
    """The costs (m, hi - lo) of ``rows`` to clusters ``lo:hi``, their rows taken first
    (as ``core.take_rows``). Returns 0, :data:`NOMEM` or :data:`ZERODIV`."""
    cdef Py_ssize_t P = dat.P, Q = dat.Q, Pm = P if masked else 0, i, p, r
    cdef F2 X, X2, M
    cdef Wts w
    cdef double* cat = NULL
    cdef int status
    cdef const F2* X0 = &dat.X0
    cdef const F2* Mf = &dat.Mf
    X.p = <double*> _alloc(m * P * sizeof(double))
    X2.p = <double*> _alloc(m * P * sizeof(double))
    M.p = <double*> _alloc(m * Pm * sizeof(double))
    if X.p == NULL or X2.p == NULL or M.p == NULL:
        free(X.p)
        free(X2.p)
        free(M.p)
        return NOMEM
    X.n0, X.n1, X.s0, X.s1, X.f = m, P, P, 1, False
    X2.n0, X2.n1, X2.s0, X2.s1, X2.f = m, P, P, 1, False
    M.n0, M.n1, M.s0, M.s1, M.f = m, Pm, Pm, 1, False
    for i in range(m):
        r = rows[i]
        for p in range(P):
            X.p[i * P + p] = X0.p[r * X0.s0 + p * X0.s1]
            X2.p[i * P + p] = X.p[i * P + p] * X.p[i * P + p]
        for p in range(Pm):
            M.p[i * Pm + p] = Mf.p[r * Mf.s0 + p * Mf.s1]
    status = _weights(cur, lo, hi, dat, fp, &w)
    if status == 0:
        cat = <double*> _alloc(m * w.K * sizeof(double)) if Q else NULL
        status = NOMEM
        if cat != NULL or not Q:
            status = _cat_terms(&dat.codes, dat.g0, rows, m, &w, dat, cat) if Q else 0
            if status == 0:
                status = _costs(cat, NULL, 0, Q, &X, &X2, &M, &w, masked, m, D)
        free(cat)
        _free_wts(&w)
    free(X.p)
    free(X2.p)
    free(M.p)
    return status


cdef int _all_costs(const Cur* cur, Py_ssize_t lo, Py_ssize_t hi, const Dat* dat,
                    const FP* fp, bint masked, double* D) noexcept nogil:
    """The costs (rows, hi - lo), row-major into ``D``, of every row to clusters
    ``lo:hi``. Returns 0, :data:`NOMEM` or :data:`ZERODIV`."""
    cdef const I2* codes = &dat.codes
    cdef const double* g0 = dat.g0
    cdef Py_ssize_t Q = dat.Q
    cdef Wts w
    cdef double* cat = NULL
    cdef int status = NOMEM
    if dat.n_inv:  # the categorical terms of the distinct rows only
        codes, g0 = &dat.dcodes, dat.dg0
    status = _weights(cur, lo, hi, dat, fp, &w)
    if status != 0:
        return status
    status = NOMEM
    cat = <double*> _alloc(codes.n0 * w.K * sizeof(double)) if Q else NULL
    if cat != NULL or not Q:
        status = _cat_terms(codes, g0, NULL, codes.n0, &w, dat, cat) if Q else 0
        if status == 0:
            status = _costs(cat, dat.inv, dat.n_inv, Q, &dat.X0, &dat.X2, &dat.Mf, &w,
                            masked, dat.X0.n0, D)
    free(cat)
    _free_wts(&w)
    return status


# ------------------------------------------------------------------ one pass's steps
cdef void _singleton(const Cur* cur, Py_ssize_t c, Py_ssize_t i, const npy_bool* v_new,
                     Py_ssize_t vs, const Dat* dat) noexcept nogil:
    """Cluster ``c`` opened at row ``i`` (``core.singleton``): centre the row (the
    column mean where a cell is missing), sd 1, one-hot level counts, log shares
    from the caller's table of ``log((count + alpha) / (observed + alpha L))``;
    features ``v_new[d * vs]``."""
    cdef Py_ssize_t P = dat.X0.n1, p, q, j, o, row, d
    cdef int code
    cdef bint seen, hit
    cdef const F2* X0 = &dat.X0
    cdef const F2* Mf = &dat.Mf
    cdef const F2* sing = &dat.sing
    cdef const F2* zeta = &cur.zeta
    cdef const F2* sigma = &cur.sigma
    cdef const F2* counts = &cur.counts
    cdef const F2* log_eta = &cur.log_eta
    cdef const B2* v = &cur.v
    for p in range(P):
        seen = Mf.n0 == 0 or Mf.p[i * Mf.s0 + p * Mf.s1] > 0
        zeta.p[c * zeta.s0 + p * zeta.s1] = (
            X0.p[i * X0.s0 + p * X0.s1] if seen else dat.col_mean[p]
        )
        sigma.p[c * sigma.s0 + p * sigma.s1] = 1.0
    for q in range(dat.Q):
        code = dat.codes.p[i * dat.codes.s0 + q * dat.codes.s1]
        o = dat.offsets[q]
        for j in range(dat.L[q]):
            hit = code == j
            counts.p[c * counts.s0 + (o + j) * counts.s1] = 1.0 if hit else 0.0
            row = 2 if hit else (1 if code >= 0 else 0)
            log_eta.p[c * log_eta.s0 + (o + j) * log_eta.s1] = (
                sing.p[row * sing.s0 + (o + j) * sing.s1]
            )
    for d in range(v.n1):
        v.p[c * v.s0 + d * v.s1] = v_new[d * vs]


cdef int _open(const Cur* cur, Py_ssize_t K, const double* dmin, Py_ssize_t n,
               const double* u, int64_t* ints, const Dat* dat, const FP* fp,
               const int64_t* ip, int64_t* openers, Py_ssize_t* n_open) noexcept nogil:
    """Pass, step 2 (``core._open_clusters`` on one block): the candidates (rows whose
    smallest cost exceeds the threshold) walked in row order; each still beyond the
    threshold to every cluster opened before it opens one, with features drawn
    ``Bernoulli((a0 K + vsum) / (K (a0 + b0)))`` (all with ``select_all``); past
    ``max_clusters`` none. Returns the clusters now (the rows that opened them in
    ``openers[:n_open]``), :data:`NOMEM`, or :data:`ZERODIV` (``a0 + b0 = 0``: numba
    raised ZeroDivisionError)."""
    cdef double threshold = fp.threshold, a0 = fp.a0, b0 = fp.b0
    cdef bint masked = ip[0] > 0, select_all = ip[1] > 0
    cdef int64_t cap = ip[5]
    cdef const B2* v = &cur.v
    cdef Py_ssize_t D = v.n1, na = 0, r, k, d, i, t, m, K_now = K
    cdef int64_t* alive = <int64_t*> _alloc(n * sizeof(int64_t))
    cdef double* vsum = <double*> _zalloc(D * sizeof(double))
    cdef double* p = <double*> _alloc(D * sizeof(double))
    cdef npy_bool* v_new = <npy_bool*> _alloc(D * sizeof(npy_bool))
    cdef double* c = NULL
    cdef int64_t* rest
    cdef double den
    cdef int err = 0
    cdef Py_ssize_t status = NOMEM
    n_open[0] = 0
    if alive == NULL or vsum == NULL or p == NULL or v_new == NULL:
        free(alive)
        free(vsum)
        free(p)
        free(v_new)
        return NOMEM
    for r in range(n):
        if dmin[r] > threshold:
            alive[na] = r
            na += 1
    c = <double*> _alloc(na * sizeof(double))
    if c != NULL:
        for k in range(K):
            for d in range(D):
                vsum[d] += v.p[k * v.s0 + d * v.s1]
        while na and (cap < 0 or K_now <= cap):
            i = alive[0]
            for d in range(D):
                den = K_now * (a0 + b0)
                if den == 0:
                    err = ZERODIV
                    break
                p[d] = (a0 * K_now + vsum[d]) / den
                v_new[d] = True if select_all else u[ints[7] + d] < p[d]
            if err:
                break
            if not select_all:
                ints[7] += D
            _singleton(cur, K_now, i, v_new, 1, dat)
            openers[n_open[0]] = i
            n_open[0] += 1
            for d in range(D):
                vsum[d] += v_new[d]
            K_now += 1
            rest, m = alive + 1, na - 1
            if m:
                err = _costs_of(rest, m, cur, K_now - 1, K_now, dat, fp, masked, c)
                if err:
                    break
                na = 0
                for t in range(m):
                    if c[t] > threshold:
                        alive[na] = rest[t]
                        na += 1
            else:
                na = 0
        status = err if err else K_now
    free(alive)
    free(vsum)
    free(p)
    free(v_new)
    free(c)
    return <int> status


cdef void _assign(Py_ssize_t K, Py_ssize_t K_tot, const double* Dn, const int64_t* openers,
                  const int64_t* idx, const double* dmin, int64_t* labels, double* cost,
                  Py_ssize_t n) noexcept nogil:
    """Pass, step 3 (``core._k_assign``): every row takes the best of the old
    clusters (``idx``, ``dmin``) and of the new ones (costs ``Dn``, (n, K_tot - K)
    row-major) opened at or before it (ties keep the old one); an opening row takes
    its own cluster."""
    cdef Py_ssize_t r, t, j, Kn = K_tot - K
    cdef double best, x
    for r in range(n):
        labels[r], cost[r] = idx[r], dmin[r]
    if K_tot == K:
        return
    for r in range(n):
        j = -1
        best = 0.0
        for t in range(Kn):
            x = INFINITY if openers[t] > r else Dn[r * Kn + t]
            if j < 0 or (best == best and (x < best or x != x)):
                best, j = x, t
        if best < dmin[r]:
            labels[r] = K + j
            cost[r] = best
    for t in range(Kn):
        labels[openers[t]] = K + t
        cost[openers[t]] = Dn[openers[t] * Kn + t]


cdef struct Stats:
    double* nk
    double* s1
    double* s2
    double* cnt
    double* counts


cdef inline void _free_stats(Stats* s) noexcept nogil:
    free(s.nk)
    free(s.s1)
    free(s.s2)
    free(s.cnt)
    free(s.counts)


cdef int _stats(const int64_t* labels, Py_ssize_t n, Py_ssize_t K_tot, const Dat* dat,
                Stats* st) noexcept nogil:
    """``core.block_stats`` of the pass's labels, row-major: cluster sizes ``nk``,
    ``s1``, ``s2``, observed cells ``cnt`` (K_tot, P), level counts as floats (K_tot,
    S). Sums by the same products: a dense 0/1 membership matrix times the cells
    (GEMM) up to 32 clusters, beyond that the rows added one by one in row order
    (scipy's sparse product). Returns 0, or -1 (nothing to free) when out of memory."""
    cdef Py_ssize_t P = dat.P, Q = dat.Q, S = dat.S, SQ = S + Q, k, j, r, p, q
    cdef const F2* X0 = &dat.X0
    cdef const F2* X2 = &dat.X2
    cdef const F2* Mf = &dat.Mf
    cdef bint masked = Mf.n0 > 0
    cdef int64_t* cnt_i = <int64_t*> _zalloc(K_tot * SQ * sizeof(int64_t))
    cdef double* Z = NULL
    st.nk = <double*> _zalloc(K_tot * sizeof(double))
    st.s1 = <double*> _zalloc(K_tot * P * sizeof(double))
    st.s2 = <double*> _zalloc(K_tot * P * sizeof(double))
    st.cnt = <double*> _zalloc(K_tot * P * sizeof(double))
    st.counts = <double*> _alloc(K_tot * S * sizeof(double))
    if P and K_tot <= 32:
        Z = <double*> _zalloc(K_tot * n * sizeof(double))
    if (cnt_i == NULL or st.nk == NULL or st.s1 == NULL or st.s2 == NULL or st.cnt == NULL
            or st.counts == NULL or (P and K_tot <= 32 and Z == NULL)):
        free(cnt_i)
        free(Z)
        _free_stats(st)
        return -1
    count_all_c(dat.codes.p, dat.codes.s0, dat.codes.s1, Q, dat.offsets, labels, n, cnt_i,
                SQ)
    if Q:
        for k in range(K_tot):
            for j in range(dat.L[0] + 1):
                st.nk[k] += cnt_i[k * SQ + j]
    else:
        for r in range(n):
            st.nk[labels[r]] += 1.0
    if P and K_tot <= 32:
        for r in range(n):
            Z[labels[r] * n + r] = 1.0
        _dot(Z, False, K_tot, n, X0.p, X0.f, P, st.s1)
        _dot(Z, False, K_tot, n, X2.p, X2.f, P, st.s2)
        if masked:
            _dot(Z, False, K_tot, n, Mf.p, Mf.f, P, st.cnt)
        free(Z)
    elif P:
        for r in range(n):
            k = labels[r]
            for p in range(P):
                st.s1[k * P + p] += X0.p[r * X0.s0 + p * X0.s1]
                st.s2[k * P + p] += X2.p[r * X2.s0 + p * X2.s1]
                if masked:
                    st.cnt[k * P + p] += Mf.p[r * Mf.s0 + p * Mf.s1]
    if not masked:
        for k in range(K_tot):
            for p in range(P):
                st.cnt[k * P + p] = st.nk[k]
    for q in range(Q):
        for j in range(dat.offsets[q], dat.offsets[q] + dat.L[q]):
            for k in range(K_tot):
                st.counts[k * S + j] = cnt_i[k * SQ + j + q + 1]
    free(cnt_i)
    return 0


cdef void _put(const F2* dst, const double* src, Py_ssize_t K, Py_ssize_t w) noexcept nogil:
    """``dst[:K] = src[:K]`` (``src`` (K, w) row-major), element by element."""
    cdef Py_ssize_t k, j
    for k in range(K):
        for j in range(w):
            dst.p[k * dst.s0 + j * dst.s1] = src[k * w + j]


cdef void _put_b(const B2* dst, const npy_bool* src, Py_ssize_t K, Py_ssize_t w) noexcept nogil:
    cdef Py_ssize_t k, j
    for k in range(K):
        for j in range(w):
            dst.p[k * dst.s0 + j * dst.s1] = src[k * w + j]


cdef int _update(const Cur* nxt, Py_ssize_t K_tot, const Stats* st, const Dat* dat,
                 const FP* fp, const int64_t* ip, int64_t* remap) noexcept nogil:
    """``core.state_from_stats`` then ``core.select`` (fixed budget) into ``nxt``:
    the non-empty clusters' means and sds (``costs_jit.centres``), level counts and
    log shares ``log(count + alpha) - log(n_q + alpha L_q)`` (read from the caller's
    tables of numpy's logs), and the selection. Returns the clusters kept (``remap``:
    old cluster -> new, -1 for an empty one), or -1 when out of memory."""
    cdef Py_ssize_t P = dat.P, Q = dat.Q, S = dat.S, D = nxt.v.n1, K2 = 0, k, j, q, o, s
    cdef double nq, c
    cdef int64_t* keep = <int64_t*> _alloc(K_tot * sizeof(int64_t))
    cdef double* zeta = NULL
    cdef double* sigma = NULL
    cdef double* kc = NULL
    cdef double* le = NULL
    cdef npy_bool* v = NULL
    cdef int status = -1
    if keep == NULL:
        return -1
    for k in range(K_tot):
        remap[k] = K2 if st.nk[k] != 0 else -1
        if st.nk[k] != 0:
            keep[K2] = k
            K2 += 1
    zeta = <double*> _alloc(K2 * P * sizeof(double))
    sigma = <double*> _alloc(K2 * P * sizeof(double))
    kc = <double*> _alloc(K2 * S * sizeof(double))
    le = <double*> _alloc(K2 * S * sizeof(double))
    v = <npy_bool*> _alloc(K2 * D * sizeof(npy_bool))
    if zeta != NULL and sigma != NULL and kc != NULL and le != NULL and v != NULL:
        centres_c(st.s1, st.s2, st.cnt, st.nk, keep, K2, dat.col_mean, dat.col_sd, P,
                  fp.sigma_floor, zeta, sigma)
        for j in range(K2):
            for q in range(Q):
                o = dat.offsets[q]
                nq = st.counts[keep[j] * S + o]
                for s in range(o + 1, o + dat.L[q]):
                    nq += st.counts[keep[j] * S + s]
                nq = nq + 0.0
                for s in range(o, o + dat.L[q]):
                    c = st.counts[keep[j] * S + s]
                    kc[j * S + s] = c
                    le[j * S + s] = (dat.logc[<Py_ssize_t> c]
                                     - dat.logn.p[q * dat.logn.s0 + (<Py_ssize_t> nq) * dat.logn.s1])
        memset(v, 1 if ip[1] else 0, K2 * D * sizeof(npy_bool))
        status = 0
        if not ip[1]:
            status = select_fixed_c(sigma, K2, P, kc, le, dat.log_eta0, S, dat.offsets,
                                    dat.L, Q, ip[2], ip[3], v, D)
        if status == 0:
            _put(&nxt.zeta, zeta, K2, P)
            _put(&nxt.sigma, sigma, K2, P)
            _put(&nxt.log_eta, le, K2, S)
            _put(&nxt.counts, kc, K2, S)
            _put_b(&nxt.v, v, K2, D)
            status = <int> K2
    free(keep)
    free(zeta)
    free(sigma)
    free(kc)
    free(le)
    free(v)
    return status


cdef bint _equal(const F2* a, const F2* b, Py_ssize_t K) noexcept nogil:
    """The first ``K`` rows of ``a`` and ``b`` equal element by element (NaN unequal)."""
    cdef Py_ssize_t k, j
    for k in range(K):
        for j in range(a.n1):
            if not a.p[k * a.s0 + j * a.s1] == b.p[k * b.s0 + j * b.s1]:
                return False
    return True


cdef bint _equal_b(const B2* a, const B2* b, Py_ssize_t K) noexcept nogil:
    cdef Py_ssize_t k, j
    for k in range(K):
        for j in range(a.n1):
            if not (a.p[k * a.s0 + j * a.s1] != 0) == (b.p[k * b.s0 + j * b.s1] != 0):
                return False
    return True


cdef bint _same(const Cur* cur, const Cur* nxt, Py_ssize_t K_tot, Py_ssize_t K2) noexcept nogil:
    """``core._same_parameters`` of the pass's clusters and the updated ones."""
    if K_tot != K2:
        return False
    return (
        _equal_b(&cur.v, &nxt.v, K2)
        and _equal(&cur.zeta, &nxt.zeta, K2)
        and _equal(&cur.sigma, &nxt.sigma, K2)
        and _equal(&cur.log_eta, &nxt.log_eta, K2)
    )


cdef void _copy_rows(const F2* dst, const F2* src, Py_ssize_t K) noexcept nogil:
    """``dst[:K] = src[:K]`` (2-D), element by element."""
    cdef Py_ssize_t k, j
    for k in range(K):
        for j in range(src.n1):
            dst.p[k * dst.s0 + j * dst.s1] = src.p[k * src.s0 + j * src.s1]


cdef bint _short_c(const double* trace, Py_ssize_t ts0, Py_ssize_t ts1, int64_t it,
                   int64_t k, int64_t n) noexcept nogil:
    """:func:`_short` on a trace with strides (elements) ``ts0``, ``ts1``."""
    cdef int64_t t
    cdef double prev, x
    if it < n:
        return False
    for t in range(it - n, it):
        prev = trace[(t - 1) * ts0 + ts1] if t > 0 else 1.0
        x = trace[t * ts0 + ts1]
        if not (x < k and x <= prev):
            return False
    return True


def _short(const double[:, :] trace, int64_t it, int64_t k, int64_t n):
    """``stop_below=(k, n)``: the last ``n`` of the ``it`` passes each left fewer than
    ``k`` clusters and no more than the pass before (the first pass starts from one),
    read from the cluster counts in ``trace[:, 1]`` (callable from Python: the tests
    check it on constructed counts)."""
    if it > trace.shape[0] or trace.shape[1] < 2:
        raise ValueError("trace too short for it")
    return _short_c(&trace[0, 0], trace.strides[0] // 8, trace.strides[1] // 8, it, k, n)


# ------------------------------------------------------------------ the loop
cdef struct Loop:
    int64_t* labels
    double* cost
    double* tot_nk
    double* trace
    Py_ssize_t ts0, ts1, n_trace
    int64_t* ints
    const double* u
    Py_ssize_t n_u
    const int64_t* ip


cdef int _run(const Dat* dat, Cur* cur, Cur* nxt, Loop* lp, const FP* fp,
              Py_ssize_t n) noexcept nogil:
    """:func:`run_passes` once unpacked: :data:`DONE`, :data:`GROW`, :data:`NOMEM` or
    :data:`ZERODIV`."""
    cdef Py_ssize_t cap = cur.zeta.n0, D = cur.v.n1, nr = dat.X0.n0, r, k
    cdef const int64_t* ip = lp.ip
    cdef int64_t* ints = lp.ints
    cdef int64_t* labels = lp.labels
    cdef bint masked = ip[0] > 0, same
    cdef int64_t it = ints[_IT], K = ints[_K], over = ints[_OVER], n_cand, K_tot, K2
    cdef int64_t fv_used, nv, nv_used, used
    cdef double fv
    cdef Py_ssize_t n_open
    cdef int64_t* old = <int64_t*> _alloc(n * sizeof(int64_t))
    cdef int64_t* idx = <int64_t*> _alloc(nr * sizeof(int64_t))
    cdef double* dmin = <double*> _alloc(nr * sizeof(double))
    cdef double* Dc = NULL
    cdef double* Dn = NULL
    cdef int64_t* openers = NULL
    cdef int64_t* remap = NULL
    cdef Stats st
    cdef int status = NOMEM, err
    if old == NULL or idx == NULL or dmin == NULL:
        free(old)
        free(idx)
        free(dmin)
        return NOMEM
    while it < ip[4]:
        Dc = <double*> _alloc(nr * K * sizeof(double))
        if Dc == NULL:
            break
        err = _all_costs(cur, 0, K, dat, fp, masked, Dc)
        if err:
            status = err
            break
        row_min_c(Dc, nr, K, idx, dmin)
        free(Dc)
        Dc = NULL
        n_cand = 0
        for r in range(n):
            n_cand += dmin[r] > fp.threshold
        if K + n_cand > cap or (ip[1] == 0 and ints[7] + n_cand * D > lp.n_u):
            ints[_IT], ints[_K], ints[_OVER], ints[6] = it, K, over, K + n_cand
            status = _GROW
            break
        it += 1
        for r in range(n):
            old[r] = labels[r]
        K_tot = K
        n_open = 0
        if n_cand:
            openers = <int64_t*> _alloc(n_cand * sizeof(int64_t))
            if openers == NULL:
                break
            K_tot = _open(cur, K, dmin, nr, lp.u, ints, dat, fp, ip, openers, &n_open)
            if K_tot < 0:
                status = <int> K_tot
                break
        # the new clusters' costs (none opened: no rows, no call)
        if K_tot > K:
            Dn = <double*> _alloc(nr * (K_tot - K) * sizeof(double))
            if Dn == NULL:
                break
            err = _all_costs(cur, K, K_tot, dat, fp, masked, Dn)
            if err:
                status = err
                break
        _assign(K, K_tot, Dn, openers, idx, dmin, labels, lp.cost, n)
        free(Dn)
        free(openers)
        Dn, openers = NULL, NULL
        if _stats(labels, n, K_tot, dat, &st) != 0:
            break
        fv = 0.0
        used = 0
        nv_used = 0
        for k in range(K_tot):
            nv = _count(&cur.v, k)
            fv += st.nk[k] * nv
            if st.nk[k] != 0:
                used += 1
                nv_used += nv
        lp.trace[(it - 1) * lp.ts0] = pairwise_sum_c(lp.cost, n, 1) - fp.F_delta * fv
        lp.trace[(it - 1) * lp.ts0 + lp.ts1] = used
        lp.trace[(it - 1) * lp.ts0 + 2 * lp.ts1] = fp.F_delta * <double> nv_used
        remap = <int64_t*> _alloc(K_tot * sizeof(int64_t))
        K2 = _update(nxt, K_tot, &st, dat, fp, ip, remap) if remap != NULL else NOMEM
        if K2 < 0:
            _free_stats(&st)
            break
        for k in range(K_tot):
            lp.tot_nk[k] = st.nk[k]
        _free_stats(&st)
        same = it > 1 and K2 == K
        for r in range(n):
            same = same and remap[labels[r]] == old[r]
            labels[r] = remap[labels[r]]
        free(remap)
        remap = NULL
        ints[_KNOWN] = same and _same(cur, nxt, K_tot, K2)
        _put_rows_b(&cur.v, &nxt.v, K2)
        _copy_rows(&cur.zeta, &nxt.zeta, K2)
        _copy_rows(&cur.sigma, &nxt.sigma, K2)
        _copy_rows(&cur.log_eta, &nxt.log_eta, K2)
        _copy_rows(&cur.counts, &nxt.counts, K2)
        K = K2
        ints[6] = K_tot
        if same:
            ints[_CONV] = 1
            status = _DONE
            break
        if ip[5] >= 0 and K > ip[5]:
            ints[_ABORT] = 1
            status = _DONE
            break
        if ip[6] >= 0:
            over = over + 1 if K > ip[6] else 0
            if over >= ip[7]:
                ints[_ABORT] = 1
                status = _DONE
                break
        if ip[8] >= 0 and _short_c(lp.trace, lp.ts0, lp.ts1, it, ip[8], ip[9]):
            ints[_ABORT] = 1
            status = _DONE
            break
    else:
        status = _DONE
    if status == _DONE:
        ints[_IT], ints[_K], ints[_OVER] = it, K, over
    free(old)
    free(idx)
    free(dmin)
    free(Dc)
    free(Dn)
    free(openers)
    free(remap)
    return status


cdef void _put_rows_b(const B2* dst, const B2* src, Py_ssize_t K) noexcept nogil:
    """``dst[:K] = src[:K]`` (2-D bool), element by element."""
    cdef Py_ssize_t k, j
    for k in range(K):
        for j in range(src.n1):
            dst.p[k * dst.s0 + j * dst.s1] = src.p[k * src.s0 + j * src.s1]


def run_passes(dat, cur, nxt, labels, cost, tot_nk, trace, ints, u, fp, ip):
    """The passes of ``core._passes`` from the clusters in ``cur`` (``ints[K_]`` of
    them) and the labels of the rows (``labels``, used from the second pass on),
    starting after pass ``ints[IT]``. ``fp``: (threshold, F_delta, a0, b0,
    sigma_floor, sigma_override or -1); ``ip``: (cells missing, select_all, numeric
    and categorical features selected, max_iter, max_clusters or -1, stop_above's
    (k, n) or -1, stop_below's (k, n) or -1). On return ``cur`` holds the clusters,
    ``labels`` and ``cost`` the last pass's (its own costs, renumbered), ``tot_nk``
    its cluster sizes, ``trace[it]`` its objective terms, ``ints`` the loop's counters
    and flags. :data:`GROW` when a pass would open more clusters than the buffers hold
    (``ints[6]``: how many it could open; else the last pass's clusters). The passes
    run without the GIL."""
    cdef Dat d
    cdef Cur c, x
    cdef FP f
    cdef Loop lp
    cdef F2 tr
    cdef Py_ssize_t n, n_cost, n_nk, n_ints, n_ip
    cdef list keep = []
    cdef int status
    unpack_dat(dat, &d, keep)
    unpack_cur(cur, &c, True, keep)
    unpack_cur(nxt, &x, True, keep)
    unpack_fp(fp, &f)
    lp.labels = <int64_t*> unpack_1d(labels, b"i", 8, True, keep, "labels", &n)
    lp.cost = <double*> unpack_1d(cost, b"f", 8, True, keep, "cost", &n_cost)
    lp.tot_nk = <double*> unpack_1d(tot_nk, b"f", 8, True, keep, "tot_nk", &n_nk)
    unpack_f2(trace, &tr, True, False, keep, "trace")
    lp.trace, lp.ts0, lp.ts1, lp.n_trace = tr.p, tr.s0, tr.s1, tr.n0
    lp.ints = <int64_t*> unpack_1d(ints, b"i", 8, True, keep, "ints", &n_ints)
    lp.u = <double*> unpack_1d(u, b"f", 8, False, keep, "u", &lp.n_u)
    lp.ip = <int64_t*> unpack_1d(ip, b"i", 8, False, keep, "ip", &n_ip)
    if n_ints < 8 or n_ip < 10 or tr.n1 < 3 or tr.n0 < lp.ip[4] or n_cost < n:
        raise ValueError("run_passes: ints, ip, trace or cost too short")
    if d.X0.n0 != n or n_nk < c.zeta.n0 or d.n_g0 != n:
        raise ValueError("run_passes: the buffers do not match the block's rows")
    with nogil:
        status = _run(&d, &c, &x, &lp, &f, n)
    raise_status(status)
    return status
