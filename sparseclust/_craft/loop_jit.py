"""CRAFT's passes on data held in one block of rows, compiled: one call runs the
passes of a fit (:func:`~sparseclust._craft.core._passes`) from its first cluster
until no label changes or a stop.

Imported only inside :mod:`.core` (``import sparseclust`` loads no numba). The loop does
what the numpy pass does (:func:`~sparseclust._craft.core._pass`: costs, the sequential
new-cluster rule with its Bernoulli draws, assignment, statistics; then the update and
the fixed-budget selection), operation by operation in the same order, so a fit is the
same bit for bit:

* matrix products are the numpy code's GEMMs (numba's ``np.dot`` calls the GEMM of the
  same OpenBLAS build, with the same operands and transposition flags as ``matmul``);
* a row's cost terms are added in :func:`~sparseclust._craft.core._cost_pieces`'s
  order; sums numpy reduces pairwise are reduced by
  :func:`~sparseclust._craft.pass_jit.pairwise_sum`;
* logarithms are numpy's own: a level share's log is read from tables the caller
  fills with ``np.log`` (counts are integers, so every value the update can meet is
  in them);
* the Bernoulli draws come from the caller's ``Generator`` (numba draws from the same
  bit generator, so the stream and its state are the caller's).

The clusters live in buffers of ``cap`` rows; when a pass would open more clusters than
fit, the call returns :data:`GROW` before the pass draws anything, and the caller
enlarges the buffers and calls again (the pass starts over, the same numbers).
"""

from __future__ import annotations

import numpy as np

from .._engine.jit import kernel
from .costs_jit import centres, count_all, row_min
from .pass_jit import pairwise_sum, select_fixed

__all__ = ["DONE", "GROW", "run_passes"]

DONE, GROW = 0, 1
# ints[]: pass reached, clusters, passes above stop_above's k, converged, aborted, known,
# clusters of the last pass (or wanted), uniforms used
IT, K_, OVER, CONV, ABORT, KNOWN = range(6)


@kernel(internal=True)
def _costs(cat, inv, Q, X, X2, Mf, W, Wz, wz2, wz2_sum, F_v, masked, D):  # pragma: no cover
    """``D`` (rows, clusters): the costs of the rows given (``X`` their numeric cells)
    as :func:`~sparseclust._craft.core._cost_pieces` adds them: the categorical terms
    ``cat`` (:func:`_cat_terms`: of the rows themselves, or with ``inv`` not empty of
    their distinct rows, row ``r`` taking row ``inv[r]``), ``+ F_v`` on categorical
    data; with numeric features ``+ X2 W' + X Wz' + wz2_sum`` (``X2 = X * X``;
    ``Mf wz2'`` with missing cells) ``+ F_v``."""
    n, K = D.shape
    P = X.shape[1]
    if P:
        t1, t2 = np.empty((n, K)), np.empty((n, K))
        np.dot(X2, W.T, t1)
        np.dot(X, Wz.T, t2)
        t3 = np.empty((n, K)) if masked else t1
        if masked:
            np.dot(Mf, wz2.T, t3)
    for r in range(n):
        u = inv[r] if inv.size else r
        for k in range(K):
            x = cat[u, k]
            if Q and not P:
                x = x + F_v[k]
            if P:
                x = x + t1[r, k]
                x = x + t2[r, k]
                x = x + (t3[r, k] if masked else wz2_sum[k])
                x = x + F_v[k]
            D[r, k] = x
    return D


