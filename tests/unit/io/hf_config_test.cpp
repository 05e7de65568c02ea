#include "memplan/io/hf_config.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <tuple>

#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/io/model_file.hpp"

namespace memplan {
namespace hf_config_test {

namespace fs = std::filesystem;

// tests/data/hf/NAME/config.json: written from each shipped model's published config.json
// (tests/data/hf/README.md cites them).
const fs::path kHf = fs::path(MEMPLAN_TEST_FIXTURES) / "hf";

// Every field that sizes a parameter or a cache; activation is informational and named
// differently by the configs (Gemma's "gelu" is gelu_tanh), the name comes from the file.
void expect_same_architecture(const ModelSpec& got, const ModelSpec& want) {
  EXPECT_EQ(to_string(got.family), to_string(want.family));
  EXPECT_EQ(got.d_model, want.d_model);
  EXPECT_EQ(got.n_layers, want.n_layers);
  EXPECT_EQ(got.n_heads, want.n_heads);
  EXPECT_EQ(got.n_kv_heads, want.n_kv_heads);
  EXPECT_EQ(got.d_head, want.d_head);
  EXPECT_EQ(got.d_mlp, want.d_mlp);
  EXPECT_EQ(to_string(got.mlp), to_string(want.mlp));
  EXPECT_EQ(got.vocab_size, want.vocab_size);
  EXPECT_EQ(got.max_seq_len, want.max_seq_len);
  EXPECT_EQ(to_string(got.positional), to_string(want.positional));
  EXPECT_EQ(got.n_positions, want.n_positions);
  EXPECT_EQ(to_string(got.norm), to_string(want.norm));
  EXPECT_EQ(got.norms_per_layer, want.norms_per_layer);
  EXPECT_EQ(got.parallel_block, want.parallel_block);
  EXPECT_EQ(got.final_norm, want.final_norm);
  EXPECT_EQ(got.embedding_norm, want.embedding_norm);
  EXPECT_EQ(got.type_vocab_size, want.type_vocab_size);
  EXPECT_EQ(got.pooler, want.pooler);
  EXPECT_EQ(got.attn_qkv_bias, want.attn_qkv_bias);
  EXPECT_EQ(got.attn_out_bias, want.attn_out_bias);
  EXPECT_EQ(got.mlp_bias, want.mlp_bias);
  EXPECT_EQ(to_string(got.lm_head), to_string(want.lm_head));
  EXPECT_EQ(got.lm_head_bias, want.lm_head_bias);
  EXPECT_EQ(got.experts, want.experts);
  EXPECT_EQ(got.experts_per_token, want.experts_per_token);
  EXPECT_EQ(got.sliding_window, want.sliding_window);
  EXPECT_EQ(to_string(got.qk_norm), to_string(want.qk_norm));
  EXPECT_EQ(got.d_expert, want.d_expert);
  EXPECT_EQ(got.d_shared_expert, want.d_shared_expert);
  EXPECT_EQ(got.first_dense_layers, want.first_dense_layers);
  EXPECT_EQ(got.moe_every, want.moe_every);
  EXPECT_EQ(got.router_bias, want.router_bias);
  EXPECT_EQ(got.attention_chunk, want.attention_chunk);
  EXPECT_EQ(got.global_every, want.global_every);
  EXPECT_EQ(to_string(got.global_attention), to_string(want.global_attention));
  EXPECT_EQ(attention_layer_counts(got), attention_layer_counts(want));
  EXPECT_EQ(got.layer_types, want.layer_types);
  EXPECT_EQ(got.mla.q_lora_rank, want.mla.q_lora_rank);
  EXPECT_EQ(got.mla.kv_lora_rank, want.mla.kv_lora_rank);
  EXPECT_EQ(got.mla.qk_nope_head_dim, want.mla.qk_nope_head_dim);
  EXPECT_EQ(got.mla.qk_rope_head_dim, want.mla.qk_rope_head_dim);
  EXPECT_EQ(got.mla.v_head_dim, want.mla.v_head_dim);
  EXPECT_EQ(got.attention_sinks, want.attention_sinks);
  EXPECT_EQ(got.final_logit_softcapping, want.final_logit_softcapping);
  EXPECT_EQ(got.mtp_layers, want.mtp_layers);
  EXPECT_EQ(got.ssm, want.ssm);
  EXPECT_EQ(got.parallel_ssm, want.parallel_ssm);
  EXPECT_EQ(got.shared, want.shared);
  EXPECT_EQ(got.vision, want.vision);
  EXPECT_EQ(got.encoder, want.encoder);
  EXPECT_EQ(got.relative_buckets, want.relative_buckets);
  EXPECT_EQ(got.rotary_dim, want.rotary_dim);
  EXPECT_EQ(got.attn_k_bias, want.attn_k_bias);
}

ConfigError import_error(const std::string& json) {
  try {
    parse_hf_config(json, "config.json", "test");
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted:\n" << json;
  return ConfigError("", 0, 0, "", "");
}

// A valid Llama config, one key per line, to which tests add or replace lines.
std::string llama_config(const std::string& extra = "") {
  return "{\n"
         "  \"model_type\": \"llama\",\n"
         "  \"hidden_size\": 4096,\n"
         "  \"num_hidden_layers\": 32,\n"
         "  \"num_attention_heads\": 32,\n"
         "  \"intermediate_size\": 11008,\n"
         "  \"vocab_size\": 32000,\n" +
         extra +
         "  \"max_position_embeddings\": 4096\n"
         "}\n";
}

// The published architectures: each fixture imports to the shipped model, field for field,
// and its count is the published figure.
TEST(HfConfig, EveryShippedModelImportsToItsPublishedCount) {
  std::size_t checked = 0;
  for (const std::string& name : builtin_model_names()) {
    const fs::path config = kHf / name / "config.json";
    if (!fs::exists(config)) continue;
    SCOPED_TRACE(name);
    const ModelEntry shipped = load_builtin_model(name);
    const HfImport imported = load_hf_config(config.string());
    expect_same_architecture(imported.entry.spec, shipped.spec);
    const std::uint64_t count = count_parameters(imported.entry.spec);
    EXPECT_EQ(count, shipped.published_params.value_or(count_parameters(shipped.spec)));
    EXPECT_EQ(imported.entry.origin, config.string());
    EXPECT_EQ(imported.entry.source, config.string());
    ++checked;
  }
  EXPECT_EQ(checked, builtin_model_names().size()) << "every shipped model has a config.json fixture";
  for (const char* required : {"llama-2-7b", "mistral-7b-v0.1", "mixtral-8x7b-v0.1", "gpt2", "pythia-70m",
                               "qwen2.5-0.5b", "gemma-2b", "phi-2", "falcon-7b", "bert-base-uncased"}) {
    EXPECT_TRUE(fs::exists(kHf / required / "config.json")) << required;
  }
}

TEST(HfConfig, PublishedFiguresForTheMainFamilies) {
  const auto params = [](const char* name) {
    return count_parameters(load_hf_config((kHf / name / "config.json").string()).entry.spec);
  };
  EXPECT_EQ(params("llama-2-7b"), 6738415616ULL);
  EXPECT_EQ(params("mistral-7b-v0.1"), 7241732096ULL);
  EXPECT_EQ(params("mixtral-8x7b-v0.1"), 46702792704ULL);
  EXPECT_EQ(params("gpt2"), 124439808ULL);
  EXPECT_EQ(params("pythia-70m"), 70426624ULL);
  EXPECT_EQ(params("qwen2.5-0.5b"), 494032768ULL);
  EXPECT_EQ(params("gemma-2b"), 2506172416ULL);
  EXPECT_EQ(params("phi-2"), 2779683840ULL);
  EXPECT_EQ(params("bert-base-uncased"), 109482240ULL);
  // No exact published figure: 6.92B on a deduplicated mirror's page (configs/models/falcon-7b.yaml).
  EXPECT_EQ(params("falcon-7b"), count_parameters(load_builtin_model("falcon-7b").spec));
}

// Nemotron-H's pattern has a letter per layer: M, * or -; E (Nemotron 3's experts) and a
// pattern of the wrong length are refused at the key.
TEST(HfConfig, NemotronHPatternIsCheckedLetterByLetter) {
  const auto import = [](const std::string& pattern) {
    return parse_hf_config(R"({"model_type": "nemotron_h", "hidden_size": 256, "num_hidden_layers": 3,
        "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 512, "vocab_size": 1000,
        "mamba_num_heads": 8, "mamba_head_dim": 32, "n_groups": 2, "ssm_state_size": 16,
        "hybrid_override_pattern": ")" +
                               pattern + "\"}",
                           "n.json", "n");
  };
  const ModelSpec s = import("M*-").entry.spec;
  // 256 x 256 embeddings and head; a Mamba-2 layer of 8 x 32 = 256 wide, conv over 256 + 2 x 2 x 16
  // = 320 channels; attention 2 x 256 x 256 + 2 x 256 x 128; an MLP 2 x 256 x 512; 3 + 1 norms.
  const std::uint64_t mamba = 256ULL * (256 + 320 + 8) + 320 * 4 + 320 + 3 * 8 + 256 + 256ULL * 256;
  EXPECT_EQ(count_parameters(s), 2 * 1000ULL * 256 + mamba + (2 * 256 * 256 + 2 * 256 * 128) + 2 * 256 * 512 + 4 * 256);
  // A layer of experts (Nemotron 3) needs the experts' sizes; - and E in one pattern are refused.
  for (const std::string bad : {"M*E", "M*", "-*E"}) {
    SCOPED_TRACE(bad);
    try {
      import(bad);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.key(), bad == "M*E" ? "n_routed_experts" : "hybrid_override_pattern");
      EXPECT_NE(std::string(e.what()).find(bad == "M*E"  ? "missing required key 'n_routed_experts'"
                                           : bad == "M*" ? "2 letters for 3 layers"
                                                         : "mixes - (dense MLP) and E (experts) layers"),
                std::string::npos)
          << e.what();
    }
  }
}

// Falcon-H1's mixer flags each size their own tensor: mamba_proj_bias in_proj's bias,
// projectors_bias out_proj's, mamba_rms_norm the gated norm; a mamba_d_head that does not
// multiply out to mamba_d_ssm is refused at the key.
TEST(HfConfig, FalconH1MixerFlagsEachAddTheirTensor) {
  const auto import = [](const std::string& extra) {
    return parse_hf_config(R"({"model_type": "falcon_h1", "hidden_size": 256, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512,
        "vocab_size": 1000, "mamba_d_ssm": 256, "mamba_n_heads": 8, "mamba_n_groups": 1,
        "mamba_d_state": 16, "mamba_d_conv": 4)" +
                               extra + "}",
                           "f.json", "f");
  };
  // A layer: in_proj 256 x (256 + 288 + 8), conv over 256 + 2 x 16 = 288 channels (4 taps and a
  // bias), 3 x 8 per head, out_proj 256 x 256; attention 2 x 256 x 256 + 2 x 256 x 128; the
  // gated MLP 3 x 256 x 512; two norms. Untied 1000 x 256 embeddings and head, the final norm.
  const std::uint64_t mamba = 256ULL * (256 + 288 + 8) + 288 * 5 + 3 * 8 + 256ULL * 256;
  const std::uint64_t layer = mamba + (2 * 256 * 256 + 2 * 256 * 128) + 3 * 256 * 512 + 2 * 256;
  const std::uint64_t base = 2 * 1000ULL * 256 + 2 * layer + 256;
  EXPECT_EQ(count_parameters(import("").entry.spec), base);
  EXPECT_EQ(count_parameters(import(R"(, "mamba_d_head": 32)").entry.spec), base);  // 8 x 32 = 256
  EXPECT_EQ(count_parameters(import(R"(, "mamba_proj_bias": true)").entry.spec), base + 2 * (256 + 288 + 8));
  EXPECT_EQ(count_parameters(import(R"(, "projectors_bias": true)").entry.spec), base + 2 * 256);
  EXPECT_EQ(count_parameters(import(R"(, "mamba_rms_norm": true)").entry.spec), base + 2 * 256);
  try {
    import(R"(, "mamba_d_head": 16)");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.key(), "mamba_d_head");
  }
}

