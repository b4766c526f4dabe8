# cython: cdivision=True
"""sparcl's single-precision rounding of the pair differences, compiled.

Imported only inside :mod:`.dissimilarity`. :func:`rounding_block` fills a block of the
correction matrix ``C`` of :class:`~sparseclust._sparse.dissimilarity.SparclSquared`
one pair at a time, with the operations of the numpy code it replaces, in the same
order (no fused multiply-add, no reassociation: ``sparseclust/meson.build``): ``d`` the
double difference of the float32 values, ``t`` its float32 rounding (the float32
subtraction sparcl's Fortran does: rounding the exact difference to float32 through
double gives the same float, since 53 >= 2 * 24 + 2), and ``c = (t - d) * (t + d) =
t^2 - d^2``. The loop over a pair's features is C (``rounding.h``: compiled for AVX2
too where the loader can choose). Both kernels release the GIL (the correction chunks
run on threads).
"""

__all__ = ["rounding_block", "rounding_block32"]


cdef extern from "rounding.h" nogil:
    void sc_rounding_row(const float* a, const float* b, double* out, Py_ssize_t p)
    void sc_rounding_row32(const float* a, const float* b, float* out, Py_ssize_t p)


def rounding_block(const float[:, ::1] X, Py_ssize_t i, Py_ssize_t j, double[:, ::1] out):
    """Fill ``out[r, f] = (t - d)(t + d)`` for ``out.shape[0]`` consecutive pairs from the
    pair ``(i, j)`` on (R ``dist`` order: ``(0, 1), (0, 2), ..., (1, 2), ...``), with
    ``d = X[j', f] - X[i', f]`` in double from the float32 data ``X`` and ``t`` its
    float32 rounding. Returns the pair after the block, ``(i, j)``."""
    cdef Py_ssize_t n = X.shape[0], p = X.shape[1], r
    with nogil:
        for r in range(out.shape[0]):
            sc_rounding_row(&X[j, 0], &X[i, 0], &out[r, 0], p)
            j += 1
            if j == n:
                i += 1
                j = i + 1
    return i, j


def rounding_block32(const float[:, ::1] X, Py_ssize_t i, Py_ssize_t j, float[:, ::1] out):
    """:func:`rounding_block` in single precision (``out`` float32), three times as fast:
    ``t = X[j'] - X[i']`` in float32 and its exact rounding error ``e = d - t`` by
    Knuth's TwoSum (six float32 operations, exact), then ``c = -e (2t + e)``, right to
    two float32 roundings (about 1e-7 of ``c``)."""
    cdef Py_ssize_t n = X.shape[0], p = X.shape[1], r
    with nogil:
        for r in range(out.shape[0]):
            sc_rounding_row32(&X[j, 0], &X[i, 0], &out[r, 0], p)
            j += 1
            if j == n:
                i += 1
                j = i + 1
    return i, j
