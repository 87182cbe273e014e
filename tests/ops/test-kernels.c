// test-kernels: op conformance of the NPU kernels (src/npu/ops) against
// ggml-cpu. Each case builds one ggml op on a ggml context, computes it with
// the CPU backend, then runs the contract's check and our kernel on the same input
// bytes (views pointing at the CPU tensors) into a separate output buffer,
// once with 1 worker and once with 3 (workers run one after another, last
// first, so a slice that depends on another's output shows), and compares
// with normalised MSE against ggml's test-backend-ops thresholds. Output
// buffers may be laid out differently from ggml's (padded rows, swapped
// dims, strided elements) to exercise non-contiguous dst. Inputs that
// ggml-cpu only takes contiguous are given to our kernel as a
// non-contiguous view while the CPU graph reads a ggml_cont of that view.
// Also: fp16 conversion against ggml, exp accuracy, and refusals (bad
// indices, unsupported modes, a scratch area too small).
// Exit 0 pass, 1 fail.

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml.h"
#include "contract/op-check.h"
#include "contract/tiled.h"
#include "contract/type-traits.h"
#include "npu/ops/kernels.h"
#include "npu/ops/quant.h"
#include "npu/ops/vec.h"
#include "test-check.h"

// (The ggml values op params carry are checked in test-contract.)

// ggml op -> HTP op code (the host backend keeps its own table).
static const struct {
    enum ggml_op g;
    uint32_t     h;
} op_map[] = {
    {GGML_OP_ADD, HTP_OP_ADD},           {GGML_OP_SUB, HTP_OP_SUB},           {GGML_OP_MUL, HTP_OP_MUL},
    {GGML_OP_DIV, HTP_OP_DIV},           {GGML_OP_SCALE, HTP_OP_SCALE},       {GGML_OP_UNARY, HTP_OP_UNARY},
    {GGML_OP_GLU, HTP_OP_GLU},           {GGML_OP_RMS_NORM, HTP_OP_RMS_NORM}, {GGML_OP_SOFT_MAX, HTP_OP_SOFT_MAX},
    {GGML_OP_ROPE, HTP_OP_ROPE},         {GGML_OP_MUL_MAT, HTP_OP_MUL_MAT},   {GGML_OP_GET_ROWS, HTP_OP_GET_ROWS},
    {GGML_OP_SET_ROWS, HTP_OP_SET_ROWS}, {GGML_OP_ADD_ID, HTP_OP_ADD_ID},
};

static uint32_t htp_opcode(enum ggml_op op) {
    for (size_t i = 0; i < sizeof op_map / sizeof op_map[0]; i++) {
        if (op_map[i].g == op) {
            return op_map[i].h;
        }
    }
    return HTP_OP_INVALID;
}

// ---------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------

static ggml_backend_t g_cpu;
static int            g_skip;  // cases ggml-cpu cannot compute
static uint64_t       g_rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd_u32(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 11);
}

static float rnd_f(float lo, float hi) {
    return lo + (hi - lo) * (float)(rnd_u32() & 0xffffff) / (float)0x1000000;
}

enum init_kind {
    INIT_RAND,     // uniform [-1, 1]
    INIT_NONZERO,  // +-[0.5, 2] (divisors)
    INIT_IDX,      // integers in [0, arg)
    INIT_UNIQUE,   // each row (dim 0) a distinct set of integers in [0, arg)
    INIT_MASK,     // uniform [-1, 1], about 1 in 5 -inf (never element 0)
    INIT_WIDE,     // uniform [-8, 8]
    INIT_LAST,     // indices 0, 1, 2, ... except the last element, which is arg
};

struct leaf {
    struct ggml_tensor * t;
    enum init_kind       kind;
    int64_t              arg;
};

#define MAX_LEAVES 16
static struct leaf g_leaves[MAX_LEAVES];
static int         g_n_leaves;

static struct ggml_tensor * leaf4(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2,
                                  int64_t ne3, enum init_kind kind, int64_t arg) {
    struct ggml_tensor * t = ggml_new_tensor_4d(ctx, type, ne0, ne1, ne2, ne3);
    if (g_n_leaves < MAX_LEAVES) {
        g_leaves[g_n_leaves++] = (struct leaf){t, kind, arg};
    }
    return t;
}

static struct ggml_tensor * leaf(struct ggml_context * ctx, enum ggml_type type, const int64_t ne[4],
                                 enum init_kind kind) {
    return leaf4(ctx, type, ne[0], ne[1], ne[2], ne[3], kind, 0);
}

static void put_f(struct ggml_tensor * t, size_t i, float v) {  // contiguous element i
    if (t->type == GGML_TYPE_F32) {
        ((float *)t->data)[i] = v;
    } else {
        ((ggml_fp16_t *)t->data)[i] = ggml_fp32_to_fp16(v);
    }
}

static void put_i(struct ggml_tensor * t, size_t i, int64_t v) {
    if (t->type == GGML_TYPE_I64) {
        ((int64_t *)t->data)[i] = v;
    } else {
        ((int32_t *)t->data)[i] = (int32_t)v;
    }
}

static void init_leaf(const struct leaf * l) {
    struct ggml_tensor * t = l->t;
    const size_t         n = (size_t)ggml_nelements(t);
    switch (l->kind) {
        case INIT_RAND:
            for (size_t i = 0; i < n; i++)
                put_f(t, i, rnd_f(-1, 1));
            break;
        case INIT_NONZERO:
            for (size_t i = 0; i < n; i++)
                put_f(t, i, (rnd_u32() & 1 ? 1 : -1) * rnd_f(0.5f, 2.0f));
            break;
        case INIT_MASK:
            for (size_t i = 0; i < n; i++) {
                const int inf = (i % t->ne[0]) != 0 && rnd_u32() % 5 == 0;
                put_f(t, i, inf ? -INFINITY : rnd_f(-1, 1));
            }
            break;
        case INIT_WIDE:
            for (size_t i = 0; i < n; i++)
                put_f(t, i, rnd_f(-8, 8));
            break;
        case INIT_IDX:
            for (size_t i = 0; i < n; i++)
                put_i(t, i, (int64_t)(rnd_u32() % (uint32_t)l->arg));
            break;
        case INIT_LAST:
            for (size_t i = 0; i < n; i++)
                put_i(t, i, i + 1 < n ? (int64_t)i : l->arg);
            break;
        case INIT_UNIQUE: {
            // Partial Fisher-Yates per row: ne0 distinct values out of arg.
            int64_t * perm = malloc(sizeof(int64_t) * (size_t)l->arg);
            for (size_t r = 0; r < n / (size_t)t->ne[0]; r++) {
                for (int64_t j = 0; j < l->arg; j++)
                    perm[j] = j;
                for (int64_t j = 0; j < t->ne[0]; j++) {
                    const int64_t k   = j + (int64_t)(rnd_u32() % (uint32_t)(l->arg - j));
                    const int64_t tmp = perm[j];
                    perm[j]           = perm[k];
                    perm[k]           = tmp;
                    put_i(t, r * (size_t)t->ne[0] + (size_t)j, perm[j]);
                }
            }
            free(perm);
        } break;
    }
}

static struct ggml_context * new_ctx(void) {
    struct ggml_init_params p = {ggml_tensor_overhead() * 64 + ggml_graph_overhead(), NULL, true};
    g_n_leaves                = 0;
    return ggml_init(p);
}

// Output buffer layouts for our kernel's dst.
enum dst_layout {
    DST_SAME,     // ggml's own strides
    DST_PADDED,   // rows padded by 40 bytes
    DST_SWAP12,   // dims 1 and 2 swapped in memory
    DST_STRIDED,  // elements 2 apart
    DST_COUNT
};

static const char * layout_name[DST_COUNT] = {"same", "padded", "swap12", "strided"};

