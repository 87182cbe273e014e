# The ggml backend as a ggml user sees it.

# Loaded at run time, not linked (GGML_BACKEND_DL).
htp_test(test-backend-dl LIBS ggml m ARGS $<TARGET_FILE:ggml-htp>)
add_dependencies(test-backend-dl ggml-htp)

# Node cache by graph uid; graph_optimize's reorder and its hazard checks.
htp_test(test-backend-graph LIBS ggml ggml-htp m)

# A graph split across two devices: two sessions of one NPU, and two NPUs.
add_executable(test-backend-multi test-backend-multi.c)
target_include_directories(test-backend-multi PRIVATE ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(test-backend-multi PRIVATE ggml ggml-htp m)
htp_target(test-backend-multi)
add_test(NAME test-backend-multi-virt COMMAND test-backend-multi)
set_tests_properties(test-backend-multi-virt PROPERTIES TIMEOUT 60 ENVIRONMENT "GGML_HEXAGON_DEVICES=HTP0,HTP0:1")
add_test(NAME test-backend-multi-phys COMMAND test-backend-multi)
set_tests_properties(test-backend-multi-phys PROPERTIES TIMEOUT 60 ENVIRONMENT "GGML_HEXAGON_DEVICES=HTP0,HTP1")
