// bench-matmul: MUL_MAT, weights [k, m] of a given type times F32
// activations [k, n], on an HTP device and on ggml-cpu in the same run.
//
//   htp-bench matmul [-m 4096 -k 14336 | --model 1b] [-n 1,8,512]
//                    [--types f16,q8_0,q4_0,q4_K] [--cache hot|cold|both]
//                    [--reps N] [-d HTP0] [--json]
//
// --model PRESET runs every distinct m x k of that preset's decoder (q, k/v,
// o, gate/up, down, the lm-head) instead of -m/-k.
//
// Both sides hold the weights the way a llama.cpp user's model does: in a
// weight buffer of the device (HTP: repacked into its tiled layout), and on the
// CPU in its repack buffer type when it has one for the type (the SIMD GEMM
// layout), with all cores.
//
// A measurement is one graph of R matmuls, each with its own output, timed
// as a whole and divided by R, as a model's layers run: the graph's round
// trip is spread over its ops as it is over a token's. The weights are
//   hot   one copy, read by all R matmuls (it stays in the caches when it fits)
//   cold  copies rotated through, together at least MM_COLD_BYTES (three
//         times a 32 MiB L3) but at most MM_MAX_COPIES of them, so each
//         matmul streams its weights from DRAM, as a decode does. Where the
//         L3 is larger, part of the set stays in it: compare the cold GB/s
//         with htp-bench membw's
// HTP and CPU are timed alternately, rep by rep, each after an idle pause
// (mm_settle); each takes the median of its reps, and --json adds the median
// and range of the reps' paired ratios (struct mm_result). GFLOPS = 2 m n k /
// time per matmul.

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
#include "model-gen.h"

#define MM_COLD_BYTES ((size_t)96 << 20)  // cold copies: at least 3 x a 32 MiB L3
#define MM_MAX_COPIES 64
#define MM_HOT_OPS    16  // matmuls per graph with one copy
#define MM_MIN_OPS    8   // and at least this many with copies
#define MM_SETTLE_MS  20  // idle before each timed graph (mm_settle)

struct mm_case {
    enum ggml_type        type;
    ggml_backend_t        backend;
    struct ggml_context * wctx, *xctx;
    ggml_backend_buffer_t wbuf, xbuf;
    struct ggml_tensor *  w[MM_MAX_COPIES];
    struct ggml_tensor *  x, *first_y;
    struct ggml_cgraph *  gf;
    int                   n_copies, n_ops;
};

