// compiler-rt.c: the helpers clang emits calls to when it compiles C for
// Hexagon v67, which has no integer divide, no floating divide and no square
// root instruction. The one idea: every helper is exact. Integer division is
// shift-and-subtract; float division and square root get a quotient or root
// a few units off from hardware double arithmetic and then fix it up with
// exact integer arithmetic; double division and square root are computed
// bit by bit. Each then rounds once, to nearest even, so results equal the
// IEEE 754 operation bit for bit (what x86 gives), subnormals included.
//
// ABI: these are ordinary calls under the Hexagon calling convention
// (arguments in r0-r5, 64-bit ones in register pairs r1:0, r3:2; result in
// r0 or r1:0; r0-r15 caller-saved). Clang 14 names them in its Hexagon
// backend: __hexagon_{,u}{div,mod}{si,di}3 for / and % on 32/64-bit
// integers, __hexagon_divsf3 and __hexagon_divdf3 for float and double /,
// __hexagon_sqrtf for sqrtf / __builtin_sqrtf under -fno-math-errno, and
// __hexagon_memcpy_likely_aligned_min32bytes_mult8bytes for a memcpy of a
// constant size >= 32, multiple of 8, between 4-byte-aligned objects. On v67
// double add, subtract, multiply, compares and all int <-> float
// conversions are instructions, so no helper exists here for them. Not
// provided: the -ffast-math variants (__hexagon_fast_*, __hexagon_fast2_*)
// and the fp16 conversions (__extendhfsf2, __truncsfhf2), which only __fp16
// arithmetic needs.
//
// Division by zero is undefined in C; here it returns an all-ones quotient
// and the dividend as remainder, so it at least does not hang.
//
// This file is portable C: the x86 test builds it and compares every helper
// with the hardware's operators.

#include "compiler-rt.h"

#include "softfp.h"

// ---------------------------------------------------------------------------
// Integer division
// ---------------------------------------------------------------------------

static uint32_t udivmod32(uint32_t n, uint32_t d, uint32_t * rem) {
    if (d == 0) {
        *rem = n;
        return UINT32_MAX;
    }
    if (n < d) {
        *rem = n;
        return 0;
    }
    // Line the divisor's top bit up with the dividend's, then one quotient
    // bit per step: as many steps as the quotient has bits.
    int shift = __builtin_clz(d) - __builtin_clz(n);
    d <<= shift;
    uint32_t q = 0;
    for (int i = 0; i <= shift; i++) {
        q <<= 1;
        if (n >= d) {
            n -= d;
            q |= 1;
        }
        d >>= 1;
    }
    *rem = n;
    return q;
}

static uint64_t udivmod64(uint64_t n, uint64_t d, uint64_t * rem) {
    if ((n >> 32) == 0 && (d >> 32) == 0) {
        uint32_t r;
        uint32_t q = udivmod32((uint32_t)n, (uint32_t)d, &r);
        *rem       = r;
        return d == 0 ? UINT64_MAX : q;
    }
    if (d == 0) {
        *rem = n;
        return UINT64_MAX;
    }
    if (n < d) {
        *rem = n;
        return 0;
    }
    int shift = __builtin_clzll(d) - __builtin_clzll(n);
    d <<= shift;
    uint64_t q = 0;
    for (int i = 0; i <= shift; i++) {
        q <<= 1;
        if (n >= d) {
            n -= d;
            q |= 1;
        }
        d >>= 1;
    }
    *rem = n;
    return q;
}

uint32_t __hexagon_udivsi3(uint32_t n, uint32_t d) {
    uint32_t r;
    return udivmod32(n, d, &r);
}

uint32_t __hexagon_umodsi3(uint32_t n, uint32_t d) {
    uint32_t r;
    udivmod32(n, d, &r);
    return r;
}

