// thread.c: clone(2)-based threads of the Hexagon runtime (see thread.h for
// the design). ABI facts used: clone's arguments are (flags, stack,
// parent_tid, child_tid, tls) in r0-r4 (Hexagon is not a CLONE_BACKWARDS
// architecture); the child resumes after the same trap0 with r0 = 0, sp = the
// stack given and the other registers as the parent had them, so r4 still
// holds the tls argument (our record) there; CLONE_SETTLS loads tls into UGP.
// qemu-hexagon treats a clone as a thread only when the flags include all of
// VM, FS, FILES, SIGHAND, THREAD and SYSVSEM, as below.

#include "thread.h"

#include "futex.h"
#include "start.h"
#include "syscall.h"

#define CLONE_VM             0x00000100
#define CLONE_FS             0x00000200
#define CLONE_FILES          0x00000400
#define CLONE_SIGHAND        0x00000800
#define CLONE_THREAD         0x00010000
#define CLONE_SYSVSEM        0x00040000
#define CLONE_SETTLS         0x00080000
#define CLONE_PARENT_SETTID  0x00100000
#define CLONE_CHILD_CLEARTID 0x00200000

#define PROT_NONE     0
#define PROT_READ     1
#define PROT_WRITE    2
#define MAP_PRIVATE   0x02
#define MAP_ANONYMOUS 0x20

#define HTP_STR(x)  #x
#define HTP_XSTR(x) HTP_STR(x)

enum { THREAD_RUNNING = 0, THREAD_DETACHED = 1, THREAD_DONE = 2 };

// Assembly below. clone returns the child's tid (or -errno) in the parent;
// the child never returns from it, it calls htp_rt_thread_main(record).
long htp_rt_thread_clone(unsigned long flags, void * sp, _Atomic uint32_t * ptid, _Atomic uint32_t * ctid, void * tls);
_Noreturn void htp_rt_thread_unmap_exit(void * map, size_t size);
_Noreturn void htp_rt_thread_main(struct htp_rt_thread * t);

static struct htp_rt_thread main_thread;

struct htp_rt_thread * htp_rt_thread_self(void) {
    struct htp_rt_thread * t;
    __asm__ volatile("%0 = ugp" : "=r"(t));
    return t;
}

int * htp_rt_errno_location(void) {
    return &htp_rt_thread_self()->err;
}

void htp_rt_thread_init_main(void) {
    main_thread.tid = (uint32_t)htp_sys_call0(HTP_NR_GETTID);
    __asm__ volatile("ugp = %0" : : "r"(&main_thread) : "memory");
}

_Noreturn void htp_rt_thread_main(struct htp_rt_thread * t) {
    t->fn(t->arg);
    uint32_t s = THREAD_RUNNING;
    if (atomic_compare_exchange_strong(&t->state, &s, THREAD_DONE)) {
        // Joined (or detached later, which then joins): the other side frees
        // the stack once the kernel has cleared tid, after this exit.
        for (;;) {
            htp_sys_call1(HTP_NR_EXIT, 0);
        }
    }
    // Detached before it finished: nobody will join, free ourselves. The
    // kernel must not write tid after the mapping is gone (the range could
    // already belong to someone else), so forget the address first.
    htp_sys_call1(HTP_NR_SET_TID_ADDRESS, 0);
    htp_rt_thread_unmap_exit(t->map, t->map_size);
}

int htp_rt_thread_start(void (*fn)(void *), void * arg, size_t stack_size, struct htp_rt_thread ** out) {
    size_t page = htp_rt_start_page_size();
    size_t need = stack_size + sizeof(struct htp_rt_thread) + 64;
    if (need < stack_size) {
        return -12;  // ENOMEM
    }
    size_t size = ((need + page - 1) & ~(page - 1)) + page;  // + the guard page
    long   m = htp_sys_call6(HTP_NR_MMAP2, 0, (long)size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (HTP_SYS_FAILED(m)) {
        return (int)m;
    }
    uint8_t * map = (uint8_t *)m;
    htp_sys_call3(HTP_NR_MPROTECT, (long)map, (long)page, PROT_NONE);

    // The record at the top, the stack below it, 8-byte aligned as the ABI wants.
    uintptr_t              top = ((uintptr_t)(map + size) - sizeof(struct htp_rt_thread)) & ~(uintptr_t)7;
    struct htp_rt_thread * t   = (struct htp_rt_thread *)top;
    t->err                     = 0;
    t->fn                      = fn;
    t->arg                     = arg;
    t->map                     = map;
    t->map_size                = size;
    atomic_store(&t->state, THREAD_RUNNING);
    atomic_store(&t->tid, 0);

    unsigned long flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
                          CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
    long r = htp_rt_thread_clone(flags, (void *)top, &t->tid, &t->tid, t);
    if (HTP_SYS_FAILED(r)) {
        htp_sys_call2(HTP_NR_MUNMAP, (long)map, (long)size);
        return (int)r;
    }
    *out = t;
    return 0;
}

void htp_rt_thread_join(struct htp_rt_thread * t) {
    // The kernel's wake at thread exit is a shared-futex wake: wait shared.
    for (uint32_t tid; (tid = atomic_load(&t->tid)) != 0;) {
        htp_rt_futex_wait(&t->tid, tid, -1, 1);
    }
    htp_sys_call2(HTP_NR_MUNMAP, (long)t->map, (long)t->map_size);
}

void htp_rt_thread_detach(struct htp_rt_thread * t) {
    uint32_t s = THREAD_RUNNING;
    if (!atomic_compare_exchange_strong(&t->state, &s, THREAD_DETACHED)) {
        htp_rt_thread_join(t);  // it has already finished: only the freeing is left
    }
}

__asm__(
    "    .text\n"
    "    .globl htp_rt_thread_clone\n"
    "    .type htp_rt_thread_clone, @function\n"
    "    .p2align 4\n"
    "htp_rt_thread_clone:\n"
    "    { r6 = #" HTP_XSTR(HTP_NR_CLONE) " }\n"
    "    { trap0(#1) }\n"
    "    { p0 = cmp.eq(r0, #0) }\n"
    "    { if (!p0) jumpr r31 }\n"
    "    { r0 = r4; r30 = #0; r31 = #0 }\n"
    "    { call htp_rt_thread_main }\n"
    "    .size htp_rt_thread_clone, . - htp_rt_thread_clone\n"
    "\n"
    "    .globl htp_rt_thread_unmap_exit\n"
    "    .type htp_rt_thread_unmap_exit, @function\n"
    "    .p2align 4\n"
    "htp_rt_thread_unmap_exit:\n"
    "    { r6 = #" HTP_XSTR(HTP_NR_MUNMAP) " }\n"
    "    { trap0(#1) }\n"
    "1:\n"
    "    { r0 = #0; r6 = #" HTP_XSTR(HTP_NR_EXIT) " }\n"
    "    { trap0(#1) }\n"
    "    { jump 1b }\n"
    "    .size htp_rt_thread_unmap_exit, . - htp_rt_thread_unmap_exit\n");
