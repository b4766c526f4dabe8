# cython: cdivision=True
"""Hartigan–Wong k-means (AS 136) compiled: the point-by-point stages, as the Fortran runs them.

Imported only inside :mod:`.hartigan_wong`. The stages are those of R's ``kmns.f``
(module docstring of :mod:`.hartigan_wong`), one point at a time: every distance is
summed sequentially over the features in double precision (``s += (x_ij - c_Lj)^2``,
left to right, no fused multiply-add: ``sparseclust/meson.build``), and the
comparisons are the Fortran's, in its order (``DC < R2/AN2(L)``, ``R2 < D(I)``, ``DD <
D(I)/AN2(L2)``). AS 136 caches ``D(I)`` and refreshes it only when the point's cluster
changed since; the cache is current whenever it is read, so it is evaluated afresh here
(the same number). The centres are kept as the Fortran keeps them: sums in data order
divided by the counts at the start, then ``(c n1 - x) / (n1 - 1)`` and ``(c n2 + x) /
(n2 + 1)`` at each transfer.

Several distances of one point are summed in one loop over the features (up to four
sums side by side, each still sequential): the additions of different clusters overlap,
where one sum at a time waits for each addition to finish.

The screen
----------
With many columns a sequential sum is slow (each addition waits for the previous one),
so when the data sit near the origin (``screen``: the caller passes the squared row
norms ``xq``) a point's distances are first taken as ``(|x|^2 + |c|^2) - 2 x.c``, with
the dot products summed in another order (sixteen lanes that vectorise, ``lanes.h``). Each such distance is within ``tol = tolf (|x|^2 + max |c|^2) + tola`` of the
sequential one (the bound of :class:`~.hartigan_wong._Screen`, valid in any order of
summation, covering the roundings of the comparisons too); a comparison closer than its
bound is made again on the sequential sums. So every decision is the sequential one.

Arrays are C-contiguous (the caller makes them so); the stages take pointers to their
rows. ``cdivision``: every integer operand is non-negative and every divisor non-zero
(a cluster left by a point has at least two members).
"""

from libc.math cimport INFINITY, fabs, sqrt
from libc.stdint cimport int64_t
from cython cimport floating

import numpy as np

__all__ = ["as136", "screen_distance", "wss_estimate"]


# ------------------------------------------------------------- sequential distances
cdef inline double _sqdist1(const double* xi, const double* ca, Py_ssize_t p) noexcept nogil:
    """Squared distance of the row ``xi`` to the centre ``ca``, summed left to right."""
    cdef double s = 0.0, d
    cdef Py_ssize_t j
    for j in range(p):
        d = xi[j] - ca[j]
        s += d * d
    return s


cdef inline void _sqdist2(
    const double* xi, const double* ca, const double* cb, Py_ssize_t p, double* s_out,
    double* t_out,
) noexcept nogil:
    """Squared distances of the row ``xi`` to centres ``ca`` and ``cb`` (as
    :func:`_sqdist1`)."""
    cdef double s = 0.0, t = 0.0, v, d, e
    cdef Py_ssize_t j
    for j in range(p):
        v = xi[j]
        d = v - ca[j]
        e = v - cb[j]
        s += d * d
        t += e * e
    s_out[0] = s
    t_out[0] = t


cdef inline void _sqdist_all(
    const double* xi, const double* c, Py_ssize_t k, Py_ssize_t p, double* out
) noexcept nogil:
    """Squared distances of the row ``xi`` to every centre into ``out`` (as
    :func:`_sqdist1`), three centres per pass over the features."""
    cdef Py_ssize_t a = 0, j
    cdef double s0, s1, s2, v, d0, d1, d2
    cdef const double* c0
    cdef const double* c1
    cdef const double* c2
    while a + 3 <= k:
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        c0 = c + a * p
        c1 = c0 + p
        c2 = c1 + p
        for j in range(p):
            v = xi[j]
            d0 = v - c0[j]
            d1 = v - c1[j]
            d2 = v - c2[j]
            s0 += d0 * d0
            s1 += d1 * d1
            s2 += d2 * d2
        out[a] = s0
        out[a + 1] = s1
        out[a + 2] = s2
        a += 3
    if k - a == 2:
        _sqdist2(xi, c + a * p, c + (a + 1) * p, p, &out[a], &out[a + 1])
    elif k - a == 1:
        out[a] = _sqdist1(xi, c + a * p, p)


