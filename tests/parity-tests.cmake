# End-to-end parity: whole models on ggml-cpu and on HTP0.
#
# test-parity  llama / qwen3 / qwen3moe x F16 / Q8_0 / Q4_0 / MXFP4 / Q4_K tiny
#              models: the same prompt (one batch, logits at every position)
#              and single-token decodes on both; per-position NMSE of the
#              logits under 1e-4 (F16) / 5e-3 (quantized); the graph in one
#              HTP split apart from the input embedding (ops that fall back to
#              the CPU are listed and fail their case)
htp_test(test-parity LIBS htp-model-common m TIMEOUT 120)
