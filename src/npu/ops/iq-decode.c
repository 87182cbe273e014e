// iq-decode.c: which decoder each IQ codebook type has (iq-decode.h). The
// decoders themselves live with their family: iq2-decode.c (IQ2_XXS, IQ2_XS,
// IQ2_S), iq3-decode.c (IQ3_XXS, IQ3_S), iq1-decode.c (IQ1_S, IQ1_M).

#include "iq-decode.h"

#include <stddef.h>

#include "iq1-decode.h"
#include "iq3-decode.h"
#include "proto/htp-proto.h"

htp_iq_decode_fn htp_iq_decoder(uint32_t type) {
    switch (type) {
        case HTP_TYPE_IQ2_XXS:
            return htp_iq2xxs_decode;
        case HTP_TYPE_IQ2_XS:
            return htp_iq2xs_decode;
        case HTP_TYPE_IQ2_S:
            return htp_iq2s_decode;
        case HTP_TYPE_IQ3_XXS:
            return htp_iq3xxs_decode;
        case HTP_TYPE_IQ3_S:
            return htp_iq3s_decode;
        case HTP_TYPE_IQ1_S:
            return htp_iq1s_decode;
        case HTP_TYPE_IQ1_M:
            return htp_iq1m_decode;
        default:
            return NULL;
    }
}

htp_iq_decode_fn htp_iq_tile_decoder(uint32_t type) {
    switch (type) {
        case HTP_TYPE_IQ1_S:
            return htp_iq1s_code_decode;
        case HTP_TYPE_IQ1_M:
            return htp_iq1m_code_decode;
        case HTP_TYPE_IQ2_S:
            return htp_iq2s_code_decode;
        default:
            return htp_iq_decoder(type);  // tiles keep ggml's block
    }
}
