"""The multi-start's Lloyd phase in the rows' Gram space, compiled, one start at a time.

Imported only inside :mod:`.lloyd` (``import sparseclust`` loads no numba). The rules
are those of :func:`~.lloyd._batched_lloyd` and the numpy :func:`~.lloyd._gram_lloyd`
(the same partitions up to the rounding of the products): each row goes to the centre
with the smallest ``|c_j|^2 - 2 x_i.c_j`` (the first on ties); a start stops when no
label changes; a cluster that empties takes the row farthest from its centre whose own
cluster keeps a member (the first in data order on ties); the sums ``q_j = sum over the
members l of G_l`` are made in full every 10 iterations, or when more than half the rows
moved, and otherwise updated with the rows that moved. A start here counts its own
moved rows (the numpy version counted the rows moved in any start).
"""

from __future__ import annotations

import numpy as np

from .._engine.jit import kernel

__all__ = ["gram_lloyd"]


@kernel(internal=True, refcount=False)
def _assign(cn, xc, lab, best):
    """Each row's nearest centre (first on ties) into ``lab`` and ``|c|^2 - 2 x.c`` into
    ``best``; returns whether a label changed."""
    k, n = xc.shape
    changed = False
    for i in range(n):
        b = cn[0] - 2.0 * xc[0, i]
        a = 0
        for j in range(1, k):
            v = cn[j] - 2.0 * xc[j, i]
            if v < b:
                b = v
                a = j
        best[i] = b
        if lab[i] != a:
            changed = True
        lab[i] = a
    return changed


@kernel(internal=True, refcount=False)
def _reseed(lab, cnt, own, order):
    """Each empty cluster (in order) takes the row farthest from its centre (``own``,
    the rows by decreasing ``own``, first in data order on ties, in ``order``) whose
    cluster keeps a member."""
    for j in range(cnt.shape[0]):
        if cnt[j] != 0:
            continue
        for t in range(order.shape[0]):
            i = order[t]
            if cnt[lab[i]] > 1:
                cnt[lab[i]] -= 1
                lab[i] = j
                cnt[j] = 1
                own[i] = 0.0
                break


@kernel(internal=True, refcount=False)
def _sums(G, lab, old, qs, full):
    """The members' sums of Gram rows: in full, or updated with the moved rows."""
    k, n = qs.shape
    if full:
        qs[:, :] = 0.0
        for i in range(n):
            j = lab[i]
            for m in range(n):
                qs[j, m] += G[i, m]
        return
    for i in range(n):
        if lab[i] != old[i]:
            a = lab[i]
            b = old[i]
            for m in range(n):
                qs[a, m] += G[i, m]
                qs[b, m] -= G[i, m]


@kernel(internal=True, refcount=False)
def _centres(lab, cnt, qs, xc, cn):
    """``x_i.c_j = q_j[i] / n_j`` and ``|c_j|^2 = sum over members of q_j / n_j^2``."""
    k, n = qs.shape
    for j in range(k):
        cn[j] = 0.0
    for i in range(n):
        cn[lab[i]] += qs[lab[i], i]
    for j in range(k):
        size = float(cnt[j])
        for i in range(n):
            xc[j, i] = qs[j, i] / size
        cn[j] = cn[j] / (size * size)


@kernel
def gram_lloyd(G, xq, starts, max_iter, labels, counts, work):
    """Lloyd from each row of ``starts`` (``(S, k)`` row indices) in the Gram space of
    ``G`` (``xq`` its diagonal): fills ``labels`` ``(S, n)`` and ``counts`` ``(S, k)``;
    returns ``(wss, converged, n_iter)`` per start (``n_iter``: R's ``$iter``, ``max_iter
    + 1`` when it did not converge). ``work``: ``(xc, qs, cn, best, old)`` arrays."""
    S, k = starts.shape
    n = G.shape[0]
    xc, qs, cn, best, old = work
    wss = np.empty(S)
    converged = np.zeros(S, dtype=np.bool_)
    n_iter = np.full(S, max_iter + 1, dtype=np.int64)
    for s in range(S):
        lab = labels[s]
        cnt = counts[s]
        lab[:] = -1
        for j in range(k):
            for m in range(n):
                xc[j, m] = G[starts[s, j], m]
            cn[j] = xq[starts[s, j]]
        for it in range(max_iter):
            old[:] = lab
            if not _assign(cn, xc, lab, best):
                converged[s] = True
                n_iter[s] = it + 1
                break
            cnt[:] = 0
            for i in range(n):
                cnt[lab[i]] += 1
            empty = False
            for j in range(k):
                empty = empty or cnt[j] == 0
            if empty:
                own = best + xq
                _reseed(lab, cnt, own, np.argsort(-own, kind="mergesort"))  # stable
            moved = 0
            for i in range(n):
                if lab[i] != old[i]:
                    moved += 1
            _sums(G, lab, old, qs, it % 10 == 0 or 2 * moved > n)
            _centres(lab, cnt, qs, xc, cn)
        tot = 0.0
        for j in range(k):
            tot += cnt[j] * cn[j]
        wss[s] = xq.sum() - tot
    return wss, converged, n_iter
