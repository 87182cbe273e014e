// test-npu-validate: batch validation and execution (src/npu/batch.c) called
// directly, no process: every class of malformed request or descriptor is
// refused with HTP_STATUS_INVAL_PARAMS before anything runs; unsupported
// conversions answer NO_SUPPORT; then good NOP, CPY (contiguous, permuted,
// padded, block types, parallel) and FENCE batches run, produce the right
// bytes, profile descriptors and trace events, and stop at the first failing op;
// the same tables again are taken without a new check only while nothing in
// them or in the map table changed.

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "npu/batch.h"
#include "npu/ops/op-families.h"
#include "npu/pool.h"
#include "test-check.h"

#define PAGE      HTP_PAGE_SIZE
#define MAX_T     64
#define MAX_O     64
#define N_THREADS 3
#define N_TRACES  16
#define DEPTH     2

// --- the session stand-in: three buffers and their map table ---

enum { KEY_A = 100, KEY_B = 101, KEY_C = 102 };

static struct htp_map_entry maps[3];

static int lookup(void * arg, int32_t fd, struct htp_map_entry * out) {
    (void)arg;
    for (int i = 0; i < 3; i++) {
        if (maps[i].fd == fd) {
            *out = maps[i];
            return HTP_STATUS_OK;
        }
    }
    return HTP_STATUS_INVAL_PARAMS;
}

static uint8_t * new_buffer(int i, int32_t key, uint64_t size) {
    uint8_t * p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED, "mmap of buffer %d (%llu bytes)", i, (unsigned long long)size);
    if (p == MAP_FAILED) {
        exit(1);  // every test needs the buffers
    }
    // Like the real window: the last page is a guard.
    mprotect(p + size - PAGE, PAGE, PROT_NONE);
    maps[i] = (struct htp_map_entry){.fd = key, .flags = 0, .size = size, .addr = p};
    return p;
}

// --- batch builder ---

struct tb {
    struct htp_buf_desc bufs[HTP_OP_MAX_BUFS];
    struct htp_tensor   t[MAX_T];
    struct htp_op_desc  ops[MAX_O];
    uint32_t            n_bufs, n_tensors, n_ops;
};

static struct htp_batch_env env;
static struct htp_batch     batch;
static uint8_t *            slots;
static uint64_t             seq;

static void tb_reset(struct tb * b) {
    memset(b, 0, sizeof(*b));
    for (int i = 0; i < 3; i++) {
        b->bufs[i] = (struct htp_buf_desc){.base = 0, .size = maps[i].size, .fd = maps[i].fd, .flags = 0};
    }
    b->n_bufs = 3;
}

// Tensor of type in buffer bi at offset, contiguous strides.
static uint16_t tb_tensor(struct tb * b, uint16_t bi, uint64_t off, uint32_t type, int64_t ne0, int64_t ne1,
                          int64_t ne2, int64_t ne3) {
    struct htp_tensor * t  = &b->t[b->n_tensors];
    uint32_t            ts = type == HTP_TYPE_F32 ? 4 : type == HTP_TYPE_Q8_0 ? 34 : type == HTP_TYPE_I8 ? 1 : 2;
    uint32_t            bs = type == HTP_TYPE_Q8_0 ? 32 : 1;
    memset(t, 0, sizeof(*t));
    t->data  = off;
    t->type  = type;
    t->bi    = bi;
    t->ne[0] = ne0;
    t->ne[1] = ne1;
    t->ne[2] = ne2;
    t->ne[3] = ne3;
    t->nb[0] = ts;
    t->nb[1] = ts * (ne0 / bs);
    t->nb[2] = t->nb[1] * ne1;
    t->nb[3] = t->nb[2] * ne2;
    return (uint16_t)b->n_tensors++;
}

static uint16_t tb_fence(struct tb * b, uint16_t bi, uint64_t off, int64_t n_slots) {
    uint16_t i = tb_tensor(b, bi, off, HTP_TYPE_I8, HTP_FENCE_SLOT_SIZE, n_slots, 1, 1);
    b->t[i].flags |= HTP_TENSOR_FENCE;
    return i;
}

static struct htp_op_desc * tb_op(struct tb * b, uint32_t opcode) {
    struct htp_op_desc * op = &b->ops[b->n_ops++];
    memset(op, 0, sizeof(*op));
    op->opcode = opcode;
    for (int k = 0; k < HTP_OP_MAX_INPUTS; k++) {
        op->src[k] = HTP_NO_TENSOR;
    }
    for (int k = 0; k < HTP_OP_MAX_OUTPUTS; k++) {
        op->dst[k] = HTP_NO_TENSOR;
    }
    return op;
}

// Write the tables into slot `slot` as the host would and make a request.
static struct htp_opbatch_req tb_write(const struct tb * b, uint32_t slot, uint32_t n_traces) {
    struct htp_slot_layout l = htp_slot_layout(b->n_bufs, b->n_tensors, b->n_ops, N_THREADS, n_traces);
    uint8_t *              s = slots + (uint64_t)slot * env.slot_size;
    memcpy(s + l.bufs, b->bufs, sizeof(b->bufs[0]) * b->n_bufs);
    memcpy(s + l.tensors, b->t, sizeof(b->t[0]) * b->n_tensors);
    memcpy(s + l.ops, b->ops, sizeof(b->ops[0]) * b->n_ops);
    return (struct htp_opbatch_req){.seq       = ++seq,
                                    .slot      = slot,
                                    .n_bufs    = b->n_bufs,
                                    .n_tensors = b->n_tensors,
                                    .n_ops     = b->n_ops,
                                    .n_traces  = n_traces};
}

static int validate(const struct tb * b) {
    struct htp_opbatch_req r = tb_write(b, 0, 0);
    return htp_batch_validate(&batch, &env, &r);
}

static int run(const struct tb * b, struct htp_opbatch_rsp * rsp) {
    struct htp_opbatch_req r = tb_write(b, 1, 0);
    return htp_batch_process(&batch, &env, &r, rsp);
}

