// session-params.c: a session's default parameters (see session-params.h).

#include "session-params.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "proto/htp-proto.h"

// GGML_HTP_MMAP_STACKING: 1 (default) or 0, read once. Only measurements turn
// stacking off (htp-bench vmem shows what it buys).
static bool env_mmap_stacking(void) {
    static _Atomic int cached = -1;  // -1 unread, else 0 / 1
    // Relaxed: every thread computes the same value from the same environment.
    int v = atomic_load_explicit(&cached, memory_order_relaxed);
    if (v < 0) {
        const char * e = getenv("GGML_HTP_MMAP_STACKING");
        v              = 1;
        if (e && strcmp(e, "0") == 0) {
            v = 0;
        } else if (e && e[0] && strcmp(e, "1") != 0) {
            HTP_LOG_WARN("ggml-htp: GGML_HTP_MMAP_STACKING='%s' is not 0 or 1, using 1\n", e);
        }
        atomic_store_explicit(&cached, v, memory_order_relaxed);
    }
    return v != 0;
}

void htp_session_params_default(struct htp_session_params * p, uint32_t phys_idx, uint32_t virt_idx) {
    memset(p, 0, sizeof *p);
    p->phys_idx = phys_idx;
    p->virt_idx = virt_idx;
    if (virt_idx) {
        snprintf(p->name, sizeof p->name, "HTP%u:%u", phys_idx, virt_idx);
    } else {
        snprintf(p->name, sizeof p->name, "HTP%u", phys_idx);
    }
    p->batch_ops     = HTP_OP_DEFAULT_OPS;
    p->queue_depth   = HTP_QUEUE_DEPTH;
    p->n_traces      = 0;
    p->n_fences      = 512;
    p->mmap_stacking = env_mmap_stacking();
}
