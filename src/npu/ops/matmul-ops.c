// matmul-ops.c: the front of the matmul family: MUL_MAT and MUL_MAT_ID go to
// the kernel of their weights' engine (contract/ops/matmul-check.h decides
// which, for the check and here alike; matmul.h lists the kernels).

#include "contract/ops/matmul-check.h"
#include "kernels.h"
#include "matmul.h"

int htp_op_mul_mat_run(struct htp_op_ctx * ctx) {
    switch (htp_mm_engine_of(HTP_OP_MUL_MAT, ctx->op.src[0]->type)) {
        case HTP_MM_FLOAT:
            return htp_mm_float_run(ctx);
        case HTP_MM_QUANT:
            return htp_mm_quant_run(ctx);
        case HTP_MM_KQUANT:
        case HTP_MM_IQ:  // the same driver, with decoded IQ tiles
            return htp_mm_kquant_run(ctx);
        default:
            return HTP_STATUS_NO_SUPPORT;
    }
}

// MUL_MAT_QKV / MUL_MAT_FFN: their check admits weights all of the K-quant
// engine or all of the QUANT engine (quantized).
int htp_op_mul_mat_shared_run(struct htp_op_ctx * ctx) {
    switch (htp_mm_engine_of(HTP_OP_MUL_MAT, ctx->op.src[0]->type)) {
        case HTP_MM_KQUANT:
            return htp_mm_kquant_shared_run(ctx);
        case HTP_MM_QUANT:
            return htp_mm_quant_shared_run(ctx);
        default:
            return HTP_STATUS_NO_SUPPORT;
    }
}

int htp_op_mul_mat_ffn_glu_run(struct htp_op_ctx * ctx) {
    switch (htp_mm_engine_of(HTP_OP_MUL_MAT, ctx->op.src[0]->type)) {
        case HTP_MM_KQUANT:
            return htp_mm_kquant_ffn_glu_run(ctx);
        case HTP_MM_QUANT:
            return htp_mm_quant_ffn_glu_run(ctx);
        default:
            return HTP_STATUS_NO_SUPPORT;
    }
}

int htp_op_mul_mat_id_run(struct htp_op_ctx * ctx) {
    switch (htp_mm_engine_of(HTP_OP_MUL_MAT_ID, ctx->op.src[0]->type)) {
        case HTP_MM_QUANT:
            return htp_mm_quant_id_run(ctx);
        case HTP_MM_KQUANT:
        case HTP_MM_IQ:
            return htp_mm_kquant_id_run(ctx);
        default:
            return HTP_STATUS_NO_SUPPORT;
    }
}
