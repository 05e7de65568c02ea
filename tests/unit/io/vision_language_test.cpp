// Vision-language models (LLaVA-1.5, Qwen2-VL, Qwen2.5-VL): the vision tower and projector
// counted beside the language model, imported from real config.json files (tests/data/hf);
// the tokens an image becomes at several sizes; the images' tokens in the language model's
// sequence, the tower's pass, and training with the tower frozen. Each figure is written out
// from the sizes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "hf_fixtures.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/estimators/compute_time.hpp"
#include "memplan/estimators/kv_cache.hpp"
#include "memplan/estimators/megatron.hpp"
#include "memplan/estimators/training.hpp"
#include "memplan/io/hf_config.hpp"
#include "memplan/plan/workload.hpp"

namespace memplan {
namespace vision_language_test {

using testing::find_row;

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
  // The import says what an image costs in tokens, and warns of nothing.
  EXPECT_TRUE(s.import_warnings.empty());
  bool told = false;
  for (const std::string& n : imported.notes)
    told = told || n.find("each image becomes 576 tokens") != std::string::npos;
  EXPECT_TRUE(told);
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

// Qwen/Qwen2-VL-2B-Instruct: a Qwen2 language model (1536 wide, 28 layers, 12 heads and 2
// key/value heads of 128, MLP 8960, vocab 151936, tied head, q/k/v biases) after Qwen2-VL's
// ViT (1280 wide, 32 layers, 16 heads, MLP 4 x 1280, 14-pixel 2-frame patches) and its merger.
// Published: 2,208,985,600 (floschne/gimmick's model_sizes, read from the Hub's safetensors
// metadata; mteb's gme-Qwen2-VL-2B entry gives the same).
TEST(VisionLanguage, Qwen2VlCountsTowerMergerAndLanguageModel) {
  const ModelSpec s = fixture("qwen2-vl-2b-instruct").entry.spec;
  EXPECT_EQ(s.vision.kind, VisionKind::qwen2_vl);
  const std::uint64_t tower_layer = 2 * 2 * 1280                             // norm1, norm2: LayerNorms
                                    + (1280ULL * 3840 + 3840)                // qkv with its bias
                                    + (1280ULL * 1280 + 1280)                // proj
                                    + (1280ULL * 5120 + 5120)                // fc1
                                    + (5120ULL * 1280 + 1280);               // fc2
  const std::uint64_t tower = 1280ULL * 3 * 2 * 14 * 14 + 32 * tower_layer;  // Conv3d without a bias
  const std::uint64_t merger = 2 * 1280                                      // ln_q
                               + (5120ULL * 5120 + 5120) + (5120ULL * 1536 + 1536);
  const std::uint64_t lm_layer = (1536ULL * 1536 + 1536) + 2 * (1536ULL * 256 + 256) + 1536ULL * 1536 +
                                 3 * 1536ULL * 8960 + 2 * 1536;
  const std::uint64_t language = 151936ULL * 1536 + 28 * lm_layer + 1536;
  EXPECT_EQ(component(s, "vision"), tower);
  EXPECT_EQ(component(s, "projector"), merger);
  EXPECT_EQ(tower + merger, 665'271'296U);
  EXPECT_EQ(language, 1'543'714'304U);  // gimmick's count for Qwen2.5-1.5B-Instruct, its language model's shapes
  EXPECT_EQ(count_parameters(s), 2'208'985'600U);
}

// Qwen/Qwen2.5-VL-3B-Instruct: a Qwen2.5-3B language model (2048 wide, 36 layers, 16 heads and
// 2 key/value heads of 128, MLP 11008, tied) after Qwen2.5-VL's ViT (1280 wide, 32 layers,
// RMSNorms, a gated MLP of 3420 with biases) and a merger with an RMSNorm. Published: the
// checkpoint's safetensors index, 7,509,245,952 bytes of bf16 = 3,754,622,976 parameters.
TEST(VisionLanguage, Qwen25VlHasRmsNormsAndAGatedTowerMlp) {
  const ModelSpec s = fixture("qwen2.5-vl-3b-instruct").entry.spec;
  EXPECT_EQ(s.vision.kind, VisionKind::qwen2_5_vl);
  const std::uint64_t tower_layer = 2 * 1280                                             // two RMSNorms
                                    + (1280ULL * 3840 + 3840) + (1280ULL * 1280 + 1280)  // qkv, proj
                                    + 2 * (1280ULL * 3420 + 3420)                        // gate_proj, up_proj
                                    + (3420ULL * 1280 + 1280);                           // down_proj
  const std::uint64_t tower = 1280ULL * 3 * 2 * 14 * 14 + 32 * tower_layer;
  const std::uint64_t merger = 1280 + (5120ULL * 5120 + 5120) + (5120ULL * 2048 + 2048);
  EXPECT_EQ(component(s, "vision"), tower);
  EXPECT_EQ(component(s, "projector"), merger);
  EXPECT_EQ(tower + merger, 668'684'288U);
  EXPECT_EQ(count_parameters(s), 3'754'622'976U);
}

// Qwen/Qwen2-VL-7B-Instruct: the 2B's tower (631,183,360 without its merger) with a merger
// into 3584, and Qwen2-7B's language model (3584 wide, 28 layers, 28 heads and 4 key/value
// heads of 128, MLP 18944, vocab 152064, untied). Published: 8,291,375,616 (floschne/gimmick's
// model_sizes).
TEST(VisionLanguage, Qwen2Vl7bCountsItsUntiedHead) {
  const ModelSpec s = fixture("qwen2-vl-7b-instruct").entry.spec;
  const std::uint64_t lm_layer = (3584ULL * 3584 + 3584) + 2 * (3584ULL * 512 + 512) + 3584ULL * 3584 +
                                 3 * 3584ULL * 18944 + 2 * 3584;
  const std::uint64_t merger = 2 * 1280 + (5120ULL * 5120 + 5120) + (5120ULL * 3584 + 3584);
  EXPECT_EQ(component(s, "projector"), merger);
  EXPECT_EQ(count_parameters(s), 2 * 152064ULL * 3584 + 28 * lm_layer + 3584 + 631'183'360U + merger);
  EXPECT_EQ(count_parameters(s), 8'291'375'616U);
}

// Qwen/Qwen2.5-VL-7B-Instruct: Qwen2.5-7B's language model (7,615,616,512, the built-in
// qwen2.5-7b's published count) and the 3B's tower with a merger into 3584. mteb gives
// 8,292,166,656 for Alibaba-NLP/GVE-7B, adapted from it with the same shapes.
TEST(VisionLanguage, Qwen25Vl7bIsQwen25And7bsTower) {
  const ModelSpec s = fixture("qwen2.5-vl-7b-instruct").entry.spec;
  const std::uint64_t tower_layer = 2 * 1280 + (1280ULL * 3840 + 3840) + (1280ULL * 1280 + 1280) +
                                    2 * (1280ULL * 3420 + 3420) + (3420ULL * 1280 + 1280);
  const std::uint64_t tower = 1280ULL * 3 * 2 * 14 * 14 + 32 * tower_layer;
  const std::uint64_t merger = 1280 + (5120ULL * 5120 + 5120) + (5120ULL * 3584 + 3584);
  EXPECT_EQ(component(s, "vision") + component(s, "projector"), tower + merger);
  EXPECT_EQ(count_parameters(s), 7'615'616'512U + tower + merger);
  EXPECT_EQ(count_parameters(s), 8'292'166'656U);
}

// Qwen/Qwen3-VL-4B-Instruct, -8B-Instruct and -30B-A3B-Instruct: Qwen3's language model (Qwen3-4B's 4,022,468,096
// tied, Qwen3-8B's 8,190,735,360 untied: the built-ins' published counts), Qwen3.5's ViT (a
// biased 3-D patch convolution, 2,304 learned positions, fused qkv) and its merger, and three
// deepstack mergers, each a LayerNorm over the four merged patches and the merger's two layers.
// transformers counts 4,437,815,808 for the 4B (a public benchmark log, code index id
// 59607822170); the Hub's safetensors total for the 8B is 8,767,123,696 (id 62872967919).
TEST(VisionLanguage, Qwen3VlIsQwen3AndATowerWithDeepstackMergers) {
  const auto tower = [](std::uint64_t h, std::uint64_t ff, std::uint64_t layers, std::uint64_t out) {
    const std::uint64_t layer = 2 * h + (h * 3 * h + 3 * h) + (h * h + h) + 2 * h + (h * ff + ff) + (ff * h + h);
    const std::uint64_t m = 4 * h;
    const std::uint64_t merger = 2 * h + (m * m + m) + (m * out + out);
    const std::uint64_t deepstack = 2 * m + (m * m + m) + (m * out + out);
    return (3 * 2 * 16 * 16 * h + h) + 2304 * h + layers * layer + merger + 3 * deepstack;
  };
  const ModelSpec small = fixture("qwen3-vl-4b-instruct").entry.spec;
  EXPECT_EQ(small.family, Family::qwen3);
  EXPECT_EQ(small.vision.deepstack, 3U);
  EXPECT_EQ(small.deepstack_layers, 3U);
  EXPECT_TRUE(small.mrope);
  EXPECT_EQ(count_parameters(small), 4'022'468'096U + tower(1024, 4096, 24, 2560));
  EXPECT_EQ(count_parameters(small), 4'437'815'808U);
  const ModelSpec large = fixture("qwen3-vl-8b-instruct").entry.spec;
  EXPECT_EQ(count_parameters(large), 8'190'735'360U + tower(1152, 4304, 27, 4096));
  EXPECT_EQ(count_parameters(large), 8'767'123'696U);
  // Qwen3-VL-30B-A3B: Qwen3-30B-A3B's language model (30,532,122,624, the built-in's published
  // count) and the 8B's tower into 2,048; published 31,070,754,032 (a model catalogue's
  // paramCount, code index id 66729435508, and a measured census, id 61938983991).
  const ModelSpec moe = fixture("qwen3-vl-30b-a3b-instruct").entry.spec;
  EXPECT_EQ(moe.family, Family::qwen3_moe);
  EXPECT_EQ(moe.experts, 128U);
  EXPECT_EQ(count_parameters(moe), 30'532'122'624U + tower(1152, 4304, 27, 2048));
  EXPECT_EQ(count_parameters(moe), 31'070'754'032U);
}

// A deepstack list must name the tower's layers, and only Qwen3-VL's tower has one; the error
// names the key.
TEST(VisionLanguage, DeepstackLayersAreTheTowers) {
  const auto import = [](const std::string& type, const std::string& deepstack) {
    return parse_hf_config(R"({"model_type": ")" + type + R"(",
        "text_config": {"model_type": ")" +
                               type + R"(_text", "hidden_size": 64, "num_hidden_layers": 4,
          "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32, "intermediate_size": 128,
          "vocab_size": 100},
        "vision_config": {"depth": 2, "hidden_size": 32, "num_heads": 2, "intermediate_size": 64,
          "patch_size": 16, "spatial_merge_size": 2, "temporal_patch_size": 2, "num_position_embeddings": 16,
          "out_hidden_size": 64, "deepstack_visual_indexes": )" +
                               deepstack + "}}",
                           "q.json", "q");
  };
  EXPECT_EQ(import("qwen3_vl", "[0, 1]").entry.spec.vision.deepstack, 2U);
  const auto refused = [](const auto& read) {
    try {
      read();
      ADD_FAILURE() << "accepted";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), "deepstack_visual_indexes") << e.what();
    }
  };
  refused([&] { import("qwen3_vl", "[0, 2]"); });
  refused([&] { import("qwen3_vl", "\"0\""); });
  // Qwen3.5's config with a deepstack layer added.
  std::ifstream in(fs::path(MEMPLAN_TEST_FIXTURES) / "hf" / "qwen3.5-0.8b" / "config.json");
  nlohmann::json qwen3_5 = nlohmann::json::parse(in);
  qwen3_5["vision_config"]["deepstack_visual_indexes"] = {1};
  refused([&] { parse_hf_config(qwen3_5.dump(), "q.json", "q"); });
}

// Qwen2-VL's processor (smart_resize, factor 28 = patch 14 x merge 2): sides rounded half to
// even to multiples of 28, scaled down to max_pixels; (h / 14) x (w / 14) patches, one token
// per 2 x 2.
TEST(VisionLanguage, Qwen2VlImageTokensFollowTheResize) {
  const VisionTower v = fixture("qwen2-vl-2b-instruct").entry.spec.vision;
  // 448 x 448: 16 x 28 each side, 32 x 32 patches, 256 tokens.
  ImageGrid g = image_grid(v, 448, 448);
  EXPECT_EQ(g.patches, 32U * 32);
  EXPECT_EQ(g.tokens, 256U);
  // 1280 x 720: 45.7 -> 46 and 25.7 -> 26 multiples: 1288 x 728, 92 x 52 patches, 1196 tokens.
  g = image_grid(v, 1280, 720);
  EXPECT_EQ(g.width, 1288U);
  EXPECT_EQ(g.height, 728U);
  EXPECT_EQ(g.tokens, 92U * 52 / 4);
  EXPECT_EQ(g.tokens, 1196U);
  // 1920 x 1080: 1932 x 1092 = 2,109,744 pixels, under the checkpoint's 12,845,056: 138 x 78
  // patches, 2691 tokens.
  g = image_grid(v, 1920, 1080);
  EXPECT_EQ(g.tokens, 138U * 78 / 4);
  // Under max_pixels 1280 x 28 x 28 = 1,003,520 it is scaled by sqrt(2,073,600 / 1,003,520):
  // floor(1920 / 1.4375 / 28) = 47 and floor(1080 / 1.4375 / 28) = 26 multiples, 1316 x 728.
  VisionTower capped = v;
  capped.max_pixels = 1280 * 28 * 28;
  g = image_grid(capped, 1920, 1080);
  EXPECT_EQ(g.width, 1316U);
  EXPECT_EQ(g.height, 728U);
  EXPECT_EQ(g.tokens, 94U * 52 / 4);
  EXPECT_EQ(g.tokens, 1222U);
  // 1024 x 768 is under either bound: 37 x 28 by 27 x 28 = 1036 x 756, 74 x 54 patches, 999 tokens.
  EXPECT_EQ(image_grid(capped, 1024, 768).tokens, 74U * 54 / 4);
  // Halves round to even: 70 / 28 = 2.5 -> 2, so 70 x 70 becomes 56 x 56 (4 patches a side).
  EXPECT_EQ(image_grid(v, 70, 70).tokens, 4U);
  EXPECT_EQ(image_grid(v, 98, 98).width, 112U);  // 3.5 -> 4
  // The processor refuses an aspect ratio above 200.
  EXPECT_THROW((void)image_grid(v, 201 * 28, 28), Error);
  // LLaVA-1.5 resizes every image to 336 x 336: 576 tokens whatever the size.
  const VisionTower clip = fixture("llava-1.5-7b-hf").entry.spec.vision;
  EXPECT_EQ(image_grid(clip, 1920, 1080).tokens, 576U);
  EXPECT_EQ(image_grid(clip, 1920, 1080).patches, 577U);  // and the class token
}

// google/gemma-3-4b-it: a Gemma 3 language model (2560 wide, 34 layers; Gemma3TextConfig's 8
// heads and 4 key/value heads of 256, q/k norms, four norms a layer, vocab 262208, tied) after
// SigLIP at 896 px (1152 wide, 27 layers, MLP 4304, 14-pixel patches: 64 x 64 positions), the
// projector an RMSNorm and an unbiased 1152 x 2560 matrix. Published: 4,300,079,472
// (keras-hub's gemma3_presets.py, MedGemma 4B).
TEST(VisionLanguage, Gemma3PoolsSiglipPatchesIntoTokens) {
  const ModelSpec s = fixture("gemma-3-4b-it").entry.spec;
  EXPECT_EQ(s.vision.kind, VisionKind::gemma3);
  const std::uint64_t siglip_layer = 4 * (1152ULL * 1152 + 1152)  // q, k, v, o with biases
                                     + 2 * 2 * 1152               // two LayerNorms
                                     + (1152ULL * 4304 + 4304) + (4304ULL * 1152 + 1152);
  const std::uint64_t tower = (1152ULL * 3 * 14 * 14 + 1152)   // the patch convolution, biased
                              + 4096ULL * 1152                 // positions: 64 x 64 patches
                              + 27 * siglip_layer + 2 * 1152;  // post_layernorm
  const std::uint64_t projector = 1152 + 1152ULL * 2560;
  const std::uint64_t lm_layer = 2560ULL * 2048 + 2 * 2560ULL * 1024 + 2048ULL * 2560  // q, k, v, o
                                 + 2 * 256                                             // q and k norms
                                 + 3 * 2560ULL * 10240 + 4 * 2560;
  EXPECT_EQ(component(s, "vision"), tower);
  EXPECT_EQ(tower, 416'866'032U);
  EXPECT_EQ(component(s, "projector"), projector);
  EXPECT_EQ(count_parameters(s), 262208ULL * 2560 + 34 * lm_layer + 2560 + tower + projector);
  EXPECT_EQ(count_parameters(s), 4'300'079'472U);
  // Every image is 896 x 896: 64 x 64 patches pooled 4 x 4, 256 tokens.
  const ImageGrid g = image_grid(s.vision, 1920, 1080);
  EXPECT_EQ(g.patches, 4096U);
  EXPECT_EQ(g.tokens, 256U);
}

// google/gemma-3-27b-it: 62 layers of 5376 (32 heads and 16 key/value heads of 128, MLP 21504)
// and the 4B's SigLIP tower, projected into 5376. Published: 27,432,406,640 (keras-hub's
// gemma3_presets.py, MedGemma 27B).
TEST(VisionLanguage, Gemma3At27bSharesTheTower) {
  const ModelSpec s = fixture("gemma-3-27b-it").entry.spec;
  const std::uint64_t lm_layer = 5376ULL * 4096 + 2 * 5376ULL * 2048 + 4096ULL * 5376 + 2 * 128 + 3 * 5376ULL * 21504 +
                                 4 * 5376;
  EXPECT_EQ(component(s, "vision"), 416'866'032U);
  EXPECT_EQ(component(s, "projector"), 1152 + 1152ULL * 5376);
  EXPECT_EQ(count_parameters(s), 262208ULL * 5376 + 62 * lm_layer + 5376 + 416'866'032U + 1152 + 1152ULL * 5376);
  EXPECT_EQ(count_parameters(s), 27'432'406'640U);
}

// google/paligemma-3b-pt-224: Gemma 2B (2048 wide, 18 layers, 8 heads and 1 key/value head of
// 256, MLP 16384, vocab 257216, tied) after SigLIP at 224 px (16 x 16 patches, each a token)
// and a biased 1152 -> 2048 projection. keras-hub's pali_gemma_presets.py publishes 2,923,335,408
// for big_vision's vocabulary of 257,152 rows; transformers' checkpoint has 64 rows more.
TEST(VisionLanguage, PaliGemmaKeepsEveryPatchAsAToken) {
  const ModelSpec s = fixture("paligemma-3b-pt-224").entry.spec;
  EXPECT_EQ(s.vision.kind, VisionKind::paligemma);
  EXPECT_EQ(s.vision.image_size, 224U);  // SiglipVisionConfig's default: the file leaves it out
  const std::uint64_t siglip_layer = 4 * (1152ULL * 1152 + 1152) + 2 * 2 * 1152 + (1152ULL * 4304 + 4304) +
                                     (4304ULL * 1152 + 1152);
  const std::uint64_t tower = (1152ULL * 3 * 14 * 14 + 1152) + 256ULL * 1152 + 27 * siglip_layer + 2 * 1152;
  EXPECT_EQ(component(s, "vision"), tower);
  EXPECT_EQ(component(s, "projector"), 1152ULL * 2048 + 2048);
  EXPECT_EQ(count_parameters(s), 2'923'335'408U + 64ULL * 2048);
  EXPECT_EQ(image_grid(s.vision, 640, 480).tokens, 256U);
}

// llava-hf/llava-v1.6-mistral-7b-hf: Mistral-7B (MistralConfig's 4096 wide, 32 layers, 32 heads
// and 8 key/value heads; MLP 14336, vocab 32064, untied) after LLaVA-1.5's CLIP and projector,
// plus a learned newline vector. mteb gives 7,566,747,648 for BGE-VL-v1.5, a fine-tune of
// these shapes.
TEST(VisionLanguage, LlavaNextCountsItsNewlineToken) {
  const ModelSpec s = fixture("llava-v1.6-mistral-7b-hf").entry.spec;
  EXPECT_EQ(s.vision.kind, VisionKind::llava_next);
  const std::uint64_t language = 2 * 32064ULL * 4096 +
                                 32 * (2 * 4096ULL * 4096 + 2 * 4096ULL * 1024 + 3 * 4096ULL * 14336 + 2 * 4096) + 4096;
  EXPECT_EQ(component(s, "vision"), 303'507'456U);  // as LLaVA-1.5's
  EXPECT_EQ(component(s, "projector"), (1024ULL * 4096 + 4096) + (4096ULL * 4096 + 4096) + 4096);
  EXPECT_EQ(count_parameters(s), language + 303'507'456U + 20'979'712U + 4096);
  EXPECT_EQ(count_parameters(s), 7'566'747'648U);
}

// LLaVA-NeXT's tiles (transformers' select_best_resolution and _get_number_of_features), 24 x
// 24 patches a 336-pixel tile:
// - 1280 x 720 keeps most pixels at 672 x 672 (scale 0.525: 672 x 378 kept, the other
//   pinpoints 336 or fewer rows): 2 x 2 tiles, a 48 x 48 grid unpadded to 720 x 48 / 1280 = 27
//   rows, 48 - 2 x 10 = 28 rows: 28 x 48 + 28 newlines + 576 for the whole = 1948 tokens, five
//   crops through the tower;
// - 672 x 672: 48 x 48 + 48 + 576 = 2928, the most an image takes;
// - 3000 x 200 fits 336 x 1008 (h x w): 24 x 72, unpadded to int(200 x 72 / 3000 = 4.8) = 4
//   rows, 24 - 2 x 10 = 4: 4 x 72 + 4 + 576 = 868 tokens, four crops.
TEST(VisionLanguage, LlavaNextTilesFollowTheBestPinpoint) {
  const VisionTower v = fixture("llava-v1.6-mistral-7b-hf").entry.spec.vision;
  ImageGrid g = image_grid(v, 1280, 720);
  EXPECT_EQ(g.width, 672U);
  EXPECT_EQ(g.height, 672U);
  EXPECT_EQ(g.tokens, 28U * 48 + 28 + 576);
  EXPECT_EQ(g.crops, 5U);
  EXPECT_EQ(g.patches, 577U);
  EXPECT_EQ(image_grid(v, 672, 672).tokens, 48U * 48 + 48 + 576);
  g = image_grid(v, 3000, 200);
  EXPECT_EQ(g.width, 1008U);
  EXPECT_EQ(g.height, 336U);
  EXPECT_EQ(g.tokens, 4U * 72 + 4 + 576);
  EXPECT_EQ(g.crops, 4U);
  // 1 x 100000 keeps no pixel at any pinpoint: the least wasteful, 336 x 672 (h x w), the first
  // of two; unpadded to int(1 x 24 / 100000) = 0 columns: 0 + 24 newlines + 576.
  g = image_grid(v, 1, 100000);
  EXPECT_EQ(g.width, 672U);
  EXPECT_EQ(g.height, 336U);
  EXPECT_EQ(g.tokens, 24U + 576);
}

// HuggingFaceTB/SmolVLM-256M-Instruct (Idefics3): a SigLIP tower of 12 layers 768 wide (MLP
// 3072, 16-pixel patches over 512-pixel tiles: 1024 positions, no head), a connector of one
// unbiased linear from 16 x 768 shuffled widths to 576, and a Llama of 30 layers (9 heads, 3 KV
// heads of 64, MLP 1536, vocabulary 49,280, untied head). The Hub's metadata gives 256,484,928
// (tests/data/hf/README.md).
TEST(VisionLanguage, SmolVlmShufflesSiglipPatchesIntoTokens) {
  const ModelSpec s = fixture("smolvlm-256m-instruct").entry.spec;
  EXPECT_EQ(s.vision.kind, VisionKind::idefics3);
  const std::uint64_t siglip_layer = 4 * (768ULL * 768 + 768) + 2 * 2 * 768 + (768ULL * 3072 + 3072) +
                                     (3072ULL * 768 + 768);
  const std::uint64_t tower = (768ULL * 3 * 16 * 16 + 768) + 1024ULL * 768 + 12 * siglip_layer + 2 * 768;
  EXPECT_EQ(component(s, "vision"), tower);
  EXPECT_EQ(tower, 86'433'024U);
  EXPECT_EQ(component(s, "projector"), 16ULL * 768 * 576);
  const std::uint64_t language = 2 * 49280ULL * 576 +
                                 30 * (2 * 576ULL * 576 + 2 * 576ULL * 192 + 3 * 576ULL * 1536 + 2 * 576) + 576;
  EXPECT_EQ(count_parameters(s), language + tower + 16ULL * 768 * 576);
  EXPECT_EQ(count_parameters(s), 256'484'928U);
}

// Idefics3ImageProcessor at SmolVLM-256M's sizes (longest side to 2048, 512-pixel tiles of 64
// tokens) and Idefics3Processor's text: each tile a separator, its <row_r_col_c> and 64 image
// tokens; a newline a row (the last merged with the next into one "\n\n" token); then the
// separator, <global-img>, 64 tokens and a separator.
// - 1280 x 720: 2048 x int(2048 / (16 / 9)) = 1152, rounded up to 2048 x 1536: 4 x 3 tiles,
//   12 x 66 + 3 + 67 = 862 tokens, 13 crops through the tower;
// - 720 x 1280: int(2048 x 9 / 16) = 1152 x 2048: 3 x 4 tiles, 12 x 66 + 4 + 67 = 863;
// - 2000 x 500: 2048 x 512: one row of 4 tiles, 4 x 66 + 1 + 67 = 332;
// - 300 x 201: 2048 x int(2048 / (300 / 201)) = 1372 (even), rounded to 1536: 4 x 3 = 862;
// - without splitting (longest_edge 0), any image is one tile: 64 + 3 = 67.
TEST(VisionLanguage, SmolVlmTilesFollowTheProcessor) {
  VisionTower v = fixture("smolvlm-256m-instruct").entry.spec.vision;
  ImageGrid g = image_grid(v, 1280, 720);
  EXPECT_EQ(g.width, 2048U);
  EXPECT_EQ(g.height, 1536U);
  EXPECT_EQ(g.tokens, 12U * 66 + 3 + 67);
  EXPECT_EQ(g.crops, 13U);
  EXPECT_EQ(g.patches, 1024U);
  EXPECT_EQ(image_grid(v, 720, 1280).tokens, 12U * 66 + 4 + 67);
  g = image_grid(v, 2000, 500);
  EXPECT_EQ(g.tokens, 4U * 66 + 1 + 67);
  EXPECT_EQ(g.crops, 5U);
  EXPECT_EQ(image_grid(v, 300, 201).tokens, 12U * 66 + 3 + 67);
  v.longest_edge = 0;
  g = image_grid(v, 1280, 720);
  EXPECT_EQ(g.tokens, 67U);
  EXPECT_EQ(g.crops, 1U);
}

// An Idefics3 config without the processor's size in vision_config tiles as the checkpoints'
// preprocessor_config.json does (the longest side to 4 tiles) and says so; a max_image_size
// other than the tower's image_size is refused at its key.
TEST(VisionLanguage, Idefics3TilingDefaultsToFourTiles) {
  const auto import = [](const std::string& vision_extra) {
    return parse_hf_config(R"({"model_type": "idefics3", "scale_factor": 2,
        "text_config": {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 1,
          "num_attention_heads": 2, "intermediate_size": 128, "vocab_size": 100},
        "vision_config": {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
          "intermediate_size": 64, "patch_size": 14, "image_size": 364)" +
                               vision_extra + "}}",
                           "i.json", "i");
  };
  const HfImport plain = import("");
  EXPECT_EQ(plain.entry.spec.vision.longest_edge, 4U * 364);
  EXPECT_EQ(image_tokens(plain.entry.spec.vision), 169U);  // (364 / 14 / 2)^2 = 13^2
  bool noted = false;
  for (const std::string& n : plain.notes) noted = noted || n.find("1456 pixels (4 tiles") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_EQ(import(R"(, "size": {"longest_edge": 728})").entry.spec.vision.longest_edge, 728U);
  try {
    import(R"(, "max_image_size": {"longest_edge": 384})");
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "max_image_size");
  }
}

Workload with_images(WorkloadKind kind, std::uint64_t text, std::uint64_t images, std::uint64_t width,
                     std::uint64_t height) {
  Workload w;
  w.kind = kind;
  w.seq_len = text;
  w.images = images;
  w.image_width = width;
  w.image_height = height;
  w.weights.precision = precisions::bf16;
  w.include_overhead = false;
  return w;
}

// The images' tokens join the text's: LLaVA-1.5-7B's cache after 512 text tokens and two
// images holds 512 + 2 x 576 = 1664 positions, 32 layers x 2 x 4096 x 2 B = 524,288 B each.
TEST(VisionLanguage, ImageTokensLengthenTheSequence) {
  const ModelSpec s = fixture("llava-1.5-7b-hf").entry.spec;
  EXPECT_EQ(image_positions(s, with_images(WorkloadKind::inference, 512, 2, 0, 0)), 1152U);
  const Breakdown b = estimate_workload(s, with_images(WorkloadKind::inference, 512, 2, 0, 0));
  ASSERT_NE(b.find("kv_cache"), nullptr);
  EXPECT_EQ(b.find("kv_cache")->bytes.count(), 1664ULL * 32 * 2 * 4096 * 2);
}

// Qwen2-VL-2B's tower over one 448 x 448 image in bf16 with SDPA: 1024 patches. Kept through
// the pass: pixel_values, 1024 x (3 x 2 x 14 x 14 = 1176); in a layer, its input and normed
// input (2 x 1024 x 1280) and, the larger phase, the MLP's fc1 output and its GELU (2 x 1024
// x 5120). The language model's phase is larger here, so the tower's shows beside it.
TEST(VisionLanguage, TheTowersPassIsPricedBeforeTheLanguageModel) {
  const ModelSpec s = fixture("qwen2-vl-2b-instruct").entry.spec;
  const Breakdown b = estimate_workload(s, with_images(WorkloadKind::inference, 64, 1, 448, 448));
  const std::uint64_t tower_pass = 1024ULL * 1176 * 2 + 2 * 1024ULL * 1280 * 2 + 2 * 1024ULL * 5120 * 2;
  const Alternative* tower = nullptr;
  for (const Alternative& a : b.alternatives) {
    if (a.item.name == "vision_tower_phase") tower = &a;
  }
  ASSERT_NE(tower, nullptr);
  EXPECT_EQ(tower->item.bytes.count(), tower_pass);
  // 64 + 256 tokens in the language model: its cache, 28 layers x 2 x 2 heads x 128 x 2 B a token.
  EXPECT_EQ(b.find("kv_cache")->bytes.count(), 320ULL * 28 * 2 * 2 * 128 * 2);
  // Eight such images at once: the tower's pass (eight images' tensors, one image's attention
  // at a time) outgrows generation's prefill over 64 + 2048 tokens (last-position logits).
  Workload eight = with_images(WorkloadKind::generation, 64, 8, 448, 448);
  eight.new_tokens = 16;
  const Breakdown many = estimate_workload(s, eight);
  EXPECT_EQ(many.peak_phase, "vision_tower");
  EXPECT_EQ(many.find("forward_workspace")->bytes.count(), 8 * tower_pass);
}

// Training keeps the tower frozen (LLaVA's and Qwen2-VL's recipes): a full fine-tune trains
// the language model and the projector; LoRA adapts the language model's projections only.
TEST(VisionLanguage, TrainingFreezesTheTower) {
  const ModelSpec s = fixture("llava-1.5-7b-hf").entry.spec;
  EXPECT_EQ(trainable_parameters(s, LoraOptions{}), 7'063'427'072U - 303'507'456U);
  LoraOptions lora;
  lora.rank = 16;
  // q and v in 32 layers: 2 x 32 x 16 x (4096 + 4096).
  EXPECT_EQ(trainable_parameters(s, lora), 2ULL * 32 * 16 * (4096 + 4096));
  // The trained projector keeps its input (576 tokens x 1024) and its hidden pair (2 x 576 x
  // 4096) per image for its gradients; under LoRA it is frozen and keeps nothing.
  TrainingShape shape;
  shape.seq = 128 + 2 * 576;
  shape.images = 2;
  shape.image = image_grid(s.vision, 0, 0);
  shape.weights.precision = precisions::bf16;
  shape.compute = precisions::bf16;
  const auto saved = [&](const TrainingOptions& o) {
    const TrainingEstimate te = estimate_training_phases(s, shape, o);
    for (const Item& c : te.phases.front().components) {
      if (c.name == "activations") return c.detail;
    }
    ADD_FAILURE() << "no activations at the forward phase";
    return std::vector<Item>{};
  };
  const std::vector<Item> full = saved(TrainingOptions{});
  ASSERT_NE(find_row(full, "projector_input"), nullptr);
  EXPECT_EQ(find_row(full, "projector_input")->bytes.count(), 2ULL * 576 * 1024 * 2);
  EXPECT_EQ(find_row(full, "projector_hidden")->bytes.count(), 2ULL * 2 * 576 * 4096 * 2);
  TrainingOptions adapters;
  adapters.lora = lora;
  EXPECT_EQ(find_row(saved(adapters), "projector_input"), nullptr);
  // The step's plan prices the tower's pass as a moment of its own, before the forward.
  const Breakdown b = estimate_workload(s, with_images(WorkloadKind::training, 128, 2, 0, 0));
  bool tower_phase = b.peak_phase == "vision_tower";
  for (const Alternative& a : b.alternatives) tower_phase = tower_phase || a.item.name == "phase_vision_tower";
  EXPECT_TRUE(tower_phase);
}

TEST(VisionLanguage, ImagesAreRefusedWhereTheyDoNotApply) {
  const ModelSpec qwen = fixture("qwen2-vl-2b-instruct").entry.spec;
  const auto key_of = [](const ModelSpec& s, const Workload& w) {
    try {
      (void)estimate_workload(s, w);
    } catch (const Error& e) {
      return e.key();
    }
    return std::string("no error");
  };
  // Qwen2-VL's tokens need the image's size.
  EXPECT_EQ(key_of(qwen, with_images(WorkloadKind::inference, 64, 1, 0, 0)), "image_size");
  // A model with no tower, a workload that prices tokens only, a size without images.
  ModelSpec text = qwen;
  text.vision = {};
  EXPECT_EQ(key_of(text, with_images(WorkloadKind::inference, 64, 1, 448, 448)), "images");
  EXPECT_EQ(key_of(qwen, with_images(WorkloadKind::extraction, 64, 1, 448, 448)), "images");
  EXPECT_EQ(key_of(qwen, with_images(WorkloadKind::inference, 64, 0, 448, 448)), "image_size");
}

// google/gemma-4-31B-it: 60 layers of 5376 (32 query heads), every sixth of full attention.
// Sliding layers: 16 key/value heads of 256 (q 8192, k and v 4096 wide); full layers: 4 of 512
// and no v_proj (q 16384, k 2048). MLP 21504, four norms and a scalar a layer, tied 262144-row
// embedding. Tower: 27 layers of 1152 (q, k, v, o; gate, up, down of 4304; four norms and q, k
// norms of 72), a 768 -> 1152 patch projection, 2 x 10240 positions, the standardisation's bias
// and scale; a 1152 -> 5376 projection. Published: 31,273,088,876 (a census of the checkpoint's
// tensors, code index id 62810419502).
TEST(VisionLanguage, Gemma4At31bHasGlobalHeadsOfItsOwn) {
  const ModelSpec s = fixture("gemma-4-31b-it").entry.spec;
  const std::uint64_t sliding_attention = 8192ULL * 5376 + 2 * 4096ULL * 5376 + 5376ULL * 8192 + 2 * 256;
  const std::uint64_t full_attention = 16384ULL * 5376 + 2048ULL * 5376 + 5376ULL * 16384 + 2 * 512;
  EXPECT_EQ(component(s, "attention"), 50 * (sliding_attention - 512) + 10 * (full_attention - 1024));
  const std::uint64_t layer_rest = 3 * 5376ULL * 21504 + 4 * 5376 + 1;
  const std::uint64_t vision_layer = 4 * 1152ULL * 1152 + 3 * 1152ULL * 4304 + 4 * 1152 + 2 * 72;
  const std::uint64_t tower = 27 * vision_layer + 1152ULL * 768 + 2 * 10240ULL * 1152 + 2 * 1152;
  EXPECT_EQ(component(s, "vision"), tower);
  EXPECT_EQ(component(s, "projector"), 1152ULL * 5376);
  EXPECT_EQ(count_parameters(s), 262144ULL * 5376 + 50 * sliding_attention + 10 * full_attention + 60 * layer_rest +
                                     5376 + tower + 1152ULL * 5376);
  EXPECT_EQ(count_parameters(s), 31'273'088'876U);

  // Keys and values at 32768 tokens in bf16: a sliding layer 1024 tokens of 16 x 256, a full
  // layer every token of 4 x 512.
  KvCacheOptions kv;
  kv.tokens = 32768;
  kv.precision = precisions::bf16;
  const Breakdown b = estimate_kv_cache(s, kv);
  const std::vector<Item>& rows = b.components.front().detail;
  EXPECT_EQ(testing::row_bytes(rows, "sliding_layers"), 50ULL * 2 * 1024 * 16 * 256 * 2);
  EXPECT_EQ(testing::row_bytes(rows, "full_layers"), 10ULL * 2 * 32768 * 4 * 512 * 2);
  // An image is priced at its budget: 280 tokens, 280 x 3 x 3 patches.
  EXPECT_EQ(image_grid(s.vision, 1920, 1080).tokens, 280U);
  EXPECT_EQ(image_grid(s.vision, 1920, 1080).patches, 2520U);
}

// google/gemma-4-26B-A4B-it: 30 layers of 2816 (16 query heads; sliding 8 key/value heads of
// 256, full 2 of 512 without v_proj). Each layer: a dense gated MLP of 2112 beside 128 experts
// of 704 (gate and up fused, down), a router (128 x 2816) with a scale on its input (2816) and
// one per expert (128), seven norms and a scalar. The 31B's tower, projected into 2816.
// Published: the Hub's safetensors total 25,805,936,206 (code index ids 61762937035,
// 65741665348).
TEST(VisionLanguage, Gemma4At26bHasExpertsBesideADenseMlp) {
  const ModelSpec s = fixture("gemma-4-26b-a4b-it").entry.spec;
  const std::uint64_t sliding_attention = 4096ULL * 2816 + 2 * 2048ULL * 2816 + 2816ULL * 4096 + 2 * 256;
  const std::uint64_t full_attention = 8192ULL * 2816 + 1024ULL * 2816 + 2816ULL * 8192 + 2 * 512;
  const std::uint64_t moe = 3 * 2816ULL * 2112 + 128 * (2 * 704ULL * 2816 + 2816ULL * 704) + 128ULL * 2816 + 2816 + 128;
  EXPECT_EQ(component(s, "experts"), 30 * 128 * (3 * 704ULL * 2816));
  const std::uint64_t layer_rest = moe + 7 * 2816 + 1;
  const std::uint64_t vision_layer = 4 * 1152ULL * 1152 + 3 * 1152ULL * 4304 + 4 * 1152 + 2 * 72;
  const std::uint64_t tower = 27 * vision_layer + 1152ULL * 768 + 2 * 10240ULL * 1152 + 2 * 1152;
  EXPECT_EQ(count_parameters(s), 262144ULL * 2816 + 25 * sliding_attention + 5 * full_attention + 30 * layer_rest +
                                     2816 + tower + 1152ULL * 2816);
  EXPECT_EQ(count_parameters(s), 25'805'936'206U);
}

// Gemma 4 E2B's text model (its text_config alone): 35 layers of 1536, 8 query heads and one
// key/value head (sliding: 256 wide; every fifth layer full: 512), MLP 6144 and twice that in
// the last 20 layers, which read an earlier layer's cache; a 256-wide token embedding per layer.
// Published: 4,647,449,891 in the text part of google/gemma-4-E2B-it (code index id
// 68874552225, and a measured census of the checkpoint, id 53543809441). The full config, with
// its audio tower, is refused at audio_config.
TEST(VisionLanguage, Gemma4E2bTextHasPerLayerInputsAndSharedCaches) {
  std::string types;
  for (int i = 0; i < 35; ++i)
    types += std::string(i == 0 ? "" : ", ") + ((i + 1) % 5 == 0 ? "\"full_attention\"" : "\"sliding_attention\"");
  const std::string text = R"({"model_type": "gemma4", "text_config": {"model_type": "gemma4_text",
    "hidden_size": 1536, "num_hidden_layers": 35, "num_attention_heads": 8, "num_key_value_heads": 1,
    "head_dim": 256, "global_head_dim": 512, "intermediate_size": 6144, "vocab_size": 262144,
    "sliding_window": 512, "hidden_size_per_layer_input": 256, "vocab_size_per_layer_input": 262144,
    "num_kv_shared_layers": 20, "use_double_wide_mlp": true, "layer_types": [)" +
                           types + "]}}";
  const ModelSpec s = parse_hf_config(text, "config.json", "e2b").entry.spec;
  const std::uint64_t per_layer_inputs = 262144ULL * 35 * 256 + 8960ULL * 1536 + 256 + 35 * (2 * 256ULL * 1536 + 1536);
  const std::uint64_t attention = 28 * (2 * 2048ULL * 1536 + 2 * 256ULL * 1536 + 2 * 256) +
                                  7 * (2 * 4096ULL * 1536 + 2 * 512ULL * 1536 + 2 * 512);
  const std::uint64_t mlp = 15 * 3 * 1536ULL * 6144 + 20 * 3 * 1536ULL * 12288;
  EXPECT_EQ(count_parameters(s), 262144ULL * 1536 + per_layer_inputs + attention + mlp + 35 * (4 * 1536ULL + 1) + 1536);
  EXPECT_EQ(count_parameters(s), 4'647'449'891U);
  // Only the first 15 layers keep keys and values (12 sliding, 3 full): at 1024 tokens in bf16,
  // 12 x 2 x 512 (the window) x 256 x 2 B and 3 x 2 x 1024 x 512 x 2 B.
  KvCacheOptions kv;
  kv.tokens = 1024;
  kv.precision = precisions::bf16;
  const Breakdown cache = estimate_kv_cache(s, kv);
  const std::vector<Item>& rows = cache.components.front().detail;
  EXPECT_EQ(testing::row_bytes(rows, "sliding_layers"), 12ULL * 2 * 512 * 256 * 2);
  EXPECT_EQ(testing::row_bytes(rows, "full_layers"), 3ULL * 2 * 1024 * 512 * 2);

  try {
    parse_hf_config(R"({"model_type": "gemma4", "audio_config": {"model_type": "gemma4_audio"},
      "text_config": )" +
                        text.substr(text.find("{\"model_type\": \"gemma4_text\"")),
                    "config.json", "e2b-it");
    ADD_FAILURE() << "accepted Gemma 4 E2B's audio tower";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "audio_config");
    EXPECT_NE(e.message().find("their text models are read from a text_config alone, or from a .gguf"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace vision_language_test
}  // namespace memplan