static float get_elem(const uint8_t * base, const int64_t nb[4], enum ggml_type type, int64_t i0, int64_t i1,
                      int64_t i2, int64_t i3) {
    const uint8_t * p = base + i0 * nb[0] + i1 * nb[1] + i2 * nb[2] + i3 * nb[3];
    if (type == GGML_TYPE_F32) {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    ggml_fp16_t h;
    memcpy(&h, p, 2);
    return ggml_fp16_to_fp32(h);
}

static struct htp_tensor_view view_of(const struct ggml_tensor * t) {
    struct htp_tensor_view v;
    memset(&v, 0, sizeof v);
    v.data   = t->data;
    v.type   = (uint32_t)t->type;
    v.extent = 0;
    for (int i = 0; i < 4; i++) {
        v.ne[i] = t->ne[i];
        v.nb[i] = (int64_t)t->nb[i];
    }
    v.extent = ggml_nbytes(t);
    return v;
}

struct serial_pool {
    uint32_t nth;
};

// Runs the slices one after another, last first.
static void serial_run(void * pool, htp_job_fn job, void * arg) {
    const uint32_t nth = ((struct serial_pool *)pool)->nth;
    for (uint32_t i = nth; i-- > 0;) {
        job(arg, i, nth);
    }
}

struct tc {
    char                  name[200];
    struct ggml_context * ctx;
    struct ggml_tensor *  out;
    struct ggml_tensor *  alt[HTP_OP_MAX_INPUTS];  // given to our kernel instead of out->src[i]
    enum dst_layout       layout;
    double                max_err;
    int                   want_check;        // expected status of check (run only if OK)
    int                   want_run;          // expected status of run
    int                   no_ref;            // don't compute or compare (refusal tests)
    size_t                vtcm_size;         // 0: 8 MiB
    int32_t               params_patch_idx;  // >= 0: params[idx] = params_patch_val
    int32_t               params_patch_val;
};

static void tc_init(struct tc * c, struct ggml_context * ctx, struct ggml_tensor * out) {
    memset(c, 0, sizeof *c);
    c->ctx              = ctx;
    c->out              = out;
    c->max_err          = 1e-7;
    c->params_patch_idx = -1;
}

static double nmse(const float * want, const float * got, size_t n) {
    double err = 0, ref = 0;
    for (size_t i = 0; i < n; i++) {
        const double d = (double)want[i] - (double)got[i];
        err += d * d;
        ref += (double)want[i] * want[i];
    }
    return ref > 0 ? err / ref : err;
}

// Runs case c, frees its context, counts the result.
static void tc_run(struct tc * c) {
    struct ggml_tensor * out      = c->out;
    int                  ok       = 1;
    char                 why[256] = "";

    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(c->ctx, g_cpu);
    if (!buf) {
        printf("SKIP %s: allocation failed\n", c->name);
        g_skip++;
        ggml_free(c->ctx);
        return;
    }
    for (int i = 0; i < g_n_leaves; i++) {
        init_leaf(&g_leaves[i]);
    }

    // Our dst buffer, in the chosen layout.
    const enum ggml_type dt = out->type;
    const int64_t        es = (int64_t)ggml_type_size(dt);
    int64_t              nb[4];
    const int64_t *      ne = out->ne;
    switch (c->layout) {
        case DST_SAME:
            for (int i = 0; i < 4; i++)
                nb[i] = (int64_t)out->nb[i];
            break;
        case DST_PADDED:
            nb[0] = es, nb[1] = ne[0] * es + 40, nb[2] = nb[1] * ne[1], nb[3] = nb[2] * ne[2];
            break;
        case DST_SWAP12:
            nb[0] = es, nb[2] = ne[0] * es, nb[1] = nb[2] * ne[2], nb[3] = nb[1] * ne[1];
            break;
        default:
            nb[0] = 2 * es, nb[1] = 2 * es * ne[0], nb[2] = nb[1] * ne[1], nb[3] = nb[2] * ne[2];
            break;
    }
    size_t span = 0;
    for (int i = 0; i < 4; i++)
        span += (size_t)((ne[i] > 0 ? ne[i] - 1 : 0) * nb[i]);
    span += (size_t)es;
    const size_t  alloc     = (span + 127) / 128 * 128;
    uint8_t *     init      = aligned_alloc(128, alloc);
    uint8_t *     mine      = aligned_alloc(128, alloc);
    const int64_t n         = ggml_nelements(out);
    float *       want      = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    float *       got       = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    uint8_t *     vtcm      = NULL;
    const size_t  vtcm_size = c->vtcm_size ? c->vtcm_size : (size_t)8 << 20;
    vtcm                    = aligned_alloc(128, (vtcm_size + 127) / 128 * 128);

    // SET_ROWS writes into an existing tensor: start from its contents. Any
    // other op starts from NaN bytes, so an element left unwritten fails.
    memset(init, 0xff, alloc);
    if (out->op == GGML_OP_SET_ROWS) {
        for (int64_t i3 = 0; i3 < ne[3]; i3++)
            for (int64_t i2 = 0; i2 < ne[2]; i2++)
                for (int64_t i1 = 0; i1 < ne[1]; i1++)
                    for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                        const uint8_t * s = (const uint8_t *)out->data + i0 * out->nb[0] + i1 * out->nb[1] +
                                            i2 * out->nb[2] + i3 * out->nb[3];
                        memcpy(init + i0 * nb[0] + i1 * nb[1] + i2 * nb[2] + i3 * nb[3], s, (size_t)es);
                    }
    }

    if (!c->no_ref) {
        struct ggml_cgraph * gf = ggml_new_graph(c->ctx);
        ggml_build_forward_expand(gf, out);
        if (ggml_backend_graph_compute(g_cpu, gf) != GGML_STATUS_SUCCESS) {
            ok = 0;
            snprintf(why, sizeof why, "ggml-cpu failed");
        }
        size_t k = 0;
        for (int64_t i3 = 0; i3 < ne[3]; i3++)
            for (int64_t i2 = 0; i2 < ne[2]; i2++)
                for (int64_t i1 = 0; i1 < ne[1]; i1++)
                    for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                        const int64_t onb[4] = {(int64_t)out->nb[0], (int64_t)out->nb[1], (int64_t)out->nb[2],
                                                (int64_t)out->nb[3]};
                        want[k++]            = get_elem(out->data, onb, dt, i0, i1, i2, i3);
                    }
    }

    struct htp_op_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.opcode = htp_opcode(out->op);
    memcpy(desc.params, out->op_params, sizeof desc.params);
    if (c->params_patch_idx >= 0) {
        desc.params[c->params_patch_idx] = c->params_patch_val;
    }

    struct htp_tensor_view srcv[HTP_OP_MAX_INPUTS], dstv;
    struct htp_op_ctx      octx;
    memset(&octx, 0, sizeof octx);
    for (int i = 0; i < HTP_OP_MAX_INPUTS && i < GGML_MAX_SRC; i++) {
        const struct ggml_tensor * s = c->alt[i] ? c->alt[i] : out->src[i];
        if (s) {
            srcv[i]        = view_of(s);
            octx.op.src[i] = &srcv[i];
        }
    }
    dstv      = view_of(out);
    dstv.data = mine;
    for (int i = 0; i < 4; i++)
        dstv.nb[i] = nb[i];
    dstv.extent       = span;
    octx.op.dst[0]    = &dstv;
    octx.op.desc      = &desc;
    octx.vtcm         = vtcm;
    octx.op.vtcm_size = vtcm_size;
    octx.run          = serial_run;

    const uint32_t nths[2] = {1, 3};
    for (int t = 0; t < 2 && ok; t++) {
        struct serial_pool pool = {nths[t]};
        octx.op.n_threads       = nths[t];
        octx.pool               = &pool;
        memcpy(mine, init, alloc);
        const int rc = htp_op_check(&octx.op);
        if (rc != c->want_check) {
            ok = 0;
            snprintf(why, sizeof why, "nth=%u: check returned %d, want %d", nths[t], rc, c->want_check);
            break;
        }
        if (rc != HTP_STATUS_OK) {
            continue;
        }
        const int rr = htp_kernel_run(&octx);
        if (rr != c->want_run) {
            ok = 0;
            snprintf(why, sizeof why, "nth=%u: run returned %d, want %d", nths[t], rr, c->want_run);
            break;
        }
        if (c->no_ref || rr != HTP_STATUS_OK) {
            continue;
        }
        size_t k = 0;
        for (int64_t i3 = 0; i3 < ne[3]; i3++)
            for (int64_t i2 = 0; i2 < ne[2]; i2++)
                for (int64_t i1 = 0; i1 < ne[1]; i1++)
                    for (int64_t i0 = 0; i0 < ne[0]; i0++)
                        got[k++] = get_elem(mine, nb, dt, i0, i1, i2, i3);
        const double e = nmse(want, got, (size_t)n);
        if (!(e <= c->max_err)) {
            ok = 0;
            snprintf(why, sizeof why, "nth=%u: nmse %.3e > %.0e (first: want %g got %g)", nths[t], e, c->max_err,
                     n > 0 ? want[0] : 0.0, n > 0 ? got[0] : 0.0);
        }
    }

    CHECK(ok, "%s [dst %s]: %s", c->name, layout_name[c->layout], why);
    free(init);
    free(mine);
    free(want);
    free(got);
    free(vtcm);
    ggml_backend_buffer_free(buf);
    ggml_free(c->ctx);
}

static const char * tname(enum ggml_type t) {
    return ggml_type_name(t);
}

// A non-contiguous view of a fresh random tensor with the given shape:
// kind 0 padded rows (view into a wider tensor), kind 1 dims 1 and 2
// permuted (rows packed, others strided), kind 2 transposed (dim 0 strided).
static struct ggml_tensor * noncontig(struct ggml_context * ctx, enum ggml_type type, const int64_t ne[4], int kind,
                                      enum init_kind init) {
    if (kind == 0) {
        struct ggml_tensor * b = leaf4(ctx, type, ne[0] + 3, ne[1], ne[2], ne[3], init, 0);
        return ggml_view_4d(ctx, b, ne[0], ne[1], ne[2], ne[3], b->nb[1], b->nb[2], b->nb[3], 0);
    }
    if (kind == 1) {
        struct ggml_tensor * b = leaf4(ctx, type, ne[0], ne[2], ne[1], ne[3], init, 0);
        return ggml_permute(ctx, b, 0, 2, 1, 3);
    }
    struct ggml_tensor * b = leaf4(ctx, type, ne[1], ne[0], ne[2], ne[3], init, 0);
    return ggml_transpose(ctx, b);
}

// ---------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------

static const int64_t shapes[][4] = {
    {1, 1, 1, 1}, {3, 5, 1, 1}, {17, 3, 2, 1}, {33, 2, 3, 2}, {127, 3, 1, 2}, {1000, 2, 1, 1}, {4096, 1, 1, 1},
};
#define N_SHAPES ((int)(sizeof shapes / sizeof shapes[0]))

