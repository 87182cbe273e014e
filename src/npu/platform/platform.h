// platform.h: everything the NPU core needs from its operating system, and
// nothing more. The core (server, sessions, VA window, batches, pool, kernels)
// calls these and never the OS itself, so porting the NPU means writing one
// file here:
//
//   linux.c          Linux on libc (the software NPU on x86 and ARM hosts)
//   hexagon-linux.c  Linux user-space ABI on raw syscalls, freestanding: the
//                    NPU built for Hexagon and run under qemu-hexagon
//   (a real cDSP)    QuRT and the Hexagon SDK; each call below says what it
//                    becomes there
//
// Conventions: calls that can fail return 0 on success and -1 on failure
// (they set no errno the core reads); sizes are bytes; times are
// microseconds of a monotonic clock. Every call may be made from any thread
// unless it says otherwise.

#ifndef HTP_PLATFORM_H
#define HTP_PLATFORM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

// ---------------------------------------------------------------------------
// Start-up
// ---------------------------------------------------------------------------

// Once, before any other call: ignore SIGPIPE (a host that hangs up mid-send
// must not kill the NPU) and whatever else the OS needs.
// cDSP: nothing; the FastRPC skeleton is loaded by the DSP's loader.
void htp_plat_init(void);

// Value of environment variable name, or NULL.
// cDSP: there is no environment; options arrive with the session open call.
const char * htp_plat_getenv(const char * name);

// Processors the NPU may run worker threads on (at least 1).
// cDSP: the number of HVX contexts (qurt_hvx_get_units).
uint32_t htp_plat_cpu_count(void);

// ---------------------------------------------------------------------------
// Threads
// ---------------------------------------------------------------------------

struct htp_plat_thread;  // opaque; one per started thread

// Start fn(arg) on a new thread. Returns 0 with *out set, or -1.
// cDSP: qurt_thread_create with a stack from the session's heap.
int htp_plat_thread_start(void (*fn)(void * arg), void * arg, struct htp_plat_thread ** out);

// Wait for t to return and free it; t is invalid afterwards.
// cDSP: qurt_thread_join.
void htp_plat_thread_join(struct htp_plat_thread * t);

// Let t run on without anyone joining it; its resources go when it returns.
// t is invalid afterwards.
// cDSP: not needed (no listen mode on a DSP).
void htp_plat_thread_detach(struct htp_plat_thread * t);

// Bind the calling thread to processor cpu (taken modulo htp_plat_cpu_count(),
// counting the processors the process may use). Returns
// 0, or -1 where the OS does not support it (callers treat it as a hint).
// cDSP: qurt_thread_set_affinity / HVX context locking (qurt_hvx_lock).
int htp_plat_thread_pin(uint32_t cpu);

// ---------------------------------------------------------------------------
// Waiting on a 32-bit word (futex)
// ---------------------------------------------------------------------------

// shared = 0: the word lives in this process's private memory (pool, locks).
// shared = 1: the word lives in memory shared with another process, the host's
//             rings and fence slots: the wait and the wake must use the
//             process-shared form.

// Sleep while *word == expected, at most timeout_us (< 0: no limit). Returns
// when woken, on timeout, or spuriously; callers re-check their condition.
// cDSP: qurt_futex_wait (private) / the dspqueue's or fence's signal wait (shared).
void htp_plat_wait(_Atomic uint32_t * word, uint32_t expected, int64_t timeout_us, int shared);

// Sleep while *priv == priv_expected (a private word) and *shared ==
// shared_expected (a process-shared one): either changing, or a wake on
// either, ends it (or a spurious return; callers re-check). Returns 0, or -1
// where the OS cannot wait on two words at once (nothing was waited for: the
// caller waits on priv alone). Linux: futex_waitv.
// cDSP: -1 (the dspqueue's signal wakes the session thread only).
int htp_plat_wait_either(_Atomic uint32_t * priv, uint32_t priv_expected, _Atomic uint32_t * shared,
                         uint32_t shared_expected);

