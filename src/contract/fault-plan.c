// fault-plan.c: the GGML_HTP_FAULT grammar and call counting (fault-plan.h).

#include "fault-plan.h"

#include <stdio.h>
#include <string.h>

static const char * const site_names[HTP_FAULT_N_SITES] = {
    [HTP_FAULT_MEMFD] = "memfd",         [HTP_FAULT_FTRUNCATE] = "ftruncate",
    [HTP_FAULT_MMAP] = "mmap",           [HTP_FAULT_MAP_REQUEST] = "map-request",
    [HTP_FAULT_RING_PUSH] = "ring-push", [HTP_FAULT_FENCE_WAIT] = "fence-wait",
    [HTP_FAULT_NPU_MAP] = "npu-map",
};

const char * htp_fault_site_name(enum htp_fault_site site) {
    return (unsigned)site < HTP_FAULT_N_SITES ? site_names[site] : "?";
}

static void clear(struct htp_fault_plan * plan) {
    for (int i = 0; i < HTP_FAULT_N_SITES; i++) {
        plan->nth[i]  = 0;
        plan->from[i] = false;
        atomic_init(&plan->calls[i], 0);
    }
}

int htp_fault_plan_parse(struct htp_fault_plan * plan, const char * spec, char * why, size_t why_len) {
    clear(plan);
    for (const char * p = spec; p && *p;) {
        const char * colon = strchr(p, ':');
        const char * end   = strchr(p, ',');
        end                = end ? end : p + strlen(p);
        if (!colon || colon > end) {
            snprintf(why, why_len, "\"%.*s\" is not SITE:N", (int)(end - p), p);
            goto bad;
        }
        int site = -1;
        for (int i = 0; i < HTP_FAULT_N_SITES; i++) {
            if ((size_t)(colon - p) == strlen(site_names[i]) && strncmp(p, site_names[i], (size_t)(colon - p)) == 0) {
                site = i;
            }
        }
        if (site < 0) {
            snprintf(why, why_len,
                     "unknown site \"%.*s\" (memfd, ftruncate, mmap, map-request, ring-push, "
                     "fence-wait, npu-map)",
                     (int)(colon - p), p);
            goto bad;
        }
        uint64_t     n = 0;
        const char * d = colon + 1;
        for (; d < end && *d >= '0' && *d <= '9' && n < (UINT64_MAX - 9) / 10; d++) {
            n = n * 10 + (uint64_t)(*d - '0');
        }
        const bool from = d < end && *d == '+';
        if (d == colon + 1 || d + from != end || n == 0) {
            snprintf(why, why_len, "\"%.*s\": N must be a call number from 1, optionally followed by '+'",
                     (int)(end - p), p);
            goto bad;
        }
        plan->from[site] = from;
        plan->nth[site]  = n;
        p                = *end ? end + 1 : end;
        if (*end && !*p) {
            snprintf(why, why_len, "a trailing ','");
            goto bad;
        }
    }
    return 0;
bad:
    clear(plan);
    return -1;
}

uint64_t htp_fault_plan_hit(struct htp_fault_plan * plan, enum htp_fault_site site) {
    if (plan->nth[site] == 0) {
        return 0;
    }
    const uint64_t call = atomic_fetch_add_explicit(&plan->calls[site], 1, memory_order_relaxed) + 1;
    const bool     fail = plan->from[site] ? call >= plan->nth[site] : call == plan->nth[site];
    return fail ? call : 0;
}
