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
// Then the same again for the file requantized (tools/model-quant.c) to each
// weight type its shapes allow, with that type's limits (requant_types below).
// The model path is $HTP_STORIES_GGUF, else ../shared/models/stories260K.gguf
// beside the checkout; without it the test skips (77) saying so.

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llama.h"
#include "model-load.h"
#include "model-quant.h"
#include "test-check.h"

#define N_CTX 512
// What HTP0 must reach against ggml-cpu on one file.
struct limits {
    int    greedy;    // greedy tokens that must be identical; 0 = all of them
    double tie;       // a lead of ggml-cpu's top token over its runner-up, in logits, below which a
                      // position is a near-tie; at every other position HTP0's top token must agree
    double nmse_max;  // worst logit NMSE over the positions
    double ll_rel;    // relative difference of the story's mean log-likelihood
};

// F32 and F16 weights: the whole text, ggml's F32 threshold, 0.1 %.
static const struct limits float_limits = {0, 0.0, 1e-4, 1e-3};

static const char * const prompt = "Once upon a time";

// Written for this test: short sentences of the kind the model was trained on.
static const char * const story =
    "Once upon a time, there was a little girl named Lily. She liked to play in the park with her red ball. "
    "One day, the ball rolled under a big tree. Lily was sad, but a kind dog came and pushed the ball back to "
    "her. Lily smiled and said, \"Thank you, dog!\" They played together until the sun went down.";

struct side {
    const char *           name;
    const char *           device;     // NULL: ggml-cpu
    bool                   cpu_plain;  // ggml-cpu without its repacked weight buffers
    struct llama_model *   model;
    struct llama_context * ctx;
};

// What one side produced on one file.
struct side_run {
    llama_token gen[N_CTX];  // greedy continuation of the prompt
    int         n_out;
    float *     logits;        // [prompt + CPU's continuation][n_vocab]
    float *     story_logits;  // [story][n_vocab]
};

