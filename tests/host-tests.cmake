# Host session runtime tests. test-host-units needs no NPU; the others start
# real htp-npu processes (found next to libggml-htp.so, as in production).
htp_test(test-host-units    LIBS ggml-htp TIMEOUT 30)
htp_test(test-host-batches  LIBS ggml-htp TIMEOUT 30)
htp_test(test-host-mapping  LIBS ggml-htp TIMEOUT 30)
htp_test(test-host-fences   LIBS ggml-htp TIMEOUT 30)
htp_test(test-host-faults   LIBS ggml-htp TIMEOUT 30)
