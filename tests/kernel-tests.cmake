# Kernel tests: the NPU's op kernels (src/npu/ops) against ggml-cpu.
htp_test(test-kernels LIBS ggml htp-npu-ops m TIMEOUT 60)
# K-quant tiles, dequantization and dot products against ggml (Q4_K, Q5_K, Q6_K).
htp_test(test-kquant LIBS ggml htp-npu-ops m TIMEOUT 30)
