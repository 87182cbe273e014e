// test-rt-math.c: the Hexagon runtime's portable arithmetic, measured on the
// build machine against glibc. The runtime's math.c, compiler-rt.c,
// printf.c and strconv.c are compiled in under other names
// (HTP_RT_TEST_NAMES: expf -> htp_rt_test_expf, see rt-name.h), so both
// versions run side by side:
//
//   - every libm function: sweeps, random inputs and edge cases; the error
//     is measured in ulps of the result's format against a more precise
//     reference (glibc's double function for a float one, its long double
//     function for a double one), and the largest seen must stay within
//     the function's bound; exact functions must match bit for bit;
//   - the compiler helpers (integer and float division, square roots)
//     bit for bit against the machine's operators;
//   - vsnprintf against glibc's for many conversions and values;
//   - strtod, strtoul, strtoull against glibc's (value, end pointer, errno).
//
// Prints one line per function with the max ulp seen. Exit 0: pass, 1: fail,
// 77: skip (no long double wider than double for the reference).

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

float  htp_rt_test_expf(float);
float  htp_rt_test_logf(float);
float  htp_rt_test_powf(float, float);
float  htp_rt_test_sinf(float);
float  htp_rt_test_cosf(float);
float  htp_rt_test_sqrtf(float);
float  htp_rt_test_tanhf(float);
float  htp_rt_test_erff(float);
float  htp_rt_test_fabsf(float);
float  htp_rt_test_floorf(float);
float  htp_rt_test_ceilf(float);
float  htp_rt_test_roundf(float);
float  htp_rt_test_nearbyintf(float);
float  htp_rt_test_fmaxf(float, float);
float  htp_rt_test_fminf(float, float);
double htp_rt_test_sqrt(double);
double htp_rt_test_tanh(double);
double htp_rt_test_log(double);
double htp_rt_test_exp(double);
double htp_rt_test_ceil(double);
double htp_rt_test_floor(double);
double htp_rt_test_round(double);
double htp_rt_test_pow(double, double);
double htp_rt_test_fabs(double);

int                htp_rt_test_vsnprintf(char * buf, size_t size, const char * fmt, va_list ap);
double             htp_rt_test_strtod(const char * s, char ** end);
unsigned long      htp_rt_test_strtoul(const char * s, char ** end, int base);
unsigned long long htp_rt_test_strtoull(const char * s, char ** end, int base);
int                htp_rt_test_atoi(const char * s);

uint32_t __hexagon_udivsi3(uint32_t, uint32_t);
int32_t  __hexagon_divsi3(int32_t, int32_t);
uint32_t __hexagon_umodsi3(uint32_t, uint32_t);
int32_t  __hexagon_modsi3(int32_t, int32_t);
uint64_t __hexagon_udivdi3(uint64_t, uint64_t);
int64_t  __hexagon_divdi3(int64_t, int64_t);
uint64_t __hexagon_umoddi3(uint64_t, uint64_t);
int64_t  __hexagon_moddi3(int64_t, int64_t);
float    __hexagon_divsf3(float, float);
double   __hexagon_divdf3(double, double);
float    __hexagon_sqrtf(float);
double   htp_rt_sqrt_f64(double);

static int n_fail = 0;

#define CHECK(cond, ...)                                \
    do {                                                \
        if (!(cond)) {                                  \
            printf("FAIL %s:%d: ", __FILE__, __LINE__); \
            printf(__VA_ARGS__);                        \
            printf("\n");                               \
            n_fail++;                                   \
        }                                               \
    } while (0)

// xorshift64*: deterministic, so a failure reproduces.
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

static double uniform(double lo, double hi) {
    return lo + (hi - lo) * ((double)(rng() >> 11) * 0x1p-53);
}

