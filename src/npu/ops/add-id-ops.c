// add-id-ops.c: ADD_ID, a bias added per selected expert (mixture-of-experts
// layers with biases, e.g. gpt-oss):
//
//   src0 [ne0, ne1 = experts used, ne2 = tokens, ne3]   F32/F16/BF16, any strides
//   src1 [ne0, n_as = experts, ...]                     F32/F16/BF16, rows (i11, 0, 0)
//   src2 ids I32 [>= ne1, >= ne2]
//   dst  src0's shape:  dst[:, i1, i2, i3] = src0[:, i1, i2, i3] + src1[:, ids[i1, i2]]
//
// The expert ids come from shared memory: each is checked against n_as as it
// is read; a bad one stops its row and the op answers HTP_STATUS_INVAL_PARAMS.

#include <stdatomic.h>

#include "kernels.h"
#include "kernel-util.h"
#include "vec.h"

struct add_id_args {
    const struct htp_tensor_view * src0;
    const struct htp_tensor_view * src1;
    const struct htp_tensor_view * ids;
    const struct htp_tensor_view * dst;
    struct htp_ew_plan             plan;
    // Set by any worker that meets a bad id. Relaxed: nothing else is
    // published through it, and ctx->run returning orders it before the read.
    atomic_int bad_id;
};

static void add_id_job(void * arg, uint32_t ith, uint32_t nth) {
    struct add_id_args *          a    = arg;
    const struct htp_tensor_view *src0 = a->src0, *src1 = a->src1, *ids = a->ids, *dst = a->dst;
    const int fast = htp_view_is_f32_packed(src0) && htp_view_is_f32_packed(src1) && htp_view_is_f32_packed(dst);

    int64_t it0, it1;
    htp_split(htp_ew_plan_items(&a->plan), ith, nth, &it0, &it1);
    for (int64_t it = it0; it < it1; it++) {
        int64_t ir, c0, c1, i1, i2, i3;
        htp_ew_plan_item(&a->plan, it, &ir, &c0, &c1);
        htp_row_index(dst->ne, ir, &i1, &i2, &i3);
        int32_t id;
        memcpy(&id, ids->data + i1 * ids->nb[0] + i2 * ids->nb[1], sizeof id);
        if (id < 0 || id >= src1->ne[1]) {
            atomic_store_explicit(&a->bad_id, 1, memory_order_relaxed);
            continue;
        }
        uint8_t *       d = htp_view_row(dst, i1, i2, i3);
        const uint8_t * x = htp_view_row(src0, i1, i2, i3);
        const uint8_t * y = src1->data + (int64_t)id * src1->nb[1];
        if (fast) {
            htp_vec_binop_f32(HTP_VEC_ADD, c1 - c0, (float *)(void *)d + c0, (const float *)(const void *)x + c0,
                              (const float *)(const void *)y + c0);
            continue;
        }
        float bx[HTP_CHUNK], by[HTP_CHUNK];
        for (int64_t c = c0; c < c1; c += HTP_CHUNK) {
            const int64_t n = htp_min64(HTP_CHUNK, c1 - c);
            htp_row_load_f32(bx, x + c * src0->nb[0], src0->nb[0], src0->type, n);
            htp_row_load_f32(by, y + c * src1->nb[0], src1->nb[0], src1->type, n);
            htp_vec_binop_f32(HTP_VEC_ADD, n, bx, bx, by);
            htp_row_store_f32(d + c * dst->nb[0], dst->nb[0], dst->type, bx, n);
        }
    }
}

int htp_op_add_id_run(struct htp_op_ctx * ctx) {
    struct add_id_args a = {ctx->op.src[0], ctx->op.src[1], ctx->op.src[2], ctx->op.dst[0], {0, 0, 1, 0}, 0};
    if (htp_view_nelements(a.dst) == 0) {
        return HTP_STATUS_OK;
    }
    a.plan = htp_ew_plan_make(htp_view_nrows(a.dst), a.dst->ne[0], ctx->op.n_threads);
    ctx->run(ctx->pool, add_id_job, &a);
    return atomic_load_explicit(&a.bad_id, memory_order_relaxed) ? HTP_STATUS_INVAL_PARAMS : HTP_STATUS_OK;
}
