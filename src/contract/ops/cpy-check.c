// cpy-check.c: CPY (ggml's CPY, CONT and DUP): dst[0] receives src[0]'s
// elements in row-major order, converted to dst's type. Shapes may differ
// when the element counts agree. Supported: a copy within one type (whole
// blocks for block types), conversions between F32, F16 and BF16 and between
// F32 and I32, and
// quantization of a float source into rows of whole blocks of the KV-cache
// quant types (htp_quant_can_quantize: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL),
// and dequantization of plain quantized rows into F32 (htp_quant_can_dequant_row,
// and the IQ codebook types of htp_iq_type_ok).

#include "contract/iq-tiles.h"
#include "contract/quant-types.h"
#include "contract/type-traits.h"
#include "op-checks.h"

int htp_cpy_can_convert(uint32_t src_type, uint32_t dst_type) {
    // I32 converts to and from F32 only, as in ggml-cpu (which aborts on the rest)
    if ((src_type == HTP_TYPE_F32 && dst_type == HTP_TYPE_I32) ||
        (src_type == HTP_TYPE_I32 && dst_type == HTP_TYPE_F32)) {
        return 1;
    }
    return src_type != dst_type && htp_type_is_float(src_type) && htp_type_is_float(dst_type);
}

int htp_cpy_quantizes(const struct htp_op_call * call) {
    return call->src[0] && call->dst[0] && htp_quant_can_quantize(call->dst[0]->type) &&
           call->src[0]->type != call->dst[0]->type;
}

int htp_cpy_dequantizes(const struct htp_op_call * call) {
    return call->src[0] && call->dst[0] &&
           (htp_quant_can_dequant_row(call->src[0]->type) || htp_iq_type_ok(call->src[0]->type)) &&
           call->dst[0]->type == HTP_TYPE_F32;
}

// Plain quantized rows of whole blocks -> F32 rows of the same shape.
// (ggml-cpu dequantizes into F32 only: into F16 it aborts.)
static int cpy_dequantize_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *src = call->src[0], *dst = call->dst[0];
    if (!htp_view_shape_ok(src) || !htp_view_shape_ok(dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    const struct htp_type_traits * ts = htp_type_traits(src->type);
    if (!htp_view_same_shape(src, dst) || src->ne[0] % ts->blck_size != 0 || src->nb[0] != (int64_t)ts->type_size ||
        (src->flags & HTP_TENSOR_TILED) || (dst->flags & HTP_TENSOR_TILED)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return HTP_STATUS_OK;
}

// Float rows -> quantized rows of the same shape, packed whole blocks.
static int cpy_quantize_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *src = call->src[0], *dst = call->dst[0];
    if (!htp_view_shape_ok(src) || !htp_view_shape_ok(dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (!htp_type_is_float(src->type) || !htp_view_same_shape(src, dst) || dst->ne[0] % 32 != 0 ||
        dst->nb[0] != (int64_t)htp_type_traits(dst->type)->type_size || (dst->flags & HTP_TENSOR_TILED)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return HTP_STATUS_OK;
}

int htp_op_cpy_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *s = call->src[0], *d = call->dst[0];
    if (s == NULL || d == NULL) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (htp_cpy_quantizes(call)) {
        return cpy_quantize_check(call);
    }
    if (htp_cpy_dequantizes(call)) {
        return cpy_dequantize_check(call);
    }
    const struct htp_type_traits * ts = htp_type_traits(s->type);
    const struct htp_type_traits * td = htp_type_traits(d->type);
    if (ts == NULL || td == NULL) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    // The extents were checked, so these products do not overflow.
    if (htp_view_nelements(s) != htp_view_nelements(d)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (s->type == d->type) {
        return s->ne[0] % ts->blck_size == 0 && d->ne[0] % td->blck_size == 0 ? HTP_STATUS_OK : HTP_STATUS_INVAL_PARAMS;
    }
    return htp_cpy_can_convert(s->type, d->type) ? HTP_STATUS_OK : HTP_STATUS_NO_SUPPORT;
}
