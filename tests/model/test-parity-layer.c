// test-parity-layer: libllama's layer split (LLAMA_SPLIT_MODE_LAYER) over
// the two HTP devices GGML_HEXAGON_DEVICES names (HTP0,HTP1: two NPU
// processes; HTP0,HTP0:1: two sessions of one NPU), against ggml-cpu.
//
// A 4-layer llama model (F16, seeded) is written to a temporary directory and
// run twice, once on the CPU alone and once with its layers split over the
// two devices: a prompt as one batch (logits at every position), then single
// token decodes. The activations cross from one device to the other with
// cpy_tensor_async (and, libllama using pipeline parallelism when every
// device has events, with events), which is what is under test. Passes when
//  - both devices hold model weights (libllama's load log says so), and
//  - at every position the logits' NMSE against the CPU is under 1e-4.
// Exits 77 when fewer than two HTP devices are configured.

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ggml-backend.h"
#include "ggml-htp.h"
#include "llama.h"
#include "model-gen.h"
#include "model-load.h"

enum { N_PROMPT = 12, N_GEN = 4, N_POS = N_PROMPT + N_GEN, N_CTX = 64 };

#define NMSE_MAX 1e-4

#include "test-check.h"

// libllama's load log: which buffer types got model weights.
static char dev_names[2][32];
static bool dev_has_weights[2];

static void on_log(enum ggml_log_level level, const char * text, void * ud) {
    (void)ud;
    // "   <buffer type> model buffer size = ..."; the name must be a whole word.
    const char * m = strstr(text, " model buffer size");
    for (int d = 0; m && d < 2; d++) {
        size_t n = strlen(dev_names[d]);
        if ((size_t)(m - text) >= n && memcmp(m - n, dev_names[d], n) == 0 &&
            (m - n == text || m[-(long)n - 1] == ' ')) {
            dev_has_weights[d] = true;
        }
    }
    if (level == GGML_LOG_LEVEL_ERROR || getenv("TEST_VERBOSE")) {
        fputs(text, stderr);
    }
}