static void test_binary(void) {
    static const enum ggml_op   ops[4]      = {GGML_OP_ADD, GGML_OP_SUB, GGML_OP_MUL, GGML_OP_DIV};
    static const enum ggml_type types[3][3] = {
        // src0, src1, dst
        {GGML_TYPE_F32, GGML_TYPE_F32, GGML_TYPE_F32},
        {GGML_TYPE_F16, GGML_TYPE_F16, GGML_TYPE_F16},
        {GGML_TYPE_F16, GGML_TYPE_F32, GGML_TYPE_F16},
    };
    int k = 0;
    for (int o = 0; o < 4; o++)
        for (int s = 0; s < N_SHAPES; s++)
            for (int bc = 0; bc < 6; bc++)
                for (int ty = 0; ty < 3; ty++, k++) {
                    int64_t ne0[4], ne1[4];
                    memcpy(ne0, shapes[s], sizeof ne0);
                    memcpy(ne1, shapes[s], sizeof ne1);
                    switch (bc) {
                        case 1:
                            ne1[0] = 1;
                            break;
                        case 2:
                            ne1[1] = 1, ne1[2] = 1;
                            break;
                        case 3:
                            ne1[2] = 1, ne1[3] = 1;
                            break;
                        case 4:
                            ne1[0] = ne1[1] = ne1[2] = ne1[3] = 1;
                            break;
                        case 5:  // a proper divisor of ne0 repeats within the row
                            if (ne0[0] % 11 == 0)
                                ne1[0] = ne0[0] / 11;
                            else if (ne0[0] % 8 == 0)
                                ne1[0] = ne0[0] / 8;
                            else
                                continue;
                            ne1[1] = 1;
                            break;
                        default:
                            break;
                    }
                    const enum init_kind  i1  = ops[o] == GGML_OP_DIV ? INIT_NONZERO : INIT_RAND;
                    struct ggml_context * ctx = new_ctx();
                    const int             var = k % 4;
                    struct ggml_tensor *  a   = var == 2 ? noncontig(ctx, types[ty][0], ne0, 0, INIT_RAND)
                                                         : leaf(ctx, types[ty][0], ne0, INIT_RAND);
                    struct ggml_tensor *  b   = var == 1   ? noncontig(ctx, types[ty][1], ne1, 2, i1)
                                                : var == 3 ? noncontig(ctx, types[ty][1], ne1, 1, i1)
                                                           : leaf(ctx, types[ty][1], ne1, i1);
                    struct ggml_tensor *  out = NULL;
                    switch (ops[o]) {
                        case GGML_OP_ADD:
                            out = ggml_add(ctx, a, b);
                            break;
                        case GGML_OP_SUB:
                            out = ggml_sub(ctx, a, b);
                            break;
                        case GGML_OP_MUL:
                            out = ggml_mul(ctx, a, b);
                            break;
                        default:
                            out = ggml_div(ctx, a, b);
                            break;
                    }
                    if (out->type != types[ty][2]) {
                        ggml_free(ctx);
                        continue;
                    }
                    struct tc c;
                    tc_init(&c, ctx, out);
                    c.layout = (enum dst_layout)((k / 4) % DST_COUNT);
                    snprintf(c.name, sizeof c.name,
                             "%s %s,%s src0 [%lld,%lld,%lld,%lld] src1 [%lld,%lld,%lld,%lld] var %d",
                             ggml_op_name(ops[o]), tname(types[ty][0]), tname(types[ty][1]), (long long)ne0[0],
                             (long long)ne0[1], (long long)ne0[2], (long long)ne0[3], (long long)ne1[0],
                             (long long)ne1[1], (long long)ne1[2], (long long)ne1[3], var);
                    tc_run(&c);
                }
}

static void test_scale_silu(void) {
    static const float sb[3][2] = {{2.0f, 0.0f}, {0.5f, -1.25f}, {-3.0f, 0.75f}};
    int                k        = 0;
    for (int s = 0; s < N_SHAPES; s++)
        for (int p = 0; p < 3; p++, k++) {
            // SCALE: ggml-cpu takes only contiguous F32; a non-contiguous view goes to our kernel.
            struct ggml_context * ctx = new_ctx();
            const int             nc  = k % 3;  // 0 contiguous, 1 padded rows, 2 transposed
            struct ggml_tensor *  x   = nc ? noncontig(ctx, GGML_TYPE_F32, shapes[s], nc == 1 ? 0 : 2, INIT_RAND)
                                           : leaf(ctx, GGML_TYPE_F32, shapes[s], INIT_RAND);
            struct ggml_tensor *  out = ggml_scale_bias(ctx, nc ? ggml_cont(ctx, x) : x, sb[p][0], sb[p][1]);
            struct tc             c;
            tc_init(&c, ctx, out);
            c.alt[0] = nc ? x : NULL;
            c.layout = (enum dst_layout)(k % DST_COUNT);
            snprintf(c.name, sizeof c.name, "SCALE s=%g b=%g [%lld,%lld,%lld,%lld] noncontig %d", sb[p][0], sb[p][1],
                     (long long)shapes[s][0], (long long)shapes[s][1], (long long)shapes[s][2], (long long)shapes[s][3],
                     nc);
            tc_run(&c);
        }
    k = 0;
    for (int s = 0; s < N_SHAPES; s++)
        for (int ty = 0; ty < 2; ty++)
            for (int nc = 0; nc < 3; nc++, k++) {
                const enum ggml_type  t   = ty ? GGML_TYPE_F16 : GGML_TYPE_F32;
                struct ggml_context * ctx = new_ctx();
                // Inputs in [-8, 8] exercise both tails of the sigmoid.
                struct ggml_tensor * x =
                    nc ? noncontig(ctx, t, shapes[s], nc - 1, INIT_WIDE) : leaf(ctx, t, shapes[s], INIT_WIDE);
                struct ggml_tensor * out = ggml_silu(ctx, x);
                struct tc            c;
                tc_init(&c, ctx, out);
                c.layout = (enum dst_layout)(k % DST_COUNT);
                snprintf(c.name, sizeof c.name, "SILU %s [%lld,%lld,%lld,%lld] noncontig %d", tname(t),
                         (long long)shapes[s][0], (long long)shapes[s][1], (long long)shapes[s][2],
                         (long long)shapes[s][3], nc);
                tc_run(&c);
            }
}

static void test_glu(void) {
    static const int64_t ncs[] = {1, 3, 17, 64, 500};
    int                  k     = 0;
    for (int i = 0; i < 5; i++)
        for (int split = 0; split < 2; split++)
            for (int sw = 0; sw < 2; sw++)
                for (int ty = 0; ty < 2; ty++, k++) {
                    const enum ggml_type  t   = ty ? GGML_TYPE_F16 : GGML_TYPE_F32;
                    struct ggml_context * ctx = new_ctx();
                    const int64_t         nc = ncs[i], rows = 1 + k % 4, ne2 = 1 + k % 2;
                    struct ggml_tensor *  out;
                    if (split) {
                        struct ggml_tensor * a = leaf4(ctx, t, nc, rows, ne2, 1, INIT_RAND, 0);
                        struct ggml_tensor * b = leaf4(ctx, t, nc, rows, ne2, 1, INIT_RAND, 0);
                        out                    = ggml_swiglu_split(ctx, a, b);
                        out->op_params[1]      = sw;  // ignored in split form, as ggml does
                    } else {
                        struct ggml_tensor * a = leaf4(ctx, t, 2 * nc, rows, ne2, 1, INIT_RAND, 0);
                        out                    = sw ? ggml_swiglu_swapped(ctx, a) : ggml_swiglu(ctx, a);
                    }
                    struct tc c;
                    tc_init(&c, ctx, out);
                    c.layout = (enum dst_layout)(k % DST_COUNT);
                    snprintf(c.name, sizeof c.name, "GLU swiglu %s %s swapped %d nc %lld rows %lld", tname(t),
                             split ? "split" : "fused", sw, (long long)nc, (long long)rows);
                    tc_run(&c);
                }
}

static void test_rms_norm(void) {
    static const float eps[2] = {1e-6f, 1e-5f};
    int                k      = 0;
    for (int s = 0; s < N_SHAPES; s++)
        for (int e = 0; e < 2; e++)
            for (int nc = 0; nc < 3; nc++, k++) {
                struct ggml_context * ctx = new_ctx();
                struct ggml_tensor *  x   = nc ? noncontig(ctx, GGML_TYPE_F32, shapes[s], nc - 1, INIT_RAND)
                                               : leaf(ctx, GGML_TYPE_F32, shapes[s], INIT_RAND);
                struct ggml_tensor *  out = ggml_rms_norm(ctx, x, eps[e]);
                struct tc             c;
                tc_init(&c, ctx, out);
                c.layout = (enum dst_layout)(k % DST_COUNT);
                snprintf(c.name, sizeof c.name, "RMS_NORM eps %g [%lld,%lld,%lld,%lld] noncontig %d", eps[e],
                         (long long)shapes[s][0], (long long)shapes[s][1], (long long)shapes[s][2],
                         (long long)shapes[s][3], nc);
                tc_run(&c);
            }
    // F16 in and out through a non-contiguous transposed input.
    struct ggml_context * ctx   = new_ctx();
    const int64_t         ne[4] = {40, 6, 2, 1};
    struct ggml_tensor *  x     = noncontig(ctx, GGML_TYPE_F32, ne, 2, INIT_RAND);
    struct ggml_tensor *  out   = ggml_rms_norm(ctx, ggml_cont(ctx, x), 1e-6f);
    struct tc             c;
    tc_init(&c, ctx, out);
    c.alt[0] = x;
    c.layout = DST_STRIDED;
    snprintf(c.name, sizeof c.name, "RMS_NORM transposed input");
    tc_run(&c);
}

