// model-feed.h: feeding tokens to a libllama context so that a failed decode
// (an NPU that died, say) costs a retry, not the run. Every batch fed is
// remembered; when llama_decode fails, the context is recreated (which gives
// the HTP device a fresh session, and a fresh NPU process if the old one is
// dead: the weights stay in host memory) and the history is decoded again in
// the same batches as the first time, so the computation, and with greedy
// sampling the text, is exactly that of a run that never failed.

#ifndef HTP_MODEL_FEED_H
#define HTP_MODEL_FEED_H

#include <stdbool.h>

#include "llama.h"
#include "model-load.h"

#define HTP_FEED_MAX_TOKENS  8192  // history kept, prompt included
#define HTP_FEED_MAX_BATCHES 8192

struct htp_feed {
    const struct htp_model_load_params * load;  // the context settings to recreate with
    struct llama_model *                 model;
    struct llama_context *               ctx;          // the current one: read logits from it (replaced on recovery)
    int                                  max_retries;  // recoveries in a row before giving up (default 3)
    int                                  recoveries;   // contexts recreated so far
    // Told of every failure before the recovery (may be NULL).
    void (*on_failure)(void * user, int n_fed, const char * what);
    void * user;

    llama_token tokens[HTP_FEED_MAX_TOKENS];
    int         n_tokens;
    int         batch[HTP_FEED_MAX_BATCHES];  // sizes of the batches fed, in order
    int         n_batches;
};

// Start feeding ctx (made from model with load's settings). The feed takes
// over ctx: htp_feed_free frees whichever context is current then.
void htp_feed_init(struct htp_feed * f, const struct htp_model_load_params * load, struct llama_model * model,
                   struct llama_context * ctx);

// Decode toks[0 .. n) as one batch, recovering from failures (see above).
// 0 when decoded; -1 when the history is full or the failure persisted
// (max_retries recoveries in a row), with a message on stderr.
int htp_feed_decode(struct htp_feed * f, const llama_token * toks, int n);

// Free the current context (the model stays the caller's).
void htp_feed_free(struct htp_feed * f);

#endif  // HTP_MODEL_FEED_H