@kernel(internal=True)
def _cat_terms(codes, g0, rows, table, base, K):  # pragma: no cover - compiled
    """Per row ``rows[i]`` of ``codes`` (every row when ``rows`` is empty): its
    categorical cost terms to each cluster, the table rows of its levels added feature
    by feature from the first (``core._level_sums``; the clusters side by side),
    ``+ g0``; zeros without categorical features (with them every cell is written:
    no zeroing)."""
    Q = codes.shape[1]
    m = rows.size if rows.size else codes.shape[0]
    out = np.empty((m, K)) if Q else np.zeros((m, K))
    if K == 1 and Q:  # one cluster (a cluster just opened): a scalar sum
        for i in range(m):
            r = rows[i] if rows.size else i
            x = table[codes[r, 0] + base[0], 0]
            for q in range(1, Q):
                x += table[codes[r, q] + base[q], 0]
            out[i, 0] = x + g0[r]
        return out
    if 2 <= K <= 4 and Q:  # four sums in registers (the table has four columns)
        for i in range(m):
            r = rows[i] if rows.size else i
            s = codes[r, 0] + base[0]
            x0, x1, x2, x3 = table[s, 0], table[s, 1], table[s, 2], table[s, 3]
            for q in range(1, Q):
                s = codes[r, q] + base[q]
                x0 += table[s, 0]
                x1 += table[s, 1]
                x2 += table[s, 2]
                x3 += table[s, 3]
            out[i, 0], out[i, 1] = x0 + g0[r], x1 + g0[r]
            if K > 2:
                out[i, 2] = x2 + g0[r]
            if K > 3:
                out[i, 3] = x3 + g0[r]
        return out
    for i in range(m if Q else 0):
        r = rows[i] if rows.size else i
        s = codes[r, 0] + base[0]
        for k in range(K):
            out[i, k] = table[s, k]
        for q in range(1, Q):
            s = codes[r, q] + base[q]
            for k in range(K):
                out[i, k] += table[s, k]
        for k in range(K):
            out[i, k] = out[i, k] + g0[r]
    return out


@kernel(internal=True)
def _weights(cur, lo, hi, dat, fp):  # pragma: no cover - compiled
    """Clusters ``lo:hi``'s cost terms as fresh arrays (``core._numeric_weights``,
    ``F_v`` and ``costs_jit.cost_table``): ``W = v / (2 sig sig)`` (``sig`` the
    cluster's sd, or ``sigma_override`` when positive), ``Wz = -2 (W zeta)``,
    ``wz2 = W zeta zeta`` and its row sums (pairwise), ``F_v = F_delta * (selected
    features)``, and the categorical gather table."""
    zeta, sigma, log_eta, _, v = cur
    offsets, L, log_eta0 = dat[1], dat[2], dat[9]
    P, K, Q = zeta.shape[1], hi - lo, offsets.size
    so = fp[5]
    W, Wz, wz2 = np.empty((K, P)), np.empty((K, P)), np.empty((K, P))
    wz2_sum, F_v = np.empty(K), np.empty(K)
    table = np.zeros((log_eta0.size + Q, 4 if 2 <= K <= 4 else K))  # see _cat_terms
    for k in range(K):
        c = lo + k
        for p in range(P):
            s = so if so > 0 else sigma[c, p]
            w = (1.0 if v[c, p] else 0.0) / (2.0 * s * s)
            wz = w * zeta[c, p]
            W[k, p], Wz[k, p], wz2[k, p] = w, -2.0 * wz, wz * zeta[c, p]
        wz2_sum[k] = pairwise_sum(wz2[k], P)
        F_v[k] = fp[1] * _count(v, c)
        for q in range(Q):
            on = 1.0 if v[c, P + q] else 0.0
            for j in range(offsets[q], offsets[q] + L[q]):
                table[j + q + 1, k] = (log_eta0[j] - log_eta[c, j]) * on
    return W, Wz, wz2, wz2_sum, F_v, table


@kernel(internal=True)
def _costs_of(rows, cur, lo, hi, dat, fp, masked):  # pragma: no cover - compiled
    """The costs (rows, clusters) of ``rows`` (all when None is not an option: an
    array of row numbers) to clusters ``lo:hi``, their rows taken first (as
    ``core.take_rows``)."""
    codes, offsets, g0, X0, Mf = dat[0], dat[1], dat[3], dat[4], dat[5]
    m, Q, P = rows.size, codes.shape[1], X0.shape[1]
    X, X2, M = np.empty((m, P)), np.empty((m, P)), np.empty((m, P if masked else 0))
    for i in range(m):
        for p in range(P):
            X[i, p] = X0[rows[i], p]
            X2[i, p] = X[i, p] * X[i, p]
        for p in range(M.shape[1]):
            M[i, p] = Mf[rows[i], p]
    W, Wz, wz2, wz2_sum, F_v, table = _weights(cur, lo, hi, dat, fp)
    cat = _cat_terms(codes, g0, rows, table, _base(offsets), hi - lo)
    D = np.empty((m, hi - lo))
    return _costs(cat, dat[13][:0], Q, X, X2, M, W, Wz, wz2, wz2_sum, F_v, masked, D)


