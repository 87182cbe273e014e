// session.c: opening and closing sessions on an NPU, their accessors and
// their control requests (see session.h).
//
// The pinned buffer. One memfd per session, mapped into the session with
// HTP_BUF_PINNED (and into other sessions as an ordinary clone when they wait
// on or signal its fences). Offsets in bytes; the request ring holds struct
// htp_opbatch_req (40 bytes), the response ring struct htp_opbatch_rsp (48):
//
//   0                  request ring   HTP_RING_HDR_SIZE + depth * 40, rounded up to 64
//   rsp_off            response ring  HTP_RING_HDR_SIZE + depth * 48, rounded up to 64
//   slots_off          op-queue slots depth * slot_size; slots_off is 4096-aligned,
//                                     slot_size = htp_slot_size(batch_ops, n_threads,
//                                     n_traces) rounded up to 64
//   fences_off         fence slots    n_fences * HTP_FENCE_SLOT_SIZE (64-aligned)
//   codebooks_off      IQ codebooks   struct htp_codebooks (contract/codebooks.h), 64-aligned;
//                                     the NPU copies it at queue start
//   codebooks_off + .. (up to the 4 KiB rounding, then the guard page)
//
// The NPU learns these offsets from HTP_CTL_QUEUE_START (struct
// htp_queue_desc). The rings carry the seq of each batch; slot k is used by
// batches k + 1, k + 1 + depth, ... and is rewritten only after its answer is
// popped. Changing this layout needs no protocol change (it travels in the
// queue descriptor), but the NPU must validate every offset it is given.

#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codebooks.h"
#include "contract/window.h"
#include "fence.h"
#include "log.h"
#include "opbatch.h"
#include "opqueue.h"
#include "profile.h"
#include "session-error.h"
#include "session-impl.h"
#include "session-vmem.h"

#define ALIGN_UP(x, a) (((x) + (a)-1) / (a) * (a))

int htp_session_last_error(const struct htp_session * sess) {
    return sess->last_error;
}

const char * htp_session_error(const struct htp_session * sess) {
    return sess->error;
}

// One control request on this session; status of the answer or of the transport.
static int ctl(struct htp_session * sess, struct htp_ctl_req * req, struct htp_ctl_rsp * rsp) {
    req->session = sess->id;
    int rc       = htp_npu_call(sess->npu, req, -1, rsp);
    if (rc == HTP_STATUS_NPU_DEAD || rc == HTP_STATUS_PROTOCOL) {
        htp_session_npu_died(sess);
        return rc;
    }
    return rc ? rc : (int)rsp->status;
}

// --- open / close ---

static int check_params(const struct htp_session_params * p) {
    if (p->batch_ops == 0 || p->batch_ops > HTP_OP_MAX_OPS) {
        HTP_LOG_ERROR("ggml-htp: %s: batch of %u ops out of range 1..%d\n", p->name, p->batch_ops, HTP_OP_MAX_OPS);
        return HTP_STATUS_HOST_ERR;
    }
    if (p->queue_depth == 0 || p->queue_depth > HTP_QUEUE_MAX_DEPTH || (p->queue_depth & (p->queue_depth - 1))) {
        HTP_LOG_ERROR("ggml-htp: %s: queue depth %u is not a power of two in 1..%d\n", p->name, p->queue_depth,
                      HTP_QUEUE_MAX_DEPTH);
        return HTP_STATUS_HOST_ERR;
    }
    if (p->options & ~HTP_SESSION_OPTIONS_ALL) {
        HTP_LOG_ERROR("ggml-htp: %s: unknown session options %#x\n", p->name, p->options);
        return HTP_STATUS_HOST_ERR;
    }
    if (p->profile > 3 || p->n_traces > HTP_MAX_TRACES || p->n_fences == 0 || p->n_fences > 65536) {
        HTP_LOG_ERROR("ggml-htp: %s: bad profile %u / traces %u / fences %u\n", p->name, p->profile, p->n_traces,
                      p->n_fences);
        return HTP_STATUS_HOST_ERR;
    }
    return 0;
}

