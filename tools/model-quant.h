// model-quant.h: htp_model_requantize() rewrites a GGUF model with its
// matmul weights in another type, as llama.cpp's quantizer would: every
// tensor of two or more dimensions whose name ends in "weight" is converted
// (token embedding and output included); 1-D tensors (norms, biases) keep
// their type. A weight whose rows are not a whole number of the type's blocks
// (stories260K's 172-wide FFN rows under a 32-element block) falls back to
// F16, which fits any row. The pinned libllama ships no llama_model_quantize,
// so this is ours, built on gguf and ggml_quantize_chunk.

#ifndef HTP_MODEL_QUANT_H
#define HTP_MODEL_QUANT_H

#include "ggml.h"

struct htp_requant_stats {
    int n_converted;  // weights written in the requested type
    int n_fallback;   // weights written as F16 because their rows do not fit the type's blocks
    int n_kept;       // tensors copied unchanged (1-D)
};

// in -> out with weights in `type` (any type ggml_quantize_chunk writes
// without an importance matrix). 0 on success; -1 with a message in why[] on
// an unreadable input, an unwritable output or an unsupported type.
int htp_model_requantize(const char * in, const char * out, enum ggml_type type, struct htp_requant_stats * stats,
                         char * why, size_t why_size);

#endif  // HTP_MODEL_QUANT_H
