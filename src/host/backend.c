// backend.c: a ggml backend (stream) on an HTP device: graph compute,
// synchronize, async tensor access and async copies between HTP devices.
//
// graph_compute translates the graph (or takes the cached translation),
// enqueues its ops into the session's batch, pushes the batch and waits for it:
// an NPU failure during the graph's own batches must reach the caller as its
// status (llama_decode returns non-zero), and the caller reads the graph's
// output next anyway (get_tensor_async), so the wait moves rather than adds.
// A graph computed again (a decode's every token) skips even the enqueue:
// when its ops made one batch the last time, that batch is pushed again as
// it was (htp_session_replay), which took the backend's host work per token
// of the tiny models from 10-12 us to 1-2.5 us (htp-bench model).
//
// Failures. An NPU failure (a batch that failed, an NPU that died or hung) is
// recorded on the session, and every later call on it fails at once until a
// new backend on the device replaces it (htp_device_reopen_failed). The calls
// ggml gives no way to report an error (synchronize, the async tensor calls)
// log it, once per failure, and leave their destination untouched; nothing
// here aborts the program.

#include "backend.h"

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "device.h"
#include "event.h"
#include "ggml-buffer.h"
#include "ggml-htp.h"
#include "ggml-internal.h"
#include "graph-order.h"
#include "graph.h"
#include "log.h"
#include "session-fence.h"
#include "session-submit.h"
#include "trace.h"
#include "wait.h"

static struct htp_device * backend_device(ggml_backend_t backend) {
    return (struct htp_device *)backend->context;
}

static const char * backend_get_name(ggml_backend_t backend) {
    return backend_device(backend)->cfg.name;
}

static void backend_free(ggml_backend_t backend) {
    // The session belongs to the device and outlives its streams.
    struct htp_device * d = backend_device(backend);
    htp_device_flush_sync(d);
    htp_trace_backend_freed();
    free(backend);
}

// Whether rc is a failure; the first one since the device's session was
// opened is logged, naming the call, the later ones (every call fails fast
// then) are not.
static bool failed(struct htp_device * d, const char * what, int rc) {
    if (rc == 0) {
        return false;
    }
    if (!d->failure_logged) {
        d->failure_logged = true;
        HTP_LOG_ERROR("ggml-htp: %s %s failed: %s\n", d->cfg.name, what,
                      d->sess && htp_session_last_error(d->sess) ? htp_session_error(d->sess) : htp_status_str(rc));
    }
    return true;
}

static void backend_synchronize(ggml_backend_t backend) {
    struct htp_device * d = backend_device(backend);
    failed(d, "synchronize", htp_device_flush_sync(d));
}

static void backend_set_tensor_async(ggml_backend_t backend, struct ggml_tensor * tensor, const void * data,
                                     size_t offset, size_t size) {
    // The NPU may still read the old bytes: wait for the queued work first.
    struct htp_device * d = backend_device(backend);
    if (failed(d, "set_tensor_async", htp_device_flush_sync(d))) {
        return;  // the tensor keeps its bytes
    }
    ggml_backend_tensor_set(tensor, data, offset, size);
}

static void backend_get_tensor_async(ggml_backend_t backend, const struct ggml_tensor * tensor, void * data,
                                     size_t offset, size_t size) {
    struct htp_device * d = backend_device(backend);
    if (failed(d, "get_tensor_async", htp_device_flush_sync(d))) {
        return;  // data is left as it was
    }
    ggml_backend_tensor_get(tensor, data, offset, size);
}

