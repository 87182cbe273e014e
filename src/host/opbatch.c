// opbatch.c: building a batch's descriptor tables (see opbatch.h).

#include "opbatch.h"

#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "contract/window.h"
#include "status.h"

static uint32_t hash_ptr(const void * p, uint64_t extra) {
    uint64_t x = (uint64_t)(uintptr_t)p ^ (extra * 0x9e3779b97f4a7c15ull);
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    return (uint32_t)x;
}

int htp_opbatch_init(struct htp_opbatch * b, const struct htp_map_target * target, uint32_t max_ops, uint64_t max_vmem,
                     uint32_t page_size) {
    memset(b, 0, sizeof *b);
    if (max_ops == 0 || max_ops > HTP_OP_MAX_OPS) {
        return HTP_STATUS_HOST_ERR;
    }
    uint64_t n_tensors = (uint64_t)max_ops * 4 + HTP_OP_MAX_INPUTS + HTP_OP_MAX_OUTPUTS;
    if (n_tensors > HTP_OP_MAX_TENSORS) {
        n_tensors = HTP_OP_MAX_TENSORS;
    }
    b->target      = target;
    b->max_bufs    = HTP_OP_MAX_BUFS;
    b->max_tensors = (uint32_t)n_tensors;
    b->max_ops     = max_ops;
    b->max_vmem    = max_vmem;
    b->page_size   = page_size < HTP_PAGE_SIZE ? HTP_PAGE_SIZE : page_size;

    // Hash tables at least twice the tensor count keep probe chains short.
    uint32_t hsize = 16;
    while (hsize < 2 * b->max_tensors) {
        hsize *= 2;
    }
    b->hash_mask = hsize - 1;

    b->tensors   = calloc(b->max_tensors, sizeof *b->tensors);
    b->ops       = calloc(b->max_ops, sizeof *b->ops);
    b->key_gen   = calloc(hsize, sizeof *b->key_gen);
    b->key_ptr   = calloc(hsize, sizeof *b->key_ptr);
    b->key_ti    = calloc(hsize, sizeof *b->key_ti);
    b->data_gen  = calloc(hsize, sizeof *b->data_gen);
    b->data_head = calloc(hsize, sizeof *b->data_head);
    b->data_next = calloc(b->max_tensors, sizeof *b->data_next);
    if (!b->tensors || !b->ops || !b->key_gen || !b->key_ptr || !b->key_ti || !b->data_gen || !b->data_head ||
        !b->data_next) {
        htp_opbatch_free(b);
        return HTP_STATUS_HOST_ERR;
    }
    b->gen = 1;  // tables hold generation 0: all empty
    return 0;
}

void htp_opbatch_free(struct htp_opbatch * b) {
    free(b->tensors);
    free(b->ops);
    free(b->key_gen);
    free(b->key_ptr);
    free(b->key_ti);
    free(b->data_gen);
    free(b->data_head);
    free(b->data_next);
    memset(b, 0, sizeof *b);
}

void htp_opbatch_reset(struct htp_opbatch * b) {
    b->last_bufs    = b->n_bufs;
    b->last_tensors = b->n_tensors;
    b->last_ops     = b->n_ops;
    b->last_vmem    = b->vmem;
    b->n_bufs       = 0;
    b->n_tensors    = 0;
    b->n_ops        = 0;
    b->vmem         = 0;
    b->n_keys       = 0;
    if (++b->gen == 0) {
        // Generation counter wrapped: clear the tables for real, once in 2^32 batches.
        memset(b->key_gen, 0, (size_t)(b->hash_mask + 1) * sizeof *b->key_gen);
        memset(b->data_gen, 0, (size_t)(b->hash_mask + 1) * sizeof *b->data_gen);
        b->gen = 1;
    }
}

bool htp_opbatch_restore(struct htp_opbatch * b) {
    if (b->n_ops > 0 || b->n_tensors > 0 || b->n_bufs > 0) {
        return false;
    }
    b->n_bufs    = b->last_bufs;
    b->n_tensors = b->last_tensors;
    b->n_ops     = b->last_ops;
    b->vmem      = b->last_vmem;
    return true;
}

static int find_buffer(const struct htp_opbatch * b, int fd) {
    for (uint32_t i = 0; i < b->n_bufs; i++) {
        if (b->bufs[i].fd == fd) {
            return (int)i;
        }
    }
    return -1;
}

