// repack.c: set/get of tensors whose buffer bytes are in the NPU's tiled
// layout (see repack.h for which, tiled.h for the layout itself).
//
// One idea: the tiled bytes in the buffer are only ever produced from a whole
// tensor's original bytes. A first upload that comes in pieces is staged in a
// shadow copy (with a bitmap of the bytes seen, so overlapping pieces are not
// counted twice) and packed when the last byte arrives; a later partial write
// into a tiled tensor unpacks it, patches and packs it again.

#include "repack.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "codebooks.h"
#include "ggml-internal.h"
#include "log.h"
#include "contract/tiled.h"

#define REPACK_MAGIC 0x68747072u  // "htpr": tensor->extra is ours

struct htp_repack_extra {
    uint32_t                  magic;   // REPACK_MAGIC
    uint32_t                  tiled;   // the buffer bytes are the tiled layout of the whole tensor
    ggml_backend_buffer_t     buffer;  // owner, for release
    struct ggml_tensor *      tensor;
    uint8_t *                 shadow;  // first upload in progress: the raw bytes so far (ggml_nbytes)
    uint8_t *                 seen;    // bitmap of shadow bytes written
    size_t                    n_seen;  // bits set in seen
    struct htp_repack_extra * next;
};

// Every extra of every buffer; guarded by extras_lock.
static pthread_mutex_t           extras_lock = PTHREAD_MUTEX_INITIALIZER;
static struct htp_repack_extra * extras_head;

// The tiled format of a type, if the host can pack it: the formats that
// store codebook points as codes need the coder (without it, such weights
// stay in ggml's layout, which the NPU reads too).
static const struct htp_tile_format * format_of_type(enum ggml_type type) {
    const struct htp_tile_format * f = htp_tile_format((uint32_t)type);
    return f && (!f->pack_coded || htp_host_iq_coder()) ? f : NULL;
}

static const struct htp_tile_format * format_of(const struct ggml_tensor * t) {
    return format_of_type(t->type);
}

bool htp_repack_type_tiled(enum ggml_type type) {
    return format_of_type(type) != NULL;
}

bool htp_repack_tensor_tileable(const struct ggml_tensor * t) {
    return format_of(t) && t->view_src == NULL && ggml_is_contiguous(t) && ggml_nelements(t) > 0;
}

size_t htp_repack_tiled_size(const struct ggml_tensor * t) {
    if (!htp_repack_tensor_tileable(t)) {
        return 0;
    }
    return (size_t)htp_tiled_nbytes(format_of(t), t->ne);
}

void htp_repack_tiled_strides(const struct ggml_tensor * t, int64_t nb[4]) {
    htp_tiled_strides(format_of(t), t->ne, nb);
}

int htp_repack_pack(const struct ggml_tensor * t, const void * raw, void * dst) {
    if (!htp_repack_tensor_tileable(t)) {
        return -1;
    }
    const struct htp_tile_format * f     = format_of(t);
    const struct htp_iq_coder *    coder = f->pack_coded ? htp_host_iq_coder() : NULL;  // non-NULL for those: format_of
    int64_t                        nb[4];
    htp_tiled_strides(f, t->ne, nb);
    const int64_t   nblk = t->ne[0] / f->blck_size;
    const size_t    rb   = (size_t)nblk * f->blck_bytes;  // bytes per raw row
    const size_t    gb   = htp_tiled_group_bytes(f, t->ne[0]);
    const uint8_t * src  = raw;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++) {
            const uint8_t * slice = src + (size_t)(i3 * t->ne[2] + i2) * t->ne[1] * rb;
            uint8_t *       out   = (uint8_t *)dst + i3 * nb[3] + i2 * nb[2];
            for (int64_t r0 = 0; r0 < t->ne[1]; r0 += HTP_TILE_ROWS) {
                const int nrows = (int)(t->ne[1] - r0 < HTP_TILE_ROWS ? t->ne[1] - r0 : HTP_TILE_ROWS);
                htp_tiled_pack_group(f, coder, slice + (size_t)r0 * rb, rb, nrows, nblk,
                                     out + (size_t)(r0 / HTP_TILE_ROWS) * gb);
            }
        }
    }
    return 0;
}

