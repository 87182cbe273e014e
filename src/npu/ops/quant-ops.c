// quant-ops.c: quantized blocks on the NPU: dequantizing rows (plain and
// tiled) for GET_ROWS and for CPY into F32, quantizing F32 rows into Q8_0,
// Q4_0, Q4_1, Q5_0, Q5_1 and IQ4_NL (llama.cpp's quantized KV-cache types)
// for CPY and SET_ROWS (a quantized KV cache, plain ggml layout), with the
// rounding of the quantizers ggml-cpu's CPY and SET_ROWS call, so the bytes
// match the CPU's, and the dequantized floats ggml's to_float gives
// (tests/ops/test-kernels.c, "quant rows").
//
// It also holds the kernels' one global switch. GGML_HTP_SCALAR=1 in the
// NPU's environment (the host passes its own environment on when it starts
// the NPU) makes every kernel that has an HVX path (the quantized matmul dot
// products and activation quantizers of matmul-quant.c and kquant-dot.c, the
// dequantization here and in kquant-dot.c) take its portable C path instead,
// so the same Hexagon binary can be measured both ways (htp-bench). It is
// read once, through the platform seam, by the first kernel that asks
// (htp_kernels_portable); the x86 SIMD paths never ask. The two paths give
// the same bits (tests/npu/target/test-hvx.c).
//
// HVX (Hexagon v67) here: the nibble / table expansion of Q4_0, Q4_1, Q5_0,
// Q5_1, IQ4_NL and MXFP4 blocks into int8, four blocks a vector; the int ->
// float and the scaling stay scalar (v67 HVX has no float), in the portable
// order. Q8_0's quants are int8 already: nothing for HVX to expand, it stays
// scalar, as do the quantizers (float work: compares, divides, roundings).

#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "fp16.h"
#include "contract/type-traits.h"
#include "kernel-util.h"
#include "quant.h"
#include "contract/tiled.h"
#include "hvx.h"
#include "kquant-dot.h"
#include "platform/platform.h"
#include "vec.h"

// The quantizers match ggml's bits only if every product is rounded on its
// own (gcc's -std=c11 does not contract; clang would fuse x * id + 8.5f).
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

static atomic_int kernels_portable = -1;  // -1: GGML_HTP_SCALAR not read yet

int htp_kernels_portable(void) {
    int v = atomic_load_explicit(&kernels_portable, memory_order_relaxed);
    if (v < 0) {  // racing first readers all store the same value
        const char * s = htp_plat_getenv("GGML_HTP_SCALAR");
        v              = s != NULL && strcmp(s, "1") == 0;
        atomic_store_explicit(&kernels_portable, v, memory_order_relaxed);
    }
    return v;
}

void htp_kernels_set_portable(int portable) {
    atomic_store_explicit(&kernels_portable, portable != 0, memory_order_relaxed);
}

const int8_t htp_iq4nl_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
const int8_t htp_mxfp4_values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

float htp_e8m0_to_fp32_half(uint8_t e) {
    // 0.5 * 2^(e - 127): a normal float for e >= 2, a subnormal below.
    const uint32_t bits = e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23;
    return htp_bits_f32(bits);
}

static uint16_t rd16(const uint8_t * p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return h;
}

float htp_ue4m3_to_fp32_half(uint8_t x) {
    // Bit 7 is ignored; 0x00 and 0x7f (NaN) read as 0. e = bits 3..6, m = bits 0..2:
    // e = 0: m * 2^-10 (after the factor 0.5); else (1 + m/8) * 2^(e - 8), a normal float.
    if (x == 0 || x == 0x7f) {
        return 0.0f;
    }
    const uint32_t e = (x >> 3) & 15, m = x & 7;
    if (e == 0) {
        return (float)m * (1.0f / 1024.0f);
    }
    return htp_bits_f32((e + 119) << 23 | m << 20);
}

