// op-names.h: op code -> name ("MUL_MAT", ...), the same on host and NPU.

#ifndef HTP_CONTRACT_OP_NAMES_H
#define HTP_CONTRACT_OP_NAMES_H

#include <stdint.h>

// Name of an op code (enum htp_op_code), "?" if unknown.
const char * htp_op_name(uint32_t opcode);

#endif  // HTP_CONTRACT_OP_NAMES_H
