// test-hexagon-rt.c: smoke test of the Hexagon runtime and of the platform
// on it (hexagon-linux.c), built with clang --target=hexagon against the
// runtime alone and run under qemu-hexagon -cpu v67. Prints one line per
// check; exits 0 only if all pass.
//
//   test-hexagon-rt          the runtime and the platform on their own; wants
//                            HTP_RT_SMOKE=1 in its environment (getenv check)
//   test-hexagon-rt ipc      fd 3 is a SOCK_SEQPACKET socket to
//                            test-hexagon-driver, which sends a memfd
//                            (run_ipc lists the exchange)
//   test-hexagon-rt fault    touch a reserved page: the fault report prints
//                            the address, then SIGSEGV must end the process
//   test-hexagon-rt bus      touch a page mapped past the end of its file:
//                            the same with SIGBUS
//   test-hexagon-rt abort    htp_plat_abort: a log line, then SIGABRT
//   test-hexagon-rt cross    print the digests of rt-crosscheck.h, which
//                            the driver compares with the host build's

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hexagon/start.h"
#include "hexagon/syscall.h"
#include "platform.h"

#define RT(name)      name
#define RT_FDIV(a, b) ((a) / (b))
#define RT_DDIV(a, b) ((a) / (b))
#include "rt-crosscheck.h"

static int n_fail = 0;

static void out(const char * s, size_t n) {
    htp_sys_call3(HTP_NR_WRITE, 1, (long)s, (long)n);
}

static void check(int ok, const char * what, const char * fmt, ...) __attribute__((format(printf, 3, 4)));

