// htp-proto.h: the wire protocol between libggml-htp (host) and an NPU
// (htp-npu, or a Hexagon cDSP). The one header both sides include.
//
// Two channels connect a host to an NPU process:
//
//   control  a SOCK_SEQPACKET socket. Synchronous: one struct htp_ctl_req, one
//            struct htp_ctl_rsp back. File descriptors (buffers to map) travel
//            beside a request as SCM_RIGHTS.
//   queue    per session, two rings (requests, responses) in the session's
//            pinned shared buffer; see htp-ring.h. A request names a slot of the
//            op-queue area of that same buffer, which holds the batch:
//
//              struct htp_buf_desc   bufs[n_bufs];       -- host writes
//              struct htp_tensor     tensors[n_tensors]; -- host writes
//              struct htp_op_desc    ops[n_ops];         -- host writes
//              struct htp_prof_desc  prof[n_ops];        -- NPU writes back (PMU counts inside)
//              struct htp_trace_desc trace[n_threads * n_traces]; -- NPU writes back
//
// Every integer is fixed width and little endian; structs carry explicit padding
// and are multiples of 8 bytes; nothing on the wire is a pointer (buffer base
// addresses are the host's, for logs only). The NPU trusts none of it: every
// count, index, offset, stride and type is checked before a batch runs.
//
// Changing any layout here changes the protocol: bump HTP_PROTO_VERSION.

#ifndef HTP_PROTO_H
#define HTP_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define HTP_PROTO_VERSION 7

// ---------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------

#define HTP_OP_MAX_BUFS         16    // buffers per batch
#define HTP_OP_MAX_TENSORS      8192  // tensors per batch
#define HTP_OP_MAX_OPS          8192  // ops per batch (hard limit)
#define HTP_OP_DEFAULT_OPS      2048  // ops per batch (default, GGML_HEXAGON_OPBATCH)
#define HTP_OP_MAX_INPUTS       10    // source operands of one op (fused ops use several)
#define HTP_OP_MAX_OUTPUTS      2     // destination operands of one op
#define HTP_OP_MAX_DIMS         4
#define HTP_OP_PARAMS_SIZE      64  // bytes of ggml op_params carried per op
#define HTP_QUEUE_DEPTH         8   // batches in flight per session (default, GGML_HEXAGON_OPQUEUE)
#define HTP_QUEUE_MAX_DEPTH     64
#define HTP_MAX_NTHREADS        10             // NPU worker threads
#define HTP_MAX_SESSIONS        16             // sessions per NPU process
#define HTP_MAX_TRACES          4096           // trace events per thread per batch
#define HTP_FENCE_SLOT_SIZE     64             // bytes; one cache line each
#define HTP_PAGE_SIZE           4096           // mapping granularity and guard page size
#define HTP_VMEM_DEFAULT        3355443200ull  // VA window per session (GGML_HEXAGON_VMEM)
#define HTP_NO_TENSOR           0xffff         // unused src/dst entry of an op
#define HTP_ALLREDUCE_MAX_RANKS 4              // ranks (NPUs) one ALLREDUCE sums over
#define HTP_GROUP_MAX_MEMBERS   16             // NPUs of one MDEV_GROUP
#define HTP_PMU_SLOTS           8              // PMU counters per op (profiling mode 2)

// ---------------------------------------------------------------------------
// Status codes: answers of control requests, batches and ops
// ---------------------------------------------------------------------------

enum htp_status {
    HTP_STATUS_OK             = 0,
    HTP_STATUS_NO_SUPPORT     = 1,  // op code, type or shape this NPU cannot run
    HTP_STATUS_INVAL_PARAMS   = 2,  // a descriptor failed validation; nothing ran
    HTP_STATUS_VTCM_TOO_SMALL = 3,  // the op's working set does not fit the scratch area
    HTP_STATUS_INTERNAL_ERR   = 4,  // the NPU failed (fault in a kernel, fence timeout, ...)
    HTP_STATUS_NO_MEMORY      = 5,  // a mapping does not fit the VA window, or allocation failed
    HTP_STATUS_NO_SESSION     = 6,  // control request names no open session
    HTP_STATUS_VERSION        = 7,  // protocol version mismatch at hello
};

// ---------------------------------------------------------------------------
// Op codes
// ---------------------------------------------------------------------------

enum htp_op_code {
    HTP_OP_INVALID = 0,

