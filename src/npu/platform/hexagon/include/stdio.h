// stdio.h (Hexagon runtime): formatting into memory, and nothing else. There
// are no streams (no FILE, printf or stderr): output is a write(2) of a
// formatted buffer. Conversions: d i u x X o c s p % f F e E g G, with flags
// - + space # 0, width and precision (also as *), and lengths hh h l ll z j t.
// Not supported, printed as written: %a, %ls, %lc (their argument is taken),
// %n and the L length (long double; nothing is taken, so what follows is off).

#ifndef HTP_RT_STDIO_H
#define HTP_RT_STDIO_H

#include <stdarg.h>
#include <stddef.h>

int snprintf(char * restrict buf, size_t size, const char * restrict fmt, ...) __attribute__((format(printf, 3, 4)));
int vsnprintf(char * restrict buf, size_t size, const char * restrict fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#endif  // HTP_RT_STDIO_H