// Signed: divide the magnitudes (in unsigned arithmetic, so INT_MIN has one),
// the quotient takes the sign of n ^ d, the remainder the sign of n (C's
// truncating division).
int32_t __hexagon_divsi3(int32_t n, int32_t d) {
    uint32_t un = n < 0 ? 0u - (uint32_t)n : (uint32_t)n;
    uint32_t ud = d < 0 ? 0u - (uint32_t)d : (uint32_t)d;
    uint32_t r;
    uint32_t q = udivmod32(un, ud, &r);
    return (int32_t)((n < 0) != (d < 0) ? 0u - q : q);
}

int32_t __hexagon_modsi3(int32_t n, int32_t d) {
    uint32_t un = n < 0 ? 0u - (uint32_t)n : (uint32_t)n;
    uint32_t ud = d < 0 ? 0u - (uint32_t)d : (uint32_t)d;
    uint32_t r;
    udivmod32(un, ud, &r);
    return (int32_t)(n < 0 ? 0u - r : r);
}

uint64_t __hexagon_udivdi3(uint64_t n, uint64_t d) {
    uint64_t r;
    return udivmod64(n, d, &r);
}

uint64_t __hexagon_umoddi3(uint64_t n, uint64_t d) {
    uint64_t r;
    udivmod64(n, d, &r);
    return r;
}

int64_t __hexagon_divdi3(int64_t n, int64_t d) {
    uint64_t un = n < 0 ? 0u - (uint64_t)n : (uint64_t)n;
    uint64_t ud = d < 0 ? 0u - (uint64_t)d : (uint64_t)d;
    uint64_t r;
    uint64_t q = udivmod64(un, ud, &r);
    return (int64_t)((n < 0) != (d < 0) ? 0u - q : q);
}

int64_t __hexagon_moddi3(int64_t n, int64_t d) {
    uint64_t un = n < 0 ? 0u - (uint64_t)n : (uint64_t)n;
    uint64_t ud = d < 0 ? 0u - (uint64_t)d : (uint64_t)d;
    uint64_t r;
    udivmod64(un, ud, &r);
    return (int64_t)(n < 0 ? 0u - r : r);
}

#define F32_QNAN 0x7fc00000u
#define F64_QNAN 0x7ff8000000000000ull

// ---------------------------------------------------------------------------
// float division and square root
// ---------------------------------------------------------------------------

// Significand (with its hidden bit, top bit at 23) and biased exponent of a
// finite nonzero float; a subnormal is normalized, its exponent going <= 0.
static uint32_t f32_unpack(uint32_t abs_bits, int * e) {
    uint32_t m  = abs_bits & 0x7fffffu;
    int      ex = (int)(abs_bits >> 23);
    if (ex == 0) {
        int s = __builtin_clz(m) - 8;
        m <<= s;
        ex = 1 - s;
    } else {
        m |= 0x800000u;
    }
    *e = ex;
    return m;
}

float __hexagon_divsf3(float a, float b) {
    uint32_t ua = htp_softfp_f32_bits(a), ub = htp_softfp_f32_bits(b);
    uint32_t sign = (ua ^ ub) & 0x80000000u;
    uint32_t aa = ua & 0x7fffffffu, ab = ub & 0x7fffffffu;
    if (aa > 0x7f800000u || ab > 0x7f800000u) {
        return htp_softfp_f32_from((aa > 0x7f800000u ? ua : ub) | 0x00400000u);  // a NaN operand, quieted
    }
    if (aa == 0x7f800000u) {
        return htp_softfp_f32_from(ab == 0x7f800000u ? F32_QNAN : sign | 0x7f800000u);
    }
    if (ab == 0x7f800000u) {
        return htp_softfp_f32_from(sign);
    }
    if (ab == 0) {
        return htp_softfp_f32_from(aa == 0 ? F32_QNAN : sign | 0x7f800000u);
    }
    if (aa == 0) {
        return htp_softfp_f32_from(sign);
    }
    int      ea, eb;
    uint32_t ma = f32_unpack(aa, &ea);
    uint32_t mb = f32_unpack(ab, &eb);
    int      e  = ea - eb + 127;
    if (ma < mb) {
        ma <<= 1;
        e--;
    }
    // q = floor(n / mb), 26 bits. A reciprocal of mb by Newton's method in
    // double (3 steps from a 1/17-accurate line: relative error < 2^-32) puts
    // the estimate within 1 of q; the remainder then says which it is.
    uint64_t n = (uint64_t)ma << 25;
    double   d = (double)mb * 0x1p-24;  // in [0.5, 1)
    double   y = 48.0 / 17.0 - 32.0 / 17.0 * d;
    for (int i = 0; i < 3; i++) {
        y = y + y * (1.0 - d * y);
    }
    int64_t q = (int64_t)((double)n * y * 0x1p-24);
    int64_t r = (int64_t)n - q * (int64_t)mb;
    while (r < 0) {
        q--;
        r += mb;
    }
    while (r >= (int64_t)mb) {
        q++;
        r -= mb;
    }
    return htp_softfp_round_f32(sign, e, (uint32_t)q, r != 0);
}

