// vec.h: the kernels' vector layer. One vector is 128 bytes, the width of a
// Hexagon HVX register: 32 fp32 lanes (htp_vf32) or 32 int32 lanes (htp_vi32).
// Kernels are written against these types and the row functions below so the
// same source can later target HVX; on x86 the compiler splits each vector
// into AVX-512 (or AVX2) registers.
//
// Two things the compiler will not do on its own here, and why we do them:
//   - ISO C mode (-std=c11) turns off floating-point contraction, so a*b+c
//     stays a multiply and an add. htp_vf32_fma uses the FMA instructions
//     explicitly where the target has them.
//   - expf does not vectorise. htp_vf32_exp is our own: range reduction by
//     ln 2, a degree-7 polynomial, then scaling by 2^n through the exponent
//     bits (relative error about 2e-7 over the whole float range).
//
// Row helpers take counts of elements and pointers to plain float arrays;
// tails shorter than a vector go through partial loads and stores.

#ifndef HTP_VEC_H
#define HTP_VEC_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fp16.h"
#include "proto/htp-proto.h"

#if defined(__AVX512F__) || defined(__FMA__) || defined(__AVX__)
#include <immintrin.h>
#endif

#define HTP_VEC_BYTES 128
#define HTP_VF32_N    32  // fp32 lanes per vector

typedef float   htp_vf32 __attribute__((vector_size(HTP_VEC_BYTES)));
typedef int32_t htp_vi32 __attribute__((vector_size(HTP_VEC_BYTES)));

// ---------------------------------------------------------------------------
// Vectors
// ---------------------------------------------------------------------------

static inline htp_vf32 htp_vf32_splat(float x) {
    return (htp_vf32){0} + x;
}

static inline htp_vf32 htp_vf32_load(const float * p) {  // unaligned
    htp_vf32 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void htp_vf32_store(float * p, htp_vf32 v) {  // unaligned
    memcpy(p, &v, sizeof v);
}

// The first n (< HTP_VF32_N) lanes from p, the others set to fill.
static inline htp_vf32 htp_vf32_load_n(const float * p, int64_t n, float fill) {
    htp_vf32 v = htp_vf32_splat(fill);
    memcpy(&v, p, (size_t)n * sizeof(float));
    return v;
}

static inline void htp_vf32_store_n(float * p, htp_vf32 v, int64_t n) {
    memcpy(p, &v, (size_t)n * sizeof(float));
}

// Lane-wise a < b as a mask (lanes all ones or all zeros; false where either
// is NaN, as C's <). GCC turns a comparison of two 128-byte generic vectors
// into one scalar compare per lane (about 190 instructions on AVX-512, which
// made exp-based ops 5x slower), so the x86 targets compare their native
// registers and widen the result.
static inline htp_vi32 htp_vf32_lt(htp_vf32 a, htp_vf32 b) {
#if defined(__AVX512F__) && defined(__AVX512DQ__)
    union {
        htp_vf32 v;
        __m512   h[2];
    } x = {a}, y = {b};
    union {
        htp_vi32 v;
        __m512i  h[2];
    } r;
    for (int i = 0; i < 2; i++) {
        r.h[i] = _mm512_movm_epi32(_mm512_cmp_ps_mask(x.h[i], y.h[i], _CMP_LT_OQ));
    }
    return r.v;
#elif defined(__AVX__)
    union {
        htp_vf32 v;
        __m256   h[4];
    } x = {a}, y = {b}, r;
    for (int i = 0; i < 4; i++) {
        r.h[i] = _mm256_cmp_ps(x.h[i], y.h[i], _CMP_LT_OQ);
    }
    return (htp_vi32)r.v;
#else
    return a < b;
#endif
}

static inline htp_vi32 htp_vf32_gt(htp_vf32 a, htp_vf32 b) {
    return htp_vf32_lt(b, a);
}

// Lane-wise mask ? a : b, mask lanes all ones or all zeros (a comparison result).
static inline htp_vf32 htp_vf32_select(htp_vi32 mask, htp_vf32 a, htp_vf32 b) {
    return (htp_vf32)((mask & (htp_vi32)a) | (~mask & (htp_vi32)b));
}

// a > b ? a : b lane-wise (so b where either is NaN).
static inline htp_vf32 htp_vf32_max(htp_vf32 a, htp_vf32 b) {
    return htp_vf32_select(htp_vf32_gt(a, b), a, b);
}

// a < b ? a : b lane-wise (so b where either is NaN).
static inline htp_vf32 htp_vf32_min(htp_vf32 a, htp_vf32 b) {
    return htp_vf32_select(htp_vf32_lt(a, b), a, b);
}

// a * b + c with one rounding where the target has FMA.
static inline htp_vf32 htp_vf32_fma(htp_vf32 a, htp_vf32 b, htp_vf32 c) {
#if defined(__AVX512F__)
    union {
        htp_vf32 v;
        __m512   h[2];
    } x = {a}, y = {b}, z = {c}, r;
    r.h[0] = _mm512_fmadd_ps(x.h[0], y.h[0], z.h[0]);
    r.h[1] = _mm512_fmadd_ps(x.h[1], y.h[1], z.h[1]);
    return r.v;
#elif defined(__FMA__)
    union {
        htp_vf32 v;
        __m256   h[4];
    } x = {a}, y = {b}, z = {c}, r;
    for (int i = 0; i < 4; i++) {
        r.h[i] = _mm256_fmadd_ps(x.h[i], y.h[i], z.h[i]);
    }
    return r.v;
#else
    return a * b + c;
#endif
}

// 32 fp16 values (64 bytes at p, any alignment) widened to one fp32 vector.
static inline htp_vf32 htp_vf32_load_f16(const uint8_t * p) {
#if defined(__AVX512F__)
    union {
        htp_vf32 v;
        __m512   h[2];
    } r;
    r.h[0] = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)p));
    r.h[1] = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(p + 32)));
    return r.v;