// One block of Q1_0 (128 elements), Q2_0 or NVFP4 (64) at b -> floats, with
// the expressions of ggml's dequantize_row_q1_0 / _q2_0 / _nvfp4.
static void dequant_unit_block(uint32_t type, const uint8_t * b, float * y) {
    switch (type) {
        case HTP_TYPE_Q1_0: {
            const float d = htp_fp16_to_fp32(rd16(b)), nd = -d;
            for (int j = 0; j < 128; j++) {
                y[j] = (b[2 + j / 8] >> (j % 8)) & 1 ? d : nd;
            }
            break;
        }
        case HTP_TYPE_Q2_0: {
            const float d = htp_fp16_to_fp32(rd16(b));
            for (int j = 0; j < 64; j++) {
                y[j] = (float)(((b[2 + j / 4] >> (2 * (j % 4))) & 3) - 1) * d;
            }
            break;
        }
        default: {  // NVFP4: sub-block t of 16 elements, scale t; its element i in qs[8 t + i % 8]
            for (int t = 0; t < 4; t++) {
                const float d = htp_ue4m3_to_fp32_half(b[t]);
                for (int i = 0; i < 8; i++) {
                    const uint8_t q   = b[4 + 8 * t + i];
                    y[16 * t + i]     = (float)htp_mxfp4_values[q & 15] * d;
                    y[16 * t + i + 8] = (float)htp_mxfp4_values[q >> 4] * d;
                }
            }
            break;
        }
    }
}

// One ggml block of type at b -> 32 floats.
static void dequant_block(uint32_t type, const uint8_t * b, float * y) {
    switch (type) {
        case HTP_TYPE_Q8_0: {
            const float d = htp_fp16_to_fp32(rd16(b));
            for (int j = 0; j < 32; j++) {
                y[j] = d * (float)(int8_t)b[2 + j];
            }
            break;
        }
        case HTP_TYPE_Q4_0: {
            const float d = htp_fp16_to_fp32(rd16(b));
            for (int j = 0; j < 16; j++) {
                y[j]      = d * (float)((b[2 + j] & 15) - 8);
                y[j + 16] = d * (float)((b[2 + j] >> 4) - 8);
            }
            break;
        }
        case HTP_TYPE_Q4_1: {
            const float d = htp_fp16_to_fp32(rd16(b)), m = htp_fp16_to_fp32(rd16(b + 2));
            for (int j = 0; j < 16; j++) {
                y[j]      = d * (float)(b[4 + j] & 15) + m;
                y[j + 16] = d * (float)(b[4 + j] >> 4) + m;
            }
            break;
        }
        case HTP_TYPE_Q5_0: {
            const float d = htp_fp16_to_fp32(rd16(b));
            uint32_t    qh;
            memcpy(&qh, b + 2, 4);
            for (int j = 0; j < 16; j++) {
                const int q0 = (b[6 + j] & 15) | (int)((qh >> j) & 1) << 4,
                          q1 = (b[6 + j] >> 4) | (int)((qh >> (j + 16)) & 1) << 4;
                y[j]         = d * (float)(q0 - 16);
                y[j + 16]    = d * (float)(q1 - 16);
            }
            break;
        }
        case HTP_TYPE_Q5_1: {
            const float d = htp_fp16_to_fp32(rd16(b)), m = htp_fp16_to_fp32(rd16(b + 2));
            uint32_t    qh;
            memcpy(&qh, b + 4, 4);
            for (int j = 0; j < 16; j++) {
                const int q0 = (b[8 + j] & 15) | (int)((qh >> j) & 1) << 4,
                          q1 = (b[8 + j] >> 4) | (int)((qh >> (j + 16)) & 1) << 4;
                y[j]         = d * (float)q0 + m;
                y[j + 16]    = d * (float)q1 + m;
            }
            break;
        }
        case HTP_TYPE_IQ4_NL: {
            const float d = htp_fp16_to_fp32(rd16(b));
            for (int j = 0; j < 16; j++) {
                y[j]      = d * (float)htp_iq4nl_values[b[2 + j] & 15];
                y[j + 16] = d * (float)htp_iq4nl_values[b[2 + j] >> 4];
            }
            break;
        }
        case HTP_TYPE_MXFP4: {
            const float d = htp_e8m0_to_fp32_half(b[0]);
            for (int j = 0; j < 16; j++) {
                y[j]      = d * (float)htp_mxfp4_values[b[1 + j] & 15];
                y[j + 16] = d * (float)htp_mxfp4_values[b[1 + j] >> 4];
            }
            break;
        }
        default:
            memset(y, 0, 32 * sizeof(float));  // unreachable: checks refuse other types
            break;
    }
}

