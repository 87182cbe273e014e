// session.h: NPU sessions and the device they share.
//
// A device (one per htp-npu process, i.e. per physical NPU) owns the worker
// pool and the execution order: batches of all its sessions run one at a time,
// as on a DSP where sessions of one physical NPU run sequentially, in the
// host's push order. Each request carries the host's device-wide submission
// number (htp_opbatch_req.order); a reader that has taken a request runs it
// only when no other session holds, or has in its request ring, a request
// numbered lower. The smallest request anywhere can always run once its
// reader takes it, so a bad number can reorder batches but not deadlock them.
//
// A session owns a VA window (vmem.h), a map table (host fd -> NPU address), a
// scratch area ("VTCM") and, once started, a queue reader thread serving the
// request ring of its pinned buffer.
//
// Threads: control calls for a session come from one thread (the connection
// that opened it); the queue reader runs beside it. The map table is guarded by
// a lock; a batch holds the session's `busy` lock while it runs, and UNMAP
// takes it too, so a buffer never disappears under a running batch (an UNMAP
// waits for the batch in progress, fence waits included).

#ifndef HTP_SESSION_H
#define HTP_SESSION_H

#include <stdatomic.h>
#include <stdint.h>

#include "proto/htp-proto.h"
#include "proto/htp-ring.h"
#include "lock.h"
#include "pool.h"

struct htp_npu_device {
    struct htp_hw_info hw;
    struct htp_pool    pool;

    // Batch execution, one at a time in submission order. Guarded by
    // exec_mutex: the list, exec_busy, and each listed session's taken
    // request and request ring tail (readers pop under it).
    struct htp_lock          exec_mutex;
    struct htp_cond          exec_cv;  // broadcast when a batch ends or a queue leaves
    int                      exec_busy;
    struct htp_npu_session * queues;  // sessions whose queue reader runs
};

// Id of the session whose batch is executing (0: none); read by the fault
// handler, so it is a lock-free atomic.
extern _Atomic uint32_t htp_npu_device_running_session;

// How the NPU sleeps and wakes on the host's rings (the platform's
// process-shared wait/wake).
extern const struct htp_ring_sys htp_npu_ring_sys;

// Start the pool (hw->n_threads workers). HTP_STATUS_OK or HTP_STATUS_NO_MEMORY.
int  htp_npu_device_init(struct htp_npu_device * dev, const struct htp_hw_info * hw);
void htp_npu_device_free(struct htp_npu_device * dev);

struct htp_npu_session;

struct htp_npu_session_params {
    uint32_t id;         // session id (non-zero), chosen by the server
    uint32_t virt_idx;   // HTP<p>:<virt_idx>, for logs
    uint32_t n_threads;  // 0 = all of the device's
    uint64_t vtcm_size;  // 0 = the device's default
    uint64_t vmem_size;  // 0 = the device's default
    uint32_t options;    // HTP_SESSION_* bits (htp-proto.h); unknown bits are refused
};

// Open a session: reserve its window, allocate its scratch. Returns
// HTP_STATUS_OK with *out, HTP_STATUS_INVAL_PARAMS or HTP_STATUS_NO_MEMORY.
int htp_npu_session_open(struct htp_npu_device * dev, const struct htp_npu_session_params * p,
                         struct htp_npu_session ** out);

// Stop the queue, unmap everything, free the window and scratch. s is freed.
void htp_npu_session_close(struct htp_npu_session * s);

uint32_t htp_npu_session_id(const struct htp_npu_session * s);

// Map `size` bytes of memfd fd under key `key` (the host's fd number). fd is
// not kept (the caller closes it). Fills *info with the window state either way.
int htp_npu_session_map(struct htp_npu_session * s, int32_t key, int fd, uint64_t size, uint32_t flags,
                        struct htp_vmem_info * info);

// Unmap key. Refused (HTP_STATUS_INVAL_PARAMS) for an unknown key and for the
// pinned buffer of a running queue.
int htp_npu_session_unmap(struct htp_npu_session * s, int32_t key, struct htp_vmem_info * info);

void htp_npu_session_vmem_info(struct htp_npu_session * s, struct htp_vmem_info * info);

// Validate q against the mapped pinned buffer and start the queue reader.
int htp_npu_session_queue_start(struct htp_npu_session * s, const struct htp_queue_desc * q);

// Stop and join the queue reader (no-op if none). HTP_STATUS_OK.
int htp_npu_session_queue_stop(struct htp_npu_session * s);

// Profiler mode 0..3 for the following batches; events: mode 2's PMU event
// numbers (n_events 0 or HTP_PMU_SLOTS). *info: what mode 2 counts here
// (pmu.h), and the mode in force (2 becomes 1 where nothing counts).
int htp_npu_session_set_profiler(struct htp_npu_session * s, uint32_t mode, const uint32_t * events, uint32_t n_events,
                                 struct htp_pmu_info * info);

// Validate a queue descriptor against the pinned buffer's mapped size (exposed
// for tests). Returns HTP_STATUS_OK or HTP_STATUS_INVAL_PARAMS.
int htp_queue_desc_check(const struct htp_queue_desc * q, uint64_t pinned_size);

#endif  // HTP_SESSION_H
