# Quantized weights: the tiled layout and the kernels that read it.
#
# test-repack    set_tensor / get_tensor of quantized weights in an HTP weight
#                buffer (stored tiled) return identical bytes: whole, in pieces,
#                2-D, patched, memset, cleared; non-weight buffers stay plain
# test-ops-rt0   the quantized op cases with GGML_HEXAGON_RT_REPACK=0, so the
#                NPU kernels also read weights in the plain ggml layout
htp_test(test-repack LIBS ggml ggml-htp m TIMEOUT 60)

add_test(NAME test-ops-rt0 COMMAND test-ops -o MUL_MAT,MUL_MAT_ID,GET_ROWS)
set_tests_properties(test-ops-rt0 PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77
    ENVIRONMENT "GGML_HEXAGON_RT_REPACK=0")