int htp_repack_unpack(const struct ggml_tensor * t, const void * src, void * out, size_t offset, size_t size) {
    if (!htp_repack_tensor_tileable(t) || offset > ggml_nbytes(t) || size > ggml_nbytes(t) - offset) {
        return -1;
    }
    const struct htp_tile_format * f     = format_of(t);
    const struct htp_iq_coder *    coder = f->pack_coded ? htp_host_iq_coder() : NULL;  // non-NULL for those: format_of
    int64_t                        nb[4];
    htp_tiled_strides(f, t->ne, nb);
    const int64_t nblk = t->ne[0] / f->blck_size;
    const size_t  bb   = f->blck_bytes;
    const size_t  rb   = (size_t)nblk * bb;
    const size_t  gb   = htp_tiled_group_bytes(f, t->ne[0]);
    uint8_t       block[512];  // one ggml block (the largest format is well below this)
    uint8_t *     o   = out;
    size_t        pos = offset, end = offset + size;
    while (pos < end) {
        const size_t  row = pos / rb, in_row = pos % rb;
        const int64_t kb = (int64_t)(in_row / bb), in_blk = (int64_t)(in_row % bb);
        const int64_t i1 = (int64_t)row % t->ne[1], i2 = (int64_t)(row / t->ne[1]) % t->ne[2],
                      i3      = (int64_t)(row / t->ne[1] / t->ne[2]);
        const uint8_t * group = (const uint8_t *)src + i3 * nb[3] + i2 * nb[2] + (size_t)(i1 / HTP_TILE_ROWS) * gb;
        htp_tiled_unpack_block(f, coder, group, nblk, (int)(i1 % HTP_TILE_ROWS), kb, block);
        size_t n = bb - (size_t)in_blk;
        n        = n < end - pos ? n : end - pos;
        memcpy(o, block + in_blk, n);
        o += n;
        pos += n;
    }
    return 0;
}

// --- per-tensor state ---

int htp_repack_extra_init(ggml_backend_buffer_t buffer, struct ggml_tensor * t) {
    if (!htp_repack_tensor_tileable(t)) {
        return 0;
    }
    struct htp_repack_extra * e = calloc(1, sizeof *e);
    if (!e) {
        HTP_LOG_ERROR("ggml-htp: out of memory for the state of tensor %s\n", t->name);
        return -1;
    }
    e->magic  = REPACK_MAGIC;
    e->buffer = buffer;
    e->tensor = t;
    pthread_mutex_lock(&extras_lock);
    e->next     = extras_head;
    extras_head = e;
    pthread_mutex_unlock(&extras_lock);
    t->extra = e;
    return 0;
}

void htp_repack_extra_release(ggml_backend_buffer_t buffer) {
    pthread_mutex_lock(&extras_lock);
    struct htp_repack_extra ** pp = &extras_head;
    while (*pp) {
        struct htp_repack_extra * e = *pp;
        if (e->buffer != buffer) {
            pp = &e->next;
            continue;
        }
        *pp = e->next;
        if (e->tensor->extra == e) {
            e->tensor->extra = NULL;
        }
        free(e->shadow);
        free(e->seen);
        free(e);
    }
    pthread_mutex_unlock(&extras_lock);
}

static void drop_shadow(struct htp_repack_extra * e);

void htp_repack_extra_cleared(ggml_backend_buffer_t buffer) {
    pthread_mutex_lock(&extras_lock);
    for (struct htp_repack_extra * e = extras_head; e; e = e->next) {
        if (e->buffer == buffer) {
            e->tiled = 0;
            drop_shadow(e);
        }
    }
    pthread_mutex_unlock(&extras_lock);
}

struct htp_repack_extra * htp_repack_extra_get(const struct ggml_tensor * t) {
    struct htp_repack_extra * e = t->extra;
    return e && e->magic == REPACK_MAGIC && e->tensor == t ? e : NULL;
}

