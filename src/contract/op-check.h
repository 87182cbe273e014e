// op-check.h: may the NPU run this op? The one check both sides run: the NPU
// on every op of a batch before any of it runs, the host in supports_op on
// the descriptor it would send.

#ifndef HTP_CONTRACT_OP_CHECK_H
#define HTP_CONTRACT_OP_CHECK_H

#include "op-call.h"

// Check call against its op family's rules (contract/ops/op-checks.h).
// Returns HTP_STATUS_OK, HTP_STATUS_INVAL_PARAMS, HTP_STATUS_NO_SUPPORT (also
// for an op code no kernel runs) or HTP_STATUS_VTCM_TOO_SMALL.
int htp_op_check(const struct htp_op_call * call);

#endif  // HTP_CONTRACT_OP_CHECK_H
