// model-feed.c: token feeding that survives a failed decode (model-feed.h).

#include "model-feed.h"

#include <stdio.h>
#include <string.h>

void htp_feed_init(struct htp_feed * f, const struct htp_model_load_params * load, struct llama_model * model,
                   struct llama_context * ctx) {
    memset(f, 0, sizeof *f);
    f->load        = load;
    f->model       = model;
    f->ctx         = ctx;
    f->max_retries = 3;
}

void htp_feed_free(struct htp_feed * f) {
    if (f->ctx) {
        llama_free(f->ctx);
        f->ctx = NULL;
    }
}

// A new context, and the history decoded into it batch by batch as first fed.
static int recover(struct htp_feed * f) {
    llama_free(f->ctx);
    f->ctx = htp_model_new_context(f->load, f->model);
    if (!f->ctx) {
        return -1;
    }
    f->recoveries++;
    int at = 0;
    for (int b = 0; b < f->n_batches; b++) {
        if (llama_decode(f->ctx, llama_batch_get_one(f->tokens + at, f->batch[b])) != 0) {
            return -1;
        }
        at += f->batch[b];
    }
    return 0;
}

int htp_feed_decode(struct htp_feed * f, const llama_token * toks, int n) {
    if (n <= 0 || n > HTP_FEED_MAX_TOKENS - f->n_tokens || f->n_batches == HTP_FEED_MAX_BATCHES) {
        fprintf(stderr, "error: the feed's history is full (%d tokens, %d batches)\n", f->n_tokens, f->n_batches);
        return -1;
    }
    // The batch joins the history first: a recovery replays it with the rest.
    memcpy(f->tokens + f->n_tokens, toks, sizeof(llama_token) * (size_t)n);
    f->n_tokens += n;
    f->batch[f->n_batches++] = n;
    if (llama_decode(f->ctx, llama_batch_get_one(f->tokens + f->n_tokens - n, n)) == 0) {
        return 0;
    }
    for (int tries = 0; tries < f->max_retries; tries++) {
        if (f->on_failure) {
            f->on_failure(f->user, f->n_tokens - n, tries == 0 ? "llama_decode failed" : "the recovery failed");
        }
        if (recover(f) == 0) {
            return 0;
        }
    }
    fprintf(stderr, "error: llama_decode keeps failing after %d recoveries\n", f->max_retries);
    f->n_tokens -= n;
    f->n_batches--;
    return -1;
}
