// test-engines: GGML_HEXAGON_NHMX, _MM_SELECT, _FA_SELECT and _FA_SPLIT as a
// ggml user sees them. Each run (one per combination, see CMakeLists.txt)
// is told on its command line what the environment must give:
//
//   test-engines <mm> <fa> <split>    mm, fa: hmx | hvx | cpu   split: split | nosplit
//
// and checks, for MUL_MAT (F32, Q4_0, Q4_K weights), MUL_MAT_ID (Q8_0) and
// FLASH_ATTN_EXT (F16 K/V, a GQA prefill and a one-head decode):
//   - the result matches ggml-cpu (NMSE under ggml's 5e-4), computed through
//     a scheduler with HTP0 and the CPU, as libllama does;
//   - supports_op refuses the family at level cpu (the scheduler then gives
//     the node to the CPU), and claims it otherwise;
//   - the unit the NPU reports in the op's profile descriptor (htp-proto.h's
//     enum htp_unit) is the expected one: many columns / query rows take
//     HMX only when it is expected, one column / row always takes HVX;
//   - the decode attention cuts its KV sequence across workers exactly when
//     split is expected and the session has more than one worker.

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-htp.h"
#include "ggml.h"
#include "host/device.h"
#include "host/session-submit.h"
#include "host/session.h"
#include "test-check.h"

enum expect { EXPECT_HMX, EXPECT_HVX, EXPECT_CPU };

static int parse_expect(const char * s, enum expect * e) {
    if (strcmp(s, "hmx") == 0) {
        *e = EXPECT_HMX;
    } else if (strcmp(s, "hvx") == 0) {
        *e = EXPECT_HVX;
    } else if (strcmp(s, "cpu") == 0) {
        *e = EXPECT_CPU;
    } else {
        return -1;
    }
    return 0;
}

static const char * unit_name(uint32_t u) {
    return u == HTP_UNIT_HMX ? "HMX" : u == HTP_UNIT_HVX ? "HVX" : "none";
}

static ggml_backend_dev_t   htp_dev;
static ggml_backend_t       htp, cpu;
static struct htp_session * sess;
static int                  expect_split;

static float frand(void) {
    return (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
}

// Fill t with random values in [-1, 1] (quantized for block types).
static void fill(struct ggml_tensor * t) {
    const int64_t n = ggml_nelements(t);
    float *       v = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        v[i] = frand();
    }
    if (t->type == GGML_TYPE_F32) {
        ggml_backend_tensor_set(t, v, 0, ggml_nbytes(t));
    } else {
        void * q = malloc(ggml_nbytes(t));
        if (t->type == GGML_TYPE_F16) {
            ggml_fp32_to_fp16_row(v, q, n);
        } else {
            ggml_quantize_chunk(t->type, v, q, 0, n / t->ne[0], t->ne[0], NULL);
        }
        ggml_backend_tensor_set(t, q, 0, ggml_nbytes(t));
        free(q);
    }
    free(v);
}

static double nmse(const float * a, const float * b, int64_t n) {
    double e = 0, r = 0;
    for (int64_t i = 0; i < n; i++) {
        e += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        r += (double)a[i] * a[i];
    }
    return r > 0 ? e / r : e;
}

// One op: the first input (weights, or FLASH_ATTN_EXT's q) lives in a buffer
// of its own, as libllama's weights do; the other inputs in a second one; the
// node is allocated by the scheduler. shape: what build() makes.
struct op_shape {
    enum ggml_op   op;
    enum ggml_type wt;                               // MUL_MAT(_ID) weight type
    int64_t        K, M, n;                          // MUL_MAT: [K, M] x n columns
    int64_t        n_as, n_used, T;                  // MUL_MAT_ID
    int64_t        d, n_q, n_head, n_kv, n_head_kv;  // FLASH_ATTN_EXT (F16 K/V, causal mask)
};

struct op_graph {
    struct ggml_context * ctx_w, *ctx_in, *ctx_op;
    ggml_backend_buffer_t buf_w, buf_in;
    struct ggml_cgraph *  gf;
    struct ggml_tensor *  out;
    struct ggml_tensor *  in[4];
    int                   n_in;
    struct ggml_tensor *  mask;  // F16 [n_kv, n_q]: -inf past each row's causal end
    struct ggml_tensor *  ids;   // MUL_MAT_ID: I32 [n_used, T]
};

static struct ggml_context * new_ctx(void) {
    struct ggml_init_params ip = {16 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true};
    return ggml_init(ip);
}

