// stdlib.h (Hexagon runtime): memory allocation, the environment, number
// parsing and process exit; nothing else of <stdlib.h> exists here.
// strtoul & co. set errno (ERANGE, EINVAL) as C says; see errno.h.

#ifndef HTP_RT_STDLIB_H
#define HTP_RT_STDLIB_H

#include <stddef.h>

#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1

void * malloc(size_t size);
void * calloc(size_t n, size_t size);
void * realloc(void * p, size_t size);
void   free(void * p);

char * getenv(const char * name);

unsigned long      strtoul(const char * restrict s, char ** restrict end, int base);
unsigned long long strtoull(const char * restrict s, char ** restrict end, int base);
double             strtod(const char * restrict s, char ** restrict end);
int                atoi(const char * s);

_Noreturn void abort(void);
_Noreturn void exit(int status);

#endif  // HTP_RT_STDLIB_H
