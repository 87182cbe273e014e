# Host configuration (GGML_HEXAGON_* environment, device strings). Links the
# config module's sources directly: no NPU process, no libggml-htp needed.
htp_test(test-config
    SOURCES test-config.c ${CMAKE_SOURCE_DIR}/src/host/config.c ${CMAKE_SOURCE_DIR}/src/host/config-devices.c
            ${CMAKE_SOURCE_DIR}/src/host/config-env.c ${CMAKE_SOURCE_DIR}/src/host/log.c
    LIBS ggml-base
    TIMEOUT 30)
