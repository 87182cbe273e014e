# htp-bench: ggml-htp benchmarks, one mode per measurement (htp-bench <mode>).
# The rtt mode uses the session runtime's internal headers (src/host) directly;
# the model mode loads models with libllama through tools/model-load.c.
add_executable(htp-bench htp-bench.c bench-matmul.c bench-membw.c bench-opcost.c bench-vmem.c bench-model.c bench-fa.c)
target_include_directories(htp-bench PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(htp-bench PRIVATE ggml ggml-htp htp-model-common Threads::Threads m)
# The model mode keeps the models it writes under <repo>/models.
target_compile_definitions(htp-bench PRIVATE HTP_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
htp_target(htp-bench)