// Wake up to n threads sleeping on word (UINT32_MAX: all of them).
// cDSP: qurt_futex_wake.
void htp_plat_wake(_Atomic uint32_t * word, uint32_t n, int shared);

// A pause inside a spin loop (x86 `pause`; nothing where there is none).
// cDSP: a `pause` instruction packet.
void htp_plat_relax(void);

// ---------------------------------------------------------------------------
// Clocks
// ---------------------------------------------------------------------------

// Monotonic time in microseconds.
// cDSP: HAP_perf_get_time_us.
uint64_t htp_plat_now_us(void);

// A cycle counter for profiles (x86 TSC); 0 where none is readable.
// cDSP: HAP_perf_get_pcycles (the processor's pcycle counter).
uint64_t htp_plat_cycles(void);

// ---------------------------------------------------------------------------
// Performance counters (profiling mode 2)
// ---------------------------------------------------------------------------

struct htp_plat_pmu;  // opaque; the counters of one thread

// Open counters of the calling thread (user-space counts, kernel excluded),
// one per slot k < n: counters[k] is an enum htp_pmu_counter (HTP_PMU_OFF:
// slot unused), events[k] the slot's Hexagon PMU event number (the cDSP
// programs it for HTP_PMU_HEXAGON_EVENT; Linux ignores it). Sets *mask to
// the slots that opened and returns an enum htp_pmu_reason: OK when every
// slot asked for opened, otherwise why the first one that failed did. *out
// is NULL when nothing opened.
// Linux: perf_event_open(2), one counter per slot (no group: a group larger
// than the PMU would never be scheduled; the kernel multiplexes instead,
// and a multiplexed count is scaled by its time enabled / time running).
// cDSP: HAP_pmu / qurt_pmu_set for HTP_PMU_HEXAGON_EVENT. The Hexagon build
// here (qemu-hexagon, no PMU) answers HTP_PMU_REASON_UNAVAILABLE.
int htp_plat_pmu_open(const uint32_t * counters, const uint32_t * events, uint32_t n, struct htp_plat_pmu ** out,
                      uint32_t * mask);

// Current values of the open slots into values[k] (others 0), n as opened.
// Must be called on the thread that opened p. 0 or -1.
int htp_plat_pmu_read(struct htp_plat_pmu * p, uint64_t * values);

// Close p (NULL: nothing).
void htp_plat_pmu_close(struct htp_plat_pmu * p);

// ---------------------------------------------------------------------------
// Memory: the VA window, mapped buffers, scratch
// ---------------------------------------------------------------------------

// The granularity of reservations and mappings: reserve_at, map_buffer and
// protect_none take addresses and sizes that are multiples of it. At least
// HTP_PAGE_SIZE (4 KiB, the host's buffer granularity); 64 KiB under
// qemu-hexagon, whose Linux pages are that large.
// cDSP: 4 KiB (the SMMU's smallest page).
uint64_t htp_plat_page_size(void);

// Reserve size bytes of address space, inaccessible and not backed by memory.
// Returns the (page-aligned) address or NULL.
// cDSP: a range of the session's IOVA space (the SMMU window).
void * htp_plat_reserve(uint64_t size);

// Make [addr, addr + size) (inside a reservation, page aligned) a fresh
// inaccessible reservation again, replacing whatever was mapped there, in one
// step: the range never becomes free address space in between. 0 or -1.
// cDSP: HAP_munmap of the buffer; the IOVA range returns to the window.
int htp_plat_reserve_at(void * addr, uint64_t size);

// Give back a whole reservation (with whatever is mapped in it).
// cDSP: releasing the session's IOVA window.
void htp_plat_release(void * addr, uint64_t size);