static enum ggml_status graph_compute(struct htp_device * d, struct ggml_cgraph * graph) {
    struct htp_session * sess = d->sess;
    if (!sess || failed(d, "graph_compute", htp_session_last_error(sess))) {
        return GGML_STATUS_FAILED;
    }
    uint64_t       hits = d->cache.hits;
    const uint64_t t0   = htp_wait_now_us();
    if (htp_graph_translate(&d->cache, graph, htp_session_n_threads(sess), htp_session_hw_info(sess)->vtcm_size) != 0) {
        return GGML_STATUS_FAILED;
    }
    htp_trace_span("translate", t0, htp_wait_now_us());
    const bool hit = d->cache.hits != hits;
    d->stats.cache_hits += d->cache.hits - hits;
    if (d->n_peers > 0) {
        // Push what this graph's inputs wait for before our first batch.
        if (htp_device_flush_async(d) != 0) {
            return GGML_STATUS_FAILED;
        }
    }
    d->stats.ops += (uint64_t)d->cache.n_nodes;
    d->stats.fused += (uint64_t)d->cache.n_fused;
    // The same graph as last time, whose ops made one batch then: push that
    // batch again (session-submit.h), unless something it relies on moved.
    if (hit && graph->uid == d->replay_uid && d->replay_gen == d->generation) {
        int rc = htp_session_replay(sess, d->replay_batch);
        if (rc == 0) {
            d->stats.replays++;
            return failed(d, "graph_compute", htp_device_flush_sync(d)) ? GGML_STATUS_FAILED : GGML_STATUS_SUCCESS;
        }
        if (rc != HTP_SESSION_STALE) {
            failed(d, "graph_compute", rc);
            return GGML_STATUS_FAILED;
        }
    }
    d->replay_uid      = 0;
    const bool     own = htp_session_queued_ops(sess) == 0;  // the batch starts empty: it holds this graph alone
    const uint64_t p0  = htp_session_pushes(sess);
    for (int i = 0; i < d->cache.n_nodes; i++) {
        if (failed(d, "graph_compute", htp_session_enqueue(sess, &d->cache.nodes[i].op))) {
            return GGML_STATUS_FAILED;
        }
    }
    // Run it and wait: see the header comment.
    if (failed(d, "graph_compute", htp_device_flush_sync(d))) {
        return GGML_STATUS_FAILED;
    }
    if (own && graph->uid != 0 && htp_session_pushes(sess) == p0 + 1 && htp_session_last_batch(sess) != 0) {
        // One push held the whole graph: the next compute of it may replay it.
        d->replay_uid   = graph->uid;
        d->replay_batch = htp_session_last_batch(sess);
        d->replay_gen   = d->generation;
    }
    return GGML_STATUS_SUCCESS;
}

static enum ggml_status backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph * graph) {
    struct htp_device * d     = backend_device(backend);
    const uint64_t      start = htp_wait_now_us();
    // The host's own time: the call less its waits for the NPU (a session
    // replaced during the call starts its count again: then all of it counts).
    struct htp_session * sess  = d->sess;
    const uint64_t       wait0 = sess ? htp_session_wait_usecs(sess) : 0;
    enum ggml_status     st    = graph_compute(d, graph);
    const uint64_t       end   = htp_wait_now_us();
    const uint64_t       wall  = end - start;
    htp_trace_span("graph_compute", start, end);
    const uint64_t waited = sess && sess == d->sess ? htp_session_wait_usecs(sess) - wait0 : 0;
    d->stats.graphs++;
    d->stats.host_usecs += waited < wall ? wall - waited : 0;
    return st;
}

void ggml_backend_htp_get_stats(ggml_backend_t backend, struct ggml_backend_htp_stats * stats) {
    memset(stats, 0, sizeof *stats);
    if (ggml_backend_is_htp(backend)) {
        *stats = backend_device(backend)->stats;
    }
}

static void backend_graph_optimize(ggml_backend_t backend, struct ggml_cgraph * graph) {
    struct htp_device * d     = backend_device(backend);
    int                 moved = htp_graph_order(graph);
    HTP_VERBOSE("ggml-htp: %s graph-optimize: %d of %d nodes moved\n", d->cfg.name, moved, graph->n_nodes);
}

// --- async copies between HTP devices ---

static int enqueue_cpy(struct htp_session * sess, const struct ggml_tensor * src, struct ggml_tensor * dst,
                       const struct htp_op_tensor * fence, uint32_t seq) {
    struct htp_op_tensor s, t;
    if (!htp_tensor_describe(src, &s) || !htp_tensor_describe(dst, &t)) {
        return HTP_STATUS_HOST_ERR;
    }
    struct htp_opnode op = {0};
    op.opcode            = fence ? HTP_OP_CPY_FENCE : HTP_OP_CPY;
    op.src[0]            = &s;
    op.src[1]            = fence;
    op.dst[0]            = &t;
    op.params[0]         = (int32_t)seq;
    return htp_session_enqueue(sess, &op);
}

static int enqueue_fence(struct htp_session * sess, const struct htp_op_tensor * fence, uint32_t seq, bool signal) {
    struct htp_opnode op = {0};
    op.opcode            = HTP_OP_FENCE;
    op.src[0]            = fence;
    op.params[0]         = (int32_t)seq;
    op.params[1]         = signal ? 1 : 0;
    return htp_session_enqueue(sess, &op);
}

