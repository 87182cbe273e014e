// test-parity-split: a tiny llama model (htp-model's "tiny" preset, F16) run by
// libllama on ggml-cpu, then
//   - with tensor split (split_mode LLAMA_SPLIT_MODE_TENSOR) over HTP0, HTP1:
//     libllama builds ggml's meta device over the two NPUs, which splits the
//     weights and reduces partial results through our comm context
//     (ggml_backend_comm_allreduce_tensor: ALLREDUCE ops between the NPUs);
//   - on a 4-NPU group device (G[0-3:1]): every batch goes to 4 NPUs, which
//     split each op's rows.
// The same tokens go to each: the prompt in one llama_decode with logits at
// every position, then single-token decodes. Per position, the normalised
// MSE of the logits against the CPU's, sum (h - c)^2 / sum c^2, must stay under
// 1e-4 (the worst position counts).
//
// GGML_HEXAGON_DEVICES=HTP0,HTP1,G[0-3:1] (tests/model/CMakeLists.txt); the
// GGML_HEXAGON_AR_SELECT of the run picks the reduction the meta backend gets.

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ggml-backend.h"
#include "llama.h"
#include "model-gen.h"
#include "model-load.h"
#include "test-check.h"

#define N_PROMPT 12
#define N_GEN    4
#define NMSE_MAX 1e-4

enum side { SIDE_CPU, SIDE_SPLIT, SIDE_GROUP };
static const char * const side_names[] = {"CPU", "tensor split HTP0,HTP1", "group G[0-3:1]"};

static int open_side(const char * path, enum side side, struct llama_model ** model, struct llama_context ** ctx) {
    ggml_backend_dev_t        devs[3] = {NULL, NULL, NULL};
    struct llama_model_params mp      = llama_model_default_params();
    mp.devices                        = devs;
    mp.n_gpu_layers                   = 0;
    if (side != SIDE_CPU) {
        htp_model_register_htp();
        mp.n_gpu_layers = 999;
        if (side == SIDE_SPLIT) {
            devs[0]       = ggml_backend_dev_by_name("HTP0");
            devs[1]       = ggml_backend_dev_by_name("HTP1");
            mp.split_mode = LLAMA_SPLIT_MODE_TENSOR;
            if (!devs[1]) {
                return -1;
            }
        } else {
            devs[0]       = ggml_backend_dev_by_name("G");
            mp.split_mode = LLAMA_SPLIT_MODE_NONE;
        }
        if (!devs[0]) {
            return -1;
        }
    }
    *model = llama_model_load_from_file(path, mp);
    if (!*model) {
        return -1;
    }
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx                       = 64;
    cp.n_batch                     = 64;
    cp.n_ubatch                    = 64;
    cp.flash_attn_type             = side == SIDE_SPLIT ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_AUTO;
    *ctx                           = llama_init_from_model(*model, cp);
    if (!*ctx) {
        llama_model_free(*model);
        *model = NULL;
        return -1;
    }
    return 0;
}