# ----------------------------------------------------- the screens' products (any order)
# Their sums may be taken in any order (every use is checked against a bound that holds
# in any order): ``lanes.h`` takes them in sixteen lanes that vectorise, in an order
# fixed there (the same on every machine).
cdef extern from "lanes.h" nogil:
    double sc_dot_d(const double* u, const double* v, Py_ssize_t p)
    float sc_dot_f(const float* u, const float* v, Py_ssize_t p)
    void sc_dot_d2(const double* u, const double* v, const double* w, Py_ssize_t p,
                   double* s_out, double* t_out)
    void sc_dot_f2(const float* u, const float* v, const float* w, Py_ssize_t p,
                   float* s_out, float* t_out)
    double sc_sqdiff_d(const double* u, const double* v, Py_ssize_t p)
    double sc_sqdiff_acc_d(const double* u, const double* v, double* s, Py_ssize_t p)


cdef inline floating _dot(const floating* u, const floating* v, Py_ssize_t p) noexcept nogil:
    """``u . v`` in the data's precision (the screens' products, any order)."""
    if floating is float:
        return sc_dot_f(u, v, p)
    else:
        return sc_dot_d(u, v, p)


cdef inline void _dot2(
    const floating* xi, const floating* ca, const floating* cb, Py_ssize_t p,
    floating* s_out, floating* t_out,
) noexcept nogil:
    """``xi . ca`` and ``xi . cb`` in one pass over the row (as :func:`_dot`)."""
    if floating is float:
        sc_dot_f2(xi, ca, cb, p, s_out, t_out)
    else:
        sc_dot_d2(xi, ca, cb, p, s_out, t_out)


cdef inline double _rsq(const double* yi, const double* cya, Py_ssize_t m) noexcept nogil:
    """``|y_i - cy_a|^2`` in the row space, any order (the row screen's distances:
    differences, no cancellation of norms)."""
    return sc_sqdiff_d(yi, cya, m)


# ------------------------------------------------------------------------ the state
cdef struct Run:
    # the data (n, p); its single-precision copy (n32 rows: 0, no such screen)
    const double* x
    const float* x32
    Py_ssize_t n, p, k, n32
    # centres (k, p), their single-precision copy (k32 rows: k or 0), squared norms
    # (ncq: k or 0, no screen)
    double* c
    float* c32
    Py_ssize_t k32
    double* cq
    Py_ssize_t ncq
    # the screens' squared row norms (nxq: 0, none) and their bounds' parameters
    const double* xq
    Py_ssize_t nxq
    const double* prm
    const double* prm32
    # AS 136's arrays
    int64_t* nc
    double* an1
    double* an2
    int64_t* ic1
    int64_t* ic2
    unsigned char* itran
    int64_t* ncp
    int64_t* live
    double* d
    # the row screen: rows y (ny, my; ny = 0: none), centres cy (k, my), the bound's
    # (base, per transfer), the transfers made
    const double* y
    Py_ssize_t ny, my
    double* cy
    const double* rprm
    int64_t* rcount


cdef inline double _screen_tol(double xqi, const double* cq, Py_ssize_t k, const double* prm) noexcept nogil:
    """The bound of a screened distance of a point with squared norm ``xqi``:
    ``tolf (xqi + max cq) + tola + tolu (1 + sqrt(max xq) + sqrt(max cq))`` with
    ``prm = (tolf, tola, tolu, max xq)`` (``tolu``: float32's underflow, else 0)."""
    cdef double cqmax = cq[0]
    cdef Py_ssize_t L
    for L in range(1, k):
        if cq[L] > cqmax:  # Python's max(cqmax, cq[L])
            cqmax = cq[L]
    return prm[0] * (xqi + cqmax) + prm[1] + prm[2] * (1.0 + sqrt(prm[3]) + sqrt(cqmax))


