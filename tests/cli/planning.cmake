# CLI cases of fit --vary chunk, sweep and recommend; included from CMakeLists.txt
# (cli_case is defined there). The boundary and round-trip scripts run `memplan estimate` on
# what fit and recommend report, so the commands are checked against each other end to end.

# ---- fit --vary chunk: the value fits, value + 1 does not, and estimate agrees.
cli_case(fit_streaming_chunk EXIT 0 ARGS fit llama-2-7b --gpu rtx-4090 --vary chunk -w streaming_extraction --seq 4096
         STDERR_EMPTY
         STDOUT "largest streaming_chunk with batch 1, seq_len 4096\nlimit +19\\.99 GiB of 23\\.52 GiB \\(85%\\)\nresult +streaming_chunk ([0-9]+) fits: [^\n]*\nnext +streaming_chunk [0-9]+ does not: [^\n]*\nbinds +[a-z_]+ [^\n]*\noption +--streaming-chunk [0-9]+\ngiven +streaming_chunk 512: does not fit\n$")
cli_case(fit_attention_chunk_json EXIT 0 ARGS fit llama-2-7b --gpu a10 --vary chunk --attention chunked --seq 4096 --batch 2
         --format json STDOUT "\"vary\": \"attention_chunk\",\n  \"option\": \"--attention-chunk\",.*\"value\": [0-9]+,.*\"next_total_bytes\": [0-9]+")
cli_case(fit_chunk_at_the_sequence EXIT 0 ARGS fit gpt2 --gpu a100-80gb --vary chunk -w streaming_extraction --seq 1024
         STDOUT "result +streaming_chunk 1024 fits: .*\nnote +streaming_chunk 1024 is the search's upper end \\(the sequence length")
cli_case(fit_chunk_needs_a_chunk EXIT 2 ARGS fit gpt2 --gpu a10 --vary chunk STDOUT_EMPTY
         STDERR "--vary chunk needs a workload with a chunk: -w streaming_extraction .* this plan is inference with --attention sdpa")
cli_case(fit_streaming_chunk_needs_streaming EXIT 2 ARGS fit gpt2 --gpu a10 --vary streaming_chunk -w extraction
         STDERR "--vary streaming_chunk needs -w streaming_extraction")
foreach(case IN ITEMS
        "streaming@@llama-2-7b@@--gpu@@rtx-4090@@--vary@@chunk@@-w@@streaming_extraction@@--seq@@4096"
        "attention@@llama-2-7b@@--gpu@@a10@@--vary@@chunk@@--attention@@chunked@@--seq@@4096@@--batch@@2"
        "batch@@gpt2@@--gpu@@rtx-3060@@--vary@@batch@@-w@@extraction@@--seq@@512"
        "seq@@mistral-7b-v0.1@@--gpu@@rtx-3060@@--vary@@seq@@-p@@int4@@-w@@generation@@--batch@@8")
  string(FIND "${case}" "@@" at)
  string(SUBSTRING "${case}" 0 ${at} name)
  math(EXPR at "${at} + 2")
  string(SUBSTRING "${case}" ${at} -1 args)
  add_test(NAME "cli.fit_boundary_${name}"
           COMMAND "${CMAKE_COMMAND}" "-DMEMPLAN=$<TARGET_FILE:memplan>" "-DARGS=${args}"
                   "-DJSON_PYTHON=${json_python}" "-DJSON_SCHEMAS=${json_schemas}"
                   -P "${CMAKE_CURRENT_SOURCE_DIR}/fit_boundary.cmake")
  set_tests_properties("cli.fit_boundary_${name}" PROPERTIES LABELS cli)
endforeach()

# ---- sweep
# Weights alone (hand-derived in tests/unit/plan/sweep_test.cpp) and transformers' 512 B of rotary
# buffers (2 x 64 x 4): bf16 13,476,831,744 B, int4-g128 3,864,011,264 B, against 85% of an RTX
# 3060's CUDA total: floor(12,621,835,141 x 0.85) = 10,728,559,869.
cli_case(sweep_csv EXIT 0 ARGS sweep llama-2-7b -w weights -p bf16,int4 --gpu rtx-3060 --format csv STDERR_EMPTY
         STDOUT "^model,workload,precision,batch,seq,total_bytes,allocated_bytes,largest_component,largest_bytes,limit_bytes,fits,headroom_bytes,over_bytes,smallest_gpu,smallest_gpu_memory_bytes,error\nllama-2-7b,weights,bf16,1,2048,13476831744,13476831744,weights,13476831744,10728559869,false,,2748271875,,,\nllama-2-7b,weights,int4-g128,1,2048,3864011264,3864011264,weights,3864011264,10728559869,true,6864548605,,,,\n$")
