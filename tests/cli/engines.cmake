# `engine` llama.cpp on `memplan estimate` and `memplan fit` (docs/llama-cpp.md). Byte figures
# are hand-derived in tests/unit/estimators/llama_cpp_test.cpp; tests/llama_cpp compares them
# with llama.cpp itself.

# Llama-2-7B at fp16, everything offloaded (-ngl 33): 32 blocks of 404,766,720 B, the final
# norm 8,192 B and the head 262,144,000 B on the GPU; the embedding (262,144,000 B) on the host;
# the KV cache 32 x 4096 x 4096 x 2 B x 2.
cli_case(engine_llama_cpp_offloaded EXIT 0 ARGS estimate llama-2-7b --engine llama.cpp --gpu rtx-4090 -p fp16
         --seq 4096 --format json STDERR_EMPTY
         STDOUT "\"engine\": \"llama.cpp\".*\"role\": \"gpu\".*\"name\": \"weights\",\n +\"bytes\": 13214687232,.*\"name\": \"kv_cache\",\n +\"bytes\": 2147483648,.*\"host_components\": \\[\n +\\{\n +\"name\": \"weights\",\n +\"bytes\": 262144000,.*\"llama_cpp\": \\{\n +\"n_ctx\": 4096,\n +\"cells\": 4096,.*\"gpu_layers\": 32,.*\"output_on_gpu\": true")
cli_case(engine_llama_cpp_table EXIT 0 ARGS estimate llama-2-7b --engine llama.cpp --gpu rtx-3060 -p fp16 --seq 8192
         --ngl 20 STDOUT "layout +llama.cpp, -ngl 20, -c 8,192 \\(8,192 cells\\).*gpu +x1 +layers 12-31.*per device +gpu.*host weights.*host kv_cache.*llama.cpp +20 of 32 layers on the GPU; KV cache 8,192 cells per layer.*12 of 32 layers run on the CPU")
# A .gguf on the CPU: its tensors as stored (7,616 B), 256 cells (-c 100 rounded up) x 1 layer
# x 16 (1 kv head of 16) x 2 B x (K + V) = 16,384 B, one row of 8 f32 logits = 32 B.
gguf_case(engine_llama_cpp_gguf_cpu EXIT 0 ARGS estimate "${gguf}/tiny-llama.gguf" --engine llama.cpp --cpu --seq 100
          --format json STDERR_EMPTY
          STDOUT "\"role\": \"cpu\".*\"name\": \"weights\",\n +\"bytes\": 7616,.*\"name\": \"kv_cache\",\n +\"bytes\": 16384,.*\"name\": \"output_buffer\",\n +\"bytes\": 32,.*\"cells\": 256,")
# -np 3 over -c 1000: 333 tokens each, rounded up to 256-cell blocks: 512 cells a sequence, three
# streams: 3 x 512 x 32 layers x 4096 x 2 B x (K + V) = 805,306,368 B, more than -np 1's 1,024
# cells (536,870,912 B); three rows of 32,000 f32 logits = 384,000 B.
cli_case(engine_llama_cpp_parallel EXIT 0 ARGS estimate llama-2-7b --engine llama.cpp --cpu -p fp16 --seq 1000
         --parallel 3 --format json STDERR_EMPTY
         STDOUT "\"name\": \"kv_cache\",\n +\"bytes\": 805306368,.*\"name\": \"output_buffer\",\n +\"bytes\": 384000,.*\"cells\": 512,.*\"sequences\": 3,")
gguf_case(engine_llama_cpp_parallel_text EXIT 0 ARGS estimate "${gguf}/tiny-llama.gguf" --engine llama.cpp --cpu
          --seq 1000 --parallel 4 STDOUT "-c 1,000 \\(-np 4: 256 cells each\\)")
cli_case(engine_parallel_is_llama_cpps EXIT 2 ARGS estimate llama-2-7b --engine vllm --gpu l4 --parallel 2
         STDERR "parallel.*llama.cpp")
cli_case(engine_llama_cpp_parallel_leaves_no_token EXIT 2 ARGS estimate llama-2-7b --engine llama.cpp --cpu --seq 3
         --parallel 4 STDERR "-c 3 over -np 4 sequences leaves none a token")
# --kv-unified: one stream of -c 1000 -> 1,024 cells the three sequences share:
# 1,024 x 32 layers x 4096 x 2 B x (K + V) = 536,870,912 B, not three streams of 512; still a row
# of 32,000 f32 logits each (384,000 B).
cli_case(engine_llama_cpp_kv_unified EXIT 0 ARGS estimate llama-2-7b --engine llama.cpp --cpu -p fp16 --seq 1000
         --parallel 3 --kv-unified --format json STDERR_EMPTY
         STDOUT "\"name\": \"kv_cache\",\n +\"bytes\": 536870912,.*\"name\": \"output_buffer\",\n +\"bytes\": 384000,.*\"cells\": 1024,.*\"sequences\": 3,.*\"kv_unified\": true,")
# llama-server's -np auto: 4 slots over one unified cache of -c cells, one output each:
# 4,096 x 32 x 4096 x 2 B x 2 = 2,147,483,648 B; 4 x 32,000 x 4 B = 512,000 B of logits.
cli_case(engine_llama_server_auto_slots EXIT 0 ARGS estimate llama-2-7b --engine llama.cpp --cpu -p fp16 --seq 4096
         --llama-server --format json STDERR_EMPTY
         STDOUT "\"name\": \"kv_cache\",\n +\"bytes\": 2147483648,.*\"name\": \"output_buffer\",\n +\"bytes\": 512000,.*\"sequences\": 4,.*\"kv_unified\": true,\n +\"llama_server\": true,\n +\"outputs\": 4,")
cli_case(engine_llama_server_given_slots EXIT 0 ARGS estimate llama-2-7b --engine llama.cpp --cpu --seq 4096
         --llama-server --parallel 2 STDOUT "llama-server, no GPU, -c 4,096 \\(-np 2: 2,048 cells each\\)")
# A draft (TinyLlama-1.1B, 22 layers of 4 key/value heads x 64) beside Llama-2-7B: its own cache
# of the same 4,096 unified cells, 4,096 x 22 x 256 x 2 B x 2 = 92,274,688 B, and its own row of
# 32,000 logits per slot; the main model keeps 4 x (1 + 3 drafted) = 16 outputs to verify.
cli_case(engine_llama_server_draft EXIT 0 ARGS estimate llama-2-7b --engine llama.cpp --cpu -p fp16 --seq 4096
         --draft tinyllama-1.1b --format json STDERR_EMPTY
         STDOUT "\"name\": \"draft_kv_cache\",\n +\"bytes\": 92274688,.*\"name\": \"draft_output_buffer\",\n +\"bytes\": 512000,.*\"outputs\": 16,\n +\"draft\": \"tinyllama-1.1b\"")
cli_case(engine_llama_server_draft_text EXIT 0 ARGS estimate qwen2.5-7b --engine llama.cpp --gpu rtx-4090 -p int4
         --seq 32768 --draft qwen2.5-0.5b --draft-max 8
         STDOUT "llama-server, -ngl 29, -c 32,768 \\(-np 4 sharing 32,768 cells\\).*draft qwen2.5-0.5b \\(--draft-max 8\\).*draft_kv_cache.*host draft_weights")
# The longest context with a draft: both caches grow with it (llama-server's 4 slots share one
# unified stream, so the search may start at one token).
cli_case(engine_llama_server_draft_fit_ctx EXIT 0 ARGS fit qwen2.5-7b --engine llama.cpp --gpu rtx-3060 -p int4
         --draft qwen2.5-0.5b --vary ctx STDERR_EMPTY
         STDOUT "largest seq with batch 1.*result +seq [0-9]+ fits.*binds +kv_cache")
cli_case(engine_fit_n_cpu_moe_dense EXIT 2 ARGS fit llama-2-7b --engine llama.cpp --gpu rtx-3060 --vary n_cpu_moe
         STDOUT_EMPTY STDERR "--vary n_cpu_moe moves routed experts; llama-2-7b has none")
cli_case(engine_fit_n_cpu_moe_needs_llama_cpp EXIT 2 ARGS fit qwen3-30b-a3b --gpu rtx-3060 --vary n_cpu_moe
         STDOUT_EMPTY STDERR "--vary n_cpu_moe is llama.cpp's --n-cpu-moe: add --engine llama.cpp")