cdef double _screened(
    const floating* x, Py_ssize_t i, const floating* c, Run* r, const double* prm
) noexcept nogil:
    """Screened distances of row ``i`` to every centre into ``r.d``; returns their
    bound."""
    cdef Py_ssize_t p = r.p, k = r.k, L
    cdef double xqi = r.xq[i]
    cdef const floating* xi = x + i * p
    cdef floating g, h
    for L in range(0, k - 1, 2):
        _dot2(xi, c + L * p, c + (L + 1) * p, p, &g, &h)
        r.d[L] = (xqi + r.cq[L]) - 2.0 * g
        r.d[L + 1] = (xqi + r.cq[L + 1]) - 2.0 * h
    if k % 2:
        r.d[k - 1] = (xqi + r.cq[k - 1]) - 2.0 * _dot(xi, c + (k - 1) * p, p)
    return _screen_tol(xqi, r.cq, k, prm)


cdef bint _two_screened(
    const double* d, Py_ssize_t k, double tol, Py_ssize_t* a_out, Py_ssize_t* b_out
) noexcept nogil:
    """Whether the screened distances ``d`` decide; (nearest, second nearest) into
    ``a_out``, ``b_out`` (the lower index on ties); not decided when the two, or the
    second and the third, are within twice the bound."""
    cdef Py_ssize_t a = 0, b, L
    for L in range(1, k):
        if d[L] < d[a]:
            a = L
    b = 1 if a == 0 else 0
    for L in range(b + 1, k):
        if L != a and d[L] < d[b]:
            b = L
    a_out[0] = a
    b_out[0] = b
    if d[b] - d[a] <= 2.0 * tol:
        return False
    for L in range(k):
        if L != a and L != b and d[L] - d[b] <= 2.0 * tol:
            return False
    return True


cdef inline double _rtol(const Run* r) noexcept nogil:
    """The row screen's bound after the transfers made so far."""
    return r.rprm[0] + r.rprm[1] * <double>r.rcount[0]


cdef bint _row_two(Run* r, Py_ssize_t i) noexcept nogil:
    """Point ``i``'s IC1/IC2 from row-space distances, when they decide (returns
    whether)."""
    cdef Py_ssize_t L, a, b
    cdef Py_ssize_t m = r.my
    for L in range(r.k):
        r.d[L] = _rsq(r.y + i * m, r.cy + L * m, m)
    if _two_screened(r.d, r.k, _rtol(r), &a, &b):
        r.ic1[i] = a
        r.ic2[i] = b
        return True
    return False


cdef bint _screened_two(
    const floating* x, Py_ssize_t i, const floating* c, Run* r, const double* prm
) noexcept nogil:
    """Point ``i``'s IC1/IC2 from screened distances, when they decide (returns
    whether)."""
    cdef Py_ssize_t a, b
    if _two_screened(r.d, r.k, _screened(x, i, c, r, prm), &a, &b):
        r.ic1[i] = a
        r.ic2[i] = b
        return True
    return False


cdef void _two_nearest(Run* r, const double* c, const float* c32) noexcept nogil:
    """IC1/IC2: nearest and second nearest centre of every point (AS 136's start: ties
    to the lower index); screened in single precision when the single copy is given,
    else or then in double precision when ``xq`` is given (``cq``: the centres' squared
    norms), on sequential sums where no screen decides."""
    cdef Py_ssize_t k = r.k, p = r.p, i, L, a, b
    cdef double dt1, dt2, db
    cdef double* d = r.d
    for i in range(r.n):
        if r.ny and _row_two(r, i):
            continue
        if r.n32 and _screened_two(r.x32, i, c32, r, r.prm32):
            continue
        if r.nxq and _screened_two(r.x, i, c, r, r.prm):
            continue
        _sqdist_all(r.x + i * p, c, k, p, d)
        a = 0
        b = 1
        dt1 = d[0]
        dt2 = d[1]
        if dt1 > dt2:
            a = 1
            b = 0
            dt1, dt2 = dt2, dt1
        for L in range(2, k):
            db = d[L]
            if db >= dt2:
                continue
            if db >= dt1:
                dt2 = db
                b = L
            else:
                dt2 = dt1
                b = a
                dt1 = db
                a = L
        r.ic1[i] = a
        r.ic2[i] = b


