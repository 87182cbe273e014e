// test-stories: a real trained model on HTP0 and on ggml-cpu. stories260K
// (Karpathy's TinyStories llama, converted to GGUF by llama.cpp; F32, 292,800
// parameters; ../shared/models/SOURCE.md gives its provenance and sha256) is
// loaded on each side in turn and must:
//   - generate the same tokens greedily from "Once upon a time" (N_GEN of
//     them, 256 by default, or argv[1]);
//   - give logits within an NMSE of 1e-4 (the F32 threshold) at every
//     position of prompt + generation, computed in one batch;
//   - give the same mean log-likelihood, within 0.1 %, of a fixed story
//     written for this test.
// The model path is $HTP_STORIES_GGUF, else ../shared/models/stories260K.gguf
// beside the checkout; without it the test skips (77) saying so.

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llama.h"
#include "model-load.h"
#include "test-check.h"

#define N_CTX    512
#define NMSE_MAX 1e-4
#define LL_REL   1e-3

static const char * const prompt = "Once upon a time";

// Written for this test: short sentences of the kind the model was trained on.
static const char * const story =
    "Once upon a time, there was a little girl named Lily. She liked to play in the park with her red ball. "
    "One day, the ball rolled under a big tree. Lily was sad, but a kind dog came and pushed the ball back to "
    "her. Lily smiled and said, \"Thank you, dog!\" They played together until the sun went down.";

struct side {
    const char *           name;
    const char *           device;  // NULL: ggml-cpu
    struct llama_model *   model;
    struct llama_context * ctx;
};

static int side_open(struct side * s, const char * path) {
    struct htp_model_load_params p = {.path = path, .device = s->device, .n_ctx = N_CTX, .n_batch = N_CTX};
    return htp_model_open(&p, &s->model, &s->ctx);
}

static void side_close(struct side * s) {
    llama_free(s->ctx);
    llama_model_free(s->model);
    s->ctx   = NULL;
    s->model = NULL;
}

static int tokenize(const struct llama_vocab * vocab, const char * text, llama_token * toks, int cap) {
    return llama_tokenize(vocab, text, (int32_t)strlen(text), toks, cap, true, false);
}

// Greedy continuation of prompt: n tokens into out (fewer if it ends).
static int greedy(struct side * s, const llama_token * prompt_toks, int n_prompt, llama_token * out, int n) {
    const struct llama_vocab * vocab   = llama_model_get_vocab(s->model);
    const int                  n_vocab = llama_vocab_n_tokens(vocab);
    llama_memory_clear(llama_get_memory(s->ctx), true);
    if (llama_decode(s->ctx, llama_batch_get_one((llama_token *)prompt_toks, n_prompt)) != 0) {
        return -1;
    }
    int k = 0;
    for (; k < n; k++) {
        const float * l    = llama_get_logits_ith(s->ctx, -1);
        llama_token   best = 0;
        for (llama_token t = 1; t < n_vocab; t++) {
            if (l[t] > l[best]) {
                best = t;
            }
        }
        out[k] = best;
        if (llama_vocab_is_eog(vocab, best) || llama_decode(s->ctx, llama_batch_get_one(&out[k], 1)) != 0) {
            k++;
            break;
        }
    }
    return k;
}

// Logits of every position of toks[0 .. n) in one batch into logits[n][n_vocab].
static int all_logits(struct side * s, const llama_token * toks, int n, float * logits) {
    const int          n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(s->model));
    struct llama_batch b       = llama_batch_init(n, 0, 1);
    for (int i = 0; i < n; i++) {
        b.token[i]     = toks[i];
        b.pos[i]       = i;
        b.n_seq_id[i]  = 1;
        b.seq_id[i][0] = 0;
        b.logits[i]    = 1;
    }
    b.n_tokens = n;
    llama_memory_clear(llama_get_memory(s->ctx), true);
    const int rc = llama_decode(s->ctx, b);
    if (rc == 0) {
        for (int i = 0; i < n; i++) {
            memcpy(logits + (size_t)i * n_vocab, llama_get_logits_ith(s->ctx, i), sizeof(float) * n_vocab);
        }
    }
    llama_batch_free(b);
    return rc;
}

// Mean log-probability of each next token of toks under logits[n][n_vocab].
static double mean_log_likelihood(const float * logits, const llama_token * toks, int n, int n_vocab) {
    double sum = 0.0;
    for (int i = 0; i + 1 < n; i++) {
        const float * l   = logits + (size_t)i * n_vocab;
        float         max = l[0];
        for (int t = 1; t < n_vocab; t++) {
            max = l[t] > max ? l[t] : max;
        }
        double z = 0.0;
        for (int t = 0; t < n_vocab; t++) {
            z += exp((double)l[t] - max);
        }
        sum += (double)l[toks[i + 1]] - max - log(z);
    }
    return sum / (n - 1);
}

static double nmse(const float * ref, const float * got, int n) {
    double num = 0.0, den = 0.0;
    for (int i = 0; i < n; i++) {
        const double d = (double)got[i] - ref[i];
        num += d * d;
        den += (double)ref[i] * ref[i];
    }
    return den > 0.0 ? num / den : num;
}