cli_case(engine_fit_n_cpu_moe_cpu EXIT 2 ARGS fit qwen3-30b-a3b --engine llama.cpp --cpu --vary n_cpu_moe
         STDOUT_EMPTY STDERR "--vary n_cpu_moe keeps experts off a GPU")
cli_case(engine_draft_vocabulary EXIT 2 ARGS estimate llama-3.1-8b --engine llama.cpp --gpu rtx-4090 --draft gpt2
         STDOUT_EMPTY STDERR "--draft gpt2 has 50,257 tokens, llama-3.1-8b 128,256: llama-server refuses a draft whose vocabulary is more than 128 tokens apart")
cli_case(engine_draft_unknown EXIT 2 ARGS estimate llama-2-7b --engine llama.cpp --cpu --draft no-such-model
         STDOUT_EMPTY STDERR "--draft: unknown model 'no-such-model'")
cli_case(engine_draft_missing_file EXIT 2 ARGS estimate llama-2-7b --engine llama.cpp --cpu --draft /nonexistent/d.gguf
         STDOUT_EMPTY STDERR "--draft: /nonexistent/d.gguf: no such file")
cli_case(engine_draft_is_llama_cpps EXIT 2 ARGS estimate llama-2-7b --engine vllm --gpu h100 --draft tinyllama-1.1b
         STDOUT_EMPTY STDERR "--draft is a llama.cpp setting: add --engine llama.cpp")
cli_case(engine_draft_max_needs_a_draft EXIT 2 ARGS estimate llama-2-7b --engine llama.cpp --cpu --draft-max 4
         STDOUT_EMPTY STDERR "--draft-max applies to a --draft model")
cli_case(engine_ngl_draft_needs_a_gpu EXIT 2 ARGS estimate llama-2-7b --engine llama.cpp --cpu --draft tinyllama-1.1b
         --ngl-draft 3 STDOUT_EMPTY STDERR "--ngl-draft offloads layers to a GPU")
# llama-server without --seq: -c 0 is the trained context for each of its 4 slots, which its
# --fit reduces until 1 GiB stays free (tests/llama_cpp compares the context with llama.cpp's own).
cli_case(engine_llama_server_fits_its_context EXIT 0 ARGS estimate llama-3.1-8b --engine llama.cpp --gpu rtx-3060
         -p int4 --llama-server STDERR_EMPTY
         STDOUT "workload +serving\n.*layout +llama-server, -ngl 33, -c [0-9,]+ .*note: llama-server --fit: -c unset: the trained context 131,072 x 4 slots would leave less than 1 GiB free; reduced to [0-9,]+ \\(interpolated")
cli_case(engine_llama_server_fit_gives_up EXIT 0 ARGS estimate llama-3.1-70b --engine llama.cpp --gpu rtx-4090
         -p int4 --llama-server STDERR_EMPTY
         STDOUT "-c 4,096 .*fits +NO.*nor does its --fit-ctx minimum 4,096; llama-server would next move layers to the host")
# vLLM with Mamba layers: a vLLM 0.19 start-up of granite-4.0-h-1b (docs/accuracy.md) logs block
# size 400, padding 1.59%, 53,200 tokens and 66.95x for 4.09 GiB of KV memory (1,339 blocks of 4
# pages of 819,200 B = 4,387,635,200 B); tests/unit/estimators/serving_test.cpp derives each.
cli_case(engine_vllm_mamba_hybrid EXIT 0 ARGS estimate "${PROJECT_SOURCE_DIR}/tests/cli/data/granite-4.0-h-1b-shape.yaml"
         --engine vllm --gpu rtx-3060 --gpu-memory-utilization 0.6 --max-model-len 4096 --max-num-seqs 2
         --max-num-batched-tokens 2048 --kv-cache-memory-bytes 4387635200 --vllm-version 0.19 STDERR_EMPTY
         STDOUT "1,339 blocks of 400 tokens.*GPU KV cache size: 53,200 tokens\n +Maximum concurrency for 4,096 tokens per request: 66\\.95x.*Setting attention block size to 400 tokens.*Padding mamba page size by 1\\.59%")
# Gated DeltaNet on vLLM. A vLLM 0.19 start-up of Qwen/Qwen3.5-9B on an L40S (docs/accuracy.md,
# code-index id 51781852921) logs block size 528, padding 0.76%, 165,792 tokens and 2.52x for
# 20.27 GiB of KV memory: 24 layers' state of 3 x 8,192 x 2 + 32 x 128 x 128 x 4 (the config's
# float32) = 2,146,304 B, so 16 x ceil(2,146,304 / (16 x 4,096)) = 528 tokens; 8 attention and 24
# DeltaNet layers in 4 groups of 8; 1,258 blocks of 8 x 528 x 4,096 B = 21,765,292,032 B.
cli_case(engine_vllm_gated_deltanet EXIT 0 ARGS estimate qwen3.5-9b --engine vllm --gpu l40s --language-model-only
         --kv-cache-memory-bytes 21765292032 --vllm-version 0.19 STDERR_EMPTY
         STDOUT "1,258 blocks of 528 tokens.*GPU KV cache size: 165,792 tokens\n +Maximum concurrency for 262,144 tokens per request: 2\\.52x.*Padding mamba page size by 0\\.76%.*in float32, its config's mamba_ssm_dtype")
# Tensor parallelism splits it by head: vLLM 0.10.2's start-up of Qwen3-Next-80B-A3B-Instruct
# on 2 H200s (code-index id 7292846353) logs 544-token blocks, 1.49%, 973,760 tokens and 14.77x
# for 44.59 GiB: per rank 3 x 4,096 x 2 + 16 x 128 x 128 x 2 = 548,864 B of state beside one KV
# head of 256 (1,024 B a token); 7,162 blocks of 12 pages (47,875,620,864 B of 47,878,140,518).
cli_case(engine_vllm_gated_deltanet_tp EXIT 0 ARGS estimate qwen3-next-80b-a3b-instruct --engine vllm --gpu h200
         --tp 2 --kv-cache-memory-bytes 47878140518 --vllm-version 0.10.2 STDERR_EMPTY
         STDOUT "7,162 blocks of 544 tokens.*GPU KV cache size: 973,760 tokens\n +Maximum concurrency for 262,144 tokens per request: 14\\.77x.*Padding mamba page size by 1\\.49%")
# Prefix caching's align mode: a vLLM 0.20 start-up of Qwen3.6-27B (Qwen3.5-27B's architecture;
# code-index id 52002965523) with --enable-prefix-caching, fp8 KV, --max-model-len 32768 and
# 6.67 GiB of KV memory logs 1,568-token blocks, 0.13%, 53,312 tokens and 5.15x: 48 layers' state
# 3 x 10,240 x 2 + 48 x 128 x 128 x 4 = 3,207,168 B against 2 x 4 x 256 x 1 B of fp8 KV a token,
# 4 groups of 16 layers, 139 blocks; a request holds ceil(32,768 / 1,568) = 21 blocks and 2 in
# each of 3 Mamba groups, 27 in all.
cli_case(engine_vllm_prefix_caching_align EXIT 0 ARGS estimate qwen3.5-27b --engine vllm --gpu h100
         --language-model-only --kv-precision fp8 --enable-prefix-caching --max-model-len 32768
         --gpu-memory-utilization 0.8 --kv-cache-memory-bytes 7161817743 --vllm-version 0.20.0 STDERR_EMPTY
         STDOUT "139 blocks of 1,568 tokens.*GPU KV cache size: 53,312 tokens\n +Maximum concurrency for 32,768 tokens per request: 5\\.15x.*set to 'align''.*Padding mamba page size by 0\\.13%.*2 in each Mamba group \\(27 in all\\)")