#if defined(__HVX__)
// The 4-bit types a vector at a time: the 16 quant bytes of up to 4 blocks go
// to bytes 16 i .. 16 i + 15 of a vector; zipping its low and high nibbles 16
// bytes at a time puts block i's elements 0-15 (low nibbles) and 16-31 (high)
// at 32 i, in element order. Q4_0 then takes off its 8, IQ4_NL and MXFP4 look
// their values up (vlut32); Q4_1's stay 0..15, as do Q5_0's and Q5_1's low
// four bits (bit 4, bit j of qh for element j, joins in the scalar loop that
// converts). The scale and the int -> float stay scalar (v67 HVX has no
// float), in dequant_block's expressions.
static int dequant_hvx_type(uint32_t type) {
    return type == HTP_TYPE_Q4_0 || type == HTP_TYPE_Q4_1 || type == HTP_TYPE_Q5_0 || type == HTP_TYPE_Q5_1 ||
           type == HTP_TYPE_IQ4_NL || type == HTP_TYPE_MXFP4;
}

static void dequant_blocks_hvx(uint32_t type, const uint8_t * const blk[4], int n, float * y) {
    const int qoff = type == HTP_TYPE_Q4_1    ? 4
                     : type == HTP_TYPE_Q5_0  ? 6
                     : type == HTP_TYPE_Q5_1  ? 8
                     : type == HTP_TYPE_MXFP4 ? 1
                                              : 2;
    uint8_t   buf[128] HVX_ALIGN;
    for (int i = 0; i < n; i++) {
        memcpy(buf + 16 * i, blk[i] + qoff, 16);
    }
    memset(buf + 16 * n, 0, sizeof buf - 16 * (size_t)n);  // (no byte written twice: hvx.h)
    const hvx_v v = hvx_ld(buf);
    hvx_v       e = hvx_lo(hvx_zip(hvx_nib_lo(v), hvx_nib_hi(v), 16));
    if (type == HTP_TYPE_Q4_0) {
        e = __builtin_HEXAGON_V6_vsubb_128B(e, hvx_b(8));
    } else if (type == HTP_TYPE_IQ4_NL) {
        e = hvx_lut16(e, hvx_table16(htp_iq4nl_values, 0));
    } else if (type == HTP_TYPE_MXFP4) {
        e = hvx_lut16(e, hvx_table16(htp_mxfp4_values, 0));
    }
    int8_t q[128] HVX_ALIGN;
    hvx_st(q, e);
    for (int i = 0; i < n; i++) {
        const uint8_t * b  = blk[i];
        const int8_t *  qi = q + 32 * i;
        float *         yi = y + 32 * i;
        if (type == HTP_TYPE_Q4_1) {
            const float d = htp_fp16_to_fp32(rd16(b)), m = htp_fp16_to_fp32(rd16(b + 2));
            for (int j = 0; j < 32; j++) {
                yi[j] = d * (float)(uint8_t)qi[j] + m;
            }
            continue;
        }
        if (type == HTP_TYPE_Q5_0 || type == HTP_TYPE_Q5_1) {
            const int   q51 = type == HTP_TYPE_Q5_1;
            const float d = htp_fp16_to_fp32(rd16(b)), m = q51 ? htp_fp16_to_fp32(rd16(b + 2)) : 0.0f;
            uint32_t    qh;
            memcpy(&qh, b + (q51 ? 4 : 2), 4);
            for (int j = 0; j < 32; j++) {
                const int q = (uint8_t)qi[j] | (int)((qh >> j) & 1) << 4;
                yi[j]       = q51 ? d * (float)q + m : d * (float)(q - 16);
            }
            continue;
        }
        const float d = type == HTP_TYPE_MXFP4 ? htp_e8m0_to_fp32_half(b[0]) : htp_fp16_to_fp32(rd16(b));
        for (int j = 0; j < 32; j++) {
            yi[j] = d * (float)qi[j];
        }
    }
}
#endif