// --- bad input ---

static void test_bad_counts(void) {
    struct tb b;
    tb_reset(&b);
    tb_op(&b, HTP_OP_NOP);
    struct htp_opbatch_req good = tb_write(&b, 0, 0), r;
    CHECK(htp_batch_validate(&batch, &env, &good) == HTP_STATUS_OK, "baseline NOP");

    r        = good;
    r.n_bufs = HTP_OP_MAX_BUFS + 1;
    CHECK(htp_batch_validate(&batch, &env, &r) == HTP_STATUS_INVAL_PARAMS, "n_bufs over limit");
    r           = good;
    r.n_tensors = HTP_OP_MAX_TENSORS + 1;
    CHECK(htp_batch_validate(&batch, &env, &r) == HTP_STATUS_INVAL_PARAMS, "n_tensors over limit");
    r       = good;
    r.n_ops = HTP_OP_MAX_OPS + 1;
    CHECK(htp_batch_validate(&batch, &env, &r) == HTP_STATUS_INVAL_PARAMS, "n_ops over limit");
    r          = good;
    r.n_traces = HTP_MAX_TRACES + 1;
    CHECK(htp_batch_validate(&batch, &env, &r) == HTP_STATUS_INVAL_PARAMS, "n_traces over limit");
    r      = good;
    r.slot = DEPTH;
    CHECK(htp_batch_validate(&batch, &env, &r) == HTP_STATUS_INVAL_PARAMS, "slot past depth");
    r      = good;
    r.slot = 0xffffffffu;
    CHECK(htp_batch_validate(&batch, &env, &r) == HTP_STATUS_INVAL_PARAMS, "slot 0xffffffff");

    // Truncated payload: counts that describe more than the slot holds.
    r       = good;
    r.n_ops = (uint32_t)(env.slot_size / sizeof(struct htp_op_desc)) + 1;
    CHECK(htp_batch_validate(&batch, &env, &r) == HTP_STATUS_INVAL_PARAMS, "ops past slot end");
    r          = good;
    r.n_traces = HTP_MAX_TRACES;  // N_THREADS * 4096 * 16 bytes > slot
    CHECK(htp_batch_validate(&batch, &env, &r) == HTP_STATUS_INVAL_PARAMS, "trace area past slot end");
    struct htp_batch_env small = env;
    small.slot_size            = htp_slot_layout(b.n_bufs, 0, 1, N_THREADS, 0).end - 8;
    CHECK(htp_batch_validate(&batch, &small, &good) == HTP_STATUS_INVAL_PARAMS, "slot one entry short");
}

static void test_bad_buffers(void) {
    struct tb b;
    tb_reset(&b);
    b.bufs[1].fd = 999;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "unknown fd");
    tb_reset(&b);
    b.bufs[2].size += PAGE;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "buffer size differs from the mapping");
    tb_reset(&b);
    b.bufs[0].fd = -1;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "negative fd");
}

static void test_bad_tensors(void) {
    struct tb b;
    uint64_t  usable_a = maps[0].size - PAGE;

    tb_reset(&b);
    tb_tensor(&b, 0, 0, HTP_TYPE_F32, 16, 1, 1, 1);
    CHECK(validate(&b) == HTP_STATUS_OK, "good tensor");

    tb_reset(&b);
    tb_tensor(&b, 3, 0, HTP_TYPE_F32, 16, 1, 1, 1);
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "buffer index past n_bufs");

    tb_reset(&b);
    tb_tensor(&b, 0, usable_a - 64, HTP_TYPE_F32, 16, 1, 1, 1);  // exactly up to the guard page
    CHECK(validate(&b) == HTP_STATUS_OK, "tensor ending at the guard page");
    tb_reset(&b);
    tb_tensor(&b, 0, usable_a - 60, HTP_TYPE_F32, 16, 1, 1, 1);
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "tensor 4 bytes into the guard page");
    tb_reset(&b);
    tb_tensor(&b, 0, maps[0].size + 4096, HTP_TYPE_F32, 16, 1, 1, 1);
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "tensor past the buffer end");
    tb_reset(&b);
    tb_tensor(&b, 0, 0, HTP_TYPE_F32, 16, (int64_t)usable_a / 64 + 1, 1, 1);
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "rows past the buffer end");
    tb_reset(&b);
    tb_tensor(&b, 0, UINT64_MAX - 8, HTP_TYPE_F32, 16, 1, 1, 1);
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "offset + extent wraps");
    tb_reset(&b);
    tb_tensor(&b, 0, maps[0].size, HTP_TYPE_F32, 0, 1, 1, 1);
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "empty tensor with its offset past the buffer");
    tb_reset(&b);
    tb_tensor(&b, 0, 128, HTP_TYPE_F32, 0, 5, 1, 1);
    CHECK(validate(&b) == HTP_STATUS_OK, "empty tensor (ne[0] == 0) inside the buffer");

    tb_reset(&b);
    uint16_t t   = tb_tensor(&b, 0, 0, HTP_TYPE_F32, 16, 2, 1, 1);
    b.t[t].nb[1] = -64;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "negative stride");
    tb_reset(&b);
    t            = tb_tensor(&b, 0, 0, HTP_TYPE_F32, 16, 2, 1, 1);
    b.t[t].ne[2] = -1;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "negative ne");
    tb_reset(&b);
    t            = tb_tensor(&b, 0, 0, HTP_TYPE_F32, 16, 2, 1, 1);
    b.t[t].ne[3] = INT64_MAX / 2;
    b.t[t].nb[3] = 1 << 20;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "ne * nb overflows");
    tb_reset(&b);
    t            = tb_tensor(&b, 0, 0, HTP_TYPE_F32, 16, 2, 1, 1);
    b.t[t].ne[1] = 3;
    b.t[t].nb[1] = INT64_MAX;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "(ne-1) * nb overflows");
    tb_reset(&b);
    t            = tb_tensor(&b, 0, 0, HTP_TYPE_F32, 16, 2, 2, 1);
    b.t[t].nb[1] = INT64_MAX / 2 + 1;
    b.t[t].nb[2] = INT64_MAX / 2 + 1;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "sum of strides overflows");

    tb_reset(&b);
    t           = tb_tensor(&b, 0, 0, HTP_TYPE_F32, 16, 1, 1, 1);
    b.t[t].type = 5;  // ggml's removed Q4_2: not a type the NPU knows
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "unknown type 5");
    b.t[t].type = 1000;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "unknown type 1000");

    tb_reset(&b);
    tb_tensor(&b, 0, 0, HTP_TYPE_Q8_0, 64, 2, 1, 1);
    CHECK(validate(&b) == HTP_STATUS_OK, "q8_0 with whole blocks");
    tb_reset(&b);
    tb_tensor(&b, 0, 0, HTP_TYPE_Q8_0, 33, 2, 1, 1);
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "q8_0 ne[0] not a multiple of 32");
}

