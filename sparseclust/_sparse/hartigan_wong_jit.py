"""Hartigan–Wong k-means (AS 136) compiled: the point-by-point stages, as the Fortran runs them.

Imported only inside :mod:`.hartigan_wong` (``import sparseclust`` loads no numba). The
stages are those of R's ``kmns.f`` (module docstring of :mod:`.hartigan_wong`), one point
at a time: every distance is summed sequentially over the features in double precision
(``s += (x_ij - c_Lj)^2``, left to right, no fused multiply-add: numba's ``fastmath``
stays off), and the comparisons are the Fortran's, in its order (``DC < R2/AN2(L)``,
``R2 < D(I)``, ``DD < D(I)/AN2(L2)``). AS 136 caches ``D(I)`` and refreshes it only when
the point's cluster changed since; the cache is current whenever it is read, so it is
evaluated afresh here (the same number). The centres are kept as the Fortran keeps
them: sums in data order divided by the counts at the start, then
``(c n1 - x) / (n1 - 1)`` and ``(c n2 + x) / (n2 + 1)`` at each transfer.

Several distances of one point are summed in one loop over the features (up to four
sums side by side, each still sequential): the additions of different clusters overlap,
where one sum at a time waits for each addition to finish.

The screen
----------
With many columns a sequential sum is slow (each addition waits for the previous one),
so when the data sit near the origin (``screen``: the caller passes the squared row
norms ``xq``) a point's distances are first taken as ``(|x|^2 + |c|^2) - 2 x.c``, with
the dot products summed in any order (vectorised: ``kernel(reassoc=True)``). Each such
distance is within ``tol = tolf (|x|^2 + max |c|^2) + tola`` of the sequential one (the
bound of :class:`~.hartigan_wong._Screen`, valid in any order of summation, covering the
roundings of the comparisons too); a comparison closer than its bound is made again on
the sequential sums. So every decision is the sequential one.
"""

from __future__ import annotations

import numpy as np

from .._engine.jit import kernel

__all__ = ["as136", "screen_distance", "wss_estimate"]


@kernel(internal=True, refcount=False)
def _sqdist1(x, i, c, a):
    """Squared distance of row ``i`` of ``x`` to centre ``a``, summed left to right."""
    s = 0.0
    for j in range(x.shape[1]):
        d = x[i, j] - c[a, j]
        s += d * d
    return s


@kernel(internal=True, refcount=False)
def _sqdist2(x, i, c, a, b):
    """Squared distances of row ``i`` to centres ``a`` and ``b`` (as :func:`_sqdist1`)."""
    s = 0.0
    t = 0.0
    for j in range(x.shape[1]):
        v = x[i, j]
        d = v - c[a, j]
        e = v - c[b, j]
        s += d * d
        t += e * e
    return s, t


@kernel(internal=True, refcount=False)
def _sqdist_all(x, i, c, out):
    """Squared distances of row ``i`` to every centre into ``out`` (as :func:`_sqdist1`),
    three centres per pass over the features."""
    k = c.shape[0]
    a = 0
    while a + 3 <= k:
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        for j in range(x.shape[1]):
            v = x[i, j]
            d0 = v - c[a, j]
            d1 = v - c[a + 1, j]
            d2 = v - c[a + 2, j]
            s0 += d0 * d0
            s1 += d1 * d1
            s2 += d2 * d2
        out[a] = s0
        out[a + 1] = s1
        out[a + 2] = s2
        a += 3
    if k - a == 2:
        out[a], out[a + 1] = _sqdist2(x, i, c, a, a + 1)
    elif k - a == 1:
        out[a] = _sqdist1(x, i, c, a)


@kernel(reassoc=True, internal=True, refcount=False)
def _dot(x, i, c, a):
    """``x_i . c_a``, summed in any order and in the data's precision (the screens'
    products)."""
    s = x.dtype.type(0)
    for j in range(x.shape[1]):
        s += x[i, j] * c[a, j]
    return s


