#include "memplan/core/model_spec.hpp"

#include <gtest/gtest.h>

#include "memplan/core/error.hpp"

namespace memplan {
namespace model_spec_test {

ModelSpec small_llama() {
  ModelSpec s = family_defaults(Family::llama);
  s.d_model = 64;
  s.n_layers = 2;
  s.n_heads = 4;
  s.n_kv_heads = 2;
  s.d_head = 16;
  s.d_mlp = 128;
  s.vocab_size = 100;
  s.max_seq_len = 32;
  return s;
}

std::string rejected_key(const ModelSpec& s) {
  try {
    validate(s);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_input);
    return e.key();
  }
  return "(accepted)";
}

TEST(ModelSpec, AValidSpecPasses) { EXPECT_NO_THROW(validate(small_llama())); }

TEST(ModelSpec, InvalidFieldsAreNamed) {
  ModelSpec s = small_llama();
  s.n_layers = 0;
  EXPECT_EQ(rejected_key(s), "n_layers");
  s = small_llama();
  s.n_kv_heads = 3;
  EXPECT_EQ(rejected_key(s), "n_kv_heads");
  s = small_llama();
  s.n_kv_heads = 8;  // more kv heads than query heads
  EXPECT_EQ(rejected_key(s), "n_kv_heads");
  s = small_llama();
  s.experts = 8;
  s.experts_per_token = 9;
  EXPECT_EQ(rejected_key(s), "experts_per_token");
  s = small_llama();
  s.experts_per_token = 2;
  EXPECT_EQ(rejected_key(s), "experts_per_token");
  s = small_llama();
  s.n_positions = 100;  // rotary models have no position table
  EXPECT_EQ(rejected_key(s), "n_positions");
}

TEST(ModelSpec, FamilyConventions) {
  const ModelSpec gpt2 = family_defaults(Family::gpt2);
  EXPECT_EQ(gpt2.positional, Positional::learned);
  EXPECT_EQ(gpt2.lm_head, LmHead::tied);
  EXPECT_TRUE(gpt2.attn_qkv_bias);
  const ModelSpec qwen = family_defaults(Family::qwen2);
  EXPECT_TRUE(qwen.attn_qkv_bias);
  EXPECT_FALSE(qwen.attn_out_bias);
  EXPECT_EQ(family_defaults(Family::falcon).norms_per_layer, 1U);
  EXPECT_EQ(family_defaults(Family::bert).lm_head, LmHead::none);
}

TEST(ModelSpec, EnumNamesRoundTripAndSuggest) {
  EXPECT_EQ(parse_family("gpt-neox"), Family::gpt_neox);
  EXPECT_EQ(to_string(Family::gpt_neox), "gpt-neox");
  EXPECT_EQ(parse_norm_kind("rmsnorm"), NormKind::rmsnorm);
  try {
    parse_family("lama");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.key(), "family");
    EXPECT_NE(std::string(e.what()).find("did you mean 'llama'"), std::string::npos) << e.what();
  }
}

}  // namespace model_spec_test
}  // namespace memplan
