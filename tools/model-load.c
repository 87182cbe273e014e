// model-load.c: loading a GGUF with libllama onto one ggml device (or the CPU
// alone) for htp-run, the benches and the tests, and reading libllama's log.

#include "model-load.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "ggml-backend.h"
#include "ggml-htp.h"

static pthread_once_t htp_once = PTHREAD_ONCE_INIT;

static void register_htp(void) {
    if (ggml_backend_reg_by_name("HTP") == NULL) {
        ggml_backend_register(ggml_backend_htp_reg());
    }
}

void htp_model_register_htp(void) {
    pthread_once(&htp_once, register_htp);
}

// p's KV cache types and flash attention, where it sets them, into cp.
static void cache_settings(const struct htp_model_load_params * p, struct llama_context_params * cp) {
    if (p->kv_set) {
        cp->type_k = p->type_k;
        cp->type_v = p->type_v;
    }
    if (p->flash_attn_set) {
        cp->flash_attn_type = p->flash_attn;
    }
}

struct llama_context * htp_model_new_context(const struct htp_model_load_params * p, struct llama_model * model) {
    struct llama_context_params cp    = llama_context_default_params();
    uint32_t                    n_ctx = p->n_ctx;
    if (n_ctx == 0) {
        const int32_t train = llama_model_n_ctx_train(model);
        n_ctx               = train > 0 && train < 512 ? (uint32_t)train : 512;
    }
    const long cpus    = sysconf(_SC_NPROCESSORS_ONLN);
    const int  threads = p->n_threads > 0 ? p->n_threads : (cpus < 1 ? 1 : (int)cpus);
    cp.n_ctx           = n_ctx;
    cp.n_batch         = p->n_batch ? p->n_batch : n_ctx;
    cp.n_ubatch        = cp.n_batch < 512 ? cp.n_batch : 512;
    cp.n_threads       = threads;
    cp.n_threads_batch = threads;
    cp.no_perf         = false;
    cache_settings(p, &cp);
    struct llama_context * ctx = llama_init_from_model(model, cp);
    if (!ctx) {
        fprintf(stderr, "error: cannot create a context for %s\n", p->path);
    }
    return ctx;
}

int htp_model_open(const struct htp_model_load_params * p, struct llama_model ** model_out,
                   struct llama_context ** ctx_out) {
    struct llama_model *   model   = NULL;
    struct llama_context * ctx     = NULL;
    ggml_backend_dev_t     devs[2] = {NULL, NULL};

    *model_out = NULL;
    *ctx_out   = NULL;
    if (access(p->path, R_OK) != 0) {
        fprintf(stderr, "error: cannot read model %s: %s\n", p->path, strerror(errno));
        return -1;
    }

    struct llama_model_params mp   = llama_model_default_params();
    mp.progress_callback           = p->progress;
    mp.progress_callback_user_data = p->progress_user;
    mp.use_extra_bufts             = !p->cpu_plain;
    if (p->device) {
        htp_model_register_htp();
        devs[0] = ggml_backend_dev_by_name(p->device);
        if (!devs[0]) {
            fprintf(stderr, "error: no ggml device named %s; devices:", p->device);
            for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
                fprintf(stderr, " %s", ggml_backend_dev_name(ggml_backend_dev_get(i)));
            }
            fprintf(stderr, "\n");
            return -1;
        }
        mp.devices      = devs;
        mp.n_gpu_layers = 999;
    } else {
        // An empty device list: no GPU-type device (HTP may be registered in
        // this process) takes any layer, exactly as without a device list
        // when the machine has none.
        mp.devices      = devs;
        mp.n_gpu_layers = 0;
    }

    model = llama_model_load_from_file(p->path, mp);
    if (!model) {
        fprintf(stderr, "error: libllama cannot load model %s (its log says why)\n", p->path);
        goto fail;
    }

    ctx = htp_model_new_context(p, model);
    if (!ctx) {
        goto fail;
    }
    *model_out = model;
    *ctx_out   = ctx;
    return 0;

fail:
    if (model) {
        llama_model_free(model);
    }
    return -1;
}

int htp_model_kv_type_parse(const char * name, enum ggml_type * type) {
    static const enum ggml_type kv[] = {GGML_TYPE_F32,    GGML_TYPE_F16,  GGML_TYPE_BF16,
                                        GGML_TYPE_Q8_0,   GGML_TYPE_Q4_0, GGML_TYPE_Q4_1,
                                        GGML_TYPE_IQ4_NL, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1};
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
        if (strcasecmp(name, ggml_type_name(kv[i])) == 0) {
            *type = kv[i];
            return 0;
        }
    }
    return -1;
}

