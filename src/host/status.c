// status.c: names of the status codes (see status.h), for logs and errors.

#include "status.h"

const char * htp_status_str(int status) {
    switch (status) {
        case HTP_STATUS_OK:
            return "ok";
        case HTP_STATUS_NO_SUPPORT:
            return "no-support";
        case HTP_STATUS_INVAL_PARAMS:
            return "inval-params";
        case HTP_STATUS_VTCM_TOO_SMALL:
            return "vtcm-too-small";
        case HTP_STATUS_INTERNAL_ERR:
            return "internal-error";
        case HTP_STATUS_NO_MEMORY:
            return "no-memory";
        case HTP_STATUS_NO_SESSION:
            return "no-session";
        case HTP_STATUS_VERSION:
            return "version-mismatch";
        case HTP_STATUS_NPU_DEAD:
            return "npu-dead";
        case HTP_STATUS_HOST_ERR:
            return "host-error";
        case HTP_STATUS_PROTOCOL:
            return "protocol-error";
        case HTP_STATUS_TIMEOUT:
            return "timeout";
        default:
            return "unknown-status";
    }
}