    // Control ops: no ggml counterpart.
    HTP_OP_NOP,         // does nothing (tests, round-trip benchmarks)
    HTP_OP_MDEV_GROUP,  // heads a batch of a multi-NPU group; params[0] = member index, src[0] = group fence slots
    HTP_OP_FENCE,       // src[0] = fence slot; params[0] = seq; params[1] = 0 wait until seq reached, 1 signal seq
    HTP_OP_CPY_FENCE,   // copy src[0] -> dst[0], then signal fence src[1] with params[0] = seq
    HTP_OP_ALLREDUCE,   // in-place sum over n ranks (NPUs), one op per rank; layout below

    // ggml ops.
    HTP_OP_CPY,  // dst[0] = src[0] converted to dst's type (CPY, CONT, DUP)
    HTP_OP_ADD,
    HTP_OP_SUB,
    HTP_OP_MUL,
    HTP_OP_DIV,
    HTP_OP_ADD_ID,
    HTP_OP_SCALE,
    HTP_OP_CLAMP,
    HTP_OP_SQR,
    HTP_OP_SQRT,
    HTP_OP_SUM_ROWS,
    HTP_OP_NORM,
    HTP_OP_L2_NORM,
    HTP_OP_RMS_NORM,
    HTP_OP_SOFT_MAX,
    HTP_OP_ROPE,
    HTP_OP_MUL_MAT,
    HTP_OP_MUL_MAT_ID,
    HTP_OP_GET_ROWS,
    HTP_OP_SET_ROWS,
    HTP_OP_UNARY,  // params[0] = enum ggml_unary_op
    HTP_OP_GLU,    // params[0] = enum ggml_glu_op, params[1] = swapped
    HTP_OP_FLASH_ATTN_EXT,
    HTP_OP_REPEAT,
    HTP_OP_ARGSORT,
    HTP_OP_SSM_CONV,
    HTP_OP_GATED_DELTA_NET,
    HTP_OP_CUMSUM,
    HTP_OP_CONCAT,
    HTP_OP_FILL,
    HTP_OP_DIAG,
    HTP_OP_SOLVE_TRI,
    HTP_OP_TRI,
    HTP_OP_PAD,
    HTP_OP_IM2COL,
    HTP_OP_TOP_K,  // src[0] F32 [n, ...] -> dst[0] I32 [k, ...]: the indices of each row's k largest (no params)

    // Fused ops: several ggml nodes in one descriptor (layouts below). Each
    // carries HTP_OP_FLAG_FUSED, and only these may.
    HTP_OP_RMS_NORM_MUL,     // RMS_NORM then MUL by a broadcast operand
    HTP_OP_MUL_MAT_ADD,      // MUL_MAT then ADD of a broadcast operand, in the matmul's row store
    HTP_OP_MUL_MAT_QKV,      // three MUL_MATs of one activation tensor (attention's Q, K, V)
    HTP_OP_MUL_MAT_FFN,      // two MUL_MATs of one activation tensor (the FFN's gate and up)
    HTP_OP_MUL_MAT_FFN_GLU,  // ... and the SWIGLU of the two, their only reader

    HTP_OP_COUNT
};

// htp_op_desc.flags.
enum htp_op_flags {
    HTP_OP_FLAG_FUSED = 1 << 0,  // the op is one of the fused codes (required on them, refused elsewhere)
};

