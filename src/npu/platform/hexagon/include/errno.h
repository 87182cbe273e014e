// errno.h (Hexagon runtime): errno is per thread, kept in the thread's runtime
// record (UGP points at it; see thread.h). Only the codes the runtime itself
// sets are defined; the values are Linux's.

#ifndef HTP_RT_ERRNO_H
#define HTP_RT_ERRNO_H

int * htp_rt_errno_location(void);

#define errno (*htp_rt_errno_location())

#define EINVAL 22
#define ERANGE 34

#endif  // HTP_RT_ERRNO_H
