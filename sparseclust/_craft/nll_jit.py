"""CRAFT's restart likelihood compiled (:func:`~sparseclust._craft.core.neg_loglik`).

Imported only inside :mod:`.core` (``import sparseclust`` loads no numba). The kernel
computes each cell's term with the operations of the numpy code it replaces, in the
same order (numba's ``fastmath`` stays off; the logarithms and denominators come in
computed by numpy), so every term is the same number bit for bit, and the caller sums
the terms as before (numpy's sum of the same array).
"""

from __future__ import annotations

from .._engine.jit import kernel

__all__ = ["numeric_terms", "own_level_sums"]


@kernel
def numeric_terms(
    X0, M, labels, zeta, den, log_sig, v, mean, uden, ulog, a, out
):  # pragma: no cover - compiled
    """``out[r, p]`` for the rows ``a + r`` of ``X0`` (``r < out.shape[0]``): with
    ``k = labels[r]``, ``(x - zeta[k, p])^2 / den[k, p] + log_sig[k, p]`` where feature
    ``p`` is selected in cluster ``k`` (``v[k, p]``), else ``(x - mean[p])^2 / uden[p] +
    ulog[p]``; times the observed flag ``M[a + r, p]`` (1.0 / 0.0) when ``M`` has rows."""
    P = out.shape[1]
    masked = M.shape[0] > 0
    for r in range(out.shape[0]):
        k = labels[r]
        for p in range(P):
            x = X0[a + r, p]
            if v[k, p]:
                t = x - zeta[k, p]
                val = t * t / den[k, p] + log_sig[k, p]
            else:
                t = x - mean[p]
                val = t * t / uden[p] + ulog[p]
            if masked:
                val = val * (1.0 if M[a + r, p] else 0.0)
            out[r, p] = val
    return out


@kernel
def own_level_sums(codes_t, offsets, table, labels, out):  # pragma: no cover - compiled
    """``out[r] = sum_q table[codes_t[q, r] + offsets[q] + q + 1, labels[r]]``: each
    row's categorical term in its own cluster only, added feature by feature in feature
    order from the first feature's row, as
    :func:`~sparseclust._craft.costs_jit.level_sums` adds every cluster's (whose column
    ``labels[r]`` the numpy code picked): the same number bit for bit, at one K-th of
    the work."""
    Q = codes_t.shape[0]
    for r in range(out.shape[0]):
        k = labels[r]
        x = table[codes_t[0, r] + offsets[0] + 1, k]
        for q in range(1, Q):
            x += table[codes_t[q, r] + offsets[q] + q + 1, k]
        out[r] = x
    return out
