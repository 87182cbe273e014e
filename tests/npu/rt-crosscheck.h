// rt-crosscheck.h: one computation run twice, by the runtime built for
// Hexagon (in test-hexagon-rt, under qemu-hexagon) and by the same sources
// built for the host (in test-hexagon-driver), so that any difference the
// cross compiler makes shows up. The one idea: the runtime's math, printf
// and strtod are plain C over IEEE arithmetic, so both builds must give the
// same bits for the same inputs; each group of results is folded into a
// 64-bit FNV-1a digest and the two sides compare digests. (The host build
// is itself checked against glibc by test-rt-math.) This is the test that
// caught two clang 14 Hexagon code generation bugs in bignum.h's shift (see
// there and cmake/hexagon-toolchain.cmake).
//
// The includer defines RT(name), the name of the runtime's function (expf
// on Hexagon, htp_rt_test_expf on the host), and RT_FDIV / RT_DDIV, its
// float and double division.

#ifndef HTP_RT_CROSSCHECK_H
#define HTP_RT_CROSSCHECK_H

#include <stdint.h>
#include <string.h>

struct htp_cross {
    const char * name;
    uint64_t     digest;
};

static uint64_t htp_cross_rng_state;

static uint64_t htp_cross_rng(void) {
    htp_cross_rng_state ^= htp_cross_rng_state << 13;
    htp_cross_rng_state ^= htp_cross_rng_state >> 7;
    htp_cross_rng_state ^= htp_cross_rng_state << 17;
    return htp_cross_rng_state;
}

static void htp_cross_fold(uint64_t * h, const void * p, size_t n) {
    const uint8_t * b = p;
    for (size_t i = 0; i < n; i++) {
        *h = (*h ^ b[i]) * 0x100000001b3ull;
    }
}

// Results are folded by their bits; NaNs as one value, since which NaN an
// operation makes is the hardware's choice (x86 and Hexagon differ).
static void htp_cross_fold_f32(uint64_t * h, float x) {
    uint32_t u = 0x7fc00000u;
    if (x == x) {
        memcpy(&u, &x, sizeof u);
    }
    htp_cross_fold(h, &u, sizeof u);
}

static void htp_cross_fold_f64(uint64_t * h, double x) {
    uint64_t u = 0x7ff8000000000000ull;
    if (x == x) {
        memcpy(&u, &x, sizeof u);
    }
    htp_cross_fold(h, &u, sizeof u);
}

static float htp_cross_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static double htp_cross_f64(uint64_t u) {
    double f;
    memcpy(&f, &u, sizeof f);
    return f;
}

// A float of random sign and significand, exponent in [lo, hi].
static float htp_cross_rand_f32(int lo, int hi) {
    uint64_t r = htp_cross_rng();
    uint32_t e = (uint32_t)(lo + (int)(r % (uint64_t)(hi - lo + 1)) + 127);
    return htp_cross_f32((uint32_t)(r >> 40 << 31) | (e << 23) | ((uint32_t)(r >> 8) & 0x7fffffu));
}

static double htp_cross_rand_f64(int lo, int hi) {
    uint64_t r = htp_cross_rng();
    uint64_t e = (uint64_t)(lo + (int)(r % (uint64_t)(hi - lo + 1)) + 1023);
    uint64_t m = htp_cross_rng() & 0x800fffffffffffffull;
    return htp_cross_f64(m | (e << 52));
}

#define HTP_CROSS_N 4000

