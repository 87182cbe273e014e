// start.h: what the Hexagon runtime's start-up learned from the initial
// stack, for the modules that need it (getenv, mmap sizes, threads).

#ifndef HTP_RT_START_H
#define HTP_RT_START_H

#include <stddef.h>

// The environment the process started with (NULL-terminated "NAME=value").
char ** htp_rt_start_envp(void);

// The kernel's page size (AT_PAGESZ): the granularity of mmap, mprotect and
// MAP_FIXED addresses. 4 KiB on a Hexagon Linux kernel, 64 KiB under
// qemu-hexagon, whose guest pages are 64 KiB.
size_t htp_rt_start_page_size(void);

#endif  // HTP_RT_START_H