# Speculative decoding with the checkpoint's MTP layer: a 17th attention layer, a convolution row
# and a Mamba block a request for each drafted token (tests/unit/estimators/serving_test.cpp derives
# each figure). vLLM 0.20.0, Qwen3.6-27B, mtp k=1, fp8 KV, prefix caching, 4.8 GiB of KV memory
# (code-index id 52000797369): 1,584-token blocks, 0.51%, 3 padding layers, 36,432 tokens, 1.82x.
cli_case(engine_vllm_mtp EXIT 0 ARGS estimate qwen3.5-27b --engine vllm --gpu h100 --language-model-only
         --kv-precision fp8 --enable-prefix-caching --max-model-len 65536 --max-num-seqs 2
         --max-num-batched-tokens 16384 --speculative-method mtp --num-speculative-tokens 1
         --kv-cache-memory-bytes 5153960755 --vllm-version 0.20.0 STDERR_EMPTY
         STDOUT "93 blocks of 1,584 tokens.*GPU KV cache size: 36,432 tokens\n +Maximum concurrency for 65,536 tokens per request: 1\\.82x.*and 1 more for the drafted tokens.*Padding mamba page size by 0\\.51%.*3 in each Mamba group \\(51 in all\\).*'Add 3 padding layers, may waste at most 6\\.25% KV cache memory'")
# vLLM 0.22.0, Qwen3.6-35B-A3B (Qwen3.5-35B-A3B's architecture), mtp k=3, bf16 KV, 71.15 GiB
# (code-index id 56681168668): 30 DeltaNet layers of 6 x 8,192 x 2 + 32 x 128 x 128 x 4 =
# 2,195,456 B against 2 x 2 x 256 x 2 B a token: 16 x ceil(2,195,456 / 65,536) = 1,072 tokens;
# 11 attention layers with the MTP layer, 3 DeltaNet groups of 11 (3 padding, 10.00%); 71.15 GiB /
# (11 x 1,072 x 4,096 B) = 3,163 blocks; a request ceil(200,000 / 1,072) = 187 + 3 x (2 + 3) = 202:
# 15.66x, and 3,163 / 202 x 200,000 = 3,131,683 tokens as releases after 0.20.0 log them.
cli_case(engine_vllm_mtp_later_release EXIT 0 ARGS estimate qwen3.5-35b-a3b --engine vllm --gpu h200
         --language-model-only --enable-prefix-caching --max-model-len 200000 --speculative-method mtp
         --num-speculative-tokens 3 --kv-cache-memory-bytes 76396730777 STDERR_EMPTY
         STDOUT "3,163 blocks of 1,072 tokens.*GPU KV cache size: 3,131,683 tokens\n +Maximum concurrency for 200,000 tokens per request: 15\\.66x.*'Add 3 padding layers, may waste at most 10\\.00% KV cache memory'.*0\\.11-0\\.20\\.0 logged \\(blocks / KV groups\\) x block_size = 846,880 tokens")
# vLLM 0.20.2, the same architecture with the older name qwen3_next_mtp, k=2, fp8_e4m3 KV, 66.58
# GiB (code-index id 56757617998): 2,128-token blocks, 2,982 blocks, a request 124 + 3 x 4 = 136
# blocks: 21.93x and "GPU KV cache size: 5,747,892 tokens".
cli_case(engine_vllm_mtp_old_name EXIT 0 ARGS estimate qwen3.5-35b-a3b --engine vllm --gpu h200
         --language-model-only --enable-prefix-caching --kv-precision fp8 --speculative-method qwen3_next_mtp
         --num-speculative-tokens 2 --kv-cache-memory-bytes 71490355363 --vllm-version 0.20.2 STDERR_EMPTY
         STDOUT "2,982 blocks of 2,128 tokens.*GPU KV cache size: 5,747,892 tokens\n +Maximum concurrency for 262,144 tokens per request: 21\\.93x")
# The drafter loads the checkpoint's mtp.* tensors alone: Qwen3.5-27B's are its Hub total
# 27,781,427,952 less the 27,356,728,560 of the model (Qwen/Qwen3.5-27B's safetensors
# metadata), 424,699,392 parameters, 849,398,784 B in bf16.
cli_case(engine_vllm_mtp_weights EXIT 0 ARGS estimate qwen3.5-27b --engine vllm --gpu h100 --language-model-only
         --speculative-method mtp --format json STDERR_EMPTY
         STDOUT "\"name\": \"mtp_drafter\",\n +\"bytes\": 849398784,\n +\"params\": 424699392,")
cli_case(engine_vllm_mtp_needs_mtp_layers EXIT 2 ARGS estimate llama-3.1-8b --engine vllm --gpu h100
         --speculative-method mtp STDOUT_EMPTY STDERR "llama-3.1-8b has no multi-token-prediction layers")
cli_case(engine_vllm_speculation_other_methods EXIT 2 ARGS estimate llama-3.1-8b --engine vllm --gpu h100
         --speculative-method eagle3 STDOUT_EMPTY STDERR "not 'eagle3' yet: eagle, eagle3 and draft models load a second model")
cli_case(engine_vllm_ngram_needs_k EXIT 2 ARGS estimate llama-3.1-8b --engine vllm --gpu h100
         --speculative-method ngram STDOUT_EMPTY STDERR "--speculative-method ngram needs --num-speculative-tokens")
# Nemotron 3's expert layers: a vLLM 0.19.1 start-up of Nemotron-Cascade-2-30B-A3B (Nemotron 3
# Nano's architecture; code-index id 59839511370), fp8 KV, max_model_len 262,144, 68.97 GiB of KV
# memory, logs 4,176-token blocks, 0.19%, "Add 1 padding layers, may waste at most 4.35%",
# 4,819,104 tokens and 86.16x: 23 Mamba layers' state 3 x 6,144 x 2 + 64 x 64 x 128 x 4 =
# 2,134,016 B against 2 x 2 x 128 x 1 B a token: 16 x ceil(2,134,016 / 8,192) = 4,176; groups of 6
# (the attention layers), 4 of Mamba (24 slots, one padding); 5,773 blocks of 6 pages of 2,138,112
# B; a request ceil(262,144 / 4,176) + 4 = 67 blocks.
cli_case(engine_vllm_nemotron3 EXIT 0 ARGS estimate nemotron-3-nano-30b-a3b --engine vllm
         --gpu h100 --kv-precision fp8 --max-model-len 262144 --kv-cache-memory-bytes 74060000000 --vllm-version 0.19.1 STDERR_EMPTY
         STDOUT "5,773 blocks of 4,176 tokens.*GPU KV cache size: 4,819,104 tokens\n +Maximum concurrency for 262,144 tokens per request: 86\\.16x.*Padding mamba page size by 0\\.19%.*'Add 1 padding layers, may waste at most 4\\.35% KV cache memory'")
# vLLM 0.17 on filters top-k/top-p in place: the sampler's warm-up holds 14 B a logit at bf16, not
# the sort's 38. vLLM 0.19.0's start-up of Llama-3.1-8B on an H100 (79.19 GiB, util 0.95, 1,024
# sequences; llm-d-incubation/llm-d-planner's accuracy log) leaves 58.11 GiB for the KV cache
# (torch peak 1.89 GiB: 1,024 x 128,256 x 14 B = 1.71 GiB of it); memplan within 3% (56.4-59.9).
cli_case(engine_vllm_sampler_in_place EXIT 0 ARGS estimate llama-3.1-8b --engine vllm --gpu h100
         --gpu-memory-utilization 0.95 --vllm-version 0.19.0 STDERR_EMPTY
         STDOUT "activation_peak +1\\.71 GiB.*KV budget (5[6-9]\\.[0-9][0-9]) GiB = ceil")
cli_case(engine_vllm_sampler_sorts_before_0_17 EXIT 0 ARGS estimate llama-3.1-8b --engine vllm --gpu h100
         --gpu-memory-utilization 0.95 --vllm-version 0.16 --format json STDERR_EMPTY
         STDOUT "\"name\": \"sorted_indices\"")
cli_case(engine_vllm_version_unknown EXIT 2 ARGS estimate llama-3.1-8b --engine vllm --gpu h100 --vllm-version 0.x
         STDOUT_EMPTY STDERR "--vllm-version is a vLLM release such as 0\\.19 or 0\\.20\\.1, not '0\\.x'")
cli_case(engine_vllm_prefix_caching_all_refused EXIT 2 ARGS estimate "${PROJECT_SOURCE_DIR}/tests/cli/data/granite-4.0-h-1b-shape.yaml"
         --engine vllm --gpu rtx-3060 --enable-prefix-caching STDOUT_EMPTY
         STDERR "prefix caching's `all` mode .*memplan does not model yet")