static float f32_of(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t bits_f32(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static double f64_of(uint64_t u) {
    double f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint64_t bits_f64(double f) {
    uint64_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

// A float with random sign, random significand and an exponent in [lo, hi].
static float rand_f32_exp(int lo, int hi) {
    int      e = lo + (int)(rng() % (uint64_t)(hi - lo + 1));
    uint32_t m = (uint32_t)rng() & 0x7fffffu;
    return ldexpf(1.0f + (float)m * 0x1p-23f, e) * ((rng() & 1) ? -1.0f : 1.0f);
}

static double rand_f64_exp(int lo, int hi) {
    int      e = lo + (int)(rng() % (uint64_t)(hi - lo + 1));
    uint64_t m = rng() & 0xfffffffffffffull;
    return ldexp(1.0 + (double)m * 0x1p-52, e) * ((rng() & 1) ? -1.0 : 1.0);
}

// ---------------------------------------------------------------------------
// Error in ulps
// ---------------------------------------------------------------------------

// |got - ref| in units of the float spacing at ref. An infinite result
// counts as 2^128, so rounding just past FLT_MAX to inf measures right.
static double ulps_f32(float got, double ref) {
    if (isnan(ref) || isnan(got)) {
        return isnan(ref) && isnan(got) ? 0 : INFINITY;
    }
    if (isinf(ref)) {
        return got == ref ? 0 : INFINITY;
    }
    if (isinf(got) && fabs(ref) >= 0x1.ffffffp127 && signbit(got) == signbit(ref)) {
        return 0;  // beyond FLT_MAX + half an ulp: inf is the right rounding
    }
    double g = isinf(got) ? copysign(0x1p128, got) : got;
    int    e;
    frexp(ref, &e);
    int ue = e - 24 < -149 ? -149 : e - 24;
    return fabs(g - ref) / ldexp(1.0, ue);
}

static double ulps_f64(double got, long double ref) {
    if (isnan(ref) || isnan(got)) {
        return isnan(ref) && isnan(got) ? 0 : INFINITY;
    }
    if (isinf(ref)) {
        return got == ref ? 0 : INFINITY;
    }
    if (isinf(got) && fabsl(ref) >= 0x1.fffffffffffff8p1023L && signbit(got) == signbit(ref)) {
        return 0;
    }
    long double g = isinf(got) ? copysignl(0x1p1024L, got) : got;
    int         e;
    frexpl(ref, &e);
    int ue = e - 53 < -1074 ? -1074 : e - 53;
    return (double)(fabsl(g - ref) / ldexpl(1.0L, ue));
}

struct stat {
    const char * name;
    double       bound;
    double       max;
    double       worst_x, worst_y;
    long         n;
};

static void note(struct stat * s, double err, double x, double y) {
    s->n++;
    if (err > s->max || (isnan(err) && !isnan(s->max))) {
        s->max     = err;
        s->worst_x = x;
        s->worst_y = y;
    }
}

static void report(struct stat * s) {
    int ok = s->max <= s->bound;
    printf("%-8s %9ld inputs  max %.5f ulp  (bound %.2f)  %s", s->name, s->n, s->max, s->bound, ok ? "ok" : "FAIL");
    if (!ok) {
        printf("  worst at x=%a y=%a", s->worst_x, s->worst_y);
        n_fail++;
    }
    printf("\n");
}

// ---------------------------------------------------------------------------
// float functions: error against glibc's double function on the same input
// ---------------------------------------------------------------------------

typedef float (*f1)(float);

static void test_f1(const char * name, f1 ours, double (*ref)(double), double bound, double lo, double hi, int emin,
                    int emax) {
    struct stat        s      = {name, bound, 0, 0, 0, 0};
    static const float edge[] = {0.0f,    -0.0f,    1.0f,    -1.0f,      0.5f,         -0.5f,      2.0f,
                                 1e-45f,  -1e-45f,  1e-38f,  FLT_MAX,    -FLT_MAX,     88.72f,     88.7228394f,
                                 -87.33f, -103.97f, -104.0f, 3.9f,       4.0f,         1.5707963f, 3.14159265f,
                                 1e10f,   -1e10f,   1e38f,   6.2831853f, 0.785398185f, 1e-7f,      4.2e-20f};
    for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
        note(&s, ulps_f32(ours(edge[i]), ref(edge[i])), edge[i], 0);
    }
    const float special[] = {INFINITY, -INFINITY, NAN};
    for (int i = 0; i < 3; i++) {
        float  g = ours(special[i]);
        double r = ref(special[i]);
        note(&s, (isnan(g) && isnan(r)) || g == r ? 0 : INFINITY, special[i], 0);
    }
    for (int i = 0; i < 300000; i++) {  // uniform over the interesting range
        float x = (float)uniform(lo, hi);
        note(&s, ulps_f32(ours(x), ref(x)), x, 0);
    }
    for (int i = 0; i < 300000; i++) {  // every binade in [emin, emax], both signs
        float x = rand_f32_exp(emin, emax);
        note(&s, ulps_f32(ours(x), ref(x)), x, 0);
    }
    report(&s);
}

static double ref_logd(double x) {
    return log(x);
}

// ---------------------------------------------------------------------------
// double functions: error against glibc's long double function
// ---------------------------------------------------------------------------

typedef double (*d1)(double);

static void test_d1(const char * name, d1 ours, long double (*ref)(long double), double bound, double lo, double hi,
                    int emin, int emax) {
    struct stat         s      = {name, bound, 0, 0, 0, 0};
    static const double edge[] = {0.0,
                                  -0.0,
                                  1.0,
                                  -1.0,
                                  0.5,
                                  2.0,
                                  4.9e-324,
                                  -4.9e-324,
                                  2.2e-308,
                                  DBL_MAX,
                                  -DBL_MAX,
                                  709.78,
                                  709.7827128933839,
                                  -708.4,
                                  -745.13,
                                  -745.1332191019411,
                                  -745.2,
                                  1e-300,
                                  0.99999999999,
                                  1.00000000001,
                                  20.0,
                                  22.0,
                                  0.0625,
                                  -0.0625,
                                  1e-20,
                                  0x1p-27,
                                  0x1p-28,
                                  0.7,
                                  1.41421356};
    for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
        note(&s, ulps_f64(ours(edge[i]), ref(edge[i])), edge[i], 0);
    }
    const double special[] = {INFINITY, -INFINITY, NAN};
    for (int i = 0; i < 3; i++) {
        double      g = ours(special[i]);
        long double r = ref(special[i]);
        note(&s, (isnan(g) && isnan(r)) || g == r ? 0 : INFINITY, special[i], 0);
    }
    for (int i = 0; i < 300000; i++) {
        double x = uniform(lo, hi);
        note(&s, ulps_f64(ours(x), ref(x)), x, 0);
    }
    for (int i = 0; i < 300000; i++) {
        double x = rand_f64_exp(emin, emax);
        note(&s, ulps_f64(ours(x), ref(x)), x, 0);
    }
    report(&s);
}

static void test_pow(void) {
    struct stat s = {"pow", 0.51, 0, 0, 0, 0};
    for (int i = 0; i < 300000; i++) {
        double x = fabs(rand_f64_exp(-30, 30));
        double y = uniform(-40, 40);
        note(&s, ulps_f64(htp_rt_test_pow(x, y), powl(x, y)), x, y);
    }
    for (int i = 0; i < 200000; i++) {  // near 1 with large y: the hard case for log's precision
        double x = 1.0 + uniform(-1e-3, 1e-3) * ldexp(1.0, -(int)(rng() % 40));
        double y = uniform(-1, 1) * ldexp(1.0, (int)(rng() % 50));
        note(&s, ulps_f64(htp_rt_test_pow(x, y), powl(x, y)), x, y);
    }
    for (int i = 0; i < 200000; i++) {  // results near overflow and into the subnormals
        double x = uniform(1.5, 3.0);
        double y = uniform(-1600, 1040) / log2(x);
        note(&s, ulps_f64(htp_rt_test_pow(x, y), powl(x, y)), x, y);
    }
    for (int i = 0; i < 100000; i++) {  // negative x, integer y
        double x = -fabs(rand_f64_exp(-8, 8));
        double y = (double)((int64_t)(rng() % 200) - 100);
        note(&s, ulps_f64(htp_rt_test_pow(x, y), powl(x, y)), x, y);
    }
    for (int i = 2; i <= 60; i++) {  // exact powers must come out exact
        note(&s, ulps_f64(htp_rt_test_pow(3.0, i), powl(3.0L, i)), 3.0, i);
        note(&s, ulps_f64(htp_rt_test_pow(2.0, -i * 17), powl(2.0L, -i * 17)), 2.0, -i * 17);
    }
    report(&s);

    // The special cases, bit for bit (any NaN for NaN).
    const double v[] = {0.0,       -0.0, 1.0,   -1.0,   0.5,    -0.5,    2.0,    -2.0,       3.0,        -3.0, INFINITY,
                        -INFINITY, NAN,  1e300, -1e300, 1e-310, -1e-310, 0x1p53, 0x1p53 + 2, 0x1p52 + 1, 2.5,  -2.5};
    int          n   = (int)(sizeof(v) / sizeof(v[0]));
    int          bad = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            double g = htp_rt_test_pow(v[i], v[j]), r = pow(v[i], v[j]);
            float  gf = htp_rt_test_powf((float)v[i], (float)v[j]), rf = powf((float)v[i], (float)v[j]);
            if (!((isnan(g) && isnan(r)) || bits_f64(g) == bits_f64(r) || ulps_f64(g, powl(v[i], v[j])) <= 1.0)) {
                printf("  pow(%a, %a) = %a, glibc %a\n", v[i], v[j], g, r);
                bad++;
            }
            if (!((isnan(gf) && isnan(rf)) || bits_f32(gf) == bits_f32(rf) ||
                  ulps_f32(gf, pow((float)v[i], (float)v[j])) <= 1.0)) {
                printf("  powf(%a, %a) = %a, glibc %a\n", (float)v[i], (float)v[j], gf, rf);
                bad++;
            }
        }
    }
    CHECK(bad == 0, "pow/powf special cases: %d differ from glibc", bad);
}

