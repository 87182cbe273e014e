// syscall.h: Linux system calls of the Hexagon runtime, as inline trap0
// wrappers. The one idea: the Hexagon Linux ABI puts the call number in r6
// and up to six arguments in r0-r5, `trap0(#1)` enters the kernel, and the
// result (or -errno, in -4095..-1) comes back in r0; every other register is
// preserved. Numbers are the asm-generic ones for a 32-bit target (Hexagon
// has no table of its own), checked against <asm-generic/unistd.h> and
// qemu-hexagon's list: where a call has a 32-bit-time and a 64-bit-time
// form, the 64-bit one (clock_gettime64, futex_time64) is used.

#ifndef HTP_RT_SYSCALL_H
#define HTP_RT_SYSCALL_H

#define HTP_NR_MKDIRAT           34
#define HTP_NR_UNLINKAT          35
#define HTP_NR_FTRUNCATE64       46
#define HTP_NR_FCHMODAT          53
#define HTP_NR_OPENAT            56
#define HTP_NR_CLOSE             57
#define HTP_NR_READ              63
#define HTP_NR_WRITE             64
#define HTP_NR_FSTATAT64         79
#define HTP_NR_FSTAT64           80
#define HTP_NR_EXIT              93
#define HTP_NR_EXIT_GROUP        94
#define HTP_NR_SET_TID_ADDRESS   96
#define HTP_NR_SCHED_SETAFFINITY 122
#define HTP_NR_SCHED_GETAFFINITY 123
#define HTP_NR_SCHED_YIELD       124
#define HTP_NR_KILL              129
#define HTP_NR_TGKILL            131
#define HTP_NR_RT_SIGACTION      134
#define HTP_NR_RT_SIGPROCMASK    135
#define HTP_NR_UMASK             166
#define HTP_NR_GETPID            172
#define HTP_NR_GETEUID           175
#define HTP_NR_GETTID            178
#define HTP_NR_SOCKET            198
#define HTP_NR_SOCKETPAIR        199
#define HTP_NR_BIND              200
#define HTP_NR_LISTEN            201
#define HTP_NR_CONNECT           203
#define HTP_NR_GETSOCKOPT        209
#define HTP_NR_SENDMSG           211
#define HTP_NR_RECVMSG           212
#define HTP_NR_MUNMAP            215
#define HTP_NR_CLONE             220
#define HTP_NR_MMAP2             222
#define HTP_NR_MPROTECT          226
#define HTP_NR_ACCEPT4           242
#define HTP_NR_MEMFD_CREATE      279
#define HTP_NR_CLOCK_GETTIME64   403
#define HTP_NR_FUTEX_TIME64      422

// A raw result is an error when it lies in -4095..-1 (never a valid address).
#define HTP_SYS_FAILED(r) ((unsigned long)(r) > (unsigned long)-4096L)

static inline long htp_sys_call0(long nr) {
    register long r0 __asm__("r0");
    register long r6 __asm__("r6") = nr;
    __asm__ volatile("trap0(#1)" : "=r"(r0) : "r"(r6) : "memory");
    return r0;
}

static inline long htp_sys_call1(long nr, long a) {
    register long r0 __asm__("r0") = a;
    register long r6 __asm__("r6") = nr;
    __asm__ volatile("trap0(#1)" : "+r"(r0) : "r"(r6) : "memory");
    return r0;
}

static inline long htp_sys_call2(long nr, long a, long b) {
    register long r0 __asm__("r0") = a;
    register long r1 __asm__("r1") = b;
    register long r6 __asm__("r6") = nr;
    __asm__ volatile("trap0(#1)" : "+r"(r0) : "r"(r1), "r"(r6) : "memory");
    return r0;
}

static inline long htp_sys_call3(long nr, long a, long b, long c) {
    register long r0 __asm__("r0") = a;
    register long r1 __asm__("r1") = b;
    register long r2 __asm__("r2") = c;
    register long r6 __asm__("r6") = nr;
    __asm__ volatile("trap0(#1)" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r6) : "memory");
    return r0;
}

static inline long htp_sys_call4(long nr, long a, long b, long c, long d) {
    register long r0 __asm__("r0") = a;
    register long r1 __asm__("r1") = b;
    register long r2 __asm__("r2") = c;
    register long r3 __asm__("r3") = d;
    register long r6 __asm__("r6") = nr;
    __asm__ volatile("trap0(#1)" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r3), "r"(r6) : "memory");
    return r0;
}

static inline long htp_sys_call5(long nr, long a, long b, long c, long d, long e) {
    register long r0 __asm__("r0") = a;
    register long r1 __asm__("r1") = b;
    register long r2 __asm__("r2") = c;
    register long r3 __asm__("r3") = d;
    register long r4 __asm__("r4") = e;
    register long r6 __asm__("r6") = nr;
    __asm__ volatile("trap0(#1)" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r3), "r"(r4), "r"(r6) : "memory");
    return r0;
}

static inline long htp_sys_call6(long nr, long a, long b, long c, long d, long e, long f) {
    register long r0 __asm__("r0") = a;
    register long r1 __asm__("r1") = b;
    register long r2 __asm__("r2") = c;
    register long r3 __asm__("r3") = d;
    register long r4 __asm__("r4") = e;
    register long r5 __asm__("r5") = f;
    register long r6 __asm__("r6") = nr;
    __asm__ volatile("trap0(#1)" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r3), "r"(r4), "r"(r5), "r"(r6) : "memory");
    return r0;
}

#endif  // HTP_RT_SYSCALL_H
