// buffer-type.c: ggml buffer types and buffers of an HTP device.
//
// A ggml buffer of an HTP device is one struct htp_buffer: a memfd the host
// maps and the NPU maps into its VA window when a batch first uses it. Tensor
// data is plain host memory for the host, so set/get/memset are memcpy and
// memset; the caller (ggml-backend) synchronizes the stream first, as for any
// asynchronous backend.
//
// The host buffer type (GGML_HEXAGON_HOSTBUF) hands out the same kind of
// memory but tells ggml it is host memory, so the CPU backend can work in it
// too and nothing is copied between the two.
//
// Quantized weights are the exception to "plain memcpy": in a device buffer
// used for weights they are kept in the NPU's tiled layout, so set/get/memset
// go through repack.c, which translates (and stages partial uploads).

#include <string.h>

#include "backend-impl.h"
#include "log.h"
#include "repack.h"

#define HTP_BUFFER_ALIGNMENT 128  // one HVX vector

static struct htp_device * buft_device(ggml_backend_buffer_type_t buft) {
    return (struct htp_device *)buft->context;
}

// --- buffer ---

static void buffer_free(ggml_backend_buffer_t buffer) {
    // Drops the memory; unmaps it from every session that mapped it.
    htp_repack_extra_release(buffer);
    htp_buffer_unref((struct htp_buffer *)buffer->context);
}

static enum ggml_status buffer_init_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor) {
    // Tensors that may become tiled get their repack state here.
    return htp_repack_extra_init(buffer, tensor) == 0 ? GGML_STATUS_SUCCESS : GGML_STATUS_ALLOC_FAILED;
}

static void buffer_reset(ggml_backend_buffer_t buffer) {
    htp_repack_extra_release(buffer);
}

static void * buffer_get_base(ggml_backend_buffer_t buffer) {
    return htp_buffer_base((struct htp_buffer *)buffer->context);
}

static void buffer_memset_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, uint8_t value,
                                 size_t offset, size_t size) {
    (void)buffer;
    htp_repack_memset(tensor, value, offset, size);
}

static void buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, const void * data,
                              size_t offset, size_t size) {
    (void)buffer;
    htp_repack_set(tensor, data, offset, size, 1, 0, 0);
}

static void buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor, void * data,
                              size_t offset, size_t size) {
    (void)buffer;
    htp_repack_get(tensor, data, offset, size, 1, 0, 0);
}

static void buffer_set_tensor_2d(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, const void * data,
                                 size_t offset, size_t size, size_t n_copies, size_t stride_tensor,
                                 size_t stride_data) {
    (void)buffer;
    htp_repack_set(tensor, data, offset, size, n_copies, stride_tensor, stride_data);
}

static void buffer_get_tensor_2d(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor, void * data,
                                 size_t offset, size_t size, size_t n_copies, size_t stride_tensor,
                                 size_t stride_data) {
    (void)buffer;
    htp_repack_get(tensor, data, offset, size, n_copies, stride_tensor, stride_data);
}

static bool buffer_cpy_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * src, struct ggml_tensor * dst) {
    (void)buffer;
    // Host memory on both sides: a plain copy. Anything else takes ggml's
    // staged path (get from src, set into dst), as do tiled tensors, whose
    // buffer bytes are not their ggml bytes.
    if (htp_repack_is_tiled(src) || htp_repack_extra_get(dst)) {
        return false;
    }
    if (src->buffer && (ggml_backend_buffer_is_host(src->buffer) || htp_ggml_buffer_is_htp(src->buffer))) {
        memcpy(dst->data, src->data, ggml_nbytes(src));
        return true;
    }
    return false;
}

static void buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    struct htp_buffer * buf = (struct htp_buffer *)buffer->context;
    memset(htp_buffer_base(buf), value, htp_buffer_usable(buf));
    htp_repack_extra_cleared(buffer);  // plain bytes everywhere now
}

static const struct ggml_backend_buffer_i htp_buffer_iface = {
    /* .free_buffer   = */ buffer_free,
    /* .get_base      = */ buffer_get_base,
    /* .init_tensor   = */ buffer_init_tensor,
    /* .memset_tensor = */ buffer_memset_tensor,
    /* .set_tensor    = */ buffer_set_tensor,
    /* .get_tensor    = */ buffer_get_tensor,
    /* .set_tensor_2d = */ buffer_set_tensor_2d,
    /* .get_tensor_2d = */ buffer_get_tensor_2d,
    /* .cpy_tensor    = */ buffer_cpy_tensor,
    /* .clear         = */ buffer_clear,
    /* .reset         = */ buffer_reset,
};

