// batch.c: validate an op batch from a queue slot into private tables, then
// run it. See batch.h for the two-step design (copy, then check the copy, so
// the host cannot change a descriptor between our check and our use).

#include "batch.h"

#include <stdlib.h>
#include <string.h>

#include "npu-util.h"
#include "platform/platform.h"
#include "contract/op-check.h"
#include "group.h"
#include "ops/kernel-iface.h"

int htp_batch_init(struct htp_batch * b) {
    memset(b, 0, sizeof(*b));
    b->tensors = malloc(sizeof(*b->tensors) * HTP_OP_MAX_TENSORS);
    b->ops     = malloc(sizeof(*b->ops) * HTP_OP_MAX_OPS);
    b->views   = malloc(sizeof(*b->views) * HTP_OP_MAX_TENSORS);
    if (b->tensors == NULL || b->ops == NULL || b->views == NULL) {
        htp_batch_free(b);
        return HTP_STATUS_NO_MEMORY;
    }
    return HTP_STATUS_OK;
}

void htp_batch_free(struct htp_batch * b) {
    free(b->tensors);
    free(b->ops);
    free(b->views);
    memset(b, 0, sizeof(*b));
}

// Operand view of tensor index idx (HTP_NO_TENSOR -> NULL). Indices were checked.
static const struct htp_tensor_view * view_of(const struct htp_batch * b, uint16_t idx) {
    return idx == HTP_NO_TENSOR ? NULL : &b->views[idx];
}

// --- worker dispatch as seen by kernels (ctx->run / ctx->pool) ---

// An op touching fewer bytes than this (its operands' extents together) runs
// all its slices on the calling thread: a pool dispatch and join cost about a
// microsecond (htp-bench opcost), more than two workers save on it. The
// norms, adds, ropes and copies of a small model's decode are of this size,
// and so are the 1B model's one-row adds and norms (2048 floats: 24 KiB). On
// 2 cores of an AMD EPYC (Zen 5), the opcost ADD of 24 KiB took 1.99-2.83 us
// an op through the pool (a 16 KiB limit), 0.98-1.56 us on the caller.
#define HTP_SMALL_OP_BYTES (32 * 1024)

struct run_ctx {
    struct htp_batch *           b;
    const struct htp_batch_env * env;
    uint32_t                     nth;        // workers for this op
    uint32_t                     lanes;      // trace areas of the slot (workers of the layout)
    int                          on_caller;  // a small op: every slice on the calling thread
    uint32_t                     op;         // op index (trace events)
    int                          trace;      // write trace events
    int                          pmu;        // count PMU events (mode 2)
    int                          pooled;     // ctx->run was called
    htp_job_fn                   job;        // the kernel's job while observed
    void *                       arg;
};

static void trace_event(struct htp_batch * b, uint32_t thread, uint32_t op, uint16_t event) {
    uint32_t k = b->n_trace[thread];
    if (k >= b->req.n_traces) {
        return;  // this thread's share of the trace area is full
    }
    struct htp_trace_desc e = {
        .usecs  = htp_plat_now_us() - b->t_start,
        .op     = op,
        .event  = event,
        .thread = (uint16_t)thread,
    };
    memcpy(b->slot + b->layout.trace + ((uint64_t)thread * b->req.n_traces + k) * sizeof(e), &e, sizeof(e));
    b->n_trace[thread] = k + 1;
}

// A slice under the profiler: trace events and PMU counts go to the worker
// that runs it. The calling worker's are taken around the whole op by the
// batch loop, so its slices are not observed twice. A helper beyond the
// slot's trace areas (a session with fewer workers than the pool) has no
// trace events.
static void observed_job(void * arg, uint32_t ith, uint32_t nth) {
    struct run_ctx * rc = arg;
    const uint32_t   w  = htp_pool_slice_worker(rc->env->pool, ith);
    if (w == 0 || w >= HTP_MAX_NTHREADS) {
        rc->job(rc->arg, ith, nth);
        return;
    }
    uint64_t v0[HTP_PMU_SLOTS], v1[HTP_PMU_SLOTS];
    uint32_t m = rc->pmu ? htp_pmu_sample(htp_pmu_helper(w), rc->env->pmu_packed, v0) : 0;
    if (rc->trace && w < rc->lanes) {
        trace_event(rc->b, w, rc->op, HTP_TRACE_EVT_OP_BEGIN);
    }
    rc->job(rc->arg, ith, nth);
    if (rc->trace && w < rc->lanes) {
        trace_event(rc->b, w, rc->op, HTP_TRACE_EVT_OP_END);
    }
    if (m != 0) {
        m &= htp_pmu_sample(htp_pmu_helper(w), rc->env->pmu_packed, v1);
        for (uint32_t k = 0; k < HTP_PMU_SLOTS; k++) {
            if (m >> k & 1u) {
                rc->b->pmu_acc[w][k] += v1[k] - v0[k];
            }
        }
    }
}