bool htp_repack_is_tiled(const struct ggml_tensor * t) {
    const struct htp_repack_extra * e = htp_repack_extra_get(t);
    return e && e->tiled;
}

// Mark bytes [a, b) of the shadow seen; count the new ones.
static void mark_seen(struct htp_repack_extra * e, size_t a, size_t b) {
    while (a < b && (a & 7)) {
        if (!(e->seen[a >> 3] & (1u << (a & 7)))) {
            e->seen[a >> 3] |= (uint8_t)(1u << (a & 7));
            e->n_seen++;
        }
        a++;
    }
    for (; a + 8 <= b; a += 8) {
        e->n_seen += 8 - (size_t)__builtin_popcount(e->seen[a >> 3]);
        e->seen[a >> 3] = 0xff;
    }
    for (; a < b; a++) {
        if (!(e->seen[a >> 3] & (1u << (a & 7)))) {
            e->seen[a >> 3] |= (uint8_t)(1u << (a & 7));
            e->n_seen++;
        }
    }
}

static void drop_shadow(struct htp_repack_extra * e) {
    free(e->shadow);
    free(e->seen);
    e->shadow = NULL;
    e->seen   = NULL;
    e->n_seen = 0;
}

// The tensor's bytes should be tiled from now on (device buffer with weights).
static bool wants_tiled(const struct ggml_tensor * t, const struct htp_repack_extra * e) {
    if (!e) {
        return false;
    }
    if (e->tiled || e->shadow) {
        return true;
    }
    return t->buffer && !ggml_backend_buffer_is_host(t->buffer) &&
           ggml_backend_buffer_get_usage(t->buffer) == GGML_BACKEND_BUFFER_USAGE_WEIGHTS;
}

static void copy_runs(uint8_t * dst, size_t dst_stride, const uint8_t * src, size_t src_stride, size_t size,
                      size_t n_copies) {
    for (size_t i = 0; i < n_copies; i++) {
        memcpy(dst + i * dst_stride, src + i * src_stride, size);
    }
}

// A view of a tensor with repack state reads and writes its root's bytes:
// the buffer holds the root's layout (tiled, or staged in its shadow), not
// the view's rows, so the view's range is the root's raw range view_offs on.
static struct ggml_tensor * through_view(const struct ggml_tensor * t, size_t * offset) {
    if (t->view_src && htp_repack_extra_get(t->view_src)) {
        *offset += t->view_offs;
        return t->view_src;
    }
    return (struct ggml_tensor *)t;
}

bool htp_repack_view_of_tiled(const struct ggml_tensor * t) {
    const struct ggml_tensor *      root = t->view_src;
    const struct htp_repack_extra * e    = root ? htp_repack_extra_get(root) : NULL;
    return e && wants_tiled(root, e);
}

// Unpack the whole tensor into a fresh allocation (NULL: out of memory).
static uint8_t * unpack_all(const struct ggml_tensor * t) {
    uint8_t * raw = malloc(ggml_nbytes(t));
    if (!raw) {
        HTP_LOG_ERROR("ggml-htp: out of memory unpacking tensor %s (%zu bytes)\n", t->name, ggml_nbytes(t));
        return NULL;
    }
    htp_repack_unpack(t, t->data, raw, 0, ggml_nbytes(t));
    return raw;
}

