// config-devices.h: the device list of GGML_HEXAGON_DEVICES (or the
// deprecated GGML_HEXAGON_NDEV), in ggml-hexagon's grammar:
//
//   N                      N devices HTP0..HTP{N-1}, all on physical NPU 0,
//                          device i being virtual session i (1 <= N <= 16)
//   HTP<p>[:<v>], ...      one device per item: physical NPU p, virtual
//                          session v (default 0); HTP0 and HTP0:1 share NPU 0
//   Name[<plist>[:<v>]]    one device backed by a session on each physical
//                          NPU of plist ("0-1", "0,2-3"), all with virtual
//                          session v; the first listed NPU leads the group
//
// Items are separated by commas outside brackets; at most 16 devices.

#ifndef HTP_CONFIG_DEVICES_H
#define HTP_CONFIG_DEVICES_H

#include <stddef.h>
#include <stdint.h>

#define HTP_CONFIG_MAX_DEVICES 16  // devices in total (the reference's GGML_HEXAGON_MAX_SESSIONS)
#define HTP_CONFIG_MAX_PHYS    16  // physical NPU indices 0..15
#define HTP_CONFIG_MAX_VIRT    16  // virtual session indices 0..15 (HTP_MAX_SESSIONS per NPU)
#define HTP_CONFIG_NAME_MAX    64  // device name bytes, NUL included

// One ggml device. A plain device has one member; a multi-NPU group has one
// member per physical NPU, all using the same virtual session index.
struct htp_device_config {
    char     name[HTP_CONFIG_NAME_MAX];  // ggml device name ("HTP0", "HTP1:2", "G"), NUL terminated
    uint32_t n_members;                  // sessions backing the device, 1..HTP_CONFIG_MAX_PHYS
    uint32_t phys[HTP_CONFIG_MAX_PHYS];  // physical NPU of each member, distinct; phys[0] leads
    uint32_t virt;                       // virtual session index on every member's NPU
};

// Parse a GGML_HEXAGON_DEVICES string into at most `max` (and at most
// HTP_CONFIG_MAX_DEVICES) devices. NULL or "" gives the default device HTP0.
// Malformed items are warned about and skipped or repaired the way
// ggml-hexagon does; a list with no valid item gives no device. Reads s only up
// to its NUL. Returns 0 when s was well formed, the number of problems warned
// about otherwise, or -1 when out / n_out is NULL or max < 1.
int htp_config_parse_devices(const char * s, struct htp_device_config * out, int max, int * n_out);

// The devices of the environment (HTP_CONFIG_MAX_DEVICES room in out):
// GGML_HEXAGON_DEVICES, else GGML_HEXAGON_NDEV (warned about as deprecated),
// else the default device. Returns the number of problems warned about.
int htp_config_load_devices(struct htp_device_config * out, int * n_out);

// Name of member i of a device: the device name for the leader (i = 0), else
// "HTP<p>:<v>", as ggml-hexagon names the sessions of a group.
void htp_config_member_name(const struct htp_device_config * dev, uint32_t i, char * buf, size_t size);

#endif  // HTP_CONFIG_DEVICES_H
