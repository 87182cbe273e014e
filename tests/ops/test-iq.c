// test-iq: the NPU's IQ codebook arithmetic (src/npu/ops/iq-*.c) against
// ggml, for every type of contract/iq-tiles.h's list (htp_iq_type_ok): it has
// a decoder and a tiled format whose pack/unpack give back ggml's block bytes
// (padding rows included; IQ1's, which store codes, only with the codebook's
// coder); each decoder, through htp_iq_dequant_block, equals
// ggml's to_float bit for bit on quantized blocks and on random bytes (every
// index, sign and scale pattern); a row group decodes to the same tile from
// plain rows and from its tiled form (IQ1's code blocks through their own
// decoder); the 16-row dot products give the
// portable code's bits on the SIMD path (and so does the decode path straight
// from the blocks, htp_iq_dot_rows, where built, on plain rows and tiles of
// every row count) and match ggml-cpu's vec_dot with
// Q8_K activations to float rounding (1e-6 of sum |w a|). Codebooks: the host's (derived from
// ggml, src/host/codebooks.c). Exit 0 pass, 1 fail.

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/iq-tiles.h"
#include "contract/type-traits.h"
#include "ggml-cpu.h"
#include "ggml.h"
#include "host/codebooks.h"
#include "npu/ops/iq-dot.h"
#include "npu/ops/iq1-decode.h"
#include "npu/ops/iq-rows.h"
#include "proto/htp-proto.h"
#include "test-check.h"

_Static_assert((int)GGML_TYPE_IQ2_XXS == (int)HTP_TYPE_IQ2_XXS && (int)GGML_TYPE_IQ2_XS == (int)HTP_TYPE_IQ2_XS &&
                   (int)GGML_TYPE_IQ2_S == (int)HTP_TYPE_IQ2_S && (int)GGML_TYPE_IQ3_XXS == (int)HTP_TYPE_IQ3_XXS &&
                   (int)GGML_TYPE_IQ3_S == (int)HTP_TYPE_IQ3_S && (int)GGML_TYPE_IQ1_S == (int)HTP_TYPE_IQ1_S &&
                   (int)GGML_TYPE_IQ1_M == (int)HTP_TYPE_IQ1_M,
               "type codes");

static uint64_t rng_state = 4242;

static uint32_t urand(void) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}

static float frand(void) {  // [-1, 1)
    return (float)(urand() & 0xffffff) / 8388608.0f - 1.0f;
}

// Rows with some structure (an offset per row, outliers) so scales vary.
static void fill(float * x, int64_t n, int64_t k) {
    for (int64_t i = 0; i < n; i++) {
        const float off = 0.2f * frand();
        for (int64_t j = 0; j < k; j++) {
            float v = frand() * (1.0f + (float)(j % 37) / 20.0f) + off;
            if ((j * 7 + i) % 97 == 0) {
                v *= 6.0f;
            }
            x[i * k + j] = v;
        }
    }
}

static void quantize(enum ggml_type type, const float * x, void * dst, int64_t nrows, int64_t k) {
    float * im = NULL;
    if (ggml_quantize_requires_imatrix(type)) {
        im = malloc(sizeof(float) * (size_t)k);
        for (int64_t i = 0; i < k; i++) {
            im[i] = 1.0f;
        }
    }
    ggml_quantize_chunk(type, x, dst, 0, nrows, k, im);
    free(im);
}

// Random block bytes with a finite fp16 d in bytes 0-1 (random_blocks moves
// it where IQ1_M keeps it).
static void random_block(uint8_t * b, size_t n) {
    for (size_t i = 0; i < n; i++) {
        b[i] = (uint8_t)urand();
    }
    const uint16_t d = (uint16_t)(0x2000 + (urand() % 0x3000)) | (uint16_t)((urand() & 1) << 15);
    memcpy(b, &d, 2);
}