static void check(int ok, const char * what, const char * fmt, ...) {
    char    line[600];
    int     n = snprintf(line, sizeof(line) - 2, "%s %-22s ", ok ? "ok  " : "FAIL", what);
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof(line) - 2 - (size_t)n, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof(line) - 2) {
        n = (int)sizeof(line) - 2;
    }
    line[n++] = '\n';
    out(line, (size_t)n);
    if (!ok) {
        n_fail++;
    }
}

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static uint64_t f64_bits(double f) {
    uint64_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

// ---------------------------------------------------------------------------
// printf, strconv, getenv, errno
// ---------------------------------------------------------------------------

static void test_printf(void) {
    char b[512];
    snprintf(b, sizeof b, "%u %d %s %llu %zd %zu %x %llx %c|%5d|%-5d|%05d|%+d|%.3d|%#x|%#o|%hhd|%hd|%10s|%-4s|%.2s",
             4000000000u, -42, "str", 18446744073709551615ull, (ptrdiff_t)-5, (size_t)4294967295u, 0xdeadbeefu,
             0x123456789abcdef0ull, 'Z', 42, 42, 42, 42, 7, 255, 8, (signed char)-56, (short)-1234, "right", "l",
             "trunc");
    const char * want =
        "4000000000 -42 str 18446744073709551615 -5 4294967295 deadbeef 123456789abcdef0 "
        "Z|   42|42   |00042|+42|007|0xff|010|-56|-1234|     right|l   |tr";
    check(strcmp(b, want) == 0, "printf integers", "\"%s\"", b);

    snprintf(b, sizeof b, "%.3f %f %g %e %.0f %.0f %10.2f|%-10.2e|%g %g %G %.10g %+.1f %08.3f", 3.14159, 1.0 / 3, 1e-5,
             12345.678, 2.5, 3.5, -1.005, 1e300, 0.0001, 123456789.0, 1e-10, M_PI, -0.05, -2.5);
    want =
        "3.142 0.333333 1e-05 1.234568e+04 2 4      -1.00|1.00e+300 |0.0001 1.23457e+08 1E-10 3.141592654 -0.1 "
        "-002.500";
    check(strcmp(b, want) == 0, "printf floats", "\"%s\"", b);

    snprintf(b, sizeof b, "%e %g %.20f %.17g", 4.9e-324, 1e22, 0.1, 0.1);
    want = "4.940656e-324 1e+22 0.10000000000000000555 0.10000000000000001";
    check(strcmp(b, want) == 0, "printf exact digits", "\"%s\"", b);

    int v = 0x1234;
    snprintf(b, sizeof b, "%p %p", (void *)&v == NULL ? (void *)1 : (void *)0x1000, (void *)NULL);
    check(strcmp(b, "0x1000 (nil)") == 0, "printf %p", "\"%s\"", b);

    char small[6];
    int  n = snprintf(small, sizeof small, "%s", "truncated");
    check(n == 9 && strcmp(small, "trunc") == 0, "printf truncation", "returns %d, \"%s\"", n, small);
}

struct errno_probe {
    int              err_in_thread;
    unsigned long    value;
    _Atomic uint32_t done;
};

static void errno_thread(void * arg) {
    struct errno_probe * p = arg;
    errno                  = 0;
    p->value               = strtoul("99999999999", NULL, 10);  // > ULONG_MAX (32-bit here)
    p->err_in_thread       = errno;
}

static void test_strconv(void) {
    char *        end;
    unsigned long u = strtoul("4294967295", &end, 10);
    check(u == 4294967295ul && *end == '\0', "strtoul", "%lu", u);
    errno = 0;
    u     = strtoul(" 0x1fz", &end, 0);
    check(u == 31 && *end == 'z' && errno == 0, "strtoul base 0", "%lu, rest \"%s\"", u, end);
    unsigned long long ull = strtoull("18446744073709551615", NULL, 10);
    check(ull == 18446744073709551615ull, "strtoull", "%llu", ull);
    double d = strtod("0.1", &end);
    check(f64_bits(d) == f64_bits(0.1) && *end == '\0', "strtod", "%.17g", d);
    d = strtod("1e-320", NULL);
    check(f64_bits(d) == 0x7e8ull, "strtod subnormal", "%.17g (bits %llx)", d, (unsigned long long)f64_bits(d));
    d = strtod("-0x1.8p3xyz", &end);
    check(d == -12.0 && *end == 'x', "strtod hex", "%g", d);
    check(atoi("-123") == -123, "atoi", "%d", atoi("-123"));

    const char * env = getenv("HTP_RT_SMOKE");
    check(env != NULL && strcmp(env, "1") == 0 && htp_plat_getenv("HTP_RT_SMOKE") == env &&
              getenv("HTP_RT_SMOKE_NOT_SET") == NULL,
          "getenv", "HTP_RT_SMOKE=%s", env ? env : "(unset; run with HTP_RT_SMOKE=1)");

    // errno is per thread: an ERANGE on another thread leaves ours alone.
    struct errno_probe       p = {0, 0, 0};
    struct htp_plat_thread * t;
    errno = 0;
    if (htp_plat_thread_start(errno_thread, &p, &t) == 0) {
        htp_plat_thread_join(t);
    }
    check(p.err_in_thread == ERANGE && p.value == 4294967295ul && errno == 0, "errno per thread",
          "thread %d (%lu), main %d", p.err_in_thread, p.value, errno);
}

// ---------------------------------------------------------------------------
// string.h: every alignment and length across the word and HVX paths
// ---------------------------------------------------------------------------

static void test_string(void) {
    static uint8_t src[2048], dst[2048], ref[2048];
    long           bad = 0;
    for (int i = 0; i < (int)sizeof src; i++) {
        src[i] = (uint8_t)(i * 13 + 7);
    }
    const size_t lens[] = {0, 1, 3, 7, 8, 15, 16, 31, 33, 64, 127, 200, 511, 512, 513, 700, 1000};
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        size_t n = lens[li];
        for (int so = 0; so < 9; so++) {
            for (int d = 0; d < 9; d++) {
                memset(dst, 0xee, sizeof dst);
                memcpy(dst + d, src + so, n);
                for (size_t i = 0; i < sizeof dst; i++) {
                    uint8_t w = (i >= (size_t)d && i < d + n) ? src[so + i - d] : 0xee;
                    bad += dst[i] != w;
                }
                // memset
                memset(dst, 0, sizeof dst);
                memset(dst + d, 0x5a + so, n);
                for (size_t i = 0; i < sizeof dst; i++) {
                    bad += dst[i] != ((i >= (size_t)d && i < d + n) ? (uint8_t)(0x5a + so) : 0);
                }
                // memmove, overlapping both ways
                memcpy(dst, src, sizeof dst);
                memcpy(ref, src, sizeof ref);
                size_t from = 100 + (size_t)so, to = 100 + (size_t)d + (so & 1 ? 5 : 0);
                memmove(dst + to, dst + from, n);
                uint8_t tmp[2048];
                for (size_t i = 0; i < n; i++) {
                    tmp[i] = ref[from + i];
                }
                for (size_t i = 0; i < n; i++) {
                    ref[to + i] = tmp[i];
                }
                bad += memcmp(dst, ref, sizeof dst) != 0;
            }
        }
    }
    check(bad == 0, "memcpy/memset/memmove", "%ld wrong bytes", bad);
    char s[16];
    strcpy(s, "abc");
    int ok = strlen(s) == 3 && strcmp(s, "abc") == 0 && strcmp("abc", "abd") < 0 && strcmp("b", "abc") > 0 &&
             strncmp("abcx", "abcy", 3) == 0 && strncmp("ab", "abc", 5) < 0 && strchr(s, 'c') == s + 2 &&
             strchr(s, '\0') == s + 3 && strchr(s, 'z') == NULL && memcmp("ab\x80", "ab\x01", 3) > 0;
    check(ok, "string functions", "strlen strcmp strncmp strcpy strchr memcmp");
}

// ---------------------------------------------------------------------------
// malloc
// ---------------------------------------------------------------------------

#define STRESS_THREADS 4
#define STRESS_SLOTS   64

struct stress {
    int                id;
    _Atomic uint32_t * errors;
};

static uint8_t fill_byte(int id, int slot, size_t i) {
    return (uint8_t)(id * 31 + slot * 7 + i);
}

static void stress_thread(void * arg) {
    struct stress * s = arg;
    uint8_t *       p[STRESS_SLOTS];
    size_t          len[STRESS_SLOTS];
    uint64_t        state = 0x9e3779b97f4a7c15ull * (uint64_t)(s->id + 1);
    memset(p, 0, sizeof p);
    memset(len, 0, sizeof len);
    uint32_t errors = 0;
    for (int it = 0; it < 20000; it++) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        int    k = (int)(state % STRESS_SLOTS);
        size_t n = (size_t)((state >> 8) % 3000) + 1;
        if ((state >> 40) % 50 == 0) {
            n = (size_t)((state >> 20) % (300 << 10)) + 1;  // now and then a large one
        }
        if (p[k] != NULL) {
            for (size_t i = 0; i < len[k]; i++) {
                errors += p[k][i] != fill_byte(s->id, k, i);
            }
        }
        if (p[k] != NULL && (state >> 32) % 3 == 0) {
            uint8_t * q = realloc(p[k], n);
            if (q == NULL) {
                errors++;
                continue;
            }
            size_t keep = len[k] < n ? len[k] : n;
            for (size_t i = 0; i < keep; i++) {
                errors += q[i] != fill_byte(s->id, k, i);
            }
            p[k] = q;
        } else {
            free(p[k]);
            p[k] = (state >> 33) % 4 == 0 ? calloc(n, 1) : malloc(n);
            if (p[k] == NULL) {
                errors++;
                continue;
            }
            if (((uintptr_t)p[k] & 15) != 0) {
                errors++;
            }
        }
        len[k] = n;
        for (size_t i = 0; i < n; i++) {
            p[k][i] = fill_byte(s->id, k, i);
        }
    }
    for (int k = 0; k < STRESS_SLOTS; k++) {
        free(p[k]);
    }
    atomic_fetch_add(s->errors, errors);
}

