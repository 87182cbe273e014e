// test-config: the GGML_HEXAGON_* configuration. Device strings (valid ones
// with their exact parse, malformed ones with their fallback and a warning),
// strings that end right before a PROT_NONE page (no read past the NUL), the
// size grammar, every environment option with good and bad values, the op
// filter, arch-derived defaults and the printout.

#include "host/config-env.h"
#include "host/config.h"
#include "host/log.h"
#include "proto/htp-proto.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "test-check.h"

#define MiB (1024ull * 1024ull)
#define GiB (1024ull * MiB)

// ---------------------------------------------------------------------------
// Warning capture through ggml's log callback
// ---------------------------------------------------------------------------

static char warn_buf[1 << 16];
static int  warn_count;

static void capture_log(enum ggml_log_level level, const char * text, void * ud) {
    (void)ud;
    if (level != GGML_LOG_LEVEL_WARN) {
        return;
    }
    warn_count++;
    size_t used = strlen(warn_buf);
    snprintf(warn_buf + used, sizeof warn_buf - used, "%s", text);
}

static void warn_reset(void) {
    warn_buf[0] = '\0';
    warn_count  = 0;
}

static int warned(const char * needle) {
    return strstr(warn_buf, needle) != NULL;
}

// ---------------------------------------------------------------------------
// Devices
// ---------------------------------------------------------------------------

// Canonical text of a parse: "name=p0,p1/v;name=p/v".
static void dev_repr(const struct htp_device_config * d, int n, char * buf, size_t size) {
    size_t o = 0;
    buf[0]   = '\0';
    for (int i = 0; i < n && o < size; i++) {
        o += (size_t)snprintf(buf + o, size - o, "%s%s=", i ? ";" : "", d[i].name);
        for (uint32_t m = 0; m < d[i].n_members && o < size; m++) {
            o += (size_t)snprintf(buf + o, size - o, "%s%u", m ? "," : "", d[i].phys[m]);
        }
        if (o < size) {
            o += (size_t)snprintf(buf + o, size - o, "/%u", d[i].virt);
        }
    }
}

// Parse s; expect `want` (repr) and a clean parse (clean = 1) or a parse with
// warnings (clean = 0), the return value matching the warnings logged.
static void expect_devices(const char * s, int clean, const char * want) {
    struct htp_device_config d[HTP_CONFIG_MAX_DEVICES];
    int                      n = -1;
    char                     got[4096];
    warn_reset();
    int rc = htp_config_parse_devices(s, d, HTP_CONFIG_MAX_DEVICES, &n);
    dev_repr(d, n, got, sizeof got);
    const char * shown = s ? s : "(null)";
    char         shortened[80];
    snprintf(shortened, sizeof shortened, "%.60s%s", shown, strlen(shown) > 60 ? "..." : "");
    CHECK(strcmp(got, want) == 0, "devices '%s': got '%s', want '%s'", shortened, got, want);
    if (clean) {
        CHECK(rc == 0 && warn_count == 0, "devices '%s': rc %d, %d warnings, want a clean parse (%s)", shortened, rc,
              warn_count, warn_buf);
    } else {
        CHECK(rc > 0 && rc == warn_count, "devices '%s': rc %d with %d warnings, want problems reported", shortened, rc,
              warn_count);
        CHECK(warned("GGML_HEXAGON_DEVICES"), "devices '%s': warning does not name the variable", shortened);
    }
    // every member list well formed: distinct, in range
    for (int i = 0; i < n; i++) {
        CHECK(d[i].n_members >= 1 && d[i].n_members <= HTP_CONFIG_MAX_PHYS, "n_members %u", d[i].n_members);
        CHECK(d[i].virt < HTP_CONFIG_MAX_VIRT, "virt %u", d[i].virt);
        CHECK(d[i].name[0] != '\0' && strlen(d[i].name) < HTP_CONFIG_NAME_MAX, "name");
        for (uint32_t a = 0; a < d[i].n_members; a++) {
            CHECK(d[i].phys[a] < HTP_CONFIG_MAX_PHYS, "phys %u", d[i].phys[a]);
            for (uint32_t b = a + 1; b < d[i].n_members; b++) {
                CHECK(d[i].phys[a] != d[i].phys[b], "duplicate member");
            }
        }
    }
}

static void test_devices_valid(void) {
    expect_devices(NULL, 1, "HTP0=0/0");
    expect_devices("", 1, "HTP0=0/0");
    expect_devices("1", 1, "HTP0=0/0");
    expect_devices("3", 1, "HTP0=0/0;HTP1=0/1;HTP2=0/2");
    expect_devices("16", 1,
                   "HTP0=0/0;HTP1=0/1;HTP2=0/2;HTP3=0/3;HTP4=0/4;HTP5=0/5;HTP6=0/6;HTP7=0/7;HTP8=0/8;HTP9=0/9;"
                   "HTP10=0/10;HTP11=0/11;HTP12=0/12;HTP13=0/13;HTP14=0/14;HTP15=0/15");
    expect_devices("02", 1, "HTP0=0/0;HTP1=0/1");
    expect_devices("HTP0", 1, "HTP0=0/0");
    expect_devices("HTP1", 1, "HTP1=1/0");
    expect_devices("HTP0:0", 1, "HTP0:0=0/0");
    expect_devices("HTP0,HTP0:1", 1, "HTP0=0/0;HTP0:1=0/1");
    expect_devices("HTP0,HTP1", 1, "HTP0=0/0;HTP1=1/0");
    expect_devices(" HTP0 ,\tHTP1\n, HTP1:3 ", 1, "HTP0=0/0;HTP1=1/0;HTP1:3=1/3");
    expect_devices("HTP0,,HTP1,", 1, "HTP0=0/0;HTP1=1/0");
    expect_devices("HTP15:15", 1, "HTP15:15=15/15");
    expect_devices("G[0-1]", 1, "G=0,1/0");
    expect_devices("G[0-1:0]", 1, "G=0,1/0");
    expect_devices("G[0-1:1]", 1, "G=0,1/1");
    expect_devices("Big[0,2-3]", 1, "Big=0,2,3/0");
    expect_devices("G[1,0]", 1, "G=1,0/0");
    expect_devices("G[0,0-1,1]", 1, "G=0,1/0");
    expect_devices("G[ 0 , 1 ]", 1, "G=0,1/0");
    expect_devices("G[2]", 1, "G=2/0");
    expect_devices("G:2[0,1]", 1, "G:2=0,1/2");
    expect_devices("G[0-1:1],H[0-1:2]", 1, "G=0,1/1;H=0,1/2");
    expect_devices("HTP0,G[1-2]", 1, "HTP0=0/0;G=1,2/0");
    expect_devices("HTP0:1, G[0-1:2], HTP1", 1, "HTP0:1=0/1;G=0,1/2;HTP1=1/0");
    expect_devices("HTP[0-1]", 1, "HTP=0,1/0");
    expect_devices("My Dev[0]", 1, "My Dev=0/0");
    expect_devices("G[0-15]", 1, "G=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15/0");
    // 16 devices, the limit
    expect_devices(
        "HTP0:0,HTP0:1,HTP0:2,HTP0:3,HTP0:4,HTP0:5,HTP0:6,HTP0:7,"
        "HTP0:8,HTP0:9,HTP0:10,HTP0:11,HTP0:12,HTP0:13,HTP0:14,HTP0:15",
        1,
        "HTP0:0=0/0;HTP0:1=0/1;HTP0:2=0/2;HTP0:3=0/3;HTP0:4=0/4;HTP0:5=0/5;HTP0:6=0/6;HTP0:7=0/7;"
        "HTP0:8=0/8;HTP0:9=0/9;HTP0:10=0/10;HTP0:11=0/11;HTP0:12=0/12;HTP0:13=0/13;HTP0:14=0/14;"
        "HTP0:15=0/15");
    // a 63-byte name is the longest
    char name63[128];
    memset(name63, 'N', 63);
    snprintf(name63 + 63, sizeof name63 - 63, "[1]");
    char want63[128];
    memset(want63, 'N', 63);
    snprintf(want63 + 63, sizeof want63 - 63, "=1/0");
    expect_devices(name63, 1, want63);

    // a smaller caller array bounds the count
    struct htp_device_config d[4];
    int                      n = 0;
    warn_reset();
    int rc = htp_config_parse_devices("8", d, 4, &n);
    CHECK(n == 4 && rc == 1, "count above a caller's max: n %d rc %d", n, rc);
    CHECK(htp_config_parse_devices("1", NULL, 4, &n) == -1, "NULL out");
    CHECK(htp_config_parse_devices("1", d, 0, &n) == -1, "max 0");
    CHECK(htp_config_parse_devices("1", d, 4, NULL) == -1, "NULL n_out");

    // member names as the reference gives them to a group's sessions
    struct htp_device_config g[1];
    htp_config_parse_devices("Big[0,2-3:1]", g, 1, &n);
    char nm[80];
    htp_config_member_name(&g[0], 0, nm, sizeof nm);
    CHECK(strcmp(nm, "Big") == 0, "member 0 name %s", nm);
    htp_config_member_name(&g[0], 2, nm, sizeof nm);
    CHECK(strcmp(nm, "HTP3:1") == 0, "member 2 name %s", nm);
}

