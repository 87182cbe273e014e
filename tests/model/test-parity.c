// test-parity: whole models, the same prompt on ggml-cpu and on HTP0, logits
// compared position by position.
//
// For every architecture htp-model writes (llama, qwen3, qwen3moe) and every
// weight type of the issue (F16, Q8_0, Q4_0, MXFP4, Q4_K; and Q5_0, Q5_1, NVFP4, Q1_0, Q2_0), a tiny model (the
// "tiny" preset: 256 wide, 2 layers, rows multiples of 256 so K-quants fit)
// is written, loaded on the CPU the way a llama.cpp user gets it and on HTP0
// with every layer offloaded, and fed the same tokens: the prompt in one
// llama_decode with logits for every position, then a few single-token
// decodes of the CPU's greedy choices. Per position, the normalised MSE of
// HTP's logits against the CPU's, sum (h - c)^2 / sum c^2, must stay under
// 1e-4 for F16 and 5e-3 for quantized weights (the worst position counts).
//
// Mixture-of-experts routing is a discrete choice: where the CPU's router
// probabilities put the n_expert_used-th and the next expert within a hair of
// each other, rounding alone may make HTP pick the other expert, and that
// position's logits differ wholesale. With F16 weights the flips seen were at
// gaps under 1e-3. With quantized weights, whose activations ggml-cpu rounds
// to 8 bits, the logits of every architecture differ by an NMSE of 2e-4 to
// 9e-4, and flips were seen at gaps up to 1.1e-2 (seven prompts, AVX-512 and
// AVX2 builds; each took one or two of 28 positions out, the others as close
// as the dense models'). So both sides' router choices are recorded through
// the eval callback (on HTP in a second run: the callback cuts the graph into
// pieces, and the judged run must be the plain one). A flip where the CPU's
// choice was clear (gap >= 1e-3 for F16, 2e-2 quantized) fails the case. A
// near-tie flip takes its position out of the judgement, and, when it happens
// before the last layer, every later position too (they see it through the KV
// cache); those are reported, and at least MIN_JUDGED positions must be
// judged, so a router that is wrong often fails at any margin.
//
// And the graph must run on HTP in one split apart from the input embedding:
// libllama's "graph splits" (its log, for the prompt and the 1-token graph)
// at most 2, and in the scheduler's node assignment (GGML_SCHED_DEBUG=2,
// parsed from the ggml log) no node on the CPU but the GET_ROWS that reads
// token_embd.weight (the embedding stays in host memory). Nodes that fall
// back to the CPU are listed per case, and fail it.
//
// Each case runs in a child process: a crash or an abort in one case (an op
// the NPU rejects, say) fails that case and the others still run and report.
// The parent starts no threads and touches no ggml state, so fork is safe.

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "llama.h"
#include "model-gen.h"
#include "model-load.h"
#include "test-check.h"

#define N_PROMPT_MAX 24  // prompt tokens (BOS included)
#define N_GEN        4   // single-token decodes after the prompt
#define N_POS        (N_PROMPT_MAX + N_GEN)
#define CASE_SECONDS 40  // a case that takes longer is stuck
#define MIN_JUDGED   12  // MoE: positions no routing flip reached, at least

static const char * const default_prompt =
    "The quick brown fox jumps over the lazy dog; then it naps under a tree, dreaming of rabbits.";

// Debugging knobs: HTP_PARITY_PROMPT replaces the prompt, HTP_PARITY_ARCH
// runs one architecture, HTP_PARITY_VERBOSE prints every position.
static const char * prompt_text(void) {
    const char * p = getenv("HTP_PARITY_PROMPT");
    return p && *p ? p : default_prompt;
}

// ---------------------------------------------------------------- log

// What a child learns from libllama's and ggml's log: the split counts
// libllama reports when it reserves its graphs, and with the scheduler's
// debug dump on, the nodes it put on the CPU.
struct log_state {
    struct htp_log_lines lines;
    int                  splits_pp, splits_tg;  // "graph splits = N" or "= P (with bs=..), T (with bs=1)"
    int                  dump_splits;           // "## SPLIT" lines of the current dump
    int                  max_dump_splits;
    int                  n_cpu_nodes;   // CPU nodes other than the input embedding
    char                 cpu_ops[512];  // "OP name, ..." of those, each once
};

static struct log_state g_log;

