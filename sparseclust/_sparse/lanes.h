/* Sums whose order is free (the screens of the compiled Hartigan-Wong stages and their
 * estimate of a partition's within sum of squares: every use is checked against a
 * bound that holds in any order of summation), taken in lanes that vectorise.
 *
 * The order is fixed here, the same on every machine and compiler. A block is
 * SC_ACC * n consecutive terms, n = 16 bytes / sizeof(T) (2 doubles, 4 floats): term
 * j of a block goes to accumulator j / n, lane j % n. After the last full block the
 * accumulators are added as (a0 + a1) + (a2 + a3), lane by lane, the lanes of that
 * sum pairwise (lane l + lane l + n/2, halving), and the terms after the last full
 * block one by one. With GCC or clang an accumulator is a 16-byte vector (their vector
 * extensions: whole vectors are added, nothing is reassociated by the compiler);
 * other compilers (or SC_SCALAR defined) run the same order on scalars. No fused multiply-add: the package
 * is built with -ffp-contract=off.
 */
#ifndef SPARSECLUST_LANES_H
#define SPARSECLUST_LANES_H

#include <stddef.h>
#include <string.h>

#define SC_ACC 4 /* accumulators */

#if (defined(__GNUC__) || defined(__clang__)) && !defined(SC_SCALAR)
typedef double sc_v2d __attribute__((vector_size(16)));
typedef float sc_v4f __attribute__((vector_size(16)));

/* acc[0..SC_ACC) are the accumulators; x, y the operands of a term; OP their term */
#define SC_BLOCKS(T, V, N, TERM)                                                      \
    V acc[SC_ACC];                                                                    \
    T lane[N];                                                                        \
    ptrdiff_t j = 0;                                                                  \
    for (int k_ = 0; k_ < SC_ACC; k_++) acc[k_] = (V){0};                             \
    for (; j + SC_ACC * N <= p; j += SC_ACC * N) {                                    \
        for (int k_ = 0; k_ < SC_ACC; k_++) {                                         \
            V x, y;                                                                   \
            memcpy(&x, u + j + k_ * N, sizeof x);                                     \
            memcpy(&y, v + j + k_ * N, sizeof y);                                     \
            acc[k_] += TERM;                                                          \
        }                                                                             \
    }                                                                                 \
    acc[0] = (acc[0] + acc[1]) + (acc[2] + acc[3]);                                   \
    memcpy(lane, &acc[0], sizeof lane);
#else
#define SC_BLOCKS(T, V, N, TERM)                                                      \
    T acc[SC_ACC][N];                                                                 \
    T lane[N];                                                                        \
    ptrdiff_t j = 0;                                                                  \
    for (int k_ = 0; k_ < SC_ACC; k_++)                                               \
        for (int m_ = 0; m_ < N; m_++) acc[k_][m_] = 0;                               \
    for (; j + SC_ACC * N <= p; j += SC_ACC * N) {                                    \
        for (int k_ = 0; k_ < SC_ACC; k_++)                                           \
            for (int m_ = 0; m_ < N; m_++) {                                          \
                T x = u[j + k_ * N + m_], y = v[j + k_ * N + m_];                     \
                acc[k_][m_] = (T)(acc[k_][m_] + (TERM));                              \
            }                                                                         \
    }                                                                                 \
    for (int m_ = 0; m_ < N; m_++)                                                    \
        lane[m_] = (T)((T)(acc[0][m_] + acc[1][m_]) + (T)(acc[2][m_] + acc[3][m_]));
#endif

/* the lanes added pairwise, halving: lane[0] */
#define SC_LANES_SUM(T, N)                                                            \
    for (int w_ = N / 2; w_ > 0; w_ /= 2)                                             \
        for (int l_ = 0; l_ < w_; l_++) lane[l_] = (T)(lane[l_] + lane[l_ + w_]);

/* u . v */
static inline double sc_dot_d(const double *u, const double *v, ptrdiff_t p) {
    SC_BLOCKS(double, sc_v2d, 2, x * y)
    SC_LANES_SUM(double, 2)
    for (; j < p; j++) lane[0] += u[j] * v[j];
    return lane[0];
}

static inline float sc_dot_f(const float *u, const float *v, ptrdiff_t p) {
    SC_BLOCKS(float, sc_v4f, 4, x * y)
    SC_LANES_SUM(float, 4)
    for (; j < p; j++) lane[0] = (float)(lane[0] + u[j] * v[j]);
    return lane[0];
}

/* u . v and u . w (each as sc_dot_*) */
static inline void sc_dot_d2(const double *u, const double *v, const double *w, ptrdiff_t p,
                             double *s_out, double *t_out) {
    *s_out = sc_dot_d(u, v, p);
    *t_out = sc_dot_d(u, w, p);
}

static inline void sc_dot_f2(const float *u, const float *v, const float *w, ptrdiff_t p,
                             float *s_out, float *t_out) {
    *s_out = sc_dot_f(u, v, p);
    *t_out = sc_dot_f(u, w, p);
}

/* |u - v|^2 */
static inline double sc_sqdiff_d(const double *u, const double *v, ptrdiff_t p) {
    double d;
    SC_BLOCKS(double, sc_v2d, 2, (x - y) * (x - y))
    SC_LANES_SUM(double, 2)
    for (; j < p; j++) {
        d = u[j] - v[j];
        lane[0] += d * d;
    }
    return lane[0];
}

/* |u - v|^2 (as sc_sqdiff_d), and s += u - v term by term */
static inline double sc_sqdiff_acc_d(const double *u, const double *v, double *s, ptrdiff_t p) {
    for (ptrdiff_t i = 0; i < p; i++) s[i] += u[i] - v[i];
    return sc_sqdiff_d(u, v, p);
}

#endif