static void test_softmax(void) {
    static const int64_t ne0s[]     = {1, 3, 17, 33, 127, 1000};
    static const int64_t rows[2][3] = {{3, 4, 1}, {1, 2, 2}};  // ne1, ne2 (heads), ne3
    int                  k          = 0;
    for (int i = 0; i < 6; i++)
        for (int r = 0; r < 2; r++)
            for (int m = 0; m < 3; m++)
                for (int v = 0; v < 4; v++, k++) {
                    struct ggml_context * ctx   = new_ctx();
                    const int64_t         ne[4] = {ne0s[i], rows[r][0], rows[r][1], rows[r][2]};
                    struct ggml_tensor *  x     = leaf(ctx, GGML_TYPE_F32, ne, INIT_RAND);
                    struct ggml_tensor *  mask  = NULL;
                    if (m) {
                        // Mask rows beyond ne1 (as ggml pads them) and broadcast over heads in half the cases.
                        mask = leaf4(ctx, m == 1 ? GGML_TYPE_F32 : GGML_TYPE_F16, ne[0], ne[1] + 2, v % 2 ? 1 : ne[2],
                                     1, INIT_MASK, 0);
                    }
                    const float          scale    = v >= 2 ? 0.125f : 1.0f;
                    const float          max_bias = (m && v == 3) ? 8.0f : 0.0f;
                    struct ggml_tensor * out      = ggml_soft_max_ext(ctx, x, mask, scale, max_bias);
                    const int            sinks    = v == 1 || v == 2;
                    if (sinks) {
                        ggml_soft_max_add_sinks(out, leaf4(ctx, GGML_TYPE_F32, ne[2], 1, 1, 1, INIT_RAND, 0));
                    }
                    struct tc c;
                    tc_init(&c, ctx, out);
                    c.layout = (enum dst_layout)(k % DST_COUNT);
                    snprintf(c.name, sizeof c.name,
                             "SOFT_MAX [%lld,%lld,%lld,%lld] mask %s scale %g max_bias %g sinks %d", (long long)ne[0],
                             (long long)ne[1], (long long)ne[2], (long long)ne[3],
                             m == 0   ? "none"
                             : m == 1 ? "f32"
                                      : "f16",
                             scale, max_bias, sinks);
                    tc_run(&c);
                }
    // Non-contiguous input (ggml-cpu needs it contiguous; ours reads the view).
    for (int nc = 0; nc < 3; nc++) {
        struct ggml_context * ctx   = new_ctx();
        const int64_t         ne[4] = {37, 5, 3, 1};
        struct ggml_tensor *  x     = noncontig(ctx, GGML_TYPE_F32, ne, nc, INIT_RAND);
        struct ggml_tensor *  mask  = leaf4(ctx, GGML_TYPE_F16, 37, 8, 1, 1, INIT_MASK, 0);
        struct ggml_tensor *  out   = ggml_soft_max_ext(ctx, ggml_cont(ctx, x), mask, 0.3f, 0.0f);
        struct tc             c;
        tc_init(&c, ctx, out);
        c.alt[0] = x;
        c.layout = (enum dst_layout)nc;
        snprintf(c.name, sizeof c.name, "SOFT_MAX noncontig input kind %d", nc);
        tc_run(&c);
    }
}

static void test_rope(void) {
    static const int64_t ne0s[] = {2, 8, 64, 128};
    int                  k      = 0;
    for (int mode = 0; mode <= 2; mode += 2)
        for (int i = 0; i < 4; i++)
            for (int part = 0; part < 2; part++)
                for (int ty = 0; ty < 2; ty++)
                    for (int ff = 0; ff < 2; ff++)
                        for (int yarn = 0; yarn < 2; yarn++, k++) {
                            const int64_t ne0    = ne0s[i];
                            const int     n_dims = part ? (int)(ne0 / 2) : (int)ne0;
                            if (n_dims % 2 != 0)
                                continue;
                            const enum ggml_type  t     = ty ? GGML_TYPE_F16 : GGML_TYPE_F32;
                            struct ggml_context * ctx   = new_ctx();
                            const int64_t         ne[4] = {ne0, 3, 5, 1};
                            const int             nc    = k % 3 == 2;  // heads and tokens swapped in memory
                            struct ggml_tensor *  x =
                                nc ? noncontig(ctx, t, ne, 1, INIT_RAND) : leaf(ctx, t, ne, INIT_RAND);
                            struct ggml_tensor * pos = leaf4(ctx, GGML_TYPE_I32, ne[2], 1, 1, 1, INIT_IDX, 3000);
                            struct ggml_tensor * fft = NULL;
                            if (ff) {
                                fft = leaf4(ctx, GGML_TYPE_F32, n_dims / 2, 1, 1, 1, INIT_NONZERO, 0);
                            }
                            const float          freq_scale = yarn ? 0.25f : 1.0f, ext = yarn ? 1.0f : 0.0f;
                            const float          attn = yarn ? 1.1f : 1.0f;
                            struct ggml_tensor * out  = ggml_rope_ext(ctx, x, pos, fft, n_dims, mode, 4096, 10000.0f,
                                                                      freq_scale, ext, attn, 32.0f, 1.0f);
                            struct tc            c;
                            tc_init(&c, ctx, out);
                            c.layout = (enum dst_layout)(k % DST_COUNT);
                            snprintf(c.name, sizeof c.name,
                                     "ROPE mode %d %s ne0 %lld n_dims %d ff %d yarn %d noncontig %d", mode, tname(t),
                                     (long long)ne0, n_dims, ff, yarn, nc);
                            tc_run(&c);
                        }
}

static void test_mul_mat(void) {
    static const int64_t Ks[]     = {1, 3, 17, 32, 33, 127, 256};
    static const int64_t MN[][2]  = {{1, 1}, {17, 1}, {64, 1}, {3, 5}, {17, 33}, {40, 8}};
    static const int64_t bat[][4] = {{1, 1, 1, 1}, {2, 1, 4, 3}};  // ne02, ne03, ne12, ne13
    int                  k        = 0;
    for (int ty = 0; ty < 2; ty++)
        for (int ki = 0; ki < 7; ki++)
            for (int mi = 0; mi < 6; mi++)
                for (int b = 0; b < 2; b++, k++) {
                    const enum ggml_type  t = ty ? GGML_TYPE_F16 : GGML_TYPE_F32;
                    const int64_t         K = Ks[ki], M = MN[mi][0], N = MN[mi][1];
                    struct ggml_context * ctx    = new_ctx();
                    const int64_t         ne0[4] = {K, M, bat[b][0], bat[b][1]};
                    const int64_t         ne1[4] = {K, N, bat[b][2], bat[b][3]};
                    const int             v = k % 4;  // 0 plain, 1 src1 permuted, 2 src1 transposed, 3 src0 permuted
                    struct ggml_tensor *  w =
                        v == 3 ? noncontig(ctx, t, ne0, 1, INIT_RAND) : leaf(ctx, t, ne0, INIT_RAND);
                    struct ggml_tensor *x = NULL, *x_cpu;
                    if (v == 1) {
                        x = x_cpu = noncontig(ctx, GGML_TYPE_F32, ne1, 1, INIT_RAND);
                    } else if (v == 2) {
                        x     = noncontig(ctx, GGML_TYPE_F32, ne1, 2, INIT_RAND);
                        x_cpu = ggml_cont(ctx, x);  // ggml-cpu wants packed rows of src1
                    } else {
                        x = x_cpu = leaf(ctx, GGML_TYPE_F32, ne1, INIT_RAND);
                    }
                    struct ggml_tensor * out = ggml_mul_mat(ctx, w, x_cpu);
                    struct tc            c;
                    tc_init(&c, ctx, out);
                    c.alt[1]  = x;
                    c.max_err = 5e-4;
                    c.layout  = (enum dst_layout)((k / 4) % DST_COUNT);
                    snprintf(c.name, sizeof c.name,
                             "MUL_MAT %s K %lld M %lld N %lld batch %lldx%lld -> %lldx%lld var %d", tname(t),
                             (long long)K, (long long)M, (long long)N, (long long)ne0[2], (long long)ne0[3],
                             (long long)ne1[2], (long long)ne1[3], v);
                    tc_run(&c);
                }
    // Larger: several tiles in both directions, staged src1 split over a small scratch.
    for (int ty = 0; ty < 2; ty++)
        for (int v = 0; v < 2; v++) {
            const enum ggml_type  t      = ty ? GGML_TYPE_F16 : GGML_TYPE_F32;
            struct ggml_context * ctx    = new_ctx();
            const int64_t         ne0[4] = {300, 130, 1, 1}, ne1[4] = {300, 70, 1, 1};
            struct ggml_tensor *  w = leaf(ctx, t, ne0, INIT_RAND);
            struct ggml_tensor *  x =
                v ? noncontig(ctx, GGML_TYPE_F32, ne1, 2, INIT_RAND) : leaf(ctx, GGML_TYPE_F32, ne1, INIT_RAND);
            struct ggml_tensor * out = ggml_mul_mat(ctx, w, v ? ggml_cont(ctx, x) : x);
            struct tc            c;
            tc_init(&c, ctx, out);
            c.alt[1]    = x;
            c.max_err   = 5e-4;
            c.vtcm_size = v ? 3 * 5 * 1280 : 0;  // 5 staged columns per worker at nth = 3
            snprintf(c.name, sizeof c.name, "MUL_MAT %s 300x130 * 300x70 staged %d", tname(t), v);
            tc_run(&c);
        }
}