static void batch_run(void * p, htp_job_fn job, void * arg) {
    struct run_ctx * rc = p;
    rc->pooled          = 1;
    if (rc->env->pool == NULL || rc->on_caller) {
        for (uint32_t i = 0; i < rc->nth; i++) {
            job(arg, i, rc->nth);
        }
        return;
    }
    if (rc->trace || rc->pmu) {
        rc->job = job;
        rc->arg = arg;
        htp_pool_run(rc->env->pool, rc->nth, observed_job, rc);
    } else {
        htp_pool_run(rc->env->pool, rc->nth, job, arg);
    }
}

static uint32_t op_threads(const struct htp_batch_env * env) {
    uint32_t n = env->n_threads;
    if (env->pool != NULL && n > env->pool->n_threads) {
        n = env->pool->n_threads;
    }
    if (n > HTP_MAX_NTHREADS) {
        n = HTP_MAX_NTHREADS;
    }
    return n == 0 ? 1 : n;
}

static void make_ctx(struct htp_batch * b, const struct htp_batch_env * env, uint32_t i, struct run_ctx * rc,
                     struct htp_op_ctx * ctx) {
    const struct htp_op_desc * op = &b->ops[i];
    memset(ctx, 0, sizeof(*ctx));
    ctx->op.desc = op;
    for (int k = 0; k < HTP_OP_MAX_INPUTS; k++) {
        ctx->op.src[k] = view_of(b, op->src[k]);
    }
    for (int k = 0; k < HTP_OP_MAX_OUTPUTS; k++) {
        ctx->op.dst[k] = view_of(b, op->dst[k]);
    }
    ctx->op.n_threads = rc->nth;
    uint64_t bytes    = 0;
    for (int k = 0; k < HTP_OP_MAX_INPUTS; k++) {
        bytes += ctx->op.src[k] ? ctx->op.src[k]->extent : 0;
    }
    for (int k = 0; k < HTP_OP_MAX_OUTPUTS; k++) {
        bytes += ctx->op.dst[k] ? ctx->op.dst[k]->extent : 0;
    }
    rc->on_caller     = bytes < HTP_SMALL_OP_BYTES;
    ctx->vtcm         = env->vtcm;
    ctx->op.vtcm_size = env->vtcm_size;
    ctx->options      = env->options;
    ctx->codebooks    = env->codebooks;
    ctx->iq_codes     = env->iq_codes;
    ctx->run          = batch_run;
    ctx->pool         = rc;
    ctx->cancel       = env->cancel;
}

// --- validation ---