float __hexagon_sqrtf(float x) {
    uint32_t u = htp_softfp_f32_bits(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return htp_softfp_f32_from(u | 0x00400000u);
    }
    if ((u & 0x7fffffffu) == 0 || u == 0x7f800000u) {
        return x;  // +-0 and +inf are their own roots
    }
    if (u & 0x80000000u) {
        return htp_softfp_f32_from(F32_QNAN);
    }
    int      ex;
    uint32_t m = f32_unpack(u, &ex);
    // x = m * 2^t. M = m << sh in [2^50, 2^52) with t - sh even, so
    // sqrt(x) = sqrt(M) * 2^k and floor(sqrt(M)) has 26 bits.
    int      t  = ex - 150;
    int      sh = ((t - 27) & 1) ? 28 : 27;
    int      k  = (t - sh) / 2;
    uint64_t M  = (uint64_t)m << sh;
    // 1/sqrt(z), z = M / 2^52 in [0.25, 1), by Newton from the chord through
    // (0.25, 2) and (1, 1) (off by < 18%): 4 steps give < 2^-30, so z * y * 2^26
    // is within 1 of the root; integer squares settle it.
    double z = (double)M * 0x1p-52;
    double y = 2.0 - (z - 0.25) * (4.0 / 3.0);
    for (int i = 0; i < 4; i++) {
        y = y * (1.5 - 0.5 * z * y * y);
    }
    uint64_t s = (uint64_t)(z * y * 0x1p26);
    while (s * s > M) {
        s--;
    }
    while ((s + 1) * (s + 1) <= M) {
        s++;
    }
    return htp_softfp_round_f32(0, k + 152, (uint32_t)s, s * s != M);
}

// ---------------------------------------------------------------------------
// double division and square root
// ---------------------------------------------------------------------------

static uint64_t f64_unpack(uint64_t abs_bits, int * e) {
    uint64_t m  = abs_bits & 0xfffffffffffffull;
    int      ex = (int)(abs_bits >> 52);
    if (ex == 0) {
        int s = __builtin_clzll(m) - 11;
        m <<= s;
        ex = 1 - s;
    } else {
        m |= 0x10000000000000ull;
    }
    *e = ex;
    return m;
}

