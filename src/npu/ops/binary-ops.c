// binary-ops.c: ADD, SUB, MUL, DIV with ggml's broadcasting: src1 is tiled
// over src0 (each ne of src0 a multiple of src1's), dst has src0's shape.
// Any strides on all three; any mix of F32, F16 and BF16 (computed in fp32).
//
//   src0 [ne0, ne1, ne2, ne3]   src1 [ne10 | ne0, ne11 | ne1, ...]   dst = src0's shape
//
// The fast path (everything F32 with packed rows) works on the tensors in
// place; the general path converts chunks of a row through stack buffers.

#include "kernels.h"
#include "kernel-util.h"
#include "vec.h"

struct binary_args {
    const struct htp_tensor_view * src0;
    const struct htp_tensor_view * src1;
    const struct htp_tensor_view * dst;
    enum htp_vec_binop             op;
    struct htp_ew_plan             plan;
};

static int binary_opcode_to_op(uint32_t opcode, enum htp_vec_binop * op) {
    switch (opcode) {
        case HTP_OP_ADD:
            *op = HTP_VEC_ADD;
            return 1;
        case HTP_OP_SUB:
            *op = HTP_VEC_SUB;
            return 1;
        case HTP_OP_MUL:
            *op = HTP_VEC_MUL;
            return 1;
        case HTP_OP_DIV:
            *op = HTP_VEC_DIV;
            return 1;
        default:
            return 0;
    }
}

// dst[c0, c1) of one row, everything F32 with packed rows: straight from the tensors.
static void binary_row_f32(enum htp_vec_binop op, float * d, const float * x, const float * y, int64_t ne10, int64_t c0,
                           int64_t c1) {
    if (ne10 == 1) {
        htp_vec_binop_scalar_f32(op, c1 - c0, d + c0, x + c0, y[0]);
        return;
    }
    // src1's row repeats every ne10 columns: walk the segments between repeats.
    for (int64_t c = c0; c < c1;) {
        const int64_t k = c % ne10, n = htp_min64(c1 - c, ne10 - k);
        htp_vec_binop_f32(op, n, d + c, x + c, y + k);
        c += n;
    }
}

// dst[c0, c1) of one row, any types and strides: chunk by chunk through fp32 buffers.
static void binary_row_any(const struct binary_args * a, uint8_t * d, const uint8_t * x, const uint8_t * y, int64_t c0,
                           int64_t c1) {
    const struct htp_tensor_view *src0 = a->src0, *src1 = a->src1, *dst = a->dst;
    const int64_t                 ne10 = src1->ne[0];
    float                         bx[HTP_CHUNK], by[HTP_CHUNK];
    for (int64_t c = c0; c < c1; c += HTP_CHUNK) {
        const int64_t n = htp_min64(HTP_CHUNK, c1 - c);
        htp_row_load_f32(bx, x + c * src0->nb[0], src0->nb[0], src0->type, n);
        for (int64_t j = 0; j < n;) {  // gather src1, wrapping every ne10 columns
            const int64_t k = (c + j) % ne10, m = htp_min64(n - j, ne10 - k);
            htp_row_load_f32(by + j, y + k * src1->nb[0], src1->nb[0], src1->type, m);
            j += m;
        }
        htp_vec_binop_f32(a->op, n, bx, bx, by);
        htp_row_store_f32(d + c * dst->nb[0], dst->nb[0], dst->type, bx, n);
    }
}

static void binary_job(void * arg, uint32_t ith, uint32_t nth) {
    const struct binary_args *    a    = arg;
    const struct htp_tensor_view *src0 = a->src0, *src1 = a->src1, *dst = a->dst;
    const int fast = htp_view_is_f32_packed(src0) && htp_view_is_f32_packed(src1) && htp_view_is_f32_packed(dst);

    int64_t it0, it1;
    htp_split(htp_ew_plan_items(&a->plan), ith, nth, &it0, &it1);
    for (int64_t it = it0; it < it1; it++) {
        int64_t ir, c0, c1, i1, i2, i3;
        htp_ew_plan_item(&a->plan, it, &ir, &c0, &c1);
        htp_row_index(src0->ne, ir, &i1, &i2, &i3);
        uint8_t *       d = htp_view_row(dst, i1, i2, i3);
        const uint8_t * x = htp_view_row(src0, i1, i2, i3);
        const uint8_t * y = htp_view_row(src1, i1 % src1->ne[1], i2 % src1->ne[2], i3 % src1->ne[3]);
        if (fast) {
            binary_row_f32(a->op, (float *)(void *)d, (const float *)(const void *)x, (const float *)(const void *)y,
                           src1->ne[0], c0, c1);
        } else {
            binary_row_any(a, d, x, y, c0, c1);
        }
    }
}

int htp_op_binary_run(struct htp_op_ctx * ctx) {
    struct binary_args a = {ctx->op.src[0], ctx->op.src[1], ctx->op.dst[0], HTP_VEC_ADD, {0, 0, 1, 0}};
    if (!binary_opcode_to_op(ctx->op.desc->opcode, &a.op)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (htp_view_nelements(a.dst) == 0) {
        return HTP_STATUS_OK;
    }
    a.plan = htp_ew_plan_make(htp_view_nrows(a.dst), a.dst->ne[0], ctx->op.n_threads);
    ctx->run(ctx->pool, binary_job, &a);
    return HTP_STATUS_OK;
}