static void test_malloc(void) {
    uint8_t * a  = malloc(100);
    uint8_t * z  = calloc(1000, 4);
    int       ok = a != NULL && z != NULL && ((uintptr_t)a & 15) == 0;
    for (int i = 0; ok && i < 4000; i++) {
        ok = z[i] == 0;
    }
    memset(a, 0x77, 100);
    a = realloc(a, 200000);  // small -> large keeps the bytes
    for (int i = 0; ok && a != NULL && i < 100; i++) {
        ok = a[i] == 0x77;
    }
    memset(a, 0x66, 200000);
    a = realloc(a, 50);  // shrinking keeps the block
    for (int i = 0; ok && a != NULL && i < 50; i++) {
        ok = a[i] == 0x66;
    }
    free(a);
    free(z);
    free(NULL);
    check(ok && calloc((size_t)-1, 16) == NULL, "malloc basics", "calloc zeroed, realloc keeps bytes, overflow NULL");

    _Atomic uint32_t         errors = 0;
    struct stress            s[STRESS_THREADS];
    struct htp_plat_thread * t[STRESS_THREADS];
    int                      started = 0;
    for (int i = 0; i < STRESS_THREADS; i++) {
        s[i] = (struct stress){i, &errors};
        started += htp_plat_thread_start(stress_thread, &s[i], &t[i]) == 0;
    }
    for (int i = 0; i < started; i++) {
        htp_plat_thread_join(t[i]);
    }
    check(started == STRESS_THREADS && errors == 0, "malloc 4-thread stress", "%d threads x 20000 ops, %u errors",
          started, (unsigned)errors);
}

// ---------------------------------------------------------------------------
// threads and futexes
// ---------------------------------------------------------------------------

static _Atomic uint32_t counter;

static void count_thread(void * arg) {
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        atomic_fetch_add(&counter, 1);
    }
}

struct flag {
    _Atomic uint32_t word;
};

static void set_flag_thread(void * arg) {
    struct flag * f = arg;
    atomic_store(&f->word, 1);
    htp_plat_wake(&f->word, 1, 0);
}

struct pingpong {
    _Atomic uint32_t turn;  // 0: main's, 1: the thread's
    int              rounds;
};

static void pong_thread(void * arg) {
    struct pingpong * pp = arg;
    for (int i = 0; i < pp->rounds; i++) {
        while (atomic_load(&pp->turn) != 1) {
            htp_plat_wait(&pp->turn, 0, -1, 0);
        }
        atomic_store(&pp->turn, 0);
        htp_plat_wake(&pp->turn, 1, 0);
    }
}

static void test_threads(void) {
    struct htp_plat_thread * t[8];
    int                      started = 0;
    atomic_store(&counter, 0);
    for (int i = 0; i < 8; i++) {
        started += htp_plat_thread_start(count_thread, NULL, &t[i]) == 0;
    }
    for (int i = 0; i < started; i++) {
        htp_plat_thread_join(t[i]);
    }
    check(started == 8 && counter == 8000, "thread start/join", "8 threads, counter %u", (unsigned)counter);

    // Detach while running: the thread frees itself; detach after it ended:
    // detach does the freeing.
    struct flag              f1 = {0}, f2 = {0};
    struct htp_plat_thread * d1;
    struct htp_plat_thread * d2;
    int                      ok = htp_plat_thread_start(set_flag_thread, &f1, &d1) == 0;
    if (ok) {
        htp_plat_thread_detach(d1);
        while (atomic_load(&f1.word) == 0) {
            htp_plat_wait(&f1.word, 0, 100000, 0);
        }
    }
    ok = ok && htp_plat_thread_start(set_flag_thread, &f2, &d2) == 0;
    if (ok) {
        while (atomic_load(&f2.word) == 0) {
            htp_plat_wait(&f2.word, 0, 100000, 0);
        }
        htp_plat_wait(&f2.word, 1, 20000, 0);  // let it finish exiting
        htp_plat_thread_detach(d2);
    }
    check(ok, "thread detach", "before and after the thread ended");

    struct pingpong          pp = {0, 2000};
    struct htp_plat_thread * pt;
    ok = htp_plat_thread_start(pong_thread, &pp, &pt) == 0;
    for (int i = 0; ok && i < pp.rounds; i++) {
        atomic_store(&pp.turn, 1);
        htp_plat_wake(&pp.turn, 1, 0);
        while (atomic_load(&pp.turn) != 0) {
            htp_plat_wait(&pp.turn, 1, -1, 0);
        }
    }
    if (ok) {
        htp_plat_thread_join(pt);
    }
    check(ok, "futex ping-pong", "%d rounds of private wait/wake", pp.rounds);

    _Atomic uint32_t w  = 0;
    uint64_t         t0 = htp_plat_now_us();
    htp_plat_wait(&w, 0, 20000, 0);
    uint64_t t1 = htp_plat_now_us();
    htp_plat_wait(&w, 0, 20000, 1);
    uint64_t t2 = htp_plat_now_us();
    htp_plat_wait(&w, 5, 1000000, 0);  // *word != expected: returns at once
    uint64_t t3 = htp_plat_now_us();
    check(t1 - t0 >= 19000 && t1 - t0 < 2000000 && t2 - t1 >= 19000 && t3 - t2 < 500000, "futex timeouts",
          "20 ms private %llu us, shared %llu us, mismatch %llu us", (unsigned long long)(t1 - t0),
          (unsigned long long)(t2 - t1), (unsigned long long)(t3 - t2));

    uint64_t c0 = htp_plat_cycles();
    htp_plat_relax();
    uint64_t c1 = htp_plat_cycles();
    check(c1 >= c0 && htp_plat_now_us() >= t3, "clocks", "now %llu us, cycles %llu -> %llu (qemu: 0)",
          (unsigned long long)t3, (unsigned long long)c0, (unsigned long long)c1);

    uint32_t cpus = htp_plat_cpu_count();
    check(cpus >= 1 && htp_plat_thread_pin(0) == 0, "cpu count and pin", "%u cpus", cpus);
}