static void test_powf(void) {
    struct stat s = {"powf", 0.51, 0, 0, 0, 0};
    for (int i = 0; i < 300000; i++) {
        float x = fabsf(rand_f32_exp(-20, 20));
        float y = (float)uniform(-30, 30);
        note(&s, ulps_f32(htp_rt_test_powf(x, y), pow(x, y)), x, y);
    }
    for (int i = 0; i < 200000; i++) {
        float x = (float)uniform(1.5, 3.0);
        float y = (float)(uniform(-160, 130) / log2(x));
        note(&s, ulps_f32(htp_rt_test_powf(x, y), pow(x, y)), x, y);
    }
    for (int i = 0; i < 100000; i++) {
        float x = -fabsf(rand_f32_exp(-4, 4));
        float y = (float)((int)(rng() % 40) - 20);
        note(&s, ulps_f32(htp_rt_test_powf(x, y), pow(x, y)), x, y);
    }
    report(&s);
}

// ---------------------------------------------------------------------------
// Exact functions: bit for bit
// ---------------------------------------------------------------------------

static int same_f32(float a, float b) {
    return (isnan(a) && isnan(b)) || bits_f32(a) == bits_f32(b);
}

static int same_f64(double a, double b) {
    return (isnan(a) && isnan(b)) || bits_f64(a) == bits_f64(b);
}

