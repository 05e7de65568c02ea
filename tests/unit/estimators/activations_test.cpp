#include "memplan/estimators/activations.hpp"

#include <gtest/gtest.h>

#include "reference_models.hpp"

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"

namespace memplan {
namespace activations_test {

using testing::gpt2;

ActivationCacheOptions fp32_1024() {
  ActivationCacheOptions o;
  o.batch = 1;
  o.seq = 1024;
  o.precision = precisions::fp32;
  return o;
}

Bytes cache_bytes(const ModelSpec& s, const ActivationCacheOptions& o) {
  const Breakdown b = estimate_activation_cache(s, o);
  testing::expect_consistent(b);
  return b.total();
}

constexpr std::uint64_t kResid = 1ULL * 1024 * 768 * 4;  // one [1, 1024, 768] fp32 tensor: 3,145,728 B

TEST(Activations, Gpt2HasTheHooksTransformerLensCaches) {
  // 17 hooks per block (TransformerLens gpt2: run_with_cache returns 208 entries) + embed,
  // pos_embed and ln_final's two.
  const std::vector<Hook> hooks = model_hooks(gpt2(), 1, 1024);
  EXPECT_EQ(hooks.size(), 12U * 17 + 4);
  EXPECT_EQ(hooks.front().name, "hook_embed");
  EXPECT_EQ(hooks[2].name, "blocks.0.hook_resid_pre");
  EXPECT_EQ(hooks.back().name, "ln_final.hook_normalized");
}

TEST(Activations, FullCacheOfGpt2) {
  // Elements per block: 11 [1,1024,768] tensors (resid_pre, ln1/ln2 normalized, q, k, v, z,
  // attn_out, resid_mid, mlp_out, resid_post) = 8,650,752; 2 scales of 1,024; scores and
  // pattern 2 x 12 x 1024^2 = 25,165,824; mlp pre/post 2 x 3,145,728 = 6,291,456
  // -> 40,110,080 per block, 481,320,960 for 12. Outside blocks: embed, pos_embed and
  // ln_final.normalized 3 x 786,432 + ln_final.scale 1,024 = 2,360,320. x 4 bytes.
  EXPECT_EQ(cache_bytes(gpt2(), fp32_1024()).count(), (481320960ULL + 2360320ULL) * 4);
}

TEST(Activations, SelectiveFilterCachesExactlyThoseHooks) {
  ActivationCacheOptions o = fp32_1024();
  o.filter = {"blocks.0.hook_resid_post", "blocks.5.hook_resid_post", "blocks.11.hook_resid_post"};
  const std::vector<Hook> hooks = selected_hooks(gpt2(), o);
  ASSERT_EQ(hooks.size(), 3U);
  EXPECT_EQ(hooks[1].name, "blocks.5.hook_resid_post");
  const Breakdown b = estimate_activation_cache(gpt2(), o);
  testing::expect_consistent(b);
  EXPECT_EQ(b.total().count(), 3 * kResid);
  ASSERT_EQ(b.alternatives.size(), 1U);  // the full cache, for the saving
  EXPECT_EQ(b.alternatives.front().replaces, "activations");
  EXPECT_EQ(b.alternatives.front().item.bytes.count(), (481320960ULL + 2360320ULL) * 4);
}

TEST(Activations, GlobsBracesAndLayerLists) {
  ActivationCacheOptions o = fp32_1024();
  o.filter = {"blocks.*.hook_resid_post"};
  EXPECT_EQ(cache_bytes(gpt2(), o).count(), 12 * kResid);
  o.filter = {"blocks.{0-2}.hook_resid_post"};
  EXPECT_EQ(cache_bytes(gpt2(), o).count(), 3 * kResid);
  o.filter = {"*hook_resid_post"};
  o.layers = parse_layer_selection("0,5,11");
  EXPECT_EQ(cache_bytes(gpt2(), o).count(), 3 * kResid);
  EXPECT_TRUE(hook_name_matches("blocks.{1,3}.attn.hook_?", "blocks.3.attn.hook_q"));
  EXPECT_FALSE(hook_name_matches("blocks.{1,3}.attn.hook_?", "blocks.2.attn.hook_q"));
  // A range matches a number as layers are written: whole, without leading zeros, and
  // beside literal digits ({1-3}0 is 10, 20 and 30).
  EXPECT_TRUE(hook_name_matches("blocks.{8-11}.hook_z", "blocks.10.hook_z"));
  EXPECT_FALSE(hook_name_matches("blocks.{8-11}.hook_z", "blocks.12.hook_z"));
  EXPECT_FALSE(hook_name_matches("blocks.{0-11}.hook_z", "blocks.07.hook_z"));
  EXPECT_TRUE(hook_name_matches("blocks.{1-3}0.hook_z", "blocks.10.hook_z"));
  EXPECT_FALSE(hook_name_matches("blocks.{1-3}0.hook_z", "blocks.40.hook_z"));
  EXPECT_TRUE(hook_name_matches("*.{0-3}.*_{q,z}", "blocks.3.attn.hook_z"));
  EXPECT_TRUE(hook_name_matches("blocks.{2-1}", "blocks.2-1"));  // not a range: literal text, as before
}

TEST(Activations, ExactNamesAndGlobsInOnePatternSelectTheirUnion) {
  // blocks.{0-2}.hook_resid_post names 3 hooks exactly; blocks.1{,0,1}.attn.hook_? is a glob
  // per block 1, 10 and 11 matching hook_q, hook_k, hook_v and hook_z (hook_attn_scores and
  // hook_pattern are longer): 3 + 3 x 4 = 15 hooks, in the model's order.
  ActivationCacheOptions o = fp32_1024();
  o.filter = {"blocks.{0-2}.hook_resid_post", "blocks.1{,0,1}.attn.hook_?"};
  const std::vector<Hook> hooks = selected_hooks(gpt2(), o);
  ASSERT_EQ(hooks.size(), 15U);
  EXPECT_EQ(hooks[0].name, "blocks.0.hook_resid_post");
  EXPECT_EQ(hooks[1].name, "blocks.1.attn.hook_q");
  EXPECT_EQ(hooks[5].name, "blocks.1.hook_resid_post");
  EXPECT_EQ(hooks.back().name, "blocks.11.attn.hook_z");
}

TEST(Activations, TransformerLensOptionsChangeTheFigure) {
  ActivationCacheOptions o = fp32_1024();
  o.filter = {"blocks.*.hook_resid_post"};
  o.pos_slice = 1;  // last position only: 12 x 768 x 4
  EXPECT_EQ(cache_bytes(gpt2(), o).count(), 12ULL * 768 * 4);
  o.pos_slice = 0;
  o.batch = 4;
  o.remove_batch_dim = true;  // batch element 0 only
  EXPECT_EQ(cache_bytes(gpt2(), o).count(), 12 * kResid);
  o.remove_batch_dim = false;
  o.incl_bwd = true;  // forward and gradient: 2 x 4 x 12 tensors
  EXPECT_EQ(cache_bytes(gpt2(), o).count(), 2ULL * 4 * 12 * kResid);
  o = fp32_1024();
  o.filter = {"blocks.*.hook_resid_post", "ln_final.hook_normalized"};
  o.stop_at_layer = 6;  // blocks 0-5 run; ln_final does not
  EXPECT_EQ(cache_bytes(gpt2(), o).count(), 6 * kResid);
}

TEST(Activations, CpuCacheMovesBytesToTheHost) {
  ActivationCacheOptions o = fp32_1024();
  o.filter = {"blocks.*.hook_resid_post"};
  o.on_cpu = true;
  const Breakdown b = estimate_activation_cache(gpt2(), o);
  testing::expect_consistent(b);
  EXPECT_EQ(b.total().count(), 0U);
  EXPECT_EQ(b.host_total().count(), 12 * kResid);
}

TEST(Activations, GqaKeysUseKvHeads) {
  ModelSpec llama3 = family_defaults(Family::llama);  // Meta-Llama-3-8B attention shapes
  llama3.name = "llama-3-8b";
  llama3.d_model = 4096;
  llama3.n_layers = 32;
  llama3.n_heads = 32;
  llama3.n_kv_heads = 8;
  llama3.d_head = 128;
  llama3.d_mlp = 14336;
  llama3.vocab_size = 128256;
  llama3.max_seq_len = 8192;
  ActivationCacheOptions o;
  o.seq = 2048;
  o.precision = precisions::bf16;
  o.filter = {"blocks.0.attn.hook_k", "blocks.0.attn.hook_q"};
  // k: 2048 x 8 x 128 x 2 B = 4,194,304; q: 2048 x 32 x 128 x 2 B = 16,777,216.
  EXPECT_EQ(cache_bytes(llama3, o).count(), 4194304ULL + 16777216ULL);
  o.filter = {"blocks.0.mlp.hook_pre_linear"};  // gated MLPs have it
  EXPECT_EQ(cache_bytes(llama3, o).count(), 2048ULL * 14336 * 2);
}

TEST(Activations, UnmatchedFilterIsAnError) {
  ActivationCacheOptions o = fp32_1024();
  o.filter = {"blocks.40.hook_resid_post"};
  try {
    estimate_activation_cache(gpt2(), o);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.key(), "activation_cache_filter");
    EXPECT_NE(std::string(e.what()).find("matches no hook"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_layer_selection("3-1"), Error);
  EXPECT_THROW(parse_layer_selection("a"), Error);
  EXPECT_EQ(parse_layer_selection("0-3,8"), (std::vector<std::uint64_t>{0, 1, 2, 3, 8}));
}

TEST(Activations, LongerSequencesNeverCostLess) {
  ActivationCacheOptions o = fp32_1024();
  Bytes previous;
  for (std::uint64_t seq : {1U, 2U, 64U, 1024U, 4096U}) {
    o.seq = seq;
    const Bytes now = cache_bytes(gpt2(), o);
    EXPECT_GT(now, previous);
    previous = now;
  }
}

}  // namespace activations_test
}  // namespace memplan
