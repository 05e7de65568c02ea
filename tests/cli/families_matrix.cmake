# Every workload on every built-in model of the per-layer families: each estimate exits 0
# with a JSON estimate; the n^2 Hessian and full Fisher of a whole model exit 0 too, or 2
# when their bytes pass 2^64, saying how many parameters would fit. On the state-space
# models, the workloads made of attention or TransformerLens hooks exit 2 saying why (on a
# hybrid, those made of hooks); on
# the encoder-decoders, every workload but inference, generation and training exits 2 saying
# it is not priced yet. The vision-language models run every workload on text, and
# inference, generation and training with images too.
# -DMEMPLAN=<binary>
cmake_minimum_required(VERSION 3.25)

set(models qwen3-8b qwen3-30b-a3b gemma-2-9b gemma-3-1b-it gpt-oss-20b deepseek-v2-lite deepseek-v3
           olmo-2-1124-7b olmoe-1b-7b-0924 bloom-560m stablelm-3b-4e1t granite-3.3-8b-instruct gpt-neo-125m
           gpt-j-6b starcoder2-15b aya-expanse-8b phi-3.5-moe-instruct mamba-130m-hf mamba-codestral-7b
           t5-small flan-t5-base bart-large whisper-tiny qwen2-vl-2b-instruct qwen2.5-vl-3b-instruct
           gemma-3-4b-it paligemma-3b-pt-224 llava-v1.6-mistral-7b-hf wizardcoder-15b-v1.0
           granite-3.1-1b-a400m-instruct llama-4-maverick-17b-128e-instruct c4ai-command-r7b-12-2024
           nemotron-h-8b-base-8k falcon-h1-0.5b-instruct zamba2-1.2b smolvlm-256m-instruct)
set(vision_language qwen2-vl-2b-instruct qwen2.5-vl-3b-instruct gemma-3-4b-it paligemma-3b-pt-224
                    llava-v1.6-mistral-7b-hf smolvlm-256m-instruct)
set(state_space mamba-130m-hf mamba-codestral-7b)
set(hybrid nemotron-h-8b-base-8k falcon-h1-0.5b-instruct zamba2-1.2b)  # attention and Mamba layers: no TransformerLens hooks
set(encoder_decoder t5-small flan-t5-base bart-large whisper-tiny)
set(attention_only extraction streaming_extraction attention_patterns qkov)
set(workloads inference generation extraction streaming_extraction training sae fisher_spectrum grouped_fisher
              lanczos sample_gradients tracin attention_patterns qkov embedding_singularities fiber_bundle
              superposition cka)
set(runs 0)
foreach(model IN LISTS models)
  set(seq 512)
  if(model STREQUAL "whisper-tiny")
    set(seq 1500)  # its encoder reads 30 s of audio: 1500 positions, no other length
  endif()
  foreach(workload IN LISTS workloads)
    execute_process(COMMAND "${MEMPLAN}" estimate ${model} -w ${workload} --seq ${seq} --format json
                    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
    if(model IN_LIST encoder_decoder AND NOT workload MATCHES "^(inference|generation|training)$")
      if(NOT rc EQUAL 2 OR NOT err MATCHES "`${workload}` on ${model} is not priced yet" OR NOT out STREQUAL "")
        message(FATAL_ERROR "estimate ${model} -w ${workload}: exit ${rc}, expected 2 saying it is not priced: ${err}")
      endif()
      continue()
    endif()
    if((model IN_LIST state_space AND workload IN_LIST attention_only)
       OR (model IN_LIST hybrid AND workload MATCHES "extraction$"))
      if(NOT rc EQUAL 2 OR NOT err MATCHES "(do|does) not apply to ${model}" OR NOT out STREQUAL "")
        message(FATAL_ERROR "estimate ${model} -w ${workload}: exit ${rc}, expected 2 saying it does not apply: ${err}")
      endif()
      continue()
    endif()
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "estimate ${model} -w ${workload} exited ${rc}: ${err}")
    endif()
    string(JSON total GET "${out}" total_bytes)
    if(NOT total GREATER 0)
      message(FATAL_ERROR "estimate ${model} -w ${workload}: total_bytes ${total}")
    endif()
    math(EXPR runs "${runs} + 1")
    if(model IN_LIST vision_language AND workload MATCHES "^(inference|generation|training)$")
      execute_process(COMMAND "${MEMPLAN}" estimate ${model} -w ${workload} --seq ${seq} --images 2
                              --image-size 640x480 --format json
                      OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
      # Qwen's: 644 x 476, 46 x 34 patches / 4 = 391 tokens; Gemma 3's and PaliGemma's: 256, any
      # size; LLaVA-NeXT's: 672 x 672 tiles, 36 x 48 unpadded + 36 newlines + 576 = 2340; SmolVLM's:
      # 2048 x 1536, 4 x 3 tiles of 64 tokens and 2 markers, 3 newlines, the whole's 64 and 3 = 862.
      if(NOT rc EQUAL 0 OR NOT out MATCHES "\"image_tokens\": (391|256|2340|862),")
        message(FATAL_ERROR "estimate ${model} -w ${workload} with images exited ${rc}: ${err}")
      endif()
      math(EXPR runs "${runs} + 1")
    endif()
  endforeach()
  foreach(workload hessian full_fisher)
    execute_process(COMMAND "${MEMPLAN}" estimate ${model} -w ${workload} --seq ${seq}
                    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
    if(model IN_LIST encoder_decoder)
      if(NOT rc EQUAL 2 OR NOT err MATCHES "is not priced yet")
        message(FATAL_ERROR "estimate ${model} -w ${workload}: exit ${rc}, expected 2 saying it is not priced: ${err}")
      endif()
      continue()
    endif()
    if(NOT rc EQUAL 0 AND NOT (rc EQUAL 2 AND err MATCHES "at most [0-9,]+ parameters fit"))
      message(FATAL_ERROR "estimate ${model} -w ${workload}: exit ${rc}: ${err}")
    endif()
  endforeach()
endforeach()
message(STATUS "${runs} estimates")
