/* sparcl's single-precision rounding of the pair differences (dissimilarity_jit.pyx):
 * one pair's row of the correction matrix, element by element (no sum: the result is
 * the same whatever the vector width; no fused multiply-add: -ffp-contract=off).
 *
 * On x86-64 Linux with GCC or clang the functions are compiled twice, for the
 * baseline and for AVX2, and the loader picks the one the processor runs
 * (target_clones: the AVX2 copy handles four doubles at a time instead of two).
 */
#ifndef SPARSECLUST_ROUNDING_H
#define SPARSECLUST_ROUNDING_H

#include <stddef.h>
#include <string.h> /* defines __GLIBC__ on glibc */

#if defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define SC_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef SC_CLONES
#define SC_CLONES
#endif

/* out[f] = (t - d)(t + d), d = a[f] - b[f] in double, t = d rounded to float */
SC_CLONES static void sc_rounding_row(const float *a, const float *b, double *out, ptrdiff_t p) {
    for (ptrdiff_t f = 0; f < p; f++) {
        double d = (double)a[f] - (double)b[f];
        double t = (double)(float)d;
        out[f] = (t - d) * (t + d);
    }
}

/* the same in float: t = a[f] - b[f] and its error e (TwoSum), out[f] = -e (2t + e) */
SC_CLONES static void sc_rounding_row32(const float *a, const float *b, float *out, ptrdiff_t p) {
    for (ptrdiff_t f = 0; f < p; f++) {
        float x = a[f];
        float y = -b[f];
        float s = x + y;
        float bv = s - x;
        float av = s - bv;
        float e = (x - av) + (y - bv);
        out[f] = -e * (s + s + e);
    }
}

#endif
