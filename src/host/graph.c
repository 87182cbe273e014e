// graph.c: graph_compute's first half: turn ggml nodes into HTP ops.
//
// A node becomes one struct htp_op: its op code, its sources and destination
// as operands (buffer, offset, shape, strides, type), and its op_params
// verbatim. Views cost nothing: a view is an operand with its own offset and
// strides into the buffer of the tensor it views. The translation of a graph
// is kept per device and reused while ggml hands in the same graph (same uid).

#include "graph.h"

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "ggml-buffer.h"
#include "ggml-internal.h"
#include "log.h"
#include "contract/op-check.h"
#include "repack.h"

uint32_t htp_graph_opcode(const struct ggml_tensor * node) {
    switch (node->op) {
        case GGML_OP_CPY:
        case GGML_OP_CONT:
        case GGML_OP_DUP:
            return HTP_OP_CPY;
        case GGML_OP_ADD:
            return HTP_OP_ADD;
        case GGML_OP_SUB:
            return HTP_OP_SUB;
        case GGML_OP_MUL:
            return HTP_OP_MUL;
        case GGML_OP_DIV:
            return HTP_OP_DIV;
        case GGML_OP_SCALE:
            return HTP_OP_SCALE;
        case GGML_OP_RMS_NORM:
            return HTP_OP_RMS_NORM;
        case GGML_OP_SOFT_MAX:
            return HTP_OP_SOFT_MAX;
        case GGML_OP_ROPE:
            return HTP_OP_ROPE;
        case GGML_OP_MUL_MAT:
            return HTP_OP_MUL_MAT;
        case GGML_OP_MUL_MAT_ID:
            return HTP_OP_MUL_MAT_ID;
        case GGML_OP_GET_ROWS:
            return HTP_OP_GET_ROWS;
        case GGML_OP_SET_ROWS:
            return HTP_OP_SET_ROWS;
        case GGML_OP_UNARY:
            return HTP_OP_UNARY;
        case GGML_OP_GLU:
            return HTP_OP_GLU;
        case GGML_OP_ADD_ID:
            return HTP_OP_ADD_ID;
        case GGML_OP_CLAMP:
            return HTP_OP_CLAMP;
        case GGML_OP_SQR:
            return HTP_OP_SQR;
        case GGML_OP_SQRT:
            return HTP_OP_SQRT;
        case GGML_OP_SUM_ROWS:
            return HTP_OP_SUM_ROWS;
        case GGML_OP_NORM:
            return HTP_OP_NORM;
        case GGML_OP_L2_NORM:
            return HTP_OP_L2_NORM;
        case GGML_OP_REPEAT:
            return HTP_OP_REPEAT;
        case GGML_OP_CUMSUM:
            return HTP_OP_CUMSUM;
        case GGML_OP_CONCAT:
            return HTP_OP_CONCAT;
        case GGML_OP_FILL:
            return HTP_OP_FILL;
        case GGML_OP_DIAG:
            return HTP_OP_DIAG;
        case GGML_OP_TRI:
            return HTP_OP_TRI;
        case GGML_OP_PAD:
            return HTP_OP_PAD;
        case GGML_OP_ARGSORT:
            return HTP_OP_ARGSORT;
        case GGML_OP_TOP_K:
            return HTP_OP_TOP_K;
        case GGML_OP_FLASH_ATTN_EXT:
            return HTP_OP_FLASH_ATTN_EXT;
        case GGML_OP_SSM_CONV:
            return HTP_OP_SSM_CONV;
        case GGML_OP_GATED_DELTA_NET:
            return HTP_OP_GATED_DELTA_NET;
        case GGML_OP_SOLVE_TRI:
            return HTP_OP_SOLVE_TRI;
        case GGML_OP_IM2COL:
            return HTP_OP_IM2COL;
        default:
            return HTP_OP_INVALID;
    }
}

bool htp_graph_node_is_free(const struct ggml_tensor * node) {
    return ggml_op_is_empty(node->op) || ggml_is_empty(node) || !(node->flags & GGML_TENSOR_FLAG_COMPUTE);
}

