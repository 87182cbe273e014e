// session-vmem.c: the VA-window probe (see session-vmem.h). Mapping until
// a map fails is the only way to learn what the NPU's window really takes:
// its allocator, alignment and own mappings all cut into the nominal size.

#include "session-vmem.h"

#include "buffer.h"
#include "log.h"
#include "session-error.h"
#include "session-impl.h"
#include "status.h"

int htp_session_measure_vmem(struct htp_session * sess, uint64_t * bytes) {
    const uint64_t      MiB  = 1024 * 1024;
    const uint64_t      big  = 1024 * MiB;
    const uint64_t      step = 256 * MiB;
    struct htp_buffer * bufs[64];
    uint32_t            n = 0, n_big = 0;
    uint64_t            total = 0;
    int                 rc    = 0;
    // Three 1 GiB buffers, then 256 MiB ones (the reference's probe). Unlike
    // the reference, a window too small for 1 GiB is still measured in steps.
    // Sizes include the guard page, so the window's own rounding is measured too.
    while (n < sizeof bufs / sizeof bufs[0]) {
        uint64_t size = n_big < 3 ? big : step;
        rc            = htp_buffer_alloc(&sess->target, (size_t)(size - HTP_PAGE_SIZE), 0, &bufs[n]);
        if (rc != 0) {
            break;  // the host ran out first: measure what was mapped
        }
        rc = htp_buffer_try_map(bufs[n], &sess->target);
        if (rc != 0) {
            htp_buffer_unref(bufs[n]);
            if (size == big && rc != HTP_STATUS_NPU_DEAD && rc != HTP_STATUS_PROTOCOL) {
                n_big = 3;  // no room for another 1 GiB: go on in steps
                continue;
            }
            break;
        }
        n++;
        n_big += size == big;
        total += size;
    }
    for (uint32_t i = 0; i < n; i++) {
        htp_buffer_unref(bufs[i]);  // unmaps it
    }
    if (rc == HTP_STATUS_NPU_DEAD || rc == HTP_STATUS_PROTOCOL) {
        return htp_session_npu_died(sess);
    }
    if (total == 0) {
        HTP_LOG_ERROR("ggml-htp: %s: not even %llu MiB of VA window could be mapped\n", sess->params.name,
                      (unsigned long long)(step / MiB));
        return HTP_STATUS_NO_MEMORY;
    }
    *bytes = total > step ? total - step : total;
    return 0;
}