// n random blocks of type at p, every one with a finite d (IQ1_M's in the top
// nibbles of its scale words at +48).
static void random_blocks(enum ggml_type type, uint8_t * p, int64_t n) {
    const size_t bs = ggml_type_size(type);
    for (int64_t i = 0; i < n; i++) {
        uint8_t * b = p + (size_t)i * bs;
        random_block(b, bs);
        if (type == GGML_TYPE_IQ1_M) {
            uint16_t d, sw[4];
            memcpy(&d, b, 2);
            b[0] = (uint8_t)urand();
            b[1] = (uint8_t)urand();
            memcpy(sw, b + 48, sizeof sw);
            for (int j = 0; j < 4; j++) {
                sw[j] = (uint16_t)((sw[j] & 0x0fff) | ((d >> (4 * j)) & 15) << 12);
            }
            memcpy(b + 48, sw, sizeof sw);
        }
    }
}

static int floats_equal(const float * a, const float * b, int64_t n) {
    return memcmp(a, b, sizeof(float) * (size_t)n) == 0;
}

static void test_decoder(enum ggml_type type, const struct htp_codebooks * cb) {
    const char *                    name   = ggml_type_name(type);
    const struct ggml_type_traits * tt     = ggml_get_type_traits(type);
    const htp_iq_decode_fn          decode = htp_iq_decoder(type);
    CHECK_OR_RETURN(, decode != NULL, "%s: in htp_iq_type_ok's list but has no decoder", name);
    CHECK(htp_type_traits(type)->type_size == tt->type_size && tt->blck_size == 256, "%s: type traits", name);
    // quantized rows
    enum { NR = 24, K = 1024 };
    float *   x   = malloc(sizeof(float) * NR * K);
    float *   y   = malloc(sizeof(float) * K);
    uint8_t * raw = malloc(ggml_row_size(type, K) * NR);
    fill(x, NR, K);
    quantize(type, x, raw, NR, K);
    int bad = 0;
    for (int i = 0; i < NR * K / 256; i++) {
        float got[256];
        tt->to_float(raw + (size_t)i * tt->type_size, y, 256);
        htp_iq_dequant_block(decode, cb, raw + (size_t)i * tt->type_size, got);
        bad += !floats_equal(got, y, 256);
    }
    CHECK(bad == 0, "%s: %d quantized blocks decode differently from ggml's to_float", name, bad);
    // random bytes: every index, sign and scale pattern
    bad = 0;
    for (int i = 0; i < 2000; i++) {
        uint8_t blk[256];
        float   got[256];
        random_blocks(type, blk, 1);
        tt->to_float(blk, y, 256);
        htp_iq_dequant_block(decode, cb, blk, got);
        bad += !floats_equal(got, y, 256);
    }
    CHECK(bad == 0, "%s: %d random blocks decode differently from ggml's to_float", name, bad);
    printf("%s: decoder bit-exact on %d quantized and 2000 random blocks\n", name, NR * K / 256);
    free(x);
    free(y);
    free(raw);
}