@kernel(reassoc=True, internal=True, refcount=False)
def _dot2(x, i, c, a, b):
    """``x_i . c_a`` and ``x_i . c_b`` in one pass over the row (as :func:`_dot`)."""
    s = x.dtype.type(0)
    t = x.dtype.type(0)
    for j in range(x.shape[1]):
        v = x[i, j]
        s += v * c[a, j]
        t += v * c[b, j]
    return s, t


@kernel(internal=True, refcount=False)
def _screen_tol(xqi, cq, prm):
    """The bound of a screened distance of a point with squared norm ``xqi``:
    ``tolf (xqi + max cq) + tola + tolu (1 + sqrt(max xq) + sqrt(max cq))`` with
    ``prm = (tolf, tola, tolu, max xq)`` (``tolu``: float32's underflow, else 0)."""
    cqmax = cq[0]
    for L in range(1, cq.shape[0]):
        cqmax = max(cqmax, cq[L])
    return prm[0] * (xqi + cqmax) + prm[1] + prm[2] * (1.0 + np.sqrt(prm[3]) + np.sqrt(cqmax))


@kernel
def screen_distance(x, i, c, a, xq, cq, prm):
    """The screened distance of row ``i`` to centre ``a`` and its bound, as the stages
    compute them (from Python: the tests check the bound against exact sums).

    ``(xq[i] + cq[a]) - 2 x_i.c_a`` and :func:`_screen_tol` of ``xq[i]``.
    """
    return (xq[i] + cq[a]) - 2.0 * _dot(x, i, c, a), _screen_tol(xq[i], cq, prm)


@kernel(internal=True, refcount=False)
def _screened(x, i, c, d, xq, cq, prm):
    """Screened distances of row ``i`` to every centre into ``d``; returns their bound."""
    xqi = xq[i]
    k = c.shape[0]
    for L in range(0, k - 1, 2):
        g, h = _dot2(x, i, c, L, L + 1)
        d[L] = (xqi + cq[L]) - 2.0 * g
        d[L + 1] = (xqi + cq[L + 1]) - 2.0 * h
    if k % 2:
        d[k - 1] = (xqi + cq[k - 1]) - 2.0 * _dot(x, i, c, k - 1)
    return _screen_tol(xqi, cq, prm)


@kernel(internal=True, refcount=False)
def _two_screened(d, tol):
    """(decided, nearest, second nearest) from screened distances ``d`` (the lower index
    on ties); not decided when the two, or the second and the third, are within twice
    the bound."""
    k = d.shape[0]
    a = 0
    for L in range(1, k):
        if d[L] < d[a]:
            a = L
    b = 1 if a == 0 else 0
    for L in range(b + 1, k):
        if L != a and d[L] < d[b]:
            b = L
    if d[b] - d[a] <= 2.0 * tol:
        return False, a, b
    for L in range(k):
        if L != a and L != b and d[L] - d[b] <= 2.0 * tol:
            return False, a, b
    return True, a, b


@kernel(reassoc=True, internal=True, refcount=False)
def _rsq(y, i, cy, a):
    """``|y_i - cy_a|^2`` in the row space, summed in any order (the row screen's
    distances: differences, no cancellation of norms)."""
    s = 0.0
    for j in range(y.shape[1]):
        d = y[i, j] - cy[a, j]
        s += d * d
    return s


@kernel(internal=True, refcount=False)
def _rtol(rs):
    """The row screen's bound after the transfers made so far: ``rs`` is (rows, their
    centres, (base, per transfer), transfers)."""
    return rs[2][0] + rs[2][1] * rs[3][0]


@kernel(internal=True, refcount=False)
def _row_two(rs, i, d, ic1, ic2):
    """Point ``i``'s IC1/IC2 from row-space distances, when they decide (returns whether)."""
    y, cy = rs[0], rs[1]
    for L in range(cy.shape[0]):
        d[L] = _rsq(y, i, cy, L)
    sure, a, b = _two_screened(d, _rtol(rs))
    if sure:
        ic1[i] = a
        ic2[i] = b
    return sure


@kernel(internal=True, refcount=False)
def _screened_two(x, i, c, d, xq, cq, prm, ic1, ic2):
    """Point ``i``'s IC1/IC2 from screened distances, when they decide (returns whether)."""
    sure, a, b = _two_screened(d, _screened(x, i, c, d, xq, cq, prm))
    if sure:
        ic1[i] = a
        ic2[i] = b
    return sure