static void test_bad_ops(void) {
    struct tb b;
    tb_reset(&b);
    tb_op(&b, HTP_OP_INVALID);
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "op code 0");
    tb_reset(&b);
    tb_op(&b, HTP_OP_COUNT);
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "op code HTP_OP_COUNT");
    tb_reset(&b);
    tb_op(&b, 0xdeadbeef);
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "op code 0xdeadbeef");
    tb_reset(&b);
    tb_op(&b, HTP_OP_NOP)->flags = 1;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "reserved op flags set");

    tb_reset(&b);
    uint16_t             s  = tb_tensor(&b, 0, 0, HTP_TYPE_F32, 16, 1, 1, 1);
    uint16_t             d  = tb_tensor(&b, 1, 0, HTP_TYPE_F32, 16, 1, 1, 1);
    struct htp_op_desc * op = tb_op(&b, HTP_OP_CPY);
    op->src[0]              = s;
    op->dst[0]              = d;
    CHECK(validate(&b) == HTP_STATUS_OK, "good CPY");
    op->src[0] = 2;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "src index == n_tensors");
    op->src[0] = s;
    op->src[9] = 0xfffe;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "src[9] index past n_tensors");
    op->src[9] = HTP_NO_TENSOR;
    op->dst[1] = 7;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "dst[1] index past n_tensors");
    op->dst[1] = HTP_NO_TENSOR;
    op->dst[0] = HTP_NO_TENSOR;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "CPY without dst");

    // A bad op later in the batch: nothing runs, not even the first op.
    tb_reset(&b);
    s                      = tb_fence(&b, 0, 0, 1);
    struct htp_op_desc * f = tb_op(&b, HTP_OP_FENCE);
    f->src[0]              = s;
    f->params[0]           = 77;
    f->params[1]           = 1;
    tb_op(&b, HTP_OP_COUNT + 3);
    struct htp_fence_slot * slot = (struct htp_fence_slot *)(void *)maps[0].addr;
    slot->seq                    = 0;
    struct htp_opbatch_rsp rsp;
    CHECK(run(&b, &rsp) == HTP_STATUS_INVAL_PARAMS && rsp.n_done == 0 && slot->seq == 0,
          "batch with a bad second op ran its first op (seq %u, n_done %u)", slot->seq, rsp.n_done);

    // Shape / type mismatches inside an op's own check.
    tb_reset(&b);
    s          = tb_tensor(&b, 0, 0, HTP_TYPE_F32, 16, 2, 1, 1);
    d          = tb_tensor(&b, 1, 0, HTP_TYPE_F32, 16, 3, 1, 1);
    op         = tb_op(&b, HTP_OP_CPY);
    op->src[0] = s;
    op->dst[0] = d;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "CPY with different element counts");
    tb_reset(&b);
    s          = tb_tensor(&b, 0, 0, HTP_TYPE_F32, 64, 1, 1, 1);
    d          = tb_tensor(&b, 1, 0, HTP_TYPE_Q4_1, 64, 1, 1, 1);
    op         = tb_op(&b, HTP_OP_CPY);
    op->src[0] = s;
    op->dst[0] = d;
    CHECK(validate(&b) == HTP_STATUS_NO_SUPPORT, "CPY F32 -> Q4_1 is not supported");
    tb_reset(&b);
    // (Every op code has a kernel now, ALLREDUCE included: its check refuses
    // an op without its operands.)
    tb_op(&b, HTP_OP_ALLREDUCE);
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "ALLREDUCE without operands is refused");
}

