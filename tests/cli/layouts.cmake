# Multi-GPU layouts on `memplan estimate` (docs/estimators.md#parallelism-multi-gpu-layouts).
# Expected bytes are the unit tests' hand-derived products (tests/unit/estimators/parallelism_test.cpp).

# Megatron t x p x d: four stage roles of 16 GPUs each, the first with the embeddings, the last with the head.
cli_case(layout_megatron EXIT 0 ARGS estimate llama-2-70b -w training --seq 4096 --tp 8 --pp 4 --dp 2 --zero 1
         --micro-batches 16 --recompute selective --sequence-parallel --gpu h100 STDERR_EMPTY
         STDOUT "t=8 x p=4 x d=2 = 64 GPUs; ZeRO-1 over 2 \\(Megatron's distributed optimizer\\).*stage 0 +x16 +embeddings, layers 0-19.*stage 3 +x16 +layers 60-79, final norm, LM head.*per GPU +stage 0 +stage 1 +stage 2 +stage 3.*fits +on every GPU.*vocabulary padded from 32,000 to 32,768")
# ZeRO-3 of Llama-2-7b over 8: the 16-bit parameter partition is 2 x 6,738,415,616 / 8 bytes.
cli_case(layout_zero3_json EXIT 0 ARGS estimate llama-2-7b -w training --dp 8 --zero 3 --format json
         STDOUT "\"schema_version\": 1.*\"sharding\": \"zero3\".*\"count\": 8,.*\"name\": \"weights\",\n +\"bytes\": 1684603904.*\"worst_device\": 0")
cli_case(layout_fsdp_hybrid EXIT 0 ARGS estimate llama-2-13b -w training --dp 16 --fsdp hybrid --shard-group 8 --gpu a100-80gb
         STDOUT "FSDP HYBRID_SHARD over groups of 8.*gathered_parameters")
cli_case(layout_offload EXIT 0 ARGS estimate llama-2-7b -w training --dp 4 --zero 2 --offload optimizer --gpu rtx-4090
         STDOUT "optimizer offloaded.*host RAM")
# vLLM: weights per rank 34,490,302,464 B = 32.12 GiB; the KV cache fills what 0.9 x 80 GiB leaves.
cli_case(layout_vllm EXIT 0 ARGS estimate llama-2-70b --engine vllm --tp 4 --gpu a100-80gb STDERR_EMPTY
         STDOUT "workload +serving.*tensor_parallel_size 4.*weights +32\\.12 GiB.*kv_cache.*KV budget .* = ceil\\(0\\.90 x 79\\.15 GiB\\).*blocks of 16 tokens.*GPU KV cache size: [0-9,]+ tokens.*Maximum concurrency for 4,096 tokens per request: [0-9.]+x")
cli_case(layout_vllm_no_room EXIT 0 ARGS estimate llama-2-70b --engine vllm --gpu a100-80gb
         STDOUT "fits +NO: .*the KV cache cannot hold one max_model_len sequence.*No available memory for the cache blocks")
# device_map="auto": accelerate's balanced placement of Llama-2-70b over three A100s (26 / 28 / 26 blocks).
cli_case(layout_device_map EXIT 0 ARGS estimate llama-2-70b -w extraction --filter "blocks.*.hook_resid_post"
         --device-map auto --gpus 3xa100-80gb STDERR_EMPTY
         STDOUT "gpu 0 +x1 +token_embedding, layers 0-25\ngpu 1 +x1 +layers 26-53\ngpu 2 +x1 +layers 54-79, final_norm, lm_head.*fits +on every GPU")
cli_case(layout_device_map_offload EXIT 0 ARGS estimate llama-2-70b --device-map auto --gpus rtx-4090,rtx-4090
         STDOUT "offloaded .*lm_head \\(cpu\\).*fits +NO: .*offloaded to the CPU")
cli_case(layout_tp_inference EXIT 0 ARGS estimate llama-2-7b --tp 4 --no-overhead --format json
         STDOUT "\"engine\": \"tensor_parallel\".*\"name\": \"kv_cache\",\n +\"bytes\": 268435456")
cli_case(layout_help EXIT 0 ARGS estimate --help STDOUT "Multi-GPU layouts.*--tp.*--zero.*--fsdp.*--device-map.*--gpus.*Serving engines.*--engine")

# Layouts that cannot be built are input errors (exit 2), with nothing on stdout.
cli_case(layout_heads_not_dividing EXIT 2 ARGS estimate llama-2-7b -w training --tp 3 STDOUT_EMPTY
         STDERR "32 attention heads, which tensor parallelism over 3 GPUs cannot split evenly")
cli_case(layout_more_stages_than_layers EXIT 2 ARGS estimate llama-2-7b -w training --pp 33 STDOUT_EMPTY
         STDERR "32 layers cannot fill 33 pipeline stages")
cli_case(layout_zero3_pipeline EXIT 2 ARGS estimate llama-2-7b -w training --pp 2 --dp 2 --zero 3 STDOUT_EMPTY
         STDERR "supports ZeRO stages 0-2, not 3")
cli_case(layout_pp_inference EXIT 2 ARGS estimate llama-2-7b --pp 2 STDOUT_EMPTY STDERR "--pp lays out a training step: use -w training")
cli_case(layout_vllm_needs_gpu EXIT 2 ARGS estimate llama-2-7b --engine vllm STDOUT_EMPTY STDERR "name it with --gpu")
cli_case(layout_unknown_gpu EXIT 2 ARGS estimate llama-2-7b --device-map auto --gpus 2xa100-80gb,a101 STDOUT_EMPTY
         STDERR "unknown GPU 'a101'")
cli_case(layout_serving_knob_alone EXIT 2 ARGS estimate llama-2-7b --gpu-memory-utilization 0.8 STDOUT_EMPTY
         STDERR "is a vLLM setting: add --engine vllm")
cli_case(layout_zero_and_fsdp EXIT 2 ARGS estimate llama-2-7b -w training --dp 2 --zero 2 --fsdp full STDOUT_EMPTY
         STDERR "two engines")
cli_case(layout_hybrid_group EXIT 2 ARGS estimate llama-2-7b -w training --dp 12 --fsdp hybrid --shard-group 8
         STDOUT_EMPTY STDERR "--shard-group 8 must divide --dp 12")

# The command output docs/*.md show is current (scripts/update-doc-outputs regenerates it).
add_test(NAME cli.doc_outputs_current
         COMMAND "${CMAKE_COMMAND}" "-DMEMPLAN=$<TARGET_FILE:memplan>" "-DDOC=${PROJECT_SOURCE_DIR}/docs"
                 -P "${CMAKE_CURRENT_SOURCE_DIR}/doc_outputs.cmake")
set_tests_properties(cli.doc_outputs_current PROPERTIES LABELS cli)

# The state-space chart in docs/estimators.md is current (scripts/update-doc-outputs redraws it).
add_test(NAME cli.doc_svg_current
         COMMAND "${CMAKE_COMMAND}" "-DMEMPLAN=$<TARGET_FILE:memplan>" "-DDOCS=${PROJECT_SOURCE_DIR}/docs"
                 "-DWORK=${CMAKE_CURRENT_BINARY_DIR}/doc_svg" -P "${CMAKE_CURRENT_SOURCE_DIR}/doc_svg.cmake")
set_tests_properties(cli.doc_svg_current PROPERTIES LABELS cli)
