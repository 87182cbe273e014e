// htp-run: the main job. Loads a GGUF model with libllama, offloads every
// layer to one HTP device, generates text from a prompt and prints how fast
// the prompt and the generation went and how many graph splits the context
// has (a split is a hand-over between the device and the CPU).
//
// With no -m it runs the default model, models/default.gguf at the repository
// root, and writes it first if it is missing or was made with other settings
// (the generator's description is stored as general.name and compared).

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gguf.h"
#include "model-gen.h"
#include "model-feed.h"
#include "model-load.h"

// The default model: change these to change what `make run` runs.
#define DEFAULT_MODEL_FILE   "default.gguf"
#define DEFAULT_MODEL_PRESET "small"
#define DEFAULT_MODEL_TYPE   GGML_TYPE_F16  // quantized weights on HTP come later
#define DEFAULT_MODEL_SEED   42

#define DEFAULT_PROMPT "Once upon a time"

struct run_opts {
    const char *                 model;  // NULL = the default model
    const char *                 prompt;
    const char *                 device;  // NULL with --cpu
    int                          n_predict;
    int                          n_threads;
    int                          n_ctx;
    uint32_t                     seed;
    float                        temp;
    bool                         verbose;
    struct htp_model_load_params cache;  // KV cache types and flash attention (-ctk, -ctv, -fa)
};

static void usage(FILE * f) {
    fprintf(f,
            "usage: htp-run [options]\n"
            "  -m FILE     GGUF model (default: models/" DEFAULT_MODEL_FILE
            " in the repository, written on first use)\n"
            "  -p TEXT     prompt (default \"" DEFAULT_PROMPT
            "\")\n"
            "  -n N        tokens to generate (default 32)\n"
            "  -d DEV      HTP device (default HTP0)\n"
            "  -t N        CPU threads (default: all CPUs)\n"
            "  -c N        context size (default 512)\n"
            "  --seed N    sampling seed (default 42)\n"
            "  --temp T    sampling temperature, 0 = greedy (default 0)\n"
            "  -ctk TYPE   K cache type: f16 (default) f32 bf16 q8_0 q4_0 q4_1 iq4_nl q5_0 q5_1\n"
            "  -ctv TYPE   V cache type (the same choice)\n"
            "  -fa MODE    flash attention: on, off or auto (default auto)\n"
            "  --cpu       run on the CPU only, for comparison\n"
            "  -v          show libllama's and ggml's log\n"
            "  -h, --help\n");
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

// ---------------------------------------------------------------- log
//
// libllama and ggml log through one callback: warnings and errors go to
// stderr (everything with -v); the "graph splits" line is kept for the report.

struct log_state {
    bool                verbose;
    enum ggml_log_level last;  // level of the message a CONT piece continues
    char                splits[128];
};

static void log_cb(enum ggml_log_level level, const char * text, void * user) {
    struct log_state * ls = user;
    if (level == GGML_LOG_LEVEL_CONT) {
        level = ls->last;
    }
    ls->last        = level;
    const char * at = strstr(text, "graph splits = ");
    if (at) {
        snprintf(ls->splits, sizeof(ls->splits), "%s", at + strlen("graph splits = "));
        ls->splits[strcspn(ls->splits, "\n")] = '\0';
    }
    if (ls->verbose || level == GGML_LOG_LEVEL_WARN || level == GGML_LOG_LEVEL_ERROR) {
        fputs(text, stderr);
    }
}

// A progress bar on stderr: redrawn in place on a terminal, quarters in a log.
struct bar {
    const char * label;
    int          last;  // percent drawn last, -1 before the first call
};

static bool load_progress(float p, void * user) {
    struct bar * b   = user;
    const int    pct = (int)(p * 100.0f + 0.5f);
    if (pct != b->last) {
        const int prev = b->last;
        b->last        = pct;
        if (isatty(2)) {  // a bar redrawn in place
            int fill = pct / 2;
            fprintf(stderr, "\r%s [%.*s%*s] %3d%%", b->label, fill,
                    "##################################################", 50 - fill, "", pct);
        } else {  // a log: the quarters passed, on one line
            if (prev < 0) {
                fprintf(stderr, "%s", b->label);
            }
            for (int q = prev < 0 ? 0 : prev / 25 + 1; q <= pct / 25; q++) {
                fprintf(stderr, " %d%%", q * 25);
            }
        }
        if (pct >= 100) {
            fprintf(stderr, "\n");
        }
    }
    return true;
}

static void write_progress(uint64_t done, uint64_t total, void * user) {
    load_progress(total ? (float)((double)done / (double)total) : 1.0f, user);
}

// ---------------------------------------------------------------- default model

// The repository root: two levels above the executable (build/bin/htp-run)
// if that is a checkout, else the source tree this binary was configured from.
static int repo_root(char * out, size_t size) {
    char    exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) {
        exe[n] = '\0';
        for (int up = 0; up < 3; up++) {  // strip htp-run, bin, build
            char * slash = strrchr(exe, '/');
            if (!slash) {
                break;
            }
            *slash = '\0';
        }
        char probe[PATH_MAX + 32];
        snprintf(probe, sizeof(probe), "%s/src/npu", exe);
        struct stat st;
        if (exe[0] && stat(probe, &st) == 0 && S_ISDIR(st.st_mode)) {
            snprintf(out, size, "%s", exe);
            return 0;
        }
    }
#ifdef HTP_SOURCE_DIR
    snprintf(out, size, "%s", HTP_SOURCE_DIR);
    return 0;
#else
    return -1;
#endif
}

