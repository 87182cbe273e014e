// printf.c: vsnprintf and snprintf of the Hexagon runtime (the conversions
// stdio.h lists). The one idea for floating point: a finite double is
// exactly m * 2^e, so its decimal expansion is finite and this file computes
// it exactly with big integers (bignum.h), digit by digit, then rounds once,
// half to even as glibc does in the default rounding mode. %f, %e and %g
// therefore print the same digits as glibc for every double and precision.
//
// Portable C: the x86 test builds it under other names (rt-name.h) and
// compares it with glibc's snprintf.

#include <stdio.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bignum.h"
#include "rt-name.h"

struct out {
    char * buf;
    size_t cap;
    size_t len;  // bytes the full result has (may exceed cap)
};

static void put(struct out * o, char c) {
    if (o->len + 1 < o->cap) {
        o->buf[o->len] = c;
    }
    o->len++;
}

static void put_n(struct out * o, char c, int n) {
    for (; n > 0; n--) {
        put(o, c);
    }
}

static void put_s(struct out * o, const char * s, int n) {
    for (int i = 0; i < n; i++) {
        put(o, s[i]);
    }
}

struct spec {
    int  left, plus, space, alt, zero;
    int  width;
    int  prec;  // < 0: none
    char conv;
};

// Pads prefix, zeros, body, trailing zeros and suffix out to the width: with
// spaces in front, zeros after the prefix (the 0 flag) or spaces behind (-).
static void emit(struct out * o, const struct spec * sp, const char * prefix, int n_prefix, int n_zeros,
                 const char * body, int n_body, int n_trail_zeros, const char * suffix, int n_suffix) {
    int total = n_prefix + n_zeros + n_body + n_trail_zeros + n_suffix;
    int pad   = sp->width > total ? sp->width - total : 0;
    if (!sp->left && !sp->zero) {
        put_n(o, ' ', pad);
    }
    put_s(o, prefix, n_prefix);
    if (!sp->left && sp->zero) {
        put_n(o, '0', pad);
    }
    put_n(o, '0', n_zeros);
    put_s(o, body, n_body);
    put_n(o, '0', n_trail_zeros);
    put_s(o, suffix, n_suffix);
    if (sp->left) {
        put_n(o, ' ', pad);
    }
}

static void fmt_int(struct out * o, struct spec * sp, unsigned long long v, int negative) {
    char         digits[24];
    int          n    = 0;
    unsigned     base = sp->conv == 'o' ? 8 : (sp->conv == 'x' || sp->conv == 'X' || sp->conv == 'p') ? 16 : 10;
    const char * hex  = sp->conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
    for (unsigned long long t = v; t != 0; t /= base) {
        digits[sizeof(digits) - 1 - n++] = hex[t % base];
    }
    char prefix[2];
    int  n_prefix = 0;
    if (sp->conv == 'd' || sp->conv == 'i') {
        if (negative) {
            prefix[n_prefix++] = '-';
        } else if (sp->plus) {
            prefix[n_prefix++] = '+';
        } else if (sp->space) {
            prefix[n_prefix++] = ' ';
        }
    } else if ((sp->alt && (sp->conv == 'x' || sp->conv == 'X') && v != 0) || sp->conv == 'p') {
        prefix[n_prefix++] = '0';
        prefix[n_prefix++] = sp->conv == 'X' ? 'X' : 'x';
    }
    int min_digits = sp->prec >= 0 ? sp->prec : 1;
    if (sp->conv == 'o' && sp->alt && min_digits <= n) {
        min_digits = n + 1;  // # makes the first digit a 0
        if (v == 0) {
            min_digits = 1;
        }
    }
    if (sp->prec >= 0) {
        sp->zero = 0;  // a precision overrides the 0 flag for integers
    }
    int zeros = min_digits > n ? min_digits - n : 0;
    emit(o, sp, prefix, n_prefix, zeros, digits + sizeof(digits) - n, n, 0, NULL, 0);
}

// ---------------------------------------------------------------------------
// Floating point
// ---------------------------------------------------------------------------

