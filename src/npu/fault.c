// fault.c: GGML_HTP_FAULT in the NPU (fault.h).

#include "fault.h"

#include "npu-util.h"
#include "platform/platform.h"

static struct htp_fault_plan plan;  // all zero, nothing planned, until init

void htp_npu_fault_init(void) {
    const char * s = htp_plat_getenv("GGML_HTP_FAULT");
    char         why[160];
    if (htp_fault_plan_parse(&plan, s, why, sizeof why) != 0) {
        htp_npu_log("GGML_HTP_FAULT='%s' %s, using no fault injection", s, why);
    }
}

bool htp_npu_fault(enum htp_fault_site site) {
    const uint64_t call = htp_fault_plan_hit(&plan, site);
    if (call == 0) {
        return false;
    }
    htp_npu_log("GGML_HTP_FAULT: failing call %llu at %s", (unsigned long long)call, htp_fault_site_name(site));
    return true;
}