static void test_rows(void) {
    static const int64_t embd[] = {1, 3, 17, 127, 1000};
    int                  k      = 0;
    for (int ty = 0; ty < 2; ty++)
        for (int e = 0; e < 5; e++)
            for (int b = 0; b < 2; b++)
                for (int ni = 0; ni < 3; ni++, k++) {
                    static const int64_t  nidx[3] = {1, 4, 7};
                    const enum ggml_type  t       = ty ? GGML_TYPE_F16 : GGML_TYPE_F32;
                    struct ggml_context * ctx     = new_ctx();
                    const int64_t         ne2 = b ? 2 : 1, ne3 = b ? 2 : 1;
                    struct ggml_tensor *  src = leaf4(ctx, t, embd[e], 10, ne2, ne3, INIT_RAND, 0);
                    struct ggml_tensor *  idx = leaf4(ctx, GGML_TYPE_I32, nidx[ni], ne2, ne3, 1, INIT_IDX, 10);
                    struct ggml_tensor *  out = ggml_get_rows(ctx, src, idx);
                    struct tc             c;
                    tc_init(&c, ctx, out);
                    c.layout = (enum dst_layout)(k % DST_COUNT);
                    snprintf(c.name, sizeof c.name, "GET_ROWS %s embd %lld batch %d n %lld", tname(t),
                             (long long)embd[e], b, (long long)nidx[ni]);
                    tc_run(&c);
                }
    k = 0;
    for (int ty = 0; ty < 2; ty++)
        for (int e = 0; e < 5; e++)
            for (int it = 0; it < 2; it++)
                for (int b = 0; b < 2; b++, k++) {
                    const enum ggml_type  t   = ty ? GGML_TYPE_F16 : GGML_TYPE_F32;
                    struct ggml_context * ctx = new_ctx();
                    const int64_t         m = 5, n = 12, ne2 = 2, ne3 = 3;
                    struct ggml_tensor *  dst  = leaf4(ctx, t, embd[e], n, ne2, ne3, INIT_RAND, 0);
                    struct ggml_tensor *  vals = leaf4(ctx, GGML_TYPE_F32, embd[e], m, ne2, ne3, INIT_RAND, 0);
                    struct ggml_tensor *  idx =
                        leaf4(ctx, it ? GGML_TYPE_I32 : GGML_TYPE_I64, m, b ? 1 : ne2, b ? 1 : ne3, 1, INIT_UNIQUE, n);
                    struct ggml_tensor * out = ggml_set_rows(ctx, dst, vals, idx);
                    struct tc            c;
                    tc_init(&c, ctx, out);
                    snprintf(c.name, sizeof c.name, "SET_ROWS %s embd %lld idx %s broadcast %d", tname(t),
                             (long long)embd[e], it ? "i32" : "i64", b);
                    tc_run(&c);
                }
}

// Refusals: each must come back with the right status and touch nothing out of bounds.
static void test_refusals(void) {
    // GET_ROWS with one index past the end, and one negative.
    for (int neg = 0; neg < 2; neg++) {
        struct ggml_context * ctx = new_ctx();
        struct ggml_tensor *  src = leaf4(ctx, GGML_TYPE_F32, 8, 10, 1, 1, INIT_RAND, 0);
        struct ggml_tensor *  idx = leaf4(ctx, GGML_TYPE_I32, 4, 1, 1, 1, INIT_LAST, neg ? -1 : 10);
        struct ggml_tensor *  out = ggml_get_rows(ctx, src, idx);
        struct tc             c;
        tc_init(&c, ctx, out);
        c.no_ref   = 1;
        c.want_run = HTP_STATUS_INVAL_PARAMS;
        snprintf(c.name, sizeof c.name, "GET_ROWS index %s", neg ? "-1" : "10 of 10");
        tc_run(&c);
    }
    // SET_ROWS with an index past the end.
    {
        struct ggml_context * ctx  = new_ctx();
        struct ggml_tensor *  dst  = leaf4(ctx, GGML_TYPE_F32, 8, 4, 1, 1, INIT_RAND, 0);
        struct ggml_tensor *  vals = leaf4(ctx, GGML_TYPE_F32, 8, 3, 1, 1, INIT_RAND, 0);
        struct ggml_tensor *  idx  = leaf4(ctx, GGML_TYPE_I64, 3, 1, 1, 1, INIT_LAST, 4);
        struct ggml_tensor *  out  = ggml_set_rows(ctx, dst, vals, idx);
        struct tc             c;
        tc_init(&c, ctx, out);
        c.no_ref   = 1;
        c.want_run = HTP_STATUS_INVAL_PARAMS;
        snprintf(c.name, sizeof c.name, "SET_ROWS index out of range");
        tc_run(&c);
    }
    // ADD_ID with an expert id past the end (4 experts; ids 0 .. 4).
    {
        struct ggml_context * ctx  = new_ctx();
        struct ggml_tensor *  a    = leaf4(ctx, GGML_TYPE_F32, 8, 2, 3, 1, INIT_RAND, 0);
        struct ggml_tensor *  bias = leaf4(ctx, GGML_TYPE_F32, 8, 4, 1, 1, INIT_RAND, 0);
        struct ggml_tensor *  ids  = leaf4(ctx, GGML_TYPE_I32, 2, 3, 1, 1, INIT_LAST, 4);
        struct ggml_tensor *  out  = ggml_add_id(ctx, a, bias, ids);
        struct tc             c;
        tc_init(&c, ctx, out);
        c.no_ref   = 1;
        c.want_run = HTP_STATUS_INVAL_PARAMS;
        snprintf(c.name, sizeof c.name, "ADD_ID expert id out of range");
        tc_run(&c);
    }
    // ROPE mode 1, UNARY elu, GLU geglu_erf: not supported.
    {
        struct ggml_context * ctx = new_ctx();
        struct ggml_tensor *  x   = leaf4(ctx, GGML_TYPE_F32, 8, 2, 3, 1, INIT_RAND, 0);
        struct ggml_tensor *  pos = leaf4(ctx, GGML_TYPE_I32, 3, 1, 1, 1, INIT_IDX, 100);
        struct ggml_tensor *  out = ggml_rope_ext(ctx, x, pos, NULL, 8, 0, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
        struct tc             c;
        tc_init(&c, ctx, out);
        c.no_ref           = 1;
        c.want_check       = HTP_STATUS_NO_SUPPORT;
        c.params_patch_idx = 2;
        c.params_patch_val = 1;  // the retired "mode & 1" form; mrope/imrope/vision are supported
        snprintf(c.name, sizeof c.name, "ROPE mode 1 refused");
        tc_run(&c);
    }
    {
        struct ggml_context * ctx = new_ctx();
        struct ggml_tensor *  out = ggml_elu(ctx, leaf4(ctx, GGML_TYPE_F32, 8, 2, 1, 1, INIT_RAND, 0));
        struct tc             c;
        tc_init(&c, ctx, out);
        c.no_ref     = 1;
        c.want_check = HTP_STATUS_NO_SUPPORT;
        snprintf(c.name, sizeof c.name, "UNARY elu refused");
        tc_run(&c);
    }
    {
        struct ggml_context * ctx = new_ctx();
        struct ggml_tensor *  out = ggml_geglu_erf(ctx, leaf4(ctx, GGML_TYPE_F32, 8, 2, 1, 1, INIT_RAND, 0));
        struct tc             c;
        tc_init(&c, ctx, out);
        c.no_ref     = 1;
        c.want_check = HTP_STATUS_NO_SUPPORT;
        snprintf(c.name, sizeof c.name, "GLU geglu_erf refused");
        tc_run(&c);
    }
    // MUL_MAT whose staged src1 column cannot fit the scratch area.
    {
        struct ggml_context * ctx    = new_ctx();
        const int64_t         ne1[4] = {1024, 4, 1, 1};
        struct ggml_tensor *  w      = leaf4(ctx, GGML_TYPE_F32, 1024, 8, 1, 1, INIT_RAND, 0);
        struct ggml_tensor *  x      = noncontig(ctx, GGML_TYPE_F32, ne1, 2, INIT_RAND);
        struct ggml_tensor *  out    = ggml_mul_mat(ctx, w, ggml_cont(ctx, x));
        struct tc             c;
        tc_init(&c, ctx, out);
        c.alt[1]     = x;
        c.no_ref     = 1;
        c.vtcm_size  = 1024;  // < one column of 4 KiB
        c.want_check = HTP_STATUS_VTCM_TOO_SMALL;
        snprintf(c.name, sizeof c.name, "MUL_MAT scratch too small");
        tc_run(&c);
    }
    // Binary with src1 that does not repeat into src0: malformed.
    {
        struct ggml_context * ctx = new_ctx();
        struct ggml_tensor *  a   = leaf4(ctx, GGML_TYPE_F32, 6, 2, 1, 1, INIT_RAND, 0);
        struct ggml_tensor *  b   = leaf4(ctx, GGML_TYPE_F32, 6, 2, 1, 1, INIT_RAND, 0);
        struct ggml_tensor *  out = ggml_add(ctx, a, b);
        struct ggml_tensor *  bad = ggml_view_2d(ctx, b, 4, 2, b->nb[1], 0);  // ne0 4 does not divide 6
        struct tc             c;
        tc_init(&c, ctx, out);
        c.alt[1]     = bad;
        c.no_ref     = 1;
        c.want_check = HTP_STATUS_INVAL_PARAMS;
        snprintf(c.name, sizeof c.name, "ADD non-repeating src1 refused");
        tc_run(&c);
    }
}

// fp16 conversions against ggml's, exhaustively for halves.
static void test_fp16(void) {
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        const float a = htp_fp16_to_fp32_soft((uint16_t)h), b = ggml_fp16_to_fp32((ggml_fp16_t)h);
        if (memcmp(&a, &b, 4) != 0 && !(isnan(a) && isnan(b))) {
            if (bad++ < 5)
                printf("fp16 %04x -> %g, ggml %g\n", h, a, b);
        }
        if (!isnan(a)) {  // round trip
            if (htp_fp32_to_fp16_soft(a) != h) {
                if (bad++ < 5)
                    printf("fp16 %04x round trip -> %04x\n", h, htp_fp32_to_fp16_soft(a));
            }
        }
    }
    for (int i = 0; i < 2000000; i++) {
        // Random bit patterns over the half range and beyond, plus ties.
        uint32_t bits = (rnd_u32() << 1) ^ rnd_u32();
        bits          = (bits & 0x80000000u) | (0x30000000u + bits % 0x18000000u);
        if (i % 3 == 0)
            bits = (bits & ~0x1fffu) | 0x1000u;  // exactly half way between two halves
        float f;
        memcpy(&f, &bits, 4);
        const uint16_t a = htp_fp32_to_fp16_soft(f), b = ggml_fp32_to_fp16(f);
        if (a != b) {
            if (bad++ < 10)
                printf("fp32 %08x -> %04x, ggml %04x\n", bits, a, b);
        }
    }
    CHECK(bad == 0, "fp16 conversions: %d mismatches", bad);
}