// Zamba2's config says which layers use the shared block; the block's flags each add their
// tensors, and a config memplan would misread is refused at its key.
TEST(HfConfig, Zamba2SharedBlockFlagsAndRefusals) {
  const auto import = [](const std::string& kinds, const std::string& extra) {
    return parse_hf_config(R"({"model_type": "zamba2", "hidden_size": 64, "num_hidden_layers": 3,
        "num_attention_heads": 4, "intermediate_size": 256, "vocab_size": 100, "n_mamba_heads": 4,
        "mamba_d_state": 16, "adapter_rank": 8, "layers_block_type": )" +
                               kinds + extra + "}",
                           "z.json", "z");
  };
  // Three Mamba-2 layers: in_proj 64 x (128 + 160 + 4), a conv over 128 + 2 x 16 = 160 channels
  // (4 taps, a bias), 3 x 4 per head, the gated norm 128, out_proj 128 x 64, the layer's norm.
  // One shared block: q, k, v 128 x 128, o 128 x 64, a gated MLP 3 x 64 x 256, norms 128 + 64.
  // A use: its 64 x 64 linear and gate_up's adapter 8 x 64 + 512 x 8. Tied 100 x 64, final norm.
  const std::uint64_t mamba = 64ULL * (128 + 160 + 4) + 160 * 5 + 3 * 4 + 128 + 128ULL * 64 + 64;
  const std::uint64_t block = 3 * 128ULL * 128 + 128ULL * 64 + 3 * 64ULL * 256 + 128 + 64;
  const std::uint64_t use = 64ULL * 64 + 8 * 64 + 512 * 8;
  const std::uint64_t base = 100ULL * 64 + 3 * mamba + 64;
  EXPECT_EQ(count_parameters(import(R"(["mamba", "hybrid", "mamba"])", "").entry.spec), base + block + use);
  EXPECT_EQ(count_parameters(import(R"(["hybrid", "mamba", "hybrid"])", "").entry.spec), base + block + 2 * use);
  // hybrid_layer_ids alone says the same (Zamba2Config writes both).
  const ModelSpec by_ids = parse_hf_config(R"({"model_type": "zamba2", "hidden_size": 64, "num_hidden_layers": 3,
        "num_attention_heads": 4, "intermediate_size": 256, "vocab_size": 100, "n_mamba_heads": 4,
        "mamba_d_state": 16, "adapter_rank": 8, "hybrid_layer_ids": [0, 2]})",
                                           "z.json", "z")
                               .entry.spec;
  EXPECT_EQ(count_parameters(by_ids), base + block + 2 * use);
  EXPECT_EQ(attention_kind(by_ids, 2), AttentionKind::full);
  // Attention adapters: q, k and v each 8 x 128 + 128 x 8 per use.
  EXPECT_EQ(count_parameters(
                import(R"(["mamba", "hybrid", "mamba"])", R"(, "use_shared_attention_adapter": true)").entry.spec),
            base + block + use + 3 * 2 * 8 * 128);
  // Two blocks over two hybrid layers: the second block's weights, the uses' adapters as before.
  EXPECT_EQ(count_parameters(import(R"(["hybrid", "mamba", "hybrid"])", R"(, "num_mem_blocks": 2)").entry.spec),
            base + 2 * block + 2 * use);
  for (const auto& [kinds, extra, key] :
       {std::tuple<std::string, std::string, std::string>{R"(["mamba", "attention", "mamba"])", "",
                                                          "layers_block_type"},
        {R"(["mamba", "hybrid"])", "", "layers_block_type"},
        {R"(["mamba", "hybrid", "mamba"])", R"(, "num_mem_blocks": 2)", "num_mem_blocks"},
        {R"(["mamba", "hybrid", "mamba"])", R"(, "attention_hidden_size": 64)", "attention_hidden_size"}}) {
    SCOPED_TRACE(kinds + extra);
    try {
      import(kinds, extra);
      ADD_FAILURE() << "accepted";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), key);
      EXPECT_GT(e.line(), 0U);
    }
  }
}