// Fused op layouts. The host fuses a run of nodes only where each absorbed
// intermediate has no other reader (so it is never written) and the fused
// op's check passes (shapes, types, scratch); params are the first node's.
//
// HTP_OP_RMS_NORM_MUL   dst[0] = RMS_NORM(src[0]) * src[1]
//   src[0]  x [ne0, ne1, ne2, ne3], F32/F16/BF16, any strides
//   src[1]  w, F32/F16/BF16, any strides, tiled over x (each ne of x a
//           multiple of w's: ggml's broadcast), either operand of the MUL
//   dst[0]  the MUL's result, x's shape, F32/F16/BF16, may alias src[0]
//   params[0] eps (float, >= 0), as RMS_NORM. The normalised row is kept in
//   F32 (as ggml's F32 intermediate) and multiplied before it is stored.
//
// HTP_OP_MUL_MAT_ADD    dst[0] = MUL_MAT(src[0], src[1]) + src[2]
//   src[0], src[1]  as HTP_OP_MUL_MAT (weights, activations)
//   src[2]  the ADD's other operand, F32, any strides, tiled over the
//           matmul's result [M, N, ne12, ne13] (ggml's broadcast; bias or residual)
//   dst[0]  the ADD's result: F32, the matmul's shape, may alias src[2]
//   The sum is formed as each output row is stored: out + src[2] element.
//
// HTP_OP_MUL_MAT_QKV (n = 3), HTP_OP_MUL_MAT_FFN (n = 2): n MUL_MATs sharing src1
//   src[0 .. n-1]  the weights W_i, each as MUL_MAT's src0 against x
//   src[n]         x, the activations all n read (as MUL_MAT's src1)
//   dst[0], dst[1] W_0 x, W_1 x (as MUL_MAT's dst)
//   src[4]         QKV only: W_2 x, an output written through a source slot
//                  (as ALLREDUCE does; the op has HTP_OP_MAX_OUTPUTS dsts)
//   The activations are quantized once for all n weights. No result is
//   absorbed: the host fuses adjacent matmuls of the same src1 tensor (not
//   two views of it) whose outputs overlap none of the inputs.
//
// HTP_OP_MUL_MAT_FFN_GLU   dst[0] = SWIGLU(W_0 x, W_1 x) = silu(W_0 x) * (W_1 x)
//   src[0], src[1]  gate and up weights: one shape, tiled, of one type: a K-quant or
//                   one with quantized activations (Q4_0 .. Q2_0, not BF16)
//   src[2]          x, as MUL_MAT_FFN
//   dst[0]          the GLU's result: F32, the products' shape
//   params          the GLU's: params[0] = HTP_GLU_SWIGLU, params[1] = 0
//   Neither product is stored: each tile of gate and up rows meets in the
//   store of the GLU's rows.

// HTP_OP_ALLREDUCE operands (n = n_ranks, 2..HTP_ALLREDUCE_MAX_RANKS; every rank's op names the same
// tensors and slots, in rank order):
//   src[0 .. n-1]   each rank's tensor: F32 or F16, one type, packed, equal
//                   element counts. The op reads all of them and writes sums
//                   into all of them (through these operands).
//   src[n .. 2n-1]  each rank's fence slot (one slot; rank r's lives in rank r's
//                   pinned buffer and only rank r signals it)
//   dst[0]          this rank's tensor (the same bytes as src[rank])
//   params[0] seq_entry  signalled once this rank's tensor is complete; the op
//                        waits until every slot has it
//   params[1] seq_exit   signalled (with the op's status) once this rank's sums
//                        are written; the op waits until every slot has it
//   params[2] rank, params[3] n
//   params[4] mode       1 reduce-scatter: rank r sums the r-th of n slices;
//                        0 root: rank 0 sums everything, the others only sync
// Each element is summed in F32 in rank order and stored to every rank.
// A group's MDEV_GROUP op (src[0] = n slots, one per member; params[0] =
// member) makes the members split each op of the batch (see the NPU's
// group.c).

// ---------------------------------------------------------------------------
// Type codes: equal to enum ggml_type (checked on the host with static asserts;
// the NPU does not include ggml).
// ---------------------------------------------------------------------------

enum htp_type {
    HTP_TYPE_F32     = 0,
    HTP_TYPE_F16     = 1,
    HTP_TYPE_Q4_0    = 2,
    HTP_TYPE_Q4_1    = 3,
    HTP_TYPE_Q5_0    = 6,
    HTP_TYPE_Q5_1    = 7,
    HTP_TYPE_Q8_0    = 8,
    HTP_TYPE_Q2_K    = 10,
    HTP_TYPE_Q3_K    = 11,
    HTP_TYPE_Q4_K    = 12,
    HTP_TYPE_Q5_K    = 13,
    HTP_TYPE_Q6_K    = 14,
    HTP_TYPE_IQ2_XXS = 16,
    HTP_TYPE_IQ2_XS  = 17,
    HTP_TYPE_IQ3_XXS = 18,
    HTP_TYPE_IQ1_S   = 19,
    HTP_TYPE_IQ4_NL  = 20,
    HTP_TYPE_IQ3_S   = 21,
    HTP_TYPE_IQ2_S   = 22,
    HTP_TYPE_IQ4_XS  = 23,
    HTP_TYPE_I8      = 24,
    HTP_TYPE_I16     = 25,
    HTP_TYPE_I32     = 26,
    HTP_TYPE_I64     = 27,
    HTP_TYPE_IQ1_M   = 29,
    HTP_TYPE_BF16    = 30,
    HTP_TYPE_MXFP4   = 39,
    HTP_TYPE_NVFP4   = 40,
    HTP_TYPE_Q1_0    = 41,
    HTP_TYPE_Q2_0    = 42,
    HTP_TYPE_COUNT   = 43,  // one past the largest code the NPU knows
};

