// test-iq-decode: the NPU's decoders of IQ3_XXS, IQ3_S, IQ1_S and IQ1_M
// (src/npu/ops/iq3-decode.c, iq1-decode.c) against ggml. For random blocks
// and for blocks ggml_quantize_chunk makes from random floats, every weight
// (d * sc) * q of the decoded super-block equals ggml's to_float bit for bit;
// the SIMD decoders give the portable ones' bytes; and the integer dot
// d * a.d * sum_s sc[s] * sum q * a with ggml's Q8_K activations matches
// ggml-cpu's vec_dot to float rounding. The codebooks are the host's, read
// out of ggml (src/host/codebooks.c). Exit 0 pass, 1 fail.

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "contract/codebooks.h"
#include "ggml-cpu.h"
#include "ggml.h"
#include "host/codebooks.h"
#include "npu/ops/iq1-decode.h"
#include "npu/ops/iq3-decode.h"
#include "proto/htp-proto.h"
#include "test-check.h"

_Static_assert((int)GGML_TYPE_IQ3_XXS == (int)HTP_TYPE_IQ3_XXS && (int)GGML_TYPE_IQ3_S == (int)HTP_TYPE_IQ3_S &&
                   (int)GGML_TYPE_IQ1_S == (int)HTP_TYPE_IQ1_S && (int)GGML_TYPE_IQ1_M == (int)HTP_TYPE_IQ1_M,
               "type codes");

#define QK     256
#define NBLK   4  // super-blocks per row
#define NROWS  8
#define ROW_K  (NBLK * QK)
#define MAXBLK 110

// ggml's Q8_K block (the activations of these types' vec_dot).
struct q8k {
    float   d;
    int8_t  qs[QK];
    int16_t bsums[QK / 16];
};

struct iq_type {
    enum ggml_type   type;
    size_t           block_bytes;
    htp_iq_decode_fn decode, decode_ref;
};

static const struct iq_type types[] = {
    {GGML_TYPE_IQ3_XXS, HTP_IQ3XXS_BLOCK, htp_iq3xxs_decode, htp_iq3xxs_decode_ref},
    {GGML_TYPE_IQ3_S, HTP_IQ3S_BLOCK, htp_iq3s_decode, htp_iq3s_decode_ref},
    {GGML_TYPE_IQ1_S, HTP_IQ1S_BLOCK, htp_iq1s_decode, htp_iq1s_decode_ref},
    {GGML_TYPE_IQ1_M, HTP_IQ1M_BLOCK, htp_iq1m_decode, htp_iq1m_decode_ref},
};

static uint64_t rng_state = 20261201;

static uint32_t rnd(void) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}

static float frand(void) {  // [-1, 1)
    return (float)(rnd() & 0xffffff) / 8388608.0f - 1.0f;
}

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static int all_finite(const float * y, int n) {
    for (int i = 0; i < n; i++) {
        if (!isfinite(y[i])) {
            return 0;
        }
    }
    return 1;
}

// Weight e of a decoded super-block, formed as the interface says.
static float weight(const struct htp_iq_superblock * x, int e) {
    return (x->d * (float)x->sc[e / 16]) * (float)x->q[e];
}

// Decodes n_blocks blocks at row and compares every weight with want (ggml's
// to_float), and the SIMD decoder's output with the portable one's. Returns
// the number of weights that differ.
static int check_blocks(const struct iq_type * t, const struct htp_codebooks * cb, const uint8_t * row, int n_blocks,
                        const float * want, const char * what) {
    const char * name = ggml_type_name(t->type);
    int          bad  = 0;
    for (int b = 0; b < n_blocks; b++) {
        struct htp_iq_superblock x, ref;
        memset(&x, 0x5a, sizeof x);
        memset(&ref, 0xa5, sizeof ref);
        t->decode(row + (size_t)b * t->block_bytes, cb, &x);
        t->decode_ref(row + (size_t)b * t->block_bytes, cb, &ref);
        CHECK(memcmp(x.q, ref.q, sizeof x.q) == 0 && memcmp(x.sc, ref.sc, sizeof x.sc) == 0 &&
                  f32_bits(x.d) == f32_bits(ref.d),
              "%s %s block %d: the SIMD decoder differs from the portable one", name, what, b);
        int first = -1, n = 0;
        for (int e = 0; e < QK; e++) {
            if (f32_bits(weight(&ref, e)) != f32_bits(want[b * QK + e])) {
                first = first < 0 ? e : first;
                n++;
            }
        }
        CHECK(n == 0, "%s %s block %d: %d weights differ from ggml's, first %d: %.9g, ggml %.9g", name, what, b, n,
              first, n ? (double)weight(&ref, first) : 0.0, n ? (double)want[b * QK + first] : 0.0);
        bad += n;
    }
    return bad;
}

// The dot product of a row of NBLK blocks with Q8_K activations, in the
// interface's integers; *bound gets the sum of |weight * activation|.
static float iq_dot(const struct iq_type * t, const struct htp_codebooks * cb, const uint8_t * row,
                    const struct q8k * a, double * bound) {
    float sum = 0.0f;
    *bound    = 0.0;
    for (int b = 0; b < NBLK; b++) {
        struct htp_iq_superblock x;
        t->decode(row + (size_t)b * t->block_bytes, cb, &x);
        int32_t isum = 0;
        int64_t iabs = 0;
        for (int s = 0; s < 16; s++) {
            int32_t part = 0;
            for (int e = 16 * s; e < 16 * s + 16; e++) {
                part += x.q[e] * a[b].qs[e];
                iabs += abs(x.q[e] * a[b].qs[e]) * x.sc[s];
            }
            isum += x.sc[s] * part;
        }
        sum += x.d * a[b].d * (float)isum;
        *bound += fabs((double)x.d * a[b].d) * (double)iabs;
    }
    return sum;
}