static void test_devices_malformed(void) {
    // items the reference rejects
    expect_devices("HTP", 0, "");
    expect_devices("HTPx", 0, "");
    expect_devices("HTP0:", 0, "");
    expect_devices("HTP:1", 0, "");
    expect_devices("foo", 0, "");
    expect_devices("htp0", 0, "");
    expect_devices("HT P0", 0, "");
    expect_devices("G[", 0, "");
    expect_devices("G]0[", 0, "");
    expect_devices("G[0,1,HTP1", 0, "");
    expect_devices(",,,", 0, "");
    expect_devices(" ", 0, "");
    expect_devices("2 ", 0, "");  // not a pure count: the item "2" is no device
    expect_devices("HTP0,foo,HTP1", 0, "HTP0=0/0;HTP1=1/0");
    // out-of-range / negative indices, which the reference would accept
    expect_devices("HTP-1", 0, "");
    expect_devices("HTP0:-1", 0, "");
    expect_devices("HTP16", 0, "");
    expect_devices("HTP0:16", 0, "");
    expect_devices("HTP2147483648", 0, "");
    expect_devices("HTP99999999999999999999", 0, "");
    // the reference's repairs: number read up to the junk
    expect_devices("HTP0abc", 0, "HTP0=0/0");
    expect_devices("HTP 1", 0, "HTP1=1/0");
    expect_devices("HTP+1", 0, "HTP1=1/0");
    expect_devices("HTP01", 1, "HTP1=1/0");  // leading zero: the same number
    expect_devices("HTP0:1x", 0, "HTP0:1=0/1");
    expect_devices("HTP0[", 0, "HTP0=0/0");
    // groups: empty, reversed, out of range, junk -> NPU 0 as the reference
    expect_devices("G[]", 0, "G=0/0");
    expect_devices("G[:1]", 0, "G=0/1");
    expect_devices("G[3-1]", 0, "G=0/0");
    expect_devices("G[0-99]", 0, "G=0/0");
    expect_devices("G[0-2147483648]", 0, "G=0/0");
    expect_devices("G[16]", 0, "G=0/0");
    expect_devices("G[-1]", 0, "G=0/0");
    expect_devices("G[a,1]", 0, "G=1/0");
    expect_devices("G[1 2]", 0, "G=1/0");
    expect_devices("G[0-1-2]", 0, "G=0,1/0");
    expect_devices("G[[0]]", 0, "G=0/0");
    expect_devices("G[0-1:x]", 0, "G=0,1/0");
    expect_devices("G[0-1:]", 0, "G=0,1/0");
    expect_devices("G[0-1:20]", 0, "G=0,1/0");
    expect_devices("G[0-1:-1]", 0, "G=0,1/0");
    expect_devices("G[0-1:1:2]", 0, "G=0,1/1");
    expect_devices("G[0]junk", 0, "G=0/0");
    // names
    expect_devices("[0-1]", 0, "");
    expect_devices("HTP0,[1]", 0, "HTP0=0/0");
    char long_name[256];
    memset(long_name, 'L', 64);
    snprintf(long_name + 64, sizeof long_name - 64, "[0]");
    expect_devices(long_name, 0, "");
    // duplicates: by name, and by session
    expect_devices("HTP0,HTP0", 0, "HTP0=0/0");
    expect_devices("HTP0,HTP0:0", 0, "HTP0=0/0");
    expect_devices("HTP0,G[0-1]", 0, "HTP0=0/0");
    expect_devices("G[0-1],G[2]", 0, "G=0,1/0");
    expect_devices("G[0-1],H[1-2]", 0, "G=0,1/0");
    expect_devices("G[0-1:1],HTP1:1,HTP1", 0, "G=0,1/1;HTP1=1/0");
    // counts
    expect_devices("0", 0, "HTP0=0/0");
    expect_devices("17", 0,
                   "HTP0=0/0;HTP1=0/1;HTP2=0/2;HTP3=0/3;HTP4=0/4;HTP5=0/5;HTP6=0/6;HTP7=0/7;HTP8=0/8;HTP9=0/9;"
                   "HTP10=0/10;HTP11=0/11;HTP12=0/12;HTP13=0/13;HTP14=0/14;HTP15=0/15");
    expect_devices("99999999999999999999999999999999", 0,
                   "HTP0=0/0;HTP1=0/1;HTP2=0/2;HTP3=0/3;HTP4=0/4;HTP5=0/5;HTP6=0/6;HTP7=0/7;HTP8=0/8;HTP9=0/9;"
                   "HTP10=0/10;HTP11=0/11;HTP12=0/12;HTP13=0/13;HTP14=0/14;HTP15=0/15");
    expect_devices("-1", 0, "");
    // 17 devices: the 17th is dropped with the reference's warning
    warn_reset();
    expect_devices(
        "HTP0:0,HTP0:1,HTP0:2,HTP0:3,HTP0:4,HTP0:5,HTP0:6,HTP0:7,"
        "HTP0:8,HTP0:9,HTP0:10,HTP0:11,HTP0:12,HTP0:13,HTP0:14,HTP0:15,HTP1",
        0,
        "HTP0:0=0/0;HTP0:1=0/1;HTP0:2=0/2;HTP0:3=0/3;HTP0:4=0/4;HTP0:5=0/5;HTP0:6=0/6;HTP0:7=0/7;"
        "HTP0:8=0/8;HTP0:9=0/9;HTP0:10=0/10;HTP0:11=0/11;HTP0:12=0/12;HTP0:13=0/13;HTP0:14=0/14;"
        "HTP0:15=0/15");
    CHECK(warned("max sessions limit reached (16)") && warned("HTP1"), "17th device warning: %s", warn_buf);
}