// ---------------------------------------------------------------------------
// Buffer descriptor: one per buffer a batch touches. The NPU looks the buffer
// up by fd in the session's map table (filled by HTP_CTL_MAP).
// ---------------------------------------------------------------------------

enum htp_buf_flags {
    HTP_BUF_EXTENDED = 1 << 0,  // mapped outside the VA window (DMA64, weights when arch > v79)
    HTP_BUF_PINNED   = 1 << 1,  // the session's pinned buffer (rings, op-queue slots, fences)
    HTP_BUF_EAGER    = 1 << 2,  // HTP_CTL_MAP only: populate the pages now, not on first access
                                // (the host's retry of a failed extended map, FastRPC's eager mode)
};

struct htp_buf_desc {
    uint64_t base;   // host address of the buffer (logs only; never dereferenced by the NPU)
    uint64_t size;   // bytes, including the trailing guard page
    int32_t  fd;     // host fd number: the key the buffer was mapped under
    uint32_t flags;  // HTP_BUF_*
};

// ---------------------------------------------------------------------------
// Tensor descriptor. Strides are signed so that a negative or wrapped value
// fails validation instead of being read as a huge offset.
// ---------------------------------------------------------------------------

enum htp_tensor_flags {
    HTP_TENSOR_WEIGHT = 1 << 0,  // lives in a weight buffer
    HTP_TENSOR_TILED  = 1 << 1,  // data is in the repacked tiled layout (contract/tiled.h)
    HTP_TENSOR_FENCE  = 1 << 2,  // a run of fence slots (type I8, ne[0] = HTP_FENCE_SLOT_SIZE)
};

struct htp_tensor {
    uint64_t data;                 // byte offset of element 0 within buffer bi
    uint64_t size;                 // bytes the tensor spans (host's figure; the NPU recomputes)
    int64_t  ne[HTP_OP_MAX_DIMS];  // elements per dimension (ne[0] innermost)
    int64_t  nb[HTP_OP_MAX_DIMS];  // stride in bytes per dimension (nb[0] = element or block size)
    uint32_t type;                 // enum htp_type (= enum ggml_type)
    uint32_t flags;                // HTP_TENSOR_*
    uint16_t bi;                   // index into the batch's buffer table
    uint16_t pad0;
    uint32_t pad1;
};

// ---------------------------------------------------------------------------
// Op descriptor. src/dst are indices into the batch's tensor table.
// ---------------------------------------------------------------------------

struct htp_op_desc {
    uint32_t opcode;                          // enum htp_op_code
    uint32_t flags;                           // enum htp_op_flags: HTP_OP_FLAG_FUSED on fused codes, else 0
    uint16_t src[HTP_OP_MAX_INPUTS];          // tensor indices, HTP_NO_TENSOR when unused
    uint16_t dst[HTP_OP_MAX_OUTPUTS];         // tensor indices, HTP_NO_TENSOR when unused
    int32_t  params[HTP_OP_PARAMS_SIZE / 4];  // ggml op_params of the node, verbatim
};

// ---------------------------------------------------------------------------
// Profile and trace descriptors, written by the NPU after the op descriptors.
// ---------------------------------------------------------------------------

// Compute units. The DSP has vector units (HVX) and a matrix unit (HMX); the
// software NPU stands in for HMX with its matrix-matrix micro-kernels, those
// that meet several columns (MUL_MAT, MUL_MAT_ID) or several query rows
// (FLASH_ATTN_EXT) with each weight / K load, and for HVX with its
// matrix-vector ones (one column, one query row per load). Which ops may use
// HMX is a session option (htp_session_option); a kernel takes HMX where its
// op has more than one column / row per work item and uses HVX otherwise.
enum htp_unit {
    HTP_UNIT_NONE = 0,  // the op has no engine choice (every op but the three above)
    HTP_UNIT_HVX  = 1,
    HTP_UNIT_HMX  = 2,
};

// htp_prof_desc.engine: how the op ran: enum htp_unit in the low byte, flags above it.
#define HTP_ENGINE_UNIT_MASK 0xffu
#define HTP_ENGINE_KV_SPLIT  (1u << 8)  // FLASH_ATTN_EXT cut its KV sequence into chunks across workers

