# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# cython: cdivision=True
"""The start and the end of a compiled CRAFT fit
(:func:`~sparseclust._craft.core._compiled_passes`, ``core._k_final_compiled``).

Compiled ahead of time (Cython, at build time); imported only inside :mod:`.core`. A
fit's first cluster is opened at a random row as the compiled passes open every other
cluster (``loop_jit._singleton``: centre the row, sd 1, one-hot level counts, the log
shares read from the table of numpy's logs), written straight into the loop's buffers:
the same numbers as :func:`~sparseclust._craft.core.singleton`, without its dozen small
numpy calls on each of the hundreds of fits of a calibration.
"""

cimport numpy as cnp
from numpy cimport npy_bool

from .loop_jit cimport (
    Cur,
    Dat,
    FP,
    _all_costs,
    _singleton,
    raise_status,
    unpack_1d,
    unpack_cur,
    unpack_dat,
    unpack_fp,
)

import numpy as np

cnp.import_array()

__all__ = ["final_costs", "open_at"]


def open_at(cur, Py_ssize_t i, v, dat):
    """Cluster 0 of the buffers ``cur`` (zeta, sigma, log_eta, counts, v) opened at row
    ``i`` with the selection ``v``; ``dat``: the block's loop inputs
    (``core._loop_inputs``). Returns ``i``."""
    cdef Dat d
    cdef Cur c
    cdef list keep = []
    cdef Py_ssize_t D
    unpack_dat(dat, &d, keep)
    unpack_cur(cur, &c, True, keep)
    cdef const npy_bool* vp = <const npy_bool*> unpack_1d(v, b"b", 1, False, keep, "v", &D)
    if D != c.v.n1 or not 0 <= i < d.X0.n0 or c.zeta.n0 < 1:
        raise ValueError("open_at: v, i or the buffers do not match the block")
    with nogil:
        _singleton(&c, 0, i, vp, 1, &d)
    return i


def final_costs(cur, Py_ssize_t K, dat, fp, bint masked):
    """The costs (rows, clusters) of every row of the block to the ``K`` clusters of
    ``cur`` (``loop_jit._all_costs``: the numbers of the loop's passes, those of
    ``core._cost_pieces``); ``fp``: the loop's float parameters (F_delta, sigma_override
    read)."""
    cdef Dat d
    cdef Cur c
    cdef FP f
    cdef list keep = []
    cdef int status
    unpack_dat(dat, &d, keep)
    unpack_cur(cur, &c, False, keep)
    unpack_fp(fp, &f)
    if not 1 <= K <= c.zeta.n0:
        raise ValueError(f"final_costs: K={K} clusters, the state has {c.zeta.n0}")
    cdef cnp.ndarray D = np.empty((d.X0.n0, K))
    cdef double* Dp = <double*> cnp.PyArray_DATA(D)
    with nogil:
        status = _all_costs(&c, 0, K, &d, &f, masked, Dp)
    raise_status(status)
    return D
