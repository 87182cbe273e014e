// rt-name.h: the name under which a runtime file defines a libc function.
// The one idea: math.c, printf.c and strconv.c are plain portable C, so the
// x86 tests compile them too and compare them with glibc; there
// HTP_RT_TEST_NAMES renames every definition (expf -> htp_rt_test_expf) so
// both versions live in one program. Definitions are written
// `float (HTP_RT_FN(expf))(float x)`: the parentheses keep a function-like
// macro of the same name (see include/math.h) from expanding.

#ifndef HTP_RT_NAME_H
#define HTP_RT_NAME_H

#ifdef HTP_RT_TEST_NAMES
#define HTP_RT_FN(name) htp_rt_test_##name
#else
#define HTP_RT_FN(name) name
#endif

#endif  // HTP_RT_NAME_H
