// session-vmem.h: measuring how much of a session's VA window buffers can
// really use (GGML_HEXAGON_VMEM=0).

#ifndef HTP_SESSION_VMEM_H
#define HTP_SESSION_VMEM_H

#include <stdint.h>

struct htp_session;

// Measure the usable VA window the way the reference does: map buffers of
// 1 GiB (three at most), then of 256 MiB, until a map fails; unmap them all
// and answer the bytes mapped less one 256 MiB step (a margin for the NPU's
// own mappings). Done at open when params.measure_vmem is set. Returns 0 with
// *bytes set, or a status.
int htp_session_measure_vmem(struct htp_session * sess, uint64_t * bytes);

#endif  // HTP_SESSION_VMEM_H
