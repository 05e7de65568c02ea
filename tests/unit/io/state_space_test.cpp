// State-space (Mamba, Mamba-2) and hybrid (Bamba) models: parameter counts of real configs
// (tests/data/hf), their fixed-size state beside a growing KV cache, and what does not apply.
// Each expected figure is written out from the config's sizes; the published counts of the
// built-ins (129,135,360 and 7,285,403,648) are checked in hf_config_test.
#include <gtest/gtest.h>

#include "hf_fixtures.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/estimators/activations.hpp"
#include "memplan/estimators/attention_analysis.hpp"
#include "memplan/estimators/compute_time.hpp"
#include "memplan/estimators/kv_cache.hpp"
#include "memplan/estimators/megatron.hpp"
#include "memplan/estimators/training.hpp"
#include "memplan/io/hf_config.hpp"
#include "memplan/plan/workload.hpp"

namespace memplan {
namespace state_space_test {

using testing::hf_fixture;

KvCacheOptions bf16_tokens(std::uint64_t tokens) {
  KvCacheOptions o;
  o.tokens = tokens;
  o.precision = precisions::bf16;
  o.state_precision = precisions::bf16;
  return o;
}

std::uint64_t detail_row(const Item& item, const std::string& name) {
  for (const Item& r : item.detail) {
    if (r.name == name) return r.bytes.count();
  }
  ADD_FAILURE() << "no row " << name << " in " << item.name;
  return 0;
}

// Generation: `state` bytes of Mamba state at 4096 tokens and at 8192, beside keys and values
// of `kv_per_token` bytes a token, which double.
void expect_fixed_state_and_growing_kv(const ModelSpec& s, std::uint64_t state, std::uint64_t kv_per_token) {
  for (const std::uint64_t tokens : {4096ULL, 8192ULL}) {
    SCOPED_TRACE(tokens);
    const Item kv = estimate_kv_cache(s, bf16_tokens(tokens)).components.front();
    EXPECT_EQ(detail_row(kv, "ssm_state"), state);
    EXPECT_EQ(kv.bytes.count(), state + kv_per_token * tokens);
  }
}

// The "activations" row of a bf16 training step at batch x seq (a copy: the breakdown is gone).
Item training_activations(const ModelSpec& s, std::uint64_t batch, std::uint64_t seq, const TrainingOptions& o = {}) {
  TrainingShape shape;
  shape.batch = batch;
  shape.seq = seq;
  shape.compute = precisions::bf16;
  for (const Item& c : estimate_training(s, shape, o).components) {
    if (c.name == "activations") return c;
  }
  ADD_FAILURE() << "no activations row";
  return {};
}

// state-spaces/mamba-130m-hf: d 768, 24 layers, d_inner 1536, state 16, conv 4, dt_rank 48,
// vocab 50280, tied head; each layer an RMSNorm and a MambaMixer.
TEST(StateSpace, MambaCountsItsTensors) {
  const ModelSpec s = hf_fixture("mamba-130m-hf");
  EXPECT_EQ(s.family, Family::mamba);
  EXPECT_EQ(ssm_layers(s), 24U);
  EXPECT_EQ(attention_layers(s), 0U);
  const std::uint64_t layer = 768ULL * 3072           // in_proj
                              + 1536ULL * 4 + 1536    // conv1d weight and bias
                              + 1536ULL * (48 + 32)   // x_proj
                              + 48ULL * 1536 + 1536   // dt_proj and its bias
                              + 1536ULL * 16 + 1536   // A_log, D
                              + 1536ULL * 768 + 768;  // out_proj, the block's norm
  EXPECT_EQ(layer, 3'771'648U);
  EXPECT_EQ(count_parameters(s), 50280ULL * 768 + 24 * layer + 768);
}

// Codestral Mamba's HF-format config (Mamba-2): d 4096, 64 layers, 128 heads of 64, 8 groups,
// state 128, conv 4, vocab 32768, untied. Its time_step_limit holds Python's Infinity.
TEST(StateSpace, Mamba2CountsItsTensors) {
  const ModelSpec s = hf_fixture("mamba-codestral-7b");
  EXPECT_EQ(s.family, Family::mamba2);
  const std::uint64_t conv = 8192 + 2 * 8 * 128;             // x, B and C: 10,240 channels
  const std::uint64_t layer = 4096ULL * (8192 + conv + 128)  // in_proj: z, x, B, C, dt
                              + conv * 4 + conv              // conv1d weight and bias
                              + 3 * 128                      // dt_bias, A_log, D
                              + 8192                         // the gated RMSNorm
                              + 8192ULL * 4096 + 4096;       // out_proj, the block's norm
  EXPECT_EQ(layer, 109'640'064U);
  EXPECT_EQ(count_parameters(s), 2 * 32768ULL * 4096 + 64 * layer + 4096);
}

// ibm-fms/Bamba-9B: 32 layers, attention on 9, 18 and 27 (32 heads, 8 KV heads of 128), Mamba-2
// mixers elsewhere (128 heads of 64, 1 group, state 128), a gated MLP of 14336 and two norms in
// every layer, vocab 128256, untied. No exact published count (the docs say 9.78B).
TEST(StateSpace, BambaHybridCountsItsTensors) {
  const ModelSpec s = hf_fixture("bamba-9b");
  EXPECT_EQ(ssm_layers(s), 29U);
  EXPECT_EQ(attention_layers(s), 3U);
  EXPECT_EQ(attention_kind(s, 9), AttentionKind::full);
  EXPECT_EQ(attention_kind(s, 10), AttentionKind::mamba);
  const std::uint64_t conv = 8192 + 2 * 128;
  const std::uint64_t mamba = 4096ULL * (8192 + conv + 128) + conv * 5 + 3 * 128 + 8192 + 8192ULL * 4096;
  const std::uint64_t attention = 2 * 4096ULL * 4096 + 2 * 4096ULL * 1024;
  const std::uint64_t mlp = 3 * 4096ULL * 14336;
  EXPECT_EQ(mamba, 102'286'976U);
  EXPECT_EQ(count_parameters(s), 2 * 128256ULL * 4096 + 29 * mamba + 3 * attention + 32 * (mlp + 2 * 4096) + 4096);
  EXPECT_EQ(count_parameters(s), 9'780'235'392U);
}

// ibm-granite/granite-4.0-h-tiny (model_type granitemoehybrid): 40 layers of 1536, attention on 5,
// 15, 25 and 35 (12 heads, 4 KV heads of 128, no rotary), Mamba-2 mixers elsewhere (48 heads of
// 64, one group, state 128), and after every mixer 64 experts of 512 (top 6) beside a shared MLP
// of 1024; tied embeddings over 100,352 tokens. The Hub's safetensors total is 6,939,037,248.
TEST(StateSpace, GraniteHybridCountsItsExpertsAndSharedMlp) {
  const ModelSpec s = hf_fixture("granite-4.0-h-tiny");
  EXPECT_EQ(s.family, Family::bamba);
  EXPECT_EQ(ssm_layers(s), 36U);
  EXPECT_EQ(attention_kind(s, 5), AttentionKind::full);
  EXPECT_EQ(attention_kind(s, 6), AttentionKind::mamba);
  EXPECT_EQ(s.positional, Positional::none);
  const std::uint64_t conv = 3072 + 2 * 128;
  const std::uint64_t mamba = 1536ULL * (3072 + conv + 48)  // in_proj: z, x, B, C and dt
                              + conv * 4 + conv             // conv1d and its bias
                              + 3 * 48 + 3072               // dt_bias, A_log, D; the gated norm
                              + 3072ULL * 1536;             // out_proj
  const std::uint64_t attention = 2 * 1536ULL * 1536 + 2 * 1536ULL * 512;
  const std::uint64_t ffn = 3 * 1536ULL * 1024        // shared_mlp: input_linear (gate, up), output_linear
                            + 64 * 3 * 1536ULL * 512  // block_sparse_moe: the experts
                            + 64 * 1536ULL;           // the router
  EXPECT_EQ(mamba, 14'642'576U);
  EXPECT_EQ(count_parameters(s), 100352ULL * 1536 + 36 * mamba + 4 * attention + 40 * (ffn + 2 * 1536) + 1536);
  EXPECT_EQ(count_parameters(s), 6'939'037'248U);
  // Granite 4.0 Micro has attention in every layer: Granite's transformer with RoPE.
  const ModelSpec micro = hf_fixture("granite-4.0-micro");
  EXPECT_EQ(micro.family, Family::granite);
  EXPECT_EQ(ssm_layers(micro), 0U);
  EXPECT_EQ(micro.positional, Positional::rotary);
}

// nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B: hybrid_override_pattern's E layers are 128 ReLU² experts
// of 1856 (6 a token) beside a shared expert of 3712, a router with a score-correction bias; 23
// Mamba-2 mixers (64 heads of 64, 8 groups, state 128), 6 attention layers (32 heads, 2 KV heads
// of 128); d 2688, 131,072 tokens, untied. llama.cpp counts 31,577,940,288.
TEST(StateSpace, NemotronThreesExpertLayersAreItsMlps) {
  const ModelSpec s = hf_fixture("nemotron-3-nano-30b-a3b");
  EXPECT_EQ(ssm_layers(s), 23U);
  EXPECT_EQ(attention_layers(s), 6U);
  EXPECT_EQ(mlp_only_layers(s), 23U);
  EXPECT_EQ(layers_in(s, LayerSet::moe_mlp, 0, s.n_layers), 23U);
  EXPECT_EQ(layers_in(s, LayerSet::dense_mlp, 0, s.n_layers), 0U);
  EXPECT_TRUE(is_moe_layer(s, 1));  // "ME..."
  EXPECT_FALSE(is_moe_layer(s, 0));
  const std::uint64_t conv = 4096 + 2 * 8 * 128;
  const std::uint64_t mamba = 2688ULL * (4096 + conv + 64) + conv * 4 + conv + 3 * 64 + 4096 + 4096ULL * 2688;
  const std::uint64_t attention = 2 * 2688ULL * 4096 + 2 * 2688ULL * 256;
  const std::uint64_t experts = 128 * 2 * 2688ULL * 1856 + 2 * 2688ULL * 3712 + 128 * 2688ULL + 128;
  EXPECT_EQ(count_parameters(s), 2 * 131072ULL * 2688 + 23 * mamba + 6 * attention + 23 * experts + 52 * 2688 + 2688);
  EXPECT_EQ(count_parameters(s), 31'577'940'288U);
}

// nvidia/Nemotron-H-8B-Base-8K: 52 layers, each one RMSNorm and one mixer as
// hybrid_override_pattern spells it: 24 Mamba-2 (128 heads of 64, 8 groups, state 128, conv
// 4), 4 attention (32 heads, 8 KV heads of 128, no biases, no rotary), 24 ReLU² MLPs of 21504;
// vocab 131072, untied. named_parameters() gives 8,100,852,736 (configs/models/
// nemotron-h-8b-base-8k.yaml cites it).
TEST(StateSpace, NemotronHLayersAreOneMixerOrAnMlp) {
  const ModelSpec s = hf_fixture("nemotron-h-8b-base-8k");
  EXPECT_EQ(ssm_layers(s), 24U);
  EXPECT_EQ(attention_layers(s), 4U);
  EXPECT_EQ(mlp_only_layers(s), 24U);
  EXPECT_EQ(attention_kind(s, 0), AttentionKind::mamba);  // "M-M-M-M*-..."
  EXPECT_EQ(attention_kind(s, 1), AttentionKind::mlp);
  EXPECT_EQ(attention_kind(s, 7), AttentionKind::full);
  const std::uint64_t conv = 8192 + 2 * 8 * 128;             // x, B and C
  const std::uint64_t mamba = 4096ULL * (8192 + conv + 128)  // in_proj: z, x, B, C and dt
                              + conv * 4 + conv              // conv1d and its bias
                              + 3 * 128 + 8192               // dt_bias, A_log, D; the gated norm
                              + 8192ULL * 4096;              // out_proj
  const std::uint64_t attention = 2 * 4096ULL * 4096 + 2 * 4096ULL * 1024;
  const std::uint64_t mlp = 2 * 4096ULL * 21504;
  EXPECT_EQ(count_parameters(s), 2 * 131072ULL * 4096 + 24 * mamba + 4 * attention + 24 * mlp + 52 * 4096 + 4096);
  EXPECT_EQ(count_parameters(s), 8'100'852'736U);

  // Generation: 24 Mamba states, fixed; 4 attention layers' keys and values, growing.
  const std::uint64_t state = 24ULL * (conv * 4 + 128ULL * 64 * 128) * 2;
  expect_fixed_state_and_growing_kv(s, state, 4 * 2 * 8 * 128 * 2);

  // Training: each kind of layer keeps its own tensors, the MLPs only in their 24 layers (8 x
  // 8192 tokens, so that the forward pass binds).
  const Item activations = training_activations(s, 8, 8192);
  EXPECT_EQ(detail_row(activations, "q"), 4ULL * 8 * 8192 * 4096 * 2);
  EXPECT_EQ(detail_row(activations, "ssm_input"), 24ULL * 8 * 8192 * 4096 * 2);
  EXPECT_EQ(detail_row(activations, "mlp_input"), 24ULL * 8 * 8192 * 4096 * 2);
  EXPECT_EQ(detail_row(activations, "norm_inputs"), 52ULL * 8 * 8192 * 4096 * 2);  // one norm a layer
}

// tiiuae/Falcon-H1-0.5B-Instruct: 36 layers, each with attention (8 heads, 2 KV heads of 64,
// no biases) and a Mamba-2 mixer (24 heads of 64 = mamba_d_ssm 1536, 1 group, state 128, conv
// 4, conv bias, no gated norm: mamba_rms_norm false) side by side, then a gated MLP of 2048;
// two norms a layer, vocab 32784, untied. The published Falcon-H1-0.5B-Base (the same
// architecture) has 521,411,104 parameters (the "Falcon-H1 in JAX" README and others,
// tests/data/hf/README.md).
TEST(StateSpace, FalconH1RunsAttentionAndAMixerInEveryLayer) {
  const ModelSpec s = hf_fixture("falcon-h1-0.5b-instruct");
  EXPECT_EQ(s.family, Family::falcon_h1);
  EXPECT_EQ(ssm_layers(s), 36U);
  EXPECT_EQ(attention_layers(s), 36U);
  EXPECT_EQ(attention_kind(s, 0), AttentionKind::full);
  const std::uint64_t conv = 1536 + 2 * 128;                              // x, B and C: 1,792 channels
  const std::uint64_t mamba = 1024ULL * (1536 + conv + 24)                // in_proj: z, x, B, C and dt
                              + conv * 4 + conv                           // conv1d and its bias
                              + 3 * 24                                    // dt_bias, A_log, D (no gated norm)
                              + 1536ULL * 1024;                           // out_proj, no bias
  const std::uint64_t attention = 1024ULL * 512 * 2 + 1024ULL * 128 * 2;  // q, o: 512 wide; k, v: 128
  const std::uint64_t mlp = 3 * 1024ULL * 2048;
  EXPECT_EQ(mamba, 5'014'344U);
  EXPECT_EQ(count_parameters(s), 2 * 32784ULL * 1024 + 36 * (mamba + attention + mlp + 2 * 1024) + 1024);
  EXPECT_EQ(count_parameters(s), 521'411'104U);

  // Generation: every layer keeps keys and values, growing, and a Mamba state, fixed.
  const std::uint64_t state = 36ULL * (conv * 4 + 24ULL * 64 * 128) * 2;
  EXPECT_EQ(state, 14'671'872U);
  expect_fixed_state_and_growing_kv(s, state, 36 * 2 * 2 * 64 * 2);

  // Training: one kind of block keeping both mixers' tensors in all 36 layers.
  const Item activations = training_activations(s, 2, 2048);
  EXPECT_EQ(detail_row(activations, "q"), 36ULL * 2 * 2048 * 512 * 2);
  EXPECT_EQ(detail_row(activations, "ssm_input"), 36ULL * 2 * 2048 * 1024 * 2);
  EXPECT_EQ(detail_row(activations, "mlp_input"), 36ULL * 2 * 2048 * 1024 * 2);
}

// Zyphra/Zamba2-1.2B: 38 layers, each one RMSNorm and a Mamba-2 mixer (64 heads of 64 = 2 x
// 2048, 1 group, state 128, conv 4 with its bias, gated norm); layers 5, 11, ..., 35 ("hybrid")
// also run the one shared block: an RMSNorm over cat([hidden, embeddings]) (4096), attention
// from 4096 to 32 heads of 128 (32 KV heads) and back to 2048, an RMSNorm and a GELU-gated MLP
// of 8192, stored once; each of the 6 uses adds its own 2048 x 2048 linear and rank-128
// adapters on gate_up and on q, k and v. Vocab 32000, tied. Zamba2-1.2B-Instruct-v2 (the same
// architecture) has 1,215,064,704 parameters (tests/data/hf/README.md).
TEST(StateSpace, Zamba2SharesItsAttentionBlocksAcrossTheHybridLayers) {
  const ModelSpec s = hf_fixture("zamba2-1.2b");
  EXPECT_EQ(s.family, Family::zamba2);
  EXPECT_EQ(ssm_layers(s), 38U);
  EXPECT_EQ(attention_layers(s), 6U);
  EXPECT_EQ(ssm_only_layers(s), 32U);
  EXPECT_EQ(attention_kind(s, 5), AttentionKind::full);
  EXPECT_EQ(attention_kind(s, 6), AttentionKind::mamba);
  const std::uint64_t conv = 4096 + 2 * 128;                        // x, B and C: 4,352 channels
  const std::uint64_t mamba = 2048ULL * (4096 + conv + 64)          // in_proj: z, x, B, C and dt
                              + conv * 4 + conv                     // conv1d and its bias
                              + 3 * 64 + 4096                       // dt_bias, A_log, D, gated norm
                              + 4096ULL * 2048 + 2048;              // out_proj, the layer's norm
  const std::uint64_t block = 3 * 4096ULL * 4096 + 4096ULL * 2048   // q, k, v from 4096; o to 2048
                              + 3 * 2048ULL * 8192                  // gate, up, down
                              + 4096 + 2048;                        // its two norms
  const std::uint64_t use = 2048ULL * 2048                          // the layer's own linear
                            + 128ULL * 2048 + 2 * 8192ULL * 128     // gate_up's adapter
                            + 3 * (128ULL * 4096 + 4096ULL * 128);  // q, k and v's adapters
  EXPECT_EQ(mamba, 25'849'280U);
  EXPECT_EQ(block, 109'058'048U);
  EXPECT_EQ(count_parameters(s), 32000ULL * 2048 + 38 * mamba + block + 6 * use + 2048);
  EXPECT_EQ(count_parameters(s), 1'215'064'704U);

  // A second block adds its weights once; the uses' adapters stay one per use.
  ModelSpec two = s;
  two.shared.blocks = 2;
  EXPECT_EQ(count_parameters(two), count_parameters(s) + block);

  // Generation: 38 layers keep a Mamba state, fixed; only the 6 hybrid layers keep keys and
  // values (each use of the block its own), growing.
  const std::uint64_t state = 38ULL * (conv * 4 + 64ULL * 64 * 128) * 2;
  EXPECT_EQ(state, 41'168'896U);
  expect_fixed_state_and_growing_kv(s, state, 6 * 2 * 32 * 128 * 2);

  // Training: two kinds of block. The hybrid layers' attention reads 4096 wide; the 32 Mamba
  // layers have no MLP, so only the 6 hybrid layers keep the MLP's tensors.
  const Item activations = training_activations(s, 4, 2048);
  EXPECT_EQ(detail_row(activations, "qkv_input"), 6ULL * 2048 * 4 * 4096 * 2);
  EXPECT_EQ(detail_row(activations, "shared_block_input"), 6ULL * 2048 * 4 * 4096 * 2);
  EXPECT_EQ(detail_row(activations, "ssm_input"), 38ULL * 2048 * 4 * 2048 * 2);
  EXPECT_EQ(detail_row(activations, "gate_output"), 6ULL * 2048 * 4 * 8192 * 2);
  EXPECT_EQ(detail_row(activations, "adapter_middles"), 6ULL * 4 * 2048 * 4 * 128 * 2);
}

// ai21labs/Jamba-v0.1: 32 layers, attention where i % 8 == 4 (32 heads, 8 KV heads of 128, no
// rotary), Mamba mixers elsewhere (d_inner 8192, state 16, conv 4, dt_rank 256, RMSNorms on dt,
// B and C), 16 experts of 14336 (top 2) where i % 2 == 1, a dense MLP of 14336 elsewhere, vocab
// 65536, untied. A Jamba Mini model card quotes its index's total_size, 103,140,646,656 B in
// bf16: twice this count.
TEST(StateSpace, JambaHybridWithExpertsCountsItsTensors) {
  const ModelSpec s = hf_fixture("jamba-v0.1");
  EXPECT_EQ(attention_layers(s), 4U);
  EXPECT_EQ(attention_kind(s, 4), AttentionKind::full);
  EXPECT_EQ(attention_kind(s, 12), AttentionKind::full);
  EXPECT_TRUE(is_moe_layer(s, 1));
  EXPECT_FALSE(is_moe_layer(s, 4));
  const std::uint64_t mamba = 4096ULL * 16384 + 8192 * 5  // in_proj, conv1d and its bias
                              + 8192ULL * (256 + 32)      // x_proj
                              + 256ULL * 8192 + 8192      // dt_proj
                              + 8192ULL * 16 + 8192       // A_log, D
                              + 256 + 16 + 16             // dt, B and C norms
                              + 8192ULL * 4096;           // out_proj
  const std::uint64_t attention = 2 * 4096ULL * 4096 + 2 * 4096ULL * 1024;
  const std::uint64_t mlp = 3 * 4096ULL * 14336;
  EXPECT_EQ(mamba, 105'308'448U);
  EXPECT_EQ(count_parameters(s), 2 * 65536ULL * 4096 + 28 * mamba + 4 * attention + 16 * mlp +
                                     16 * (16 * mlp + 4096 * 16) + 32 * 2 * 4096 + 4096);
  EXPECT_EQ(2 * count_parameters(s), 103'140'646'656U);
}

// Training a hybrid with experts: four kinds of block, each layer counted once.
TEST(StateSpace, JambaTrainingHoldsFourKindsOfBlock) {
  const ModelSpec s = hf_fixture("jamba-v0.1");
  TrainingOptions o;
  o.lora.rank = 8;
  const Item activations = training_activations(s, 1, 1024, o);
  // The attention layers' q (4 of them), the Mamba layers' xz (28), the dense MLPs' gate
  // outputs (16) and the experts' intermediates (16 MoE layers x 4 x 2 routed x 14336).
  EXPECT_EQ(detail_row(activations, "q"), 4ULL * 1024 * 4096 * 2);
  EXPECT_EQ(detail_row(activations, "xz"), 28ULL * 1024 * 16384 * 2);
  EXPECT_EQ(detail_row(activations, "gate_output"), 16ULL * 1024 * 14336 * 2);
  EXPECT_EQ(detail_row(activations, "expert_intermediates"), 16ULL * 4 * 2 * 1024 * 14336 * 2);
}

// A Mamba layer keeps conv channels x d_conv and d_inner x d_state per sequence, whatever the
// tokens: 24 x (1536 x 4 + 1536 x 16) x 2 B at bf16.
TEST(StateSpace, MambaStateIsTheSameAtAnyLength) {
  const ModelSpec s = hf_fixture("mamba-130m-hf");
  const Breakdown short_prompt = estimate_kv_cache(s, bf16_tokens(512));
  const Breakdown long_prompt = estimate_kv_cache(s, bf16_tokens(65536));
  EXPECT_EQ(short_prompt.components.front().name, "ssm_state");
  EXPECT_EQ(short_prompt.total().count(), 24ULL * (1536 * 4 + 1536 * 16) * 2);
  EXPECT_EQ(long_prompt.total(), short_prompt.total());
  EXPECT_EQ(detail_row(short_prompt.components.front(), "conv_state"), 24ULL * 1536 * 4 * 2);
  // Eight sequences hold eight states.
  KvCacheOptions eight = bf16_tokens(512);
  eight.batch = 8;
  EXPECT_EQ(estimate_kv_cache(s, eight).total().count(), 8 * short_prompt.total().count());
}

// A hybrid keeps both: its 29 Mamba layers' state, fixed, and its 3 attention layers' keys and
// values, growing with the tokens.
TEST(StateSpace, HybridHoldsAStateAndAKvCache) {
  const ModelSpec s = hf_fixture("bamba-9b");
  const std::uint64_t state = 29ULL * ((8192 + 256) * 4 + 8192ULL * 128) * 2;
  for (const std::uint64_t tokens : {4096ULL, 8192ULL}) {
    SCOPED_TRACE(tokens);
    const Item kv = estimate_kv_cache(s, bf16_tokens(tokens)).components.front();
    EXPECT_EQ(kv.name, "kv_cache");
    EXPECT_EQ(detail_row(kv, "ssm_state"), state);
    EXPECT_EQ(detail_row(kv, "full_layers"), 3 * 2 * 8 * 128 * tokens * 2);
    EXPECT_EQ(kv.bytes.count(), state + 3 * 2 * 8 * 128 * tokens * 2);
  }
}

// Qwen3.5-9B's 24 gated DeltaNet layers: a convolution state of 4 x 8192 channels in bf16 and
// a recurrent state of 32 heads x 128 x 128 in fp32, as chunk_gated_delta_rule returns it;
// its 8 attention layers' 4 KV heads of 256 grow with the tokens.
TEST(StateSpace, GatedDeltaNetKeepsAnFp32RecurrentState) {
  const ModelSpec s = hf_fixture("qwen3.5-9b");
  const std::uint64_t state = 24ULL * (4 * 8192 * 2 + 32ULL * 128 * 128 * 4);  // 51,904,512
  for (const std::uint64_t tokens : {4096ULL, 8192ULL}) {
    SCOPED_TRACE(tokens);
    const Item kv = estimate_kv_cache(s, bf16_tokens(tokens)).components.front();
    EXPECT_EQ(detail_row(kv, "ssm_state"), state);
    EXPECT_EQ(kv.bytes.count(), state + 8ULL * 2 * 4 * 256 * tokens * 2);
  }
  // Training saves in_proj_qkvz's whole output (z is a view of it), the convolution's input
  // and output, the fp32 gates and K K^T per 64-token chunk, the output and the norm's.
  TrainingShape shape;
  shape.batch = 1;
  shape.seq = 4096;
  shape.compute = precisions::bf16;
  const Item layer = layer_activations(s, shape, false, BlockMixer::ssm);
  EXPECT_EQ(detail_row(layer, "in_proj_qkvz"), 4096ULL * (8192 + 4096) * 2);
  EXPECT_EQ(detail_row(layer, "conv_in_out"), 2 * 4096ULL * 8192 * 2);
  EXPECT_EQ(detail_row(layer, "chunk_kkt"), 4096ULL * 32 * 64 * 4);
}

// vLLM splits a gated DeltaNet by head: Qwen3-Next's 16 key and 32 value heads over 2 ranks.
TEST(StateSpace, TensorParallelSplitsTheMixerByHead) {
  const ModelSpec s = hf_fixture("qwen3-next-80b-a3b-instruct");
  TensorShardOptions o{.degree = 2, .vocab_multiple = 64, .replicate_kv_heads = true, .split_state_space = true};
  const TensorShard shard = tensor_parallel_shard(s, o);
  EXPECT_EQ(shard.spec.ssm.heads, 16U);
  EXPECT_EQ(shard.spec.ssm.groups, 8U);
  EXPECT_EQ(shard.spec.ssm.d_inner, 2048U);
  EXPECT_EQ(ssm_conv_channels(shard.spec.ssm), 4096U);  // (2 x 16 x 128 + 32 x 128) / 2
  EXPECT_EQ(shard.spec.n_kv_heads, 1U);
  o.degree = 3;
  EXPECT_THROW(tensor_parallel_shard(s, o), Error);  // 32 value heads over 3
  o.split_state_space = false;
  o.degree = 2;
  EXPECT_THROW(tensor_parallel_shard(s, o), Error);  // Megatron's layouts do not split it
}

// Training: a Mamba block keeps what mamba_inner_fn saves (checkpoint_lvl 1).
TEST(StateSpace, MambaTrainingKeepsTheFusedKernelsTensors) {
  const ModelSpec s = hf_fixture("mamba-130m-hf");
  TrainingShape shape;
  shape.batch = 2;
  shape.seq = 4096;
  shape.compute = precisions::bf16;
  const Item layer = layer_activations(s, shape, false, BlockMixer::ssm);
  EXPECT_EQ(detail_row(layer, "xz"), 4096ULL * 2 * 3072 * 2);
  EXPECT_EQ(detail_row(layer, "x_dbl"), 4096ULL * 2 * 80 * 2);
  EXPECT_EQ(detail_row(layer, "scan_output"), 4096ULL * 2 * 1536 * 2);
  // fp32 states of 2 x d_state per channel, one per 2048-token chunk.
  EXPECT_EQ(detail_row(layer, "scan_states"), 2ULL * 1536 * 2 * 32 * 4);
  for (const Item& r : layer.detail) EXPECT_NE(r.name, "q") << "a Mamba block has no attention";
}

// Without mamba_ssm, transformers runs its pure-PyTorch path (measured: Mamba-130m generation
// and Bamba-9B inference, docs/accuracy.md); the SSM phase is then its fp32 scan.
TEST(StateSpace, ThePyTorchPathMaterialisesTheScan) {
  const auto workspace = [](const char* model, const char* precision, std::uint64_t batch, std::uint64_t seq) {
    Workload w;
    w.batch = batch;
    w.seq_len = seq;
    w.weights.precision = parse_precision(precision);
    w.include_overhead = false;
    w.ssm_kernels = SsmKernels::torch;
    const Breakdown b = estimate_workload(hf_fixture(model), w);
    return b.find("forward_workspace")->bytes.count();
  };
  // Mamba-130m, 4 x 2048 tokens, fp32: in_proj 4 x 2048 x 3072 x 4 = 100,663,296; the
  // convolution's output and dt, 50,331,648 each; x_proj 4 x 2048 x 80 x 4 = 2,621,440;
  // exp(A dt), dt B and dt B u, 3 x 4 x 1536 x 2048 x 16 x 4 = 2,415,919,104; the loop's outputs
  // and their stack, 2 x 50,331,648; the block's input and its norm, 2 x 4 x 2048 x 768 x 4.
  EXPECT_EQ(workspace("mamba-130m-hf", "fp32", 4, 2048),
            100663296ULL + 2 * 50331648 + 2621440 + 2415919104ULL + 2 * 50331648 + 2 * 25165824);
  // Bamba-9B, 1 x 4096 bf16 tokens (16 chunks of 256): in_proj 4096 x (8192 + 8448 + 128) x 2 =
  // 137,363,456; the convolution 4096 x 8448 x 2 = 69,206,016; x dt and D's residual in fp32,
  // 2 x 4096 x 8192 x 4 = 268,435,456; B and C for each of 128 heads, 2 x 4096 x 128 x 128 x 4 =
  // 536,870,912; the decays 128 x 4096 x 256 x 4 = 536,870,912; C x B for every pair in a chunk,
  // 4096 x 256 x 128 x 128 x 4 = 68,719,476,736, and its sum over the state, 536,870,912; the
  // block's input and its norm 2 x 4096 x 4096 x 2.
  EXPECT_EQ(workspace("bamba-9b", "bf16", 1, 4096),
            137363456ULL + 69206016 + 268435456 + 536870912 + 536870912 + 68719476736ULL + 536870912 + 2 * 33554432ULL);
}

// Only Bamba's 3 attention layers attend: 3 x 4096 positions for a query after 4096 tokens.
TEST(StateSpace, OnlyAttentionLayersAttend) {
  EXPECT_EQ(attended_positions(hf_fixture("bamba-9b"), 4096.0), 3.0 * 4096);
  EXPECT_EQ(attended_positions(hf_fixture("mamba-130m-hf"), 4096.0), 0.0);
}

TEST(StateSpace, AttentionWorkloadsDoNotApply) {
  const ModelSpec s = hf_fixture("mamba-130m-hf");
  try {
    (void)model_hooks(s, 1, 128);
    ADD_FAILURE() << "hooks listed for a Mamba model";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_input);
    EXPECT_NE(std::string(e.what()).find("TransformerLens has no hook points for state-space"), std::string::npos);
  }
  EXPECT_THROW((void)estimate_attention_patterns(s, 1, 128, {}), Error);
  EXPECT_THROW((void)estimate_qkov(s, 1, 128, {}), Error);
  TensorShardOptions two;
  two.degree = 2;
  EXPECT_THROW((void)tensor_parallel_shard(s, two), Error);
}

TEST(StateSpace, InconsistentSizesAreRefused) {
  ModelSpec s = hf_fixture("mamba-codestral-7b");
  s.ssm.heads = 100;  // does not divide d_inner 8192
  EXPECT_THROW(validate(s), Error);
  s = hf_fixture("mamba-130m-hf");
  s.n_heads = 8;  // no attention layer to have heads
  EXPECT_THROW(validate(s), Error);
  s = hf_fixture("mamba-130m-hf");
  s.layer_types.assign(24, AttentionKind::mamba);
  s.ssm = {};
  EXPECT_THROW(validate(s), Error);  // mamba layers without sizes
}

}  // namespace state_space_test
}  // namespace memplan
