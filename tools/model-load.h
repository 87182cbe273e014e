// model-load.h: htp_model_open() loads a GGUF with libllama with everything
// offloaded to one named ggml device (e.g. "HTP0"), or on the CPU alone; and
// helpers that read libllama's log.

#ifndef HTP_MODEL_LOAD_H
#define HTP_MODEL_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "ggml.h"
#include "llama.h"

struct htp_model_load_params {
    const char *               path;        // GGUF file
    const char *               device;      // ggml device name ("HTP0"), NULL = CPU only
    uint32_t                   n_ctx;       // context, 0 = min(512, training context)
    uint32_t                   n_batch;     // logical batch, 0 = n_ctx
    int                        n_threads;   // CPU threads, 0 = all CPUs
    bool                       cpu_plain;   // ggml-cpu keeps weights as stored (no CPU repack buffers)
    enum ggml_type             type_k;      // KV cache types (f16, q8_0, ...; check with htp_model_kv_type_parse)
    enum ggml_type             type_v;      // ... both used only when kv_set
    bool                       kv_set;      // false: libllama's default (F16)
    enum llama_flash_attn_type flash_attn;  // set with flash_attn_set, else libllama's default (auto)
    bool                       flash_attn_set;
    llama_progress_callback    progress;  // load progress, may be NULL
    void *                     progress_user;
};

// A KV cache type by its ggml name ("f16", "q8_0", ...): 0 when libllama
// offers it for its cache (f32 f16 bf16 q8_0 q4_0 q4_1 iq4_nl q5_0 q5_1).
int htp_model_kv_type_parse(const char * name, enum ggml_type * type);

// "on", "off" or "auto" -> flash attention setting; 0 when known.
int htp_model_flash_attn_parse(const char * name, enum llama_flash_attn_type * fa);

// Where one decode of one token ran: its graph's compute nodes (views and
// reshapes left out) by the backend whose buffer holds each result.
struct htp_model_census {
    int  nodes;         // compute nodes of the one-token graph
    int  on_cpu;        // ... whose result lives in a CPU buffer
    int  attn;          // attention nodes (FLASH_ATTN_EXT, or SOFT_MAX when flash attention is off)
    int  attn_on_cpu;   // ... on the CPU
    char cpu_ops[256];  // the ops that ran on the CPU, "NAME xCOUNT" comma-separated
};

// Decodes one token at position pos in a new context of model (p's settings)
// that watches the scheduler, and fills out. 0 on success.
int htp_model_census(const struct htp_model_load_params * p, struct llama_model * model, struct htp_model_census * out);

// Registers the HTP backend with ggml once (later calls do nothing).
void htp_model_register_htp(void);

// Loads path and creates a context. With a device, all layers go to it
// (devices = {dev, NULL}, n_gpu_layers = 999) and the HTP backend is
// registered first; without, the model runs on ggml-cpu as llama.cpp users
// get it (no device list, no offload). 0 = success, *model and *ctx owned by
// the caller (llama_free, llama_model_free); -1 with a message on stderr.
int htp_model_open(const struct htp_model_load_params * p, struct llama_model ** model, struct llama_context ** ctx);

// A (further) context for model with p's context settings; NULL with a message
// on stderr. The caller owns it (llama_free).
struct llama_context * htp_model_new_context(const struct htp_model_load_params * p, struct llama_model * model);

// ---------------------------------------------------------------- libllama's log

// ggml hands a log callback a message in pieces (GGML_LOG_LEVEL_CONT
// continues the previous one); this gathers the pieces into whole lines.
struct htp_log_lines {
    char                line[1024];  // the line being assembled (longer lines are cut)
    size_t              len;
    enum ggml_log_level last;  // level of the message a CONT piece continues
};

// Feeds one piece to ll and calls on_line(user, line) for every line it
// completes. Returns the piece's level, CONT resolved to the message's.
enum ggml_log_level htp_log_lines_feed(struct htp_log_lines * ll, enum ggml_log_level level, const char * text,
                                       void (*on_line)(void * user, const char * line), void * user);

// libllama's "graph splits = P" or "graph splits = P (with bs=B), T" line:
// 1 with *pp the prompt graph's splits and *tg the one-token graph's (P when
// only one is given); 0 when line is not one.
int htp_log_graph_splits(const char * line, int * pp, int * tg);

#endif  // HTP_MODEL_LOAD_H
