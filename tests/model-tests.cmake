# The model tools' shared code (tools/model-common.c): the GGUF generator and
# the libllama loader.
#
# test-model-roundtrip  tiny llama / qwen3 / qwen3moe models load in libllama
#                       with the hparams written, tokenize/detokenize UTF-8
#                       exactly and decode to finite logits; files are a pure
#                       function of the spec (threads do not matter, the seed
#                       does); every weight type loads and decodes, and files
#                       of one seed but different types hold the same weights
htp_test(test-model-roundtrip LIBS htp-model-common m TIMEOUT 60)
