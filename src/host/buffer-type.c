// buffer-type.c: the ggml buffer types of an HTP device. Each allocates
// struct htp_buffers owned by the device's session and hands them to ggml as
// ggml buffers (ggml-buffer.c).
//
// The host buffer type (GGML_HEXAGON_HOSTBUF) hands out the same kind of
// memory but tells ggml it is host memory, so the CPU backend can work in it
// too and nothing is copied between the two.

#include "buffer-type.h"

#include <stdio.h>

#include "buffer.h"
#include "config.h"
#include "device.h"
#include "ggml-buffer.h"
#include "log.h"
#include "repack.h"
#include "session.h"

#define HTP_BUFFER_ALIGNMENT 128  // one HVX vector

static struct htp_device * buft_device(ggml_backend_buffer_type_t buft) {
    return (struct htp_device *)buft->context;
}

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
    // Every buffer of this device will be mapped into its NPU session's VA
    // window and stay there: refuse the one that cannot fit now, before
    // anything of it exists, rather than fail its first use. (With DMA64,
    // weights are mapped outside the window: only one buffer is held to it.)
    const uint64_t max_vmem = htp_session_max_vmem(sess);
    uint32_t       n_held   = 0;
    const uint64_t held =
        htp_backend_config->dma64 ? 0 : htp_buffer_window_bytes(htp_session_map_target(sess), &n_held);
    const double MiB = 1024.0 * 1024.0;
    if (max_vmem && (uint64_t)size + HTP_PAGE_SIZE + held > max_vmem) {
        HTP_LOG_ERROR(
            "ggml-htp: %s: cannot allocate a buffer of %.1f MiB: the NPU's VA window of %.1f MiB "
            "(GGML_HEXAGON_VMEM, less the session's own) holds %.1f MiB in %u buffer(s) already\n",
            d->cfg.name, (double)size / MiB, (double)max_vmem / MiB, (double)held / MiB, n_held);
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
    ggml_backend_buffer_t buffer = htp_ggml_buffer_init(buft, buf, size);
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
