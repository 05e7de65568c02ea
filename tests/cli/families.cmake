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
# gemma-2-9b at 8192 tokens: 21 layers x 2 x 8 heads x 256 x 4096 tokens x 2 B = 672 MiB
# sliding, the same at 8192 tokens = 1.31 GiB full.
cli_case(kv_per_layer_kind EXIT 0 ARGS estimate gemma-2-9b --seq 8192
         STDOUT "kv_cache +1\\.97 GiB[^\n]*\n +sliding_layers +672\\.00 MiB[^\n]*\n +full_layers +1\\.31 GiB.*note: sliding_layers: capped at the model's 4096-token sliding window")
# DeepSeek-V3 at 32768 tokens, latent: 61 layers x (512 + 64) x 32768 x 2 B = 2,302,672,896 B.
cli_case(mla_cache_latent EXIT 0 ARGS estimate deepseek-v3 --seq 32768 --mla-cache latent --format json
         STDOUT "\"name\": \"kv_cache\",[^}]*\"bytes\": 2302672896")
# Decompressed (transformers): 61 x 128 heads x (192 + 128) x 32768 x 2 B = 163,745,628,160 B.
cli_case(mla_cache_decompressed EXIT 0 ARGS estimate deepseek-v3 --seq 32768 --format json
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