// The op and tensor name of a CPU node, with the layer suffix "-<n>" cut so a
// fallback shows once however many layers have it.
static void note_cpu_node(struct log_state * ls, const char * op, const char * name) {
    char key[128];
    char base[64];
    snprintf(base, sizeof base, "%s", name);
    char * dash = strrchr(base, '-');
    if (dash && dash[1] >= '0' && dash[1] <= '9') {
        *dash = '\0';
    }
    snprintf(key, sizeof key, "%s(%s)", op, base);
    ls->n_cpu_nodes++;
    // Find key as a whole entry of the comma-separated list.
    for (const char * p = ls->cpu_ops; (p = strstr(p, key)) != NULL; p += strlen(key)) {
        const bool starts = p == ls->cpu_ops || p[-1] == ' ';
        const bool ends   = p[strlen(key)] == ',' || p[strlen(key)] == '\0';
        if (starts && ends) {
            return;
        }
    }
    size_t n = strlen(ls->cpu_ops);
    snprintf(ls->cpu_ops + n, sizeof ls->cpu_ops - n, "%s%s", n ? ", " : "", key);
}

// Copies the fixed-width field [p, p + w) without its padding into out.
static void field(const char * p, size_t avail, size_t w, char * out, size_t size) {
    size_t n = avail < w ? avail : w;
    while (n > 0 && *p == ' ') {
        p++;
        n--;
    }
    while (n > 0 && p[n - 1] == ' ') {
        n--;
    }
    n = n < size - 1 ? n : size - 1;
    memcpy(out, p, n);
    out[n] = '\0';
}

static void parse_line(void * user, const char * s) {
    struct log_state * ls = user;
    if (htp_log_graph_splits(s, &ls->splits_pp, &ls->splits_tg)) {
        return;
    }
    if (strncmp(s, "## SPLIT #", 10) == 0) {
        int k = atoi(s + 10);
        if (k == 0) {
            ls->dump_splits = 0;  // a new dump
        }
        ls->dump_splits++;
        ls->max_dump_splits = ls->dump_splits > ls->max_dump_splits ? ls->dump_splits : ls->max_dump_splits;
        return;
    }
    // "node #%3d (%10.10s): %20.20s (%5.5s) [%5.5s %8.8s] use=..." (ggml-backend.cpp)
    if (strncmp(s, "node #", 6) != 0) {
        return;
    }
    const char * op0 = strchr(s, '(');
    const char * op1 = op0 ? strstr(op0, "): ") : NULL;
    if (!op1 || strlen(op1 + 3) < 20 + 13) {
        return;
    }
    char op[32], name[32], backend[16];
    field(op0 + 1, (size_t)(op1 - op0 - 1), 10, op, sizeof op);
    const char * nm = op1 + 3;
    field(nm, 20, 20, name, sizeof name);
    field(nm + 30, 5, 5, backend, sizeof backend);  // after name, " (", 5 size chars, ") ["
    if (strcmp(backend, "CPU") != 0) {
        return;
    }
    if (strcmp(op, "GET_ROWS") == 0 && strstr(nm + 35, "token_embd.weight")) {
        return;  // the input embedding: its table stays in host memory
    }
    note_cpu_node(ls, op, name);
}

static void log_cb(enum ggml_log_level level, const char * text, void * user) {
    struct log_state * ls = user;
    level                 = htp_log_lines_feed(&ls->lines, level, text, parse_line, ls);
    if (level == GGML_LOG_LEVEL_ERROR) {
        fputs(text, stderr);
    }
}

// ---------------------------------------------------------------- routing

#define RT_LAYERS 8  // layers whose routing is recorded (the tiny preset has 2)

// Which experts a run's router chose, per position and layer, read from
// llama's router softmax "ffn_moe_probs-<layer>" ([n_expert, n_tokens]), and
// the gap between the last expert chosen and the first one left out.
struct routing {
    int      n_used;  // experts per token, 0 for dense models
    int      pos0;    // position of the batch's first row (set before each decode)
    bool     seen[N_POS][RT_LAYERS];
    uint64_t set[N_POS][RT_LAYERS];  // bit e: expert e chosen
    float    gap[N_POS][RT_LAYERS];
};

static struct routing g_route_cpu, g_route_htp;