// What one PMU slot counts: the NPU's answer to HTP_CTL_PROFILER (struct
// htp_pmu_info) names one of these per slot. The first group are hardware
// events (perf's generic events on Linux); the second, the OS's software
// events, which the NPU falls back to where the hardware has no PMU.
enum htp_pmu_counter {
    HTP_PMU_OFF = 0,           // slot unused: its count stays 0
    HTP_PMU_INSTRUCTIONS,      // instructions retired
    HTP_PMU_CYCLES,            // CPU cycles
    HTP_PMU_CACHE_REFS,        // last-level cache references
    HTP_PMU_CACHE_MISSES,      // last-level cache misses
    HTP_PMU_BRANCHES,          // branch instructions
    HTP_PMU_BRANCH_MISSES,     // mispredicted branches
    HTP_PMU_STALLED_FRONTEND,  // cycles the front end issued nothing
    HTP_PMU_STALLED_BACKEND,   // cycles the back end was stalled
    HTP_PMU_TASK_CLOCK_NS,     // software: nanoseconds the thread ran on a CPU
    HTP_PMU_CONTEXT_SWITCHES,  // software: context switches of the thread
    HTP_PMU_CPU_MIGRATIONS,    // software: moves to another CPU
    HTP_PMU_PAGE_FAULTS,       // software: page faults (minor and major)
    HTP_PMU_MINOR_FAULTS,      // software: faults served without I/O
    HTP_PMU_MAJOR_FAULTS,      // software: faults that needed I/O
    HTP_PMU_HEXAGON_EVENT,     // a Hexagon PMU event, the slot's event number programmed verbatim (cDSP)
    HTP_PMU_COUNTER_COUNT
};

// Why the NPU counts less than was asked (struct htp_pmu_info.reason).
enum htp_pmu_reason {
    HTP_PMU_REASON_OK = 0,       // every slot asked for counts a hardware event
    HTP_PMU_REASON_NO_HARDWARE,  // this machine has no PMU for some or all slots (perf: ENOENT, EOPNOTSUPP)
    HTP_PMU_REASON_DENIED,       // the OS refuses counters (perf_event_paranoid: EACCES, EPERM)
    HTP_PMU_REASON_UNAVAILABLE,  // the platform has no counter interface (the Hexagon build, other errors)
};

// Per-op profile. pmu[] is written in mode 2 only: the deltas of the slots
// in pmu_mask over the op, summed over the workers that ran a slice of it
// (the calling worker's count covers the whole op, dispatch and join
// included; a helper's covers its slices). Slots outside pmu_mask are 0.
struct htp_prof_desc {
    uint64_t usecs;               // wall time of the op
    uint64_t cycles;              // CPU cycles of the op (timestamp counter; 0 where unavailable)
    uint32_t opcode;              // echo of the op's code
    uint32_t status;              // enum htp_status of the op (ops after a failure stay 0 / not run)
    uint32_t n_threads;           // workers the op was split across
    uint32_t pmu_mask;            // bit k: pmu[k] holds a count (a subset of htp_pmu_info.mask)
    uint32_t engine;              // HTP_ENGINE_*: unit and flags (0 for ops without a choice), every mode
    uint32_t pad;                 // 0
    uint64_t pmu[HTP_PMU_SLOTS];  // counter deltas, slot k counting htp_pmu_info.counter[k]
};

enum htp_trace_event {
    HTP_TRACE_EVT_OP_BEGIN = 1,  // a worker starts its slice of an op
    HTP_TRACE_EVT_OP_END   = 2,  // ... and ends it
    HTP_TRACE_EVT_FENCE    = 3,  // a fence wait or signal completed
};

struct htp_trace_desc {
    uint64_t usecs;   // time since the batch started (htp_opbatch_rsp.start_us)
    uint32_t op;      // op index within the batch
    uint16_t event;   // enum htp_trace_event
    uint16_t thread;  // worker index
};

// ---------------------------------------------------------------------------
// Queue packets: what travels through the request and response rings.
// ---------------------------------------------------------------------------

// order is the host's device-wide submission number: the host numbers the
// batches it pushes to all sessions of one physical NPU from one counter, so a
// push that happens before another gets the smaller number. The NPU runs its
// sessions' batches one at a time, never one while a batch with a smaller
// order waits in (or was taken from) another session's ring; ties go to the
// lower session id. That makes "sessions of one NPU run in FIFO order" mean
// push order, not the order in which the NPU's queue readers woke up.
struct htp_opbatch_req {
    uint64_t seq;        // batch sequence number, 1, 2, 3, ... per session
    uint64_t order;      // device-wide submission number (see above)
    uint32_t slot;       // op-queue slot holding the descriptors (< depth)
    uint32_t n_bufs;     // <= HTP_OP_MAX_BUFS
    uint32_t n_tensors;  // <= HTP_OP_MAX_TENSORS
    uint32_t n_ops;      // <= HTP_OP_MAX_OPS
    uint32_t n_traces;   // trace events reserved per thread (0 = no tracing)
    uint32_t flags;      // reserved, 0
};

