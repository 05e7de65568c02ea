// Vision-language models (LLaVA-1.5): the vision tower and projector counted beside the
// language model, imported from the published config.json (tests/data/hf), each figure
// written out from its sizes.
#include <gtest/gtest.h>

#include <filesystem>

#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/estimators/compute_time.hpp"
#include "memplan/estimators/megatron.hpp"
#include "memplan/io/hf_config.hpp"

namespace memplan {
namespace vision_language_test {

namespace fs = std::filesystem;

HfImport fixture(const std::string& name) {
  return load_hf_config((fs::path(MEMPLAN_TEST_FIXTURES) / "hf" / name / "config.json").string());
}

std::uint64_t component(const ModelSpec& s, const std::string& name) {
  for (const ComponentParams& c : parameters_by_component(s)) {
    if (c.component == name) return c.params;
  }
  ADD_FAILURE() << "no component " << name;
  return 0;
}

// llava-hf/llava-1.5-7b-hf: Vicuna-7B (LlamaConfig's defaults: 4096, 32 layers, 32 heads, MLP
// 11008; vocab 32064, untied) after CLIP ViT-L/14 at 336 pixels (1024 wide, 24 layers, MLP
// 4096) and a two-layer projector. Public code asserts count_parameters(
// LlavaForConditionalGeneration(LlavaConfig.from_pretrained("llava-hf/llava-1.5-7b-hf"))) ==
// 7,063,427,072, and an audit of its safetensors headers found the same in 686 tensors.
TEST(VisionLanguage, LlavaCountsTowerProjectorAndLanguageModel) {
  const HfImport imported = fixture("llava-1.5-7b-hf");
  const ModelSpec& s = imported.entry.spec;
  EXPECT_EQ(s.d_model, 4096U);
  EXPECT_EQ(s.d_mlp, 11008U);
  EXPECT_EQ(s.vocab_size, 32064U);
  const std::uint64_t tower_layer = 4 * (1024ULL * 1024 + 1024)  // q, k, v, o with biases
                                    + 2 * 2 * 1024               // two LayerNorms
                                    + (4096ULL * 1024 + 4096)    // fc1
                                    + (1024ULL * 4096 + 1024);   // fc2
  const std::uint64_t tower = 1024                               // class token
                              + 1024ULL * 3 * 14 * 14            // patch convolution
                              + (576 + 1) * 1024ULL              // positions: 24 x 24 patches and the class token
                              + 2 * 1024 + 24 * tower_layer + 2 * 1024;  // pre- and post-LayerNorms
  const std::uint64_t projector = (1024ULL * 4096 + 4096) + (4096ULL * 4096 + 4096);
  const std::uint64_t language = 2 * 32064ULL * 4096 + 32 * (4 * 4096ULL * 4096 + 3 * 4096ULL * 11008 + 2 * 4096) +
                                 4096;
  EXPECT_EQ(component(s, "vision"), tower);
  EXPECT_EQ(tower, 303'507'456U);
  EXPECT_EQ(component(s, "projector"), projector);
  EXPECT_EQ(count_parameters(s), language + tower + projector);
  EXPECT_EQ(count_parameters(s), 7'063'427'072U);
  // Each estimate says that the images themselves are not priced: 576 tokens each.
  ASSERT_EQ(s.import_warnings.size(), 1U);
  EXPECT_NE(s.import_warnings.front().find("each 336x336 image becomes 576 tokens"), std::string::npos);
}

// The tower runs per image patch, not per token: a token's matrix products are the language
// model's alone.
TEST(VisionLanguage, TokensDoNotRunTheTower) {
  ModelSpec s = fixture("llava-1.5-7b-hf").entry.spec;
  const double with_tower = matmul_parameters(s);
  s.vision = {};
  EXPECT_EQ(with_tower, matmul_parameters(s));
}

TEST(VisionLanguage, RefusedWhereNotModelled) {
  const ModelSpec s = fixture("llava-1.5-7b-hf").entry.spec;
  EXPECT_THROW((void)tensor_parallel_shard(s, {}), Error);
  ModelSpec bad = s;
  bad.vision.image_size = 330;  // not a whole number of 14-pixel patches
  EXPECT_THROW(validate(bad), Error);
}

}  // namespace vision_language_test
}  // namespace memplan