// Big inputs: 4 KiB strings of various shapes.
static void test_devices_large(void) {
    const size_t big = 4096;
    char *       s   = malloc(big + 1);
    CHECK(s != NULL, "malloc");
    if (!s) {
        return;
    }

    memset(s, 'x', big);
    s[big] = '\0';
    expect_devices(s, 0, "");

    // "HTP0,HTP1,...,HTP15," repeated: 16 devices, the rest duplicates
    size_t o = 0;
    for (int i = 0; o + 8 < big; i = (i + 1) % 16) {
        o += (size_t)snprintf(s + o, big + 1 - o, "HTP%d,", i);
    }
    s[o] = '\0';
    expect_devices(s, 0,
                   "HTP0=0/0;HTP1=1/0;HTP2=2/0;HTP3=3/0;HTP4=4/0;HTP5=5/0;HTP6=6/0;HTP7=7/0;HTP8=8/0;HTP9=9/0;"
                   "HTP10=10/0;HTP11=11/0;HTP12=12/0;HTP13=13/0;HTP14=14/0;HTP15=15/0");

    // one group with a 4 KiB physical list of repeats (duplicates are silent)
    o = (size_t)snprintf(s, big + 1, "G[");
    while (o + 6 < big) {
        o += (size_t)snprintf(s + o, big + 1 - o, "1,0,");
    }
    snprintf(s + o, big + 1 - o, "3]");
    expect_devices(s, 1, "G=1,0,3/0");

    // a 4 KiB name
    memset(s, 'N', big - 3);
    snprintf(s + big - 3, 4, "[0]");
    expect_devices(s, 0, "");

    // 4 KiB of digits: a count, clamped
    memset(s, '9', big);
    s[big] = '\0';
    expect_devices(s, 0,
                   "HTP0=0/0;HTP1=0/1;HTP2=0/2;HTP3=0/3;HTP4=0/4;HTP5=0/5;HTP6=0/6;HTP7=0/7;HTP8=0/8;HTP9=0/9;"
                   "HTP10=0/10;HTP11=0/11;HTP12=0/12;HTP13=0/13;HTP14=0/14;HTP15=0/15");

    // 4 KiB of open brackets: one unterminated item
    memset(s, '[', big);
    s[big] = '\0';
    expect_devices(s, 0, "");
    free(s);
}

