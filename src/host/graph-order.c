// graph-order.c: graph_optimize, the node reordering of the HTP backend.
//
// The one idea: MUL_MATs that read the same activations (src1) are pulled
// together, so the NPU quantizes / stages those activations once and keeps them
// in scratch memory for the whole stack (Q, K and V projections; FFN gate and
// up). A node may only move up past the nodes between it and the head of its
// stack when no memory hazard exists between them: it must not read what they
// write, nor write what they read or write. Reads against reads are fine.
//
// What moves is a run, not a node: a node and the nodes the host fuses it
// with (graph.c's try_fuse: RMS_NORM and the MUL of its result, MUL_MAT and
// the ADD of its result, with the views between them) travel as one, so that
// pulling a matmul up never strands its bias or residual ADD and the NPU still
// gets the fused op. A run is found from the graph's structure alone (ops,
// shapes, the intermediate's only reader): graph_optimize runs before
// allocation.

#include "graph-order.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-backend.h"
#include "ggml-internal.h"
#include "ggml.h"
#include "graph.h"

// How far ahead a stack head looks for nodes to pull up.
#define HTP_ORDER_WINDOW 64

struct mem_range {
    uintptr_t space;  // the buffer (or, unallocated, the tensor owning the memory)
    uintptr_t begin;
    uintptr_t end;
    bool      write;
};

struct mem_ranges {
    struct mem_range r[HTP_ORDER_WINDOW * (GGML_MAX_SRC + 1)];
    int              n;
};

static struct mem_range range_of(const struct ggml_tensor * t, bool write) {
    struct mem_range mr = {0};
    mr.write            = write;
    if (t->buffer) {
        mr.space = (uintptr_t)t->buffer;
        mr.begin = (uintptr_t)t->data;
        mr.end   = mr.begin + ggml_backend_buft_get_alloc_size(ggml_backend_buffer_get_type(t->buffer), t);
    } else {
        // Not allocated yet: identify the memory by the tensor that owns it,
        // which every view of it shares.
        mr.space = (uintptr_t)(t->view_src ? t->view_src : t);
        mr.begin = 0;
        mr.end   = 1;
    }
    return mr;
}

static bool ranges_conflict(const struct mem_ranges * mrs, struct mem_range mr) {
    for (int i = 0; i < mrs->n; i++) {
        const struct mem_range * o = &mrs->r[i];
        if (o->space != mr.space || (!o->write && !mr.write)) {
            continue;
        }
        if (mr.begin < o->end && o->begin < mr.end) {
            return true;
        }
    }
    return false;
}

static void ranges_add_node(struct mem_ranges * mrs, const struct ggml_tensor * node) {
    if (ggml_op_is_empty(node->op)) {
        return;
    }
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        if (node->src[i] && mrs->n < (int)(sizeof mrs->r / sizeof mrs->r[0])) {
            mrs->r[mrs->n++] = range_of(node->src[i], false);
        }
    }
    if (mrs->n < (int)(sizeof mrs->r / sizeof mrs->r[0])) {
        mrs->r[mrs->n++] = range_of(node, true);
    }
}

static bool node_may_move(const struct mem_ranges * mrs, const struct ggml_tensor * node) {
    if (ggml_op_is_empty(node->op)) {
        return true;
    }
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        if (node->src[i] && ranges_conflict(mrs, range_of(node->src[i], false))) {
            return false;
        }
    }
    return !ranges_conflict(mrs, range_of(node, true));
}

// A stack head: a matrix multiply whose activations other nodes may share.
static bool can_head_stack(const struct ggml_tensor * node) {
    return node->op == GGML_OP_MUL_MAT && node->src[1] != NULL;
}

static bool can_join_stack(const struct ggml_tensor * head, const struct ggml_tensor * node) {
    return node->op == GGML_OP_MUL_MAT && node->src[1] == head->src[1];
}