@kernel(internal=True)
def _all_costs(cur, lo, hi, dat, fp, masked):  # pragma: no cover - compiled
    """The costs (rows, clusters) of every row to clusters ``lo:hi``."""
    codes, offsets, g0, X0, Mf, inv = dat[0], dat[1], dat[3], dat[4], dat[5], dat[13]
    if inv.size:  # the categorical terms of the distinct rows only
        codes, g0 = dat[14], dat[15]
    W, Wz, wz2, wz2_sum, F_v, table = _weights(cur, lo, hi, dat, fp)
    cat = _cat_terms(codes, g0, inv[:0], table, _base(offsets), hi - lo)
    D = np.empty((X0.shape[0], hi - lo))
    Q = offsets.size
    return _costs(cat, inv, Q, X0, dat[16], Mf, W, Wz, wz2, wz2_sum, F_v, masked, D)


@kernel(internal=True, refcount=False)
def _singleton(cur, c, i, v_new, dat):  # pragma: no cover - compiled
    """Cluster ``c`` opened at row ``i`` (``core.singleton``): centre the row (the
    column mean where a cell is missing), sd 1, one-hot level counts, log shares
    from the caller's table of ``log((count + alpha) / (observed + alpha L))``."""
    zeta, sigma, log_eta, counts, v = cur
    codes, offsets, L, X0, Mf, col_mean, sing = (
        dat[0], dat[1], dat[2], dat[4], dat[5], dat[6], dat[12]
    )  # fmt: skip
    P = X0.shape[1]
    for p in range(P):
        seen = Mf.shape[0] == 0 or Mf[i, p] > 0
        zeta[c, p] = X0[i, p] if seen else col_mean[p]
        sigma[c, p] = 1.0
    for q in range(offsets.size):
        code = codes[i, q]
        for j in range(L[q]):
            hit = code == j
            counts[c, offsets[q] + j] = 1.0 if hit else 0.0
            log_eta[c, offsets[q] + j] = sing[2 if hit else (1 if code >= 0 else 0), offsets[q] + j]
    for d in range(v.shape[1]):
        v[c, d] = v_new[d]


@kernel(internal=True)
def _open(cur, K, dmin, u, ints, dat, fp, ip):  # pragma: no cover - compiled
    """Pass, step 2 (``core._open_clusters`` on one block): the candidates (rows whose
    smallest cost exceeds the threshold) walked in row order; each still beyond the
    threshold to every cluster opened before it opens one, with features drawn
    ``Bernoulli((a0 K + vsum) / (K (a0 + b0)))`` (all with ``select_all``); past
    ``max_clusters`` none. Returns (clusters now, the rows that opened them)."""
    threshold, a0, b0 = fp[0], fp[2], fp[3]
    masked, select_all, cap = ip[0] > 0, ip[1] > 0, ip[5]  # draws: u[ints[7]:]
    v = cur[4]
    alive = np.empty(dmin.size, np.int64)
    na = 0
    for r in range(dmin.size):
        if dmin[r] > threshold:
            alive[na] = r
            na += 1
    openers = np.empty(na, np.int64)
    n_open = 0
    vsum = np.zeros(v.shape[1])
    for k in range(K):
        for d in range(v.shape[1]):
            vsum[d] += v[k, d]
    K_now = K
    D = v.shape[1]
    p, v_new = np.empty(D), np.empty(D, np.bool_)
    while na and (cap < 0 or K_now <= cap):
        i = alive[0]
        for d in range(D):
            p[d] = (a0 * K_now + vsum[d]) / (K_now * (a0 + b0))
            v_new[d] = True if select_all else u[ints[7] + d] < p[d]
        if not select_all:
            ints[7] += D
        _singleton(cur, K_now, i, v_new, dat)
        openers[n_open] = i
        n_open += 1
        for d in range(D):
            vsum[d] += v_new[d]
        K_now += 1
        rest = alive[1:na]
        if rest.size:
            c = _costs_of(rest, cur, K_now - 1, K_now, dat, fp, masked)
            na = 0
            for t in range(rest.size):
                if c[t, 0] > threshold:
                    alive[na] = rest[t]
                    na += 1
        else:
            na = 0
    return K_now, openers[:n_open]


