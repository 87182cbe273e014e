// session-fence.h: the fence slots of a session's pinned buffer (fence.h
// says what a fence is): handing them out, naming them as op operands, and
// waiting for one on the host.

#ifndef HTP_SESSION_FENCE_H
#define HTP_SESSION_FENCE_H

#include <stdint.h>

#include "fence.h"
#include "opbatch.h"
#include "proto/htp-proto.h"

struct htp_session;

// n consecutive fence slots of this session (zeroed), or NULL if none is free.
struct htp_fence_slot * htp_session_fence_alloc(struct htp_session * sess, uint32_t n);
void                    htp_session_fence_free(struct htp_session * sess, struct htp_fence_slot * slot, uint32_t n);

// Describe n fence slots starting at slot (from sess's pool) as an operand:
// buffer = the pinned buffer, type I8, ne = {64, n, 1, 1}, flag HTP_TENSOR_FENCE.
void htp_session_fence_tensor(const struct htp_session * sess, const struct htp_fence_slot * slot, uint32_t n,
                              struct htp_op_tensor * out);

// Next fence sequence number of this session (never 0).
uint32_t htp_session_next_fence_seq(struct htp_session * sess);

// Wait on the host until slot reaches seq, checking sess's NPU between
// slices. Returns 0 (then *status, if given, is the slot's status word),
// HTP_STATUS_TIMEOUT after timeout_us, or HTP_STATUS_NPU_DEAD.
int htp_session_fence_wait(struct htp_session * sess, const struct htp_fence_slot * slot, uint32_t seq,
                           int64_t timeout_us, uint32_t * status);

#endif  // HTP_SESSION_FENCE_H
