// npu-proc.h: the htp-npu processes of this host process, one per physical
// NPU index, and their control channel.
//
// A process is started on first use (htp_npu_get) and ended when its last user
// lets go (htp_npu_put), as FastRPC opens and closes a protection domain. The
// program is $GGML_HEXAGON_NPU, else `htp-npu` next to libggml-htp.so. It gets
// one end of a SOCK_SEQPACKET socketpair as `--fd N`; over it travel the
// synchronous control requests of htp-proto.h, one at a time (a mutex), each
// with a bounded wait. An NPU is declared dead when its socket hangs up, when
// the child exits, or when a request goes unanswered for HTP_NPU_CALL_TIMEOUT_MS
// (then it is killed). Once dead, every call fails at once with
// HTP_STATUS_NPU_DEAD; the sessions on it fail their calls and can still close.

#ifndef HTP_NPU_PROC_H
#define HTP_NPU_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/htp-proto.h"
#include "status.h"

#define HTP_NPU_MAX_PHYS        16    // physical NPU indices this host can start
#define HTP_NPU_CALL_TIMEOUT_MS 5000  // a control request unanswered this long kills the NPU
#define HTP_NPU_POLL_SLICE_MS   20    // waits are cut into slices this long to check liveness

struct htp_npu;

// Get the NPU process for physical index phys_idx, starting it (and saying
// hello: protocol version, hardware info) if this host has none running.
// Each successful get holds one reference; give it back with htp_npu_put.
// Returns 0, HTP_STATUS_NPU_DEAD (cannot start / no hello), HTP_STATUS_VERSION
// or HTP_STATUS_HOST_ERR.
int htp_npu_get(uint32_t phys_idx, struct htp_npu ** out);

// Drop a reference. The last one closes the control socket (the NPU exits on
// hang-up), reaps the child (killing it if it does not exit within 2 s) and
// frees npu, which is no longer valid afterwards.
void htp_npu_put(struct htp_npu * npu);

// One control request, one response (rsp->type checked against req->type).
// send_fd >= 0 travels with the request as SCM_RIGHTS (HTP_CTL_MAP). Returns 0
// when a response arrived, whatever rsp->status says; HTP_STATUS_NPU_DEAD when
// the NPU is or becomes dead; HTP_STATUS_PROTOCOL for a malformed answer
// (the NPU is then declared dead too: the channel can no longer be trusted).
// Thread-safe: calls are serialised.
int htp_npu_call(struct htp_npu * npu, const struct htp_ctl_req * req, int send_fd, struct htp_ctl_rsp * rsp);

// The decoding of what an NPU answers, the only trust boundary of the
// control channel (split out so fuzz-host-rsp and fuzz-ctl drive it without
// a process). rsp_check: n received bytes in *rsp are one answer to a
// request of type req_type; 0 or HTP_STATUS_PROTOCOL (logged). hello_decode:
// the answer to HELLO speaks our version and describes a possible NPU; fills
// *hw (its name terminated) and returns 0, or HTP_STATUS_VERSION /
// HTP_STATUS_PROTOCOL (logged; *hw may be partly filled). phys_idx is for the
// logs.
int htp_npu_rsp_check(uint32_t phys_idx, uint32_t req_type, const struct htp_ctl_rsp * rsp, ssize_t n);
int htp_npu_hello_decode(uint32_t phys_idx, const struct htp_ctl_rsp * rsp, struct htp_hw_info * hw);

// Map the memfd fd (size bytes, HTP_BUF_* flags) into session session_id on
// npu (HTP_CTL_MAP; fd travels with the request and is the key the NPU files
// the mapping under), or unmap it (HTP_CTL_UNMAP). Returns 0, the NPU's status
// when it refused, or a status of htp_npu_call.
int htp_npu_map_buffer(struct htp_npu * npu, uint32_t session_id, int fd, uint64_t size, uint32_t flags);
int htp_npu_unmap_buffer(struct htp_npu * npu, uint32_t session_id, int fd);

// Check that the NPU lives: not declared dead, socket not hung up, child not
// exited. Cheap (one poll and one waitpid, both non-blocking); thread-safe.
// A death found here is recorded, so later calls fail at once.
bool htp_npu_alive(struct htp_npu * npu);

// Why the NPU is dead ("exited with status 3", "killed by signal 9", ...), or "".
const char * htp_npu_death(const struct htp_npu * npu);

// Next device-wide submission number (1, 2, 3, ...) for a batch pushed to any
// session of this NPU (struct htp_opbatch_req's order). Thread-safe; a push
// that happens after another takes its number after it, so gets a larger one.
uint64_t htp_npu_next_order(struct htp_npu * npu);

const struct htp_hw_info * htp_npu_hw_info(const struct htp_npu * npu);
pid_t                      htp_npu_pid(const struct htp_npu * npu);
uint32_t                   htp_npu_phys_idx(const struct htp_npu * npu);

#endif  // HTP_NPU_PROC_H
