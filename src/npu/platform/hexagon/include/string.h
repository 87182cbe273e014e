// string.h (Hexagon runtime): the memory and string functions the NPU uses,
// and only those. They are also macros onto the compiler's builtins: the
// runtime is built -ffreestanding, which stops the compiler from treating
// memcpy & co. as known functions, and the macros give that back, so a
// memcpy of a constant few bytes (a type pun, a small struct) compiles to
// loads and stores instead of a call. Calls that stay calls land in string.c.

#ifndef HTP_RT_STRING_H
#define HTP_RT_STRING_H

#include <stddef.h>

void * memcpy(void * restrict dst, const void * restrict src, size_t n);
void * memmove(void * dst, const void * src, size_t n);
void * memset(void * dst, int c, size_t n);
int    memcmp(const void * a, const void * b, size_t n);
size_t strlen(const char * s);
int    strcmp(const char * a, const char * b);
int    strncmp(const char * a, const char * b, size_t n);
char * strcpy(char * restrict dst, const char * restrict src);
char * strchr(const char * s, int c);
char * strrchr(const char * s, int c);

#define memcpy(d, s, n)  __builtin_memcpy((d), (s), (n))
#define memmove(d, s, n) __builtin_memmove((d), (s), (n))
#define memset(d, c, n)  __builtin_memset((d), (c), (n))
#define memcmp(a, b, n)  __builtin_memcmp((a), (b), (n))
#define strlen(s)        __builtin_strlen((s))

#endif  // HTP_RT_STRING_H
