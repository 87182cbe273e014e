// iq-tiles.c: the IQ types with NPU kernels and their tiled formats (see
// iq-tiles.h): a tile is the 16 rows' ggml blocks verbatim.

#include "iq-tiles.h"

#include <string.h>

#include "proto/htp-proto.h"

// The IQ types the NPU has kernels (decoders) for. Enabling another IQ type
// (its decoder in npu/ops/iq-decode.c) is one line here.
// One type a line, so each decoder family's branch adds its own lines
// (decoders: npu/ops/iq2-decode.c, iq3-decode.c, iq1-decode.c).
// clang-format off
static const uint32_t iq_kernel_types[] = {
    HTP_TYPE_IQ2_XXS,
    HTP_TYPE_IQ2_XS,
    HTP_TYPE_IQ2_S,
    HTP_TYPE_IQ3_XXS,
    HTP_TYPE_IQ3_S,
    HTP_TYPE_IQ1_S,
    HTP_TYPE_IQ1_M,
};
// clang-format on

int htp_iq_type_ok(uint32_t type) {
    for (size_t i = 0; i < sizeof iq_kernel_types / sizeof iq_kernel_types[0]; i++) {
        if (iq_kernel_types[i] == type) {
            return 1;
        }
    }
    return 0;
}

// Pack / unpack of a tile of blocks of BYTES bytes: copies (padding rows zero).
#define IQ_COPY_FNS(BYTES)                                                                               \
    static void iq_pack_##BYTES(const uint8_t * const blocks[HTP_TILE_ROWS], uint8_t * q, uint8_t * s) { \
        (void)s;                                                                                         \
        for (int r = 0; r < HTP_TILE_ROWS; r++) {                                                        \
            if (blocks[r]) {                                                                             \
                memcpy(q + (size_t)r * (BYTES), blocks[r], (BYTES));                                     \
            } else {                                                                                     \
                memset(q + (size_t)r * (BYTES), 0, (BYTES));                                             \
            }                                                                                            \
        }                                                                                                \
    }                                                                                                    \
    static void iq_unpack_##BYTES(const uint8_t * q, const uint8_t * s, int r, uint8_t * block) {        \
        (void)s;                                                                                         \
        memcpy(block, q + (size_t)r * (BYTES), (BYTES));                                                 \
    }

IQ_COPY_FNS(66)   // IQ2_XXS
IQ_COPY_FNS(74)   // IQ2_XS
IQ_COPY_FNS(82)   // IQ2_S
IQ_COPY_FNS(98)   // IQ3_XXS
IQ_COPY_FNS(110)  // IQ3_S
IQ_COPY_FNS(50)   // IQ1_S
IQ_COPY_FNS(56)   // IQ1_M
#undef IQ_COPY_FNS

#define IQ_FORMAT(T, BYTES) \
    { (T), 256, (BYTES), 16 * (BYTES), 0, iq_pack_##BYTES, iq_unpack_##BYTES }

// Every IQ codebook type's format; only those of htp_iq_type_ok are given out.
static const struct htp_tile_format iq_formats[] = {
    IQ_FORMAT(HTP_TYPE_IQ2_XXS, 66), IQ_FORMAT(HTP_TYPE_IQ2_XS, 74), IQ_FORMAT(HTP_TYPE_IQ2_S, 82),
    IQ_FORMAT(HTP_TYPE_IQ3_XXS, 98), IQ_FORMAT(HTP_TYPE_IQ3_S, 110), IQ_FORMAT(HTP_TYPE_IQ1_S, 50),
    IQ_FORMAT(HTP_TYPE_IQ1_M, 56),
};
#undef IQ_FORMAT

const struct htp_tile_format * htp_iq_tile_format(uint32_t type) {
    if (!htp_iq_type_ok(type)) {
        return NULL;
    }
    for (size_t i = 0; i < sizeof iq_formats / sizeof iq_formats[0]; i++) {
        if (iq_formats[i].type == type) {
            return &iq_formats[i];
        }
    }
    return NULL;
}
