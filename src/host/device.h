// device.h: an HTP device, the object behind each ggml device of the
// registry and the context of its buffer types and streams.
//
// Object model:
//   registry "HTP"  --  one struct htp_device per configured device (HTP0, ...)
//   device          --  one session on its NPU, opened on first use; its buffer
//                       types; the node cache of the last graph; its peers
//   ggml buffer     --  a struct htp_buffer (memfd shared with the NPU)
//   ggml backend    --  a stream on a device: context is the struct htp_device
//   ggml event      --  a fence slot in the session's pinned buffer
//
// Nothing here is public: the public surface is include/ggml-htp.h and the
// ggml interface tables.

#ifndef HTP_DEVICE_H
#define HTP_DEVICE_H

#include <pthread.h>

#include "config.h"
#include "ggml-backend-impl.h"
#include "ggml-htp.h"
#include "graph.h"
#include "session.h"

#define HTP_MAX_PEERS HTP_CONFIG_MAX_DEVICES

struct htp_device {
    int                      index;  // in the registry
    struct htp_device_config cfg;

    struct ggml_backend_device      dev;
    struct ggml_backend_buffer_type buft;       // device memory (shared with the NPU)
    struct ggml_backend_buffer_type host_buft;  // the same memory, usable by the CPU (GGML_HEXAGON_HOSTBUF)
    char                            buft_name[HTP_CONFIG_NAME_MAX + 8];
    char                            host_buft_name[HTP_CONFIG_NAME_MAX + 16];
    char                            description[96];

    pthread_mutex_t      lock;            // guards opening the session
    struct htp_session * sess;            // NULL until first use
    int                  open_status;     // non-zero once opening failed: not retried
    uint32_t             generation;      // sessions opened so far: what events and copies hold is of one
    bool                 failure_logged;  // the current session's failure was logged (backend.c)
    bool                 etm_logged;      // GGML_HEXAGON_ETM's "no ETM here" was logged

    // Fence slots of this device's session used by async copies between
    // NPUs (backend.c), by the peer's device index: cpy_fence[s] is signalled
    // by source s after its copy into us, cpy_ready[d] by destination d once
    // the work queued before a copy from us is done. They go with the session.
    struct htp_fence_slot * cpy_fence[HTP_CONFIG_MAX_DEVICES];
    struct htp_fence_slot * cpy_ready[HTP_CONFIG_MAX_DEVICES];

    struct htp_graph_cache        cache;  // translated nodes of the last graph (by graph->uid)
    struct ggml_backend_htp_stats stats;

    // The batch the session pushed for graph replay_uid, which held that
    // graph's ops and nothing else, named replay_batch by session generation
    // replay_gen (htp_session_replay; backend.c). replay_uid 0: none.
    uint64_t replay_uid;
    uint64_t replay_batch;
    uint32_t replay_gen;

    // Sessions whose queued work must be pushed before this one's next batch:
    // sources of async copies and recorders of events this stream waits for.
    struct htp_device * peers[HTP_MAX_PEERS];
    int                 n_peers;
};

// The device's session, opened on first call. NULL (and an error logged
// once) if it cannot be opened.
struct htp_session * htp_device_session(struct htp_device * d);

// Recovery: if the device's session has failed (its NPU died, or a batch
// failed), close it so that the next htp_device_session opens a fresh one,
// starting a new NPU process if the old one is dead. The device's buffers
// stay in host memory and are mapped into the new session as batches use
// them; events and copy fences of the old session become stale (generation).
// Called when a new backend (stream) is created on the device: a new context
// after a failure gets a working device; streams of the old one keep failing.
// A session that failed to open is tried again then too.
void htp_device_reopen_failed(struct htp_device * d);

// Push d's pending batch after its peers' work, as the reference's flush_async
// does: peers on the same NPU are flushed and waited for, peers on other NPUs
// are pushed. Returns 0 or a status.
int  htp_device_flush_async(struct htp_device * d);
int  htp_device_flush_sync(struct htp_device * d);
void htp_device_add_peer(struct htp_device * d, struct htp_device * peer);

#endif  // HTP_DEVICE_H