cli_case(engine_vllm_mamba_cache_mode_needs_prefix_caching EXIT 2 ARGS estimate qwen3-next-80b-a3b-instruct
         --engine vllm --gpu h200 --mamba-cache-mode align STDOUT_EMPTY
         STDERR "--mamba-cache-mode align applies with prefix caching: add --enable-prefix-caching")
# A vision-language model with its tower: vLLM profiles the tower on its largest images and keeps
# their embeddings through the forward. vLLM 0.19's LLM("Qwen/Qwen3.5-9B") on an L40S (code-index
# id 51781852921) logs "budget of 16384 tokens, and profiled with 1 image items" (one 4096 x 4096
# image: 256 x 256 patches of 16 px, merged 2 x 2) and 165,792 tokens; memplan's KV size must be
# within 3% of it (161,000-170,999 here).
cli_case(engine_vllm_vision_tower EXIT 0 ARGS estimate qwen3.5-9b --engine vllm --gpu l40s --vllm-entrypoint llm
         --vllm-version 0.19 STDERR_EMPTY
         STDOUT "GPU KV cache size: 1(6[1-9]|70),[0-9][0-9][0-9] tokens.*'Encoder cache will be initialized with a budget of 16,384 tokens, and profiled with 1 image items of the maximum feature size' \\(4096x4096 px, 16,384 tokens each\\)")
# Gemma 3 resizes every image to 896 px: 64 x 64 patches of 14 px pooled 4 x 4, 256 tokens; the
# budget is max(max_num_batched_tokens 2,048, 256), 2,048 / 256 = 8 items (compute_mm_encoder_budget,
# MultiModalBudget._get_max_items); vLLM 0.8.5 serving gemma-3-4b logs "profiled with 8 image
# items" (code-index id 57147826101).
cli_case(engine_vllm_vision_tower_fixed_size EXIT 0 ARGS estimate gemma-3-4b-it --engine vllm --gpu rtx-4090
         --max-model-len 8192 STDERR_EMPTY
         STDOUT "'Encoder cache will be initialized with a budget of 2,048 tokens, and profiled with 8 image items of the maximum feature size' \\(896x896 px, 256 tokens each\\)")
cli_case(engine_vllm_vision_tower_not_yet EXIT 2 ARGS estimate qwen2-vl-2b-instruct --engine vllm --gpu rtx-4090
         STDOUT_EMPTY STDERR "not qwen2-vl-2b-instruct's yet \\(vLLM profiles Qwen2-VL's largest video.*--language-model-only")
cli_case(engine_vllm_language_model_only_without_tower EXIT 2 ARGS estimate qwen3-next-80b-a3b-instruct --engine vllm
         --gpu h200 --language-model-only STDOUT_EMPTY STDERR "drops a vision tower, and qwen3-next-80b-a3b-instruct has none")
cli_case(engine_vllm_gated_deltanet_tp_uneven EXIT 2 ARGS estimate qwen3-next-80b-a3b-instruct --engine vllm
         --gpu h200 --tp 3 STDOUT_EMPTY STDERR "32 state-space heads do not split evenly over 3 GPUs")
# llama.cpp keeps a gated DeltaNet's state in f32 slots: Qwen3-Next's 36 DeltaNet layers x
# ((4 - 1) x 8,192 conv channels + 128 x 4,096) x 4 B = 79,036,416 B for one sequence, beside
# 12 attention layers x 32,768 cells x 2 x 2 x 256 x 2 B = 768 MiB of f16 KV cells.
cli_case(engine_llama_cpp_gated_deltanet EXIT 0 ARGS estimate qwen3-next-80b-a3b-instruct --engine llama.cpp
         --gpu h200 -p int4 --seq 32768 --format json STDERR_EMPTY
         STDOUT "\"name\": \"kv_cache\",\n +\"bytes\": 805306368,.*\"name\": \"recurrent_state\",\n +\"bytes\": 79036416,")
# --mamba-ssm-cache-dtype float32: 3 x 3,328 x 2 + 48 x 64 x 128 x 4 = 1,592,832 B of state,
# so 16 x ceil(1,592,832 / (16 x 2,048)) = 784-token blocks.
cli_case(engine_vllm_mamba_ssm_dtype EXIT 0 ARGS estimate "${PROJECT_SOURCE_DIR}/tests/cli/data/granite-4.0-h-1b-shape.yaml"
         --engine vllm --gpu rtx-3060 --max-model-len 4096 --mamba-ssm-cache-dtype float32 --format json STDERR_EMPTY
         STDOUT "\"block_size\": 784,.*\"state_bytes\": 1592832")
cli_case(engine_vllm_mamba_ssm_dtype_bad EXIT 2 ARGS estimate mamba-130m-hf --engine vllm --gpu h100
         --mamba-ssm-cache-dtype bfloat16 STDOUT_EMPTY STDERR "--mamba-ssm-cache-dtype is auto, float32 or float16, not 'bfloat16'")
cli_case(engine_vllm_mamba_pp EXIT 2 ARGS estimate mamba-codestral-7b --engine vllm --gpu h100 --pp 2
         STDOUT_EMPTY STDERR "plans a model with state-space layers \\(mamba-codestral-7b\\) with tensor parallelism alone")
# A Mamba: no KV cells, a recurrent state slot per sequence. Mamba-130M over -np 2: 24 layers x
# ((4 - 1) x 1,536 conv columns + 16 x 1,536 states) x 4 B x 2 slots = 5,603,328 B.
cli_case(engine_llama_cpp_mamba EXIT 0 ARGS estimate mamba-130m-hf --engine llama.cpp --cpu --seq 2048 --parallel 2
         --format json STDERR_EMPTY
         STDOUT "\"name\": \"recurrent_state\",\n +\"bytes\": 5603328,.*\"cells\": 0,\n +\"state_cells\": 2,")
cli_case(engine_llama_cpp_mamba_text EXIT 0 ARGS estimate mamba-codestral-7b --engine llama.cpp --gpu rtx-4090
         -p int4 --seq 32768 --llama-server STDERR_EMPTY
         STDOUT "-c 32,768 \\(-np 4: a state slot each\\), -ub 512, recurrent state f32.*recurrent_state.*recurrent state 4 slots per layer")
# A hybrid keeps both. Nemotron-H-8B at -c 8192: 4 attention layers x 8,192 cells x 8 KV heads
# x 128 x 2 B x (K + V) = 134,217,728 B; 24 Mamba-2 layers x (3 x (8,192 + 2 x 8 x 128) + 128 x
# 8,192) x 4 B = 103,612,416 B.
cli_case(engine_llama_cpp_hybrid EXIT 0 ARGS estimate nemotron-h-8b-base-8k --engine llama.cpp --cpu --seq 8192
         --format json STDERR_EMPTY
         STDOUT "\"name\": \"kv_cache\",\n +\"bytes\": 134217728,.*\"name\": \"recurrent_state\",\n +\"bytes\": 103612416,.*\"cells\": 8192,\n +\"state_cells\": 1,")
cli_case(engine_llama_cpp_zamba2 EXIT 2 ARGS estimate zamba2-1.2b --engine llama.cpp --cpu
         STDOUT_EMPTY STDERR "llama.cpp has no Zamba2 architecture")
# vLLM's kv_cache_memory_bytes with an fp8 cache (docs/accuracy.md: a v0.18 start-up of
# Qwen3-8B logs 58,240 tokens): 36 layers x 8 KV heads x 128 x 2 x 1 B = 73,728 B a token,
# 1,179,648 B a block of 16, floor(4 GiB / 1,179,648) = 3,640 blocks = 58,240 tokens, 14.22x of
# 4,096; bf16 gives 1,820 blocks, 29,120 tokens (its paired log's).
cli_case(engine_vllm_kv_cache_memory_bytes_fp8 EXIT 0 ARGS estimate qwen3-8b --engine vllm --gpu 48GiB
         --kv-cache-memory-bytes 4GiB --kv-precision fp8 --max-model-len 4096 --max-num-seqs 8
         --max-num-batched-tokens 4096 STDERR_EMPTY
         STDOUT "KV budget 4\\.00 GiB = kv_cache_memory_bytes, as given.*GPU KV cache size: 58,240 tokens\n +Maximum concurrency for 4,096 tokens per request: 14\\.22x")