// The exact decimal digits of a finite positive double, most significant
// first: the integer part's (computed at once), then the fraction's (one per
// call, F = F * 10 with F / 2^(32 fw) the fraction left).
struct digits {
    char           ip[312];  // integer part digits; < 2^1024 has at most 309
    int            n_ip, i_ip;
    struct htp_big f;
    int            fw;  // the fraction's denominator is 2^(32 fw)
};

static void digits_init(struct digits * d, double v) {
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    int      be = (int)(u >> 52) & 0x7ff;
    uint64_t m  = u & 0xfffffffffffffull;
    int      e  = be == 0 ? -1074 : be - 1075;  // v = m * 2^e
    if (be != 0) {
        m |= 1ull << 52;
    }
    struct htp_big ip;
    if (e >= 0) {
        htp_big_set_u64(&ip, m);
        htp_big_shl(&ip, e);
        d->f.n = 0;
        d->fw  = 0;
    } else {
        int k = -e;  // v = m / 2^k
        htp_big_set_u64(&ip, k >= 64 ? 0 : m >> k);
        uint64_t frac = k >= 64 ? m : m & ((1ull << k) - 1);
        // The fraction is frac / 2^k; give it a whole-word denominator.
        d->fw = (k + 31) / 32;
        htp_big_set_u64(&d->f, frac);
        htp_big_shl(&d->f, 32 * d->fw - k);
    }
    // Integer part to decimal, nine digits per division.
    char rev[320];
    int  n = 0;
    while (!htp_big_is_zero(&ip)) {
        uint32_t r = htp_big_div_small(&ip, 1000000000u);
        for (int i = 0; i < 9; i++) {
            rev[n++] = (char)('0' + r % 10);
            r /= 10;
        }
    }
    while (n > 0 && rev[n - 1] == '0') {
        n--;
    }
    for (int i = 0; i < n; i++) {
        d->ip[i] = rev[n - 1 - i];
    }
    d->n_ip = n;
    d->i_ip = 0;
}

static int digits_next(struct digits * d) {
    if (d->i_ip < d->n_ip) {
        return d->ip[d->i_ip++] - '0';
    }
    if (htp_big_is_zero(&d->f)) {
        return 0;
    }
    htp_big_mul_add(&d->f, 10, 0);
    int digit = 0;
    if (d->f.n > d->fw) {
        digit         = (int)d->f.w[d->fw];
        d->f.w[d->fw] = 0;
        htp_big_trim(&d->f);
    }
    return digit;
}

// Whether any digit after the ones taken so far is nonzero.
static int digits_rest_nonzero(const struct digits * d) {
    for (int i = d->i_ip; i < d->n_ip; i++) {
        if (d->ip[i] != '0') {
            return 1;
        }
    }
    return !htp_big_is_zero(&d->f);
}

// Rounds the n digits in buf (chars) half to even given the next digit and
// whether anything follows it. Returns 1 when a carry ran off the front
// (buf is then all zeros and the caller puts a 1 in front).
static int round_digits(char * buf, int n, int next, int rest) {
    int up = next > 5 || (next == 5 && (rest || (n > 0 && (buf[n - 1] - '0') % 2 == 1)));
    if (!up) {
        return 0;
    }
    for (int i = n - 1; i >= 0; i--) {
        if (buf[i] != '9') {
            buf[i]++;
            return 0;
        }
        buf[i] = '0';
    }
    return 1;
}

#define MAX_FRAC 1100  // past 1074 fraction digits a double's expansion is all zeros

// %f: the digits of v rounded to prec fraction digits, in buf; *n_int of
// them before the point (at least one). Returns the count; digits past
// MAX_FRAC (always zeros) are left to the caller.
static int gen_fixed(double v, int prec, char * buf, int * n_int) {
    struct digits d;
    digits_init(&d, v);
    int n = 0;
    if (d.n_ip == 0) {
        buf[n++] = '0';  // a leading 0 that a carry can turn into 1
    }
    int ni = d.n_ip > 0 ? d.n_ip : 1;
    int p  = prec < MAX_FRAC ? prec : MAX_FRAC;
    for (int i = d.n_ip > 0 ? 0 : 1; i < ni + p; i++) {
        buf[n++] = (char)('0' + digits_next(&d));
    }
    int next = digits_next(&d);
    if (round_digits(buf, n, next, digits_rest_nonzero(&d))) {
        memmove(buf + 1, buf, (size_t)n);
        buf[0] = '1';
        n++;
        ni++;
    }
    *n_int = ni;
    return n;
}