// htp_vf32_exp (the generic-vector build of it, as compiled here) against exp().
static void test_exp(void) {
    double worst = 0, at = 0;
    for (int i = 0; i <= 200000; i++) {
        const float  x = -87.0f + 175.5f * (float)i / 200000.0f;
        const float  y = htp_exp_f32(x);
        const double e = exp((double)x);
        const double r = fabs(y - e) / e;
        if (r > worst) {
            worst = r;
            at    = x;
        }
    }
    const int ok =
        worst < 1e-6 && htp_exp_f32(-INFINITY) == 0.0f && htp_exp_f32(-100.0f) == 0.0f && isinf(htp_exp_f32(100.0f));
    printf("exp: max relative error %.2e at %g\n", worst, at);
    CHECK(ok, "exp accuracy");
}

// Plain-row quantizers and dequantizers against the CPU's, bit for bit: the
// quantizers against ggml-cpu's from_float (what its CPY and SET_ROWS call;
// for Q8_0 on x86 its AVX code, not quantize_row_q8_0_ref), the dequantizers
// against ggml's to_float. Inputs: uniform [-150, 150] (test-backend-ops'
// CPY range), the same rounded to bf16 and to f16 (the CPY sources), small
// integers (many ties), and special blocks (zeros, constants, one nonzero,
// tiny values).
#define QR_BLOCKS 512
static void quant_rows_fill(float * x, int kind) {
    const int n = 32 * QR_BLOCKS;
    for (int i = 0; i < n; i++) {
        const float v = rnd_f(-150, 150);
        switch (kind) {
            case 0:
                x[i] = v;
                break;
            case 1:
                x[i] = ggml_bf16_to_fp32(ggml_fp32_to_bf16(v));
                break;
            case 2:
                x[i] = ggml_fp16_to_fp32(ggml_fp32_to_fp16(v));
                break;
            case 3:
                // integers, max |x| 254 or 16 (ties of x * 127 / max at .5)
                x[i] = i % 32 == 0 ? (i % 64 ? -254.0f : 16.0f)
                                   : (float)((int)(rnd_u32() % 509) - 254) * (i % 64 < 32 ? 1.0f : 1.0f / 16);
                break;
            default: {
                const int b = i / 32, j = i % 32;
                x[i] = b == 0   ? 0.0f
                       : b == 1 ? 3.0f
                       : b == 2 ? (j == 5 ? -7.0f : 0.0f)
                       : b == 3 ? (j % 2 ? -0.0f : 1e-3f * (float)j)
                       : b == 4 ? -v
                                : rnd_f(-1, 1);
            } break;
        }
    }
}

static void test_quant_rows(void) {
    static const struct {
        enum ggml_type g;
        uint32_t       h;
    } qt[] = {
        {GGML_TYPE_Q8_0, HTP_TYPE_Q8_0}, {GGML_TYPE_Q4_0, HTP_TYPE_Q4_0}, {GGML_TYPE_Q4_1, HTP_TYPE_Q4_1},
        {GGML_TYPE_Q5_0, HTP_TYPE_Q5_0}, {GGML_TYPE_Q5_1, HTP_TYPE_Q5_1}, {GGML_TYPE_IQ4_NL, HTP_TYPE_IQ4_NL},
    };
    const int      n = 32 * QR_BLOCKS;
    static float   x[32 * QR_BLOCKS];
    static uint8_t ref[36 * QR_BLOCKS], out[34 * QR_BLOCKS];
    for (size_t t = 0; t < sizeof qt / sizeof qt[0]; t++) {
        const size_t bs = ggml_type_size(qt[t].g);
        for (int kind = 0; kind < 5; kind++) {
            quant_rows_fill(x, kind);
            ggml_get_type_traits_cpu(qt[t].g)->from_float(x, ref, n);
            memset(out, 0xa5, sizeof out);
            htp_quant_quantize_row(qt[t].h, x, out, n);
            int bad = -1;
            for (int b = 0; b < QR_BLOCKS && bad < 0; b++) {
                // IQ4_NL: a block ggml finds all below 1e-15 gets d = 0 and
                // quants from its scratch (they decode to 0): d only
                const uint8_t * rb   = ref + b * bs;
                const int       zero = qt[t].g == GGML_TYPE_IQ4_NL && rb[0] == 0 && rb[1] == 0;
                if (memcmp(rb, out + b * bs, zero ? 2 : bs) != 0) {
                    bad = b;
                }
            }
            CHECK(bad < 0, "quantize %s input %d: first different block %d", ggml_type_name(qt[t].g), kind, bad);
        }
    }
    // Dequantizers: blocks ggml quantized, both decoders, bit for bit.
    static const struct {
        enum ggml_type g;
        uint32_t       h;
    } dt[] = {
        {GGML_TYPE_Q4_0, HTP_TYPE_Q4_0},     {GGML_TYPE_Q4_1, HTP_TYPE_Q4_1}, {GGML_TYPE_Q5_0, HTP_TYPE_Q5_0},
        {GGML_TYPE_Q5_1, HTP_TYPE_Q5_1},     {GGML_TYPE_Q8_0, HTP_TYPE_Q8_0}, {GGML_TYPE_IQ4_NL, HTP_TYPE_IQ4_NL},
        {GGML_TYPE_MXFP4, HTP_TYPE_MXFP4},   {GGML_TYPE_Q4_K, HTP_TYPE_Q4_K}, {GGML_TYPE_Q5_K, HTP_TYPE_Q5_K},
        {GGML_TYPE_Q6_K, HTP_TYPE_Q6_K},     {GGML_TYPE_Q2_K, HTP_TYPE_Q2_K}, {GGML_TYPE_Q3_K, HTP_TYPE_Q3_K},
        {GGML_TYPE_IQ4_XS, HTP_TYPE_IQ4_XS}, {GGML_TYPE_Q1_0, HTP_TYPE_Q1_0}, {GGML_TYPE_Q2_0, HTP_TYPE_Q2_0},
        {GGML_TYPE_NVFP4, HTP_TYPE_NVFP4},
    };
    static float yr[32 * QR_BLOCKS], yo[32 * QR_BLOCKS];
    for (size_t t = 0; t < sizeof dt / sizeof dt[0]; t++) {
        CHECK(htp_quant_can_dequant_row(dt[t].h), "%s: a plain-row dequantizer", ggml_type_name(dt[t].g));
        for (int kind = 0; kind < 5; kind++) {
            quant_rows_fill(x, kind);
            ggml_quantize_chunk(dt[t].g, x, ref, 0, 1, n, NULL);
            ggml_get_type_traits(dt[t].g)->to_float(ref, yr, n);
            htp_quant_dequant_row(dt[t].h, ref, yo, n);
            int bad = -1;
            for (int i = 0; i < n && bad < 0; i++) {
                if (memcmp(&yr[i], &yo[i], 4) != 0) {
                    bad = i;
                }
            }
            CHECK(bad < 0, "dequantize %s input %d: first different element %d", ggml_type_name(dt[t].g), kind, bad);
        }
    }
    // Q1_0, Q2_0, NVFP4 from random bytes: every bit pattern of the quants
    // and, for NVFP4, every ue4m3 scale (0x7f and those with bit 7 set too).
    static const enum ggml_type ut[] = {GGML_TYPE_Q1_0, GGML_TYPE_Q2_0, GGML_TYPE_NVFP4};
    for (size_t t = 0; t < sizeof ut / sizeof ut[0]; t++) {
        const size_t bytes = (size_t)n / (size_t)ggml_blck_size(ut[t]) * ggml_type_size(ut[t]);
        for (size_t i = 0; i < bytes; i++) {
            ref[i] = (uint8_t)rnd_u32();
        }
        if (ut[t] == GGML_TYPE_NVFP4) {
            for (int i = 0; i < 256; i++) {  // scale field i % 4 of block i / 4 is i
                ref[36 * (i / 4) + i % 4] = (uint8_t)i;
            }
        } else {  // fp16 d: finite (ggml and the NPU agree on inf / NaN times 0 anyway)
            for (size_t b = 0; b < bytes / ggml_type_size(ut[t]); b++) {
                ref[b * ggml_type_size(ut[t]) + 1] &= 0x7b;
            }
        }
        ggml_get_type_traits(ut[t])->to_float(ref, yr, n);
        htp_quant_dequant_row((uint32_t)ut[t], ref, yo, n);
        int bad = -1;
        for (int i = 0; i < n && bad < 0; i++) {
            if (memcmp(&yr[i], &yo[i], 4) != 0) {
                bad = i;
            }
        }
        CHECK(bad < 0, "dequantize %s random bytes: first different element %d", ggml_type_name(ut[t]), bad);
    }
}