// Fused ops (proto/htp-proto.h): the flag is required on fused codes and
// refused elsewhere; each part's operands are checked.
static void test_bad_fused(void) {
    struct tb b;
    tb_reset(&b);
    uint16_t             x  = tb_tensor(&b, 0, 0, HTP_TYPE_F32, 16, 2, 1, 1);
    uint16_t             w  = tb_tensor(&b, 0, 4096, HTP_TYPE_F32, 16, 1, 1, 1);
    uint16_t             w3 = tb_tensor(&b, 0, 8192, HTP_TYPE_F32, 3, 1, 1, 1);
    uint16_t             y  = tb_tensor(&b, 1, 0, HTP_TYPE_F32, 16, 2, 1, 1);
    struct htp_op_desc * op = tb_op(&b, HTP_OP_RMS_NORM_MUL);
    op->flags               = HTP_OP_FLAG_FUSED;
    op->src[0]              = x;
    op->src[1]              = w;
    op->dst[0]              = y;
    CHECK(validate(&b) == HTP_STATUS_OK, "good RMS_NORM_MUL");
    op->flags = 0;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "RMS_NORM_MUL without HTP_OP_FLAG_FUSED");
    op->flags  = HTP_OP_FLAG_FUSED;
    op->opcode = HTP_OP_RMS_NORM;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "HTP_OP_FLAG_FUSED on RMS_NORM");
    op->opcode = HTP_OP_RMS_NORM_MUL;
    op->src[1] = w3;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "RMS_NORM_MUL with w that does not tile x");
    op->src[1] = HTP_NO_TENSOR;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "RMS_NORM_MUL without w");
    op->src[1] = w;
    op->src[2] = w;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "RMS_NORM_MUL with a third source");
    op->src[2] = HTP_NO_TENSOR;
    op->dst[0] = w;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "RMS_NORM_MUL with dst not x's shape");
    op->dst[0]      = y;
    const float nan = NAN;
    memcpy(&op->params[0], &nan, sizeof nan);
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "RMS_NORM_MUL with eps NaN");

    // MUL_MAT_ADD: F32 weights [16, 4], x [16, 2], addend [4, 1] -> [4, 2].
    tb_reset(&b);
    uint16_t a   = tb_tensor(&b, 0, 0, HTP_TYPE_F32, 16, 4, 1, 1);
    x            = tb_tensor(&b, 0, 4096, HTP_TYPE_F32, 16, 2, 1, 1);
    uint16_t c   = tb_tensor(&b, 0, 8192, HTP_TYPE_F32, 4, 1, 1, 1);
    uint16_t c3  = tb_tensor(&b, 0, 12288, HTP_TYPE_F32, 3, 1, 1, 1);
    uint16_t c16 = tb_tensor(&b, 0, 16384, HTP_TYPE_F16, 4, 1, 1, 1);
    y            = tb_tensor(&b, 1, 0, HTP_TYPE_F32, 4, 2, 1, 1);
    op           = tb_op(&b, HTP_OP_MUL_MAT_ADD);
    op->flags    = HTP_OP_FLAG_FUSED;
    op->src[0]   = a;
    op->src[1]   = x;
    op->src[2]   = c;
    op->dst[0]   = y;
    CHECK(validate(&b) == HTP_STATUS_OK, "good MUL_MAT_ADD");
    op->flags = 0;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "MUL_MAT_ADD without HTP_OP_FLAG_FUSED");
    op->flags  = HTP_OP_FLAG_FUSED;
    op->src[2] = HTP_NO_TENSOR;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "MUL_MAT_ADD without an addend");
    op->src[2] = c3;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "MUL_MAT_ADD with an addend that does not tile the result");
    op->src[2] = c16;
    CHECK(validate(&b) == HTP_STATUS_NO_SUPPORT, "MUL_MAT_ADD with an F16 addend");
    op->src[2] = c;
    op->dst[0] = x;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "MUL_MAT_ADD with dst not the product's shape");
    op->dst[0] = y;
    op->src[1] = c;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "MUL_MAT_ADD with activations of another K");

    // MUL_MAT_FFN / QKV: malformed layouts; weights outside the K-quant engine.
    tb_reset(&b);
    a          = tb_tensor(&b, 0, 0, HTP_TYPE_F32, 16, 4, 1, 1);
    x          = tb_tensor(&b, 0, 4096, HTP_TYPE_F32, 16, 2, 1, 1);
    y          = tb_tensor(&b, 1, 0, HTP_TYPE_F32, 4, 2, 1, 1);
    uint16_t z = tb_tensor(&b, 1, 4096, HTP_TYPE_F32, 4, 2, 1, 1);
    op         = tb_op(&b, HTP_OP_MUL_MAT_FFN);
    op->flags  = HTP_OP_FLAG_FUSED;
    op->src[0] = a;
    op->src[1] = a;
    op->src[2] = x;
    op->dst[0] = y;
    op->dst[1] = z;
    CHECK(validate(&b) == HTP_STATUS_NO_SUPPORT, "MUL_MAT_FFN of F32 weights (one quantization serves K-quant only)");
    op->dst[1] = HTP_NO_TENSOR;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "MUL_MAT_FFN without its second result");
    op->dst[1] = z;
    op->src[2] = HTP_NO_TENSOR;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "MUL_MAT_FFN without activations");
    op->src[2] = x;
    op->src[5] = x;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "MUL_MAT_FFN with a source beyond its layout");
    op->src[5] = HTP_NO_TENSOR;
    op->flags  = 0;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "MUL_MAT_FFN without HTP_OP_FLAG_FUSED");
    op->opcode = HTP_OP_MUL_MAT_QKV;
    op->flags  = HTP_OP_FLAG_FUSED;
    op->src[3] = x;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "MUL_MAT_QKV without its third result (src[4])");

    // MUL_MAT_FFN_GLU: one dst; SWIGLU only; tiled quantized weights only.
    op->opcode    = HTP_OP_MUL_MAT_FFN_GLU;
    op->src[3]    = HTP_NO_TENSOR;
    op->params[0] = 2;  // HTP_GLU_SWIGLU
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "MUL_MAT_FFN_GLU with a second dst");
    op->dst[1] = HTP_NO_TENSOR;
    CHECK(validate(&b) == HTP_STATUS_NO_SUPPORT, "MUL_MAT_FFN_GLU of F32 weights");
    op->params[0] = 1;  // GEGLU
    CHECK(validate(&b) == HTP_STATUS_NO_SUPPORT, "MUL_MAT_FFN_GLU of GEGLU");
    op->params[0] = 2;
    op->src[2]    = HTP_NO_TENSOR;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "MUL_MAT_FFN_GLU without activations");
}

