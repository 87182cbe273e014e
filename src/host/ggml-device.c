// ggml-device.c: what ggml sees of an HTP device (see ggml-device.h). It
// answers from the configuration and the device's session; the session is
// opened by the first question that needs the NPU (supports_op asks for its
// scratch size), not when ggml lists the devices.

#include "ggml-device.h"

#include <regex.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "buffer-type.h"
#include "codebooks.h"
#include "config.h"
#include "device.h"
#include "event.h"
#include "ggml-buffer.h"
#include "graph.h"
#include "log.h"
#include "repack.h"

static struct htp_device * dev_of(ggml_backend_dev_t dev) {
    return (struct htp_device *)dev->context;
}

static const char * dev_get_name(ggml_backend_dev_t dev) {
    return dev_of(dev)->cfg.name;
}

static const char * dev_get_description(ggml_backend_dev_t dev) {
    return dev_of(dev)->description;
}

static void dev_get_memory(ggml_backend_dev_t dev, size_t * free_mem, size_t * total_mem) {
    (void)dev;
    // What the device may allocate: GGML_HEXAGON_MBUF's total when set, as the
    // reference reports; unconstrained, the software NPU's memory is the
    // host's, so report that rather than nothing.
    if (htp_backend_config->mbuf_total) {
        *free_mem  = (size_t)htp_backend_config->mbuf_total;
        *total_mem = (size_t)htp_backend_config->mbuf_total;
        return;
    }
    long page  = sysconf(_SC_PAGESIZE);
    *total_mem = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)page;
    *free_mem  = (size_t)sysconf(_SC_AVPHYS_PAGES) * (size_t)page;
}

static enum ggml_backend_dev_type dev_get_type(ggml_backend_dev_t dev) {
    (void)dev;
    return GGML_BACKEND_DEVICE_TYPE_GPU;
}

static void dev_get_props(ggml_backend_dev_t dev, struct ggml_backend_dev_props * props) {
    memset(props, 0, sizeof *props);
    props->name        = dev_get_name(dev);
    props->description = dev_get_description(dev);
    props->type        = dev_get_type(dev);
    dev_get_memory(dev, &props->memory_free, &props->memory_total);
    props->caps.async                = true;
    props->caps.host_buffer          = htp_backend_config->hostbuf != 0;
    props->caps.buffer_from_host_ptr = false;
    props->caps.events               = true;
}

static ggml_backend_t dev_init_backend(ggml_backend_dev_t dev, const char * params) {
    (void)params;
    struct htp_device * d = dev_of(dev);
    htp_device_reopen_failed(d);  // a new stream after a failure gets a working session
    if (!htp_device_session(d)) {
        return NULL;
    }
    return htp_backend_init(d);
}

static ggml_backend_buffer_type_t dev_get_buffer_type(ggml_backend_dev_t dev) {
    return &dev_of(dev)->buft;
}

static ggml_backend_buffer_type_t dev_get_host_buffer_type(ggml_backend_dev_t dev) {
    return htp_backend_config->hostbuf ? &dev_of(dev)->host_buft : NULL;
}

// Ops whose select level is 0 (CPU): not claimed, so ggml-cpu takes them.
static bool left_to_cpu(const struct htp_config * cfg, const struct ggml_tensor * op) {
    switch (op->op) {
        case GGML_OP_MUL_MAT:
        case GGML_OP_MUL_MAT_ID:
            return cfg->mm_select == 0;
        case GGML_OP_FLASH_ATTN_EXT:
            return cfg->fa_select == 0;
        default:
            return false;
    }
}

// Do op's sources need the IQ codebooks (contract/codebooks.h) that this
// process could not derive? Then the NPU has none and must not be asked.
static bool needs_missing_codebooks(const struct ggml_tensor * op) {
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        const struct ggml_tensor * s = op->src[i];
        if (s && htp_type_uses_codebooks((uint32_t)s->type)) {
            return htp_host_codebooks() == NULL;
        }
    }
    return false;
}

// Only static properties of the op count here (shape, type, strides): ggml asks
// before any buffer exists.
static bool dev_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor * op) {
    struct htp_device *       d   = dev_of(dev);
    const struct htp_config * cfg = htp_backend_config;

    if (cfg->has_opfilter && regexec(&cfg->opfilter, ggml_op_desc(op), 0, NULL, 0) == 0) {
        return false;
    }
    if (left_to_cpu(cfg, op) || needs_missing_codebooks(op)) {
        return false;
    }
    switch (op->op) {
        case GGML_OP_NONE:
        case GGML_OP_RESHAPE:
        case GGML_OP_VIEW:
        case GGML_OP_PERMUTE:
        case GGML_OP_TRANSPOSE:
            return true;
        default:
            break;
    }
    // Sources that live in other backends' buffers are copied in by ggml; but
    // a source already in a buffer no HTP session can map cannot be used.
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        const struct ggml_tensor * s = op->src[i];
        // A zero-size buffer of our type is ggml's dummy for an empty
        // allocation: libllama places weights by asking about one.
        const bool dummy = s && s->buffer && s->buffer->size == 0 && htp_buft_is_htp(s->buffer->buft);
        // ggml's meta device (tensor split) asks each of its devices about the
        // whole op, sources in its meta buffers; each device then gets its
        // share in its own buffers.
        const bool meta =
            s && s->buffer && (ggml_backend_buffer_is_meta(s->buffer) || ggml_backend_buft_is_meta(s->buffer->buft));
        if (s && s->buffer && !dummy && !meta && !htp_ggml_buffer_is_htp(s->buffer) &&
            !ggml_backend_buffer_is_host(s->buffer)) {
            return false;
        }
        if (s && htp_repack_view_of_tiled(s)) {
            return false;  // its rows are not where the view says: the CPU gets them through get_tensor
        }
    }
    struct htp_session * sess = htp_device_session(d);
    if (!sess) {
        return false;
    }
    bool supp = htp_graph_supports(op, htp_session_n_threads(sess), htp_session_hw_info(sess)->vtcm_size);
    if (htp_log_verbose > 1) {
        HTP_LOG_DEBUG("ggml-htp: %s supports %s %s: %s\n", d->cfg.name, ggml_op_desc(op), op->name,
                      supp ? "yes" : "no");
    }
    return supp;
}

static bool dev_supports_buft(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft) {
    struct htp_device * d = dev_of(dev);
    return buft == &d->buft || buft == &d->host_buft;
}

const struct ggml_backend_device_i htp_ggml_device_iface = {
    /* .get_name             = */ dev_get_name,
    /* .get_description      = */ dev_get_description,
    /* .get_memory           = */ dev_get_memory,
    /* .get_type             = */ dev_get_type,
    /* .get_props            = */ dev_get_props,
    /* .init_backend         = */ dev_init_backend,
    /* .get_buffer_type      = */ dev_get_buffer_type,
    /* .get_host_buffer_type = */ dev_get_host_buffer_type,
    /* .buffer_from_host_ptr = */ NULL,
    /* .supports_op          = */ dev_supports_op,
    /* .supports_buft        = */ dev_supports_buft,
    /* .offload_op           = */ NULL,
    /* .event_new            = */ htp_event_new,
    /* .event_free           = */ htp_event_free,
    /* .event_synchronize    = */ htp_event_synchronize,
};