#if defined(__HVX__)
// NVFP4 a vector at a time: the 32 quant bytes of up to 4 blocks at 32 i;
// zipping the low and high nibbles 8 bytes at a time puts each sub-block's
// elements in order (its 8 bytes' low nibbles, then their high ones), so
// block i's 64 elements are bytes 64 i .. of the pair; the e2m1 table
// (vlut32), then dequant_unit_block's scalar convert.
static void dequant_nvfp4_hvx(const uint8_t * const blk[4], int n, float * y) {
    uint8_t buf[128] HVX_ALIGN;
    for (int i = 0; i < n; i++) {
        memcpy(buf + 32 * i, blk[i] + 4, 32);
    }
    memset(buf + 32 * n, 0, sizeof buf - 32 * (size_t)n);  // (no byte written twice: hvx.h)
    const hvx_v  v   = hvx_ld(buf);
    const hvx_vv z   = hvx_zip(hvx_nib_lo(v), hvx_nib_hi(v), 8);
    const hvx_v  tab = hvx_table16(htp_mxfp4_values, 0);
    int8_t       q[256] HVX_ALIGN;
    hvx_st(q, hvx_lut16(hvx_lo(z), tab));
    hvx_st(q + 128, hvx_lut16(hvx_hi(z), tab));
    for (int i = 0; i < n; i++) {
        for (int t = 0; t < 4; t++) {
            const float d = htp_ue4m3_to_fp32_half(blk[i][t]);
            for (int j = 0; j < 16; j++) {
                y[64 * i + 16 * t + j] = (float)q[64 * i + 16 * t + j] * d;
            }
        }
    }
}
#endif

void htp_quant_dequant_row(uint32_t type, const uint8_t * x, float * y, int64_t n) {
    if (htp_kq_type_ok(type)) {  // the K-quants' own decoder (kquant-dot.c)
        htp_kq_dequant_row(type, y, x, n / HTP_KQ_QK);
        return;
    }
    const struct htp_type_traits * tt = htp_type_traits(type);
#if defined(__HVX__)
    if (type == HTP_TYPE_NVFP4 && !htp_kernels_portable()) {
        for (int64_t i = 0; i < n / 64; i += 4) {
            const int       nb     = (int)htp_min64(4, n / 64 - i);
            const uint8_t * blk[4] = {NULL, NULL, NULL, NULL};
            for (int k = 0; k < nb; k++) {
                blk[k] = x + (i + k) * 36;
            }
            dequant_nvfp4_hvx(blk, nb, y + 64 * i);
        }
        return;
    }
#endif
    if (htp_quant_is_unit_type(type)) {
        for (int64_t i = 0; i < n / tt->blck_size; i++) {
            dequant_unit_block(type, x + i * tt->type_size, y + tt->blck_size * i);
        }
        return;
    }
#if defined(__HVX__)
    if (dequant_hvx_type(type) && !htp_kernels_portable()) {
        for (int64_t i = 0; i < n / 32; i += 4) {
            const int       nb     = (int)htp_min64(4, n / 32 - i);
            const uint8_t * blk[4] = {NULL, NULL, NULL, NULL};
            for (int k = 0; k < nb; k++) {
                blk[k] = x + (i + k) * tt->type_size;
            }
            dequant_blocks_hvx(type, blk, nb, y + 32 * i);
        }
        return;
    }
#endif
    for (int64_t i = 0; i < n / 32; i++) {
        dequant_block(type, x + i * tt->type_size, y + 32 * i);
    }
}

