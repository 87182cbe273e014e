// wait.h: the host library's one clock, spin hint and futex: every wait of
// libggml-htp (queue responses, fences, NPU liveness slices) is built on
// these. The futex calls are process-shared: what the host waits on lives in
// memory it shares with NPU processes.

#ifndef HTP_HOST_WAIT_H
#define HTP_HOST_WAIT_H

#include <stdatomic.h>
#include <stdint.h>

#include "proto/htp-ring.h"

// Monotonic time in microseconds.
uint64_t htp_wait_now_us(void);

// A pause inside a spin loop.
void htp_wait_relax(void);

// Sleep while *word == expected, at most timeout_us (< 0: no limit); returns
// early on a wake-up or spuriously.
void htp_wait_futex(_Atomic uint32_t * word, uint32_t expected, int64_t timeout_us);

// Wake up to n sleepers of word (UINT32_MAX: all).
void htp_wait_wake(_Atomic uint32_t * word, uint32_t n);

// How the host sleeps and wakes on a session's rings.
extern const struct htp_ring_sys htp_wait_ring_sys;

#endif  // HTP_HOST_WAIT_H
