// config-env.h: reading one GGML_HEXAGON_* variable. The readers never fail
// hard: a value they cannot take is warned about, naming the variable, the
// value and what is used in its place, and the option gets that value:
//
//   not a number, trailing junk, negative   -> the option's default
//   above the option's range                -> clamped to the top (counts) or
//                                              the default (modes)
//   below the option's range                -> the option's default
//   empty string                            -> as if unset
//
// Each htp_config_env_* reader returns the number of problems it warned about
// (0 or 1), so that a loader can add them up.

#ifndef HTP_CONFIG_ENV_H
#define HTP_CONFIG_ENV_H

#include <stddef.h>
#include <stdint.h>

// Longest piece of a user's value quoted in a warning.
#define HTP_CONFIG_QUOTE_MAX 96

// "ggml-htp: VAR='value' <why>, using <used>". val is shown up to n bytes.
void htp_config_env_warn(const char * var, const char * val, size_t n, const char * why, const char * used_fmt, ...)
    __attribute__((format(printf, 5, 6)));

// How a number outside [lo, hi] is answered.
enum htp_config_range {
    HTP_CONFIG_RANGE_CLAMP,    // above hi: hi (a count asked "as large as possible")
    HTP_CONFIG_RANGE_DEFAULT,  // above hi: the default (a mode number that does not exist)
};

// An integer option read in base (0: C prefixes, as strtoul). Unset or
// empty: def.
int htp_config_env_int(const char * var, int base, int lo, int hi, int def, enum htp_config_range policy, int * out);
int htp_config_env_u32(const char * var, int base, uint32_t lo, uint32_t hi, uint32_t def, enum htp_config_range policy,
                       uint32_t * out);

// A yes/no option: any integer, nonzero meaning yes (as atoi(...) != 0).
int htp_config_env_bool(const char * var, int def, int * out);

// A size option (htp_config_parse_size). Unset or empty: def. A value below
// min_ok is refused. *set (if given) says whether the user's value was taken.
int htp_config_env_size(const char * var, uint64_t def, uint64_t min_ok, uint64_t * out, int * set);

// Parse a whole string as an integer in base (0: C prefixes, as strtoul).
// Leading and trailing blanks are allowed. Returns 0, -1 when the string is
// not a number, -2 when a number is followed by junk; *erange is set when it
// overflowed.
int htp_config_parse_long(const char * s, int base, long long * out, int * erange);

// Parse a size the way GGML_HEXAGON_VMEM / _VTCM_SIZE / _MBUF are read: a
// number (fractions allowed) in MiB, or with a k / m / g suffix (KiB, MiB, GiB;
// "MiB", "MB" spellings accepted). Returns 0 and *out in bytes, or -1 when s is
// not such a size (not a number, negative, too large, trailing junk).
int htp_config_parse_size(const char * s, uint64_t * out);

// The same for the first n bytes of s (or up to its NUL): one field of a list.
int htp_config_parse_size_n(const char * s, size_t n, uint64_t * out);

// A size for people: "3 GiB", "512 MiB", "4 KiB" or "1000 bytes".
void htp_config_format_size(char * buf, size_t size, uint64_t v);

// A piece of a variable's value: (pointer, length), never written to and not
// NUL terminated, so lists are read in place.
struct htp_config_span {
    const char * p;
    size_t       n;
};

// s without leading and trailing white space.
struct htp_config_span htp_config_span_trim(struct htp_config_span s);

#endif  // HTP_CONFIG_ENV_H