int htp_session_open(const struct htp_session_params * params, struct htp_session ** out) {
    int rc = check_params(params);
    if (rc != 0) {
        return rc;
    }
    struct htp_session * sess = calloc(1, sizeof *sess);
    if (!sess) {
        return HTP_STATUS_HOST_ERR;
    }
    sess->params                                    = *params;
    sess->params.name[sizeof sess->params.name - 1] = 0;
    sess->fence_seq                                 = 0;

    rc = htp_npu_get(params->phys_idx, &sess->npu);
    if (rc != 0) {
        goto fail;
    }
    const struct htp_hw_info * hw = htp_npu_hw_info(sess->npu);

    struct htp_ctl_req req = {.type = HTP_CTL_SESSION_OPEN};
    struct htp_ctl_rsp rsp;
    req.u.open.virt_idx  = params->virt_idx;
    req.u.open.n_threads = params->n_threads;
    req.u.open.vtcm_size = params->vtcm_size;
    req.u.open.vmem_size = params->vmem_size;
    req.u.open.options   = params->options;
    rc                   = ctl(sess, &req, &rsp);
    if (rc != 0) {
        HTP_LOG_ERROR("ggml-htp: %s: session open failed: %s\n", params->name, htp_status_str(rc));
        goto fail;
    }
    sess->id     = rsp.u.open.session;
    sess->opened = true;
    sess->target = (struct htp_map_target){.npu = sess->npu, .session_id = sess->id, .phys_idx = params->phys_idx};
    snprintf(sess->target.name, sizeof sess->target.name, "%s", sess->params.name);

    // Workers and trace room decide the slot size ("use n_threads for queue sizing").
    uint32_t hw_threads = hw->n_threads ? hw->n_threads : 1;
    if (hw_threads > HTP_MAX_NTHREADS) {
        hw_threads = HTP_MAX_NTHREADS;
    }
    sess->n_threads = params->n_threads && params->n_threads < hw_threads ? params->n_threads : hw_threads;
    sess->n_traces  = params->profile == 3 ? params->n_traces : 0;

    // The pinned buffer: rings, slots, fences (layout at the top of this file).
    const uint32_t depth = params->queue_depth;
    sess->rsp_off        = ALIGN_UP(htp_opqueue_ring_size(depth, HTP_OPQUEUE_REQ_SIZE), 64);
    sess->slots_off      = ALIGN_UP(sess->rsp_off + htp_opqueue_ring_size(depth, HTP_OPQUEUE_RSP_SIZE), HTP_PAGE_SIZE);
    sess->slot_size      = ALIGN_UP(htp_slot_size(params->batch_ops, sess->n_threads, sess->n_traces), 64);
    sess->fences_off     = ALIGN_UP(sess->slots_off + (uint64_t)depth * sess->slot_size, HTP_FENCE_SLOT_SIZE);
    sess->codebooks_off  = ALIGN_UP(sess->fences_off + (uint64_t)params->n_fences * HTP_FENCE_SLOT_SIZE, 64);
    uint64_t                     total     = sess->codebooks_off + sizeof(struct htp_codebooks);
    const struct htp_codebooks * codebooks = htp_host_codebooks();

    rc = htp_buffer_alloc(&sess->target, total, HTP_BUFFER_PINNED, &sess->pinned);
    if (rc != 0) {
        goto fail;
    }
    uint8_t * base = htp_buffer_base(sess->pinned);
    rc = htp_opqueue_init(&sess->queue, sess->npu, base, base + sess->rsp_off, base + sess->slots_off, sess->slot_size,
                          depth, sess->n_threads, sess->n_traces, (int)params->poll);
    if (rc != 0) {
        goto fail;
    }
    rc = htp_fence_pool_init(&sess->fences, base + sess->fences_off, params->n_fences);
    if (rc != 0) {
        goto fail;
    }
    if (codebooks) {
        memcpy(base + sess->codebooks_off, codebooks, sizeof(*codebooks));
    } else {
        HTP_LOG_WARN("ggml-htp: %s: no IQ codebooks: IQ1/IQ2/IQ3 weights stay on the CPU\n", params->name);
    }
    rc = htp_buffer_map(sess->pinned, &sess->target);
    if (rc != 0) {
        goto fail;
    }

    req                       = (struct htp_ctl_req){.type = HTP_CTL_QUEUE_START};
    req.u.queue.fd            = htp_buffer_fd(sess->pinned);
    req.u.queue.depth         = depth;
    req.u.queue.req_ring_off  = 0;
    req.u.queue.rsp_ring_off  = sess->rsp_off;
    req.u.queue.slots_off     = sess->slots_off;
    req.u.queue.slot_size     = sess->slot_size;
    req.u.queue.poll          = params->poll ? 1 : 0;
    req.u.queue.codebooks_off = codebooks ? sess->codebooks_off : 0;
    rc                        = ctl(sess, &req, &rsp);
    if (rc != 0) {
        HTP_LOG_ERROR("ggml-htp: %s: queue start failed: %s\n", params->name, htp_status_str(rc));
        goto fail;
    }
    sess->queue_started = true;

    if (params->profile) {
        req                     = (struct htp_ctl_req){.type = HTP_CTL_PROFILER};
        req.u.profiler.mode     = params->profile;
        req.u.profiler.n_events = params->n_pmu_events == HTP_PMU_SLOTS ? HTP_PMU_SLOTS : 0;
        memcpy(req.u.profiler.events, params->pmu_events, sizeof req.u.profiler.events);
        rc = ctl(sess, &req, &rsp);
        if (rc != 0) {
            HTP_LOG_ERROR("ggml-htp: %s: profiler mode %u failed: %s\n", params->name, params->profile,
                          htp_status_str(rc));
            goto fail;
        }
        sess->pmu = rsp.u.pmu;
        if (htp_profile_pmu_answer(params->name, params->profile, &sess->pmu) != 0) {
            rc = HTP_STATUS_PROTOCOL;
            goto fail;
        }
        sess->last_prof = calloc(params->batch_ops, sizeof *sess->last_prof);
        if (!sess->last_prof) {
            rc = HTP_STATUS_HOST_ERR;
            goto fail;
        }
    }

    // The pinned buffer takes its share of the VA window; batches get the rest.
    sess->vmem_size = params->vmem_size ? params->vmem_size : hw->vmem_size ? hw->vmem_size : HTP_VMEM_DEFAULT;
    uint64_t pinned = htp_window_bytes(htp_buffer_size(sess->pinned), hw->page_size);
    sess->max_vmem  = sess->vmem_size > pinned ? sess->vmem_size - pinned : sess->vmem_size;
    if (params->measure_vmem) {
        // Measured with the pinned buffer already mapped: the answer is what
        // batches can use, nothing to subtract.
        uint64_t measured = 0;
        rc                = htp_session_measure_vmem(sess, &measured);
        if (rc != 0) {
            goto fail;
        }
        HTP_LOG_INFO("ggml-htp: %s measured max vmem %llu\n", params->name, (unsigned long long)measured);
        sess->max_vmem = measured;
    }
    rc = htp_opbatch_init(&sess->batch, &sess->target, params->batch_ops, sess->max_vmem, hw->page_size);
    if (rc != 0) {
        goto fail;
    }

    HTP_VERBOSE(
        "ggml-htp: %s session %u on NPU %u (pid %d): threads %u batch %u depth %u slot %llu pinned %llu "
        "vmem %llu poll %u profile %u options %#x\n",
        params->name, sess->id, params->phys_idx, (int)htp_npu_pid(sess->npu), sess->n_threads, params->batch_ops,
        depth, (unsigned long long)sess->slot_size, (unsigned long long)pinned, (unsigned long long)sess->max_vmem,
        params->poll, params->profile, params->options);
    *out = sess;
    return 0;
fail:
    // Report the failure as it happened, not the close path's follow-ups.
    htp_session_close(sess);
    return rc;
}