@kernel(internal=True, refcount=False)
def _assign(K, K_tot, Dn, openers, idx, dmin, labels, cost):  # pragma: no cover - compiled
    """Pass, step 3 (``core._k_assign``): every row takes the best of the old
    clusters (``idx``, ``dmin``) and of the new ones (costs ``Dn``) opened at or before
    it (ties keep the old one); an opening row takes its own cluster."""
    for r in range(labels.size):
        labels[r], cost[r] = idx[r], dmin[r]
    if K_tot == K:
        return
    for r in range(labels.size):
        j = -1
        best = 0.0
        for t in range(K_tot - K):
            x = np.inf if openers[t] > r else Dn[r, t]
            if j < 0 or (best == best and (x < best or x != x)):
                best, j = x, t
        if best < dmin[r]:
            labels[r] = K + j
            cost[r] = best
    for t in range(openers.size):
        labels[openers[t]] = K + t
        cost[openers[t]] = Dn[openers[t], t]


@kernel(internal=True)
def _stats(labels, K_tot, dat):  # pragma: no cover - compiled
    """``core.block_stats`` of the pass's labels: (cluster sizes ``nk``, ``s1``, ``s2``,
    observed cells ``cnt``, level counts as floats). Sums by the same products: a dense
    0/1 membership matrix times the cells (GEMM) up to 32 clusters, beyond that the
    rows added one by one in row order (scipy's sparse product)."""
    codes, offsets, L, X0, Mf = dat[0], dat[1], dat[2], dat[4], dat[5]
    n, P, Q, S = labels.size, X0.shape[1], offsets.size, dat[9].size
    cnt_i = count_all(codes, offsets, labels, np.zeros((K_tot, S + Q), np.int64))
    nk = np.zeros(K_tot)
    if Q:
        for k in range(K_tot):
            for j in range(L[0] + 1):
                nk[k] += cnt_i[k, j]
    else:
        for r in range(n):
            nk[labels[r]] += 1.0
    s1, s2 = np.zeros((K_tot, P)), np.zeros((K_tot, P))
    cnt = np.zeros((K_tot, P))
    masked = Mf.shape[0] > 0
    if P and K_tot <= 32:
        Z = np.zeros((K_tot, n))
        for r in range(n):
            Z[labels[r], r] = 1.0
        np.dot(Z, X0, s1)
        np.dot(Z, dat[16], s2)
        if masked:
            np.dot(Z, Mf, cnt)
    elif P:
        for r in range(n):
            k = labels[r]
            for p in range(P):
                s1[k, p] += X0[r, p]
                s2[k, p] += dat[16][r, p]
                if masked:
                    cnt[k, p] += Mf[r, p]
    if not masked:
        for k in range(K_tot):
            for p in range(P):
                cnt[k, p] = nk[k]
    counts = np.empty((K_tot, S))
    for q in range(Q):
        for j in range(offsets[q], offsets[q] + L[q]):
            for k in range(K_tot):
                counts[k, j] = cnt_i[k, j + q + 1]
    return nk, s1, s2, cnt, counts


