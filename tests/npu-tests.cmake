# Tests of the software NPU core (src/npu): window allocator, batch validation
# and execution, worker pool, control server.
htp_test(test-npu-vmem LIBS htp-npu-core TIMEOUT 30)
htp_test(test-npu-validate LIBS htp-npu-core TIMEOUT 30)
htp_test(test-npu-pool LIBS htp-npu-core TIMEOUT 30)
htp_test(test-npu-lock LIBS htp-npu-core TIMEOUT 30)
htp_test(test-npu-server ARGS $<TARGET_FILE:htp-npu> TIMEOUT 30)
add_dependencies(test-npu-server htp-npu)
