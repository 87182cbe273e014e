// cpy-ops.c: CPY (also ggml's CONT and DUP): dst[0] = src[0] converted to dst's
// type. src and dst may have any shapes and strides as long as they hold the
// same number of elements: element i of src in row-major logical order
// (i0 fastest) goes to element i of dst.
//
// Types: F32, F16 and BF16 to each other (through f32), F32 <-> I32, and any type to the
// same type (a byte copy of elements, or of whole blocks for quantized types,
// which is why both ne[0] must then be whole blocks; validation checks that).
// Quantizing into and dequantizing out of block types is quant-ops.c's.
//
// Work split: when both tensors are dense the copy is one flat range cut into
// equal pieces per worker; otherwise workers take runs of src rows and walk
// the matching dst elements with a carry counter.

#include <stdint.h>
#include <string.h>

#include "contract/iq-tiles.h"
#include "contract/ops/op-checks.h"
#include "contract/type-traits.h"
#include "matmul.h"
#include "op-families.h"
#include "quant.h"

#if defined(__F16C__)
#include <immintrin.h>
#endif

// ---------------------------------------------------------------------------
// Scalar conversions
// ---------------------------------------------------------------------------

static inline uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline float f16_to_f32(uint16_t h) {
#if defined(__F16C__)
    return _cvtsh_ss(h);
#else
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp  = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ff;
    if (exp == 0) {
        // Zero or subnormal: mant * 2^-24, exact in f32.
        float f = (float)mant * (1.0f / 16777216.0f);
        return bits_f32(sign | f32_bits(f));
    }
    if (exp == 31) {
        return bits_f32(sign | 0x7f800000u | (mant << 13));
    }
    return bits_f32(sign | ((exp + 112) << 23) | (mant << 13));
#endif
}

static inline uint16_t f32_to_f16(float f) {
#if defined(__F16C__)
    return _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
#else
    uint32_t u    = f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    u &= 0x7fffffffu;
    if (u >= 0x7f800000u) {  // inf or NaN (keep NaN a NaN)
        return sign | (u > 0x7f800000u ? 0x7e00 : 0x7c00);
    }
    if (u >= 0x477ff000u) {  // >= 65520 rounds to infinity
        return sign | 0x7c00;
    }
    if (u < 0x38800000u) {
        // Below the smallest normal half: adding 0.5 lines the half's
        // subnormal units up with the f32 mantissa's last bit, so the FPU's
        // round-to-nearest-even does the rounding.
        float r = bits_f32(u) + 0.5f;
        return sign | (uint16_t)(f32_bits(r) - 0x3f000000u);
    }
    // Normal: rebias the exponent, round to nearest even on the 13 dropped bits.
    uint32_t odd = (u >> 13) & 1;
    u += 0xc8000000u + 0xfffu + odd;  // (15 - 127) << 23, wrapped, + rounding
    return sign | (uint16_t)(u >> 13);
#endif
}

static inline float bf16_to_f32(uint16_t h) {
    return bits_f32((uint32_t)h << 16);
}

static inline uint16_t f32_to_bf16(float f) {
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return (uint16_t)((u >> 16) | 0x40);  // quiet NaN stays NaN
    }
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);  // round to nearest even
}

// ---------------------------------------------------------------------------
// Row converters: n elements, src stride ss bytes, dst stride ds bytes.
// ---------------------------------------------------------------------------

typedef void (*cvt_fn)(const uint8_t * s, int64_t ss, uint8_t * d, int64_t ds, int64_t n);

static float load_f32(const uint8_t * p) {
    float f;
    memcpy(&f, p, 4);
    return f;
}

static uint16_t load_u16(const uint8_t * p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return h;
}

