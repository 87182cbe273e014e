// bench-vmem.c: htp-bench vmem: how large a model an NPU session's VA window
// takes, with mmap stacking (map everything pending at flush, largest first)
// and in the naive order (each batch's buffers as the batch meets them).
//
// The model is the Llama-3.2-1B layer shape (embedding 2048, FFN 8192, 8 KV
// heads of 64, vocabulary 128256) with a chosen number of layers and weight
// type; its weights are laid out by the allocation planner (planner.c, the
// 1 GiB static limit), its KV cache is one buffer, its compute buffer another.
// The lifecycle is the one a llama context goes through: a first graph runs
// with compute buffer C1; the compute buffer is then reallocated larger (C2:
// ggml-alloc frees the old one and allocates the new one when a graph needs
// more) and a second graph runs. Ops are real NPU ops (small copies) in
// llama's order: the embedding lookup reads the embedding's buffer and writes
// the compute buffer; each layer reads its weights and writes its KV rows.
// What the NPU maps, and where, is decided by the host's mapping order alone.
//
// Reported per order: the largest layer count whose two graphs run in the
// window, its bytes, and the window afterwards (used, largest free range,
// holes between mappings).

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "ggml.h"
#include "host/planner.h"
#include "host/session-submit.h"
#include "host/session.h"

#define MiB (1024ull * 1024ull)

struct vmem_cfg {
    uint64_t       window;  // bytes
    uint32_t       ctx;     // KV positions
    uint64_t       c1, c2;  // compute buffer before / after it grows
    enum ggml_type wtype;
    int            max_layers;
};

struct vmem_result {
    bool                 ok;
    uint64_t             weights, kv;  // bytes
    int                  n_wbufs;
    struct htp_vmem_info vi;  // after the second graph
};

static void silent_log(enum ggml_log_level level, const char * text, void * ud) {
    (void)level;
    (void)text;
    (void)ud;
}

static struct htp_op_tensor region(struct htp_buffer * buf, uint64_t offset) {
    struct htp_op_tensor t = {0};
    t.buf                  = buf;
    t.offset               = offset;
    t.type                 = HTP_TYPE_F32;
    t.ne[0]                = 64;
    t.ne[1] = t.ne[2] = t.ne[3] = 1;
    t.nb[0]                     = 4;
    t.nb[1] = t.nb[2] = t.nb[3] = 256;
    t.size                      = 256;
    return t;
}

static int cpy(struct htp_session * s, struct htp_buffer * from, uint64_t foff, struct htp_buffer * to, uint64_t toff) {
    struct htp_op_tensor a = region(from, foff), b = region(to, toff);
    struct htp_opnode    op = {0};
    op.opcode               = HTP_OP_CPY;
    op.src[0]               = &a;
    op.dst[0]               = &b;
    return htp_session_enqueue(s, &op);
}

struct model {
    struct htp_buffer * wbuf[64];
    int                 n_wbufs;
    int                 emb_buf;
    uint64_t            emb_off;
    int *               layer_buf;
    uint64_t *          layer_off;
};

// The planner's layout of n_layer 1B-shaped layers: buffers and where each layer starts.
static int plan_model(const struct vmem_cfg * c, int n_layer, struct htp_plan * plan, int ** unit_layer) {
    const int64_t            E = 2048, KV = 512, F = 8192, V = 128256;
    int                      n = 2 + 9 * n_layer;
    struct htp_plan_tensor * t = calloc((size_t)n, sizeof *t);
    char(*names)[40]           = calloc((size_t)n, sizeof *names);
    int k                      = 0;
    snprintf(names[k], 40, "token_embd.weight");
    t[k] = (struct htp_plan_tensor){names[k], (size_t)V * ggml_row_size(c->wtype, E), false};
    k++;
    snprintf(names[k], 40, "output_norm.weight");
    t[k] = (struct htp_plan_tensor){names[k], (size_t)E * 4, false};
    k++;
    for (int l = 0; l < n_layer; l++) {
        static const char * w[]    = {"attn_norm", "attn_q",   "attn_k",   "attn_v", "attn_output",
                                      "ffn_norm",  "ffn_gate", "ffn_down", "ffn_up"};
        const int64_t       rows[] = {1, E, KV, KV, E, 1, F, E, F};
        const int64_t       cols[] = {E, E, E, E, E, E, E, F, E};
        for (int j = 0; j < 9; j++) {
            snprintf(names[k], 40, "blk.%d.%s.weight", l, w[j]);
            size_t sz = rows[j] == 1 ? (size_t)E * 4 : (size_t)rows[j] * ggml_row_size(c->wtype, cols[j]);
            t[k]      = (struct htp_plan_tensor){names[k], sz, false};
            k++;
        }
    }
    int rc = htp_planner_plan(t, n, 128, (size_t)1 << 30, plan);
    if (rc == 0) {
        *unit_layer = malloc(sizeof(int) * (size_t)(plan->n_units ? plan->n_units : 1));
        for (int u = 0; u < plan->n_units; u++) {
            (*unit_layer)[u] = plan->units[u].kind == 0    ? plan->units[u].layer
                               : plan->units[u].first == 0 ? -1   // the embedding
                                                           : -2;  // output norm
        }
    }
    free(names);
    free(t);
    return rc;
}