#define HTP_CROSS_F1(fn, lo, hi)                  \
    do {                                          \
        uint64_t h = 0xcbf29ce484222325ull;       \
        for (int i = 0; i < HTP_CROSS_N; i++) {   \
            float x = htp_cross_rand_f32(lo, hi); \
            htp_cross_fold_f32(&h, RT(fn)(x));    \
        }                                         \
        out[n++] = (struct htp_cross){#fn, h};    \
    } while (0)

#define HTP_CROSS_D1(fn, lo, hi)                   \
    do {                                           \
        uint64_t h = 0xcbf29ce484222325ull;        \
        for (int i = 0; i < HTP_CROSS_N; i++) {    \
            double x = htp_cross_rand_f64(lo, hi); \
            htp_cross_fold_f64(&h, RT(fn)(x));     \
        }                                          \
        out[n++] = (struct htp_cross){#fn, h};     \
    } while (0)

// Fills out[] (room for 40) and returns the count.
static int htp_cross_run(struct htp_cross * out) {
    int n               = 0;
    htp_cross_rng_state = 0x853c49e6748fea9bull;
    HTP_CROSS_F1(expf, -8, 6);
    HTP_CROSS_F1(logf, -126, 127);
    HTP_CROSS_F1(sinf, -10, 127);
    HTP_CROSS_F1(cosf, -10, 127);
    HTP_CROSS_F1(tanhf, -12, 4);
    HTP_CROSS_F1(erff, -12, 2);
    HTP_CROSS_F1(sqrtf, -126, 127);
    HTP_CROSS_F1(floorf, -4, 24);
    HTP_CROSS_F1(roundf, -4, 24);
    HTP_CROSS_F1(nearbyintf, -4, 24);
    HTP_CROSS_D1(exp, -10, 9);
    HTP_CROSS_D1(log, -1022, 1023);
    HTP_CROSS_D1(tanh, -30, 4);
    HTP_CROSS_D1(sqrt, -1022, 1023);
    HTP_CROSS_D1(floor, -4, 53);

    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < HTP_CROSS_N; i++) {
        float  x = htp_cross_rand_f32(-6, 6);
        float  y = htp_cross_rand_f32(-4, 4);
        double a = htp_cross_rand_f64(-6, 6);
        double b = htp_cross_rand_f64(-5, 5);
        htp_cross_fold_f32(&h, RT(powf)(x < 0 ? -x : x, y));
        htp_cross_fold_f64(&h, RT(pow)(a < 0 ? -a : a, b * 30));
    }
    out[n++] = (struct htp_cross){"pow powf", h};

    h = 0xcbf29ce484222325ull;
    for (int i = 0; i < 4 * HTP_CROSS_N; i++) {
        float    x = htp_cross_f32((uint32_t)htp_cross_rng());
        float    y = htp_cross_f32((uint32_t)htp_cross_rng());
        double   a = htp_cross_f64(htp_cross_rng());
        double   b = htp_cross_f64(htp_cross_rng());
        uint64_t u = htp_cross_rng();
        uint64_t v = htp_cross_rng();
        v >>= htp_cross_rng() % 64;
        uint64_t w[2] = {u / (v | 1), u % (v | 1)};
        htp_cross_fold_f32(&h, RT_FDIV(x, y));
        htp_cross_fold_f64(&h, RT_DDIV(a, b));
        htp_cross_fold(&h, w, sizeof w);
    }
    out[n++] = (struct htp_cross){"division", h};

    // printf over many conversions, and strtod reading its own output back.
    static const char * fmt[] = {"%.17g", "%.3e", "%f", "%.0f", "%g", "%#.5g", "%12.4f", "%.30e"};
    uint64_t            hp = 0xcbf29ce484222325ull, hs = 0xcbf29ce484222325ull;
    for (int i = 0; i < HTP_CROSS_N; i++) {
        double v = (i & 1) ? htp_cross_rand_f64(-1074, 1023) : htp_cross_rand_f64(-30, 30);
        char   buf[400];
        int    k = RT(snprintf)(buf, sizeof buf, fmt[i % 8], v);
        htp_cross_fold(&hp, buf, (size_t)(k < (int)sizeof buf ? k : (int)sizeof buf - 1));
        // (one draw per statement: argument evaluation order differs between compilers)
        int                i1 = (int)htp_cross_rng();
        unsigned           u1 = (unsigned)htp_cross_rng();
        unsigned long long l1 = htp_cross_rng();
        int                i2 = (int)(htp_cross_rng() % 1000);
        k                     = RT(snprintf)(buf, sizeof buf, "%d|%-8u|%llx|%+.3d|%s", i1, u1, l1, i2, "s");
        htp_cross_fold(&hp, buf, (size_t)k);
        int prec = (int)(htp_cross_rng() % 25);
        RT(snprintf)(buf, sizeof buf, "%.*e", prec, v);
        htp_cross_fold_f64(&hs, RT(strtod)(buf, NULL));
        RT(snprintf)(buf, sizeof buf, "%llu", (unsigned long long)htp_cross_rng());
        unsigned long long ull = RT(strtoull)(buf, NULL, 10);
        htp_cross_fold(&hs, &ull, sizeof ull);
    }
    out[n++] = (struct htp_cross){"printf", hp};
    out[n++] = (struct htp_cross){"strtod strtoull", hs};
    return n;
}

#endif  // HTP_RT_CROSSCHECK_H