cdef void _transfer(Run* r, Py_ssize_t i, Py_ssize_t l1, Py_ssize_t l2) noexcept nogil:
    """Move point ``i`` from ``l1`` to ``l2``: the two centres (and their squared norms
    ``cq`` and single-precision copies ``c32`` when screening; the row-space centres,
    kept the same way, and the count of transfers when screening on rows), counts and
    factors."""
    cdef Py_ssize_t p = r.p, m = r.my, j
    cdef int64_t n1 = r.nc[l1] - 1
    cdef int64_t n2 = r.nc[l2] + 1
    cdef double al1 = <double>(n1 + 1)
    cdef double alw = <double>n1
    cdef double al2 = <double>(n2 - 1)
    cdef double alt = <double>n2
    cdef double v
    cdef const double* xi = r.x + i * p
    cdef double* c1 = r.c + l1 * p
    cdef double* c2 = r.c + l2 * p
    cdef const double* yi
    cdef double* cy1
    cdef double* cy2
    for j in range(p):
        v = xi[j]
        c1[j] = (c1[j] * al1 - v) / alw
        c2[j] = (c2[j] * al2 + v) / alt
    if r.ncq:
        r.cq[l1] = _dot(<const double*>c1, <const double*>c1, p)
        r.cq[l2] = _dot(<const double*>c2, <const double*>c2, p)
    if r.k32:
        for j in range(p):
            r.c32[l1 * p + j] = <float>c1[j]
            r.c32[l2 * p + j] = <float>c2[j]
    if r.ny:
        yi = r.y + i * m
        cy1 = r.cy + l1 * m
        cy2 = r.cy + l2 * m
        for j in range(m):
            v = yi[j]
            cy1[j] = (cy1[j] * al1 - v) / alw
            cy2[j] = (cy2[j] * al2 + v) / alt
        r.rcount[0] += 1
    r.nc[l1] = n1
    r.nc[l2] = n2
    r.an2[l1] = alw / al1
    r.an1[l1] = alw / (alw - 1.0) if alw > 1.0 else INFINITY
    r.an1[l2] = alt / al2
    r.an2[l2] = alt / (alt + 1.0)
    r.ic1[i] = l2
    r.ic2[i] = l1


cdef inline bint _candidate(
    Py_ssize_t L, Py_ssize_t l1, Py_ssize_t ll, int64_t step, const int64_t* live
) noexcept nogil:
    """Whether cluster ``L`` is a candidate ``L2`` of the optimal-transfer test besides
    ``IC2``: every other cluster when ``L1`` is live, else the live ones."""
    if L == l1 or L == ll:
        return False
    return step < live[l1] or step < live[L]


cdef bint _optra_exact(
    Run* r, Py_ssize_t i, Py_ssize_t l1, Py_ssize_t ll, int64_t step, Py_ssize_t* l2_out
) noexcept nogil:
    """Point ``i``'s optimal-transfer test on sequential sums, as the Fortran makes it:
    whether to transfer, ``L2`` into ``l2_out``."""
    cdef double* d = r.d
    cdef Py_ssize_t L, l2 = ll
    cdef double d_i, r2, rr
    _sqdist_all(r.x + i * r.p, r.c, r.k, r.p, d)
    d_i = d[l1] * r.an1[l1]
    r2 = d[ll] * r.an2[ll]
    for L in range(r.k):
        if not _candidate(L, l1, ll, step, r.live):
            continue
        rr = r2 / r.an2[L]
        if d[L] < rr:
            r2 = d[L] * r.an2[L]
            l2 = L
    l2_out[0] = l2
    return r2 < d_i