@kernel(internal=True, refcount=False)
def _two_nearest(x, x32, c, c32, ic1, ic2, d, xq, cq, prm, prm32, rs):
    """IC1/IC2: nearest and second nearest centre of every point (AS 136's start: ties
    to the lower index); screened in single precision when ``x32`` is given, else or
    then in double precision when ``xq`` is given (``cq``: the centres' squared norms),
    on sequential sums where no screen decides."""
    k = c.shape[0]
    for i in range(x.shape[0]):
        if rs[0].shape[0] and _row_two(rs, i, d, ic1, ic2):
            continue
        if x32.shape[0] and _screened_two(x32, i, c32, d, xq, cq, prm32, ic1, ic2):
            continue
        if xq.shape[0] and _screened_two(x, i, c, d, xq, cq, prm, ic1, ic2):
            continue
        _sqdist_all(x, i, c, d)
        a, b = 0, 1
        dt1, dt2 = d[0], d[1]
        if dt1 > dt2:
            a, b = 1, 0
            dt1, dt2 = dt2, dt1
        for L in range(2, k):
            db = d[L]
            if db >= dt2:
                continue
            if db >= dt1:
                dt2, b = db, L
            else:
                dt2, b = dt1, a
                dt1, a = db, L
        ic1[i] = a
        ic2[i] = b


@kernel(internal=True, refcount=False)
def _transfer(x, i, l1, l2, c, c32, nc, an1, an2, ic1, ic2, cq, rs):
    """Move point ``i`` from ``l1`` to ``l2``: the two centres (and their squared norms
    ``cq`` and single-precision copies ``c32`` when screening; the row-space centres,
    kept the same way, and the count of transfers of ``rs`` when screening on rows),
    counts and factors."""
    n1 = nc[l1] - 1
    n2 = nc[l2] + 1
    al1 = float(n1 + 1)
    alw = float(n1)
    al2 = float(n2 - 1)
    alt = float(n2)
    for j in range(x.shape[1]):
        v = x[i, j]
        c[l1, j] = (c[l1, j] * al1 - v) / alw
        c[l2, j] = (c[l2, j] * al2 + v) / alt
    if cq.shape[0]:
        cq[l1] = _dot(c, l1, c, l1)
        cq[l2] = _dot(c, l2, c, l2)
    if c32.shape[0]:
        for j in range(x.shape[1]):
            c32[l1, j] = c[l1, j]
            c32[l2, j] = c[l2, j]
    y, cy = rs[0], rs[1]
    if y.shape[0]:
        for j in range(y.shape[1]):
            v = y[i, j]
            cy[l1, j] = (cy[l1, j] * al1 - v) / alw
            cy[l2, j] = (cy[l2, j] * al2 + v) / alt
        rs[3][0] += 1
    nc[l1] = n1
    nc[l2] = n2
    an2[l1] = alw / al1
    an1[l1] = alw / (alw - 1.0) if alw > 1.0 else np.inf
    an1[l2] = alt / al2
    an2[l2] = alt / (alt + 1.0)
    ic1[i] = l2
    ic2[i] = l1


@kernel(internal=True, refcount=False)
def _candidate(L, l1, ll, step, live):
    """Whether cluster ``L`` is a candidate ``L2`` of the optimal-transfer test besides
    ``IC2``: every other cluster when ``L1`` is live, else the live ones."""
    if L == l1 or L == ll:
        return False
    return step < live[l1] or step < live[L]


@kernel(internal=True, refcount=False)
def _optra_exact(x, i, c, l1, ll, an1, an2, live, step, d):
    """Point ``i``'s optimal-transfer test on sequential sums, as the Fortran makes it:
    (transfer, ``L2``)."""
    _sqdist_all(x, i, c, d)
    d_i = d[l1] * an1[l1]
    r2 = d[ll] * an2[ll]
    l2 = ll
    for L in range(c.shape[0]):
        if not _candidate(L, l1, ll, step, live):
            continue
        rr = r2 / an2[L]
        if d[L] < rr:
            r2 = d[L] * an2[L]
            l2 = L
    return r2 < d_i, l2


