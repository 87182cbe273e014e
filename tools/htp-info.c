// htp-info: what this build can run on: the ggml backends and devices, each
// HTP device's NPU (hardware info, VA window) and the configuration in force.

#include <stdio.h>
#include <string.h>

#include "config.h"
#include "ggml-backend.h"
#include "ggml-htp.h"
#include "session.h"

static const char * dev_type_name(enum ggml_backend_dev_type type) {
    switch (type) {
        case GGML_BACKEND_DEVICE_TYPE_CPU:
            return "CPU";
        case GGML_BACKEND_DEVICE_TYPE_GPU:
            return "GPU";
        case GGML_BACKEND_DEVICE_TYPE_IGPU:
            return "IGPU";
        case GGML_BACKEND_DEVICE_TYPE_ACCEL:
            return "ACCEL";
        default:
            return "?";
    }
}

// Open a session on the device's NPU and print what it says of itself.
static void print_npu(const struct htp_device_config * dc, int cfg_etm) {
    struct htp_session_params p;
    htp_session_params_default(&p, dc->phys[0], dc->virt);
    struct htp_session * sess = NULL;
    int                  rc   = htp_session_open(&p, &sess);
    if (rc != 0) {
        printf("    NPU %u: cannot open a session: %s\n", dc->phys[0], htp_status_str(rc));
        return;
    }
    const struct htp_hw_info * hw = htp_session_hw_info(sess);
    printf("    NPU %u: %s, arch v%u, %u threads, %u HVX, %u HMX, VTCM %.1f MiB, %u KiB pages\n", dc->phys[0], hw->name,
           hw->arch, hw->n_threads, hw->n_hvx, hw->n_hmx, hw->vtcm_size / 1048576.0, hw->page_size / 1024);
    // HMX here is the NPU's matrix-matrix micro-kernels (htp-proto.h's enum htp_unit).
    printf(
        "    NPU %u: HMX %s (GGML_HEXAGON_NHMX, _MM_SELECT, _FA_SELECT), no ETM (a software NPU: "
        "GGML_HEXAGON_ETM=%d traces nothing)\n",
        dc->phys[0], hw->n_hmx ? "as multi-column / multi-row micro-kernels" : "absent", cfg_etm);
    struct htp_vmem_info vm;
    if (htp_session_vmem_info(sess, &vm) == 0) {
        printf("    VA window: %.1f MiB, %.1f MiB used, largest free %.1f MiB, %u hole(s), %u mapping(s)\n",
               vm.size / 1048576.0, vm.used / 1048576.0, vm.largest_free / 1048576.0, vm.n_holes, vm.n_maps);
    }
    htp_session_close(sess);
}

int main(void) {
    ggml_backend_register(ggml_backend_htp_reg());

    printf("ggml %s (%s)\n", ggml_version(), ggml_commit());
    printf("backends: %zu\n", ggml_backend_reg_count());
    for (size_t i = 0; i < ggml_backend_reg_count(); i++) {
        ggml_backend_reg_t reg = ggml_backend_reg_get(i);
        printf("  %-6s %zu device(s)\n", ggml_backend_reg_name(reg), ggml_backend_reg_dev_count(reg));
    }

    struct htp_config cfg;
    htp_config_load(&cfg);

    printf("devices: %zu\n", ggml_backend_dev_count());
    for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
        ggml_backend_dev_t dev      = ggml_backend_dev_get(i);
        size_t             free_mem = 0, total_mem = 0;
        ggml_backend_dev_memory(dev, &free_mem, &total_mem);
        printf("  %-8s %-5s %s (%.1f MiB free of %.1f MiB)\n", ggml_backend_dev_name(dev),
               dev_type_name(ggml_backend_dev_type(dev)), ggml_backend_dev_description(dev), free_mem / 1048576.0,
               total_mem / 1048576.0);
        for (int j = 0; j < cfg.n_devices; j++) {
            if (strcmp(cfg.devices[j].name, ggml_backend_dev_name(dev)) == 0) {
                print_npu(&cfg.devices[j], cfg.etm);
            }
        }
    }

    printf("configuration:\n");
    htp_config_print(&cfg, stdout);
    htp_config_free(&cfg);
    return 0;
}