// Bytes of the received buffer descriptor fd, or -1 if it is not something
// that can be mapped (a regular file / memfd).
// cDSP: the size fastrpc_mmap was given.
int64_t htp_plat_buffer_size(int fd);

// Map the first size bytes of buffer fd read-write, shared with the host, at
// addr (page aligned, inside a reservation; size a multiple of a page),
// replacing the reservation there. size may exceed the buffer by less than a
// page when the platform's pages are larger than the host's; the platform
// then makes the buffer cover it. eager: fault every page in now instead of
// on first touch. 0 or -1.
// cDSP: fastrpc_mmap / HAP_mmap of the host's rpcmem buffer (the SMMU maps it).
int htp_plat_map_buffer(void * addr, uint64_t size, int fd, int eager);

// Make [addr, addr + size) inaccessible (page aligned, mapped). 0 or -1.
// cDSP: not available to user code; guard pages are simply left unmapped.
int htp_plat_protect_none(void * addr, uint64_t size);

// Close a received buffer descriptor (a mapping keeps the memory).
// cDSP: nothing; FastRPC owns the handle.
void htp_plat_buffer_close(int fd);

// size bytes of zeroed read-write memory, private to the NPU, page aligned;
// pages not touched need not be resident. NULL on failure.
// cDSP: VTCM from the compute resource manager (HAP_compute_res_acquire).
void * htp_plat_scratch_alloc(uint64_t size);
void   htp_plat_scratch_free(void * p, uint64_t size);

// ---------------------------------------------------------------------------
// Control channel: a SOCK_SEQPACKET connection to a host
// ---------------------------------------------------------------------------

// Receive one message into buf (cap bytes) and at most max_fds descriptors
// that travelled with it (SCM_RIGHTS; more are closed). *truncated is set
// when the message or its descriptors did not fit. Returns the message's
// bytes, 0 when the peer hung up, -1 on error. Retries on EINTR.
// cDSP: the FastRPC skeleton's remote call arguments.
int64_t htp_plat_ctl_recv(int ch, void * buf, size_t cap, int * fds, int max_fds, int * n_fds, int * truncated);

// Send one message. 0, or -1 when the peer is gone (never a signal).
// cDSP: the remote call's output arguments.
int htp_plat_ctl_send(int ch, const void * buf, size_t len);

// Listen on a unix SOCK_SEQPACKET socket at path (replacing a stale socket,
// never another file), mode 0600, in a private directory: path's directory
// is created 0700 when missing, and refused unless it is ours with no access
// for group or others. Returns the listening channel or -1 (logged).
// cDSP: not needed; FastRPC opens sessions.
int htp_plat_ctl_listen(const char * path);

// Accept one connection on a listening channel from a peer of our own uid
// (SO_PEERCRED); peers of another uid are closed and logged. -1 on a fatal
// error (interrupted and aborted connections are retried).
int htp_plat_ctl_accept(int listener);

// Close a channel.
void htp_plat_ctl_close(int ch);

// ---------------------------------------------------------------------------
// Log and faults
// ---------------------------------------------------------------------------

// Write one finished line (n bytes, newline included) to the log in one
// piece, so lines of different threads do not interleave. Async-signal-safe.
// cDSP: FARF(ALWAYS, ...) / HAP_debug.
void htp_plat_log_write(const char * line, size_t n);

// A broken invariant of our own: log why and end the process at once.
// cDSP: the skeleton returns AEE_EFAILED and the process is torn down.
_Noreturn void htp_plat_abort(const char * why);

// Call report(addr) when a thread of the NPU touches memory it may not
// (SIGSEGV/SIGBUS), then end the process by that signal so the host sees it
// die. report runs in a signal handler: it may only use htp_plat_log_write
// and lock-free atomics.
// cDSP: the QuRT exception handler; the PD restarts and the host's FastRPC
// calls fail.
void htp_plat_on_fault(void (*report)(int is_bus_error, uintptr_t addr));

#endif  // HTP_PLATFORM_H
