// thread.h: threads of the Hexagon runtime, made with clone(2) directly.
//
// The one idea: every thread has a runtime record (struct htp_rt_thread),
// and the user-mode register UGP points at it. UGP is the Hexagon ABI's
// thread pointer: clone's CLONE_SETTLS loads it in the new thread (the kernel
// and qemu-hexagon both do), and _start sets it for the main thread. Nothing
// else in the runtime needs thread-local storage; the one per-thread C datum,
// errno, lives in the record (there is no _Thread_local / TLS segment
// support: code must not use _Thread_local).
//
// A started thread owns one anonymous mapping: a guard page (PROT_NONE) at
// the bottom, the stack, and its record at the top. The kernel clears
// record->tid and futex-wakes it when the thread has exited
// (CLONE_CHILD_CLEARTID), which is what join waits for before unmapping.
// A detached thread unmaps its own mapping on the way out, in a few
// instructions of assembly that touch no stack after the munmap.

#ifndef HTP_RT_THREAD_H
#define HTP_RT_THREAD_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct htp_rt_thread {
    int              err;    // errno of this thread
    _Atomic uint32_t tid;    // set at clone, cleared by the kernel at exit
    _Atomic uint32_t state;  // RUNNING, DETACHED or DONE (thread.c)
    void (*fn)(void * arg);
    void * arg;
    void * map;  // the thread's mapping (stack and record); NULL: main thread
    size_t map_size;
};

// The calling thread's record (reads UGP).
struct htp_rt_thread * htp_rt_thread_self(void);

// Called once by start-up: make the main thread's record and point UGP at it.
void htp_rt_thread_init_main(void);

// Start fn(arg) on a new thread with a stack of at least stack_size bytes.
// 0 with *out set, or -errno.
int htp_rt_thread_start(void (*fn)(void *), void * arg, size_t stack_size, struct htp_rt_thread ** out);

// Wait for t to finish, then free its stack; t is invalid afterwards.
void htp_rt_thread_join(struct htp_rt_thread * t);

// Let t free itself when it finishes; t is invalid afterwards.
void htp_rt_thread_detach(struct htp_rt_thread * t);

// errno's storage: the calling thread's record (errno.h).
int * htp_rt_errno_location(void);

#endif  // HTP_RT_THREAD_H
