// test-contract: what host and NPU agree on matches ggml: the contract's type
// traits (block size, block bytes) and every tile format's block size and
// bytes equal ggml's own for the same type code; the ggml enum values op
// params carry (contract/op-params.h) equal ggml's; and a wire tensor's view
// and extent come out as the NPU's validation needs them (ggml_nbytes for
// plain tensors, whole slabs for tiled ones, refusals for impossible ones);
// and the GGML_HTP_FAULT grammar (contract/fault-plan.h).
// Exit 0 pass, 1 fail.

#include <stdio.h>
#include <string.h>

#include "contract/fault-plan.h"
#include "contract/kquant-tiles.h"
#include "contract/op-call.h"
#include "contract/op-names.h"
#include "contract/op-params.h"
#include "contract/tiled.h"
#include "contract/type-traits.h"
#include "ggml.h"
#include "test-check.h"

_Static_assert(HTP_UNARY_SILU == GGML_UNARY_OP_SILU && HTP_UNARY_NEG == GGML_UNARY_OP_NEG &&
                   HTP_UNARY_TANH == GGML_UNARY_OP_TANH && HTP_UNARY_SIGMOID == GGML_UNARY_OP_SIGMOID &&
                   HTP_UNARY_GELU == GGML_UNARY_OP_GELU && HTP_UNARY_GELU_QUICK == GGML_UNARY_OP_GELU_QUICK &&
                   HTP_UNARY_EXP == GGML_UNARY_OP_EXP && HTP_UNARY_SOFTPLUS == GGML_UNARY_OP_SOFTPLUS,
               "unary op codes");
_Static_assert(HTP_GLU_SWIGLU == GGML_GLU_OP_SWIGLU && HTP_GLU_GEGLU == GGML_GLU_OP_GEGLU &&
                   HTP_GLU_SWIGLU_OAI == GGML_GLU_OP_SWIGLU_OAI,
               "glu op codes");
_Static_assert(HTP_TRI_UPPER_DIAG == GGML_TRI_TYPE_UPPER_DIAG && HTP_TRI_UPPER == GGML_TRI_TYPE_UPPER &&
                   HTP_TRI_LOWER_DIAG == GGML_TRI_TYPE_LOWER_DIAG && HTP_TRI_LOWER == GGML_TRI_TYPE_LOWER,
               "tri types");
_Static_assert(HTP_SORT_ASC == GGML_SORT_ORDER_ASC && HTP_SORT_DESC == GGML_SORT_ORDER_DESC, "sort orders");
_Static_assert(HTP_ROPE_MODE_NEOX == GGML_ROPE_TYPE_NEOX && HTP_ROPE_MODE_MROPE == GGML_ROPE_TYPE_MROPE &&
                   HTP_ROPE_MODE_VISION == GGML_ROPE_TYPE_VISION && HTP_ROPE_MODE_IMROPE == GGML_ROPE_TYPE_IMROPE,
               "rope modes");
_Static_assert(HTP_OP_PARAMS_SIZE == GGML_MAX_OP_PARAMS, "op params size");
_Static_assert((int)HTP_TYPE_COUNT <= (int)GGML_TYPE_COUNT, "type codes are ggml's");

static void test_type_traits(void) {
    int n = 0;
    for (uint32_t t = 0; t < HTP_TYPE_COUNT; t++) {
        const struct htp_type_traits * tt = htp_type_traits(t);
        if (tt == NULL) {
            continue;
        }
        n++;
        CHECK(tt->blck_size == (uint32_t)ggml_blck_size((enum ggml_type)t), "%s: block size %u, ggml %lld", tt->name,
              tt->blck_size, (long long)ggml_blck_size((enum ggml_type)t));
        CHECK(tt->type_size == ggml_type_size((enum ggml_type)t), "%s: block bytes %u, ggml %zu", tt->name,
              tt->type_size, ggml_type_size((enum ggml_type)t));
        CHECK(strcmp(tt->name, ggml_type_name((enum ggml_type)t)) == 0, "type %u: name %s, ggml %s", t, tt->name,
              ggml_type_name((enum ggml_type)t));
        const struct htp_tile_format * f = htp_tile_format(t);
        if (f) {
            CHECK(f->blck_size == tt->blck_size && f->blck_bytes == tt->type_size, "%s: tile format's block", tt->name);
        }
        if (htp_kq_type_ok(t)) {
            CHECK(htp_kq_block_bytes(t) == tt->type_size, "%s: K-quant block bytes", tt->name);
        }
    }
    CHECK(n >= 15, "only %d types known", n);
    CHECK(htp_type_traits(HTP_TYPE_COUNT) == NULL && htp_type_traits(5) == NULL, "unknown codes have no traits");
}

static struct htp_tensor wire(uint32_t type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    const struct htp_type_traits * tt = htp_type_traits(type);
    struct htp_tensor              t  = {.type = type, .ne = {ne0, ne1, ne2, ne3}};
    t.nb[0]                           = tt->type_size;
    t.nb[1]                           = t.nb[0] * (ne0 / tt->blck_size);
    t.nb[2]                           = t.nb[1] * ne1;
    t.nb[3]                           = t.nb[2] * ne2;
    return t;
}

