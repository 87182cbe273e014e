// math.c: the float and double functions of the Hexagon runtime's libm.
//
// The one idea: v67 has double-precision add and multiply in hardware, so
// every float function is its double counterpart (or a double evaluation)
// rounded once to float, which makes the float results correctly rounded
// but for rare cases right at a midpoint, and the double functions carry
// extra precision where it is needed as double-double pairs (hi + lo, the
// error-free sums and products of Knuth and Dekker; no fma needed).
//
//   exp    e^x = 2^(k/128) e^r: k = round(128 x / ln 2), |r| <= ln 2 / 256, a
//          table of 2^(j/128) as hi + lo and a degree-6 Taylor polynomial;
//          the result as hi + lo to about 2^-68 (exp_dd), then scaled.
//   log    x = 2^k m; m's top 7 bits pick c ~ m with 1/c rounded to 11 bits
//          (so m / c - 1 = r comes out exact with one split), log x =
//          k ln 2 + log(1/invc) + log1p(r), |r| < 1/225; near 1 (|x - 1| <
//          1/64) log1p(x - 1) directly, so results near 0 lose nothing.
//   pow    e^(y log x) with log x as a double-double (log_dd) and y log x
//          as an exact product: error under 1 ulp for all finite results;
//          the special cases are C's (Annex F).
//   tanh   (e^2x - 1) / (e^2x + 1) in double-double, from an accurate e^u - 1.
//   sinf,  x 2/pi reduced exactly against 2/pi's bits (96 of them, chosen by
//   cosf   x's exponent: Payne-Hanek), then Taylor polynomials in double.
//   erff   Taylor below 1, erfc(x) = e^(-x^2) Q(x) with Q a Chebyshev fit
//          (degree 11 on [1, 2.5] and [2.5, 4]) up to 4, 1 beyond.
//   sqrt   compiler-rt.c's correctly rounded square roots.
//   floor, ceil, round, nearbyintf and the rest: bit manipulation, exact.
//
// The tables and fitted coefficients were computed with 300-bit arithmetic
// (mpmath) for this file: 2^(j/128) and log(1/invc) rounded to nearest as
// hi + the rounded remainder; Taylor coefficients are 1/n! etc. as doubles.
//
// Portable C: the x86 test builds this file under other names (rt-name.h)
// and measures every function's error in ulps against glibc's libm. It must
// be compiled without floating-point contraction (a fused multiply-add
// would break the error-free transformations): the pragma below, and
// -ffp-contract=off for gcc. Functions never set errno (build with
// -fno-math-errno).

#include <math.h>
#include <stdint.h>

#include "compiler-rt.h"
#include "rt-name.h"
#include "softfp.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

static inline uint64_t bits64(double x) {
    return htp_softfp_f64_bits(x);
}

static inline double from64(uint64_t u) {
    return htp_softfp_f64_from(u);
}

static inline uint32_t bits32(float x) {
    return htp_softfp_f32_bits(x);
}

static inline float from32(uint32_t u) {
    return htp_softfp_f32_from(u);
}

struct dd {
    double hi, lo;
};

struct log_entry {
    double    invc;  // ~1/c, 11 significant bits
    struct dd logc;  // log(1/invc), minus ln 2 where the entry serves m / 2
};

// ---------------------------------------------------------------------------
// Double-double arithmetic
// ---------------------------------------------------------------------------

// a + b = s + e exactly (any a, b).
static inline struct dd two_sum(double a, double b) {
    double s  = a + b;
    double bb = s - a;
    double e  = (a - (s - bb)) + (b - bb);
    return (struct dd){s, e};
}

// The same when |a| >= |b| (or a == 0).
static inline struct dd fast_two_sum(double a, double b) {
    double s = a + b;
    return (struct dd){s, b - (s - a)};
}

// a * b = p + e exactly (Dekker; |a|, |b| < 2^995).
static inline struct dd two_prod(double a, double b) {
    const double split = 134217729.0;  // 2^27 + 1
    double       ca = split * a, cb = split * b;
    double       ah = ca - (ca - a), al = a - ah;
    double       bh = cb - (cb - b), bl = b - bh;
    double       p = a * b;
    double       e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    return (struct dd){p, e};
}

static inline struct dd dd_add(struct dd a, struct dd b) {
    struct dd s = two_sum(a.hi, b.hi);
    return fast_two_sum(s.hi, s.lo + a.lo + b.lo);
}

// a / b, both double-double, to about 2^-100 relative.
static inline struct dd dd_div(struct dd a, struct dd b) {
    double    q1 = a.hi / b.hi;
    struct dd p  = two_prod(q1, b.hi);
    double    r  = ((a.hi - p.hi) - p.lo + a.lo) - q1 * b.lo;
    double    q2 = r / b.hi;
    return fast_two_sum(q1, q2);
}

// y * 2^n with one rounding (the result may be subnormal or overflow).
static double scale2(double y, int n) {
    if (n > 1023) {
        y *= 0x1p1023;
        n -= 1023;
        if (n > 1023) {
            n = 1023;
        }
    } else if (n < -1022) {
        // Scale into the normal range first (exact), round once at the end.
        y *= 0x1p-1022 * 0x1p54;
        n += 1022 - 54;
        if (n < -1022) {
            n = -1022;
        }
    }
    return y * from64((uint64_t)(n + 1023) << 52);
}

// (y.hi + y.lo) * 2^n (y.hi in [0.5, 2)) rounded once, also when the result
// is subnormal: there the sum is rounded to the subnormal grid (spacing
// 2^-1074, which is 2^(-1074 - n) at y's scale) by adding a constant whose
// binade has that spacing and holds the whole sum.
static double scale2_dd(struct dd y, int n) {
    if (n >= -1022) {
        return scale2(y.hi + y.lo, n);
    }
    if (n < -1200) {
        return 0.0 * y.hi;
    }
    double big = 0x1p52 * from64((uint64_t)(-1074 - n + 1023) << 52);
    double s   = y.hi + big;
    double e   = y.hi - (s - big);  // what that addition rounded away (exact)
    double r   = (s + (e + y.lo)) - big;
    return r * from64((uint64_t)(n + 1023 + 200) << 52) * 0x1p-200;
}

static inline double copysign64(double x, double s) {
    return from64((bits64(x) & 0x7fffffffffffffffull) | (bits64(s) & 0x8000000000000000ull));
}

// ---------------------------------------------------------------------------
// Tables
// ---------------------------------------------------------------------------