cli_case(engine_vllm_kv_cache_memory_bytes_json EXIT 0 ARGS estimate qwen3-8b --engine vllm --gpu 48GiB
         --kv-cache-memory-bytes 4GiB --max-model-len 4096 --format json STDERR_EMPTY
         STDOUT "\"kv_budget_bytes\": 4294967296,\n +\"kv_budget_given\": true,.*\"tokens\": 29120,")
cli_case(engine_kv_cache_memory_bytes_is_vllms EXIT 2 ARGS estimate qwen3-8b --engine llama.cpp --cpu
         --kv-cache-memory-bytes 4GiB STDOUT_EMPTY STDERR "--kv-cache-memory-bytes is a vLLM setting: add --engine vllm")
# vLLM's larger batch defaults (1,024 sequences, 8,192 batched tokens for vllm serve) follow the
# total CUDA reports, 70 GiB or more: a bare capacity of 94.5 GiB gets them, 48 GiB does not.
cli_case(engine_vllm_bare_capacity_defaults EXIT 0 ARGS estimate qwen3-8b --engine vllm --gpu 94.5GiB
         STDOUT "94.50GiB GPU, .*max_num_seqs 1,024, max_num_batched_tokens 8,192")
cli_case(engine_vllm_small_bare_capacity_defaults EXIT 0 ARGS estimate qwen3-8b --engine vllm --gpu 48GiB
         STDOUT "48.00GiB GPU, .*max_num_seqs 256, max_num_batched_tokens 2,048")
cli_case(engine_llama_cpp_fit_ngl EXIT 0 ARGS fit llama-2-13b --engine llama.cpp --gpu rtx-3060 --vary ngl -p fp16
         --seq 4096 STDERR_EMPTY
         STDOUT "largest ngl with -c 4096\nlimit +10\\.75 GiB of 11\\.75 GiB \\(llama.cpp's --fit margin of 1 GiB.*result +ngl [0-9]+ fits.*next +ngl [0-9]+ does not.*binds +weights.*option +--ngl [0-9]+\ngiven +ngl 41: does not fit")
cli_case(engine_llama_cpp_fit_ctx EXIT 0 ARGS fit llama-2-13b --engine llama.cpp --gpu rtx-3060 --vary ctx -p int4
         --format json STDERR_EMPTY STDOUT "\"vary\": \"seq\",.*\"option\": \"--seq\".*\"limit_rule\": \"llama.cpp's --fit margin")
cli_case(engine_ngl_needs_llama_cpp EXIT 2 ARGS fit llama-2-7b --vary ngl --gpu rtx-4090 STDOUT_EMPTY
         STDERR "--vary ngl is llama.cpp's -ngl: add --engine llama.cpp")
cli_case(engine_knob_alone EXIT 2 ARGS estimate llama-2-7b --ngl 5 STDOUT_EMPTY
         STDERR "--ngl is a llama.cpp setting: add --engine llama.cpp")
cli_case(engine_cpu_has_no_ngl EXIT 2 ARGS estimate llama-2-7b --engine llama.cpp --cpu --ngl 3 STDOUT_EMPTY
         STDERR "--ngl offloads layers to a GPU; a plan for the CPU \\(--cpu\\) has none")
cli_case(engine_quantised_v_needs_fa EXIT 2 ARGS estimate llama-2-7b --engine llama.cpp --gpu rtx-4090
         --cache-type-v q4_0 --flash-attn off STDOUT_EMPTY STDERR "needs flash attention for a quantised V cache \\(q4_0\\)")
cli_case(engine_unknown_cache_type EXIT 2 ARGS estimate llama-2-7b --engine llama.cpp --cache-type-k q4_k STDOUT_EMPTY
         STDERR "'f32', 'f16', 'bf16', 'q8_0', 'q4_0', 'q4_1', 'iq4_nl', 'q5_0' or 'q5_1', not 'q4_k'")
cli_case(engine_unknown EXIT 2 ARGS estimate llama-2-7b --engine llamacpp STDOUT_EMPTY
         STDERR "--engine is pytorch, vllm or llama.cpp, not 'llamacpp' \\(did you mean 'llama.cpp'\\?\\)")
cli_case(engine_llama_cpp_not_training EXIT 2 ARGS estimate llama-2-7b --engine llama.cpp -w training --gpu rtx-4090
         STDOUT_EMPTY STDERR "--engine llama.cpp plans inference and generation, not -w training")
cli_case(engine_llama_cpp_latent_attention EXIT 2 ARGS estimate deepseek-v2-lite --engine llama.cpp --gpu h100
         STDOUT_EMPTY STDERR "does not model llama.cpp's cache for latent attention")
set_tests_properties(cli.engine_llama_cpp_gguf_cpu PROPERTIES FIXTURES_REQUIRED gguf_files)

# sweep, recommend and fit (but llama.cpp's) price one process with PyTorch's rules: a layout
# or engine given to them is refused, not dropped.
cli_case(engine_sweep_refuses_vllm EXIT 2 ARGS sweep llama-2-7b --engine vllm --gpu rtx-4090 STDOUT_EMPTY
         STDERR "sweep plans one process on one GPU with PyTorch's rules; --engine vllm is planned by estimate")
cli_case(engine_recommend_refuses_llama_cpp EXIT 2 ARGS recommend llama-2-13b --engine llama.cpp --gpu rtx-3060
         STDOUT_EMPTY STDERR "--engine llama.cpp is planned by estimate and fit")
cli_case(layout_fit_refuses_tp EXIT 2 ARGS fit llama-2-7b --tp 2 --gpu rtx-4090 --vary batch STDOUT_EMPTY
         STDERR "fit plans one process on one GPU with PyTorch's rules; --tp is planned by estimate")

# fit on the CPU: the host's RAM (here a given size) under the threshold; ngl has no GPU to fill.
gguf_case(engine_llama_cpp_fit_ctx_cpu EXIT 0 ARGS fit "${gguf}/tiny-llama.gguf" --engine llama.cpp --cpu=1GiB
          --vary ctx STDERR_EMPTY
          STDOUT "on the CPU \\(1\\.00 GiB of RAM\\): largest seq with batch 1\nlimit +870\\.40 MiB of 1\\.00 GiB \\(85%\\)\nresult +seq 128 fits")
set_tests_properties(cli.engine_llama_cpp_fit_ctx_cpu PROPERTIES FIXTURES_REQUIRED gguf_files)
cli_case(engine_fit_cpu_has_no_ngl EXIT 2 ARGS fit llama-2-7b --engine llama.cpp --cpu=64GiB --vary ngl STDOUT_EMPTY
         STDERR "--vary ngl offloads layers to a GPU; a plan for the CPU \\(--cpu\\) has none: vary ctx")
cli_case(fit_needs_a_device EXIT 2 ARGS fit llama-2-7b --vary batch STDOUT_EMPTY
         STDERR "--gpu is required: the GPU \\(or a capacity such as 24GiB\\) to fit on, or --cpu")

# Plan files take the engine's keys in the workload; a bad value is located.
cli_case(engine_plan_file EXIT 0 ARGS check "${PROJECT_SOURCE_DIR}/tests/cli/data/plans/llama-cpp-partial-offload.yaml"
         STDERR_EMPTY STDOUT "^PASS [^\n]*llama-cpp-partial-offload\\.yaml +llama-2-7b inference")
cli_case(engine_plan_file_bad_ngl EXIT 2 ARGS check "${PROJECT_SOURCE_DIR}/tests/cli/data/plans/llama-cpp-bad-ngl.yaml"
         STDOUT_EMPTY STDERR "llama-cpp-bad-ngl\\.yaml:5:8: 'ngl' must be a whole number, got 'twenty'")
cli_case(engine_plan_file_draft EXIT 0 ARGS check "${PROJECT_SOURCE_DIR}/tests/cli/data/plans/llama-server-draft.yaml"
         STDERR_EMPTY STDOUT "^PASS [^\n]*llama-server-draft\\.yaml +llama-2-7b inference")