void htp_session_close(struct htp_session * sess) {
    if (!sess) {
        return;
    }
    // Members first: their batches use the leader's pinned buffer.
    for (uint32_t i = 0; i < sess->n_members; i++) {
        htp_session_close(sess->members[i]);
    }
    sess->n_members = 0;
    struct htp_ctl_req req;
    struct htp_ctl_rsp rsp;
    if (sess->queue_started) {
        req = (struct htp_ctl_req){.type = HTP_CTL_QUEUE_STOP};
        ctl(sess, &req, &rsp);
        sess->queue_started = false;
    }
    if (sess->npu) {
        // Unmap everything from this session (the pinned buffer included: the
        // queue is stopped), then free the pinned buffer, which unmaps it from
        // the sessions that cloned it for its fences.
        htp_buffer_forget_target(&sess->target, true);
    }
    htp_buffer_unref(sess->pinned);
    sess->pinned = NULL;
    if (sess->opened) {
        req = (struct htp_ctl_req){.type = HTP_CTL_SESSION_CLOSE};
        ctl(sess, &req, &rsp);
        sess->opened = false;
    }
    htp_npu_put(sess->npu);
    htp_opbatch_free(&sess->batch);
    htp_fence_pool_free(&sess->fences);
    free(sess->last_prof);
    free(sess);
}

