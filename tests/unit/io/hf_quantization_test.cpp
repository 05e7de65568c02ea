// A config.json's quantization_config priced as the checkpoint stores it. Every expected
// figure is written out from the library's tensor shapes (docs/quantization.md), layer by
// layer; none comes from memplan.
#include <gtest/gtest.h>

#include <filesystem>

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/quantized_checkpoint.hpp"
#include "memplan/estimators/weights.hpp"
#include "memplan/io/hf_config.hpp"
#include "memplan/plan/plan.hpp"
#include "memplan/plan/sweep.hpp"

namespace memplan {
namespace hf_quantization_test {

namespace fs = std::filesystem;

const fs::path kQuantized = fs::path(MEMPLAN_TEST_FIXTURES) / "hf" / "quantized";

HfImport import(const std::string& name) { return load_hf_config((kQuantized / name / "config.json").string()); }

std::uint64_t weights_of(const ModelSpec& spec) {
  const Breakdown b = estimate_weights(spec, WeightsOptions{});
  testing::expect_consistent(b);
  return b.total().count();
}

std::uint64_t row_of(const ModelSpec& spec, const std::string& component) {
  const Breakdown b = estimate_weights(spec, WeightsOptions{});
  for (const Item& row : b.components.front().detail) {
    if (row.name == component) return row.bytes.count();
  }
  ADD_FAILURE() << "no row " << component;
  return 0;
}

bool has_note(const HfImport& imported, const std::string& text) {
  for (const std::string& n : imported.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(HfQuantization, AwqQwen25_7B) {
  // Qwen2.5-7B: d 3584, 28 layers, k/v 4 heads x 128 = 512, MLP 18944, vocab 152064, untied.
  // AutoAWQ's WQLinear_GEMM for N outputs, K inputs, groups of 128: qweight K x N/8 int32,
  // qzeros K/128 x N/8 int32, scales K/128 x N fp16.
  const std::uint64_t q = 3584ULL * 448 * 4 + 28ULL * 448 * 4 + 28ULL * 3584 * 2;  // also o
  const std::uint64_t kv = 3584ULL * 64 * 4 + 28ULL * 64 * 4 + 28ULL * 512 * 2;
  const std::uint64_t up = 3584ULL * 2368 * 4 + 28ULL * 2368 * 4 + 28ULL * 18944 * 2;  // also gate
  const std::uint64_t down = 18944ULL * 448 * 4 + 148ULL * 448 * 4 + 148ULL * 3584 * 2;
  const std::uint64_t bias = (3584ULL + 512 + 512) * 2;  // q, k, v biases in fp16
  const std::uint64_t norms = (28ULL * 2 + 1) * 3584 * 2;
  const std::uint64_t embed = 152064ULL * 3584 * 2;  // and as much for lm_head
  const HfImport imp = import("qwen2.5-7b-instruct-awq");
  EXPECT_EQ(row_of(imp.entry.spec, "attention"), 28 * (2 * q + 2 * kv + bias));
  EXPECT_EQ(row_of(imp.entry.spec, "mlp"), 28 * (2 * up + down));
  EXPECT_EQ(weights_of(imp.entry.spec), 28 * (2 * q + 2 * kv + bias + 2 * up + down) + norms + 2 * embed);
  // The same sum, added up once by hand: 5,570,747,392 bytes (5.19 GiB; 15.2 GB in bf16).
  EXPECT_EQ(weights_of(imp.entry.spec), 5570747392ULL);
  EXPECT_TRUE(has_note(imp, "AWQ 4-bit, groups of 128"));
  EXPECT_TRUE(has_note(imp, "lm_head"));
}

// auto-gptq's QuantLinear for N outputs, K inputs, 4 bits, G groups: qweight K/8 x N int32,
// qzeros G x N/8 int32, scales G x N fp16, g_idx K int32.
TEST(HfQuantization, GptqLlama2_7B_Groups128) {
  const std::uint64_t att = 512ULL * 4096 * 4 + 32ULL * 512 * 4 + 32ULL * 4096 * 2 + 4096ULL * 4;    // q, k, v, o
  const std::uint64_t up = 512ULL * 11008 * 4 + 32ULL * 1376 * 4 + 32ULL * 11008 * 2 + 4096ULL * 4;  // and gate
  const std::uint64_t down = 1376ULL * 4096 * 4 + 86ULL * 512 * 4 + 86ULL * 4096 * 2 + 11008ULL * 4;
  const std::uint64_t rest = (32ULL * 2 + 1) * 4096 * 2 + 2 * 32000ULL * 4096 * 2;  // norms, embeddings, lm_head
  const HfImport imp = import("llama-2-7b-gptq");
  EXPECT_EQ(weights_of(imp.entry.spec), 32 * (4 * att + 2 * up + down) + rest);
  EXPECT_TRUE(has_note(imp, "desc_act false"));
}

TEST(HfQuantization, GptqLlama2_7B_Groups32DescAct) {
  // desc_act changes the order of g_idx, not its size: the same tensors with 128 and 344 groups.
  const std::uint64_t att = 512ULL * 4096 * 4 + 128ULL * 512 * 4 + 128ULL * 4096 * 2 + 4096ULL * 4;
  const std::uint64_t up = 512ULL * 11008 * 4 + 128ULL * 1376 * 4 + 128ULL * 11008 * 2 + 4096ULL * 4;
  const std::uint64_t down = 1376ULL * 4096 * 4 + 344ULL * 512 * 4 + 344ULL * 4096 * 2 + 11008ULL * 4;
  const std::uint64_t rest = (32ULL * 2 + 1) * 4096 * 2 + 2 * 32000ULL * 4096 * 2;
  const HfImport imp = import("llama-2-7b-gptq-32g-actorder");
  EXPECT_EQ(weights_of(imp.entry.spec), 32 * (4 * att + 2 * up + down) + rest);
  EXPECT_TRUE(has_note(imp, "desc_act true"));
}

// Llama-3-8B: d 4096, 32 layers, k/v 1024 wide, MLP 14336, vocab 128256, bf16.
// bitsandbytes 4-bit for n weights: n/2 packed bytes, a 16-entry fp32 code (64 B), and per
// 64-block an fp32 absmax; with double quantisation a uint8 absmax per block, an fp32 absmax
// per 256 blocks, a 256-entry fp32 code (1024 B) and an fp32 offset.
TEST(HfQuantization, Bnb4bitDoubleQuant) {
  const std::uint64_t q = 16777216ULL / 2 + 64 + 262144 + 1024ULL * 4 + 1024 + 4;    // 4096 x 4096; also o
  const std::uint64_t kv = 4194304ULL / 2 + 64 + 65536 + 256ULL * 4 + 1024 + 4;      // 1024 x 4096
  const std::uint64_t mlp = 58720256ULL / 2 + 64 + 917504 + 3584ULL * 4 + 1024 + 4;  // 14336 x 4096, x3
  const std::uint64_t rest = (32ULL * 2 + 1) * 4096 * 2 + 2 * 128256ULL * 4096 * 2;
  const HfImport imp = import("llama-3-8b-bnb-4bit");
  EXPECT_EQ(weights_of(imp.entry.spec), 32 * (2 * q + 2 * kv + 3 * mlp) + rest);
  EXPECT_TRUE(has_note(imp, "bnb_4bit_compute_dtype bfloat16"));
}

TEST(HfQuantization, Bnb4bitSingleQuant) {
  const std::uint64_t q = 16777216ULL / 2 + 64 + 262144ULL * 4;
  const std::uint64_t kv = 4194304ULL / 2 + 64 + 65536ULL * 4;
  const std::uint64_t mlp = 58720256ULL / 2 + 64 + 917504ULL * 4;
  const std::uint64_t rest = (32ULL * 2 + 1) * 4096 * 2 + 2 * 128256ULL * 4096 * 2;
  EXPECT_EQ(weights_of(import("llama-3-8b-bnb-4bit-no-dq").entry.spec), 32 * (2 * q + 2 * kv + 3 * mlp) + rest);
}

TEST(HfQuantization, Bnb8bit) {
  // LLM.int8: an int8 weight and an fp32 SCB per output row.
  const std::uint64_t att = 4096ULL * 4096 + 4096 * 4;
  const std::uint64_t up = 11008ULL * 4096 + 11008 * 4;  // gate, up
  const std::uint64_t down = 4096ULL * 11008 + 4096 * 4;
  const std::uint64_t rest = (32ULL * 2 + 1) * 4096 * 2 + 2 * 32000ULL * 4096 * 2;
  EXPECT_EQ(weights_of(import("llama-2-7b-bnb-8bit").entry.spec), 32 * (4 * att + 2 * up + down) + rest);
}

TEST(HfQuantization, BitsandbytesCheckpointsRunAsBitsandbytes) {
  // The checkpoint's layout says which kernels run it: its largest weight (Llama-3-8B's MLP,
  // 14336 x 4096 = 58,720,256 elements) is dequantised whole; AWQ's is not.
  WeightsOptions as_loaded;
  const ModelSpec four = import("llama-3-8b-bnb-4bit").entry.spec;
  EXPECT_EQ(bitsandbytes_linears(four, as_loaded), BitsandbytesLinears::four_bit);
  EXPECT_EQ(largest_quantized_linear(four, as_loaded, {"attention", "mlp"}), 58720256ULL);
  EXPECT_EQ(largest_quantized_linear(four, as_loaded, {"attention"}), 16777216ULL);  // q and o, 4096 x 4096
  const ModelSpec eight = import("llama-2-7b-bnb-8bit").entry.spec;
  EXPECT_EQ(bitsandbytes_linears(eight, as_loaded), BitsandbytesLinears::eight_bit);
  EXPECT_EQ(largest_quantized_linear(eight, as_loaded, {"mlp"}), 11008ULL * 4096);
  EXPECT_EQ(bitsandbytes_linears(import("qwen2.5-7b-instruct-awq").entry.spec, as_loaded), BitsandbytesLinears::none);
}

TEST(HfQuantization, Fp8PerTensorStatic) {
  // fp8 weights with one fp32 weight_scale and one fp32 input_scale per layer; lm_head ignored.
  const std::uint64_t q = 4096ULL * 4096 + 4 + 4, kv = 1024ULL * 4096 + 4 + 4, mlp = 14336ULL * 4096 + 4 + 4;
  const std::uint64_t rest = (32ULL * 2 + 1) * 4096 * 2 + 2 * 128256ULL * 4096 * 2;
  EXPECT_EQ(weights_of(import("llama-3-8b-instruct-fp8").entry.spec), 32 * (2 * q + 2 * kv + 3 * mlp) + rest);
}

TEST(HfQuantization, Fp8BlockWiseMixtral) {
  // Mixtral-8x7B with 128x128 blocks: fp8 weight + fp32 weight_scale_inv ceil(N/128) x ceil(K/128).
  // The router (8 x 4096, an nn.Linear) is converted too: one 1 x 32 row of scales.
  const std::uint64_t q = 4096ULL * 4096 + 32 * 32 * 4, kv = 1024ULL * 4096 + 8 * 32 * 4;
  const std::uint64_t expert = 3 * (14336ULL * 4096 + 112 * 32 * 4);  // w1, w3 (112 x 32) and w2 (32 x 112)
  const std::uint64_t router = 8ULL * 4096 + 1 * 32 * 4;
  const std::uint64_t rest = (32ULL * 2 + 1) * 4096 * 2 + 2 * 32000ULL * 4096 * 2;
  const HfImport imp = import("mixtral-8x7b-fp8-block");
  EXPECT_EQ(row_of(imp.entry.spec, "experts"), 32 * 8 * expert);
  EXPECT_EQ(weights_of(imp.entry.spec), 32 * (2 * q + 2 * kv + 8 * expert + router) + rest);
}

TEST(HfQuantization, Mxfp4ExpertsOnly) {
  // gpt-oss-20b's sizes: d 2880, 24 layers, 64 query and 8 k/v heads of 64, 32 experts of 2880.
  // Experts: per 32 inputs 16 bytes of e2m1 pairs + 1 e8m0 scale = 2880 x 90 blocks x 17 B a matrix.
  const std::uint64_t attention = (4096ULL * 2880 + 2 * 512ULL * 2880 + 2880ULL * 4096) * 2;  // bf16
  const std::uint64_t expert = 3 * 2880ULL * 90 * 17;
  const std::uint64_t router = 32ULL * 2880 * 2;
  const std::uint64_t rest = (24ULL * 2 + 1) * 2880 * 2 + 2 * 201088ULL * 2880 * 2;
  const HfImport imp = import("gpt-oss-20b-shaped");
  EXPECT_EQ(row_of(imp.entry.spec, "experts"), 24 * 32 * expert);
  EXPECT_EQ(weights_of(imp.entry.spec), 24 * (attention + 32 * expert + router) + rest);
}

// openai/gpt-oss-20b as published (tests/data/hf/gpt-oss-20b, model_type gpt_oss): MXFP4
// experts, everything else 16-bit. Its model.safetensors.index.json says
// "total_size": 13761264768 (quoted in public copies of the index).
TEST(HfQuantization, GptOss20bAsPublished) {
  const ModelSpec spec = load_hf_config((kQuantized.parent_path() / "gpt-oss-20b" / "config.json").string()).entry.spec;
  EXPECT_EQ(weights_of(spec), 13'761'264'768U);
  // The experts: 24 layers x 32 experts x (5760 + 2880 rows) x 90 blocks x 17 B, and their
  // biases, 24 x 32 x (5760 + 2880) x 2 B.
  EXPECT_EQ(row_of(spec, "experts"), 24ULL * 32 * 8640 * 90 * 17 + 24ULL * 32 * 8640 * 2);
}

// deepseek-ai/DeepSeek-V3 as published (tests/data/hf/deepseek-v3): fp8 e4m3 linear layers
// with float32 weight_scale_inv per 128 x 128 block; embeddings, norms, lm_head and the
// routers (DeepseekV3TopkRouter, not an nn.Linear) in bf16; e_score_correction_bias float32.
// simpx/model-inspect's README (inspecting deepseek-ai/DeepSeek-V3) sums the checkpoint's
// tensors to 688,574,839,360 bytes. That includes the multi-token-prediction layer 61, which
// memplan leaves out: its bytes are written out below and subtracted.
TEST(HfQuantization, DeepSeekV3Fp8AsPublished) {
  const std::uint64_t q_a = 1536ULL * 7168 + 12 * 56 * 4;    // 11,012,736
  const std::uint64_t q_b = 24576ULL * 1536 + 192 * 12 * 4;  // 37,757,952
  const std::uint64_t kv_a = 576ULL * 7168 + 5 * 56 * 4;     // 4,129,888 (576 rows: 5 blocks)
  const std::uint64_t kv_b = 32768ULL * 512 + 256 * 4 * 4;   // 16,781,312
  const std::uint64_t o = 7168ULL * 16384 + 56 * 128 * 4;    // 117,469,184
  const std::uint64_t attention = q_a + q_b + kv_a + kv_b + o;
  const std::uint64_t norms = 2 * 7168 * 2 + 1536 * 2 + 512 * 2;              // input, post-attention, q_a, kv_a
  const std::uint64_t expert = 3 * (2048ULL * 7168 + 16 * 56 * 4);            // gate, up (16 x 56), down (56 x 16)
  const std::uint64_t router = 256ULL * 7168 * 2 + 256 * 4;                   // bf16 gate, fp32 correction bias
  const std::uint64_t moe_layer = attention + norms + router + 257 * expert;  // 256 routed + 1 shared
  // Layer 61 (MTP): one MoE layer, its own bf16 copies of the embedding and head, enorm,
  // hnorm and shared_head.norm, and eh_proj (7168 x 14336, bf16).
  const std::uint64_t mtp = moe_layer + 2 * 129280ULL * 7168 * 2 + 3 * 7168 * 2 + 7168ULL * 14336 * 2;
  EXPECT_EQ(mtp, 15'424'227'552U);
  const ModelSpec spec = load_hf_config((kQuantized.parent_path() / "deepseek-v3" / "config.json").string()).entry.spec;
  EXPECT_EQ(weights_of(spec), 688'574'839'360U - mtp);
  // The same from the main model's parts: 3 dense layers (MLP 18432), 58 MoE layers.
  const std::uint64_t dense_mlp = 2 * (18432ULL * 7168 + 144 * 56 * 4) + (7168ULL * 18432 + 56 * 144 * 4);
  EXPECT_EQ(weights_of(spec),
            3 * (attention + norms + dense_mlp) + 58 * moe_layer + 2 * 129280ULL * 7168 * 2 + 7168 * 2);
  EXPECT_EQ(row_of(spec, "router"), 58 * router);
}

// Qwen3-30B-A3B in fp8 as Qwen publishes its FP8 checkpoints: 128 x 128 blocks whose
// weight_scale_inv are bf16 (modular/modular#7142 reads them so in Qwen3-1.7B-FP8's headers),
// and a modules_to_not_convert naming lm_head and every layer's two norms and router
// (mlp.gate), as printed in xorbitsai/inference#4032 for Qwen3-30B-A3B-Thinking-2507-FP8.
TEST(HfQuantization, Qwen3MoeFp8RoutersKept) {
  const std::uint64_t q = 4096ULL * 2048 + 32 * 16 * 2, kv = 512ULL * 2048 + 4 * 16 * 2;  // also o: 16 x 32
  const std::uint64_t o = 2048ULL * 4096 + 16 * 32 * 2;
  const std::uint64_t expert = 3 * (768ULL * 2048 + 6 * 16 * 2);   // gate, up (6 x 16), down (16 x 6)
  const std::uint64_t router = 128ULL * 2048 * 2;                  // kept in bf16
  const std::uint64_t norms = 2 * 2048 * 2 + 2 * 128 * 2;          // input, post-attention, q_norm, k_norm
  const std::uint64_t rest = 2 * 151936ULL * 2048 * 2 + 2048 * 2;  // embeddings, lm_head, final norm
  const HfImport imp = import("qwen3-30b-a3b-fp8");
  EXPECT_EQ(row_of(imp.entry.spec, "router"), 48 * router);
  EXPECT_EQ(weights_of(imp.entry.spec), 48 * (q + 2 * kv + o + 128 * expert + router + norms) + rest);
  EXPECT_TRUE(has_note(imp, "bf16 weight_scale_inv per 128x128 block"));
}

// DeepSeek's module names carry each layer's own number: with first_k_dense_replace 1 the
// first MoE layer is model.layers.1, and its expert 0 is the one the list keeps.
TEST(HfQuantization, DeepSeekModuleNamesFollowTheLayers) {
  const std::string config = R"({"model_type": "deepseek_v2", "hidden_size": 256, "intermediate_size": 512,
    "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2, "vocab_size": 1000,
    "q_lora_rank": null, "kv_lora_rank": 128, "qk_nope_head_dim": 64, "qk_rope_head_dim": 32, "v_head_dim": 64,
    "n_routed_experts": 4, "n_shared_experts": 1, "num_experts_per_tok": 2, "moe_intermediate_size": 128,
    "first_k_dense_replace": 1, "torch_dtype": "bfloat16", "tie_word_embeddings": false,
    "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128],
      "modules_to_not_convert": ["model.layers.1.mlp.experts.0.", "self_attn.kv_a_proj_with_mqa"]}})";
  const HfImport imp = parse_hf_config(config, "ds.json", "ds");
  // Per layer: q_proj 192 x 256 (2 x 2 scales), kv_a 160 x 256 kept in bf16, kv_b 256 x 128 and
  // o 256 x 128 (2 x 1 scales each).
  const std::uint64_t attention = (192ULL * 256 + 2 * 2 * 4) + 160ULL * 256 * 2 + 2 * (256ULL * 128 + 2 * 1 * 4);
  EXPECT_EQ(row_of(imp.entry.spec, "attention"), 2 * attention);
  // Layer 0's dense MLP (512 wide, 4 x 2 and 2 x 4 scales) and layer 1's shared expert (128 wide).
  const std::uint64_t small = 3 * (128ULL * 256 + 2 * 4);
  EXPECT_EQ(row_of(imp.entry.spec, "mlp"), 3 * (512ULL * 256 + 8 * 4) + small);
  // Three experts in fp8, expert 0 of layer 1 in bf16.
  EXPECT_EQ(row_of(imp.entry.spec, "experts"), 3 * small + 3 * 128ULL * 256 * 2);
  EXPECT_EQ(row_of(imp.entry.spec, "router"), 4ULL * 256 * 2);
}

TEST(HfQuantization, CompressedTensorsW4A16) {
  // pack-quantized int4, groups of 128: weight_packed N x K/8 int32, weight_shape 2 int64,
  // weight_scale N x K/128 bf16 (the model's dtype); lm_head in `ignore` stays bf16.
  const std::uint64_t q = 4096ULL * 512 * 4 + 16 + 4096ULL * 32 * 2;
  const std::uint64_t kv = 1024ULL * 512 * 4 + 16 + 1024ULL * 32 * 2;
  const std::uint64_t up = 14336ULL * 512 * 4 + 16 + 14336ULL * 32 * 2;  // and gate
  const std::uint64_t down = 4096ULL * 1792 * 4 + 16 + 4096ULL * 112 * 2;
  const std::uint64_t rest = (32ULL * 2 + 1) * 4096 * 2 + 2 * 128256ULL * 4096 * 2;
  EXPECT_EQ(weights_of(import("llama-3.1-8b-instruct-w4a16").entry.spec), 32 * (2 * q + 2 * kv + 2 * up + down) + rest);
}

TEST(HfQuantization, CompressedTensorsFp8PerChannel) {
  // float-quantized fp8, one bf16 scale per output row; dynamic activations store no scale.
  const std::uint64_t q = 4096ULL * 4096 + 4096 * 2, kv = 1024ULL * 4096 + 1024 * 2;
  const std::uint64_t up = 14336ULL * 4096 + 14336 * 2, down = 4096ULL * 14336 + 4096 * 2;
  const std::uint64_t rest = (32ULL * 2 + 1) * 4096 * 2 + 2 * 128256ULL * 4096 * 2;
  EXPECT_EQ(weights_of(import("llama-3.1-8b-instruct-fp8-dynamic").entry.spec),
            32 * (2 * q + 2 * kv + 2 * up + down) + rest);
}

// ---------------------------------------------------------------------------------------
// Small inline configs: lists of modules, methods memplan does not know, hostile values.

std::string tiny(const std::string& quantization) {
  return "{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 256,\n  \"intermediate_size\": 512,\n"
         "  \"num_hidden_layers\": 2,\n  \"num_attention_heads\": 4,\n  \"vocab_size\": 1000,\n"
         "  \"torch_dtype\": \"bfloat16\",\n  \"quantization_config\": " +
         quantization + "\n}\n";
}

ConfigError import_error(const std::string& text) {
  try {
    parse_hf_config(text, "q.json", "q");
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for " << text;
  return ConfigError("", 0, 0, "", "");
}

TEST(HfQuantization, ModulesToNotConvertByLayer) {
  // AWQ with layer 1's MLP left in bf16: 2 x (gate, up: 512 x 256; down: 256 x 512).
  const HfImport imp = parse_hf_config(
      tiny(R"({"quant_method": "awq", "bits": 4, "group_size": 128, "modules_to_not_convert": ["layers.1.mlp"]})"),
      "q.json", "q");
  const std::uint64_t up_q = 256ULL * 64 * 4 + 2 * 64 * 4 + 2 * 512 * 2;    // K 256, N 512
  const std::uint64_t down_q = 512ULL * 32 * 4 + 4 * 32 * 4 + 4 * 256 * 2;  // K 512, N 256
  const std::uint64_t plain = 3 * 512ULL * 256 * 2;
  EXPECT_EQ(row_of(imp.entry.spec, "mlp"), (2 * up_q + down_q) + plain);
}

TEST(HfQuantization, CompressedTensorsIgnoreByRegex) {
  // fp8 per tensor (one bf16 scale); "re:.*down_proj$" keeps both layers' down projections in bf16.
  const HfImport imp = parse_hf_config(
      tiny(
          R"({"quant_method": "compressed-tensors", "format": "float-quantized", "ignore": ["lm_head", "re:.*down_proj$"],)"
          R"( "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "tensor"}}}})"),
      "q.json", "q");
  EXPECT_EQ(row_of(imp.entry.spec, "mlp"), 2 * (2 * (512ULL * 256 + 2) + 256ULL * 512 * 2));
  EXPECT_EQ(row_of(imp.entry.spec, "lm_head"), 1000ULL * 256 * 2);
}

TEST(HfQuantization, UnknownMethodWarnsAndPricesTheArchitecture) {
  const HfImport imp = parse_hf_config(tiny(R"({"quant_method": "hqq", "nbits": 4})"), "q.json", "q");
  EXPECT_TRUE(imp.entry.spec.stored_weights.empty());
  ASSERT_EQ(imp.entry.spec.import_warnings.size(), 1U);
  EXPECT_NE(imp.entry.spec.import_warnings[0].find("(hqq)"), std::string::npos);
  EXPECT_NE(imp.entry.spec.import_warnings[0].find("priced at `precision`"), std::string::npos);
  DeviceChoice none;
  const Plan plan = bind(imp.entry.spec, PlanSettings{}, none);
  ASSERT_FALSE(plan.warnings.empty());
  EXPECT_EQ(plan.warnings.front(), imp.entry.spec.import_warnings[0]);
}

TEST(HfQuantization, PrecisionGivenOverridesTheCheckpoint) {
  const HfImport imp = parse_hf_config(tiny(R"({"quant_method": "awq", "bits": 4, "group_size": 128})"), "q.json", "q");
  PlanSettings settings;
  settings.workload.kind = WorkloadKind::weights;
  set_option(settings, *find_option("precision"), {"bf16"});
  const Plan plan = bind(imp.entry.spec, settings, DeviceChoice{});
  EXPECT_TRUE(plan.model.stored_weights.empty());
  bool said = false;
  for (const std::string& w : plan.warnings) said = said || w.find("`precision` bf16 overrides") != std::string::npos;
  EXPECT_TRUE(said);
  // 2 layers x (4 x 256 x 256 + 3 x 512 x 256) + 5 norms x 256 + 2 x 1000 x 256, at 2 bytes,
  // and transformers' two fp32 rotary buffers of 64 / 2 elements.
  EXPECT_EQ(estimate_weights(plan.model, plan.workload.weights).total().count(),
            (2 * (4 * 65536ULL + 3 * 131072) + 5 * 256 + 2 * 256000) * 2 + 2 * 32 * 4);
}

TEST(HfQuantization, SweepNamedPrecisionOverridesPerRow) {
  const HfImport imp = parse_hf_config(tiny(R"({"quant_method": "awq", "bits": 4, "group_size": 128})"), "q.json", "q");
  SweepAxes axes;
  axes.workloads = {WorkloadKind::weights};
  axes.precisions = {precisions::bf16, precisions::bf16};
  axes.named = {false, true};  // auto resolved to bf16, then bf16 named
  Workload base;
  const std::vector<SweepRow> rows = run_sweep({imp.entry.spec}, base, axes, std::nullopt, 0.85, {});
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0].total->count(), weights_of(imp.entry.spec));
  EXPECT_TRUE(rows[0].notes.empty());
  EXPECT_EQ(rows[1].total->count(), (2 * (4 * 65536ULL + 3 * 131072) + 5 * 256 + 2 * 256000) * 2);
  ASSERT_EQ(rows[1].notes.size(), 1U);
  EXPECT_NE(rows[1].notes[0].find("overrides the checkpoint's quantisation"), std::string::npos);
}

