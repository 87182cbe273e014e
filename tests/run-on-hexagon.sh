#!/bin/sh
# run-on-hexagon.sh HEXAGON_BUILD COMMAND [ARGS...]: run a host-side test with
# the NPU built for Hexagon (HEXAGON_BUILD/bin/htp-npu, from `make hexagon`)
# under qemu-hexagon in place of the software NPU. Exits 77 (skip) with one
# line saying why when the tools or the Hexagon build are missing.
set -u
hex=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
why=$("$here/../scripts/hexagon-tools.sh") || { echo "SKIP: $why"; exit 77; }
if [ ! -x "$hex/bin/htp-npu" ]; then
    echo "SKIP: $hex/bin/htp-npu not built (make hexagon)"
    exit 77
fi
GGML_HEXAGON_NPU=$hex/bin/htp-npu
GGML_HEXAGON_NPU_EXEC="qemu-hexagon -cpu v67"
export GGML_HEXAGON_NPU GGML_HEXAGON_NPU_EXEC
exec "$@"
