// session-error.c: recording a session's first error (see session-error.h).

#include "session-error.h"

#include <stdarg.h>
#include <stdio.h>

#include "log.h"
#include "npu-proc.h"
#include "session-impl.h"
#include "status.h"

int htp_session_record_error(struct htp_session * sess, int status, const char * fmt, ...) {
    char    what[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (sess->last_error == 0) {
        sess->last_error = status;
        snprintf(sess->error, sizeof sess->error, "%s: %s (%s)", sess->params.name, what, htp_status_str(status));
        HTP_LOG_ERROR("ggml-htp: %s\n", sess->error);
    } else {
        HTP_VERBOSE("ggml-htp: %s: %s (%s), after an earlier error\n", sess->params.name, what, htp_status_str(status));
    }
    return sess->last_error;
}

int htp_session_npu_died(struct htp_session * sess) {
    return htp_session_record_error(sess, HTP_STATUS_NPU_DEAD, "NPU %u (pid %d) died: %s", sess->params.phys_idx,
                                    (int)htp_npu_pid(sess->npu), htp_npu_death(sess->npu));
}

int htp_session_refuse(const struct htp_session * sess, const char * call) {
    HTP_VERBOSE("ggml-htp: %s refused: %s\n", call, sess->error);
    return sess->last_error;
}