#elif defined(__F16C__)
    union {
        htp_vf32 v;
        __m256   h[4];
    } r;
    for (int i = 0; i < 4; i++) {
        r.h[i] = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i)));
    }
    return r.v;
#else
    htp_vf32 v;
    for (int i = 0; i < HTP_VF32_N; i++) {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        v[i] = htp_fp16_to_fp32(h);
    }
    return v;
#endif
}

// The first n (< HTP_VF32_N) fp16 values at p widened, the other lanes 0.
static inline htp_vf32 htp_vf32_load_f16_n(const uint8_t * p, int64_t n) {
    uint8_t t[2 * HTP_VF32_N] = {0};
    memcpy(t, p, (size_t)n * 2);
    return htp_vf32_load_f16(t);
}

static inline float htp_vf32_hsum(htp_vf32 v) {
    // Halve the vector until one lane is left: a tree keeps rounding error low.
    float t[HTP_VF32_N];
    memcpy(t, &v, sizeof t);
    for (int w = HTP_VF32_N / 2; w > 0; w /= 2) {
        for (int i = 0; i < w; i++) {
            t[i] += t[i + w];
        }
    }
    return t[0];
}

static inline float htp_vf32_hmax(htp_vf32 v) {
    float t[HTP_VF32_N];
    memcpy(t, &v, sizeof t);
    for (int w = HTP_VF32_N / 2; w > 0; w /= 2) {
        for (int i = 0; i < w; i++) {
            t[i] = t[i] > t[i + w] ? t[i] : t[i + w];
        }
    }
    return t[0];
}

