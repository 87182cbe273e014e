// test-group: a multi-NPU group device (GGML_HEXAGON_DEVICES=G[0-1] or G[0-3],
// with a plain device HTP0:1 beside it) computes a small layer the way a
// single NPU and the CPU do. The members split the row-independent ops
// (MUL_MAT by columns, RMS_NORM, MUL, SILU, ADD) and leave the others
// (SOFT_MAX) to member 0, meeting at a barrier after each op; token counts
// 1, 3 and 7 give unsplit, uneven and empty member slices.
//
//   x [D, n] -> h = W x -> y = silu(rms_norm(h) * g) + h -> p = soft_max(y) * 3
//
// Checks: group vs CPU (normalised MSE), group vs the single NPU (max abs
// difference: the same kernels on the same rows), over several runs.

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-htp.h"
#include "ggml.h"
#include "test-check.h"

enum { D = 256 };

struct net {
    struct ggml_context * wctx;
    ggml_backend_buffer_t wbuf;
    struct ggml_tensor *  w, *g;
    struct ggml_context * ctx;
    struct ggml_cgraph *  gf;
    struct ggml_tensor *  x, *out;
    ggml_gallocr_t        galloc;
};

static void fill(float * v, int64_t n, unsigned seed, float scale) {
    srand(seed);
    for (int64_t i = 0; i < n; i++) {
        v[i] = ((float)rand() / RAND_MAX * 2 - 1) * scale;
    }
}