// Bytes a buffer costs the VA window budget: pinned buffers are already
// subtracted from max_vmem by the session, extended ones live outside.
// The window bytes count by the NPU's page (contract/window.h).
static uint64_t vmem_cost(const struct htp_opbatch * b, const struct htp_buffer * buf) {
    uint32_t f = htp_buffer_desc_flags(buf, b->target);
    return (f & (HTP_BUF_EXTENDED | HTP_BUF_PINNED)) ? 0 : htp_window_bytes(htp_buffer_size(buf), b->page_size);
}

static int add_buffer(struct htp_opbatch * b, struct htp_buffer * buf) {
    int fd = htp_buffer_fd(buf);
    int bi = find_buffer(b, fd);
    if (bi >= 0) {
        return bi;
    }
    bi                = (int)b->n_bufs++;
    b->bufs[bi].base  = (uint64_t)(uintptr_t)htp_buffer_base(buf);
    b->bufs[bi].size  = htp_buffer_size(buf);
    b->bufs[bi].fd    = fd;
    b->bufs[bi].flags = htp_buffer_desc_flags(buf, b->target);
    b->buf_ptrs[bi]   = buf;
    b->vmem += vmem_cost(b, buf);
    return bi;
}

static bool same_shape(const struct htp_tensor * a, const struct htp_op_tensor * t) {
    if (a->type != t->type || a->flags != t->flags) {
        return false;
    }
    for (int d = 0; d < HTP_OP_MAX_DIMS; d++) {
        if (a->ne[d] != t->ne[d] || a->nb[d] != t->nb[d]) {
            return false;
        }
    }
    return true;
}

// Slot of key in the key table: its entry, or the empty entry where it goes.
static uint32_t key_slot(const struct htp_opbatch * b, const void * key) {
    uint32_t h = hash_ptr(key, 0) & b->hash_mask;
    while (b->key_gen[h] == b->gen && b->key_ptr[h] != key) {
        h = (h + 1) & b->hash_mask;
    }
    return h;
}

static uint32_t data_slot(const struct htp_opbatch * b, const struct htp_op_tensor * t) {
    return hash_ptr(t->buf, t->offset) & b->hash_mask;
}

// Index of an existing descriptor equal to t, or -1.
static int find_tensor(const struct htp_opbatch * b, const struct htp_op_tensor * t) {
    if (t->key) {
        uint32_t h = key_slot(b, t->key);
        if (b->key_gen[h] == b->gen) {
            return b->key_ti[h];
        }
    }
    uint32_t h = data_slot(b, t);
    if (b->data_gen[h] != b->gen) {
        return -1;
    }
    int bi = find_buffer(b, htp_buffer_fd(t->buf));
    if (bi < 0) {
        return -1;
    }
    for (uint32_t ti = b->data_head[h]; ti != HTP_NO_TENSOR; ti = b->data_next[ti]) {
        const struct htp_tensor * d = &b->tensors[ti];
        if (d->bi == bi && d->data == t->offset && same_shape(d, t)) {
            return (int)ti;
        }
    }
    return -1;
}

static uint16_t add_tensor(struct htp_opbatch * b, const struct htp_op_tensor * t) {
    int ti = find_tensor(b, t);
    if (ti < 0) {
        ti                    = (int)b->n_tensors++;
        struct htp_tensor * d = &b->tensors[ti];
        memset(d, 0, sizeof *d);
        d->data  = t->offset;
        d->size  = t->size;
        d->type  = t->type;
        d->flags = t->flags;
        for (int i = 0; i < HTP_OP_MAX_DIMS; i++) {
            d->ne[i] = t->ne[i];
            d->nb[i] = t->nb[i];
        }
        d->bi = (uint16_t)add_buffer(b, t->buf);

        uint32_t h = data_slot(b, t);
        if (b->data_gen[h] != b->gen) {
            b->data_gen[h]  = b->gen;
            b->data_head[h] = HTP_NO_TENSOR;
        }
        b->data_next[ti] = b->data_head[h];
        b->data_head[h]  = (uint16_t)ti;
    }
    if (t->key && b->n_keys < (b->hash_mask + 1) / 4 * 3) {
        // Remember the key too (also when found by data), so the next lookup is
        // one probe. A full table only loses the shortcut: data dedup remains.
        uint32_t h = key_slot(b, t->key);
        if (b->key_gen[h] != b->gen) {
            b->n_keys++;
            b->key_gen[h] = b->gen;
            b->key_ptr[h] = t->key;
            b->key_ti[h]  = (uint16_t)ti;
        }
    }
    return (uint16_t)ti;
}