cdef int _optra_decide(
    const Run* r, Py_ssize_t l1, Py_ssize_t ll, int64_t step, double tol, Py_ssize_t* l2_out
) noexcept nogil:
    """The optimal-transfer test on screened distances ``r.d`` (of ``L1``, ``IC2`` and
    the candidates), each within ``tol`` of its sequential sum: -1 not decided (a
    comparison within its bound), else whether to transfer (``L2`` into ``l2_out``)."""
    cdef const double* d = r.d
    cdef double d_i = d[l1] * r.an1[l1]
    cdef double r2 = d[ll] * r.an2[ll]
    cdef double v
    cdef Py_ssize_t L, l2 = ll
    l2_out[0] = ll
    for L in range(r.k):
        if not _candidate(L, l1, ll, step, r.live):
            continue
        v = d[L] * r.an2[L]
        if fabs(v - r2) <= 2.0 * tol:
            return -1
        if v < r2:
            r2 = v
            l2 = L
    if fabs(r2 - d_i) <= 3.0 * tol:
        return -1
    l2_out[0] = l2
    return r2 < d_i


cdef int _optra_screened(
    const floating* x, Py_ssize_t i, const floating* c, Run* r, Py_ssize_t l1,
    Py_ssize_t ll, int64_t step, const double* prm, Py_ssize_t* l2_out,
) noexcept nogil:
    """The same test on screened distances (:func:`_optra_decide`)."""
    cdef Py_ssize_t p = r.p, L
    cdef double xqi = r.xq[i]
    cdef const floating* xi = x + i * p
    cdef floating g1, g2
    _dot2(xi, c + l1 * p, c + ll * p, p, &g1, &g2)
    r.d[l1] = (xqi + r.cq[l1]) - 2.0 * g1
    r.d[ll] = (xqi + r.cq[ll]) - 2.0 * g2
    for L in range(r.k):
        if _candidate(L, l1, ll, step, r.live):
            r.d[L] = (xqi + r.cq[L]) - 2.0 * _dot(xi, c + L * p, p)
    return _optra_decide(r, l1, ll, step, _screen_tol(xqi, r.cq, r.k, prm), l2_out)


cdef int _optra_rows(
    Run* r, Py_ssize_t i, Py_ssize_t l1, Py_ssize_t ll, int64_t step, Py_ssize_t* l2_out
) noexcept nogil:
    """The optimal-transfer test on row-space distances (:func:`_optra_decide`)."""
    cdef Py_ssize_t m = r.my, L
    for L in range(r.k):
        if L == l1 or L == ll or _candidate(L, l1, ll, step, r.live):
            r.d[L] = _rsq(r.y + i * m, r.cy + L * m, m)
    return _optra_decide(r, l1, ll, step, _rtol(r), l2_out)


cdef bint _optra_test(
    Run* r, Py_ssize_t i, Py_ssize_t l1, Py_ssize_t ll, int64_t step, Py_ssize_t* l2_out
) noexcept nogil:
    """Point ``i``'s optimal-transfer test: screened in single, then double precision
    (when given), on sequential sums where neither decides: whether to transfer
    (``L2`` into ``l2_out``). The row screen, when given, comes first."""
    cdef int sure
    if r.ny:
        sure = _optra_rows(r, i, l1, ll, step, l2_out)
        if sure >= 0:
            return sure
    if r.n32:
        sure = _optra_screened(r.x32, i, <const float*>r.c32, r, l1, ll, step, r.prm32, l2_out)
        if sure >= 0:
            return sure
    if r.nxq:
        sure = _optra_screened(r.x, i, <const double*>r.c, r, l1, ll, step, r.prm, l2_out)
        if sure >= 0:
            return sure
    return _optra_exact(r, i, l1, ll, step, l2_out)


cdef int64_t _optra(Run* r, int64_t indx) noexcept nogil:
    """The optimal-transfer stage; returns R's ``INDX`` (the stage stops when it is
    n)."""
    cdef Py_ssize_t n = r.n, k = r.k, i, L, l1, ll, l2
    cdef int64_t step
    for L in range(k):
        if r.itran[L]:
            r.live[L] = n + 1
    for i in range(n):
        indx += 1
        l1 = r.ic1[i]
        if r.nc[l1] != 1:
            step = i + 1
            ll = r.ic2[i]
            if _optra_test(r, i, l1, ll, step, &l2):
                indx = 0
                r.live[l1] = n + step
                r.live[l2] = n + step
                r.ncp[l1] = step
                r.ncp[l2] = step
                _transfer(r, i, l1, l2)
            else:
                r.ic2[i] = l2
        if indx == n:
            return indx
    for L in range(k):
        r.itran[L] = False
        r.live[L] -= n
    return indx


