# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# cython: cdivision=True
"""CRAFT's restart likelihood compiled (:func:`~sparseclust._craft.core.neg_loglik`).

Compiled ahead of time (Cython, at build time); imported only inside :mod:`.core`. The
kernel computes each cell's term with the operations of the numpy code it replaces, in
the same order (no fused multiply-add, no reassociation; the logarithms and
denominators come in computed by numpy), so every term is the same number bit for bit,
and the caller sums the terms as before (numpy's sum of the same array). A zero
denominator raises ZeroDivisionError, as the numba kernel did (checked explicitly:
``cdivision``).
"""

from libc.stdint cimport int64_t
from numpy cimport npy_bool

from .costs_jit cimport code_t

__all__ = ["numeric_terms", "own_level_sums"]


def numeric_terms(const double[:, :] X0, const npy_bool[:, :] M, const int64_t[:] labels,
                  const double[:, :] zeta, const double[:, :] den, const double[:, :] log_sig,
                  const npy_bool[:, :] v, const double[:] mean, const double[:] uden,
                  const double[:] ulog, Py_ssize_t a, out):
    """``out[r, p]`` for the rows ``a + r`` of ``X0`` (``r < out.shape[0]``): with
    ``k = labels[r]``, ``(x - zeta[k, p])^2 / den[k, p] + log_sig[k, p]`` where feature
    ``p`` is selected in cluster ``k`` (``v[k, p]``), else ``(x - mean[p])^2 / uden[p] +
    ulog[p]``; times the observed flag ``M[a + r, p]`` (1.0 / 0.0) when ``M`` has rows."""
    cdef double[:, :] o = out
    cdef Py_ssize_t P = o.shape[1], r, p
    cdef int64_t k
    cdef bint masked = M.shape[0] > 0, zero = False
    cdef double x, t, val, d
    with nogil:
        for r in range(o.shape[0]):
            k = labels[r]
            for p in range(P):
                x = X0[a + r, p]
                if v[k, p]:
                    t = x - zeta[k, p]
                    d = den[k, p]
                    if d == 0:
                        zero = True
                        break
                    val = t * t / d + log_sig[k, p]
                else:
                    t = x - mean[p]
                    d = uden[p]
                    if d == 0:
                        zero = True
                        break
                    val = t * t / d + ulog[p]
                if masked:
                    val = val * (1.0 if M[a + r, p] else 0.0)
                o[r, p] = val
            if zero:
                break
    if zero:  # as numba raised it (its error model is Python's)
        raise ZeroDivisionError("division by zero")
    return out


def own_level_sums(const code_t[:, :] codes_t, const int64_t[:] offsets,
                   const double[:, :] table, const int64_t[:] labels, out):
    """``out[r] = sum_q table[codes_t[q, r] + offsets[q] + q + 1, labels[r]]``: each
    row's categorical term in its own cluster only, added feature by feature in feature
    order from the first feature's row, as
    :func:`~sparseclust._craft.costs_jit.level_sums` adds every cluster's (whose column
    ``labels[r]`` the numpy code picked): the same number bit for bit, at one K-th of
    the work."""
    cdef double[:] o = out
    cdef Py_ssize_t Q = codes_t.shape[0], r, q
    cdef int64_t k
    cdef double x
    if Q == 0:
        raise ValueError("own_level_sums needs categorical features")
    with nogil:
        for r in range(o.shape[0]):
            k = labels[r]
            x = table[codes_t[0, r] + offsets[0] + 1, k]
            for q in range(1, Q):
                x += table[codes_t[q, r] + offsets[q] + q + 1, k]
            o[r] = x
    return out