int htp_batch_validate(struct htp_batch * b, const struct htp_batch_env * env, const struct htp_opbatch_req * req) {
    b->req                           = *req;
    b->bad_op                        = req->n_ops;
    b->slot                          = NULL;
    const struct htp_opbatch_req * r = &b->req;

    // 1. Counts and slot layout.
    if (r->slot >= env->depth || r->n_bufs > HTP_OP_MAX_BUFS || r->n_tensors > HTP_OP_MAX_TENSORS ||
        r->n_ops > HTP_OP_MAX_OPS || r->n_traces > HTP_MAX_TRACES) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    // Counts are bounded above, so the layout arithmetic cannot overflow.
    b->layout = htp_slot_layout(r->n_bufs, r->n_tensors, r->n_ops, op_threads(env), r->n_traces);
    if (b->layout.end > env->slot_size) {
        return HTP_STATUS_INVAL_PARAMS;
    }
    b->slot = env->slots + (uint64_t)r->slot * env->slot_size;

    // 2. Private copies (after this, the slot's tables are not read again),
    // unless the slot holds the tables we checked last time: then those
    // copies, and the views and checks made of them, stand. The host may
    // write the slot after the comparison; we never read its tables again.
    // Relaxed: an unmap, the one change that could void the views, waits for
    // the running batch (the session's busy lock, which we hold), and a map
    // adds an entry without moving the others.
    const uint64_t maps = env->maps_moved ? atomic_load_explicit(env->maps_moved, memory_order_relaxed) : 0;
    if (b->checked && env->maps_moved && maps == b->checked_maps && r->n_bufs == b->checked_bufs &&
        r->n_tensors == b->checked_tensors && r->n_ops == b->checked_ops &&
        memcmp(b->bufs, b->slot + b->layout.bufs, sizeof(*b->bufs) * r->n_bufs) == 0 &&
        memcmp(b->tensors, b->slot + b->layout.tensors, sizeof(*b->tensors) * r->n_tensors) == 0 &&
        memcmp(b->ops, b->slot + b->layout.ops, sizeof(*b->ops) * r->n_ops) == 0) {
        return HTP_STATUS_OK;
    }
    b->checked = 0;
    memcpy(b->bufs, b->slot + b->layout.bufs, sizeof(*b->bufs) * r->n_bufs);
    memcpy(b->tensors, b->slot + b->layout.tensors, sizeof(*b->tensors) * r->n_tensors);
    memcpy(b->ops, b->slot + b->layout.ops, sizeof(*b->ops) * r->n_ops);

    // 3a. Buffers: mapped in this session, with the size they were mapped with.
    for (uint32_t i = 0; i < r->n_bufs; i++) {
        if (env->lookup(env->lookup_arg, b->bufs[i].fd, &b->maps[i]) != HTP_STATUS_OK ||
            b->maps[i].size != b->bufs[i].size || b->maps[i].size < HTP_PAGE_SIZE) {
            return HTP_STATUS_INVAL_PARAMS;
        }
    }

    // 3b. Tensors: inside their buffer, short of its guard page.
    for (uint32_t i = 0; i < r->n_tensors; i++) {
        const struct htp_tensor * t = &b->tensors[i];
        struct htp_tensor_view *  v = &b->views[i];
        uint64_t                  end;
        if (t->bi >= r->n_bufs || t->data > b->maps[t->bi].size - HTP_PAGE_SIZE ||
            htp_tensor_view_init(v, t, b->maps[t->bi].addr + t->data) != HTP_STATUS_OK ||
            __builtin_add_overflow(t->data, v->extent, &end) || end > b->maps[t->bi].size - HTP_PAGE_SIZE) {
            return HTP_STATUS_INVAL_PARAMS;
        }
    }

    // 3c. Ops: known codes, operands in range, then the op's own check.
    for (uint32_t i = 0; i < r->n_ops; i++) {
        const struct htp_op_desc * op = &b->ops[i];
        // MDEV_GROUP heads a group's batch and nowhere else (control-ops.c).
        if (op->opcode == HTP_OP_INVALID || op->opcode >= HTP_OP_COUNT ||
            op->flags != htp_op_required_flags(op->opcode) || (op->opcode == HTP_OP_MDEV_GROUP && i != 0)) {
            b->bad_op = i;
            return HTP_STATUS_INVAL_PARAMS;
        }
        for (int k = 0; k < HTP_OP_MAX_INPUTS; k++) {
            if (op->src[k] != HTP_NO_TENSOR && op->src[k] >= r->n_tensors) {
                b->bad_op = i;
                return HTP_STATUS_INVAL_PARAMS;
            }
        }
        for (int k = 0; k < HTP_OP_MAX_OUTPUTS; k++) {
            if (op->dst[k] != HTP_NO_TENSOR && op->dst[k] >= r->n_tensors) {
                b->bad_op = i;
                return HTP_STATUS_INVAL_PARAMS;
            }
        }
    }
    for (uint32_t i = 0; i < r->n_ops; i++) {
        struct run_ctx    rc = {.b = b, .env = env, .nth = op_threads(env), .op = i};
        struct htp_op_ctx ctx;
        make_ctx(b, env, i, &rc, &ctx);
        int st = htp_op_check(&ctx.op);
        if (st != HTP_STATUS_OK) {
            b->bad_op = i;
            return st;
        }
    }
    b->checked         = 1;
    b->checked_bufs    = r->n_bufs;
    b->checked_tensors = r->n_tensors;
    b->checked_ops     = r->n_ops;
    b->checked_maps    = maps;
    return HTP_STATUS_OK;
}

// --- execution ---

