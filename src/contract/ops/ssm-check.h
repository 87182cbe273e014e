// ssm-check.h: the scratch plan of GATED_DELTA_NET, which its check and its
// kernel share.

#ifndef HTP_CONTRACT_SSM_CHECK_H
#define HTP_CONTRACT_SSM_CHECK_H

#include <stddef.h>
#include <stdint.h>

// Scratch bytes one worker uses for heads of size S with K state snapshots:
// the decay row, and the running state when snapshots are kept (K > 1).
size_t htp_gdn_slice_bytes(int64_t S, int64_t K);

#endif  // HTP_CONTRACT_SSM_CHECK_H
