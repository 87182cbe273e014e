// session-impl.h: the inside of a session, for the files that implement it
// (session.c and the session-*.c files beside it) and no one else: everybody
// else holds an opaque struct htp_session and calls those files' functions.

#ifndef HTP_SESSION_IMPL_H
#define HTP_SESSION_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "buffer.h"
#include "fence.h"
#include "opbatch.h"
#include "opqueue.h"
#include "proto/htp-proto.h"
#include "session-params.h"

#define HTP_SESSION_WAIT_SLICE_US 20000  // response waits are cut into slices this long to check the NPU

struct htp_session {
    struct htp_session_params params;
    struct htp_npu *          npu;
    uint32_t                  id;
    bool                      opened;         // SESSION_OPEN succeeded
    bool                      queue_started;  // QUEUE_START succeeded
    uint32_t                  n_threads;
    uint32_t                  n_traces;
    uint64_t                  wait_usecs;  // time spent waiting for the NPU's answers (htp_session_wait_usecs)
    uint64_t                  vmem_size;
    uint64_t                  max_vmem;

    struct htp_map_target target;  // what buffers know of this session (set at SESSION_OPEN)

    struct htp_buffer * pinned;
    uint64_t            rsp_off, slots_off, slot_size, fences_off, codebooks_off;

    struct htp_opqueue    queue;
    struct htp_opbatch    batch;
    struct htp_fence_pool fences;
    uint32_t              fence_seq;

    int  last_error;
    char error[192];

    // Replay (htp_session_replay): the tables batch holds since its last
    // reset are those of the batch pushed as batch_name (0: none to replay,
    // e.g. ops were added since), built when the buffer epoch was batch_epoch.
    uint64_t batch_name;
    uint64_t batch_epoch;
    uint64_t names_given;  // the last name handed out

    bool                   have_rsp;
    struct htp_opbatch_rsp last_rsp;
    struct htp_prof_desc * last_prof;  // [batch_ops]
    uint32_t               n_last_prof;
    struct htp_pmu_info    pmu;          // what mode 2 counts (the NPU's answer to HTP_CTL_PROFILER)
    bool                   prof_broken;  // a read-back failed its check: profiles of this session are ignored

    // Multi-NPU group (htp_session_group_init): a leader owns the other
    // members' sessions; every batch goes to all of them, headed by
    // MDEV_GROUP, whose fence slots (one per member, the leader's first) are
    // group_slots in the leader's pinned buffer.
    struct htp_session *    members[HTP_SESSION_MAX_MEMBERS - 1];
    uint32_t                n_members;  // other members (0: not a group)
    struct htp_fence_slot * group_slots;
};

#endif  // HTP_SESSION_IMPL_H
