// backend-impl.h: the pieces of the ggml backend (registry, devices, buffer
// types, streams, events) that its files share. Nothing here is public: the
// public surface is include/ggml-htp.h and the ggml interface tables.
//
// Object model:
//   registry "HTP"  --  one struct htp_device per configured device (HTP0, ...)
//   device          --  one session on its NPU, opened on first use; its buffer
//                       types; the node cache of the last graph; its peers
//   ggml buffer     --  a struct htp_buffer (memfd shared with the NPU)
//   ggml backend    --  a stream on a device: context is the struct htp_device
//   ggml event      --  a fence slot in the session's pinned buffer

#ifndef HTP_BACKEND_IMPL_H
#define HTP_BACKEND_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "ggml-htp.h"
#include "ggml-backend-impl.h"
#include "ggml-buffer.h"
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

    pthread_mutex_t      lock;         // guards opening the session
    struct htp_session * sess;         // NULL until first use
    int                  open_status;  // non-zero once opening failed: not retried

    struct htp_graph_cache        cache;  // translated nodes of the last graph (by graph->uid)
    struct ggml_backend_htp_stats stats;

    // Sessions whose queued work must be pushed before this one's next batch:
    // sources of async copies and recorders of events this stream waits for.
    struct htp_device * peers[HTP_MAX_PEERS];
    int                 n_peers;
};

// A ggml event on an HTP device: a fence slot owned by fence_dev's session,
// signalled with seq by the stream of rec_dev.
struct htp_event {
    struct htp_device *     fence_dev;
    struct htp_device *     rec_dev;
    struct htp_fence_slot * slot;
    uint32_t                seq;  // 0: never recorded
};

// The device's session, opened on first call. NULL (and an error logged
// once) if it cannot be opened.
struct htp_session * htp_device_session(struct htp_device * d);

// Push d's pending batch after its peers' work, as the reference's flush_async
// does: peers on the same NPU are flushed and waited for, peers on other NPUs
// are pushed. Returns 0 or a status.
int  htp_device_flush_async(struct htp_device * d);
int  htp_device_flush_sync(struct htp_device * d);
void htp_device_add_peer(struct htp_device * d, struct htp_device * peer);

// Buffer types.
void htp_buffer_types_init(struct htp_device * d);
bool htp_buft_is_htp(ggml_backend_buffer_type_t buft);

// Streams.
ggml_backend_t htp_backend_init(struct htp_device * d);

// Events.
ggml_backend_event_t htp_event_new(ggml_backend_dev_t dev);
void                 htp_event_free(ggml_backend_dev_t dev, ggml_backend_event_t event);
void                 htp_event_synchronize(ggml_backend_dev_t dev, ggml_backend_event_t event);
void                 htp_event_record(ggml_backend_t backend, ggml_backend_event_t event);
void                 htp_event_wait(ggml_backend_t backend, ggml_backend_event_t event);

// Describe a ggml tensor (in an HTP buffer) as an op operand. Returns false if
// it is not in an HTP buffer.
bool htp_tensor_describe(const struct ggml_tensor * t, struct htp_op_tensor * out);

#endif  // HTP_BACKEND_IMPL_H
