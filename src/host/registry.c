// registry.c: the backend registry "HTP" and its devices.
//
// The configuration is read from the environment once, when the registry is
// first asked for; it names the devices (GGML_HEXAGON_DEVICES). Devices exist
// from then on; each opens its session (and so starts its NPU process) on
// first use, not before, so listing devices costs nothing.

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "buffer-type.h"
#include "comm.h"
#include "config.h"
#include "device.h"
#include "ggml-device.h"
#include "ggml-htp.h"
#include "log.h"
#include "planner.h"

// The HTP type codes travel as ggml's: they must agree.
_Static_assert((int)HTP_TYPE_F32 == (int)GGML_TYPE_F32, "type codes");
_Static_assert((int)HTP_TYPE_F16 == (int)GGML_TYPE_F16, "type codes");
_Static_assert((int)HTP_TYPE_Q4_0 == (int)GGML_TYPE_Q4_0, "type codes");
_Static_assert((int)HTP_TYPE_Q4_1 == (int)GGML_TYPE_Q4_1, "type codes");
_Static_assert((int)HTP_TYPE_Q8_0 == (int)GGML_TYPE_Q8_0, "type codes");
_Static_assert((int)HTP_TYPE_Q4_K == (int)GGML_TYPE_Q4_K, "type codes");
_Static_assert((int)HTP_TYPE_Q5_K == (int)GGML_TYPE_Q5_K, "type codes");
_Static_assert((int)HTP_TYPE_Q6_K == (int)GGML_TYPE_Q6_K, "type codes");
_Static_assert((int)HTP_TYPE_IQ4_NL == (int)GGML_TYPE_IQ4_NL, "type codes");
_Static_assert((int)HTP_TYPE_Q5_0 == (int)GGML_TYPE_Q5_0, "type codes");
_Static_assert((int)HTP_TYPE_Q5_1 == (int)GGML_TYPE_Q5_1, "type codes");
_Static_assert((int)HTP_TYPE_Q2_K == (int)GGML_TYPE_Q2_K, "type codes");
_Static_assert((int)HTP_TYPE_Q3_K == (int)GGML_TYPE_Q3_K, "type codes");
_Static_assert((int)HTP_TYPE_IQ4_XS == (int)GGML_TYPE_IQ4_XS, "type codes");
_Static_assert((int)HTP_TYPE_IQ2_XXS == (int)GGML_TYPE_IQ2_XXS, "type codes");
_Static_assert((int)HTP_TYPE_IQ2_XS == (int)GGML_TYPE_IQ2_XS, "type codes");
_Static_assert((int)HTP_TYPE_IQ2_S == (int)GGML_TYPE_IQ2_S, "type codes");
_Static_assert((int)HTP_TYPE_IQ3_XXS == (int)GGML_TYPE_IQ3_XXS, "type codes");
_Static_assert((int)HTP_TYPE_IQ3_S == (int)GGML_TYPE_IQ3_S, "type codes");
_Static_assert((int)HTP_TYPE_IQ1_S == (int)GGML_TYPE_IQ1_S, "type codes");
_Static_assert((int)HTP_TYPE_IQ1_M == (int)GGML_TYPE_IQ1_M, "type codes");
_Static_assert((int)HTP_TYPE_NVFP4 == (int)GGML_TYPE_NVFP4, "type codes");
_Static_assert((int)HTP_TYPE_Q1_0 == (int)GGML_TYPE_Q1_0, "type codes");
_Static_assert((int)HTP_TYPE_Q2_0 == (int)GGML_TYPE_Q2_0, "type codes");
_Static_assert((int)HTP_TYPE_I8 == (int)GGML_TYPE_I8, "type codes");
_Static_assert((int)HTP_TYPE_I16 == (int)GGML_TYPE_I16, "type codes");
_Static_assert((int)HTP_TYPE_I32 == (int)GGML_TYPE_I32, "type codes");
_Static_assert((int)HTP_TYPE_I64 == (int)GGML_TYPE_I64, "type codes");
_Static_assert((int)HTP_TYPE_BF16 == (int)GGML_TYPE_BF16, "type codes");
_Static_assert((int)HTP_TYPE_MXFP4 == (int)GGML_TYPE_MXFP4, "type codes");
_Static_assert(HTP_OP_PARAMS_SIZE == GGML_MAX_OP_PARAMS, "op params travel verbatim");
_Static_assert(HTP_OP_MAX_INPUTS >= GGML_MAX_SRC, "every ggml source fits an op");