void htp_quant_dequant_tiled_row(const struct htp_tensor_view * v, int64_t i1, int64_t i2, int64_t i3, int64_t k0,
                                 int64_t n, float * y) {
    const struct htp_tile_format * f    = htp_tile_format(v->type);
    const int64_t                  nblk = v->ne[0] / f->blck_size;
    const uint8_t *                group =
        v->data + i3 * v->nb[3] + i2 * v->nb[2] + (i1 / HTP_TILE_ROWS) * (int64_t)htp_tiled_group_bytes(f, v->ne[0]);
#if defined(__HVX__)
    if (v->type == HTP_TYPE_NVFP4 && !htp_kernels_portable()) {
        const int64_t kb0 = k0 / 64, kb1 = (k0 + n) / 64;
        uint8_t       blocks[4][64];
        for (int64_t kb = kb0; kb < kb1; kb += 4) {
            const int       nb     = (int)htp_min64(4, kb1 - kb);
            const uint8_t * blk[4] = {blocks[0], blocks[1], blocks[2], blocks[3]};
            for (int k = 0; k < nb; k++) {
                htp_tiled_unpack_block(f, NULL, group, nblk, (int)(i1 % HTP_TILE_ROWS), kb + k, blocks[k]);
            }
            dequant_nvfp4_hvx(blk, nb, y + kb * 64 - k0);
        }
        return;
    }
    if (dequant_hvx_type(v->type) && !htp_kernels_portable()) {
        const int64_t kb0 = k0 / f->blck_size, kb1 = (k0 + n) / f->blck_size;
        uint8_t       blocks[4][64];
        for (int64_t kb = kb0; kb < kb1; kb += 4) {
            const int       nb     = (int)htp_min64(4, kb1 - kb);
            const uint8_t * blk[4] = {blocks[0], blocks[1], blocks[2], blocks[3]};
            for (int k = 0; k < nb; k++) {
                htp_tiled_unpack_block(f, NULL, group, nblk, (int)(i1 % HTP_TILE_ROWS), kb + k, blocks[k]);
            }
            dequant_blocks_hvx(v->type, blk, nb, y + kb * f->blck_size - k0);
        }
        return;
    }
#endif
    uint8_t block[64];
    for (int64_t kb = k0 / f->blck_size; kb < (k0 + n) / f->blck_size; kb++) {
        htp_tiled_unpack_block(f, NULL, group, nblk, (int)(i1 % HTP_TILE_ROWS), kb, block);
        if (htp_quant_is_unit_type(v->type)) {
            dequant_unit_block(v->type, block, y + kb * f->blck_size - k0);
        } else {
            dequant_block(v->type, block, y + kb * f->blck_size - k0);
        }
    }
}

// The smallest and the largest value of a block of 32 (Q4_1, Q5_1).
static void block_min_max(const float * x, float * min, float * max) {
    float lo = FLT_MAX, hi = -FLT_MAX;
    for (int j = 0; j < 32; j++) {
        if (x[j] < lo) {
            lo = x[j];
        }
        if (x[j] > hi) {
            hi = x[j];
        }
    }
    *min = lo;
    *max = hi;
}

// The value of largest magnitude of a block of 32, the first one met (Q4_0, Q5_0).
static float block_signed_max(const float * x) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < 32; j++) {
        if (amax < fabsf(x[j])) {
            amax = fabsf(x[j]);
            max  = x[j];
        }
    }
    return max;
}

static void store_fp16(uint8_t * p, float f) {
    const uint16_t h = htp_fp32_to_fp16(f);
    memcpy(p, &h, 2);
}

