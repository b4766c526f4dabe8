# The pieces of CRAFT's compiled passes shared with the other kernel modules
# (cimported by loop_jit): numpy's pairwise sum and the fixed-budget selection.
from libc.stdint cimport int64_t
from numpy cimport npy_bool

cdef double pairwise_sum_c(const double* a, Py_ssize_t n, Py_ssize_t step) noexcept nogil
cdef int select_fixed_c(
    const double* sigma, Py_ssize_t K, Py_ssize_t P,
    const double* counts, const double* log_eta, const double* log_eta0, Py_ssize_t S,
    const int64_t* offsets, const int64_t* L, Py_ssize_t Q,
    Py_ssize_t n_num, Py_ssize_t n_cat, npy_bool* v, Py_ssize_t D,
) noexcept nogil
