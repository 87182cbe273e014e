// matmul-check.h: MUL_MAT and MUL_MAT_ID as their checks read them and their
// kernels plan them, for every weight type.
//
//   MUL_MAT     src0 [K, M, ne02, ne03]  src1 [K, N, ne12, ne13] F32/F16/BF16  dst [M, N, ne12, ne13] F32
//               (src0 broadcast over dims 2-3: ne12 % ne02 == 0, ne13 % ne03 == 0)
//   MUL_MAT_ID  src0 [K, M, E]           src1 [K, ne11, T]   src2 ids I32 [U, T]   dst [M, U, T] F32
//               dst[:, s, t] = src0[:, :, ids[s, t]] x src1[:, s % ne11, t]
//
// Three kernels share the work, by weight type (htp_mm_engine_of):
//   FLOAT   F32/F16 weights under MUL_MAT: f32 dot products; activations that
//           are not packed aligned F32 rows are staged into scratch, one
//           column block per worker.
//   QUANT   Q4_0, Q4_1, Q8_0, IQ4_NL, MXFP4, Q5_0, Q5_1 (tiled or plain) and BF16 under
//           MUL_MAT, and those plus F32/F16 under MUL_MAT_ID: activations are
//           quantized into scratch (QUANT_ACT_BLOCK bytes per 32 values) and
//           meet the weights in integer dot products.
//   KQUANT  Q4_K, Q5_K, Q6_K (tiled or plain): activations quantized per 256
//           into Q8_K blocks (KQUANT_ACT_BLOCK bytes).
// Each plan below says how the scratch area is cut; an op whose smallest
// working set does not fit answers HTP_STATUS_VTCM_TOO_SMALL.

#ifndef HTP_CONTRACT_MATMUL_CHECK_H
#define HTP_CONTRACT_MATMUL_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "contract/op-call.h"
#include "contract/tiled.h"

enum htp_mm_engine {
    HTP_MM_NONE = 0,  // no kernel for this weight type
    HTP_MM_FLOAT,
    HTP_MM_QUANT,
    HTP_MM_KQUANT,
    HTP_MM_IQ,  // IQ codebook weights (contract/iq-tiles.h): the K-quant kernels' driver, decoded tiles
};

// Which kernel runs weights of this type (op: HTP_OP_MUL_MAT or HTP_OP_MUL_MAT_ID).
enum htp_mm_engine htp_mm_engine_of(uint32_t opcode, uint32_t weight_type);

// --- FLOAT: columns per tile ---

#define HTP_MM_CB 16  // columns per tile (at most)

// Columns per tile given the scratch (0: not even one staged column per
// worker fits); *slice = staging bytes per worker (0 when src1 is read in place).
int64_t htp_mm_plan_float(const struct htp_tensor_view * src1, uint32_t n_threads, size_t vtcm_size, size_t * slice);

// The same plan when the columns of K elements are staged whatever their
// layout (room for K floats a column).
int64_t htp_mm_plan_staged(int64_t K, uint32_t n_threads, size_t vtcm_size, size_t * slice);

// src1 must be staged: its rows cannot be read in place as float arrays.
int htp_mm_needs_staging(const struct htp_tensor_view * src1);

// --- QUANT: columns per chunk ---

#define HTP_QMM_ACT_BLOCK 40  // one quantized block of 32 activations: int8 q[32], f32 d at 32, i32 sum of q at 36
#define HTP_QMM_COL_BYTES 24  // scratch per column descriptor (three pointers on a 64-bit NPU; fewer on 32-bit)

struct htp_qmm_plan {
    size_t  act_stride;   // bytes of one column's activations (quantized blocks, or f32 for float weights)
    size_t  slice_bytes;  // per worker: one packed row group (plain weights) or one f32 weight row (float weights)
    int64_t max_cols;     // columns one chunk holds (0: not even one fits)
};

// The plan for weights w (type and layout) and n_threads workers.
struct htp_qmm_plan htp_qmm_plan(const struct htp_tensor_view * w, uint32_t n_threads, size_t vtcm_size);

// The columns a chunk of plan p holds when each column has a descriptor in
// n_lists column lists (a shared run: one list per weight).
int64_t htp_qmm_max_cols(const struct htp_qmm_plan * p, int n_lists, uint32_t n_threads, size_t vtcm_size);

// --- KQUANT: columns per chunk ---

#define HTP_KQ_ACT_BLOCK 320  // one Q8_K block of 256 activations with its sums

// Scratch of a K-quant matmul over ncols columns: [ids order: ncols int32,
// rounded to 128 bytes (MUL_MAT_ID)] [pack: n_threads row groups (plain
// weights)] [activations: columns x K/256 blocks]. Returns the columns one
// chunk holds (0: not even one), *fixed = the bytes before the activations.
int64_t htp_kq_mm_plan(const struct htp_tensor_view * w, int64_t ncols, int with_ids, uint32_t n_threads,
                       size_t vtcm_size, size_t * fixed);

// src0 is a K-quant the kernels handle: tiled with tiled.h's strides, or
// plain rows of whole blocks. Returns enum htp_status (GET_ROWS uses it too).
int htp_kq_weights_check(const struct htp_tensor_view * w);

#endif  // HTP_CONTRACT_MATMUL_CHECK_H
