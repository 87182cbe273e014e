// op-params.h: values of ggml enums that op params carry verbatim from the
// node's op_params to the NPU. The NPU does not include ggml, so both sides
// name them here; the host's tests check each against ggml.h.

#ifndef HTP_CONTRACT_OP_PARAMS_H
#define HTP_CONTRACT_OP_PARAMS_H

// enum ggml_unary_op (UNARY params[0])
#define HTP_UNARY_NEG        2   // GGML_UNARY_OP_NEG
#define HTP_UNARY_TANH       4   // GGML_UNARY_OP_TANH
#define HTP_UNARY_SIGMOID    7   // GGML_UNARY_OP_SIGMOID
#define HTP_UNARY_GELU       8   // GGML_UNARY_OP_GELU
#define HTP_UNARY_GELU_QUICK 9   // GGML_UNARY_OP_GELU_QUICK
#define HTP_UNARY_SILU       10  // GGML_UNARY_OP_SILU
#define HTP_UNARY_EXP        13  // GGML_UNARY_OP_EXP
#define HTP_UNARY_SOFTPLUS   15  // GGML_UNARY_OP_SOFTPLUS

// enum ggml_glu_op (GLU params[0])
#define HTP_GLU_GEGLU      1  // GGML_GLU_OP_GEGLU
#define HTP_GLU_SWIGLU     2  // GGML_GLU_OP_SWIGLU
#define HTP_GLU_SWIGLU_OAI 3  // GGML_GLU_OP_SWIGLU_OAI

// enum ggml_tri_type (TRI params[0])
#define HTP_TRI_UPPER_DIAG 0
#define HTP_TRI_UPPER      1
#define HTP_TRI_LOWER_DIAG 2
#define HTP_TRI_LOWER      3

// enum ggml_sort_order (ARGSORT params[0])
#define HTP_SORT_ASC  0
#define HTP_SORT_DESC 1

// ROPE params[2] modes (GGML_ROPE_TYPE_*)
#define HTP_ROPE_MODE_NORMAL 0
#define HTP_ROPE_MODE_NEOX   2
#define HTP_ROPE_MODE_MROPE  8  // bit shared by every multi-section mode
#define HTP_ROPE_MODE_VISION 24
#define HTP_ROPE_MODE_IMROPE 40

#endif  // HTP_CONTRACT_OP_PARAMS_H
