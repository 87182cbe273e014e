// test-profile: the host's profile read-back with known values, no NPU
// process: htp_profile_check accepts a sound batch and refuses each kind of
// nonsense (opcode echo, worker count, PMU slots not announced, counts in
// unused slots, profiles of ops that did not run, counts that disagree);
// htp_profile_format_op prints mode 1's fields and each counting slot by
// name; htp_profile_pmu_answer accepts the NPU's answers (hardware,
// software fallback, mode 1) and refuses malformed ones; htp_trace_op_cost
// gives the flops and bytes htp-prof reports.

#include <stdio.h>
#include <string.h>

#include "host/profile.h"
#include "host/trace.h"

#include "test-check.h"

#define N_OPS 3

static struct htp_pmu_info software_info(void) {
    struct htp_pmu_info pmu = {.mode = 2, .mask = 0x7, .reason = HTP_PMU_REASON_NO_HARDWARE};
    pmu.counter[0]          = HTP_PMU_TASK_CLOCK_NS;
    pmu.counter[1]          = HTP_PMU_CONTEXT_SWITCHES;
    pmu.counter[2]          = HTP_PMU_CPU_MIGRATIONS;
    return pmu;
}

static void sound_batch(struct htp_opbatch_rsp * rsp, struct htp_prof_desc * prof, struct htp_op_desc * ops) {
    memset(rsp, 0, sizeof *rsp);
    memset(prof, 0, sizeof *prof * N_OPS);
    memset(ops, 0, sizeof *ops * N_OPS);
    rsp->seq                    = 7;
    rsp->n_ops                  = N_OPS;
    rsp->n_done                 = N_OPS;
    const uint32_t codes[N_OPS] = {HTP_OP_MUL_MAT, HTP_OP_ADD, HTP_OP_RMS_NORM};
    for (int i = 0; i < N_OPS; i++) {
        ops[i].opcode     = codes[i];
        prof[i].opcode    = codes[i];
        prof[i].usecs     = 10u + (uint64_t)i;
        prof[i].cycles    = 1000u * (uint64_t)(i + 1);
        prof[i].n_threads = 2;
        prof[i].pmu_mask  = 0x7;
        prof[i].pmu[0]    = 123456u + (uint64_t)i;
        prof[i].pmu[1]    = 1;
        prof[i].pmu[2]    = 0;
    }
}

static int check(const struct htp_opbatch_rsp * rsp, const struct htp_prof_desc * prof, const struct htp_op_desc * ops,
                 const struct htp_pmu_info * pmu, char * why) {
    return htp_profile_check(rsp, prof, N_OPS, ops, 2, pmu, why, 128);
}