// The last node of the fusion run that starts at node i (see the top of this
// file), or i when node i fuses with nothing after it.
static int run_end(const struct ggml_cgraph * graph, int i) {
    const struct ggml_tensor * node = graph->nodes[i];
    if (node->op != GGML_OP_RMS_NORM && node->op != GGML_OP_MUL_MAT) {
        return i;
    }
    int j = i + 1;
    while (j < graph->n_nodes && htp_graph_node_is_free(graph->nodes[j])) {
        j++;
    }
    if (j >= graph->n_nodes) {
        return i;
    }
    const struct ggml_tensor * next  = graph->nodes[j];
    const enum ggml_op         joins = node->op == GGML_OP_RMS_NORM ? GGML_OP_MUL : GGML_OP_ADD;
    const bool                 reads = (next->src[0] == node) != (next->src[1] == node);  // one of its two operands
    if (next->op != joins || !reads || node->type != GGML_TYPE_F32 || next->type != GGML_TYPE_F32 ||
        !ggml_are_same_shape(node, next) || !htp_graph_read_only_by(graph, i, next)) {
        return i;
    }
    return j;
}

static bool run_may_move(const struct mem_ranges * mrs, struct ggml_tensor * const * nodes, int begin, int end) {
    for (int k = begin; k <= end; k++) {
        if (!node_may_move(mrs, nodes[k])) {
            return false;
        }
    }
    return true;
}

static void ranges_add_run(struct mem_ranges * mrs, struct ggml_tensor * const * nodes, int begin, int end) {
    for (int k = begin; k <= end; k++) {
        ranges_add_node(mrs, nodes[k]);
    }
}

int htp_graph_order(struct ggml_cgraph * graph) {
    const int n = ggml_graph_n_nodes(graph);
    if (n < 3) {
        return 0;
    }

    struct ggml_tensor ** order = malloc(sizeof(*order) * (size_t)n);
    int *                 ends  = malloc(sizeof(*ends) * (size_t)n);  // ends[i]: last node of the run at i
    bool *                used  = calloc((size_t)n, sizeof(*used));
    struct mem_ranges *   mrs   = malloc(sizeof(*mrs));
    if (!order || !ends || !used || !mrs) {
        free(order);
        free(ends);
        free(used);
        free(mrs);
        return -1;  // leave the graph as it is
    }
    // Runs: a node inside one (past its first) is marked used and travels with its first.
    for (int i = 0; i < n; i++) {
        ends[i] = run_end(graph, i);
    }
    for (int i = 0; i < n; i++) {
        for (int k = i + 1; k <= ends[i]; k++) {
            ends[k] = -1;
        }
        i = ends[i] > i ? ends[i] : i;
    }

    struct ggml_tensor * const * nodes = graph->nodes;
    int                          n_out = 0, n_moved = 0;
    for (int i0 = 0; i0 < n; i0++) {
        if (used[i0] || ends[i0] < 0) {
            continue;
        }
        struct ggml_tensor * head = nodes[i0];
        for (int k = i0; k <= ends[i0]; k++) {
            order[n_out++] = nodes[k];
            used[k]        = true;
        }
        if (!can_head_stack(head)) {
            continue;
        }
        mrs->n = 0;
        for (int i1 = ends[i0] + 1; i1 < i0 + HTP_ORDER_WINDOW && i1 < n; i1++) {
            if (used[i1] || ends[i1] < 0) {
                continue;
            }
            if (can_join_stack(head, nodes[i1]) && run_may_move(mrs, nodes, i1, ends[i1])) {
                for (int k = i1; k <= ends[i1]; k++) {
                    order[n_out++] = nodes[k];
                    used[k]        = true;
                }
            } else {
                // Stays in place: later members of the stack move up past it.
                ranges_add_run(mrs, nodes, i1, ends[i1]);
            }
            i1 = ends[i1];
        }
    }

    for (int i = 0; i < n; i++) {
        n_moved += graph->nodes[i] != order[i];
        graph->nodes[i] = order[i];
    }
    free(order);
    free(ends);
    free(used);
    free(mrs);
    return n_moved;
}