static void test_bad_fences(void) {
    struct tb            b;
    struct htp_op_desc * f;
    uint16_t             t;

    tb_reset(&b);
    t         = tb_fence(&b, 0, 64, 2);
    f         = tb_op(&b, HTP_OP_FENCE);
    f->src[0] = t;
    CHECK(validate(&b) == HTP_STATUS_OK, "good fence");
    f->params[1] = 2;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "fence mode 2");
    f->params[1] = 0;
    b.t[t].flags = 0;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "fence operand without HTP_TENSOR_FENCE");
    b.t[t].flags = HTP_TENSOR_FENCE;
    b.t[t].ne[0] = 32;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "fence operand ne[0] 32");
    b.t[t].ne[0] = 64;
    b.t[t].data  = 66;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "fence slot not 4-byte aligned");
    b.t[t].data = 64;
    f->src[0]   = HTP_NO_TENSOR;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "fence without operand");

    tb_reset(&b);
    t            = tb_tensor(&b, 0, 0, HTP_TYPE_F32, 16, 1, 1, 1);
    b.t[t].flags = HTP_TENSOR_FENCE;
    f            = tb_op(&b, HTP_OP_FENCE);
    f->src[0]    = t;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "fence operand of type F32");

    tb_reset(&b);
    t            = tb_fence(&b, 0, 0, 4);
    f            = tb_op(&b, HTP_OP_MDEV_GROUP);
    f->src[0]    = t;
    f->params[0] = 3;
    CHECK(validate(&b) == HTP_STATUS_OK, "MDEV_GROUP member 3 of 4");
    f->params[0] = 4;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "MDEV_GROUP member 4 of 4");
    f->params[0] = -1;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "MDEV_GROUP member -1");

    tb_reset(&b);
    uint16_t s  = tb_tensor(&b, 0, 1024, HTP_TYPE_F32, 8, 1, 1, 1);
    uint16_t d  = tb_tensor(&b, 1, 0, HTP_TYPE_F32, 8, 1, 1, 1);
    uint16_t ft = tb_tensor(&b, 0, 0, HTP_TYPE_F32, 16, 1, 1, 1);  // not a fence
    f           = tb_op(&b, HTP_OP_CPY_FENCE);
    f->src[0]   = s;
    f->src[1]   = ft;
    f->dst[0]   = d;
    CHECK(validate(&b) == HTP_STATUS_INVAL_PARAMS, "CPY_FENCE with a non-fence src[1]");
}

// --- good batches ---

static uint16_t h16(const uint8_t * p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return h;
}

static void test_nop_and_profile(void) {
    struct tb b;
    tb_reset(&b);
    for (int i = 0; i < 5; i++) {
        tb_op(&b, HTP_OP_NOP);
    }
    struct htp_opbatch_rsp rsp;
    struct htp_opbatch_req r  = tb_write(&b, 1, 0);
    int                    st = htp_batch_process(&batch, &env, &r, &rsp);
    CHECK(st == HTP_STATUS_OK && rsp.status == HTP_STATUS_OK && rsp.n_done == 5 && rsp.n_ops == 5 && rsp.seq == r.seq &&
              rsp.n_bufs == 3 && rsp.n_tensors == 0,
          "NOP batch: st %d n_done %u", st, rsp.n_done);
    struct htp_slot_layout l = htp_slot_layout(3, 0, 5, N_THREADS, 0);
    struct htp_prof_desc   pd[5];
    memcpy(pd, slots + env.slot_size + l.prof, sizeof(pd));
    int ok = 1;
    for (int i = 0; i < 5; i++) {
        ok &= pd[i].opcode == HTP_OP_NOP && pd[i].status == 0 && pd[i].n_threads == 1;
    }
    CHECK(ok, "profile descriptors of the NOPs");
}

static void test_cpy_f16(void) {
    struct tb b;
    tb_reset(&b);
    // 37 x 5 x 3 values exactly representable in f16, plus rounding cases.
    int64_t n   = 37 * 5 * 3;
    float * src = (float *)(void *)(maps[0].addr + 4096);
    for (int64_t i = 0; i < n; i++) {
        src[i] = (float)(i - 200) * 0.25f;
    }
    src[0]                  = 1.0f;
    src[1]                  = -2.0f;
    src[2]                  = 65504.0f;
    src[3]                  = 1.0f + 1.0f / 2048;  // halfway: rounds to even (1.0)
    src[4]                  = 1.0f + 3.0f / 2048;  // halfway: rounds to even (1 + 2^-9)
    src[5]                  = 1e-7f;               // f16 subnormal
    src[6]                  = 1e6f;                // overflows to inf
    uint16_t             s  = tb_tensor(&b, 0, 4096, HTP_TYPE_F32, 37, 5, 3, 1);
    uint16_t             h  = tb_tensor(&b, 1, 0, HTP_TYPE_F16, 37, 5, 3, 1);
    uint16_t             s2 = tb_tensor(&b, 0, 4096 + 8192, HTP_TYPE_F32, 37, 5, 3, 1);
    struct htp_op_desc * op = tb_op(&b, HTP_OP_CPY);
    op->src[0]              = s;
    op->dst[0]              = h;
    op                      = tb_op(&b, HTP_OP_CPY);
    op->src[0]              = h;
    op->dst[0]              = s2;
    struct htp_opbatch_rsp rsp;
    CHECK(run(&b, &rsp) == HTP_STATUS_OK && rsp.n_done == 2, "F32 -> F16 -> F32 batch");
    const uint8_t * hb = maps[1].addr;
    CHECK(h16(hb + 0) == 0x3c00 && h16(hb + 2) == 0xc000 && h16(hb + 4) == 0x7bff && h16(hb + 6) == 0x3c00 &&
              h16(hb + 8) == 0x3c02 && h16(hb + 10) == 0x0002 && h16(hb + 12) == 0x7c00,
          "f16 bits %04x %04x %04x %04x %04x %04x %04x", h16(hb), h16(hb + 2), h16(hb + 4), h16(hb + 6), h16(hb + 8),
          h16(hb + 10), h16(hb + 12));
    const float * back = (const float *)(const void *)(maps[0].addr + 4096 + 8192);
    int           bad  = 0;
    for (int64_t i = 7; i < n; i++) {
        bad += back[i] != src[i];
    }
    CHECK(bad == 0, "%d values changed through f16", bad);
}