cdef int _qtran_screened(
    const floating* x, Py_ssize_t i, const floating* c, const Run* r, Py_ssize_t l1,
    Py_ssize_t l2, const double* prm,
) noexcept nogil:
    """Point ``i``'s quick-transfer test ``d(i, L2) < D(I) / AN2(L2)`` on screened
    distances: -1 not decided, else whether to transfer."""
    cdef Py_ssize_t p = r.p
    cdef double xqi = r.xq[i]
    cdef floating ga, gd
    cdef double da, dd, r2
    _dot2(x + i * p, c + l1 * p, c + l2 * p, p, &ga, &gd)
    da = (xqi + r.cq[l1]) - 2.0 * ga
    dd = (xqi + r.cq[l2]) - 2.0 * gd
    r2 = da * r.an1[l1] / r.an2[l2]
    if fabs(dd - r2) > 5.0 * _screen_tol(xqi, r.cq, r.k, prm):
        return dd < r2
    return -1


cdef bint _qtran_test(Run* r, Py_ssize_t i, Py_ssize_t l1, Py_ssize_t l2) noexcept nogil:
    """The quick-transfer test: screened on rows, then in single, then double precision
    (when given), on sequential sums where none decides."""
    cdef Py_ssize_t m = r.my
    cdef double dd, r2, da
    cdef int sure
    if r.ny:
        dd = _rsq(r.y + i * m, r.cy + l2 * m, m)
        r2 = _rsq(r.y + i * m, r.cy + l1 * m, m) * r.an1[l1] / r.an2[l2]
        if fabs(dd - r2) > 5.0 * _rtol(r):
            return dd < r2
    if r.n32:
        sure = _qtran_screened(r.x32, i, <const float*>r.c32, r, l1, l2, r.prm32)
        if sure >= 0:
            return sure
    if r.nxq:
        sure = _qtran_screened(r.x, i, <const double*>r.c, r, l1, l2, r.prm)
        if sure >= 0:
            return sure
    _sqdist2(r.x + i * r.p, r.c + l1 * r.p, r.c + l2 * r.p, r.p, &da, &dd)
    r2 = (da * r.an1[l1]) / r.an2[l2]
    return dd < r2


cdef int _qtran(Run* r, int64_t imaxqtr, bint* moved_out) noexcept nogil:
    """The quick-transfer stage: whether it finished within R's step cap; whether some
    point moved into ``moved_out``."""
    cdef Py_ssize_t n = r.n, i, l1, l2
    cdef int64_t icoun = 0, istep = 0
    moved_out[0] = False
    while True:
        for i in range(n):
            icoun += 1
            istep += 1
            if istep >= imaxqtr:
                return False
            l1 = r.ic1[i]
            l2 = r.ic2[i]
            # tested while one of its two clusters changed within the last n steps
            if r.nc[l1] != 1 and (istep < r.ncp[l1] or istep < r.ncp[l2]):
                if _qtran_test(r, i, l1, l2):
                    icoun = 0
                    moved_out[0] = True
                    r.itran[l1] = True
                    r.itran[l2] = True
                    r.ncp[l1] = istep + n
                    r.ncp[l2] = istep + n
                    _transfer(r, i, l1, l2)
            if icoun == n:
                return True


cdef inline void _copy_rows(const double* c, float* c32, Py_ssize_t rows, Py_ssize_t p) noexcept nogil:
    """The first ``rows`` rows of ``c`` into ``c32``, rounded to float32."""
    cdef Py_ssize_t j
    for j in range(rows * p):
        c32[j] = <float>c[j]


cdef void _row_means(Run* r) noexcept nogil:
    """The row-space centres as the means of the start's assignment (sums in data
    order, as the data-space centres)."""
    cdef Py_ssize_t m = r.my, i, j, L
    cdef double aa
    if not r.ny:
        return
    for j in range(r.k * m):
        r.cy[j] = 0.0
    for i in range(r.ny):
        L = r.ic1[i]
        for j in range(m):
            r.cy[L * m + j] += r.y[i * m + j]
    for L in range(r.k):
        aa = <double>r.nc[L]
        for j in range(m):
            r.cy[L * m + j] /= aa