// --- accessors ---

const char * htp_session_name(const struct htp_session * sess) {
    return sess->params.name;
}

const struct htp_hw_info * htp_session_hw_info(const struct htp_session * sess) {
    return htp_npu_hw_info(sess->npu);
}

uint32_t htp_session_phys_idx(const struct htp_session * sess) {
    return sess->params.phys_idx;
}

uint32_t htp_session_virt_idx(const struct htp_session * sess) {
    return sess->params.virt_idx;
}

uint32_t htp_session_id(const struct htp_session * sess) {
    return sess->id;
}

uint32_t htp_session_n_threads(const struct htp_session * sess) {
    return sess->n_threads;
}

uint64_t htp_session_max_vmem(const struct htp_session * sess) {
    return sess->max_vmem;
}

struct htp_npu * htp_session_npu(const struct htp_session * sess) {
    return sess->npu;
}

struct htp_buffer * htp_session_pinned(const struct htp_session * sess) {
    return sess->pinned;
}

const struct htp_map_target * htp_session_map_target(const struct htp_session * sess) {
    return &sess->target;
}

int htp_session_vmem_info(struct htp_session * sess, struct htp_vmem_info * info) {
    struct htp_ctl_req req = {.type = HTP_CTL_VMEM_INFO};
    struct htp_ctl_rsp rsp;
    int                rc = ctl(sess, &req, &rsp);
    if (rc == 0) {
        *info = rsp.u.vmem;
    }
    return rc;
}

// --- buffers ---

int htp_session_use_buffer(struct htp_session * sess, struct htp_buffer * buf) {
    return htp_buffer_use(buf, &sess->target);
}

int htp_session_map_buffer(struct htp_session * sess, struct htp_buffer * buf) {
    int rc = htp_buffer_map(buf, &sess->target);
    return rc == HTP_STATUS_NPU_DEAD ? htp_session_npu_died(sess) : rc;
}

int htp_session_unmap_buffer(struct htp_session * sess, struct htp_buffer * buf) {
    int rc = htp_buffer_unmap(buf, &sess->target);
    return rc == HTP_STATUS_NPU_DEAD ? htp_session_npu_died(sess) : rc;
}