# --smallest-gpu: bf16 weights need floor(memory x 0.85) >= 13,476,831,744: the RTX 5080's
# CUDA total, 16,651,386,880 B, gives 14,153,678,848 (the RTX 4060 Ti 16GB's is 70 MiB more);
# a T4's, 15,649,787,084, gives 13,302,319,021.
cli_case(sweep_smallest_gpu EXIT 0 ARGS sweep llama-2-7b -w weights -p bf16 --smallest-gpu --format csv
         STDOUT "\nllama-2-7b,weights,bf16,1,2048,13476831744,13476831744,weights,13476831744,,,,,rtx-5080,16651386880,\n$")
cli_case(sweep_smallest_gpu_table EXIT 0 ARGS sweep llama-2-7b -w weights -p bf16,int4 --smallest-gpu
         STDOUT "smallest GPU \\(85%\\)\n.*bf16 .* rtx-5080 \\(15\\.51 GiB\\)\n.*int4-g128 .* gtx-980-ti \\(6\\.00 GiB\\)\n")
cli_case(sweep_json EXIT 0 ARGS sweep llama-2-7b -w weights -p int4 --gpu rtx-3060 --format json STDERR_EMPTY
         STDOUT "\"schema_version\": 1,\n  \"device\": {\n    \"name\": \"rtx-3060\",\n    \"memory_bytes\": 12621835141\n  },\n  \"threshold\": 0\\.85,\n  \"limit_bytes\": 10728559869,.*\"precision\": \"int4-g128\",.*\"total_bytes\": 3864011264,.*\"fits\": true,\n +\"headroom_bytes\": 6864548605")
cli_case(sweep_table EXIT 0 ARGS sweep llama-2-7b mistral-7b-v0.1 --batch 1,2,4,8 --seq 512,2048 -p fp16,int4 --gpu rtx-4090
         STDERR_EMPTY
         STDOUT "^sweep +2 models x 1 workload x 2 precisions x 4 batch sizes x 2 sequence lengths = 32 plans\ndevice +rtx-4090 [^\n]*limit 19\\.99 GiB = 85% of 23\\.52 GiB\n\nmodel +workload +precision +batch +seq +total +allocated +largest part +fits\nllama-2-7b +inference +fp16 +1 +512 +[0-9.]+ GiB +[0-9.]+ GiB +weights 12\\.55 GiB +yes, [0-9.]+ GiB left\n.*mistral-7b-v0\\.1 +inference +int4-g128 +8 +2048 ")
cli_case(sweep_training_rows EXIT 0 ARGS sweep gpt2 -w inference,training --seq 256,512 -p fp32
         STDOUT "gpt2 +inference +fp32 +1 +256 .*gpt2 +training +fp32 +1 +512 +[0-9.]+ [MG]iB +[0-9.]+ [MG]iB +[a-z_]+ ")
cli_case(sweep_point_that_cannot_run EXIT 0 ARGS sweep gpt2 --seq 512,2048
         STDOUT "gpt2 +inference +bf16 +1 +2048 +- +- +\\(no estimate: see below\\).*note: gpt2 inference bf16 batch 1 seq 2048: gpt2 has learned positions for 1024 tokens")
cli_case(sweep_nothing_runs EXIT 2 ARGS sweep gpt2 --seq 4096 STDOUT_EMPTY
         STDERR "no point of the sweep can be estimated: gpt2 has learned positions for 1024 tokens")
cli_case(sweep_zero_batch EXIT 2 ARGS sweep gpt2 --batch 1,0 STDOUT_EMPTY STDERR "--batch must be an integer from 1 to 1,099,511,627,776, got 0")
cli_case(sweep_bad_workload EXIT 2 ARGS sweep gpt2 -w inference,trainig STDERR "unknown workload 'trainig' \\(did you mean 'training'")
cli_case(sweep_bad_precision EXIT 2 ARGS sweep gpt2 -p bf16,int3 STDERR "int3")
cli_case(sweep_too_many_points EXIT 2 ARGS sweep gpt2 --batch 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,94,95,96,97,98,99,100,101
         -p fp32,tf32,fp16,bf16,fp8,int8,int4,nf4,fp4,int4-g64 -w weights,inference,generation,extraction,training,sae,lanczos,tracin,qkov,cka
         --seq 1,2,3,4,5,6,7,8,9,10 STDERR "more than 100000 points")
cli_case(csv_is_for_sweep EXIT 2 ARGS estimate gpt2 --format csv STDOUT_EMPTY
         STDERR "--format csv applies to 'memplan sweep' and 'memplan measure'; accepted here: 'table' or 'json'")
cli_case(help_lists_sweep_recommend EXIT 0 ARGS --help STDOUT "sweep.*recommend")
add_test(NAME cli.sweep_svg
         COMMAND "${CMAKE_COMMAND}" "-DMEMPLAN=$<TARGET_FILE:memplan>" "-DWORKDIR=${CMAKE_CURRENT_BINARY_DIR}"
                 -P "${CMAKE_CURRENT_SOURCE_DIR}/sweep_svg.cmake")
set_tests_properties(cli.sweep_svg PROPERTIES LABELS cli)