// Permuted source (a transposed view) into a dst of another shape with padded rows.
static void test_cpy_strided(void) {
    struct tb b;
    tb_reset(&b);
    // Source storage: contiguous [6, 4, 3, 2] f32; the view swaps dims 0 and 1.
    float * base = (float *)(void *)(maps[0].addr);
    for (int i = 0; i < 6 * 4 * 3 * 2; i++) {
        base[i] = (float)i + 0.5f;
    }
    uint16_t s   = tb_tensor(&b, 0, 0, HTP_TYPE_F32, 4, 6, 3, 2);
    b.t[s].nb[0] = 24;  // step along the original dim 1
    b.t[s].nb[1] = 4;   // step along the original dim 0
    b.t[s].nb[2] = 96;
    b.t[s].nb[3] = 288;
    // Destination: [9, 16] f32 with rows padded to 12 floats; canaries in the padding.
    uint16_t d   = tb_tensor(&b, 1, 256, HTP_TYPE_F32, 9, 16, 1, 1);
    b.t[d].nb[1] = 48;
    b.t[d].nb[2] = b.t[d].nb[3] = 48 * 16;
    float * dst                 = (float *)(void *)(maps[1].addr + 256);
    for (int i = 0; i < 12 * 16; i++) {
        dst[i] = -1.0f;
    }
    struct htp_op_desc * op = tb_op(&b, HTP_OP_CPY);
    op->src[0]              = s;
    op->dst[0]              = d;
    struct htp_opbatch_rsp rsp;
    CHECK(run(&b, &rsp) == HTP_STATUS_OK, "strided CPY ran");
    int bad = 0, k = 0;
    for (int i3 = 0; i3 < 2; i3++) {
        for (int i2 = 0; i2 < 3; i2++) {
            for (int i1 = 0; i1 < 6; i1++) {
                for (int i0 = 0; i0 < 4; i0++, k++) {
                    float want = base[i3 * 72 + i2 * 24 + i0 * 6 + i1];
                    float got  = dst[(k / 9) * 12 + k % 9];
                    bad += want != got;
                }
            }
        }
    }
    int canaries = 0;
    for (int r = 0; r < 16; r++) {
        for (int c = 9; c < 12; c++) {
            canaries += dst[r * 12 + c] != -1.0f;
        }
    }
    CHECK(bad == 0 && canaries == 0, "strided CPY: %d wrong elements, %d padding bytes overwritten", bad, canaries);
}

static void test_cpy_blocks(void) {
    struct tb b;
    tb_reset(&b);
    uint8_t * src = maps[0].addr + 2048;
    for (int i = 0; i < 6 * 34; i++) {
        src[i] = (uint8_t)(i * 13 + 1);
    }
    uint16_t             s  = tb_tensor(&b, 0, 2048, HTP_TYPE_Q8_0, 64, 3, 1, 1);
    uint16_t             d  = tb_tensor(&b, 1, 1024, HTP_TYPE_Q8_0, 32, 6, 1, 1);
    struct htp_op_desc * op = tb_op(&b, HTP_OP_CPY);
    op->src[0]              = s;
    op->dst[0]              = d;
    struct htp_opbatch_rsp rsp;
    CHECK(run(&b, &rsp) == HTP_STATUS_OK && memcmp(maps[1].addr + 1024, src, 6 * 34) == 0,
          "q8_0 block copy [64,3] -> [32,6]");
}

// Large copies split across a real pool: dense (flat split) and row-strided.
static void test_cpy_parallel(struct htp_pool * pool) {
    struct htp_batch_env saved = env;
    env.pool                   = pool;
    struct tb b;
    tb_reset(&b);
    int64_t n   = 1000 * 100;
    float * src = (float *)(void *)maps[2].addr;
    for (int64_t i = 0; i < n; i++) {
        src[i] = (float)(i % 2048) - 1024.0f;
    }
    uint16_t s = tb_tensor(&b, 2, 0, HTP_TYPE_F32, 1000, 100, 1, 1);
    uint16_t h = tb_tensor(&b, 2, 400000, HTP_TYPE_F16, 1000, 100, 1, 1);
    // Transposed f16 view back into f32: exercises the row-split path.
    uint16_t ht             = tb_tensor(&b, 2, 400000, HTP_TYPE_F16, 100, 1000, 1, 1);
    b.t[ht].nb[0]           = 2000;
    b.t[ht].nb[1]           = 2;
    uint16_t             d  = tb_tensor(&b, 2, 600000, HTP_TYPE_F32, 100, 1000, 1, 1);
    struct htp_op_desc * op = tb_op(&b, HTP_OP_CPY);
    op->src[0]              = s;
    op->dst[0]              = h;
    op                      = tb_op(&b, HTP_OP_CPY);
    op->src[0]              = ht;
    op->dst[0]              = d;
    struct htp_opbatch_rsp rsp;
    CHECK(run(&b, &rsp) == HTP_STATUS_OK, "parallel CPY ran");
    const float * out = (const float *)(const void *)(maps[2].addr + 600000);
    int           bad = 0;
    for (int64_t r = 0; r < 1000; r++) {
        for (int64_t c = 0; c < 100; c++) {
            bad += out[r * 100 + c] != src[c * 1000 + r];
        }
    }
    struct htp_slot_layout l = htp_slot_layout(3, 4, 2, N_THREADS, 0);
    struct htp_prof_desc   pd;
    memcpy(&pd, slots + env.slot_size + l.prof, sizeof(pd));
    CHECK(bad == 0 && pd.n_threads == N_THREADS, "parallel CPY: %d wrong, n_threads %u", bad, pd.n_threads);
    env = saved;
}

