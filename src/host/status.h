// status.h: the host library's status codes. Every fallible host call returns
// 0 (HTP_STATUS_OK) or a status of one of two sets: the enum htp_status an NPU
// answers with (proto/htp-proto.h), or the host's own below, numbered above
// it so that the two never meet.

#ifndef HTP_STATUS_H
#define HTP_STATUS_H

#include "proto/htp-proto.h"

// Host-side statuses, beyond the enum htp_status codes an NPU answers with.
enum htp_host_status {
    HTP_STATUS_NPU_DEAD = 100,  // the NPU process died, hung or cannot be started
    HTP_STATUS_HOST_ERR = 101,  // a host-side failure (allocation, system call, bad argument)
    HTP_STATUS_PROTOCOL = 102,  // the NPU broke the protocol (wrong answer type, sequence, size)
    HTP_STATUS_TIMEOUT  = 103,  // a bounded wait ran out (the NPU lives but has not answered yet)
};

// Short name of a status of either set ("ok", "inval-params", "npu-dead", ...).
const char * htp_status_str(int status);

#endif  // HTP_STATUS_H