// ---------------------------------------------------------------------------
// atomics: clang inlines every width with memw_locked / memd_locked (LL/SC;
// 8- and 16-bit ones on the containing word), no libcalls
// ---------------------------------------------------------------------------

struct atomics {
    _Atomic uint64_t a64;
    _Atomic uint64_t cas64;
    _Atomic uint32_t a32;
    _Atomic uint16_t a16;
    _Atomic uint8_t  a8;
};

static void atomics_thread(void * arg) {
    struct atomics * a = arg;
    for (int i = 0; i < 10000; i++) {
        atomic_fetch_add(&a->a64, 0x100000001ull);  // carries across the halves
        atomic_fetch_add(&a->a32, 3);
        atomic_fetch_add(&a->a16, 1);
        atomic_fetch_add(&a->a8, 1);
        uint64_t old = atomic_load(&a->cas64);
        while (!atomic_compare_exchange_weak(&a->cas64, &old, old + 0xffffffffull)) {
        }
    }
}

static void test_atomics(void) {
    struct atomics           a = {0, 0, 0, 0, 0};
    struct htp_plat_thread * t[4];
    int                      started = 0;
    for (int i = 0; i < 4; i++) {
        started += htp_plat_thread_start(atomics_thread, &a, &t[i]) == 0;
    }
    for (int i = 0; i < started; i++) {
        htp_plat_thread_join(t[i]);
    }
    uint64_t n = 10000ull * (uint64_t)started;
    check(started == 4 && a.a64 == n * 0x100000001ull && a.cas64 == n * 0xffffffffull && a.a32 == 3 * n &&
              a.a16 == (uint16_t)n && a.a8 == (uint8_t)n,
          "atomics 64/32/16/8-bit", "4 threads: fetch_add, and a 64-bit CAS loop");
}

// ---------------------------------------------------------------------------
// memory: reserve, map a memfd, protect, scratch
// ---------------------------------------------------------------------------

static void test_memory(void) {
    size_t page = htp_rt_start_page_size();
    long   fd   = htp_sys_call2(HTP_NR_MEMFD_CREATE, (long)"htp-rt-test", 0);
    if (HTP_SYS_FAILED(fd)) {
        check(0, "memfd_create", "error %ld", -fd);
        return;
    }
    // Size the file by writing it: 4 pages of a pattern.
    static uint8_t chunk[4096];
    for (size_t off = 0; off < 4 * page; off += sizeof chunk) {
        for (size_t i = 0; i < sizeof chunk; i++) {
            chunk[i] = (uint8_t)((off + i) * 3);
        }
        htp_sys_call3(HTP_NR_WRITE, fd, (long)chunk, sizeof chunk);
    }
    int64_t size = htp_plat_buffer_size((int)fd);
    int     sv[2];
    long    sp = htp_sys_call4(HTP_NR_SOCKETPAIR, 1, 5, 0, (long)sv);
    check(size == (int64_t)(4 * page) && htp_plat_buffer_size(-1) == -1 &&
              (HTP_SYS_FAILED(sp) || htp_plat_buffer_size(sv[0]) == -1),
          "buffer size (fstat64)", "%lld bytes (page %zu); socket and bad fd -1", (long long)size, page);

    uint8_t * base = htp_plat_reserve(16 * page);
    int       ok   = base != NULL && ((uintptr_t)base % page) == 0;
    ok             = ok && htp_plat_map_buffer(base + page, 2 * page, (int)fd, 1) == 0;
    ok             = ok && htp_plat_map_buffer(base + 8 * page, 4 * page, (int)fd, 0) == 0;
    long bad       = 0;
    for (size_t i = 0; ok && i < 2 * page; i++) {
        bad += base[page + i] != (uint8_t)(i * 3);
    }
    for (size_t i = 0; ok && i < page; i++) {
        base[page + i] = (uint8_t)~i;  // shared: visible through the other mapping
    }
    for (size_t i = 0; ok && i < page; i++) {
        bad += base[8 * page + i] != (uint8_t)~i;
    }
    check(ok && bad == 0, "reserve + map memfd", "two MAP_FIXED views of one memfd agree (%ld bad bytes)", bad);

    int prot  = htp_plat_protect_none(base + 9 * page, page);
    int resv  = htp_plat_reserve_at(base + page, 2 * page);
    int remap = htp_plat_map_buffer(base + page, 2 * page, (int)fd, 0);
    ok        = prot == 0 && resv == 0 && remap == 0 && base[page + 5] == (uint8_t)~5 &&
         htp_plat_reserve_at(base + page, 2 * page) == 0;
    int misaligned = page > 4096 ? htp_plat_map_buffer(base + 4096, 4096, (int)fd, 0) : -1;
    check(ok && misaligned == -1, "protect, reserve_at", "protect %d, reserve_at %d, remap %d sees the writes; %s",
          prot, resv, remap, page > 4096 ? "a 4 KiB-aligned MAP_FIXED fails under 64 KiB pages" : "4 KiB pages");
    htp_plat_release(base, 16 * page);
    htp_plat_buffer_close((int)fd);

    uint8_t * s = htp_plat_scratch_alloc(3 * page);
    ok          = s != NULL && ((uintptr_t)s % page) == 0;
    for (size_t i = 0; ok && i < 3 * page; i += 997) {
        ok   = s[i] == 0;
        s[i] = 1;
    }
    htp_plat_scratch_free(s, 3 * page);
    check(ok, "scratch alloc", "zeroed, page aligned, writable");
    if (!HTP_SYS_FAILED(sp)) {
        htp_plat_ctl_close(sv[0]);
        htp_plat_ctl_close(sv[1]);
    }
}

