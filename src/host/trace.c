// trace.c: the trace-event file (see trace.h).

#include "trace.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "ggml.h"
#include "log.h"
#include "opqueue.h"
#include "status.h"

#define MAX_NAMED 256  // (pid, tid) pairs whose names were written

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *          trace_file;
static int             trace_state;  // 0 not opened yet, 1 open, 2 closed or failed
static uint64_t        trace_events;
static struct { int pid, tid; } named[MAX_NAMED];
static int n_named;

static const char * trace_path(void) {
    const struct htp_config * cfg = htp_backend_config;
    return cfg && cfg->trace_path[0] ? cfg->trace_path : NULL;
}

int htp_trace_on(void) {
    return trace_path() != NULL && trace_state != 2;
}

static void close_locked(void) {
    if (trace_state == 1) {
        fputs("\n]}\n", trace_file);
        fclose(trace_file);
        HTP_VERBOSE("ggml-htp: trace: %llu events written to %s\n", (unsigned long long)trace_events, trace_path());
    }
    trace_file  = NULL;
    trace_state = 2;
}

static void close_at_exit(void) {
    htp_trace_close();
}

// Under trace_lock: the file, opened on first use. NULL when off or failed.
static FILE * file_locked(void) {
    if (trace_state == 0) {
        const char * path = trace_path();
        trace_file        = path ? fopen(path, "w") : NULL;
        if (!trace_file) {
            if (path) {
                HTP_LOG_ERROR("ggml-htp: GGML_HTP_TRACE: cannot write %s; no trace\n", path);
            }
            trace_state = 2;
            return NULL;
        }
        trace_state = 1;
        fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", trace_file);
        fprintf(trace_file,
                "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"host\"}}",
                (int)getpid());
        trace_events = 1;
        atexit(close_at_exit);
    }
    return trace_state == 1 ? trace_file : NULL;
}

// Start an event: the separator of the previous one.
static void begin_event(FILE * f) {
    fputs(",\n", f);
    trace_events++;
}

static void name_thread_locked(FILE * f, int pid, int tid, const char * fmt_name, int arg) {
    for (int i = 0; i < n_named; i++) {
        if (named[i].pid == pid && named[i].tid == tid) {
            return;
        }
    }
    if (n_named < MAX_NAMED) {
        named[n_named].pid = pid;
        named[n_named].tid = tid;
        n_named++;
    }
    char name[64];
    snprintf(name, sizeof name, fmt_name, arg);
    begin_event(f);
    fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"%s\"}}", pid, tid,
            name);
}

void htp_trace_span(const char * name, uint64_t t0_us, uint64_t t1_us) {
    if (!htp_trace_on()) {
        return;
    }
    const int pid = (int)getpid();
    const int tid = (int)syscall(SYS_gettid);
    pthread_mutex_lock(&trace_lock);
    FILE * f = file_locked();
    if (f) {
        name_thread_locked(f, pid, tid, "host thread %d", tid);
        begin_event(f);
        fprintf(f, "{\"ph\":\"X\",\"cat\":\"host\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":%llu,\"dur\":%llu}",
                name, pid, tid, (unsigned long long)t0_us, (unsigned long long)(t1_us > t0_us ? t1_us - t0_us : 0));
    }
    pthread_mutex_unlock(&trace_lock);
}

void htp_trace_counter(const char * name, uint64_t t_us, double value) {
    if (!htp_trace_on()) {
        return;
    }
    pthread_mutex_lock(&trace_lock);
    FILE * f = file_locked();
    if (f) {
        begin_event(f);
        fprintf(f, "{\"ph\":\"C\",\"name\":\"%s\",\"pid\":%d,\"tid\":0,\"ts\":%llu,\"args\":{\"%s\":%.3f}}", name,
                (int)getpid(), (unsigned long long)t_us, name, value);
    }
    pthread_mutex_unlock(&trace_lock);
}

static int n_backends;

void htp_trace_backend_opened(void) {
    pthread_mutex_lock(&trace_lock);
    n_backends++;
    pthread_mutex_unlock(&trace_lock);
}

void htp_trace_backend_freed(void) {
    pthread_mutex_lock(&trace_lock);
    if (n_backends > 0 && --n_backends == 0) {
        close_locked();
    }
    pthread_mutex_unlock(&trace_lock);
}

void htp_trace_close(void) {
    pthread_mutex_lock(&trace_lock);
    close_locked();
    pthread_mutex_unlock(&trace_lock);
}

// --- op cost ---

static const struct htp_tensor * tensor_of(const struct htp_tensor * tensors, uint32_t n, uint16_t idx) {
    return idx != HTP_NO_TENSOR && idx < n ? &tensors[idx] : NULL;
}