static void cvt_f32_f16(const uint8_t * s, int64_t ss, uint8_t * d, int64_t ds, int64_t n) {
    int64_t i = 0;
#if defined(__F16C__) && defined(__AVX__)
    if (ss == 4 && ds == 2) {
        for (; i + 8 <= n; i += 8) {
            __m256  v = _mm256_loadu_ps((const float *)(const void *)(s + i * 4));
            __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
            _mm_storeu_si128((__m128i *)(void *)(d + i * 2), h);
        }
    }
#endif
    for (; i < n; i++) {
        uint16_t h = f32_to_f16(load_f32(s + i * ss));
        memcpy(d + i * ds, &h, 2);
    }
}

static void cvt_f16_f32(const uint8_t * s, int64_t ss, uint8_t * d, int64_t ds, int64_t n) {
    int64_t i = 0;
#if defined(__F16C__) && defined(__AVX__)
    if (ss == 2 && ds == 4) {
        for (; i + 8 <= n; i += 8) {
            __m128i h = _mm_loadu_si128((const __m128i *)(const void *)(s + i * 2));
            _mm256_storeu_ps((float *)(void *)(d + i * 4), _mm256_cvtph_ps(h));
        }
    }
#endif
    for (; i < n; i++) {
        float f = f16_to_f32(load_u16(s + i * ss));
        memcpy(d + i * ds, &f, 4);
    }
}

static void cvt_f32_bf16(const uint8_t * s, int64_t ss, uint8_t * d, int64_t ds, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        uint16_t h = f32_to_bf16(load_f32(s + i * ss));
        memcpy(d + i * ds, &h, 2);
    }
}

static void cvt_bf16_f32(const uint8_t * s, int64_t ss, uint8_t * d, int64_t ds, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        float f = bf16_to_f32(load_u16(s + i * ss));
        memcpy(d + i * ds, &f, 4);
    }
}

static void cvt_f16_bf16(const uint8_t * s, int64_t ss, uint8_t * d, int64_t ds, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        uint16_t h = f32_to_bf16(f16_to_f32(load_u16(s + i * ss)));
        memcpy(d + i * ds, &h, 2);
    }
}

static void cvt_bf16_f16(const uint8_t * s, int64_t ss, uint8_t * d, int64_t ds, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        uint16_t h = f32_to_f16(bf16_to_f32(load_u16(s + i * ss)));
        memcpy(d + i * ds, &h, 2);
    }
}

// F32 -> I32 as C's conversion on x86 (ggml-cpu's): toward zero; NaN and
// values outside the int32 range give INT32_MIN (what cvttss2si answers; in
// C the cast would be undefined there).
static void cvt_f32_i32(const uint8_t * s, int64_t ss, uint8_t * d, int64_t ds, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        const float f = load_f32(s + i * ss);
        int32_t     v = INT32_MIN;
        if (f >= -2147483648.0f && f < 2147483648.0f) {
            v = (int32_t)f;
        }
        memcpy(d + i * ds, &v, 4);
    }
}

// I32 -> F32: rounded to nearest (even), as C's conversion.
static void cvt_i32_f32(const uint8_t * s, int64_t ss, uint8_t * d, int64_t ds, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        int32_t v;
        memcpy(&v, s + i * ss, 4);
        const float f = (float)v;
        memcpy(d + i * ds, &f, 4);
    }
}

// Same type: unit-sized byte copies (unit = element, or block for block types).
// memmove, not memcpy: nothing keeps a batch from naming two overlapping views
// of one buffer as src and dst, and an overlapping memcpy is undefined (the
// fuzzer found one); this way such a copy has a defined, if useless, result.
#define DEFINE_COPY(bytes)                                                                        \
    static void copy_##bytes(const uint8_t * s, int64_t ss, uint8_t * d, int64_t ds, int64_t n) { \
        if (ss == (bytes) && ds == (bytes)) {                                                     \
            memmove(d, s, (size_t)n *(bytes));                                                    \
            return;                                                                               \
        }                                                                                         \
        for (int64_t i = 0; i < n; i++) {                                                         \
            memmove(d + i * ds, s + i * ss, (bytes));                                             \
        }                                                                                         \
    }
DEFINE_COPY(1)
DEFINE_COPY(2)
DEFINE_COPY(4)
DEFINE_COPY(8)