static void test_check(void) {
    struct htp_opbatch_rsp rsp;
    struct htp_prof_desc   prof[N_OPS];
    struct htp_op_desc     ops[N_OPS];
    struct htp_pmu_info    pmu = software_info();
    char                   why[128];

    sound_batch(&rsp, prof, ops);
    CHECK(check(&rsp, prof, ops, &pmu, why) == 0, "a sound batch is refused: %s", why);

    sound_batch(&rsp, prof, ops);
    prof[1].opcode = HTP_OP_SUB;
    CHECK(check(&rsp, prof, ops, &pmu, why) != 0 && strstr(why, "opcode"), "a wrong opcode echo passes (%s)", why);

    sound_batch(&rsp, prof, ops);
    prof[2].n_threads = 3;
    CHECK(check(&rsp, prof, ops, &pmu, why) != 0 && strstr(why, "workers"), "3 workers of 2 pass (%s)", why);

    sound_batch(&rsp, prof, ops);
    prof[0].pmu_mask = 0x9;
    CHECK(check(&rsp, prof, ops, &pmu, why) != 0 && strstr(why, "announced"), "slot 3 not announced passes (%s)", why);

    sound_batch(&rsp, prof, ops);
    prof[0].pmu_mask = 0x3;  // slot 2 announced but not counted by this op: its count must be 0
    prof[0].pmu[2]   = 5;
    CHECK(check(&rsp, prof, ops, &pmu, why) != 0 && strstr(why, "unused"), "a count in an unused slot passes (%s)",
          why);

    // Mode 1 (no PMU answer): any counter is nonsense.
    sound_batch(&rsp, prof, ops);
    CHECK(check(&rsp, prof, ops, NULL, why) != 0, "counters without mode 2 pass");
    for (int i = 0; i < N_OPS; i++) {
        prof[i].pmu_mask = 0;
        memset(prof[i].pmu, 0, sizeof prof[i].pmu);
    }
    CHECK(check(&rsp, prof, ops, NULL, why) == 0, "a mode 1 batch is refused: %s", why);

    // Failed at op 1: op 1 has its descriptor, op 2 must be zero.
    sound_batch(&rsp, prof, ops);
    rsp.status     = HTP_STATUS_INTERNAL_ERR;
    rsp.n_done     = 1;
    prof[1].status = HTP_STATUS_INTERNAL_ERR;
    memset(&prof[2], 0, sizeof prof[2]);
    CHECK(check(&rsp, prof, ops, &pmu, why) == 0, "a failed batch is refused: %s", why);
    prof[2].usecs = 1;
    CHECK(check(&rsp, prof, ops, &pmu, why) != 0 && strstr(why, "did not run"), "a profile of an op not run passes");

    // Failed validation: nothing ran, all zero.
    memset(prof, 0, sizeof prof);
    rsp.status = HTP_STATUS_INVAL_PARAMS;
    rsp.n_done = 0;
    CHECK(check(&rsp, prof, ops, &pmu, why) == 0, "a batch that failed validation is refused: %s", why);

    sound_batch(&rsp, prof, ops);
    prof[0].engine = 3;
    CHECK(check(&rsp, prof, ops, &pmu, why) != 0, "an unknown unit passes");
    sound_batch(&rsp, prof, ops);
    prof[0].engine = HTP_UNIT_HVX | 1u << 12;
    CHECK(check(&rsp, prof, ops, &pmu, why) != 0, "an unknown engine flag passes");
    sound_batch(&rsp, prof, ops);
    prof[0].engine = HTP_UNIT_HMX | HTP_ENGINE_KV_SPLIT;
    CHECK(check(&rsp, prof, ops, &pmu, why) == 0, "a sound engine word is refused: %s", why);
    sound_batch(&rsp, prof, ops);
    rsp.n_done = N_OPS + 1;
    CHECK(check(&rsp, prof, ops, &pmu, why) != 0, "n_done > n_ops passes");
    sound_batch(&rsp, prof, ops);
    rsp.n_ops = N_OPS - 1;
    CHECK(check(&rsp, prof, ops, &pmu, why) != 0, "a count other than pushed passes");
}

static void test_format(void) {
    struct htp_opbatch_rsp rsp;
    struct htp_prof_desc   prof[N_OPS];
    struct htp_op_desc     ops[N_OPS];
    struct htp_pmu_info    pmu = software_info();
    char                   line[512];
    sound_batch(&rsp, prof, ops);

    htp_profile_format_op(line, sizeof line, "HTP0", 0, &prof[0], &pmu);
    CHECK(strcmp(line,
                 "ggml-htp: HTP0 profile-op #0 MUL_MAT: usec 10 cycles 1000 threads 2 status ok pmu "
                 "task-clock-ns=123456 context-switches=1 cpu-migrations=0") == 0,
          "line: %s", line);
    htp_profile_format_op(line, sizeof line, "HTP0", 2, &prof[2], NULL);
    CHECK(strcmp(line, "ggml-htp: HTP0 profile-op #2 RMS_NORM: usec 12 cycles 3000 threads 2 status ok") == 0,
          "mode 1 line: %s", line);
    // The unit of an op with a choice, and FLASH_ATTN_EXT's KV split.
    struct htp_prof_desc u = prof[2];
    u.engine               = HTP_UNIT_HMX;
    htp_profile_format_op(line, sizeof line, "HTP0", 2, &u, NULL);
    CHECK(strstr(line, " status ok unit HMX") && !strstr(line, "kv-split"), "unit line: %s", line);
    u.engine = HTP_UNIT_HVX | HTP_ENGINE_KV_SPLIT;
    htp_profile_format_op(line, sizeof line, "HTP0", 2, &u, NULL);
    CHECK(strstr(line, " status ok unit HVX kv-split"), "unit line: %s", line);

    // Hardware slots, a gap in the mask: names follow the slots.
    struct htp_pmu_info hw = {.mode = 2, .mask = 0x83};
    hw.counter[0]          = HTP_PMU_INSTRUCTIONS;
    hw.counter[1]          = HTP_PMU_CYCLES;
    hw.counter[7]          = HTP_PMU_STALLED_BACKEND;
    prof[1].pmu_mask       = 0x83;
    prof[1].pmu[0]         = 5000;
    prof[1].pmu[1]         = 4000;
    prof[1].pmu[2]         = 0;
    prof[1].pmu[7]         = 300;
    htp_profile_format_op(line, sizeof line, "HTP0:1", 1, &prof[1], &hw);
    CHECK(strstr(line, " pmu instructions=5000 cycles=4000 stalled-cycles-backend=300") != NULL, "line: %s", line);

    // A tiny buffer: cut, NUL-terminated, no overrun.
    char small[24];
    memset(small, 'x', sizeof small);
    htp_profile_format_op(small, sizeof small, "HTP0", 0, &prof[0], &pmu);
    CHECK(strlen(small) == sizeof small - 1, "cut line: %s", small);
    CHECK(strcmp(htp_profile_counter_name(999), "?") == 0, "unknown counter named");
}