// Rows nrows x k (quantized, or random blocks: every index, sign and scale
// pattern): tiles round trip, decoded tiles (plain = tiled), dot products.
static void test_dot(enum ggml_type type, const struct htp_codebooks * cb, const struct htp_iq_codes * codes,
                     const struct htp_iq_coder * coder, int64_t k, int nrows, int random) {
    const char *                   name   = ggml_type_name(type);
    const struct htp_tile_format * f      = htp_tile_format(type);
    const htp_iq_decode_fn         decode = htp_iq_decoder(type), tdecode = htp_iq_tile_decoder(type);
    CHECK_OR_RETURN(, f != NULL && decode != NULL && tdecode != NULL, "%s: no tile format or decoder", name);
    const int64_t nsb = k / 256, ng = (nrows + 15) / 16;
    const size_t  rowb = ggml_row_size(type, k), gb = htp_tiled_group_bytes(f, k), tb = htp_iq_tile_blck_bytes(f);
    float *       x     = malloc(sizeof(float) * (size_t)(nrows * k));
    uint8_t *     raw   = malloc(rowb * (size_t)nrows);
    uint8_t *     back  = calloc((size_t)nrows, rowb);
    uint8_t *     tiled = malloc(gb * (size_t)ng);
    fill(x, nrows, k);
    quantize(type, x, raw, nrows, k);
    if (random) {
        random_blocks(type, raw, nrows * nsb);
    }
    for (int64_t g = 0; g < ng; g++) {
        const int n = (int)(nrows - 16 * g < 16 ? nrows - 16 * g : 16);
        CHECK(htp_tiled_pack_group(f, coder, raw + (size_t)(16 * g) * rowb, rowb, n, nsb, tiled + (size_t)g * gb) == 0,
              "%s: pack refused", name);
        for (int r = 0; r < n; r++) {
            for (int64_t b = 0; b < nsb; b++) {
                htp_tiled_unpack_block(f, coder, tiled + (size_t)g * gb, nsb, r, b,
                                       back + (size_t)(16 * g + r) * rowb + (size_t)b * f->blck_bytes);
            }
        }
    }
    CHECK(memcmp(raw, back, rowb * (size_t)nrows) == 0, "%s: unpack(pack) differs from the ggml bytes", name);
    if (f->pack_coded) {  // the formats that need the codebook refuse to work without it
        CHECK(htp_tiled_pack_group(f, NULL, raw, rowb, 1, nsb, tiled) == -1 &&
                  htp_tiled_unpack_block(f, NULL, tiled, nsb, 0, 0, back) == -1,
              "%s: packed or unpacked without the codebook", name);
    }

    // activations: 4 columns, ggml's Q8_K and ours
    enum { NC = 4 };
    float *                      act = malloc(sizeof(float) * (size_t)(NC * k));
    struct htp_q8k_block *       q8  = malloc(sizeof(struct htp_q8k_block) * (size_t)(NC * nsb));
    const size_t                 q8b = ggml_row_size(GGML_TYPE_Q8_K, k);
    uint8_t *                    g8  = malloc(q8b * NC);
    const struct htp_q8k_block * cols[NC];
    fill(act, NC, k);
    for (int c = 0; c < NC; c++) {
        htp_kq_quantize_q8k(q8 + c * nsb, act + c * k, k);
        ggml_get_type_traits_cpu(GGML_TYPE_Q8_K)->from_float(act + c * k, g8 + (size_t)c * q8b, k);
        cols[c] = q8 + c * nsb;
    }
    struct htp_iq_dtile *               dp = malloc(htp_iq_dgroup_bytes(k)), *dt = malloc(htp_iq_dgroup_bytes(k));
    const struct ggml_type_traits_cpu * tc      = ggml_get_type_traits_cpu(type);
    int                                 dec_bad = 0, simd_bad = 0, row_bad = 0, n_row = 0;
    float *                             wrow    = malloc(sizeof(float) * (size_t)k);
    double                              max_rel = 0.0;
    for (int64_t g = 0; g < ng; g++) {
        const int n = (int)(nrows - 16 * g < 16 ? nrows - 16 * g : 16);
        htp_iq_decode_group(decode, cb, raw + (size_t)(16 * g) * rowb, rowb, f->blck_bytes, n, nsb, dp);
        htp_iq_decode_group(tdecode, cb, tiled + (size_t)g * gb, tb, f->q_bytes, n, nsb, dt);
        dec_bad += memcmp(dp, dt, htp_iq_dgroup_bytes(k)) != 0;
        // The code blocks have a portable decoder besides the SIMD one (tdecode, where built): the same bytes
        const htp_iq_decode_fn ref = type == GGML_TYPE_IQ1_S   ? htp_iq1s_code_decode_ref
                                     : type == GGML_TYPE_IQ1_M ? htp_iq1m_code_decode_ref
                                     : type == GGML_TYPE_IQ2_S ? htp_iq2s_code_decode_ref
                                                               : NULL;
        if (ref) {
            htp_iq_decode_group(ref, cb, tiled + (size_t)g * gb, tb, f->q_bytes, n, nsb, dp);
            dec_bad += memcmp(dp, dt, htp_iq_dgroup_bytes(k)) != 0;
        }
        for (int nc = 1; nc <= NC; nc++) {
            float got[4][16], ref[4][16];
            htp_iq_dot_group(got, dt, nsb, cols, nc);
            htp_iq_dot_group_ref(ref, dt, nsb, cols, nc);
            simd_bad += memcmp(got, ref, sizeof(float) * 16 * (size_t)nc) != 0;
            // The decode path straight from the blocks: tiles, and plain rows
            // where the kernel reads ggml's blocks (not IQ1's: codes only).
            float pr[16], tr[16];
            if (nc == 1 && htp_iq_dot_rows(type, codes, tiled + (size_t)g * gb, tb, f->q_bytes, n, nsb, cols[0], tr)) {
                const int plain = !f->pack_coded && htp_iq_dot_rows(type, codes, raw + (size_t)(16 * g) * rowb, rowb,
                                                                    f->blck_bytes, n, nsb, cols[0], pr);
                for (int r = 0; r < n; r++) {
                    row_bad += memcmp(&tr[r], &ref[0][r], 4) != 0 || (plain && memcmp(&pr[r], &ref[0][r], 4) != 0);
                    n_row++;
                }
            }
            if (nc < NC) {
                continue;
            }
            for (int c = 0; c < NC; c++) {
                for (int r = 0; r < n; r++) {
                    float want;
                    tc->vec_dot((int)k, &want, 0, raw + (size_t)(16 * g + r) * rowb, 0, g8 + (size_t)c * q8b, 0, 1);
                    // relative to sum |w a|: the rounding of a float sum of these terms is bounded by it
                    ggml_get_type_traits(type)->to_float(raw + (size_t)(16 * g + r) * rowb, wrow, k);
                    double mag = 1e-30;
                    for (int64_t e = 0; e < k; e++) {
                        mag += fabs((double)wrow[e] * act[c * k + e]);
                    }
                    const double rel = fabs((double)got[c][r] - want) / mag;
                    max_rel          = rel > max_rel ? rel : max_rel;
                }
            }
        }
    }
    CHECK(dec_bad == 0, "%s: %d groups decode differently from plain rows and from tiles", name, dec_bad);
    CHECK(simd_bad == 0, "%s: %d dot products: SIMD and portable bits differ", name, simd_bad);
    CHECK(row_bad == 0, "%s: %d of %d rows: htp_iq_dot_rows differs from the portable tile dot", name, row_bad, n_row);
    CHECK(max_rel < 1e-6, "%s: dot products differ from ggml's vec_dot (max rel %g)", name, max_rel);
    printf("%s k=%lld rows=%d%s: tiles, decode and dots ok (max rel vs ggml %.2g; %d rows by htp_iq_dot_rows)\n", name,
           (long long)k, nrows, random ? " (random blocks)" : "", max_rel, n_row);
    free(x);
    free(raw);
    free(back);
    free(tiled);
    free(act);
    free(q8);
    free(g8);
    free(dp);
    free(dt);
    free(wrow);
}