static const struct dd exp2_table[128] = {
    {0x1.0000000000000p+0, 0x0.0p+0},
    {0x1.0163da9fb3335p+0, 0x1.b61299ab8cdb7p-54},
    {0x1.02c9a3e778061p+0, -0x1.19083535b085dp-56},
    {0x1.04315e86e7f85p+0, -0x1.0a31c1977c96ep-54},
    {0x1.059b0d3158574p+0, 0x1.d73e2a475b465p-55},
    {0x1.0706b29ddf6dep+0, -0x1.c91dfe2b13c27p-55},
    {0x1.0874518759bc8p+0, 0x1.186be4bb284ffp-57},
    {0x1.09e3ecac6f383p+0, 0x1.1487818316136p-54},
    {0x1.0b5586cf9890fp+0, 0x1.8a62e4adc610bp-54},
    {0x1.0cc922b7247f7p+0, 0x1.01edc16e24f71p-54},
    {0x1.0e3ec32d3d1a2p+0, 0x1.03a1727c57b53p-59},
    {0x1.0fb66affed31bp+0, -0x1.b9bedc44ebd7bp-57},
    {0x1.11301d0125b51p+0, -0x1.6c51039449b3ap-54},
    {0x1.12abdc06c31ccp+0, -0x1.1b514b36ca5c7p-58},
    {0x1.1429aaea92de0p+0, -0x1.32fbf9af1369ep-54},
    {0x1.15a98c8a58e51p+0, 0x1.2406ab9eeab0ap-55},
    {0x1.172b83c7d517bp+0, -0x1.19041b9d78a76p-55},
    {0x1.18af9388c8deap+0, -0x1.11023d1970f6cp-54},
    {0x1.1a35beb6fcb75p+0, 0x1.e5b4c7b4968e4p-55},
    {0x1.1bbe084045cd4p+0, -0x1.95386352ef607p-54},
    {0x1.1d4873168b9aap+0, 0x1.e016e00a2643cp-54},
    {0x1.1ed5022fcd91dp+0, -0x1.1df98027bb78cp-54},
    {0x1.2063b88628cd6p+0, 0x1.dc775814a8495p-55},
    {0x1.21f49917ddc96p+0, 0x1.2a97e9494a5eep-55},
    {0x1.2387a6e756238p+0, 0x1.9b07eb6c70573p-54},
    {0x1.251ce4fb2a63fp+0, 0x1.ac155bef4f4a4p-55},
    {0x1.26b4565e27cddp+0, 0x1.2bd339940e9d9p-55},
    {0x1.284dfe1f56381p+0, -0x1.a4c3a8c3f0d7ep-54},
    {0x1.29e9df51fdee1p+0, 0x1.612e8afad1255p-55},
    {0x1.2b87fd0dad990p+0, -0x1.10adcd6381aa4p-59},
    {0x1.2d285a6e4030bp+0, 0x1.0024754db41d5p-54},
    {0x1.2ecafa93e2f56p+0, 0x1.1ca0f45d52383p-56},
    {0x1.306fe0a31b715p+0, 0x1.6f46ad23182e4p-55},
    {0x1.32170fc4cd831p+0, 0x1.a9ce78e18047cp-55},
    {0x1.33c08b26416ffp+0, 0x1.32721843659a6p-54},
    {0x1.356c55f929ff1p+0, -0x1.b5cee5c4e4628p-55},
    {0x1.371a7373aa9cbp+0, -0x1.63aeabf42eae2p-54},
    {0x1.38cae6d05d866p+0, -0x1.e958d3c9904bdp-54},
    {0x1.3a7db34e59ff7p+0, -0x1.5e436d661f5e3p-56},
    {0x1.3c32dc313a8e5p+0, -0x1.efff8375d29c3p-54},
    {0x1.3dea64c123422p+0, 0x1.ada0911f09ebcp-55},
    {0x1.3fa4504ac801cp+0, -0x1.7d023f956f9f3p-54},
    {0x1.4160a21f72e2ap+0, -0x1.ef3691c309278p-58},
    {0x1.431f5d950a897p+0, -0x1.1c7dde35f7999p-55},
    {0x1.44e086061892dp+0, 0x1.89b7a04ef80d0p-59},
    {0x1.46a41ed1d0057p+0, 0x1.c944bd1648a76p-54},
    {0x1.486a2b5c13cd0p+0, 0x1.3c1a3b69062f0p-56},
    {0x1.4a32af0d7d3dep+0, 0x1.9cb62f3d1be56p-54},
    {0x1.4bfdad5362a27p+0, 0x1.d4397afec42e2p-56},
    {0x1.4dcb299fddd0dp+0, 0x1.8ecdbbc6a7833p-54},
    {0x1.4f9b2769d2ca7p+0, -0x1.4b309d25957e3p-54},
    {0x1.516daa2cf6642p+0, -0x1.f768569bd93efp-55},
    {0x1.5342b569d4f82p+0, -0x1.07abe1db13cadp-55},
    {0x1.551a4ca5d920fp+0, -0x1.d689cefede59bp-55},
    {0x1.56f4736b527dap+0, 0x1.9bb2c011d93adp-54},
    {0x1.58d12d497c7fdp+0, 0x1.295e15b9a1de8p-55},
    {0x1.5ab07dd485429p+0, 0x1.6324c054647adp-54},
    {0x1.5c9268a5946b7p+0, 0x1.c4b1b816986a2p-60},
    {0x1.5e76f15ad2148p+0, 0x1.ba6f93080e65ep-54},
    {0x1.605e1b976dc09p+0, -0x1.3e2429b56de47p-54},
    {0x1.6247eb03a5585p+0, -0x1.383c17e40b497p-54},
    {0x1.6434634ccc320p+0, -0x1.c483c759d8933p-55},
    {0x1.6623882552225p+0, -0x1.bb60987591c34p-54},
    {0x1.68155d44ca973p+0, 0x1.038ae44f73e65p-57},
    {0x1.6a09e667f3bcdp+0, -0x1.bdd3413b26456p-54},
    {0x1.6c012750bdabfp+0, -0x1.2895667ff0b0dp-56},
    {0x1.6dfb23c651a2fp+0, -0x1.bbe3a683c88abp-57},
    {0x1.6ff7df9519484p+0, -0x1.83c0f25860ef6p-55},
    {0x1.71f75e8ec5f74p+0, -0x1.16e4786887a99p-55},
    {0x1.73f9a48a58174p+0, -0x1.0a8d96c65d53cp-54},
    {0x1.75feb564267c9p+0, -0x1.0245957316dd3p-54},
    {0x1.780694fde5d3fp+0, 0x1.866b80a02162dp-54},
    {0x1.7a11473eb0187p+0, -0x1.41577ee04992fp-55},
    {0x1.7c1ed0130c132p+0, 0x1.f124cd1164dd6p-54},
    {0x1.7e2f336cf4e62p+0, 0x1.05d02ba15797ep-56},
    {0x1.80427543e1a12p+0, -0x1.27c86626d972bp-54},
    {0x1.82589994cce13p+0, -0x1.d4c1dd41532d8p-54},
    {0x1.8471a4623c7adp+0, -0x1.8d684a341cdfbp-55},
    {0x1.868d99b4492edp+0, -0x1.fc6f89bd4f6bap-54},
    {0x1.88ac7d98a6699p+0, 0x1.994c2f37cb53ap-54},
    {0x1.8ace5422aa0dbp+0, 0x1.6e9f156864b27p-54},
    {0x1.8cf3216b5448cp+0, -0x1.0d55e32e9e3aap-56},
    {0x1.8f1ae99157736p+0, 0x1.5cc13a2e3976cp-55},
    {0x1.9145b0b91ffc6p+0, -0x1.dd6792e582524p-54},
    {0x1.93737b0cdc5e5p+0, -0x1.75fc781b57ebcp-57},
    {0x1.95a44cbc8520fp+0, -0x1.64b7c96a5f039p-56},
    {0x1.97d829fde4e50p+0, -0x1.d185b7c1b85d1p-54},
    {0x1.9a0f170ca07bap+0, -0x1.173bd91cee632p-54},
    {0x1.9c49182a3f090p+0, 0x1.c7c46b071f2bep-56},
    {0x1.9e86319e32323p+0, 0x1.824ca78e64c6ep-56},
    {0x1.a0c667b5de565p+0, -0x1.359495d1cd533p-54},
    {0x1.a309bec4a2d33p+0, 0x1.6305c7ddc36abp-54},
    {0x1.a5503b23e255dp+0, -0x1.d2f6edb8d41e1p-54},
    {0x1.a799e1330b358p+0, 0x1.bcb7ecac563c7p-54},
    {0x1.a9e6b5579fdbfp+0, 0x1.0fac90ef7fd31p-54},
    {0x1.ac36bbfd3f37ap+0, -0x1.f9234cae76cd0p-55},
    {0x1.ae89f995ad3adp+0, 0x1.7a1cd345dcc81p-54},
    {0x1.b0e07298db666p+0, -0x1.bdef54c80e425p-54},
    {0x1.b33a2b84f15fbp+0, -0x1.2805e3084d708p-57},
    {0x1.b59728de5593ap+0, -0x1.c71dfbbba6de3p-54},
    {0x1.b7f76f2fb5e47p+0, -0x1.5584f7e54ac3bp-56},
    {0x1.ba5b030a1064ap+0, -0x1.efcd30e54292ep-54},
    {0x1.bcc1e904bc1d2p+0, 0x1.23dd07a2d9e84p-55},
    {0x1.bf2c25bd71e09p+0, -0x1.efdca3f6b9c73p-54},
    {0x1.c199bdd85529cp+0, 0x1.11065895048ddp-55},
    {0x1.c40ab5fffd07ap+0, 0x1.b4537e083c60ap-54},
    {0x1.c67f12e57d14bp+0, 0x1.2884dff483cadp-54},
    {0x1.c8f6d9406e7b5p+0, 0x1.1acbc48805c44p-56},
    {0x1.cb720dcef9069p+0, 0x1.503cbd1e949dbp-56},
    {0x1.cdf0b555dc3fap+0, -0x1.dd83b53829d72p-55},
    {0x1.d072d4a07897cp+0, -0x1.cbc3743797a9cp-54},
    {0x1.d2f87080d89f2p+0, -0x1.d487b719d8578p-54},
    {0x1.d5818dcfba487p+0, 0x1.2ed02d75b3707p-55},
    {0x1.d80e316c98398p+0, -0x1.11ec18beddfe8p-54},
    {0x1.da9e603db3285p+0, 0x1.c2300696db532p-54},
    {0x1.dd321f301b460p+0, 0x1.2da5778f018c3p-54},
    {0x1.dfc97337b9b5fp+0, -0x1.1a5cd4f184b5cp-54},
    {0x1.e264614f5a129p+0, -0x1.7b627817a1496p-54},
    {0x1.e502ee78b3ff6p+0, 0x1.39e8980a9cc8fp-55},
    {0x1.e7a51fbc74c83p+0, 0x1.2d522ca0c8de2p-54},
    {0x1.ea4afa2a490dap+0, -0x1.e9c23179c2893p-54},
    {0x1.ecf482d8e67f1p+0, -0x1.c93f3b411ad8cp-54},
    {0x1.efa1bee615a27p+0, 0x1.dc7f486a4b6b0p-54},
    {0x1.f252b376bba97p+0, 0x1.3a1a5bf0d8e43p-54},
    {0x1.f50765b6e4540p+0, 0x1.9d3e12dd8a18bp-54},
    {0x1.f7bfdad9cbe14p+0, -0x1.dbb12d006350ap-54},
    {0x1.fa7c1819e90d8p+0, 0x1.74853f3a5931ep-55},
    {0x1.fd3c22b8f71f1p+0, 0x1.2eb74966579e7p-57},
};