int htp_repack_set(struct ggml_tensor * t, const void * data, size_t offset, size_t size, size_t n_copies,
                   size_t stride_tensor, size_t stride_data) {
    t                           = through_view(t, &offset);
    struct htp_repack_extra * e = htp_repack_extra_get(t);
    if (!wants_tiled(t, e)) {
        copy_runs((uint8_t *)t->data + offset, stride_tensor, data, stride_data, size, n_copies);
        return 0;
    }
    const size_t nbytes = ggml_nbytes(t);
    const bool   whole  = offset == 0 && size == nbytes && n_copies == 1;
    if (whole && !e->shadow) {
        htp_repack_pack(t, data, t->data);
        e->tiled = 1;
        return 0;
    }
    if (e->tiled) {
        // A patch into a packed tensor: unpack, patch, pack again.
        uint8_t * raw = unpack_all(t);
        if (!raw) {
            return -1;
        }
        copy_runs(raw + offset, stride_tensor, data, stride_data, size, n_copies);
        htp_repack_pack(t, raw, t->data);
        free(raw);
        return 0;
    }
    if (!e->shadow) {
        e->shadow = calloc(1, nbytes);
        e->seen   = calloc(1, (nbytes + 7) / 8);
        if (!e->shadow || !e->seen) {
            HTP_LOG_ERROR("ggml-htp: out of memory staging tensor %s (%zu bytes)\n", t->name, nbytes);
            drop_shadow(e);
            return -1;
        }
    }
    copy_runs(e->shadow + offset, stride_tensor, data, stride_data, size, n_copies);
    for (size_t i = 0; i < n_copies; i++) {
        mark_seen(e, offset + i * stride_tensor, offset + i * stride_tensor + size);
    }
    if (e->n_seen == nbytes) {
        htp_repack_pack(t, e->shadow, t->data);
        e->tiled = 1;
        drop_shadow(e);
    }
    return 0;
}

int htp_repack_get(const struct ggml_tensor * t, void * data, size_t offset, size_t size, size_t n_copies,
                   size_t stride_tensor, size_t stride_data) {
    t                                 = through_view(t, &offset);
    const struct htp_repack_extra * e = htp_repack_extra_get(t);
    if (e && e->shadow) {
        copy_runs(data, stride_data, e->shadow + offset, stride_tensor, size, n_copies);
        return 0;
    }
    if (!e || !e->tiled) {
        copy_runs(data, stride_data, (const uint8_t *)t->data + offset, stride_tensor, size, n_copies);
        return 0;
    }
    for (size_t i = 0; i < n_copies; i++) {
        if (htp_repack_unpack(t, t->data, (uint8_t *)data + i * stride_data, offset + i * stride_tensor, size) != 0) {
            HTP_LOG_ERROR("ggml-htp: get_tensor %s: range out of bounds\n", t->name);
            return -1;
        }
    }
    return 0;
}

int htp_repack_memset(struct ggml_tensor * t, uint8_t value, size_t offset, size_t size) {
    t                           = through_view(t, &offset);
    struct htp_repack_extra * e = htp_repack_extra_get(t);
    if (!e || (!e->tiled && !e->shadow)) {
        memset((uint8_t *)t->data + offset, value, size);
        return 0;
    }
    if (e->shadow) {
        memset(e->shadow + offset, value, size);
        mark_seen(e, offset, offset + size);
        if (e->n_seen == ggml_nbytes(t)) {
            htp_repack_pack(t, e->shadow, t->data);
            e->tiled = 1;
            drop_shadow(e);
        }
        return 0;
    }
    uint8_t * raw = unpack_all(t);
    if (!raw) {
        return -1;
    }
    memset(raw + offset, value, size);
    htp_repack_pack(t, raw, t->data);
    free(raw);
    return 0;
}

bool htp_repack_runtime(struct ggml_tensor * t) {
    struct htp_repack_extra * e = htp_repack_extra_get(t);
    if (!e || e->tiled || e->shadow || t->op != GGML_OP_NONE || !t->buffer || ggml_backend_buffer_is_host(t->buffer)) {
        return false;
    }
    const size_t tiled = htp_repack_tiled_size(t);
    const size_t avail = ggml_backend_buffer_get_alloc_size(t->buffer, t);
    const size_t room  = (size_t)((uint8_t *)ggml_backend_buffer_get_base(t->buffer) +
                                 ggml_backend_buffer_get_size(t->buffer) - (uint8_t *)t->data);
    if (tiled == 0 || tiled > avail || tiled > room) {
        return false;
    }
    uint8_t * raw = malloc(ggml_nbytes(t));
    if (!raw) {
        HTP_LOG_ERROR("ggml-htp: out of memory repacking tensor %s at run time\n", t->name);
        return false;
    }
    memcpy(raw, t->data, ggml_nbytes(t));
    htp_repack_pack(t, raw, t->data);
    free(raw);
    e->tiled = 1;
    return true;
}
