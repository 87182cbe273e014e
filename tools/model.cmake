# The model tools: htp-model writes GGUF models with seeded random weights,
# htp-run loads one with libllama, offloads it to an HTP device and generates.
# Both share model-gen.c (the generator) and model-load.c (the loader), which the tests
# link too.
add_library(htp-model-common STATIC model-gen.c model-load.c model-feed.c model-quant.c)
target_include_directories(htp-model-common PUBLIC ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(htp-model-common PUBLIC llama ggml ggml-base ggml-htp Threads::Threads m)
htp_target(htp-model-common)

add_executable(htp-model htp-model.c)
target_link_libraries(htp-model PRIVATE htp-model-common)
htp_target(htp-model)

add_executable(htp-run htp-run.c)
target_link_libraries(htp-run PRIVATE htp-model-common)
# Where the default model lives when the binary is not in <repo>/build*/bin.
target_compile_definitions(htp-run PRIVATE HTP_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
htp_target(htp-run)