static void run_trial(const struct vmem_cfg * c, int n_layer, bool stacking, struct vmem_result * r) {
    memset(r, 0, sizeof *r);
    struct htp_plan      plan       = {0};
    int *                unit_layer = NULL;
    struct model         m          = {0};
    struct htp_buffer *  kv = NULL, *comp = NULL;
    struct htp_session * s = NULL;
    m.layer_buf            = calloc((size_t)n_layer, sizeof *m.layer_buf);
    m.layer_off            = calloc((size_t)n_layer, sizeof *m.layer_off);
    if (plan_model(c, n_layer, &plan, &unit_layer) != 0 || plan.n_bufs > 64) {
        goto done;
    }
    struct htp_session_params p;
    htp_session_params_default(&p, 0, 0);
    p.vmem_size     = c->window;
    p.mmap_stacking = stacking;
    if (htp_session_open(&p, &s) != 0) {
        goto done;
    }
    // Weights, by the plan (allocated largest first, as the extension does).
    for (int b = 0; b < plan.n_bufs; b++) {
        if (htp_buffer_alloc(htp_session_map_target(s), plan.bufs[b].size, 0, &m.wbuf[b]) != 0) {
            goto done;
        }
        m.n_wbufs++;
        r->weights += plan.bufs[b].size;
        uint64_t off = 0;
        for (int k = 0; k < plan.bufs[b].n_units; k++) {
            int u = plan.order[plan.bufs[b].unit0 + k];
            int l = unit_layer[u];
            if (l >= 0) {
                m.layer_buf[l] = b;
                m.layer_off[l] = off;
            } else if (l == -1) {
                m.emb_buf = b;
                m.emb_off = off;
            }
            off += plan.units[u].size;
        }
    }
    r->n_wbufs = m.n_wbufs;
    // KV cache: K and V of 512 x ctx F16 per layer.
    r->kv = (uint64_t)n_layer * 2 * 512 * c->ctx * 2;
    if (htp_buffer_alloc(htp_session_map_target(s), r->kv, 0, &kv) != 0) {
        goto done;
    }
    const uint64_t kv_layer = r->kv / (uint64_t)n_layer;
    for (int g = 0; g < 2; g++) {
        if (htp_buffer_alloc(htp_session_map_target(s), g == 0 ? c->c1 : c->c2, 0, &comp) != 0) {
            goto done;
        }
        // The graph in llama's order: embedding lookup, then per layer its
        // weights, then its KV rows.
        int rc = cpy(s, m.wbuf[m.emb_buf], m.emb_off, comp, 0);
        for (int l = 0; l < n_layer && rc == 0; l++) {
            rc = cpy(s, m.wbuf[m.layer_buf[l]], m.layer_off[l], comp, 4096);
            if (rc == 0) {
                rc = cpy(s, comp, 4096, kv, (uint64_t)l * kv_layer);
            }
        }
        if (rc != 0 || htp_session_flush_sync(s) != 0) {
            goto done;
        }
        if (g == 0) {
            htp_buffer_unref(comp);  // ggml-alloc frees the old compute buffer before allocating the larger one
            comp = NULL;
        }
    }
    r->ok = htp_session_vmem_info(s, &r->vi) == 0;
done:
    htp_buffer_unref(comp);
    htp_buffer_unref(kv);
    for (int b = 0; b < m.n_wbufs; b++) {
        htp_buffer_unref(m.wbuf[b]);
    }
    htp_session_close(s);
    htp_planner_free(&plan);
    free(unit_layer);
    free(m.layer_buf);
    free(m.layer_off);
}

// Largest layer count that runs (results are monotone in the layer count).
static int largest(const struct vmem_cfg * c, bool stacking, struct vmem_result * best) {
    int n = 0;
    for (int l = 1; l <= c->max_layers; l++) {
        struct vmem_result r;
        run_trial(c, l, stacking, &r);
        if (!r.ok) {
            break;
        }
        n     = l;
        *best = r;
    }
    return n;
}

