#!/bin/sh
# hexagon-tools.sh: can this machine build the NPU for Hexagon and run it?
# Checks for clang with the hexagon v67/HVX target, ld.lld and qemu-hexagon.
# Exit 0 when all are there; otherwise prints one line saying what is missing
# and exits 1. (.ci/run installs lld and qemu-user with apt-get first.)
set -u
cc=${HTP_HEXAGON_CLANG:-clang}
if ! command -v "$cc" >/dev/null 2>&1; then
    echo "no $cc: the Hexagon NPU is not built"
    exit 1
fi
if ! echo 'int main(void){return 0;}' | "$cc" --target=hexagon -mv67 -mhvx -mhvx-length=128b -ffreestanding \
        -x c -c - -o /dev/null >/dev/null 2>&1; then
    echo "$cc has no hexagon v67/HVX target: the Hexagon NPU is not built"
    exit 1
fi
if ! command -v ld.lld >/dev/null 2>&1; then
    echo "no ld.lld (Debian package lld): the Hexagon NPU is not built"
    exit 1
fi
if ! command -v qemu-hexagon >/dev/null 2>&1; then
    echo "no qemu-hexagon (Debian package qemu-user): the Hexagon NPU is not built"
    exit 1
fi
exit 0