// max |x| over a block of 32 in the order ggml-cpu's AVX code reduces it:
// lanes i, i + 8, i + 16, i + 24 first, then halves, with the max
// instruction's rule (a > b ? a : b, so a NaN in b wins and one in a loses).
// On finite data any order gives the same value; this keeps NaN blocks equal.
static float q8_amax(const float * x) {
    float m[8];
    for (int i = 0; i < 8; i++) {
        m[i] = fabsf(x[i]);
        for (int k = 1; k < 4; k++) {
            const float a = fabsf(x[i + 8 * k]);
            m[i]          = m[i] > a ? m[i] : a;
        }
    }
    float t[4];
    for (int i = 0; i < 4; i++) {
        t[i] = m[i + 4] > m[i] ? m[i + 4] : m[i];
    }
    const float u0 = t[0] > t[2] ? t[0] : t[2], u1 = t[1] > t[3] ? t[1] : t[3];
    return u0 > u1 ? u0 : u1;
}

// Q8_0 as ggml-cpu's CPY and SET_ROWS make it on x86 (quantize_row_q8_0, AVX):
// d = amax / 127 (stored fp16), q = x * (127 / amax) rounded to nearest, ties
// to even, saturated to int8, NaN (and beyond int32) -128. (ggml's _ref
// rounds x * (1 / d) half away from zero: other bits at ties, which
// bfloat16 and small-integer data hit often.)
static void quantize_q8_0(const float * x, uint8_t * y) {
    const float amax = q8_amax(x);
    const float d    = amax / 127.0f;
    const float id   = amax != 0.0f ? 127.0f / amax : 0.0f;
    store_fp16(y, d);
    for (int j = 0; j < 32; j++) {
        const float v = x[j] * id;
        int8_t      q = -128;
        if (v > -2147483648.0f && v < 2147483648.0f) {
            q = (int8_t)htp_f2i_sat(__builtin_nearbyintf(v), -128, 127);
        }
        y[2 + j] = (uint8_t)q;
    }
}

// Q4_0 as quantize_row_q4_0_ref: the value of largest magnitude maps to -8.
static void quantize_q4_0(const float * x, uint8_t * y) {
    const float    d  = block_signed_max(x) / -8.0f;
    const float    id = d != 0.0f ? 1.0f / d : 0.0f;
    const uint16_t h  = htp_fp32_to_fp16(d);
    memcpy(y, &h, 2);
    for (int j = 0; j < 16; j++) {
        const int8_t q0  = (int8_t)htp_f2i_sat(x[j] * id + 8.5f, -128, 127),
                     q1  = (int8_t)htp_f2i_sat(x[j + 16] * id + 8.5f, -128, 127);
        const uint8_t u0 = (uint8_t)(q0 < 15 ? q0 : 15), u1 = (uint8_t)(q1 < 15 ? q1 : 15);
        y[2 + j] = (uint8_t)(u0 | (u1 << 4));
    }
}

// Q4_1 as quantize_row_q4_1_ref: q = (x - min) / d rounded (+ 0.5, toward
// zero), d = (max - min) / 15, m = min.
static void quantize_q4_1(const float * x, uint8_t * y) {
    float min, max;
    block_min_max(x, &min, &max);
    const float d  = (max - min) / 15.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_fp16(y, d);
    store_fp16(y + 2, min);
    for (int j = 0; j < 16; j++) {
        const int32_t q0 = htp_f2i_sat((x[j] - min) * id + 0.5f, -128, 127),
                      q1 = htp_f2i_sat((x[j + 16] - min) * id + 0.5f, -128, 127);
        y[4 + j]         = (uint8_t)((q0 < 15 ? q0 : 15) | (q1 < 15 ? q1 : 15) << 4);
    }
}

// Q5_0 as quantize_row_q5_0_ref: the value of largest magnitude maps to -16;
// bit 4 of element j's quant is bit j of qh.
static void quantize_q5_0(const float * x, uint8_t * y) {
    const float d  = block_signed_max(x) / -16.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_fp16(y, d);
    uint32_t qh = 0;
    for (int j = 0; j < 16; j++) {
        int32_t q0 = htp_f2i_sat(x[j] * id + 16.5f, -128, 127), q1 = htp_f2i_sat(x[j + 16] * id + 16.5f, -128, 127);
        q0       = q0 < 31 ? q0 : 31;
        q1       = q1 < 31 ? q1 : 31;
        y[6 + j] = (uint8_t)((q0 & 15) | (q1 & 15) << 4);
        qh |= (uint32_t)((q0 >> 4) & 1) << j | (uint32_t)((q1 >> 4) & 1) << (j + 16);
    }
    memcpy(y + 2, &qh, 4);
}