struct htp_opbatch_rsp {
    uint64_t seq;     // echo of the request's seq
    uint32_t status;  // enum htp_status of the batch (first failing op's status)
    uint32_t n_bufs;  // echo of the request's counts (so the host can find prof[])
    uint32_t n_tensors;
    uint32_t n_ops;     // ops the batch held
    uint32_t n_done;    // ops that ran (== n_ops on success; index of the failed op otherwise)
    uint32_t n_traces;  // trace events written per thread
    uint64_t usecs;     // wall time of the batch, validation included
    uint64_t cycles;    // cycles of the batch
    uint64_t start_us;  // when the ops began to run, on the NPU's monotonic clock (htp_plat_now_us):
                        // trace events are relative to it. On Linux, and under qemu-hexagon, that
                        // is CLOCK_MONOTONIC, the host's clock too. 0 when validation failed.
};

// ---------------------------------------------------------------------------
// Fence slot: HTP_FENCE_SLOT_SIZE bytes in a pinned buffer. The NPU writes
// status with relaxed order and then seq with release order; a reader loads
// seq with acquire order and then status. Sequence numbers wrap; compare with
// (int32_t) (seq - want) >= 0.
// ---------------------------------------------------------------------------

struct htp_fence_slot {
    uint32_t seq;     // last sequence number signalled
    uint32_t status;  // enum htp_status of the op that signalled it
    uint8_t  pad[HTP_FENCE_SLOT_SIZE - 8];
};

// ---------------------------------------------------------------------------
// Control channel. Each request gets exactly one response with the same type.
// ---------------------------------------------------------------------------

enum htp_ctl_type {
    HTP_CTL_HELLO = 1,      // in: version.              out: status, hw
    HTP_CTL_SESSION_OPEN,   // in: virt_idx, n_threads, vtcm_size, vmem_size.  out: session
    HTP_CTL_SESSION_CLOSE,  // in: session
    HTP_CTL_MAP,            // in: session, fd (key), size, flags; the memfd as SCM_RIGHTS. out: vmem
    HTP_CTL_UNMAP,          // in: session, fd (key).    out: vmem
    HTP_CTL_QUEUE_START,    // in: session, queue.       the pinned buffer must be mapped
    HTP_CTL_QUEUE_STOP,     // in: session
    HTP_CTL_PROFILER,       // in: session, mode (0 off, 1 basic, 2 pmu, 3 trace), events. out: pmu
    HTP_CTL_VMEM_INFO,      // in: session.              out: vmem
    HTP_CTL_COUNT
};

// Session options (htp_ctl_req.u.open.options): what a session's kernels must
// not do. 0 is the default, every engine where it suits; the NPU refuses
// unknown bits (HTP_STATUS_INVAL_PARAMS) and, with no HMX (hw.n_hmx == 0),
// runs every op on HVX whatever the bits say.
enum htp_session_option {
    HTP_SESSION_MM_NO_HMX   = 1u << 0,  // MUL_MAT / MUL_MAT_ID on HVX only (GGML_HEXAGON_NHMX=0, _MM_SELECT=1)
    HTP_SESSION_FA_NO_HMX   = 1u << 1,  // FLASH_ATTN_EXT on HVX only (GGML_HEXAGON_NHMX=0, _FA_SELECT=1)
    HTP_SESSION_FA_NO_SPLIT = 1u << 2,  // FLASH_ATTN_EXT never cuts its KV sequence (GGML_HEXAGON_FA_SPLIT=0)
};
#define HTP_SESSION_OPTIONS_ALL 0x7u  // every bit the NPU knows

// Hardware description returned by hello.
struct htp_hw_info {
    uint32_t arch;       // Hexagon architecture version (73, 75, 79, 81); the software NPU says 79
    uint32_t n_threads;  // worker threads this NPU runs
    uint32_t n_hvx;      // vector units
    uint32_t n_hmx;      // matrix units
    uint64_t vtcm_size;  // bytes of scratch ("VTCM") per session
    uint64_t vmem_size;  // default VA window per session
    uint32_t page_size;  // mapping granularity (>= HTP_PAGE_SIZE): a buffer takes
                         // htp_window_bytes(size, page_size) of a window (contract/window.h)
    uint32_t pad;
    char     name[24];  // "htp-npu" or a device name, NUL terminated
};

