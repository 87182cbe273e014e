// test-backend-multi: one graph split by ggml_backend_sched across two HTP
// devices (GGML_HEXAGON_DEVICES names them: two sessions of one NPU, or two
// NPU processes) and the CPU. Activations cross between the devices with
// cpy_tensor_async and are ordered with events; the result must match the
// graph computed on the CPU alone.
//
//   x (CPU) -> h1 = W1 x (dev A) -> h2 = silu(W2 h1) (dev B) -> y = W3 h2 + h1 (dev A)

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

enum { D = 128, N = 4, ITERS = 3 };

struct model {
    struct ggml_context * wctx[2];  // weights of device A (W1 W3) and B (W2)
    ggml_backend_buffer_t wbuf[2];
    struct ggml_tensor *  w[3];
};

static void fill(float * v, int64_t n, unsigned seed) {
    srand(seed);
    for (int64_t i = 0; i < n; i++) {
        v[i] = ((float)rand() / RAND_MAX * 2 - 1) * 0.2f;
    }
}

static void model_init(struct model * m, ggml_backend_buffer_type_t bufts[2]) {
    for (int d = 0; d < 2; d++) {
        struct ggml_init_params ip = {4 * ggml_tensor_overhead(), NULL, true};
        m->wctx[d]                 = ggml_init(ip);
    }
    m->w[0] = ggml_new_tensor_2d(m->wctx[0], GGML_TYPE_F16, D, D);
    m->w[1] = ggml_new_tensor_2d(m->wctx[1], GGML_TYPE_F32, D, D);
    m->w[2] = ggml_new_tensor_2d(m->wctx[0], GGML_TYPE_F32, D, D);
    for (int d = 0; d < 2; d++) {
        m->wbuf[d] = ggml_backend_alloc_ctx_tensors_from_buft(m->wctx[d], bufts[d]);
        ggml_backend_buffer_set_usage(m->wbuf[d], GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    }
    static float v[D * D];
    for (int i = 0; i < 3; i++) {
        fill(v, D * D, 100 + i);
        if (m->w[i]->type == GGML_TYPE_F16) {
            static ggml_fp16_t h[D * D];
            ggml_fp32_to_fp16_row(v, h, D * D);
            ggml_backend_tensor_set(m->w[i], h, 0, sizeof h);
        } else {
            ggml_backend_tensor_set(m->w[i], v, 0, sizeof v);
        }
    }
}

static void model_free(struct model * m) {
    for (int d = 0; d < 2; d++) {
        ggml_backend_buffer_free(m->wbuf[d]);
        ggml_free(m->wctx[d]);
    }
}

struct graph {
    struct ggml_context * ctx;
    struct ggml_cgraph *  gf;
    struct ggml_tensor *  x, *h1, *h2, *y;
    struct ggml_tensor *  nodes_a[8], *nodes_b[8];
    int                   n_a, n_b;
};

static void graph_build(struct graph * g, const struct model * m) {
    struct ggml_init_params ip = {64 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true};
    g->ctx                     = ggml_init(ip);
    g->x                       = ggml_new_tensor_2d(g->ctx, GGML_TYPE_F32, D, N);
    ggml_set_input(g->x);
    g->h1                  = ggml_mul_mat(g->ctx, m->w[0], g->x);
    struct ggml_tensor * t = ggml_mul_mat(g->ctx, m->w[1], g->h1);
    g->h2                  = ggml_silu(g->ctx, t);
    struct ggml_tensor * u = ggml_mul_mat(g->ctx, m->w[2], g->h2);
    g->y                   = ggml_add(g->ctx, u, g->h1);
    ggml_set_output(g->y);
    g->n_a = g->n_b      = 0;
    g->nodes_a[g->n_a++] = g->h1;
    g->nodes_b[g->n_b++] = t;
    g->nodes_b[g->n_b++] = g->h2;
    g->nodes_a[g->n_a++] = u;
    g->nodes_a[g->n_a++] = g->y;
    g->gf                = ggml_new_graph(g->ctx);
    ggml_build_forward_expand(g->gf, g->y);
}

int main(void) {
    ggml_backend_register(ggml_backend_htp_reg());
    ggml_backend_reg_t reg = ggml_backend_htp_reg();
    CHECK_OR_RETURN(1, ggml_backend_reg_dev_count(reg) >= 2, "need two HTP devices (set GGML_HEXAGON_DEVICES)");
    ggml_backend_dev_t da = ggml_backend_reg_dev_get(reg, 0), db = ggml_backend_reg_dev_get(reg, 1);
    printf("devices: %s, %s\n", ggml_backend_dev_name(da), ggml_backend_dev_name(db));
    ggml_backend_t a = ggml_backend_dev_init(da, NULL), b = ggml_backend_dev_init(db, NULL);
    ggml_backend_t cpu = ggml_backend_cpu_init();
    CHECK_OR_RETURN(1, a && b && cpu, "cannot init backends");

    struct model               m, mc;
    ggml_backend_buffer_type_t bufts[2]     = {ggml_backend_get_default_buffer_type(a),
                                               ggml_backend_get_default_buffer_type(b)};
    ggml_backend_buffer_type_t cpu_bufts[2] = {ggml_backend_cpu_buffer_type(), ggml_backend_cpu_buffer_type()};
    model_init(&m, bufts);
    model_init(&mc, cpu_bufts);

    ggml_backend_t       backends[3] = {a, b, cpu};
    ggml_backend_sched_t sched       = ggml_backend_sched_new(backends, NULL, 3, 256, true, false);

    struct graph g, gc;
    graph_build(&g, &m);
    graph_build(&gc, &mc);
    for (int i = 0; i < g.n_a; i++) {
        ggml_backend_sched_set_tensor_backend(sched, g.nodes_a[i], a);
    }
    for (int i = 0; i < g.n_b; i++) {
        ggml_backend_sched_set_tensor_backend(sched, g.nodes_b[i], b);
    }
    CHECK_OR_RETURN(1, ggml_backend_sched_alloc_graph(sched, g.gf), "sched alloc failed");
    printf("splits: %d, copies: %d\n", ggml_backend_sched_get_n_splits(sched), ggml_backend_sched_get_n_copies(sched));

    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    ggml_gallocr_alloc_graph(galloc, gc.gf);

    static float x[D * N], want[D * N], got[D * N];
    for (int it = 0; it < ITERS; it++) {
        fill(x, D * N, 7 + it);
        ggml_backend_tensor_set(g.x, x, 0, sizeof x);
        CHECK_OR_RETURN(1, ggml_backend_sched_graph_compute(sched, g.gf) == GGML_STATUS_SUCCESS,
                        "sched compute failed");
        ggml_backend_sched_synchronize(sched);
        ggml_backend_tensor_get(g.y, got, 0, sizeof got);

        ggml_backend_tensor_set(gc.x, x, 0, sizeof x);
        ggml_backend_graph_compute(cpu, gc.gf);
        ggml_backend_tensor_get(gc.y, want, 0, sizeof want);

        double e = 0, r = 0;
        for (int i = 0; i < D * N; i++) {
            e += (double)(want[i] - got[i]) * (want[i] - got[i]);
            r += (double)want[i] * want[i];
        }
        printf("iteration %d: nmse vs CPU %.3e\n", it, e / r);
        CHECK(e / r < 5e-4 && !isnan(e), "iteration %d: nmse vs CPU %.3e", it, e / r);
    }

    struct ggml_backend_htp_stats sa, sb;
    ggml_backend_htp_get_stats(a, &sa);
    ggml_backend_htp_get_stats(b, &sb);
    printf("%s: %llu graphs, %llu async copies in, %llu events; %s: %llu graphs, %llu async copies in, %llu events\n",
           ggml_backend_dev_name(da), (unsigned long long)sa.graphs, (unsigned long long)sa.copies,
           (unsigned long long)sa.events, ggml_backend_dev_name(db), (unsigned long long)sb.graphs,
           (unsigned long long)sb.copies, (unsigned long long)sb.events);
    CHECK(ggml_backend_sched_get_n_splits(sched) >= 3, "expected at least 3 splits");
    CHECK(sa.copies != 0 && sb.copies != 0, "expected activations to cross between the devices with cpy_tensor_async");
    CHECK(sa.events + sb.events != 0, "expected events to order the streams");

    ggml_gallocr_free(galloc);
    ggml_backend_sched_free(sched);
    ggml_free(g.ctx);
    ggml_free(gc.ctx);
    model_free(&m);
    model_free(&mc);
    ggml_backend_free(a);
    ggml_backend_free(b);
    ggml_backend_free(cpu);
    return test_exit_code("test-backend-multi");
}