int main(void) {
    ggml_cpu_init();
    const struct htp_codebooks * cb = htp_host_codebooks();
    CHECK_OR_RETURN(1, cb != NULL && htp_codebooks_ok(cb), "no codebooks from the host");
    static const enum ggml_type all[] = {GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ2_XS, GGML_TYPE_IQ2_S, GGML_TYPE_IQ3_XXS,
                                         GGML_TYPE_IQ3_S,   GGML_TYPE_IQ1_S,  GGML_TYPE_IQ1_M};
    static struct htp_iq_codes  codes;
    htp_iq_codes_build(cb, &codes);
    const struct htp_iq_coder * coder = htp_host_iq_coder();
    CHECK_OR_RETURN(1, coder != NULL, "no IQ1 coder from the host (ggml's IQ1 points not distinct?)");
    int n_ok = 0;
    for (size_t t = 0; t < sizeof all / sizeof all[0]; t++) {
        if (!htp_iq_type_ok((uint32_t)all[t])) {
            CHECK(htp_tile_format((uint32_t)all[t]) == NULL, "%s: a tiled format but no kernels",
                  ggml_type_name(all[t]));
            continue;
        }
        n_ok++;
        test_decoder(all[t], cb);
        test_dot(all[t], cb, &codes, coder, 256, 5, 0);
        test_dot(all[t], cb, &codes, coder, 1024, 37, 0);
        test_dot(all[t], cb, &codes, coder, 4096, 16, 0);
        test_dot(all[t], cb, &codes, coder, 2048, 21, 1);
    }
    CHECK(n_ok >= 3, "only %d IQ types have kernels", n_ok);
    return test_exit_code("test-iq");
}
