// test-check.h: the failure counter and CHECK macro the standalone test
// programs share. CHECK prints the file, line and message of a failed
// condition and counts it; the program exits non-zero when n_fail > 0.

#ifndef TEST_CHECK_H
#define TEST_CHECK_H

#include <stdio.h>

static int n_fail = 0;

#define CHECK(cond, ...)                                \
    do {                                                \
        if (!(cond)) {                                  \
            printf("FAIL %s:%d: ", __FILE__, __LINE__); \
            printf(__VA_ARGS__);                        \
            printf("\n");                               \
            n_fail++;                                   \
        }                                               \
    } while (0)

#endif  // TEST_CHECK_H