// State of a session's VA window.
struct htp_vmem_info {
    uint64_t size;          // window bytes
    uint64_t used;          // bytes mapped inside it (guard pages included)
    uint64_t largest_free;  // largest free range
    uint32_t n_holes;       // free ranges between mappings (not counting the tail)
    uint32_t n_maps;        // buffers mapped in the window
    uint32_t n_extended;    // buffers mapped outside it
    uint32_t pad;
};

// The answer to HTP_CTL_PROFILER: what mode 2 counts on this NPU. The NPU
// tries the hardware counters first; where none opens it counts software
// events instead, and where those fail too it runs mode 1 (mode says which).
struct htp_pmu_info {
    uint32_t mode;    // mode in force (2 may have become 1)
    uint32_t mask;    // bit k: slot k counts counter[k]
    uint32_t reason;  // enum htp_pmu_reason: why fewer than asked (OK otherwise)
    uint32_t pad;
    uint32_t counter[HTP_PMU_SLOTS];  // enum htp_pmu_counter per slot (HTP_PMU_OFF outside mask)
};

// Where the rings and slots live in the pinned buffer (offsets from its start).
struct htp_queue_desc {
    int32_t  fd;            // key of the pinned buffer (already mapped with HTP_BUF_PINNED)
    uint32_t depth;         // slots (and ring entries), <= HTP_QUEUE_MAX_DEPTH, power of two
    uint64_t req_ring_off;  // struct htp_ring (requests, host -> NPU)
    uint64_t rsp_ring_off;  // struct htp_ring (responses, NPU -> host)
    uint64_t slots_off;     // first op-queue slot
    uint64_t slot_size;     // bytes per slot
    uint32_t poll;          // 1: the NPU polls the request ring instead of sleeping on the futex
    uint32_t pad;
    uint64_t codebooks_off;  // struct htp_codebooks (contract/codebooks.h), 8-aligned; 0: none (the
                             // NPU copies and checks it here; IQ1/IQ2/IQ3 kernels refuse to run without)
};

struct htp_ctl_req {
    uint32_t type;     // enum htp_ctl_type
    uint32_t session;  // session id from SESSION_OPEN (ignored by HELLO / SESSION_OPEN)
    union {
        struct {
            uint32_t version;
            uint32_t pad;
        } hello;
        struct {
            uint32_t virt_idx;   // which virtual session of this NPU (HTP0:<v>)
            uint32_t n_threads;  // workers wanted (0 = all)
            uint64_t vtcm_size;  // scratch bytes wanted (0 = default)
            uint64_t vmem_size;  // VA window bytes (0 = default)
            uint32_t options;    // enum htp_session_option bits (0 = every engine where it suits)
            uint32_t pad;        // 0
        } open;
        struct {
            int32_t  fd;     // the host's fd number, the key for later references
            uint32_t flags;  // HTP_BUF_*
            uint64_t size;   // bytes to map (whole memfd, guard page included)
        } map;
        struct htp_queue_desc queue;
        struct {
            uint32_t mode;
            uint32_t n_events;               // 0, or HTP_PMU_SLOTS: events[] holds the user's numbers
            uint32_t events[HTP_PMU_SLOTS];  // GGML_HEXAGON_PROFILE's PMU event numbers (0: slot off)
        } profiler;
        uint8_t raw[56];
    } u;
};

struct htp_ctl_rsp {
    uint32_t type;    // echo of the request's type
    uint32_t status;  // enum htp_status
    union {
        struct {
            uint32_t           version;
            uint32_t           pad;
            struct htp_hw_info hw;
        } hello;
        struct {
            uint32_t session;
            uint32_t pad;
        } open;
        struct htp_vmem_info vmem;
        struct htp_pmu_info  pmu;
        uint8_t              raw[80];
    } u;
};

// ---------------------------------------------------------------------------
// Layout checks. A failure here means the two sides would disagree.
// ---------------------------------------------------------------------------