static int router_layer(const struct ggml_tensor * t) {
    const char * p = t->name;
    if (t->type != GGML_TYPE_F32 || strncmp(p, "ffn_moe_probs-", 14) != 0 || !p[14]) {
        return -1;
    }
    for (const char * q = p + 14; *q; q++) {
        if (*q < '0' || *q > '9') {
            return -1;
        }
    }
    const int l = atoi(p + 14);
    return l < RT_LAYERS ? l : -1;
}

static bool route_cb(struct ggml_tensor * t, bool ask, void * user) {
    struct routing * r     = user;
    const int        layer = router_layer(t);
    if (ask) {
        return r->n_used > 0 && layer >= 0;
    }
    const int64_t n_exp = t->ne[0];
    if (layer < 0 || n_exp > 64 || r->n_used >= n_exp) {
        return true;
    }
    float row[64];
    int   idx[64];
    for (int64_t i = 0; i < t->ne[1]; i++) {
        const int64_t pos = r->pos0 + i;
        if (pos < 0 || pos >= N_POS) {
            continue;
        }
        ggml_backend_tensor_get(t, row, (size_t)i * t->nb[1], sizeof(float) * (size_t)n_exp);
        for (int e = 0; e < n_exp; e++) {
            idx[e] = e;
        }
        // The n_used largest and the next, by partial selection sort.
        for (int k = 0; k <= r->n_used; k++) {
            int m = k;
            for (int j = k + 1; j < n_exp; j++) {
                m = row[idx[j]] > row[idx[m]] ? j : m;
            }
            int x  = idx[k];
            idx[k] = idx[m];
            idx[m] = x;
        }
        uint64_t set = 0;
        for (int k = 0; k < r->n_used; k++) {
            set |= 1ull << idx[k];
        }
        r->seen[pos][layer] = true;
        r->set[pos][layer]  = set;
        r->gap[pos][layer]  = row[idx[r->n_used - 1]] - row[idx[r->n_used]];
    }
    return true;
}

// ---------------------------------------------------------------- one side

enum side {
    SIDE_CPU,         // the reference: ggml-cpu as a llama.cpp user gets it, router recorded
    SIDE_HTP,         // HTP0 as htp-run uses it (no eval callback), node assignment logged
    SIDE_HTP_ROUTER,  // HTP0 again with the router recorded (the callback cuts the graph into pieces)
};

