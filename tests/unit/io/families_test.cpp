// The decoder families whose layers differ: parameter counts and KV caches of real configs
// (tests/data/hf), each expected figure derived by hand from the config's sizes and written
// out, or published (the built-in models' published_params are checked in hf_config_test).
#include <gtest/gtest.h>

#include <algorithm>

#include "hf_fixtures.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/estimators/activations.hpp"
#include "memplan/estimators/compute_time.hpp"
#include "memplan/estimators/kv_cache.hpp"
#include "memplan/estimators/training.hpp"
#include "memplan/io/hf_config.hpp"
#include "memplan/io/model_file.hpp"
#include "memplan/plan/workload.hpp"

namespace memplan {
namespace families_test {

using testing::hf_fixture;

// The bytes of the detail row `name` of the kv_cache component.
std::uint64_t kv_row(const Breakdown& b, const std::string& name) {
  for (const Item& r : b.components.front().detail) {
    if (r.name == name) return r.bytes.count();
  }
  ADD_FAILURE() << "no row " << name;
  return 0;
}

KvCacheOptions bf16_tokens(std::uint64_t tokens) {
  KvCacheOptions o;
  o.tokens = tokens;
  o.precision = precisions::bf16;
  return o;
}

// EleutherAI/gpt-j-6b: d 4096, 28 layers, MLP 16384 with biases, one LayerNorm per
// (parallel) block, no attention biases, vocab 50400, an untied head with a bias.
// Its model card says 6,053,381,344, 2,498,560 more than its tensors hold (not explained there).
TEST(Families, GptJCountsItsTensors) {
  const std::uint64_t embed = 50400ULL * 4096;                                         // 206,438,400
  const std::uint64_t layer = 2 * 4096                                                 // ln_1 weight and bias
                              + 4ULL * 4096 * 4096                                     // q, k, v, out
                              + (4096ULL * 16384 + 16384) + (16384ULL * 4096 + 4096);  // fc_in, fc_out
  const std::uint64_t head = 4096ULL * 50400 + 50400;
  EXPECT_EQ(layer, 201'355'264U);
  EXPECT_EQ(count_parameters(hf_fixture("gpt-j-6b")), embed + 28 * layer + 2 * 4096 + head);
  EXPECT_EQ(count_parameters(hf_fixture("gpt-j-6b")), 6'050'882'784U);
}

// bigcode/starcoder2-3b: d 3072, 30 layers, 24 heads / 2 KV heads of 128, plain MLP of 12288,
// LayerNorms and biases everywhere, tied head, a 4096-token sliding window on every layer.
TEST(Families, StarCoder2CountsItsTensors) {
  const std::uint64_t layer = 2 * 2 * 3072                                             // two LayerNorms
                              + 2 * (3072ULL * 3072 + 3072)                            // q, o with biases
                              + 2 * (3072ULL * 256 + 256)                              // k, v: 2 heads x 128
                              + (3072ULL * 12288 + 12288) + (12288ULL * 3072 + 3072);  // c_fc, c_proj
  const ModelSpec s = hf_fixture("starcoder2-3b");
  EXPECT_EQ(count_parameters(s), 49152ULL * 3072 + 30 * layer + 2 * 3072);
  EXPECT_EQ(count_parameters(s), 3'030'371'328U);
  EXPECT_EQ(attention_layer_counts(s),
            (std::vector<std::pair<AttentionKind, std::uint64_t>>{{AttentionKind::sliding, 30}}));
}

// meta-llama/Llama-4-Scout-17B-16E, its text_config: d 5120, 48 layers, 40 heads / 8 KV heads
// of 128, 16 routed experts of 8192 (1 per token) and one shared expert of 8192 on every layer,
// untied head over 202,048 tokens; every 4th layer global without rotary, the others chunked.
// The Hub's safetensors total, 108,641,793,536, also holds the vision tower and projector.
TEST(Families, Llama4ScoutTextModel) {
  const std::uint64_t attention = 2ULL * 5120 * 5120 + 2ULL * 5120 * 1024;  // q, o; k, v
  const std::uint64_t experts = 16ULL * 3 * 5120 * 8192;
  const std::uint64_t shared = 3ULL * 5120 * 8192;
  const std::uint64_t router = 5120ULL * 16;
  const std::uint64_t layer = attention + 2 * 5120 + experts + shared + router;
  const ModelSpec s = hf_fixture("llama-4-scout-17b-16e");
  EXPECT_EQ(count_parameters(s), 2 * 202048ULL * 5120 + 48 * layer + 5120);
  EXPECT_EQ(count_parameters(s), 107'769'861'120U);
  EXPECT_EQ(attention_layer_counts(s), (std::vector<std::pair<AttentionKind, std::uint64_t>>{
                                           {AttentionKind::chunked, 36}, {AttentionKind::nope, 12}}));
  EXPECT_EQ(attention_kind(s, 3), AttentionKind::nope);
  EXPECT_EQ(attention_kind(s, 4), AttentionKind::chunked);

  // 16,384 tokens: chunked layers keep one 8,192-token chunk, the global ones every token.
  const Breakdown kv = estimate_kv_cache(s, bf16_tokens(16384));
  EXPECT_EQ(kv_row(kv, "chunked_layers"), 36ULL * 2 * 8 * 128 * 8192 * 2);  // 1,207,959,552
  EXPECT_EQ(kv_row(kv, "nope_layers"), 12ULL * 2 * 8 * 128 * 16384 * 2);    // 805,306,368
  EXPECT_EQ(kv.total().count(), 2'013'265'920U);
}

// meta-llama/Llama-4-Maverick-17B-128E-Instruct, its text_config: Scout's layers, but the MoE
// (128 routed experts of 8192 and a shared expert) only on every 2nd layer (moe_layers 1, 3,
// ..., 47), dense MLPs of 16384 on the others. 400,711,848,960 is the count a public adapter
// reconciled to the Hub's total gives its decoder (configs/models/llama-4-maverick-17b-128e-instruct.yaml).
TEST(Families, Llama4MaverickInterleavesExpertsWithDenseLayers) {
  const std::uint64_t attention = 2ULL * 5120 * 5120 + 2ULL * 5120 * 1024 + 2 * 5120;  // q, o; k, v; norms
  const std::uint64_t moe = 128ULL * 3 * 5120 * 8192 + 3ULL * 5120 * 8192 + 5120ULL * 128;
  const std::uint64_t dense = 3ULL * 5120 * 16384;
  const ModelSpec s = hf_fixture("llama-4-maverick-17b-128e-instruct");
  EXPECT_EQ(count_parameters(s), 48 * attention + 24 * moe + 24 * dense + 2 * 202048ULL * 5120 + 5120);
  EXPECT_EQ(count_parameters(s), 400'711'848'960U);
  // Both checkpoints carry the same vision tower and projector: Fireworks' Maverick total and
  // the Hub's Scout total exceed memplan's language-model counts by the same 871,932,416.
  EXPECT_EQ(401'583'781'376U - count_parameters(s),
            108'641'793'536U - count_parameters(hf_fixture("llama-4-scout-17b-16e")));
  EXPECT_EQ(layers_in(s, LayerSet::moe_mlp, 0, 48), 24U);
  EXPECT_TRUE(layer_holds(s, LayerSet::moe_mlp, 1));
  EXPECT_FALSE(layer_holds(s, LayerSet::moe_mlp, 0));
}

// microsoft/Phi-3.5-MoE-instruct: d 4096, 32 layers, 32 heads / 8 KV heads of 128 with
// biases, 16 experts of 6400 (router without bias), LayerNorms, untied head with a bias.
// 41,873,153,344 is also the total quoted in a public digest of its release.
TEST(Families, PhiMoeCountsItsTensors) {
  const std::uint64_t attention = 2 * (4096ULL * 4096 + 4096) + 2 * (4096ULL * 1024 + 1024);
  const std::uint64_t layer = attention + 16ULL * 3 * 4096 * 6400 + 4096ULL * 16 + 2 * 2 * 4096;
  EXPECT_EQ(count_parameters(hf_fixture("phi-3.5-moe-instruct")),
            32 * layer + 32064ULL * 4096 + (32064ULL * 4096 + 32064) + 2 * 4096);
  EXPECT_EQ(count_parameters(hf_fixture("phi-3.5-moe-instruct")), 41'873'153'344U);
}

// ibm-granite/granite-3.0-1b-a400m-instruct: d 1024, 24 layers, 16 heads / 8 KV heads of 64,
// 32 experts of 512 (8 per token), tied. sum(p.numel()) of granite-3.1-1b-a400m-instruct,
// the same shapes, is 1,334,628,352 in a public benchmark harness.
TEST(Families, GraniteMoeCountsItsTensors) {
  const std::uint64_t layer = 2ULL * 1024 * 1024 + 2ULL * 1024 * 512  // q, o; k, v
                              + 32ULL * 3 * 1024 * 512 + 1024ULL * 32 + 2 * 1024;
  EXPECT_EQ(count_parameters(hf_fixture("granite-3.0-1b-a400m-instruct")), 24 * layer + 49155ULL * 1024 + 1024);
  EXPECT_EQ(count_parameters(hf_fixture("granite-3.0-1b-a400m-instruct")), 1'334'628'352U);
}

// CohereForAI/c4ai-command-r-v01: d 8192, 40 parallel blocks with one bias-free LayerNorm,
// 64 heads, MLP 22528, tied head over 256,000 tokens.
TEST(Families, CommandRCountsItsTensors) {
  EXPECT_EQ(count_parameters(hf_fixture("c4ai-command-r-v01")),
            40 * (4ULL * 8192 * 8192 + 3ULL * 8192 * 22528 + 8192) + 256000ULL * 8192 + 8192);
}

// CohereForAI/c4ai-command-r7b-12-2024 (cohere2): the shapes of aya-expanse-8b, whose
// published count is 8,028,033,024; every 4th layer global without rotary, the others a
// 4096-token window.
TEST(Families, CommandR7bSlidingAndNope) {
  const ModelSpec s = hf_fixture("c4ai-command-r7b-12-2024");
  EXPECT_EQ(count_parameters(s),
            32 * (2ULL * 4096 * 4096 + 2ULL * 4096 * 1024 + 3ULL * 4096 * 14336 + 4096) + 256000ULL * 4096 + 4096);
  EXPECT_EQ(count_parameters(s), 8'028'033'024U);
  const Breakdown kv = estimate_kv_cache(s, bf16_tokens(8192));
  EXPECT_EQ(kv_row(kv, "sliding_layers"), 24ULL * 2 * 8 * 128 * 4096 * 2);
  EXPECT_EQ(kv_row(kv, "nope_layers"), 8ULL * 2 * 8 * 128 * 8192 * 2);
}

// TransformerLens' own list of architectures it does not load
// (transformer_lens/tools/model_registry/data/architecture_gaps.json, snapshot of 2026-07-22)
// names Llama4ForCausalLM, Starcoder2ForCausalLM and Cohere2ForCausalLM; it loads
// CohereForCausalLM, GPTBigCodeForCausalLM, Gemma2ForCausalLM and the Llama variants.
TEST(Families, HooksSayWhereTransformerLensDoesNotLoadTheModel) {
  for (const char* gap : {"llama-4-scout-17b-16e", "starcoder2-3b", "c4ai-command-r7b-12-2024"}) {
    SCOPED_TRACE(gap);
    EXPECT_NE(transformer_lens_gap(hf_fixture(gap)).find("TransformerLens does not load"), std::string::npos);
  }
  EXPECT_NE(transformer_lens_gap(hf_fixture("llama-4-scout-17b-16e")).find("Llama4ForCausalLM"), std::string::npos);
  EXPECT_NE(transformer_lens_gap(hf_fixture("c4ai-command-r7b-12-2024")).find("Cohere2ForCausalLM"), std::string::npos);
  for (const char* loaded : {"c4ai-command-r-v01", "gpt-bigcode-santacoder", "gemma-2-9b", "llama-3.1-8b"}) {
    SCOPED_TRACE(loaded);
    EXPECT_EQ(transformer_lens_gap(hf_fixture(loaded)), "");
  }
  // The extraction estimate carries it on its activation cache row.
  ActivationCacheOptions o;
  o.seq = 16;
  const Breakdown cache = estimate_activation_cache(hf_fixture("starcoder2-3b"), o);
  EXPECT_NE(cache.components.front().note.find("Starcoder2ForCausalLM"), std::string::npos);
}

// bigcode/gpt_bigcode-santacoder: multi-query attention (one KV head of 128), biases and
// LayerNorms everywhere, learned positions, tied head. With starcoderbase-1b's vocabulary
// (49,152) and positions (8,192) the same shapes give its published 1,137,207,296.
TEST(Families, GptBigCodeMultiQuery) {
  const std::uint64_t layer = (2048ULL * 2304 + 2304) + (2048ULL * 2048 + 2048) + 2 * 2 * 2048 +
                              (2048ULL * 8192 + 8192) + (8192ULL * 2048 + 2048);
  ModelSpec s = hf_fixture("gpt-bigcode-santacoder");
  EXPECT_EQ(s.n_kv_heads, 1U);
  EXPECT_EQ(count_parameters(s), 49280ULL * 2048 + 2048ULL * 2048 + 24 * layer + 2 * 2048);
  s.vocab_size = 49152;
  s.max_seq_len = s.n_positions = 8192;
  EXPECT_EQ(count_parameters(s), 1'137'207'296U);
}

// EleutherAI/gpt-neo-125m: global and 256-token local layers alternate from layer 0.
TEST(Families, GptNeoLocalLayers) {
  const ModelSpec s = hf_fixture("gpt-neo-125m");
  EXPECT_EQ(attention_kind(s, 0), AttentionKind::full);
  EXPECT_EQ(attention_kind(s, 1), AttentionKind::sliding);
  const Breakdown kv = estimate_kv_cache(s, bf16_tokens(2048));
  EXPECT_EQ(kv_row(kv, "full_layers"), 6ULL * 2 * 12 * 64 * 2048 * 2);
  EXPECT_EQ(kv_row(kv, "sliding_layers"), 6ULL * 2 * 12 * 64 * 256 * 2);
}

// google/gemma-2-9b: 42 layers, 8 KV heads of 256; odd layers a 4096-token window.
TEST(Families, Gemma2SlidingAndGlobalLayers) {
  const ModelSpec s = hf_fixture("gemma-2-9b");
  const Breakdown kv = estimate_kv_cache(s, bf16_tokens(8192));
  EXPECT_EQ(kv_row(kv, "sliding_layers"), 21ULL * 2 * 8 * 256 * 4096 * 2);  // 704,643,072
  EXPECT_EQ(kv_row(kv, "full_layers"), 21ULL * 2 * 8 * 256 * 8192 * 2);     // 1,409,286,144
  EXPECT_EQ(kv.total().count(), 2'113'929'216U);
  // Below the window every layer keeps every token: 42 x 2 x 8 x 256 x 1000 x 2.
  EXPECT_EQ(estimate_kv_cache(s, bf16_tokens(1000)).total().count(), 344'064'000U);
  // An engine that ignores the window keeps 8192 tokens on all 42 layers.
  KvCacheOptions all = bf16_tokens(8192);
  all.honor_sliding_window = false;
  EXPECT_EQ(estimate_kv_cache(s, all).total().count(), 42ULL * 2 * 8 * 256 * 8192 * 2);
  // Right after a pass over the prompt, transformers' sliding layers still hold its storage:
  // measured on an H200 (docs/accuracy.md), 2,818,572,288 B of cache before the LM head.
  KvCacheOptions after_prefill = bf16_tokens(8192);
  after_prefill.sliding_keeps_prompt = true;
  const Breakdown prompt = estimate_kv_cache(s, after_prefill);
  EXPECT_EQ(kv_row(prompt, "sliding_layers"), 21ULL * 2 * 8 * 256 * 8192 * 2);
  EXPECT_EQ(prompt.total().count(), 2'818'572'288U);
}

// Gemma 2's final soft-cap (logits / 30, tanh, * 30) is three ops in transformers: each
// output is allocated before its input is freed, so two logits tensors are alive. Measured on
// an H200, gemma-2-9b's forward over 8192 tokens peaked 4,194,304,000 B higher with it than
// with final_logit_softcapping set to None: 8192 x 256000 x 2 B.
TEST(Families, Gemma2SoftCapHoldsASecondLogitsTensor) {
  Workload w;
  w.kind = WorkloadKind::inference;
  w.seq_len = 8192;
  w.weights.precision = precisions::bf16;
  const Breakdown b = estimate_workload(hf_fixture("gemma-2-9b"), w);
  const auto workspace = std::find_if(b.components.begin(), b.components.end(),
                                      [](const Item& i) { return i.name == "forward_workspace"; });
  ASSERT_NE(workspace, b.components.end());
  EXPECT_EQ(workspace->bytes.count(), 2 * 8192ULL * 256000 * 2 + 8192ULL * 3584 * 2);  // + the final hidden
  ASSERT_EQ(workspace->detail.size(), 3U);
  EXPECT_EQ(workspace->detail[2].name, "softcap_logits");
}

// Gemma 2's sandwich norms are hooked as TransformerLens names them (ln1_post, ln2_post):
// 24 hooks a block (rotary, gated MLP), 42 blocks, plus hook_embed and ln_final's two.
TEST(Families, Gemma2HooksIncludeTheSandwichNorms) {
  const std::vector<Hook> hooks = model_hooks(hf_fixture("gemma-2-9b"), 1, 16);
  EXPECT_EQ(hooks.size(), 42U * 24 + 3);
  const auto at = [&](const std::string& name) {
    return std::find_if(hooks.begin(), hooks.end(), [&](const Hook& h) { return h.name == name; });
  };
  ASSERT_NE(at("blocks.0.ln1_post.hook_normalized"), hooks.end());
  ASSERT_NE(at("blocks.41.ln2_post.hook_scale"), hooks.end());
  EXPECT_LT(at("blocks.0.ln1_post.hook_normalized"), at("blocks.0.hook_attn_out"));
  EXPECT_LT(at("blocks.0.ln2_post.hook_normalized"), at("blocks.0.hook_mlp_out"));
}

// Attention FLOPs follow the windows: at 8192 tokens a gemma-2-9b query attends to 4096
// keys on its 21 sliding layers and 8192 on its 21 global ones; Llama-4-Scout's 36 chunked
// layers see at most 8192 keys, its 12 global ones all 32,768.
TEST(Families, AttendedPositionsFollowTheWindows) {
  EXPECT_DOUBLE_EQ(attended_positions(hf_fixture("gemma-2-9b"), 8192), 21.0 * 4096 + 21.0 * 8192);
  EXPECT_DOUBLE_EQ(attended_positions(hf_fixture("gemma-2-9b"), 1000), 42.0 * 1000);
  EXPECT_DOUBLE_EQ(attended_positions(hf_fixture("llama-4-scout-17b-16e"), 32768), 36.0 * 8192 + 12.0 * 32768);
  // One forward pass of gemma-2-9b over 8192 tokens: the attention term is
  // 8192 tokens x 4 x (21 x 4096 + 21 x 8192) x 16 heads x 256.
  const ModelSpec g = hf_fixture("gemma-2-9b");
  EXPECT_DOUBLE_EQ(forward_flops(g, 1, 8192),
                   8192.0 * (2.0 * matmul_parameters(g) + 4.0 * (21.0 * 4096 + 21.0 * 8192) * 16 * 256));
}

// openai/gpt-oss-20b: 24 layers alternating a 128-token window and full attention, 8 KV
// heads of 64.
TEST(Families, GptOssAlternatingWindow) {
  const Breakdown kv = estimate_kv_cache(hf_fixture("gpt-oss-20b"), bf16_tokens(4096));
  EXPECT_EQ(kv_row(kv, "sliding_layers"), 12ULL * 2 * 8 * 64 * 128 * 2);  // 3,145,728
  EXPECT_EQ(kv_row(kv, "full_layers"), 12ULL * 2 * 8 * 64 * 4096 * 2);    // 100,663,296
  EXPECT_EQ(kv.total().count(), 103'809'024U);
}

// deepseek-ai/DeepSeek-V2-Lite: 27 MLA layers, 16 heads, kv_lora_rank 512, rotary key 64,
// keys 128 + 64 wide, values 128. vLLM and SGLang keep the latent and the rotary key
// (576 per token and layer), as transformers 5 does (huggingface/transformers#47761; measured
// in 5.17: keys [1, 1, 4096, 512] and values [1, 1, 4096, 64] per layer); older transformers
// kept decompressed keys and values per head.
TEST(Families, DeepSeekLatentAgainstDecompressedCache) {
  const ModelSpec s = hf_fixture("deepseek-v2-lite");
  KvCacheOptions o = bf16_tokens(4096);
  o.mla_cache = MlaCache::latent;
  EXPECT_EQ(estimate_kv_cache(s, o).total().count(), 27ULL * (512 + 64) * 4096 * 2);  // 127,401,984
  o.mla_cache = MlaCache::decompressed;
  const Breakdown full = estimate_kv_cache(s, o);
  EXPECT_EQ(kv_row(full, "keys"), 27ULL * 16 * 192 * 4096 * 2);    // 679,477,248
  EXPECT_EQ(kv_row(full, "values"), 27ULL * 16 * 128 * 4096 * 2);  // 452,984,832
  EXPECT_EQ(full.total().count(), 1'132'462'080U);
}

// DeepSeek-V3: the first 3 layers dense, the other 58 with experts; counted in closed form.
TEST(Families, DenseAndMoeLayersInClosedForm) {
  const ModelSpec v3 = hf_fixture("deepseek-v3");
  EXPECT_EQ(layers_in(v3, LayerSet::dense_mlp, 0, 61), 3U);
  EXPECT_EQ(layers_in(v3, LayerSet::moe_mlp, 0, 61), 58U);
  EXPECT_EQ(layers_in(v3, LayerSet::moe_mlp, 2, 3), 2U);    // layers 2, 3, 4: 3 and 4
  EXPECT_EQ(layers_in(v3, LayerSet::moe_mlp, 60, 10), 1U);  // past the last layer: only layer 60

  ModelSpec every_other = v3;  // Llama 4 Maverick's interleaving: layers 1, 3, 5, ... have experts
  every_other.first_dense_layers = 0;
  every_other.moe_every = 2;
  EXPECT_EQ(layers_in(every_other, LayerSet::moe_mlp, 10, 5), 2U);  // layers 11 and 13
  EXPECT_FALSE(is_moe_layer(every_other, 10));
  EXPECT_TRUE(is_moe_layer(every_other, 11));

  // A trillion layers, every sixth global: counted, not listed.
  ModelSpec deep = hf_fixture("gemma-3-1b-it");
  deep.n_layers = 1'000'000'000'000ULL;
  EXPECT_EQ(attention_layer_counts(deep),
            (std::vector<std::pair<AttentionKind, std::uint64_t>>{{AttentionKind::sliding, 833'333'333'334ULL},
                                                                  {AttentionKind::full, 166'666'666'666ULL}}));
}

// A layer_types list no pattern describes is written out whole and read back.
TEST(Families, IrregularLayerTypesRoundTrip) {
  ModelEntry e = load_builtin_model("gemma-3-1b-it");
  e.spec.global_every = 0;
  e.spec.layer_types.assign(26, AttentionKind::sliding);
  e.spec.layer_types[0] = e.spec.layer_types[7] = AttentionKind::full;
  const std::string text = model_yaml(e);
  EXPECT_NE(text.find("layer_types: [full, sliding, sliding, sliding, sliding, sliding, sliding, full, sliding"),
            std::string::npos)
      << text;
  const ModelEntry back = parse_model_yaml(text, "irregular.yaml", "irregular");
  EXPECT_EQ(back.spec.layer_types, e.spec.layer_types);
  const Breakdown kv = estimate_kv_cache(back.spec, bf16_tokens(2048));
  EXPECT_EQ(kv_row(kv, "full_layers"), 2ULL * 2 * 1 * 256 * 2048 * 2);
  EXPECT_EQ(kv_row(kv, "sliding_layers"), 24ULL * 2 * 1 * 256 * 512 * 2);
}

// Per-layer descriptions that cannot be right are refused at the key that says so.
TEST(Families, InconsistentLayersAreRefused) {
  const auto refused = [](const std::string& yaml, const std::string& key) {
    SCOPED_TRACE(yaml);
    try {
      parse_model_yaml(yaml, "m.yaml", "m");
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.key(), key) << e.what();
    }
  };
  const std::string base =
      "family: gemma2\nd_model: 64\nn_layers: 4\nn_heads: 2\nn_kv_heads: 1\nd_head: 32\nd_mlp: 128\n"
      "vocab_size: 100\nmax_seq_len: 64\n";
  refused(base + "layer_types: [full, sliding]\nsliding_window: 16\n", "layer_types");
  refused(base + "global_every: 2\n", "global_every");
  refused(base + "layer_types: [full, full, sliding, full]\n", "layer_types");  // no sliding_window
}

// deepseek-ai/DeepSeek-V2-Lite trains 27 blocks of two kinds: layer 0 a dense MLP of 10944,
// layers 1-26 64 experts of 1408 (6 per token) and two shared ones (2816); every block latent
// attention, 16 heads with keys of 128 + 64 and values of 128, a kv latent of 512 + 64.
TEST(Families, DeepSeekTrainingFollowsDenseAndMoeBlocks) {
  const ModelSpec s = hf_fixture("deepseek-v2-lite");
  TrainingShape shape;
  shape.batch = 1;
  shape.seq = 512;
  shape.weights.precision = precisions::bf16;
  const TrainingEstimate t = estimate_training_phases(s, shape, TrainingOptions{});
  const auto row = [&](const std::string& phase, const std::string& component, const std::string& name) {
    for (const TrainingPhase& p : t.phases) {
      if (p.name != phase) continue;
      for (const Item& c : p.components) {
        if (c.name != component) continue;
        if (name.empty()) return c.bytes.count();
        for (const Item& r : c.detail) {
          if (r.name == name) return r.bytes.count();
        }
      }
    }
    ADD_FAILURE() << phase << " " << component << " " << name;
    return std::uint64_t{0};
  };
  EXPECT_EQ(row("forward", "activations", "gate_output"), 1ULL * 512 * 10944 * 2);        // the dense block only
  EXPECT_EQ(row("forward", "activations", "expert_inputs"), 26ULL * 6 * 512 * 2048 * 2);  // the MoE blocks only
  EXPECT_EQ(row("forward", "activations", "shared_expert_intermediates"), 26ULL * 4 * 512 * 2816 * 2);
  EXPECT_EQ(row("forward", "activations", "q"), 27ULL * 512 * 16 * 192 * 2);
  EXPECT_EQ(row("forward", "activations", "v"), 27ULL * 512 * 16 * 128 * 2);
  EXPECT_EQ(row("forward", "activations", "kv_latent"), 27ULL * 512 * 576 * 2);
  EXPECT_EQ(row("forward", "activations", "kv_latent_normed"), 27ULL * 512 * 512 * 2);
  // In the last block's backward: the head's gradients (lm_head, final norm) and block 26's own.
  const std::uint64_t head = 102400ULL * 2048 + 2048;
  const std::uint64_t block = 3072ULL * 2048 + 576ULL * 2048 + 4096ULL * 512 + 2048ULL * 2048  // q, kv_a, kv_b, o
                              + 3 * 2816ULL * 2048 + 64 * 3 * 1408ULL * 2048                   // shared, routed
                              + 64ULL * 2048 + 2 * 2048 + 512;  // router, two norms, kv_a norm
  EXPECT_EQ(row("backward_top", "gradients", ""), (head + block) * 2);
  // The first block's backward holds block 0's activations: two norm inputs (and their fp32
  // copies), the attention input, the latents, q and k (16 x 192), v and the output (16 x 128),
  // the softmax statistics, the MLP input and the dense MLP's four 512 x 10944 tensors.
  const std::uint64_t per_block = 2 * 512ULL * 2048 * (2 + 4) + 512ULL * 2048 * 2 + 512ULL * (576 + 512) * 2 +
                                  2 * 512ULL * 3072 * 2 + 2 * 512ULL * 2048 * 2 + 16ULL * 512 * 4 + 512ULL * 2048 * 2;
  EXPECT_EQ(row("backward_bottom", "activations", "layer_in_backward"), per_block + 4ULL * 512 * 10944 * 2);
}

// Qwen3-30B-A3B (48 MoE layers, 128 experts of 768, 8 per token, d 2048) trained on 4096
// tokens with output_router_logits: transformers' load_balancing_loss_func holds, after the
// cross-entropy, 48 x 4096 x 128 router logits three times (the layers', concatenated,
// softmaxed; bf16), the top-8 weights (bf16) and indices (int64), and a one-hot int64 mask
// of 48 x 4096 x 8 x 128 with its fp32 copy.
TEST(Families, RouterAuxLossAtTheLoss) {
  const ModelSpec s = hf_fixture("qwen3-30b-a3b");
  TrainingShape shape;
  shape.seq = 4096;
  shape.weights.precision = precisions::bf16;
  TrainingOptions o;
  o.router_aux_loss = true;
  const TrainingEstimate t = estimate_training_phases(s, shape, o);
  std::uint64_t aux = 0;
  for (const Item& c : t.phases.front().components) {
    if (c.name != "loss") continue;
    for (const Item& r : c.detail) {
      if (r.name == "router_aux_loss") aux = r.bytes.count();
    }
  }
  const std::uint64_t logits = 48ULL * 4096 * 128 * 2, top = 48ULL * 4096 * 8, mask = 48ULL * 4096 * 8 * 128;
  EXPECT_EQ(aux, 3 * logits + top * (2 + 8) + mask * (8 + 4));
  EXPECT_EQ(aux, 2'582'642'688U);
  EXPECT_THROW(estimate_training_phases(hf_fixture("qwen3-8b"), shape, o), Error);  // no experts to balance
}

// Experts padded to capacity (Megatron-core's get_capacity): 512 tokens x 8 routed / 128
// experts = 32 slots each; x 1.25 = 40, x 1.1 = 35.2 -> 36. Each expert then holds its slots
// whether filled or not: 128 x 40 rows where dropless routing has 4096.
TEST(Families, ExpertCapacityPadsEveryExpert) {
  const ModelSpec s = hf_fixture("qwen3-30b-a3b");
  TrainingShape shape;
  shape.seq = 512;
  shape.weights.precision = precisions::bf16;
  const auto expert_inputs = [&](double factor) {
    shape.expert_capacity_factor = factor;
    for (const Item& r : layer_activations(s, shape).detail) {
      if (r.name == "expert_inputs") return r.bytes.count();
    }
    return std::uint64_t{0};
  };
  EXPECT_EQ(expert_inputs(0), 8ULL * 512 * 2048 * 2);  // dropless: k x s rows
  EXPECT_EQ(expert_inputs(1.25), 128ULL * 40 * 2048 * 2);
  EXPECT_EQ(expert_inputs(1.1), 128ULL * 36 * 2048 * 2);
  shape.expert_capacity_factor = 1;
  EXPECT_THROW(layer_activations(hf_fixture("qwen3-8b"), shape), Error);
}

// DeepSeek-V3's multi-token-prediction layer 61, left out of the count and said so: one MoE
// block (attention 187,105,280, norms 16,384, router and bias 1,835,264, 257 experts of
// 3 x 2048 x 7168), eh_proj 7168 x 14336 and three norms; the checkpoint adds its own copies of
// the embedding and head (129,280 x 7168 each).
TEST(Families, DeepSeekMtpLayerCountedApart) {
  const ModelSpec s = hf_fixture("deepseek-v3");
  const std::uint64_t block = 187'105'280ULL + 16'384 + 1'835'264 + 257ULL * 3 * 2048 * 7168;
  const MtpParameters mtp = mtp_parameters(s);
  EXPECT_EQ(mtp.own, block + 7168ULL * 14336 + 3 * 7168);  // 11,610,068,224
  EXPECT_EQ(mtp.stored, mtp.own + 2 * 129280ULL * 7168);
  // With the fp8 block scales (41,540,496 fp32 elements: 35,640 a dense layer, 702,264 an MoE
  // one, 3 + 58 + 1 layers) the checkpoint holds 684,531,386,000 elements, half its index's
  // total_size (1,369,062,772,000, which counts two bytes an element).
  EXPECT_EQ(3ULL * 35'640 + 59ULL * 702'264, 41'540'496U);
  EXPECT_EQ(count_parameters(s) + mtp.stored + 41'540'496U, 684'531'386'000U);
  EXPECT_EQ(mtp_parameters(hf_fixture("deepseek-v2-lite")).stored, 0U);  // no MTP layer
}

// Qwen3.5-9B, written out from transformers' modeling_qwen3_5.py: a gated DeltaNet layer is
// in_proj_qkv 4096 -> 2 x 16 x 128 + 32 x 128, in_proj_z 4096 -> 4096, in_proj_b and _a 4096 ->
// 32 each, an unbiased depthwise conv1d of 8192 x 4, dt_bias and A_log of 32, a norm of 128 and
// out_proj 4096 -> 4096; a gated attention layer q_proj 4096 -> 2 x 16 x 256 (queries and the
// output gate), k and v 4096 -> 4 x 256, o 4096 -> 4096 and q/k norms of 256. 24 of the first,
// 8 of the second, each with an MLP of 3 x 4096 x 12288 and two norms; the embedding and the
// untied head 248,320 x 4096. Qwen3.5's ViT: a biased Conv3d of 3 x 2 x 16 x 16 into 1152, 2,304
// learned positions, 27 blocks (qkv and proj with biases, two LayerNorms, fc1 and fc2 of 4304
// with biases) and the merger (a LayerNorm of 1152, 4608 -> 4608 -> 4096 with biases).
TEST(Families, Qwen35GatedDeltaNetAndItsTower) {
  const ModelSpec s = hf_fixture("qwen3.5-9b");
  const std::uint64_t d = 4096;
  const std::uint64_t gdn = d * 8192 + d * 4096 + 2 * d * 32 + 8192ULL * 4 + 2 * 32 + 128 + 4096ULL * d;
  const std::uint64_t attn = d * 2 * 16 * 256 + 2 * d * 4 * 256 + 16ULL * 256 * d + 2 * 256;
  const std::uint64_t mlp = 3 * d * 12288, norms = 2 * d;
  const std::uint64_t text = 2 * 248320ULL * d + 24 * (gdn + mlp + norms) + 8 * (attn + mlp + norms) + d;
  EXPECT_EQ(text, 8'953'803'264U);
  const std::uint64_t hv = 1152, block = 4 * hv + 3 * hv * hv + 3 * hv + hv * hv + hv + 2 * hv * 4304 + 4304 + hv;
  const std::uint64_t tower = 3 * 2 * 16 * 16 * hv + hv + 2304 * hv + 27 * block + 2 * hv + 4608ULL * 4608 + 4608 +
                              4608 * d + d;
  EXPECT_EQ(count_parameters(s), text + tower);  // 9,409,813,744
  // The Hub's safetensors total holds the MTP layer too: fc 2d x d, a gated-attention block
  // with its MLP, and three norms, sharing the embedding and head.
  const MtpParameters mtp = mtp_parameters(s);
  EXPECT_EQ(mtp.own, 2 * d * d + attn + mlp + norms + 3 * d);
  EXPECT_EQ(mtp.stored, mtp.own);
  EXPECT_EQ(count_parameters(s) + mtp.stored, 9'653'104'368U);
  EXPECT_EQ(s.ssm.version, 3U);
  EXPECT_EQ(s.rotary_dim, 64U);  // partial_rotary_factor 0.25 in rope_parameters
  EXPECT_EQ(attention_layers(s), 8U);
}

// Qwen3-Next-80B-A3B and the Qwen3.5 0.8B, 27B and 35B-A3B: the model plus its MTP layer is the
// Hub's safetensors total (code index ids 61762937035, 71142266638).
TEST(Families, Qwen3NextAndQwen35MatchTheHubTotals) {
  for (const auto& [name, total] :
       {std::pair{"qwen3-next-80b-a3b-instruct", 81'324'862'720ULL}, std::pair{"qwen3.5-0.8b", 873'438'784ULL},
        std::pair{"qwen3.5-27b", 27'781'427'952ULL}, std::pair{"qwen3.5-35b-a3b", 35'951'822'704ULL}}) {
    SCOPED_TRACE(name);
    const ModelSpec s = hf_fixture(name);
    EXPECT_EQ(count_parameters(s) + mtp_parameters(s).stored, total);
  }
  // Qwen3-Coder-Next stores the same architecture without its MTP layer: 79,674,391,296.
  EXPECT_EQ(count_parameters(hf_fixture("qwen3-next-80b-a3b-instruct")), 79'674'391'296U);
  EXPECT_EQ(hf_fixture("qwen3.5-0.8b").lm_head, LmHead::tied);
}

// DeepSeek-V2-Lite's latent attention: queries and keys of 128 + 64, values of 128, so
// hook_v and hook_z are 16 heads x 128 where hook_q is 16 x 192.
TEST(Families, LatentAttentionHooksUseTheValueWidth) {
  ActivationCacheOptions o;
  o.batch = 1;
  o.seq = 128;
  o.precision = precisions::bf16;
  std::uint64_t q = 0, v = 0, z = 0;
  for (const Hook& h : selected_hooks(hf_fixture("deepseek-v2-lite"), o)) {
    if (h.layer != 0U) continue;
    const Bytes bytes = hook_bytes(h, o);
    if (h.name.ends_with("attn.hook_q")) q = bytes.count();
    if (h.name.ends_with("attn.hook_v")) v = bytes.count();
    if (h.name.ends_with("attn.hook_z")) z = bytes.count();
  }
  EXPECT_EQ(q, 128ULL * 16 * 192 * 2);
  EXPECT_EQ(v, 128ULL * 16 * 128 * 2);
  EXPECT_EQ(z, 128ULL * 16 * 128 * 2);
}

}  // namespace families_test
}  // namespace memplan
