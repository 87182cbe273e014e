// fault-plan.h: test-only fault injection, SQLite style. GGML_HTP_FAULT names
// sites and, for each, the call that fails:
//
//     GGML_HTP_FAULT=SITE:N[+][,SITE:N[+]...]     e.g. "memfd:2,npu-map:1+"
//
// The N-th call (counting from 1, per process) at SITE fails as the real call
// would; the calls before and after it do not, unless N is followed by '+':
// then every call from the N-th on fails (a persistent fault). Host and NPU read the same
// variable (the NPU inherits it) and each acts on its own sites. A malformed
// value is refused as a whole: nothing is injected and the error says why.

#ifndef HTP_CONTRACT_FAULT_PLAN_H
#define HTP_CONTRACT_FAULT_PLAN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum htp_fault_site {
    HTP_FAULT_MEMFD,        // host: memfd_create of a buffer
    HTP_FAULT_FTRUNCATE,    // host: sizing a buffer's memfd
    HTP_FAULT_MMAP,         // host: mapping a buffer into the host
    HTP_FAULT_MAP_REQUEST,  // host: the request mapping a buffer into an NPU session
    HTP_FAULT_RING_PUSH,    // host: pushing a batch onto a session's request ring
    HTP_FAULT_FENCE_WAIT,   // host: waiting for a fence (an event's synchronize)
    HTP_FAULT_NPU_MAP,      // NPU: mapping a buffer into its VA window
    HTP_FAULT_N_SITES
};

// The site's name in GGML_HTP_FAULT ("memfd", "npu-map", ...).
const char * htp_fault_site_name(enum htp_fault_site site);

struct htp_fault_plan {
    uint64_t         nth[HTP_FAULT_N_SITES];    // the (first) call that fails; 0: none
    bool             from[HTP_FAULT_N_SITES];   // and every later one
    _Atomic uint64_t calls[HTP_FAULT_N_SITES];  // calls made so far
};

// Parse spec (NULL or "" plans nothing). 0 on success; -1 with the plan
// empty and why[] saying what is wrong.
int htp_fault_plan_parse(struct htp_fault_plan * plan, const char * spec, char * why, size_t why_len);

// Count a call at site; its number (from 1) when it must fail, else 0.
uint64_t htp_fault_plan_hit(struct htp_fault_plan * plan, enum htp_fault_site site);

#endif  // HTP_CONTRACT_FAULT_PLAN_H