TEST(HfConfig, NamesAndNotes) {
  HfImport llama = load_hf_config((kHf / "llama-2-7b" / "config.json").string());
  EXPECT_EQ(llama.entry.spec.name, "Llama-2-7b-hf");  // _name_or_path
  EXPECT_EQ(llama.model_type, "llama");
  HfImport mistral = load_hf_config((kHf / "mistral-7b-v0.1" / "config.json").string());
  EXPECT_EQ(mistral.entry.spec.name, "mistral-7b-v0.1");  // the directory
  EXPECT_EQ(mistral.entry.spec.sliding_window, 4096U);

  const auto has_note = [](const HfImport& i, const std::string& text) {
    for (const std::string& n : i.notes) {
      if (n.find(text) != std::string::npos) return true;
    }
    return false;
  };
  const HfImport falcon = load_hf_config((kHf / "falcon-7b" / "config.json").string());
  EXPECT_TRUE(has_note(falcon, "max_position_embeddings is not set: 2048"));
  EXPECT_EQ(falcon.entry.spec.n_kv_heads, 1U);  // multi_query
  const HfImport qwen = load_hf_config((kHf / "qwen2.5-0.5b" / "config.json").string());
  EXPECT_TRUE(has_note(qwen, "sliding_window is ignored: use_sliding_window is false"));
  EXPECT_TRUE(has_note(load_hf_config((kHf / "opt-125m" / "config.json").string()), "+ 2 = 2050 rows"));
  // partial_rotary_factor 0.4 of 80-wide heads.
  EXPECT_EQ(load_hf_config((kHf / "phi-2" / "config.json").string()).entry.spec.rotary_dim, 32U);
  // Pythia's rotary_pct 0.25 of 64-wide heads; GPTNeoXConfig's default of 0.25 when a config
  // leaves it out, said so.
  EXPECT_EQ(load_hf_config((kHf / "pythia-160m" / "config.json").string()).entry.spec.rotary_dim, 16U);
  const HfImport neox = parse_hf_config(
      R"({"model_type": "gpt_neox", "hidden_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
          "intermediate_size": 2048, "vocab_size": 1000, "max_position_embeddings": 2048})",
      "neox.json", "neox");
  EXPECT_EQ(neox.entry.spec.rotary_dim, 32U);  // 0.25 x 128
  EXPECT_TRUE(has_note(neox, "rotary_pct is not set: 0.25"));
  EXPECT_TRUE(has_note(load_hf_config((kHf / "bert-base-uncased" / "config.json").string()), "BertForMaskedLM"));
  EXPECT_TRUE(has_note(llama, "weights saved as float16"));
}