// e^x lane-wise. x below ln(FLT_MIN) gives 0 (so -inf gives 0), above
// ln(FLT_MAX) gives +inf; NaN stays NaN.
static inline htp_vf32 htp_vf32_exp(htp_vf32 x) {
    const float    lo = -87.33654f, hi = 88.72283f;
    const htp_vf32 xc = htp_vf32_min(htp_vf32_max(x, htp_vf32_splat(lo)), htp_vf32_splat(hi));

    // n = round(x / ln 2): adding 1.5 * 2^23 leaves the rounded integer in the
    // low mantissa bits.
    const float    shifter = 12582912.0f;
    const htp_vf32 t       = htp_vf32_fma(xc, htp_vf32_splat(1.44269504f), htp_vf32_splat(shifter));
    const htp_vi32 n       = (htp_vi32)t - (htp_vi32)htp_vf32_splat(shifter);
    const htp_vf32 nf      = t - shifter;

    // r = x - n ln 2 in two steps (ln 2 split so n * hi is exact): |r| <= ln(2)/2.
    htp_vf32 r = htp_vf32_fma(nf, htp_vf32_splat(-0.693145751953125f), xc);
    r          = htp_vf32_fma(nf, htp_vf32_splat(-1.428606765330187e-06f), r);

    // e^r by its Taylor series to r^7 (truncation below 1e-8 on this interval).
    htp_vf32 p = htp_vf32_splat(1.0f / 5040.0f);
    p          = htp_vf32_fma(p, r, htp_vf32_splat(1.0f / 720.0f));
    p          = htp_vf32_fma(p, r, htp_vf32_splat(1.0f / 120.0f));
    p          = htp_vf32_fma(p, r, htp_vf32_splat(1.0f / 24.0f));
    p          = htp_vf32_fma(p, r, htp_vf32_splat(1.0f / 6.0f));
    p          = htp_vf32_fma(p, r, htp_vf32_splat(0.5f));
    p          = htp_vf32_fma(p, r, htp_vf32_splat(1.0f));
    p          = htp_vf32_fma(p, r, htp_vf32_splat(1.0f));

    // 2^n as two factors 2^(n/2) * 2^(n - n/2): n reaches 128 and -126, beyond
    // what one normal float exponent holds.
    const htp_vi32 n1 = n >> 1;
    const htp_vi32 n2 = n - n1;
    const htp_vf32 s1 = (htp_vf32)((n1 + 127) << 23);
    const htp_vf32 s2 = (htp_vf32)((n2 + 127) << 23);
    htp_vf32       y  = p * s1 * s2;

    y = htp_vf32_select(htp_vf32_lt(x, htp_vf32_splat(lo)), htp_vf32_splat(0.0f), y);
    y = htp_vf32_select(htp_vf32_gt(x, htp_vf32_splat(hi)), htp_vf32_splat(INFINITY), y);
    return y;
}

// x * sigmoid(x) = x / (1 + e^-x). Large negative x: e^-x = inf, result -0.
static inline htp_vf32 htp_vf32_silu(htp_vf32 x) {
    return x / (htp_vf32_splat(1.0f) + htp_vf32_exp(-x));
}

static inline float htp_exp_f32(float x) {
    return htp_vf32_exp(htp_vf32_splat(x))[0];
}

// ---------------------------------------------------------------------------
// Register-width vectors, for loop-carried accumulators
// ---------------------------------------------------------------------------
//
// GCC keeps a vector wider than the target's widest register in memory when
// it is carried around a loop, so an accumulator of 128 bytes would be stored
// and reloaded on every iteration on x86. Reductions (dot products, sums of
// squares) therefore accumulate in htp_vr: one native register (64 bytes with
// AVX-512, 32 with AVX2, 128 = one HVX register elsewhere).

#if defined(__AVX512F__)
#define HTP_VR_BYTES 64
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define HTP_VR_BYTES 32
#else
#define HTP_VR_BYTES HTP_VEC_BYTES
#endif
#define HTP_VR_N (HTP_VR_BYTES / 4)  // fp32 lanes per register

typedef float htp_vr __attribute__((vector_size(HTP_VR_BYTES)));

static inline htp_vr htp_vr_splat(float x) {
    return (htp_vr){0} + x;
}

static inline htp_vr htp_vr_load(const float * p) {
    htp_vr v;
    memcpy(&v, p, sizeof v);
    return v;
}

// The first n (< HTP_VR_N) lanes from p, the others 0.
static inline htp_vr htp_vr_load_n(const float * p, int64_t n) {
    htp_vr v = htp_vr_splat(0.0f);
    memcpy(&v, p, (size_t)n * sizeof(float));
    return v;
}