int htp_model_flash_attn_parse(const char * name, enum llama_flash_attn_type * fa) {
    if (strcmp(name, "on") == 0) {
        *fa = LLAMA_FLASH_ATTN_TYPE_ENABLED;
    } else if (strcmp(name, "off") == 0) {
        *fa = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    } else if (strcmp(name, "auto") == 0) {
        *fa = LLAMA_FLASH_ATTN_TYPE_AUTO;
    } else {
        return -1;
    }
    return 0;
}

// ---------------------------------------------------------------- census

struct census_ctx {
    struct htp_model_census * out;
    int                       counts[GGML_OP_COUNT];  // CPU nodes per op
};

// The scheduler asks, node by node, whether we want its data; we never do
// (so it computes each split whole) and only look at where the node lives.
static bool census_eval(struct ggml_tensor * t, bool ask, void * user) {
    struct census_ctx * c = user;
    if (!ask) {
        return true;
    }
    switch (t->op) {
        case GGML_OP_NONE:
        case GGML_OP_VIEW:
        case GGML_OP_RESHAPE:
        case GGML_OP_PERMUTE:
        case GGML_OP_TRANSPOSE:
            return false;
        default:
            break;
    }
    const bool cpu =
        !t->buffer || strncmp(ggml_backend_buft_name(ggml_backend_buffer_get_type(t->buffer)), "HTP", 3) != 0;
    const bool attn = t->op == GGML_OP_FLASH_ATTN_EXT || t->op == GGML_OP_SOFT_MAX;
    c->out->nodes++;
    c->out->on_cpu += cpu;
    c->out->attn += attn;
    c->out->attn_on_cpu += attn && cpu;
    c->counts[t->op] += cpu;
    return false;
}

int htp_model_census(const struct htp_model_load_params * p, struct llama_model * model,
                     struct htp_model_census * out) {
    struct census_ctx c;
    memset(&c, 0, sizeof c);
    memset(out, 0, sizeof *out);
    c.out = out;

    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx                       = 64;
    cp.n_batch = cp.n_ubatch = 1;
    cp.n_threads = cp.n_threads_batch = p->n_threads > 0 ? p->n_threads : 1;
    cp.cb_eval                        = census_eval;
    cp.cb_eval_user_data              = &c;
    cache_settings(p, &cp);
    struct llama_context * ctx = llama_init_from_model(model, cp);
    if (!ctx) {
        return -1;
    }
    llama_token tok = 1;
    const int   rc  = llama_decode(ctx, llama_batch_get_one(&tok, 1));
    llama_free(ctx);
    size_t len = 0;
    for (int op = 0; op < GGML_OP_COUNT && rc == 0; op++) {
        if (c.counts[op] > 0 && len < sizeof out->cpu_ops) {
            const int k = snprintf(out->cpu_ops + len, sizeof out->cpu_ops - len, "%s%s x%d", len ? ", " : "",
                                   ggml_op_name((enum ggml_op)op), c.counts[op]);
            len += k > 0 ? (size_t)k : 0;
        }
    }
    return rc == 0 ? 0 : -1;
}

enum ggml_log_level htp_log_lines_feed(struct htp_log_lines * ll, enum ggml_log_level level, const char * text,
                                       void (*on_line)(void * user, const char * line), void * user) {
    if (level == GGML_LOG_LEVEL_CONT) {
        level = ll->last;
    }
    ll->last = level;
    for (const char * p = text; *p; p++) {
        if (*p == '\n') {
            ll->line[ll->len] = '\0';
            on_line(user, ll->line);
            ll->len = 0;
        } else if (ll->len + 1 < sizeof ll->line) {
            ll->line[ll->len++] = *p;
        }
    }
    return level;
}

int htp_log_graph_splits(const char * line, int * pp, int * tg) {
    const char * at = strstr(line, "graph splits = ");
    int          p = -1, bs = 0, t = -1;
    const int    n = at ? sscanf(at, "graph splits = %d (with bs=%d), %d", &p, &bs, &t) : 0;
    if (n < 1) {
        return 0;
    }
    *pp = p;
    *tg = n == 3 ? t : p;
    return 1;
}