@kernel(internal=True, refcount=False)
def _optra_decide(d, l1, ll, an1, an2, live, step, tol):
    """The optimal-transfer test on screened distances ``d`` (of ``L1``, ``IC2`` and the
    candidates), each within ``tol`` of its sequential sum: (decided, transfer, ``L2``);
    not decided when a comparison is within its bound."""
    d_i = d[l1] * an1[l1]
    r2 = d[ll] * an2[ll]
    l2 = ll
    for L in range(d.shape[0]):
        if not _candidate(L, l1, ll, step, live):
            continue
        v = d[L] * an2[L]
        if abs(v - r2) <= 2.0 * tol:
            return False, False, ll
        if v < r2:
            r2 = v
            l2 = L
    if abs(r2 - d_i) <= 3.0 * tol:
        return False, False, ll
    return True, r2 < d_i, l2


@kernel(internal=True, refcount=False)
def _optra_screened(x, i, c, l1, ll, an1, an2, live, step, d, xq, cq, prm):
    """The same test on screened distances (:func:`_optra_decide`)."""
    xqi = xq[i]
    g1, g2 = _dot2(x, i, c, l1, ll)
    d[l1] = (xqi + cq[l1]) - 2.0 * g1
    d[ll] = (xqi + cq[ll]) - 2.0 * g2
    for L in range(c.shape[0]):
        if _candidate(L, l1, ll, step, live):
            d[L] = (xqi + cq[L]) - 2.0 * _dot(x, i, c, L)
    return _optra_decide(d, l1, ll, an1, an2, live, step, _screen_tol(xqi, cq, prm))


@kernel(internal=True, refcount=False)
def _optra_rows(rs, i, l1, ll, an1, an2, live, step, d):
    """The optimal-transfer test on row-space distances (:func:`_optra_decide`)."""
    y, cy = rs[0], rs[1]
    for L in range(cy.shape[0]):
        if L == l1 or L == ll or _candidate(L, l1, ll, step, live):
            d[L] = _rsq(y, i, cy, L)
    return _optra_decide(d, l1, ll, an1, an2, live, step, _rtol(rs))


@kernel(internal=True, refcount=False)
def _optra_test(x, x32, i, c, c32, l1, ll, an1, an2, live, step, d, xq, cq, prm, prm32, rs):
    """Point ``i``'s optimal-transfer test: screened in single, then double precision
    (when given), on sequential sums where neither decides: (transfer, ``L2``). The row
    screen ``rs``, when given, comes first."""
    if rs[0].shape[0]:
        sure, move, l2 = _optra_rows(rs, i, l1, ll, an1, an2, live, step, d)
        if sure:
            return move, l2
    if x32.shape[0]:
        sure, move, l2 = _optra_screened(
            x32, i, c32, l1, ll, an1, an2, live, step, d, xq, cq, prm32
        )
        if sure:
            return move, l2
    if xq.shape[0]:
        sure, move, l2 = _optra_screened(x, i, c, l1, ll, an1, an2, live, step, d, xq, cq, prm)
        if sure:
            return move, l2
    return _optra_exact(x, i, c, l1, ll, an1, an2, live, step, d)


@kernel(internal=True, refcount=False)
def _optra(x, x32, c, c32, st, itran, ncp, live, indx, d, xq, cq, prm, prm32, rs):
    """The optimal-transfer stage; returns R's ``INDX`` (the stage stops when it is n).
    ``st``: (nc, an1, an2, ic1, ic2)."""
    nc, an1, an2, ic1, ic2 = st
    n = x.shape[0]
    k = c.shape[0]
    for L in range(k):
        if itran[L]:
            live[L] = n + 1
    for i in range(n):
        indx += 1
        l1 = ic1[i]
        if nc[l1] != 1:
            step = i + 1
            ll = ic2[i]
            move, l2 = _optra_test(
                x, x32, i, c, c32, l1, ll, an1, an2, live, step, d, xq, cq, prm, prm32, rs
            )
            if move:
                indx = 0
                live[l1] = n + step
                live[l2] = n + step
                ncp[l1] = step
                ncp[l2] = step
                _transfer(x, i, l1, l2, c, c32, nc, an1, an2, ic1, ic2, cq, rs)
            else:
                ic2[i] = l2
        if indx == n:
            return indx
    for L in range(k):
        itran[L] = False
        live[L] -= n
    return indx


