# CRAFT's categorical cost terms and per-cluster statistics: the C functions the pass
# loop (loop_jit) shares with the Python-callable kernels of costs_jit.
from libc.stdint cimport int64_t

# the integer types of the codes (core._code_type: int8, int16, int32; int64 in tests)
ctypedef fused code_t:
    signed char
    short
    int
    long

cdef void centres_c(
    const double* s1, const double* s2, const double* cnt, const double* nk,
    const int64_t* keep, Py_ssize_t K2, const double* col_mean, const double* col_sd,
    Py_ssize_t P, double sigma_floor, double* zeta, double* sigma,
) noexcept nogil
cdef void count_all_c(
    const int* codes, Py_ssize_t cs0, Py_ssize_t cs1, Py_ssize_t Q,
    const int64_t* offsets, const int64_t* labels, Py_ssize_t n,
    int64_t* out, Py_ssize_t slots,
) noexcept nogil
cdef void row_min_c(
    const double* D, Py_ssize_t n, Py_ssize_t K, int64_t* idx, double* dmin
) noexcept nogil