static void check_dots(const struct iq_type * t, const struct htp_codebooks * cb, const uint8_t * rows, int nrows,
                       const char * what) {
    const char *                        name = ggml_type_name(t->type);
    const struct ggml_type_traits_cpu * tc   = ggml_get_type_traits_cpu(t->type);
    float                               act[ROW_K];
    struct q8k                          a[NBLK];
    double                              worst = 0.0;
    for (int r = 0; r < nrows; r++) {
        for (int i = 0; i < ROW_K; i++) {
            act[i] = frand() * (1.0f + (float)(i % 13));
        }
        ggml_get_type_traits_cpu(GGML_TYPE_Q8_K)->from_float(act, a, ROW_K);
        const uint8_t * row  = rows + (size_t)r * NBLK * t->block_bytes;
        float           want = 0.0f;
        tc->vec_dot(ROW_K, &want, 0, row, 0, a, 0, 1);
        double       bound;
        const float  got = iq_dot(t, cb, row, a, &bound);
        const double err = fabs((double)got - (double)want) / (bound > 0.0 ? bound : 1.0);
        worst            = err > worst ? err : worst;
        CHECK(err < 1e-6, "%s %s row %d: dot %.9g, ggml's vec_dot %.9g (error %.3g of the absolute sum)", name, what, r,
              (double)got, (double)want, err);
    }
    printf("%-8s %-9s dot: worst error %.2g of the absolute sum\n", name, what, worst);
}

// Random bytes in every field; a block whose d decodes to inf or NaN (fp16
// exponent 31) is drawn again.
static void random_rows(const struct iq_type * t, uint8_t * rows, float * want, int nrows) {
    const struct ggml_type_traits * tt = ggml_get_type_traits(t->type);
    for (int b = 0; b < nrows * NBLK; b++) {
        uint8_t * block = rows + (size_t)b * t->block_bytes;
        do {
            for (size_t i = 0; i < t->block_bytes; i++) {
                block[i] = (uint8_t)rnd();
            }
            tt->to_float(block, want + (size_t)b * QK, QK);
        } while (!all_finite(want + (size_t)b * QK, QK));
    }
}

// Rows ggml quantizes from floats with an offset per row and outliers.
static void quantized_rows(const struct iq_type * t, uint8_t * rows, float * want, int nrows) {
    static float x[NROWS * ROW_K];
    static float imatrix[ROW_K];
    for (int i = 0; i < ROW_K; i++) {
        imatrix[i] = 1.0f;
    }
    for (int r = 0; r < nrows; r++) {
        const float scale = 0.01f + (float)(r + 1) * 0.3f, off = 0.2f * frand();
        for (int i = 0; i < ROW_K; i++) {
            float v = (frand() + off) * scale;
            if ((i * 7 + r) % 89 == 0) {
                v *= 6.0f;
            }
            x[r * ROW_K + i] = v;
        }
    }
    const float * im = ggml_quantize_requires_imatrix(t->type) || t->type == GGML_TYPE_IQ1_M ? imatrix : NULL;
    const size_t  n  = ggml_quantize_chunk(t->type, x, rows, 0, nrows, ROW_K, im);
    CHECK(n == (size_t)nrows * NBLK * t->block_bytes, "%s: ggml_quantize_chunk wrote %zu bytes",
          ggml_type_name(t->type), n);
    ggml_get_type_traits(t->type)->to_float(rows, want, (int64_t)nrows * ROW_K);
}

static void test_type(const struct iq_type * t, const struct htp_codebooks * cb) {
    static uint8_t rows[NROWS * NBLK * MAXBLK];
    static float   want[NROWS * ROW_K];
    const char *   name = ggml_type_name(t->type);
    CHECK_OR_RETURN(, ggml_type_size(t->type) == t->block_bytes, "%s: ggml's block is %zu bytes", name,
                    ggml_type_size(t->type));
    CHECK(htp_iq_decoder((uint32_t)t->type) == t->decode, "%s: htp_iq_decoder gives another decoder", name);

    for (int round = 0; round < 16; round++) {
        random_rows(t, rows, want, NROWS);
        check_blocks(t, cb, rows, NROWS * NBLK, want, "random");
        if (round == 0) {
            check_dots(t, cb, rows, NROWS, "random");
        }
    }
    quantized_rows(t, rows, want, NROWS);
    check_blocks(t, cb, rows, NROWS * NBLK, want, "quantized");
    check_dots(t, cb, rows, NROWS, "quantized");
}

int main(void) {
    ggml_cpu_init();
    const struct htp_codebooks * cb = htp_host_codebooks();
    CHECK_OR_RETURN(1, cb != NULL, "the codebooks could not be derived from ggml");
    CHECK(ggml_type_size(GGML_TYPE_Q8_K) == sizeof(struct q8k), "ggml's Q8_K block is %zu bytes",
          ggml_type_size(GGML_TYPE_Q8_K));
    CHECK(htp_iq_decoder(HTP_TYPE_Q4_0) == NULL && htp_iq_decoder(HTP_TYPE_IQ4_XS) == NULL,
          "a type without codebooks has a decoder");
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        test_type(&types[i], cb);
    }
    return test_exit_code("test-iq-decode");
}