// The parallel copy again under the profiler with the real pool: mode 2's
// counters (where this machine counts anything: pmu.h's choice) land in the
// slots announced and only there; mode 3's events are filed under worker
// indices within the slot's trace areas, each area's events its own.
static void test_profile_modes(struct htp_pool * pool) {
    struct htp_batch_env saved = env;
    env.pool                   = pool;
    struct tb b;
    uint16_t  s = 0, d = 0;
    tb_reset(&b);
    s                       = tb_tensor(&b, 2, 0, HTP_TYPE_F32, 1000, 100, 1, 1);
    d                       = tb_tensor(&b, 2, 400000, HTP_TYPE_F16, 1000, 100, 1, 1);
    struct htp_op_desc * op = tb_op(&b, HTP_OP_CPY);
    op->src[0]              = s;
    op->dst[0]              = d;

    struct htp_pmu_info info;
    htp_pmu_choose(2, NULL, 0, &info);
    struct htp_pmu_thread caller = {0};
    env.prof_mode                = info.mode;
    env.pmu_packed               = htp_pmu_pack(info.counter);
    env.pmu_caller               = &caller;
    struct htp_opbatch_rsp rsp;
    CHECK(run(&b, &rsp) == HTP_STATUS_OK, "CPY under mode %u", info.mode);
    struct htp_slot_layout l = htp_slot_layout(3, 2, 1, N_THREADS, 0);
    struct htp_prof_desc   pd;
    memcpy(&pd, slots + env.slot_size + l.prof, sizeof(pd));
    CHECK(pd.pmu_mask == (info.mode == 2 ? info.mask : 0u), "counted slots %#x, announced %#x", pd.pmu_mask, info.mask);
    int stray = 0, counted = 0;
    for (int k = 0; k < HTP_PMU_SLOTS; k++) {
        stray += !(pd.pmu_mask >> k & 1u) && pd.pmu[k] != 0;
        counted += (pd.pmu_mask >> k & 1u) &&
                   (info.counter[k] == HTP_PMU_TASK_CLOCK_NS || info.counter[k] == HTP_PMU_INSTRUCTIONS) &&
                   pd.pmu[k] > 0;
    }
    CHECK(stray == 0, "counts in %d slots not counted", stray);
    CHECK(info.mode != 2 || counted > 0, "no time / instruction count for a 100000-element copy");
    htp_pmu_thread_close(&caller);

    env.prof_mode            = 3;
    env.pmu_packed           = 0;
    env.pmu_caller           = NULL;
    struct htp_opbatch_req r = tb_write(&b, 1, N_TRACES);
    CHECK(htp_batch_process(&batch, &env, &r, &rsp) == HTP_STATUS_OK && rsp.start_us != 0, "CPY under mode 3");
    l         = htp_slot_layout(3, 2, 1, N_THREADS, N_TRACES);
    int wrong = 0, events = 0;
    for (uint32_t t = 0; t < N_THREADS; t++) {
        for (uint32_t k = 0; k < N_TRACES; k++) {
            struct htp_trace_desc e;
            memcpy(&e, slots + env.slot_size + l.trace + ((uint64_t)t * N_TRACES + k) * sizeof(e), sizeof(e));
            if (e.event == 0) {
                break;
            }
            events++;
            wrong +=
                e.thread != t || e.op != 0 || (e.event != HTP_TRACE_EVT_OP_BEGIN && e.event != HTP_TRACE_EVT_OP_END);
        }
    }
    CHECK(wrong == 0 && events >= 2 && events % 2 == 0, "%d trace events, %d misfiled", events, wrong);
    env = saved;
}

static void test_fences(void) {
    struct tb               b;
    struct htp_fence_slot * slot = (struct htp_fence_slot *)(void *)(maps[0].addr + 128);
    memset(slot, 0, sizeof(*slot));
    htp_ops_set_fence_timeout_ms(50);

    // signal 5, wait 5 (and wait 3: already passed), then wait 6 times out.
    tb_reset(&b);
    uint16_t             t = tb_fence(&b, 0, 128, 1);
    struct htp_op_desc * f;
    f = tb_op(&b, HTP_OP_FENCE), f->src[0] = t, f->params[0] = 5, f->params[1] = 1;
    f = tb_op(&b, HTP_OP_FENCE), f->src[0] = t, f->params[0] = 5, f->params[1] = 0;
    f = tb_op(&b, HTP_OP_FENCE), f->src[0] = t, f->params[0] = 3, f->params[1] = 0;
    f = tb_op(&b, HTP_OP_FENCE), f->src[0] = t, f->params[0] = 6, f->params[1] = 0;
    tb_op(&b, HTP_OP_NOP);
    struct htp_opbatch_rsp rsp;
    struct htp_opbatch_req r = tb_write(&b, 1, N_TRACES);
    struct htp_slot_layout l = htp_slot_layout(3, 1, 5, N_THREADS, N_TRACES);
    memset(slots + env.slot_size + l.prof, 0xee, 5 * sizeof(struct htp_prof_desc));
    env.prof_mode = 3;
    int st        = htp_batch_process(&batch, &env, &r, &rsp);
    env.prof_mode = 0;
    CHECK(st == HTP_STATUS_INTERNAL_ERR && rsp.n_done == 3 && slot->seq == 5 && slot->status == 0,
          "fence signal/wait then timeout: st %d n_done %u seq %u", st, rsp.n_done, slot->seq);
    struct htp_prof_desc pd[5];
    memcpy(pd, slots + env.slot_size + l.prof, sizeof(pd));
    CHECK(pd[3].status == HTP_STATUS_INTERNAL_ERR && pd[3].opcode == HTP_OP_FENCE && pd[4].opcode == 0 &&
              pd[4].status == 0,
          "profile: failing op recorded, op after it zeroed");
    struct htp_trace_desc tr[N_TRACES];
    memcpy(tr, slots + env.slot_size + l.trace, sizeof(tr));
    CHECK(rsp.n_traces == 8 && tr[0].event == HTP_TRACE_EVT_OP_BEGIN && tr[1].event == HTP_TRACE_EVT_OP_END &&
              tr[7].op == 3 && tr[8].event == 0,
          "trace events: %u written", rsp.n_traces);

    // Wrapped sequence numbers compare by signed distance.
    slot->seq = 0xfffffff0u;
    tb_reset(&b);
    t = tb_fence(&b, 0, 128, 1);
    f = tb_op(&b, HTP_OP_FENCE), f->src[0] = t, f->params[0] = 0x10, f->params[1] = 1;
    f = tb_op(&b, HTP_OP_FENCE), f->src[0] = t, f->params[0] = (int32_t)0xfffffff8u, f->params[1] = 0;
    CHECK(run(&b, &rsp) == HTP_STATUS_OK && slot->seq == 0x10, "wait across sequence wrap");

    // A slot carrying an error status fails the wait with it.
    slot->seq    = 9;
    slot->status = HTP_STATUS_NO_SUPPORT;
    tb_reset(&b);
    t = tb_fence(&b, 0, 128, 1);
    f = tb_op(&b, HTP_OP_FENCE), f->src[0] = t, f->params[0] = 9, f->params[1] = 0;
    CHECK(run(&b, &rsp) == HTP_STATUS_NO_SUPPORT && rsp.n_done == 0, "wait on an errored fence");

    // CPY_FENCE copies, then signals.
    tb_reset(&b);
    float * src = (float *)(void *)(maps[0].addr + 1024);
    for (int i = 0; i < 8; i++) {
        src[i] = (float)i * 3.0f;
    }
    uint16_t s   = tb_tensor(&b, 0, 1024, HTP_TYPE_F32, 8, 1, 1, 1);
    uint16_t d   = tb_tensor(&b, 1, 512, HTP_TYPE_F32, 8, 1, 1, 1);
    t            = tb_fence(&b, 0, 128, 1);
    f            = tb_op(&b, HTP_OP_CPY_FENCE);
    f->src[0]    = s;
    f->src[1]    = t;
    f->dst[0]    = d;
    f->params[0] = 42;
    CHECK(run(&b, &rsp) == HTP_STATUS_OK && slot->seq == 42 && slot->status == 0 &&
              memcmp(maps[1].addr + 512, src, 32) == 0,
          "CPY_FENCE copied and signalled seq %u", slot->seq);
    htp_ops_set_fence_timeout_ms(30000);
}

