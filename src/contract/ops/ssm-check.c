// ssm-check.c: the recurrent-model ops SSM_CONV, GATED_DELTA_NET (scalar and
// KDA gates, state snapshots) and SOLVE_TRI; all F32 with packed rows.

#include "ssm-check.h"

#include "op-checks.h"

int htp_op_ssm_conv_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *sx = call->src[0], *c = call->src[1], *dst = call->dst[0];
    if (!sx || !c || !dst || !htp_view_shape_ok(sx) || !htp_view_shape_ok(c) || !htp_view_shape_ok(dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (c->ne[0] <= 0 || sx->ne[0] != c->ne[0] - 1 + dst->ne[1] || sx->ne[1] != c->ne[1] || dst->ne[0] != c->ne[1] ||
        dst->ne[2] != sx->ne[2] || sx->ne[3] != 1 || dst->ne[3] != 1 || c->ne[2] != 1 || c->ne[3] != 1) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (!htp_view_is_f32_packed(sx) || !htp_view_is_f32_packed(c) || !htp_view_is_f32_packed(dst)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return HTP_STATUS_OK;
}

size_t htp_gdn_slice_bytes(int64_t S, int64_t K) {
    const size_t floats = (size_t)S + (K > 1 ? (size_t)S * S : 0);
    return htp_scratch_round(floats * sizeof(float));
}

static int gdn_view_ok(const struct htp_tensor_view * t) {
    return t && htp_view_shape_ok(t) && t->ne[0] > 0 && t->ne[1] > 0 && t->ne[2] > 0 && t->ne[3] > 0;
}

int htp_op_gated_delta_net_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *q = call->src[0], *k = call->src[1], *v = call->src[2], *g = call->src[3];
    const struct htp_tensor_view *beta = call->src[4], *state = call->src[5], *dst = call->dst[0];
    if (!gdn_view_ok(q) || !gdn_view_ok(k) || !gdn_view_ok(v) || !gdn_view_ok(g) || !gdn_view_ok(beta) ||
        !gdn_view_ok(state) || !dst || !htp_view_shape_ok(dst)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    const int64_t S = v->ne[0], H = v->ne[1], T = v->ne[2], N = v->ne[3], K = call->desc->params[0];
    if (q->ne[0] != S || k->ne[0] != S || q->ne[2] != T || k->ne[2] != T || H % q->ne[1] != 0 || H % k->ne[1] != 0 ||
        N % q->ne[3] != 0 || N % k->ne[3] != 0) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if ((g->ne[0] != 1 && g->ne[0] != S) || g->ne[1] != H || g->ne[2] != T || g->ne[3] != N || beta->ne[0] != 1 ||
        beta->ne[1] != H || beta->ne[2] != T || beta->ne[3] != N) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (state->ne[0] != S || state->ne[1] != S || state->ne[2] != H || state->ne[3] != N || K < 1 ||
        K > ((int64_t)1 << 20)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (dst->ne[0] != S * H || dst->ne[1] != T * N + K * S * N || dst->ne[2] != 1 || dst->ne[3] != 1) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    const struct htp_tensor_view * all[] = {q, k, v, g, beta, state, dst};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (!htp_view_is_f32_packed(all[i])) {
            return HTP_STATUS_NO_SUPPORT;
        }
    }
    // The state rows of one (head, seq) and the output are addressed as flat arrays.
    if (state->nb[1] != S * 4 || state->nb[2] != S * S * 4 || dst->nb[1] != S * H * 4 || g->nb[1] != g->ne[0] * 4) {
        return HTP_STATUS_NO_SUPPORT;
    }
    if (htp_gdn_slice_bytes(S, K) > call->vtcm_size / (call->n_threads ? call->n_threads : 1)) {
        return HTP_STATUS_VTCM_TOO_SMALL;
    }
    return HTP_STATUS_OK;
}

int htp_op_solve_tri_check(const struct htp_op_call * call) {
    const struct htp_tensor_view *A = call->src[0], *B = call->src[1], *X = call->dst[0];
    if (!A || !B || !X || !htp_view_shape_ok(A) || !htp_view_shape_ok(B) || !htp_view_same_shape(B, X)) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (A->ne[0] != A->ne[1] || A->ne[1] != B->ne[1] || A->ne[2] != B->ne[2] || A->ne[3] != B->ne[3]) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    if (!htp_view_is_f32_packed(A) || !htp_view_is_f32_packed(B) || !htp_view_is_f32_packed(X)) {
        return HTP_STATUS_NO_SUPPORT;
    }
    return HTP_STATUS_OK;
}