// Run the prompt then N_GEN single-token steps (the CPU's greedy tokens, so
// both sides see the same input); logits of every position into out[N_POS][n_voc].
static int run(const char * path, ggml_backend_dev_t * devs, const llama_token * prompt, llama_token * gen, bool choose,
               float * out, int n_voc) {
    struct llama_model_params mp      = llama_model_default_params();
    ggml_backend_dev_t        none[1] = {NULL};
    if (devs) {
        mp.devices      = devs;
        mp.n_gpu_layers = 999;
        mp.split_mode   = LLAMA_SPLIT_MODE_LAYER;
    } else {
        mp.devices      = none;  // ggml-cpu as a llama.cpp user gets it
        mp.n_gpu_layers = 0;
    }
    struct llama_model * model = llama_model_load_from_file(path, mp);
    if (!model) {
        printf("cannot load %s\n", path);
        return -1;
    }
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx                       = N_CTX;
    cp.n_batch                     = N_CTX;
    cp.n_ubatch                    = N_CTX;
    cp.n_threads                   = 2;
    cp.n_threads_batch             = 2;
    struct llama_context * ctx     = llama_init_from_model(model, cp);
    int                    rc      = -1;
    struct llama_batch     b       = llama_batch_init(N_CTX, 0, 1);
    if (!ctx) {
        printf("cannot create a context\n");
        goto done;
    }
    b.n_tokens = N_PROMPT;
    for (int i = 0; i < N_PROMPT; i++) {
        b.token[i]     = prompt[i];
        b.pos[i]       = i;
        b.n_seq_id[i]  = 1;
        b.seq_id[i][0] = 0;
        b.logits[i]    = 1;
    }
    if (llama_decode(ctx, b) != 0) {
        printf("prompt decode failed\n");
        goto done;
    }
    for (int i = 0; i < N_PROMPT; i++) {
        memcpy(out + (size_t)i * n_voc, llama_get_logits_ith(ctx, i), sizeof(float) * (size_t)n_voc);
    }
    for (int g = 0; g < N_GEN; g++) {
        const float * last = out + (size_t)(N_PROMPT + g - 1) * n_voc;
        if (choose) {
            int best = 0;
            for (int k = 1; k < n_voc; k++) {
                best = last[k] > last[best] ? k : best;
            }
            gen[g] = best;
        }
        b.n_tokens     = 1;
        b.token[0]     = gen[g];
        b.pos[0]       = N_PROMPT + g;
        b.n_seq_id[0]  = 1;
        b.seq_id[0][0] = 0;
        b.logits[0]    = 1;
        if (llama_decode(ctx, b) != 0) {
            printf("decode of step %d failed\n", g);
            goto done;
        }
        memcpy(out + (size_t)(N_PROMPT + g) * n_voc, llama_get_logits_ith(ctx, 0), sizeof(float) * (size_t)n_voc);
    }
    rc = 0;
done:
    llama_batch_free(b);
    llama_free(ctx);
    llama_model_free(model);
    return rc;
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    llama_log_set(on_log, NULL);
    ggml_log_set(on_log, NULL);
    htp_model_register_htp();
    ggml_backend_reg_t reg = ggml_backend_htp_reg();
    if (ggml_backend_reg_dev_count(reg) < 2) {
        printf("fewer than two HTP devices (GGML_HEXAGON_DEVICES=%s): skipped\n",
               getenv("GGML_HEXAGON_DEVICES") ? getenv("GGML_HEXAGON_DEVICES") : "");
        return 77;
    }
    ggml_backend_dev_t devs[3] = {ggml_backend_reg_dev_get(reg, 0), ggml_backend_reg_dev_get(reg, 1), NULL};
    for (int d = 0; d < 2; d++) {
        snprintf(dev_names[d], sizeof dev_names[d], "%s", ggml_backend_dev_name(devs[d]));
    }

    char dir[] = "/tmp/test-parity-layer-XXXXXX";
    CHECK_OR_RETURN(1, mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
    char path[sizeof dir + 16];
    snprintf(path, sizeof path, "%s/model.gguf", dir);
    struct htp_model_spec spec;
    htp_model_spec_preset(&spec, HTP_MODEL_ARCH_LLAMA, "tiny");
    spec.n_layer = 4;
    spec.seed    = 7;
    char desc[160];
    htp_model_spec_describe(&spec, desc, sizeof desc);
    const bool written = htp_model_write(&spec, path, NULL, NULL) == 0;
    if (!written) {
        rmdir(dir);
    }
    CHECK_OR_RETURN(1, written, "cannot write the model");
    printf("model: %s; split over %s and %s\n", desc, dev_names[0], dev_names[1]);

    const int   n_voc = spec.n_vocab;
    float *     cpu   = malloc(sizeof(float) * N_POS * (size_t)n_voc);
    float *     htp   = malloc(sizeof(float) * N_POS * (size_t)n_voc);
    llama_token prompt[N_PROMPT], gen[N_GEN];
    for (int i = 0; i < N_PROMPT; i++) {
        prompt[i] = 3 + (i * 37) % 256;  // byte tokens
    }
    int rc_cpu = run(path, NULL, prompt, gen, true, cpu, n_voc);
    int rc_htp = rc_cpu == 0 ? run(path, devs, prompt, gen, false, htp, n_voc) : -1;
    CHECK(rc_cpu == 0 && rc_htp == 0, "runs failed (cpu %d, split %d)", rc_cpu, rc_htp);
    CHECK(dev_has_weights[0] && dev_has_weights[1], "weights on %s: %d, on %s: %d (not a split)", dev_names[0],
          dev_has_weights[0], dev_names[1], dev_has_weights[1]);

    if (rc_htp == 0) {
        double worst = 0.0;
        for (int p = 0; p < N_POS; p++) {
            double num = 0.0, den = 0.0;
            for (int k = 0; k < n_voc; k++) {
                double c = cpu[(size_t)p * n_voc + k], h = htp[(size_t)p * n_voc + k];
                num += isfinite(h) ? (h - c) * (h - c) : INFINITY;
                den += c * c;
            }
            double e = den > 0 ? num / den : num;
            worst    = e > worst ? e : worst;
            CHECK(e < NMSE_MAX, "position %d: NMSE %.3e over %.0e", p, e, NMSE_MAX);
        }
        printf("logits of %d positions (prompt %d, decode %d): worst NMSE %.3e (limit %.0e)\n", N_POS, N_PROMPT, N_GEN,
               worst, NMSE_MAX);
    }
    free(cpu);
    free(htp);
    unlink(path);
    rmdir(dir);
    return test_exit_code("test-parity-layer");
}