static const struct log_entry log_table[128] = {
    {0x1.fe00000000000p-1, {0x1.0080559588b35p-8, 0x1.f96638cf63677p-62}},
    {0x1.fa00000000000p-1, {0x1.82448a388a2aap-7, 0x1.04b16137f09a0p-62}},
    {0x1.f640000000000p-1, {0x1.3b024b78c5669p-6, 0x1.e23a02f82a1d4p-60}},
    {0x1.f240000000000p-1, {0x1.be0422fcd68f6p-6, 0x1.0a1fcb2728760p-61}},
    {0x1.ee80000000000p-1, {0x1.1ce5a62bc353ap-5, -0x1.c39390333b61cp-59}},
    {0x1.eb00000000000p-1, {0x1.5715c4c03ceefp-5, -0x1.bbf88ec501b56p-61}},
    {0x1.e740000000000p-1, {0x1.95e430f8ce45ep-5, -0x1.67bb43a6e5d7fp-60}},
    {0x1.e3c0000000000p-1, {0x1.d0f2c1dda671cp-5, -0x1.c7de3d1106a2dp-62}},
    {0x1.e000000000000p-1, {0x1.08598b59e3a07p-4, -0x1.dd7009902bf32p-58}},
    {0x1.dcc0000000000p-1, {0x1.242d6c1a58a5cp-4, 0x1.c563242407742p-60}},
    {0x1.d940000000000p-1, {0x1.425bce84749b3p-4, -0x1.4eb7989443aebp-59}},
    {0x1.d5c0000000000p-1, {0x1.60c38ba79945dp-4, -0x1.3bc513ed6a1c8p-58}},
    {0x1.d280000000000p-1, {0x1.7d33687c293c9p-4, -0x1.cf063e63e7075p-58}},
    {0x1.cf40000000000p-1, {0x1.99d62a65eb96fp-4, -0x1.d04f9775ece9bp-58}},
    {0x1.cc00000000000p-1, {0x1.b6ac88dad5b1cp-4, -0x1.0057eed1ca59fp-59}},
    {0x1.c8c0000000000p-1, {0x1.d3b73f37e1f9bp-4, -0x1.fd984b5ff12efp-58}},
    {0x1.c580000000000p-1, {0x1.f0f70cdd992e3p-4, 0x1.f6c272c1dca71p-60}},
    {0x1.c280000000000p-1, {0x1.06135354d4b18p-3, 0x1.18a0d03ba5397p-58}},
    {0x1.bf40000000000p-1, {0x1.14e75b489fff0p-3, -0x1.ee648079b8f93p-58}},
    {0x1.bc40000000000p-1, {0x1.22aff2ddbd971p-3, -0x1.535834b0ffc28p-60}},
    {0x1.b940000000000p-1, {0x1.3090733ce39fap-3, -0x1.b90764f584794p-57}},
    {0x1.b640000000000p-1, {0x1.3e892fe9956dbp-3, -0x1.526eb2adb71fep-57}},
    {0x1.b380000000000p-1, {0x1.4b6d6fefe22a4p-3, 0x1.767ab73ca8d5ep-57}},
    {0x1.b080000000000p-1, {0x1.59958ff1d52f1p-3, 0x1.f4d12c6bf5a87p-57}},
    {0x1.adc0000000000p-1, {0x1.66a5d42a3ad34p-3, 0x1.267540052ff1dp-57}},
    {0x1.ab00000000000p-1, {0x1.73cb9074fd14dp-3, -0x1.521a000b4cf01p-57}},
    {0x1.a840000000000p-1, {0x1.81070bd7b9008p-3, -0x1.7f5997d19ba05p-61}},
    {0x1.a580000000000p-1, {0x1.8e588ebac2dbfp-3, -0x1.46a9a5dd7ff12p-57}},
    {0x1.a2c0000000000p-1, {0x1.9bc062f26fc3ap-3, 0x1.b03013cda9bfcp-57}},
    {0x1.a000000000000p-1, {0x1.a93ed3c8ad9e3p-3, 0x1.bcafa9de97203p-57}},
    {0x1.9d80000000000p-1, {0x1.b5971a213acdbp-3, -0x1.e2f8aadc42f8fp-57}},
    {0x1.9b00000000000p-1, {0x1.c2028ab17f9b4p-3, 0x1.f11aa3853a5f1p-57}},
    {0x1.9840000000000p-1, {0x1.cfc25714bdcfep-3, -0x1.6658fe377c338p-59}},
    {0x1.95c0000000000p-1, {0x1.dc56cae452f5ap-3, -0x1.0abb63cfd2336p-57}},
    {0x1.9340000000000p-1, {0x1.e8ff2622babc7p-3, 0x1.3d33981e51981p-60}},
    {0x1.90c0000000000p-1, {0x1.f5bba83060a0ep-3, -0x1.b56b784b3afc5p-57}},
    {0x1.8e80000000000p-1, {0x1.00a1c6adda473p-2, 0x1.8d688b9e17a8ap-56}},
    {0x1.8c00000000000p-1, {0x1.07138604d5862p-2, 0x1.cdb16ed4e9138p-56}},
    {0x1.8980000000000p-1, {0x1.0d8fb813eb1efp-2, -0x1.cdde2b0172bd5p-56}},
    {0x1.8740000000000p-1, {0x1.136ef02e8290cp-2, -0x1.60c396093faf8p-58}},
    {0x1.8500000000000p-1, {0x1.1956d3b9bc2fap-2, 0x1.7b9d68d50a15dp-56}},
    {0x1.82c0000000000p-1, {0x1.1f477c75732dbp-2, -0x1.2bfef28ae5ff8p-57}},
    {0x1.8080000000000p-1, {0x1.25410494e56c7p-2, 0x1.7ac0ef77f252ap-56}},
    {0x1.7e40000000000p-1, {0x1.2b4386c168f0cp-2, 0x1.39d1a1b1838a5p-58}},
    {0x1.7c00000000000p-1, {0x1.314f1e1d35ce4p-2, -0x1.3d69909e5c3dcp-56}},
    {0x1.79c0000000000p-1, {0x1.3763e64645463p-2, -0x1.c1adc46953834p-57}},
    {0x1.7780000000000p-1, {0x1.3d81fb5946dbap-2, 0x1.c1eab1642e36dp-56}},
    {0x1.7580000000000p-1, {0x1.42f9f3ff62642p-2, -0x1.bbf082ccabbaep-56}},
    {0x1.7340000000000p-1, {0x1.4929e8db4e6e4p-2, 0x1.5955b1c3785b0p-58}},
    {0x1.7140000000000p-1, {0x1.4eb1f36b07184p-2, 0x1.1d1b95e5ecebep-60}},
    {0x1.6f40000000000p-1, {0x1.5441aecbc624bp-2, 0x1.ccc011a735073p-58}},
    {0x1.6d00000000000p-1, {0x1.5a8cadbbedfa1p-2, -0x1.e6c2bdfb3e037p-58}},
    {0x1.6b00000000000p-1, {0x1.602d08af091ecp-2, -0x1.6e8920c09b73fp-58}},
    {0x1.6900000000000p-1, {-0x1.5ff3070a793d4p-2, 0x1.bc60efafc6f6ep-57}},
    {0x1.6700000000000p-1, {-0x1.5a42ab0f4cfe2p-2, 0x1.8ebcb7dee9a3dp-56}},
    {0x1.6540000000000p-1, {-0x1.5541aec91bfa0p-2, 0x1.6aadc72eeb980p-56}},
    {0x1.6340000000000p-1, {-0x1.4f81fe4763d00p-2, -0x1.84de5807b96b5p-56}},
    {0x1.6140000000000p-1, {-0x1.49b9feb7c176bp-2, -0x1.c58ab60d731b6p-60}},
    {0x1.5f80000000000p-1, {-0x1.44a41b463c47cp-2, 0x1.d70c8309edcfcp-56}},
    {0x1.5d80000000000p-1, {-0x1.3ecc460ef5f50p-2, 0x1.4313e09807affp-58}},
    {0x1.5bc0000000000p-1, {-0x1.39a8619f4518fp-2, 0x1.ae6c8cab0b631p-58}},
    {0x1.59c0000000000p-1, {-0x1.33c05f128dda9p-2, 0x1.06380e1a7d303p-57}},
    {0x1.5800000000000p-1, {-0x1.2e8e2bae11d31p-2, 0x1.8f4cdb95ebdf9p-56}},
    {0x1.5640000000000p-1, {-0x1.29552f81ff523p-2, -0x1.301771c407dbfp-56}},
    {0x1.5480000000000p-1, {-0x1.241558bfd1404p-2, 0x1.9bae06a5c872dp-65}},
    {0x1.52c0000000000p-1, {-0x1.1ece95528ae7bp-2, -0x1.84f64b5c47f86p-58}},
    {0x1.5100000000000p-1, {-0x1.1980d2dd4236fp-2, -0x1.9d3d1b0e4d147p-56}},
    {0x1.4f40000000000p-1, {-0x1.142bfeb9a0474p-2, 0x1.9e7a4a75619eep-56}},
    {0x1.4d80000000000p-1, {-0x1.0ed005f657da4p-2, -0x1.c56bd2abfe82ap-56}},
    {0x1.4bc0000000000p-1, {-0x1.096cd555917e6p-2, -0x1.8d20550a30eeep-56}},
    {0x1.4a40000000000p-1, {-0x1.04c8de1841e02p-2, 0x1.ae944b3ae19cfp-56}},
    {0x1.4880000000000p-1, {-0x1.feb0233e607ccp-3, -0x1.6e32d5e8c707fp-57}},
    {0x1.46c0000000000p-1, {-0x1.f3bfa934d6768p-3, 0x1.aad908df8942ep-58}},
    {0x1.4540000000000p-1, {-0x1.ea5349e23ac0ep-3, 0x1.b2ce30cd2d061p-58}},
    {0x1.43c0000000000p-1, {-0x1.e0dbc3d92aac9p-3, -0x1.9f8294df883d6p-59}},
    {0x1.4200000000000p-1, {-0x1.d5c216b4fbb91p-3, -0x1.6e443597e4d40p-57}},
    {0x1.4080000000000p-1, {-0x1.cc320c0176502p-3, -0x1.039a653793a85p-57}},
    {0x1.3f00000000000p-1, {-0x1.c2968558c18c1p-3, 0x1.73dee38a3fb6bp-57}},
    {0x1.3d40000000000p-1, {-0x1.b7526a22e4703p-3, -0x1.bf2e78548fd89p-57}},
    {0x1.3bc0000000000p-1, {-0x1.ad9da1f8273bfp-3, 0x1.6f9007e0a0d70p-57}},
    {0x1.3a40000000000p-1, {-0x1.a3dd04b93865fp-3, -0x1.a1366e2c5a7aap-57}},
    {0x1.38c0000000000p-1, {-0x1.9a10756988593p-3, 0x1.59dbd32f67a3ap-57}},
    {0x1.3740000000000p-1, {-0x1.9037d6a1804c3p-3, -0x1.ea57c1c8d979fp-57}},
    {0x1.35c0000000000p-1, {-0x1.86530a8c70cc6p-3, 0x1.3cd2c57073be9p-58}},
    {0x1.3480000000000p-1, {-0x1.7e0afd630c274p-3, 0x1.83e270efcc373p-58}},
    {0x1.3300000000000p-1, {-0x1.740f8f54037a5p-3, 0x1.b264062a84cdbp-58}},
    {0x1.3180000000000p-1, {-0x1.6a079d0f7aad2p-3, 0x1.eedcbac2a7f18p-62}},
    {0x1.3000000000000p-1, {-0x1.5ff3070a793d4p-3, 0x1.bc60efafc6f6ep-58}},
    {0x1.2ec0000000000p-1, {-0x1.5782cb309162ep-3, 0x1.8d45e51106d5ep-58}},
    {0x1.2d40000000000p-1, {-0x1.4d56b5798ec03p-3, 0x1.ffa95a6aaa4edp-58}},
    {0x1.2c00000000000p-1, {-0x1.44d2b6ccb7d1ep-3, -0x1.9f4f6543e1f88p-57}},
    {0x1.2a80000000000p-1, {-0x1.3a8eb2d31a376p-3, 0x1.220a8abf098f4p-60}},
    {0x1.2940000000000p-1, {-0x1.31f693eb19966p-3, -0x1.b234b8d209720p-58}},
    {0x1.27c0000000000p-1, {-0x1.279a300ab4f7ap-3, -0x1.95991a883feffp-59}},
    {0x1.2680000000000p-1, {-0x1.1eed90e2dc2c3p-3, 0x1.4e47b44db8540p-57}},
    {0x1.2540000000000p-1, {-0x1.16377fb124192p-3, 0x1.e540be89c1eaap-59}},
    {0x1.2400000000000p-1, {-0x1.0d77e7cd08e59p-3, -0x1.9a5dc5e9030acp-57}},
    {0x1.22c0000000000p-1, {-0x1.04aeb449f66bfp-3, 0x1.6f9a332ca3851p-57}},
    {0x1.2140000000000p-1, {-0x1.f42dba3a22cedp-4, -0x1.2334824fcc6ebp-58}},
    {0x1.2000000000000p-1, {-0x1.e27076e2af2e6p-4, 0x1.61578001e0162p-60}},
    {0x1.1ec0000000000p-1, {-0x1.d09f72b4c4824p-4, -0x1.80006a9c6606cp-58}},
    {0x1.1d80000000000p-1, {-0x1.beba818146765p-4, 0x1.e2db7c7d5a130p-58}},
    {0x1.1c40000000000p-1, {-0x1.acc17684332acp-4, -0x1.f17d2016d0e25p-59}},
    {0x1.1b00000000000p-1, {-0x1.9ab42462033adp-4, 0x1.2099e1c184e8ep-59}},
    {0x1.1a00000000000p-1, {-0x1.8c345d6319b21p-4, 0x1.4a697ab3424a9p-61}},
    {0x1.18c0000000000p-1, {-0x1.7a0216f649e12p-4, -0x1.32861063fdf57p-58}},
    {0x1.1780000000000p-1, {-0x1.67bb0726ec0fcp-4, 0x1.b692c214ddbecp-58}},
    {0x1.1640000000000p-1, {-0x1.555efe40b50b5p-4, 0x1.a1cde5c772a1ap-58}},
    {0x1.1500000000000p-1, {-0x1.42edcbea646f0p-4, -0x1.ddd4f935996c9p-59}},
    {0x1.1400000000000p-1, {-0x1.341d7961bd1d1p-4, 0x1.b599f227becbbp-58}},
    {0x1.12c0000000000p-1, {-0x1.2185b3b75a1cep-4, -0x1.d81c3373f1357p-58}},
    {0x1.11c0000000000p-1, {-0x1.129644402e2acp-4, -0x1.122b956232089p-58}},
    {0x1.1080000000000p-1, {-0x1.ffae9119b9303p-5, -0x1.ba13162a9c446p-60}},
    {0x1.0f40000000000p-1, {-0x1.da0478be39253p-5, 0x1.c270480fd528ep-60}},
    {0x1.0e40000000000p-1, {-0x1.bbc2bfc44f417p-5, -0x1.e5bafa0943c21p-60}},
    {0x1.0d40000000000p-1, {-0x1.9d644fdffa279p-5, -0x1.0539a473b598bp-60}},
    {0x1.0c00000000000p-1, {-0x1.77458f632dcfcp-5, -0x1.18d3ca87b9296p-59}},
    {0x1.0b00000000000p-1, {-0x1.58a5bafc8e4d5p-5, 0x1.ce55c2b4e2b72p-59}},
    {0x1.09c0000000000p-1, {-0x1.32348c7001697p-5, 0x1.237a70db06b41p-60}},
    {0x1.08c0000000000p-1, {-0x1.13523785971f3p-5, 0x1.876e3f4b360c5p-59}},
    {0x1.07c0000000000p-1, {-0x1.e8a3ee30cdcacp-6, -0x1.7086b1c00b395p-63}},
    {0x1.06c0000000000p-1, {-0x1.aa6721ee835aap-6, 0x1.4a3a50b6c5621p-61}},
    {0x1.0580000000000p-1, {-0x1.5c45a51b8d389p-6, 0x1.b10b6c3ec21b4p-60}},
    {0x1.0480000000000p-1, {-0x1.1d7f7eb9eebe7p-6, 0x1.d41fe63d2dbf9p-61}},
    {0x1.0380000000000p-1, {-0x1.bcf712c74384cp-7, 0x1.f6842688f499ap-62}},
    {0x1.0280000000000p-1, {-0x1.3e7295d25a7d9p-7, 0x1.ff29a11443a06p-65}},
    {0x1.0180000000000p-1, {-0x1.7ee11ebd82e94p-8, 0x1.61e96e2fc5d90p-62}},
    {0x1.0080000000000p-1, {-0x1.ff802a9ab10e6p-10, -0x1.e29e3a153e3b2p-64}},
};

