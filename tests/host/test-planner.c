// test-planner: the layer-grouped allocation planner (src/host/planner.c).
//
//  1. layer names: "blk.N.*" and "cache_*_lN" are recognised, look-alikes not
//  2. the Llama-3.2-1B shape (F16 and Q4_0 weights; its KV cache) under the
//     default 1 GiB static limit: the plan is printed (buffers, sizes, units
//     per buffer); no layer is split across buffers, every buffer respects the
//     limit, every tensor is in exactly one unit, buffers are largest first
//     and hold exactly the padded bytes of their units
//  3. a limit smaller than a layer: the layer is cut into units within the
//     limit (the reference's behaviour), nothing exceeds the limit
//  4. the ggml side on HTP0: ggml_backend_htp_alloc_ctx_tensors (through
//     get_proc_address) places a small llama-shaped context; with a limit that
//     forces several buffers, every layer's tensors share one buffer, views
//     are initialised, and data written to a tensor reads back

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-backend.h"
#include "ggml-htp.h"
#include "ggml.h"
#include "host/planner.h"

#include "test-check.h"

#define MiB (1024.0 * 1024.0)

// --- 1. names ---

static void test_names(void) {
    static const struct {
        const char * name;
        bool         ok;
        int          kind, layer;
    } cases[] = {
        {"blk.0.attn_q.weight", true, 0, 0},  {"blk.15.ffn_down.weight", true, 0, 15}, {"cache_k_l0", true, 1, 0},
        {"cache_v_l27", true, 1, 27},         {"blk.x.attn_q.weight", false, -1, -1},  {"blk.3", false, -1, -1},
        {"blk.3attn", false, -1, -1},         {"cache_k_l3_extra", false, -1, -1},     {"cache_k_lx", false, -1, -1},
        {"token_embd.weight", false, -1, -1}, {"output.weight", false, -1, -1},        {"blk.", false, -1, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int  kind = 7, layer = 7;
        bool ok = htp_planner_layer(cases[i].name, &kind, &layer);
        CHECK(ok == cases[i].ok && kind == cases[i].kind && layer == cases[i].layer, "%s: got %d kind %d layer %d",
              cases[i].name, ok, kind, layer);
    }
    printf("layer names: %zu cases checked\n", sizeof cases / sizeof cases[0]);
}

// --- 2, 3. plans ---

struct list {
    struct htp_plan_tensor t[512];
    char                   names[512][48];
    int                    n;
};

static void add(struct list * l, const char * name, size_t size) {
    snprintf(l->names[l->n], sizeof l->names[0], "%s", name);
    l->t[l->n] = (struct htp_plan_tensor){l->names[l->n], size, false};
    l->n++;
}

// Bytes of a rows x cols matrix of type: F16 2 bytes, Q4_0 18 bytes per 32.
static size_t mat(int64_t rows, int64_t cols, enum ggml_type type) {
    return (size_t)rows * ggml_row_size(type, cols);
}

// The Llama-3.2-1B weights in libllama's order: embd 2048, 16 layers, 32 heads
// of 64 (8 KV heads), FFN 8192, vocabulary 128256, tied output; norms F32.
static void llama_1b(struct list * l, enum ggml_type wt) {
    const int64_t E = 2048, KV = 512, F = 8192, V = 128256;
    char          n[48];
    l->n = 0;
    add(l, "token_embd.weight", mat(V, E, wt));
    add(l, "output_norm.weight", E * 4);
    for (int i = 0; i < 16; i++) {
        static const char * w[]  = {"attn_norm", "attn_q",   "attn_k",   "attn_v", "attn_output",
                                    "ffn_norm",  "ffn_gate", "ffn_down", "ffn_up"};
        const size_t        sz[] = {E * 4, mat(E, E, wt), mat(KV, E, wt), mat(KV, E, wt), mat(E, E, wt),
                                    E * 4, mat(F, E, wt), mat(E, F, wt),  mat(F, E, wt)};
        for (int k = 0; k < 9; k++) {
            snprintf(n, sizeof n, "blk.%d.%s.weight", i, w[k]);
            add(l, n, sz[k]);
        }
    }
}

// Its KV cache at 4096 positions, F16: per layer K and V of 512 x 4096.
static void llama_1b_kv(struct list * l) {
    char n[48];
    l->n = 0;
    for (int i = 0; i < 16; i++) {
        snprintf(n, sizeof n, "cache_k_l%d", i);
        add(l, n, (size_t)512 * 4096 * 2);
        snprintf(n, sizeof n, "cache_v_l%d", i);
        add(l, n, (size_t)512 * 4096 * 2);
    }
}

static size_t pad(size_t x, size_t a) {
    return (x + a - 1) / a * a;
}

// Every property the plan must have; print it when verbose.
static void check_plan(const char * what, const struct list * l, const struct htp_plan * p, size_t align, size_t limit,
                       bool print, bool whole_layers) {
    int * buf_of = malloc(sizeof(int) * (size_t)l->n);
    for (int i = 0; i < l->n; i++) {
        buf_of[i] = -1;
    }
    size_t total = 0, want_total = 0;
    for (int i = 0; i < l->n; i++) {
        want_total += l->t[i].skip ? 0 : pad(l->t[i].size, align);
    }
    if (print) {
        printf("%s: %d tensors, %d units, %d buffers (limit %.0f MiB)\n", what, l->n, p->n_units, p->n_bufs,
               limit / MiB);
    }
    for (int b = 0; b < p->n_bufs; b++) {
        const struct htp_plan_buffer * pb  = &p->bufs[b];
        size_t                         sum = 0;
        char                           desc[1024];
        int                            dl = 0;
        desc[0]                           = 0;
        for (int k = 0; k < pb->n_units; k++) {
            const struct htp_plan_unit * u = &p->units[p->order[pb->unit0 + k]];
            sum += u->size;
            for (int j = u->first; j < u->last; j++) {
                CHECK(buf_of[j] < 0, "%s: tensor %s in two units", what, l->t[j].name);
                buf_of[j] = b;
            }
            if (dl < (int)sizeof desc - 40) {
                if (u->layer >= 0) {
                    dl += snprintf(desc + dl, sizeof desc - (size_t)dl, " %s%d", u->kind ? "kv" : "blk", u->layer);
                } else {
                    dl += snprintf(desc + dl, sizeof desc - (size_t)dl, " %s", l->t[u->first].name);
                }
            }
        }
        CHECK(sum == pb->size, "%s: buffer %d size %zu, its units sum to %zu", what, b, pb->size, sum);
        CHECK(pb->size <= limit, "%s: buffer %d of %zu bytes exceeds the limit %zu", what, b, pb->size, limit);
        CHECK(b == 0 || p->bufs[b - 1].size >= pb->size, "%s: buffers not largest first at %d", what, b);
        total += pb->size;
        if (print) {
            printf("  buffer %d: %8.2f MiB, %2d units:%s\n", b, pb->size / MiB, pb->n_units, desc);
        }
    }
    CHECK(total == want_total, "%s: plan holds %zu bytes, tensors need %zu", what, total, want_total);
    for (int i = 0; i < l->n; i++) {
        CHECK(buf_of[i] >= 0 || l->t[i].skip, "%s: tensor %s not planned", what, l->t[i].name);
    }
    if (whole_layers) {
        // No layer split: every tensor of layer L (of a kind) in one buffer.
        for (int i = 0; i < l->n; i++) {
            int ki, li;
            if (!htp_planner_layer(l->t[i].name, &ki, &li)) {
                continue;
            }
            for (int j = i + 1; j < l->n; j++) {
                int kj, lj;
                if (htp_planner_layer(l->t[j].name, &kj, &lj) && kj == ki && lj == li) {
                    CHECK(buf_of[i] == buf_of[j], "%s: layer %d split: %s in buffer %d, %s in %d", what, li,
                          l->t[i].name, buf_of[i], l->t[j].name, buf_of[j]);
                }
            }
        }
    }
    free(buf_of);
}

static void test_plans(void) {
    static struct list l;
    const size_t       align = 128, limit = (size_t)1 << 30;
    struct htp_plan    p;
    const struct {
        const char *   name;
        enum ggml_type type;
    } wts[] = {{"Llama-3.2-1B F16 weights", GGML_TYPE_F16}, {"Llama-3.2-1B Q4_0 weights", GGML_TYPE_Q4_0}};
    for (int w = 0; w < 2; w++) {
        llama_1b(&l, wts[w].type);
        CHECK(htp_planner_plan(l.t, l.n, align, limit, &p) == 0, "plan");
        check_plan(wts[w].name, &l, &p, align, limit, true, true);
        if (w == 0) {
            // 2.4 GB of F16 in 1 GiB buffers: at least three, first-fit fills them.
            CHECK(p.n_bufs == 3, "F16: %d buffers, want 3", p.n_bufs);
        } else {
            CHECK(p.n_bufs == 1, "Q4_0: %d buffers, want 1", p.n_bufs);
        }
        htp_planner_free(&p);
    }
    llama_1b_kv(&l);
    CHECK(htp_planner_plan(l.t, l.n, align, limit, &p) == 0, "plan");
    check_plan("Llama-3.2-1B KV cache (4096 positions, F16)", &l, &p, align, limit, true, true);
    CHECK(p.n_units == 16, "KV: %d units, want one per layer", p.n_units);
    htp_planner_free(&p);

    // A limit below one layer (F16 layer: ~116 MiB; 48 MiB limit): layers
    // are cut into units that fit, as the reference cuts them.
    llama_1b(&l, GGML_TYPE_F16);
    for (int i = 0; i < l.n; i++) {
        l.t[i].skip = strcmp(l.t[i].name, "token_embd.weight") == 0;  // 500 MiB alone: placed elsewhere
    }
    const size_t small = (size_t)48 << 20;
    CHECK(htp_planner_plan(l.t, l.n, align, small, &p) == 0, "plan");
    check_plan("F16 weights, 48 MiB limit", &l, &p, align, small, false, false);
    printf("F16 weights (embedding placed), 48 MiB limit: %d units in %d buffers, all within the limit\n", p.n_units,
           p.n_bufs);
    htp_planner_free(&p);

    // Nothing to place: an empty plan.
    for (int i = 0; i < l.n; i++) {
        l.t[i].skip = true;
    }
    CHECK(htp_planner_plan(l.t, l.n, align, limit, &p) == 0 && p.n_bufs == 0, "all skipped: %d buffers", p.n_bufs);
    htp_planner_free(&p);
    CHECK(htp_planner_plan(l.t, l.n, 100, limit, &p) != 0, "alignment 100 accepted");
}

// --- 4. ggml on HTP0 ---

static void test_ggml(void) {
    ggml_backend_reg_t reg = ggml_backend_htp_reg();
    ggml_backend_dev_t dev = ggml_backend_reg_dev_count(reg) > 0 ? ggml_backend_reg_dev_get(reg, 0) : NULL;
    if (!dev) {
        printf("no HTP0 device: ggml part skipped\n");
        return;
    }
    ggml_backend_htp_alloc_ctx_tensors_t alloc =
        (ggml_backend_htp_alloc_ctx_tensors_t)ggml_backend_reg_get_proc_address(reg,
                                                                                "ggml_backend_htp_alloc_ctx_tensors");
    CHECK(alloc == ggml_backend_htp_alloc_ctx_tensors, "get_proc_address");
    ggml_backend_buffer_type_t buft = ggml_backend_dev_buffer_type(dev);

    // 4 layers of 5 F32 tensors of 64 x 256 (64 KiB each), an embedding and a view.
    struct ggml_init_params ip  = {64 * ggml_tensor_overhead(), NULL, true};
    struct ggml_context *   ctx = ggml_init(ip);
    struct ggml_tensor *    emb = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 256);
    ggml_set_name(emb, "token_embd.weight");
    struct ggml_tensor * w[4][5];
    for (int i = 0; i < 4; i++) {
        for (int k = 0; k < 5; k++) {
            w[i][k] = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 256);
            ggml_format_name(w[i][k], "blk.%d.w%d.weight", i, k);
        }
    }
    struct ggml_tensor * view = ggml_view_1d(ctx, w[2][3], 16, 64 * sizeof(float));
    ggml_set_name(view, "view");

    // Limit 3 tensors' worth... of 5-tensor layers would cut them; 6 tensors keeps each whole.
    const size_t          one = 64 * 256 * sizeof(float);
    ggml_backend_buffer_t buf = htp_planner_alloc_ctx_tensors(ctx, buft, 6 * one);
    CHECK(buf != NULL, "planned allocation failed");
    if (buf) {
        CHECK(ggml_backend_buffer_get_size(buf) == 21 * one, "total %zu, want %zu", ggml_backend_buffer_get_size(buf),
              21 * one);
        int                   n_distinct = 0;
        ggml_backend_buffer_t seen[8];
        for (int i = 0; i < 4; i++) {
            for (int k = 0; k < 5; k++) {
                CHECK(w[i][k]->data && w[i][k]->buffer == w[i][0]->buffer, "blk.%d split across buffers", i);
            }
            bool known = false;
            for (int s = 0; s < n_distinct; s++) {
                known |= seen[s] == w[i][0]->buffer;
            }
            if (!known && n_distinct < 8) {
                seen[n_distinct++] = w[i][0]->buffer;
            }
        }
        // 4 layers of 5 in buffers of 6 tensors: one layer per buffer, the embedding in the first.
        CHECK(n_distinct == 4, "%d buffers for 4 layers, want 4", n_distinct);
        CHECK(emb->data != NULL, "embedding not placed");
        CHECK(view->data == (char *)w[2][3]->data + 64 * sizeof(float) && view->buffer == w[2][3]->buffer,
              "view not initialised");
        float in[64 * 256], out[64 * 256];
        for (int i = 0; i < 64 * 256; i++) {
            in[i] = (float)i * 0.5f;
        }
        ggml_backend_tensor_set(w[3][4], in, 0, sizeof in);
        ggml_backend_tensor_get(w[3][4], out, 0, sizeof out);
        CHECK(memcmp(in, out, sizeof in) == 0, "data does not read back");
        printf("ggml: 21 tensors in %d HTP0 buffers of <= 6 tensors, layers whole, view set, data reads back\n",
               n_distinct);
        ggml_backend_buffer_free(buf);
    }
    ggml_free(ctx);

    // The extension with the configured limit (1 GiB): one buffer for everything.
    ctx = ggml_init(ip);
    for (int i = 0; i < 3; i++) {
        struct ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1000);
        ggml_format_name(t, "blk.%d.x.weight", i);
    }
    buf = alloc(ctx, buft);
    CHECK(buf && ggml_backend_buffer_get_size(buf) == 3 * 4096, "extension: %zu bytes",
          buf ? ggml_backend_buffer_get_size(buf) : 0);
    ggml_backend_buffer_free(buf);
    // Everything placed already: nothing to allocate.
    CHECK(alloc(ctx, buft) == NULL, "second allocation of a placed context");
    ggml_free(ctx);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_names();
    test_plans();
    test_ggml();
    return test_exit_code("test-planner");
}