@kernel(internal=True, refcount=False)
def _qtran_screened(x, i, c, l1, l2, an1, an2, xq, cq, prm):
    """Point ``i``'s quick-transfer test ``d(i, L2) < D(I) / AN2(L2)`` on screened
    distances: (decided, transfer)."""
    xqi = xq[i]
    ga, gd = _dot2(x, i, c, l1, l2)
    da = (xqi + cq[l1]) - 2.0 * ga
    dd = (xqi + cq[l2]) - 2.0 * gd
    r2 = da * an1[l1] / an2[l2]
    if abs(dd - r2) > 5.0 * _screen_tol(xqi, cq, prm):
        return True, dd < r2
    return False, False


@kernel(internal=True, refcount=False)
def _qtran_test(x, x32, i, c, c32, l1, l2, an1, an2, xq, cq, prm, prm32, rs):
    """The quick-transfer test: screened on rows, then in single, then double precision
    (when given), on sequential sums where none decides."""
    if rs[0].shape[0]:
        y, cy = rs[0], rs[1]
        dd = _rsq(y, i, cy, l2)
        r2 = _rsq(y, i, cy, l1) * an1[l1] / an2[l2]
        if abs(dd - r2) > 5.0 * _rtol(rs):
            return dd < r2
    if x32.shape[0]:
        sure, move = _qtran_screened(x32, i, c32, l1, l2, an1, an2, xq, cq, prm32)
        if sure:
            return move
    if xq.shape[0]:
        sure, move = _qtran_screened(x, i, c, l1, l2, an1, an2, xq, cq, prm)
        if sure:
            return move
    da, dd = _sqdist2(x, i, c, l1, l2)
    r2 = (da * an1[l1]) / an2[l2]
    return dd < r2


@kernel(internal=True, refcount=False)
def _qtran(x, x32, c, c32, st, itran, ncp, imaxqtr, xq, cq, prm, prm32, rs):
    """The quick-transfer stage: (finished within R's step cap, some point moved)."""
    nc, an1, an2, ic1, ic2 = st
    n = x.shape[0]
    icoun = 0
    istep = 0
    moved = False
    while True:
        for i in range(n):
            icoun += 1
            istep += 1
            if istep >= imaxqtr:
                return False, moved
            l1 = ic1[i]
            l2 = ic2[i]
            # tested while one of its two clusters changed within the last n steps
            if nc[l1] != 1 and (istep < ncp[l1] or istep < ncp[l2]):
                if _qtran_test(x, x32, i, c, c32, l1, l2, an1, an2, xq, cq, prm, prm32, rs):
                    icoun = 0
                    moved = True
                    itran[l1] = True
                    itran[l2] = True
                    ncp[l1] = istep + n
                    ncp[l2] = istep + n
                    _transfer(x, i, l1, l2, c, c32, nc, an1, an2, ic1, ic2, cq, rs)
            if icoun == n:
                return True, moved


@kernel(internal=True, refcount=False)
def _copy_rows(c, c32):
    """The first rows of ``c`` into ``c32`` (as many as it has), rounded to its type."""
    for L in range(c32.shape[0]):
        for j in range(c32.shape[1]):
            c32[L, j] = c[L, j]


@kernel(internal=True, refcount=False)
def _row_means(rs, ic1, nc):
    """The row-space centres as the means of the start's assignment (sums in data order,
    as the data-space centres)."""
    y, cy = rs[0], rs[1]
    if not y.shape[0]:
        return
    cy[:, :] = 0.0
    for i in range(y.shape[0]):
        L = ic1[i]
        for j in range(y.shape[1]):
            cy[L, j] += y[i, j]
    for L in range(cy.shape[0]):
        aa = float(nc[L])
        for j in range(y.shape[1]):
            cy[L, j] /= aa


