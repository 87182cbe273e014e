// bench-model: a whole model on an HTP device and on ggml-cpu in one run.
//
//   htp-bench model [-m model.gguf | --preset 1b --type q4_0 [--arch llama]]
//                   [-p 512] [-n 128] [--depth D] [--reps N] [-d HTP0] [--json]
//
// Without -m the model is written by htp-model's generator and kept under
// models/ in the repository (bench-<arch>-<preset>-<type>.gguf, rewritten
// when its general.name says another spec made it).
//
// The model is loaded twice: on the device with every layer offloaded, and on
// the CPU as a llama.cpp user gets it (no device list, no offload, so its
// repacked weight buffers are used; all cores). Per side, like llama-bench:
//   pp  one llama_decode of p prompt tokens into an empty KV cache
//   tg  n single-token decodes from an empty KV cache
// or, with --depth D (llama-bench's -d), into a cache that holds D tokens
// already (filled once per side, untimed; each repetition first drops what
// the last one added): the decode of a long conversation, whose attention
// reads D positions of every layer's KV cache a token.
// median of the repetitions, after a warm-up of each. Reported besides the
// tokens/s and the HTP/CPU ratios: the graph splits libllama reports (its log),
// the host's time per generated token (the backend's counters: time inside
// graph_compute, graphs per token, node-cache hits; with GGML_HEXAGON_PROFILE=1
// also the NPU's busy time per token from the profile, so wall minus busy is
// the time per token the NPU waits for the host), the bytes of weights a token
// reads (every weight, but only n_expert_used of n_expert experts) and decode
// speed times those bytes as a fraction of this machine's read bandwidth. The
// two sides' repetitions alternate, so that the neighbours' load on this
// shared machine falls on both. The bandwidth is measured right before and
// right after each decode repetition, because on these machines it moves
// with the neighbours' load (28 to 85 GB/s within minutes): each repetition
// is compared with the mean of the two measurements around it (the fraction
// reported is the median over the repetitions), and, as a stricter figure,
// with the best measurement of the whole run.

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "ggml-htp.h"
#include "gguf.h"
#include "llama.h"
#include "model-gen.h"
#include "model-load.h"

#ifndef HTP_SOURCE_DIR
#define HTP_SOURCE_DIR "."
#endif

// ---------------------------------------------------------------- log

// libllama's and ggml's log: warnings and errors pass; the split counts and,
// when the NPU profiles, each batch's busy time are picked up.
struct bm_log {
    struct htp_log_lines lines;
    int                  splits_pp, splits_tg;
    bool                 count_npu;  // add profile-batch times to npu_us
    uint64_t             npu_us;
    uint64_t             npu_batches;
};

static struct bm_log g_bm_log;

static void bm_parse_line(void * user, const char * s) {
    struct bm_log * ls = user;
    if (htp_log_graph_splits(s, &ls->splits_pp, &ls->splits_tg)) {
        return;
    }
    // "ggml-htp: <dev> profile-batch #<seq>: ... usec <n> cycles <n>" (src/host/profile.c)
    const char * at = strstr(s, " profile-batch #");
    if (at && ls->count_npu) {
        const char *       u = strstr(at, " usec ");
        unsigned long long us;
        if (u && sscanf(u, " usec %llu", &us) == 1) {
            ls->npu_us += us;
            ls->npu_batches++;
        }
    }
}

static void bm_log_cb(enum ggml_log_level level, const char * text, void * user) {
    struct bm_log * ls = user;
    level              = htp_log_lines_feed(&ls->lines, level, text, bm_parse_line, ls);
    if (level == GGML_LOG_LEVEL_ERROR || level == GGML_LOG_LEVEL_WARN) {
        fputs(text, stderr);
    }
}

// ---------------------------------------------------------------- the model