// ---------------------------------------------------------------------------
// control channel, in process
// ---------------------------------------------------------------------------

struct sockaddr_un_k {
    uint16_t family;
    char     path[108];
};

struct connector {
    const char *     path;
    _Atomic uint32_t ok;
};

static void connect_thread(void * arg) {
    struct connector *   c = arg;
    struct sockaddr_un_k a;
    memset(&a, 0, sizeof a);
    a.family = 1;
    strcpy(a.path, c->path);
    long s = htp_sys_call3(HTP_NR_SOCKET, 1, 5, 0);
    if (HTP_SYS_FAILED(s) || HTP_SYS_FAILED(htp_sys_call3(HTP_NR_CONNECT, s, (long)&a, sizeof a))) {
        return;
    }
    atomic_store(&c->ok, htp_plat_ctl_send((int)s, "via listen", 11) == 0);
    htp_plat_ctl_close((int)s);
}

static void test_ctl(void) {
    int  sv[2];
    long r = htp_sys_call4(HTP_NR_SOCKETPAIR, 1, 5 | 0x80000, 0, (long)sv);
    if (HTP_SYS_FAILED(r)) {
        check(0, "socketpair", "error %ld", -r);
        return;
    }
    char    buf[128];
    int     fds[4], nf = -1, tr = -1;
    int     ok = htp_plat_ctl_send(sv[0], "hello", 5) == 0;
    int64_t n  = htp_plat_ctl_recv(sv[1], buf, sizeof buf, fds, 4, &nf, &tr);
    ok         = ok && n == 5 && nf == 0 && tr == 0 && memcmp(buf, "hello", 5) == 0;
    char big[100];
    memset(big, 'x', sizeof big);
    ok = ok && htp_plat_ctl_send(sv[0], big, sizeof big) == 0;
    n  = htp_plat_ctl_recv(sv[1], buf, 10, fds, 4, &nf, &tr);
    check(ok && n == 10 && tr == 1, "ctl send/recv", "message, and a truncated one (%lld bytes, truncated %d)",
          (long long)n, tr);
    htp_plat_ctl_close(sv[0]);
    n = htp_plat_ctl_recv(sv[1], buf, sizeof buf, fds, 4, &nf, &tr);
    // The peer is gone: sending must fail, not raise SIGPIPE.
    int sent = htp_plat_ctl_send(sv[1], "x", 1);
    check(n == 0 && sent == -1, "ctl hang-up", "recv %lld, send %d (no SIGPIPE)", (long long)n, sent);
    htp_plat_ctl_close(sv[1]);

    // The socket goes in a private directory, which listen creates (0700).
    char dir[64], path[80];
    snprintf(dir, sizeof dir, "/tmp/htp-rt-test-%ld", htp_sys_call0(HTP_NR_GETPID));
    snprintf(path, sizeof path, "%s/npu.sock", dir);
    int                      ls = htp_plat_ctl_listen(path);
    struct connector         c  = {path, 0};
    struct htp_plat_thread * t;
    ok       = ls >= 0 && htp_plat_thread_start(connect_thread, &c, &t) == 0;
    int conn = ok ? htp_plat_ctl_accept(ls) : -1;
    n        = conn >= 0 ? htp_plat_ctl_recv(conn, buf, sizeof buf, fds, 4, &nf, &tr) : -1;
    if (ok) {
        htp_plat_thread_join(t);
    }
    check(conn >= 0 && n == 11 && strcmp(buf, "via listen") == 0 && c.ok, "ctl listen/accept", "%s", path);
    if (conn >= 0) {
        htp_plat_ctl_close(conn);
    }
    if (ls >= 0) {
        htp_plat_ctl_close(ls);
    }
    htp_sys_call3(HTP_NR_UNLINKAT, -100, (long)path, 0);
    htp_sys_call3(HTP_NR_UNLINKAT, -100, (long)dir, 0x200);  // AT_REMOVEDIR
}

