// main.c: htp-npu, the software NPU. Started by libggml-htp with an inherited
// control socket (--fd N), or by hand for debugging (--listen PATH).

#include <stdlib.h>
#include <string.h>

#include "npu-util.h"
#include "server.h"

static void usage(const char * argv0) {
    htp_npu_log("usage: %s --fd N [--phys P]        serve the connected SOCK_SEQPACKET socket N", argv0);
    htp_npu_log("       %s --listen PATH [--phys P] accept connections on a unix socket at PATH (mode 0600;", argv0);
    htp_npu_log("       PATH's directory is made 0700 or must be yours and 0700; peers of other uids are refused)");
}

static int parse_u32(const char * s, uint32_t * out) {
    char *        end;
    unsigned long v = strtoul(s, &end, 10);
    // An overflow saturates at ULONG_MAX, which the bound refuses too.
    if (end == s || *end != '\0' || *s == '-' || v > 0x7fffffffu) {
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

int main(int argc, char ** argv) {
    uint32_t     fd = 0, phys = 0;
    int          have_fd = 0;
    const char * listen  = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--fd") == 0 && i + 1 < argc && parse_u32(argv[i + 1], &fd) == 0) {
            have_fd = 1;
            i++;
        } else if (strcmp(argv[i], "--phys") == 0 && i + 1 < argc && parse_u32(argv[i + 1], &phys) == 0) {
            i++;
        } else if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc) {
            listen = argv[++i];
        } else {
            usage(argv[0]);
            return 2;
        }
    }
    if (have_fd == (listen != NULL)) {
        usage(argv[0]);
        return 2;
    }
    return have_fd ? htp_server_run_fd((int)fd, phys) : htp_server_run_listen(listen, phys);
}
