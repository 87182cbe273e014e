// test-kquant: the NPU's K-quant arithmetic (src/npu/ops/kquant.c) against
// ggml for Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and IQ4_XS: tile pack/unpack gives back ggml's block bytes
// exactly (padding rows included), dequantization of tiled and plain rows
// equals ggml's to_float bit for bit, activation quantization (SIMD and
// portable) equals ggml's Q8_K (quants, scale, sums), and the 16-row dot
// products (SIMD and portable) match ggml-cpu's vec_dot with Q8_K activations
// to float rounding; the decode kernel that takes several row groups at once
// gives the same bits. Also the Q8 activation blocks of the Q4_0-family
// matmuls: SIMD against portable, and that they quantize their input.
// Exit 0 pass, 1 fail.

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-cpu.h"
#include "ggml.h"
#include "npu/ops/kquant-dot.h"
#include "npu/ops/quant.h"
#include "proto/htp-proto.h"
#include "contract/tiled.h"
#include "test-check.h"

_Static_assert((int)GGML_TYPE_Q4_K == (int)HTP_TYPE_Q4_K && (int)GGML_TYPE_Q5_K == (int)HTP_TYPE_Q5_K &&
                   (int)GGML_TYPE_Q6_K == (int)HTP_TYPE_Q6_K && (int)GGML_TYPE_Q3_K == (int)HTP_TYPE_Q3_K &&
                   (int)GGML_TYPE_Q2_K == (int)HTP_TYPE_Q2_K && (int)GGML_TYPE_IQ4_XS == (int)HTP_TYPE_IQ4_XS,
               "type codes");

static uint64_t rng_state = 12345;

static float frand(void) {  // [-1, 1)
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((rng_state >> 40) & 0xffffff) / 8388608.0f - 1.0f;
}

// Rows of floats with some structure: an offset per row and outliers, so
// mins and scales vary between sub-blocks.
static void fill(float * x, int64_t n, int64_t k) {
    for (int64_t i = 0; i < n; i++) {
        const float off = 0.3f * frand();
        for (int64_t j = 0; j < k; j++) {
            float v = frand() * (1.0f + (float)(j % 37) / 20.0f) + off;
            if ((j * 7 + i) % 97 == 0) {
                v *= 8.0f;
            }
            x[i * k + j] = v;
        }
    }
}