// The sources an op reads, in the order its kernel expects. For CPY the
// destination is the node itself (a view of src[1]), so only src[0] is read.
static int node_sources(const struct ggml_tensor * node, const struct ggml_tensor ** src) {
    int n = 0;
    if (node->op == GGML_OP_CPY) {
        src[0] = node->src[0];
        return 1;
    }
    for (int i = 0; i < GGML_MAX_SRC && i < HTP_OP_MAX_INPUTS; i++) {
        src[i] = node->src[i];
        if (src[i]) {
            n = i + 1;
        }
    }
    return n;
}

static void describe_shape(const struct ggml_tensor * t, struct htp_op_tensor * out) {
    out->key  = t;
    out->type = (uint32_t)t->type;
    for (int d = 0; d < HTP_OP_MAX_DIMS; d++) {
        out->ne[d] = t->ne[d];
        out->nb[d] = (int64_t)t->nb[d];
    }
    out->size  = ggml_nbytes(t);
    out->flags = 0;
    if (t->buffer && ggml_backend_buffer_get_usage(t->buffer) == GGML_BACKEND_BUFFER_USAGE_WEIGHTS) {
        out->flags |= HTP_TENSOR_WEIGHT;
    }
    if (htp_repack_is_tiled(t)) {
        // The buffer holds the tiled layout (contract/tiled.h): its strides and size.
        out->flags |= HTP_TENSOR_TILED;
        htp_repack_tiled_strides(t, out->nb);
        out->size = htp_repack_tiled_size(t);
    }
}

bool htp_tensor_describe(const struct ggml_tensor * t, struct htp_op_tensor * out) {
    if (!t->buffer || !htp_ggml_buffer_is_htp(t->buffer) || !t->data) {
        return false;
    }
    struct htp_buffer * buf = htp_ggml_buffer_get(t->buffer);
    describe_shape(t, out);
    out->buf    = buf;
    out->offset = (uint64_t)((const uint8_t *)t->data - htp_buffer_base(buf));
    return true;
}

// Where t's element 0 will sit in its buffer: its offset if it is allocated
// in an HTP buffer, else its offset within the tensor it views (buffers and
// ggml's allocations in them are aligned far beyond what a check tests).
static uint64_t planned_offset(const struct ggml_tensor * t) {
    if (t->buffer && htp_ggml_buffer_is_htp(t->buffer) && t->data) {
        return (uint64_t)((const uint8_t *)t->data - htp_buffer_base(htp_ggml_buffer_get(t->buffer)));
    }
    return t->view_src ? (uint64_t)t->view_offs : 0;
}

// The view the NPU would build from t's wire descriptor (contract/op-call.h:
// on the host, data holds the buffer offset). Returns false if the
// descriptor would not even validate.
static bool planned_view(const struct ggml_tensor * t, struct htp_tensor_view * v) {
    struct htp_op_tensor ot;
    describe_shape(t, &ot);
    struct htp_tensor wire = {.data = planned_offset(t), .size = ot.size, .type = ot.type, .flags = ot.flags};
    memcpy(wire.ne, ot.ne, sizeof wire.ne);
    memcpy(wire.nb, ot.nb, sizeof wire.nb);
    return htp_tensor_view_init(v, &wire, (uint8_t *)(uintptr_t)wire.data) == HTP_STATUS_OK;
}

bool htp_graph_supports(const struct ggml_tensor * node, uint32_t n_threads, uint64_t vtcm_size) {
    uint32_t opcode = htp_graph_opcode(node);
    if (opcode == HTP_OP_INVALID) {
        return false;
    }

    const struct ggml_tensor * src[HTP_OP_MAX_INPUTS] = {0};
    int                        n_src                  = node_sources(node, src);

    struct htp_op_desc     desc = {0};
    struct htp_tensor_view views[HTP_OP_MAX_INPUTS + 1];
    struct htp_op_call     call = {0};
    desc.opcode                 = opcode;
    memcpy(desc.params, node->op_params, sizeof desc.params);
    call.desc = &desc;
    for (int i = 0; i < n_src; i++) {
        if (src[i]) {
            if (src[i]->type >= GGML_TYPE_COUNT || !planned_view(src[i], &views[i])) {
                return false;
            }
            call.src[i] = &views[i];
        }
    }
    if (!planned_view(node, &views[HTP_OP_MAX_INPUTS])) {
        return false;
    }
    call.dst[0]    = &views[HTP_OP_MAX_INPUTS];
    call.n_threads = n_threads;
    call.vtcm_size = vtcm_size;
    return htp_op_check(&call) == HTP_STATUS_OK;
}