static int side_open(struct side * s, const char * path) {
    struct htp_model_load_params p = {
        .path = path, .device = s->device, .n_ctx = N_CTX, .n_batch = N_CTX, .cpu_plain = s->cpu_plain};
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

// How far one side is from the reference side (ggml-cpu as llama.cpp users
// get it) on one file.
struct gap {
    int    same, n_ref, n_got;  // greedy tokens identical, and each side's count
    double nmse;                // worst logit NMSE over the positions
    int    at;                  // ... at this position
    double ll_ref, ll_got, ll_rel;
    int    top1;           // positions of the (teacher-forced) sequence where both sides' most likely token agrees
    int    decisive_miss;  // ... where they differ although the reference's lead is at least the tie limit
    double worst_lead;     // the reference's largest lead at a position where they differ
};

static int argmax(const float * l, int n) {
    int best = 0;
    for (int t = 1; t < n; t++) {
        best = l[t] > l[best] ? t : best;
    }
    return best;
}

// How far ref's most likely token, best, leads every other token.
static double lead(const float * l, int n, int best) {
    double next = -INFINITY;
    for (int t = 0; t < n; t++) {
        next = t != best && l[t] > next ? l[t] : next;
    }
    return (double)l[best] - next;
}

static struct gap side_gap(const struct side_run * ref, const struct side_run * got, int n_seq, int n_story,
                           const llama_token * stoks, int n_vocab, double tie) {
    struct gap g = {0, ref->n_out, got->n_out, 0.0, 0, 0.0, 0.0, 0.0, 0, 0, 0.0};
    while (g.same < ref->n_out && g.same < got->n_out && ref->gen[g.same] == got->gen[g.same]) {
        g.same++;
    }
    for (int i = 0; i < n_seq; i++) {
        const double e = nmse(ref->logits + (size_t)i * n_vocab, got->logits + (size_t)i * n_vocab, n_vocab);
        if (e > g.nmse) {
            g.nmse = e;
            g.at   = i;
        }
        const float * rl = ref->logits + (size_t)i * n_vocab;
        const int     rb = argmax(rl, n_vocab);
        if (rb == argmax(got->logits + (size_t)i * n_vocab, n_vocab)) {
            g.top1++;
            continue;
        }
        const double l = lead(rl, n_vocab, rb);
        g.worst_lead   = l > g.worst_lead ? l : g.worst_lead;
        g.decisive_miss += l >= tie;
    }
    g.ll_ref = mean_log_likelihood(ref->story_logits, stoks, n_story, n_vocab);
    g.ll_got = mean_log_likelihood(got->story_logits, stoks, n_story, n_vocab);
    g.ll_rel = fabs(g.ll_got - g.ll_ref) / fabs(g.ll_ref);
    return g;
}

// One model file on ggml-cpu (the reference), on HTP0 and, with `floor`, on
// ggml-cpu without its repacked weights: how far ggml-cpu is from itself when
// only its kernels change, printed beside HTP0's figures. HTP0 must generate
// the same greedy text and stay within the limits. 0 when it does.
static int compare_sides(const char * path, const char * label, int n_gen, const struct limits * lim, bool floor) {
    struct side sides[3] = {
        {"CPU", NULL, false, NULL, NULL}, {"HTP0", "HTP0", false, NULL, NULL}, {"CPU-plain", NULL, true, NULL, NULL}};
    struct side_run runs[3];
    llama_token     ptoks[32], stoks[N_CTX], seq[N_CTX];
    int             n_prompt = 0, n_story = 0, n_seq = 0, n_vocab = 0, bad = 0;
    const int       n_sides = floor ? 3 : 2;
    memset(runs, 0, sizeof runs);

    for (int s = 0; s < n_sides && !bad; s++) {
        struct side_run * r = &runs[s];
        if (side_open(&sides[s], path) != 0) {
            fprintf(stderr, "%s: cannot load %s on %s\n", label, path, sides[s].name);
            bad = 1;
            break;
        }
        const struct llama_vocab * vocab = llama_model_get_vocab(sides[s].model);
        n_vocab                          = llama_vocab_n_tokens(vocab);
        n_prompt                         = tokenize(vocab, prompt, ptoks, 32);
        n_story                          = tokenize(vocab, story, stoks, N_CTX);
        r->n_out = n_prompt > 1 && n_story > 16 ? greedy(&sides[s], ptoks, n_prompt, r->gen, n_gen) : -1;
        if (r->n_out <= 0) {
            fprintf(stderr, "%s: %s: tokenize (%d / %d tokens) or greedy decode failed\n", label, sides[s].name,
                    n_prompt, n_story);
            bad = 1;
        } else {
            if (s < 2) {
                print_text(sides[s].name, vocab, r->gen, r->n_out);
            }
            if (s == 0) {
                // Every side judges the same sequence: the prompt and the CPU's continuation.
                memcpy(seq, ptoks, sizeof(llama_token) * n_prompt);
                memcpy(seq + n_prompt, r->gen, sizeof(llama_token) * r->n_out);
                n_seq = n_prompt + r->n_out;
            }
            r->logits       = malloc(sizeof(float) * (size_t)n_seq * n_vocab);
            r->story_logits = malloc(sizeof(float) * (size_t)n_story * n_vocab);
            if (!r->logits || !r->story_logits || all_logits(&sides[s], seq, n_seq, r->logits) != 0 ||
                all_logits(&sides[s], stoks, n_story, r->story_logits) != 0) {
                fprintf(stderr, "%s: %s: batch decode failed\n", label, sides[s].name);
                bad = 1;
            }
        }
        side_close(&sides[s]);
    }
    if (bad) {
        CHECK(0, "%s: could not run on every side", label);
    } else {
        const struct gap g      = side_gap(&runs[0], &runs[1], n_seq, n_story, stoks, n_vocab, lim->tie);
        const int        need   = lim->greedy > 0 && lim->greedy < g.n_ref ? lim->greedy : g.n_ref;
        const int        greedy = lim->greedy > 0 ? g.same >= need : g.n_ref == g.n_got && g.same == g.n_ref;
        CHECK(greedy, "%s: greedy texts differ from token %d (CPU %d tokens, HTP %d; %d must agree)", label, g.same,
              g.n_ref, g.n_got, need);
        CHECK(g.decisive_miss == 0,
              "%s: top-1 differs at %d positions where ggml-cpu's token leads by %.2g logits or more (worst lead %.3f)",
              label, g.decisive_miss, lim->tie, g.worst_lead);
        CHECK(g.nmse <= lim->nmse_max, "%s: logit NMSE %.3e at position %d > %.0e", label, g.nmse, g.at, lim->nmse_max);
        CHECK(g.ll_rel <= lim->ll_rel, "%s: mean log-likelihood HTP %.6f vs CPU %.6f: relative difference %.2e", label,
              g.ll_got, g.ll_ref, g.ll_rel);
        bad = !(greedy && g.decisive_miss == 0 && g.nmse <= lim->nmse_max && g.ll_rel <= lim->ll_rel);
        printf(
            "%-7s HTP0: greedy %d of %d tokens identical; logit NMSE worst %.3e (position %d of %d); story "
            "log-likelihood CPU %.6f HTP %.6f (%.2e relative, %d tokens); top-1 agrees at %d of %d positions (largest "
            "CPU lead where not: %.3f)\n",
            label, g.same, g.n_ref, g.nmse, g.at, n_seq, g.ll_ref, g.ll_got, g.ll_rel, n_story, g.top1, n_seq,
            g.worst_lead);
        if (floor) {
            const struct gap f = side_gap(&runs[0], &runs[2], n_seq, n_story, stoks, n_vocab, lim->tie);
            printf(
                "%-7s ggml-cpu without repack, against itself: greedy %d of %d identical; logit NMSE worst %.3e; "
                "log-likelihood %.2e relative; top-1 %d of %d\n",
                label, f.same, f.n_ref, f.nmse, f.ll_rel, f.top1, n_seq);
        }
    }
    for (int s = 0; s < 3; s++) {
        free(runs[s].logits);
        free(runs[s].story_logits);
    }
    return bad;
}

// The file's weights requantized to each type whose blocks stories260K's rows
// (64 and 172 wide) allow: 32-element blocks fit the 64-wide rows; the
// 172-wide ones fall back to F16 as llama.cpp's quantizer does. 256-element
// K-quants fit no row of this model.
//
// Quantized and BF16 weights get looser limits, because this model amplifies
// the last bit: both sides quantize each activation row to 8 bits before the
// integer dot (BF16: round it to bf16's 8-bit mantissa), so a one-ulp
// difference upstream (summation order, F16 rounding in attention) moves a
// value across a rounding step now and then, and one such step can swap two
// near-tied tokens. ggml-cpu shows it against itself: with its repacked Q4_0
// weights and without (HTP_STORIES_FLOOR=1 prints this), greedy text parts at
// token 150, logit NMSE 5.4e-4, log-likelihood 1.2e-3. And rounding our
// activation scales to fp16, as ggml-cpu does (closer to it op by op), moved
// HTP0's Q8_0 log-likelihood gap from 1e-4 to 7e-3. So for them: the first 8
// greedy tokens; the most likely token at every teacher-forced position
// where ggml-cpu's leads its runner-up by 0.25 logits or more (the swaps seen
// on Zen 4 and Xeon machines were all at leads under 0.16); NMSE 1e-2 and
// log-likelihood 1 %. A kernel that gets a block wrong misses these by orders
// of magnitude.
static const struct limits quant_limits = {8, 0.25, 1e-2, 1e-2};

static const struct {
    const char *          name;
    enum ggml_type        type;
    const struct limits * lim;
} requant_types[] = {
    {"f16", GGML_TYPE_F16, &float_limits},     {"bf16", GGML_TYPE_BF16, &quant_limits},
    {"q8_0", GGML_TYPE_Q8_0, &quant_limits},   {"q4_0", GGML_TYPE_Q4_0, &quant_limits},
    {"q4_1", GGML_TYPE_Q4_1, &quant_limits},   {"q5_0", GGML_TYPE_Q5_0, &quant_limits},
    {"q5_1", GGML_TYPE_Q5_1, &quant_limits},   {"iq4_nl", GGML_TYPE_IQ4_NL, &quant_limits},
    {"mxfp4", GGML_TYPE_MXFP4, &quant_limits}, {"nvfp4", GGML_TYPE_NVFP4, &quant_limits},
};
// Not here: Q1_0 (no row of this model is a multiple of 128: every weight
// falls back to F16) and Q2_0 (the model does not survive 2 bits: ggml-cpu's
// own story log-likelihood drops from about -1 to -11 and its greedy text is
// noise, so near-ties everywhere; HTP0's log-likelihood stays within 0.2 % of
// it, but its worst logit NMSE, 1.3e-2, misses quant_limits' 1e-2). Both have
// their whole-model cases in test-parity.

static int wanted(const char * list, const char * name) {
    if (!list) {
        return 1;
    }
    const size_t n = strlen(name);
    for (const char * p = list; (p = strstr(p, name)) != NULL; p += n) {
        if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ',')) {
            return 1;
        }
    }
    return 0;
}