// Allocate the weights where a llama.cpp user's CPU backend puts them: the
// first extra (repack) buffer type whose buffers make the CPU take the op,
// else the plain CPU buffer type, as llama.cpp's weight placement does.
static ggml_backend_buffer_t cpu_weight_alloc(struct ggml_context * wctx, struct ggml_tensor * op) {
    ggml_backend_dev_t                 dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    ggml_backend_reg_t                 reg = ggml_backend_dev_backend_reg(dev);
    ggml_backend_dev_get_extra_bufts_t get =
        (ggml_backend_dev_get_extra_bufts_t)ggml_backend_reg_get_proc_address(reg, "ggml_backend_dev_get_extra_bufts");
    for (ggml_backend_buffer_type_t * b = get ? get(dev) : NULL; b && *b; b++) {
        ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(wctx, *b);
        if (!buf) {
            continue;
        }
        ggml_backend_buffer_set_usage(buf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
        if (ggml_backend_dev_supports_op(dev, op)) {
            return buf;
        }
        ggml_backend_buffer_free(buf);
        for (struct ggml_tensor * t = ggml_get_first_tensor(wctx); t; t = ggml_get_next_tensor(wctx, t)) {
            t->buffer = NULL;
            t->data   = NULL;
        }
    }
    return ggml_backend_alloc_ctx_tensors_from_buft(wctx, ggml_backend_cpu_buffer_type());
}

// A graph of n_ops matmuls over n_copies weight copies (all holding wq).
static int mm_setup(struct mm_case * c, ggml_backend_t backend, int is_cpu, enum ggml_type type, int64_t m, int64_t k,
                    int64_t n, int n_copies, int n_ops, const void * wq, const float * xf) {
    memset(c, 0, sizeof *c);
    c->type                     = type;
    c->backend                  = backend;
    c->n_copies                 = n_copies;
    c->n_ops                    = n_ops;
    struct ggml_init_params wip = {(size_t)(n_copies + 1) * ggml_tensor_overhead(), NULL, true};
    struct ggml_init_params xip = {
        (size_t)(n_ops + 4) * ggml_tensor_overhead() + ggml_graph_overhead_custom((size_t)n_ops + 4, false), NULL,
        true};
    c->wctx = ggml_init(wip);
    c->xctx = ggml_init(xip);
    if (!c->wctx || !c->xctx) {
        return -1;
    }
    for (int i = 0; i < n_copies; i++) {
        c->w[i] = ggml_new_tensor_2d(c->wctx, type, k, m);
    }
    c->x  = ggml_new_tensor_2d(c->xctx, GGML_TYPE_F32, k, n);
    c->gf = ggml_new_graph_custom(c->xctx, (size_t)n_ops + 4, false);
    for (int i = 0; i < n_ops; i++) {
        struct ggml_tensor * y = ggml_mul_mat(c->xctx, c->w[i % n_copies], c->x);
        c->first_y             = c->first_y ? c->first_y : y;
        ggml_build_forward_expand(c->gf, y);
    }

    c->wbuf = is_cpu ? cpu_weight_alloc(c->wctx, c->first_y)
                     : ggml_backend_alloc_ctx_tensors_from_buft(c->wctx, ggml_backend_get_default_buffer_type(backend));
    c->xbuf = ggml_backend_alloc_ctx_tensors(c->xctx, backend);
    if (!c->wbuf || !c->xbuf) {
        return -1;
    }
    ggml_backend_buffer_set_usage(c->wbuf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    for (int i = 0; i < n_copies; i++) {
        ggml_backend_tensor_set(c->w[i], wq, 0, ggml_nbytes(c->w[i]));
    }
    ggml_backend_tensor_set(c->x, xf, 0, sizeof(float) * (size_t)(k * n));
    return 0;
}

static void mm_free(struct mm_case * c) {
    ggml_backend_buffer_free(c->wbuf);
    ggml_backend_buffer_free(c->xbuf);
    ggml_free(c->wctx);
    ggml_free(c->xctx);
}

// Before each timed graph: let the other side's idle threads go to sleep.
// ggml-cpu's OpenMP workers spin for milliseconds after a graph (libgomp's
// default spin count), and the NPU's helpers for up to one; on this
// machine's two cores, a graph timed right after the other side's shared its
// cores with those spinners (an HTP matmul read at 25 GB/s instead of 37).
// A user runs one side at a time, so each side is timed on a settled machine,
// after one untimed graph of its own: its threads awake, as in a decode.
static void mm_settle(void) {
    const struct timespec ts = {0, MM_SETTLE_MS * 1000000L};
    nanosleep(&ts, NULL);
}

// One compute of the graph, in ns per matmul.
static double mm_once(struct mm_case * c) {
    const int64_t t0 = bench_now_ns();
    ggml_backend_graph_compute(c->backend, c->gf);
    ggml_backend_synchronize(c->backend);
    return (double)(bench_now_ns() - t0) / c->n_ops;
}

static int parse_list(const char * s, int64_t * out, int max) {
    int n = 0;
    while (*s && n < max) {
        char * end;
        long   v = strtol(s, &end, 10);
        if (end == s || v < 1) {
            return -1;
        }
        out[n++] = v;
        s        = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') {
            return -1;
        }
    }
    return n;
}

struct mm_shape {
    int64_t      m, k;
    const char * what;  // the model's matrices of this shape
};

// The distinct m x k of a preset's llama decoder: q and o, k and v, gate and
// up, down, the lm-head (tied to the token embedding, vocabulary x n_embd).
static int mm_model_shapes(const char * preset, struct mm_shape * out, int max) {
    struct htp_model_spec spec;
    if (htp_model_spec_preset(&spec, HTP_MODEL_ARCH_LLAMA, preset) != 0) {
        return -1;
    }
    const int64_t         e = spec.n_embd, kv = (int64_t)spec.n_embd / spec.n_head * spec.n_head_kv;
    const struct mm_shape all[] = {
        {e, e, "attn q, o"},        {kv, e, "attn k, v"},         {spec.n_ff, e, "ffn gate, up"},
        {e, spec.n_ff, "ffn down"}, {spec.n_vocab, e, "lm-head"},
    };
    int n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0] && n < max; i++) {
        int dup = 0;
        for (int j = 0; j < n; j++) {
            dup |= out[j].m == all[i].m && out[j].k == all[i].k;
        }
        if (!dup) {
            out[n++] = all[i];
        }
    }
    return n;
}