// Translate an op into n: opcode and flags, the params of params_node, the
// sources src[0 .. n_src) (NULL entries unused) and dst; its operand pointers
// point into n itself. node names the op in logs.
static int translate_op(const struct ggml_tensor * node, uint32_t opcode, uint32_t flags,
                        const struct ggml_tensor * params_node, const struct ggml_tensor * const * src, int n_src,
                        const struct ggml_tensor * dst, const struct ggml_tensor * dst1, struct htp_graph_node * n) {
    memset(&n->op, 0, sizeof n->op);
    n->op.opcode = opcode;
    n->op.flags  = flags;
    memcpy(n->op.params, params_node->op_params, sizeof n->op.params);

    // The weights the op reads: src[0] of a matmul or GET_ROWS, src[0 .. n-1]
    // of the fused matmuls of n weights.
    const int n_weights = opcode == HTP_OP_MUL_MAT || opcode == HTP_OP_MUL_MAT_ID || opcode == HTP_OP_GET_ROWS ||
                                  opcode == HTP_OP_MUL_MAT_ADD
                              ? 1
                          : opcode == HTP_OP_MUL_MAT_QKV                                     ? 3
                          : opcode == HTP_OP_MUL_MAT_FFN || opcode == HTP_OP_MUL_MAT_FFN_GLU ? 2
                                                                                             : 0;
    for (int i = 0; htp_backend_config->rt_repack && i < n_weights && i < n_src; i++) {
        if (src[i] && htp_repack_runtime((struct ggml_tensor *)src[i]) && htp_log_verbose) {
            // A quantized weight outside a weight buffer was tiled in place (once).
            HTP_LOG_DEBUG("ggml-htp: rt-repack %s (%s)\n", src[i]->name, ggml_type_name(src[i]->type));
        }
    }
    for (int i = 0; i < n_src; i++) {
        if (!src[i]) {
            continue;
        }
        if (!htp_tensor_describe(src[i], &n->operands[i])) {
            HTP_LOG_ERROR("ggml-htp: %s (%s): source %d (%s) is not in an HTP buffer\n", node->name, ggml_op_desc(node),
                          i, src[i]->name);
            return -1;
        }
        n->op.src[i] = &n->operands[i];
    }
    if (!htp_tensor_describe(dst, &n->operands[HTP_OP_MAX_INPUTS])) {
        HTP_LOG_ERROR("ggml-htp: %s (%s) is not in an HTP buffer\n", dst->name, ggml_op_desc(dst));
        return -1;
    }
    n->op.dst[0] = &n->operands[HTP_OP_MAX_INPUTS];
    if (dst1) {
        if (!htp_tensor_describe(dst1, &n->operands[HTP_OP_MAX_INPUTS + 1])) {
            HTP_LOG_ERROR("ggml-htp: %s (%s) is not in an HTP buffer\n", dst1->name, ggml_op_desc(dst1));
            return -1;
        }
        n->op.dst[1] = &n->operands[HTP_OP_MAX_INPUTS + 1];
    }
    return 0;
}

static int translate_node(const struct ggml_tensor * node, struct htp_graph_node * n) {
    const struct ggml_tensor * src[HTP_OP_MAX_INPUTS] = {0};
    int                        n_src                  = node_sources(node, src);
    return translate_op(node, htp_graph_opcode(node), 0, node, src, n_src, node, NULL, n);
}

// --- fusion ---

// The next node after i that needs NPU work, or -1.
static int next_compute_node(const struct ggml_cgraph * graph, int i) {
    for (int j = i + 1; j < graph->n_nodes; j++) {
        if (!htp_graph_node_is_free(graph->nodes[j])) {
            return j;
        }
    }
    return -1;
}

