// ggml-buffer.c: ggml buffers of an HTP device (see ggml-buffer.h).
//
// A ggml buffer of an HTP device is one struct htp_buffer: a memfd the host
// maps and the NPU maps into its VA window when a batch first uses it. Tensor
// data is plain host memory for the host, so set/get/memset are memcpy and
// memset; the caller (ggml-backend) synchronizes the stream first, as for any
// asynchronous backend.
//
// Quantized weights are the exception to "plain memcpy": in a device buffer
// used for weights they are kept in the NPU's tiled layout, so set/get/memset
// go through repack.c, which translates (and stages partial uploads).

#include "ggml-buffer.h"

#include <string.h>

#include "ggml-backend-impl.h"
#include "repack.h"

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

static const struct ggml_backend_buffer_i iface = {
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

ggml_backend_buffer_t htp_ggml_buffer_init(ggml_backend_buffer_type_t buft, struct htp_buffer * buf, size_t size) {
    return ggml_backend_buffer_init(buft, iface, buf, size);
}

bool htp_ggml_buffer_is_htp(ggml_backend_buffer_t buffer) {
    // Only htp_ggml_buffer_init builds buffers with our get_base.
    return buffer && buffer->iface.get_base == buffer_get_base;
}

struct htp_buffer * htp_ggml_buffer_get(ggml_backend_buffer_t buffer) {
    return (struct htp_buffer *)buffer->context;
}