// ---------------------------------------------------------------------------
// compiler helpers, hardware float, HVX
// ---------------------------------------------------------------------------

// A struct copy of a constant 80 bytes between 4-byte-aligned objects: clang
// calls __hexagon_memcpy_likely_aligned_min32bytes_mult8bytes for it.
struct words20 {
    uint32_t w[20];
};

__attribute__((noinline)) static void copy_words20(struct words20 * d, const struct words20 * s) {
    *d = *s;
}

static void test_helpers(void) {
    struct words20 ws, wd;
    for (int i = 0; i < 20; i++) {
        ws.w[i] = 0x01010101u * (uint32_t)i;
        wd.w[i] = 0;
    }
    copy_words20(&wd, &ws);
    check(memcmp(&wd, &ws, sizeof ws) == 0, "aligned memcpy helper", "an 80-byte struct copy");

    // volatile: make the compiler emit the division instead of folding it
    volatile int32_t  a = 7, b = -2, c = -7, d = 2, imin = INT32_MIN, one = 1;
    volatile uint32_t umax = UINT32_MAX, three = 3, ten = 10;
    int               ok = a / b == -3 && a % b == 1 && c / d == -3 && c % d == -1 && imin / one == INT32_MIN &&
             umax / three == 1431655765u && umax % ten == 5;
    volatile int64_t  lmin = INT64_MIN, seven = 7, big = 123456789012345678ll, mk = -1000;
    volatile uint64_t lmax = UINT64_MAX, l3 = 3, p = 1000000007ull;
    ok = ok && lmin / seven == -1317624576693539401ll && lmin % seven == -1 && lmax / l3 == 6148914691236517205ull &&
         lmax % p == 582344007ull && big / mk == -123456789012345ll && big % mk == 678;
    check(ok, "int div/mod helpers", "__hexagon_{u,}{div,mod}{si,di}3 edge values");

    volatile float  f1 = 1.0f, f3 = 3.0f, ftiny = 1e-40f, fz = 0.0f, f2 = 2.0f;
    volatile double d1 = 1.0, d3 = 3.0, dtiny = 1e-310, d7 = 7.0, dtwo = 2.0;
    ok = f32_bits(f1 / f3) == f32_bits(0x1.555556p-2f) && f32_bits(ftiny / f3) == f32_bits(0x1.73acp-135f) &&
         isinf(f2 / fz) && isnan(fz / fz) && f64_bits(d1 / d3) == f64_bits(0x1.5555555555555p-2) &&
         f64_bits(dtiny / d7) == 0x2a1387dd7bdull && f32_bits(sqrtf(f2)) == f32_bits(0x1.6a09e6p+0f) &&
         isnan(sqrtf(-f1)) && f64_bits(sqrt(dtwo)) == f64_bits(0x1.6a09e667f3bcdp+0);
    check(ok, "float div/sqrt helpers", "divsf3 divdf3 sqrtf sqrt, subnormal results exact");

    volatile double x1 = 0.1, x2 = 0.2, x3 = 1.1, xs = 0x1p-1000, xt = 0x1p-70;
    volatile float  fnan = NAN, fone = 1.0f;
    volatile double dbig = -1e18;
    ok = f64_bits(x1 + x2) == f64_bits(0x1.3333333333334p-2) && f64_bits(x3 * x3) == f64_bits(0x1.35c28f5c28f5dp+0) &&
         xs * xt == 0x1p-1070 && (int64_t)dbig == -1000000000000000000ll && (double)(uint64_t)lmax == 0x1p64 &&
         fmaxf(fnan, fone) == 1.0f && fminf(fone, fnan) == 1.0f;
    check(ok, "hardware double, sfmax", "dfadd/dfmpy IEEE with subnormals; fmaxf(NaN, 1) = 1");
}

typedef int32_t hvx_vec __attribute__((__vector_size__(128), __aligned__(128)));

static void test_hvx(void) {
    static uint8_t bytes[128] __attribute__((aligned(128)));
    static int32_t lanes[32] __attribute__((aligned(128)));
    for (int i = 0; i < 128; i++) {
        bytes[i] = (uint8_t)i;
    }
    hvx_vec v = *(const hvx_vec *)bytes;
    // vrmpybus: each 32-bit lane = sum of its 4 unsigned bytes times the 4
    // signed bytes of the scalar.
    *(hvx_vec *)lanes = __builtin_HEXAGON_V6_vrmpybus_128B(v, 0x01010101);
    int32_t sum1      = 0;
    for (int i = 0; i < 32; i++) {
        sum1 += lanes[i];
    }
    *(hvx_vec *)lanes = __builtin_HEXAGON_V6_vrmpybus_128B(v, 0x02ff0103);  // weights 3, 1, -1, 2
    int32_t sum2      = 0;
    for (int i = 0; i < 32; i++) {
        sum2 += lanes[i];
    }
    check(sum1 == 8128 && sum2 == 10080, "HVX vrmpybus 128B", "sums %d (want 8128), %d (want 10080)", (int)sum1,
          (int)sum2);
}

// ---------------------------------------------------------------------------
// math spot values (correctly rounded results, as glibc gives them)
// ---------------------------------------------------------------------------