// Whether node i's result is read by reader alone: reader names it once among
// its sources, no other node of the graph reads or views it, it is no graph
// output, and ggml's own use count (which also counts readers in other splits
// of a scheduled graph: their views share the whole graph's counts) agrees.
// Then the result need not exist once a fused op consumes it.
bool htp_graph_read_only_by(const struct ggml_cgraph * graph, int i, const struct ggml_tensor * reader) {
    const struct ggml_tensor * t = graph->nodes[i];
    if (t->flags & GGML_TENSOR_FLAG_OUTPUT) {
        return false;
    }
    int uses = 0;
    for (int j = 0; j < graph->n_nodes; j++) {
        const struct ggml_tensor * u = graph->nodes[j];
        if (u->view_src == t) {
            return false;
        }
        for (int k = 0; k < GGML_MAX_SRC; k++) {
            if (u->src[k] == t) {
                if (u != reader) {
                    return false;
                }
                uses++;
            }
        }
    }
    if (uses != 1) {
        return false;
    }
    if (graph->use_counts && graph->visited_hash_set.size > 0) {
        const size_t h = ggml_hash_find(&graph->visited_hash_set, t);
        if (h != GGML_HASHSET_FULL && ggml_bitset_get(graph->visited_hash_set.used, h) && graph->use_counts[h] > 1) {
            return false;
        }
    }
    return true;
}

// Whether the NPU would accept translated op n (the contract's check on its
// wire descriptors, as the NPU runs it on the batch).
static bool translated_op_ok(const struct htp_graph_node * n, uint32_t n_threads, uint64_t vtcm_size) {
    struct htp_op_desc     desc = {.opcode = n->op.opcode, .flags = n->op.flags};
    struct htp_tensor_view views[HTP_OP_MAX_INPUTS + HTP_OP_MAX_OUTPUTS];
    struct htp_op_call     call = {.desc = &desc, .n_threads = n_threads, .vtcm_size = vtcm_size};
    memcpy(desc.params, n->op.params, sizeof desc.params);
    for (int i = 0; i < HTP_OP_MAX_INPUTS + HTP_OP_MAX_OUTPUTS; i++) {
        const struct htp_op_tensor * t = i < HTP_OP_MAX_INPUTS ? n->op.src[i] : n->op.dst[i - HTP_OP_MAX_INPUTS];
        if (!t) {
            continue;
        }
        struct htp_tensor wire = {.data = t->offset, .size = t->size, .type = t->type, .flags = t->flags};
        memcpy(wire.ne, t->ne, sizeof wire.ne);
        memcpy(wire.nb, t->nb, sizeof wire.nb);
        if (htp_tensor_view_init(&views[i], &wire, (uint8_t *)(uintptr_t)wire.data) != HTP_STATUS_OK) {
            return false;
        }
        if (i < HTP_OP_MAX_INPUTS) {
            call.src[i] = &views[i];
        } else {
            call.dst[i - HTP_OP_MAX_INPUTS] = &views[i];
        }
    }
    return htp_op_check(&call) == HTP_STATUS_OK;
}

// The fused op's dst must not overlap a source it reads, unless exactly
// (same element 0, shape and strides) where the kernel reads each element
// before it writes it: ggml-alloc may hand the last node's result memory
// that the first node's inputs left free, which the unfused nodes never
// read again but the fused op still does.
static bool bytes_overlap(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    const uint8_t *pa = a->data, *pb = b->data;
    return pa < pb + ggml_nbytes(b) && pb < pa + ggml_nbytes(a);
}

static bool same_layout(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    if (a->data != b->data || a->type != b->type) {
        return false;
    }
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        if (a->ne[d] != b->ne[d] || a->nb[d] != b->nb[d]) {
            return false;
        }
    }
    return true;
}

// node's operand other than t, if t is one of its two sources.
static const struct ggml_tensor * other_source(const struct ggml_tensor * node, const struct ggml_tensor * t) {
    if (node->src[0] == t && node->src[1] != t) {
        return node->src[1];
    }
    if (node->src[1] == t && node->src[0] != t) {
        return node->src[0];
    }
    return NULL;
}

