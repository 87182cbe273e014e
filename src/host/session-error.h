// session-error.h: a session's first error, for the session's own files and
// the device layer above (an event wait that cannot be honoured fails the
// waiting session). The first failure of a batch, a mapping or the NPU is
// recorded with a message naming the session (htp_session_last_error /
// htp_session_error read it back); from then on every enqueue and flush fails
// at once with it.

#ifndef HTP_SESSION_ERROR_H
#define HTP_SESSION_ERROR_H

struct htp_session;

// Record status as the session's error unless one is recorded already (then
// it is only logged). Returns the recorded status.
int htp_session_record_error(struct htp_session * sess, int status, const char * fmt, ...)
    __attribute__((format(printf, 3, 4)));

// Record the death of the session's NPU, with its cause. Returns the recorded status.
int htp_session_npu_died(struct htp_session * sess);

// A call after the first error: fail with it, saying so once per call site.
// Returns the recorded status.
int htp_session_refuse(const struct htp_session * sess, const char * call);

#endif  // HTP_SESSION_ERROR_H