// Q5_1 as quantize_row_q5_1_ref: d = (max - min) / 31, m = min.
static void quantize_q5_1(const float * x, uint8_t * y) {
    float min, max;
    block_min_max(x, &min, &max);
    const float d  = (max - min) / 31.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_fp16(y, d);
    store_fp16(y + 2, min);
    uint32_t qh = 0;
    for (int j = 0; j < 16; j++) {
        const int32_t q0 = htp_f2i_sat((x[j] - min) * id + 0.5f, 0, 31),
                      q1 = htp_f2i_sat((x[j + 16] - min) * id + 0.5f, 0, 31);
        y[8 + j]         = (uint8_t)((q0 & 15) | (q1 & 15) << 4);
        qh |= (uint32_t)(q0 >> 4) << j | (uint32_t)(q1 >> 4) << (j + 16);
    }
    memcpy(y + 4, &qh, 4);
}

// The index of the IQ4_NL value nearest v (the upper one of a tie), by
// bisection as ggml searches.
static int iq4nl_nearest(float v) {
    const int8_t * t = htp_iq4nl_values;
    if (v <= (float)t[0]) {
        return 0;
    }
    if (v >= (float)t[15]) {
        return 15;
    }
    int lo = 0, hi = 15;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (v < (float)t[mid]) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    return v - (float)t[hi - 1] < (float)t[hi] - v ? hi - 1 : hi;
}

// IQ4_NL as quantize_row_iq4_nl_ref (ggml's search without importance
// weights and without its extra tries): the value of largest magnitude maps
// to -127 to pick each element's level, then d is the least-squares scale of
// those levels with weights x^2. A block below 1e-15 in magnitude gets d = 0
// (ggml leaves its quants as whatever its scratch held; they decode to 0
// either way, ours are 0).
static void quantize_iq4_nl(const float * x, uint8_t * y) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < 32; j++) {
        const float ax = fabsf(x[j]);
        if (ax > amax) {
            amax = ax;
            max  = x[j];
        }
    }
    uint8_t l[32] = {0};
    float   d     = 0.0f;
    if (amax >= 1e-15f) {
        const float id    = 1.0f / (max / -127.0f);
        float       sumqx = 0.0f, sumq2 = 0.0f;
        for (int j = 0; j < 32; j++) {
            l[j]          = (uint8_t)iq4nl_nearest(id * x[j]);
            const float q = (float)htp_iq4nl_values[l[j]], w = x[j] * x[j];
            sumqx += w * q * x[j];
            sumq2 += w * q * q;
        }
        d = sumq2 > 0.0f ? sumqx / sumq2 : 0.0f;
    }
    store_fp16(y, d);
    for (int j = 0; j < 16; j++) {
        y[2 + j] = (uint8_t)(l[j] | l[j + 16] << 4);
    }
}

void htp_quant_quantize_row(uint32_t type, const float * x, uint8_t * y, int64_t n) {
    void (*quantize_block)(const float *, uint8_t *) = NULL;
    switch (type) {
        case HTP_TYPE_Q8_0:
            quantize_block = quantize_q8_0;
            break;
        case HTP_TYPE_Q4_0:
            quantize_block = quantize_q4_0;
            break;
        case HTP_TYPE_Q4_1:
            quantize_block = quantize_q4_1;
            break;
        case HTP_TYPE_Q5_0:
            quantize_block = quantize_q5_0;
            break;
        case HTP_TYPE_Q5_1:
            quantize_block = quantize_q5_1;
            break;
        case HTP_TYPE_IQ4_NL:
            quantize_block = quantize_iq4_nl;
            break;
        default:
            return;  // unreachable: the checks refuse other types (htp_quant_can_quantize)
    }
    const int64_t bs = htp_type_traits(type)->type_size;
    for (int64_t i = 0; i < n / 32; i++, x += 32, y += bs) {
        quantize_block(x, y);
    }
}