struct mm_result {
    double htp_ns, cpu_ns;  // per matmul, medians
    // CPU time / HTP time of each rep's pair (the two sides timed back to
    // back): their median, lowest and highest. A bus shared with a neighbour
    // for a few seconds moves a pair's two times together, the medians apart.
    double pair_ratio, pair_lo, pair_hi;
    int    htp_ok;
};

// One (type, shape, n, cache) point: both sides set up, then timed alternately.
static int mm_point(ggml_backend_t htp, ggml_backend_t cpu, enum ggml_type type, const struct mm_shape * sh, int64_t n,
                    int cold, int reps, const void * wq, const float * xf, struct mm_result * r) {
    const size_t wsize    = ggml_row_size(type, sh->k) * (size_t)sh->m;
    int          n_copies = 1, n_ops = MM_HOT_OPS;
    if (cold) {
        size_t want = (MM_COLD_BYTES + wsize - 1) / wsize;
        n_copies    = (int)(want < 2 ? 2 : want > MM_MAX_COPIES ? MM_MAX_COPIES : want);
        n_ops       = n_copies > MM_MIN_OPS ? n_copies : MM_MIN_OPS;
    }
    struct mm_case hc, cc;
    memset(r, 0, sizeof *r);
    r->htp_ok = mm_setup(&hc, htp, 0, type, sh->m, sh->k, n, n_copies, n_ops, wq, xf) == 0 &&
                ggml_backend_supports_op(htp, hc.first_y);
    if (mm_setup(&cc, cpu, 1, type, sh->m, sh->k, n, n_copies, n_ops, wq, xf) != 0) {
        mm_free(&hc);
        mm_free(&cc);
        return -1;
    }
    double * th = malloc(sizeof(double) * (size_t)reps);
    double * tc = malloc(sizeof(double) * (size_t)reps);
    double * pr = malloc(sizeof(double) * (size_t)reps);  // the reps' paired ratios
    if (!th || !tc || !pr) {
        free(th);
        free(tc);
        free(pr);
        mm_free(&hc);
        mm_free(&cc);
        return -1;
    }
    if (r->htp_ok) {
        mm_once(&hc);  // warm-up: first touch, caches
    }
    mm_once(&cc);
    for (int i = 0; i < reps; i++) {
        if (r->htp_ok) {
            mm_settle();
            mm_once(&hc);
            th[i] = mm_once(&hc);
        }
        mm_settle();
        mm_once(&cc);
        tc[i] = mm_once(&cc);
    }
    if (r->htp_ok) {
        for (int i = 0; i < reps; i++) {
            pr[i] = tc[i] / th[i];
        }
        r->pair_ratio = bench_median_f64(pr, reps);  // sorts pr: lowest first
        r->pair_lo    = pr[0];
        r->pair_hi    = pr[reps - 1];
    }
    r->htp_ns = r->htp_ok ? bench_median_f64(th, reps) : 0;
    r->cpu_ns = bench_median_f64(tc, reps);
    free(th);
    free(tc);
    free(pr);
    mm_free(&hc);
    mm_free(&cc);
    return 0;
}

