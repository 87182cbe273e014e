// test-mmap-stacking: how the host fills an NPU session's VA window.
//
//  1. stacking on: a batch that meets a small buffer before a large one maps
//     the large one first, so freeing the small one leaves no hole; a buffer
//     registered with the session but not used by the batch is mapped too
//  2. stacking off (the naive order, measurements only): the same batch maps
//     the small buffer first and freeing it leaves a hole below the large one
//  3. GGML_HEXAGON_VMEM=0's measurement: a window of 1 GiB + 300 MiB measures
//     1 GiB + 256 MiB mapped, less the 256 MiB margin = 1 GiB, becomes the
//     batch budget, and leaves the window as it found it
//  4. DMA64: with dma64, a buffer whose operand is a weight is mapped outside
//     the window (extended); a plain buffer stays inside

#include "test-host-util.h"

#define MiB (1024ull * 1024ull)

static struct htp_vmem_info info(struct htp_session * s) {
    struct htp_vmem_info v = {0};
    CHECK(htp_session_vmem_info(s, &v) == 0, "vmem info");
    return v;
}

static struct htp_session * open_with(bool stacking, uint64_t vmem, bool measure, bool dma64) {
    struct htp_session_params p;
    htp_session_params_default(&p, 0, 0);
    p.mmap_stacking         = stacking;
    p.vmem_size             = vmem;
    p.measure_vmem          = measure;
    p.dma64                 = dma64;
    struct htp_session * s  = NULL;
    int                  rc = htp_session_open(&p, &s);
    CHECK(rc == 0, "open: %s", htp_status_str(rc));
    return s;
}

// Small then large in one batch; free the small one; count holes.
static uint32_t holes_after_free(bool stacking, bool * extra_mapped) {
    struct htp_session * s = open_with(stacking, 0, false, false);
    if (!s) {
        return 99;
    }
    struct htp_buffer *small = NULL, *large = NULL, *extra = NULL;
    CHECK(htp_buffer_alloc(htp_session_map_target(s), 1 * MiB, 0, &small) == 0, "alloc");
    CHECK(htp_buffer_alloc(htp_session_map_target(s), 16 * MiB, 0, &large) == 0, "alloc");
    CHECK(htp_buffer_alloc(htp_session_map_target(s), 2 * MiB, 0, &extra) == 0, "alloc");
    CHECK(htp_session_use_buffer(s, extra) == 0, "register");
    struct htp_op_tensor a = test_f32(small, 0, 256, 1), b = test_f32(large, 0, 256, 1);
    CHECK(test_enqueue_cpy(s, &a, &b) == 0, "enqueue");
    CHECK(htp_session_flush_sync(s) == 0, "flush: %s", htp_session_error(s));
    *extra_mapped = htp_buffer_is_mapped(extra, htp_session_map_target(s));
    htp_buffer_unref(small);
    struct htp_vmem_info v = info(s);
    htp_buffer_unref(large);
    htp_buffer_unref(extra);
    htp_session_close(s);
    return v.n_holes;
}

int main(void) {
    test_init();

    bool     extra_on = false, extra_off = true;
    uint32_t h_on  = holes_after_free(true, &extra_on);
    uint32_t h_off = holes_after_free(false, &extra_off);
    printf("stacking on: %u hole(s) after freeing the small buffer; registered-only buffer mapped: %d\n", h_on,
           extra_on);
    printf("stacking off: %u hole(s); registered-only buffer mapped: %d\n", h_off, extra_off);
    CHECK(h_on == 0, "stacking on left %u holes", h_on);
    CHECK(extra_on, "stacking on: a registered buffer was not mapped at flush");
    CHECK(h_off == 1, "naive order left %u holes, want 1", h_off);
    CHECK(!extra_off, "naive order mapped a buffer no batch used");

    // 3. measurement
    const uint64_t       window = 1024 * MiB + 300 * MiB;
    struct htp_session * s      = open_with(true, window, true, false);
    if (s) {
        struct htp_vmem_info v = info(s);
        printf("measured: window %llu MiB, budget %llu MiB, after: %u mapping(s), %llu bytes used\n",
               (unsigned long long)(window / MiB), (unsigned long long)(htp_session_max_vmem(s) / MiB), v.n_maps,
               (unsigned long long)v.used);
        CHECK(htp_session_max_vmem(s) == 1024 * MiB, "measured %llu bytes, want 1 GiB",
              (unsigned long long)htp_session_max_vmem(s));
        CHECK(v.n_maps == 1 && v.used == test_window_bytes(s, htp_session_pinned(s)),
              "the probe left %u mappings / %llu bytes", v.n_maps, (unsigned long long)v.used);
        uint64_t again = 0;
        CHECK(htp_session_measure_vmem(s, &again) == 0 && again == 1024 * MiB, "second measurement %llu",
              (unsigned long long)again);
        htp_session_close(s);
    }
    // A window too small for 1 GiB is measured in 256 MiB steps.
    s = open_with(true, 600 * MiB, true, false);
    if (s) {
        printf("measured: window 600 MiB, budget %llu MiB\n", (unsigned long long)(htp_session_max_vmem(s) / MiB));
        CHECK(htp_session_max_vmem(s) == 256 * MiB, "measured %llu, want 256 MiB",
              (unsigned long long)htp_session_max_vmem(s));
        htp_session_close(s);
    }

    // 4. DMA64
    s = open_with(true, 0, false, true);
    if (s) {
        struct htp_buffer *w = NULL, *act = NULL;
        CHECK(htp_buffer_alloc(htp_session_map_target(s), 4 * MiB, 0, &w) == 0, "alloc");
        CHECK(htp_buffer_alloc(htp_session_map_target(s), 1 * MiB, 0, &act) == 0, "alloc");
        struct htp_vmem_info before = info(s);
        struct htp_op_tensor a = test_f32(w, 0, 256, 1), b = test_f32(act, 0, 256, 1);
        a.flags |= HTP_TENSOR_WEIGHT;
        CHECK(test_enqueue_cpy(s, &a, &b) == 0, "enqueue");
        CHECK(htp_session_flush_sync(s) == 0, "flush: %s", htp_session_error(s));
        struct htp_vmem_info v = info(s);
        printf("dma64: extended mappings %u -> %u, window mappings %u -> %u\n", before.n_extended, v.n_extended,
               before.n_maps, v.n_maps);
        CHECK(htp_buffer_flags(w) & HTP_BUFFER_EXTENDED, "weight buffer not marked extended");
        CHECK(v.n_extended == before.n_extended + 1 && v.n_maps == before.n_maps + 1,
              "weight not outside / activation not inside the window");
        CHECK(v.used == before.used + test_window_bytes(s, act), "window grew by %llu",
              (unsigned long long)(v.used - before.used));
        htp_buffer_unref(w);
        htp_buffer_unref(act);
        htp_session_close(s);
    }
    size_t n_live = 0;
    htp_buffer_stats(&n_live, NULL);
    CHECK(n_live == 0, "%zu buffers leaked", n_live);
    return test_exit_code("test-mmap-stacking");
}
