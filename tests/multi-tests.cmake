# Many NPUs: tensor-split allreduce (comm.c) and multi-NPU group devices.
#
# test-allreduce-*   2, 3 and 4 ranks on distinct NPU processes, F32 / F16,
#                    exact sums, once per GGML_HEXAGON_AR_SELECT / _AR_SCATTER
#                    combination (fused reduce-scatter, fused full reduction,
#                    unfused, copy + fence fallback)
# test-group         a group device (G[0-1:0], G[0-3:0]) against the CPU and a
#                    single NPU; a failing member fails the group
set(htp_ar_devices "GGML_HEXAGON_DEVICES=HTP0,HTP1,HTP2,HTP3")
htp_test(test-allreduce LIBS ggml ggml-htp m TIMEOUT 120 ARGS fused-scatter
         ENV "${htp_ar_devices};GGML_HEXAGON_AR_SELECT=2;GGML_HEXAGON_AR_SCATTER=1")
add_test(NAME test-allreduce-full COMMAND test-allreduce fused-full)
set_tests_properties(test-allreduce-full PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77
    ENVIRONMENT "${htp_ar_devices};GGML_HEXAGON_AR_SELECT=2;GGML_HEXAGON_AR_SCATTER=0")
add_test(NAME test-allreduce-unfused COMMAND test-allreduce unfused)
set_tests_properties(test-allreduce-unfused PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77
    ENVIRONMENT "${htp_ar_devices};GGML_HEXAGON_AR_SELECT=1;GGML_HEXAGON_AR_SCATTER=1")
add_test(NAME test-allreduce-unfused-noscatter COMMAND test-allreduce unfused)
set_tests_properties(test-allreduce-unfused-noscatter PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77
    ENVIRONMENT "${htp_ar_devices};GGML_HEXAGON_AR_SELECT=1;GGML_HEXAGON_AR_SCATTER=0")
add_test(NAME test-allreduce-fallback COMMAND test-allreduce fallback)
set_tests_properties(test-allreduce-fallback PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77
    ENVIRONMENT "${htp_ar_devices};GGML_HEXAGON_AR_SELECT=0;GGML_HEXAGON_AR_SCATTER=1")

htp_test(test-group LIBS ggml ggml-htp ggml-cpu m TIMEOUT 60 ENV "GGML_HEXAGON_DEVICES=G[0-3],HTP0:1")
add_test(NAME test-group-2 COMMAND test-group)
set_tests_properties(test-group-2 PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77
    ENVIRONMENT "GGML_HEXAGON_DEVICES=G[0-1],HTP0:1")

# test-parity-split  a tiny F16 llama through libllama: CPU vs tensor split
#                    (LLAMA_SPLIT_MODE_TENSOR, meta device over HTP0,HTP1,
#                    allreduce through comm.c) and vs the 4-NPU group G[0-3:1];
#                    per-position NMSE of the logits under 1e-4
#                    (test-parity-split-fallback: AR_SELECT=0, the meta
#                    backend's own reduction over our async copies)
if (TARGET htp-model-common)
    # ggml's meta device leaks its buffer types (see lsan-meta.supp).
    set(htp_lsan_meta "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/lsan-meta.supp")
    htp_test(test-parity-split LIBS htp-model-common m TIMEOUT 300
             ENV "GGML_HEXAGON_DEVICES=HTP0,HTP1,G[0-3:1];${htp_lsan_meta}")
    add_test(NAME test-parity-split-fallback COMMAND test-parity-split split)
    set_tests_properties(test-parity-split-fallback PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77
        ENVIRONMENT "GGML_HEXAGON_DEVICES=HTP0,HTP1;GGML_HEXAGON_AR_SELECT=0;${htp_lsan_meta}")
endif()