// models/bench-<arch>-<preset>-<type>.gguf, written unless it is there and
// was made from this very spec.
static int bm_model_path(enum htp_model_arch arch, const char * preset, enum ggml_type type, char * out, size_t size) {
    struct htp_model_spec spec;
    if (htp_model_spec_preset(&spec, arch, preset) != 0) {
        fprintf(stderr, "model: unknown preset '%s' (tiny, small, medium, 1b)\n", preset);
        return -1;
    }
    spec.wtype = type;
    char dir[1024], want[160], have[160];
    snprintf(dir, sizeof dir, "%s/models", HTP_SOURCE_DIR);
    snprintf(out, size, "%s/bench-%s-%s-%s.gguf", dir, htp_model_arch_name(arch), preset, ggml_type_name(type));
    htp_model_spec_describe(&spec, want, sizeof want);
    if (access(out, F_OK) == 0 && htp_model_gguf_name(out, have, sizeof have) == 0 && strcmp(have, want) == 0) {
        return 0;
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "model: cannot create %s: %s\n", dir, strerror(errno));
        return -1;
    }
    fprintf(stderr, "writing %s (%s) ...\n", out, want);
    int64_t t0 = bench_now_ns();
    if (htp_model_write(&spec, out, NULL, NULL) != 0) {
        return -1;
    }
    fprintf(stderr, "written in %.1f s\n", (bench_now_ns() - t0) / 1e9);
    return 0;
}

// Bytes of weights one generated token reads: every tensor once, except the
// token embedding, of which GET_ROWS reads one row (unless the output matmul
// uses it: tied embeddings), and expert tensors (3-D "_exps"), of which only
// n_expert_used of n_expert experts are read.
static int bm_bytes_per_token(const char * path, uint64_t * bytes, uint64_t * total) {
    struct gguf_init_params ip = {true, NULL};
    struct gguf_context *   g  = gguf_init_from_file(path, ip);
    if (!g) {
        return -1;
    }
    char         key[128];
    int64_t      ka    = gguf_find_key(g, "general.architecture");
    int64_t      n_exp = 0, n_used = 0;
    bool         has_out = gguf_find_tensor(g, "output.weight") >= 0;
    const char * arch    = ka >= 0 && gguf_get_kv_type(g, ka) == GGUF_TYPE_STRING ? gguf_get_val_str(g, ka) : "";
    snprintf(key, sizeof key, "%s.expert_count", arch);
    int64_t k = gguf_find_key(g, key);
    n_exp     = k >= 0 && gguf_get_kv_type(g, k) == GGUF_TYPE_UINT32 ? gguf_get_val_u32(g, k) : 0;
    snprintf(key, sizeof key, "%s.expert_used_count", arch);
    k      = gguf_find_key(g, key);
    n_used = k >= 0 && gguf_get_kv_type(g, k) == GGUF_TYPE_UINT32 ? gguf_get_val_u32(g, k) : 0;

    // The tensors' shapes come from a metadata-only ggml context.
    struct ggml_context *   meta = NULL;
    struct gguf_init_params mp   = {true, &meta};
    gguf_free(g);
    g = gguf_init_from_file(path, mp);
    if (!g || !meta) {
        if (g) {
            gguf_free(g);
        }
        return -1;
    }
    *bytes = 0;
    *total = 0;
    for (int64_t i = 0; i < gguf_get_n_tensors(g); i++) {
        const char *         name = gguf_get_tensor_name(g, i);
        struct ggml_tensor * t    = ggml_get_tensor(meta, name);
        if (!t) {
            continue;
        }
        uint64_t sz = ggml_nbytes(t);
        *total += sz;
        if (strcmp(name, "token_embd.weight") == 0 && has_out) {
            sz = ggml_row_size(t->type, t->ne[0]);
        } else if (strstr(name, "_exps.") && n_exp > 0 && n_used > 0 && t->ne[2] == n_exp) {
            sz = sz / (uint64_t)n_exp * (uint64_t)n_used;
        }
        *bytes += sz;
    }
    ggml_free(meta);
    gguf_free(g);
    return 0;
}

// ---------------------------------------------------------------- one side

struct bm_side {
    double                  pp_tps, tg_tps;  // medians
    double                  tg_ms_per_token;
    int                     splits_pp, splits_tg;
    bool                    htp;
    uint64_t                host_us, graphs, cache_hits, replays, ops;  // HTP counters over the tg repetitions
    uint64_t                npu_us, npu_batches;                        // profile, when GGML_HEXAGON_PROFILE is on
    int                     tg_tokens;                                  // decoded in the tg repetitions
    struct htp_model_census census;  // where a one-token graph's nodes ran (HTP side)
    bool                    census_ok;
};