// Finds (and writes, if missing or stale) the default model; path into out.
static int default_model(char * out, size_t size) {
    char root[PATH_MAX];
    if (repo_root(root, sizeof(root)) != 0) {
        fprintf(stderr, "error: cannot find the repository root for the default model; use -m\n");
        return -1;
    }
    char dir[PATH_MAX + 16];
    snprintf(dir, sizeof(dir), "%s/models", root);
    snprintf(out, size, "%s/%s", dir, DEFAULT_MODEL_FILE);

    struct htp_model_spec spec;
    htp_model_spec_preset(&spec, HTP_MODEL_ARCH_LLAMA, DEFAULT_MODEL_PRESET);
    spec.wtype = DEFAULT_MODEL_TYPE;
    spec.seed  = DEFAULT_MODEL_SEED;
    char want[160], have[160];
    htp_model_spec_describe(&spec, want, sizeof(want));

    if (access(out, F_OK) == 0) {
        if (htp_model_gguf_name(out, have, sizeof(have)) == 0 && strcmp(have, want) == 0) {
            return 0;
        }
        fprintf(stderr, "the default model %s is not \"%s\"; rewriting it\n", out, want);
    } else {
        fprintf(stderr, "writing the default model %s (%s) ...\n", out, want);
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "error: cannot create %s: %s\n", dir, strerror(errno));
        return -1;
    }
    struct bar   bar = {"writing", -1};
    const double t0  = now_s();
    if (htp_model_write(&spec, out, write_progress, &bar) != 0) {
        return -1;
    }
    fprintf(stderr, "wrote the default model in %.2f s\n", now_s() - t0);
    return 0;
}

// ---------------------------------------------------------------- generation

// The feed's report of a failed decode, before it recovers.
static void report_failure(void * user, int n_fed, const char * what) {
    (void)user;
    fprintf(stderr, "\nerror: %s after %d tokens; recreating the context and replaying them\n", what, n_fed);
}

static void print_piece(const struct llama_vocab * vocab, llama_token t) {
    char buf[256];
    int  n = llama_token_to_piece(vocab, t, buf, sizeof(buf), 0, false);
    if (n > 0) {
        fwrite(buf, 1, (size_t)n, stdout);
        fflush(stdout);
    }
}