static inline htp_vr htp_vr_fma(htp_vr a, htp_vr b, htp_vr c) {
#if HTP_VR_BYTES == 64
    return _mm512_fmadd_ps(a, b, c);
#elif HTP_VR_BYTES == 32
    return _mm256_fmadd_ps(a, b, c);
#else
    return a * b + c;
#endif
}

// HTP_VR_N fp16 values at p (any alignment) widened to fp32.
static inline htp_vr htp_vr_load_f16(const uint8_t * p) {
#if HTP_VR_BYTES == 64
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)p));
#elif HTP_VR_BYTES == 32
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)p));
#else
    htp_vr v;
    for (int i = 0; i < HTP_VR_N; i++) {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        v[i] = htp_fp16_to_fp32(h);
    }
    return v;
#endif
}

static inline htp_vr htp_vr_load_f16_n(const uint8_t * p, int64_t n) {
    uint8_t t[2 * HTP_VR_N] = {0};
    memcpy(t, p, (size_t)n * 2);
    return htp_vr_load_f16(t);
}

static inline float htp_vr_hsum(htp_vr v) {
    float t[HTP_VR_N];
    memcpy(t, &v, sizeof t);
    for (int w = HTP_VR_N / 2; w > 0; w /= 2) {
        for (int i = 0; i < w; i++) {
            t[i] += t[i + w];
        }
    }
    return t[0];
}

// ---------------------------------------------------------------------------
// Rows of fp32
// ---------------------------------------------------------------------------

enum htp_vec_binop { HTP_VEC_ADD, HTP_VEC_SUB, HTP_VEC_MUL, HTP_VEC_DIV };

static inline htp_vf32 htp_vf32_binop(enum htp_vec_binop op, htp_vf32 a, htp_vf32 b) {
    switch (op) {
        case HTP_VEC_ADD:
            return a + b;
        case HTP_VEC_SUB:
            return a - b;
        case HTP_VEC_MUL:
            return a * b;
        default:
            return a / b;
    }
}

// z[i] = x[i] op y[i]. z may alias x or y.
static inline void htp_vec_binop_f32(enum htp_vec_binop op, int64_t n, float * z, const float * x, const float * y) {
    int64_t i = 0;
    for (; i + HTP_VF32_N <= n; i += HTP_VF32_N) {
        htp_vf32_store(z + i, htp_vf32_binop(op, htp_vf32_load(x + i), htp_vf32_load(y + i)));
    }
    if (i < n) {
        // Padding lanes compute 1 op 1: no spurious division by zero.
        const htp_vf32 a = htp_vf32_load_n(x + i, n - i, 1.0f), b = htp_vf32_load_n(y + i, n - i, 1.0f);
        htp_vf32_store_n(z + i, htp_vf32_binop(op, a, b), n - i);
    }
}

// z[i] = x[i] op s.
static inline void htp_vec_binop_scalar_f32(enum htp_vec_binop op, int64_t n, float * z, const float * x, float s) {
    const htp_vf32 b = htp_vf32_splat(s);
    int64_t        i = 0;
    for (; i + HTP_VF32_N <= n; i += HTP_VF32_N) {
        htp_vf32_store(z + i, htp_vf32_binop(op, htp_vf32_load(x + i), b));
    }
    if (i < n) {
        htp_vf32_store_n(z + i, htp_vf32_binop(op, htp_vf32_load_n(x + i, n - i, 1.0f), b), n - i);
    }
}

// y[i] = x[i] * s + b (as ggml: multiply, then add; not fused).
static inline void htp_vec_scale_bias_f32(int64_t n, float * y, const float * x, float s, float b) {
    const htp_vf32 vs = htp_vf32_splat(s), vb = htp_vf32_splat(b);
    int64_t        i = 0;
    for (; i + HTP_VF32_N <= n; i += HTP_VF32_N) {
        htp_vf32_store(y + i, htp_vf32_load(x + i) * vs + vb);
    }
    if (i < n) {
        htp_vf32_store_n(y + i, htp_vf32_load_n(x + i, n - i, 0.0f) * vs + vb, n - i);
    }
}

