// Parameter counts of real checkpoints. Each spec is written out here from the model's
// published config.json (not read from configs/), and each expected total is the figure
// published for the checkpoint, with its source.
#include "memplan/core/parameters.hpp"

#include <gtest/gtest.h>

namespace memplan {
namespace parameters_test {

ModelSpec sized(Family family, std::uint64_t d_model, std::uint64_t n_layers, std::uint64_t n_heads,
                std::uint64_t n_kv_heads, std::uint64_t d_mlp, std::uint64_t vocab, std::uint64_t max_seq_len) {
  ModelSpec s = family_defaults(family);
  s.d_model = d_model;
  s.n_layers = n_layers;
  s.n_heads = n_heads;
  s.n_kv_heads = n_kv_heads;
  s.d_head = d_model / n_heads;
  s.d_mlp = d_mlp;
  s.vocab_size = vocab;
  s.max_seq_len = max_seq_len;
  return s;
}

std::uint64_t params_of(const std::vector<ComponentParams>& parts, const std::string& component) {
  for (const ComponentParams& p : parts) {
    if (p.component == component) return p.params;
  }
  return 0;
}

// openai-community/gpt2 config.json: n_embd 768, n_layer 12, n_head 12, n_positions 1024, vocab 50257.
// 124,439,808: the total reported by transformers' num_parameters() and on the model card ("124M").
TEST(Parameters, Gpt2Small) {
  const ModelSpec s = sized(Family::gpt2, 768, 12, 12, 12, 3072, 50257, 1024);
  EXPECT_EQ(count_parameters(s), 124439808ULL);
  const auto parts = parameters_by_component(s);
  EXPECT_EQ(params_of(parts, "embeddings"), 50257ULL * 768 + 1024ULL * 768);
  EXPECT_EQ(params_of(parts, "attention"), 12ULL * (4 * 768 * 768 + 4 * 768));
  EXPECT_EQ(params_of(parts, "mlp"), 12ULL * (2 * 768 * 3072 + 3072 + 768));
  EXPECT_EQ(params_of(parts, "norms"), 12ULL * 2 * 2 * 768 + 2 * 768);
  EXPECT_EQ(params_of(parts, "lm_head"), 0U);  // tied
}

// openai-community/gpt2-xl: n_embd 1600, n_layer 48, n_head 25. Published 1,557,611,200.
TEST(Parameters, Gpt2Xl) {
  EXPECT_EQ(count_parameters(sized(Family::gpt2, 1600, 48, 25, 25, 6400, 50257, 1024)), 1557611200ULL);
}

// EleutherAI/pythia-70m: hidden 512, 6 layers, 8 heads, intermediate 2048, vocab 50304.
// Published 70,426,624 (Pythia model card, "Total params").
TEST(Parameters, Pythia70m) {
  EXPECT_EQ(count_parameters(sized(Family::gpt_neox, 512, 6, 8, 8, 2048, 50304, 2048)), 70426624ULL);
}

// meta-llama/Llama-2-7b-hf: hidden 4096, 32 layers, 32 heads, intermediate 11008, vocab 32000.
// Published 6,738,415,616.
TEST(Parameters, Llama2_7b) {
  const ModelSpec s = sized(Family::llama, 4096, 32, 32, 32, 11008, 32000, 4096);
  EXPECT_EQ(count_parameters(s), 6738415616ULL);
  const auto parts = parameters_by_component(s);
  EXPECT_EQ(params_of(parts, "attention"), 32ULL * 4 * 4096 * 4096);
  EXPECT_EQ(params_of(parts, "mlp"), 32ULL * 3 * 4096 * 11008);
  EXPECT_EQ(params_of(parts, "norms"), 65ULL * 4096);  // 2 per layer + final, weight only
  EXPECT_EQ(params_of(parts, "lm_head"), 32000ULL * 4096);
}

// mistralai/Mistral-7B-v0.1: hidden 4096, 32 layers, 32 heads, 8 kv heads, intermediate 14336.
// Published 7,241,732,096.
TEST(Parameters, Mistral7b) {
  ModelSpec s = sized(Family::mistral, 4096, 32, 32, 8, 14336, 32000, 32768);
  s.sliding_window = 4096;
  EXPECT_EQ(count_parameters(s), 7241732096ULL);
}

// mistralai/Mixtral-8x7B-v0.1: as Mistral with 8 experts, 2 per token, a router per layer.
// Published 46,702,792,704.
TEST(Parameters, Mixtral8x7b) {
  ModelSpec s = sized(Family::mixtral, 4096, 32, 32, 8, 14336, 32000, 32768);
  s.experts = 8;
  s.experts_per_token = 2;
  EXPECT_EQ(count_parameters(s), 46702792704ULL);
  const auto parts = parameters_by_component(s);
  EXPECT_EQ(params_of(parts, "experts"), 32ULL * 8 * 3 * 4096 * 14336);
  EXPECT_EQ(params_of(parts, "router"), 32ULL * 4096 * 8);
}

// meta-llama/Meta-Llama-3-8B: hidden 4096, 32 layers, 32 heads, 8 kv heads, intermediate
// 14336, vocab 128256. Published 8,030,261,248.
TEST(Parameters, Llama3_8b) {
  EXPECT_EQ(count_parameters(sized(Family::llama, 4096, 32, 32, 8, 14336, 128256, 8192)), 8030261248ULL);
}

// google-bert/bert-base-uncased as BertModel (with pooler): published 109,482,240.
TEST(Parameters, BertBase) {
  EXPECT_EQ(count_parameters(sized(Family::bert, 768, 12, 12, 12, 3072, 30522, 512)), 109482240ULL);
}

TEST(Parameters, MoreLayersNeverCountLess) {
  ModelSpec s = sized(Family::llama, 256, 1, 4, 2, 512, 1000, 128);
  std::uint64_t previous = 0;
  for (std::uint64_t layers = 1; layers <= 8; ++layers) {
    s.n_layers = layers;
    const std::uint64_t now = count_parameters(s);
    EXPECT_GT(now, previous);
    previous = now;
  }
}

}  // namespace parameters_test
}  // namespace memplan