TEST(HfConfig, ClassDefaultsApplyToKeysLeftOut) {
  // GPT2Config: n_inner null -> 4 x n_embd, tie_word_embeddings true; GPT-2 names or the
  // common names both work.
  const ModelSpec gpt2 = parse_hf_config(
                             R"({"model_type": "gpt2", "hidden_size": 768, "n_layer": 12, "n_head": 12, "n_inner": null,
          "vocab_size": 50257, "n_positions": 1024})",
                             "config.json", "g")
                             .entry.spec;
  EXPECT_EQ(gpt2.d_mlp, 3072U);
  EXPECT_EQ(gpt2.lm_head, LmHead::tied);
  EXPECT_EQ(count_parameters(gpt2), 124439808ULL);
  // Llama with attention and MLP biases, a tied head and an explicit head_dim.
  const ModelSpec llama = parse_hf_config(llama_config("  \"attention_bias\": true,\n  \"mlp_bias\": true,\n"
                                                       "  \"tie_word_embeddings\": true,\n  \"head_dim\": 64,\n"),
                                          "config.json", "l")
                              .entry.spec;
  EXPECT_TRUE(llama.attn_qkv_bias && llama.attn_out_bias && llama.mlp_bias);
  EXPECT_EQ(llama.lm_head, LmHead::tied);
  EXPECT_EQ(llama.d_head, 64U);
  // Qwen2 with the window switched on.
  const ModelSpec qwen =
      parse_hf_config(
          R"({"model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 24, "num_attention_heads": 14,
          "num_key_value_heads": 2, "intermediate_size": 4864, "vocab_size": 151936, "max_position_embeddings": 32768,
          "use_sliding_window": true, "sliding_window": 4096, "max_window_layers": 24})",
          "config.json", "q")
          .entry.spec;
  EXPECT_EQ(qwen.sliding_window, 4096U);
  // Falcon-40B style: new decoder architecture, 8 K/V heads, two norms per parallel block.
  const ModelSpec falcon =
      parse_hf_config(
          R"({"model_type": "falcon", "hidden_size": 8192, "num_hidden_layers": 60, "num_attention_heads": 128,
          "num_kv_heads": 8, "new_decoder_architecture": true, "vocab_size": 65024})",
          "config.json", "f")
          .entry.spec;
  EXPECT_EQ(falcon.n_kv_heads, 8U);
  EXPECT_EQ(falcon.norms_per_layer, 2U);
  EXPECT_EQ(falcon.d_mlp, 4U * 8192U);
  // OPT-350m-like: post-LN (no final norm)... but its projection is refused below.
  const ModelSpec opt =
      parse_hf_config(
          R"({"model_type": "opt", "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
          "ffn_dim": 4096, "vocab_size": 50272, "max_position_embeddings": 2048, "do_layer_norm_before": false})",
          "config.json", "o")
          .entry.spec;
  EXPECT_FALSE(opt.final_norm);
  EXPECT_EQ(opt.n_positions, 2050U);
}