static void set_inputs(struct op_graph * g) {
    srand(1234);
    for (int i = 0; i < g->n_in; i++) {
        fill(g->in[i]);
    }
    if (g->mask) {
        const int64_t n_kv = g->mask->ne[0], n_q = g->mask->ne[1];
        ggml_fp16_t * m = malloc(sizeof(ggml_fp16_t) * (size_t)(n_kv * n_q));
        for (int64_t t = 0; t < n_q; t++) {
            for (int64_t j = 0; j < n_kv; j++) {
                m[t * n_kv + j] = ggml_fp32_to_fp16(j <= n_kv - n_q + t ? 0.0f : -INFINITY);
            }
        }
        ggml_backend_tensor_set(g->mask, m, 0, ggml_nbytes(g->mask));
        free(m);
    }
    if (g->ids) {
        const int64_t n_used = g->ids->ne[0], T = g->ids->ne[1], n_as = g->in[0]->ne[2];
        int32_t *     id = malloc(sizeof(int32_t) * (size_t)(n_used * T));
        for (int64_t t = 0; t < T; t++) {
            for (int64_t s = 0; s < n_used; s++) {
                id[t * n_used + s] = (int32_t)((t + s * 3) % n_as);  // distinct per token
            }
        }
        ggml_backend_tensor_set(g->ids, id, 0, ggml_nbytes(g->ids));
        free(id);
    }
}

// Build op sh with its inputs in buffers of backend b, filled.
static int build(struct op_graph * g, const struct op_shape * sh, ggml_backend_t b) {
    memset(g, 0, sizeof *g);
    g->ctx_w  = new_ctx();
    g->ctx_in = new_ctx();
    g->ctx_op = new_ctx();
    switch (sh->op) {
        case GGML_OP_MUL_MAT:
            g->in[0] = ggml_new_tensor_2d(g->ctx_w, sh->wt, sh->K, sh->M);
            g->in[1] = ggml_new_tensor_2d(g->ctx_in, GGML_TYPE_F32, sh->K, sh->n);
            g->n_in  = 2;
            g->out   = ggml_mul_mat(g->ctx_op, g->in[0], g->in[1]);
            break;
        case GGML_OP_MUL_MAT_ID:
            g->in[0] = ggml_new_tensor_3d(g->ctx_w, sh->wt, sh->K, sh->M, sh->n_as);
            g->in[1] = ggml_new_tensor_3d(g->ctx_in, GGML_TYPE_F32, sh->K, sh->n_used, sh->T);
            g->n_in  = 2;
            g->ids   = ggml_new_tensor_2d(g->ctx_in, GGML_TYPE_I32, sh->n_used, sh->T);
            g->out   = ggml_mul_mat_id(g->ctx_op, g->in[0], g->in[1], g->ids);
            break;
        default:
            g->in[0] = ggml_new_tensor_3d(g->ctx_w, GGML_TYPE_F32, sh->d, sh->n_q, sh->n_head);
            g->in[1] = ggml_new_tensor_3d(g->ctx_in, GGML_TYPE_F16, sh->d, sh->n_kv, sh->n_head_kv);
            g->in[2] = ggml_new_tensor_3d(g->ctx_in, GGML_TYPE_F16, sh->d, sh->n_kv, sh->n_head_kv);
            g->n_in  = 3;
            g->mask  = ggml_new_tensor_2d(g->ctx_in, GGML_TYPE_F16, sh->n_kv, sh->n_q);
            g->out   = ggml_flash_attn_ext(g->ctx_op, g->in[0], g->in[1], g->in[2], g->mask, 1.0f / sqrtf((float)sh->d),
                                           0.0f, 0.0f);
            ggml_flash_attn_ext_set_prec(g->out, GGML_PREC_F32);
            break;
    }
    ggml_set_output(g->out);
    g->gf = ggml_new_graph(g->ctx_op);
    ggml_build_forward_expand(g->gf, g->out);
    g->buf_w  = ggml_backend_alloc_ctx_tensors(g->ctx_w, b);
    g->buf_in = ggml_backend_alloc_ctx_tensors(g->ctx_in, b);
    if (!g->buf_w || !g->buf_in) {
        return -1;
    }
    if (sh->op != GGML_OP_FLASH_ATTN_EXT) {
        ggml_backend_buffer_set_usage(g->buf_w, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);  // stored tiled on HTP
    }
    set_inputs(g);
    return 0;
}

static void release(struct op_graph * g) {
    ggml_backend_buffer_free(g->buf_w);
    ggml_backend_buffer_free(g->buf_in);
    ggml_free(g->ctx_w);
    ggml_free(g->ctx_in);
    ggml_free(g->ctx_op);
}