// KV cache and flash attention settings of both sides (-ctk, -ctv, -fa).
static struct htp_model_load_params g_bm_cache;

// n tokens of a fixed pseudo-random sequence (ids >= 3: no control tokens).
static void bm_tokens(llama_token * t, int n, int n_vocab) {
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        t[i] = 3 + (llama_token)(s % (uint64_t)(n_vocab - 3));
    }
}

// One decode of toks[0..n) at positions pos0.., logits for the last only.
static int bm_decode(struct llama_context * ctx, struct llama_batch * b, const llama_token * toks, int n, int pos0) {
    for (int i = 0; i < n; i++) {
        b->token[i]     = toks[i];
        b->pos[i]       = pos0 + i;
        b->n_seq_id[i]  = 1;
        b->seq_id[i][0] = 0;
        b->logits[i]    = i == n - 1;
    }
    b->n_tokens = n;
    if (llama_decode(ctx, *b) != 0) {
        return -1;
    }
    llama_synchronize(ctx);
    return 0;
}

// One side's open model and context.
struct bm_ctx {
    const char *           device;  // NULL: ggml-cpu
    struct llama_model *   model;
    struct llama_context * ctx;
    ggml_backend_t         hb;  // a stream on the device, to read its counters
    llama_token *          toks;
    struct llama_batch     batch;
    int                    n_bat, n_pp, n_tg, n_depth;
};

static void bm_close(struct bm_ctx * c) {
    llama_batch_free(c->batch);  // a zeroed batch frees nothing
    if (c->hb) {
        ggml_backend_free(c->hb);
    }
    if (c->ctx) {
        llama_free(c->ctx);
    }
    if (c->model) {
        llama_model_free(c->model);
    }
    free(c->toks);
    memset(c, 0, sizeof *c);
}

static int bm_fail_decode(const struct bm_ctx * c) {
    fprintf(stderr, "model: llama_decode failed on %s\n", c->device ? c->device : "CPU");
    return -1;
}

// Empties the KV cache down to the first n_depth positions: all of it once,
// filling those with n_depth tokens (in batches of n_bat), and afterwards
// only what a repetition added past them.
static int bm_reset(struct bm_ctx * c, bool fill) {
    llama_memory_t mem = llama_get_memory(c->ctx);
    if (c->n_depth == 0 || fill) {
        llama_memory_clear(mem, true);
        for (int p = 0; p < c->n_depth; p += c->n_bat) {
            const int n = c->n_depth - p < c->n_bat ? c->n_depth - p : c->n_bat;
            if (bm_decode(c->ctx, &c->batch, c->toks, n, p) != 0) {
                return -1;
            }
        }
        return 0;
    }
    return llama_memory_seq_rm(mem, 0, c->n_depth, -1) ? 0 : -1;
}

