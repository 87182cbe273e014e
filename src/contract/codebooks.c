// codebooks.c: the check of a set of IQ codebooks (codebooks.h).

#include "codebooks.h"

#include <stddef.h>

#include "proto/htp-proto.h"

int htp_type_uses_codebooks(uint32_t type) {
    switch (type) {
        case HTP_TYPE_IQ1_S:
        case HTP_TYPE_IQ1_M:
        case HTP_TYPE_IQ2_XXS:
        case HTP_TYPE_IQ2_XS:
        case HTP_TYPE_IQ2_S:
        case HTP_TYPE_IQ3_XXS:
        case HTP_TYPE_IQ3_S:
            return 1;
        default:
            return 0;
    }
}

static int all_in(const uint8_t * v, size_t n, const uint8_t * allowed, int n_allowed) {
    for (size_t i = 0; i < n; i++) {
        int hit = 0;
        for (int a = 0; a < n_allowed && !hit; a++) {
            hit = v[i] == allowed[a];
        }
        if (!hit) {
            return 0;
        }
    }
    return 1;
}

int htp_codebooks_ok(const struct htp_codebooks * cb) {
    static const uint8_t iq2_values[]  = {8, 25, 43};
    static const uint8_t iq3x_values[] = {4, 12, 20, 28, 36, 44, 52, 62};
    static const uint8_t iq3s_values[] = {1, 3, 5, 7, 9, 11, 13, 15};
    static const uint8_t iq1_values[]  = {0xff, 0, 1};  // -1, 0, +1 as bytes

    if (cb == NULL || cb->magic != HTP_CODEBOOKS_MAGIC || cb->bytes != sizeof(*cb)) {
        return 0;
    }
    return all_in(&cb->iq2xxs[0][0], sizeof(cb->iq2xxs), iq2_values, 3) &&
           all_in(&cb->iq2xs[0][0], sizeof(cb->iq2xs), iq2_values, 3) &&
           all_in(&cb->iq2s[0][0], sizeof(cb->iq2s), iq2_values, 3) &&
           all_in(&cb->iq3xxs[0][0], sizeof(cb->iq3xxs), iq3x_values, 8) &&
           all_in(&cb->iq3s[0][0], sizeof(cb->iq3s), iq3s_values, 8) &&
           all_in((const uint8_t *)&cb->iq1s[0][0], sizeof(cb->iq1s), iq1_values, 3);
}
