// server.h: the control channel of htp-npu. One process serves one physical
// NPU: it answers control requests (struct htp_ctl_req -> struct htp_ctl_rsp,
// htp-proto.h) on SOCK_SEQPACKET connections and owns the sessions those
// connections open.

#ifndef HTP_SERVER_H
#define HTP_SERVER_H

#include <stdint.h>

#include "proto/htp-proto.h"

// Hardware description this process reports at HELLO, from the environment
// (GGML_HEXAGON_ARCH, _NHVX, _VTCM_SIZE, _VMEM; malformed values warn and fall
// back to defaults).
void htp_server_hw_info(struct htp_hw_info * hw);

// Serve one already connected socket until the host hangs up; then close the
// sessions it opened. Returns 0 on a clean hang-up, non-zero if the server
// could not start.
int htp_server_run_fd(int fd, uint32_t phys);

// Listen on a unix SOCK_SEQPACKET socket at path and serve every connection
// (a thread each) until killed. Returns non-zero if it cannot listen.
int htp_server_run_listen(const char * path, uint32_t phys);

#endif  // HTP_SERVER_H
