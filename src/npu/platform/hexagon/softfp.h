// softfp.h: the bit-level float and double helpers the runtime's exact
// arithmetic shares (compiler-rt.c's division and square root, strconv.c's
// decimal conversion). The one idea: a result is computed as an integer
// significand with two bits beyond the precision plus a sticky flag ("the
// exact value is a little more"), and rounded to nearest-even once, here.

#ifndef HTP_RT_SOFTFP_H
#define HTP_RT_SOFTFP_H

#include <stdint.h>

static inline uint32_t htp_softfp_f32_bits(float f) {
    uint32_t u;
    __builtin_memcpy(&u, &f, sizeof u);
    return u;
}

static inline float htp_softfp_f32_from(uint32_t u) {
    float f;
    __builtin_memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint64_t htp_softfp_f64_bits(double f) {
    uint64_t u;
    __builtin_memcpy(&u, &f, sizeof u);
    return u;
}

static inline double htp_softfp_f64_from(uint64_t u) {
    double f;
    __builtin_memcpy(&f, &u, sizeof f);
    return f;
}

// The value sig * 2^(e - 152) (sig < 2^26, its top bit at 25 when normal: 24
// significand bits and 2 more), plus "something below" when sticky, rounded
// to the nearest float, ties to even. Below the normal range the extra shift
// makes a subnormal; above it the result is infinity.
static inline float htp_softfp_round_f32(uint32_t sign, int e, uint32_t sig, int sticky) {
    if (e >= 255) {
        return htp_softfp_f32_from(sign | 0x7f800000u);
    }
    int shift = 2;
    if (e < 1) {
        shift += 1 - e;
        e = 0;
    }
    uint32_t m, rem, half;
    if (shift >= 32) {
        m      = 0;
        rem    = 0;
        half   = 1;
        sticky = sticky || sig != 0;
    } else {
        m    = sig >> shift;
        rem  = sig & ((1u << shift) - 1);
        half = 1u << (shift - 1);
    }
    if (rem > half || (rem == half && (sticky || (m & 1)))) {
        m++;
    }
    uint32_t bits;
    if (e == 0) {
        bits = m;  // a subnormal; rounding up to 2^23 gives the least normal
    } else {
        // m carries the hidden bit, which adds the last 1 to the exponent; a
        // carry out of the significand moves the exponent up once more.
        bits = ((uint32_t)(e - 1) << 23) + m;
        if (bits >= 0x7f800000u) {
            bits = 0x7f800000u;
        }
    }
    return htp_softfp_f32_from(sign | bits);
}

// The same for double: the value sig * 2^(e - 1077), sig's top bit at 54.
static inline double htp_softfp_round_f64(uint64_t sign, int e, uint64_t sig, int sticky) {
    if (e >= 2047) {
        return htp_softfp_f64_from(sign | 0x7ff0000000000000ull);
    }
    int shift = 2;
    if (e < 1) {
        shift += 1 - e;
        e = 0;
    }
    uint64_t m, rem, half;
    if (shift >= 64) {
        m      = 0;
        rem    = 0;
        half   = 1;
        sticky = sticky || sig != 0;
    } else {
        m    = sig >> shift;
        rem  = sig & ((1ull << shift) - 1);
        half = 1ull << (shift - 1);
    }
    if (rem > half || (rem == half && (sticky || (m & 1)))) {
        m++;
    }
    uint64_t bits;
    if (e == 0) {
        bits = m;
    } else {
        bits = ((uint64_t)(e - 1) << 52) + m;
        if (bits >= 0x7ff0000000000000ull) {
            bits = 0x7ff0000000000000ull;
        }
    }
    return htp_softfp_f64_from(sign | bits);
}

#endif  // HTP_RT_SOFTFP_H