// Matmuls m[0 .. n) (adjacent compute nodes) as one MUL_MAT_QKV (n = 3) or
// MUL_MAT_FFN (n = 2) into out: they read the same src1 tensor (the very
// tensor, not another view of its bytes), no weight is one of their results,
// and no result overlaps a source. All results are kept: none is absorbed.
static bool fuse_shared(const struct ggml_tensor * const * m, int n, struct htp_graph_node * out, uint32_t n_threads,
                        uint64_t vtcm_size) {
    const struct ggml_tensor * x = m[0]->src[1];
    if (!x || !x->data) {
        return false;
    }
    for (int a = 0; a < n; a++) {
        if (m[a]->op != GGML_OP_MUL_MAT || m[a]->src[1] != x || !m[a]->src[0] || !m[a]->src[0]->data || !m[a]->data) {
            return false;
        }
        for (int b = 0; b < n; b++) {
            const struct ggml_tensor * w = m[b]->src[0];
            if (w == m[a] || w->view_src == m[a] || bytes_overlap(m[a], w) || bytes_overlap(m[a], x) ||
                (a != b && bytes_overlap(m[a], m[b]))) {
                return false;
            }
        }
    }
    const struct ggml_tensor * src[5] = {m[0]->src[0], m[1]->src[0], NULL, NULL, NULL};
    if (n == 3) {
        src[2] = m[2]->src[0];
        src[3] = x;
        src[4] = m[2];  // the third result, through a source slot (proto/htp-proto.h)
    } else {
        src[2] = x;
    }
    const uint32_t opcode = n == 3 ? HTP_OP_MUL_MAT_QKV : HTP_OP_MUL_MAT_FFN;
    return translate_op(m[0], opcode, HTP_OP_FLAG_FUSED, m[0], src, n == 3 ? 5 : 3, m[0], m[1], out) == 0 &&
           translated_op_ok(out, n_threads, vtcm_size);
}

// Matmuls i (gate) and j (up, or the other way round), adjacent and of one
// src1, and the SWIGLU at node k after them, their only reader, as one
// MUL_MAT_FFN_GLU into out: neither product is stored.
static bool fuse_ffn_glu(const struct ggml_cgraph * graph, int i, int j, int k, struct htp_graph_node * out,
                         uint32_t n_threads, uint64_t vtcm_size) {
    const struct ggml_tensor *a = graph->nodes[i], *b = graph->nodes[j], *glu = graph->nodes[k];
    if (glu->op != GGML_OP_GLU || ggml_get_glu_op(glu) != GGML_GLU_OP_SWIGLU || ggml_get_op_params_i32(glu, 1) != 0 ||
        glu->type != GGML_TYPE_F32 || !glu->data) {
        return false;
    }
    const int gi = glu->src[0] == a && glu->src[1] == b ? i : glu->src[0] == b && glu->src[1] == a ? j : -1;
    if (gi < 0 || !ggml_are_same_shape(a, b) || !ggml_are_same_shape(a, glu) ||
        !htp_graph_read_only_by(graph, i, glu) || !htp_graph_read_only_by(graph, j, glu)) {
        return false;
    }
    const struct ggml_tensor * gate = graph->nodes[gi], *up = gi == i ? b : a;
    const struct ggml_tensor * x = a->src[1];
    if (bytes_overlap(glu, x) || bytes_overlap(glu, gate->src[0]) || bytes_overlap(glu, up->src[0])) {
        return false;
    }
    const struct ggml_tensor * src[3] = {gate->src[0], up->src[0], x};
    return translate_op(glu, HTP_OP_MUL_MAT_FFN_GLU, HTP_OP_FLAG_FUSED, glu, src, 3, glu, NULL, out) == 0 &&
           translated_op_ok(out, n_threads, vtcm_size);
}

