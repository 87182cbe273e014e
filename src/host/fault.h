// fault.h: the host's fault-injection sites (contract/fault-plan.h), read
// from GGML_HTP_FAULT once per process. Test-only: unset, no call fails.

#ifndef HTP_HOST_FAULT_H
#define HTP_HOST_FAULT_H

#include <stdbool.h>

#include "contract/fault-plan.h"

// Count a call at site; true (logged) when it is the call that must fail.
// The caller then fails the way the real call would.
bool htp_fault(enum htp_fault_site site);

#endif  // HTP_HOST_FAULT_H
