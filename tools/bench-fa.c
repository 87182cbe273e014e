// bench-fa: FLASH_ATTN_EXT as a llama.cpp decoder runs it, by KV-cache type,
// on an HTP device and on ggml-cpu in the same run.
//
//   htp-bench fa [--kv 512,1024,2048,4096] [--types f16,q8_0,q4_0] [-n 1]
//                [--head 64] [--heads 32] [--kv-heads 8] [--layers 16]
//                [--reps N] [--stat median|min] [-d HTP0] [--json]
//
// The defaults are a 1B llama's attention in decode (head size 64, 32 query
// heads over 8 KV heads, one token). Each layer has its own K and V caches
// ([head, kv-heads, kv] of the type, viewed as llama.cpp does:
// permute(0, 2, 1, 3)), query [head, heads, n] F32 permuted the same way, an
// F16 mask with every entry visible, scale 1 / sqrt(head). A measurement is one
// graph of one FLASH_ATTN_EXT a layer, timed as a whole and divided by the
// layers; the caches of all layers together outgrow the caches at long kv,
// as a decode's do. HTP and CPU (all cores) are timed alternately, each after
// an idle pause and one untimed graph of its own (as bench-matmul.c), the
// median of the reps each (--stat min: the fastest, the less disturbed
// figure on a machine others share). KV GB/s = bytes of one layer's K and V / time.

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-htp.h"
#include "ggml.h"

#define FA_MAX_LAYERS 64
#define FA_SETTLE_MS  20

struct fa_shape {
    int64_t head, heads, kv_heads, kv, n;
};

struct fa_case {
    ggml_backend_t        backend;
    struct ggml_context * ctx;
    ggml_backend_buffer_t buf;
    struct ggml_cgraph *  gf;
    struct ggml_tensor *  first;
    int                   layers;
};

static void fa_fill(struct ggml_tensor * t, float lo, float hi) {
    const int64_t n  = ggml_nelements(t);
    float *       f  = malloc(sizeof(float) * (size_t)n);
    void *        q  = malloc(ggml_nbytes(t));
    const float   sp = hi - lo;
    for (int64_t i = 0; i < n; i++) {
        f[i] = lo + sp * (float)rand() / (float)RAND_MAX;
    }
    ggml_quantize_chunk(t->type, f, q, 0, n / t->ne[0], t->ne[0], NULL);
    ggml_backend_tensor_set(t, q, 0, ggml_nbytes(t));
    free(f);
    free(q);
}

static int fa_setup(struct fa_case * c, ggml_backend_t backend, enum ggml_type type, const struct fa_shape * sh,
                    int layers) {
    memset(c, 0, sizeof *c);
    c->backend                 = backend;
    c->layers                  = layers;
    const size_t            nt = (size_t)layers * 12 + 8;
    struct ggml_init_params ip = {nt * ggml_tensor_overhead() + ggml_graph_overhead_custom(nt, false), NULL, true};
    c->ctx                     = ggml_init(ip);
    if (!c->ctx) {
        return -1;
    }
    struct ggml_tensor * kc[FA_MAX_LAYERS], *vc[FA_MAX_LAYERS], *qc[FA_MAX_LAYERS];
    struct ggml_tensor * mask = ggml_new_tensor_2d(c->ctx, GGML_TYPE_F16, sh->kv, sh->n);
    c->gf                     = ggml_new_graph_custom(c->ctx, nt, false);
    for (int l = 0; l < layers; l++) {
        kc[l]                  = ggml_new_tensor_3d(c->ctx, type, sh->head, sh->kv_heads, sh->kv);
        vc[l]                  = ggml_new_tensor_3d(c->ctx, type, sh->head, sh->kv_heads, sh->kv);
        qc[l]                  = ggml_new_tensor_3d(c->ctx, GGML_TYPE_F32, sh->head, sh->heads, sh->n);
        struct ggml_tensor * o = ggml_flash_attn_ext(
            c->ctx, ggml_permute(c->ctx, qc[l], 0, 2, 1, 3), ggml_permute(c->ctx, kc[l], 0, 2, 1, 3),
            ggml_permute(c->ctx, vc[l], 0, 2, 1, 3), mask, 1.0f / sqrtf((float)sh->head), 0.0f, 0.0f);
        ggml_flash_attn_ext_set_prec(o, GGML_PREC_F32);
        c->first = c->first ? c->first : o;
        ggml_build_forward_expand(c->gf, o);
    }
    c->buf = ggml_backend_alloc_ctx_tensors(c->ctx, backend);
    if (!c->buf) {
        return -1;
    }
    srand(1);
    ggml_backend_tensor_memset(mask, 0, 0, ggml_nbytes(mask));  // fp16 zeros: every entry visible
    for (int l = 0; l < layers; l++) {
        fa_fill(kc[l], -1.0f, 1.0f);
        fa_fill(vc[l], -1.0f, 1.0f);
        fa_fill(qc[l], -1.0f, 1.0f);
    }
    return 0;
}