cdef void _as136(
    Run* r, const double* c0, Py_ssize_t max_iter, int64_t imaxqtr, int64_t* it_out,
    int64_t* ifault_out,
) noexcept nogil:
    """AS 136 on the state ``r`` from the centres ``c0``: R's ``iter`` and ``ifault``
    into ``it_out`` and ``ifault_out``."""
    cdef Py_ssize_t n = r.n, p = r.p, k = r.k, i, j, L, it
    cdef double aa
    cdef int64_t indx = 0
    cdef bint done, moved
    for L in range(r.ncq):
        r.cq[L] = _dot(c0 + L * p, c0 + L * p, p)
    _copy_rows(c0, r.c32, r.k32, p)
    _two_nearest(r, c0, r.c32)
    for i in range(n):
        r.nc[r.ic1[i]] += 1
    for L in range(k):
        if r.nc[L] == 0:
            it_out[0] = 0
            ifault_out[0] = -1
            return
    for i in range(n):  # sums in data order, then the means
        L = r.ic1[i]
        for j in range(p):
            r.c[L * p + j] += r.x[i * p + j]
    for L in range(k):
        aa = <double>r.nc[L]
        for j in range(p):
            r.c[L * p + j] /= aa
        r.an2[L] = aa / (aa + 1.0)
        r.an1[L] = aa / (aa - 1.0) if r.nc[L] > 1 else INFINITY
    for L in range(r.ncq):
        r.cq[L] = _dot(<const double*>(r.c + L * p), <const double*>(r.c + L * p), p)
    _copy_rows(r.c, r.c32, r.k32, p)
    _row_means(r)
    for it in range(1, max_iter + 1):
        indx = _optra(r, indx)
        if indx == n:  # n optimal-transfer steps without a transfer
            it_out[0] = it
            ifault_out[0] = 0
            return
        done = _qtran(r, imaxqtr, &moved)
        if moved:
            indx = 0
        if not done:
            it_out[0] = it
            ifault_out[0] = 4
            return
        if k == 2:  # no need to re-enter the optimal-transfer stage
            it_out[0] = it
            ifault_out[0] = 0
            return
        for L in range(k):
            r.ncp[L] = 0
    it_out[0] = max_iter + 1
    ifault_out[0] = 2


def as136(
    const double[:, ::1] x,
    const float[:, ::1] x32,
    const double[:, ::1] c0,
    Py_ssize_t max_iter,
    int64_t imaxqtr,
    const double[::1] xq,
    const double[::1] prm,
    const double[::1] prm32,
    tuple work,
    tuple rs,
):
    """AS 136 from the centres ``c0`` (k >= 2, k < n): (labels, the incrementally kept
    centres, counts, R's ``iter``, ``ifault``); ``ifault`` -1 is an empty cluster after
    the start (the counts say which). Screens: ``xq`` (the squared row norms, or empty:
    none) with the bound's parameters ``prm`` (see :func:`_screen_tol`), and ``x32``
    (the data in single precision, or empty: none) with ``prm32``. ``work``: the
    arrays, made by the caller, as :func:`~.hartigan_wong._as136_work` makes them
    (C-contiguous). ``rs``: the row screen (rows ``y`` with ``y y' = x x'`` up to a
    constant, the start centres' images ``cy`` (overwritten), the bound's ``(base, per
    transfer)`` and a transfer count), or empty arrays: none (see
    :class:`~.hartigan_wong.RowScreen`). The GIL is released while it runs."""
    cdef Py_ssize_t n = x.shape[0], p = x.shape[1], k = c0.shape[0]
    ic1_a, ic2_a, d_a, cq_a, c32_a, nc_a, c_a, an1_a, an2_a, itran_a, ncp_a, live_a = work
    cdef int64_t[::1] ic1 = ic1_a
    cdef int64_t[::1] ic2 = ic2_a
    cdef double[::1] d = d_a
    cdef double[::1] cq = cq_a
    cdef float[:, ::1] c32 = c32_a
    cdef int64_t[::1] nc = nc_a
    cdef double[:, ::1] c = c_a
    cdef double[::1] an1 = an1_a
    cdef double[::1] an2 = an2_a
    cdef unsigned char[::1] itran = itran_a.view(np.uint8)
    cdef int64_t[::1] ncp = ncp_a
    cdef int64_t[::1] live = live_a
    cdef const double[:, ::1] y = rs[0]
    cdef double[:, ::1] cy = rs[1]
    cdef const double[::1] rprm = rs[2]
    cdef int64_t[::1] rcount = rs[3]
    cdef Run r
    cdef int64_t it, ifault
    r.x = &x[0, 0]
    r.x32 = &x32[0, 0]
    r.n = n
    r.p = p
    r.k = k
    r.n32 = x32.shape[0]
    r.c = &c[0, 0]
    r.c32 = &c32[0, 0]
    r.k32 = c32.shape[0]
    r.cq = &cq[0]
    r.ncq = cq.shape[0]
    r.xq = &xq[0]
    r.nxq = xq.shape[0]
    r.prm = &prm[0]
    r.prm32 = &prm32[0]
    r.nc = &nc[0]
    r.an1 = &an1[0]
    r.an2 = &an2[0]
    r.ic1 = &ic1[0]
    r.ic2 = &ic2[0]
    r.itran = &itran[0]
    r.ncp = &ncp[0]
    r.live = &live[0]
    r.d = &d[0]
    r.y = &y[0, 0]
    r.ny = y.shape[0]
    r.my = y.shape[1]
    r.cy = &cy[0, 0]
    r.rprm = &rprm[0]
    r.rcount = &rcount[0]
    with nogil:
        _as136(&r, &c0[0, 0], max_iter, imaxqtr, &it, &ifault)
    return ic1_a, c_a, nc_a, it, ifault


