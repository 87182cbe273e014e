// opbatch.h: the descriptor tables of one batch of ops, built on the host
// (the counterpart of the reference's ggml_hexagon_opbatch).
//
// Ops come in as struct htp_opnode, whose operands are struct htp_op_tensor (a
// buffer, an offset and a shape). Operands are deduplicated: by key (the ggml
// tensor pointer) through a hash table, and by (buffer, offset, shape), so a
// view and its source or two nodes naming the same bytes share one descriptor.
// Buffers are looked up by fd in a table of at most HTP_OP_MAX_BUFS. The batch
// also keeps its vmem budget: the sum of the sizes of its non-extended buffers
// must stay within what the session's VA window can take. All tables are
// allocated at init for max_ops ops; adding an op allocates nothing.

#ifndef HTP_OPBATCH_H
#define HTP_OPBATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "proto/htp-proto.h"

struct htp_buffer;
struct htp_map_target;

// One operand, host side.
struct htp_op_tensor {
    const void *        key;     // identity for dedup (the ggml_tensor pointer), or NULL
    struct htp_buffer * buf;     // buffer holding it
    uint64_t            offset;  // of element 0 in buf
    uint32_t            type;    // enum htp_type (= enum ggml_type)
    uint32_t            flags;   // HTP_TENSOR_*
    int64_t             ne[HTP_OP_MAX_DIMS];
    int64_t             nb[HTP_OP_MAX_DIMS];
    uint64_t            size;  // bytes spanned
};

// One op, host side (the reference's htp_opnode). Unused src / dst entries are NULL.
struct htp_opnode {
    uint32_t                     opcode;  // enum htp_op
    uint32_t                     flags;   // enum htp_op_flags (HTP_OP_FLAG_FUSED on fused codes)
    const struct htp_op_tensor * src[HTP_OP_MAX_INPUTS];
    const struct htp_op_tensor * dst[HTP_OP_MAX_OUTPUTS];
    int32_t                      params[HTP_OP_PARAMS_SIZE / 4];
};

struct htp_opbatch {
    const struct htp_map_target * target;  // whose batch (decides buffer descriptor flags)

    uint32_t n_bufs, n_tensors, n_ops;
    uint32_t max_bufs, max_tensors, max_ops;
    uint64_t vmem;  // sum of non-extended, non-pinned buffer sizes

    // The counts of the batch the last reset emptied: its tables are still in
    // bufs / tensors / ops until the next add overwrites them (htp_opbatch_restore).
    uint32_t last_bufs, last_tensors, last_ops;
    uint64_t last_vmem;
    uint64_t max_vmem;
    uint32_t page_size;  // the NPU's: buffers cost htp_window_bytes() of the window

    struct htp_buf_desc  bufs[HTP_OP_MAX_BUFS];
    struct htp_buffer *  buf_ptrs[HTP_OP_MAX_BUFS];  // bufs[i]'s buffer
    struct htp_tensor *  tensors;                    // [max_tensors]
    struct htp_op_desc * ops;                        // [max_ops]

    // Dedup tables: open addressing, entries valid only when their generation
    // equals gen, so reset is O(1).
    uint32_t      gen;
    uint32_t      hash_mask;
    uint32_t      n_keys;     // keys in the key table; kept under 3/4 of it
    uint32_t *    key_gen;    // [hash_mask + 1]
    const void ** key_ptr;    // [hash_mask + 1]
    uint16_t *    key_ti;     // [hash_mask + 1]
    uint32_t *    data_gen;   // [hash_mask + 1] heads of chains by (buffer, offset)
    uint16_t *    data_head;  // [hash_mask + 1]
    uint16_t *    data_next;  // [max_tensors]   next tensor with the same (buffer, offset) hash
};

// Tables for up to max_ops ops (<= HTP_OP_MAX_OPS) in a batch of the session
// of target, whose non-extended buffers may total max_vmem bytes of a window
// placed in page_size pages (contract/window.h).
// Returns 0 or HTP_STATUS_HOST_ERR.
int  htp_opbatch_init(struct htp_opbatch * b, const struct htp_map_target * target, uint32_t max_ops, uint64_t max_vmem,
                      uint32_t page_size);
void htp_opbatch_free(struct htp_opbatch * b);

// Empty the batch (O(1)). Its tables stay as they are until the next add.
void htp_opbatch_reset(struct htp_opbatch * b);

// Make an empty batch hold again what the last reset emptied it of, tables
// untouched since (nothing was added). Only for pushing it again: the
// deduplication tables do not know its tensors, so nothing may be added to a
// restored batch (reset it after the push). Returns false, changing nothing,
// if the batch is not empty.
bool htp_opbatch_restore(struct htp_opbatch * b);

static inline bool htp_opbatch_empty(const struct htp_opbatch * b) {
    return b->n_ops == 0;
}

static inline bool htp_opbatch_full(const struct htp_opbatch * b) {
    return b->n_ops >= b->max_ops;
}

// Would op fit in the batch's buffer, tensor and vmem limits? (Not the op count:
// see htp_opbatch_full.)
bool htp_opbatch_fits(const struct htp_opbatch * b, const struct htp_opnode * op);

// Append op. The caller checked !full and fits. Returns 0, or
// HTP_STATUS_HOST_ERR on an operand without a buffer (nothing is added then).
int htp_opbatch_add(struct htp_opbatch * b, const struct htp_opnode * op);

// Order the buffer table largest first (stable) and renumber each tensor's bi.
void htp_opbatch_sort_buffers(struct htp_opbatch * b);

#endif  // HTP_OPBATCH_H