// ---------------------------------------------------------------------------
// CPY F32 / F16 / BF16 -> a KV-cache quant type
//   src [ne0, ne1, ne2, ne3] any float type and strides; dst of the same shape,
//   rows of whole blocks packed (nb[0] = block bytes). Row by row.
// ---------------------------------------------------------------------------

struct cpyq_args {
    const struct htp_tensor_view *src, *dst;
};

static void cpyq_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct cpyq_args * a = arg;
    float                    buf[HTP_CHUNK];
    int64_t                  r0, r1;
    htp_split(htp_view_nrows(a->src), ith, nth, &r0, &r1);
    const int64_t bb = htp_type_traits(a->dst->type)->type_size;
    for (int64_t ir = r0; ir < r1; ir++) {
        int64_t i1, i2, i3;
        htp_row_index(a->src->ne, ir, &i1, &i2, &i3);
        const uint8_t * x = htp_view_row(a->src, i1, i2, i3);
        uint8_t *       y = htp_view_row(a->dst, i1, i2, i3);
        for (int64_t c = 0; c < a->src->ne[0]; c += HTP_CHUNK) {  // HTP_CHUNK is a multiple of 32
            const int64_t k = htp_min64(HTP_CHUNK, a->src->ne[0] - c);
            htp_row_load_f32(buf, x + c * a->src->nb[0], a->src->nb[0], a->src->type, k);
            htp_quant_quantize_row(a->dst->type, buf, y + c / 32 * bb, k);
        }
    }
}

int htp_op_cpy_q_run(struct htp_op_ctx * ctx) {
    struct cpyq_args a = {ctx->op.src[0], ctx->op.dst[0]};
    if (htp_view_nelements(a.src) == 0) {
        return HTP_STATUS_OK;
    }
    ctx->run(ctx->pool, cpyq_job, &a);
    return HTP_STATUS_OK;
}

// ---------------------------------------------------------------------------
// CPY quantized -> F32 (ggml-cpu dequantizes into F32 only)
//   src [ne0, ne1, ne2, ne3] plain rows of whole blocks of a type
//   htp_quant_can_dequant_row names, any row strides; dst F32 of the same
//   shape, any strides. Row by row.
// ---------------------------------------------------------------------------

static void cpydq_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct cpyq_args * a = arg;
    float                    buf[HTP_CHUNK];
    int64_t                  r0, r1;
    htp_split(htp_view_nrows(a->src), ith, nth, &r0, &r1);
    const struct htp_type_traits * tt = htp_type_traits(a->src->type);
    for (int64_t ir = r0; ir < r1; ir++) {
        int64_t i1, i2, i3;
        htp_row_index(a->src->ne, ir, &i1, &i2, &i3);
        const uint8_t * x = htp_view_row(a->src, i1, i2, i3);
        uint8_t *       y = htp_view_row(a->dst, i1, i2, i3);
        // HTP_CHUNK is a multiple of every block size (32, 256)
        for (int64_t c = 0; c < a->src->ne[0]; c += HTP_CHUNK) {
            const int64_t k = htp_min64(HTP_CHUNK, a->src->ne[0] - c);
            htp_quant_dequant_row(a->src->type, x + c / tt->blck_size * tt->type_size, buf, k);
            htp_row_store_f32(y + c * a->dst->nb[0], a->dst->nb[0], a->dst->type, buf, k);
        }
    }
}

int htp_op_cpy_dq_run(struct htp_op_ctx * ctx) {
    struct cpyq_args a = {ctx->op.src[0], ctx->op.dst[0]};
    if (htp_view_nelements(a.src) == 0) {
        return HTP_STATUS_OK;
    }
    ctx->run(ctx->pool, cpydq_job, &a);
    return HTP_STATUS_OK;
}
