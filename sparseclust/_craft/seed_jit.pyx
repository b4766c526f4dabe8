# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# cython: cdivision=True
"""CRAFT's k-means++-style seeding (``core.seed_clusters``) on data held in one block of
rows, compiled: one call opens the ``K`` singletons of a fit at a fixed number of
clusters.

Compiled ahead of time (Cython, at build time); imported only inside :mod:`.core`. The
seeding does what the numpy/block code does (``core._k_seed_costs``,
``core._k_seed_draw``), with the same numbers bit for bit:

* a row's cost to a singleton is the compiled pass loop's cost
  (:func:`~sparseclust._craft.loop_jit._all_costs`, checked bit for bit against the
  numpy costs), its singleton the loop's (:func:`~sparseclust._craft.loop_jit._singleton`);
* the random draws (the first row, each singleton's ``Bernoulli(m)`` features, each
  round's key) are the caller's, taken from its ``Generator`` in the numpy code's order,
  and the logs of the rows' uniforms are numpy's, computed by the caller
  (``log(u) / w`` is a division of numpy's log, the same in any program);
* the next seed is the first row of largest ``log(u) / w`` among the rows of positive
  weight not taken yet (numpy's ``argmax``: the earliest of ties); the seeding stops
  early when no row has weight, or when the largest score is ``-inf``.

(``cdivision``: the scores divide by positive weights only.)
"""

from libc.math cimport INFINITY
from libc.stdint cimport int64_t
from libc.stdlib cimport calloc, free, malloc
from numpy cimport npy_bool

from .loop_jit cimport (
    B2,
    F2,
    Cur,
    Dat,
    FP,
    NOMEM,
    _all_costs,
    _singleton,
    raise_status,
    unpack_1d,
    unpack_b2,
    unpack_cur,
    unpack_dat,
    unpack_f2,
    unpack_fp,
)

__all__ = ["seed_rows"]


cdef int64_t _seed(const Dat* dat, const Cur* cur, const B2* V, const F2* logu,
                   Py_ssize_t first, const FP* fp, bint masked, int64_t* taken,
                   Py_ssize_t n) noexcept nogil:
    """:func:`seed_rows` once unpacked; a negative status (``loop_jit.NOMEM``,
    ``ZERODIV``) on failure."""
    cdef Py_ssize_t K = V.n0, nr = dat.X0.n0, r, j
    cdef int64_t k = 0
    cdef npy_bool* excluded = <npy_bool*> calloc(n + 1, sizeof(npy_bool))
    cdef double* dmin = <double*> malloc((n + 1) * sizeof(double))
    cdef double* c = <double*> malloc((nr + 1) * sizeof(double))
    cdef double x, y, floor, best, w, s
    cdef int err
    if excluded == NULL or dmin == NULL or c == NULL:
        free(excluded)
        free(dmin)
        free(c)
        return NOMEM
    taken[0] = first
    excluded[first] = True
    while True:
        _singleton(cur, k, taken[k], V.p + k * V.s0, V.s1, dat)
        k += 1
        if k == K:
            break
        err = _all_costs(cur, k - 1, k, dat, fp, masked, c)
        if err:
            k = err
            break
        for r in range(n):
            x = c[r]
            if k > 1:
                y = dmin[r]  # np.minimum: NaN if either is NaN
                x = y if (y != y or (x == x and y < x)) else x
            dmin[r] = x
        floor = dmin[0]  # min(): NaN if any is NaN
        for r in range(n):
            if dmin[r] != dmin[r]:
                floor = dmin[r]
                break
            if dmin[r] < floor:
                floor = dmin[r]
        best, j = -INFINITY, -1
        for r in range(n):
            w = dmin[r] - floor
            if excluded[r] or not w > 0.0:
                continue
            s = logu.p[(k - 1) * logu.s0 + r * logu.s1] / w
            if j < 0 or s > best:
                best, j = s, r
        if j < 0 or best == -INFINITY:
            break
        taken[k] = j
        excluded[j] = True
    free(excluded)
    free(dmin)
    free(c)
    return k


def seed_rows(dat, cur, V, logu, Py_ssize_t first, fp, bint masked, taken):
    """Open singletons in ``cur`` (zeta, sigma, log_eta, counts, v; ``K = V.shape[0]``
    rows) at ``first``, then at rows drawn k-means++-style under the CRAFT cost: each
    next row the one of largest ``logu[j, r] / w_r`` (``j`` the round), ``w_r`` a row's
    smallest cost to the singletons so far minus the smallest such cost over all rows
    (``np.minimum`` and ``min`` with numpy's NaN rule), rows taken excluded. ``dat``:
    the block's inputs (``core._loop_inputs``); ``V[k]`` singleton ``k``'s features;
    ``fp``: the pass loop's floats (``F_delta`` at 1, ``sigma_override`` or -1 at 5).
    Fills ``taken`` with the rows opened and returns how many."""
    cdef Dat d
    cdef Cur c
    cdef B2 Vb
    cdef F2 lu
    cdef FP f
    cdef list keep = []
    cdef Py_ssize_t n_taken
    cdef int64_t k
    unpack_dat(dat, &d, keep)
    unpack_cur(cur, &c, True, keep)
    unpack_b2(V, &Vb, False, keep)
    unpack_f2(logu, &lu, False, False, keep, "logu")
    unpack_fp(fp, &f)
    cdef int64_t* tk = <int64_t*> unpack_1d(taken, b"i", 8, True, keep, "taken", &n_taken)
    cdef Py_ssize_t n = d.n_g0
    if (n_taken < Vb.n0 or c.zeta.n0 < Vb.n0 or Vb.n1 != c.v.n1 or Vb.n0 < 1
            or d.X0.n0 != n or not 0 <= first < n or lu.n0 < Vb.n0 - 1
            or (Vb.n0 > 1 and lu.n1 < n)):
        raise ValueError("seed_rows: V, logu, taken or the buffers do not match the block")
    with nogil:
        k = _seed(&d, &c, &Vb, &lu, first, &f, masked, tk, n)
    raise_status(<int> k if k < 0 else 0)
    return k
