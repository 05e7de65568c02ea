# Per-layer architectures from the command line: imports of the new families, caches per
# kind of layer, the latent-attention convention and LoRA on latent attention.
add_test(NAME cli.families_every_workload
         COMMAND "${CMAKE_COMMAND}" "-DMEMPLAN=$<TARGET_FILE:memplan>" -P "${CMAKE_CURRENT_SOURCE_DIR}/families_matrix.cmake")
set_tests_properties(cli.families_every_workload PROPERTIES LABELS cli)

set(hf "${PROJECT_SOURCE_DIR}/tests/data/hf")
cli_case(import_qwen3 EXIT 0 ARGS import "${hf}/qwen3-8b/config.json"
         STDOUT "family: qwen3\n.*d_head: 128\n.*qk_norm: head\n")
cli_case(import_deepseek_v3 EXIT 0 ARGS import "${hf}/deepseek-v3/config.json"
         STDOUT "# num_nextn_predict_layers 1: [^\n]*not counted.*family: deepseek\n.*first_dense_layers: 3\n.*kv_lora_rank: 512\n")
cli_case(import_llama4_pattern EXIT 0 ARGS import "${hf}/llama-4-scout-17b-16e/config.json"
         STDOUT "vision tower and its projector are not counted.*attention_chunk: 8192\nglobal_every: 4\nglobal_attention: nope\n")
# gemma-2-9b, 4096 prompt + 4096 new tokens, at the last decode step: 21 layers x 2 x 8 heads x
# 256 x 4096 tokens x 2 B = 672 MiB sliding, the same at 8192 tokens = 1.31 GiB full.
cli_case(kv_per_layer_kind EXIT 0 ARGS estimate gemma-2-9b -w generation --seq 4096 --new-tokens 4096
         STDOUT "kv_cache +1\\.97 GiB[^\n]*\n +sliding_layers +672\\.00 MiB[^\n]*\n +full_layers +1\\.31 GiB.*note: sliding_layers: capped at the model's 4096-token sliding window")
# One pass over an 8192-token prompt: transformers' sliding layers keep a 4095-token slice of
# the prompt's keys and values whose storage is all 8192 tokens' (measured on an H200,
# docs/accuracy.md), so they hold as much as the full layers, 1.31 GiB each.
cli_case(kv_sliding_after_prefill EXIT 0 ARGS estimate gemma-2-9b --seq 8192
         STDOUT "kv_cache +2\\.62 GiB[^\n]*\n +sliding_layers +1\\.31 GiB[^\n]*\n +full_layers +1\\.31 GiB.*note: sliding_layers: the whole prompt")
# DeepSeek-V3 at 32768 tokens, latent (the default): 61 layers x (512 + 64) x 32768 x 2 B = 2,302,672,896 B.
cli_case(mla_cache_latent EXIT 0 ARGS estimate deepseek-v3 --seq 32768 --format json
         STDOUT "\"name\": \"kv_cache\",[^}]*\"bytes\": 2302672896")
# Decompressed (transformers before #47761): 61 x 128 heads x (192 + 128) x 32768 x 2 B = 163,745,628,160 B.
cli_case(mla_cache_decompressed EXIT 0 ARGS estimate deepseek-v3 --seq 32768 --mla-cache decompressed --format json
         STDOUT "\"name\": \"kv_cache\",[^}]*\"bytes\": 163745628160")
cli_case(mla_cache_bad_value EXIT 2 ARGS estimate deepseek-v3 --mla-cache compressed
         STDERR "unknown MLA cache convention 'compressed'; accepted: 'latent' or 'decompressed'")
cli_case(mla_cache_needs_mla EXIT 2 ARGS estimate llama-2-7b --mla-cache latent
         STDERR "--mla-cache applies to models with multi-head latent attention \\(DeepSeek-V2 and V3\\); llama-2-7b has none")
# LoRA rank 16 on q and kv_b (no v projection): 27 layers x 16 x ((2048 + 3072) + (512 + 4096)).
cli_case(lora_on_latent_attention EXIT 0 ARGS estimate deepseek-v2-lite -w training --lora-rank 16 --seq 256
         STDOUT "lora_adapters +4,202,496 ")
cli_case(lora_latent_bad_target EXIT 2 ARGS estimate deepseek-v2-lite -w training --lora-rank 16 --lora-targets q,v
         STDERR "unknown LoRA target 'v' for deepseek-v2-lite; accepted: 'q', 'kv_a', 'kv_b', 'o'")