static void test_math(void) {
    volatile float  one = 1.0f, two = 2.0f, ten = 10.0f, half = 0.5f, big = 1e30f, hk = 100000.0f, m2 = -2.0f;
    volatile double d1 = 1.0, d10 = 10.0, d2 = 2.0;
    struct {
        const char * name;
        float        got, want;
    } f[] = {
        {"expf(1)", expf(one), 0x1.5bf0a8p+1f},
        {"logf(2)", logf(two), 0x1.62e43p-1f},
        {"powf(2,10)", powf(two, ten), 1024.0f},
        {"powf(2,.5)", powf(two, half), 0x1.6a09e6p+0f},
        {"sinf(1)", sinf(one), 0x1.aed548p-1f},
        {"cosf(1)", cosf(one), 0x1.14a28p-1f},
        {"sinf(1e30)", sinf(big), -0x1.95136p-1f},
        {"cosf(1e5)", cosf(hk), -0x1.ffac38p-1f},
        {"tanhf(.5)", tanhf(half), 0x1.d9353ep-2f},
        {"erff(.5)", erff(half), 0x1.0a7ef6p-1f},
        {"erff(-2)", erff(m2), -0x1.fd9ae2p-1f},
        {"expf(-100)", expf(-100.0f * one), 0x1.bp-145f},
        {"logf(1e-40)", logf(1e-40f * one), -0x1.7069e4p+6f},
        {"powf(-2,3)", powf(m2, 3.0f * one), -8.0f},
        {"floorf(-2.5)", floorf(-2.5f * one), -3.0f},
        {"ceilf(-2.5)", ceilf(-2.5f * one), -2.0f},
        {"roundf(2.5)", roundf(2.5f * one), 3.0f},
        {"fabsf(-3)", fabsf(-3.0f * one), 3.0f},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (f32_bits(f[i].got) != f32_bits(f[i].want)) {
            check(0, f[i].name, "%.9g (bits %08x), want %.9g", (double)f[i].got, (unsigned)f32_bits(f[i].got),
                  (double)f[i].want);
            bad++;
        }
    }
    struct {
        const char * name;
        double       got, want;
    } g[] = {
        {"exp(1)", exp(d1), 0x1.5bf0a8b145769p+1},
        {"log(10)", log(d10), 0x1.26bb1bbb55516p+1},
        {"pow(2,.5)", pow(d2, 0.5 * d1), 0x1.6a09e667f3bcdp+0},
        {"tanh(1)", tanh(d1), 0x1.85efab514f394p-1},
        {"exp(-740)", exp(-740.0 * d1), 0x0.0000000000055p-1022},
        {"log(1e-310)", log(1e-310 * d1), -0x1.64e69394d9508p+9},
        {"pow(10,-300)", pow(d10, -300.0 * d1), 0x1.56e1fc2f8f359p-997},
        {"pow(1+1e-7,1e9)", pow(1.0000001 * d1, 1e9 * d1), 0x1.349445c228792p+144},
        {"tanh(-.01)", tanh(-0.01 * d1), -0x1.47ab48ae4595ep-7},
        {"floor(-0.5)", floor(-0.5 * d1), -1.0},
        {"ceil(0.2)", ceil(0.2 * d1), 1.0},
        {"round(-2.5)", round(-2.5 * d1), -3.0},
    };
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        if (f64_bits(g[i].got) != f64_bits(g[i].want)) {
            check(0, g[i].name, "%.17g (bits %016llx), want %.17g", g[i].got, (unsigned long long)f64_bits(g[i].got),
                  g[i].want);
            bad++;
        }
    }
    int cls = isfinite(d1) && !isfinite(INFINITY) && isnan(NAN) && isinf(-HUGE_VALF) && !isnan(d1);
    check(bad == 0 && cls, "math spot values", "%d float and %d double functions match glibc bit for bit",
          (int)(sizeof f / sizeof f[0]), (int)(sizeof g / sizeof g[0]));
}

// ---------------------------------------------------------------------------
// ipc, fault, bus, abort: the driver's side of the tests
// ---------------------------------------------------------------------------

