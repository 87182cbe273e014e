// stream-prefetch.c: whether the x86 matmul kernels add software prefetches
// ahead of the weight streams they read (htp_mm_stream_prefetch).
//
// The prefetches were added where a decode that left the weights to the
// hardware prefetcher read well below the machine's bandwidth (matmul-quant.c
// and matmul-float.c give the figures), and kept on AMD Zen 5, where leaving
// them out costs a quarter to a third of the cold decode: a thread of the
// decode kernels reads four row groups at once (four streams a group's size
// apart), which Zen 5's hardware prefetcher alone does not keep fed. A read
// loop shaped like that (2 threads, AVX-512 loads, 1 GiB memfd) read 22-32
// GB/s with no software prefetch, 40-62 with one 2 KiB ahead of each stream,
// and 47-60 as a single stream per thread; htp-bench matmul -m 8192 -k 2048
// -n 1 --cache cold, alternated with this switch (2026-12-07, three pairs):
// Q4_K 1.21-1.28x ggml-cpu on, 0.89-1.05x off, Q4_0 1.33-1.37x / 1.05-1.13x.
// On AMD Zen 4 (2 cores of an EPYC, family 25)
// the same prefetches cost speed: the hardware prefetcher follows these
// streams on its own, and the extra requests compete with it. htp-bench matmul
// -n 1 --cache cold at the 1B model's shapes, ratio to ggml-cpu, alternated
// runs with and without (three pairs of builds, then three of one build and
// this switch): F16 0.65-1.03 -> 0.84-1.37 (better in 13 of 15 cells, and in
// 13 of 15 in the second set), Q4_0 0.85-1.47 -> 0.97-1.70 (12 of 15), Q4_K
// 0.73-1.43 -> 0.81-1.22 (lm-head 0.80-0.82 -> 0.89-0.96, 8192 x 2048
// 0.67-0.89 -> 0.92-0.94), MXFP4 and Q8_0 as often better as not. Q5_K
// (0.86-1.29 -> 0.75-1.06) and Q6_K (0.73-0.91 -> 0.67-0.87) lost without
// theirs: they read each part's high-bit lines out of order, which the
// hardware prefetcher does not follow, so they keep them everywhere. The F32
// decode shares the F16 one's loop and follows it.
//
// So the default is off on AMD family 25 (Zen 3 and Zen 4) and on everywhere
// else; GGML_HEXAGON_STREAM_PREFETCH=0 or 1 in the NPU's environment overrides
// it (so one build can compare the two).

#include "stream-prefetch.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

int htp_mm_stream_prefetch = 1;

int htp_mm_stream_prefetch_default(void) {
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (__get_cpuid(0, &a, &b, &c, &d) == 0) {
        return 1;
    }
    // "AuthenticAMD" in ebx, edx, ecx
    const int amd = b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u;
    if (!amd || __get_cpuid(1, &a, &b, &c, &d) == 0) {
        return 1;
    }
    const unsigned base = (a >> 8) & 0xfu, ext = (a >> 20) & 0xffu;
    const unsigned family = base == 0xfu ? base + ext : base;
    return family != 0x19u;
#else
    return 1;
#endif
}