static int run(const struct run_opts * o, struct log_state * ls) {
    char model_path[PATH_MAX + 64];
    if (o->model) {
        snprintf(model_path, sizeof(model_path), "%s", o->model);
    } else if (default_model(model_path, sizeof(model_path)) != 0) {
        return 1;
    }

    struct llama_model *   model = NULL;
    struct llama_context * ctx   = NULL;
    struct llama_sampler * smpl  = NULL;
    llama_token *          toks  = NULL;
    int                    rc    = 1;
    struct bar             bar   = {"loading", -1};

    struct htp_model_load_params lp = {0};
    lp.path                         = model_path;
    lp.device                       = o->device;
    lp.n_ctx                        = (uint32_t)o->n_ctx;
    lp.n_threads                    = o->n_threads;
    lp.type_k                       = o->cache.type_k;
    lp.type_v                       = o->cache.type_v;
    lp.kv_set                       = o->cache.kv_set;
    lp.flash_attn                   = o->cache.flash_attn;
    lp.flash_attn_set               = o->cache.flash_attn_set;
    lp.progress                     = load_progress;
    lp.progress_user                = &bar;
    const double t_load0            = now_s();
    if (htp_model_open(&lp, &model, &ctx) != 0) {
        goto done;
    }
    const double t_load = now_s() - t_load0;

    const struct llama_vocab * vocab = llama_model_get_vocab(model);
    char                       desc[128];
    llama_model_desc(model, desc, sizeof(desc));
    fprintf(stderr, "model: %s (%s, %.1f MiB, %.1f M params), loaded in %.2f s\n", model_path, desc,
            llama_model_size(model) / 1048576.0, llama_model_n_params(model) / 1e6, t_load);
    fprintf(stderr, "device: %s, %d thread(s), context %u\n", o->device ? o->device : "CPU", o->n_threads,
            llama_n_ctx(ctx));

    // Tokenize the prompt (with BOS).
    const int n_text = (int)strlen(o->prompt);
    int       n_max  = n_text + 8;
    toks             = malloc(sizeof(*toks) * (size_t)n_max);
    if (!toks) {
        fprintf(stderr, "error: out of memory\n");
        goto done;
    }
    int n_prompt = llama_tokenize(vocab, o->prompt, n_text, toks, n_max, true, false);
    if (n_prompt <= 0) {
        fprintf(stderr, "error: cannot tokenize the prompt\n");
        goto done;
    }
    const int n_ctx = (int)llama_n_ctx(ctx);
    if (n_prompt + o->n_predict > n_ctx) {
        fprintf(stderr, "error: prompt (%d tokens) + %d to generate exceed the context (%d); use -c\n", n_prompt,
                o->n_predict, n_ctx);
        goto done;
    }

    struct llama_sampler_chain_params sp = llama_sampler_chain_default_params();
    smpl                                 = llama_sampler_chain_init(sp);
    if (o->temp <= 0.0f) {
        llama_sampler_chain_add(smpl, llama_sampler_init_greedy());
    } else {
        llama_sampler_chain_add(smpl, llama_sampler_init_top_k(40));
        llama_sampler_chain_add(smpl, llama_sampler_init_top_p(0.95f, 1));
        llama_sampler_chain_add(smpl, llama_sampler_init_temp(o->temp));
        llama_sampler_chain_add(smpl, llama_sampler_init_dist(o->seed));
    }

    printf("%s", o->prompt);
    fflush(stdout);

    // Every decode goes through the feed: a failure (an NPU that died, say)
    // recreates the context and replays what was fed, then goes on.
    struct htp_feed feed;
    htp_feed_init(&feed, &lp, model, ctx);
    feed.on_failure = report_failure;
    ctx             = NULL;  // the feed's now

    // The prompt in one batch.
    double t0 = now_s();
    if (htp_feed_decode(&feed, toks, n_prompt) != 0) {
        fprintf(stderr, "\nerror: llama_decode failed on the prompt\n");
        htp_feed_free(&feed);
        goto done;
    }
    const double t_prompt = now_s() - t0;

    // Then one token at a time: sample, print, decode. The generation time is
    // sampling plus decoding, not printing.
    int    n_gen = 0;  // tokens decoded after the prompt
    double t_gen = 0.0;
    for (int i = 0; i < o->n_predict; i++) {
        t0            = now_s();
        llama_token t = llama_sampler_sample(smpl, feed.ctx, -1);
        t_gen += now_s() - t0;
        if (llama_vocab_is_eog(vocab, t)) {
            break;
        }
        print_piece(vocab, t);
        if (i + 1 < o->n_predict) {
            t0 = now_s();
            if (htp_feed_decode(&feed, &t, 1) != 0) {
                fprintf(stderr, "\nerror: llama_decode failed at token %d\n", i);
                htp_feed_free(&feed);
                goto done;
            }
            t_gen += now_s() - t0;
            n_gen++;
        }
    }
    printf("\n");
    fflush(stdout);

    fprintf(stderr, "prompt:     %4d tokens in %7.3f s, %8.2f tokens/s\n", n_prompt, t_prompt,
            t_prompt > 0 ? n_prompt / t_prompt : 0.0);
    fprintf(stderr, "generation: %4d tokens in %7.3f s, %8.2f tokens/s\n", n_gen, t_gen,
            t_gen > 0 ? n_gen / t_gen : 0.0);
    fprintf(stderr, "graph splits: %s\n", ls->splits[0] ? ls->splits : "(not reported)");
    if (feed.recoveries) {
        fprintf(stderr, "recovered:  %d time(s) from a failed decode\n", feed.recoveries);
    }
    htp_feed_free(&feed);
    rc = 0;

done:
    free(toks);
    if (smpl) {
        llama_sampler_free(smpl);
    }
    if (ctx) {
        llama_free(ctx);
    }
    if (model) {
        llama_model_free(model);
    }
    return rc;
}

