// bench.h: what htp-bench's modes share (each mode lives in its own file and
// is a row of the table in htp-bench.c).

#ifndef HTP_BENCH_H
#define HTP_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "ggml.h"

int64_t bench_now_ns(void);
// A ggml type by its name, any case ("q4_K", "Q4_K"); GGML_TYPE_COUNT if none.
enum ggml_type bench_type_by_name(const char * name);
int     bench_cmp_i64(const void * a, const void * b);
int64_t bench_median_i64(int64_t * v, int n);  // sorts v
double  bench_median_f64(double * v, int n);   // sorts v

int bench_mode_matmul(int argc, char ** argv);
int bench_mode_fa(int argc, char ** argv);  // bench-fa.c: FLASH_ATTN_EXT by KV-cache type, HTP vs CPU
int bench_mode_membw(int argc, char ** argv);
int bench_mode_opcost(int argc, char ** argv);  // bench-opcost.c: the fixed cost of an op
int bench_mode_model(int argc, char ** argv);  // bench-model.c: a whole model, HTP vs CPU
int bench_mode_vmem(int argc, char ** argv);

// A buffer for read-bandwidth measurements: `bytes` (much larger than the
// caches; rounded down to whole 1 MiB chunks), every page faulted in once, so
// that each measurement only reads. NULL when it cannot be allocated.
struct bench_membw;
struct bench_membw * bench_membw_open(size_t bytes);
void                 bench_membw_close(struct bench_membw * m);

// Read bandwidth of this machine with n_threads (1..64) threads over m,
// median of reps, in bytes/s; 0 when m is NULL or the arguments are out of range.
double bench_membw_measure(struct bench_membw * m, int n_threads, int reps);

#endif  // HTP_BENCH_H
