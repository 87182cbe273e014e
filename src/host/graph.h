// graph.h: from ggml graph nodes to HTP ops (see graph.c).

#ifndef HTP_GRAPH_H
#define HTP_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "ggml.h"
#include "opbatch.h"

// One compute node translated: the op and the operand descriptions its src /
// dst pointers point into.
struct htp_graph_node {
    struct htp_opnode    op;
    struct htp_op_tensor operands[HTP_OP_MAX_INPUTS + HTP_OP_MAX_OUTPUTS];
};

// The translated nodes of the last graph a device computed. ggml gives a graph
// a uid that stays the same while the graph does, so a repeated graph (every
// generated token) skips the translation.
struct htp_graph_cache {
    uint64_t                uid;    // graph->uid the nodes belong to; 0 = none
    struct htp_graph_node * nodes;  // [n_nodes]
    int                     n_nodes;
    int                     capacity;
    int                     n_fused;  // graph nodes absorbed into the fused ops among nodes
    uint64_t                hits;     // computes served from the cache (tests, htp-bench)
    uint64_t                misses;
};

void htp_graph_cache_free(struct htp_graph_cache * cache);

// The HTP op code of a ggml node, or HTP_OP_INVALID if the NPU has no such op.
uint32_t htp_graph_opcode(const struct ggml_tensor * node);

// True for nodes that need no NPU work: views, reshapes, empty tensors, nodes
// not flagged for compute.
bool htp_graph_node_is_free(const struct ggml_tensor * node);

// Whether node i's result is read by reader alone (once, no views of it, no
// graph output, and ggml's use count agrees): then a fused op may consume it
// without it ever being stored.
bool htp_graph_read_only_by(const struct ggml_cgraph * graph, int i, const struct ggml_tensor * reader);

// Would the NPU run this node? Builds the op descriptor the node would get
// (tiled flag and strides of repacked weights included) and runs the
// contract's check on it, the one the NPU runs on the batch, so the host
// claims exactly what the kernels accept. n_threads, vtcm_size: the workers
// and scratch the session's ops run with.
bool htp_graph_supports(const struct ggml_tensor * node, uint32_t n_threads, uint64_t vtcm_size);

// Describe a ggml tensor (in an HTP buffer) as an op operand. Returns false if
// it is not in an HTP buffer.
bool htp_tensor_describe(const struct ggml_tensor * t, struct htp_op_tensor * out);

// Translate the compute nodes of graph into cache (unless cache already holds
// graph->uid). Under GGML_HEXAGON_OPFUSION, runs of nodes that form a fused op
// (proto/htp-proto.h) become one op, where legal: each absorbed intermediate
// is read by the next node of the run alone, and the fused op passes the
// contract's check with n_threads workers and vtcm_size bytes of scratch.
// Returns 0, or -1 if a node cannot be described (logged).
int htp_graph_translate(struct htp_graph_cache * cache, const struct ggml_cgraph * graph, uint32_t n_threads,
                        uint64_t vtcm_size);

#endif  // HTP_GRAPH_H