def screen_distance(
    const floating[:, ::1] x,
    Py_ssize_t i,
    const floating[:, ::1] c,
    Py_ssize_t a,
    const double[::1] xq,
    const double[::1] cq,
    const double[::1] prm,
):
    """The screened distance of row ``i`` to centre ``a`` and its bound, as the stages
    compute them (from Python: the tests check the bound against exact sums).

    ``(xq[i] + cq[a]) - 2 x_i.c_a`` and :func:`_screen_tol` of ``xq[i]``.
    """
    cdef Py_ssize_t p = x.shape[1]
    cdef double dist = (xq[i] + cq[a]) - 2.0 * _dot(&x[i, 0], &c[a, 0], p)
    return dist, _screen_tol(xq[i], &cq[0], cq.shape[0], &prm[0])


def wss_estimate(
    const double[:, ::1] x,
    const int64_t[::1] labels,
    const double[:, ::1] ref,
    double[:, ::1] esum,
    double[::1] esq,
    double[::1] nc,
):
    """``(W, E)``: the total within sum of squares of the partition ``labels`` computed
    as :func:`~.hartigan_wong._final` computes it (deviations ``e`` from the centres
    ``ref``: ``sum_L max(sum |e|^2 - n_L |mean e|^2, 0)``), the squares of a row summed
    in the lanes of ``lanes.h`` (its error bound holds in any order), and ``E = sum |e|^2``, which
    that bound scales with. ``esum`` (k, p), ``esq`` and ``nc`` (k): zeros made by the
    caller, for the per-cluster sums of ``e`` and ``|e|^2`` and the counts. The GIL is
    released while it runs."""
    cdef Py_ssize_t n = x.shape[0], p = x.shape[1], k = ref.shape[0], i, j, L
    cdef double tot = 0.0, etot = 0.0, m, m2, w
    with nogil:
        for i in range(n):
            L = labels[i]
            nc[L] += 1.0
            esq[L] += sc_sqdiff_acc_d(&x[i, 0], &ref[L, 0], &esum[L, 0], p)
        for L in range(k):
            if nc[L] > 0.0:
                m2 = 0.0
                for j in range(p):
                    m = esum[L, j] / nc[L]
                    m2 += m * m
                w = esq[L] - nc[L] * m2
                tot += 0.0 if 0.0 > w else w  # Python's max(w, 0.0)
            etot += esq[L]
    return tot, etot