// Loads the model on one side and warms it up (first-use mapping, repacking,
// caches): one prompt and a few tokens, past n_depth filled positions.
// Records the graph splits in out.
static int bm_open(struct bm_ctx * c, const char * path, const char * device, int n_pp, int n_tg, int n_depth,
                   struct bm_side * out) {
    memset(out, 0, sizeof *out);
    c->device  = device;
    c->n_pp    = n_pp;
    c->n_tg    = n_tg;
    c->n_depth = n_depth;
    c->n_bat   = n_pp > 1 ? n_pp : 1;
    if (n_depth > c->n_bat) {  // the fill's batches
        c->n_bat = n_depth < 512 ? n_depth : 512;
    }
    c->batch = llama_batch_init(c->n_bat, 0, 1);
    out->htp = device != NULL;

    g_bm_log.splits_pp = g_bm_log.splits_tg = -1;
    struct htp_model_load_params lp         = {0};
    lp.path                                 = path;
    lp.device                               = device;
    lp.n_ctx                                = (uint32_t)(n_depth + n_pp + n_tg + 16);
    lp.n_batch                              = (uint32_t)c->n_bat;
    lp.type_k                               = g_bm_cache.type_k;
    lp.type_v                               = g_bm_cache.type_v;
    lp.kv_set                               = g_bm_cache.kv_set;
    lp.flash_attn                           = g_bm_cache.flash_attn;
    lp.flash_attn_set                       = g_bm_cache.flash_attn_set;
    if (htp_model_open(&lp, &c->model, &c->ctx) != 0) {
        return -1;
    }
    if (device) {
        out->census_ok = htp_model_census(&lp, c->model, &out->census) == 0;
    }
    out->splits_pp  = g_bm_log.splits_pp;
    out->splits_tg  = g_bm_log.splits_tg;
    const int n_voc = llama_vocab_n_tokens(llama_model_get_vocab(c->model));
    c->toks         = malloc(sizeof *c->toks * (size_t)(c->n_bat + n_tg));
    if (!c->toks) {
        return -1;
    }
    bm_tokens(c->toks, c->n_bat + n_tg, n_voc);
    if (device) {
        ggml_backend_dev_t dev = ggml_backend_dev_by_name(device);
        c->hb                  = dev ? ggml_backend_dev_init(dev, NULL) : NULL;
        if (!c->hb || !ggml_backend_is_htp(c->hb)) {
            fprintf(stderr, "model: cannot open a stream on %s for its counters\n", device);
            return -1;
        }
    }
    if (bm_reset(c, true) != 0 || (n_pp > 0 && bm_decode(c->ctx, &c->batch, c->toks, n_pp, n_depth) != 0)) {
        return bm_fail_decode(c);
    }
    for (int i = 0; i < 4 && n_tg > 0; i++) {
        if (bm_decode(c->ctx, &c->batch, c->toks + c->n_bat + i, 1, n_depth + n_pp + i) != 0) {
            return bm_fail_decode(c);
        }
    }
    return 0;
}

// One prompt of n_pp tokens from an empty cache (n_depth tokens deep): *ns its wall time.
static int bm_pp_once(struct bm_ctx * c, int64_t * ns) {
    if (bm_reset(c, false) != 0) {
        return bm_fail_decode(c);
    }
    const int64_t t0 = bench_now_ns();
    if (bm_decode(c->ctx, &c->batch, c->toks, c->n_pp, c->n_depth) != 0) {
        return bm_fail_decode(c);
    }
    *ns = bench_now_ns() - t0;
    return 0;
}

// n_tg generated tokens, one at a time from an empty cache (n_depth tokens deep): *ns their wall
// time. On the HTP side the device's counters (and, with the profile on, the
// NPU's busy time) over these tokens are added to out.
static int bm_tg_once(struct bm_ctx * c, int64_t * ns, struct bm_side * out) {
    struct ggml_backend_htp_stats s0 = {0}, s1 = {0};
    if (c->hb) {
        ggml_backend_htp_get_stats(c->hb, &s0);
    }
    g_bm_log.npu_us      = 0;
    g_bm_log.npu_batches = 0;
    g_bm_log.count_npu   = c->device != NULL;
    if (bm_reset(c, false) != 0) {
        g_bm_log.count_npu = false;
        return bm_fail_decode(c);
    }
    const int64_t t0 = bench_now_ns();
    for (int i = 0; i < c->n_tg; i++) {
        if (bm_decode(c->ctx, &c->batch, c->toks + c->n_bat + i, 1, c->n_depth + i) != 0) {
            g_bm_log.count_npu = false;
            return bm_fail_decode(c);
        }
    }
    *ns                = bench_now_ns() - t0;
    g_bm_log.count_npu = false;
    if (c->hb) {
        ggml_backend_htp_get_stats(c->hb, &s1);
        out->host_us += s1.host_usecs - s0.host_usecs;
        out->graphs += s1.graphs - s0.graphs;
        out->cache_hits += s1.cache_hits - s0.cache_hits;
        out->replays += s1.replays - s0.replays;
        out->ops += s1.ops - s0.ops;
    }
    out->npu_us += g_bm_log.npu_us;
    out->npu_batches += g_bm_log.npu_batches;
    out->tg_tokens += c->n_tg;
    return 0;
}

// Medians of the repetitions into out.
static void bm_side_summary(struct bm_side * out, int64_t * t_pp, int64_t * t_tg, int n_pp, int n_tg, int reps) {
    if (n_pp > 0) {
        out->pp_tps = n_pp / (bench_median_i64(t_pp, reps) * 1e-9);
    }
    if (n_tg > 0) {
        const double med     = bench_median_i64(t_tg, reps) * 1e-9;
        out->tg_tps          = n_tg / med;
        out->tg_ms_per_token = med * 1e3 / n_tg;
    }
}