struct htp_registry {
    struct htp_device       devices[HTP_CONFIG_MAX_DEVICES];
    int                     n_devices;
    struct ggml_backend_reg reg;
};

static struct htp_registry g_registry;

// --- registry interface ---

static const char * reg_get_name(ggml_backend_reg_t reg) {
    (void)reg;
    return "HTP";
}

static size_t reg_get_device_count(ggml_backend_reg_t reg) {
    return (size_t)((struct htp_registry *)reg->context)->n_devices;
}

static ggml_backend_dev_t reg_get_device(ggml_backend_reg_t reg, size_t index) {
    struct htp_registry * r = (struct htp_registry *)reg->context;
    if (index >= (size_t)r->n_devices) {
        return NULL;
    }
    return &r->devices[index].dev;
}

static void * reg_get_proc_address(ggml_backend_reg_t reg, const char * name) {
    (void)reg;
    if (strcmp(name, "ggml_backend_is_htp") == 0) {
        return (void *)ggml_backend_is_htp;
    }
    if (strcmp(name, "ggml_backend_htp_get_stats") == 0) {
        return (void *)ggml_backend_htp_get_stats;
    }
    // Tensor split (ggml's meta backend): comm.h.
    if (strcmp(name, "ggml_backend_split_buffer_type") == 0) {
        return (void *)htp_comm_split_buffer_type;
    }
    if (strcmp(name, "ggml_backend_comm_init") == 0) {
        return (void *)htp_comm_init;
    }
    if (strcmp(name, "ggml_backend_comm_free") == 0) {
        return (void *)htp_comm_free;
    }
    if (strcmp(name, "ggml_backend_comm_allreduce_tensor") == 0) {
        return (void *)htp_comm_allreduce_tensor;
    }
    if (strcmp(name, "ggml_backend_htp_alloc_ctx_tensors") == 0) {
        return (void *)ggml_backend_htp_alloc_ctx_tensors;
    }
    return NULL;
}

static const struct ggml_backend_reg_i htp_reg_iface = {
    /* .get_name         = */ reg_get_name,
    /* .get_device_count = */ reg_get_device_count,
    /* .get_device       = */ reg_get_device,
    /* .get_proc_address = */ reg_get_proc_address,
};

static void registry_init(void) {
    struct htp_registry * r = &g_registry;
    htp_config_load_backend();

    r->reg = (struct ggml_backend_reg){GGML_BACKEND_API_VERSION, htp_reg_iface, r};
    for (int i = 0; i < htp_backend_config->n_devices; i++) {
        const struct htp_device_config * dc = &htp_backend_config->devices[i];
        struct htp_device *              d  = &r->devices[r->n_devices];
        d->index                            = r->n_devices;
        d->cfg                              = *dc;
        pthread_mutex_init(&d->lock, NULL);
        if (dc->n_members > 1) {
            snprintf(d->description, sizeof d->description,
                     "Hexagon NPU group of %u, NPUs %u..%u session %u (software NPU htp-npu)", dc->n_members,
                     dc->phys[0], dc->phys[dc->n_members - 1], dc->virt);
        } else {
            snprintf(d->description, sizeof d->description, "Hexagon NPU %u session %u (software NPU htp-npu)",
                     dc->phys[0], dc->virt);
        }
        d->dev = (struct ggml_backend_device){htp_ggml_device_iface, &r->reg, d};
        htp_buffer_types_init(d);
        r->n_devices++;
    }
    HTP_VERBOSE("ggml-htp: registry with %d device(s)\n", r->n_devices);
}

ggml_backend_reg_t ggml_backend_htp_reg(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, registry_init);
    return &g_registry.reg;
}

ggml_backend_buffer_t ggml_backend_htp_alloc_ctx_tensors(struct ggml_context * ctx, ggml_backend_buffer_type_t buft) {
    ggml_backend_htp_reg();  // the configuration (GGML_HEXAGON_MBUF) is loaded with the registry
    return htp_planner_alloc_ctx_tensors(ctx, buft, (size_t)htp_backend_config->mbuf_static);
}

GGML_BACKEND_DL_IMPL(ggml_backend_htp_reg)