// With test-hexagon-driver on fd 3:
//   1. recv "map" with one fd: a memfd of 128 KiB, bytes 64..4095 = i * 7
//   2. map it (eager) at a page of a reservation, check the pattern, write
//      bytes 8192..8447 = 255 - i; after 200 ms (so the driver is asleep on
//      it) set word 0 to 1 and wake it (shared)
//   3. send "mapped"; wait (shared, 5 s timeouts) until the driver, 200 ms
//      later, sets word 1 and wakes it: done in under 3 s only if the wake
//      arrived
//   4. recv a 100-byte message into 10 bytes: truncated
//   5. recv "fds" with 3 descriptors, room for 1: one kept, truncated
//   6. send "done"; recv sees the hang-up (0)
static int run_ipc(void) {
    htp_plat_init();
    size_t  page = htp_rt_start_page_size();
    char    buf[64];
    int     fds[2], nf, tr;
    int64_t n = htp_plat_ctl_recv(3, buf, sizeof buf, fds, 2, &nf, &tr);
    check(n == 4 && nf == 1 && tr == 0 && strcmp(buf, "map") == 0, "ipc recv with fd", "%lld bytes, %d fds, fd %d",
          (long long)n, nf, nf > 0 ? fds[0] : -1);
    if (nf != 1) {
        return 1;
    }
    int64_t   size = htp_plat_buffer_size(fds[0]);
    uint8_t * base = htp_plat_reserve(8 * page);
    int       ok   = size == 131072 && base != NULL && htp_plat_map_buffer(base + page, 131072, fds[0], 1) == 0;
    htp_plat_buffer_close(fds[0]);  // the mapping keeps the memory
    long bad = 0;
    for (int i = 64; ok && i < 4096; i++) {
        bad += base[page + i] != (uint8_t)(i * 7);
    }
    check(ok && bad == 0, "ipc map_buffer", "%lld-byte memfd mapped at %p, %ld bad bytes", (long long)size,
          (void *)(base + page), bad);
    if (!ok) {
        return 1;
    }
    uint8_t *          mem   = base + page;
    _Atomic uint32_t * words = (_Atomic uint32_t *)mem;
    for (int i = 0; i < 256; i++) {
        mem[8192 + i] = (uint8_t)(255 - i);
    }
    _Atomic uint32_t nap = 0;
    htp_plat_wait(&nap, 0, 200000, 0);
    atomic_store(&words[0], 1);
    htp_plat_wake(&words[0], 1, 1);
    ok          = htp_plat_ctl_send(3, "mapped", 7) == 0;
    uint64_t t0 = htp_plat_now_us();
    while (atomic_load(&words[1]) == 0 && htp_plat_now_us() - t0 < 3000000) {
        htp_plat_wait(&words[1], 0, 5000000, 1);
    }
    uint64_t waited = htp_plat_now_us() - t0;
    check(ok && atomic_load(&words[1]) == 1 && waited < 3000000, "ipc shared futex",
          "the driver's wake ended the wait after %llu ms", (unsigned long long)(waited / 1000));

    n = htp_plat_ctl_recv(3, buf, 10, fds, 2, &nf, &tr);
    check(n == 10 && tr == 1 && nf == 0, "ipc truncated message", "%lld bytes, truncated %d", (long long)n, tr);
    n = htp_plat_ctl_recv(3, buf, sizeof buf, fds, 1, &nf, &tr);
    check(n == 4 && nf == 1 && tr == 1, "ipc extra fds closed", "%d of 3 kept, truncated %d", nf, tr);
    if (nf == 1) {
        htp_plat_buffer_close(fds[0]);
    }
    ok = htp_plat_ctl_send(3, "done", 5) == 0;
    n  = htp_plat_ctl_recv(3, buf, sizeof buf, fds, 1, &nf, &tr);
    check(ok && n == 0, "ipc hang-up", "recv after the driver closed: %lld", (long long)n);
    htp_plat_release(base, 8 * page);
    return n_fail ? 1 : 0;
}

// The fault report: runs in the signal handler, so only log_write.
static void fault_report(int is_bus_error, uintptr_t addr) {
    char line[64];
    int  n = snprintf(line, sizeof line, "fault report: bus %d at %p\n", is_bus_error, (void *)addr);
    htp_plat_log_write(line, (size_t)n);
}

static int run_fault(int bus) {
    htp_plat_init();
    htp_plat_on_fault(fault_report);
    size_t             page = htp_rt_start_page_size();
    uint8_t *          base = htp_plat_reserve(4 * page);
    volatile uint8_t * target;
    if (bus) {
        // A memfd page mapped, then the file cut to 0 bytes: touching the
        // page is SIGBUS. (qemu-hexagon will not map past the end of a file
        // in the first place.) ftruncate64's 64-bit length is 0 here, so its
        // register pair's placement does not matter.
        static uint8_t zeros[4096];
        long           fd = htp_sys_call2(HTP_NR_MEMFD_CREATE, (long)"htp-rt-bus", 0);
        for (size_t off = 0; !HTP_SYS_FAILED(fd) && off < page; off += sizeof zeros) {
            htp_sys_call3(HTP_NR_WRITE, fd, (long)zeros, sizeof zeros);
        }
        if (HTP_SYS_FAILED(fd) || htp_plat_map_buffer(base + page, page, (int)fd, 0) != 0 ||
            HTP_SYS_FAILED(htp_sys_call4(HTP_NR_FTRUNCATE64, fd, 0, 0, 0))) {
            check(0, "bus setup", "memfd %ld", fd);
            return 1;
        }
        target = base + page + 100;
    } else {
        target = base + 2 * page + 100;  // reserved, inaccessible
    }
    char line[64];
    int  n = snprintf(line, sizeof line, "fault target: %p\n", (void *)target);
    htp_plat_log_write(line, (size_t)n);
    *target = 1;
    check(0, "fault", "the store to %p returned", (void *)target);
    return 1;
}

int main(int argc, char ** argv) {
    if (argc > 1 && strcmp(argv[1], "ipc") == 0) {
        return run_ipc();
    }
    if (argc > 1 && (strcmp(argv[1], "fault") == 0 || strcmp(argv[1], "bus") == 0)) {
        return run_fault(strcmp(argv[1], "bus") == 0);
    }
    if (argc > 1 && strcmp(argv[1], "abort") == 0) {
        htp_plat_abort("smoke abort");
    }
    if (argc > 1 && strcmp(argv[1], "cross") == 0) {
        struct htp_cross d[40];
        int              n = htp_cross_run(d);
        for (int i = 0; i < n; i++) {
            char line[96];
            int  k = snprintf(line, sizeof line, "digest %s = %016llx\n", d[i].name, (unsigned long long)d[i].digest);
            out(line, (size_t)k);
        }
        return 0;
    }
    htp_plat_init();
    test_printf();
    test_strconv();
    test_string();
    test_malloc();
    test_threads();
    test_atomics();
    test_memory();
    test_ctl();
    test_helpers();
    test_hvx();
    test_math();
    char line[64];
    int  n = snprintf(line, sizeof line, "%s: %d failed\n", n_fail ? "FAIL" : "PASS", n_fail);
    out(line, (size_t)n);
    return n_fail ? 1 : 0;
}