static int net_init(struct net * m, ggml_backend_buffer_type_t buft, int n_tok) {
    struct ggml_init_params wp = {4 * ggml_tensor_overhead(), NULL, true};
    m->wctx                    = ggml_init(wp);
    m->w                       = ggml_new_tensor_2d(m->wctx, GGML_TYPE_F16, D, D);
    m->g                       = ggml_new_tensor_1d(m->wctx, GGML_TYPE_F32, D);
    m->wbuf                    = ggml_backend_alloc_ctx_tensors_from_buft(m->wctx, buft);
    if (!m->wbuf) {
        return -1;
    }
    ggml_backend_buffer_set_usage(m->wbuf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    static float       v[D * D];
    static ggml_fp16_t h[D * D];
    fill(v, D * D, 7, 0.1f);
    ggml_fp32_to_fp16_row(v, h, D * D);
    ggml_backend_tensor_set(m->w, h, 0, sizeof h);
    fill(v, D, 8, 1.0f);
    ggml_backend_tensor_set(m->g, v, 0, sizeof(float) * D);

    struct ggml_init_params ip = {32 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true};
    m->ctx                     = ggml_init(ip);
    m->x                       = ggml_new_tensor_2d(m->ctx, GGML_TYPE_F32, D, n_tok);
    ggml_set_input(m->x);
    struct ggml_tensor * h1 = ggml_mul_mat(m->ctx, m->w, m->x);
    struct ggml_tensor * n1 = ggml_rms_norm(m->ctx, h1, 1e-5f);
    struct ggml_tensor * y  = ggml_add(m->ctx, ggml_silu(m->ctx, ggml_mul(m->ctx, n1, m->g)), h1);
    m->out                  = ggml_scale(m->ctx, ggml_soft_max(m->ctx, y), 3.0f);
    ggml_set_output(m->out);
    m->gf = ggml_new_graph(m->ctx);
    ggml_build_forward_expand(m->gf, m->out);
    m->galloc = ggml_gallocr_new(buft);
    return ggml_gallocr_alloc_graph(m->galloc, m->gf) ? 0 : -1;
}

static void net_free(struct net * m) {
    ggml_gallocr_free(m->galloc);
    ggml_free(m->ctx);
    ggml_backend_buffer_free(m->wbuf);
    ggml_free(m->wctx);
}

static int net_run(struct net * m, ggml_backend_t backend, const float * x, float * out, int n_tok) {
    ggml_backend_tensor_set(m->x, x, 0, sizeof(float) * D * (size_t)n_tok);
    if (ggml_backend_graph_compute(backend, m->gf) != GGML_STATUS_SUCCESS) {
        return -1;
    }
    ggml_backend_tensor_get(m->out, out, 0, sizeof(float) * D * (size_t)n_tok);
    return 0;
}

int main(void) {
    ggml_backend_reg_t reg = ggml_backend_htp_reg();
    if (ggml_backend_reg_dev_count(reg) < 2) {
        printf("SKIP: need a group device and a plain one (GGML_HEXAGON_DEVICES=G[0-3],HTP0:1)\n");
        return 77;
    }
    ggml_backend_dev_t dg = ggml_backend_reg_dev_get(reg, 0), d1 = ggml_backend_reg_dev_get(reg, 1);
    printf("group device %s: %s\nsingle device %s\n", ggml_backend_dev_name(dg), ggml_backend_dev_description(dg),
           ggml_backend_dev_name(d1));
    ggml_backend_t bg = ggml_backend_dev_init(dg, NULL), b1 = ggml_backend_dev_init(d1, NULL);
    ggml_backend_t cpu = ggml_backend_cpu_init();
    CHECK_OR_RETURN(1, bg && b1 && cpu, "cannot start the backends");
    static const int toks[] = {1, 3, 7, 64};
    for (size_t t = 0; t < sizeof toks / sizeof toks[0]; t++) {
        const int  n = toks[t];
        struct net mg, m1, mc;
        CHECK_OR_RETURN(1,
                        net_init(&mg, ggml_backend_get_default_buffer_type(bg), n) == 0 &&
                            net_init(&m1, ggml_backend_get_default_buffer_type(b1), n) == 0 &&
                            net_init(&mc, ggml_backend_cpu_buffer_type(), n) == 0,
                        "allocation");
        float * x  = malloc(sizeof(float) * D * (size_t)n);
        float * og = malloc(sizeof(float) * D * (size_t)n);
        float * o1 = malloc(sizeof(float) * D * (size_t)n);
        float * oc = malloc(sizeof(float) * D * (size_t)n);
        for (int it = 0; it < 3; it++) {
            fill(x, (int64_t)D * n, 100 + (unsigned)it, 1.0f);
            const bool ran =
                net_run(&mg, bg, x, og, n) == 0 && net_run(&m1, b1, x, o1, n) == 0 && net_run(&mc, cpu, x, oc, n) == 0;
            CHECK(ran, "compute (tokens %d)", n);
            if (!ran) {
                continue;  // nothing to compare
            }
            double err = 0, ref = 0, maxd = 0;
            for (int64_t i = 0; i < (int64_t)D * n; i++) {
                err += (og[i] - oc[i]) * (double)(og[i] - oc[i]);
                ref += oc[i] * (double)oc[i];
                double d = fabs((double)og[i] - o1[i]);
                maxd     = d > maxd ? d : maxd;
            }
            double nmse = err / (ref > 0 ? ref : 1);
            printf("tokens %2d run %d: nmse vs CPU %.3g, max |group - single| %.3g\n", n, it, nmse, maxd);
            // The CPU side is loose on some machines: on CPUs with AVX512-FP16
            // (Xeon Sapphire Rapids and later) ggml-cpu's F16 dot sums in half
            // precision, 2e-6..1e-5 from us here (7e-7 on Zen 4). 1e-4 is still
            // far below ggml's own MUL_MAT threshold (5e-4) and far below what a
            // wrong slice gives; the group must match the single NPU exactly.
            CHECK(nmse < 1e-4 && maxd < 1e-5, "tokens %d run %d: nmse vs CPU %.3g, max |group - single| %.3g", n, it,
                  nmse, maxd);
        }
        free(x);
        free(og);
        free(o1);
        free(oc);
        net_free(&mg);
        net_free(&m1);
        net_free(&mc);
    }
    ggml_backend_free(bg);
    ggml_backend_free(b1);
    ggml_backend_free(cpu);
    return test_exit_code("test-group");
}
