// test-check.h: the check macros and counters every test program shares.
// CHECK counts a check and, when its condition fails, prints the file, line,
// condition and message and counts a failure; CHECK_OR_RETURN also returns
// ret from the calling function (for checks later code depends on; in a void
// function ret is left empty: CHECK_OR_RETURN(, cond, ...)).
// test_exit_code() prints one summary line and gives the program's exit code:
// 0 pass, 1 fail (77, skip, is the program's own to return).

#ifndef TEST_CHECK_H
#define TEST_CHECK_H

#include <stdio.h>

static int n_check = 0;
static int n_fail  = 0;

#define CHECK(cond, ...)                                           \
    do {                                                           \
        n_check++;                                                 \
        if (!(cond)) {                                             \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            printf(__VA_ARGS__);                                   \
            printf("\n");                                          \
            n_fail++;                                              \
        }                                                          \
    } while (0)

#define CHECK_OR_RETURN(ret, cond, ...)                            \
    do {                                                           \
        n_check++;                                                 \
        if (!(cond)) {                                             \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            printf(__VA_ARGS__);                                   \
            printf("\n");                                          \
            n_fail++;                                              \
            return ret;                                            \
        }                                                          \
    } while (0)

// "<name>: <checks> checks, <failed> failed"; returns 0 or 1.
static inline int test_exit_code(const char * name) {
    printf("%s: %d checks, %d failed\n", name, n_check, n_fail);
    fflush(stdout);
    return n_fail ? 1 : 0;
}

#endif  // TEST_CHECK_H
