// test-codebooks: the IQ codebooks the host reads out of ggml's dequantizers
// (src/host/codebooks.c). They pass the NPU's own check; the sign rule of
// contract/codebooks.h is ggml's (every stored sign pattern of IQ2_XS against
// ggml's decode); and random IQ2_XXS and IQ3_S blocks rebuilt from the tables
// equal ggml's to_float exactly. The kernels' tests cover every type's use.

#include "contract/codebooks.h"
#include "host/codebooks.h"

#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "test-check.h"

static float fp16_to_f32(uint16_t h) {
    return ggml_fp16_to_fp32((ggml_fp16_t)h);
}

// IQ2_XS blocks with index 0 everywhere and sign pattern s in group s % 32:
// every coordinate of point 0 is positive, so ggml's signs show directly.
static void test_sign_rule(void) {
    uint8_t block[74];
    float   y[256];
    for (int first = 0; first < 128; first += 32) {
        memset(block, 0, sizeof(block));
        block[1] = 0x3c;  // d = 1
        for (int g = 0; g < 32; g++) {
            const uint16_t q = (uint16_t)((first + g) << 9);
            memcpy(block + 2 + 2 * g, &q, 2);
        }
        ggml_get_type_traits(GGML_TYPE_IQ2_XS)->to_float(block, y, 256);
        for (int g = 0; g < 32; g++) {
            const uint8_t signs = htp_iq_signs8((uint32_t)(first + g));
            for (int j = 0; j < 8; j++) {
                const int neg = y[8 * g + j] < 0;
                CHECK(neg == ((signs >> j) & 1), "stored signs %d, weight %d: ggml %g", first + g, j,
                      (double)y[8 * g + j]);
            }
        }
    }
}

static void random_bytes(uint8_t * p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        p[i] = (uint8_t)(rand() >> 7);
    }
}

// IQ2_XXS: d; per 32 weights 4 index bytes, then 28 bits of signs and a 4-bit scale.
static void test_iq2xxs(const struct htp_codebooks * cb) {
    uint8_t block[66];
    float   want[256];
    for (int it = 0; it < 64; it++) {
        random_bytes(block, sizeof(block));
        const uint16_t d = (uint16_t)(0x2c00 + (rand() & 0x0fff));  // a normal positive fp16
        memcpy(block, &d, 2);
        ggml_get_type_traits(GGML_TYPE_IQ2_XXS)->to_float(block, want, 256);
        int bad = 0;
        for (int ib = 0; ib < 8; ib++) {
            uint32_t aux;
            memcpy(&aux, block + 2 + 8 * ib + 4, 4);
            const float db = fp16_to_f32(d) * (0.5f + (float)(aux >> 28)) * 0.25f;
            for (int l = 0; l < 4; l++) {
                const uint8_t * point = cb->iq2xxs[block[2 + 8 * ib + l]];
                const uint8_t   signs = htp_iq_signs8(aux >> (7 * l));
                for (int j = 0; j < 8; j++) {
                    const float v = db * point[j] * ((signs >> j) & 1 ? -1.0f : 1.0f);
                    bad += v != want[32 * ib + 8 * l + j];
                }
            }
        }
        CHECK(bad == 0, "iq2_xxs block %d: %d weights differ from ggml", it, bad);
    }
}

// IQ3_S: d; 64 low index bytes, 8 bytes of ninth bits, 32 sign bytes, 4 bytes of 4-bit scales.
static void test_iq3s(const struct htp_codebooks * cb) {
    uint8_t block[110];
    float   want[256];
    for (int it = 0; it < 64; it++) {
        random_bytes(block, sizeof(block));
        const uint16_t d = (uint16_t)(0x2c00 + (rand() & 0x0fff));
        memcpy(block, &d, 2);
        ggml_get_type_traits(GGML_TYPE_IQ3_S)->to_float(block, want, 256);
        int bad = 0;
        for (int ib = 0; ib < 8; ib++) {
            const uint8_t sc = block[106 + ib / 2];
            const float   db = fp16_to_f32(d) * (float)(1 + 2 * (ib % 2 ? sc >> 4 : sc & 15));
            for (int p = 0; p < 8; p++) {
                const int       g     = 8 * ib + p;
                const int       index = block[2 + g] | ((block[66 + ib] >> p) & 1) << 8;
                const uint8_t * point = cb->iq3s[index];
                const uint8_t   signs = block[74 + g / 2];
                for (int j = 0; j < 4; j++) {
                    const int   e = 4 * (g % 2) + j;  // position in the 8 weights of the sign byte
                    const float v = db * point[j] * ((signs >> e) & 1 ? -1.0f : 1.0f);
                    bad += v != want[4 * g + j];
                }
            }
        }
        CHECK(bad == 0, "iq3_s block %d: %d weights differ from ggml", it, bad);
    }
}

int main(void) {
    srand(7);
    const struct htp_codebooks * cb = htp_host_codebooks();
    CHECK_OR_RETURN(1, cb != NULL, "the codebooks could not be derived from ggml");
    CHECK(htp_codebooks_ok(cb), "the NPU's check refuses them");
    CHECK(cb->iq2xxs[0][0] == 8 && cb->iq1s[0][0] == -1, "first points");

    struct htp_codebooks bad = *cb;
    bad.iq3s[7][2]           = 2;  // even: not an IQ3_S coordinate
    CHECK(!htp_codebooks_ok(&bad), "a wrong coordinate passes the check");
    bad = *cb;
    bad.bytes--;
    CHECK(!htp_codebooks_ok(&bad), "a wrong size passes the check");

    test_sign_rule();
    test_iq2xxs(cb);
    test_iq3s(cb);
    return test_exit_code("test-codebooks");
}