cli_case(engine_plan_file_missing_draft EXIT 2 ARGS check
         "${PROJECT_SOURCE_DIR}/tests/cli/data/plans/llama-server-missing-draft.yaml" STDOUT_EMPTY
         STDERR "llama-server-missing-draft\\.yaml:7:10: .*no-such-draft\\.gguf: no such file")

# vLLM 0.9-0.11's batch defaults (EngineArgs.get_batch_defaults): vllm serve on a GPU of 70 GiB
# or more that is not an A100 takes 1,024 sequences and 8,192 tokens, the LLM class 16,384;
# an A100 (PR #17885) and smaller cards 256 and 2,048. A flag given wins.
cli_case(engine_vllm_defaults_h100 EXIT 0 ARGS estimate qwen3-8b --engine vllm --gpu h100
         STDOUT "layout +vLLM, [^\n]*max_num_seqs 1,024, max_num_batched_tokens 8,192 \\[vllm\\]")
cli_case(engine_vllm_defaults_llm_class EXIT 0 ARGS estimate qwen3-8b --engine vllm --gpu h100 --vllm-entrypoint llm
         STDOUT "max_num_seqs 1,024, max_num_batched_tokens 16,384 ")
cli_case(engine_vllm_defaults_a100 EXIT 0 ARGS estimate qwen3-8b --engine vllm --gpu a100-sxm4-80gb
         STDOUT "max_num_seqs 256, max_num_batched_tokens 2,048 ")
cli_case(engine_vllm_defaults_given EXIT 0 ARGS estimate qwen3-8b --engine vllm --gpu rtx-4090 --max-num-seqs 64
         STDOUT "max_num_seqs 64, max_num_batched_tokens 2,048 ")
cli_case(engine_vllm_entrypoint_bad EXIT 2 ARGS estimate qwen3-8b --engine vllm --gpu h100 --vllm-entrypoint server
         STDOUT_EMPTY STDERR "--vllm-entrypoint is serve or llm, not 'server'")
# A card by the total vLLM prints for it: 23.53 GiB is 25,265,145,118.72 B, the whole bytes below.
# vLLM with pipeline_parallel_size 2: DeepSeek-V2-Lite's 27 layers as 14 and 13 (get_pp_indices),
# the engine keeping the fewest blocks a stage has room for (docs/accuracy.md: a published TP 2 x
# PP 2 start-up on 4 x L4).
cli_case(engine_vllm_pipeline EXIT 0 ARGS estimate deepseek-v2-lite --engine vllm --gpu l4 --tp 2 --pp 2
         --max-model-len 1024
         STDOUT "pipeline_parallel_size 2 on 4 x l4.*stage 0 \\(layers 0-13\\) +x2 +14 layers and the embeddings.*stage 1 \\(layers 14-26\\) +x2 +13 layers, the head and the sampler.*GPU KV cache size: [0-9,]+ tokens")
cli_case(engine_vllm_pipeline_not_with_ep EXIT 2 ARGS estimate qwen3-30b-a3b --engine vllm --gpu h100 --tp 2 --pp 2 --ep 2
         STDOUT_EMPTY STDERR "does not combine --pp with --ep yet")
cli_case(engine_vllm_pipeline_too_deep EXIT 2 ARGS estimate gpt2 --engine vllm --gpu h100 --pp 13
         STDOUT_EMPTY STDERR "--pp 13 is more stages than gpt2's 12 layers")
# More ranks than key/value heads: Qwen3-235B-A22B's 4 over TP 8, one head a rank, replicated.
# A block is 16 tokens x 94 layers x 2 x 1 x 128 x 2 B = 770,048 B = 752 KiB, the block the
# start-up's own byte counts divide into (docs/accuracy.md).
cli_case(engine_vllm_replicated_kv_heads EXIT 0 ARGS estimate "${hf}/quantized/qwen3-235b-a22b-instruct-2507-fp8/config.json"
         --engine vllm --gpu l40s --tp 8 --ep 8 --max-model-len 32768
         STDOUT "blocks of 16 tokens \\(752\\.00 KiB each\\).*4 key/value heads for 8 ranks: each rank keeps one, replicated on 2 ranks")
cli_case(engine_vllm_lora EXIT 0 ARGS estimate llama-3.1-8b --engine vllm --gpu a100-40gb --max-loras 2
         STDOUT "enable_lora: 2 adapter slots of rank 16 are in the weights")
cli_case(engine_vllm_lora_needs_vllm EXIT 2 ARGS estimate llama-3.1-8b --max-loras 2
         STDOUT_EMPTY STDERR "--max-loras is a vLLM setting: add --engine vllm")
cli_case(engine_vllm_lora_not_on_experts EXIT 2 ARGS estimate qwen3-30b-a3b --engine vllm --gpu h100 --max-loras 2
         STDOUT_EMPTY STDERR "prices vLLM's LoRA buffers for dense attention models; qwen3-30b-a3b has experts")
cli_case(engine_vllm_bare_capacity EXIT 0 ARGS estimate qwen3-8b --engine vllm --gpu 23.53GiB --max-model-len 1024
         --format json STDOUT "\"memory_bytes\": 25265145118")

# vLLM with data_parallel_size 8 and enable_expert_parallel: Qwen3-30B-A3B holds 16 of its 128
# experts whole on each GPU, everything else whole, the router all 128 columns:
# 48 x (18,874,368 + 4,352 + 2048 x 128 + 16 x 3 x 2048 x 768) + 2 x 151,936 x 2048 + 2048.
cli_case(engine_vllm_expert_parallel EXIT 0 ARGS estimate qwen3-30b-a3b --engine vllm --gpu h100 --dp 8 --ep 8
         --format json STDOUT "\"name\": \"weights\",[^}]*\"params\": 5164972032")
cli_case(engine_vllm_ep_spans_every_gpu EXIT 2 ARGS estimate qwen3-30b-a3b --engine vllm --gpu h100 --dp 2 --ep 8
         STDERR "--ep must be --tp x --dp = 2, not 8")
cli_case(engine_vllm_refuses_zero EXIT 2 ARGS estimate qwen3-30b-a3b --engine vllm --gpu h100 --zero 1
         STDERR "--zero plans training; vLLM serving takes --tp, --dp and --ep")

# --mmproj: a vision tower's file beside the text model (Gemma 3 4B's tower, its 840 MB of data a
# hole). Its tensors on the GPU, each padded to CUDA's 128 bytes: 27 layers of q, k, v, out
# (4 x 1,152² x 2 B) and their biases (4 x 4,608), two LayerNorms (4 x 4,608), up and down
# (2 x 1,152 x 4,304 x 2 B), up's bias 17,216 -> 17,280 and down's 4,608: 30,508,416 B a layer;
# the patch kernel 14 x 14 x 3 x 1,152 x 2 and its bias 4,608, the positions 1,152 x 4,096 x 2,
# the final LayerNorm 2 x 4,608, the projection 2,560 x 1,152 x 2 and its norm 4,608:
# 27 x 30,508,416 + 16,708,608 = 840,435,840 B. The warm-up image's compute buffer, 121.25 MiB,
# and the image itself in the host's compute buffer, 3 x 896 x 896 x 4 B = 9.19 MiB, are what
# llama.cpp logs for ggml-org/gemma-3-4b-it-GGUF's tower on CUDA (ggml-org/llama.cpp#22790);
# 127,139,840 B is llama.cpp's mtmd_get_memory_usage less the tensors, on the CPU, for this file.
gguf_case(engine_llama_cpp_mmproj EXIT 0 ARGS estimate gemma-3-4b-it --engine llama.cpp --gpu rtx-4090
          --mmproj "${gguf}/mmproj-gemma3-4b.gguf" --format json STDERR_EMPTY
          STDOUT "\"name\": \"mmproj_weights\",\n +\"bytes\": 840435840,.*\"name\": \"mmproj_compute\",\n +\"bytes\": 127139840,.*\"host_components\": .*\"name\": \"mmproj_compute\",\n +\"bytes\": 9633792,")
gguf_case(engine_llama_cpp_mmproj_text EXIT 0 ARGS estimate gemma-3-4b-it --engine llama.cpp --gpu rtx-4090
          --mmproj "${gguf}/mmproj-gemma3-4b.gguf"
          STDOUT "mmproj_weights +801\\.50 MiB.*mmproj_compute +121\\.25 MiB.*host mmproj_compute +9\\.19 MiB.*vision tower mmproj-gemma3-4b\\.gguf on the GPU.*896 x 896.*each image adds 256 tokens")
