# Kernel tests: the NPU's op kernels (src/npu/ops) against ggml-cpu.
htp_test(test-kernels LIBS ggml htp-npu-ops m TIMEOUT 60)