# Unknown model_types: refused without a did-you-mean; --as reads one as a known family and
# lists the keys it did not use. SmolLM3-3B read as llama: 3,075,098,624 parameters (the
# hand-derived sum in tests/data/hf-unknown/README.md, SmolLM3-3B-Base's published count).
set(unknown "${PROJECT_SOURCE_DIR}/tests/data/hf-unknown")
cli_case(unknown_model_type_refused EXIT 2 ARGS estimate "${unknown}/smollm3-3b/config.json"
         STDERR "unsupported model_type 'smollm3'; memplan imports .*--as MODEL_TYPE reads it as that one")
cli_case(as_llama_counts_and_warns EXIT 0 ARGS estimate "${unknown}/smollm3-3b/config.json" --as llama -w weights
         STDOUT "total +3,075,098,624 .*warning: model_type 'smollm3' read as 'llama' \\(--as\\): memplan did not use [^\n]*'no_rope_layer_interval', 'no_rope_layers'[^\n]*; any tensors they describe are not counted")
cli_case(as_llama_json_warning EXIT 0 ARGS estimate "${unknown}/smollm3-3b/config.json" --as llama --format json
         STDOUT "\"params\": 3075098624.*\"warnings\": \\[[^]]*read as 'llama'")
cli_case(as_import_writes_the_warning EXIT 0 ARGS import "${unknown}/smollm3-3b/config.json" --as llama
         STDOUT "# model_type 'smollm3' read as 'llama' \\(--as\\): memplan did not use .*\nfamily: llama\n")
cli_case(as_unknown_target EXIT 2 ARGS estimate "${unknown}/smollm3-3b/config.json" --as llamma
         STDERR "--as llamma is not a model_type memplan imports; it imports 'bert'")
cli_case(as_on_a_known_model_type EXIT 2 ARGS estimate "${hf}/llama-2-7b/config.json" --as mistral
         STDERR "model_type 'llama' is one memplan imports: --as mistral applies to model_types it does not know")
cli_case(as_on_a_builtin EXIT 2 ARGS estimate llama-2-7b --as llama
         STDERR "--as applies to a Hugging Face config.json, a snapshot or a Hub id; 'llama-2-7b' is a built-in model")

# Expert parallelism (training). qwen3-30b-a3b, dp 8, ep 8: a GPU holds 16 of 128 experts.
# Per layer: attention 2 x 2048 x 4096 + 2 x 2048 x 512 = 18,874,368; norms 2 x 2048 + 2 x 128;
# router 2048 x 16; experts 16 x 3 x 2048 x 768 = 75,497,472: 94,408,960 x 48 layers, plus
# embeddings and head 2 x 151,936 x 2048 and the final norm: 5,153,961,984 parameters.
cli_case(ep_splits_experts EXIT 0 ARGS estimate qwen3-30b-a3b -w training --dp 8 --ep 8 --format json
         STDOUT "\"name\": \"weights\",[^}]*\"params\": 5153961984")
# tp 2 splits the experts' width: attention 2 x 2048 x 2048 + 2 x 2048 x 256, router 2048 x 128,
# experts 128 x 3 x 2048 x 384 (311,693,568 a layer with the norms), the vocabulary padded to
# 152,064 and halved: 48 x 311,693,568 + 2 x 76,032 x 2048 + 2048 = 15,272,720,384.
cli_case(tp_splits_expert_width EXIT 0 ARGS estimate qwen3-30b-a3b -w training --tp 2 --format json
         STDOUT "\"name\": \"weights\",[^}]*\"params\": 15272720384")
cli_case(ep_needs_experts EXIT 2 ARGS estimate llama-2-7b -w training --dp 2 --ep 2
         STDERR "llama-2-7b has no experts: --ep applies to mixture-of-experts models")
cli_case(ep_divides_dp EXIT 2 ARGS estimate qwen3-30b-a3b -w training --dp 4 --ep 8
         STDERR "--ep 8 must divide --dp 4")
cli_case(ep_divides_experts EXIT 2 ARGS estimate qwen3-30b-a3b -w training --dp 3 --ep 3
         STDERR "128 experts do not split evenly over 3 GPUs: --ep must divide the experts")
