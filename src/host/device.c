// device.c: an HTP device: its session (opened on first use), what it
// claims to run, and pushing its work after its peers' work.

#include <regex.h>
#include <string.h>
#include <unistd.h>

#include "backend-impl.h"
#include "session-submit.h"
#include "log.h"

// A group device: one more session per member NPU, with the leader's
// parameters, handed to the leader (which then owns them).
static int open_group_members(struct htp_device * d, const struct htp_session_params * lead) {
    struct htp_session * members[HTP_SESSION_MAX_MEMBERS - 1] = {0};
    uint32_t             n                                    = d->cfg.n_members - 1;
    int                  rc                                   = 0;
    if (d->cfg.n_members > HTP_SESSION_MAX_MEMBERS) {
        return HTP_STATUS_HOST_ERR;
    }
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        struct htp_session_params p = *lead;
        p.phys_idx                  = d->cfg.phys[i + 1];
        htp_config_member_name(&d->cfg, i + 1, p.name, sizeof p.name);
        rc = htp_session_open(&p, &members[i]);
        if (rc != 0) {
            HTP_LOG_ERROR("ggml-htp: %s: cannot open member %s on NPU %u: %s\n", d->cfg.name, p.name, p.phys_idx,
                          htp_status_str(rc));
        }
    }
    if (rc == 0) {
        rc = htp_session_group_init(d->sess, members, n);
    }
    if (rc != 0) {
        for (uint32_t i = 0; i < n; i++) {
            htp_session_close(members[i]);
        }
        return rc;
    }
    HTP_VERBOSE("ggml-htp: %s: group of %u NPUs\n", d->cfg.name, d->cfg.n_members);
    return 0;
}

struct htp_session * htp_device_session(struct htp_device * d) {
    pthread_mutex_lock(&d->lock);
    if (!d->sess && d->open_status == 0) {
        const struct htp_config * cfg = htp_backend_config;
        struct htp_session_params p;
        htp_session_params_default(&p, d->cfg.phys[0], d->cfg.virt);
        snprintf(p.name, sizeof p.name, "%.31s", d->cfg.name);  // the session name is for logs
        p.n_threads    = cfg->nhvx;
        p.vtcm_size    = cfg->vtcm_size;
        p.vmem_size    = cfg->vmem;
        p.measure_vmem = cfg->vmem == 0;  // GGML_HEXAGON_VMEM=0: measure the window
        p.dma64        = cfg->dma64 != 0;
        p.batch_ops    = cfg->opbatch;
        p.queue_depth  = cfg->opqueue;
        p.poll         = cfg->oppoll ? 1 : 0;
        p.profile      = (uint32_t)cfg->profile;
        p.n_traces     = cfg->profile == 3 ? cfg->optrace : 0;
        int rc         = htp_session_open(&p, &d->sess);
        if (rc != 0) {
            d->open_status = rc;
            d->sess        = NULL;
            HTP_LOG_ERROR("ggml-htp: %s: cannot open a session on NPU %u: %s\n", d->cfg.name, d->cfg.phys[0],
                          htp_status_str(rc));
        } else if (d->cfg.n_members > 1) {
            rc = open_group_members(d, &p);
            if (rc != 0) {
                htp_session_close(d->sess);
                d->open_status = rc;
                d->sess        = NULL;
            }
        }
    }
    struct htp_session * sess = d->sess;
    pthread_mutex_unlock(&d->lock);
    return sess;
}

void htp_device_add_peer(struct htp_device * d, struct htp_device * peer) {
    if (peer == d) {
        return;
    }
    for (int i = 0; i < d->n_peers; i++) {
        if (d->peers[i] == peer) {
            return;
        }
    }
    if (d->n_peers < HTP_MAX_PEERS) {
        d->peers[d->n_peers++] = peer;
    }
}

// Push the work of d's peers first: what d is about to run may read what they
// write (async copies, events). A peer on the same NPU is waited for, since
// both queue on one worker pool; a peer on another NPU is only pushed, and a
// fence in d's batch orders the two.
static int flush_peers(struct htp_device * d) {
    int rc     = 0;
    int n      = d->n_peers;
    d->n_peers = 0;
    for (int i = 0; i < n; i++) {
        struct htp_device * p = d->peers[i];
        if (!p->sess) {
            continue;
        }
        int prc = p->cfg.phys[0] == d->cfg.phys[0] ? htp_device_flush_sync(p) : htp_device_flush_async(p);
        if (prc != 0 && rc == 0) {
            rc = prc;
        }
    }
    return rc;
}

int htp_device_flush_async(struct htp_device * d) {
    if (!d->sess) {
        return 0;
    }
    int rc = flush_peers(d);
    int fr = htp_session_flush_async(d->sess);
    return rc ? rc : fr;
}

int htp_device_flush_sync(struct htp_device * d) {
    if (!d->sess) {
        return 0;
    }
    int rc = flush_peers(d);
    int fr = htp_session_flush_sync(d->sess);
    return rc ? rc : fr;
}

// --- ggml device interface ---

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

// Only static properties of the op count here (shape, type, strides): ggml asks
// before any buffer exists.
static bool dev_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor * op) {
    struct htp_device *       d   = dev_of(dev);
    const struct htp_config * cfg = htp_backend_config;

    if (cfg->has_opfilter && regexec(&cfg->opfilter, ggml_op_desc(op), 0, NULL, 0) == 0) {
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
    }
    struct htp_session * sess = htp_device_session(d);
    if (!sess) {
        return false;
    }
    bool supp = htp_graph_supports(op, htp_session_hw_info(sess)->vtcm_size);
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

const struct ggml_backend_device_i htp_device_iface = {
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
