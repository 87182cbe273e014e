// fp16.h: IEEE half (fp16) and bfloat16 <-> fp32 conversion for the kernels,
// one value at a time and whole rows. The NPU carries its own conversions (it
// does not include ggml). Rounding is to nearest, ties to even, as F16C's
// vcvtps2ph with imm 0 and as ggml-cpu does, so results match it bit for bit.
//
// On x86 with F16C (and AVX-512F for 16 lanes) the hardware converts; every
// other target gets the portable bit manipulation below.

#ifndef HTP_FP16_H
#define HTP_FP16_H

#include <stdint.h>
#include <string.h>

#if defined(__F16C__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

static inline uint32_t htp_f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float htp_bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

// Portable fp16 -> fp32. Exact for every input (subnormals, inf, NaN).
static inline float htp_fp16_to_fp32_soft(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exp  = (h >> 10) & 0x1fu;
    const uint32_t man  = h & 0x3ffu;
    if (exp == 0x1f) {  // inf / NaN keep their payload
        return htp_bits_f32(sign | 0x7f800000u | (man << 13));
    }
    if (exp == 0) {
        // zero or subnormal: man * 2^-24, exactly representable in fp32
        const float v = (float)man * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    return htp_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

// Portable fp32 -> fp16, round to nearest even; overflow gives inf, NaN stays NaN.
static inline uint16_t htp_fp32_to_fp16_soft(float f) {
    const uint32_t x    = htp_f32_bits(f);
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    const uint32_t ax   = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) {  // inf or NaN (quiet the NaN, keep some payload)
        return sign | 0x7c00u | (ax > 0x7f800000u ? (uint16_t)(0x200u | ((ax >> 13) & 0x3ffu)) : 0);
    }
    if (ax >= 0x477ff000u) {  // rounds to >= 65520: inf
        return sign | 0x7c00u;
    }
    if (ax < 0x38800000u) {  // below 2^-14: subnormal half (or zero)
        // Adding 0.5 shifts the value's bits so that the FPU's own
        // round-to-nearest-even leaves the half mantissa in the low bits.
        const float    v = htp_bits_f32(ax) + 0.5f;
        const uint32_t m = htp_f32_bits(v) - htp_f32_bits(0.5f);
        return sign | (uint16_t)m;
    }
    // Normal: rebias the exponent, round the 13 dropped bits to nearest even
    // (a carry out of the mantissa correctly bumps the exponent).
    const uint32_t odd = (ax >> 13) & 1u;
    const uint32_t r   = ax + 0xfffu + odd - (112u << 23);
    return sign | (uint16_t)(r >> 13);
}

static inline float htp_fp16_to_fp32(uint16_t h) {
#if defined(__F16C__)
    return _cvtsh_ss(h);
#else
    return htp_fp16_to_fp32_soft(h);
#endif
}

static inline uint16_t htp_fp32_to_fp16(float f) {
#if defined(__F16C__)
    return (uint16_t)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
#else
    return htp_fp32_to_fp16_soft(f);
#endif
}

// bf16 is the top half of an fp32. To bf16: round to nearest even, NaN kept quiet.
static inline float htp_bf16_to_fp32(uint16_t h) {
    return htp_bits_f32((uint32_t)h << 16);
}

static inline uint16_t htp_fp32_to_bf16(float f) {
    const uint32_t x = htp_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) {
        return (uint16_t)((x >> 16) | 0x40u);
    }
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// Rows: n values from src to dst (no overlap).
// The vector loops run to bounds computed before them (n rounded down to
// the vector width): with "i + 8 <= n" as the condition, GCC 12 building for
// AVX2 without AVX-512 inlined these with n = 256 and warned of an overflow
// in a loop it had itself derived (-Waggressive-loop-optimizations).
static inline void htp_fp16_to_fp32_row(const uint16_t * src, float * dst, int64_t n) {
    int64_t i = 0;
#if defined(__AVX512F__)
    for (const int64_t n16 = n - n % 16; i < n16; i += 16) {
        _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(src + i))));
    }
#endif
#if defined(__F16C__)
    for (const int64_t n8 = n - n % 8; i < n8; i += 8) {
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
    }
#endif
    for (; i < n; i++) {
        dst[i] = htp_fp16_to_fp32(src[i]);
    }
}

static inline void htp_fp32_to_fp16_row(const float * src, uint16_t * dst, int64_t n) {
    int64_t i = 0;
#if defined(__AVX512F__)
    for (const int64_t n16 = n - n % 16; i < n16; i += 16) {
        _mm256_storeu_si256((__m256i *)(dst + i), _mm512_cvtps_ph(_mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
    }
#endif
#if defined(__F16C__)
    for (const int64_t n8 = n - n % 8; i < n8; i += 8) {
        _mm_storeu_si128((__m128i *)(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
    }
#endif
    for (; i < n; i++) {
        dst[i] = htp_fp32_to_fp16(src[i]);
    }
}

#endif  // HTP_FP16_H
