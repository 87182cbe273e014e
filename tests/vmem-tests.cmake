# Buffers, mappings and the VA window: allocation planning, mmap stacking,
# window measurement, DMA64; and libllama's layer split over two HTP devices.
#
# test-planner        the layer-grouped allocation planner: the Llama-3.2-1B
#                     plan under the 1 GiB static limit (printed), no layer
#                     split, limits kept; the ggml extension on HTP0
htp_test(test-planner LIBS ggml ggml-htp m TIMEOUT 30)

# test-mmap-stacking  mapping at flush, largest first, registered buffers
#                     included (no hole after freeing a small buffer; the naive
#                     order leaves one); the VMEM=0 window measurement; DMA64
#                     weights mapped outside the window
htp_test(test-mmap-stacking LIBS ggml-htp TIMEOUT 30)

# test-parity-layer-*  libllama with LLAMA_SPLIT_MODE_LAYER over two HTP
#                      devices, logits per position against ggml-cpu (NMSE
#                      under 1e-4): two NPU processes (phys) and two sessions
#                      of one NPU (virt)
htp_test(test-parity-layer LIBS htp-model-common m TIMEOUT 120 ENV "GGML_HEXAGON_DEVICES=HTP0,HTP1")
add_test(NAME test-parity-layer-virt COMMAND test-parity-layer)
set_tests_properties(test-parity-layer-virt PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77
    ENVIRONMENT "GGML_HEXAGON_DEVICES=HTP0,HTP0:1")