int htp_batch_execute(struct htp_batch * b, const struct htp_batch_env * env, struct htp_opbatch_rsp * rsp) {
    uint64_t                       t0     = htp_plat_now_us();
    uint64_t                       c0     = htp_plat_cycles();
    const struct htp_opbatch_req * r      = &b->req;
    uint32_t                       nth    = op_threads(env);
    int                            trace  = env->prof_mode == 3 && r->n_traces > 0;
    int                            pmu    = env->prof_mode == 2 && env->pmu_packed != 0 && env->pmu_caller != NULL;
    int                            status = HTP_STATUS_OK;
    uint32_t                       done   = 0;

    b->t_start = t0;
    memset(b->n_trace, 0, sizeof(b->n_trace));

    // A group's batch: this NPU runs its share of each op (group.c).
    struct htp_group group;
    int              grouped = r->n_ops > 0 && b->ops[0].opcode == HTP_OP_MDEV_GROUP;

    for (; done < r->n_ops; done++) {
        struct run_ctx    rc = {.b = b, .env = env, .nth = nth, .lanes = nth, .op = done, .trace = trace, .pmu = pmu};
        struct htp_op_ctx ctx;
        make_ctx(b, env, done, &rc, &ctx);

        uint64_t pv0[HTP_PMU_SLOTS], pv1[HTP_PMU_SLOTS];
        uint32_t pmask = 0;
        if (pmu) {
            memset(b->pmu_acc, 0, sizeof(b->pmu_acc));
            pmask = htp_pmu_sample(env->pmu_caller, env->pmu_packed, pv0);
        }
        if (trace) {
            trace_event(b, 0, done, HTP_TRACE_EVT_OP_BEGIN);
        }
        uint64_t ot = htp_plat_now_us();
        uint64_t oc = htp_plat_cycles();
        int      st;
        if (!grouped) {
            st = htp_kernel_run(&ctx);
        } else if (done == 0) {
            st = htp_group_begin(&group, &ctx, r->n_ops);
        } else {
            st = htp_group_run_op(&group, &ctx);
        }
        struct htp_prof_desc pd = {
            .usecs     = htp_plat_now_us() - ot,
            .cycles    = htp_plat_cycles() - oc,
            .opcode    = b->ops[done].opcode,
            .status    = (uint32_t)st,
            .n_threads = rc.pooled && !rc.on_caller ? nth : 1,
            .engine    = ctx.engine,
        };
        if (trace) {
            trace_event(b, 0, done, HTP_TRACE_EVT_OP_END);
        }
        if (pmask != 0) {
            pmask &= htp_pmu_sample(env->pmu_caller, env->pmu_packed, pv1);
            pd.pmu_mask = pmask;
            for (uint32_t k = 0; k < HTP_PMU_SLOTS; k++) {
                if (pmask >> k & 1u) {
                    uint64_t sum = pv1[k] - pv0[k];
                    for (uint32_t w = 1; w < HTP_MAX_NTHREADS; w++) {
                        sum += b->pmu_acc[w][k];
                    }
                    pd.pmu[k] = sum;
                }
            }
        }
        memcpy(b->slot + b->layout.prof + (uint64_t)done * sizeof(pd), &pd, sizeof(pd));
        if (st != HTP_STATUS_OK) {
            status = st;
            if (grouped && done > 0) {
                htp_group_fail(&group, st);
            }
            break;
        }
    }
    // Ops that did not run: zeroed profile entries (a slot is reused).
    if (done < r->n_ops) {
        uint32_t first = done + 1;
        memset(b->slot + b->layout.prof + (uint64_t)first * sizeof(struct htp_prof_desc), 0,
               (uint64_t)(r->n_ops - first) * sizeof(struct htp_prof_desc));
    }

    uint32_t n_traces = 0;
    if (trace) {
        // Unused trace entries are zeroed (event 0 marks a thread's end).
        for (uint32_t t = 0; t < nth; t++) {
            uint32_t n = b->n_trace[t];
            if (n > n_traces) {
                n_traces = n;
            }
            memset(b->slot + b->layout.trace + ((uint64_t)t * r->n_traces + n) * sizeof(struct htp_trace_desc), 0,
                   (uint64_t)(r->n_traces - n) * sizeof(struct htp_trace_desc));
        }
    }

    memset(rsp, 0, sizeof(*rsp));
    rsp->seq       = r->seq;
    rsp->status    = (uint32_t)status;
    rsp->n_bufs    = r->n_bufs;
    rsp->n_tensors = r->n_tensors;
    rsp->n_ops     = r->n_ops;
    rsp->n_done    = done;
    rsp->n_traces  = n_traces;
    rsp->start_us  = t0;
    rsp->usecs     = htp_plat_now_us() - t0;
    rsp->cycles    = htp_plat_cycles() - c0;
    return status;
}

int htp_batch_process(struct htp_batch * b, const struct htp_batch_env * env, const struct htp_opbatch_req * req,
                      struct htp_opbatch_rsp * rsp) {
    uint64_t t0 = htp_plat_now_us();
    uint64_t c0 = htp_plat_cycles();
    int      st = htp_batch_validate(b, env, req);
    if (st == HTP_STATUS_OK) {
        htp_batch_execute(b, env, rsp);
    } else {
        memset(rsp, 0, sizeof(*rsp));
        rsp->seq       = req->seq;
        rsp->status    = (uint32_t)st;
        rsp->n_bufs    = req->n_bufs;
        rsp->n_tensors = req->n_tensors;
        rsp->n_ops     = req->n_ops;
        rsp->n_done    = 0;
    }
    rsp->usecs  = htp_plat_now_us() - t0;
    rsp->cycles = htp_plat_cycles() - c0;
    return (int)rsp->status;
}
