# htp-bench: ggml-htp benchmarks, one mode per measurement (htp-bench <mode>).
# It uses the session runtime's internal headers (src/host) directly.
add_executable(htp-bench htp-bench.c)
target_include_directories(htp-bench PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(htp-bench PRIVATE ggml-htp)
htp_target(htp-bench)