static bool cpy_tensor_async(ggml_backend_t backend_src, ggml_backend_t backend_dst, const struct ggml_tensor * src,
                             struct ggml_tensor * dst) {
    if (!ggml_backend_is_htp(backend_src) || !ggml_backend_is_htp(backend_dst) || !src->buffer || !dst->buffer ||
        !htp_ggml_buffer_is_htp(src->buffer) || !htp_ggml_buffer_is_htp(dst->buffer)) {
        return false;
    }
    if (src->type != dst->type || !ggml_are_same_shape(src, dst) || !ggml_are_same_stride(src, dst)) {
        return false;
    }
    struct htp_device * ds = backend_device(backend_src);
    struct htp_device * dd = backend_device(backend_dst);
    struct htp_session *ss = ds->sess, *sd = dd->sess;
    if (!ss || !sd) {
        return false;
    }

    dd->stats.copies++;
    if (ds == dd) {
        return enqueue_cpy(sd, src, dst, NULL, 0) == 0;
    }
    if (ds->cfg.phys[0] == dd->cfg.phys[0]) {
        // Same NPU: the destination stream copies (its session maps the
        // source buffer too); the source's queued work is pushed first, and
        // the NPU runs the two sessions' batches in order.
        if (htp_session_use_buffer(sd, htp_ggml_buffer_get(src->buffer)) != 0) {
            return false;
        }
        htp_device_add_peer(dd, ds);
        return enqueue_cpy(sd, src, dst, NULL, 0) == 0;
    }

    // Another NPU: the source stream copies into the destination's buffer and
    // signals a fence the destination stream waits on. ggml's async copy
    // happens after the work queued on both streams, so the source first
    // waits for a fence the destination signals once its queued work is done:
    // without it the copy could overwrite dst while the destination's earlier
    // ops still read it (the meta backend's reduction reuses its buffers).
    // The slot in the destination's pinned buffer that the source signals
    // after its copy, and the one in the source's that the destination
    // signals once the work queued before the copy is done (device.h).
    struct htp_fence_slot ** slot  = &dd->cpy_fence[ds->index];
    struct htp_fence_slot ** ready = &ds->cpy_ready[dd->index];
    if (!*slot) {
        *slot = htp_session_fence_alloc(sd, 1);
        if (!*slot) {
            return false;
        }
    }
    if (!*ready) {
        *ready = htp_session_fence_alloc(ss, 1);
        if (!*ready) {
            return false;
        }
    }
    struct htp_op_tensor fence, rfence;
    htp_session_fence_tensor(sd, *slot, 1, &fence);
    htp_session_fence_tensor(ss, *ready, 1, &rfence);
    if (htp_session_use_buffer(ss, htp_ggml_buffer_get(dst->buffer)) != 0 ||
        htp_session_use_buffer(ss, htp_session_pinned(sd)) != 0 ||
        htp_session_use_buffer(sd, htp_session_pinned(ss)) != 0) {
        return false;
    }
    uint32_t rseq = htp_session_next_fence_seq(ss);
    uint32_t seq  = htp_session_next_fence_seq(sd);
    if (enqueue_fence(sd, &rfence, rseq, true) != 0 || enqueue_fence(ss, &rfence, rseq, false) != 0 ||
        enqueue_cpy(ss, src, dst, &fence, seq) != 0 || enqueue_fence(sd, &fence, seq, false) != 0) {
        return false;
    }
    // Each waits for the other: pushing either pushes the other first.
    htp_device_add_peer(dd, ds);
    htp_device_add_peer(ds, dd);
    return true;
}

static const struct ggml_backend_i htp_backend_iface = {
    /* .get_name            = */ backend_get_name,
    /* .free                = */ backend_free,
    /* .set_tensor_async    = */ backend_set_tensor_async,
    /* .get_tensor_async    = */ backend_get_tensor_async,
    /* .set_tensor_2d_async = */ NULL,
    /* .get_tensor_2d_async = */ NULL,
    /* .cpy_tensor_async    = */ cpy_tensor_async,
    /* .synchronize         = */ backend_synchronize,
    /* .graph_plan_create   = */ NULL,
    /* .graph_plan_free     = */ NULL,
    /* .graph_plan_update   = */ NULL,
    /* .graph_plan_compute  = */ NULL,
    /* .graph_compute       = */ backend_graph_compute,
    /* .event_record        = */ htp_event_record,
    /* .event_wait          = */ htp_event_wait,
    /* .graph_optimize      = */ backend_graph_optimize,
};

static ggml_guid_t htp_guid(void) {
    static ggml_guid guid = {0x68, 0x74, 0x70, 0x2d, 0x6e, 0x70, 0x75, 0x2d,
                             0x67, 0x67, 0x6d, 0x6c, 0x2d, 0x68, 0x74, 0x70};
    return &guid;
}

ggml_backend_t htp_backend_init(struct htp_device * d) {
    ggml_backend_t backend = malloc(sizeof *backend);
    if (!backend) {
        return NULL;
    }
    *backend = (struct ggml_backend){htp_guid(), htp_backend_iface, &d->dev, d};
    htp_trace_backend_opened();
    return backend;
}

bool ggml_backend_is_htp(ggml_backend_t backend) {
    return backend && ggml_guid_matches(backend->guid, htp_guid());
}