static const double erf_small[14] = {
    0x1.20dd750429b6dp+0,  -0x1.812746b0379e7p-2,  0x1.ce2f21a042be2p-4,  -0x1.b82ce31288b51p-6,
    0x1.565bcd0e6a53fp-8,  -0x1.c02db40040b86p-11, 0x1.f9a326f9b89b7p-14, -0x1.f4d25c3e0c2ebp-17,
    0x1.b9e6c9dc651a3p-20, -0x1.5f742ec43e71ap-23, 0x1.fcc5720624c1cp-27, -0x1.51d7181c5d36dp-30,
    0x1.9e6ad5e55a730p-34, -0x1.d8453cb0c46eap-38,
};

static const double erfc_mid[12] = {
    -0x1.2f2af64f71ce2p-23, 0x1.5ea49a699764ep-21, -0x1.5177c8f1f953dp-19, 0x1.6c8f3069c61adp-17,
    -0x1.80c2175246f4fp-15, 0x1.83fd3109d20a2p-13, -0x1.77db34cd4f361p-11, 0x1.5c8ad6688292dp-9,
    -0x1.33b8e0deb39abp-7,  0x1.00f574f70f6adp-5,  -0x1.925bfd4634fbfp-4,  0x1.23cfc2f19cabdp-2,
};