static void test_type(enum ggml_type type, int64_t k, int nrows) {
    const char *                    name = ggml_type_name(type);
    const struct htp_tile_format *  f    = htp_tile_format(type);
    const struct ggml_type_traits * tt   = ggml_get_type_traits(type);
    const int64_t                   nsb  = k / 256;
    const size_t                    rowb = ggml_row_size(type, k);
    if (!f) {
        CHECK(0, "%s: no tile format", name);
        return;
    }
    printf("%s: k=%lld rows=%d\n", name, (long long)k, nrows);

    float *   x    = malloc(sizeof(float) * (size_t)(k * nrows));
    uint8_t * raw  = malloc(rowb * (size_t)nrows);
    uint8_t * back = malloc(rowb * (size_t)nrows);
    fill(x, nrows, k);
    ggml_quantize_chunk(type, x, raw, 0, nrows, k, NULL);

    // Pack into row groups, unpack every block.
    const int64_t ngroup = htp_tiled_ngroups(nrows);
    const size_t  gb     = htp_tiled_group_bytes(f, k);
    uint8_t *     tiled  = malloc(gb * (size_t)ngroup);
    for (int64_t g = 0; g < ngroup; g++) {
        const int n = (int)(nrows - 16 * g < 16 ? nrows - 16 * g : 16);
        htp_tiled_pack_group(f, NULL, raw + (size_t)(16 * g) * rowb, rowb, n, nsb, tiled + g * gb);
    }
    for (int r = 0; r < nrows; r++) {
        for (int64_t b = 0; b < nsb; b++) {
            htp_tiled_unpack_block(f, NULL, tiled + (r / 16) * gb, nsb, r % 16, b, back + r * rowb + b * f->blck_bytes);
        }
    }
    CHECK(memcmp(raw, back, rowb * (size_t)nrows) == 0, "%s: unpack(pack) differs from the ggml bytes", name);

    // Dequantization, tiled and plain, against ggml.
    float * ref     = malloc(sizeof(float) * (size_t)k);
    float * got     = malloc(sizeof(float) * (size_t)k);
    int     deq_bad = 0;
    for (int r = 0; r < nrows; r++) {
        tt->to_float(raw + r * rowb, ref, k);
        htp_kq_dequant_tiled_row(type, got, tiled + (r / 16) * gb, r % 16, nsb);
        deq_bad += memcmp(ref, got, sizeof(float) * (size_t)k) != 0;
        htp_kq_dequant_row(type, got, raw + r * rowb, nsb);
        deq_bad += memcmp(ref, got, sizeof(float) * (size_t)k) != 0;
    }
    CHECK(deq_bad == 0, "%s: %d dequantized rows differ from ggml's", name, deq_bad);

    // Activations: 4 columns, quantized by us and by ggml.
    const int              ncol = 4;
    float *                act  = malloc(sizeof(float) * (size_t)(k * ncol));
    struct htp_q8k_block * q8   = malloc(sizeof(struct htp_q8k_block) * (size_t)(nsb * ncol));
    const size_t           q8kb = ggml_row_size(GGML_TYPE_Q8_K, k);
    uint8_t *              g8   = malloc(q8kb * ncol);
    fill(act, ncol, k);
    for (int64_t j = 0; j < 256; j++) {
        act[j] = 0.0f;  // column 0, block 0: all zero
    }
    int                    q8_bad = 0;
    struct htp_q8k_block * q8ref  = malloc(sizeof(struct htp_q8k_block) * (size_t)nsb);
    for (int c = 0; c < ncol; c++) {
        htp_kq_quantize_q8k(q8 + c * nsb, act + c * k, k);
        htp_kq_quantize_q8k_ref(q8ref, act + c * k, k);
        q8_bad += memcmp(q8ref, q8 + c * nsb, sizeof(struct htp_q8k_block) * (size_t)nsb) != 0;
        ggml_get_type_traits_cpu(GGML_TYPE_Q8_K)->from_float(act + c * k, g8 + c * q8kb, k);
        for (int64_t b = 0; b < nsb; b++) {
            // ggml's block_q8_K: float d, int8 qs[256], int16 bsums[16]
            const uint8_t *              gb8 = g8 + c * q8kb + b * 292;
            const struct htp_q8k_block * o   = &q8[c * nsb + b];
            float                        d;
            int16_t                      bs[16];
            memcpy(&d, gb8, 4);
            memcpy(bs, gb8 + 260, 32);
            q8_bad += memcmp(&d, &o->d, 4) != 0 || memcmp(gb8 + 4, o->qs, 256) != 0;
            if (d == 0.0f) {
                continue;  // ggml leaves the sums of an all-zero block unset
            }
            q8_bad += memcmp(bs, o->bsum16, 32) != 0;
            for (int i = 0; i < 8; i++) {
                q8_bad += o->bsum32[i] != bs[2 * i] + bs[2 * i + 1];
            }
        }
    }
    CHECK(q8_bad == 0, "%s: %d activation blocks differ from ggml's Q8_K", name, q8_bad);

    // Dot products of every row with 1..4 columns.
    const struct ggml_type_traits_cpu * tc         = ggml_get_type_traits_cpu(type);
    double                              max_rel[2] = {0, 0};
    for (int nc = 1; nc <= 4; nc++) {
        const struct htp_q8k_block * a[4];
        for (int c = 0; c < nc; c++) {
            a[c] = q8 + (c + 4 - nc) % 4 * nsb;
        }
        for (int64_t g = 0; g < ngroup; g++) {
            float out[2][4][16];
            htp_kq_dot_group(type, out[0], tiled + g * gb, nsb, a, nc);
            htp_kq_dot_group_ref(type, out[1], tiled + g * gb, nsb, a, nc);
            for (int r = 0; r < 16 && 16 * g + r < nrows; r++) {
                for (int c = 0; c < nc; c++) {
                    const int col = (c + 4 - nc) % 4;
                    float     want;
                    tc->vec_dot((int)k, &want, 0, raw + (16 * g + r) * rowb, 0, g8 + (size_t)col * q8kb, 0, 1);
                    // Error relative to |w| |a|, the scale of the float
                    // rounding (the integer sums agree exactly).
                    tt->to_float(raw + (16 * g + r) * rowb, ref, k);
                    double ww = 0, aa = 0;
                    for (int64_t i = 0; i < k; i++) {
                        ww += (double)ref[i] * ref[i];
                        aa += (double)act[col * k + i] * act[col * k + i];
                    }
                    for (int v = 0; v < 2; v++) {
                        const double err = fabs((double)out[v][c][r] - want) / (sqrt(ww * aa) + 1e-30);
                        max_rel[v]       = err > max_rel[v] ? err : max_rel[v];
                    }
                }
            }
        }
    }
    printf("  dot: max rel. error simd %.2e, portable %.2e\n", max_rel[0], max_rel[1]);
    CHECK(max_rel[0] < 2e-6 && max_rel[1] < 2e-6, "%s: dot products differ from ggml's vec_dot", name);

    // The decode kernels over 2 and 4 row groups: the same sums as one group
    // at a time, bit for bit.
    int multi_bad = 0;
    for (int ng = 2; ng <= 4; ng += 2) {
        for (int64_t g = 0; g + ng <= ngroup; g++) {
            for (int c = 0; c < 4; c++) {
                const struct htp_q8k_block * a = q8 + c * nsb;
                float                        multi[4][16], one[4][16];
                htp_kq_dot_multi(type, multi, tiled + g * gb, (size_t)gb, ng, nsb, a);
                for (int h = 0; h < ng; h++) {
                    htp_kq_dot_group(type, one, tiled + (g + h) * gb, nsb, &a, 1);
                    multi_bad += memcmp(multi[h], one[0], sizeof multi[h]) != 0;
                }
            }
        }
    }
    CHECK(multi_bad == 0, "%s: %d multi-group results differ from the single-group kernel", name, multi_bad);

    free(x);
    free(raw);
    free(back);
    free(tiled);
    free(ref);
    free(got);
    free(act);
    free(q8);
    free(q8ref);
    free(g8);
}