@kernel(internal=True)
def _update(cur, nxt, K_tot, nk, s1, s2, cnt, counts, dat, fp, ip):  # pragma: no cover
    """``core.state_from_stats`` then ``core.select`` (fixed budget) into ``nxt``:
    the non-empty clusters' means and sds (``costs_jit.centres``), level counts and
    log shares ``log(count + alpha) - log(n_q + alpha L_q)`` (read from the caller's
    tables of numpy's logs), and the selection. Returns (clusters kept, remap)."""
    offsets, L, col_mean, col_sd, log_eta0, logc, logn = (
        dat[1], dat[2], dat[6], dat[7], dat[9], dat[10], dat[11]
    )  # fmt: skip
    P, Q, S = s1.shape[1], offsets.size, log_eta0.size
    keep, remap = np.empty(K_tot, np.int64), np.empty(K_tot, np.int64)
    K2 = 0
    for k in range(K_tot):
        remap[k] = K2 if nk[k] != 0 else -1
        if nk[k] != 0:
            keep[K2] = k
            K2 += 1
    keep = keep[:K2]
    zeta, sigma = np.empty((K2, P)), np.empty((K2, P))
    centres(s1, s2, cnt, nk, keep, col_mean, col_sd, fp[4], zeta, sigma)
    kc, le = np.empty((K2, S)), np.empty((K2, S))
    for j in range(K2):
        for q in range(Q):
            o = offsets[q]
            nq = counts[keep[j], o]
            for s in range(o + 1, o + L[q]):
                nq += counts[keep[j], s]
            nq = nq + 0.0
            for s in range(o, o + L[q]):
                c = counts[keep[j], s]
                kc[j, s] = c
                le[j, s] = logc[int(c)] - logn[q, int(nq)]
    v = np.zeros((K2, cur[4].shape[1]), np.bool_)
    if ip[1]:
        v = np.ones((K2, cur[4].shape[1]), np.bool_)
    else:
        select_fixed(sigma, kc, le, log_eta0, offsets, L, ip[2], ip[3], v)
    _put(nxt[0], zeta, K2)
    _put(nxt[1], sigma, K2)
    _put(nxt[2], le, K2)
    _put(nxt[3], kc, K2)
    _put(nxt[4], v, K2)
    return K2, remap


@kernel(internal=True, refcount=False)
def _put(dst, src, K):  # pragma: no cover - compiled
    """``dst[:K] = src[:K]`` (2-D), element by element."""
    for k in range(K):
        for j in range(src.shape[1]):
            dst[k, j] = src[k, j]


@kernel(internal=True, refcount=False)
def _count(v, k):  # pragma: no cover - compiled
    """Features selected in cluster ``k`` (``v[k].sum()``)."""
    c = 0
    for d in range(v.shape[1]):
        c += v[k, d]
    return c


@kernel(internal=True)
def _base(offsets):  # pragma: no cover - compiled
    """Row of each feature's level 0 in the gather table: ``offsets + q + 1``."""
    out = np.empty(offsets.size, np.int64)
    for q in range(offsets.size):
        out[q] = offsets[q] + q + 1
    return out


@kernel(internal=True, refcount=False)
def _equal(a, b, K):  # pragma: no cover - compiled
    """The first ``K`` rows of ``a`` and ``b`` equal element by element (NaN unequal)."""
    for k in range(K):
        for j in range(a.shape[1]):
            if not a[k, j] == b[k, j]:
                return False
    return True


@kernel(internal=True, refcount=False)
def _same(cur, nxt, K_tot, K2):  # pragma: no cover - compiled
    """``core._same_parameters`` of the pass's clusters and the updated ones."""
    if K_tot != K2:
        return False
    return (
        _equal(cur[4], nxt[4], K2)
        and _equal(cur[0], nxt[0], K2)
        and _equal(cur[1], nxt[1], K2)
        and _equal(cur[2], nxt[2], K2)
    )


@kernel
def _short(trace, it, k, n):  # pragma: no cover - compiled
    """``stop_below=(k, n)``: the last ``n`` of the ``it`` passes each left fewer than
    ``k`` clusters and no more than the pass before (the first pass starts from one),
    read from the cluster counts in ``trace[:, 1]`` (callable from Python: the tests
    check it on constructed counts)."""
    if it < n:
        return False
    for t in range(it - n, it):
        prev = trace[t - 1, 1] if t > 0 else 1.0
        if not (trace[t, 1] < k and trace[t, 1] <= prev):
            return False
    return True