static void fa_free(struct fa_case * c) {
    ggml_backend_buffer_free(c->buf);
    ggml_free(c->ctx);
}

static void fa_settle(void) {
    const struct timespec ts = {0, FA_SETTLE_MS * 1000000L};
    nanosleep(&ts, NULL);
}

// One compute of the graph, in ns per layer.
static double fa_once(struct fa_case * c) {
    const int64_t t0 = bench_now_ns();
    ggml_backend_graph_compute(c->backend, c->gf);
    ggml_backend_synchronize(c->backend);
    return (double)(bench_now_ns() - t0) / c->layers;
}

static double fa_min(const double * v, int n) {
    double m = v[0];
    for (int i = 1; i < n; i++) {
        m = v[i] < m ? v[i] : m;
    }
    return m;
}

static int fa_parse_list(const char * s, int64_t * out, int max) {
    int n = 0;
    while (*s && n < max) {
        char * end;
        long   v = strtol(s, &end, 10);
        if (end == s || v < 1 || (*end && *end != ',')) {
            return -1;
        }
        out[n++] = v;
        s        = *end == ',' ? end + 1 : end;
    }
    return n;
}

int bench_mode_fa(int argc, char ** argv) {
    int64_t         kvs[16] = {512, 1024, 2048, 4096};
    int             n_kvs = 4, reps = 5, json = 0, layers = 16;
    struct fa_shape sh    = {64, 32, 8, 0, 1};
    const char *    types = "f16,q8_0,q4_0", *devname = "HTP0", *stat = "median";
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--kv") && i + 1 < argc) {
            n_kvs = fa_parse_list(argv[++i], kvs, 16);
        } else if (!strcmp(argv[i], "--types") && i + 1 < argc) {
            types = argv[++i];
        } else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
            sh.n = atoll(argv[++i]);
        } else if (!strcmp(argv[i], "--head") && i + 1 < argc) {
            sh.head = atoll(argv[++i]);
        } else if (!strcmp(argv[i], "--heads") && i + 1 < argc) {
            sh.heads = atoll(argv[++i]);
        } else if (!strcmp(argv[i], "--kv-heads") && i + 1 < argc) {
            sh.kv_heads = atoll(argv[++i]);
        } else if (!strcmp(argv[i], "--layers") && i + 1 < argc) {
            layers = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--stat") && i + 1 < argc) {
            stat = argv[++i];
        } else if (!strcmp(argv[i], "-d") && i + 1 < argc) {
            devname = argv[++i];
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else {
            fprintf(stderr, "fa: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    if (n_kvs < 1 || reps < 1 || layers < 1 || layers > FA_MAX_LAYERS || sh.n < 1 || sh.head < 1 || sh.kv_heads < 1 ||
        sh.heads < 1 || sh.heads % sh.kv_heads != 0) {
        fprintf(stderr, "fa: bad --kv / --reps / --layers (1..%d) / -n / --head / --heads / --kv-heads\n",
                FA_MAX_LAYERS);
        return 2;
    }

    ggml_backend_register(ggml_backend_htp_reg());
    ggml_backend_dev_t hdev = ggml_backend_dev_by_name(devname);
    ggml_backend_t     htp  = hdev ? ggml_backend_dev_init(hdev, NULL) : NULL;
    ggml_backend_t     cpu  = ggml_backend_cpu_init();
    if (!htp || !cpu) {
        fprintf(stderr, "fa: cannot initialise %s and CPU\n", devname);
        return 1;
    }
    const int n_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    ggml_backend_cpu_set_n_threads(cpu, n_threads);

    if (json) {
        printf(
            "{\"head\": %lld, \"heads\": %lld, \"kv_heads\": %lld, \"n\": %lld, \"layers\": %d, \"threads\": %d, "
            "\"reps\": %d, \"stat\": \"%s\", \"results\": [",
            (long long)sh.head, (long long)sh.heads, (long long)sh.kv_heads, (long long)sh.n, layers, n_threads, reps,
            stat);
    } else {
        printf(
            "FLASH_ATTN_EXT, %s vs CPU (%d threads): head %lld, %lld heads / %lld KV heads, n %lld; us per op "
            "(%s of %d, graphs of %d layers), KV GB/s, ratio CPU time / HTP time\n",
            devname, n_threads, (long long)sh.head, (long long)sh.heads, (long long)sh.kv_heads, (long long)sh.n, stat,
            reps, layers);
        printf("%-6s %6s %10s %10s %8s %8s %8s\n", "type", "kv", "HTP us", "CPU us", "HTP GB/s", "CPU GB/s", "ratio");
    }
    int      first = 1, rc = 0;
    char     list[256];
    double * th = malloc(sizeof(double) * (size_t)reps);
    double * tc = malloc(sizeof(double) * (size_t)reps);
    snprintf(list, sizeof list, "%s", types);
    for (char * tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        const enum ggml_type type = bench_type_by_name(tok);
        if (type == GGML_TYPE_COUNT || sh.head % ggml_blck_size(type) != 0) {
            fprintf(stderr, "fa: unknown type '%s' or head size not whole blocks of it\n", tok);
            rc = 2;
            continue;
        }
        for (int i = 0; i < n_kvs; i++) {
            sh.kv = kvs[i];
            struct fa_case hc, cc;
            const int      hok = fa_setup(&hc, htp, type, &sh, layers) == 0 && ggml_backend_supports_op(htp, hc.first);
            if (fa_setup(&cc, cpu, type, &sh, layers) != 0) {
                fprintf(stderr, "fa: cannot set up %s kv %lld\n", tok, (long long)sh.kv);
                fa_free(&hc);
                fa_free(&cc);
                rc = 1;
                continue;
            }
            if (hok) {
                fa_once(&hc);  // warm-up: first touch
            }
            fa_once(&cc);
            for (int r = 0; r < reps; r++) {
                if (hok) {
                    fa_settle();
                    fa_once(&hc);
                    th[r] = fa_once(&hc);
                }
                fa_settle();
                fa_once(&cc);
                tc[r] = fa_once(&cc);
            }
            const int    use_min  = !strcmp(stat, "min");
            const double htp_ns   = !hok ? 0 : use_min ? fa_min(th, reps) : bench_median_f64(th, reps);
            const double cpu_ns   = use_min ? fa_min(tc, reps) : bench_median_f64(tc, reps);
            const double kv_bytes = 2.0 * (double)ggml_row_size(type, sh.head) * (double)(sh.kv_heads * sh.kv);
            if (json) {
                printf(
                    "%s{\"type\": \"%s\", \"kv\": %lld, \"htp_us\": %.2f, \"cpu_us\": %.2f, \"htp_kv_gbps\": %.2f, "
                    "\"cpu_kv_gbps\": %.2f, \"ratio\": %.3f}",
                    first ? "" : ", ", ggml_type_name(type), (long long)sh.kv, htp_ns / 1e3, cpu_ns / 1e3,
                    htp_ns > 0 ? kv_bytes / htp_ns : 0, kv_bytes / cpu_ns, htp_ns > 0 ? cpu_ns / htp_ns : 0);
                first = 0;
            } else if (hok) {
                printf("%-6s %6lld %10.1f %10.1f %8.1f %8.1f %7.2fx\n", ggml_type_name(type), (long long)sh.kv,
                       htp_ns / 1e3, cpu_ns / 1e3, kv_bytes / htp_ns, kv_bytes / cpu_ns, cpu_ns / htp_ns);
            } else {
                printf("%-6s %6lld %10s %10.1f %8s %8.1f %8s\n", ggml_type_name(type), (long long)sh.kv, "unsupported",
                       cpu_ns / 1e3, "-", kv_bytes / cpu_ns, "-");
            }
            fflush(stdout);
            fa_free(&hc);
            fa_free(&cc);
        }
    }
    if (json) {
        printf("]}\n");
    }
    free(th);
    free(tc);
    ggml_backend_free(htp);
    ggml_backend_free(cpu);
    return rc;
}