// The Q8 activation blocks of the Q4_0-family matmuls (quant.h): the SIMD
// code gives the portable code's bytes, on values with ties (x / d exactly
// half-way between two integers) and an all-zero block; and each block is a
// quantization as ggml-cpu's q8_0: with e = max |x| / 127, |q| <= 127,
// |x - q e| <= e / 2 (plus rounding), the stored scale d is e rounded to
// fp16, and sum = sum q.
static void test_qmm_activations(void) {
    enum { NB = 64 };
    float   x[NB * 32];
    uint8_t simd[NB * 40], ref[NB * 40];
    fill(x, NB, 32);
    for (int j = 0; j < 32; j++) {
        x[j]      = 0.0f;                                       // block 0: all zero
        x[32 + j] = (j == 0) ? 127.0f : (float)(j % 9) - 4.5f;  // block 1: d = 1, ties
        x[64 + j] = (j == 0) ? -63.5f : (float)j * 0.25f;       // block 2: d = 0.5, ties
    }
    htp_qmm_quantize_blocks(x, NB, simd);
    htp_qmm_quantize_blocks_ref(x, NB, ref);
    CHECK(memcmp(simd, ref, sizeof simd) == 0, "q8 activations: SIMD and portable bytes differ");
    int bad = 0;
    for (int b = 0; b < NB; b++) {
        const uint8_t * o = ref + 40 * b;
        float           d;
        int32_t         sum, s = 0;
        memcpy(&d, o + 32, 4);
        memcpy(&sum, o + 36, 4);
        float amax = 0.0f;
        for (int j = 0; j < 32; j++) {
            amax = fmaxf(amax, fabsf(x[32 * b + j]));
        }
        const float e = amax / 127.0f;
        for (int j = 0; j < 32; j++) {
            const int q = (int8_t)o[j];
            s += q;
            bad += q < -127 || q > 127 || fabsf(x[32 * b + j] - (float)q * e) > 0.5001f * e + 1e-30f;
        }
        bad += s != sum || d != ggml_fp16_to_fp32(ggml_fp32_to_fp16(e));
    }
    CHECK(bad == 0, "q8 activations: %d values or sums are not a quantization of the input", bad);
    printf("q8 activations (Q4_0 family): %d blocks checked\n", NB);
}

int main(void) {
    ggml_cpu_init();
    test_qmm_activations();
    const enum ggml_type types[] = {GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K,
                                    GGML_TYPE_Q3_K, GGML_TYPE_Q2_K, GGML_TYPE_IQ4_XS};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        test_type(types[t], 256, 5);
        test_type(types[t], 1024, 37);
        test_type(types[t], 4096, 16);
        test_type(types[t], 512, 70);  // 5 row groups: the 4-group decode kernel
    }
    return test_exit_code("test-kquant");
}
