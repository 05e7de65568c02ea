#include "memplan/estimators/weights.hpp"

#include <gtest/gtest.h>

#include "hf_fixtures.hpp"
#include "reference_models.hpp"

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"

namespace memplan {
namespace weights_test {

using testing::llama2_7b;

Bytes weights_of(const ModelSpec& s, const std::string& precision) {
  WeightsOptions o;
  o.precision = parse_precision(precision);
  const Breakdown b = estimate_weights(s, o);
  testing::expect_consistent(b);
  return b.total();
}

TEST(Weights, Llama2_7bIn16Bit) {
  // 6,738,415,616 params x 2 bytes.
  EXPECT_EQ(weights_of(llama2_7b(), "bf16").count(), 13476831232ULL);
  EXPECT_EQ(weights_of(llama2_7b(), "fp16").count(), 13476831232ULL);
  EXPECT_EQ(weights_of(llama2_7b(), "fp32").count(), 26953662464ULL);
  EXPECT_EQ(weights_of(llama2_7b(), "tf32").count(), 26953662464ULL);
}

TEST(Weights, Llama2_7bInt4QuantisesLinearLayersOnly) {
  // Per layer, int4-g128 with fp16 scales:
  //   q, k, v, o: 4096x4096 -> (4096*4096*4 + 4096*32*16) / 8 = 8,650,752 bytes each
  //   gate, up:  11008 rows x 4096 -> (11008*4096*4 + 11008*32*16) / 8 = 23,248,896 bytes each
  //   down:      4096 rows x 11008 -> (4096*11008*4 + 4096*86*16) / 8 = 23,248,896 bytes
  //   = 4*8,650,752 + 3*23,248,896 = 104,349,696; x 32 layers = 3,339,190,272.
  // fp16 for the rest: embeddings 262,144,000 + lm_head 262,144,000 + norms 65*4096*2 = 532,480.
  EXPECT_EQ(weights_of(llama2_7b(), "int4").count(), 3339190272ULL + 262144000ULL + 262144000ULL + 532480ULL);
}

TEST(Weights, QuantisingTheLmHeadIsAChoice) {
  WeightsOptions o;
  o.precision = parse_precision("int8");
  const Bytes kept = estimate_weights(llama2_7b(), o).total();
  o.quantize_lm_head = true;
  const Bytes quantised = estimate_weights(llama2_7b(), o).total();
  // lm_head 32000x4096: fp16 = 262,144,000 bytes; int8 = 131,072,000 + 32000 fp32 row scales = 128,000.
  EXPECT_EQ(kept.count() - quantised.count(), 262144000ULL - 131072000ULL - 128000ULL);
}

TEST(Weights, BreakdownRowsCarryParamsAndStayConsistent) {
  const Breakdown b = estimate_weights(llama2_7b(), {});
  testing::expect_consistent(b);
  ASSERT_EQ(b.components.size(), 1U);
  const Item& w = b.components.front();
  EXPECT_EQ(w.name, "weights");
  EXPECT_EQ(*w.params, 6738415616ULL);
  std::vector<std::string> names;
  for (const Item& d : w.detail) names.push_back(d.name);
  EXPECT_EQ(names, (std::vector<std::string>{"embeddings", "attention", "mlp", "norms", "lm_head"}));
}

TEST(Weights, TiedHeadShowsAsAZeroRow) {
  ModelSpec s = llama2_7b();
  s.lm_head = LmHead::tied;
  const Breakdown b = estimate_weights(s, {});
  testing::expect_consistent(b);
  EXPECT_EQ(b.total().count(), 2ULL * (6738415616ULL - 32000ULL * 4096));
  EXPECT_FALSE(b.components.front().detail.back().note.empty());
}

TEST(Weights, LowerPrecisionNeverCostsMore) {
  // Chains ordered by bits per weight, scales included.
  for (const auto& chain : std::vector<std::vector<std::string>>{{"fp32", "bf16", "fp8", "int4-g128-zp", "int4"},
                                                                 {"fp32", "fp16", "int8", "nf4", "nf4-dq"},
                                                                 {"int4-g32", "int4-g64", "int4-g128"}}) {
    Bytes previous(UINT64_MAX);
    for (const std::string& p : chain) {
      const Bytes now = weights_of(llama2_7b(), p);
      EXPECT_LE(now, previous) << p;
      previous = now;
    }
  }
}

TEST(Weights, MoreLayersNeverCostLess) {
  ModelSpec s = llama2_7b();
  Bytes previous;
  for (std::uint64_t layers : {1U, 2U, 16U, 32U, 80U}) {
    s.n_layers = layers;
    const Bytes now = weights_of(s, "int4");
    EXPECT_GT(now, previous);
    previous = now;
  }
}

// What transformers 4.57 held as model.named_buffers() on the H200 (bench/accuracy/results/
// h200-2026-11-27-hf-internals.jsonl, `buffers_bytes`), against the buffers row.
std::uint64_t transformers_buffers(const ModelSpec& s) {
  WeightsOptions o;
  o.buffers = BufferRuntime::transformers;
  const Breakdown b = estimate_weights(s, o);
  testing::expect_consistent(b);
  return testing::row_bytes(b.components.front().detail, "buffers");
}

TEST(Weights, BuffersAreWhatTransformersHoldsBesideTheParameters) {
  // Llama-2-7b: inv_freq and original_inv_freq, 128 / 2 fp32 each: 2 x 64 x 4 = 512 B, and
  // no parameters: the total is the 6,738,415,616 params x 2 B plus those 512.
  WeightsOptions bf16;
  bf16.buffers = BufferRuntime::transformers;
  const Breakdown llama = estimate_weights(llama2_7b(), bf16);
  EXPECT_EQ(testing::row_bytes(llama.components.front().detail, "buffers"), 512U);
  EXPECT_EQ(llama.total().count(), 13476831232ULL + 512);
  EXPECT_EQ(*llama.components.front().params, 6738415616ULL);
  // Measured: DeepSeek-V2-Lite 256 (its 64-wide rotary part: 2 x 32 x 4), Gemma-2-9b 1,026
  // (2 x 128 x 4 and a bf16 embed_scale), Gemma-3-1b 2,050 (sliding and full tables:
  // 4 x 128 x 4 + 2), Qwen2-VL-2B 672 (2 x 64 x 4 for the language model, 2 x 20 x 4 for the
  // tower's 80-wide heads rotated in halves).
  EXPECT_EQ(transformers_buffers(testing::hf_fixture("deepseek-v2-lite")), 256U);
  EXPECT_EQ(transformers_buffers(testing::hf_fixture("gemma-2-9b")), 1026U);
  EXPECT_EQ(transformers_buffers(testing::hf_fixture("gemma-3-1b-it")), 2050U);
  EXPECT_EQ(transformers_buffers(testing::hf_fixture("qwen2-vl-2b-instruct")), 672U);
  // Pythia rotates a quarter of each 64-wide head: 2 x 8 x 4 = 64 B. GPT-2 (learned
  // positions) and Mamba (no attention) hold none.
  EXPECT_EQ(transformers_buffers(testing::hf_fixture("pythia-160m")), 64U);
  WeightsOptions o;
  o.buffers = BufferRuntime::transformers;
  for (const char* none : {"gpt2", "mamba-130m-hf"}) {
    EXPECT_EQ(testing::find_row(estimate_weights(testing::hf_fixture(none), o).components.front().detail, "buffers"),
              nullptr)
        << none;
  }
}

TEST(Weights, VllmKeepsOneCosSinTablePerRotarySetting) {
  // Llama-3.1-8B: 131,072 positions x 128 x 2 B (bf16) = 33,554,432 B; with the 8,030,261,248
  // params x 2 B that is 16,094,076,928 B = 14.99 GiB, the figure vLLM logs as "Model loading
  // took 14.99 GiB" (the parameters alone would be 14.96).
  WeightsOptions vllm;
  vllm.buffers = BufferRuntime::vllm;
  const Breakdown b = estimate_weights(testing::hf_fixture("llama-3.1-8b"), vllm);
  EXPECT_EQ(testing::row_bytes(b.components.front().detail, "buffers"), 33554432ULL);
  EXPECT_EQ(b.total().count(), 16094076928ULL);
  // Gemma-3-1b: local and global tables, 32,768 x 256 x 2 B each.
  const Breakdown gemma = estimate_weights(testing::hf_fixture("gemma-3-1b-it"), vllm);
  EXPECT_EQ(testing::row_bytes(gemma.components.front().detail, "buffers"), 2ULL * 32768 * 256 * 2);
  // llama.cpp keeps none, nor does a caller that names no runtime.
  EXPECT_EQ(testing::find_row(estimate_weights(llama2_7b()).components.front().detail, "buffers"), nullptr);
}

TEST(Weights, OverflowIsAnErrorNotAWrappedNumber) {
  ModelSpec s = llama2_7b();
  s.d_model = 1ULL << 40;
  s.d_head = (1ULL << 40) / 32;
  s.d_mlp = 1ULL << 40;
  try {
    estimate_weights(s, {});
    ADD_FAILURE() << "no overflow reported";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::overflow);
  }
}

}  // namespace weights_test
}  // namespace memplan
