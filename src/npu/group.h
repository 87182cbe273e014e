// group.h: multi-NPU group execution of one batch (group.c): a ggml device
// backed by several physical NPUs sends each of them the same batch, headed by
// MDEV_GROUP, and they split its work.

#ifndef HTP_NPU_GROUP_H
#define HTP_NPU_GROUP_H

#include <stdatomic.h>
#include <stdint.h>

#include "ops/kernel-iface.h"

// The batch core calls begin at the batch's leading MDEV_GROUP op, then
// run_op for every other op (this member's share of it, then the group
// barrier), and fail if it stops early for another reason. All return enum
// htp_status.
struct htp_group {
    struct htp_tensor_view   slots;   // the group's fence slots, one per member
    uint32_t                 member;  // this NPU's index in the group
    uint32_t                 count;   // members
    uint32_t                 base;    // own slot's seq at batch start
    uint32_t                 k;       // barriers passed in this batch
    uint32_t                 n_ops;   // ops of the batch (bounds the barriers)
    const _Atomic uint32_t * cancel;  // the op context's (fence waits give up once it is set)
};
int  htp_group_begin(struct htp_group * g, const struct htp_op_ctx * ctx, uint32_t n_ops);
int  htp_group_run_op(struct htp_group * g, struct htp_op_ctx * ctx);
void htp_group_fail(struct htp_group * g, int status);

#endif  // HTP_NPU_GROUP_H