_Static_assert(sizeof(struct htp_buf_desc) == 24, "htp_buf_desc layout");
_Static_assert(sizeof(struct htp_tensor) == 96, "htp_tensor layout");
_Static_assert(offsetof(struct htp_tensor, ne) == 16, "htp_tensor.ne offset");
_Static_assert(offsetof(struct htp_tensor, nb) == 48, "htp_tensor.nb offset");
_Static_assert(offsetof(struct htp_tensor, type) == 80, "htp_tensor.type offset");
_Static_assert(offsetof(struct htp_tensor, bi) == 88, "htp_tensor.bi offset");
_Static_assert(offsetof(struct htp_op_desc, src) == 8, "htp_op_desc.src offset");
_Static_assert(offsetof(struct htp_op_desc, params) == 32, "htp_op_desc.params offset");
_Static_assert(sizeof(struct htp_op_desc) == 96, "htp_op_desc layout");
_Static_assert(sizeof(struct htp_prof_desc) == 104, "htp_prof_desc layout");
_Static_assert(offsetof(struct htp_prof_desc, pmu) == 40, "htp_prof_desc.pmu offset");
_Static_assert(HTP_PMU_COUNTER_COUNT <= 16, "htp_pmu_counter fits 4 bits (the NPU packs 8 slots in a word)");
_Static_assert(sizeof(struct htp_trace_desc) == 16, "htp_trace_desc layout");
_Static_assert(sizeof(struct htp_opbatch_req) == 40, "htp_opbatch_req layout");
_Static_assert(sizeof(struct htp_opbatch_rsp) == 56, "htp_opbatch_rsp layout");
_Static_assert(sizeof(struct htp_fence_slot) == HTP_FENCE_SLOT_SIZE, "htp_fence_slot layout");
_Static_assert(sizeof(struct htp_hw_info) == 64, "htp_hw_info layout");
_Static_assert(sizeof(struct htp_queue_desc) == 56, "htp_queue_desc layout (fits htp_ctl_req.u.raw)");
_Static_assert(sizeof(struct htp_vmem_info) == 40, "htp_vmem_info layout");
_Static_assert(sizeof(struct htp_pmu_info) == 48, "htp_pmu_info layout");
_Static_assert(offsetof(struct htp_prof_desc, engine) == 32, "htp_prof_desc.engine offset");
_Static_assert(offsetof(struct htp_ctl_req, u.open.options) == 32, "htp_ctl_req.u.open.options offset");
_Static_assert(sizeof(struct htp_ctl_req) == 64, "htp_ctl_req layout");
_Static_assert(sizeof(struct htp_ctl_rsp) == 88, "htp_ctl_rsp layout");

// Bytes of one op-queue slot able to hold a batch of n_ops ops run by n_threads
// workers with n_traces trace events each: the layout in the header comment.
static inline uint64_t htp_slot_size(uint32_t n_ops, uint32_t n_threads, uint32_t n_traces) {
    uint64_t n_tensors = (uint64_t)n_ops * 4 + HTP_OP_MAX_INPUTS + HTP_OP_MAX_OUTPUTS;
    if (n_tensors > HTP_OP_MAX_TENSORS) {
        n_tensors = HTP_OP_MAX_TENSORS;
    }
    return sizeof(struct htp_buf_desc) * HTP_OP_MAX_BUFS + sizeof(struct htp_tensor) * n_tensors +
           sizeof(struct htp_op_desc) * n_ops + sizeof(struct htp_prof_desc) * n_ops +
           sizeof(struct htp_trace_desc) * (uint64_t)n_threads * n_traces;
}

// Byte offsets of each table within a slot for a batch with these counts.
struct htp_slot_layout {
    uint64_t bufs, tensors, ops, prof, trace, end;
};

static inline struct htp_slot_layout htp_slot_layout(uint32_t n_bufs, uint32_t n_tensors, uint32_t n_ops,
                                                     uint32_t n_threads, uint32_t n_traces) {
    struct htp_slot_layout l;
    l.bufs    = 0;
    l.tensors = l.bufs + sizeof(struct htp_buf_desc) * (uint64_t)n_bufs;
    l.ops     = l.tensors + sizeof(struct htp_tensor) * (uint64_t)n_tensors;
    l.prof    = l.ops + sizeof(struct htp_op_desc) * (uint64_t)n_ops;
    l.trace   = l.prof + sizeof(struct htp_prof_desc) * (uint64_t)n_ops;
    l.end     = l.trace + sizeof(struct htp_trace_desc) * (uint64_t)n_threads * n_traces;
    return l;
}

// The flags an op code must carry (the NPU refuses any other value).
static inline uint32_t htp_op_required_flags(uint32_t opcode) {
    return opcode == HTP_OP_RMS_NORM_MUL || opcode == HTP_OP_MUL_MAT_ADD || opcode == HTP_OP_MUL_MAT_QKV ||
                   opcode == HTP_OP_MUL_MAT_FFN || opcode == HTP_OP_MUL_MAT_FFN_GLU
               ? HTP_OP_FLAG_FUSED
               : 0;
}

#endif  // HTP_PROTO_H