double __hexagon_divdf3(double a, double b) {
    uint64_t       ua = htp_softfp_f64_bits(a), ub = htp_softfp_f64_bits(b);
    uint64_t       sign = (ua ^ ub) & 0x8000000000000000ull;
    uint64_t       aa = ua & 0x7fffffffffffffffull, ab = ub & 0x7fffffffffffffffull;
    const uint64_t inf = 0x7ff0000000000000ull;
    if (aa > inf || ab > inf) {
        return htp_softfp_f64_from((aa > inf ? ua : ub) | 0x0008000000000000ull);
    }
    if (aa == inf) {
        return htp_softfp_f64_from(ab == inf ? F64_QNAN : sign | inf);
    }
    if (ab == inf) {
        return htp_softfp_f64_from(sign);
    }
    if (ab == 0) {
        return htp_softfp_f64_from(aa == 0 ? F64_QNAN : sign | inf);
    }
    if (aa == 0) {
        return htp_softfp_f64_from(sign);
    }
    int      ea, eb;
    uint64_t ma = f64_unpack(aa, &ea);
    uint64_t mb = f64_unpack(ab, &eb);
    int      e  = ea - eb + 1023;
    if (ma < mb) {
        ma <<= 1;
        e--;
    }
    // Long division, one bit a step: 55 bits of ma / mb (in [1, 2)) and the
    // remainder for the sticky bit. r < 2 mb < 2^54 throughout.
    uint64_t r = ma, q = 0;
    for (int i = 0; i < 55; i++) {
        q <<= 1;
        if (r >= mb) {
            r -= mb;
            q |= 1;
        }
        r <<= 1;
    }
    return htp_softfp_round_f64(sign, e, q, r != 0);
}

double htp_rt_sqrt_f64(double x) {
    uint64_t u = htp_softfp_f64_bits(x);
    if ((u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) {
        return htp_softfp_f64_from(u | 0x0008000000000000ull);
    }
    if ((u & 0x7fffffffffffffffull) == 0 || u == 0x7ff0000000000000ull) {
        return x;
    }
    if (u >> 63) {
        return htp_softfp_f64_from(F64_QNAN);
    }
    int      ex;
    uint64_t m = f64_unpack(u, &ex);
    // x = m * 2^t; M = m * 2^sh in [2^108, 2^110), t - sh even: the root of M
    // has 55 bits. Digit by digit, two bits of M per step (bits of M below
    // sh are zero); rem < 2 root + 1 < 2^56 so everything fits 64 bits.
    int      t    = ex - 1075;
    int      sh   = ((t - 56) & 1) ? 57 : 56;
    int      k    = (t - sh) / 2;
    uint64_t root = 0, rem = 0;
    for (int i = 54; i >= 0; i--) {
        int      lo   = 2 * i - sh;  // bit of m that is bit 2i of M
        uint64_t pair = 0;
        if (lo >= 0) {
            pair = (m >> lo) & 3;
        } else if (lo == -1) {
            pair = (m & 1) << 1;
        }
        rem            = (rem << 2) | pair;
        uint64_t trial = (root << 2) | 1;
        if (rem >= trial) {
            rem -= trial;
            root = (root << 1) | 1;
        } else {
            root <<= 1;
        }
    }
    return htp_softfp_round_f64(0, k + 1077, root, rem != 0);
}

// ---------------------------------------------------------------------------
// memcpy of a constant size >= 32, a multiple of 8, objects 4-byte aligned
// ---------------------------------------------------------------------------

typedef uint64_t __attribute__((__may_alias__)) u64_alias;
typedef uint32_t __attribute__((__may_alias__)) u32_alias;

void * __hexagon_memcpy_likely_aligned_min32bytes_mult8bytes(void * dst, const void * src, size_t n) {
    // "Likely": the compiler knows 4-byte alignment only; copy by the widest
    // word both pointers allow.
    if ((((uintptr_t)dst | (uintptr_t)src) & 7) == 0) {
        u64_alias *       d = dst;
        const u64_alias * s = src;
        for (size_t i = 0; i < n / 8; i++) {
            d[i] = s[i];
        }
    } else if ((((uintptr_t)dst | (uintptr_t)src) & 3) == 0) {
        u32_alias *       d = dst;
        const u32_alias * s = src;
        for (size_t i = 0; i < n / 4; i++) {
            d[i] = s[i];
        }
    } else {
        unsigned char *       d = dst;
        const unsigned char * s = src;
        for (size_t i = 0; i < n; i++) {
            d[i] = s[i];
        }
    }
    return dst;
}
