# hexagon-toolchain.cmake: cross-compile for Hexagon v67 with HVX (128-byte
# vectors), freestanding, against our own runtime (src/npu/platform/hexagon)
# instead of a libc: Debian has no Hexagon libc, crt or compiler-rt. Programs
# link htp-hexagon-rt, which supplies _start, the libc subset and the
# compiler's helper functions; they run under qemu-hexagon (user mode, which
# has the v67 CPU model), which CMake uses as the cross-compiling emulator.
#
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/hexagon-toolchain.cmake ...
#
# HTP_HEXAGON_CLANG (default: clang) picks the compiler; it must know the
# hexagon target (clang 14 does, up to v69). Linking uses ld.lld.

set(CMAKE_SYSTEM_NAME Generic)  # no OS libraries to find; the runtime is ours
set(CMAKE_SYSTEM_PROCESSOR hexagon)

if (NOT HTP_HEXAGON_CLANG)
    set(HTP_HEXAGON_CLANG clang)
endif()
set(CMAKE_C_COMPILER ${HTP_HEXAGON_CLANG})
set(CMAKE_C_COMPILER_TARGET hexagon)

set(HTP_HEXAGON_RT_INCLUDE ${CMAKE_CURRENT_LIST_DIR}/../src/npu/platform/hexagon/include)
cmake_path(NORMAL_PATH HTP_HEXAGON_RT_INCLUDE)

# -ffreestanding: no hosted libc (the runtime's headers come first, clang's
# own stddef/stdint/stdatomic/float.h after). -fno-math-errno: our libm never
# sets errno, and it lets __builtin_sqrtf become __hexagon_sqrtf. -G0: no
# small-data section (it would need GP set up, which nothing does).
# -spill-func-threshold-Os=1000 stops -Os code from calling
# __save_r16_through_r27 & co., spill helpers the runtime does not have.
# -enable-pipeliner=false turns off LLVM 14's Hexagon software pipeliner,
# which miscompiles: a loop carrying a value from one iteration to the next
# (a shift's carry word) got a stale carry in the epilogue when the loop ran
# exactly twice (tests/npu/rt-crosscheck.h caught it).
set(CMAKE_C_FLAGS_INIT
    "-mv67 -mhvx -mhvx-length=128b -ffreestanding -fno-math-errno -G0 -mllvm -spill-func-threshold-Os=1000 -mllvm -enable-pipeliner=false -isystem ${HTP_HEXAGON_RT_INCLUDE}")
# (-Qunused-arguments: the compile-only -mllvm flags above reach the link too.)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostdlib -static -fuse-ld=lld -Qunused-arguments")

# Compiler checks cannot link a program before the runtime exists.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

find_program(HTP_QEMU_HEXAGON qemu-hexagon)
if (HTP_QEMU_HEXAGON)
    set(CMAKE_CROSSCOMPILING_EMULATOR ${HTP_QEMU_HEXAGON} -cpu v67)
endif()

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
