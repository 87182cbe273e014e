// model-load.c: loading a GGUF with libllama onto one ggml device (or the CPU
// alone) for htp-run, the benches and the tests, and reading libllama's log.

#include "model-load.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

struct llama_context * htp_model_new_context(const struct htp_model_load_params * p, struct llama_model * model) {
    struct llama_context_params cp    = llama_context_default_params();
    uint32_t                    n_ctx = p->n_ctx;
    if (n_ctx == 0) {
        const int32_t train = llama_model_n_ctx_train(model);
        n_ctx               = train > 0 && train < 512 ? (uint32_t)train : 512;
    }
    const long cpus            = sysconf(_SC_NPROCESSORS_ONLN);
    const int  threads         = p->n_threads > 0 ? p->n_threads : (cpus < 1 ? 1 : (int)cpus);
    cp.n_ctx                   = n_ctx;
    cp.n_batch                 = p->n_batch ? p->n_batch : n_ctx;
    cp.n_ubatch                = cp.n_batch < 512 ? cp.n_batch : 512;
    cp.n_threads               = threads;
    cp.n_threads_batch         = threads;
    cp.no_perf                 = false;
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
