# Wire protocol and shared-memory ring tests (no NPU process needed).
htp_test(test-ring LIBS Threads::Threads TIMEOUT 60)
# The contract (src/contract) against ggml's own type traits and enum values.
htp_test(test-contract LIBS htp-contract ggml-base TIMEOUT 30)