TEST(HfConfig, ErrorsNameFileLineColumnAndKey) {
  // Unknown family: the supported ones listed, at model_type's value.
  ConfigError e = import_error("{\n  \"model_type\": \"qwen2_audio\",\n  \"hidden_size\": 4096\n}");
  EXPECT_EQ(e.key(), "model_type");
  EXPECT_EQ(e.line(), 2U);
  EXPECT_EQ(e.column(), 17U);
  EXPECT_NE(e.message().find("unsupported model_type 'qwen2_audio'"), std::string::npos) << e.what();
  EXPECT_NE(e.message().find(
                "'bamba', 'bart', 'bert', 'bloom', 'cohere', 'cohere2', 'deepseek_v2', 'deepseek_v3', 'falcon', "
                "'falcon_h1', 'gemma', "
                "'gemma2', 'gemma3', 'gemma3_text', 'gemma4', 'gemma4_text', 'gpt2', 'gpt_bigcode', 'gpt_neo', "
                "'gpt_neox', 'gpt_oss', 'gptj', "
                "'granite', 'granitemoe', 'granitemoehybrid', 'idefics3', 'jamba', 'llama', 'llama4', 'llama4_text', "
                "'llava', "
                "'llava_next', 'mamba', "
                "'mamba2', 'mistral', "
                "'mixtral', 'nemotron_h', "
                "'olmo2', "
                "'olmoe', 'opt', 'paligemma', 'phi', 'phi3', 'phimoe', 'qwen2', 'qwen2_5_vl', 'qwen2_vl', 'qwen3', "
                "'qwen3_5', 'qwen3_5_moe', 'qwen3_5_moe_text', 'qwen3_5_text', 'qwen3_moe', 'qwen3_next', 'qwen3_vl', "
                "'qwen3_vl_moe', "
                "'stablelm', "
                "'starcoder2', 't5', 'whisper' and 'zamba2'"),
            std::string::npos)
      << e.what();
  // No did-you-mean: a model_type spelled like a known one is another architecture.
  const std::string lama = import_error(R"({"model_type": "lama"})").message();
  EXPECT_EQ(lama.find("did you mean"), std::string::npos) << lama;
  EXPECT_NE(lama.find("`as` MODEL_TYPE reads it as that one and lists every key it did not use"), std::string::npos)
      << lama;

  // JSON syntax: nlohmann's byte position becomes line and column.
  e = import_error("{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 4096,,\n}");
  EXPECT_EQ(e.line(), 3U);
  EXPECT_EQ(e.column(), 23U);
  EXPECT_NE(e.message().find("JSON syntax error"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("config.json:3:23: "), std::string::npos) << e.what();

  // A wrong value is located at the value, with the key.
  e = import_error(llama_config("  \"num_key_value_heads\": 3,\n"));
  EXPECT_EQ(e.key(), "num_key_value_heads");
  EXPECT_EQ(e.line(), 8U);
  EXPECT_EQ(e.column(), 26U);
  EXPECT_NE(e.message().find("n_kv_heads 3 must divide n_heads 32"), std::string::npos) << e.what();

  e = import_error(llama_config("  \"num_hidden_layers\": \"32\",\n"));
  EXPECT_EQ(e.key(), "num_hidden_layers");
  EXPECT_EQ(e.line(), 8U);  // at the second of the two: a key given twice is refused before any value is read
  EXPECT_NE(e.message().find("appears twice"), std::string::npos) << e.what();

  e = import_error(R"({"model_type": "llama", "hidden_size": "4096"})");
  EXPECT_EQ(e.key(), "hidden_size");
  EXPECT_NE(e.message().find("'hidden_size' must be a whole number, got a string \"4096\""), std::string::npos)
      << e.what();
  EXPECT_NE(
      import_error(R"({"model_type": "llama", "hidden_size": 4096.5})").message().find("whole number, got 4096.5"),
      std::string::npos);
  EXPECT_NE(import_error(R"({"model_type": "llama", "hidden_size": -1})").message().find("must be an integer from 1"),
            std::string::npos);
  EXPECT_NE(import_error(R"({"model_type": "llama", "hidden_size": 1e30})").message().find("too large"),
            std::string::npos);
  e = import_error(R"({"model_type": "llama", "hidden_size": 4096})");
  EXPECT_EQ(e.key(), "num_hidden_layers");
  EXPECT_NE(e.message().find("missing required key 'num_hidden_layers'"), std::string::npos) << e.what();
  EXPECT_NE(import_error(R"({"model_type": "llama", "hidden_size": null})").message().find("must be set, not null"),
            std::string::npos);
  EXPECT_NE(import_error(R"({"hidden_size": 4096})").message().find("missing required key 'model_type'"),
            std::string::npos);
  EXPECT_NE(import_error("[1, 2]").message().find("expected a Hugging Face config as a JSON object"),
            std::string::npos);
  EXPECT_NE(import_error("").message().find("JSON syntax error"), std::string::npos);
  EXPECT_NE(import_error(std::string(100, '[')).message().find("nested more than 64 levels"), std::string::npos);

  // GPT-2's two names for one size must agree.
  e = import_error(R"({"model_type": "gpt2", "n_embd": 768, "hidden_size": 1024})");
  EXPECT_EQ(e.key(), "hidden_size");
  EXPECT_NE(e.message().find("they name the same size"), std::string::npos) << e.what();

  // What the spec cannot describe is refused, not miscounted.
  e = import_error(R"({"model_type": "opt", "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
                       "ffn_dim": 4096, "vocab_size": 50272, "word_embed_proj_dim": 512})");
  EXPECT_EQ(e.key(), "word_embed_proj_dim");
  EXPECT_NE(e.message().find("word_embed_proj_dim 512 differs from hidden_size 1024"), std::string::npos) << e.what();
  EXPECT_EQ(import_error(
                R"({"model_type": "phi", "hidden_size": 2560, "num_hidden_layers": 32, "num_attention_heads": 32,
                             "intermediate_size": 10240, "vocab_size": 51200, "qk_layernorm": true})")
                .key(),
            "qk_layernorm");
  EXPECT_EQ(import_error(
                R"({"model_type": "bert", "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
                             "intermediate_size": 3072, "vocab_size": 30522, "position_embedding_type": "relative_key"})")
                .key(),
            "position_embedding_type");
  e = import_error(R"({"model_type": "llama", "hidden_size": 4000, "num_hidden_layers": 2, "num_attention_heads": 48,
                       "intermediate_size": 8, "vocab_size": 8})");
  EXPECT_EQ(e.key(), "num_attention_heads");
  EXPECT_NE(e.message().find("not divisible"), std::string::npos) << e.what();
}