# --no-mmproj-offload: the tower in host memory, its tensors padded to the CPU's 32 bytes
# (840,434,112 B, as ggml allocates them), no image apart.
gguf_case(engine_llama_cpp_mmproj_on_host EXIT 0 ARGS estimate gemma-3-4b-it --engine llama.cpp --gpu rtx-4090
          --mmproj "${gguf}/mmproj-gemma3-4b.gguf" --no-mmproj-offload --format json STDERR_EMPTY
          STDOUT "\"host_components\": .*\"name\": \"mmproj_weights\",\n +\"bytes\": 840434112,.*\"name\": \"mmproj_compute\",\n +\"bytes\": 127139840,")
# A small tower beside tiny-llama on the CPU: 219,136 B of tensors (the patch kernel
# 14 x 14 x 3 x 64 x 2, 2 layers of 68,352, the positions, norms and the projection 32 x 64 x 2),
# and 56,448 B of compute buffer, llama.cpp's mtmd_get_memory_usage (275,584) less the tensors.
gguf_case(engine_llama_cpp_mmproj_cpu EXIT 0 ARGS estimate "${gguf}/tiny-llama.gguf" --engine llama.cpp --cpu
          --mmproj "${gguf}/mmproj-tiny.gguf" --format json STDERR_EMPTY
          STDOUT "\"name\": \"mmproj_weights\",\n +\"bytes\": 219136,.*\"name\": \"mmproj_compute\",\n +\"bytes\": 56448,")
cli_case(engine_llama_cpp_vision_text_alone EXIT 0 ARGS estimate gemma-3-4b-it --engine llama.cpp --cpu
         STDOUT "the text model alone: llama.cpp reads gemma-3-4b-it's vision tower from a file of its own; give that file \\(mmproj-\\*\\.gguf\\) as --mmproj")
gguf_case(engine_llama_cpp_mmproj_as_model EXIT 2 ARGS estimate "${gguf}/mmproj-tiny.gguf" --engine llama.cpp --cpu
          STDERR "mmproj-tiny\\.gguf: this is a vision tower's file \\(general.architecture 'clip', an mmproj\\), not a model: plan the model's own \\.gguf and add --mmproj")
gguf_case(engine_llama_cpp_mmproj_not_a_tower EXIT 2 ARGS estimate "${gguf}/tiny-llama.gguf" --engine llama.cpp --cpu
          --mmproj "${gguf}/tiny-llama.gguf" STDERR "tiny-llama\\.gguf: --mmproj takes a vision tower's file.*not a 'llama' model")
gguf_case(engine_llama_cpp_mmproj_projector EXIT 2 ARGS estimate "${gguf}/tiny-llama.gguf" --engine llama.cpp --cpu
          --mmproj "${gguf}/mmproj-mlp.gguf"
          STDERR "mmproj-mlp\\.gguf: the 'mlp' projector's compute buffer is not recorded; memplan prices the towers of Gemma 3 \\(projector 'gemma3'\\), Qwen3-VL and Qwen3.5")
gguf_case(engine_llama_cpp_mmproj_other_model EXIT 2 ARGS estimate llama-2-7b --engine llama.cpp --cpu
          --mmproj "${gguf}/mmproj-gemma3-4b.gguf"
          STDERR "gives the text model embeddings 2,560 wide \\(its projection's\\); llama-2-7b takes 4,096 \\(its d_model; no deepstack layers\\): llama.cpp refuses the pair")
cli_case(engine_llama_cpp_mmproj_offload_alone EXIT 2 ARGS estimate llama-2-7b --engine llama.cpp --cpu
         --no-mmproj-offload STDERR "--no-mmproj-offload applies to a vision tower given with --mmproj")
# A Qwen3.6-27B tower (qwen3vl_merger) on the GPU. llama.cpp reserves its warm-up image's
# buffer at start-up, 46 x 46 tokens: "CUDA0 compute buffer size = 248.10 MiB" and "CPU compute
# buffer size = 24.93 MiB" (the image 3 x 1,472² x 4 B and M-RoPE's positions 8,464 x 16 B), as
# llama.cpp logs a Qwen3.6 tower on CUDA (code-index id 58091952734); --image-max-tokens 2116
# keeps memplan to that image. By default the largest image, 4,096 tokens, binds: its host
# inputs 3 x 16,384 x 256 x 4 B + 16,384 x 16 B = 50,593,792 B.
gguf_case(engine_llama_cpp_mmproj_qwen_warmup EXIT 0 ARGS estimate qwen3.5-27b --engine llama.cpp --gpu rtx-4090
          -p int4 --seq 16384 --mmproj "${gguf}/mmproj-qwen3.6-27b.gguf" --image-max-tokens 2116
          STDOUT "mmproj_compute +248\\.10 MiB.*host mmproj_compute +24\\.93 MiB")
gguf_case(engine_llama_cpp_mmproj_qwen_largest EXIT 0 ARGS estimate qwen3.5-27b --engine llama.cpp --gpu rtx-4090
          -p int4 --seq 16384 --mmproj "${gguf}/mmproj-qwen3.6-27b.gguf" --format json STDERR_EMPTY
          STDOUT "\"host_components\": .*\"name\": \"mmproj_compute\",\n +\"bytes\": 50593792,.*reserves 249 MiB of compute buffer for its warm-up image \\(2,116 tokens\\) and grows it when a larger image arrives; counted at the largest image, 4,096 tokens")
gguf_case(engine_llama_cpp_image_tokens_fixed_size EXIT 2 ARGS estimate gemma-3-4b-it --engine llama.cpp --cpu
          --mmproj "${gguf}/mmproj-gemma3-4b.gguf" --image-max-tokens 1024
          STDERR "--image-max-tokens sizes a dynamic-resolution tower.*gemma3 projector takes one image size")
cli_case(engine_llama_cpp_image_tokens_alone EXIT 2 ARGS estimate llama-2-7b --engine llama.cpp --cpu
         --image-max-tokens 1024 STDERR "--image-max-tokens applies to a vision tower given with --mmproj")
# Qwen3-VL-8B's GGUF (qwen3vl) with its tower at -c 16,384, q8_0 K and V, as an LM Studio log
# of it shows "KV buffer size = 1224.00 MiB" (lmstudio-ai/lmstudio-bug-tracker#1176): 16,384
# cells x 36 layers x 1,024 x 34/32 B x 2 = 1,283,457,024 B. Its compute buffer 361,498,624 B as
# llama.cpp's context_probe measured this shape on the CPU (its embeddings 4 x 4,096 wide for
# the 3 deepstack layers). The tower's 3 deepstack mergers match them; Qwen3.6's tower, without
# any, does not.
gguf_case(engine_llama_cpp_qwen3vl EXIT 0 ARGS estimate "${gguf}/qwen3-vl-8b.gguf" --engine llama.cpp --gpu rtx-4090
          --seq 16384 --cache-type-k q8_0 --cache-type-v q8_0 --mmproj "${gguf}/mmproj-qwen3-vl-8b.gguf" --format json
          STDERR_EMPTY
          STDOUT "\"name\": \"kv_cache\",\n +\"bytes\": 1283457024,.*\"name\": \"compute_buffer\",\n +\"bytes\": 361498624,.*\"name\": \"mmproj_compute\"")
# Qwen2.5-VL-7B's tower beside its text model (the built-in), on the CPU at the warm-up image (46
# x 46 tokens, 8,464 patches): 739,025,728 B, as llama.cpp's mtmd reserved it for this shape (its
# window mask of every patch pair, 8,464² x 4 B, and two f16 copies under flash attention). At
# the largest image, 4,096 tokens, the f32 mask alone is 16,384² x 4 B = 1 GiB, an input in host
# memory beside the image (a strip of 114,688 x 28 pixels, x 3 x 4 B = 38,535,168 B), the
# positions (16,384 x 16 B) and the window order both ways (2 x 4,096 x 4 B): 1,112,571,904 B.
gguf_case(engine_llama_cpp_qwen25vl_tower EXIT 0 ARGS estimate qwen2.5-vl-7b-instruct --engine llama.cpp --cpu
          --mmproj "${gguf}/mmproj-qwen2.5-vl-7b.gguf" --image-max-tokens 2116 --format json STDERR_EMPTY
          STDOUT "\"name\": \"mmproj_weights\",\n +\"bytes\": 1354132480,.*\"name\": \"mmproj_compute\",\n +\"bytes\": 739025728,")