// --- buffer type ---

static const char * buft_get_name(ggml_backend_buffer_type_t buft) {
    struct htp_device * d = buft_device(buft);
    return buft == &d->host_buft ? d->host_buft_name : d->buft_name;
}

static ggml_backend_buffer_t buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    struct htp_device *  d    = buft_device(buft);
    struct htp_session * sess = htp_device_session(d);
    if (!sess) {
        return NULL;
    }
    uint64_t max_vmem = htp_session_max_vmem(sess);
    if (max_vmem && size > max_vmem) {
        HTP_LOG_ERROR("ggml-htp: %s: buffer of %zu bytes exceeds the VA window budget of %llu\n", d->cfg.name, size,
                      (unsigned long long)max_vmem);
        return NULL;
    }
    // DMA64: extended mappings go in 2 MiB units, so every buffer that may
    // hold weights (its usage is not known yet) is sized to a multiple of
    // 2 MiB, guard page included; the slack sits before the guard page.
    size_t memsize = size;
    if (htp_backend_config->dma64) {
        const size_t ext = (size_t)2 << 20;
        memsize = (((size + HTP_PAGE_SIZE - 1) & ~(size_t)(HTP_PAGE_SIZE - 1)) + HTP_PAGE_SIZE + ext - 1) / ext * ext -
                  HTP_PAGE_SIZE;
    }
    struct htp_buffer * buf = NULL;
    int                 rc  = htp_buffer_alloc(htp_session_map_target(sess), memsize, 0, &buf);
    if (rc != 0) {
        HTP_LOG_ERROR("ggml-htp: %s: cannot allocate a buffer of %zu bytes: %s\n", d->cfg.name, size,
                      htp_status_str(rc));
        return NULL;
    }
    ggml_backend_buffer_t buffer = ggml_backend_buffer_init(buft, htp_buffer_iface, buf, size);
    if (!buffer) {
        htp_buffer_unref(buf);
    }
    return buffer;
}

static size_t buft_get_alignment(ggml_backend_buffer_type_t buft) {
    (void)buft;
    return HTP_BUFFER_ALIGNMENT;
}

static size_t buft_get_max_size(ggml_backend_buffer_type_t buft) {
    (void)buft;
    return (size_t)htp_backend_config->mbuf_dyn;
}

// Tensors that may be tiled get room for the tiled layout (it pads rows to
// groups of 16), so a weight can also be repacked in place at run time.
static size_t buft_get_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor * tensor) {
    struct htp_device * d      = buft_device(buft);
    size_t              nbytes = ggml_nbytes(tensor);
    if (buft == &d->host_buft) {
        return nbytes;
    }
    size_t tiled = htp_repack_tiled_size(tensor);
    return tiled > nbytes ? tiled : nbytes;
}

static bool buft_is_host(ggml_backend_buffer_type_t buft) {
    struct htp_device * d = buft_device(buft);
    return buft == &d->host_buft;
}

static const struct ggml_backend_buffer_type_i htp_buft_iface = {
    /* .get_name       = */ buft_get_name,
    /* .alloc_buffer   = */ buft_alloc_buffer,
    /* .get_alignment  = */ buft_get_alignment,
    /* .get_max_size   = */ buft_get_max_size,
    /* .get_alloc_size = */ buft_get_alloc_size,
    /* .is_host        = */ buft_is_host,
};

void htp_buffer_types_init(struct htp_device * d) {
    snprintf(d->buft_name, sizeof d->buft_name, "%s", d->cfg.name);
    snprintf(d->host_buft_name, sizeof d->host_buft_name, "%s-HOST", d->cfg.name);
    d->buft      = (struct ggml_backend_buffer_type){htp_buft_iface, &d->dev, d};
    d->host_buft = (struct ggml_backend_buffer_type){htp_buft_iface, &d->dev, d};
}

bool htp_buft_is_htp(ggml_backend_buffer_type_t buft) {
    return buft && buft->iface.alloc_buffer == buft_alloc_buffer;
}

bool htp_ggml_buffer_is_htp(ggml_backend_buffer_t buffer) {
    return buffer && htp_buft_is_htp(buffer->buft) && buffer->iface.get_base == buffer_get_base;
}

struct htp_buffer * htp_ggml_buffer_get(ggml_backend_buffer_t buffer) {
    return (struct htp_buffer *)buffer->context;
}
