// trace.h: a Chrome / Perfetto trace-event file of the host and its NPUs
// (GGML_HTP_TRACE=path.json).
//
// The file is one JSON object {"traceEvents": [ ... ]}, written as events
// happen and closed ("]}") at backend free and at process exit, so it is
// valid JSON once the program has ended or freed its backends. Events:
//
//   "ph":"X"  complete events, ts and dur in microseconds:
//             host spans ("cat":"host") on the calling thread of this
//             process: graph_compute, translate, push, flush_wait;
//             NPU op spans ("cat":"npu") with pid = the NPU process, tid =
//             its worker (0 = the session's thread, the pool's worker 0),
//             "name" the op, and "args": op index, batch, shape, type,
//             flops, bytes (operands' bytes read and written) and status.
//             They need GGML_HEXAGON_PROFILE=3 (per-thread events); with 1
//             or 2 each op is one span on worker 0, the ops back to back
//             from the batch's start, args as above; with 0, none (the
//             NPU writes no profile).
//   "ph":"C"  counters, sampled at each push (queue also at each pop):
//             "queue" batches in flight; "vmem" MiB of the session's VA
//             window taken by its buffers (htp_buffer_window_bytes),
//             "vmem_batch" MiB the pushed batch's buffers need of it,
//             "vmem_window" the window's MiB for batches (the pinned
//             buffer's share taken off).
//   "ph":"M"  process_name / thread_name metadata, once per pid / tid.
//
// One clock: ts is CLOCK_MONOTONIC in microseconds on both sides. The NPU
// stamps its trace events relative to the batch's start and reports that
// start (htp_opbatch_rsp.start_us) on its own monotonic clock, which on
// Linux is CLOCK_MONOTONIC, and under qemu-hexagon too (clock_gettime goes
// through the emulator to the host's kernel): the host only adds them up.
// tools/htp-prof reads these files.

#ifndef HTP_TRACE_H
#define HTP_TRACE_H

#include <stdint.h>

#include "proto/htp-proto.h"

struct htp_opqueue_prof;

// 1 when GGML_HTP_TRACE names a file (opened on the first event).
int htp_trace_on(void);

// A host span [t0_us, t1_us] (htp_wait_now_us) on the calling thread.
void htp_trace_span(const char * name, uint64_t t0_us, uint64_t t1_us);

// A counter track sample.
void htp_trace_counter(const char * name, uint64_t t_us, double value);

// The NPU's spans of one answered batch: op spans per worker from p's trace
// events (mode 3), else one span per op from the profile descriptors, with
// each op's shape, type, flops and bytes from the descriptors in p.
void htp_trace_batch(const char * session, int npu_pid, const struct htp_opbatch_rsp * rsp,
                     const struct htp_opqueue_prof * p);

// Close the file (idempotent; also registered with atexit).
void htp_trace_close(void);

// A ggml backend of ours was made / freed: the file is closed when the last
// one is freed (events after that are not written).
void htp_trace_backend_opened(void);
void htp_trace_backend_freed(void);

// Floating-point operations and operand bytes of op i of a batch, from its
// descriptor (as htp-prof reports GFLOPS and GB/s): MUL_MAT / MUL_MAT_ID
// 2 * K per output element, FLASH_ATTN_EXT 2 * (D + Dv) per query and key,
// other ops one per output element (data movement none); bytes = sources +
// destinations (GET_ROWS / SET_ROWS: the rows moved, twice, and the indices).
void htp_trace_op_cost(const struct htp_op_desc * op, const struct htp_tensor * tensors, uint32_t n_tensors,
                       uint64_t * flops, uint64_t * bytes);

#endif  // HTP_TRACE_H