// A batch whose tables equal the last checked ones is taken without a new
// check (batch.h), so the comparison must catch any change: a tensor pushed
// past its buffer in an otherwise identical batch is refused, and a map table
// that moved (a buffer mapped elsewhere) makes the same tables checked anew,
// their views following the buffer.
static void test_checked_tables(void) {
    static _Atomic uint64_t moved;
    struct htp_batch_env    saved = env;
    env.maps_moved                = &moved;
    const int64_t n               = 64;
    float *       src             = (float *)(void *)(maps[0].addr + 8192);
    for (int64_t i = 0; i < n; i++) {
        src[i] = (float)i + 0.5f;
    }
    struct tb b;
    tb_reset(&b);
    uint16_t             s  = tb_tensor(&b, 0, 8192, HTP_TYPE_F32, n, 1, 1, 1);
    uint16_t             d  = tb_tensor(&b, 1, 4096, HTP_TYPE_F32, n, 1, 1, 1);
    struct htp_op_desc * op = tb_op(&b, HTP_OP_CPY);
    op->src[0]              = s;
    op->dst[0]              = d;
    struct htp_opbatch_rsp rsp;
    for (int k = 0; k < 3; k++) {  // the first checked, the others taken as they are
        memset(maps[1].addr + 4096, 0, (size_t)n * 4);
        CHECK(run(&b, &rsp) == HTP_STATUS_OK && memcmp(maps[1].addr + 4096, src, (size_t)n * 4) == 0,
              "same tables, pass %d: runs and copies", k);
    }

    struct tb bad = b;
    bad.t[d].data = maps[1].size - PAGE - 4 * (uint64_t)(n / 2);  // its second half in the guard page
    CHECK(validate(&bad) == HTP_STATUS_INVAL_PARAMS, "one tensor changed past its buffer: refused");
    CHECK(run(&b, &rsp) == HTP_STATUS_OK, "the good tables again: checked afresh, run");

    // The destination's buffer mapped elsewhere: same tables, new views.
    const size_t    size  = maps[1].size;
    uint8_t *       other = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uint8_t * const old   = maps[1].addr;
    CHECK_OR_RETURN(, other != MAP_FAILED, "mmap");
    maps[1].addr = other;
    atomic_fetch_add(&moved, 1);
    memset(old + 4096, 0, (size_t)n * 4);
    CHECK(run(&b, &rsp) == HTP_STATUS_OK && memcmp(other + 4096, src, (size_t)n * 4) == 0 && old[4096] == 0,
          "after the map table moved, the same tables write the buffer where it is now");
    maps[1].addr = old;
    atomic_fetch_add(&moved, 1);
    munmap(other, size);
    env = saved;
}

int main(void) {
    printf("test-npu-validate: batch validation refuses bad descriptors; NOP/CPY/FENCE batches run\n");
    new_buffer(0, KEY_A, 16 * PAGE);
    new_buffer(1, KEY_B, 8 * PAGE);
    new_buffer(2, KEY_C, 1024 * 1024 + PAGE);

    uint64_t slot_size = htp_slot_size(MAX_O, N_THREADS, N_TRACES);
    slots              = calloc(DEPTH, slot_size);
    CHECK_OR_RETURN(1, slots != NULL && htp_batch_init(&batch) == HTP_STATUS_OK, "slots / batch init");
    env = (struct htp_batch_env){
        .lookup    = lookup,
        .slots     = slots,
        .depth     = DEPTH,
        .slot_size = slot_size,
        .n_threads = N_THREADS,
        .pool      = NULL,  // serial: every job slice runs on this thread
    };
    struct htp_pool pool;
    CHECK_OR_RETURN(1, htp_pool_init(&pool, N_THREADS) == HTP_STATUS_OK, "pool of %d threads", N_THREADS);

    test_bad_counts();
    test_bad_buffers();
    test_bad_tensors();
    test_bad_ops();
    test_bad_fused();
    test_bad_fences();
    test_nop_and_profile();
    test_cpy_f16();
    test_cpy_strided();
    test_cpy_blocks();
    test_cpy_parallel(&pool);
    test_profile_modes(&pool);
    test_fences();
    test_checked_tables();

    htp_pool_free(&pool);
    htp_batch_free(&batch);
    free(slots);
    return test_exit_code("test-npu-validate");
}