// The checks of the ops quant-ops.c, cpy-ops.c, rows-ops.c, shape-ops.c and
// argsort-ops.c gained (CPY quantized <-> float and F32 <-> I32, GET_ROWS of
// I32, CONCAT of blocks, TOP_K): what they claim and what they refuse, on
// hand-made packed views.
static struct htp_tensor_view ck_view(uint32_t type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    static uint64_t                buf[64];
    const struct htp_type_traits * tt = htp_type_traits(type);
    struct htp_tensor_view         v  = {.data = (uint8_t *)buf, .ne = {ne0, ne1, ne2, ne3}, .type = type};
    v.nb[0]                           = (int64_t)tt->type_size;
    v.nb[1]                           = v.nb[0] * (ne0 / tt->blck_size);
    v.nb[2]                           = v.nb[1] * ne1;
    v.nb[3]                           = v.nb[2] * ne2;
    v.extent                          = (uint64_t)(v.nb[3] * ne3);
    return v;
}

static int ck(uint32_t op, int32_t p0, const struct htp_tensor_view * s0, const struct htp_tensor_view * s1,
              const struct htp_tensor_view * d) {
    struct htp_op_desc desc = {.opcode = op};
    desc.params[0]          = p0;
    struct htp_op_call call = {.desc = &desc, .src = {s0, s1}, .dst = {d}, .n_threads = 1};
    return htp_op_check(&call);
}

static void test_new_checks(void) {
    const int OK = HTP_STATUS_OK, NS = HTP_STATUS_NO_SUPPORT, IP = HTP_STATUS_INVAL_PARAMS;
    // TOP_K
    struct htp_tensor_view x = ck_view(HTP_TYPE_F32, 10, 2, 3, 1), k3 = ck_view(HTP_TYPE_I32, 3, 2, 3, 1);
    struct htp_tensor_view k11 = ck_view(HTP_TYPE_I32, 11, 2, 3, 1), k3f = ck_view(HTP_TYPE_F32, 3, 2, 3, 1);
    struct htp_tensor_view xh = ck_view(HTP_TYPE_F16, 10, 2, 3, 1), xs = x, xg = x;
    xs.nb[0] = 8;   // strided elements: ggml-cpu reads rows packed
    xg.nb[2] += 4;  // a gap between matrices: ggml-cpu reads row i at i * nb1
    CHECK(ck(HTP_OP_TOP_K, 0, &x, NULL, &k3) == OK, "TOP_K F32 -> I32 k 3 of 10");
    CHECK(ck(HTP_OP_TOP_K, 0, &x, NULL, &k11) == IP, "TOP_K k 11 of 10");
    CHECK(ck(HTP_OP_TOP_K, 0, &xh, NULL, &k3) == NS, "TOP_K F16 source");
    CHECK(ck(HTP_OP_TOP_K, 0, &x, NULL, &k3f) == NS, "TOP_K F32 dst");
    CHECK(ck(HTP_OP_TOP_K, 0, &xs, NULL, &k3) == NS, "TOP_K strided elements");
    CHECK(ck(HTP_OP_TOP_K, 0, &xg, NULL, &k3) == NS, "TOP_K uneven rows");
    // CPY between quantized and float, F32 and I32
    struct htp_tensor_view q8 = ck_view(HTP_TYPE_Q8_0, 64, 2, 1, 1), f32 = ck_view(HTP_TYPE_F32, 64, 2, 1, 1);
    struct htp_tensor_view f16 = ck_view(HTP_TYPE_F16, 64, 2, 1, 1), f32r = ck_view(HTP_TYPE_F32, 128, 1, 1, 1);
    struct htp_tensor_view i32 = ck_view(HTP_TYPE_I32, 64, 2, 1, 1), q5 = ck_view(HTP_TYPE_Q5_1, 64, 2, 1, 1);
    struct htp_tensor_view q3k = ck_view(HTP_TYPE_Q3_K, 256, 2, 1, 1), f32k = ck_view(HTP_TYPE_F32, 256, 2, 1, 1);
    CHECK(ck(HTP_OP_CPY, 0, &q8, NULL, &f32) == OK, "CPY Q8_0 -> F32");
    CHECK(ck(HTP_OP_CPY, 0, &q3k, NULL, &f32k) == OK, "CPY Q3_K -> F32");
    CHECK(ck(HTP_OP_CPY, 0, &q8, NULL, &f16) == NS, "CPY Q8_0 -> F16 (ggml-cpu has none)");
    CHECK(ck(HTP_OP_CPY, 0, &q8, NULL, &f32r) == NS, "CPY Q8_0 -> F32 of another shape");
    CHECK(ck(HTP_OP_CPY, 0, &f16, NULL, &q5) == OK, "CPY F16 -> Q5_1");
    CHECK(ck(HTP_OP_CPY, 0, &q5, NULL, &q8) == NS, "CPY Q5_1 -> Q8_0");
    CHECK(ck(HTP_OP_CPY, 0, &f32, NULL, &i32) == OK && ck(HTP_OP_CPY, 0, &i32, NULL, &f32) == OK, "CPY F32 <-> I32");
    CHECK(ck(HTP_OP_CPY, 0, &f16, NULL, &i32) == NS && ck(HTP_OP_CPY, 0, &i32, NULL, &f16) == NS, "CPY F16 <-> I32");
    // CONCAT of blocks
    struct htp_tensor_view a = ck_view(HTP_TYPE_Q4_0, 64, 2, 1, 1), b = ck_view(HTP_TYPE_Q4_0, 32, 2, 1, 1);
    struct htp_tensor_view ab = ck_view(HTP_TYPE_Q4_0, 96, 2, 1, 1), b8 = ck_view(HTP_TYPE_Q8_0, 32, 2, 1, 1);
    struct htp_tensor_view as = a;
    as.nb[0]                  = 36;  // blocks not packed
    CHECK(ck(HTP_OP_CONCAT, 0, &a, &b, &ab) == OK, "CONCAT Q4_0 dim 0");
    CHECK(ck(HTP_OP_CONCAT, 0, &a, &b8, &ab) == NS, "CONCAT Q4_0 with Q8_0");
    CHECK(ck(HTP_OP_CONCAT, 0, &as, &b, &ab) == NS, "CONCAT Q4_0 blocks not packed");
    CHECK(ck(HTP_OP_CONCAT, 1, &a, &b, &ab) == IP, "CONCAT dim 1 of unequal rows");
    // Q1_0 rows need ne0 % 128 == 0, Q2_0 and NVFP4 rows ne0 % 64 == 0 (views of part blocks are refused)
    {
        struct htp_tensor_view w1 = ck_view(HTP_TYPE_Q1_0, 64, 4, 1, 1), w2 = ck_view(HTP_TYPE_Q2_0, 32, 4, 1, 1);
        struct htp_tensor_view wn = ck_view(HTP_TYPE_NVFP4, 96, 4, 1, 1), ri = ck_view(HTP_TYPE_I32, 2, 1, 1, 1);
        const struct htp_tensor_view * ws[] = {&w1, &w2, &wn};
        for (int i = 0; i < 3; i++) {
            struct htp_tensor_view xa = ck_view(HTP_TYPE_F32, ws[i]->ne[0], 2, 1, 1);
            struct htp_tensor_view dm = ck_view(HTP_TYPE_F32, 4, 2, 1, 1);
            struct htp_tensor_view dg = ck_view(HTP_TYPE_F32, ws[i]->ne[0], 2, 1, 1);
            struct htp_tensor_view dc = ck_view(HTP_TYPE_F32, ws[i]->ne[0], 4, 1, 1);
            CHECK(ck(HTP_OP_MUL_MAT, 0, ws[i], &xa, &dm) == NS, "MUL_MAT of part blocks (type %u)", ws[i]->type);
            CHECK(ck(HTP_OP_GET_ROWS, 0, ws[i], &ri, &dg) == NS, "GET_ROWS of part blocks (type %u)", ws[i]->type);
            CHECK(ck(HTP_OP_CPY, 0, ws[i], NULL, &dc) == NS, "CPY of part blocks (type %u)", ws[i]->type);
        }
    }
    // GET_ROWS of I32 rows
    struct htp_tensor_view src = ck_view(HTP_TYPE_I32, 8, 10, 1, 1), idx = ck_view(HTP_TYPE_I32, 4, 1, 1, 1);
    struct htp_tensor_view gi = ck_view(HTP_TYPE_I32, 8, 4, 1, 1), gf = ck_view(HTP_TYPE_F32, 8, 4, 1, 1);
    CHECK(ck(HTP_OP_GET_ROWS, 0, &src, &idx, &gi) == OK, "GET_ROWS I32 -> I32");
    CHECK(ck(HTP_OP_GET_ROWS, 0, &src, &idx, &gf) == NS, "GET_ROWS I32 -> F32");
}