// ---------------------------------------------------------------------------
// Plan
// ---------------------------------------------------------------------------

struct cpy_plan {
    const struct htp_tensor_view * s;
    const struct htp_tensor_view * d;
    cvt_fn                         cvt;        // NULL: generic same-type copy of `unit` bytes
    uint32_t                       unit;       // bytes per unit for the generic copy
    int64_t                        s_ne0;      // units per src row
    int64_t                        d_ne0;      // units per dst row
    int64_t                        n_rows;     // src rows (ne1 * ne2 * ne3)
    int64_t                        n_units;    // total units
    int                            dense;      // both tensors contiguous: one flat range
    int64_t                        s_unit_sz;  // bytes per unit when dense
    int64_t                        d_unit_sz;
};

static cvt_fn pick_cvt(uint32_t st, uint32_t dt) {
    if (st == HTP_TYPE_F32 && dt == HTP_TYPE_F16)
        return cvt_f32_f16;
    if (st == HTP_TYPE_F16 && dt == HTP_TYPE_F32)
        return cvt_f16_f32;
    if (st == HTP_TYPE_F32 && dt == HTP_TYPE_BF16)
        return cvt_f32_bf16;
    if (st == HTP_TYPE_BF16 && dt == HTP_TYPE_F32)
        return cvt_bf16_f32;
    if (st == HTP_TYPE_F16 && dt == HTP_TYPE_BF16)
        return cvt_f16_bf16;
    if (st == HTP_TYPE_BF16 && dt == HTP_TYPE_F16)
        return cvt_bf16_f16;
    if (st == HTP_TYPE_F32 && dt == HTP_TYPE_I32)
        return cvt_f32_i32;
    if (st == HTP_TYPE_I32 && dt == HTP_TYPE_F32)
        return cvt_i32_f32;
    return NULL;
}

static cvt_fn pick_copy(uint32_t bytes) {
    switch (bytes) {
        case 1:
            return copy_1;
        case 2:
            return copy_2;
        case 4:
            return copy_4;
        case 8:
            return copy_8;
        default:
            return NULL;
    }
}

static void copy_generic(const uint8_t * s, int64_t ss, uint8_t * d, int64_t ds, int64_t n, uint32_t unit) {
    for (int64_t i = 0; i < n; i++) {
        memmove(d + i * ds, s + i * ss, unit);  // may overlap, as above
    }
}

// Dense: units packed back to back in logical order.
static int is_dense(const struct htp_tensor_view * t, int64_t unit_sz, int64_t ne0_units) {
    int64_t expect = unit_sz;
    if (t->nb[0] != expect) {
        return 0;
    }
    expect *= ne0_units;
    for (int i = 1; i < HTP_OP_MAX_DIMS; i++) {
        if (t->ne[i] > 1 && t->nb[i] != expect) {
            return 0;
        }
        expect *= t->ne[i];
    }
    return 1;
}

// Plan a CPY whose check passed (contract/ops/cpy-check.c): a copy within
// one type, or a conversion pick_cvt knows.
static void plan_cpy(const struct htp_op_ctx * ctx, struct cpy_plan * p) {
    const struct htp_tensor_view * s  = ctx->op.src[0];
    const struct htp_tensor_view * d  = ctx->op.dst[0];
    const struct htp_type_traits * ts = htp_type_traits(s->type);
    const struct htp_type_traits * td = htp_type_traits(d->type);
    memset(p, 0, sizeof(*p));
    p->s = s;
    p->d = d;
    if (s->type == d->type) {
        p->unit  = ts->type_size;
        p->cvt   = pick_copy(p->unit);
        p->s_ne0 = s->ne[0] / ts->blck_size;
        p->d_ne0 = d->ne[0] / td->blck_size;
    } else {
        p->cvt   = pick_cvt(s->type, d->type);
        p->s_ne0 = s->ne[0];
        p->d_ne0 = d->ne[0];
    }
    p->n_rows    = s->ne[1] * s->ne[2] * s->ne[3];
    p->n_units   = p->s_ne0 * p->n_rows;
    p->s_unit_sz = ts->type_size;
    p->d_unit_sz = td->type_size;
    p->dense     = is_dense(s, ts->type_size, p->s_ne0) && is_dense(d, td->type_size, p->d_ne0);
}

