// event.c: ggml events on HTP devices, as fence slots.
//
// Recording an event enqueues a FENCE signal (the slot's seq becomes the
// event's seq when the NPU gets there). Waiting for it on another stream is
// free when both streams run on one NPU (its sessions run batches in FIFO
// order, so pushing the recorder's batch first is enough); across NPUs the
// waiting stream enqueues a FENCE wait on the slot. Synchronizing on the host
// polls the slot.
//
// Failures never abort (ggml's event calls return nothing). An event whose
// record failed, or whose slot belonged to a session since replaced after a
// failure (htp_device_reopen_failed: the generation moved on), is "broken":
// synchronizing on it returns at once after logging, and a stream that waits
// for it records the failure on its own session, so its next graph_compute
// reports it instead of the NPU waiting out a fence that never comes.

#include "event.h"

#include <stdlib.h>

#include "device.h"
#include "log.h"
#include "session-error.h"
#include "session-fence.h"
#include "session-submit.h"

#define HTP_EVENT_SYNC_TIMEOUT_US (600ll * 1000 * 1000)

// A ggml event on an HTP device: a fence slot owned by fence_dev's session,
// signalled with seq by the stream of rec_dev.
struct htp_event {
    struct htp_device *     fence_dev;
    struct htp_device *     rec_dev;
    struct htp_fence_slot * slot;
    uint32_t                gen;     // fence_dev's generation the slot belongs to
    uint32_t                seq;     // 0: never recorded
    bool                    broken;  // its record failed
};

static bool event_stale(const struct htp_event * ev) {
    return ev->gen != ev->fence_dev->generation || !ev->fence_dev->sess;
}

ggml_backend_event_t htp_event_new(ggml_backend_dev_t dev) {
    struct htp_device *  d    = (struct htp_device *)dev->context;
    struct htp_session * sess = htp_device_session(d);
    if (!sess) {
        return NULL;
    }
    struct htp_event *          ev = calloc(1, sizeof *ev);
    struct ggml_backend_event * e  = calloc(1, sizeof *e);
    if (!ev || !e || !(ev->slot = htp_session_fence_alloc(sess, 1))) {
        free(ev);
        free(e);
        return NULL;
    }
    ev->fence_dev = d;
    ev->rec_dev   = d;
    ev->gen       = d->generation;
    e->device     = dev;
    e->context    = ev;
    return e;
}

void htp_event_synchronize(ggml_backend_dev_t dev, ggml_backend_event_t event) {
    (void)dev;
    struct htp_event * ev = (struct htp_event *)event->context;
    if (ev->seq == 0) {
        return;
    }
    if (ev->broken || event_stale(ev) || !ev->rec_dev->sess) {
        HTP_LOG_ERROR("ggml-htp: %s event synchronize: the event's recording failed\n", ev->rec_dev->cfg.name);
        return;
    }
    // The signal may still sit in an unpushed batch.
    htp_device_flush_async(ev->rec_dev);
    uint32_t status = 0;
    int      rc     = htp_session_fence_wait(ev->rec_dev->sess, ev->slot, ev->seq, HTP_EVENT_SYNC_TIMEOUT_US, &status);
    if (rc == HTP_STATUS_TIMEOUT) {
        // The NPU never reached the fence: what comes after it cannot be
        // trusted either, so the session fails (and is replaced later).
        htp_session_record_error(ev->rec_dev->sess, rc, "waiting for an event's fence (seq %u)", (unsigned)ev->seq);
    }
    if (rc != 0 || status != 0) {
        HTP_LOG_ERROR("ggml-htp: %s event synchronize failed: %s\n", ev->rec_dev->cfg.name,
                      htp_status_str(rc ? rc : (int)status));
    }
}

void htp_event_free(ggml_backend_dev_t dev, ggml_backend_event_t event) {
    struct htp_event * ev = (struct htp_event *)event->context;
    htp_event_synchronize(dev, event);
    if (!event_stale(ev)) {
        htp_session_fence_free(ev->fence_dev->sess, ev->slot, 1);
    }  // else the slot went with its session
    free(ev);
    free(event);
}

void htp_event_record(ggml_backend_t backend, ggml_backend_event_t event) {
    struct htp_device * d  = (struct htp_device *)backend->context;
    struct htp_event *  ev = (struct htp_event *)event->context;
    ev->rec_dev            = d;
    if (event_stale(ev) || !d->sess) {
        ev->seq    = 1;
        ev->broken = true;
        HTP_LOG_ERROR("ggml-htp: %s event record: the event belongs to a session replaced after a failure\n",
                      d->cfg.name);
        return;
    }
    ev->broken = false;
    ev->seq    = htp_session_next_fence_seq(ev->fence_dev->sess);
    d->stats.events++;
    struct htp_op_tensor fence;
    htp_session_fence_tensor(ev->fence_dev->sess, ev->slot, 1, &fence);
    struct htp_opnode op = {0};
    op.opcode            = HTP_OP_FENCE;
    op.src[0]            = &fence;
    op.params[0]         = (int32_t)ev->seq;
    op.params[1]         = 1;  // signal
    if (htp_session_use_buffer(d->sess, htp_session_pinned(ev->fence_dev->sess)) != 0 ||
        htp_session_enqueue(d->sess, &op) != 0) {
        ev->broken = true;
        HTP_LOG_ERROR("ggml-htp: %s event record failed: %s\n", d->cfg.name, htp_session_error(d->sess));
    }
}

void htp_event_wait(ggml_backend_t backend, ggml_backend_event_t event) {
    struct htp_device * d  = (struct htp_device *)backend->context;
    struct htp_event *  ev = (struct htp_event *)event->context;
    if (ev->seq == 0 || !d->sess) {
        return;
    }
    if (ev->broken || event_stale(ev)) {
        htp_session_record_error(d->sess, HTP_STATUS_HOST_ERR, "%s: waits for an event whose recording failed",
                                 d->cfg.name);
        return;
    }
    htp_device_add_peer(d, ev->rec_dev);
    if (ev->rec_dev->cfg.phys[0] == d->cfg.phys[0]) {
        return;  // one NPU runs its sessions' batches in order
    }
    struct htp_op_tensor fence;
    htp_session_fence_tensor(ev->fence_dev->sess, ev->slot, 1, &fence);
    struct htp_opnode op = {0};
    op.opcode            = HTP_OP_FENCE;
    op.src[0]            = &fence;
    op.params[0]         = (int32_t)ev->seq;
    op.params[1]         = 0;  // wait
    if (htp_session_use_buffer(d->sess, htp_session_pinned(ev->fence_dev->sess)) != 0 ||
        htp_session_enqueue(d->sess, &op) != 0) {
        HTP_LOG_ERROR("ggml-htp: %s event wait failed: %s\n", d->cfg.name, htp_session_error(d->sess));
    }
}