# ZeRO-1 over dp 8 with ep 4: a GPU holds 32 of the 128 experts, 48 x 32 x 3 x 2048 x 768 =
# 7,247,757,312 parameters, whose states shard over the 8 / 4 = 2 replicas holding the same
# experts; the other 1,531,656,192 (attention 18,874,368, norms 4,352 and router 2048 x 32 a
# layer; embeddings, head and final norm 622,331,904) over all 8. The fp32 master copy:
# (1,531,656,192 / 8 + 7,247,757,312 / 2) x 4 B = 3,815,335,680 x 4 B.
cli_case(ep_with_zero EXIT 0 ARGS estimate qwen3-30b-a3b -w training --dp 8 --ep 4 --zero 1 --format json
         STDOUT "\"name\": \"master_weights\",[^}]*\"bytes\": 15261342720,")
cli_case(ep_divides_shard_group EXIT 2 ARGS estimate qwen3-30b-a3b -w training --dp 8 --ep 4 --fsdp hybrid
         --shard-group 2 STDERR "--ep must divide the sharding group")
cli_case(check_plan_model_as EXIT 0 ARGS check "${PROJECT_SOURCE_DIR}/tests/cli/data/plans/unknown-model-type-as-llama.yaml" --format json
         STDOUT "\"total_bytes\": 6150197760,.*\"notes\": \\[[^]]*read as 'llama' \\('model_as'\\)")
cli_case(check_plan_model_as_unknown EXIT 2 ARGS check "${PROJECT_SOURCE_DIR}/tests/cli/data/plans/model-as-unknown.yaml"
         STDERR "model-as-unknown\\.yaml:3:11: 'model_as' lama is not a model_type memplan imports")

# State-space and hybrid models. Codestral Mamba's config holds Python's Infinity.
cli_case(import_mamba2_with_infinity EXIT 0 ARGS import "${hf}/mamba-codestral-7b/config.json"
         STDOUT "family: mamba2\n.*mlp: none\n.*ssm_version: 2\nssm_d_inner: 8192\nssm_d_state: 128\n")
cli_case(import_bamba_layers EXIT 0 ARGS import "${hf}/bamba-9b/config.json"
         STDOUT "family: bamba\n.*layer_types: \\[mamba, mamba, mamba, mamba, mamba, mamba, mamba, mamba, mamba, full, ")
# mamba-130m-hf, batch 2, bf16: 24 x 2 x (1536 x 4 + 1536 x 16) x 2 B = 2,949,120 B at any length.
cli_case(mamba_state_fixed_short EXIT 0 ARGS estimate mamba-130m-hf -w generation --batch 2 --seq 128 --format json
         STDOUT "\"name\": \"ssm_state\",[^}]*\"bytes\": 2949120,")
cli_case(mamba_state_fixed_long EXIT 0 ARGS estimate mamba-130m-hf -w generation --batch 2 --seq 65536 --format json
         STDOUT "\"name\": \"ssm_state\",[^}]*\"bytes\": 2949120,")
# LoRA on a model without attention: in_proj and out_proj by default, rank 16:
# 24 x (16 x 768 + 3072 x 16 + 16 x 1536 + 768 x 16) = 2,359,296.
cli_case(mamba_lora_default_targets EXIT 0 ARGS estimate mamba-130m-hf -w training --lora-rank 16 --seq 256
         STDOUT "lora_adapters +2,359,296 ")
cli_case(zamba2_vllm_refused EXIT 2 ARGS estimate zamba2-1.2b --engine vllm --gpu h100 STDOUT_EMPTY
         STDERR "does not price Zamba2's shared attention blocks' cache")
cli_case(mamba_tp_refused EXIT 2 ARGS estimate mamba-codestral-7b -w training --tp 2 STDOUT_EMPTY
         STDERR "does not split over tensor-parallel ranks")
cli_case(mamba_hooks_refused EXIT 2 ARGS hooks mamba-130m-hf STDOUT_EMPTY
         STDERR "TransformerLens has no hook points for state-space \\(Mamba\\) layers")
# Jamba-v0.1: attention on layers 4, 12, 20 and 28, experts on every odd layer.
cli_case(import_jamba_layers EXIT 0 ARGS import "${hf}/jamba-v0.1/config.json"
         STDOUT "family: jamba\n.*experts: 16\n.*moe_every: 2\n.*ssm_dt_bc_norms: true\nlayer_types: \\[mamba, mamba, mamba, mamba, full, mamba, ")
