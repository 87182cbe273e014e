// start.c: the process entry point of the Hexagon runtime, and the map of
// the runtime as a whole.
//
// The runtime is what the NPU links instead of a libc, crt and compiler-rt
// when it is built for Hexagon Linux user space (clang --target=hexagon
// -mv67 -mhvx, cmake/hexagon-toolchain.cmake) and run under qemu-hexagon:
//
//   start.c        _start: argv, envp and auxv from the stack, main, exit
//   thread.c       threads over clone(2); UGP points at each one's record
//   futex.h        futex wait and wake; the mutex malloc uses
//   syscall.h      trap0 wrappers and the asm-generic call numbers
//   malloc.c       malloc, calloc, realloc, free over mmap2
//   string.c       the mem* functions (HVX for long copies), a few str*
//   stdlib.c       getenv, exit, abort
//   strconv.c      strtoul, strtoull, strtod, atoi
//   printf.c       snprintf, vsnprintf
//   math.c         the float and double functions the NPU uses
//   compiler-rt.c  the helpers clang calls: division, sqrtf, a memcpy
//   bignum.h, softfp.h, rt-name.h   shared internals
//   include/       string.h stdlib.h stdio.h math.h errno.h: only what exists
//   ../hexagon-linux.c   the NPU's platform.h on top of all this
//
// ABI facts it relies on: the initial stack below; syscalls by trap0(#1)
// with the number in r6 (syscall.h); UGP as the thread pointer, set by
// clone's CLONE_SETTLS (thread.h); clone's argument order and child state
// (thread.c); the 32-bit asm-generic structures (hexagon-linux.c); a page of
// AT_PAGESZ bytes, 64 KiB under qemu-hexagon (start.h).
//
// Not supported: _Thread_local and TLS (no TLS block; UGP is ours), static
// constructors (.init_array is not run; C code has none), atexit, stdio
// streams, locales, long double formatting, wide characters, dynamic
// linking. Tests: tests/hexagon/run.sh.
//
// The entry itself: the kernel (or qemu-hexagon's loader) enters _start with
// nothing set up but the stack pointer r29, which points at the System V
// initial stack:
//
//   sp[0]          argc
//   sp[1..argc]    argv[], then a NULL
//   ...            envp[], then a NULL
//   ...            auxv: (type, value) pairs of words, ended by type 0
//
// (qemu-hexagon lays it out exactly so; its AT_PAGESZ is 65536). _start hands
// sp to C, which records envp and the page size, makes the main thread's
// runtime record and points UGP at it (see thread.h), and calls main; main's
// return value goes to exit_group. There is no .bss to clear (the ELF loader
// zeroes it) and no relocation (static, not PIE).

#include "start.h"

#include <stdint.h>
#include <stdlib.h>

#include "thread.h"

#define AT_NULL   0
#define AT_PAGESZ 6

int main(int argc, char ** argv);

_Noreturn void htp_rt_start_c(uintptr_t * sp);

static char ** start_envp;
static size_t  start_page_size = 4096;

char ** htp_rt_start_envp(void) {
    return start_envp;
}

size_t htp_rt_start_page_size(void) {
    return start_page_size;
}

_Noreturn void htp_rt_start_c(uintptr_t * sp) {
    int     argc = (int)sp[0];
    char ** argv = (char **)(sp + 1);
    char ** envp = argv + argc + 1;
    char ** e    = envp;
    while (*e != NULL) {
        e++;
    }
    for (uintptr_t * aux = (uintptr_t *)(e + 1); aux[0] != AT_NULL; aux += 2) {
        if (aux[0] == AT_PAGESZ && aux[1] != 0) {
            start_page_size = aux[1];
        }
    }
    start_envp = envp;
    htp_rt_thread_init_main();
    exit(main(argc, argv));
}

// The ABI wants sp 8-byte aligned at calls; the frame pointer (r30) and link
// register (r31) start at 0 so a debugger's backtrace ends here.
__asm__(
    "    .text\n"
    "    .globl _start\n"
    "    .type _start, @function\n"
    "    .p2align 4\n"
    "_start:\n"
    "    { r0 = r29 }\n"
    "    { r29 = and(r29, #-8); r30 = #0; r31 = #0 }\n"
    "    { call htp_rt_start_c }\n"
    "    .size _start, . - _start\n");
