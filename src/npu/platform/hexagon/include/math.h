// math.h (Hexagon runtime): the float and double functions the NPU uses, and
// only those (math.c). None of them sets errno or raises floating-point
// exceptions on purpose; build with -fno-math-errno so the compiler knows.
// fabsf, fabs, fmaxf and fminf are also macros onto the builtins, which
// Hexagon does in one instruction (extractu, sfmax, sfmin), since
// -ffreestanding otherwise turns every use into a call.

#ifndef HTP_RT_MATH_H
#define HTP_RT_MATH_H

#define INFINITY  __builtin_inff()
#define NAN       __builtin_nanf("")
#define HUGE_VALF __builtin_huge_valf()
#define HUGE_VAL  __builtin_huge_val()

#define isfinite(x) __builtin_isfinite(x)
#define isnan(x)    __builtin_isnan(x)
#define isinf(x)    __builtin_isinf(x)
#define signbit(x)  __builtin_signbit(x)

// POSIX, not C; the NPU's kernels use it.
#define M_PI 3.14159265358979323846

float expf(float x);
float logf(float x);
float powf(float x, float y);
float sinf(float x);
float cosf(float x);
float sqrtf(float x);
float tanhf(float x);
float erff(float x);
float fabsf(float x);
float floorf(float x);
float ceilf(float x);
float roundf(float x);
float nearbyintf(float x);
float fmaxf(float x, float y);
float fminf(float x, float y);

double sqrt(double x);
double tanh(double x);
double log(double x);
double exp(double x);
double ceil(double x);
double floor(double x);
double round(double x);
double pow(double x, double y);
double fabs(double x);

#define fabsf(x)    __builtin_fabsf(x)
#define fabs(x)     __builtin_fabs(x)
#define fmaxf(x, y) __builtin_fmaxf((x), (y))
#define fminf(x, y) __builtin_fminf((x), (y))

#endif  // HTP_RT_MATH_H
