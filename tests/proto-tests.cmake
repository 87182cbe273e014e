# Wire protocol and shared-memory ring tests (no NPU process needed).
htp_test(test-ring LIBS Threads::Threads TIMEOUT 60)