TEST(HfQuantization, HostileValuesNameTheKey) {
  ConfigError e = import_error(tiny(R"({"quant_method": "awq", "bits": 3, "group_size": 128})"));
  EXPECT_EQ(e.key(), "bits");
  EXPECT_EQ(e.line(), 9U);
  EXPECT_NE(e.message().find("4-bit"), std::string::npos);

  e = import_error(tiny(R"({"quant_method": "awq", "bits": 4, "group_size": 96})"));
  EXPECT_EQ(e.key(), "group_size");
  EXPECT_NE(e.message().find("does not divide the 256 inputs"), std::string::npos);

  e = import_error(tiny(R"({"quant_method": "gptq", "bits": 4, "group_size": -5})"));
  EXPECT_EQ(e.key(), "group_size");

  e = import_error(tiny(R"({"quant_method": "bitsandbytes", "load_in_4bit": true, "bnb_4bit_quant_type": "nf5"})"));
  EXPECT_EQ(e.key(), "bnb_4bit_quant_type");
  EXPECT_NE(e.message().find("'nf4'"), std::string::npos);

  e = import_error(tiny(R"({"quant_method": "fp8", "weight_block_size": [128, -1]})"));
  EXPECT_EQ(e.key(), "weight_block_size");

  e = import_error(
      tiny(R"({"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": )"
           R"({"g": {"targets": ["Linear"], "weights": {"num_bits": 4, "strategy": "group", "group_size": 100}}}})"));
  EXPECT_EQ(e.key(), "group_size");

  e = import_error(tiny(R"({"quant_method": "compressed-tensors", "ignore": ["re:(unclosed"], "config_groups": )"
                        R"({"g": {"weights": {"num_bits": 8, "type": "float"}}}, "format": "float-quantized"})"));
  EXPECT_EQ(e.key(), "ignore");

  e = import_error(tiny(R"("awq")"));
  EXPECT_EQ(e.key(), "quantization_config");
}

TEST(HfQuantization, LayoutNames) {
  CheckpointQuantization q;
  q.group_size = 128;
  EXPECT_EQ(layout_name(q), "awq-int4-g128");
  q.layout = QuantLayout::fp8;
  q.grain = ScaleGrain::block;
  EXPECT_EQ(layout_name(q), "fp8-block128x128");
  q.layout = QuantLayout::bnb_4bit;
  q.double_quant = true;
  EXPECT_EQ(layout_name(q), "bnb-nf4-dq");
}

}  // namespace hf_quantization_test
}  // namespace memplan
