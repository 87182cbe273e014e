// session-fence.c: a session's fence slots (see session-fence.h). The slots
// live in the session's pinned buffer, so an op of any session that maps that
// buffer can signal or wait on them; the host waits by reading them.

#include "session-fence.h"

#include <stdatomic.h>
#include <string.h>

#include "fault.h"
#include "fence.h"
#include "npu-proc.h"
#include "session-error.h"
#include "session-impl.h"
#include "status.h"
#include "wait.h"

struct htp_fence_slot * htp_session_fence_alloc(struct htp_session * sess, uint32_t n) {
    return htp_fence_alloc(&sess->fences, n);
}

void htp_session_fence_free(struct htp_session * sess, struct htp_fence_slot * slot, uint32_t n) {
    htp_fence_release(&sess->fences, slot, n);
}

void htp_session_fence_tensor(const struct htp_session * sess, const struct htp_fence_slot * slot, uint32_t n,
                              struct htp_op_tensor * out) {
    memset(out, 0, sizeof *out);
    out->key    = NULL;  // dedup by (buffer, offset, shape)
    out->buf    = sess->pinned;
    out->offset = (uint64_t)((const uint8_t *)slot - htp_buffer_base(sess->pinned));
    out->type   = HTP_TYPE_I8;
    out->flags  = HTP_TENSOR_FENCE;
    out->ne[0]  = HTP_FENCE_SLOT_SIZE;
    out->ne[1]  = n;
    out->ne[2]  = 1;
    out->ne[3]  = 1;
    out->nb[0]  = 1;
    out->nb[1]  = HTP_FENCE_SLOT_SIZE;
    out->nb[2]  = (int64_t)HTP_FENCE_SLOT_SIZE * n;
    out->nb[3]  = out->nb[2];
    out->size   = (uint64_t)HTP_FENCE_SLOT_SIZE * n;
}

uint32_t htp_session_next_fence_seq(struct htp_session * sess) {
    if (++sess->fence_seq == 0) {
        sess->fence_seq = 1;
    }
    return sess->fence_seq;
}

int htp_session_fence_wait(struct htp_session * sess, const struct htp_fence_slot * slot, uint32_t seq,
                           int64_t timeout_us, uint32_t * status) {
    _Atomic uint32_t * word  = (_Atomic uint32_t *)&slot->seq;
    const uint64_t     start = htp_wait_now_us();
    if (htp_fault(HTP_FAULT_FENCE_WAIT)) {
        return HTP_STATUS_TIMEOUT;
    }
    for (;;) {
        // Acquire (in htp_fence_reached): the status and data the signaller published.
        if (htp_fence_reached(slot, seq)) {
            if (status) {
                *status = htp_fence_status(slot);
            }
            return 0;
        }
        int64_t waited = (int64_t)(htp_wait_now_us() - start);
        if (waited >= timeout_us) {
            return HTP_STATUS_TIMEOUT;
        }
        if (waited < 50) {
            htp_wait_relax();  // a fence about to be signalled: spin briefly
            continue;
        }
        if (!htp_npu_alive(sess->npu)) {
            return htp_session_npu_died(sess);
        }
        if (sess->last_error) {
            return sess->last_error;  // a failed session's fence may never come (its batch was never pushed)
        }
        // Sleep on seq (signallers wake all waiters), in slices to check the NPU.
        // Relaxed: only the value to sleep on; the acquire load above decides.
        uint32_t cur = atomic_load_explicit(word, memory_order_relaxed);
        int64_t  slice =
            timeout_us - waited < HTP_SESSION_WAIT_SLICE_US ? timeout_us - waited : HTP_SESSION_WAIT_SLICE_US;
        if ((int32_t)(cur - seq) < 0) {
            htp_wait_futex(word, cur, slice);
        }
    }
}
