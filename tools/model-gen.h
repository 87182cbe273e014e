// model-gen.h: htp_model_write() writes a llama / qwen3 / qwen3moe GGUF with
// seeded random weights and a byte-fallback SPM vocabulary that libllama
// loads. The same spec (seed included) always gives the same file, byte for
// byte, whatever the number of threads: every row has its own random stream.
// The real-valued weights do not depend on the weight type either, so a Q8_0
// file is a quantization of the F16 file of the same seed and shape.

#ifndef HTP_MODEL_GEN_H
#define HTP_MODEL_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ggml.h"
#include "llama.h"

enum htp_model_arch {
    HTP_MODEL_ARCH_LLAMA,
    HTP_MODEL_ARCH_QWEN3,     // llama + per-head q/k RMS norms, NEOX rope
    HTP_MODEL_ARCH_QWEN3MOE,  // qwen3 with a mixture-of-experts FFN
};

// What htp_model_write() writes. Fill it with htp_model_spec_preset() and
// override fields; htp_model_spec_check() says whether libllama can load it.
struct htp_model_spec {
    enum htp_model_arch arch;
    enum ggml_type      wtype;           // 2-D/3-D matmul weights and the token embedding
    uint64_t            seed;            // weights are a function of (seed, tensor, row)
    int32_t             n_embd;          // hidden size
    int32_t             n_layer;         // transformer blocks
    int32_t             n_head;          // query heads (head size = n_embd / n_head)
    int32_t             n_head_kv;       // key/value heads (GQA), divides n_head
    int32_t             n_ff;            // dense FFN hidden size
    int32_t             n_vocab;         // tokens, >= HTP_MODEL_MIN_VOCAB
    int32_t             n_ctx;           // <arch>.context_length (training context)
    int32_t             n_expert;        // qwen3moe: experts per layer
    int32_t             n_expert_used;   // qwen3moe: experts per token
    int32_t             n_ff_exp;        // qwen3moe: expert FFN hidden size
    float               rope_freq_base;  // <arch>.rope.freq_base
    float               rms_eps;         // <arch>.attention.layer_norm_rms_epsilon
    bool                tied;            // no output.weight: the output matmul uses token_embd
    int                 n_threads;       // generator threads, 0 = all CPUs (does not change the file)
};

// <unk> <s> </s>, the 256 byte tokens and "▁": the vocabulary's fixed part.
#define HTP_MODEL_MIN_VOCAB 260

const char * htp_model_arch_name(enum htp_model_arch arch);
int          htp_model_arch_parse(const char * name, enum htp_model_arch * arch);  // 0 = known name

// Weight types htp-model accepts by their ggml names (f32 f16 bf16 q8_0 q4_0
// q4_1 q5_0 q5_1 q2_k q3_k q4_k q5_k q6_k iq4_nl iq4_xs mxfp4 iq2_xxs iq2_xs iq2_s
// iq3_xxs iq3_s iq1_s iq1_m); 0 = known name.
int htp_model_type_parse(const char * name, enum ggml_type * type);

// The llama_ftype written as general.file_type for a weight type.
enum llama_ftype htp_model_ftype(enum ggml_type wtype);

// Presets: "tiny" (~4 MB at F16), "small" (the default model), "medium",
// "1b" (the Llama-3.2-1B shape). 0 = known preset; spec fully initialised.
int htp_model_spec_preset(struct htp_model_spec * spec, enum htp_model_arch arch, const char * preset);

// 0 when the spec is loadable; otherwise -1 and a reason in err.
int htp_model_spec_check(const struct htp_model_spec * spec, char * err, size_t err_size);

// The generator's version: bumped whenever the same spec would give a
// different file, so a stored model can be recognised as stale.
#define HTP_MODEL_VERSION 1

// One line describing the spec and generator (also written as general.name),
// e.g. "htp-model/1 llama 512x4 h8/4 ff1536 v4096 f16 seed 42".
void htp_model_spec_describe(const struct htp_model_spec * spec, char * buf, size_t size);

// general.name of the GGUF at path into buf (the description a model was
// written with): 0, or -1 if the file or the key cannot be read.
int htp_model_gguf_name(const char * path, char * buf, size_t size);

// Progress of htp_model_write(): bytes of tensor data written so far of total.
typedef void (*htp_model_progress_fn)(uint64_t done, uint64_t total, void * user);

// Writes the model to path (through path.tmp, renamed at the end, so a reader
// never sees a half-written file). 0 = success; -1 with a message on stderr.
int htp_model_write(const struct htp_model_spec * spec, const char * path, htp_model_progress_fn progress, void * user);

// Bytes of tensor data the spec makes (what the progress total will be).
uint64_t htp_model_data_size(const struct htp_model_spec * spec);

#endif  // HTP_MODEL_GEN_H
