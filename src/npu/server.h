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

// The server without a socket, for tests and fuzzers that drive it in-process
// (the run functions above are these plus the socket loop and, in a real NPU,
// the fault report). open: the device (hardware info, worker pool) from the
// environment; non-zero if it could not start. message: one control message
// as it was received (n bytes of msg, truncated when it was longer, n_fds
// descriptors beside it, all of which are closed or kept by the server) from
// connection owner, answered in *rsp. hang_up: owner is gone, close its
// sessions. close: free the device (every owner hung up).
int  htp_server_open(uint32_t phys);
void htp_server_message(const void * owner, const void * msg, int64_t n, int truncated, const int * fds, int n_fds,
                        struct htp_ctl_rsp * rsp);
void htp_server_hang_up(const void * owner);
void htp_server_close(void);

#endif  // HTP_SERVER_H