int bench_mode_vmem(int argc, char ** argv) {
    struct vmem_cfg c    = {1024 * MiB, 4096, 48 * MiB, 80 * MiB, GGML_TYPE_Q4_0, 64};
    bool            json = false;
    for (int i = 0; i < argc; i++) {
        const char * a = argv[i];
        if (!strcmp(a, "--json")) {
            json = true;
        } else if (i + 1 < argc && !strcmp(a, "--window")) {
            c.window = strtoull(argv[++i], NULL, 10) * MiB;
        } else if (i + 1 < argc && !strcmp(a, "--ctx")) {
            c.ctx = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else if (i + 1 < argc && !strcmp(a, "--c1")) {
            c.c1 = strtoull(argv[++i], NULL, 10) * MiB;
        } else if (i + 1 < argc && !strcmp(a, "--c2")) {
            c.c2 = strtoull(argv[++i], NULL, 10) * MiB;
        } else if (i + 1 < argc && !strcmp(a, "--type")) {
            const char * t = argv[++i];
            c.wtype        = !strcmp(t, "f16") ? GGML_TYPE_F16 : !strcmp(t, "q8_0") ? GGML_TYPE_Q8_0 : GGML_TYPE_Q4_0;
        } else {
            fprintf(stderr, "vmem: unknown option %s\n", a);
            return 2;
        }
    }
    if (c.window < 64 * MiB || c.ctx == 0 || c.c1 == 0 || c.c2 == 0) {
        fprintf(stderr, "vmem: window >= 64 MiB, ctx, c1, c2 > 0\n");
        return 2;
    }
    // Failed maps are the point of the search: keep them out of the output.
    ggml_log_set(silent_log, NULL);
    struct vmem_result res[2];
    int                n[2];
    const char *       name[2] = {"stacking", "naive"};
    for (int k = 0; k < 2; k++) {
        memset(&res[k], 0, sizeof res[k]);
        n[k] = largest(&c, k == 0, &res[k]);
    }
    // Both orders at the naive order's largest size: where the difference comes from.
    struct vmem_result same[2];
    for (int k = 0; k < 2; k++) {
        run_trial(&c, n[1] > 0 ? n[1] : 1, k == 0, &same[k]);
    }
    ggml_log_set(NULL, NULL);

    if (json) {
        printf("{\"window_mib\": %llu, \"ctx\": %u, \"c1_mib\": %llu, \"c2_mib\": %llu, \"type\": \"%s\"",
               (unsigned long long)(c.window / MiB), c.ctx, (unsigned long long)(c.c1 / MiB),
               (unsigned long long)(c.c2 / MiB), ggml_type_name(c.wtype));
        for (int k = 0; k < 2; k++) {
            printf(
                ", \"%s\": {\"layers\": %d, \"weights_mib\": %.1f, \"kv_mib\": %.1f, \"used_mib\": %.1f, "
                "\"largest_free_mib\": %.1f, \"holes\": %u}",
                name[k], n[k], res[k].weights / (double)MiB, res[k].kv / (double)MiB, res[k].vi.used / (double)MiB,
                res[k].vi.largest_free / (double)MiB, res[k].vi.n_holes);
        }
        printf("}\n");
        return 0;
    }
    printf(
        "VA window %llu MiB; Llama-3.2-1B layers, %s weights (planner, 1 GiB buffers), KV %u positions F16,\n"
        "compute buffer %llu MiB, then reallocated to %llu MiB\n\n",
        (unsigned long long)(c.window / MiB), ggml_type_name(c.wtype), c.ctx, (unsigned long long)(c.c1 / MiB),
        (unsigned long long)(c.c2 / MiB));
    printf("%-9s %7s %12s %8s %8s %12s %14s %6s\n", "order", "layers", "weights MiB", "bufs", "KV MiB", "used MiB",
           "largest free", "holes");
    for (int k = 0; k < 2; k++) {
        printf("%-9s %7d %12.1f %8d %8.1f %12.1f %14.1f %6u\n", name[k], n[k], res[k].weights / (double)MiB,
               res[k].n_wbufs, res[k].kv / (double)MiB, res[k].vi.used / (double)MiB,
               res[k].vi.largest_free / (double)MiB, res[k].vi.n_holes);
    }
    printf("\nat %d layers (the naive order's largest):\n", n[1] > 0 ? n[1] : 1);
    for (int k = 0; k < 2; k++) {
        printf("%-9s runs %-3s used %.1f MiB, largest free %.1f MiB, holes %u\n", name[k], same[k].ok ? "yes" : "no",
               same[k].vi.used / (double)MiB, same[k].vi.largest_free / (double)MiB, same[k].vi.n_holes);
    }
    return 0;
}