static long exact_shown = 0;

// Counts a mismatch of an exact function and shows the first few.
static int differ(int same, const char * name, double x, double got, double want) {
    if (!same && exact_shown++ < 10) {
        printf("  %s(%a) = %a, glibc %a\n", name, x, got, want);
    }
    return !same;
}

#define EXACT_F32(fn, ours, x) differ(same_f32(ours(x), fn(x)), #fn, x, ours(x), fn(x))
#define EXACT_F64(fn, ours, x) differ(same_f64(ours(x), fn(x)), #fn, x, ours(x), fn(x))

static void test_exact(void) {
    long bad = 0, n = 0;
    for (int i = 0; i < 2000000; i++) {
        // Random bit patterns (all exponents, subnormals, NaN and inf), and
        // values near integers and halves, where rounding is decided.
        uint32_t u = (uint32_t)rng();
        float    x = (i & 1) ? f32_of(u) : (float)((int)(rng() % 2001) - 1000) * 0.5f + (float)uniform(-1e-3, 1e-3);
        uint64_t w = rng();
        double   y = (i & 1) ? f64_of(w) : (double)((int64_t)(rng() % 2001) - 1000) * 0.5 + uniform(-1e-9, 1e-9);
        n++;
        bad += EXACT_F32(sqrtf, htp_rt_test_sqrtf, x);
        bad += EXACT_F32(sqrtf, __hexagon_sqrtf, x);
        bad += EXACT_F32(floorf, htp_rt_test_floorf, x);
        bad += EXACT_F32(ceilf, htp_rt_test_ceilf, x);
        bad += EXACT_F32(roundf, htp_rt_test_roundf, x);
        bad += EXACT_F32(nearbyintf, htp_rt_test_nearbyintf, x);
        bad += EXACT_F32(fabsf, htp_rt_test_fabsf, x);
        bad += EXACT_F64(sqrt, htp_rt_test_sqrt, y);
        bad += EXACT_F64(floor, htp_rt_test_floor, y);
        bad += EXACT_F64(ceil, htp_rt_test_ceil, y);
        bad += EXACT_F64(round, htp_rt_test_round, y);
        bad += EXACT_F64(fabs, htp_rt_test_fabs, y);
        // Signaling NaNs are left out: C leaves fmax of one open (glibc returns NaN).
        float x2 = (i % 7 == 0) ? NAN : f32_of((uint32_t)rng());
        if (isnan(x2)) {
            x2 = NAN;
        }
        if (isnan(x)) {
            x = NAN;
        }
        float mx = htp_rt_test_fmaxf(x, x2), mn = htp_rt_test_fminf(x, x2);
        // C leaves fmax(-0, +0) open: compare values, not bits, for zeros.
        bad += differ(same_f32(mx, fmaxf(x, x2)) || (mx == 0 && fmaxf(x, x2) == 0), "fmaxf", x, mx, fmaxf(x, x2));
        bad += differ(same_f32(mn, fminf(x, x2)) || (mn == 0 && fminf(x, x2) == 0), "fminf", x, mn, fminf(x, x2));
    }
    printf("exact    %9ld inputs  sqrtf sqrt floor ceil round nearbyintf fabs fmaxf fminf: %ld differ  %s\n", n, bad,
           bad ? "FAIL" : "ok");
    if (bad) {
        n_fail++;
    }
}

// ---------------------------------------------------------------------------
// Compiler helpers against the machine's operators
// ---------------------------------------------------------------------------

