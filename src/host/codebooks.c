// codebooks.c (host): derive the IQ codebooks from ggml.
//
// One idea: dequantizing a block whose scale is 1, whose signs are all
// positive and whose groups each select a chosen index gives back that
// index's point times a known factor. Walking every index through such blocks
// reads the whole table out of ggml's own to_float, so nothing of ggml's
// tables is copied here and the NPU always gets the pinned version's points.
// The point tables are checked against each type's value set at the end
// (htp_codebooks_ok): a ggml that decodes otherwise is refused, not trusted.

#include "codebooks.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "ggml-internal.h"
#include "log.h"

#define QK       256  // elements per super-block of every IQ type
#define FP16_ONE ((uint16_t)0x3c00)

// Dequantize one block of type t into y[256].
static void decode(enum ggml_type t, const void * block, float * y) {
    ggml_get_type_traits(t)->to_float(block, y, QK);
}

// Read n_points points of dim coordinates each, group_points per block, out of
// the blocks that select(block, first_index) writes; coordinate = y * scale + offset.
typedef void (*select_fn)(uint8_t * block, int first);

static int read_points(enum ggml_type t, select_fn select, int n_points, int points_per_block, int dim, float scale,
                       float offset, void * table) {
    uint8_t block[128];
    float   y[QK];
    for (int first = 0; first < n_points; first += points_per_block) {
        memset(block, 0, sizeof(block));
        select(block, first);
        decode(t, block, y);
        for (int p = 0; p < points_per_block; p++) {
            for (int j = 0; j < dim; j++) {
                const float v = y[p * dim + j] * scale + offset;
                const float r = roundf(v);
                if (fabsf(v - r) > 1e-4f) {
                    HTP_LOG_ERROR("codebooks: %s point %d coordinate %d decodes to %g, not an integer",
                                  ggml_type_name(t), first + p, j, (double)v);
                    return -1;
                }
                ((uint8_t *)table)[(size_t)(first + p) * dim + j] = (uint8_t)(int8_t)r;
            }
        }
    }
    return 0;
}

static void put16(uint8_t * p, uint16_t v) {
    memcpy(p, &v, 2);
}

// IQ2_XXS: d, then per 32 weights 4 index bytes and a word of signs + scale (0 -> x 1/8).
static void select_iq2xxs(uint8_t * b, int first) {
    put16(b, FP16_ONE);
    for (int g = 0; g < 32; g++) {
        b[2 + 8 * (g / 4) + g % 4] = (uint8_t)(first + g);
    }
}

// IQ2_XS: d, 32 words of 9-bit index + 7 sign bits, 8 scale bytes (0 -> x 1/8).
static void select_iq2xs(uint8_t * b, int first) {
    put16(b, FP16_ONE);
    for (int g = 0; g < 32; g++) {
        put16(b + 2 + 2 * g, (uint16_t)(first + g));
    }
}

// IQ2_S: d, 32 low index bytes, 32 sign bytes, 8 bytes of high index bits, 8 scales.
static void select_iq2s(uint8_t * b, int first) {
    put16(b, FP16_ONE);
    for (int g = 0; g < 32; g++) {
        const int i = first + g;
        b[2 + g]    = (uint8_t)i;
        b[2 + 64 + g / 4] |= (uint8_t)(((i >> 8) & 3) << (2 * (g % 4)));
    }
}

// IQ3_XXS: d, 64 index bytes, 8 words of signs + scale (0 -> x 1/4).
static void select_iq3xxs(uint8_t * b, int first) {
    put16(b, FP16_ONE);
    for (int g = 0; g < 64; g++) {
        b[2 + g] = (uint8_t)(first + g);
    }
}

// IQ3_S: d, 64 low index bytes, 8 bytes of ninth bits, 32 sign bytes, 4 scales (0 -> x 1).
static void select_iq3s(uint8_t * b, int first) {
    put16(b, FP16_ONE);
    for (int g = 0; g < 64; g++) {
        const int i = first + g;
        b[2 + g]    = (uint8_t)i;
        b[2 + 64 + g / 8] |= (uint8_t)(((i >> 8) & 1) << (g % 8));
    }
}

// IQ1_S: d, 32 low index bytes, 8 words of 3 high bits per group, scale 0 (x 1)
// and a positive delta (+1/8, subtracted by the caller's offset).
static void select_iq1s(uint8_t * b, int first) {
    put16(b, FP16_ONE);
    for (int g = 0; g < 32; g++) {
        const int i = first + g;
        b[2 + g]    = (uint8_t)i;
        uint16_t qh;
        memcpy(&qh, b + 34 + 2 * (g / 4), 2);
        qh |= (uint16_t)(((i >> 8) & 7) << (3 * (g % 4)));
        put16(b + 34 + 2 * (g / 4), qh);
    }
}

static struct htp_codebooks codebooks;
static int                  codebooks_state;  // 0 not yet, 1 ready, -1 failed
static struct htp_iq_coder  iq_coder;
static int                  iq_coder_ok;  // built with the codebooks
static pthread_once_t       codebooks_once = PTHREAD_ONCE_INIT;

static void derive(void) {
    struct htp_codebooks * cb = &codebooks;
    cb->magic                 = HTP_CODEBOOKS_MAGIC;
    cb->bytes                 = sizeof(*cb);
    const int rc              = read_points(GGML_TYPE_IQ2_XXS, select_iq2xxs, 256, 32, 8, 8.0f, 0.0f, cb->iq2xxs) ||
                   read_points(GGML_TYPE_IQ2_XS, select_iq2xs, 512, 32, 8, 8.0f, 0.0f, cb->iq2xs) ||
                   read_points(GGML_TYPE_IQ2_S, select_iq2s, 1024, 32, 8, 8.0f, 0.0f, cb->iq2s) ||
                   read_points(GGML_TYPE_IQ3_XXS, select_iq3xxs, 256, 64, 4, 4.0f, 0.0f, cb->iq3xxs) ||
                   read_points(GGML_TYPE_IQ3_S, select_iq3s, 512, 64, 4, 1.0f, 0.0f, cb->iq3s) ||
                   read_points(GGML_TYPE_IQ1_S, select_iq1s, 2048, 32, 8, 1.0f, -0.125f, cb->iq1s);
    if (rc != 0) {
        codebooks_state = -1;
        return;
    }
    if (!htp_codebooks_ok(cb)) {
        HTP_LOG_ERROR("codebooks: ggml's IQ dequantizers give points outside the formats' value sets");
        codebooks_state = -1;
        return;
    }
    codebooks_state = 1;
    iq_coder_ok     = htp_iq_coder_build(cb, &iq_coder) == 0;
    if (!iq_coder_ok) {
        HTP_LOG_ERROR("codebooks: ggml's IQ1 or IQ2_S codebook has two equal points: those weights stay untiled");
    }
}

const struct htp_codebooks * htp_host_codebooks(void) {
    pthread_once(&codebooks_once, derive);
    return codebooks_state == 1 ? &codebooks : NULL;
}

const struct htp_iq_coder * htp_host_iq_coder(void) {
    pthread_once(&codebooks_once, derive);
    return codebooks_state == 1 && iq_coder_ok ? &iq_coder : NULL;
}