// The matmul kernels of Q1_0, Q2_0 and NVFP4 (matmul-quant.c) on this
// machine's SIMD path (AVX-512 VNNI here) against their portable C
// (htp_qmm_unit_dot_tile_ref), bit for bit: two row groups (the second
// padded), 1..8 columns and the decode pair, blocks ggml quantized and random
// bytes (every quant pattern and NVFP4 scale, fp16 d finite).
static void test_unit_matmul(void) {
    static const enum ggml_type types[] = {GGML_TYPE_Q1_0, GGML_TYPE_Q2_0, GGML_TYPE_NVFP4};
    static const int64_t        nblks[] = {1, 2, 3, 5, 8, 13};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const uint32_t                 ht = (uint32_t)types[t];
        const struct htp_tile_format * f  = htp_tile_format(ht);
        CHECK(f != NULL, "%s: a tile format", ggml_type_name(types[t]));
        if (!f) {
            continue;
        }
        for (size_t si = 0; si < sizeof nblks / sizeof nblks[0]; si++) {
            for (int random_bytes = 0; random_bytes < 2; random_bytes++) {
                const int64_t nblk = nblks[si], k = nblk * f->blck_size, nact = k / 32;
                const size_t  rb   = (size_t)nblk * f->blck_bytes;
                uint8_t *     rows = malloc(rb * 32);
                float *       x    = malloc(sizeof(float) * (size_t)k * 32);
                for (int64_t i = 0; i < k * 32; i++) {
                    x[i] = rnd_f(-1, 1);
                }
                ggml_quantize_chunk(types[t], x, rows, 0, 32, k, NULL);
                for (size_t i = 0; random_bytes && i < rb * 32; i++) {
                    const size_t off = i % f->blck_bytes;
                    rows[i]          = (uint8_t)rnd_u32();
                    if (ht != HTP_TYPE_NVFP4 && off == 1) {
                        rows[i] &= 0x7b;  // fp16 d: finite
                    }
                }
                const size_t gb = (size_t)htp_tiled_group_bytes(f, k);
                uint8_t *    g  = calloc(2 * gb, 1);
                htp_tiled_pack_group(f, NULL, rows, rb, 16, nblk, g);
                htp_tiled_pack_group(f, NULL, rows + 16 * rb, rb, 16 - (int)(si % 4), nblk, g + gb);
                uint8_t *       acts = malloc((size_t)nact * 40 * 8);
                const uint8_t * ap[8];
                for (int c = 0; c < 8; c++) {
                    for (int64_t i = 0; i < k; i++) {
                        x[i] = rnd_f(-3, 3) * (c == 3 ? 1e-3f : 1.0f);
                    }
                    ap[c] = acts + (size_t)c * (size_t)nact * 40;
                    htp_qmm_quantize_blocks_ref(x, nact, acts + (size_t)c * (size_t)nact * 40);
                }
                int bad = 0;
                for (int grp = 0; grp < 2; grp++) {
                    for (int nc = 1; nc <= 8; nc++) {
                        float o1[8][16], o2[8][16];
                        memset(o1, 0xa5, sizeof o1);
                        memset(o2, 0x5a, sizeof o2);
                        htp_qmm_dot_tile(ht, g + grp * gb, nblk, ap, nc, o1);
                        htp_qmm_unit_dot_tile_ref(ht, g + grp * gb, nblk, ap, nc, o2);
                        bad += memcmp(o1, o2, sizeof o1[0] * (size_t)nc) != 0;
                    }
                }
                for (int c = 0; c < 8; c++) {
                    float o1[2][16], o2[8][16], o3[8][16];
                    htp_qmm_dot_pair(ht, g, g + gb, nblk, ap[c], o1);
                    htp_qmm_unit_dot_tile_ref(ht, g, nblk, ap + c, 1, o2);
                    htp_qmm_unit_dot_tile_ref(ht, g + gb, nblk, ap + c, 1, o3);
                    bad += memcmp(o1[0], o2[0], sizeof o1[0]) != 0 || memcmp(o1[1], o3[0], sizeof o1[1]) != 0;
                }
                CHECK(bad == 0, "%s matmul kernels nblk %lld%s: %d of 24 calls differ from the portable C",
                      ggml_type_name(types[t]), (long long)nblk, random_bytes ? " (random bytes)" : "", bad);
                free(rows);
                free(x);
                free(g);
                free(acts);
            }
        }
    }
}

// Decode's four-group kernel (matmul-quant.c) of every Q4_0-family type
// against the group kernel at one column, bit for bit (the int dots are
// exact and each group's float steps are the same): four row groups, the
// last padded, and the pair form on the same groups.
static void test_quad_matmul(void) {
    static const enum ggml_type types[] = {GGML_TYPE_Q4_0,  GGML_TYPE_Q4_1, GGML_TYPE_Q8_0, GGML_TYPE_IQ4_NL,
                                           GGML_TYPE_MXFP4, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q1_0,
                                           GGML_TYPE_Q2_0,  GGML_TYPE_NVFP4};
    static const int64_t        nblks[] = {1, 3, 8};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const uint32_t                 ht = (uint32_t)types[t];
        const struct htp_tile_format * f  = htp_tile_format(ht);
        CHECK(f != NULL, "%s: a tile format", ggml_type_name(types[t]));
        if (!f) {
            continue;
        }
        for (size_t si = 0; si < sizeof nblks / sizeof nblks[0]; si++) {
            const int64_t nblk = nblks[si], k = nblk * f->blck_size, nact = k / 32;
            const size_t  rb   = (size_t)nblk * f->blck_bytes;
            uint8_t *     rows = malloc(rb * 64);
            float *       x    = malloc(sizeof(float) * (size_t)k * 64);
            for (int64_t i = 0; i < k * 64; i++) {
                x[i] = rnd_f(-1, 1);
            }
            ggml_quantize_chunk(types[t], x, rows, 0, 64, k, NULL);
            const size_t gb = (size_t)htp_tiled_group_bytes(f, k);
            uint8_t *    g  = calloc(4 * gb, 1);
            for (int h = 0; h < 4; h++) {
                htp_tiled_pack_group(f, NULL, rows + (size_t)h * 16 * rb, rb, h < 3 ? 16 : 11, nblk,
                                     g + (size_t)h * gb);
            }
            uint8_t * act = malloc((size_t)nact * 40);
            for (int64_t i = 0; i < k; i++) {
                x[i] = rnd_f(-3, 3);
            }
            htp_qmm_quantize_blocks_ref(x, nact, act);
            float quad[4][16], pair[2][16], one[8][16];
            memset(quad, 0xa5, sizeof quad);
            const int has_quad = htp_qmm_dot_quad(ht, g, gb, nblk, act, quad);
            int       bad      = 0;
            for (int h = 0; h < 4; h++) {
                const uint8_t * acts[1] = {act};
                htp_qmm_dot_tile(ht, g + (size_t)h * gb, nblk, acts, 1, one);
                bad += has_quad && memcmp(quad[h], one[0], sizeof one[0]) != 0;
                if (h % 2 == 0) {
                    htp_qmm_dot_pair(ht, g + (size_t)h * gb, g + (size_t)(h + 1) * gb, nblk, act, pair);
                }
                bad += memcmp(pair[h % 2], one[0], sizeof one[0]) != 0;
            }
            CHECK(bad == 0, "%s decode kernels nblk %lld: %d of 8 groups differ from the group kernel",
                  ggml_type_name(types[t]), (long long)nblk, bad);
            free(rows);
            free(x);
            free(g);
            free(act);
        }
    }
}

int main(void) {
    g_cpu = ggml_backend_cpu_init();
    if (!g_cpu) {
        printf("SKIP: no CPU backend\n");
        return 77;
    }
    ggml_backend_cpu_set_n_threads(g_cpu, 1);

    struct {
        const char * name;
        void (*fn)(void);
    } groups[] = {
        {"fp16", test_fp16},
        {"exp", test_exp},
        {"binary", test_binary},
        {"scale/silu", test_scale_silu},
        {"glu", test_glu},
        {"rms_norm", test_rms_norm},
        {"soft_max", test_softmax},
        {"rope", test_rope},
        {"mul_mat", test_mul_mat},
        {"rows", test_rows},
        {"refusals", test_refusals},
        {"quant rows", test_quant_rows},
        {"new checks", test_new_checks},
        {"unit matmul", test_unit_matmul},
        {"quad matmul", test_quad_matmul},
    };
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
        const int c = n_check, f = n_fail;
        groups[i].fn();
        printf("%-12s %4d passed, %d failed\n", groups[i].name, n_check - c - (n_fail - f), n_fail - f);
    }
    ggml_backend_free(g_cpu);
    printf("%d passed, %d failed, %d skipped\n", n_check - n_fail, n_fail, g_skip);
    return test_exit_code("test-kernels");
}
