# The pass loop's views of its arguments and the C functions fit_jit and seed_jit
# share with it (a cluster opened at a row, the costs of every row).
from libc.stdint cimport int64_t
from numpy cimport npy_bool

# A 2-D array seen from C: element (i, j) at p[i * s0 + j * s1] (strides in elements);
# f: numba's layout "F" (F- and not C-contiguous), which decides the BLAS call.
cdef struct F2:
    double* p
    Py_ssize_t n0, n1, s0, s1
    bint f

cdef struct I2:
    int* p
    Py_ssize_t n0, n1, s0, s1

cdef struct B2:
    npy_bool* p
    Py_ssize_t n0, n1, s0, s1

# A block's loop inputs (core._loop_inputs), unpacked once per call. 1-D arrays are
# contiguous (read-only ones copied when they are not).
cdef struct Dat:
    I2 codes            # 0: codes (n, Q), int32
    int64_t* offsets    # 1
    int64_t* L          # 2
    double* g0          # 3
    Py_ssize_t n_g0
    F2 X0               # 4: numeric cells (n, P), C- or F-contiguous
    F2 Mf               # 5: observed mask as floats (n, P), or (0, P)
    double* col_mean    # 6
    double* col_sd      # 7
    double* log_eta0    # 9 (S)
    double* logc        # 10
    F2 logn             # 11
    F2 sing             # 12
    int64_t* inv        # 13: every row's distinct row, or empty
    Py_ssize_t n_inv
    I2 dcodes           # 14: the distinct rows' codes
    double* dg0         # 15: their g0
    F2 X2               # 16: X0 * X0
    Py_ssize_t P, Q, S

# The clusters (zeta, sigma, log_eta, counts, v)
cdef struct Cur:
    F2 zeta
    F2 sigma
    F2 log_eta
    F2 counts
    B2 v

# Failures of the C functions (negative statuses): out of memory; a float divided by
# zero, where numba's kernels raised ZeroDivisionError (its error model is Python's).
cdef enum:
    NOMEM = -1
    ZERODIV = -2

# The loop's floats: threshold, F_delta, a0, b0, sigma_floor, sigma_override (or -1)
cdef struct FP:
    double threshold, F_delta, a0, b0, sigma_floor, sigma_override

cdef int raise_status(int status) except -1
cdef int unpack_dat(object dat, Dat* d, list keep) except -1
cdef int unpack_cur(object cur, Cur* c, bint write, list keep) except -1
cdef int unpack_fp(object fp, FP* f) except -1
cdef int unpack_f2(object o, F2* out, bint write, bint contiguous, list keep,
                   str what) except -1
cdef int unpack_b2(object o, B2* out, bint write, list keep) except -1
cdef void* unpack_1d(object o, char kind, int itemsize, bint write, list keep, str what,
                     Py_ssize_t* size) except NULL

cdef void _singleton(const Cur* cur, Py_ssize_t c, Py_ssize_t i, const npy_bool* v_new,
                     Py_ssize_t vs, const Dat* dat) noexcept nogil
cdef int _all_costs(const Cur* cur, Py_ssize_t lo, Py_ssize_t hi, const Dat* dat,
                    const FP* fp, bint masked, double* D) noexcept nogil
