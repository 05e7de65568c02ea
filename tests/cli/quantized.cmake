# config.json files with a quantization_config (docs/quantization.md): estimate prices the
# weights as the checkpoint stores them and says how, `-p` overrides that and says so, and a
# hostile quantization_config exits 2 naming the file, line, column and key. Included by
# tests/cli/CMakeLists.txt, which defines cli_case and ${hf}.
set(quantized "${hf}/quantized")

# Qwen2.5-14B-Instruct-AWQ (48 layers; tests/unit/io/hf_quantization_test.cpp derives the
# layout): 48 x (q, k, v, o, gate, up, down in AutoAWQ's GEMM layout + fp16 q/k/v biases)
# + norms + embeddings + lm_head in fp16 = 9,980,028,928 bytes, where bf16 would be 27.51 GiB.
cli_case(quantized_awq_estimate EXIT 0 ARGS estimate "${quantized}/qwen2.5-14b-instruct-awq/config.json" -w weights
         STDOUT "total +[0-9,]+ +9\\.29 GiB.*note: weights: priced as the checkpoint stores them: AWQ 4-bit, groups of 128"
         STDERR_EMPTY)
cli_case(quantized_awq_estimate_json EXIT 0 ARGS estimate "${quantized}/qwen2.5-14b-instruct-awq/config.json" -w weights --format json
         STDOUT "\"name\": \"weights\",\n +\"bytes\": 9980029440,.*\"total_bytes\": 9980029440,\n" STDERR_EMPTY)
cli_case(quantized_awq_fits_24gb EXIT 0 ARGS estimate "${quantized}/qwen2.5-14b-instruct-awq/config.json" --seq 2048 --gpu rtx-4090
         STDOUT "fits" STDERR_EMPTY)
cli_case(quantized_precision_overrides EXIT 0 ARGS estimate "${quantized}/qwen2.5-14b-instruct-awq/config.json" -w weights -p bf16
         STDOUT "total +[0-9,]+ +27\\.51 GiB.*warning: `?-?-?precision`? bf16 overrides the checkpoint's quantisation \\(AWQ 4-bit"
         STDERR_EMPTY)
cli_case(quantized_unknown_method_warns EXIT 0 ARGS estimate "${data}/hqq-tiny.json" -w weights
         STDOUT "warning: quantization_config \\(hqq\\): memplan does not know this method's storage layout.*priced at --precision as if the checkpoint were not quantised"
         STDERR_EMPTY)
cli_case(quantized_import_notes EXIT 0 ARGS import "${quantized}/llama-3-8b-bnb-4bit/config.json"
         STDOUT "# quantization_config \\(bitsandbytes\\): bitsandbytes 4-bit nf4" STDERR_EMPTY)

cli_case(bad_quantized_awq_bits EXIT 2 ARGS estimate "${hf_bad}/awq-bits-3.json" STDOUT_EMPTY
         STDERR "^memplan: error: [^\n]*awq-bits-3\\.json:20:13: AWQ stores 4-bit weights only[^\n]*\n$")
cli_case(bad_quantized_bnb_type EXIT 2 ARGS estimate "${hf_bad}/bnb-quant-type.json" STDOUT_EMPTY
         STDERR "bnb-quant-type\\.json:25:[0-9]+: 'bnb_4bit_quant_type' is 'nf5' \\(did you mean 'nf4'\\?\\)")

# sweep and fit: a named precision overrides the checkpoint per row, auto keeps it.
cli_case(quantized_sweep_named_precision EXIT 0 ARGS sweep "${quantized}/qwen2.5-14b-instruct-awq/config.json" --gpu rtx-4090 -p auto,bf16 -w weights
         STDOUT "bf16 +1 +2048 +9\\.29 GiB.*bf16 +1 +2048 +27\\.51 GiB.*note: [^\n]*bf16 batch 1 seq 2048: --precision bf16 overrides the checkpoint's quantisation"
         STDERR_EMPTY)
cli_case(quantized_fit_override EXIT 0 ARGS fit "${quantized}/qwen2.5-14b-instruct-awq/config.json" --gpu rtx-4090 --vary seq -p bf16
         STDOUT "result +nothing fits: seq 1 needs 28\\.16 GiB\nwarning: --precision bf16 overrides the checkpoint's quantisation"
         STDERR_EMPTY)