// Read bandwidth around the decode repetitions: one measurement right
// before each decode repetition (the sides' in turn) and one right after.
struct bm_bw {
    struct bench_membw * buf;      // in: the buffer measured (allocated once; NULL: no figures)
    double               wbytes;   // in: bytes of weights a generated token reads
    double               best;     // out: the highest measurement, bytes/s
    double               frac[2];  // out, [side]: median over the decode repetitions of
                                   // tokens/s x wbytes / (mean of the measurements around it)
};

static double bm_measure_bw(struct bm_bw * bw, int threads) {
    const double v = bench_membw_measure(bw->buf, threads < 64 ? threads : 64, 3);
    bw->best       = v > bw->best ? v : bw->best;
    return v;
}

// Both sides, their repetitions interleaved (HTP then CPU, prompt then
// decode), so that a change in this shared machine's load falls on both.
static int bm_run(const char * path, const char * device, int n_pp, int n_tg, int n_depth, int reps, struct bm_side * h,
                  struct bm_side * c, struct bm_bw * bw) {
    struct bm_ctx    sides[2];
    struct bm_side * out[2]  = {h, c};
    const char *     dev[2]  = {device, NULL};
    int64_t *        t[2][2] = {{NULL, NULL}, {NULL, NULL}};  // [side][pp, tg]
    double *         frac[2] = {NULL, NULL};                  // [side][rep]
    const int        threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    int              rc      = -1;
    memset(sides, 0, sizeof sides);
    for (int i = 0; i < 2; i++) {
        t[i][0] = calloc((size_t)reps, sizeof(int64_t));
        t[i][1] = calloc((size_t)reps, sizeof(int64_t));
        frac[i] = calloc((size_t)reps, sizeof(double));
        if (!t[i][0] || !t[i][1] || !frac[i] || bm_open(&sides[i], path, dev[i], n_pp, n_tg, n_depth, out[i]) != 0) {
            goto done;
        }
    }
    double before = n_tg > 0 ? bm_measure_bw(bw, threads) : 0;
    for (int r = 0; r < reps; r++) {
        for (int i = 0; i < 2 && n_pp > 0; i++) {
            if (bm_pp_once(&sides[i], &t[i][0][r]) != 0) {
                goto done;
            }
        }
        for (int i = 0; i < 2 && n_tg > 0; i++) {
            if (r > 0 && i == 0) {
                before = bm_measure_bw(bw, threads);  // the prompts ran since the last one
            }
            if (bm_tg_once(&sides[i], &t[i][1][r], out[i]) != 0) {
                goto done;
            }
            const double after = bm_measure_bw(bw, threads);
            const double tps   = n_tg / (t[i][1][r] * 1e-9);
            frac[i][r]         = before + after > 0 ? tps * bw->wbytes / ((before + after) / 2) : NAN;
            before             = after;
        }
    }
    for (int i = 0; i < 2; i++) {
        bw->frac[i] = n_tg > 0 ? bench_median_f64(frac[i], reps) : NAN;
        bm_side_summary(out[i], t[i][0], t[i][1], n_pp, n_tg, reps);
    }
    rc = 0;
done:
    for (int i = 0; i < 2; i++) {
        bm_close(&sides[i]);
        free(t[i][0]);
        free(t[i][1]);
        free(frac[i]);
    }
    return rc;
}

// ---------------------------------------------------------------- the mode

static void bm_usage(void) {
    fprintf(stderr,
            "usage: htp-bench model [-m model.gguf | --preset 1b --type q4_0 [--arch llama]] [-p 512] [-n 128]\n"
            "                       [--depth D] [--reps N] [-d HTP0] [-ctk TYPE] [-ctv TYPE] [-fa on|off|auto]\n"
            "                       [--json]\n"
            "  --depth     KV cache positions filled before each prompt and decode (0)\n"
            "  -ctk, -ctv  KV cache types (f16 default; f32 bf16 q8_0 q4_0 q4_1 iq4_nl q5_0 q5_1)\n"
            "  -fa         flash attention (libllama's default: auto)\n");
}