int bench_mode_matmul(int argc, char ** argv) {
    int64_t     m = 4096, k = 14336, ns[8] = {1, 8, 512};
    int         n_ns = 3, n_set = 0, reps = 5, json = 0;
    const char *types = "f16,q8_0,q4_0,q4_K", *devname = "HTP0", *model = NULL, *cache = "hot";
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-m") && i + 1 < argc) {
            m = atoll(argv[++i]);
        } else if (!strcmp(argv[i], "-k") && i + 1 < argc) {
            k = atoll(argv[++i]);
        } else if (!strcmp(argv[i], "--model") && i + 1 < argc) {
            model = argv[++i];
        } else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
            n_ns  = parse_list(argv[++i], ns, 8);
            n_set = 1;
        } else if (!strcmp(argv[i], "--types") && i + 1 < argc) {
            types = argv[++i];
        } else if (!strcmp(argv[i], "--cache") && i + 1 < argc) {
            cache = argv[++i];
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "-d") && i + 1 < argc) {
            devname = argv[++i];
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else {
            fprintf(stderr, "matmul: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    const int hot  = !strcmp(cache, "hot") || !strcmp(cache, "both"),
              cold = !strcmp(cache, "cold") || !strcmp(cache, "both");
    if (m < 1 || k < 1 || n_ns < 1 || reps < 1 || (!hot && !cold)) {
        fprintf(stderr, "matmul: bad -m / -k / -n / --reps / --cache (hot, cold, both)\n");
        return 2;
    }
    struct mm_shape shapes[8] = {{m, k, "-m x -k"}};
    int             n_shapes  = 1;
    if (model) {
        n_shapes = mm_model_shapes(model, shapes, 8);
        if (n_shapes < 1) {
            fprintf(stderr, "matmul: unknown --model preset '%s' (tiny, small, medium, 1b)\n", model);
            return 2;
        }
        if (!n_set) {  // decode: one column
            ns[0] = 1;
            n_ns  = 1;
        }
    }

    ggml_backend_register(ggml_backend_htp_reg());
    ggml_backend_dev_t hdev = ggml_backend_dev_by_name(devname);
    ggml_backend_t     htp  = hdev ? ggml_backend_dev_init(hdev, NULL) : NULL;
    ggml_backend_t     cpu  = ggml_backend_cpu_init();
    if (!htp || !cpu) {
        fprintf(stderr, "matmul: cannot initialise %s and CPU\n", devname);
        return 1;
    }
    int n_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    ggml_backend_cpu_set_n_threads(cpu, n_threads);

    int64_t n_max = 0, k_max = 0;
    for (int i = 0; i < n_ns; i++) {
        n_max = ns[i] > n_max ? ns[i] : n_max;
    }
    for (int i = 0; i < n_shapes; i++) {
        k_max = shapes[i].k > k_max ? shapes[i].k : k_max;
    }
    float * xf = malloc(sizeof(float) * (size_t)(k_max * n_max));
    if (!xf) {
        fprintf(stderr, "matmul: out of memory\n");
        return 1;
    }
    srand(1);
    for (int64_t i = 0; i < k_max * n_max; i++) {
        xf[i] = (float)rand() / RAND_MAX * 2 - 1;
    }

    if (json) {
        printf("{\"model\": \"%s\", \"threads\": %d, \"reps\": %d, \"results\": [", model ? model : "", n_threads,
               reps);
    } else {
        printf(
            "MUL_MAT, %s vs CPU (%d threads): us per matmul (median of %d, graphs of %d hot / >= %d cold), "
            "weight GB/s, ratio CPU time / HTP time\n",
            devname, n_threads, reps, MM_HOT_OPS, MM_MIN_OPS);
        printf("%-6s %-22s %6s %5s %10s %10s %8s %8s %8s\n", "type", "m x k", "n", "cache", "HTP us", "CPU us",
               "HTP GB/s", "CPU GB/s", "ratio");
    }
    int  first = 1, rc = 0;
    char list[256];
    snprintf(list, sizeof list, "%s", types);
    for (char * tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        enum ggml_type type = bench_type_by_name(tok);
        if (type == GGML_TYPE_COUNT) {
            fprintf(stderr, "matmul: unknown type '%s'\n", tok);
            rc = 2;
            continue;
        }
        for (int s = 0; s < n_shapes; s++) {
            const struct mm_shape * sh = &shapes[s];
            if (sh->k % ggml_blck_size(type) != 0) {
                fprintf(stderr, "matmul: k = %lld is not a multiple of %s's block\n", (long long)sh->k, tok);
                rc = 2;
                continue;
            }
            // The weights, quantized once for every point of this shape.
            const size_t wsize = ggml_row_size(type, sh->k) * (size_t)sh->m;
            float *      wf    = malloc(sizeof(float) * (size_t)(sh->m * sh->k));
            void *       wq    = malloc(wsize);
            if (!wf || !wq) {
                fprintf(stderr, "matmul: out of memory\n");
                free(wf);
                free(wq);
                rc = 1;
                break;
            }
            for (int64_t i = 0; i < sh->m * sh->k; i++) {
                wf[i] = (float)rand() / RAND_MAX * 2 - 1;
            }
            float * im = NULL;  // IQ2_XXS, IQ2_XS, IQ1_S want an importance matrix: all ones
            if (ggml_quantize_requires_imatrix(type) && (im = malloc(sizeof(float) * (size_t)sh->k)) != NULL) {
                for (int64_t i = 0; i < sh->k; i++) {
                    im[i] = 1.0f;
                }
            }
            ggml_quantize_chunk(type, wf, wq, 0, sh->m, sh->k, im);
            free(im);
            free(wf);
            for (int i = 0; i < n_ns; i++) {
                for (int c = 0; c < 2; c++) {
                    if (!(c ? cold : hot)) {
                        continue;
                    }
                    struct mm_result r;
                    if (mm_point(htp, cpu, type, sh, ns[i], c, reps, wq, xf, &r) != 0) {
                        fprintf(stderr, "matmul: cannot set up %s %lld x %lld\n", tok, (long long)sh->m,
                                (long long)sh->k);
                        rc = 1;
                        continue;
                    }
                    const double flop  = 2.0 * (double)sh->m * (double)ns[i] * (double)sh->k;
                    const double ratio = r.htp_ok && r.htp_ns > 0 ? r.cpu_ns / r.htp_ns : 0;
                    char         label[64];
                    snprintf(label, sizeof label, "%lld x %lld", (long long)sh->m, (long long)sh->k);
                    if (json) {
                        printf(
                            "%s{\"type\": \"%s\", \"m\": %lld, \"k\": %lld, \"what\": \"%s\", \"n\": %lld, "
                            "\"cache\": \"%s\", \"htp_us\": %.2f, \"cpu_us\": %.2f, \"htp_gflops\": %.2f, "
                            "\"cpu_gflops\": %.2f, \"htp_weight_gbps\": %.2f, \"cpu_weight_gbps\": %.2f, "
                            "\"ratio\": %.3f, \"pair_ratio\": %.3f, \"pair_ratio_lo\": %.3f, \"pair_ratio_hi\": %.3f}",
                            first ? "" : ", ", ggml_type_name(type), (long long)sh->m, (long long)sh->k, sh->what,
                            (long long)ns[i], c ? "cold" : "hot", r.htp_ns / 1e3, r.cpu_ns / 1e3,
                            r.htp_ns > 0 ? flop / r.htp_ns : 0, flop / r.cpu_ns,
                            r.htp_ns > 0 ? (double)wsize / r.htp_ns : 0, (double)wsize / r.cpu_ns, ratio, r.pair_ratio,
                            r.pair_lo, r.pair_hi);
                        first = 0;
                    } else if (r.htp_ok) {
                        printf("%-6s %-22s %6lld %5s %10.1f %10.1f %8.1f %8.1f %7.2fx\n", ggml_type_name(type), label,
                               (long long)ns[i], c ? "cold" : "hot", r.htp_ns / 1e3, r.cpu_ns / 1e3,
                               (double)wsize / r.htp_ns, (double)wsize / r.cpu_ns, ratio);
                    } else {
                        printf("%-6s %-22s %6lld %5s %10s %10.1f %8s %8.1f %8s\n", ggml_type_name(type), label,
                               (long long)ns[i], c ? "cold" : "hot", "unsupported", r.cpu_ns / 1e3, "-",
                               (double)wsize / r.cpu_ns, "-");
                    }
                    fflush(stdout);
                }
            }
            free(wq);
        }
    }
    if (json) {
        printf("]}\n");
    }
    free(xf);
    ggml_backend_free(htp);
    ggml_backend_free(cpu);
    return rc;
}