# device_map over two A10s puts Bamba's layers 0-14 on gpu 0: 14 Mamba layers' state,
# 14 x (8448 x 4 + 8192 x 128) x 2 B, and layer 9's keys and values after an 8192-token
# prefill, 2 x 8 x 128 x 8192 x 2 B: 63,860,736 B, not 15/32 of the whole.
cli_case(device_map_hybrid_cache_by_layer EXIT 0
         ARGS estimate "${hf}/bamba-9b/config.json" --device-map balanced --gpus a10,a10 -w generation --seq 8192
              --format json
         STDOUT "\"holds\": \"token_embedding, layers 0-14\",.*\"name\": \"kv_cache\",[^}]*\"bytes\": 63860736,")

# LLaVA-1.5-7B: the CLIP tower (303,507,456) and the projector (20,979,712) beside Vicuna-7B.
cli_case(llava_tower_and_projector EXIT 0 ARGS estimate "${hf}/llava-1.5-7b-hf/config.json" -w weights
         STDOUT "7,063,427,072 parameters.*vision +303,507,456 .*projector +20,979,712 ")
# Images: LLaVA's are 576 tokens each, whatever their size; LoRA training leaves the tower frozen.
cli_case(llava_images_lora EXIT 0
         ARGS estimate "${hf}/llava-1.5-7b-hf/config.json" -w training --lora-rank 16 --images 2 --seq 512
         STDOUT "batch 1 x \\(512 text \\+ 2 images x 576 tokens = 1664\\) tokens\n.*images +336x336 px .*base frozen")
# Qwen2-VL: 1280x720 becomes 1288x728 (multiples of 28), 92 x 52 patches, 1196 tokens.
cli_case(qwen2_vl_images EXIT 0
         ARGS estimate qwen2-vl-2b-instruct --images 2 --image-size 1280x720 --seq 256
         STDOUT "batch 1 x \\(256 text \\+ 2 images x 1196 tokens = 2648\\) tokens\nimages +1288x728 px .*vision_tower_phase")
cli_case(qwen2_vl_images_json EXIT 0
         ARGS estimate qwen2-vl-2b-instruct --images 1 --image-size 1920x1080 --max-pixels 1003520 --format json
         STDOUT "\"images\": 1,\n *\"image_tokens\": 1222,\n *\"image_size\": {\n *\"width\": 1316,")
# Gemma 3: four 896 x 896 images of 256 tokens; SigLIP's pass over 4 x 4096 patches outgrows
# the language model's generation step.
cli_case(gemma3_images_tower_peak EXIT 0 ARGS estimate gemma-3-4b-it --images 4 --seq 512 -w generation
         STDOUT "\\(512 text \\+ 4 images x 256 tokens = 1536\\) tokens \\+ 256 generated\n.*forward_workspace .*pixel_values .*language_model_phase")
# LLaVA-NeXT: 1280x720 is four 336-pixel tiles of 672x672 and the whole, 1948 tokens.
cli_case(llava_next_tiles EXIT 0 ARGS estimate llava-v1.6-mistral-7b-hf --images 1 --image-size 1280x720 --seq 100
         STDOUT "\\(100 text \\+ 1 image x 1948 tokens = 2048\\) tokens\nimages +672x672 px as the tower sees them \\(4 tiles of it and the whole, resized\\)")
# fit --vary seq leaves the images their tokens: 32768 - 2 x 1196 = 30376 text tokens at most.
cli_case(qwen2_vl_fit_leaves_image_tokens EXIT 0
         ARGS fit qwen2-vl-2b-instruct --images 2 --image-size 1280x720 --gpu h100 --vary seq
         STDOUT "result +seq 30376 fits")
cli_case(qwen2_vl_plan_file EXIT 0 ARGS check "${PROJECT_SOURCE_DIR}/tests/cli/data/plans/qwen2-vl-images.yaml"
         STDOUT "^PASS [^\n]*qwen2-vl-images\\.yaml +qwen2-vl-2b-instruct generation")
cli_case(qwen2_vl_plan_file_bad_image_size EXIT 2
         ARGS check "${PROJECT_SOURCE_DIR}/tests/cli/data/plans/qwen2-vl-bad-image-size.yaml" STDOUT_EMPTY
         STDERR "qwen2-vl-bad-image-size\\.yaml:6:15: 'image_size': must be WIDTHxHEIGHT")
cli_case(images_on_vllm_refused EXIT 2
         ARGS estimate qwen2-vl-2b-instruct --images 1 --image-size 300x300 --engine vllm --gpu h100 STDOUT_EMPTY
         STDERR "memplan's vLLM policy does not price a vision tower's images yet")
cli_case(qwen2_vl_needs_image_size EXIT 2 ARGS estimate qwen2-vl-2b-instruct --images 1 STDOUT_EMPTY
         STDERR "image tokens depend on each image's size: give --image-size WxH")