static void test_helpers(void) {
    long bad = 0, n = 0;
    for (int i = 0; i < 2000000; i++) {
        n++;
        // float and double division on random bits, and on values whose
        // quotient is near a midpoint (small integers)
        float  a = f32_of((uint32_t)rng()), b = f32_of((uint32_t)rng());
        double c = f64_of(rng()), d = f64_of(rng());
        if (i & 1) {
            a = (float)(rng() % 100000);
            b = (float)(rng() % 1000 + 1);
            c = (double)(rng() % 100000000);
            d = (double)(rng() % 100000 + 1);
        }
        if (i % 5 == 0) {  // force subnormal operands / results
            b = f32_of((uint32_t)rng() & 0x807fffffu);
            d = f64_of(rng() & 0x800fffffffffffffull);
            c = f64_of(rng() & 0x800fffffffffffffull);
        }
        bad += !same_f32(__hexagon_divsf3(a, b), a / b);
        bad += !same_f64(__hexagon_divdf3(c, d), c / d);
        bad += !same_f64(htp_rt_sqrt_f64(c), sqrt(c));

        uint32_t x = (uint32_t)rng() >> (rng() % 32), y = (uint32_t)rng() >> (rng() % 32);
        uint64_t X = rng() >> (rng() % 64), Y = rng() >> (rng() % 64);
        if (y == 0) {
            y = 1;
        }
        if (Y == 0) {
            Y = 7;
        }
        bad += __hexagon_udivsi3(x, y) != x / y;
        bad += __hexagon_umodsi3(x, y) != x % y;
        bad += __hexagon_udivdi3(X, Y) != X / Y;
        bad += __hexagon_umoddi3(X, Y) != X % Y;
        int32_t sx = (int32_t)x, sy = (int32_t)y;
        int64_t SX = (int64_t)X, SY = (int64_t)Y;
        if (!(sx == INT32_MIN && sy == -1)) {
            bad += __hexagon_divsi3(sx, sy) != sx / sy;
            bad += __hexagon_modsi3(sx, sy) != sx % sy;
        }
        if (!(SX == INT64_MIN && SY == -1)) {
            bad += __hexagon_divdi3(SX, SY) != SX / SY;
            bad += __hexagon_moddi3(SX, SY) != SX % SY;
        }
    }
    // Edges: extremes of both signs.
    const int64_t e64[] = {0,
                           1,
                           -1,
                           2,
                           -2,
                           3,
                           7,
                           -7,
                           INT64_MAX,
                           INT64_MIN,
                           INT64_MAX - 1,
                           INT64_MIN + 1,
                           0x100000000ll,
                           -0x100000000ll,
                           0xffffffffll,
                           INT32_MAX,
                           INT32_MIN};
    for (size_t i = 0; i < sizeof(e64) / sizeof(e64[0]); i++) {
        for (size_t j = 0; j < sizeof(e64) / sizeof(e64[0]); j++) {
            int64_t p = e64[i], q = e64[j];
            if (q == 0) {
                continue;
            }
            n++;
            bad += __hexagon_udivdi3((uint64_t)p, (uint64_t)q) != (uint64_t)p / (uint64_t)q;
            bad += __hexagon_umoddi3((uint64_t)p, (uint64_t)q) != (uint64_t)p % (uint64_t)q;
            if (!(p == INT64_MIN && q == -1)) {
                bad += __hexagon_divdi3(p, q) != p / q;
                bad += __hexagon_moddi3(p, q) != p % q;
            }
            int32_t p32 = (int32_t)p, q32 = (int32_t)q;
            if (q32 != 0) {
                bad += __hexagon_udivsi3((uint32_t)p32, (uint32_t)q32) != (uint32_t)p32 / (uint32_t)q32;
                bad += __hexagon_umodsi3((uint32_t)p32, (uint32_t)q32) != (uint32_t)p32 % (uint32_t)q32;
                if (!(p32 == INT32_MIN && q32 == -1)) {
                    bad += __hexagon_divsi3(p32, q32) != p32 / q32;
                    bad += __hexagon_modsi3(p32, q32) != p32 % q32;
                }
            }
        }
    }
    const float fe[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, FLT_MAX, FLT_MIN, 1e-45f, 3.0f, 0x1p-149f};
    for (size_t i = 0; i < sizeof(fe) / sizeof(fe[0]); i++) {
        for (size_t j = 0; j < sizeof(fe) / sizeof(fe[0]); j++) {
            n++;
            bad += !same_f32(__hexagon_divsf3(fe[i], fe[j]), fe[i] / fe[j]);
            bad += !same_f64(__hexagon_divdf3(fe[i], fe[j]), (double)fe[i] / (double)fe[j]);
            bad +=
                !same_f64(__hexagon_divdf3(fe[i] * 1e300, fe[j] * 1e-300), ((double)fe[i] * 1e300) / (fe[j] * 1e-300));
        }
    }
    printf("helpers  %9ld inputs  div/mod si/di, divsf3, divdf3, sqrtf, sqrt: %ld differ  %s\n", n, bad,
           bad ? "FAIL" : "ok");
    if (bad) {
        n_fail++;
    }
}

// ---------------------------------------------------------------------------
// vsnprintf against glibc
// ---------------------------------------------------------------------------