static void print_text(const char * label, const struct llama_vocab * vocab, const llama_token * t, int n) {
    printf("%s: %s", label, prompt);
    for (int i = 0; i < n; i++) {
        char buf[64];
        int  k = llama_token_to_piece(vocab, t[i], buf, sizeof buf - 1, 0, false);
        if (k > 0) {
            buf[k] = '\0';
            printf("%s", buf);
        }
    }
    printf("\n");
}

static void quiet_log(enum ggml_log_level level, const char * text, void * user) {
    (void)user;
    if (level == GGML_LOG_LEVEL_ERROR) {
        fputs(text, stderr);
    }
}

int main(int argc, char ** argv) {
    const int    n_gen = argc > 1 ? atoi(argv[1]) : 256;
    const char * path  = getenv("HTP_STORIES_GGUF");
    if (!path || !*path) {
        path = HTP_SHARED_MODELS "/stories260K.gguf";
    }
    if (access(path, R_OK) != 0) {
        printf("SKIP: %s not found (the shared models folder beside the checkout, or $HTP_STORIES_GGUF)\n", path);
        return 77;
    }
    CHECK_OR_RETURN(1, n_gen > 0 && n_gen + 16 < N_CTX, "N_GEN %d out of range", n_gen);
    llama_log_set(quiet_log, NULL);
    llama_backend_init();

    struct side   cpu = {"CPU", NULL, NULL, NULL}, htp = {"HTP0", "HTP0", NULL, NULL};
    llama_token   gen[2][N_CTX], ptoks[32], stoks[N_CTX], seq[N_CTX];
    int           n_out[2] = {0, 0}, n_prompt = 0, n_story = 0, n_seq = 0, n_vocab = 0;
    float *       logits[2][2] = {{NULL, NULL}, {NULL, NULL}};  // [side][prompt+generation, story]
    struct side * sides[2]     = {&cpu, &htp};

    for (int s = 0; s < 2; s++) {
        CHECK_OR_RETURN(1, side_open(sides[s], path) == 0, "cannot load %s on %s", path, sides[s]->name);
        const struct llama_vocab * vocab = llama_model_get_vocab(sides[s]->model);
        n_vocab                          = llama_vocab_n_tokens(vocab);
        n_prompt                         = tokenize(vocab, prompt, ptoks, 32);
        n_story                          = tokenize(vocab, story, stoks, N_CTX);
        CHECK_OR_RETURN(1, n_prompt > 1 && n_story > 16, "tokenize: %d / %d tokens", n_prompt, n_story);
        n_out[s] = greedy(sides[s], ptoks, n_prompt, gen[s], n_gen);
        CHECK_OR_RETURN(1, n_out[s] > 0, "%s: greedy decode failed", sides[s]->name);
        print_text(sides[s]->name, vocab, gen[s], n_out[s]);
        if (s == 0) {
            // Both sides judge the same sequence: the prompt and the CPU's continuation.
            memcpy(seq, ptoks, sizeof(llama_token) * n_prompt);
            memcpy(seq + n_prompt, gen[0], sizeof(llama_token) * n_out[0]);
            n_seq = n_prompt + n_out[0];
        }
        logits[s][0] = malloc(sizeof(float) * (size_t)n_seq * n_vocab);
        logits[s][1] = malloc(sizeof(float) * (size_t)n_story * n_vocab);
        CHECK_OR_RETURN(1, logits[s][0] && logits[s][1], "out of memory");
        CHECK_OR_RETURN(1, all_logits(sides[s], seq, n_seq, logits[s][0]) == 0, "%s: batch decode failed",
                        sides[s]->name);
        CHECK_OR_RETURN(1, all_logits(sides[s], stoks, n_story, logits[s][1]) == 0, "%s: story decode failed",
                        sides[s]->name);
        side_close(sides[s]);
    }

    int same = 0;
    while (same < n_out[0] && same < n_out[1] && gen[0][same] == gen[1][same]) {
        same++;
    }
    CHECK(n_out[0] == n_out[1] && same == n_out[0], "greedy texts differ from token %d (CPU %d tokens, HTP %d)", same,
          n_out[0], n_out[1]);

    double worst = 0.0;
    int    at    = 0;
    for (int i = 0; i < n_seq; i++) {
        const double e = nmse(logits[0][0] + (size_t)i * n_vocab, logits[1][0] + (size_t)i * n_vocab, n_vocab);
        if (e > worst) {
            worst = e;
            at    = i;
        }
    }
    CHECK(worst <= NMSE_MAX, "logit NMSE %.3e at position %d > %.0e", worst, at, NMSE_MAX);

    const double ll_cpu = mean_log_likelihood(logits[0][1], stoks, n_story, n_vocab);
    const double ll_htp = mean_log_likelihood(logits[1][1], stoks, n_story, n_vocab);
    const double rel    = fabs(ll_htp - ll_cpu) / fabs(ll_cpu);
    CHECK(rel <= LL_REL, "mean log-likelihood HTP %.6f vs CPU %.6f: relative difference %.2e", ll_htp, ll_cpu, rel);

    printf(
        "greedy: %d of %d tokens identical; logit NMSE worst %.3e (position %d of %d); story log-likelihood "
        "CPU %.6f HTP %.6f (%.2e relative, %d tokens)\n",
        same, n_out[0], worst, at, n_seq, ll_cpu, ll_htp, rel, n_story);
    for (int s = 0; s < 2; s++) {
        free(logits[s][0]);
        free(logits[s][1]);
    }
    llama_backend_free();
    return test_exit_code("test-stories");
}
