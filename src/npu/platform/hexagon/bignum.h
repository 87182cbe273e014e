// bignum.h: fixed-size unsigned big integers, just enough for exact decimal
// <-> binary conversion (printf.c's %f/%e/%g, strconv.c's strtod). The one
// idea: a double is m * 2^e exactly, and a decimal string is D * 10^E
// exactly, so with integers of a few thousand bits each conversion is done
// once, exactly, and rounded once: no tables of powers, no error analysis.
// 128 words of 32 bits hold 4096 bits: a 800-digit decimal times 2^1100, the
// largest strtod needs (printf needs 1100 bits).

#ifndef HTP_RT_BIGNUM_H
#define HTP_RT_BIGNUM_H

#include <stdint.h>

#define HTP_BIG_WORDS 128

struct htp_big {
    int      n;  // words in use; w[n - 1] != 0 unless n == 0
    uint32_t w[HTP_BIG_WORDS];
};

static inline void htp_big_trim(struct htp_big * b) {
    while (b->n > 0 && b->w[b->n - 1] == 0) {
        b->n--;
    }
}

static inline void htp_big_set_u64(struct htp_big * b, uint64_t v) {
    b->w[0] = (uint32_t)v;
    b->w[1] = (uint32_t)(v >> 32);
    b->n    = 2;
    htp_big_trim(b);
}

static inline int htp_big_is_zero(const struct htp_big * b) {
    return b->n == 0;
}

static inline int htp_big_bitlen(const struct htp_big * b) {
    return b->n == 0 ? 0 : 32 * b->n - __builtin_clz(b->w[b->n - 1]);
}

// b <<= s. Callers keep the result within HTP_BIG_WORDS. Bits first (in
// place, upwards, through a 64-bit carry), then whole words. Not one pass of
// (w[j] << bits) | (w[j - 1] >> (32 - bits)) with bits = s % 32: clang 14
// turns that into a funnel shift, drops the "% 32" (a funnel shift takes its
// amount mod 32) and Hexagon's lowering then shifts the register pair by all
// of s. (This loop in turn needs the toolchain's -enable-pipeliner=false: the
// software pipeliner lost its carry when the loop ran twice.)
static inline void htp_big_shl(struct htp_big * b, int s) {
    if (b->n == 0 || s == 0) {
        return;
    }
    int bits = s % 32, words = s / 32;
    if (bits != 0) {
        uint32_t carry = 0;
        for (int i = 0; i < b->n; i++) {
            uint64_t t = ((uint64_t)b->w[i] << bits) | carry;
            b->w[i]    = (uint32_t)t;
            carry      = (uint32_t)(t >> 32);
        }
        if (carry != 0) {
            b->w[b->n++] = carry;
        }
    }
    if (words != 0) {
        for (int i = b->n - 1; i >= 0; i--) {
            b->w[i + words] = b->w[i];
        }
        for (int i = 0; i < words; i++) {
            b->w[i] = 0;
        }
        b->n += words;
    }
}

static inline void htp_big_shr1(struct htp_big * b) {
    for (int i = 0; i < b->n; i++) {
        b->w[i] = (b->w[i] >> 1) | (i + 1 < b->n ? b->w[i + 1] << 31 : 0);
    }
    htp_big_trim(b);
}

// b = b * m + a.
static inline void htp_big_mul_add(struct htp_big * b, uint32_t m, uint32_t a) {
    uint64_t carry = a;
    for (int i = 0; i < b->n; i++) {
        uint64_t t = (uint64_t)b->w[i] * m + carry;
        b->w[i]    = (uint32_t)t;
        carry      = t >> 32;
    }
    if (carry != 0) {
        b->w[b->n++] = (uint32_t)carry;
    }
}

// b /= d; returns b % d.
static inline uint32_t htp_big_div_small(struct htp_big * b, uint32_t d) {
    uint64_t r = 0;
    for (int i = b->n - 1; i >= 0; i--) {
        uint64_t t = (r << 32) | b->w[i];
        b->w[i]    = (uint32_t)(t / d);
        r          = t % d;
    }
    htp_big_trim(b);
    return (uint32_t)r;
}

static inline int htp_big_cmp(const struct htp_big * a, const struct htp_big * b) {
    if (a->n != b->n) {
        return a->n < b->n ? -1 : 1;
    }
    for (int i = a->n - 1; i >= 0; i--) {
        if (a->w[i] != b->w[i]) {
            return a->w[i] < b->w[i] ? -1 : 1;
        }
    }
    return 0;
}

// a -= b, with a >= b.
static inline void htp_big_sub(struct htp_big * a, const struct htp_big * b) {
    uint32_t borrow = 0;
    for (int i = 0; i < a->n; i++) {
        uint64_t s = (uint64_t)(i < b->n ? b->w[i] : 0) + borrow;
        borrow     = a->w[i] < s;
        a->w[i]    = (uint32_t)((uint64_t)a->w[i] - s);
    }
    htp_big_trim(a);
}

// b *= 10^e.
static inline void htp_big_mul_pow10(struct htp_big * b, int e) {
    for (; e >= 9; e -= 9) {
        htp_big_mul_add(b, 1000000000u, 0);
    }
    static const uint32_t p10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
    if (e > 0) {
        htp_big_mul_add(b, p10[e], 0);
    }
}

#endif  // HTP_RT_BIGNUM_H