static const double erfc_far[12] = {
    -0x1.ae546d55e4f92p-30, 0x1.46f8d23a68024p-27, -0x1.bf3d6e363a9e5p-25, 0x1.45c16f73da14dp-22,
    -0x1.d1ffa0286938dp-20, 0x1.4502ff3a10d4ap-17, -0x1.baafe310855ffp-15, 0x1.25f47759fc3b6p-12,
    -0x1.7bef8643fc96fp-10, 0x1.dceb983c89404p-8,  -0x1.21fe3da0a436ep-5,  0x1.54a7a08d4a9e3p-3,
};

// ---------------------------------------------------------------------------
// exp
// ---------------------------------------------------------------------------

// ln 2 / 128 = EXP_L1 + EXP_L2 + EXP_L3; EXP_L1 has 29 significant bits so
// k * EXP_L1 is exact for |k| < 2^24.
#define EXP_L1    0x1.62e42ff000000p-8
#define EXP_L2    -0x1.718432a1b0e26p-42
#define EXP_L3    -0x1.9ff0342542fc3p-97
#define EXP_INV_L 0x1.71547652b82fep+7  // 128 / ln 2
#define ROUND_INT 0x1.8p52              // x + ROUND_INT - ROUND_INT: x to the nearest integer

// e^(xh + xl) = (hi + lo) * 2^*n, |xl| <= ulp(xh), |xh| < 750. hi + lo is
// within 2^-68 relative of the true value, hi in [0.7, 1.5].
static struct dd exp_dd(double xh, double xl, int * n) {
    double  kd = (xh * EXP_INV_L + ROUND_INT) - ROUND_INT;
    int32_t k  = (int32_t)kd;
    // r = x - k ln2/128 as rh + rl: xh - k L1 is exact (Sterbenz), the rest small.
    double rh = xh - kd * EXP_L1;
    double rl = xl - kd * EXP_L2 - kd * EXP_L3;
    double r  = rh + rl;
    // e^r - 1 - rh = rl + r^2/2 + r^3/6 + ...: below 2^-16 relative, so
    // double precision is plenty.
    static const double c[5] = {1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720};
    double              p    = rl + r * r * (c[0] + r * (c[1] + r * (c[2] + r * (c[3] + r * c[4]))));
    int                 j    = k & 127;
    struct dd           t    = exp2_table[j];
    // t (1 + rh + p) = t.hi + t.hi rh + (t.hi p + t.lo (1 + rh + p))
    struct dd th = two_prod(t.hi, rh);
    struct dd s  = fast_two_sum(t.hi, th.hi);
    double    lo = s.lo + th.lo + t.hi * p + t.lo * (1.0 + rh + p);
    *n           = (k - j) / 128;
    return fast_two_sum(s.hi, lo);
}