bool htp_opbatch_fits(const struct htp_opbatch * b, const struct htp_opnode * op) {
    const struct htp_op_tensor * operands[HTP_OP_MAX_INPUTS + HTP_OP_MAX_OUTPUTS];
    uint32_t                     n = 0;
    for (int i = 0; i < HTP_OP_MAX_INPUTS; i++) {
        if (op->src[i]) {
            operands[n++] = op->src[i];
        }
    }
    for (int i = 0; i < HTP_OP_MAX_OUTPUTS; i++) {
        if (op->dst[i]) {
            operands[n++] = op->dst[i];
        }
    }

    // Count only what is new; exact dedup lookups are cheap, so do them only
    // when the tensor table is close to full.
    const bool check_tensors = b->n_tensors + n > b->max_tensors;
    uint32_t   extra_tensors = 0, extra_bufs = 0;
    uint64_t   extra_vmem = 0;
    int        seen_fd[HTP_OP_MAX_INPUTS + HTP_OP_MAX_OUTPUTS];
    for (uint32_t i = 0; i < n; i++) {
        const struct htp_op_tensor * t = operands[i];
        if (check_tensors && find_tensor(b, t) < 0) {
            extra_tensors++;  // may overcount an operand repeated within op: errs on the safe side
        }
        int fd = htp_buffer_fd(t->buf);
        if (find_buffer(b, fd) >= 0) {
            continue;
        }
        bool seen = false;
        for (uint32_t j = 0; j < extra_bufs; j++) {
            seen |= seen_fd[j] == fd;
        }
        if (!seen) {
            seen_fd[extra_bufs++] = fd;
            extra_vmem += vmem_cost(b, t->buf);
        }
    }
    if (b->n_bufs + extra_bufs > b->max_bufs) {
        return false;
    }
    if (check_tensors && b->n_tensors + extra_tensors > b->max_tensors) {
        return false;
    }
    if (b->vmem + extra_vmem > b->max_vmem) {
        return false;
    }
    return true;
}

int htp_opbatch_add(struct htp_opbatch * b, const struct htp_opnode * op) {
    for (int i = 0; i < HTP_OP_MAX_INPUTS; i++) {
        if (op->src[i] && !op->src[i]->buf) {
            return HTP_STATUS_HOST_ERR;
        }
    }
    for (int i = 0; i < HTP_OP_MAX_OUTPUTS; i++) {
        if (op->dst[i] && !op->dst[i]->buf) {
            return HTP_STATUS_HOST_ERR;
        }
    }
    struct htp_op_desc * o = &b->ops[b->n_ops++];
    o->opcode              = op->opcode;
    o->flags               = op->flags;
    memcpy(o->params, op->params, sizeof o->params);
    for (int i = 0; i < HTP_OP_MAX_INPUTS; i++) {
        o->src[i] = op->src[i] ? add_tensor(b, op->src[i]) : HTP_NO_TENSOR;
    }
    for (int i = 0; i < HTP_OP_MAX_OUTPUTS; i++) {
        o->dst[i] = op->dst[i] ? add_tensor(b, op->dst[i]) : HTP_NO_TENSOR;
    }
    return 0;
}

void htp_opbatch_sort_buffers(struct htp_opbatch * b) {
    if (b->n_bufs <= 1) {
        return;
    }
    // Insertion sort of at most HTP_OP_MAX_BUFS entries; stable (strictly
    // greater moves ahead), order[new] = old.
    uint8_t order[HTP_OP_MAX_BUFS];
    for (uint32_t i = 0; i < b->n_bufs; i++) {
        order[i] = (uint8_t)i;
    }
    bool moved = false;
    for (uint32_t i = 1; i < b->n_bufs; i++) {
        uint8_t  cur = order[i];
        uint32_t j   = i;
        while (j > 0 && b->bufs[order[j - 1]].size < b->bufs[cur].size) {
            order[j] = order[j - 1];
            j--;
            moved = true;
        }
        order[j] = cur;
    }
    if (!moved) {
        return;
    }
    struct htp_buf_desc bufs[HTP_OP_MAX_BUFS];
    struct htp_buffer * ptrs[HTP_OP_MAX_BUFS];
    uint16_t            remap[HTP_OP_MAX_BUFS];
    for (uint32_t i = 0; i < b->n_bufs; i++) {
        bufs[i]         = b->bufs[order[i]];
        ptrs[i]         = b->buf_ptrs[order[i]];
        remap[order[i]] = (uint16_t)i;
    }
    memcpy(b->bufs, bufs, sizeof(bufs[0]) * b->n_bufs);
    memcpy(b->buf_ptrs, ptrs, sizeof(ptrs[0]) * b->n_bufs);
    for (uint32_t i = 0; i < b->n_tensors; i++) {
        b->tensors[i].bi = remap[b->tensors[i].bi];
    }
}