static void run_units(const struct cpy_plan * p, const uint8_t * s, int64_t ss, uint8_t * d, int64_t ds, int64_t n) {
    if (p->cvt) {
        p->cvt(s, ss, d, ds, n);
    } else {
        copy_generic(s, ss, d, ds, n, p->unit);
    }
}

static void cpy_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct cpy_plan *        p = arg;
    const struct htp_tensor_view * s = p->s;
    const struct htp_tensor_view * d = p->d;

    if (p->dense) {
        int64_t per = (p->n_units + nth - 1) / nth;
        int64_t b   = per * ith;
        int64_t e   = b + per < p->n_units ? b + per : p->n_units;
        if (b < e) {
            run_units(p, s->data + b * p->s_unit_sz, p->s_unit_sz, d->data + b * p->d_unit_sz, p->d_unit_sz, e - b);
        }
        return;
    }

    int64_t per = (p->n_rows + nth - 1) / nth;
    int64_t r0  = per * ith;
    int64_t r1  = r0 + per < p->n_rows ? r0 + per : p->n_rows;
    if (r0 >= r1) {
        return;
    }
    // Destination coordinates (in units) of flat index r0 * s_ne0.
    int64_t flat = r0 * p->s_ne0;
    int64_t j0   = flat % p->d_ne0;
    int64_t rest = flat / p->d_ne0;
    int64_t j1   = rest % d->ne[1];
    rest /= d->ne[1];
    int64_t j2 = rest % d->ne[2];
    int64_t j3 = rest / d->ne[2];

    for (int64_t r = r0; r < r1; r++) {
        int64_t         i1 = r % s->ne[1];
        int64_t         i2 = (r / s->ne[1]) % s->ne[2];
        int64_t         i3 = r / (s->ne[1] * s->ne[2]);
        const uint8_t * sr = s->data + i1 * s->nb[1] + i2 * s->nb[2] + i3 * s->nb[3];
        // Copy the row in runs that stay within one dst row.
        int64_t left = p->s_ne0;
        int64_t i0   = 0;
        while (left > 0) {
            int64_t   run = p->d_ne0 - j0 < left ? p->d_ne0 - j0 : left;
            uint8_t * dr  = d->data + j0 * d->nb[0] + j1 * d->nb[1] + j2 * d->nb[2] + j3 * d->nb[3];
            run_units(p, sr + i0 * s->nb[0], s->nb[0], dr, d->nb[0], run);
            i0 += run;
            left -= run;
            j0 += run;
            if (j0 == p->d_ne0) {
                j0 = 0;
                if (++j1 == d->ne[1]) {
                    j1 = 0;
                    if (++j2 == d->ne[2]) {
                        j2 = 0;
                        j3++;
                    }
                }
            }
        }
    }
}

int htp_op_cpy_run(struct htp_op_ctx * ctx) {
    if (htp_cpy_quantizes(&ctx->op)) {
        return htp_op_cpy_q_run(ctx);
    }
    if (htp_cpy_dequantizes(&ctx->op)) {
        return htp_iq_type_ok(ctx->op.src[0]->type) ? htp_iq_cpy_run(ctx) : htp_op_cpy_dq_run(ctx);
    }
    struct cpy_plan p;
    plan_cpy(ctx, &p);
    if (p.n_units == 0) {
        return HTP_STATUS_OK;
    }
    // Small copies are not worth waking the workers for.
    uint64_t bytes = (uint64_t)p.n_units * (uint64_t)(p.s_unit_sz + p.d_unit_sz);
    if (bytes < 64 * 1024 || ctx->op.n_threads <= 1 || ctx->run == NULL) {
        cpy_job(&p, 0, 1);
    } else {
        ctx->run(ctx->pool, cpy_job, &p);
    }
    return HTP_STATUS_OK;
}