double(HTP_RT_FN(exp))(double x) {
    if (x != x) {
        return x + x;
    }
    if (x > 709.79) {
        return __builtin_inf();
    }
    if (x < -745.2) {
        return 0.0;
    }
    if (x > -0x1p-54 && x < 0x1p-54) {
        return 1.0 + x;
    }
    int       n;
    struct dd e = exp_dd(x, 0.0, &n);
    return scale2_dd(e, n);
}

float(HTP_RT_FN(expf))(float x) {
    return (float)HTP_RT_FN(exp)((double)x);
}

// e^u - 1 for 0 < u < 50, as a double-double good to 2^-58.
static struct dd expm1_dd(double u) {
    if (u < 0.0625) {
        // Taylor: u + u^2/2 exactly (as double-double), the rest (below u/48)
        // in double.
        static const double c[9] = {1.0 / 6,     1.0 / 24,     1.0 / 120,     1.0 / 720,     1.0 / 5040,
                                    1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800};
        double              p    = c[8];
        for (int i = 7; i >= 0; i--) {
            p = c[i] + u * p;
        }
        struct dd sq = two_prod(u, u);
        struct dd s  = fast_two_sum(u, 0.5 * sq.hi);
        return fast_two_sum(s.hi, s.lo + 0.5 * sq.lo + sq.hi * u * p);
    }
    int       n;
    struct dd e = exp_dd(u, 0.0, &n);
    double    s = from64((uint64_t)(n + 1023) << 52);
    // e.hi * s >= e^(1/16) > 1, so subtracting 1 is exact.
    return fast_two_sum(e.hi * s - 1.0, e.lo * s);
}

// ---------------------------------------------------------------------------
// log
// ---------------------------------------------------------------------------

// ln 2 = LN2_HI + LN2_LO; LN2_HI has 42 bits, so k * LN2_HI is exact for
// |k| < 2^11.
#define LN2_HI 0x1.62e42fefa3800p-1
#define LN2_LO 0x1.ef35793c76730p-45

// log1p(a + b) for |a + b| < 1/64, |b| <= ulp(a), as a double-double good to
// about 2^-72 relative: r, r^2/2 and r^3/3 in double-double, the rest (below
// 2^-20 relative) in double.
static struct dd log1p_dd(double a, double b) {
    struct dd sq = two_prod(a, a);
    sq.lo += 2.0 * a * b;
    struct dd cu = two_prod(a, sq.hi);
    cu.lo += a * sq.lo + b * sq.hi;
    const struct dd third = {0x1.5555555555555p-2, 0x1.5555555555555p-56};
    struct dd       t3    = two_prod(cu.hi, third.hi);
    t3.lo += cu.hi * third.lo + cu.lo * third.hi;
    double              r     = a + b;
    static const double c[11] = {-1.0 / 4,  1.0 / 5,  -1.0 / 6,  1.0 / 7,  -1.0 / 8, 1.0 / 9,
                                 -1.0 / 10, 1.0 / 11, -1.0 / 12, 1.0 / 13, -1.0 / 14};
    double              p     = c[10];
    for (int i = 9; i >= 0; i--) {
        p = c[i] + r * p;
    }
    double    rest = sq.hi * sq.hi * p;
    struct dd s    = two_sum(a, -0.5 * sq.hi);
    s.lo += b - 0.5 * sq.lo;
    s = fast_two_sum(s.hi, s.lo);
    s = dd_add(s, t3);
    return fast_two_sum(s.hi, s.lo + rest);
}

// x = 2^k m for finite x > 0 (k includes a subnormal's extra shift), with
// the table entry for m: log x = K ln 2 + logc + log1p(rh + rl), rh + rl exact.
static const struct log_entry * log_reduce(double x, int * kk, double * rh, double * rl) {
    uint64_t u = bits64(x);
    int      k = 0;
    if ((u >> 52) == 0) {
        u = bits64(x * 0x1p54);
        k = -54;
    }
    k += (int)(u >> 52) - 1023;
    int                      i  = (int)(u >> 45) & 127;
    double                   m  = from64((u & 0xfffffffffffffull) | 0x3ff0000000000000ull);  // [1, 2)
    double                   mh = from64(bits64(m) & ~0x7ffull);                             // 42 bits
    double                   ml = m - mh;                                                    // the low 11
    const struct log_entry * t  = &log_table[i];
    *rh                         = mh * t->invc - 1.0;  // exact: 53 bits, and near 1 (Sterbenz)
    *rl                         = ml * t->invc;        // exact: 22 bits
    *kk                         = k + (i >= 53);       // entries from 53 on serve m / 2 in [0.707, 1)
    return t;
}

double(HTP_RT_FN(log))(double x) {
    uint64_t u = bits64(x);
    if (x != x) {
        return x + x;
    }
    if (x == 0) {
        return -__builtin_inf();
    }
    if (u >> 63) {
        return __builtin_nan("");
    }
    if (x == __builtin_inf()) {
        return x;
    }
    if (x > 1.0 - 1.0 / 64 && x < 1.0 + 1.0 / 64) {
        struct dd l = log1p_dd(x - 1.0, 0.0);  // x - 1 is exact here
        return l.hi + l.lo;
    }
    int                      k;
    double                   rh, rl;
    const struct log_entry * t = log_reduce(x, &k, &rh, &rl);
    double                   r = rh + rl;
    // log1p(r) - r to double precision is enough (|r| < 1/225, log x > 1/65).
    static const double c[7] = {-1.0 / 2, 1.0 / 3, -1.0 / 4, 1.0 / 5, -1.0 / 6, 1.0 / 7, -1.0 / 8};
    double              p    = c[6];
    for (int i = 5; i >= 0; i--) {
        p = c[i] + r * p;
    }
    p *= r * r;
    struct dd s  = two_sum(k * LN2_HI, t->logc.hi);
    struct dd s2 = two_sum(s.hi, rh);
    return s2.hi + (s.lo + s2.lo + (k * LN2_LO + t->logc.lo + rl + p));
}

float(HTP_RT_FN(logf))(float x) {
    return (float)HTP_RT_FN(log)((double)x);
}

// log x for finite x > 0 as a double-double good to about 2^-72 relative.
static struct dd log_dd(double x) {
    if (x > 1.0 - 1.0 / 64 && x < 1.0 + 1.0 / 64) {
        return log1p_dd(x - 1.0, 0.0);
    }
    int                      k;
    double                   rh, rl;
    const struct log_entry * t = log_reduce(x, &k, &rh, &rl);
    struct dd                r = fast_two_sum(rh, rl);
    struct dd                s = two_sum(k * LN2_HI, t->logc.hi);
    s.lo += k * LN2_LO + t->logc.lo;
    return dd_add(fast_two_sum(s.hi, s.lo), log1p_dd(r.hi, r.lo));
}

// ---------------------------------------------------------------------------
// pow
// ---------------------------------------------------------------------------

// 0: not an integer; 1: an odd integer; 2: an even integer (y finite).
static int int_kind(double y) {
    uint64_t u = bits64(y) & 0x7fffffffffffffffull;
    int      e = (int)(u >> 52) - 1023;
    if (u == 0) {
        return 2;
    }
    if (e < 0) {
        return 0;
    }
    if (e >= 53) {
        return 2;
    }
    uint64_t m    = (u & 0xfffffffffffffull) | (1ull << 52);
    uint64_t frac = m & ((1ull << (52 - e)) - 1);
    if (frac != 0) {
        return 0;
    }
    return (m >> (52 - e)) & 1 ? 1 : 2;
}

