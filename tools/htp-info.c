// htp-info: what this ggml build can run on. Lists the backend registries and
// devices ggml knows, with their type and memory.

#include <stdio.h>

#include "ggml-backend.h"

static const char * dev_type_name(enum ggml_backend_dev_type type) {
    switch (type) {
        case GGML_BACKEND_DEVICE_TYPE_CPU:   return "CPU";
        case GGML_BACKEND_DEVICE_TYPE_GPU:   return "GPU";
        case GGML_BACKEND_DEVICE_TYPE_IGPU:  return "IGPU";
        case GGML_BACKEND_DEVICE_TYPE_ACCEL: return "ACCEL";
        default:                             return "?";
    }
}

int main(void) {
    printf("ggml %s (%s)\n", ggml_version(), ggml_commit());

    printf("backends: %zu\n", ggml_backend_reg_count());
    for (size_t i = 0; i < ggml_backend_reg_count(); i++) {
        ggml_backend_reg_t reg = ggml_backend_reg_get(i);
        printf("  %-6s %zu device(s)\n", ggml_backend_reg_name(reg), ggml_backend_reg_dev_count(reg));
    }

    printf("devices: %zu\n", ggml_backend_dev_count());
    for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
        ggml_backend_dev_t dev = ggml_backend_dev_get(i);
        size_t free_mem = 0, total_mem = 0;
        ggml_backend_dev_memory(dev, &free_mem, &total_mem);
        printf("  %-8s %-5s %-40s %8.1f / %8.1f MiB free\n", ggml_backend_dev_name(dev),
               dev_type_name(ggml_backend_dev_type(dev)), ggml_backend_dev_description(dev),
               free_mem / 1048576.0, total_mem / 1048576.0);
    }
    return 0;
}