@kernel
def run_passes(dat, cur, nxt, labels, cost, tot_nk, trace, ints, u, fp, ip):  # pragma: no cover
    """The passes of ``core._passes`` from the clusters in ``cur`` (``ints[K_]`` of
    them) and the labels of the rows (``labels``, used from the second pass on),
    starting after pass ``ints[IT]``. ``fp``: (threshold, F_delta, a0, b0,
    sigma_floor, sigma_override or -1); ``ip``: (cells missing, select_all, numeric
    and categorical features selected, max_iter, max_clusters or -1, stop_above's
    (k, n) or -1, stop_below's (k, n) or -1). On return ``cur`` holds the clusters, ``labels`` and ``cost`` the
    last pass's (its own costs, renumbered), ``tot_nk`` its cluster sizes,
    ``trace[it]`` its objective terms, ``ints`` the loop's counters and flags.
    :data:`GROW` when a pass would open more clusters than the buffers hold
    (``ints[6]``: how many it could open; else the last pass's clusters)."""
    n, cap = labels.size, cur[0].shape[0]
    masked = ip[0] > 0
    it, K, over = ints[IT], ints[K_], ints[OVER]
    old = np.empty(n, np.int64)
    first = np.int64(0)  # not the literal 0: one compilation of _all_costs serves both calls
    while it < ip[4]:
        D = _all_costs(cur, first, K, dat, fp, masked)
        idx, dmin = np.empty(n, np.int64), np.empty(n)
        row_min(D, idx, dmin)
        n_cand = 0
        for r in range(n):
            n_cand += dmin[r] > fp[0]
        if K + n_cand > cap or (ip[1] == 0 and ints[7] + n_cand * cur[4].shape[1] > u.size):
            ints[IT], ints[K_], ints[OVER], ints[6] = it, K, over, K + n_cand
            return GROW
        it += 1
        for r in range(n):
            old[r] = labels[r]
        K_tot, openers = _open(cur, K, dmin, u, ints, dat, fp, ip) if n_cand else (K, idx[:0])
        # the new clusters' costs (none opened: no rows, no call)
        Dn = _all_costs(cur, K, K_tot, dat, fp, masked) if K_tot > K else D[:, :0]
        _assign(K, K_tot, Dn, openers, idx, dmin, labels, cost)
        nk, s1, s2, cnt, counts = _stats(labels, K_tot, dat)
        fv = 0.0
        used = 0
        nv_used = 0
        for k in range(K_tot):
            nv = _count(cur[4], k)
            fv += nk[k] * nv
            if nk[k] != 0:
                used += 1
                nv_used += nv
        trace[it - 1, 0] = pairwise_sum(cost, n) - fp[1] * fv
        trace[it - 1, 1] = used
        trace[it - 1, 2] = fp[1] * float(nv_used)
        K2, remap = _update(cur, nxt, K_tot, nk, s1, s2, cnt, counts, dat, fp, ip)
        for k in range(K_tot):
            tot_nk[k] = nk[k]
        same = it > 1 and K2 == K
        for r in range(n):
            same = same and remap[labels[r]] == old[r]
            labels[r] = remap[labels[r]]
        ints[KNOWN] = same and _same(cur, nxt, K_tot, K2)
        _put(cur[4], nxt[4], K2)
        _put(cur[0], nxt[0], K2)
        _put(cur[1], nxt[1], K2)
        _put(cur[2], nxt[2], K2)
        _put(cur[3], nxt[3], K2)
        K = K2
        ints[6] = K_tot
        if same:
            ints[CONV] = 1
            break
        if ip[5] >= 0 and K > ip[5]:
            ints[ABORT] = 1
            break
        if ip[6] >= 0:
            over = over + 1 if K > ip[6] else 0
            if over >= ip[7]:
                ints[ABORT] = 1
                break
        if ip[8] >= 0 and _short(trace, it, ip[8], ip[9]):
            ints[ABORT] = 1
            break
    ints[IT], ints[K_], ints[OVER] = it, K, over
    return DONE