// Try to fuse node i with the node(s) after it into n. Returns the index of
// the last node absorbed (n filled), or -1 (n untouched or to be overwritten).
static int try_fuse(const struct ggml_cgraph * graph, int i, struct htp_graph_node * n, uint32_t n_threads,
                    uint64_t vtcm_size) {
    const struct ggml_tensor * node = graph->nodes[i];
    if (node->op != GGML_OP_RMS_NORM && node->op != GGML_OP_MUL_MAT) {
        return -1;
    }
    const int j = next_compute_node(graph, i);
    if (j < 0) {
        return -1;
    }
    const struct ggml_tensor * next = graph->nodes[j];
    if (node->op == GGML_OP_MUL_MAT && next->op == GGML_OP_MUL_MAT) {
        // Q, K, V (or gate, up) of one activation tensor, as graph_optimize stacks them.
        const int                  k    = next_compute_node(graph, j);
        const struct ggml_tensor * m[3] = {node, next, k >= 0 ? graph->nodes[k] : NULL};
        if (m[2] && fuse_shared(m, 3, n, n_threads, vtcm_size)) {
            return k;
        }
        if (!fuse_shared(m, 2, n, n_threads, vtcm_size)) {
            return -1;
        }
        // The pair is legal: with the SWIGLU after it, better still.
        if (k >= 0) {
            struct htp_graph_node glu;
            if (fuse_ffn_glu(graph, i, j, k, &glu, n_threads, vtcm_size)) {
                *n = glu;
                // Operand pointers point into the node itself: repoint them.
                for (int s = 0; s < HTP_OP_MAX_INPUTS; s++) {
                    n->op.src[s] = glu.op.src[s] ? &n->operands[glu.op.src[s] - glu.operands] : NULL;
                }
                for (int d = 0; d < HTP_OP_MAX_OUTPUTS; d++) {
                    n->op.dst[d] = glu.op.dst[d] ? &n->operands[glu.op.dst[d] - glu.operands] : NULL;
                }
                return k;
            }
        }
        return j;
    }
    const struct ggml_tensor * other = other_source(next, node);
    // The intermediate is F32 (as the fused kernels keep it) and has the
    // result's shape; what else the fused op needs its check says.
    if (!other || node->type != GGML_TYPE_F32 || !ggml_are_same_shape(node, next) ||
        !htp_graph_read_only_by(graph, i, next)) {
        return -1;
    }
    if (!next->data || !other->data || !node->src[0] || !node->src[0]->data || (node->src[1] && !node->src[1]->data)) {
        return -1;
    }
    if (node->op == GGML_OP_RMS_NORM && next->op == GGML_OP_MUL) {
        const struct ggml_tensor * src[2] = {node->src[0], other};
        if ((bytes_overlap(next, src[0]) && !same_layout(next, src[0])) || bytes_overlap(next, other)) {
            return -1;
        }
        if (translate_op(next, HTP_OP_RMS_NORM_MUL, HTP_OP_FLAG_FUSED, node, src, 2, next, NULL, n) != 0) {
            return -1;
        }
    } else if (node->op == GGML_OP_MUL_MAT && next->op == GGML_OP_ADD && next->type == GGML_TYPE_F32) {
        const struct ggml_tensor * src[3] = {node->src[0], node->src[1], other};
        if (bytes_overlap(next, src[0]) || bytes_overlap(next, src[1]) ||
            (bytes_overlap(next, other) && !same_layout(next, other))) {
            return -1;
        }
        if (translate_op(next, HTP_OP_MUL_MAT_ADD, HTP_OP_FLAG_FUSED, node, src, 3, next, NULL, n) != 0) {
            return -1;
        }
    } else {
        return -1;
    }
    return translated_op_ok(n, n_threads, vtcm_size) ? j : -1;
}

int htp_graph_translate(struct htp_graph_cache * cache, const struct ggml_cgraph * graph, uint32_t n_threads,
                        uint64_t vtcm_size) {
    if (graph->uid != 0 && graph->uid == cache->uid) {
        cache->hits++;
        return 0;
    }
    cache->misses++;
    cache->uid     = 0;
    cache->n_nodes = 0;
    cache->n_fused = 0;
    if (graph->n_nodes > cache->capacity) {
        // Sized once per graph, before any node points into the array.
        struct htp_graph_node * nodes = realloc(cache->nodes, sizeof(*nodes) * (size_t)graph->n_nodes);
        if (!nodes) {
            HTP_LOG_ERROR("ggml-htp: out of memory translating a graph of %d nodes\n", graph->n_nodes);
            return -1;
        }
        cache->nodes    = nodes;
        cache->capacity = graph->n_nodes;
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        const struct ggml_tensor * node = graph->nodes[i];
        if (htp_graph_node_is_free(node)) {
            continue;
        }
        if (htp_graph_opcode(node) == HTP_OP_INVALID) {
            HTP_LOG_ERROR("ggml-htp: graph holds %s (%s), which HTP does not run\n", node->name, ggml_op_desc(node));
            return -1;
        }
        struct htp_graph_node * n    = &cache->nodes[cache->n_nodes];
        const int               last = htp_backend_config->opfusion ? try_fuse(graph, i, n, n_threads, vtcm_size) : -1;
        if (last >= 0) {
            // The nodes after the first that the fused op also stands for.
            for (int k = i + 1; k <= last; k++) {
                cache->n_fused += !htp_graph_node_is_free(graph->nodes[k]);
            }
            i = last;
        } else if (translate_node(node, n) != 0) {
            return -1;
        }
        cache->n_nodes++;
    }
    cache->uid = graph->uid;
    return 0;
}

void htp_graph_cache_free(struct htp_graph_cache * cache) {
    free(cache->nodes);
    memset(cache, 0, sizeof *cache);
}
