# htp-bench: ggml-htp benchmarks, one mode per measurement (htp-bench <mode>).
# The rtt mode uses the session runtime's internal headers (src/host) directly.
add_executable(htp-bench htp-bench.c bench-matmul.c bench-membw.c)
target_include_directories(htp-bench PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(htp-bench PRIVATE ggml ggml-htp Threads::Threads m)
htp_target(htp-bench)
