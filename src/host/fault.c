// fault.c: GGML_HTP_FAULT on the host (fault.h).

#include "fault.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "config-env.h"
#include "log.h"

static struct htp_fault_plan plan;
static pthread_once_t        plan_once = PTHREAD_ONCE_INIT;

static void read_plan(void) {
    const char * s = getenv("GGML_HTP_FAULT");
    char         why[160];
    if (htp_fault_plan_parse(&plan, s, why, sizeof why) != 0) {
        htp_config_env_warn("GGML_HTP_FAULT", s, strlen(s), why, "no fault injection");
    }
}

bool htp_fault(enum htp_fault_site site) {
    pthread_once(&plan_once, read_plan);
    const uint64_t call = htp_fault_plan_hit(&plan, site);
    if (call == 0) {
        return false;
    }
    HTP_LOG_WARN("ggml-htp: GGML_HTP_FAULT: failing call %llu at %s\n", (unsigned long long)call,
                 htp_fault_site_name(site));
    return true;
}