// C's special cases of pow (Annex F.10.4.4). Returns 1 with *res set when
// (x, y) is one; else 0 with *ax = |x| and *neg set when the result is
// negative (x < 0, y odd).
static int pow_special(double x, double y, double * res, double * ax, int * neg) {
    const double inf = __builtin_inf();
    *neg             = 0;
    if (y == 0 || x == 1.0) {
        *res = 1.0;
        return 1;
    }
    if (x != x || y != y) {
        *res = x + y;
        return 1;
    }
    int yk = (y == inf || y == -inf) ? 2 : int_kind(y);
    if (x == 0) {
        if (y < 0) {
            *res = yk == 1 ? copysign64(inf, x) : inf;
        } else {
            *res = yk == 1 ? x : 0.0;
        }
        return 1;
    }
    if (y == inf || y == -inf) {
        double a = x < 0 ? -x : x;
        if (a == 1.0) {
            *res = 1.0;
        } else {
            *res = (a < 1.0) == (y < 0) ? inf : 0.0;
        }
        return 1;
    }
    if (x == inf) {
        *res = y < 0 ? 0.0 : inf;
        return 1;
    }
    if (x == -inf) {
        if (y < 0) {
            *res = yk == 1 ? -0.0 : 0.0;
        } else {
            *res = yk == 1 ? -inf : inf;
        }
        return 1;
    }
    if (x < 0) {
        if (yk == 0) {
            *res = __builtin_nan("");
            return 1;
        }
        *neg = yk == 1;
        x    = -x;
    }
    *ax = x;
    return 0;
}

double(HTP_RT_FN(pow))(double x, double y) {
    double res, ax;
    int    neg;
    if (pow_special(x, y, &res, &ax, &neg)) {
        return res;
    }
    struct dd l = log_dd(ax);
    struct dd z;
    if (y > 0x1p900 || y < -0x1p900) {
        z = (struct dd){y * l.hi, 0.0};  // far beyond the range either way (or exactly 1)
    } else {
        z = two_prod(y, l.hi);
        z = fast_two_sum(z.hi, z.lo + y * l.lo);
    }
    double r;
    if (z.hi > 709.79) {
        r = __builtin_inf();
    } else if (z.hi < -745.2) {
        r = 0.0;
    } else {
        int       n;
        struct dd e = exp_dd(z.hi, z.lo, &n);
        r           = scale2_dd(e, n);
    }
    return neg ? -r : r;
}

float(HTP_RT_FN(powf))(float x, float y) {
    double res, ax;
    int    neg;
    if (pow_special(x, y, &res, &ax, &neg)) {
        return (float)res;
    }
    // In double, y log x is off by < 2^-45 relative to the float result's
    // e^z for every z that does not over- or underflow a float: plenty.
    double r = HTP_RT_FN(exp)((double)y * HTP_RT_FN(log)(ax));
    return (float)(neg ? -r : r);
}

// ---------------------------------------------------------------------------
// tanh
// ---------------------------------------------------------------------------

double(HTP_RT_FN(tanh))(double x) {
    if (x != x) {
        return x + x;
    }
    double a = x < 0 ? -x : x;
    if (a < 0x1p-27) {
        return x;  // tanh x = x (1 - x^2/3 ...): the correction is below half an ulp
    }
    if (a > 20.0) {
        return copysign64(1.0, x);  // 1 - tanh 20 < 2^-56
    }
    struct dd t = expm1_dd(2.0 * a);
    struct dd q = dd_div(t, dd_add(t, (struct dd){2.0, 0.0}));
    return copysign64(q.hi + q.lo, x);
}

float(HTP_RT_FN(tanhf))(float x) {
    return (float)HTP_RT_FN(tanh)((double)x);
}

// ---------------------------------------------------------------------------
// sinf, cosf
// ---------------------------------------------------------------------------

// The first 256 bits of 2/pi (bit 1, the 1/2 place, is the top bit of [0]).
static const uint32_t two_over_pi[8] = {0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0,
                                        0xdb629599, 0x3c439041, 0xfe5163ab, 0xdebbc561};

#define PIO2 0x1.921fb54442d18p+0

// |x| 2/pi = q + f with f in [-1/2, 1/2), for finite |x| >= pi/4: returns
// q mod 4 and sets *r = f pi/2. Exact up to f's 64th bit: x = m 2^e with a
// 24-bit m, and the bits of 2/pi worth 2^(2-e) and more only add multiples of
// 4 to m 2^e 2/pi, so 96 bits from there on give m 2/pi's fraction with 94
// bits to spare beyond the 24 of m.
static int reduce_pio2(float x, double * r) {
    uint32_t u  = bits32(x) & 0x7fffffffu;
    uint32_t m  = (u & 0x7fffffu) | 0x800000u;
    int      e  = (int)(u >> 23) - 150;
    int      i0 = e - 1 > 1 ? e - 1 : 1;  // the first bit of 2/pi that counts
    int      s = i0 - 1, w = s / 32, sh = s % 32;
    uint32_t win[3];  // bits i0 .. i0 + 95, most significant first
    for (int i = 0; i < 3; i++) {
        win[i] = (two_over_pi[w + i] << sh) | (sh ? two_over_pi[w + i + 1] >> (32 - sh) : 0);
    }
    // P = m * win, 120 bits in p[0..3] (least significant first).
    uint64_t a0 = (uint64_t)m * win[2], a1 = (uint64_t)m * win[1], a2 = (uint64_t)m * win[0];
    uint32_t p[5];
    p[0]       = (uint32_t)a0;
    uint64_t t = (a0 >> 32) + (uint32_t)a1;
    p[1]       = (uint32_t)t;
    t          = (t >> 32) + (a1 >> 32) + (uint32_t)a2;
    p[2]       = (uint32_t)t;
    t          = (t >> 32) + (a2 >> 32);
    p[3]       = (uint32_t)t;
    p[4]       = 0;
    // P's bit pp is the ones place of |x| 2/pi (mod 4).
    int pp = i0 + 95 - e;
#define P_BITS_AT(b) ((p[(b) / 32] >> ((b) % 32)) | ((b) % 32 ? p[(b) / 32 + 1] << (32 - (b) % 32) : 0))
    uint32_t q = P_BITS_AT(pp) & 3;
    uint64_t f = ((uint64_t)P_BITS_AT(pp - 32) << 32) | P_BITS_AT(pp - 64);
#undef P_BITS_AT
    double fd;
    if (f >> 63) {  // f >= 1/2: the next quadrant, f - 1
        q  = (q + 1) & 3;
        fd = -(double)(~f + 1);
    } else {
        fd = (double)f;
    }
    *r = fd * 0x1p-64 * PIO2;
    return (int)q;
}

// sin and cos of |r| <= pi/4 + a little: Taylor to r^13 and r^14 (the next
// terms are below 2^-44 relative, far below a float's half ulp).
static double sin_poly(double r) {
    static const double c[6] = {-1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880, -1.0 / 39916800, 1.0 / 6227020800};
    double              z    = r * r;
    double              p    = c[5];
    for (int i = 4; i >= 0; i--) {
        p = c[i] + z * p;
    }
    return r + r * z * p;
}

static double cos_poly(double r) {
    static const double c[7] = {-1.0 / 2,       1.0 / 24,        -1.0 / 720,        1.0 / 40320,
                                -1.0 / 3628800, 1.0 / 479001600, -1.0 / 87178291200};
    double              z    = r * r;
    double              p    = c[6];
    for (int i = 5; i >= 0; i--) {
        p = c[i] + z * p;
    }
    return 1.0 + z * p;
}