# ---- recommend
cli_case(recommend_does_not_fit EXIT 0 ARGS recommend llama-2-13b --gpu rtx-4090 -w generation --seq 4096 STDERR_EMPTY
         STDOUT "DOES NOT FIT, [0-9.]+ GiB over\n\nchanges that save memory, most first [^\n]*\n +# +total +saved +fits +change\n +1 +[0-9.]+ GiB +[0-9.]+ GiB +yes, [0-9.]+ GiB left +weights in int4-g128 instead of bf16\n.*how, and what each costs:\n +1 +memplan estimate llama-2-13b --gpu rtx-4090 --workload generation --seq 4096 --precision int4-g128\n.*more GPUs +at least 2 x rtx-4090.*smallest GPUs that fit the plan as given \\(85% of their memory\\):\n +a100-sxm4-40gb ")
cli_case(recommend_fits EXIT 0 ARGS recommend llama-2-7b --gpu rtx-4090 STDERR_EMPTY
         STDOUT "memory +[0-9.]+ GiB against a limit of 19\\.99 GiB \\(85% of 23\\.52 GiB\\): fits, [0-9.]+ GiB left\n\nnothing to change: the plan fits as given")
cli_case(recommend_extraction EXIT 0 ARGS recommend llama-2-7b --gpu a10 -w extraction --seq 2048
         STDOUT "keep the hook cache in host RAM.*cache only the residual stream after each block.*streaming extraction, [0-9]+ tokens per chunk \\(the largest chunk that fits\\).*--filter 'blocks\\.\\*\\.hook_resid_post'")
cli_case(recommend_training_combines EXIT 0 ARGS recommend llama-2-7b --gpu a100-80gb -w training --batch 8
         STDOUT "QLoRA.*gradient checkpointing.*8-bit Adam.*no single change fits; together: .*: fits, .*--lora-rank 16 --precision nf4 .*none in the table")
cli_case(recommend_json EXIT 0 ARGS recommend llama-2-7b --gpu rtx-3060 --format json
         STDOUT "\"schema_version\": 1,.*\"limit_bytes\": 10728559869,.*\"fits\": false,\n  \"over_bytes\": [0-9]+,\n  \"mitigations\": \\[.*\"kind\": \"precision\",.*\"command\": \\[\n +\"memplan\",\n +\"estimate\",\n +\"llama-2-7b\",.*\"min_devices\": 2,.*\"gpus_that_fit\": \\[\n +\"l4\"")
cli_case(recommend_needs_gpu EXIT 2 ARGS recommend llama-2-7b STDERR "--gpu is required")
cli_case(recommend_unknown_gpu EXIT 2 ARGS recommend llama-2-7b --gpu rtx-9090 STDOUT_EMPTY STDERR "rtx-9090")
cli_case(recommend_bad_threshold EXIT 2 ARGS recommend llama-2-7b --gpu a10 --threshold 1.5 STDERR "--threshold must be a fraction in \\(0, 1\\]")
# The issue's test: on a plan that does not fit, the first change that fits is re-run through
# `memplan estimate` exactly as recommend prints it; the total agrees and is under the limit.
foreach(case IN ITEMS
        "generation@@llama-2-13b@@--gpu@@rtx-4090@@-w@@generation@@--seq@@4096"
        "extraction@@llama-2-7b@@--gpu@@a10@@-w@@extraction@@--filter@@blocks.*.hook_pattern"
        "training@@llama-2-7b@@--gpu@@a100-80gb@@-w@@training@@--batch@@8"
        "batch@@mistral-7b-v0.1@@--gpu@@rtx-4090@@-p@@int4@@--batch@@64@@--seq@@4096"
        "amp@@llama-2-7b@@--gpu@@a100-80gb@@-w@@training@@--mixed-precision@@amp")
  string(FIND "${case}" "@@" at)
  string(SUBSTRING "${case}" 0 ${at} name)
  math(EXPR at "${at} + 2")
  string(SUBSTRING "${case}" ${at} -1 args)
  add_test(NAME "cli.recommend_roundtrip_${name}"
           COMMAND "${CMAKE_COMMAND}" "-DMEMPLAN=$<TARGET_FILE:memplan>" "-DARGS=${args}"
                   "-DJSON_PYTHON=${json_python}" "-DJSON_SCHEMAS=${json_schemas}"
                   -P "${CMAKE_CURRENT_SOURCE_DIR}/recommend_roundtrip.cmake")
  set_tests_properties("cli.recommend_roundtrip_${name}" PROPERTIES LABELS cli)
endforeach()

# ---- one verdict: estimate, sweep, recommend, fit and check agree on both sides of the threshold
add_test(NAME cli.verdict_same_on_every_command
         COMMAND "${CMAKE_COMMAND}" "-DMEMPLAN=$<TARGET_FILE:memplan>" "-DWORKDIR=${CMAKE_CURRENT_BINARY_DIR}"
                 -P "${CMAKE_CURRENT_SOURCE_DIR}/verdict.cmake")
set_tests_properties(cli.verdict_same_on_every_command PROPERTIES LABELS cli)
