// stdlib.c: getenv, exit and abort of the Hexagon runtime. The one idea:
// there is nothing to tear down (no stdio buffers, no atexit list), so exit
// is exit_group, and abort is SIGABRT sent to this thread, with SIGABRT put
// back to its default action first so a handler or an ignore cannot stop it.

#include <stdlib.h>

#include <string.h>

#include "start.h"
#include "syscall.h"

#define SIGABRT 6

char * getenv(const char * name) {
    char ** env = htp_rt_start_envp();
    if (env == NULL || name == NULL) {
        return NULL;
    }
    size_t n = strlen(name);
    for (; *env != NULL; env++) {
        if (strncmp(*env, name, n) == 0 && (*env)[n] == '=') {
            return *env + n + 1;
        }
    }
    return NULL;
}

_Noreturn void exit(int status) {
    for (;;) {
        htp_sys_call1(HTP_NR_EXIT_GROUP, status);
    }
}

_Noreturn void abort(void) {
    // struct sigaction of the asm-generic ABI: handler, flags, mask (64 bits).
    struct {
        unsigned long handler;
        unsigned long flags;
        unsigned long mask[2];
    } dfl = {0, 0, {0, 0}};
    htp_sys_call4(HTP_NR_RT_SIGACTION, SIGABRT, (long)&dfl, 0, 8);
    unsigned long unblock[2] = {1ul << (SIGABRT - 1), 0};
    htp_sys_call4(HTP_NR_RT_SIGPROCMASK, 1 /* SIG_UNBLOCK */, (long)unblock, 0, 8);
    htp_sys_call3(HTP_NR_TGKILL, htp_sys_call0(HTP_NR_GETPID), htp_sys_call0(HTP_NR_GETTID), SIGABRT);
    for (;;) {
        htp_sys_call1(HTP_NR_EXIT_GROUP, 127);
    }
}
