// flash-attn-check.c: FLASH_ATTN_EXT's operands, params and scratch plan
// (see flash-attn-check.h).

#include "flash-attn-check.h"

#include <math.h>
#include <string.h>

#include "contract/quant-types.h"
#include "contract/type-traits.h"
#include "op-checks.h"

int64_t htp_fa_pad(int64_t n) {
    return (n + HTP_FA_PAD - 1) / HTP_FA_PAD * HTP_FA_PAD;
}

size_t htp_fa_slice_bytes(int64_t dkp, int64_t dvp) {
    const size_t floats = (size_t)HTP_FA_ROWS * dkp + (size_t)HTP_FA_KV_BLK * dkp + (size_t)HTP_FA_KV_BLK * dvp +
                          2 * (size_t)HTP_FA_ROWS * HTP_FA_KV_BLK + (size_t)HTP_FA_ROWS * dvp;
    return htp_scratch_round(floats * sizeof(float));
}

int htp_fa_kv_block_type(uint32_t type) {
    switch (type) {
        case HTP_TYPE_Q8_0:
        case HTP_TYPE_Q4_0:
        case HTP_TYPE_Q4_1:
        case HTP_TYPE_IQ4_NL:
            return 1;
        case HTP_TYPE_Q5_0:
        case HTP_TYPE_Q5_1:
            // The kernel's K dot expands these itself, but V goes through the
            // shared row dequantizer: claimed once that one reads them.
            return htp_quant_can_dequant(type);
        default:
            return 0;
    }
}

// K or V: a float type, or plain rows of whole blocks of a KV-cache block type.
static int fa_kv_type_ok(const struct htp_tensor_view * t) {
    if (htp_type_is_float(t->type)) {
        return !(t->flags & HTP_TENSOR_TILED);
    }
    if (!htp_fa_kv_block_type(t->type) || (t->flags & HTP_TENSOR_TILED)) {
        return 0;
    }
    const struct htp_type_traits * tt = htp_type_traits(t->type);
    return tt && t->ne[0] % tt->blck_size == 0 && t->nb[0] == (int64_t)tt->type_size;
}

int htp_fa_read(const struct htp_op_call * call, struct htp_fa_shape * a) {
    const struct htp_tensor_view *q = call->src[0], *k = call->src[1], *v = call->src[2], *dst = call->dst[0];
    const struct htp_tensor_view *mask = call->src[3], *sinks = call->src[4];
    memset(a, 0, sizeof *a);
    if (!q || !k || !v || !dst || !htp_view_shape_ok(q) || !htp_view_shape_ok(k) || !htp_view_shape_ok(v) ||
        !htp_view_shape_ok(dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    a->q = q, a->k = k, a->v = v, a->mask = mask, a->sinks = sinks, a->dst = dst;
    a->dk = q->ne[0], a->dv = v->ne[0];
    a->n_q = q->ne[1], a->n_head = q->ne[2], a->ne3 = q->ne[3];
    a->n_kv = k->ne[1], a->n_head_kv = k->ne[2];
    if (k->ne[0] != a->dk || v->ne[1] != a->n_kv || v->ne[2] != k->ne[2] || v->ne[3] != k->ne[3] || k->ne[2] <= 0 ||
        k->ne[3] <= 0 || a->n_head % k->ne[2] != 0 || a->ne3 % k->ne[3] != 0) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (dst->ne[0] != a->dv || dst->ne[1] != a->n_head || dst->ne[2] != a->n_q || dst->ne[3] != a->ne3) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    a->rk2 = a->n_head / k->ne[2];
    a->rk3 = a->ne3 / k->ne[3];
    if (mask) {
        if (!htp_view_shape_ok(mask) || mask->ne[0] < a->n_kv || mask->ne[1] < a->n_q || mask->ne[2] <= 0 ||
            mask->ne[3] <= 0 || a->n_head % mask->ne[2] != 0 || a->ne3 % mask->ne[3] != 0) {
            return HTP_STATUS_INVAL_PARAMS;
        }
        if (mask->type != HTP_TYPE_F16 && mask->type != HTP_TYPE_F32) {
            return HTP_STATUS_NO_SUPPORT;
        }
    }
    if (sinks) {
        if (!htp_view_shape_ok(sinks) || sinks->ne[0] < a->n_head || !htp_view_readable_for(sinks, dst)) {
            return HTP_STATUS_INVAL_PARAMS;
        }
        if (sinks->type != HTP_TYPE_F32) {
            return HTP_STATUS_NO_SUPPORT;
        }
    }
    a->scale    = htp_param_f32(call->desc, 0);
    a->max_bias = htp_param_f32(call->desc, 1);
    a->softcap  = htp_param_f32(call->desc, 2);
    if (!isfinite(a->scale) || !(a->max_bias >= 0.0f) || !isfinite(a->max_bias) || !isfinite(a->softcap)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if ((q->type != HTP_TYPE_F32 && q->type != HTP_TYPE_F16) || !fa_kv_type_ok(k) || !fa_kv_type_ok(v) ||
        dst->type != HTP_TYPE_F32 || dst->nb[0] != 4) {
        return HTP_STATUS_NO_SUPPORT;
    }
    if (a->softcap != 0.0f) {
        a->scale /= a->softcap;  // s = softcap * tanh(q.k * scale / softcap)
    }
    // ALiBi slope bases from the largest power of two <= n_head.
    a->n_head_log2 = 1;
    while ((int64_t)a->n_head_log2 * 2 <= a->n_head) {
        a->n_head_log2 *= 2;
    }
    a->m0 = powf(2.0f, -(a->max_bias) / (float)a->n_head_log2);
    a->m1 = powf(2.0f, -(a->max_bias / 2.0f) / (float)a->n_head_log2);
    return HTP_STATUS_OK;
}

int htp_op_flash_attn_ext_check(const struct htp_op_call * call) {
    struct htp_fa_shape a;
    const int           st = htp_fa_read(call, &a);
    if (st != HTP_STATUS_OK) {
        return st;
    }
    // One worker's slice must fit; the kernel uses as many workers as fit.
    return htp_fa_slice_bytes(htp_fa_pad(a.dk), htp_fa_pad(a.dv)) <= call->vtcm_size ? HTP_STATUS_OK
                                                                                     : HTP_STATUS_VTCM_TOO_SMALL;
}