static uint64_t n_elements(const struct htp_tensor * t) {
    uint64_t n = 1;
    for (int d = 0; d < HTP_OP_MAX_DIMS; d++) {
        n *= t->ne[d] > 0 ? (uint64_t)t->ne[d] : 0;
    }
    return n;
}

// Bytes of t's elements packed (its extent in memory may be larger: views).
static uint64_t n_bytes(const struct htp_tensor * t) {
    if (t->type >= GGML_TYPE_COUNT || t->ne[0] <= 0 || ggml_blck_size((enum ggml_type)t->type) <= 0) {
        return t->size;
    }
    uint64_t rows = n_elements(t) / (uint64_t)t->ne[0];
    return (uint64_t)ggml_row_size((enum ggml_type)t->type, t->ne[0]) * rows;
}

void htp_trace_op_cost(const struct htp_op_desc * op, const struct htp_tensor * tensors, uint32_t n_tensors,
                       uint64_t * flops, uint64_t * bytes) {
    *flops = 0;
    *bytes = 0;
    for (int k = 0; k < HTP_OP_MAX_INPUTS; k++) {
        const struct htp_tensor * t = tensor_of(tensors, n_tensors, op->src[k]);
        *bytes += t ? n_bytes(t) : 0;
    }
    const struct htp_tensor * dst = NULL;
    for (int k = 0; k < HTP_OP_MAX_OUTPUTS; k++) {
        const struct htp_tensor * t = tensor_of(tensors, n_tensors, op->dst[k]);
        *bytes += t ? n_bytes(t) : 0;
        dst = dst ? dst : t;
    }
    const struct htp_tensor * s0 = tensor_of(tensors, n_tensors, op->src[0]);
    const struct htp_tensor * s1 = tensor_of(tensors, n_tensors, op->src[1]);
    const struct htp_tensor * s2 = tensor_of(tensors, n_tensors, op->src[2]);
    if (!dst) {
        return;
    }
    if (op->opcode == HTP_OP_SET_ROWS && s0) {
        // Rows of src0 read and written into dst, and the indices: not all of dst.
        *bytes = 2 * n_bytes(s0) + (s1 ? n_bytes(s1) : 0);
    } else if (op->opcode == HTP_OP_GET_ROWS && dst) {
        *bytes = 2 * n_bytes(dst) + (s1 ? n_bytes(s1) : 0);  // likewise: the rows taken, not all of src0
    }
    switch (op->opcode) {
        case HTP_OP_MUL_MAT:
        case HTP_OP_MUL_MAT_ID:
            *flops = s0 ? 2ull * (uint64_t)(s0->ne[0] > 0 ? s0->ne[0] : 0) * n_elements(dst) : 0;
            break;
        case HTP_OP_FLASH_ATTN_EXT:
            // q [D, n_q, H, B], k [D, n_kv, ...], v [Dv, n_kv, ...]
            if (s0 && s1 && s2) {
                uint64_t q = n_elements(s0) / (uint64_t)(s0->ne[0] > 0 ? s0->ne[0] : 1);
                *flops     = 2ull * q * (uint64_t)(s1->ne[1] > 0 ? s1->ne[1] : 0) *
                         (uint64_t)((s0->ne[0] > 0 ? s0->ne[0] : 0) + (s2->ne[0] > 0 ? s2->ne[0] : 0));
            }
            break;
        case HTP_OP_NOP:
        case HTP_OP_MDEV_GROUP:
        case HTP_OP_FENCE:
        case HTP_OP_CPY_FENCE:
        case HTP_OP_CPY:
        case HTP_OP_GET_ROWS:
        case HTP_OP_SET_ROWS:
        case HTP_OP_REPEAT:
        case HTP_OP_CONCAT:
        case HTP_OP_PAD:
            break;  // data movement: bytes only
        default:
            *flops = n_elements(dst);
            break;
    }
}

// --- NPU spans ---

