# Build the pinned ggml and libllama sources (fetched by scripts/fetch-deps.sh)
# as shared libraries: ggml-base, ggml-cpu, ggml (registry) and llama.
#
# ggml-cpu is the yardstick every HTP/CPU ratio is measured against, so it is
# built the way ggml's own CMake builds it by default: OpenMP threads, weights
# repacked for the CPU's SIMD GEMM (GGML_USE_CPU_REPACK) and -march=native, so
# the compiler enables every SIMD extension this machine has (AVX2, AVX-512,
# VNNI, ...). Set HTP_CPU_ARCH_FLAGS to override the flags (e.g. for a
# portable build).
#
# The dependency's own warnings are not ours to fix: it builds without -Werror
# and with its warnings silenced.

set(GGML_DEP_DIR "${CMAKE_SOURCE_DIR}/deps/llama.rn" CACHE PATH "extracted ggml/llama sources")
if (NOT EXISTS "${GGML_DEP_DIR}/.fetched")
    message(FATAL_ERROR "ggml sources not found in ${GGML_DEP_DIR}; run scripts/fetch-deps.sh (make does it)")
endif()

set(HTP_CPU_ARCH_FLAGS "-march=native" CACHE STRING "SIMD flags for ggml-cpu (default: this machine's)")
set(GGML_PINNED_VERSION "0.0.0-llama.rn-0.12.9")
set(GGML_PINNED_COMMIT  "d727fbbd")

find_package(Threads REQUIRED)
find_package(OpenMP REQUIRED)

set(D "${GGML_DEP_DIR}")
set(dep_defs _GNU_SOURCE _XOPEN_SOURCE=600)
set(dep_opts -w)

# ggml-base: tensors, graphs, allocator, backend interface, quantization, gguf.
add_library(ggml-base SHARED
    ${D}/ggml.c ${D}/ggml-alloc.c ${D}/ggml-backend.cpp ${D}/ggml-backend-meta.cpp
    ${D}/ggml-opt.cpp ${D}/ggml-threading.cpp ${D}/ggml-quants.c ${D}/gguf.cpp)
target_include_directories(ggml-base PUBLIC ${D} PRIVATE ${D}/ggml-cpu)
target_compile_definitions(ggml-base
    PRIVATE ${dep_defs} GGML_BUILD GGML_VERSION="${GGML_PINNED_VERSION}" GGML_COMMIT="${GGML_PINNED_COMMIT}"
    PUBLIC GGML_SHARED)
target_compile_options(ggml-base PRIVATE ${dep_opts})
target_link_libraries(ggml-base PRIVATE Threads::Threads m)

# ggml-cpu: the CPU backend, native SIMD, OpenMP, repacked weights.
file(GLOB ggml_cpu_src ${D}/ggml-cpu/*.c ${D}/ggml-cpu/*.cpp ${D}/ggml-cpu/amx/*.cpp)
if (CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|i686")
    list(APPEND ggml_cpu_src ${D}/ggml-cpu/arch/x86/quants.c ${D}/ggml-cpu/arch/x86/repack.cpp)
elseif (CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
    list(APPEND ggml_cpu_src ${D}/ggml-cpu/arch/arm/quants.c ${D}/ggml-cpu/arch/arm/repack.cpp)
endif()
add_library(ggml-cpu SHARED ${ggml_cpu_src})
target_include_directories(ggml-cpu PRIVATE ${D}/ggml-cpu)
target_compile_definitions(ggml-cpu
    PRIVATE ${dep_defs} GGML_BACKEND_BUILD GGML_USE_OPENMP GGML_USE_CPU_REPACK
    PUBLIC GGML_BACKEND_SHARED)
separate_arguments(cpu_arch_flags UNIX_COMMAND "${HTP_CPU_ARCH_FLAGS}")
# Without AMX: on a CPU that has it, -march=native compiles the pinned
# ggml-cpu's AMX weight buffers in, and their matmul dies of SIGILL at its
# first tile instruction (TILEZERO in ggml_backend_amx_mul_mat; seen on an
# Intel Xeon VM, 2026-12-02). The pinned version asks the kernel for the
# AMX tile state only on the thread that creates the buffer type, not on
# the OpenMP threads that run the tiles (ggml-org/llama.cpp PR #26954, open).
# So every Q4_0/Q8_0/K-quant model on the CPU crashed there.
include(CheckCCompilerFlag)
check_c_compiler_flag("-mno-amx-tile" HTP_CC_HAS_NO_AMX)
if (HTP_CC_HAS_NO_AMX AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|i686")
    list(APPEND cpu_arch_flags -mno-amx-tile -mno-amx-int8 -mno-amx-bf16)
endif()
target_compile_options(ggml-cpu PRIVATE ${dep_opts} ${cpu_arch_flags})
target_link_libraries(ggml-cpu PUBLIC ggml-base PRIVATE OpenMP::OpenMP_C OpenMP::OpenMP_CXX Threads::Threads m)

# ggml: the backend registry (CPU linked in) and dynamic backend loading.
add_library(ggml SHARED ${D}/ggml-backend-reg.cpp ${D}/ggml-backend-dl.cpp)
target_compile_definitions(ggml PRIVATE ${dep_defs} GGML_BUILD GGML_USE_CPU)
target_compile_options(ggml PRIVATE ${dep_opts})
target_link_libraries(ggml PUBLIC ggml-base ggml-cpu PRIVATE ${CMAKE_DL_LIBS})

# llama: libllama with every model architecture.
file(GLOB llama_src ${D}/llama*.cpp ${D}/models/*.cpp)
add_library(llama SHARED ${llama_src} ${D}/unicode.cpp ${D}/unicode-data.cpp)
target_compile_definitions(llama PRIVATE ${dep_defs} LLAMA_BUILD PUBLIC LLAMA_SHARED)
target_compile_options(llama PRIVATE ${dep_opts})
target_link_libraries(llama PUBLIC ggml)

set_target_properties(ggml-base ggml-cpu ggml llama PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