int main(int argc, char ** argv) {
    struct run_opts o = {0};
    o.prompt          = DEFAULT_PROMPT;
    o.device          = "HTP0";
    o.n_predict       = 32;
    o.n_ctx           = 512;
    o.seed            = 42;

    for (int i = 1; i < argc; i++) {
        const char * a   = argv[i];
        const char * val = i + 1 < argc ? argv[i + 1] : NULL;
        char *       end = NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--cpu") == 0) {
            o.device = NULL;
        } else if (strcmp(a, "-v") == 0) {
            o.verbose = true;
        } else if (!val) {
            fprintf(stderr, "htp-run: unknown option or missing value: %s\n", a);
            usage(stderr);
            return 1;
        } else if (strcmp(a, "-m") == 0) {
            o.model = val;
            i++;
        } else if (strcmp(a, "-p") == 0) {
            o.prompt = val;
            i++;
        } else if (strcmp(a, "-d") == 0) {
            o.device = val;
            i++;
        } else if (strcmp(a, "-n") == 0 || strcmp(a, "-t") == 0 || strcmp(a, "-c") == 0 || strcmp(a, "--seed") == 0) {
            long v = strtol(val, &end, 10);
            if (!*val || *end || v < 0 || v > INT32_MAX || (strcmp(a, "-c") == 0 && v == 0)) {
                fprintf(stderr, "htp-run: %s wants a %s integer, got '%s'\n", a,
                        strcmp(a, "-c") == 0 ? "positive" : "non-negative", val);
                return 1;
            }
            if (strcmp(a, "-n") == 0) {
                o.n_predict = (int)v;
            } else if (strcmp(a, "-t") == 0) {
                o.n_threads = (int)v;
            } else if (strcmp(a, "-c") == 0) {
                o.n_ctx = (int)v;
            } else {
                o.seed = (uint32_t)v;
            }
            i++;
        } else if (strcmp(a, "-ctk") == 0 || strcmp(a, "-ctv") == 0) {
            enum ggml_type t;
            if (htp_model_kv_type_parse(val, &t) != 0) {
                fprintf(stderr,
                        "htp-run: %s: '%s' is not a KV cache type (f32 f16 bf16 q8_0 q4_0 q4_1 iq4_nl q5_0 q5_1)\n", a,
                        val);
                return 1;
            }
            if (!o.cache.kv_set) {
                o.cache.type_k = o.cache.type_v = GGML_TYPE_F16;
                o.cache.kv_set                  = true;
            }
            *(strcmp(a, "-ctk") == 0 ? &o.cache.type_k : &o.cache.type_v) = t;
            i++;
        } else if (strcmp(a, "-fa") == 0) {
            if (htp_model_flash_attn_parse(val, &o.cache.flash_attn) != 0) {
                fprintf(stderr, "htp-run: -fa wants on, off or auto, got '%s'\n", val);
                return 1;
            }
            o.cache.flash_attn_set = true;
            i++;
        } else if (strcmp(a, "--temp") == 0) {
            o.temp = strtof(val, &end);
            if (!*val || *end || !(o.temp >= 0.0f)) {
                fprintf(stderr, "htp-run: --temp wants a number >= 0, got '%s'\n", val);
                return 1;
            }
            i++;
        } else {
            fprintf(stderr, "htp-run: unknown option %s\n", a);
            usage(stderr);
            return 1;
        }
    }
    if (o.n_threads == 0) {
        long n      = sysconf(_SC_NPROCESSORS_ONLN);
        o.n_threads = n > 0 ? (int)n : 1;
    }

    struct log_state ls = {.verbose = o.verbose, .last = GGML_LOG_LEVEL_INFO};
    llama_log_set(log_cb, &ls);
    llama_backend_init();
    const int rc = run(&o, &ls);
    llama_backend_free();
    return rc;
}