static void op_args(FILE * f, const struct htp_opbatch_rsp * rsp, const struct htp_opqueue_prof * p, uint32_t i) {
    fprintf(f, "\"args\":{\"op\":%u,\"batch\":%llu", i, (unsigned long long)rsp->seq);
    if (p->ops && i < p->n_prof) {
        const struct htp_op_desc * op = &p->ops[i];
        const struct htp_tensor *  d  = tensor_of(p->tensors, p->n_tensors, op->dst[0]);
        if (op->opcode == HTP_OP_UNARY && op->params[0] >= 0 && op->params[0] < GGML_UNARY_OP_COUNT) {
            fprintf(f, ",\"sub\":\"%s\"", ggml_unary_op_name((enum ggml_unary_op)op->params[0]));
        } else if (op->opcode == HTP_OP_GLU && op->params[0] >= 0 && op->params[0] < GGML_GLU_OP_COUNT) {
            fprintf(f, ",\"sub\":\"%s\"", ggml_glu_op_name((enum ggml_glu_op)op->params[0]));
        }
        if (d) {
            fprintf(f, ",\"shape\":\"%lldx%lldx%lldx%lld\",\"type\":\"%s\"", (long long)d->ne[0], (long long)d->ne[1],
                    (long long)d->ne[2], (long long)d->ne[3],
                    d->type < GGML_TYPE_COUNT ? ggml_type_name((enum ggml_type)d->type) : "?");
        }
        const struct htp_tensor * s0 = tensor_of(p->tensors, p->n_tensors, op->src[0]);
        if (s0) {
            fprintf(f, ",\"src0\":\"%lldx%lldx%lldx%lld %s\"", (long long)s0->ne[0], (long long)s0->ne[1],
                    (long long)s0->ne[2], (long long)s0->ne[3],
                    s0->type < GGML_TYPE_COUNT ? ggml_type_name((enum ggml_type)s0->type) : "?");
        }
        uint64_t flops, bytes;
        htp_trace_op_cost(op, p->tensors, p->n_tensors, &flops, &bytes);
        fprintf(f, ",\"flops\":%llu,\"bytes\":%llu", (unsigned long long)flops, (unsigned long long)bytes);
    }
    if (p->prof && i < p->n_prof) {
        fprintf(f, ",\"status\":\"%s\"", htp_status_str((int)p->prof[i].status));
    }
    fputs("}}", f);
}

static void op_span(FILE * f, int pid, int tid, const struct htp_opbatch_rsp * rsp, const struct htp_opqueue_prof * p,
                    uint32_t i, uint64_t ts, uint64_t dur) {
    uint32_t opcode = p->ops && i < p->n_prof ? p->ops[i].opcode : p->prof && i < p->n_prof ? p->prof[i].opcode : 0;
    begin_event(f);
    fprintf(f, "{\"ph\":\"X\",\"cat\":\"npu\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":%llu,\"dur\":%llu,",
            htp_opqueue_op_name(opcode), pid, tid, (unsigned long long)ts, (unsigned long long)dur);
    op_args(f, rsp, p, i);
}

void htp_trace_batch(const char * session, int npu_pid, const struct htp_opbatch_rsp * rsp,
                     const struct htp_opqueue_prof * p) {
    if (!htp_trace_on() || rsp->start_us == 0) {
        return;
    }
    pthread_mutex_lock(&trace_lock);
    FILE * f = file_locked();
    if (!f) {
        pthread_mutex_unlock(&trace_lock);
        return;
    }
    // A process per NPU; its name once (the first session's name).
    int known = 0;
    for (int i = 0; i < n_named; i++) {
        known |= named[i].pid == npu_pid && named[i].tid == -1;
    }
    if (!known) {
        if (n_named < MAX_NAMED) {
            named[n_named].pid = npu_pid;
            named[n_named].tid = -1;
            n_named++;
        }
        begin_event(f);
        fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"htp-npu %s\"}}",
                npu_pid, session);
    }
    const uint32_t n_done = rsp->n_done < p->n_prof ? rsp->n_done + (rsp->status != HTP_STATUS_OK) : p->n_prof;
    if (p->trace) {
        const uint32_t n = rsp->n_traces < p->n_traces ? rsp->n_traces : p->n_traces;
        for (uint32_t t = 0; t < p->n_threads; t++) {
            uint32_t open_op = UINT32_MAX;
            uint64_t open_ts = 0;
            for (uint32_t k = 0; k < n; k++) {
                const struct htp_trace_desc * e = &p->trace[(uint64_t)t * p->n_traces + k];
                if (e->event == 0) {
                    break;
                }
                if (e->event == HTP_TRACE_EVT_OP_BEGIN) {
                    open_op = e->op;
                    open_ts = e->usecs;
                } else if (e->event == HTP_TRACE_EVT_OP_END && e->op == open_op && e->op < p->n_prof &&
                           e->usecs >= open_ts) {
                    name_thread_locked(f, npu_pid, (int)t, t ? "NPU worker %d" : "NPU worker %d (session)", (int)t);
                    op_span(f, npu_pid, (int)t, rsp, p, e->op, rsp->start_us + open_ts, e->usecs - open_ts);
                    open_op = UINT32_MAX;
                }
            }
        }
    } else if (p->prof) {
        // No per-thread events: the ops back to back from the batch's start.
        name_thread_locked(f, npu_pid, 0, "NPU worker %d (session)", 0);
        uint64_t ts = rsp->start_us;
        for (uint32_t i = 0; i < n_done && i < p->n_prof; i++) {
            op_span(f, npu_pid, 0, rsp, p, i, ts, p->prof[i].usecs);
            ts += p->prof[i].usecs;
        }
    }
    pthread_mutex_unlock(&trace_lock);
}