cli_case(image_size_malformed EXIT 2 ARGS estimate qwen2-vl-2b-instruct --images 1 --image-size 1280by720
         STDOUT_EMPTY STDERR "--image-size: must be WIDTHxHEIGHT in pixels")
cli_case(images_on_a_text_model EXIT 2 ARGS estimate llama-2-7b --images 1 STDOUT_EMPTY
         STDERR "llama-2-7b has no vision tower: --images applies to vision-language models")
cli_case(llava_tp_refused EXIT 2 ARGS estimate "${hf}/llava-1.5-7b-hf/config.json" -w training --tp 2 STDOUT_EMPTY
         STDERR "has a vision tower, which memplan's multi-GPU training layouts do not place")

# Encoder-decoders. A T5 generation step: t5-small in bf16 keeps the cross-attention's keys
# and values of the 128 source positions, 6 layers x 2 x 8 heads x 64 x 128 x 2 B = 1,572,864,
# after 64 generated tokens and after 128; its self-attention cache grows, 12,288 B a token.
cli_case(t5_cross_cache_after_64 EXIT 0
         ARGS estimate t5-small -w generation --source-len 128 --new-tokens 64 -p bf16 --format json
         STDOUT "\"name\": \"full_layers\",[^}]*\"bytes\": 786432,.*\"name\": \"cross_layers\",[^}]*\"bytes\": 1572864,")
cli_case(t5_cross_cache_after_128 EXIT 0
         ARGS estimate t5-small -w generation --source-len 128 --new-tokens 128 -p bf16 --format json
         STDOUT "\"name\": \"full_layers\",[^}]*\"bytes\": 1572864,.*\"name\": \"cross_layers\",[^}]*\"bytes\": 1572864,")
cli_case(t5_workload_line EXIT 0 ARGS estimate t5-small -w generation --source-len 128 --new-tokens 64
         STDOUT "workload   generation: batch 1 x 128 source positions \\(encoder\\) -> 64 target tokens generated")
cli_case(whisper_source_is_fixed EXIT 2 ARGS estimate whisper-tiny --seq 3000 STDOUT_EMPTY
         STDERR "whisper-tiny's audio encoder reads exactly 1500 positions")
cli_case(source_len_and_seq EXIT 2 ARGS estimate t5-small --seq 128 --source-len 256 STDOUT_EMPTY
         STDERR "--source-len is another name for --seq: give one of them")
cli_case(target_len_on_a_decoder EXIT 2 ARGS estimate gpt2 --target-len 16 STDOUT_EMPTY
         STDERR "--target-len applies to encoder-decoder models")
cli_case(encoder_decoder_sae_refused EXIT 2 ARGS estimate flan-t5-base -w sae STDOUT_EMPTY
         STDERR "`sae` on flan-t5-base is not priced yet")
# LoRA r=8 on T5's q and v: every stack's (PEFT prints 884,736 trainable for flan-t5-base).
cli_case(encoder_decoder_lora EXIT 0 ARGS estimate flan-t5-base -w training --lora-rank 8 --target-len 128
         STDOUT "lora_adapters +884,736 ")
cli_case(encoder_decoder_layout_refused EXIT 2 ARGS estimate bart-large --device-map balanced --gpus a10,a10
         STDOUT_EMPTY STDERR "bart-large is an encoder-decoder \\(12 encoder layers, 12 decoder layers\\)")
cli_case(import_whisper EXIT 0 ARGS import "${hf}/whisper-tiny/config.json"
         STDOUT "family: whisper\n.*encoder_layers: 4\nencoder_positions: 1500\nencoder_mel_bins: 80\n.*attn_k_bias: false")
# fit over the source: T5's is searched up to the length it was trained at (not the
# decoder's context minus the target); Whisper's cannot vary.
cli_case(fit_t5_source EXIT 0 ARGS fit t5-small -w generation --vary seq --gpu a10
         STDOUT "result     seq 512 fits")
cli_case(fit_whisper_source_fixed EXIT 2 ARGS fit whisper-tiny -w generation --vary seq --gpu a10 STDOUT_EMPTY
         STDERR "reads exactly 1500 positions: its source cannot vary")
cli_case(recommend_encoder_decoder_line EXIT 0 ARGS recommend flan-t5-base -w training --gpu t4 --batch 32
         STDOUT "plan       flan-t5-base training: batch 32 x 512 source positions -> 512 target tokens")