// Logits of every position (N_PROMPT + N_GEN) into logits[]; gen[] is chosen
// greedily (choose) or fed as given.
static int run_side(const char * path, enum side side, const llama_token * toks, llama_token * gen, bool choose,
                    float * logits, int n_vocab) {
    struct llama_model *   model = NULL;
    struct llama_context * ctx   = NULL;
    struct llama_batch     batch = llama_batch_init(N_PROMPT, 0, 1);
    int                    rc    = -1;
    if (open_side(path, side, &model, &ctx) != 0) {
        printf("cannot load the model on %s\n", side_names[side]);
        goto done;
    }
    for (int i = 0; i < N_PROMPT; i++) {
        batch.token[i]     = toks[i];
        batch.pos[i]       = i;
        batch.n_seq_id[i]  = 1;
        batch.seq_id[i][0] = 0;
        batch.logits[i]    = 1;
    }
    batch.n_tokens = N_PROMPT;
    if (llama_decode(ctx, batch) != 0) {
        printf("prompt decode failed on %s\n", side_names[side]);
        goto done;
    }
    for (int i = 0; i < N_PROMPT; i++) {
        memcpy(logits + (size_t)i * n_vocab, llama_get_logits_ith(ctx, i), sizeof(float) * (size_t)n_vocab);
    }
    for (int g = 0; g < N_GEN; g++) {
        const float * prev = logits + (size_t)(N_PROMPT + g - 1) * n_vocab;
        if (choose) {
            int best = 0;
            for (int k = 1; k < n_vocab; k++) {
                best = prev[k] > prev[best] ? k : best;
            }
            gen[g] = best;
        }
        llama_token t = gen[g];
        if (llama_decode(ctx, llama_batch_get_one(&t, 1)) != 0) {
            printf("decode of token %d failed on %s\n", g, side_names[side]);
            goto done;
        }
        memcpy(logits + (size_t)(N_PROMPT + g) * n_vocab, llama_get_logits_ith(ctx, -1),
               sizeof(float) * (size_t)n_vocab);
    }
    rc = 0;
done:
    llama_batch_free(batch);
    if (ctx) {
        llama_free(ctx);
    }
    if (model) {
        llama_model_free(model);
    }
    return rc;
}

int main(int argc, char ** argv) {
    // Which sides: "split", "group" or both (no argument).
    const char * only  = argc > 1 ? argv[1] : NULL;
    char         dir[] = "/tmp/htp-parity-split-XXXXXX";
    CHECK_OR_RETURN(1, mkdtemp(dir) != NULL, "mkdtemp");
    char path[128];
    snprintf(path, sizeof path, "%s/tiny-f16.gguf", dir);
    struct htp_model_spec spec;
    htp_model_spec_preset(&spec, HTP_MODEL_ARCH_LLAMA, "tiny");
    spec.wtype = GGML_TYPE_F16;
    llama_backend_init();
    CHECK_OR_RETURN(1, htp_model_write(&spec, path, NULL, NULL) == 0, "cannot write the model");
    const int   n_vocab = spec.n_vocab;
    const int   n_pos   = N_PROMPT + N_GEN;
    llama_token toks[N_PROMPT], gen[N_GEN];
    float *     ref = malloc(sizeof(float) * (size_t)n_pos * (size_t)n_vocab);
    float *     got = malloc(sizeof(float) * (size_t)n_pos * (size_t)n_vocab);
    for (int i = 0; i < N_PROMPT; i++) {
        toks[i] = (llama_token)(1 + (i * 37) % (n_vocab - 1));
    }
    CHECK_OR_RETURN(1, run_side(path, SIDE_CPU, toks, gen, true, ref, n_vocab) == 0, "CPU run");
    for (int s = SIDE_SPLIT; s <= SIDE_GROUP; s++) {
        if (only && strcmp(only, s == SIDE_SPLIT ? "split" : "group") != 0) {
            continue;
        }
        const bool ran = run_side(path, (enum side)s, toks, gen, false, got, n_vocab) == 0;
        CHECK(ran, "%s: run failed", side_names[s]);
        if (!ran) {
            continue;  // no logits to compare
        }
        double worst = 0, mean = 0;
        int    worst_pos = 0;
        for (int p = 0; p < n_pos; p++) {
            double err = 0, nrm = 0;
            for (int k = 0; k < n_vocab; k++) {
                double c = ref[(size_t)p * n_vocab + k], h = got[(size_t)p * n_vocab + k];
                err += (h - c) * (h - c);
                nrm += c * c;
            }
            double nmse = err / (nrm > 0 ? nrm : 1);
            if (!(nmse <= worst)) {  // NaN counts as worst
                worst     = nmse;
                worst_pos = p;
            }
            mean += nmse / n_pos;
        }
        printf("%s: %d positions, nmse max %.3g (position %d) mean %.3g\n", side_names[s], n_pos, worst, worst_pos,
               mean);
        CHECK(worst < NMSE_MAX, "%s: nmse max %.3g (position %d)", side_names[s], worst, worst_pos);
    }
    free(ref);
    free(got);
    unlink(path);
    rmdir(dir);
    llama_backend_free();
    return test_exit_code("test-parity-split");
}