// %e: the first nsig significant digits of v (v > 0) rounded, in buf, and
// the decimal exponent of the first one.
static int gen_sci(double v, int nsig, char * buf, int * exp10) {
    struct digits d;
    digits_init(&d, v);
    int x;
    int first;
    if (d.n_ip > 0) {
        x     = d.n_ip - 1;
        first = digits_next(&d);
    } else {
        x = -1;
        while ((first = digits_next(&d)) == 0) {
            x--;
        }
    }
    int n    = 0;
    buf[n++] = (char)('0' + first);
    int p    = nsig < MAX_FRAC ? nsig : MAX_FRAC;
    while (n < p) {
        buf[n++] = (char)('0' + digits_next(&d));
    }
    int next = digits_next(&d);
    if (round_digits(buf, n, next, digits_rest_nonzero(&d))) {
        buf[0] = '1';  // 9.99 -> 10.0: one digit more in front, one less behind
        x++;
    }
    *exp10 = x;
    return n;
}

static int exp_text(char * s, int x, char e) {
    int n  = 0;
    s[n++] = e;
    s[n++] = x < 0 ? '-' : '+';
    int a  = x < 0 ? -x : x;
    if (a >= 100) {
        s[n++] = (char)('0' + a / 100);
    }
    s[n++] = (char)('0' + a / 10 % 10);
    s[n++] = (char)('0' + a % 10);
    return n;
}