// Compute sh with its inputs on backend b, through a scheduler of b and the
// CPU (just the CPU when b is it); out receives the result. Returns the
// backend the scheduler gave the node, NULL on failure.
static ggml_backend_t compute(const struct op_shape * sh, ggml_backend_t b, float * out, int64_t n) {
    struct op_graph g;
    ggml_backend_t  where = NULL;
    if (build(&g, sh, b) == 0 && ggml_nelements(g.out) == n) {
        ggml_backend_t       backends[2] = {b, cpu};
        ggml_backend_sched_t sched       = ggml_backend_sched_new(backends, NULL, b == cpu ? 1 : 2, 64, false, false);
        if (ggml_backend_sched_alloc_graph(sched, g.gf) &&
            ggml_backend_sched_graph_compute(sched, g.gf) == GGML_STATUS_SUCCESS) {
            ggml_backend_sched_synchronize(sched);
            ggml_backend_tensor_get(g.out, out, 0, ggml_nbytes(g.out));
            where = ggml_backend_sched_get_tensor_backend(sched, g.out);
        }
        ggml_backend_sched_free(sched);
    }
    release(&g);
    return where;
}

// The node of sh, for supports_op (no buffers).
static bool claimed(const struct op_shape * sh) {
    struct ggml_context * ctx = new_ctx();
    struct ggml_tensor *  node;
    switch (sh->op) {
        case GGML_OP_MUL_MAT:
            node = ggml_mul_mat(ctx, ggml_new_tensor_2d(ctx, sh->wt, sh->K, sh->M),
                                ggml_new_tensor_2d(ctx, GGML_TYPE_F32, sh->K, sh->n));
            break;
        case GGML_OP_MUL_MAT_ID:
            node = ggml_mul_mat_id(ctx, ggml_new_tensor_3d(ctx, sh->wt, sh->K, sh->M, sh->n_as),
                                   ggml_new_tensor_3d(ctx, GGML_TYPE_F32, sh->K, sh->n_used, sh->T),
                                   ggml_new_tensor_2d(ctx, GGML_TYPE_I32, sh->n_used, sh->T));
            break;
        default:
            node = ggml_flash_attn_ext(ctx, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, sh->d, sh->n_q, sh->n_head),
                                       ggml_new_tensor_3d(ctx, GGML_TYPE_F16, sh->d, sh->n_kv, sh->n_head_kv),
                                       ggml_new_tensor_3d(ctx, GGML_TYPE_F16, sh->d, sh->n_kv, sh->n_head_kv),
                                       ggml_new_tensor_2d(ctx, GGML_TYPE_F16, sh->n_kv, sh->n_q),
                                       1.0f / sqrtf((float)sh->d), 0.0f, 0.0f);
            ggml_flash_attn_ext_set_prec(node, GGML_PREC_F32);
            break;
    }
    const bool yes = ggml_backend_dev_supports_op(htp_dev, node);
    ggml_free(ctx);
    return yes;
}

static int64_t out_elements(const struct op_shape * sh) {
    switch (sh->op) {
        case GGML_OP_MUL_MAT:
            return sh->M * sh->n;
        case GGML_OP_MUL_MAT_ID:
            return sh->M * sh->n_used * sh->T;
        default:
            return sh->d * sh->n_head * sh->n_q;
    }
}

// The engine word of the last batch's op with this code (0 if none ran).
static int last_engine(uint32_t opcode, uint32_t * engine) {
    struct htp_opbatch_rsp       rsp;
    const struct htp_prof_desc * prof = NULL;
    uint32_t                     n    = 0;
    if (htp_session_last_profile(sess, &rsp, &prof, &n) != 0 || !prof) {
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (prof[i].opcode == opcode) {
            *engine = prof[i].engine;
            return 0;
        }
    }
    return -1;
}

// Run case sh (named name, HTP op code opcode): the claim, the result and
// the unit. want_unit: what an HTP run must report (ignored at level cpu);
// split: -1 don't care, else whether the KV split flag must be set.
static void run_case(const char * name, const struct op_shape * sh, uint32_t opcode, enum expect level,
                     uint32_t want_unit, int split) {
    const int64_t n    = out_elements(sh);
    float *       want = malloc(sizeof(float) * (size_t)n);
    float *       got  = malloc(sizeof(float) * (size_t)n);

    if (compute(sh, cpu, want, n) != cpu) {
        CHECK(0, "%s: CPU reference", name);
        free(want);
        free(got);
        return;
    }

    const bool yes = claimed(sh);
    CHECK(yes == (level != EXPECT_CPU), "%s: supports_op says %s at level %s", name, yes ? "yes" : "no",
          level == EXPECT_CPU ? "cpu" : "hvx/hmx");

    ggml_backend_t where = compute(sh, htp, got, n);
    CHECK(where == (level == EXPECT_CPU ? cpu : htp), "%s: the scheduler gave the op to %s", name,
          where ? ggml_backend_name(where) : "(failed)");
    const double e = where ? nmse(want, got, n) : INFINITY;
    CHECK(e < 5e-4, "%s: NMSE %.3e vs ggml-cpu", name, e);

    uint32_t engine = 0;
    if (where == htp) {
        CHECK(last_engine(opcode, &engine) == 0, "%s: no profile descriptor of the op", name);
        const uint32_t unit = engine & HTP_ENGINE_UNIT_MASK;
        CHECK(unit == want_unit, "%s: ran on %s, want %s", name, unit_name(unit), unit_name(want_unit));
        if (split >= 0) {
            const int did = (engine & HTP_ENGINE_KV_SPLIT) != 0;
            CHECK(did == split, "%s: KV split %d, want %d", name, did, split);
        }
    }
    printf("  %-30s %-5s engine %#6x  nmse %.2e\n", name, where ? ggml_backend_name(where) : "-", engine, e);
    free(want);
    free(got);
}

