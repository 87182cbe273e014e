// rows-check.c: GET_ROWS (gather rows by index) and SET_ROWS (scatter rows by
// index). The indices are data: the kernels check each against the row count
// as they read it.
//
//   GET_ROWS  src0 [ne0, n, ne2, ne3] float, Q4_0 family (plain or tiled), K-quant, IQ (iq-tiles.h) or I32;
//             src1 I32 [m, ne2, ne3]; dst [ne0, m, ne2, ne3] F32/F16/BF16 (I32 for I32)
//   SET_ROWS  src0 values [ne0, m, ne2, ne3] F32/F16/BF16; src1 I64 or I32 [m, b2 | ne2, b3 | ne3]
//             dst [ne0, n, ne2, ne3] float, or plain rows of a KV-cache quant type
//             (htp_quant_can_quantize)

#include "contract/iq-tiles.h"
#include "contract/kquant-tiles.h"
#include "contract/quant-types.h"
#include "contract/type-traits.h"
#include "matmul-check.h"
#include "op-checks.h"

int htp_op_get_rows_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *src0 = call->src[0], *src1 = call->src[1], *dst = call->dst[0];
    if (!src0 || !src1 || !dst || !htp_view_shape_ok(src0) || !htp_view_shape_ok(src1) || !htp_view_shape_ok(dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (src1->ne[1] != src0->ne[2] || src1->ne[2] != src0->ne[3] || src1->ne[3] != 1 || dst->ne[0] != src0->ne[0] ||
        dst->ne[1] != src1->ne[0] || dst->ne[2] != src1->ne[1] || dst->ne[3] != src1->ne[2]) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (htp_kq_type_ok(src0->type) || htp_iq_type_ok(src0->type)) {  // tiled or plain rows of whole blocks
        const int rc = htp_kq_weights_check(src0);
        if (rc != HTP_STATUS_OK) {
            return rc;
        }
    }
    if (src0->type == HTP_TYPE_I32) {  // I32 rows into I32 (ggml_get_rows keeps the type), a copy
        return src1->type == HTP_TYPE_I32 && dst->type == HTP_TYPE_I32 && !(src0->flags & HTP_TENSOR_TILED)
                   ? HTP_STATUS_OK
                   : HTP_STATUS_NO_SUPPORT;
    }
    if (src1->type != HTP_TYPE_I32 || !htp_type_is_float(dst->type)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    if (htp_kq_type_ok(src0->type) || htp_iq_type_ok(src0->type)) {
        return HTP_STATUS_OK;
    }
    if (htp_quant_can_dequant(src0->type)) {
        if (src0->flags & HTP_TENSOR_TILED) {
            return htp_quant_tiled_view_ok(src0) ? HTP_STATUS_OK : HTP_STATUS_INVAL_PARAMS;
        }
        return src0->nb[0] == (int64_t)htp_type_traits(src0->type)->type_size ? HTP_STATUS_OK : HTP_STATUS_NO_SUPPORT;
    }
    if (htp_quant_can_dequant_row(src0->type)) {  // 256-element types outside kquant-tiles: plain rows only
        const struct htp_type_traits * tt = htp_type_traits(src0->type);
        return !(src0->flags & HTP_TENSOR_TILED) && src0->nb[0] == (int64_t)tt->type_size &&
                       src0->ne[0] % tt->blck_size == 0
                   ? HTP_STATUS_OK
                   : HTP_STATUS_NO_SUPPORT;
    }
    if (!htp_type_is_float(src0->type) || (src0->flags & HTP_TENSOR_TILED)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return HTP_STATUS_OK;
}

int htp_op_set_rows_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *src0 = call->src[0], *src1 = call->src[1], *dst = call->dst[0];
    if (!src0 || !src1 || !dst || !htp_view_shape_ok(src0) || !htp_view_shape_ok(src1) || !htp_view_shape_ok(dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (dst->ne[0] != src0->ne[0] || dst->ne[2] != src0->ne[2] || dst->ne[3] != src0->ne[3] ||
        src1->ne[0] != src0->ne[1] || src1->ne[3] != 1) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (htp_view_nelements(src0) > 0 &&
        (src1->ne[1] <= 0 || src1->ne[2] <= 0 || src0->ne[2] % src1->ne[1] != 0 || src0->ne[3] % src1->ne[2] != 0)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if ((src1->type != HTP_TYPE_I64 && src1->type != HTP_TYPE_I32) || !htp_type_is_float(src0->type)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    if (htp_quant_can_quantize(dst->type)) {  // a quantized KV cache: plain rows of whole blocks
        if ((dst->flags & HTP_TENSOR_TILED) || dst->ne[0] % 32 != 0 ||
            dst->nb[0] != (int64_t)htp_type_traits(dst->type)->type_size) {
            return HTP_STATUS_NO_SUPPORT;
        }
    } else if (!htp_type_is_float(dst->type)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return HTP_STATUS_OK;
}