@kernel
def as136(x, x32, c0, max_iter, imaxqtr, xq, prm, prm32, work, rs):
    """AS 136 from the centres ``c0`` (k >= 2, k < n): (labels, the incrementally kept
    centres, counts, R's ``iter``, ``ifault``); ``ifault`` -1 is an empty cluster after
    the start (the counts say which). Screens: ``xq`` (the squared row norms, or empty:
    none) with the bound's parameters ``prm`` (see :func:`_screen_tol`), and ``x32``
    (the data in single precision, or empty: none) with ``prm32``. ``work``: the
    arrays, made by the caller (each numpy constructor used here would be compiled
    apart), as :func:`~.hartigan_wong._as136_work` makes them. ``rs``: the row screen
    (rows ``y`` with ``y y' = x x'`` up to a constant, the start centres' images ``cy``
    (overwritten), the bound's ``(base, per transfer)`` and a transfer count), or empty
    arrays: none (see :class:`~.hartigan_wong.RowScreen`)."""
    n, p = x.shape
    k = c0.shape[0]
    ic1, ic2, d, cq, c32, nc, c, an1, an2, itran, ncp, live = work
    for L in range(cq.shape[0]):
        cq[L] = _dot(c0, L, c0, L)
    _copy_rows(c0, c32)
    _two_nearest(x, x32, c0, c32, ic1, ic2, d, xq, cq, prm, prm32, rs)
    for i in range(n):
        nc[ic1[i]] += 1
    for L in range(k):
        if nc[L] == 0:
            return ic1, c, nc, 0, -1
    for i in range(n):  # sums in data order, then the means
        L = ic1[i]
        for j in range(p):
            c[L, j] += x[i, j]
    for L in range(k):
        aa = float(nc[L])
        for j in range(p):
            c[L, j] /= aa
        an2[L] = aa / (aa + 1.0)
        an1[L] = aa / (aa - 1.0) if nc[L] > 1 else np.inf
    for L in range(cq.shape[0]):
        cq[L] = _dot(c, L, c, L)
    _copy_rows(c, c32)
    _row_means(rs, ic1, nc)
    st = (nc, an1, an2, ic1, ic2)
    indx = np.int64(0)
    for it in range(1, max_iter + 1):
        indx = _optra(x, x32, c, c32, st, itran, ncp, live, indx, d, xq, cq, prm, prm32, rs)
        if indx == n:  # n optimal-transfer steps without a transfer
            return ic1, c, nc, it, 0
        done, moved = _qtran(x, x32, c, c32, st, itran, ncp, imaxqtr, xq, cq, prm, prm32, rs)
        if moved:
            indx = 0
        if not done:
            return ic1, c, nc, it, 4
        if k == 2:  # no need to re-enter the optimal-transfer stage
            return ic1, c, nc, it, 0
        for L in range(k):
            ncp[L] = 0
    return ic1, c, nc, max_iter + 1, 2


@kernel(reassoc=True)
def wss_estimate(x, labels, ref, esum, esq, nc):
    """``(W, E)``: the total within sum of squares of the partition ``labels`` computed
    as :func:`~.hartigan_wong._final` computes it (deviations ``e`` from the centres
    ``ref``: ``sum_L max(sum |e|^2 - n_L |mean e|^2, 0)``), summed in any order, and
    ``E = sum |e|^2``, which its error bound scales with. ``esum`` (k, p), ``esq`` and
    ``nc`` (k): zeros made by the caller (a numpy constructor here would be compiled
    apart), for the per-cluster sums of ``e`` and ``|e|^2`` and the counts."""
    n, p = x.shape
    k = ref.shape[0]
    for i in range(n):
        L = labels[i]
        nc[L] += 1.0
        s = 0.0
        for j in range(p):
            e = x[i, j] - ref[L, j]
            esum[L, j] += e
            s += e * e
        esq[L] += s
    tot = 0.0
    etot = 0.0
    for L in range(k):
        if nc[L] > 0.0:
            m2 = 0.0
            for j in range(p):
                m = esum[L, j] / nc[L]
                m2 += m * m
            tot += max(esq[L] - nc[L] * m2, 0.0)
        etot += esq[L]
    return tot, etot