static void fmt_float(struct out * o, struct spec * sp, double v) {
    char     prefix[1];
    int      n_prefix = 0;
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    int upper = sp->conv == 'F' || sp->conv == 'E' || sp->conv == 'G';
    if (u >> 63) {
        prefix[n_prefix++] = '-';
        v                  = -v;
    } else if (sp->plus) {
        prefix[n_prefix++] = '+';
    } else if (sp->space) {
        prefix[n_prefix++] = ' ';
    }
    if (v != v || v == __builtin_inf()) {
        sp->zero = 0;
        emit(o, sp, prefix, n_prefix, 0, v != v ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf"), 3, 0, NULL, 0);
        return;
    }
    int  prec = sp->prec < 0 ? 6 : sp->prec;
    char conv = (char)(sp->conv | 0x20);  // lower case
    // digits: integer part + MAX_FRAC + the point + an exponent + slack
    char buf[320 + MAX_FRAC + 16];
    char digs[320 + MAX_FRAC + 2];
    int  n = 0, trail = 0;

    if (conv == 'g') {
        int p = prec == 0 ? 1 : prec;
        int x = 0, nd;
        if (v == 0) {
            nd = p < MAX_FRAC ? p : MAX_FRAC;
            memset(digs, '0', (size_t)nd);
        } else {
            nd = gen_sci(v, p, digs, &x);
        }
        int extra = p - nd;  // significant digits past MAX_FRAC: zeros
        if (x < p && x >= -4) {
            // Fixed notation with p - 1 - x fraction digits: the same digits.
            if (x >= 0) {
                for (int i = 0; i <= x; i++) {
                    buf[n++] = i < nd ? digs[i] : '0';
                }
                int frac_start = n;
                buf[n++]       = '.';
                for (int i = x + 1; i < nd; i++) {
                    buf[n++] = digs[i];
                }
                trail = extra;
                if (!sp->alt) {
                    trail = 0;
                    while (n > frac_start + 1 && buf[n - 1] == '0') {
                        n--;
                    }
                    if (n == frac_start + 1) {
                        n--;
                    }
                }
            } else {
                buf[n++] = '0';
                buf[n++] = '.';
                for (int i = 0; i < -x - 1; i++) {
                    buf[n++] = '0';
                }
                for (int i = 0; i < nd; i++) {
                    buf[n++] = digs[i];
                }
                trail = extra;
                if (!sp->alt) {
                    trail = 0;
                    while (buf[n - 1] == '0') {
                        n--;
                    }
                    if (buf[n - 1] == '.') {
                        n--;
                    }
                }
            }
        } else {
            buf[n++] = digs[0];
            int dot  = n;
            buf[n++] = '.';
            for (int i = 1; i < nd; i++) {
                buf[n++] = digs[i];
            }
            if (!sp->alt) {
                extra = 0;
                while (n > dot + 1 && buf[n - 1] == '0') {
                    n--;
                }
                if (n == dot + 1) {
                    n--;
                }
            }
            char ex[8];
            int  ne = exp_text(ex, x, upper ? 'E' : 'e');
            emit(o, sp, prefix, n_prefix, 0, buf, n, extra, ex, ne);
            return;
        }
    } else if (conv == 'e') {
        int x = 0, nd;
        if (v == 0) {
            nd = prec + 1 < MAX_FRAC ? prec + 1 : MAX_FRAC;
            memset(digs, '0', (size_t)nd);
        } else {
            nd = gen_sci(v, prec + 1, digs, &x);
        }
        buf[n++] = digs[0];
        if (prec > 0 || sp->alt) {
            buf[n++] = '.';
        }
        for (int i = 1; i < nd; i++) {
            buf[n++] = digs[i];
        }
        char ex[8];
        int  ne = exp_text(ex, x, upper ? 'E' : 'e');
        emit(o, sp, prefix, n_prefix, 0, buf, n, prec + 1 - nd, ex, ne);
        return;
    } else {
        int ni;
        int nd = gen_fixed(v, prec, digs, &ni);
        for (int i = 0; i < ni; i++) {
            buf[n++] = digs[i];
        }
        if (prec > 0 || sp->alt) {
            buf[n++] = '.';
        }
        for (int i = ni; i < nd; i++) {
            buf[n++] = digs[i];
        }
        trail = prec - (nd - ni);
    }
    emit(o, sp, prefix, n_prefix, 0, buf, n, trail, NULL, 0);
}

// ---------------------------------------------------------------------------
// The format loop
// ---------------------------------------------------------------------------

int(HTP_RT_FN(vsnprintf))(char * restrict buf, size_t size, const char * restrict fmt, va_list ap) {
    struct out o = {buf, size, 0};
    va_list    args;
    va_copy(args, ap);
    for (const char * f = fmt; *f != '\0'; f++) {
        if (*f != '%') {
            put(&o, *f);
            continue;
        }
        f++;
        struct spec sp = {0, 0, 0, 0, 0, 0, -1, 0};
        for (;; f++) {
            if (*f == '-') {
                sp.left = 1;
            } else if (*f == '+') {
                sp.plus = 1;
            } else if (*f == ' ') {
                sp.space = 1;
            } else if (*f == '#') {
                sp.alt = 1;
            } else if (*f == '0') {
                sp.zero = 1;
            } else {
                break;
            }
        }
        if (*f == '*') {
            sp.width = va_arg(args, int);
            if (sp.width < 0) {
                sp.left  = 1;
                sp.width = -sp.width;
            }
            f++;
        } else {
            for (; *f >= '0' && *f <= '9'; f++) {
                sp.width = sp.width * 10 + (*f - '0');
            }
        }
        if (*f == '.') {
            f++;
            sp.prec = 0;
            if (*f == '*') {
                sp.prec = va_arg(args, int);  // negative: as if none
                f++;
            } else {
                for (; *f >= '0' && *f <= '9'; f++) {
                    sp.prec = sp.prec * 10 + (*f - '0');
                }
            }
        }
        if (sp.left) {
            sp.zero = 0;
        }
        // Length: hh h l ll z j t (the argument's type).
        int len = 0;  // 0 int, 1 char, 2 short, 3 long, 4 long long, 5 size_t, 6 intmax_t, 7 ptrdiff_t
        if (*f == 'h') {
            len = f[1] == 'h' ? 1 : 2;
            f += f[1] == 'h' ? 2 : 1;
        } else if (*f == 'l') {
            len = f[1] == 'l' ? 4 : 3;
            f += f[1] == 'l' ? 2 : 1;
        } else if (*f == 'z') {
            len = 5;
            f++;
        } else if (*f == 'j') {
            len = 6;
            f++;
        } else if (*f == 't') {
            len = 7;
            f++;
        }
        sp.conv = *f;
        switch (*f) {
            case 'd':
            case 'i': {
                long long v;
                switch (len) {
                    case 1:
                        v = (signed char)va_arg(args, int);
                        break;
                    case 2:
                        v = (short)va_arg(args, int);
                        break;
                    case 3:
                        v = va_arg(args, long);
                        break;
                    case 4:
                        v = va_arg(args, long long);
                        break;
                    case 5: {
                        // %zd takes the signed type of size_t's width.
                        size_t z = va_arg(args, size_t);
                        v        = z > SIZE_MAX / 2 ? -(long long)(SIZE_MAX - z) - 1 : (long long)z;
                        break;
                    }
                    case 6:
                        v = va_arg(args, intmax_t);
                        break;
                    case 7:
                        v = va_arg(args, ptrdiff_t);
                        break;
                    default:
                        v = va_arg(args, int);
                        break;
                }
                unsigned long long mag = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
                fmt_int(&o, &sp, mag, v < 0);
                break;
            }
            case 'u':
            case 'x':
            case 'X':
            case 'o': {
                unsigned long long v;
                switch (len) {
                    case 1:
                        v = (unsigned char)va_arg(args, unsigned);
                        break;
                    case 2:
                        v = (unsigned short)va_arg(args, unsigned);
                        break;
                    case 3:
                        v = va_arg(args, unsigned long);
                        break;
                    case 4:
                        v = va_arg(args, unsigned long long);
                        break;
                    case 5:
                        v = va_arg(args, size_t);
                        break;
                    case 6:
                        v = va_arg(args, uintmax_t);
                        break;
                    case 7:
                        v = (unsigned long long)va_arg(args, ptrdiff_t);
                        break;
                    default:
                        v = va_arg(args, unsigned);
                        break;
                }
                fmt_int(&o, &sp, v, 0);
                break;
            }
            case 'p': {
                void * p = va_arg(args, void *);
                if (p == NULL) {
                    sp.zero = 0;
                    emit(&o, &sp, NULL, 0, 0, "(nil)", 5, 0, NULL, 0);  // as glibc
                } else {
                    fmt_int(&o, &sp, (uintptr_t)p, 0);
                }
                break;
            }
            case 'c': {
                if (len != 0) {  // %lc: a wint_t, which is not supported
                    (void)va_arg(args, unsigned);
                    put(&o, '%');
                    put(&o, 'l');
                    put(&o, 'c');
                    break;
                }
                char c  = (char)va_arg(args, int);
                sp.zero = 0;
                emit(&o, &sp, NULL, 0, 0, &c, 1, 0, NULL, 0);
                break;
            }
            case 's': {
                if (len != 0) {  // %ls: a wide string, which is not supported
                    (void)va_arg(args, const void *);
                    put(&o, '%');
                    put(&o, 'l');
                    put(&o, 's');
                    break;
                }
                const char * s = va_arg(args, const char *);
                if (s == NULL) {
                    // glibc prints "(null)", or nothing when the precision cuts it
                    s = sp.prec >= 0 && sp.prec < 6 ? "" : "(null)";
                }
                int n = 0;
                while ((sp.prec < 0 || n < sp.prec) && s[n] != '\0') {
                    n++;
                }
                sp.zero = 0;
                emit(&o, &sp, NULL, 0, 0, s, n, 0, NULL, 0);
                break;
            }
            case 'f':
            case 'F':
            case 'e':
            case 'E':
            case 'g':
            case 'G':
                fmt_float(&o, &sp, va_arg(args, double));
                break;
            case '%':
                put(&o, '%');
                break;
            default:
                // Unknown or unsupported (%n, %a, %L...): print it as written.
                put(&o, '%');
                if (*f == '\0') {
                    f--;
                } else {
                    put(&o, *f);
                }
                break;
        }
    }
    va_end(args);
    if (size > 0) {
        buf[o.len < size ? o.len : size - 1] = '\0';
    }
    return o.len > 0x7fffffff ? -1 : (int)o.len;
}

int(HTP_RT_FN(snprintf))(char * restrict buf, size_t size, const char * restrict fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = HTP_RT_FN(vsnprintf)(buf, size, fmt, ap);
    va_end(ap);
    return n;
}