float(HTP_RT_FN(sinf))(float x) {
    uint32_t u = bits32(x) & 0x7fffffffu;
    if (u >= 0x7f800000u) {
        return x - x;  // NaN for inf and NaN
    }
    // sin is odd: work on |x|.
    double r = x < 0 ? -(double)x : (double)x;
    int    q = 0;
    if (u >= 0x3f490fdbu) {  // |x| >= pi/4
        q = reduce_pio2(x, &r);
    }
    double v;
    switch (q) {
        case 0:
            v = sin_poly(r);
            break;
        case 1:
            v = cos_poly(r);
            break;
        case 2:
            v = -sin_poly(r);
            break;
        default:
            v = -cos_poly(r);
            break;
    }
    return (float)(x < 0 ? -v : v);
}

float(HTP_RT_FN(cosf))(float x) {
    uint32_t u = bits32(x) & 0x7fffffffu;
    if (u >= 0x7f800000u) {
        return x - x;
    }
    double r = x < 0 ? -(double)x : (double)x;  // cos is even
    int    q = 0;
    if (u >= 0x3f490fdbu) {
        q = reduce_pio2(x, &r);
    }
    double v;
    switch (q) {
        case 0:
            v = cos_poly(r);
            break;
        case 1:
            v = -sin_poly(r);
            break;
        case 2:
            v = -cos_poly(r);
            break;
        default:
            v = sin_poly(r);
            break;
    }
    return (float)v;
}

// ---------------------------------------------------------------------------
// erff
// ---------------------------------------------------------------------------

#define N_ERFC (int)(sizeof(erfc_mid) / sizeof(erfc_mid[0]))

// c[0] t^(n-1) + ... + c[n-1] (Horner, highest degree first).
static double poly_eval(const double * c, int n, double t) {
    double p = c[0];
    for (int i = 1; i < n; i++) {
        p = p * t + c[i];
    }
    return p;
}

float(HTP_RT_FN(erff))(float x) {
    if (x != x) {
        return x + x;
    }
    double a = x < 0 ? -(double)x : (double)x;
    double r;
    if (a < 1.0) {
        // erf a = a sum c_n a^2n (c_n = 2/sqrt(pi) (-1)^n / (n! (2n + 1)))
        double t = a * a;
        double p = erf_small[13];
        for (int i = 12; i >= 0; i--) {
            p = erf_small[i] + t * p;
        }
        r = a * p;
    } else if (a < 4.0) {
        // erfc a = e^(-a^2) Q(a), Q fitted on [1, 2.5] and [2.5, 4] in t in [-1, 1]
        // (relative error below 6e-11).
        double q = a < 2.5 ? poly_eval(erfc_mid, N_ERFC, (a - 1.75) * (4.0 / 3.0))
                           : poly_eval(erfc_far, N_ERFC, (a - 3.25) * (4.0 / 3.0));
        r        = 1.0 - HTP_RT_FN(exp)(-a * a) * q;
    } else {
        r = 1.0;  // erfc 4 < 2^-26: rounds to 1 as a float
    }
    return (float)(x < 0 ? -r : r);
}

// ---------------------------------------------------------------------------
// sqrt, and the exact ones
// ---------------------------------------------------------------------------

double(HTP_RT_FN(sqrt))(double x) {
    return htp_rt_sqrt_f64(x);
}

float(HTP_RT_FN(sqrtf))(float x) {
    return __hexagon_sqrtf(x);
}

double(HTP_RT_FN(fabs))(double x) {
    return from64(bits64(x) & 0x7fffffffffffffffull);
}

float(HTP_RT_FN(fabsf))(float x) {
    return from32(bits32(x) & 0x7fffffffu);
}

// floor, ceil and round on the bits: e is the exponent; bits below the ones
// place are the low 52 - e of the significand.
enum { ROUND_FLOOR, ROUND_CEIL, ROUND_HALF_AWAY };

static double round64(double x, int mode) {
    uint64_t u   = bits64(x);
    int      e   = (int)((u >> 52) & 0x7ff) - 1023;
    int      neg = (int)(u >> 63);
    if (e >= 52) {
        return x;  // an integer already, or inf / NaN
    }
    if (e < 0) {  // |x| < 1
        if ((u << 1) == 0) {
            return x;  // +-0
        }
        switch (mode) {
            case ROUND_FLOOR:
                return neg ? -1.0 : 0.0;
            case ROUND_CEIL:
                return neg ? -0.0 : 1.0;
            default:
                return e == -1 ? (neg ? -1.0 : 1.0) : (neg ? -0.0 : 0.0);
        }
    }
    uint64_t frac = (1ull << (52 - e)) - 1;
    if ((u & frac) == 0) {
        return x;
    }
    if (mode == ROUND_HALF_AWAY) {
        u += 1ull << (51 - e);  // add a half, then chop
    } else if ((mode == ROUND_FLOOR) == (neg != 0)) {
        u += frac;  // away from zero: to the next integer up in magnitude
    }
    return from64(u & ~frac);
}

static float round32(float x, int mode) {
    uint32_t u   = bits32(x);
    int      e   = (int)((u >> 23) & 0xff) - 127;
    int      neg = (int)(u >> 31);
    if (e >= 23) {
        return x;
    }
    if (e < 0) {
        if ((u << 1) == 0) {
            return x;
        }
        switch (mode) {
            case ROUND_FLOOR:
                return neg ? -1.0f : 0.0f;
            case ROUND_CEIL:
                return neg ? -0.0f : 1.0f;
            default:
                return e == -1 ? (neg ? -1.0f : 1.0f) : (neg ? -0.0f : 0.0f);
        }
    }
    uint32_t frac = (1u << (23 - e)) - 1;
    if ((u & frac) == 0) {
        return x;
    }
    if (mode == ROUND_HALF_AWAY) {
        u += 1u << (22 - e);
    } else if ((mode == ROUND_FLOOR) == (neg != 0)) {
        u += frac;
    }
    return from32(u & ~frac);
}

double(HTP_RT_FN(floor))(double x) {
    return round64(x, ROUND_FLOOR);
}

double(HTP_RT_FN(ceil))(double x) {
    return round64(x, ROUND_CEIL);
}

double(HTP_RT_FN(round))(double x) {
    return round64(x, ROUND_HALF_AWAY);
}

float(HTP_RT_FN(floorf))(float x) {
    return round32(x, ROUND_FLOOR);
}

float(HTP_RT_FN(ceilf))(float x) {
    return round32(x, ROUND_CEIL);
}

float(HTP_RT_FN(roundf))(float x) {
    return round32(x, ROUND_HALF_AWAY);
}

// Round to the nearest integer, ties to even (the default rounding mode,
// which is the only one the runtime uses).
float(HTP_RT_FN(nearbyintf))(float x) {
    uint32_t u = bits32(x);
    int      e = (int)((u >> 23) & 0xff) - 127;
    if (e >= 23) {
        return x;  // an integer already, or inf / NaN
    }
    uint32_t sign = u & 0x80000000u;
    if (e < 0) {
        // |x| < 1: 1 only above one half (0.5 itself ties to the even 0)
        return from32(sign | ((u & 0x7fffffffu) > 0x3f000000u ? 0x3f800000u : 0));
    }
    uint32_t unit = 1u << (23 - e);  // the ones place in the significand
    uint32_t rem  = u & (unit - 1);
    u &= ~(unit - 1);
    if (rem > unit / 2 || (rem == unit / 2 && (u & unit))) {
        u += unit;  // a carry into the exponent is still the right value
    }
    return from32(u);
}

// A NaN argument loses to a number (C's fmax/fmin).
float(HTP_RT_FN(fmaxf))(float x, float y) {
    if (x != x) {
        return y;
    }
    if (y != y) {
        return x;
    }
    return x > y ? x : y;
}

float(HTP_RT_FN(fminf))(float x, float y) {
    if (x != x) {
        return y;
    }
    if (y != y) {
        return x;
    }
    return x < y ? x : y;
}