static uint32_t many_unit(enum expect level) {
    return level == EXPECT_HMX ? HTP_UNIT_HMX : HTP_UNIT_HVX;
}

int main(int argc, char ** argv) {
    enum expect mm, fa;
    if (argc != 4 || parse_expect(argv[1], &mm) || parse_expect(argv[2], &fa) ||
        (strcmp(argv[3], "split") != 0 && strcmp(argv[3], "nosplit") != 0)) {
        fprintf(stderr, "usage: %s hmx|hvx|cpu hmx|hvx|cpu split|nosplit\n", argv[0]);
        return 1;
    }
    expect_split = strcmp(argv[3], "split") == 0;
    // Profile descriptors reach the host only with profiling on.
    setenv("GGML_HEXAGON_PROFILE", "1", 1);
    setvbuf(stdout, NULL, _IOLBF, 0);

    ggml_backend_register(ggml_backend_htp_reg());
    htp_dev = ggml_backend_dev_by_name("HTP0");
    htp     = htp_dev ? ggml_backend_dev_init(htp_dev, NULL) : NULL;
    cpu     = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, NULL);
    if (!htp || !cpu) {
        printf("test-engines: no HTP0 / CPU backend, skipping\n");
        return 77;
    }
    sess = htp_device_session((struct htp_device *)htp_dev->context);
    CHECK_OR_RETURN(1, sess != NULL, "HTP0 session");
    const uint32_t n_threads = htp_session_n_threads(sess);
    printf("test-engines: mm %s, fa %s, %s; %u NPU worker(s)\n", argv[1], argv[2], argv[3], n_threads);

    const struct {
        const char *   name;
        enum ggml_type type;
        int64_t        n;
    } mm_cases[] = {
        {"MUL_MAT f32 n=8", GGML_TYPE_F32, 8},   {"MUL_MAT f32 n=1", GGML_TYPE_F32, 1},
        {"MUL_MAT q4_0 n=8", GGML_TYPE_Q4_0, 8}, {"MUL_MAT q4_0 n=1", GGML_TYPE_Q4_0, 1},
        {"MUL_MAT q4_K n=8", GGML_TYPE_Q4_K, 8}, {"MUL_MAT q4_K n=1", GGML_TYPE_Q4_K, 1},
    };
    for (size_t i = 0; i < sizeof mm_cases / sizeof mm_cases[0]; i++) {
        const struct op_shape sh = {
            .op = GGML_OP_MUL_MAT, .wt = mm_cases[i].type, .K = 256, .M = 96, .n = mm_cases[i].n};
        run_case(mm_cases[i].name, &sh, HTP_OP_MUL_MAT, mm, mm_cases[i].n > 1 ? many_unit(mm) : HTP_UNIT_HVX, -1);
    }
    const struct op_shape id = {
        .op = GGML_OP_MUL_MAT_ID, .wt = GGML_TYPE_Q8_0, .K = 256, .M = 64, .n_as = 4, .n_used = 2, .T = 6};
    run_case("MUL_MAT_ID q8_0 2 of 4, T=6", &id, HTP_OP_MUL_MAT_ID, mm, many_unit(mm), -1);

    // GQA prefill: 4 query heads per KV head, 8 tokens: items of several rows.
    const struct op_shape gqa = {
        .op = GGML_OP_FLASH_ATTN_EXT, .d = 64, .n_q = 8, .n_head = 4, .n_kv = 256, .n_head_kv = 1};
    run_case("FLASH_ATTN_EXT gqa 4:1 n_q=8", &gqa, HTP_OP_FLASH_ATTN_EXT, fa, many_unit(fa), -1);
    // Decode, one head: a single one-row item, so its KV sequence is split
    // across the workers when FA_SPLIT allows it.
    const struct op_shape dec = {
        .op = GGML_OP_FLASH_ATTN_EXT, .d = 64, .n_q = 1, .n_head = 1, .n_kv = 512, .n_head_kv = 1};
    run_case("FLASH_ATTN_EXT decode 1 head", &dec, HTP_OP_FLASH_ATTN_EXT, fa, HTP_UNIT_HVX,
             expect_split && n_threads > 1);

    ggml_backend_free(htp);
    ggml_backend_free(cpu);
    return test_exit_code("test-engines");
}
