# GGUF files as MODEL (docs/gguf.md): the weights of a file holding every priced ggml type
# are the sum of its tensors' bytes, and hostile headers end in exit 2 naming the file and
# the field. The files are written by memplan_gguf_fixtures (tests/support/gguf_writer.hpp)
# before the cases run. Included by tests/cli/CMakeLists.txt, which defines cli_case.
add_executable(memplan_gguf_fixtures gguf_fixtures.cpp)
target_include_directories(memplan_gguf_fixtures PRIVATE "${PROJECT_SOURCE_DIR}/tests/support")
target_link_libraries(memplan_gguf_fixtures PRIVATE memplan_warnings)

set(gguf "${CMAKE_CURRENT_BINARY_DIR}/gguf")
add_test(NAME cli.gguf_fixtures COMMAND memplan_gguf_fixtures "${gguf}")
set_tests_properties(cli.gguf_fixtures PROPERTIES LABELS cli FIXTURES_SETUP gguf_files)

# A function, not a macro: a macro would expand its arguments' escapes ("\\.") a second time.
set(gguf_cases "")
function(gguf_case name)
  cli_case(${name} ${ARGN})
  set(gguf_cases ${gguf_cases} "cli.${name}" PARENT_SCOPE)
endfunction()

# 39 tensors, 35 types (tests/unit/io/gguf_test.cpp derives each tensor's bytes by hand):
# 262,144 + 512 + 36,864 + ... = 2,695,948 bytes for 1,968,384 elements, and transformers' two
# fp32 rotary buffers of 64 / 2 elements (a PyTorch plan): 2,696,204.
gguf_case(gguf_every_type_weights_json EXIT 0 ARGS estimate "${gguf}/every-type.gguf" -w weights --format json
          STDOUT "\"name\": \"every-type\",.*\"params\": 1968384.*\"name\": \"weights\",\n +\"bytes\": 2696204,.*\"total_bytes\": 2696204,\n.*\"largest_unit\": \\{\n +\"name\": \"weights\",\n +\"bytes\": 2696204\n" STDERR_EMPTY)
gguf_case(gguf_every_type_weights_table EXIT 0 ARGS estimate "${gguf}/every-type.gguf" -w weights
          STDOUT "every-type \\(llama, 1,968,384 parameters.*total +1,968,384 +2\\.57 MiB.*note: weights: priced from the checkpoint's stored types" STDERR_EMPTY)
# Its 7,616 B as stored and, in a PyTorch plan, two fp32 rotary buffers of 16 / 2 elements.
gguf_case(gguf_tiny_llama_inference EXIT 0 ARGS estimate "${gguf}/tiny-llama.gguf" --seq 64 --format json
          STDOUT "\"name\": \"weights\",\n +\"bytes\": 7680," STDERR_EMPTY)

gguf_case(bad_gguf_huge_tensor_count EXIT 2 ARGS estimate "${gguf}/bad-huge-tensor-count.gguf" STDOUT_EMPTY
          STDERR "^memplan: error: [^\n]*bad-huge-tensor-count\\.gguf: at byte 8: tensor_count is 1,152,921,504,606,846,976: more than the 1,048,576 tensors memplan reads\n$")
gguf_case(bad_gguf_string_length EXIT 2 ARGS estimate "${gguf}/bad-string-length.gguf" STDOUT_EMPTY
          STDERR "bad-string-length\\.gguf: at byte 56: the string value of 'general\\.name' needs 1,099,511,627,776 bytes but the file has 3 left")
gguf_case(bad_gguf_unaligned_offset EXIT 2 ARGS estimate "${gguf}/bad-unaligned-offset.gguf" STDOUT_EMPTY
          STDERR "bad-unaligned-offset\\.gguf: tensor 'extra\\.weight': data offset 4,200 is not a multiple of the alignment \\(32\\)\n$")
gguf_case(bad_gguf_overlapping_offset EXIT 2 ARGS estimate "${gguf}/bad-overlapping-offset.gguf" STDOUT_EMPTY
          STDERR "tensor 'b': data offset 128, but the tensors before it end at 256")
gguf_case(bad_gguf_truncated_data EXIT 2 ARGS estimate "${gguf}/bad-truncated-data.gguf" STDOUT_EMPTY
          STDERR "tensor 'token_embd\\.weight': its data, 512 bytes at data offset 0, runs past the end of the file")
gguf_case(bad_gguf_unknown_type EXIT 2 ARGS estimate "${gguf}/bad-unknown-type.gguf" STDOUT_EMPTY
          STDERR "tensor 'w' has ggml type 99, which is not a ggml type memplan prices \\(0 F32, 1 F16, ")
gguf_case(bad_gguf_dims_overflow EXIT 2 ARGS estimate "${gguf}/bad-dims-overflow.gguf" STDOUT_EMPTY
          STDERR "tensor 'w' of shape \\[4294967296, 4294967296\\] has 2\\^63 elements or more")