// A context for a side. The CPU one has no device list and no offload, so
// its repacked weight buffers are used; the HTP ones offload every layer.
static int open_side(const char * path, enum side side, struct llama_model ** model, struct llama_context ** ctx) {
    if (side == SIDE_HTP) {
        struct htp_model_load_params lp = {0};
        lp.path                         = path;
        lp.device                       = "HTP0";
        lp.n_ctx                        = 64;
        // The scheduler prints its node assignment while this context lives.
        setenv("GGML_SCHED_DEBUG", "2", 1);
        int rc = htp_model_open(&lp, model, ctx);
        unsetenv("GGML_SCHED_DEBUG");
        return rc;
    }
    ggml_backend_dev_t        devs[2] = {NULL, NULL};
    struct llama_model_params mp      = llama_model_default_params();
    mp.devices                        = devs;
    mp.n_gpu_layers                   = 0;
    if (side == SIDE_HTP_ROUTER) {
        htp_model_register_htp();
        devs[0]         = ggml_backend_dev_by_name("HTP0");
        mp.n_gpu_layers = 999;
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
    cp.cb_eval                     = route_cb;
    cp.cb_eval_user_data           = side == SIDE_CPU ? &g_route_cpu : &g_route_htp;
    *ctx                           = llama_init_from_model(*model, cp);
    if (!*ctx) {
        llama_model_free(*model);
        *model = NULL;
        return -1;
    }
    return 0;
}

static const char * const side_names[] = {"CPU", "HTP0", "HTP0 (router run)"};

// Logits of every position: the prompt's n_prompt positions, then N_GEN
// single-token steps. With choose, each step's token is the argmax of the
// previous logits and is written to gen[]; without, gen[] is fed as given.
static int run_side(const char * path, enum side side, const llama_token * toks, int n_prompt, llama_token * gen,
                    bool choose, float * logits, int n_vocab, char * err, size_t err_size) {
    struct llama_model *   model = NULL;
    struct llama_context * ctx   = NULL;
    struct llama_batch     batch = llama_batch_init(n_prompt, 0, 1);
    const char *           name  = side_names[side];
    struct routing *       route = side == SIDE_CPU ? &g_route_cpu : &g_route_htp;
    int                    rc    = -1;

    if (open_side(path, side, &model, &ctx) != 0) {
        snprintf(err, err_size, "cannot load the model on %s", name);
        goto done;
    }
    if (llama_vocab_n_tokens(llama_model_get_vocab(model)) != n_vocab) {
        snprintf(err, err_size, "vocabulary size differs");
        goto done;
    }

    for (int i = 0; i < n_prompt; i++) {
        batch.token[i]     = toks[i];
        batch.pos[i]       = i;
        batch.n_seq_id[i]  = 1;
        batch.seq_id[i][0] = 0;
        batch.logits[i]    = 1;
    }
    batch.n_tokens = n_prompt;
    route->pos0    = 0;
    if (llama_decode(ctx, batch) != 0) {
        snprintf(err, err_size, "llama_decode of the prompt failed on %s", name);
        goto done;
    }
    for (int i = 0; i < n_prompt; i++) {
        const float * l = llama_get_logits_ith(ctx, i);
        if (!l) {
            snprintf(err, err_size, "no logits for position %d on %s", i, name);
            goto done;
        }
        memcpy(logits + (size_t)i * n_vocab, l, sizeof(float) * (size_t)n_vocab);
    }
    for (int g = 0; g < N_GEN; g++) {
        const float * prev = logits + (size_t)(n_prompt + g - 1) * n_vocab;
        if (choose) {
            int best = 0;
            for (int k = 1; k < n_vocab; k++) {
                best = prev[k] > prev[best] ? k : best;
            }
            gen[g] = best;
        }
        llama_token t = gen[g];
        route->pos0   = n_prompt + g;
        if (llama_decode(ctx, llama_batch_get_one(&t, 1)) != 0) {
            snprintf(err, err_size, "llama_decode of generated token %d failed on %s", g, name);
            goto done;
        }
        const float * l = llama_get_logits_ith(ctx, -1);
        if (!l) {
            snprintf(err, err_size, "no logits for generated token %d on %s", g, name);
            goto done;
        }
        memcpy(logits + (size_t)(n_prompt + g) * n_vocab, l, sizeof(float) * (size_t)n_vocab);
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

// ---------------------------------------------------------------- one case

struct case_result {
    int    ran;  // 1 when the child got to the comparison
    int    n_pos;
    double nmse_max, nmse_mean;  // over the judged positions
    int    worst_pos;
    int    n_judged;       // positions no routing flip reached (all for dense models)
    int    n_flips;        // (position, layer) pairs where HTP chose other experts ...
    int    n_bad_flips;    // ... of which the CPU's choice was clear (gap >= margin): a failure
    float  max_flip_gap;   // the largest CPU gap at a flip not caused by an earlier one
    double nmse_unjudged;  // worst NMSE at the positions not judged
    int    nonfinite;      // HTP logits that are NaN or inf
    int    splits_pp, splits_tg, max_dump_splits;
    int    n_cpu_nodes;
    char   cpu_ops[512];
    char   err[256];
};

// Marks in judged[] the positions that no routing flip reached, counting the
// flips into r; a flip whose inputs no earlier flip reached must be at a
// near-tie of the CPU's router. 0, or -1 when a router output was not seen on both sides.
static int judge_routing(const struct htp_model_spec * spec, int n_pos, bool * judged, struct case_result * r) {
    const float margin  = spec->wtype == GGML_TYPE_F16 ? 1e-3f : 2e-2f;
    bool        spoiled = false;      // a flip before the last layer, at this or an earlier position
    int         lowest  = RT_LAYERS;  // the lowest layer with a flip so far: the layers above it see its
                                      // effects at this and every later position, so theirs prove nothing
    for (int p = 0; p < n_pos; p++) {
        judged[p] = true;
        if (spec->arch != HTP_MODEL_ARCH_QWEN3MOE) {
            continue;
        }
        for (int l = 0; l < spec->n_layer && l < RT_LAYERS; l++) {
            if (!g_route_cpu.seen[p][l] || !g_route_htp.seen[p][l]) {
                snprintf(r->err, sizeof r->err, "router of layer %d at position %d not seen on %s", l, p,
                         g_route_cpu.seen[p][l] ? "HTP0" : "CPU");
                return -1;
            }
            if (g_route_cpu.set[p][l] == g_route_htp.set[p][l]) {
                continue;
            }
            const float gap = g_route_cpu.gap[p][l];
            r->n_flips++;
            if (lowest >= l) {  // a flip of its own, from inputs no other flip touched
                r->n_bad_flips += gap >= margin;
                r->max_flip_gap = gap > r->max_flip_gap ? gap : r->max_flip_gap;
            }
            lowest    = l < lowest ? l : lowest;
            judged[p] = false;
            spoiled   = spoiled || l < spec->n_layer - 1;
        }
        judged[p] = judged[p] && !spoiled;
    }
    return 0;
}

static void run_case(enum htp_model_arch arch, enum ggml_type type, const char * dir, struct case_result * r) {
    char                  path[512];
    struct htp_model_spec spec;
    float *               cpu = NULL, *htp = NULL;

    snprintf(path, sizeof path, "%s/%s-%s.gguf", dir, htp_model_arch_name(arch), ggml_type_name(type));
    htp_model_spec_preset(&spec, arch, "tiny");
    spec.wtype = type;
    if (spec.n_layer > RT_LAYERS || spec.n_expert > 64) {
        snprintf(r->err, sizeof r->err, "the tiny preset outgrew the routing record");
        return;
    }
    if (htp_model_write(&spec, path, NULL, NULL) != 0) {
        snprintf(r->err, sizeof r->err, "cannot write the model");
        return;
    }

    // Tokenize with the vocabulary alone (vocab_only: no weights).
    struct llama_model_params mp = llama_model_default_params();
    mp.vocab_only                = true;
    struct llama_model * vm      = llama_model_load_from_file(path, mp);
    if (!vm) {
        snprintf(r->err, sizeof r->err, "cannot load the vocabulary");
        goto done;
    }
    const struct llama_vocab * vocab  = llama_model_get_vocab(vm);
    const int                  n_voc  = llama_vocab_n_tokens(vocab);
    const char *               prompt = prompt_text();
    llama_token                toks[256];
    int n = llama_tokenize(vocab, prompt, (int)strlen(prompt), toks, (int)(sizeof toks / sizeof toks[0]), true, false);
    llama_model_free(vm);
    if (n < N_PROMPT_MAX) {
        snprintf(r->err, sizeof r->err, "the prompt gave only %d tokens", n);
        goto done;
    }
    const int n_prompt = N_PROMPT_MAX;
    r->n_pos           = n_prompt + N_GEN;
    memset(&g_route_cpu, 0, sizeof g_route_cpu);
    memset(&g_route_htp, 0, sizeof g_route_htp);
    g_route_cpu.n_used = g_route_htp.n_used = arch == HTP_MODEL_ARCH_QWEN3MOE ? spec.n_expert_used : 0;

    cpu = malloc(sizeof(float) * (size_t)r->n_pos * (size_t)n_voc);
    htp = malloc(sizeof(float) * (size_t)r->n_pos * (size_t)n_voc);
    if (!cpu || !htp) {
        snprintf(r->err, sizeof r->err, "out of memory");
        goto done;
    }
    llama_token gen[N_GEN];
    if (run_side(path, SIDE_CPU, toks, n_prompt, gen, true, cpu, n_voc, r->err, sizeof r->err) != 0) {
        goto done;
    }
    memset(&g_log, 0, sizeof g_log);
    g_log.splits_pp = g_log.splits_tg = -1;
    const int hrc      = run_side(path, SIDE_HTP, toks, n_prompt, gen, false, htp, n_voc, r->err, sizeof r->err);
    r->splits_pp       = g_log.splits_pp;
    r->splits_tg       = g_log.splits_tg;
    r->max_dump_splits = g_log.max_dump_splits;
    r->n_cpu_nodes     = g_log.n_cpu_nodes;
    snprintf(r->cpu_ops, sizeof r->cpu_ops, "%s", g_log.cpu_ops);
    if (hrc != 0) {
        goto done;
    }
    bool judged[N_POS];
    if (arch == HTP_MODEL_ARCH_QWEN3MOE) {
        // HTP's routing, from a second run with the router recorded (its own
        // logits, in the scratch of the CPU's, are not compared: the judged
        // run is the one without the eval callback).
        float * scratch = malloc(sizeof(float) * (size_t)r->n_pos * (size_t)n_voc);
        int     rrc =
            scratch ? run_side(path, SIDE_HTP_ROUTER, toks, n_prompt, gen, false, scratch, n_voc, r->err, sizeof r->err)
                        : -1;
        free(scratch);
        if (rrc != 0) {
            goto done;
        }
    }
    if (judge_routing(&spec, r->n_pos, judged, r) != 0) {
        goto done;
    }

    double sum   = 0.0;
    r->worst_pos = -1;
    r->n_judged  = 0;
    for (int p = 0; p < r->n_pos; p++) {
        const float * c   = cpu + (size_t)p * n_voc;
        const float * h   = htp + (size_t)p * n_voc;
        double        num = 0.0, den = 0.0;
        for (int k = 0; k < n_voc; k++) {
            if (!isfinite(h[k])) {
                r->nonfinite++;
                continue;
            }
            const double d = (double)h[k] - (double)c[k];
            num += d * d;
            den += (double)c[k] * (double)c[k];
        }
        const double e = den > 0.0 ? num / den : (num > 0.0 ? INFINITY : 0.0);
        if (getenv("HTP_PARITY_VERBOSE")) {
            fprintf(stderr, "  %s %s pos %2d nmse %.3e%s\n", htp_model_arch_name(arch), ggml_type_name(type), p, e,
                    judged[p] ? "" : " (not judged: routing flip)");
        }
        if (!judged[p]) {
            r->nmse_unjudged = e > r->nmse_unjudged ? e : r->nmse_unjudged;
            continue;
        }
        r->n_judged++;
        sum += e;
        if (r->worst_pos < 0 || e > r->nmse_max) {
            r->nmse_max  = e;
            r->worst_pos = p;
        }
    }
    r->nmse_mean = r->n_judged ? sum / r->n_judged : 0.0;
    r->ran       = 1;

done:
    free(cpu);
    free(htp);
    unlink(path);
}

// ---------------------------------------------------------------- driver

static const enum htp_model_arch archs[] = {HTP_MODEL_ARCH_LLAMA, HTP_MODEL_ARCH_QWEN3, HTP_MODEL_ARCH_QWEN3MOE};
static const enum ggml_type      types[] = {GGML_TYPE_F16,  GGML_TYPE_Q8_0, GGML_TYPE_Q4_0, GGML_TYPE_MXFP4,
                                            GGML_TYPE_Q4_K, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_NVFP4,
                                            GGML_TYPE_Q1_0, GGML_TYPE_Q2_0};

// Runs one case in a child; fills r from its report. 0 = the child reported.
static int fork_case(enum htp_model_arch arch, enum ggml_type type, const char * dir, struct case_result * r,
                     char * why, size_t why_size) {
    int fd[2];
    memset(r, 0, sizeof *r);
    if (pipe(fd) != 0) {
        snprintf(why, why_size, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, why_size, "fork: %s", strerror(errno));
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        close(fd[0]);
        alarm(CASE_SECONDS);
        llama_log_set(log_cb, &g_log);
        llama_backend_init();
        struct case_result res = {0};
        run_case(arch, type, dir, &res);
        llama_backend_free();
        ssize_t w = write(fd[1], &res, sizeof res);
        close(fd[1]);
        _exit(w == (ssize_t)sizeof res ? 0 : 3);
    }
    close(fd[1]);
    size_t got = 0;
    while (got < sizeof *r) {
        ssize_t k = read(fd[0], (char *)r + got, sizeof *r - got);
        if (k < 0 && errno == EINTR) {
            continue;
        }
        if (k <= 0) {
            break;
        }
        got += (size_t)k;
    }
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (got != sizeof *r) {
        if (WIFSIGNALED(status)) {
            snprintf(why, why_size, "the case died of signal %d (%s)", WTERMSIG(status),
                     WTERMSIG(status) == SIGALRM ? "timeout" : strsignal(WTERMSIG(status)));
        } else {
            snprintf(why, why_size, "the case exited with status %d without a report", WEXITSTATUS(status));
        }
        return -1;
    }
    return 0;
}

int main(void) {
    char dir[] = "/tmp/test-parity-XXXXXX";
    CHECK_OR_RETURN(1, mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
    printf(
        "parity of logits, CPU vs HTP0, tiny models (256 wide, 2 layers), %d prompt tokens in one batch + %d "
        "single-token decodes\n",
        N_PROMPT_MAX, N_GEN);
    printf(
        "NMSE per position must stay under 1e-4 (F16) / 5e-3 (quantized); graph: at most 2 splits, only the "
        "token embedding on the CPU\n\n");
    printf("%-9s %-6s %10s %10s %4s %7s  %s\n", "arch", "type", "nmse max", "nmse mean", "pos", "splits",
           "result; nodes on the CPU besides the embedding");

    int          n_case = 0, n_case_ok = 0;
    const char * only = getenv("HTP_PARITY_ARCH");
    for (size_t a = 0; a < sizeof archs / sizeof archs[0]; a++) {
        if (only && *only && strcmp(only, htp_model_arch_name(archs[a])) != 0) {
            continue;
        }
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
            struct case_result r;
            char               why[256] = "";
            const double       thr      = types[t] == GGML_TYPE_F16 ? 1e-4 : 5e-3;
            const char *       arch = htp_model_arch_name(archs[a]), *type = ggml_type_name(types[t]);
            const int          fail_before = n_fail;  // the case passes when none of its checks fails
            n_case++;
            const int rc = fork_case(archs[a], types[t], dir, &r, why, sizeof why);
            if (rc != 0 || !r.ran) {
                printf("%-9s %-6s %10s %10s %4s %3d/%-3d  FAIL: %s%s%s\n", arch, type, "-", "-", "-",
                       rc == 0 ? r.splits_pp : -1, rc == 0 ? r.splits_tg : -1, rc == 0 ? r.err : why,
                       rc == 0 && r.cpu_ops[0] ? "; CPU: " : "", rc == 0 ? r.cpu_ops : "");
                CHECK(rc == 0 && r.ran, "%s %s: %s", arch, type, rc == 0 ? r.err : why);
                continue;  // nothing to judge
            }
            const bool parity_ok = r.nmse_max < thr && r.nonfinite == 0 && r.n_judged >= MIN_JUDGED;
            const bool route_ok  = r.n_bad_flips == 0;
            const bool splits_ok = r.splits_pp >= 1 && r.splits_pp <= 2 && r.splits_tg >= 1 && r.splits_tg <= 2 &&
                                   r.max_dump_splits <= 2 && r.n_cpu_nodes == 0;
            char res[320];
            snprintf(res, sizeof res, "%s", parity_ok && route_ok && splits_ok ? "ok" : "FAIL:");
            size_t k = strlen(res);
            if (!parity_ok) {
                k += (size_t)snprintf(res + k, sizeof res - k, " nmse over %.0e%s%s", thr,
                                      r.nonfinite ? " (non-finite logits)" : "",
                                      r.n_judged < MIN_JUDGED ? " (too few positions judged)" : "");
            }
            if (!route_ok) {
                k += (size_t)snprintf(res + k, sizeof res - k, " %d expert choice(s) differ where the CPU's was clear",
                                      r.n_bad_flips);
            }
            if (!splits_ok) {
                k += (size_t)snprintf(res + k, sizeof res - k,
                                      " not one HTP split (%d CPU nodes, %d splits in the dumps)", r.n_cpu_nodes,
                                      r.max_dump_splits);
            }
            if (r.n_flips > 0 && k < sizeof res) {
                snprintf(res + k, sizeof res - k,
                         " [%d routing flip(s), first ones at CPU gaps <= %.1e: judged %d/%d positions; worst "
                         "nmse of the others %.1e]",
                         r.n_flips, r.max_flip_gap, r.n_judged, r.n_pos, r.nmse_unjudged);
            }
            printf("%-9s %-6s %10.2e %10.2e %4d %3d/%-3d  %s%s%s\n", arch, type, r.nmse_max, r.nmse_mean, r.worst_pos,
                   r.splits_pp, r.splits_tg, res, r.cpu_ops[0] ? "; CPU: " : "", r.cpu_ops);
            CHECK(parity_ok, "%s %s: nmse max %.2e (threshold %.0e), %d non-finite, %d of %d positions judged", arch,
                  type, r.nmse_max, thr, r.nonfinite, r.n_judged, r.n_pos);
            CHECK(route_ok, "%s %s: %d expert choice(s) differ where the CPU's was clear", arch, type, r.n_bad_flips);
            CHECK(splits_ok, "%s %s: splits %d/%d, %d CPU nodes, %d splits in the dumps", arch, type, r.splits_pp,
                  r.splits_tg, r.n_cpu_nodes, r.max_dump_splits);
            n_case_ok += n_fail == fail_before;
        }
    }
    rmdir(dir);
    printf("\n%d of %d cases passed (splits = prompt graph / 1-token graph; pos = worst position)\n", n_case_ok,
           n_case);
    return test_exit_code("test-parity");
}
