// quant-types.c: which block-quantized types the NPU's kernels read and write
// outside the matmuls (see quant-types.h).

#include "quant-types.h"

#include "kquant-tiles.h"
#include "tiled.h"

int htp_quant_can_dequant(uint32_t type) {
    return type == HTP_TYPE_Q4_0 || type == HTP_TYPE_Q4_1 || type == HTP_TYPE_Q5_0 || type == HTP_TYPE_Q5_1 ||
           type == HTP_TYPE_Q8_0 || type == HTP_TYPE_IQ4_NL || type == HTP_TYPE_MXFP4 || htp_quant_is_unit_type(type);
}

int htp_quant_is_unit_type(uint32_t type) {
    return type == HTP_TYPE_Q1_0 || type == HTP_TYPE_Q2_0 || type == HTP_TYPE_NVFP4;
}

int htp_quant_can_dequant_row(uint32_t type) {
    return htp_quant_can_dequant(type) || htp_kq_type_ok(type) || type == HTP_TYPE_Q2_K || type == HTP_TYPE_Q3_K ||
           type == HTP_TYPE_IQ4_XS;
}

int htp_quant_can_quantize(uint32_t type) {
    return type == HTP_TYPE_Q8_0 || type == HTP_TYPE_Q4_0 || type == HTP_TYPE_Q4_1 || type == HTP_TYPE_Q5_0 ||
           type == HTP_TYPE_Q5_1 || type == HTP_TYPE_IQ4_NL;
}

int htp_quant_tiled_view_ok(const struct htp_tensor_view * v) {
    const struct htp_tile_format * f = htp_tile_format(v->type);
    return f && htp_tiled_strides_ok(f, v->ne, v->nb);
}