static void test_extents(void) {
    struct htp_tensor      t = wire(HTP_TYPE_F32, 7, 3, 2, 1);
    struct htp_tensor_view v;
    CHECK(htp_tensor_view_init(&v, &t, NULL) == HTP_STATUS_OK && v.extent == 7 * 3 * 2 * 4, "packed F32 extent");
    t = wire(HTP_TYPE_Q4_0, 64, 5, 1, 1);
    CHECK(htp_tensor_view_init(&v, &t, NULL) == HTP_STATUS_OK && v.extent == 2 * 5 * 18, "Q4_0 extent");
    t.ne[0] = 48;  // not whole blocks
    CHECK(htp_tensor_view_init(&v, &t, NULL) == HTP_STATUS_INVAL_PARAMS, "part of a block refused");
    t       = wire(HTP_TYPE_F16, 4, 4, 1, 1);
    t.nb[1] = -8;
    CHECK(htp_tensor_view_init(&v, &t, NULL) == HTP_STATUS_INVAL_PARAMS, "negative stride refused");
    t       = wire(HTP_TYPE_F16, 4, 4, 1, 1);
    t.nb[3] = INT64_MAX;
    t.ne[3] = 4;
    CHECK(htp_tensor_view_init(&v, &t, NULL) == HTP_STATUS_INVAL_PARAMS, "overflowing extent refused");
    t      = wire(HTP_TYPE_F32, 4, 4, 1, 1);
    t.type = 5;  // a code ggml no longer uses
    CHECK(htp_tensor_view_init(&v, &t, NULL) == HTP_STATUS_INVAL_PARAMS, "unknown type refused");
    t = wire(HTP_TYPE_F32, 4, 0, 1, 1);
    CHECK(htp_tensor_view_init(&v, &t, NULL) == HTP_STATUS_OK && v.extent == 0, "empty tensor spans nothing");

    // A tiled weight spans whole row groups: 20 rows are two groups of 16.
    const struct htp_tile_format * f = htp_tile_format(HTP_TYPE_Q4_K);
    t                                = wire(HTP_TYPE_Q4_K, 512, 20, 1, 1);
    htp_tiled_strides(f, t.ne, t.nb);
    t.flags = HTP_TENSOR_TILED;
    CHECK(htp_tensor_view_init(&v, &t, NULL) == HTP_STATUS_OK && v.extent == htp_tiled_nbytes(f, t.ne) &&
              v.extent == 2 * htp_tiled_group_bytes(f, 512),
          "tiled extent %llu", (unsigned long long)v.extent);
    CHECK(htp_tiled_strides_ok(f, t.ne, t.nb), "tiled strides recognised");
}

static void test_names(void) {
    CHECK(strcmp(htp_op_name(HTP_OP_MUL_MAT), "MUL_MAT") == 0 && strcmp(htp_op_name(HTP_OP_NOP), "NOP") == 0,
          "op names");
    CHECK(strcmp(htp_op_name(HTP_OP_COUNT), "?") == 0 && strcmp(htp_op_name(0xffffffffu), "?") == 0,
          "unknown op codes");
    for (uint32_t op = 0; op < HTP_OP_COUNT; op++) {
        CHECK(strcmp(htp_op_name(op), "?") != 0, "op code %u has no name", op);
    }
}

// GGML_HTP_FAULT: good plans, each malformed one refused whole.
static void test_fault_plan(void) {
    struct htp_fault_plan p;
    char                  why[160];
    CHECK(htp_fault_plan_parse(&p, NULL, why, sizeof why) == 0 && p.nth[HTP_FAULT_MEMFD] == 0, "unset");
    CHECK(htp_fault_plan_parse(&p, "memfd:2,npu-map:1+", why, sizeof why) == 0 && p.nth[HTP_FAULT_MEMFD] == 2 &&
              !p.from[HTP_FAULT_MEMFD] && p.nth[HTP_FAULT_NPU_MAP] == 1 && p.from[HTP_FAULT_NPU_MAP],
          "two sites");
    int hits = 0;
    for (int i = 0; i < 5; i++) {
        hits += htp_fault_plan_hit(&p, HTP_FAULT_MEMFD) != 0;
    }
    CHECK(hits == 1, "a one-call fault failed %d calls", hits);
    hits = 0;
    for (int i = 0; i < 5; i++) {
        hits += htp_fault_plan_hit(&p, HTP_FAULT_NPU_MAP) != 0;
    }
    CHECK(hits == 5 && htp_fault_plan_hit(&p, HTP_FAULT_MMAP) == 0, "a persistent fault failed %d of 5", hits);
    static const char * const bad[] = {"memfd",    "memfd:", "memfd:0",  "memfd:x", "disk:1",
                                       "memfd:1,", ":1",     "memfd:1x", "memfd:+", "mmap:99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = '\0';
        CHECK(htp_fault_plan_parse(&p, bad[i], why, sizeof why) == -1 && why[0] && p.nth[HTP_FAULT_MEMFD] == 0 &&
                  p.nth[HTP_FAULT_MMAP] == 0,
              "'%s' accepted", bad[i]);
    }
    CHECK(htp_fault_plan_parse(&p, "mmap:1,disk:1", why, sizeof why) == -1 && p.nth[HTP_FAULT_MMAP] == 0,
          "a plan with one bad site kept its good one");
}

int main(void) {
    test_type_traits();
    test_extents();
    test_names();
    test_fault_plan();
    return test_exit_code("test-contract");
}
