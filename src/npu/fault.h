// fault.h: the NPU's fault-injection site (contract/fault-plan.h): the same
// GGML_HTP_FAULT as the host's, inherited, read once at start-up.

#ifndef HTP_NPU_FAULT_H
#define HTP_NPU_FAULT_H

#include <stdbool.h>

#include "contract/fault-plan.h"

// Read GGML_HTP_FAULT (a malformed value is logged and plans nothing).
void htp_npu_fault_init(void);

// Count a call at site; true (logged) when it is the call that must fail.
bool htp_npu_fault(enum htp_fault_site site);

#endif  // HTP_NPU_FAULT_H