static inline void htp_vec_silu_f32(int64_t n, float * y, const float * x) {
    int64_t i = 0;
    for (; i + HTP_VF32_N <= n; i += HTP_VF32_N) {
        htp_vf32_store(y + i, htp_vf32_silu(htp_vf32_load(x + i)));
    }
    if (i < n) {
        htp_vf32_store_n(y + i, htp_vf32_silu(htp_vf32_load_n(x + i, n - i, 0.0f)), n - i);
    }
}

// y[i] = silu(x[i]) * g[i].
static inline void htp_vec_swiglu_f32(int64_t n, float * y, const float * x, const float * g) {
    int64_t i = 0;
    for (; i + HTP_VF32_N <= n; i += HTP_VF32_N) {
        htp_vf32_store(y + i, htp_vf32_silu(htp_vf32_load(x + i)) * htp_vf32_load(g + i));
    }
    if (i < n) {
        const htp_vf32 a = htp_vf32_load_n(x + i, n - i, 0.0f), b = htp_vf32_load_n(g + i, n - i, 0.0f);
        htp_vf32_store_n(y + i, htp_vf32_silu(a) * b, n - i);
    }
}

static inline float htp_vec_max_f32(int64_t n, const float * x) {
    htp_vf32 m = htp_vf32_splat(-INFINITY);
    int64_t  i = 0;
    for (; i + HTP_VF32_N <= n; i += HTP_VF32_N) {
        m = htp_vf32_max(m, htp_vf32_load(x + i));
    }
    if (i < n) {
        m = htp_vf32_max(m, htp_vf32_load_n(x + i, n - i, -INFINITY));
    }
    return htp_vf32_hmax(m);
}

// sum x[i], fp32, two register accumulators.
static inline float htp_vec_sum_f32(int64_t n, const float * x) {
    htp_vr  s0 = htp_vr_splat(0.0f), s1 = s0;
    int64_t i = 0;
    for (; i + 2 * HTP_VR_N <= n; i += 2 * HTP_VR_N) {
        s0 += htp_vr_load(x + i);
        s1 += htp_vr_load(x + i + HTP_VR_N);
    }
    for (; i < n; i += HTP_VR_N) {
        s0 += n - i < HTP_VR_N ? htp_vr_load_n(x + i, n - i) : htp_vr_load(x + i);
    }
    return htp_vr_hsum(s0 + s1);
}

static inline float htp_vec_sumsq_f32(int64_t n, const float * x) {
    htp_vr  s0 = htp_vr_splat(0.0f), s1 = s0;
    int64_t i = 0;
    for (; i + 2 * HTP_VR_N <= n; i += 2 * HTP_VR_N) {
        const htp_vr a = htp_vr_load(x + i), b = htp_vr_load(x + i + HTP_VR_N);
        s0 = htp_vr_fma(a, a, s0);
        s1 = htp_vr_fma(b, b, s1);
    }
    for (; i < n; i += HTP_VR_N) {
        const htp_vr a = n - i < HTP_VR_N ? htp_vr_load_n(x + i, n - i) : htp_vr_load(x + i);
        s0             = htp_vr_fma(a, a, s0);
    }
    return htp_vr_hsum(s0 + s1);
}

// y[i] = e^(x[i] - m); returns the sum of the y[i]. y may alias x.
static inline float htp_vec_exp_sub_sum_f32(int64_t n, float * y, const float * x, float m) {
    const htp_vf32 vm = htp_vf32_splat(m);
    htp_vf32       s  = htp_vf32_splat(0.0f);
    int64_t        i  = 0;
    for (; i + HTP_VF32_N <= n; i += HTP_VF32_N) {
        const htp_vf32 e = htp_vf32_exp(htp_vf32_load(x + i) - vm);
        htp_vf32_store(y + i, e);
        s += e;
    }
    if (i < n) {
        // Padding lanes are -inf: e^-inf = 0 adds nothing to the sum.
        const htp_vf32 e = htp_vf32_exp(htp_vf32_load_n(x + i, n - i, -INFINITY) - vm);
        htp_vf32_store_n(y + i, e, n - i);
        s += e;
    }
    return htp_vf32_hsum(s);
}