static int ours_snprintf(char * buf, size_t size, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = htp_rt_test_vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

static long printf_bad = 0, printf_n = 0;

// fmt is evaluated once (it may pick a random format).
#define SAME_PRINT(fmt, ...)                                                                             \
    do {                                                                                                 \
        char         a_[2048], b_[2048];                                                                 \
        const char * f_  = (fmt);                                                                        \
        int          na_ = ours_snprintf(a_, sizeof a_, f_, __VA_ARGS__);                                \
        int          nb_ = snprintf(b_, sizeof b_, f_, __VA_ARGS__);                                     \
        printf_n++;                                                                                      \
        if (na_ != nb_ || strcmp(a_, b_) != 0) {                                                         \
            if (printf_bad++ < 10) {                                                                     \
                printf("  printf(\"%s\"): ours \"%s\" (%d), glibc \"%s\" (%d)\n", f_, a_, na_, b_, nb_); \
            }                                                                                            \
        }                                                                                                \
    } while (0)

static void test_printf(void) {
    // Integers: every conversion with flags, width and precision.
    static const char * ifmt[] = {"%d",      "%5d",  "%-5d|", "%05d",  "%+d",    "% d",   "%.3d",  "%8.3d",
                                  "%-8.3d|", "%.0d", "%x",    "%X",    "%#x",    "%#X",   "%08x",  "%#010x",
                                  "%o",      "%#o",  "%u",    "%10u",  "%-10u|", "%.10u", "%+.0d", "%#.0o",
                                  "%#.0x",   "%c",   "%5c",   "%-5c|", "%hhd",   "%hd",   "%hhu",  "%hx"};
    for (int i = 0; i < 20000; i++) {
        int v = (int)(uint32_t)(rng() >> (rng() % 33));
        if (i % 10 == 0) {
            v = (int)(rng() % 3) - 1;
        }
        const char * f = ifmt[rng() % (sizeof(ifmt) / sizeof(ifmt[0]))];
        if (strchr(f, 'c') != NULL) {
            v = 'A' + (int)(rng() % 26);
        }
        SAME_PRINT(f, v);
    }
    static const char * lfmt[] = {"%lld", "%llu", "%llx", "%20lld", "%-20llx|", "%#llx", "%+lld", "%.25lld", "%llo"};
    for (int i = 0; i < 10000; i++) {
        long long v = (long long)(rng() >> (rng() % 64));
        if (rng() & 1) {
            v = -v;
        }
        if (i == 0) {
            v = INT64_MIN;
        }
        SAME_PRINT(lfmt[rng() % (sizeof(lfmt) / sizeof(lfmt[0]))], v);
    }
    for (int i = 0; i < 1000; i++) {
        size_t z = (size_t)(rng() >> (rng() % 64));
        SAME_PRINT("%zu %zx %zd", z, z, (ssize_t)z);
        SAME_PRINT("%ld %lu %lx", (long)z, (unsigned long)z, (unsigned long)z);
        SAME_PRINT("%jd %td", (intmax_t)z, (ptrdiff_t)z);
        SAME_PRINT("%p %20p %-20p|", (void *)z, (void *)z, (void *)z);
    }
    SAME_PRINT("%p", (void *)NULL);
    SAME_PRINT("%s|%10s|%-10s|%.2s|%*s|%-*s|%.*s", "abc", "abc", "abc", "abc", 6, "xy", 6, "xy", 1, "xy");
    const char * volatile no_string = NULL;  // volatile: keep the compiler from "proving" it NULL
    SAME_PRINT("%s %.3s %10s", no_string, no_string, no_string);
    SAME_PRINT("%%|%d%%", 5);
    SAME_PRINT("%*d|%-*d|%.*d|%*.*d", 8, 42, 8, 42, 5, 42, -8, 3, 42);

    // Floating point: random doubles of every magnitude, every conversion.
    static const char * ffmt[] = {
        "%f",    "%.0f", "%.1f",  "%.3f",  "%.10f", "%.17f", "%.30f",  "%12.4f", "%-12.4f|", "%012.4f", "%+f",  "% f",
        "%#.0f", "%e",   "%.0e",  "%.3e",  "%.16e", "%E",    "%#.0e",  "%15.4e", "%-15.4e|", "%+e",     "%g",   "%.0g",
        "%.1g",  "%.3g", "%.10g", "%.17g", "%G",    "%12g",  "%-12g|", "%012g",  "%+g",      "%F",      "%.40e"};
    for (int i = 0; i < 60000; i++) {
        double v;
        switch (i % 4) {
            case 0:
                v = f64_of(rng());
                break;  // anything, NaN and inf included
            case 1:
                v = rand_f64_exp(-30, 30);
                break;  // everyday magnitudes
            case 2:
                v = (double)(int64_t)(rng() % 2000001 - 1000000) / 8;
                break;  // ties and exact values
            default:
                v = (double)(rng() % 100000) * pow(10, (int)(rng() % 20) - 10);
                break;
        }
        SAME_PRINT(ffmt[rng() % (sizeof(ffmt) / sizeof(ffmt[0]))], v);
    }
    const double fe[] = {0.0,  -0.0,        0.5,       1.5,     2.5,      -2.5,      0.125,    9.5,
                         99.5, 999.9999,    9.9999999, 1e300,   DBL_MAX,  DBL_MIN,   4.9e-324, 1e-5,
                         1e-4, 123456789.0, 0.1,       1.0 / 3, INFINITY, -INFINITY, NAN,      -NAN};
    for (size_t i = 0; i < sizeof(fe) / sizeof(fe[0]); i++) {
        for (size_t j = 0; j < sizeof(ffmt) / sizeof(ffmt[0]); j++) {
            SAME_PRINT(ffmt[j], fe[i]);
        }
        SAME_PRINT("%.1100f", fe[i]);
        SAME_PRINT("%.800e", fe[i]);
        SAME_PRINT("%.1200g", fe[i]);
        SAME_PRINT("%10.3f|%-10.3e|%010.3g", fe[i], fe[i], fe[i]);
    }
    // %#g: glibc drops digits when rounding carries (999.9999 -> "1.e+03"
    // for %#.3g), against C's rule; check ours against the rule itself,
    // built from glibc's %e and %f, which are right.
    for (int i = 0; i < 20000; i++) {
        double v = i % 2 ? rand_f64_exp(-20, 20) : (double)(rng() % 100000) * pow(10, (int)(rng() % 12) - 6) - 0.00005;
        int    p = 1 + (int)(rng() % 17);
        char   e[64], want[600], got[600], f[16];
        snprintf(e, sizeof e, "%.*e", p - 1, v);
        int x = atoi(strchr(e, 'e') + 1);
        if (p > x && x >= -4) {
            snprintf(want, sizeof want, "%#.*f", p - 1 - x, v);
        } else {
            snprintf(want, sizeof want, "%#.*e", p - 1, v);
        }
        snprintf(f, sizeof f, "%%#.%dg", p);
        ours_snprintf(got, sizeof got, f, v);
        printf_n++;
        if (strcmp(got, want) != 0 && printf_bad++ < 10) {
            printf("  printf(\"%s\", %a): ours \"%s\", C's rule \"%s\"\n", f, v, got, want);
        }
    }
    SAME_PRINT("%.1300f", 4.9e-324);
    SAME_PRINT("%.1300e", DBL_MAX);

    // Truncation: the return value is the full length; the buffer ends in NUL.
    char small[8];
    int  n = ours_snprintf(small, sizeof small, "%s-%d", "abcdef", 12345);
    char big[64];
    int  nb = snprintf(big, sizeof big, "%s-%d", "abcdef", 12345);
    printf_n++;
    if (n != nb || strncmp(small, big, sizeof small - 1) != 0 || small[7] != '\0') {
        printf_bad++;
        printf("  truncation: \"%s\" %d\n", small, n);
    }
    n = ours_snprintf(NULL, 0, "%d", 123456);
    printf_n++;
    printf_bad += n != 6;

    // Unsupported conversions print as written and still take their argument.
    ours_snprintf(big, sizeof big, "%a|%d|%ls|%d|%lc|%d", 1.0, 5, (const void *)"w", 6, 'c', 7);
    printf_n++;
    if (strcmp(big, "%a|5|%ls|6|%lc|7") != 0) {
        printf_bad++;
        printf("  unsupported conversions: \"%s\"\n", big);
    }

    printf("printf   %9ld formats  %ld differ from glibc  %s\n", printf_n, printf_bad, printf_bad ? "FAIL" : "ok");
    if (printf_bad) {
        n_fail++;
    }
}

// ---------------------------------------------------------------------------
// strtod, strtoul, strtoull against glibc
// ---------------------------------------------------------------------------

static long conv_bad = 0, conv_n = 0;

static void same_strtod(const char * s) {
    char * e1;
    char * e2;
    errno     = 0;
    double a  = htp_rt_test_strtod(s, &e1);
    int    r1 = errno == ERANGE;
    errno     = 0;
    double b  = strtod(s, &e2);
    int    r2 = errno == ERANGE;
    conv_n++;
    // glibc raises ERANGE for any subnormal result; so do we, and for zero from nonzero digits.
    if (!same_f64(a, b) || e1 != e2 || (r1 != r2 && !(b == 0 || fabs(b) < DBL_MIN))) {
        if (conv_bad++ < 10) {
            printf("  strtod(\"%.60s\"): ours %a end+%d erange %d, glibc %a end+%d erange %d\n", s, a, (int)(e1 - s),
                   r1, b, (int)(e2 - s), r2);
        }
    }
}

static void same_strtoul(const char * s, int base) {
    char * e1;
    char * e2;
    errno                  = 0;
    unsigned long long a   = htp_rt_test_strtoull(s, &e1, base);
    int                er1 = errno;
    errno                  = 0;
    unsigned long long b   = strtoull(s, &e2, base);
    int                er2 = errno;
    errno                  = 0;
    unsigned long c        = htp_rt_test_strtoul(s, &e1, base);
    int           er3      = errno;
    errno                  = 0;
    unsigned long d        = strtoul(s, &e2, base);
    int           er4      = errno;
    conv_n++;
    if (a != b || c != d || e1 != e2 || er1 != er2 || er3 != er4) {
        if (conv_bad++ < 10) {
            printf("  strtoul(\"%s\", %d): ours %llu/%lu, glibc %llu/%lu\n", s, base, a, c, b, d);
        }
    }
    if (base == 10) {
        long long v = strtoll(s, NULL, 10);
        if (v >= INT32_MIN && v <= INT32_MAX && htp_rt_test_atoi(s) != atoi(s)) {
            conv_bad++;
            printf("  atoi(\"%s\")\n", s);
        }
    }
}

static void test_strconv(void) {
    char buf[2048];
    for (int i = 0; i < 100000; i++) {
        double v = i % 3 == 0 ? f64_of(rng()) : rand_f64_exp(-1074, 1023);
        // shortest-ish, exact-ish and padded forms of the same value
        snprintf(buf, sizeof buf, "%.*g", 1 + (int)(rng() % 20), v);
        same_strtod(buf);
        snprintf(buf, sizeof buf, "%.*e", (int)(rng() % 30), v);
        same_strtod(buf);
        if (i % 10 == 0) {
            snprintf(buf, sizeof buf, "%a", v);
            same_strtod(buf);
        }
    }
    // Midpoints between neighbouring doubles, exactly and just off: the
    // cases where only exact arithmetic decides.
    for (int i = 0; i < 20000; i++) {
        double v = fabs(rand_f64_exp(-1074, 1023));
        if (!isfinite(v)) {
            continue;
        }
        long double mid = ((long double)v + (long double)nextafter(v, INFINITY)) / 2;
        snprintf(buf, sizeof buf, "%.40Le", mid);
        same_strtod(buf);
        snprintf(buf, sizeof buf, "%.790Le", mid);  // long: past the 800-digit cut-off with the tail
        same_strtod(buf);
    }
    static const char * cases[] = {"0",
                                   "-0",
                                   "+0.0e10",
                                   "1",
                                   "1.",
                                   ".5",
                                   "-.5e-3",
                                   "1e308",
                                   "1.8e308",
                                   "1e309",
                                   "-1e400",
                                   "4.9e-324",
                                   "2.4e-324",
                                   "2.5e-324",
                                   "1e-400",
                                   "2.2250738585072011e-308",
                                   "2.2250738585072014e-308",
                                   "inf",
                                   "-INF",
                                   "Infinity",
                                   "infinit",
                                   "nan",
                                   "NaN(123abc)",
                                   "nan(",
                                   "  \t 42",
                                   "0x1p0",
                                   "0x1.8p3",
                                   "-0X.8P-1",
                                   "0x1p-1074",
                                   "0x1p-1075",
                                   "0x1.0000000000000fp0",
                                   "0x1.00000000000008p0",
                                   "0x1.00000000000018p0",
                                   "0x",
                                   "0xg",
                                   "0x.p1",
                                   "1e",
                                   "1e+",
                                   "1e-x",
                                   ".",
                                   "-",
                                   "+.",
                                   "e5",
                                   "123abc",
                                   "0.000000000000000000000000000000000000000000000000001e-300",
                                   "9007199254740993",
                                   "9007199254740992.5",
                                   "1.00000000000000011102230246251565404236316680908203125",
                                   "1.000000000000000111022302462515654042363166809082031249999999999999999999",
                                   "179769313486231580793728971405301e276",
                                   "0x1.fffffffffffffp1023",
                                   "0x1.fffffffffffff8p1023"};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        same_strtod(cases[i]);
    }
    static const char * ucases[] = {"0",
                                    "1",
                                    "-1",
                                    "  +42",
                                    "0x1f",
                                    "0X1F",
                                    "0x",
                                    "0xg",
                                    "017",
                                    "08",
                                    "z",
                                    "Zz",
                                    "-0x10",
                                    "123abc",
                                    "",
                                    "   ",
                                    "18446744073709551615",
                                    "18446744073709551616",
                                    "-18446744073709551615",
                                    "99999999999999999999999",
                                    "4294967295",
                                    "4294967296",
                                    "0b101",
                                    "  -0",
                                    "+"};
    const int           bases[]  = {0, 2, 8, 10, 16, 36};
    for (size_t i = 0; i < sizeof(ucases) / sizeof(ucases[0]); i++) {
        for (size_t j = 0; j < sizeof(bases) / sizeof(bases[0]); j++) {
            same_strtoul(ucases[i], bases[j]);
        }
    }
    for (int i = 0; i < 20000; i++) {
        unsigned long long v = rng() >> (rng() % 64);
        snprintf(buf, sizeof buf, (i & 1) ? "%llu" : "-%llu", v);
        same_strtoul(buf, 10);
        snprintf(buf, sizeof buf, "%#llx", v);
        same_strtoul(buf, 0);
        same_strtoul(buf, 16);
    }
    printf("strconv  %9ld strings  %ld differ from glibc  %s\n", conv_n, conv_bad, conv_bad ? "FAIL" : "ok");
    if (conv_bad) {
        n_fail++;
    }
}