TEST(HfConfig, FilesAreCheckedBeforeParsing) {
  const fs::path dir = fs::temp_directory_path() / "memplan_hf_config_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  EXPECT_THROW(load_hf_config((dir / "missing.json").string()), ConfigError);
  EXPECT_THROW(load_hf_config(dir.string()), ConfigError);
  fs::remove_all(dir);
}

// The model file written for any model reads back as the same model.
TEST(ModelYaml, RoundTripsEveryBuiltinModel) {
  for (const std::string& name : builtin_model_names()) {
    SCOPED_TRACE(name);
    const ModelEntry shipped = load_builtin_model(name);
    const std::string text = model_yaml(shipped, {"a comment", "two\nlines"});
    const ModelEntry back = parse_model_yaml(text, "round-trip.yaml", name);
    expect_same_architecture(back.spec, shipped.spec);
    EXPECT_EQ(back.spec.activation, shipped.spec.activation);
    EXPECT_EQ(back.source, shipped.source);
    EXPECT_EQ(back.published_params, shipped.published_params);
    EXPECT_EQ(back.published_params_source, shipped.published_params_source);
    EXPECT_EQ(model_yaml(back, {"a comment", "two\nlines"}), text);
  }
}

TEST(ModelYaml, QuotesWhatYamlWouldMisread) {
  ModelEntry e = load_builtin_model("gpt2");
  e.source = "C:\\models\\\"gpt2\": #1\n";
  EXPECT_EQ(parse_model_yaml(model_yaml(e), "q.yaml", "q").source, e.source);
}

TEST(FindModel, ReadsAConfigJsonDirectly) {
  const ModelEntry e = find_model((kHf / "gpt2" / "config.json").string());
  EXPECT_EQ(e.spec.name, "gpt2");
  EXPECT_EQ(count_parameters(e.spec), 124439808ULL);
}

}  // namespace hf_config_test
}  // namespace memplan
