// bench.h: what htp-bench's modes share (each mode lives in its own file and
// is a row of the table in htp-bench.c).

#ifndef HTP_BENCH_H
#define HTP_BENCH_H

#include <stdint.h>

int64_t bench_now_ns(void);
int     bench_cmp_i64(const void * a, const void * b);
int64_t bench_median_i64(int64_t * v, int n);  // sorts v
double  bench_median_f64(double * v, int n);   // sorts v

int bench_mode_matmul(int argc, char ** argv);
int bench_mode_membw(int argc, char ** argv);
int bench_mode_model(int argc, char ** argv);  // bench-model.c: a whole model, HTP vs CPU
int bench_mode_vmem(int argc, char ** argv);

// Read bandwidth of this machine with n_threads threads over a buffer of
// `bytes` (much larger than the caches), median of reps, in bytes/s.
double bench_membw_measure(int n_threads, size_t bytes, int reps);

#endif  // HTP_BENCH_H