static void test_answer(void) {
    struct htp_pmu_info pmu = software_info();
    CHECK(htp_profile_pmu_answer("HTP0", 2, &pmu) == 0, "software fallback refused");
    CHECK(htp_profile_pmu_answer("HTP0", 2, &pmu) == 0, "second answer refused");
    struct htp_pmu_info m1 = {.mode = 1, .reason = HTP_PMU_REASON_DENIED};
    CHECK(htp_profile_pmu_answer("HTP0", 2, &m1) == 0, "mode 1 fallback refused");
    struct htp_pmu_info m3 = {.mode = 3};
    CHECK(htp_profile_pmu_answer("HTP0", 3, &m3) == 0, "mode 3 refused");
    CHECK(htp_profile_pmu_answer("HTP0", 1, &m3) != 0, "mode 3 for 1 accepted");
    struct htp_pmu_info bad = software_info();
    bad.counter[5]          = HTP_PMU_CYCLES;  // counts, but not in mask
    CHECK(htp_profile_pmu_answer("HTP0", 2, &bad) != 0, "slot outside the mask accepted");
    bad            = software_info();
    bad.counter[0] = HTP_PMU_COUNTER_COUNT;
    CHECK(htp_profile_pmu_answer("HTP0", 2, &bad) != 0, "unknown counter accepted");
    bad        = software_info();
    bad.reason = 99;
    CHECK(htp_profile_pmu_answer("HTP0", 2, &bad) != 0, "unknown reason accepted");
}

static struct htp_tensor tensor(uint32_t type, int64_t n0, int64_t n1, int64_t n2) {
    struct htp_tensor t = {0};
    t.type              = type;
    t.ne[0]             = n0;
    t.ne[1]             = n1;
    t.ne[2]             = n2;
    t.ne[3]             = 1;
    return t;
}

static void test_cost(void) {
    // MUL_MAT: src0 F16 [K=64, M=32], src1 F32 [64, N=4], dst F32 [32, 4].
    struct htp_tensor  t[3] = {tensor(HTP_TYPE_F16, 64, 32, 1), tensor(HTP_TYPE_F32, 64, 4, 1),
                               tensor(HTP_TYPE_F32, 32, 4, 1)};
    struct htp_op_desc op;
    memset(&op, 0xff, sizeof op);  // HTP_NO_TENSOR everywhere
    op.opcode = HTP_OP_MUL_MAT;
    op.src[0] = 0;
    op.src[1] = 1;
    op.dst[0] = 2;
    uint64_t flops, bytes;
    htp_trace_op_cost(&op, t, 3, &flops, &bytes);
    CHECK(flops == 2ull * 64 * 32 * 4, "MUL_MAT flops %llu", (unsigned long long)flops);
    CHECK(bytes == 64 * 32 * 2 + 64 * 4 * 4 + 32 * 4 * 4, "MUL_MAT bytes %llu", (unsigned long long)bytes);

    // Q4_0 weights: 18 bytes per 32 elements.
    t[0] = tensor(HTP_TYPE_Q4_0, 64, 32, 1);
    htp_trace_op_cost(&op, t, 3, &flops, &bytes);
    CHECK(bytes == 2 * 18 * 32 + 64 * 4 * 4 + 32 * 4 * 4, "Q4_0 MUL_MAT bytes %llu", (unsigned long long)bytes);

    // ADD: one flop per output element.
    t[0]      = tensor(HTP_TYPE_F32, 32, 4, 1);
    op.opcode = HTP_OP_ADD;
    op.src[1] = 0;
    htp_trace_op_cost(&op, t, 3, &flops, &bytes);
    CHECK(flops == 128 && bytes == 3 * 128 * 4, "ADD flops %llu bytes %llu", (unsigned long long)flops,
          (unsigned long long)bytes);

    // An operand index past the table is not read.
    op.src[1] = 9;
    htp_trace_op_cost(&op, t, 3, &flops, &bytes);
    CHECK(bytes == 2 * 128 * 4, "bytes with a bad index %llu", (unsigned long long)bytes);
}

int main(void) {
    test_check();
    test_format();
    test_answer();
    test_cost();
    return test_exit_code("test-profile");
}
