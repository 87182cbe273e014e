// rope-check.c: ROPE's params, scratch plan and check (see rope-check.h).

#include "rope-check.h"

#include <math.h>

#include "contract/op-params.h"
#include "op-checks.h"

struct htp_rope_params htp_rope_params_read(const struct htp_op_desc * desc) {
    struct htp_rope_params p;
    p.n_dims      = desc->params[1];
    p.mode        = desc->params[2];
    p.n_ctx_orig  = desc->params[4];
    p.freq_base   = htp_param_f32(desc, 5);
    p.freq_scale  = htp_param_f32(desc, 6);
    p.ext_factor  = htp_param_f32(desc, 7);
    p.attn_factor = htp_param_f32(desc, 8);
    p.beta_fast   = htp_param_f32(desc, 9);
    p.beta_slow   = htp_param_f32(desc, 10);
    for (int i = 0; i < 4; i++) {
        p.sections[i] = desc->params[11 + i];
    }
    return p;
}

int htp_rope_is_multi(int32_t mode) {
    return mode == HTP_ROPE_MODE_MROPE || mode == HTP_ROPE_MODE_IMROPE || mode == HTP_ROPE_MODE_VISION;
}

int32_t htp_rope_pairs(const struct htp_rope_params * p) {
    return p->mode == HTP_ROPE_MODE_VISION ? p->n_dims : p->n_dims / 2;
}

size_t htp_rope_scratch_size(int32_t n_pairs, uint32_t n_threads) {
    return (size_t)n_pairs * 2 * sizeof(float) * n_threads;
}

int htp_op_rope_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *src0 = call->src[0], *pos = call->src[1], *ff = call->src[2], *dst = call->dst[0];
    if (!src0 || !pos || !dst || !htp_view_shape_ok(src0) || !htp_view_shape_ok(pos) ||
        !htp_view_same_shape(src0, dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    const struct htp_rope_params p = htp_rope_params_read(call->desc);
    if (p.mode != HTP_ROPE_MODE_NORMAL && p.mode != HTP_ROPE_MODE_NEOX && !htp_rope_is_multi(p.mode)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    if (p.n_dims <= 0 || p.n_dims % 2 != 0 || p.n_dims > src0->ne[0] || src0->ne[0] % 2 != 0) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (htp_rope_is_multi(p.mode)) {
        int64_t sum = 0;
        for (int i = 0; i < 4; i++) {
            if (p.sections[i] < 0 || p.sections[i] > src0->ne[0]) {
                return HTP_STATUS_INVAL_PARAMS;
            }
            sum += p.sections[i];
        }
        if (sum <= 0 || sum > src0->ne[0] || sum > INT32_MAX || pos->ne[0] / 4 < src0->ne[2]) {
            return HTP_STATUS_INVAL_PARAMS;
        }
        if (p.mode == HTP_ROPE_MODE_VISION && p.n_dims * 2 != src0->ne[0]) {
            return HTP_STATUS_INVAL_PARAMS;
        }
    }
    if (!(p.freq_base > 0.0f) || !isfinite(p.freq_base) || !(p.freq_scale > 0.0f) || !isfinite(p.freq_scale) ||
        !isfinite(p.ext_factor) || !isfinite(p.attn_factor) || !isfinite(p.beta_fast) || !isfinite(p.beta_slow)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (pos->type != HTP_TYPE_I32 || pos->ne[0] < src0->ne[2] || !htp_view_readable_for(pos, dst)) {
        return pos->type != HTP_TYPE_I32 ? HTP_STATUS_NO_SUPPORT : HTP_STATUS_INVAL_PARAMS;
    }
    if (ff) {
        if (!htp_view_shape_ok(ff) || ff->ne[0] < htp_rope_pairs(&p) || !htp_view_readable_for(ff, dst)) {
            return HTP_STATUS_INVAL_PARAMS;
        }
        if (ff->type != HTP_TYPE_F32) {
            return HTP_STATUS_NO_SUPPORT;
        }
    }
    if (!htp_type_is_float(src0->type) || !htp_type_is_float(dst->type)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    if (htp_rope_scratch_size(htp_rope_pairs(&p), call->n_threads) > call->vtcm_size) {
        return HTP_STATUS_VTCM_TOO_SMALL;
    }
    return HTP_STATUS_OK;
}
