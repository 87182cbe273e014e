// compiler-rt.h: the helper functions clang calls for Hexagon operations the
// v67 core has no instruction for (compiler-rt.c says which and why), and the
// correctly rounded square root that math.c builds sqrt and sqrtf on.

#ifndef HTP_RT_COMPILER_RT_H
#define HTP_RT_COMPILER_RT_H

#include <stddef.h>
#include <stdint.h>

uint32_t __hexagon_udivsi3(uint32_t n, uint32_t d);
int32_t  __hexagon_divsi3(int32_t n, int32_t d);
uint32_t __hexagon_umodsi3(uint32_t n, uint32_t d);
int32_t  __hexagon_modsi3(int32_t n, int32_t d);
uint64_t __hexagon_udivdi3(uint64_t n, uint64_t d);
int64_t  __hexagon_divdi3(int64_t n, int64_t d);
uint64_t __hexagon_umoddi3(uint64_t n, uint64_t d);
int64_t  __hexagon_moddi3(int64_t n, int64_t d);

float  __hexagon_divsf3(float a, float b);
double __hexagon_divdf3(double a, double b);
float  __hexagon_sqrtf(float x);

void * __hexagon_memcpy_likely_aligned_min32bytes_mult8bytes(void * dst, const void * src, size_t n);

// sqrt(x) correctly rounded (IEEE 754 squareRoot): math.c's sqrt.
double htp_rt_sqrt_f64(double x);

#endif  // HTP_RT_COMPILER_RT_H