// sum x[i] * y[i], fp32, four independent accumulators to hide FMA latency.
static inline float htp_vec_dot_f32(int64_t n, const float * x, const float * y) {
    htp_vr  s0 = htp_vr_splat(0.0f), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 4 * HTP_VR_N <= n; i += 4 * HTP_VR_N) {
        s0 = htp_vr_fma(htp_vr_load(x + i), htp_vr_load(y + i), s0);
        s1 = htp_vr_fma(htp_vr_load(x + i + HTP_VR_N), htp_vr_load(y + i + HTP_VR_N), s1);
        s2 = htp_vr_fma(htp_vr_load(x + i + 2 * HTP_VR_N), htp_vr_load(y + i + 2 * HTP_VR_N), s2);
        s3 = htp_vr_fma(htp_vr_load(x + i + 3 * HTP_VR_N), htp_vr_load(y + i + 3 * HTP_VR_N), s3);
    }
    for (; i < n; i += HTP_VR_N) {
        const int64_t k = n - i < HTP_VR_N ? n - i : HTP_VR_N;
        s0              = htp_vr_fma(htp_vr_load_n(x + i, k), htp_vr_load_n(y + i, k), s0);
    }
    return htp_vr_hsum((s0 + s1) + (s2 + s3));
}

// ---------------------------------------------------------------------------
// Strided rows of any float type <-> contiguous fp32
// ---------------------------------------------------------------------------

// Converts n elements of a row of type (F32, F16 or BF16; check() has refused
// others) whose elements are nb bytes apart into dst.
static inline void htp_row_load_f32(float * dst, const uint8_t * src, int64_t nb, uint32_t type, int64_t n) {
    if (type == HTP_TYPE_F32) {
        // memmove: dst may be another operand's memory, and nothing keeps two
        // operands of a batch from overlapping (an overlapping memcpy is undefined).
        if (nb == 4) {
            memmove(dst, src, (size_t)n * 4);
        } else {
            for (int64_t i = 0; i < n; i++) {
                memmove(dst + i, src + i * nb, 4);
            }
        }
    } else if (type == HTP_TYPE_F16) {
        if (nb == 2 && ((uintptr_t)src & 1) == 0) {
            htp_fp16_to_fp32_row((const uint16_t *)(const void *)src, dst, n);
        } else {
            for (int64_t i = 0; i < n; i++) {
                uint16_t h;
                memcpy(&h, src + i * nb, 2);
                dst[i] = htp_fp16_to_fp32(h);
            }
        }
    } else {  // BF16
        for (int64_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, src + i * nb, 2);
            dst[i] = htp_bf16_to_fp32(h);
        }
    }
}

static inline void htp_row_store_f32(uint8_t * dst, int64_t nb, uint32_t type, const float * src, int64_t n) {
    if (type == HTP_TYPE_F32) {
        if (nb == 4) {
            memmove(dst, src, (size_t)n * 4);  // may overlap, as in htp_row_load_f32
        } else {
            for (int64_t i = 0; i < n; i++) {
                memmove(dst + i * nb, src + i, 4);
            }
        }
    } else if (type == HTP_TYPE_F16) {
        if (nb == 2 && ((uintptr_t)dst & 1) == 0) {
            htp_fp32_to_fp16_row(src, (uint16_t *)(void *)dst, n);
        } else {
            for (int64_t i = 0; i < n; i++) {
                const uint16_t h = htp_fp32_to_fp16(src[i]);
                memcpy(dst + i * nb, &h, 2);
            }
        }
    } else {  // BF16
        for (int64_t i = 0; i < n; i++) {
            const uint16_t h = htp_fp32_to_bf16(src[i]);
            memcpy(dst + i * nb, &h, 2);
        }
    }
}

#endif  // HTP_VEC_H