static void json_num(const char * key, double v, bool ok, const char * sep) {
    if (ok && isfinite(v)) {
        printf("\"%s\": %.6g%s", key, v, sep);
    } else {
        printf("\"%s\": null%s", key, sep);
    }
}

int bench_mode_model(int argc, char ** argv) {
    const char *        model = NULL, *preset = "1b", *device = "HTP0";
    enum ggml_type      type = GGML_TYPE_Q4_0;
    enum htp_model_arch arch = HTP_MODEL_ARCH_LLAMA;
    int                 n_pp = 512, n_tg = 128, n_depth = 0, reps = 3, json = 0;
    for (int i = 0; i < argc; i++) {
        const char * a   = argv[i];
        const char * val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!val) {
            bm_usage();
            return 2;
        } else if (!strcmp(a, "-m")) {
            model = val;
            i++;
        } else if (!strcmp(a, "--preset")) {
            preset = val;
            i++;
        } else if (!strcmp(a, "--type")) {
            if (htp_model_type_parse(val, &type) != 0) {
                fprintf(stderr, "model: unknown weight type '%s'\n", val);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--arch")) {
            if (htp_model_arch_parse(val, &arch) != 0) {
                fprintf(stderr, "model: unknown architecture '%s' (llama, qwen3, qwen3moe)\n", val);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "-p") || !strcmp(a, "-n") || !strcmp(a, "--reps") || !strcmp(a, "--depth")) {
            const long max = !strcmp(a, "--depth") ? 131072 : 8192;
            char *     end = NULL;
            long       v   = strtol(val, &end, 10);
            if (!*val || *end || v < 0 || v > max || (!strcmp(a, "--reps") && v < 1)) {
                fprintf(stderr, "model: %s wants an integer in %s..%ld, got '%s'\n", a, strcmp(a, "--reps") ? "0" : "1",
                        max, val);
                return 2;
            }
            *(!strcmp(a, "-p") ? &n_pp : !strcmp(a, "-n") ? &n_tg : !strcmp(a, "--reps") ? &reps : &n_depth) = (int)v;
            i++;
        } else if (!strcmp(a, "-d")) {
            device = val;
            i++;
        } else if (!strcmp(a, "-ctk") || !strcmp(a, "-ctv")) {
            enum ggml_type t;
            if (htp_model_kv_type_parse(val, &t) != 0) {
                fprintf(stderr,
                        "model: %s: '%s' is not a KV cache type (f32 f16 bf16 q8_0 q4_0 q4_1 iq4_nl q5_0 q5_1)\n", a,
                        val);
                return 2;
            }
            if (!g_bm_cache.kv_set) {
                g_bm_cache.type_k = g_bm_cache.type_v = GGML_TYPE_F16;
                g_bm_cache.kv_set                     = true;
            }
            *(!strcmp(a, "-ctk") ? &g_bm_cache.type_k : &g_bm_cache.type_v) = t;
            i++;
        } else if (!strcmp(a, "-fa")) {
            if (htp_model_flash_attn_parse(val, &g_bm_cache.flash_attn) != 0) {
                fprintf(stderr, "model: -fa wants on, off or auto, got '%s'\n", val);
                return 2;
            }
            g_bm_cache.flash_attn_set = true;
            i++;
        } else {
            bm_usage();
            return 2;
        }
    }
    if (n_pp == 0 && n_tg == 0) {
        fprintf(stderr, "model: nothing to measure (-p 0 -n 0)\n");
        return 2;
    }

    llama_log_set(bm_log_cb, &g_bm_log);
    llama_backend_init();
    char path[1200];
    if (model) {
        snprintf(path, sizeof path, "%s", model);
    } else if (bm_model_path(arch, preset, type, path, sizeof path) != 0) {
        return 1;
    }
    uint64_t wbytes = 0, fbytes = 0;
    if (bm_bytes_per_token(path, &wbytes, &fbytes) != 0) {
        fprintf(stderr, "model: cannot read %s\n", path);
        return 1;
    }

    const int      threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    struct bm_side h, c;
    struct bm_bw   bw = {.buf = n_tg > 0 ? bench_membw_open((size_t)512 << 20) : NULL, .wbytes = (double)wbytes};
    const int      rc = bm_run(path, device, n_pp, n_tg, n_depth, reps, &h, &c, &bw);
    bench_membw_close(bw.buf);
    llama_backend_free();
    if (rc != 0) {
        return 1;
    }

    // Host time per generated token (HTP).
    const double tok         = h.tg_tokens > 0 ? h.tg_tokens : 1;
    const double wall_us     = h.tg_ms_per_token * 1e3;
    const double host_us     = h.host_us / tok;
    const double npu_us      = h.npu_us / tok;
    const bool   have_npu    = h.npu_batches > 0;
    const double idle_us     = wall_us - npu_us;  // the NPU waits for the host
    const double gpt         = h.graphs / tok;
    const double hit_rate    = h.graphs ? (double)h.cache_hits / h.graphs : 0.0;
    const double replay_rate = h.graphs ? (double)h.replays / h.graphs : 0.0;
    const double membw       = bw.best;
    const double best_h      = membw > 0 ? h.tg_tps * wbytes / membw : NAN;
    const double best_c      = membw > 0 ? c.tg_tps * wbytes / membw : NAN;
    // The read ceiling: the best membw of the run, or what either decode
    // read, if more (then membw's loop is not the machine's best).
    const double dec_h = h.tg_tps * wbytes, dec_c = c.tg_tps * wbytes;
    const double ceiling = membw > dec_h ? (membw > dec_c ? membw : dec_c) : (dec_h > dec_c ? dec_h : dec_c);

    if (json) {
        printf(
            "{\"model\": \"%s\", \"device\": \"%s\", \"threads\": %d, \"pp\": %d, \"tg\": %d, \"depth\": %d, "
            "\"reps\": %d, ",
            path, device, threads, n_pp, n_tg, n_depth, reps);
        printf("\"model_bytes\": %llu, \"weight_bytes_per_token\": %llu, ", (unsigned long long)fbytes,
               (unsigned long long)wbytes);
        printf("\"htp\": {");
        json_num("pp_tps", h.pp_tps, n_pp > 0, ", ");
        json_num("tg_tps", h.tg_tps, n_tg > 0, ", ");
        printf("\"splits_pp\": %d, \"splits_tg\": %d, ", h.splits_pp, h.splits_tg);
        if (h.census_ok) {
            printf(
                "\"tg_nodes\": %d, \"tg_nodes_on_cpu\": %d, \"tg_attn_nodes\": %d, \"tg_attn_nodes_on_cpu\": %d, "
                "\"tg_cpu_ops\": \"%s\"}, ",
                h.census.nodes, h.census.on_cpu, h.census.attn, h.census.attn_on_cpu, h.census.cpu_ops);
        } else {
            printf("\"tg_nodes\": null}, ");
        }
        printf("\"cpu\": {");
        json_num("pp_tps", c.pp_tps, n_pp > 0, ", ");
        json_num("tg_tps", c.tg_tps, n_tg > 0, ", ");
        printf("\"splits_pp\": %d, \"splits_tg\": %d}, ", c.splits_pp, c.splits_tg);
        printf("\"ratio\": {");
        json_num("pp", h.pp_tps / c.pp_tps, n_pp > 0, ", ");
        json_num("tg", h.tg_tps / c.tg_tps, n_tg > 0, "}, ");
        printf("\"host\": {");
        json_num("wall_us_per_token", wall_us, n_tg > 0, ", ");
        json_num("backend_us_per_token", host_us, n_tg > 0, ", ");
        json_num("backend_fraction", host_us / wall_us, n_tg > 0, ", ");
        json_num("graphs_per_token", gpt, n_tg > 0, ", ");
        json_num("ops_per_token", h.ops / tok, n_tg > 0, ", ");
        json_num("cache_hit_rate", hit_rate, n_tg > 0, ", ");
        json_num("replay_rate", replay_rate, n_tg > 0, ", ");
        json_num("npu_busy_us_per_token", npu_us, have_npu, ", ");
        json_num("npu_idle_us_per_token", idle_us, have_npu, ", ");
        json_num("npu_idle_fraction", idle_us / wall_us, have_npu, "}, ");
        json_num("membw_gbps", membw / 1e9, membw > 0, ", ");
        json_num("tg_membw_fraction_htp", bw.frac[0], n_tg > 0, ", ");
        json_num("tg_membw_fraction_cpu", bw.frac[1], n_tg > 0, ", ");
        json_num("tg_membw_fraction_best_htp", best_h, n_tg > 0 && membw > 0, ", ");
        json_num("tg_membw_fraction_best_cpu", best_c, n_tg > 0 && membw > 0, ", ");
        json_num("read_ceiling_gbps", ceiling / 1e9, n_tg > 0, ", ");
        json_num("tg_ceiling_fraction_htp", dec_h / ceiling, n_tg > 0, ", ");
        json_num("tg_ceiling_fraction_cpu", dec_c / ceiling, n_tg > 0, "}\n");
        return 0;
    }

    printf("model: %s\n", path);
    printf("       %.1f MiB of tensors; a generated token reads %.1f MiB of weights\n", fbytes / 1048576.0,
           wbytes / 1048576.0);
    printf("%d CPU thread(s), median of %d repetition(s)\n\n", threads, reps);
    printf("%-8s %12s %12s %8s\n", "", device, "CPU", "HTP/CPU");
    if (n_pp > 0) {
        char lbl[32];
        if (n_depth > 0) {
            snprintf(lbl, sizeof lbl, "pp%d@d%d", n_pp, n_depth);
        } else {
            snprintf(lbl, sizeof lbl, "pp%d", n_pp);
        }
        printf("%-8s %10.2f/s %10.2f/s %8.2f\n", lbl, h.pp_tps, c.pp_tps, h.pp_tps / c.pp_tps);
    }
    if (n_tg > 0) {
        char lbl[32];
        if (n_depth > 0) {
            snprintf(lbl, sizeof lbl, "tg%d@d%d", n_tg, n_depth);
        } else {
            snprintf(lbl, sizeof lbl, "tg%d", n_tg);
        }
        printf("%-8s %10.2f/s %10.2f/s %8.2f\n", lbl, h.tg_tps, c.tg_tps, h.tg_tps / c.tg_tps);
    }
    printf("splits   %5d / %-5d %5d / %-5d  (prompt graph / 1-token graph)\n", h.splits_pp, h.splits_tg, c.splits_pp,
           c.splits_tg);
    if (h.census_ok) {
        printf("1-token graph on %s: %d compute nodes, %d on the CPU%s%s; attention nodes %d, %d on the CPU\n", device,
               h.census.nodes, h.census.on_cpu, h.census.on_cpu ? ": " : "", h.census.cpu_ops, h.census.attn,
               h.census.attn_on_cpu);
    }
    printf("\n");
    if (n_tg > 0) {
        printf("per generated token on %s: %.0f us wall\n", device, wall_us);
        printf(
            "  host work in the backend (graph_compute less its NPU waits): %.1f us = %.2f%% of the token; %.2f "
            "graph(s), %.0f ops, "
            "node cache hits %.0f%%, batches replayed %.0f%%\n",
            host_us, 100.0 * host_us / wall_us, gpt, h.ops / tok, 100.0 * hit_rate, 100.0 * replay_rate);
        if (have_npu) {
            printf("  NPU busy (profile): %.0f us; NPU waiting for the host: %.0f us = %.2f%% of the token\n", npu_us,
                   idle_us, 100.0 * idle_us / wall_us);
        } else {
            printf("  (GGML_HEXAGON_PROFILE=1 adds the NPU's busy time and so the host's share of the token)\n");
        }
        printf("decode vs read bandwidth (all cores) measured around each repetition: %s %.1f%%, CPU %.1f%%\n", device,
               100.0 * bw.frac[0], 100.0 * bw.frac[1]);
        printf("  vs the best measurement of the run (%.2f GB/s): %s %.1f%%, CPU %.1f%%\n", membw / 1e9, device,
               100.0 * best_h, 100.0 * best_c);
        printf("  vs the read ceiling (%.2f GB/s, the larger of that and either decode): %s %.1f%%, CPU %.1f%%\n",
               ceiling / 1e9, device, 100.0 * dec_h / ceiling, 100.0 * dec_c / ceiling);
    }
    return 0;
}