// Strings whose NUL is the last byte before a PROT_NONE page: a read past it
// faults and fails the test.
static void test_devices_guard_page(void) {
    const long ps = sysconf(_SC_PAGESIZE);
    char *     m  = mmap(NULL, (size_t)ps * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED, "mmap");
    if (m == MAP_FAILED) {
        return;
    }
    CHECK(mprotect(m + ps, (size_t)ps, PROT_NONE) == 0, "mprotect");

    static const struct {
        const char * s;
        int          clean;
        const char * want;
    } cases[] = {
        {"HTP0", 1, "HTP0=0/0"},
        {"HTP", 0, ""},
        {"HTP0:", 0, ""},
        {"HTP0:1", 1, "HTP0:1=0/1"},
        {"12", 1,
         "HTP0=0/0;HTP1=0/1;HTP2=0/2;HTP3=0/3;HTP4=0/4;HTP5=0/5;HTP6=0/6;HTP7=0/7;HTP8=0/8;HTP9=0/9;"
         "HTP10=0/10;HTP11=0/11"},
        {"G[0-1", 0, ""},
        {"G[0-1]", 1, "G=0,1/0"},
        {"G[0,1:", 0, ""},
        {"G[0-", 0, ""},
        {"G[0-]", 0, "G=0/0"},
        {"G[0-1:1]x", 0, "G=0,1/1"},
        {"HTP0, ", 1, "HTP0=0/0"},
        {",", 0, ""},
        {"[", 0, ""},
        {"]", 0, ""},
        {"G[]", 0, "G=0/0"},
        {"HTP0,HTP", 0, "HTP0=0/0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len = strlen(cases[i].s);
        char * at  = m + ps - (long)len - 1;
        memcpy(at, cases[i].s, len + 1);
        expect_devices(at, cases[i].clean, cases[i].want);
    }

    // the size parser, on the same edge
    static const struct {
        const char * s;
        int          ok;
        uint64_t     want;
    } sizes[] = {
        {"1g", 1, GiB}, {"1.5", 1, 3 * MiB / 2}, {"2 K", 1, 2048}, {"1Ki", 1, 1024},
        {"1e", 0, 0},   {"1.", 1, MiB},          {"x", 0, 0},      {"", 0, 0},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t len = strlen(sizes[i].s);
        char * at  = m + ps - (long)len - 1;
        memcpy(at, sizes[i].s, len + 1);
        uint64_t v  = 0;
        int      rc = htp_config_parse_size(at, &v);
        CHECK(sizes[i].ok ? (rc == 0 && v == sizes[i].want) : rc != 0, "size '%s' at a page end: rc %d", sizes[i].s,
              rc);
    }
    munmap(m, (size_t)ps * 2);
}

// ---------------------------------------------------------------------------
// Sizes
// ---------------------------------------------------------------------------

static void expect_size(const char * s, int ok, uint64_t want) {
    uint64_t v  = 12345;
    int      rc = htp_config_parse_size(s, &v);
    if (ok) {
        CHECK(rc == 0 && v == want, "size '%s': rc %d value %llu, want %llu", s, rc, (unsigned long long)v,
              (unsigned long long)want);
    } else {
        CHECK(rc != 0 && v == 12345, "size '%s': rc %d value %llu, want rejected", s, rc, (unsigned long long)v);
    }
}

static void test_sizes(void) {
    expect_size("0", 1, 0);
    expect_size("1", 1, MiB);
    expect_size("512", 1, 512 * MiB);
    expect_size("1k", 1, 1024);
    expect_size("1K", 1, 1024);
    expect_size("4m", 1, 4 * MiB);
    expect_size("2 M", 1, 2 * MiB);
    expect_size("1.5g", 1, 3 * GiB / 2);
    expect_size("3G", 1, 3 * GiB);
    expect_size("1GiB", 1, GiB);
    expect_size("1GB", 1, GiB);
    expect_size("1gb", 1, GiB);
    expect_size("8KiB", 1, 8192);
    expect_size(" 3m ", 1, 3 * MiB);
    expect_size(".5m", 1, 512 * 1024);
    expect_size("0.5", 1, 512 * 1024);
    expect_size("3200", 1, 3200 * MiB);
    expect_size("1e3k", 1, 1000 * 1024);
    expect_size("16777215g", 1, 16777215ull * GiB);

    expect_size("", 0, 0);
    expect_size(" ", 0, 0);
    expect_size("abc", 0, 0);
    expect_size("-1", 0, 0);
    expect_size("-0", 0, 0);
    expect_size("+1", 0, 0);
    expect_size("1x", 0, 0);
    expect_size("1kx", 0, 0);
    expect_size("1 2", 0, 0);
    expect_size("1B", 0, 0);
    expect_size("1mm", 0, 0);
    expect_size("inf", 0, 0);
    expect_size("nan", 0, 0);
    expect_size("0x10", 0, 0);
    expect_size("1e30g", 0, 0);
    expect_size("99999999999g", 0, 0);
    expect_size("k", 0, 0);
    expect_size(".", 0, 0);
    char longnum[200];
    memset(longnum, '1', sizeof longnum - 1);
    longnum[sizeof longnum - 1] = '\0';
    expect_size(longnum, 0, 0);
}

// ---------------------------------------------------------------------------
// Environment
// ---------------------------------------------------------------------------

static const char * const all_vars[] = {
    "GGML_HEXAGON_DEVICES",   "GGML_HEXAGON_NDEV",       "GGML_HEXAGON_ARCH",       "GGML_HEXAGON_VERBOSE",
    "GGML_HEXAGON_PROFILE",   "GGML_HEXAGON_OPTRACE",    "GGML_HEXAGON_ETM",        "GGML_HEXAGON_OPBATCH",
    "GGML_HEXAGON_OPQUEUE",   "GGML_HEXAGON_OPPOLL",     "GGML_HEXAGON_OPFUSION",   "GGML_HEXAGON_OPFILTER",
    "GGML_HEXAGON_RT_REPACK", "GGML_HEXAGON_NHVX",       "GGML_HEXAGON_NHMX",       "GGML_HEXAGON_VTCM_SIZE",
    "GGML_HEXAGON_VMEM",      "GGML_HEXAGON_MBUF",       "GGML_HEXAGON_HOSTBUF",    "GGML_HEXAGON_DMA64",
    "GGML_HEXAGON_MM_SELECT", "GGML_HEXAGON_FA_SELECT",  "GGML_HEXAGON_FA_SPLIT",   "GGML_HEXAGON_GDN_SELECT",
    "GGML_HEXAGON_AR_SELECT", "GGML_HEXAGON_AR_SCATTER", "GGML_HEXAGON_POWER_MODE", "GGML_HEXAGON_NPU",
    "GGML_HEXAGON_NPU_EXEC",
};

// Read by other modules; htp_config_print shows them.
static const char * const other_vars[] = {
    "GGML_HEXAGON_FENCE_TIMEOUT_MS",
    "GGML_HEXAGON_STREAM_PREFETCH",
    "GGML_HTP_MMAP_STACKING",
    "GGML_HTP_SCALAR",
    "GGML_HTP_FAULT",
};

static void env_clear(void) {
    for (size_t i = 0; i < sizeof all_vars / sizeof all_vars[0]; i++) {
        unsetenv(all_vars[i]);
    }
    for (size_t i = 0; i < sizeof other_vars / sizeof other_vars[0]; i++) {
        unsetenv(other_vars[i]);
    }
}

static void test_env_defaults(void) {
    struct htp_config cfg;
    env_clear();
    warn_reset();
    int rc = htp_config_load(&cfg);
    CHECK(rc == 0 && warn_count == 0, "defaults: rc %d, warnings: %s", rc, warn_buf);
    CHECK(cfg.n_devices == 1 && strcmp(cfg.devices[0].name, "HTP0") == 0, "default device");
    CHECK(cfg.arch == HTP_CONFIG_ARCH_DEFAULT && cfg.arch_auto == 1, "arch %d", cfg.arch);
    CHECK(cfg.vmem == HTP_VMEM_DEFAULT && cfg.vmem == 3355443200ull && !cfg.vmem_set, "vmem %llu",
          (unsigned long long)cfg.vmem);
    CHECK(cfg.dma64 == 0, "dma64 (v79)");
    CHECK(cfg.nhvx == 0 && cfg.nhmx == 1 && cfg.vtcm_size == 0, "nhvx/nhmx/vtcm");
    CHECK(cfg.power_mode == HTP_POWER_MODE_BURST, "power");
    CHECK(cfg.mbuf_dyn == 512 * MiB && cfg.mbuf_static == GiB && cfg.mbuf_total == 0, "mbuf");
    CHECK(cfg.hostbuf == 0, "hostbuf");
    CHECK(cfg.opbatch == 2048 && cfg.opqueue == 8 && cfg.oppoll == 0 && cfg.opfusion == 1, "op*");
    CHECK(cfg.rt_repack == 1 && !cfg.has_opfilter, "repack/filter");
    CHECK(cfg.mm_select == 2 && cfg.fa_select == 2 && cfg.fa_split == 1 && cfg.gdn_select == 2 && cfg.ar_select == 2 &&
              cfg.ar_scatter == 1,
          "selects");
    CHECK(htp_config_session_options(&cfg) == 0, "default session options %#x", htp_config_session_options(&cfg));
    CHECK(cfg.verbose == 0 && htp_log_verbose == 0, "verbose");
    CHECK(cfg.profile == 0 && cfg.n_pmu_events == 8 && cfg.pmu_events[0] == 0x3 && cfg.pmu_events[7] == 0x8C,
          "profile");
    CHECK(cfg.optrace == HTP_MAX_TRACES, "optrace %u", cfg.optrace);
    CHECK(cfg.etm == 0 && cfg.npu_path[0] == '\0', "etm/npu");
    CHECK(htp_config_op_filtered(&cfg, "MUL_MAT") == 0, "no filter");
    htp_config_free(&cfg);

    // empty strings behave as unset
    for (size_t i = 0; i < sizeof all_vars / sizeof all_vars[0]; i++) {
        if (strcmp(all_vars[i], "GGML_HEXAGON_POWER_MODE") != 0) {
            setenv(all_vars[i], "", 1);
        }
    }
    warn_reset();
    rc = htp_config_load(&cfg);
    CHECK(rc == 0 && warn_count == 0, "empty strings: rc %d, warnings: %s", rc, warn_buf);
    CHECK(cfg.n_devices == 1 && cfg.opbatch == 2048 && cfg.vmem == HTP_VMEM_DEFAULT, "empty strings: defaults");
    htp_config_free(&cfg);
    env_clear();
}

// The engine options as the session sees them, and as htp-info shows them.
static void test_env_engines(void) {
    struct htp_config cfg;
    env_clear();
    setenv("GGML_HEXAGON_FA_SELECT", "1", 1);
    htp_config_load(&cfg);
    CHECK(htp_config_session_options(&cfg) == HTP_SESSION_FA_NO_HMX, "FA_SELECT=1: %#x",
          htp_config_session_options(&cfg));
    htp_config_free(&cfg);
    env_clear();
    setenv("GGML_HEXAGON_MM_SELECT", "0", 1);
    setenv("GGML_HEXAGON_FA_SPLIT", "0", 1);
    htp_config_load(&cfg);
    CHECK(htp_config_session_options(&cfg) == (HTP_SESSION_MM_NO_HMX | HTP_SESSION_FA_NO_SPLIT),
          "MM_SELECT=0 FA_SPLIT=0: %#x", htp_config_session_options(&cfg));
    htp_config_free(&cfg);
    env_clear();
    setenv("GGML_HEXAGON_NHMX", "0", 1);
    setenv("GGML_HEXAGON_FENCE_TIMEOUT_MS", "250", 1);
    setenv("GGML_HEXAGON_STREAM_PREFETCH", "0", 1);
    setenv("GGML_HTP_MMAP_STACKING", "0", 1);
    setenv("GGML_HTP_SCALAR", "1", 1);
    setenv("GGML_HTP_FAULT", "map:3", 1);
    htp_config_load(&cfg);
    CHECK(htp_config_session_options(&cfg) == (HTP_SESSION_MM_NO_HMX | HTP_SESSION_FA_NO_HMX), "NHMX=0: %#x",
          htp_config_session_options(&cfg));
    char * text = NULL;
    size_t size = 0;
    FILE * f    = open_memstream(&text, &size);
    CHECK(f != NULL, "open_memstream");
    if (f) {
        htp_config_print(&cfg, f);
        fclose(f);
        CHECK(strstr(text, "mm_select     2 (HVX -> CPU: nhmx 0)\n") &&
                  strstr(text, "fa_select     2 (HVX -> CPU: nhmx 0)\n") && strstr(text, "session opts  0x3 ") &&
                  strstr(text, "fence timeout 250 ms") && strstr(text, "prefetch      0 ") &&
                  strstr(text, "mmap stacking 0") && strstr(text, "scalar        1") &&
                  strstr(text, "fault         map:3 "),
              "print with NHMX=0:\n%s", text);
        free(text);
    }
    htp_config_free(&cfg);
    // A fence timeout or prefetch switch the NPU would refuse shows its default.
    setenv("GGML_HEXAGON_FENCE_TIMEOUT_MS", "-5", 1);
    setenv("GGML_HEXAGON_STREAM_PREFETCH", "2", 1);
    htp_config_load(&cfg);
    text = NULL;
    f    = open_memstream(&text, &size);
    if (f) {
        htp_config_print(&cfg, f);
        fclose(f);
        CHECK(strstr(text, "fence timeout 30000 ms") && strstr(text, "prefetch      default "),
              "bad fence timeout and prefetch switch show the defaults:\n%s", text);
        free(text);
    }
    htp_config_free(&cfg);
    env_clear();
}

static void test_env_good(void) {
    struct htp_config cfg;
    env_clear();
    setenv("GGML_HEXAGON_DEVICES", "HTP0,HTP0:1,G[0-1:2]", 1);
    setenv("GGML_HEXAGON_ARCH", "v81", 1);
    setenv("GGML_HEXAGON_VERBOSE", "1", 1);
    setenv("GGML_HEXAGON_PROFILE", "3", 1);
    setenv("GGML_HEXAGON_OPTRACE", "100", 1);
    setenv("GGML_HEXAGON_ETM", "1", 1);
    setenv("GGML_HEXAGON_OPBATCH", "0x100", 1);
    setenv("GGML_HEXAGON_OPQUEUE", "16", 1);
    setenv("GGML_HEXAGON_OPPOLL", "1", 1);
    setenv("GGML_HEXAGON_OPFUSION", "0", 1);
    setenv("GGML_HEXAGON_OPFILTER", "MUL_MAT|add", 1);
    setenv("GGML_HEXAGON_RT_REPACK", "2", 1);
    setenv("GGML_HEXAGON_NHVX", "4", 1);
    setenv("GGML_HEXAGON_NHMX", "0", 1);
    setenv("GGML_HEXAGON_VTCM_SIZE", "4m", 1);
    setenv("GGML_HEXAGON_MBUF", "256m, 2g ,8g", 1);
    setenv("GGML_HEXAGON_HOSTBUF", "1", 1);
    setenv("GGML_HEXAGON_MM_SELECT", "1", 1);
    setenv("GGML_HEXAGON_FA_SELECT", "0", 1);
    setenv("GGML_HEXAGON_FA_SPLIT", "0", 1);
    setenv("GGML_HEXAGON_GDN_SELECT", "1", 1);
    setenv("GGML_HEXAGON_AR_SELECT", "0", 1);
    setenv("GGML_HEXAGON_AR_SCATTER", "0", 1);
    setenv("GGML_HEXAGON_POWER_MODE", "Balanced", 1);
    setenv("GGML_HEXAGON_NPU", "/opt/htp/htp-npu", 1);
    setenv("GGML_HEXAGON_NPU_EXEC", "qemu-hexagon -cpu v67", 1);
    warn_reset();
    int rc = htp_config_load(&cfg);
    CHECK(rc == 0 && warn_count == 0, "good values: rc %d, warnings: %s", rc, warn_buf);
    CHECK(cfg.n_devices == 3 && strcmp(cfg.devices[1].name, "HTP0:1") == 0 && cfg.devices[2].n_members == 2 &&
              cfg.devices[2].virt == 2,
          "devices");
    CHECK(cfg.arch == 81 && !cfg.arch_auto && cfg.dma64 == 1 && cfg.vmem == HTP_VMEM_DEFAULT, "arch v81");
    CHECK(cfg.verbose == 1 && htp_log_verbose == 1, "verbose");
    CHECK(cfg.profile == 3 && cfg.n_pmu_events == 8 && cfg.optrace == 100 && cfg.etm == 1, "profile");
    CHECK(cfg.opbatch == 256 && cfg.opqueue == 16 && cfg.oppoll == 1 && cfg.opfusion == 0, "op*: %u %u", cfg.opbatch,
          cfg.opqueue);
    CHECK(cfg.rt_repack == 2 && cfg.nhvx == 4 && cfg.nhmx == 0 && cfg.vtcm_size == 4 * MiB, "repack/nhvx/vtcm");
    CHECK(cfg.mbuf_dyn == 256 * MiB && cfg.mbuf_static == 2 * GiB && cfg.mbuf_total == 8 * GiB, "mbuf");
    CHECK(cfg.hostbuf == 1 && cfg.mm_select == 1 && cfg.fa_select == 0 && cfg.fa_split == 0 && cfg.gdn_select == 1 &&
              cfg.ar_select == 0 && cfg.ar_scatter == 0,
          "selects");
    CHECK(htp_config_session_options(&cfg) == (HTP_SESSION_MM_NO_HMX | HTP_SESSION_FA_NO_HMX | HTP_SESSION_FA_NO_SPLIT),
          "session options %#x", htp_config_session_options(&cfg));
    CHECK(cfg.power_mode == HTP_POWER_MODE_BALANCED, "power");
    CHECK(strcmp(cfg.npu_path, "/opt/htp/htp-npu") == 0, "npu path");
    CHECK(strcmp(cfg.npu_exec, "qemu-hexagon -cpu v67") == 0, "npu launcher");
    // the filter matches whole descriptions, case-insensitively (regex_match + icase)
    CHECK(htp_config_op_filtered(&cfg, "MUL_MAT") == 1, "filter MUL_MAT");
    CHECK(htp_config_op_filtered(&cfg, "mul_mat") == 1, "filter mul_mat");
    CHECK(htp_config_op_filtered(&cfg, "ADD") == 1, "filter ADD");
    CHECK(htp_config_op_filtered(&cfg, "MUL_MAT_ID") == 0, "filter MUL_MAT_ID");
    CHECK(htp_config_op_filtered(&cfg, "XADD") == 0, "filter XADD");
    CHECK(htp_config_op_filtered(&cfg, "SCALE") == 0, "filter SCALE");

    // the printout shows what is in force
    char * text = NULL;
    size_t size = 0;
    FILE * f    = open_memstream(&text, &size);
    CHECK(f != NULL, "open_memstream");
    if (f) {
        htp_config_print(&cfg, f);
        fclose(f);
        CHECK(strstr(text, "devices (3)") && strstr(text, "HTP0:1") && strstr(text, "HTP1:2(phys 1)"),
              "print devices:\n%s", text);
        CHECK(strstr(text, "arch          v81\n") && strstr(text, "opbatch       256\n") &&
                  strstr(text, "power_mode    balanced\n") && strstr(text, "opfilter      MUL_MAT|add\n") &&
                  strstr(text, "dynamic 256 MiB, static 2 GiB, total 8 GiB") && strstr(text, "/opt/htp/htp-npu"),
              "print options:\n%s", text);
        // effective values: nhmx 0 takes HMX from every level; ETM is accepted and said to be absent
        CHECK(strstr(text, "nhmx          0 (HVX only)\n") && strstr(text, "mm_select     1 (HVX -> CPU)\n") &&
                  strstr(text, "fa_select     0 (CPU)\n") && strstr(text, "fa_split      0 (never split)\n") &&
                  strstr(text, "session opts  0x7 ") &&
                  strstr(text, "etm           1 (requested; the software NPU has no ETM") &&
                  strstr(text, "fence timeout 30000 ms") && strstr(text, "mmap stacking 1") &&
                  strstr(text, "scalar        0") && strstr(text, "fault         (none)"),
              "print effective values:\n%s", text);
        free(text);
    }
    htp_config_free(&cfg);
    CHECK(cfg.has_opfilter == 0, "free clears the filter");

    // arch-derived defaults: v73 has the smaller VA space and no DMA64
    env_clear();
    setenv("GGML_HEXAGON_ARCH", "73", 1);
    htp_config_load(&cfg);
    CHECK(cfg.arch == 73 && cfg.vmem == 3000 * MiB && cfg.dma64 == 0, "v73 defaults: vmem %llu",
          (unsigned long long)cfg.vmem);
    htp_config_free(&cfg);
    setenv("GGML_HEXAGON_ARCH", "V85", 1);
    setenv("GGML_HEXAGON_DMA64", "0", 1);
    htp_config_load(&cfg);
    CHECK(cfg.arch == 85 && cfg.dma64 == 0, "DMA64=0 on v85");
    htp_config_free(&cfg);
    setenv("GGML_HEXAGON_VMEM", "0", 1);
    htp_config_load(&cfg);
    CHECK(cfg.vmem == 0 && cfg.vmem_set, "vmem 0 = measure");
    htp_config_free(&cfg);

    // the NPU reports its arch: applied when the user set none
    env_clear();
    htp_config_load(&cfg);
    htp_config_set_arch(&cfg, 81);
    CHECK(cfg.arch == 81 && cfg.dma64 == 1 && cfg.vmem == HTP_VMEM_DEFAULT, "set_arch 81");
    warn_reset();
    htp_config_set_arch(&cfg, 69);
    CHECK(cfg.arch == 73 && cfg.dma64 == 0 && cfg.vmem == 3000 * MiB && warned("under supported range"),
          "set_arch 69 -> 73");
    warn_reset();
    htp_config_set_arch(&cfg, 99);
    CHECK(cfg.arch == 85 && warned("over supported range"), "set_arch 99 -> 85");
    htp_config_free(&cfg);
    setenv("GGML_HEXAGON_ARCH", "75", 1);
    setenv("GGML_HEXAGON_VMEM", "1g", 1);
    htp_config_load(&cfg);
    htp_config_set_arch(&cfg, 81);
    CHECK(cfg.arch == 75 && cfg.vmem == GiB && cfg.dma64 == 0, "user arch and vmem win over the NPU's");
    htp_config_free(&cfg);

    // PMU events
    env_clear();
    setenv("GGML_HEXAGON_PROFILE", "0x1,0x2,3,4,5,6,7,0x8D", 1);
    htp_config_load(&cfg);
    CHECK(cfg.profile == 2 && cfg.n_pmu_events == 8 && cfg.pmu_events[0] == 1 && cfg.pmu_events[7] == 0x8D,
          "custom PMU events");
    htp_config_free(&cfg);
    setenv("GGML_HEXAGON_PROFILE", "1", 1);
    htp_config_load(&cfg);
    CHECK(cfg.profile == 1 && cfg.n_pmu_events == 0, "basic profiling: no PMU events");
    htp_config_free(&cfg);
    setenv("GGML_HEXAGON_PROFILE", "2", 1);
    htp_config_load(&cfg);
    CHECK(cfg.profile == 2 && cfg.n_pmu_events == 8 && cfg.pmu_events[1] == 0x111, "PMU mode, default events");
    htp_config_free(&cfg);

    // the deprecated alias
    env_clear();
    setenv("GGML_HEXAGON_NDEV", "3", 1);
    warn_reset();
    rc = htp_config_load(&cfg);
    CHECK(cfg.n_devices == 3 && strcmp(cfg.devices[2].name, "HTP2") == 0 && cfg.devices[2].virt == 2, "NDEV=3");
    CHECK(warned("DEPRECATED") && warned("GGML_HEXAGON_NDEV") && rc == 0, "NDEV deprecation warning");
    htp_config_free(&cfg);
    setenv("GGML_HEXAGON_NDEV", "x", 1);
    warn_reset();
    rc = htp_config_load(&cfg);
    CHECK(cfg.n_devices == 0 && rc == 2 && warned("GGML_HEXAGON_NDEV: invalid device name format 'x'"),
          "NDEV bad item names the variable: %s", warn_buf);
    htp_config_free(&cfg);
    setenv("GGML_HEXAGON_DEVICES", "2", 1);
    warn_reset();
    htp_config_load(&cfg);
    CHECK(cfg.n_devices == 2 && !warned("DEPRECATED"), "DEVICES wins over NDEV");
    htp_config_free(&cfg);
    env_clear();
}

// One bad value: the warning names the variable, the value and what is used.
struct bad_case {
    const char * var;
    const char * value;
    const char * used;  // expected in the warning after "using "
};

static void expect_bad(const struct bad_case * bc, int (*check)(const struct htp_config *), const char * what) {
    struct htp_config cfg;
    env_clear();
    setenv(bc->var, bc->value, 1);
    warn_reset();
    int  rc = htp_config_load(&cfg);
    char quoted[256];
    snprintf(quoted, sizeof quoted, "%s='%.40s", bc->var, bc->value);
    char using_[128];
    snprintf(using_, sizeof using_, "using %s", bc->used);
    CHECK(rc == 1 && warn_count == 1, "%s=%s: rc %d, %d warnings: %s", bc->var, bc->value, rc, warn_count, warn_buf);
    CHECK(warned(quoted) && warned(using_), "%s=%s: warning '%s' lacks %s / %s", bc->var, bc->value, warn_buf, quoted,
          using_);
    CHECK(check(&cfg), "%s=%s: %s", bc->var, bc->value, what);
    htp_config_free(&cfg);
}

static int opbatch_default(const struct htp_config * c) {
    return c->opbatch == 2048;
}
static int opbatch_max(const struct htp_config * c) {
    return c->opbatch == HTP_OP_MAX_OPS;
}
static int opqueue_max(const struct htp_config * c) {
    return c->opqueue == HTP_QUEUE_MAX_DEPTH;
}
static int opqueue_default(const struct htp_config * c) {
    return c->opqueue == 8;
}
static int nhvx_max(const struct htp_config * c) {
    return c->nhvx == HTP_MAX_NTHREADS;
}
static int nhvx_default(const struct htp_config * c) {
    return c->nhvx == 0;
}
static int repack_default(const struct htp_config * c) {
    return c->rt_repack == 1;
}
static int mm_default(const struct htp_config * c) {
    return c->mm_select == 2;
}
static int fa_default(const struct htp_config * c) {
    return c->fa_select == 2;
}
static int gdn_default(const struct htp_config * c) {
    return c->gdn_select == 2;
}
static int ar_default(const struct htp_config * c) {
    return c->ar_select == 2;
}
static int verbose_default(const struct htp_config * c) {
    return c->verbose == 0 && htp_log_verbose == 0;
}
static int verbose_max(const struct htp_config * c) {
    return c->verbose == 9;
}
static int vmem_default(const struct htp_config * c) {
    return c->vmem == HTP_VMEM_DEFAULT && !c->vmem_set;
}
static int vtcm_default(const struct htp_config * c) {
    return c->vtcm_size == 0;
}
static int mbuf_partial(const struct htp_config * c) {
    return c->mbuf_dyn == 512 * MiB && c->mbuf_static == GiB && c->mbuf_total == GiB;
}
static int mbuf_three(const struct htp_config * c) {
    return c->mbuf_dyn == MiB && c->mbuf_static == 2 * MiB && c->mbuf_total == 3 * MiB;
}
static int mbuf_default(const struct htp_config * c) {
    return c->mbuf_dyn == 512 * MiB;
}
static int power_burst(const struct htp_config * c) {
    return c->power_mode == HTP_POWER_MODE_BURST;
}
static int profile_off(const struct htp_config * c) {
    return c->profile == 0 && c->n_pmu_events == 0;
}
static int no_filter(const struct htp_config * c) {
    return !c->has_opfilter && htp_config_op_filtered(c, "(") == 0;
}
static int arch_auto(const struct htp_config * c) {
    return c->arch_auto && c->arch == HTP_CONFIG_ARCH_DEFAULT;
}
static int arch_min(const struct htp_config * c) {
    return !c->arch_auto && c->arch == 73 && c->vmem == 3000 * MiB;
}
static int arch_max(const struct htp_config * c) {
    return !c->arch_auto && c->arch == 85 && c->dma64 == 1;
}
static int npu_default(const struct htp_config * c) {
    return c->npu_path[0] == '\0';
}
static int npu_exec_none(const struct htp_config * c) {
    return c->npu_exec[0] == '\0';
}
static int optrace_max(const struct htp_config * c) {
    return c->optrace == HTP_MAX_TRACES;
}
static int fa_split_default(const struct htp_config * c) {
    return c->fa_split == 1;
}
static int fusion_default(const struct htp_config * c) {
    return c->opfusion == 1;
}
static int dma64_default(const struct htp_config * c) {
    return c->dma64 == 0 && !c->dma64_disabled;
}

static void test_env_bad(void) {
    static char long_path[5000];
    memset(long_path, '/', sizeof long_path - 1);

    const struct {
        struct bad_case bc;
        int (*check)(const struct htp_config *);
        const char * what;
    } cases[] = {
        {{"GGML_HEXAGON_OPBATCH", "abc", "2048"}, opbatch_default, "not a number -> default"},
        {{"GGML_HEXAGON_OPBATCH", "12x", "2048"}, opbatch_default, "trailing junk -> default"},
        {{"GGML_HEXAGON_OPBATCH", "-5", "2048"}, opbatch_default, "negative -> default"},
        {{"GGML_HEXAGON_OPBATCH", "0", "2048"}, opbatch_default, "zero -> default"},
        {{"GGML_HEXAGON_OPBATCH", "100000", "8192"}, opbatch_max, "too large -> clamped"},
        {{"GGML_HEXAGON_OPBATCH", "99999999999999999999999", "8192"}, opbatch_max, "overflow -> clamped"},
        {{"GGML_HEXAGON_OPBATCH", "1 2", "2048"}, opbatch_default, "two numbers -> default"},
        {{"GGML_HEXAGON_OPQUEUE", "1000", "64"}, opqueue_max, "clamped"},
        {{"GGML_HEXAGON_OPQUEUE", "0x", "8"}, opqueue_default, "junk"},
        {{"GGML_HEXAGON_NHVX", "99", "10"}, nhvx_max, "clamped"},
        {{"GGML_HEXAGON_NHVX", "-1", "0"}, nhvx_default, "negative"},
        {{"GGML_HEXAGON_RT_REPACK", "5", "1"}, repack_default, "no such mode -> default"},
        {{"GGML_HEXAGON_MM_SELECT", "-1", "2"}, mm_default, "negative"},
        {{"GGML_HEXAGON_FA_SELECT", "3", "2"}, fa_default, "no such mode"},
        {{"GGML_HEXAGON_GDN_SELECT", "hmx", "2"}, gdn_default, "not a number"},
        {{"GGML_HEXAGON_AR_SELECT", "2.5", "2"}, ar_default, "not an integer"},
        {{"GGML_HEXAGON_FA_SPLIT", "yes", "1"}, fa_split_default, "not a number"},
        {{"GGML_HEXAGON_OPFUSION", "on", "1"}, fusion_default, "not a number"},
        {{"GGML_HEXAGON_DMA64", "off", "1"}, dma64_default, "not a number"},
        {{"GGML_HEXAGON_VERBOSE", "x", "0"}, verbose_default, "not a number"},
        {{"GGML_HEXAGON_VERBOSE", "50", "9"}, verbose_max, "clamped"},
        {{"GGML_HEXAGON_VMEM", "lots", "3200 MiB"}, vmem_default, "not a size"},
        {{"GGML_HEXAGON_VMEM", "-1", "3200 MiB"}, vmem_default, "negative size"},
        {{"GGML_HEXAGON_VMEM", "1e30g", "3200 MiB"}, vmem_default, "too large"},
        {{"GGML_HEXAGON_VTCM_SIZE", "8q", "0 bytes"}, vtcm_default, "bad suffix"},
        {{"GGML_HEXAGON_MBUF", "abc,,1g", "512 MiB"}, mbuf_partial, "bad first field keeps its default"},
        {{"GGML_HEXAGON_MBUF", "1,2,3,4", "the first 3"}, mbuf_three, "4 fields"},
        {{"GGML_HEXAGON_MBUF", "0", "512 MiB"}, mbuf_default, "zero dynamic size"},
        {{"GGML_HEXAGON_POWER_MODE", "turbo", "'burst'"}, power_burst, "unknown mode"},
        {{"GGML_HEXAGON_POWER_MODE", "", "'burst'"}, power_burst, "empty mode"},
        {{"GGML_HEXAGON_PROFILE", "1,2", "0"}, profile_off, "two values"},
        {{"GGML_HEXAGON_PROFILE", "x", "0"}, profile_off, "not a number"},
        {{"GGML_HEXAGON_PROFILE", "7", "0"}, profile_off, "no such mode"},
        {{"GGML_HEXAGON_PROFILE", "1,2,3,4,5,6,7,8,9", "0"}, profile_off, "nine events"},
        {{"GGML_HEXAGON_PROFILE", "1,2,3,4,5,6,7,0x100000000", "0"}, profile_off, "event above 32 bits"},
        {{"GGML_HEXAGON_PROFILE", "1,,3,4,5,6,7,8", "0"}, profile_off, "empty event"},
        {{"GGML_HEXAGON_OPFILTER", "(", "no filter"}, no_filter, "bad regex ignored"},
        {{"GGML_HEXAGON_OPFILTER", "ADD[", "no filter"}, no_filter, "bad regex ignored"},
        {{"GGML_HEXAGON_OPFILTER", "x+++++++++++++++++++++++++++++++++++++++++++++++", "no filter"},
         no_filter,
         "stacked repetitions (gigabytes in regcomp) refused"},
        {{"GGML_HEXAGON_OPFILTER", "((((((((((((a+)+)+)+)+)+)+)+)+)+)+)+)+", "no filter"},
         no_filter,
         "nested repetitions refused"},
        {{"GGML_HEXAGON_OPFILTER", "(a{99}){99}{99}", "no filter"}, no_filter, "nested bounds refused"},
        {{"GGML_HEXAGON_OPFILTER", "(x||)+*", "no filter"}, no_filter, "a repetition repeated refused"},
        {{"GGML_HEXAGON_OPFILTER", "a{2}?", "no filter"}, no_filter, "a bound repeated refused"},
        {{"GGML_HEXAGON_OPFILTER", "((((((((((((((((((((((((((((((((((a))))))))))))))))))))))))))))))))))",
          "no filter"},
         no_filter,
         "groups nested 34 deep refused"},
        {{"GGML_HEXAGON_ARCH", "vx", "the NPU's own"}, arch_auto, "not a version"},
        {{"GGML_HEXAGON_ARCH", "v", "the NPU's own"}, arch_auto, "no number"},
        {{"GGML_HEXAGON_ARCH", "v-79", "the NPU's own"}, arch_auto, "negative"},
        {{"GGML_HEXAGON_ARCH", "v68", "v73"}, arch_min, "below range -> 73"},
        {{"GGML_HEXAGON_ARCH", "v100", "v85"}, arch_max, "above range -> 85"},
        {{"GGML_HEXAGON_OPTRACE", "999999", "4096"}, optrace_max, "clamped"},
        {{"GGML_HEXAGON_NPU", long_path, "htp-npu next to the library"}, npu_default, "overlong path"},
        {{"GGML_HEXAGON_NPU_EXEC", long_path, "no launcher"}, npu_exec_none, "overlong launcher"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        expect_bad(&cases[i].bc, cases[i].check, cases[i].what);
    }

    // a 4 KiB junk value in every variable at once: warnings, no crash, sane values
    static char junk[4097];
    memset(junk, '~', sizeof junk - 1);
    env_clear();
    for (size_t i = 0; i < sizeof all_vars / sizeof all_vars[0]; i++) {
        if (strcmp(all_vars[i], "GGML_HEXAGON_NPU") != 0 && strcmp(all_vars[i], "GGML_HEXAGON_NPU_EXEC") != 0 &&
            strcmp(all_vars[i], "GGML_HEXAGON_OPFILTER") != 0) {
            setenv(all_vars[i], junk, 1);
        }
    }
    struct htp_config cfg;
    warn_reset();
    int rc = htp_config_load(&cfg);
    CHECK(rc >= 20 && rc == warn_count, "all junk: rc %d, %d warnings", rc, warn_count);
    CHECK(cfg.n_devices == 0 && cfg.opbatch == 2048 && cfg.opqueue == 8 && cfg.vmem == HTP_VMEM_DEFAULT &&
              cfg.mbuf_dyn == 512 * MiB && cfg.power_mode == HTP_POWER_MODE_BURST && cfg.profile == 0,
          "all junk: defaults");
    htp_config_free(&cfg);
    env_clear();
}

// Repetition that stays small compiles and matches; the size bound refuses
// only what would grow geometrically.
static void test_opfilter_sizes(void) {
    static const struct {
        const char * pattern;
        const char * matches;
        const char * misses;
    } cases[] = {
        {"(MUL_MAT|ADD)+", "MUL_MATADD", "MUL_MAT_ID"},
        {"SCALE{1,2}", "SCALEE", "SCALEEE"},
        {"(AB{2}){3}", "ABBABBABB", "ABBABB"},
        {"[[:upper:]_]+\\(f32\\)|(((GET_ROWS)?)*)", "SOFT_MAX(F32)", "ROPE(f16)"},
        {"([]a]+){2}", "]a]", "b"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        env_clear();
        setenv("GGML_HEXAGON_OPFILTER", cases[i].pattern, 1);
        struct htp_config cfg;
        warn_reset();
        int rc = htp_config_load(&cfg);
        CHECK(rc == 0 && cfg.has_opfilter, "%s: loads (rc %d)", cases[i].pattern, rc);
        CHECK(htp_config_op_filtered(&cfg, cases[i].matches) == 1, "%s: matches %s", cases[i].pattern,
              cases[i].matches);
        CHECK(htp_config_op_filtered(&cfg, cases[i].misses) == 0, "%s: misses %s", cases[i].pattern, cases[i].misses);
        htp_config_free(&cfg);
    }
    env_clear();
}

int main(void) {
    ggml_log_set(capture_log, NULL);

    printf("test-config: device strings, valid\n");
    test_devices_valid();
    printf("test-config: device strings, malformed\n");
    test_devices_malformed();
    printf("test-config: device strings, 4 KiB inputs\n");
    test_devices_large();
    printf("test-config: device strings ending at a PROT_NONE page\n");
    test_devices_guard_page();
    printf("test-config: sizes\n");
    test_sizes();
    printf("test-config: environment defaults\n");
    test_env_defaults();
    printf("test-config: environment, good values\n");
    test_env_good();
    printf("test-config: environment, engine options\n");
    test_env_engines();
    printf("test-config: environment, malformed values\n");
    test_env_bad();
    printf("test-config: op filters with bounded repetition\n");
    test_opfilter_sizes();

    ggml_log_set(NULL, NULL);
    return test_exit_code("test-config");
}