// usage: test-stories [N_GEN [TYPES]]: TYPES a comma list of f32 and the
// names above (default all).
int main(int argc, char ** argv) {
    const int    n_gen = argc > 1 ? atoi(argv[1]) : 256;
    const char * types = argc > 2 ? argv[2] : NULL;
    const bool   floor = getenv("HTP_STORIES_FLOOR") != NULL;  // also measure ggml-cpu against itself
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

    if (wanted(types, "f32")) {
        compare_sides(path, "f32", n_gen, &float_limits, floor);
    }
    char dir[] = "/tmp/test-stories-XXXXXX";
    CHECK_OR_RETURN(1, mkdtemp(dir) != NULL, "mkdtemp failed");
    for (size_t i = 0; i < sizeof requant_types / sizeof requant_types[0]; i++) {
        if (!wanted(types, requant_types[i].name)) {
            continue;
        }
        char file[64], why[256];
        snprintf(file, sizeof file, "%s/%s.gguf", dir, requant_types[i].name);
        struct htp_requant_stats st;
        if (htp_model_requantize(path, file, requant_types[i].type, &st, why, sizeof why) != 0) {
            CHECK(0, "requantize to %s: %s", requant_types[i].name, why);
            continue;
        }
        printf("%-7s %d weights in %s, %d as F16 (rows of 172), %d tensors kept\n", requant_types[i].name,
               st.n_converted, requant_types[i].name, st.n_fallback, st.n_kept);
        compare_sides(file, requant_types[i].name, n_gen, requant_types[i].lim, floor);
        unlink(file);
    }
    rmdir(dir);
    llama_backend_free();
    return test_exit_code("test-stories");
}