gguf_case(bad_gguf_partial_block EXIT 2 ARGS estimate "${gguf}/bad-partial-block.gguf" STDOUT_EMPTY
          STDERR "is Q4_K, whose blocks hold 256 elements, but its rows hold 100: not a whole number of blocks")
gguf_case(bad_gguf_magic EXIT 2 ARGS estimate "${gguf}/bad-magic.gguf" STDOUT_EMPTY
          STDERR "bad-magic\\.gguf: does not start with the GGUF magic: its first bytes are 'GGML'")
gguf_case(bad_gguf_architecture EXIT 2 ARGS estimate "${gguf}/bad-architecture.gguf" STDOUT_EMPTY
          STDERR "bad-architecture\\.gguf: unsupported architecture 'rwkv6'.*memplan maps 'falcon', 'falcon-h1', 'gemma', 'gemma2', 'gemma3', 'gemma4', 'gpt2', 'gptneox', 'granitehybrid', 'llama', 'mamba', 'mamba2', 'nemotron_h', 'nemotron_h_moe', 'phi2', 'phi3', 'qwen2', 'qwen2vl', 'qwen3', 'qwen35', 'qwen35moe', 'qwen3moe', 'qwen3next', 'qwen3vl' and 'qwen3vlmoe'\n$")
gguf_case(bad_gguf_missing EXIT 2 ARGS estimate "${gguf}/no-such.gguf" STDOUT_EMPTY STDERR "no-such\\.gguf: no such file\n$")
# --n-cpu-moe on tiny-moe.gguf (two layers, each 26,112 B of routed experts in Q8_0): N = 1
# keeps layer 0's on the host beside the 512-B token embedding, 26,624 B; the GPU holds the
# rest, 2 x 30,144 B of layers + 640 B of output layer - 26,112 = 34,816 B.
gguf_case(gguf_llama_cpp_n_cpu_moe EXIT 0 ARGS estimate "${gguf}/tiny-moe.gguf" --engine llama.cpp --gpu rtx-4090
          --seq 256 --n-cpu-moe 1 --format json STDERR_EMPTY
          STDOUT "\"components\": \\[\n +{\n +\"name\": \"weights\",\n +\"bytes\": 34816,.*\"host_components\": \\[\n +{\n +\"name\": \"weights\",\n +\"bytes\": 26624,\n +\"formula\": \"the input layer, the routed experts of layer 0 \\(--n-cpu-moe\\)\".*\"n_cpu_moe\": 1,")
# More than the layers: every layer's experts, 512 + 2 x 26,112 = 52,736 B on the host.
gguf_case(gguf_llama_cpp_n_cpu_moe_all EXIT 0 ARGS estimate "${gguf}/tiny-moe.gguf" --engine llama.cpp --gpu rtx-4090
          --seq 256 --n-cpu-moe 9 --format json STDERR_EMPTY
          STDOUT "\"host_components\": \\[\n +{\n +\"name\": \"weights\",\n +\"bytes\": 52736,")
# The fewest layers whose experts must stay on the host: on a budget of 1 GiB (llama.cpp's --fit
# margin) + 512 MiB (CUDA context) + 32,768 (KV) + 662,528 (compute: the experts' gate and up for
# each of a token's 2) + 34,816 (weights at N = 1) = 1,611,342,848 B, N = 1 fits to the byte and
# N = 0 needs its 26,112 B more.
gguf_case(gguf_llama_cpp_fit_n_cpu_moe EXIT 0 ARGS fit "${gguf}/tiny-moe.gguf" --engine llama.cpp --gpu 1611342848B
          --seq 256 --vary n_cpu_moe STDERR_EMPTY
          STDOUT "smallest n_cpu_moe with -c 256\n.*result +n_cpu_moe 1 fits.*next +n_cpu_moe 0 does not.*binds +weights.*option +--n-cpu-moe 1\n")
gguf_case(gguf_llama_cpp_fit_n_cpu_moe_json EXIT 0 ARGS fit "${gguf}/tiny-moe.gguf" --engine llama.cpp
          --gpu 1611342848B --seq 256 --vary n_cpu_moe --format json STDERR_EMPTY
          STDOUT "\"vary\": \"n_cpu_moe\",.*\"value\": 1,.*\"total_bytes\": 537601024,\n +\"next_total_bytes\": 537627136,")
gguf_case(gguf_llama_cpp_n_cpu_moe_dense EXIT 2 ARGS estimate "${gguf}/tiny-llama.gguf" --engine llama.cpp --gpu rtx-4090
          --n-cpu-moe 1 STDOUT_EMPTY STDERR "--n-cpu-moe keeps routed experts in host memory; tiny-llama has none")
gguf_case(gguf_llama_cpp_n_cpu_moe_cpu EXIT 2 ARGS estimate "${gguf}/tiny-moe.gguf" --engine llama.cpp --cpu
          --n-cpu-moe 1 STDOUT_EMPTY STDERR "--n-cpu-moe keeps experts off a GPU")

set_tests_properties(${gguf_cases} PROPERTIES FIXTURES_REQUIRED gguf_files)