gguf_case(engine_llama_cpp_qwen25vl_largest EXIT 0 ARGS estimate qwen2.5-vl-7b-instruct --engine llama.cpp
          --gpu rtx-4090 -p int4 --mmproj "${gguf}/mmproj-qwen2.5-vl-7b.gguf" --format json STDERR_EMPTY
          STDOUT "\"host_components\": .*\"name\": \"mmproj_compute\",\n +\"bytes\": 1112571904,")
# The built-in Qwen3-VL-8B (its config.json's sizes, no GGUF) on llama.cpp: the text model's
# compute buffer as llama.cpp's context_probe measured the qwen3vl GGUF of this shape, 365,711,360
# B at -c 4096 (the 3 deepstack layers widen its embeddings), and 4,096 cells x 36 layers x 1,024
# x f16 x 2 = 603,979,776 B of KV cache.
cli_case(engine_llama_cpp_qwen3vl_builtin EXIT 0 ARGS estimate qwen3-vl-8b-instruct --engine llama.cpp --cpu
         --seq 4096 --format json STDERR_EMPTY
         STDOUT "\"name\": \"kv_cache\",\n +\"bytes\": 603979776,.*\"name\": \"compute_buffer\",\n +\"bytes\": 365711360,")
# On vLLM (qwen3_vl.py): a buffer per deepstack level, max_num_batched_tokens 8,192 x 4,096 x
# bf16 x 3 = 201,326,592 B with the weights, and the encoder cache's item 16,384 tokens x (1 + 3)
# x 4,096 x bf16 = 536,870,912 B.
cli_case(engine_vllm_qwen3vl_deepstack EXIT 0 ARGS estimate qwen3-vl-8b-instruct --engine vllm --gpu h100
         --max-model-len 32768 --format json STDERR_EMPTY
         STDOUT "\"name\": \"deepstack_buffers\",\n +\"bytes\": 201326592,.*\"name\": \"encoder_cache\",\n +\"bytes\": 536870912,")
gguf_case(engine_llama_cpp_qwen3vl_other_tower EXIT 2 ARGS estimate "${gguf}/qwen3-vl-8b.gguf" --engine llama.cpp
          --cpu --mmproj "${gguf}/mmproj-qwen3.6-27b.gguf"
          STDERR "gives the text model embeddings 5,120 wide \\(its projection's\\); qwen3-vl-8b takes 16,384 \\(its d_model 4,096 and as many again for each of its 3 deepstack layers\\): llama.cpp refuses the pair")
set_tests_properties(cli.engine_llama_cpp_mmproj_qwen_warmup cli.engine_llama_cpp_mmproj_qwen_largest
                     cli.engine_llama_cpp_image_tokens_fixed_size cli.engine_llama_cpp_qwen3vl
                     cli.engine_llama_cpp_qwen3vl_other_tower cli.engine_llama_cpp_qwen25vl_tower
                     cli.engine_llama_cpp_qwen25vl_largest PROPERTIES FIXTURES_REQUIRED gguf_files)
set_tests_properties(cli.engine_llama_cpp_mmproj cli.engine_llama_cpp_mmproj_text cli.engine_llama_cpp_mmproj_on_host
                     cli.engine_llama_cpp_mmproj_cpu cli.engine_llama_cpp_mmproj_as_model
                     cli.engine_llama_cpp_mmproj_not_a_tower cli.engine_llama_cpp_mmproj_projector
                     cli.engine_llama_cpp_mmproj_other_model PROPERTIES FIXTURES_REQUIRED gguf_files)
# Gemma 3 4B under llama-server: 4 slots over one unified cache of -c 32,768; its 29 sliding
# layers keep each slot's window of 1,024 and a micro-batch, 1,024 x 4 + 512 = 4,608 cells, its
# 5 global layers (every sixth) all 32,768: (5 x 32,768 + 29 x 4,608) x 4 KV heads x 256 x 2 B
# x (K + V) = 1,218,445,312 B.
cli_case(engine_llama_cpp_sliding_window_cells EXIT 0 ARGS estimate gemma-3-4b-it --engine llama.cpp
         --gpu rtx-4090 --llama-server --seq 32768 --format json STDERR_EMPTY
         STDOUT "\"name\": \"kv_cache\",\n +\"bytes\": 1218445312,.*\"cells\": 32768,\n +\"state_cells\": 0,\n +\"window_cells\": 4608,")
cli_case(engine_llama_cpp_sliding_window_text EXIT 0 ARGS estimate gemma-3-4b-it --engine llama.cpp
         --gpu rtx-4090 --llama-server --seq 32768
         STDOUT "KV cache 32,768 cells per global layer, 4,608 per sliding-window one")

# vLLM's hybrid KV cache manager for sliding-window and full-attention layers: vLLM 0.26.0's
# start-up of Gemma 4 31B (code-index id 63390294774) logged 182.37 GiB of KV cache, 217,116
# tokens and 13.25x at max_model_len 16,384. 182.37 GiB (195,817,719,889 B) / (10 layers x
# 262,144 B) = 74,698 blocks; a request 512 blocks in the full group and 5 x 1,025 in the sliding
# ones: 74,698 / 5,637 x 16,384 = 217,110 tokens.
cli_case(engine_vllm_sliding_hybrid EXIT 0 ARGS estimate gemma-4-31b-it --engine vllm --gpu 267.69GiB
         --language-model-only --kv-cache-memory-bytes 195817719889 --max-model-len 16384
         --max-num-batched-tokens 8192 --vllm-version 0.26 STDERR_EMPTY
         STDOUT "74,698 blocks.*GPU KV cache size: 217,110 tokens\n +Maximum concurrency for 16,384 tokens per request: 13.25x.*in 6 groups of 10")
# Without the manager every layer keeps max_model_len tokens: a block is 16 tokens of all 60
# layers (50 x 262,144 + 10 x 131,072 = 14,417,920 B): 13,581 blocks, 217,296 tokens, 13.26x.
cli_case(engine_vllm_sliding_hybrid_disabled EXIT 0 ARGS estimate gemma-4-31b-it --engine vllm --gpu 267.69GiB
         --language-model-only --kv-cache-memory-bytes 195817719889 --max-model-len 16384
         --max-num-batched-tokens 8192 --vllm-version 0.26 --disable-hybrid-kv-cache-manager STDERR_EMPTY
         STDOUT "13,581 blocks.*GPU KV cache size: 217,296 tokens\n +Maximum concurrency for 16,384 tokens per request: 13.26x")
# Gemma 4's tower prices an image at its budget, 280 tokens; vLLM's profile of it is not modelled.
cli_case(engine_gemma4_image_budget EXIT 0 ARGS estimate gemma-4-26b-a4b-it --gpu h100 --seq 1024 --images 2
         STDERR_EMPTY STDOUT "1024 text \\+ 2 images x 280 tokens = 1584.*images +280 tokens each, the tower's budget")
cli_case(engine_vllm_gemma4_tower_refused EXIT 2 ARGS estimate gemma-4-31b-it --engine vllm --gpu h100
         STDERR "not gemma-4-31b-it's yet: plan its language model alone with --language-model-only")
# Over 8 ranks Gemma 4 31B's 4 full-attention KV heads of 512 are replicated, one a rank (2 x 512
# x 2 B = 2,048 B a token), as its 16 sliding heads of 256 are split to 2 (2 x 2 x 256 x 2 B):
# the pages are equal, 16 tokens each.
cli_case(engine_vllm_sliding_hybrid_tp8 EXIT 0 ARGS estimate gemma-4-31b-it --engine vllm --gpu h100 --tp 8
         --language-model-only --max-model-len 32768 STDERR_EMPTY
         STDOUT "a block a page of 32,768 B in each; a page holds 16 tokens of a full layer, 16 of a sliding one")
