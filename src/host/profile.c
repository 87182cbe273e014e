// profile.c: logging a batch's profile read-back (see profile.h).

#include "profile.h"

#include "log.h"
#include "status.h"

void htp_profile_log_ops(const char * name, const struct htp_opbatch_rsp * rsp, const struct htp_prof_desc * prof,
                         uint32_t n) {
    HTP_LOG_DEBUG("ggml-htp: %s profile-batch #%llu: n-ops %u done %u status %s usec %llu cycles %llu\n", name,
                  (unsigned long long)rsp->seq, rsp->n_ops, rsp->n_done, htp_status_str((int)rsp->status),
                  (unsigned long long)rsp->usecs, (unsigned long long)rsp->cycles);
    for (uint32_t i = 0; i < n; i++) {
        HTP_LOG_DEBUG("ggml-htp: %s profile-op #%u %s: usec %llu cycles %llu threads %u status %s\n", name, i,
                      htp_opqueue_op_name(prof[i].opcode), (unsigned long long)prof[i].usecs,
                      (unsigned long long)prof[i].cycles, prof[i].n_threads, htp_status_str((int)prof[i].status));
    }
}

void htp_profile_log_trace(const char * name, const struct htp_opbatch_rsp * rsp, const struct htp_opqueue_prof * p) {
    static const char * evt[] = {"?", "op-begin", "op-end", "fence"};
    // The NPU says how many events each thread wrote; never read past what we reserved.
    uint32_t n = rsp->n_traces < p->n_traces ? rsp->n_traces : p->n_traces;
    for (uint32_t t = 0; t < p->n_threads; t++) {
        for (uint32_t i = 0; i < n; i++) {
            const struct htp_trace_desc * e = &p->trace[(uint64_t)t * p->n_traces + i];
            if (e->event == 0) {
                break;  // fewer events on this thread (the area starts zeroed)
            }
            HTP_LOG_DEBUG("ggml-htp: %s trace-evt #%llu thread %u: %s op %u at %llu us\n", name,
                          (unsigned long long)rsp->seq, t, e->event < 4 ? evt[e->event] : "?", e->op,
                          (unsigned long long)e->usecs);
        }
    }
}
