// shape-check.c: the data-movement ops REPEAT, CONCAT, PAD, DIAG, TRI and FILL:
// one plain element type for source and destination (FILL: float), shapes as
// ggml defines them, any strides. CONCAT also joins block (quantized) types
// in whole blocks, rows of packed blocks.

#include "op-checks.h"
#include "contract/op-params.h"
#include "contract/type-traits.h"

// src (if given) and dst share one plain type.
static int shape_check_types(const struct htp_tensor_view * src, const struct htp_tensor_view * dst) {
    const struct htp_type_traits * tt = htp_type_traits(dst->type);
    if (tt == NULL || tt->blck_size != 1 || (src && src->type != dst->type)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return HTP_STATUS_OK;
}

// CONCAT of a block (quantized) type: whole blocks copied, as ggml-cpu does
// them: rows of packed blocks (nb[0] the block size) in src0, src1 and dst,
// each ne[0] whole blocks, one type, plain (not tiled) views.
static int concat_blocks_check(const struct htp_op_call * call) {
    const struct htp_tensor_view * v[3] = {call->src[0], call->src[1], call->dst[0]};
    const struct htp_type_traits * tt   = htp_type_traits(v[2]->type);
    for (int i = 0; i < 3; i++) {
        if (v[i]->type != v[2]->type || v[i]->ne[0] % tt->blck_size != 0 || v[i]->nb[0] != (int64_t)tt->type_size ||
            (v[i]->flags & HTP_TENSOR_TILED)) {
            return HTP_STATUS_NO_SUPPORT;
        }
    }
    return HTP_STATUS_OK;
}

static int concat_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *s0 = call->src[0], *s1 = call->src[1], *d = call->dst[0];
    const int32_t                 dim = call->desc->params[0];
    if (!s1 || !htp_view_shape_ok(s1) || dim < 0 || dim >= HTP_OP_MAX_DIMS) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    for (int k = 0; k < HTP_OP_MAX_DIMS; k++) {
        const int ok = k == dim ? d->ne[k] == s0->ne[k] + s1->ne[k] : d->ne[k] == s0->ne[k] && d->ne[k] == s1->ne[k];
        if (!ok) {
            return HTP_STATUS_INVAL_PARAMS;
        }
    }
    const struct htp_type_traits * tt = htp_type_traits(d->type);
    if (tt && tt->blck_size > 1) {
        return concat_blocks_check(call);
    }
    const int rc = shape_check_types(s0, d);
    return rc != HTP_STATUS_OK ? rc : shape_check_types(s1, d);
}

static int pad_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *s = call->src[0], *d = call->dst[0];
    const int32_t *               p = call->desc->params;
    for (int k = 0; k < HTP_OP_MAX_DIMS; k++) {
        if (p[2 * k] < 0 || p[2 * k + 1] < 0) {
            return HTP_STATUS_NO_SUPPORT;  // cropping pads: not run here
        }
        if (d->ne[k] != s->ne[k] + p[2 * k] + p[2 * k + 1]) {
            return HTP_STATUS_INVAL_PARAMS;
        }
    }
    // Wrapping needs a source element to wrap to.
    if (p[8] != 0 && htp_view_nelements(s) == 0 && htp_view_nelements(d) != 0) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    return shape_check_types(s, d);
}

int htp_op_shape_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *s = call->src[0], *d = call->dst[0];
    const uint32_t                op = call->desc->opcode;
    const int known = op == HTP_OP_REPEAT || op == HTP_OP_CONCAT || op == HTP_OP_PAD || op == HTP_OP_DIAG ||
                      op == HTP_OP_TRI || op == HTP_OP_FILL;
    if (!known || !d || !htp_view_shape_ok(d) || (s && !htp_view_shape_ok(s))) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (op == HTP_OP_FILL) {
        if (s && !htp_view_same_shape(s, d)) {
            return HTP_STATUS_INVAL_PARAMS;
        }
        return htp_type_is_float(d->type) ? HTP_STATUS_OK : HTP_STATUS_NO_SUPPORT;
    }
    if (!s) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    switch (op) {
        case HTP_OP_REPEAT:
            // Each ne of dst a multiple of src0's, src0 not empty unless dst is.
            if (!htp_view_can_repeat(s, d)) {
                return HTP_STATUS_INVAL_PARAMS;
            }
            return shape_check_types(s, d);
        case HTP_OP_CONCAT:
            return concat_check(call);
        case HTP_OP_PAD:
            return pad_check(call);
        case HTP_OP_DIAG:
            if (s->ne[1] != 1 || d->ne[0] != s->ne[0] || d->ne[1] != s->ne[0] || d->ne[2] != s->ne[2] ||
                d->ne[3] != s->ne[3]) {
                return HTP_STATUS_INVAL_PARAMS;
            }
            return shape_check_types(s, d);
        default:  // HTP_OP_TRI
            if (!htp_view_same_shape(s, d)) {
                return HTP_STATUS_INVAL_PARAMS;
            }
            if (call->desc->params[0] < HTP_TRI_UPPER_DIAG || call->desc->params[0] > HTP_TRI_LOWER) {
                return HTP_STATUS_INVAL_PARAMS;
            }
            return shape_check_types(s, d);
    }
}
