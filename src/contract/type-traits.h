// type-traits.h: what both sides know of each data type the NPU handles:
// block size in elements and bytes per block. The NPU does not include ggml;
// these figures equal ggml's for the same type code (the host's tests check
// them against ggml's own traits).

#ifndef HTP_CONTRACT_TYPE_TRAITS_H
#define HTP_CONTRACT_TYPE_TRAITS_H

#include <stdint.h>

#include "proto/htp-proto.h"

struct htp_type_traits {
    const char * name;
    uint32_t     blck_size;  // elements per block (1 for plain types)
    uint32_t     type_size;  // bytes per block
};

// Traits of a type code, or NULL for a code this NPU does not know.
static inline const struct htp_type_traits * htp_type_traits(uint32_t type) {
    static const struct htp_type_traits traits[HTP_TYPE_COUNT] = {
        [HTP_TYPE_F32]     = {"f32", 1, 4},
        [HTP_TYPE_F16]     = {"f16", 1, 2},
        [HTP_TYPE_Q1_0]    = {"q1_0", 128, 2 + 16},
        [HTP_TYPE_Q2_0]    = {"q2_0", 64, 2 + 16},
        [HTP_TYPE_Q4_0]    = {"q4_0", 32, 2 + 16},
        [HTP_TYPE_Q4_1]    = {"q4_1", 32, 2 + 2 + 16},
        [HTP_TYPE_Q5_0]    = {"q5_0", 32, 2 + 4 + 16},
        [HTP_TYPE_Q5_1]    = {"q5_1", 32, 2 + 2 + 4 + 16},
        [HTP_TYPE_Q8_0]    = {"q8_0", 32, 2 + 32},
        [HTP_TYPE_Q2_K]    = {"q2_K", 256, 16 + 64 + 2 + 2},
        [HTP_TYPE_Q3_K]    = {"q3_K", 256, 32 + 64 + 12 + 2},
        [HTP_TYPE_Q4_K]    = {"q4_K", 256, 2 + 2 + 12 + 128},
        [HTP_TYPE_Q5_K]    = {"q5_K", 256, 2 + 2 + 12 + 32 + 128},
        [HTP_TYPE_Q6_K]    = {"q6_K", 256, 128 + 64 + 16 + 2},
        [HTP_TYPE_IQ1_S]   = {"iq1_s", 256, 2 + 32 + 16},
        [HTP_TYPE_IQ1_M]   = {"iq1_m", 256, 32 + 16 + 8},
        [HTP_TYPE_IQ2_XXS] = {"iq2_xxs", 256, 2 + 64},
        [HTP_TYPE_IQ2_XS]  = {"iq2_xs", 256, 2 + 64 + 8},
        [HTP_TYPE_IQ2_S]   = {"iq2_s", 256, 2 + 64 + 8 + 8},
        [HTP_TYPE_IQ3_XXS] = {"iq3_xxs", 256, 2 + 96},
        [HTP_TYPE_IQ3_S]   = {"iq3_s", 256, 2 + 64 + 8 + 32 + 4},
        [HTP_TYPE_IQ4_NL]  = {"iq4_nl", 32, 2 + 16},
        [HTP_TYPE_IQ4_XS]  = {"iq4_xs", 256, 2 + 2 + 4 + 128},
        [HTP_TYPE_I8]      = {"i8", 1, 1},
        [HTP_TYPE_I16]     = {"i16", 1, 2},
        [HTP_TYPE_I32]     = {"i32", 1, 4},
        [HTP_TYPE_I64]     = {"i64", 1, 8},
        [HTP_TYPE_BF16]    = {"bf16", 1, 2},
        [HTP_TYPE_MXFP4]   = {"mxfp4", 32, 1 + 16},
        [HTP_TYPE_NVFP4]   = {"nvfp4", 64, 4 + 32},
    };
    if (type >= HTP_TYPE_COUNT || traits[type].blck_size == 0) {
        return 0;
    }
    return &traits[type];
}

#endif  // HTP_CONTRACT_TYPE_TRAITS_H
