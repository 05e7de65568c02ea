// Hub ids as the Hub spells them, and where the caches are, as huggingface_hub finds them.
#include "memplan/io/hub.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "memplan/io/checkpoint_model.hpp"

namespace memplan {
namespace hub_test {

TEST(HubId, OrgNameAndRevision) {
  const std::optional<HubId> id = parse_hub_id("meta-llama/Llama-3.1-8B-Instruct");
  ASSERT_TRUE(id);
  EXPECT_EQ(id->org, "meta-llama");
  EXPECT_EQ(id->name, "Llama-3.1-8B-Instruct");
  EXPECT_EQ(id->revision, "main");
  const std::optional<HubId> pinned = parse_hub_id("Qwen/Qwen2.5-7B@refs/pr/12");
  ASSERT_TRUE(pinned);
  EXPECT_EQ(pinned->revision, "refs/pr/12");
}

TEST(HubId, WhatIsNotAnIdIsNotOne) {
  for (const char* text : {"llama-2-7b", "models/a/b", "/abs/path", "org/", "/name", "org/na..me", "org/na--me",
                           "-org/name", "org/name.", "org/name@", "org/na me", "org/name@../x", "./x"}) {
    EXPECT_FALSE(parse_hub_id(text)) << text;
  }
  EXPECT_FALSE(parse_hub_id(std::string(97, 'a') + "/b"));  // the Hub's 96-character limit
  EXPECT_TRUE(parse_hub_id(std::string(96, 'a') + "/b"));
}

// Sets environment variables for one test and restores them.
class Env {
 public:
  void set(const char* name, const char* value) {
    const char* old = std::getenv(name);
    saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~Env() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      it->second ? setenv(it->first, it->second->c_str(), 1) : unsetenv(it->first);
    }
  }

 private:
  std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

TEST(HubCache, TheHuggingFaceOrder) {
  Env env;
  env.set("HF_HUB_CACHE", "/c/hub-cache");
  env.set("HF_HOME", "/c/hf-home");
  env.set("XDG_CACHE_HOME", "/c/xdg");
  env.set("HOME", "/c/home");
  EXPECT_EQ(hf_hub_cache_dir(), "/c/hub-cache");
  env.set("HF_HUB_CACHE", nullptr);
  EXPECT_EQ(hf_hub_cache_dir(), "/c/hf-home/hub");
  env.set("HF_HOME", nullptr);
  EXPECT_EQ(hf_hub_cache_dir(), "/c/xdg/huggingface/hub");
  env.set("XDG_CACHE_HOME", nullptr);
  EXPECT_EQ(hf_hub_cache_dir(), "/c/home/.cache/huggingface/hub");
}

TEST(HubCache, MemplansOwn) {
  Env env;
  env.set("MEMPLAN_CACHE_DIR", "/c/memplan");
  env.set("XDG_CACHE_HOME", "/c/xdg");
  env.set("HOME", "/c/home");
  EXPECT_EQ(memplan_hub_cache_dir(), "/c/memplan/hub");
  env.set("MEMPLAN_CACHE_DIR", nullptr);
  EXPECT_EQ(memplan_hub_cache_dir(), "/c/xdg/memplan/hub");
  env.set("XDG_CACHE_HOME", nullptr);
  EXPECT_EQ(memplan_hub_cache_dir(), "/c/home/.cache/memplan/hub");
}

TEST(CheckpointComponent, TransformersNames) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"model.embed_tokens.weight", "embeddings"},
      {"transformer.wte.weight", "embeddings"},
      {"lm_head.weight", "lm_head"},
      {"embed_out.weight", "lm_head"},  // GPT-NeoX's output projection
      {"model.layers.3.input_layernorm.weight", "norms"},
      {"model.layers.3.self_attn.q_norm.weight", "norms"},
      {"model.layers.3.self_attn.k_proj.qweight", "attention"},
      {"model.layers.3.mlp.down_proj.weight", "mlp"},
      {"model.layers.3.block_sparse_moe.experts.7.w1.weight", "experts"},
      {"model.layers.3.block_sparse_moe.gate.weight", "router"},
      {"transformer.h.0.ln_1.weight", "norms"},
      {"gpt_neox.layers.0.attention.query_key_value.weight", "attention"},
      {"score.weight", "other"},
  };
  for (const auto& [name, component] : cases) EXPECT_EQ(checkpoint_component(name), component) << name;
}

}  // namespace hub_test
}  // namespace memplan
