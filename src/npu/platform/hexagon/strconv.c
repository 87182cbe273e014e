// strconv.c: strtoul, strtoull, strtod and atoi of the Hexagon runtime. The
// one idea for strtod: the decimal string is exactly D * 10^E, so with big
// integers (bignum.h) the nearest double is found exactly: for E >= 0 the
// integer D * 10^E itself, for E < 0 the quotient D * 2^s / 10^-E to 56 bits
// with the remainder as sticky bit; then one rounding (softfp.h). Digits
// past the 800th only matter as "something nonzero follows" (no halfway
// point between doubles needs more than 767 significant digits), so they
// become one sticky digit. Hex floats (0x1.8p3), inf, infinity, nan and
// nan(...) are read as C says. Overflow gives +-HUGE_VAL and underflow (a
// zero or subnormal result from nonzero digits) the result, both with
// errno = ERANGE.
//
// Portable C: the x86 test builds it under other names (rt-name.h) and
// compares it with glibc.

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "bignum.h"
#include "rt-name.h"
#include "softfp.h"

static int is_space(char c) {
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static int lower(char c) {
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

static int digit_value(char c) {
    int l = lower(c);
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (l >= 'a' && l <= 'z') {
        return l - 'a' + 10;
    }
    return 99;
}

// The common integer parser: value modulo nothing, saturating at max.
static unsigned long long parse_unsigned(const char * s, char ** end, int base, unsigned long long max) {
    const char * p = s;
    if (base < 0 || base == 1 || base > 36) {
        errno = EINVAL;
        if (end != NULL) {
            *end = (char *)s;
        }
        return 0;
    }
    while (is_space(*p)) {
        p++;
    }
    int neg = 0;
    if (*p == '+' || *p == '-') {
        neg = *p == '-';
        p++;
    }
    if ((base == 0 || base == 16) && p[0] == '0' && lower(p[1]) == 'x' && digit_value(p[2]) < 16) {
        p += 2;
        base = 16;
    } else if (base == 0) {
        base = p[0] == '0' ? 8 : 10;
    }
    const char *       digits_start = p;
    unsigned long long v            = 0;
    int                overflow     = 0;
    for (; digit_value(*p) < base; p++) {
        unsigned d = (unsigned)digit_value(*p);
        if (v > (max - d) / (unsigned)base) {
            overflow = 1;
        } else {
            v = v * (unsigned)base + d;
        }
    }
    if (p == digits_start) {
        if (end != NULL) {
            *end = (char *)s;
        }
        return 0;
    }
    if (end != NULL) {
        *end = (char *)p;
    }
    if (overflow) {
        errno = ERANGE;
        return max;
    }
    // C: the negation of the value, in the unsigned type.
    return neg ? (max - v + 1) & max : v;
}

unsigned long(HTP_RT_FN(strtoul))(const char * restrict s, char ** restrict end, int base) {
    return (unsigned long)parse_unsigned(s, end, base, (unsigned long)-1);
}

unsigned long long(HTP_RT_FN(strtoull))(const char * restrict s, char ** restrict end, int base) {
    return parse_unsigned(s, end, base, (unsigned long long)-1);
}

int(HTP_RT_FN(atoi))(const char * s) {
    while (is_space(*s)) {
        s++;
    }
    int neg = 0;
    if (*s == '+' || *s == '-') {
        neg = *s == '-';
        s++;
    }
    unsigned v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10u + (unsigned)(*s - '0');
    }
    return (int)(neg ? 0u - v : v);
}

// ---------------------------------------------------------------------------
// strtod
// ---------------------------------------------------------------------------

#define MAX_DIGITS 800

static int match_word(const char * p, const char * w) {
    int n = 0;
    for (; w[n] != '\0'; n++) {
        if (lower(p[n]) != w[n]) {
            return 0;
        }
    }
    return n;
}

// m * 2^e2 (m != 0, plus sticky) to the nearest double.
static double round_binary(uint64_t m, int e2, int sticky) {
    int lz = __builtin_clzll(m);
    m <<= lz;  // top bit at 63
    e2 -= lz;
    // Keep 55 bits (top at 54), the other 9 go to sticky.
    uint64_t sig = m >> 9;
    sticky       = sticky || (m & 0x1ff) != 0;
    // value = sig * 2^(e2 + 9) = sig * 2^(e - 1077)
    long e = (long)e2 + 9 + 1077;
    if (e > 4000) {
        e = 4000;
    } else if (e < -4000) {
        e = -4000;
    }
    return htp_softfp_round_f64(0, (int)e, sig, sticky);
}

// The digits after "0x" (the caller saw at least one); *endp past them.
static double parse_hex(const char * p, const char ** endp) {
    uint64_t m      = 0;
    long     e2     = 0;
    int      sticky = 0, any = 0;
    for (; digit_value(*p) < 16; p++, any = 1) {
        if (m >> 60) {
            sticky |= digit_value(*p) != 0;
            e2 += 4;
        } else {
            m = (m << 4) | (uint64_t)digit_value(*p);
        }
    }
    if (*p == '.') {
        const char * q = p + 1;
        for (; digit_value(*q) < 16; q++, any = 1) {
            if (m >> 60) {
                sticky |= digit_value(*q) != 0;
            } else {
                m = (m << 4) | (uint64_t)digit_value(*q);
                e2 -= 4;
            }
        }
        if (any) {
            p = q;
        }
    }
    if (lower(*p) == 'p') {
        const char * q   = p + 1;
        int          neg = 0;
        if (*q == '+' || *q == '-') {
            neg = *q == '-';
            q++;
        }
        if (*q >= '0' && *q <= '9') {
            long x = 0;
            for (; *q >= '0' && *q <= '9'; q++) {
                if (x < 100000) {
                    x = x * 10 + (*q - '0');
                }
            }
            e2 += neg ? -x : x;
            p = q;
        }
    }
    *endp = p;
    if (m == 0) {
        return 0;
    }
    return round_binary(m, (int)(e2 < -100000 ? -100000 : e2 > 100000 ? 100000 : e2), sticky);
}

// D (n digits in dig[], no leading zeros, n >= 1) * 10^e to the nearest double.
static double decimal_to_double(const char * dig, int n, long e) {
    // Far out of range either way: no need for big numbers.
    if (n + e > 310) {
        return __builtin_inf();
    }
    if (n + e < -326) {
        return 0;
    }
    struct htp_big num;
    num.n = 0;
    for (int i = 0; i < n; i++) {
        htp_big_mul_add(&num, 10, (uint32_t)(dig[i] - '0'));
        htp_big_trim(&num);
    }
    if (e >= 0) {
        htp_big_mul_pow10(&num, (int)e);
        // The integer itself: its top 64 bits and whether any bit below is set.
        int      len    = htp_big_bitlen(&num);
        int      low    = len > 64 ? len - 64 : 0;
        uint64_t top    = 0;
        int      sticky = 0;
        for (int i = 0; i < low; i++) {
            if (num.w[i / 32] >> (i % 32) & 1) {
                sticky = 1;
                break;
            }
        }
        for (int i = len - 1; i >= low; i--) {
            top = (top << 1) | (num.w[i / 32] >> (i % 32) & 1);
        }
        return round_binary(top, low, sticky);
    }
    // num / 10^-e: scale num by 2^s so the quotient has 56 or 57 bits.
    struct htp_big den;
    htp_big_set_u64(&den, 1);
    htp_big_mul_pow10(&den, (int)-e);
    int s = htp_big_bitlen(&den) - htp_big_bitlen(&num) + 56;
    if (s > 0) {
        htp_big_shl(&num, s);
    } else {
        htp_big_shl(&den, -s);
    }
    // Long division, one quotient bit a step, from bit 57 down.
    uint64_t q = 0;
    htp_big_shl(&den, 57);
    for (int i = 57; i >= 0; i--) {
        if (htp_big_cmp(&num, &den) >= 0) {
            htp_big_sub(&num, &den);
            q |= 1ull << i;
        }
        htp_big_shr1(&den);
    }
    return round_binary(q, -s, !htp_big_is_zero(&num));
}

double(HTP_RT_FN(strtod))(const char * restrict s, char ** restrict end) {
    const char * p = s;
    while (is_space(*p)) {
        p++;
    }
    int neg = 0;
    if (*p == '+' || *p == '-') {
        neg = *p == '-';
        p++;
    }
    double v;
    int    n;
    if ((n = match_word(p, "infinity")) != 0 || (n = match_word(p, "inf")) != 0) {
        p += n;
        v = __builtin_inf();
    } else if ((n = match_word(p, "nan")) != 0) {
        p += n;
        if (*p == '(') {
            const char * q = p + 1;
            while ((*q >= '0' && *q <= '9') || (lower(*q) >= 'a' && lower(*q) <= 'z') || *q == '_') {
                q++;
            }
            if (*q == ')') {
                p = q + 1;
            }
        }
        v = __builtin_nan("");
    } else if (p[0] == '0' && lower(p[1]) == 'x' &&
               (digit_value(p[2]) < 16 || (p[2] == '.' && digit_value(p[3]) < 16))) {
        v = parse_hex(p + 2, &p);
        if (v == __builtin_inf() || (v != 0 && v < 0x1p-1022)) {
            errno = ERANGE;
        }
    } else {
        // Decimal: significant digits (leading zeros dropped), the point's
        // place, the exponent.
        char dig[MAX_DIGITS + 1];
        int  nd = 0, any = 0, sticky = 0;
        long e = 0;
        for (; *p >= '0' && *p <= '9'; p++) {
            any = 1;
            if (nd == 0 && *p == '0') {
                continue;
            }
            if (nd < MAX_DIGITS) {
                dig[nd++] = *p;
            } else {
                sticky |= *p != '0';
                e++;
            }
        }
        if (*p == '.') {
            const char * q = p + 1;
            for (; *q >= '0' && *q <= '9'; q++) {
                any = 1;
                if (nd == 0 && *q == '0') {
                    e--;
                    continue;
                }
                if (nd < MAX_DIGITS) {
                    dig[nd++] = *q;
                    e--;
                } else {
                    sticky |= *q != '0';
                }
            }
            if (any) {
                p = q;
            }
        }
        if (!any) {
            if (end != NULL) {
                *end = (char *)s;
            }
            return 0;
        }
        if (lower(*p) == 'e') {
            const char * q    = p + 1;
            int          eneg = 0;
            if (*q == '+' || *q == '-') {
                eneg = *q == '-';
                q++;
            }
            if (*q >= '0' && *q <= '9') {
                long x = 0;
                for (; *q >= '0' && *q <= '9'; q++) {
                    if (x < 1000000) {
                        x = x * 10 + (*q - '0');
                    }
                }
                e += eneg ? -x : x;
                p = q;
            }
        }
        if (sticky) {
            // "Something nonzero after the 800th digit": one more digit, a 1.
            dig[nd++] = '1';
            e--;
        }
        if (nd == 0) {
            v = 0;
        } else {
            v = decimal_to_double(dig, nd, e);
            if (v == __builtin_inf() || v < 0x1p-1022) {
                errno = ERANGE;
            }
        }
    }
    if (end != NULL) {
        *end = (char *)p;
    }
    return neg ? -v : v;
}