int main(void) {
    if (LDBL_MANT_DIG < 64) {
        printf("SKIP: long double has %d bits; the double functions need a wider reference\n", LDBL_MANT_DIG);
        return 77;
    }
    test_f1("expf", htp_rt_test_expf, exp, 0.51, -104, 89, -30, 6);
    test_f1("logf", htp_rt_test_logf, ref_logd, 0.51, 0, 100, -149, 127);
    test_f1("sinf", htp_rt_test_sinf, sin, 0.51, -10, 10, -149, 127);
    test_f1("cosf", htp_rt_test_cosf, cos, 0.51, -10, 10, -149, 127);
    test_f1("tanhf", htp_rt_test_tanhf, tanh, 0.51, -10, 10, -149, 5);
    test_f1("erff", htp_rt_test_erff, erf, 0.51, -5, 5, -149, 3);
    test_powf();
    test_d1("exp", htp_rt_test_exp, expl, 0.51, -746, 710, -60, 10);
    test_d1("log", htp_rt_test_log, logl, 0.51, 0, 4, -1074, 1023);
    test_d1("tanh", htp_rt_test_tanh, tanhl, 0.51, -25, 25, -1074, 5);
    test_pow();
    test_exact();
    test_helpers();
    test_printf();
    test_strconv();
    if (n_fail) {
        printf("FAIL: %d check(s)\n", n_fail);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
