// device.c: an HTP device: its session (opened on first use) and pushing
// its work after its peers' work. What ggml sees of it is in ggml-device.c.

#include "device.h"

#include <stdio.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "session-submit.h"

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
        p.n_threads = cfg->nhvx;
        p.vtcm_size = cfg->vtcm_size;
        // Unset: the NPU's own default, which follows the arch as ours does
        // and knows the NPU's address space (a 32-bit NPU takes less).
        p.vmem_size    = cfg->vmem_set ? cfg->vmem : 0;
        p.measure_vmem = cfg->vmem_set && cfg->vmem == 0;  // GGML_HEXAGON_VMEM=0: measure the window
        p.dma64        = cfg->dma64 != 0;
        p.batch_ops    = cfg->opbatch;
        p.queue_depth  = cfg->opqueue;
        p.poll         = cfg->oppoll ? 1 : 0;
        p.profile      = (uint32_t)cfg->profile;
        p.n_traces     = cfg->profile == 3 ? cfg->optrace : 0;
        p.n_pmu_events = cfg->profile == 2 ? cfg->n_pmu_events : 0;
        memcpy(p.pmu_events, cfg->pmu_events, sizeof p.pmu_events);
        p.options = htp_config_session_options(cfg);
        int rc    = htp_session_open(&p, &d->sess);
        if (rc != 0) {
            d->open_status = rc;
            d->sess        = NULL;
            HTP_LOG_ERROR("ggml-htp: %s: cannot open a session on NPU %u: %s\n", d->cfg.name, d->cfg.phys[0],
                          htp_status_str(rc));
        } else if (cfg->etm && !d->etm_logged) {
            // The reference turns the DSP's embedded trace macrocell on here.
            HTP_LOG_INFO("ggml-htp: %s: GGML_HEXAGON_ETM=1: the software NPU has no ETM, nothing is traced\n",
                         d->cfg.name);
            d->etm_logged = true;
        }
        if (rc == 0 && d->cfg.n_members > 1) {
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

void htp_device_reopen_failed(struct htp_device * d) {
    pthread_mutex_lock(&d->lock);
    // An NPU that died since the last call has recorded nothing yet: ask it.
    if (d->sess && (htp_session_last_error(d->sess) != 0 || !htp_npu_alive(htp_session_npu(d->sess)))) {
        HTP_LOG_WARN(
            "ggml-htp: %s: replacing the failed session (%s)\n", d->cfg.name,
            htp_session_last_error(d->sess) ? htp_session_error(d->sess) : htp_npu_death(htp_session_npu(d->sess)));
        htp_session_close(d->sess);
        d->sess           = NULL;
        d->open_status    = 0;
        d->failure_logged = false;
        d->generation++;
        memset(d->cpy_fence, 0, sizeof d->cpy_fence);
        memset(d->cpy_ready, 0, sizeof d->cpy_ready);
    } else if (!d->sess && d->open_status != 0) {
        // The last open failed (out of descriptors, say): a new backend tries again.
        d->open_status = 0;
    }
    pthread_mutex_unlock(&d->lock);
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
