// window.h: how much of a session's VA window a buffer takes, the one rule
// the NPU places buffers by (npu/vmem.c) and the host budgets them by
// (the batch's vmem limit, the tests' accounting).
//
// A buffer is size bytes, its last HTP_PAGE_SIZE (4 KiB) the host's guard
// page. The NPU maps the part before the guard, rounded up to its own page
// (htp_hw_info.page_size: 4 KiB on Linux, 64 KiB under qemu-hexagon), and
// leaves one whole page after it unmapped as the guard. With 4 KiB pages that
// is the buffer itself.

#ifndef HTP_CONTRACT_WINDOW_H
#define HTP_CONTRACT_WINDOW_H

#include <stdint.h>

#include "proto/htp-proto.h"

// Bytes of the buffer the NPU maps (0 for a buffer of guard page only).
static inline uint64_t htp_window_mapped_bytes(uint64_t size, uint64_t page) {
    return (size - HTP_PAGE_SIZE + page - 1) / page * page;
}

// Window bytes the buffer takes: the mapped part and one guard page.
static inline uint64_t htp_window_bytes(uint64_t size, uint64_t page) {
    return htp_window_mapped_bytes(size, page) + page;
}

#endif  // HTP_CONTRACT_WINDOW_H
