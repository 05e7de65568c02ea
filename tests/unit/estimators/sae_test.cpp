#include "memplan/estimators/sae.hpp"

#include <gtest/gtest.h>

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"

namespace memplan {
namespace sae_test {

std::uint64_t total(const SaeOptions& o, std::uint64_t d) {
  const Breakdown b = estimate_sae(o, d);
  testing::expect_consistent(b);
  return b.total().count();
}

SaeOptions seed(std::uint64_t expansion) {
  SaeOptions o;
  o.seed_formula = true;
  o.expansion = expansion;
  o.seed_batch = 1;
  o.seed_seq = 4096;  // 4,096 tokens per step (the interpretability compute guide leaves batch and seq open)
  return o;
}

TEST(Sae, SeedFormulaOnItsOwnGuideShapes) {
  // the interpretability compute guide's estimate_sae_memory, fp32: P = (2dF + F + d) x 4, A = T(2d + F) x 4, total
  // P + A + (P + A) + 2P = 4P + 2A.
  // 8x on 768: F = 6,144; P = (9,437,184 + 6,144 + 768) x 4 = 37,776,384;
  // A = 4,096 x 7,680 x 4 = 125,829,120; total 151,105,536 + 251,658,240 = 402,763,776.
  EXPECT_EQ(total(seed(8), 768), 402763776ULL);
  // 32x on 768: F = 24,576; P = (37,748,736 + 24,576 + 768) x 4 = 151,096,320;
  // A = 4,096 x 26,112 x 4 = 427,819,008; total 604,385,280 + 855,638,016.
  EXPECT_EQ(total(seed(32), 768), 1460023296ULL);
  // 8x on 4096: F = 32,768; P = (268,435,456 + 32,768 + 4,096) x 4 = 1,073,889,280;
  // A = 4,096 x 40,960 x 4 = 671,088,640; total 4,295,557,120 + 1,342,177,280.
  EXPECT_EQ(total(seed(8), 4096), 5637734400ULL);
  const Breakdown b = estimate_sae(seed(8), 768);
  EXPECT_EQ(b.find("sae_gradients")->bytes.count(), 37776384ULL + 125829120ULL);
  EXPECT_EQ(b.find("sae_optimizer")->bytes.count(), 2 * 37776384ULL);
}

TEST(Sae, RealTrainingStep) {
  // d = 768, F = 6,144, T = 4,096, fp32, Adam, ReLU + L1, untied:
  // parameters 37,776,384, gradients 37,776,384, Adam 75,552,768, dead-feature counters
  // 2 x 6,144 x 4 = 49,152, store 262,144 x 768 x 4 = 805,306,368;
  // activations: input, centred input, output, error 4 x (4,096 x 768 x 4 = 12,582,912) +
  // hidden_pre, feature_acts, l1_input 3 x (4,096 x 6,144 x 4 = 100,663,296) = 352,321,536;
  // backward 2 x 100,663,296 = 201,326,592.
  SaeOptions o;
  const std::uint64_t relu = 37776384ULL * 2 + 75552768ULL + 49152ULL + 805306368ULL + 352321536ULL + 201326592ULL;
  EXPECT_EQ(total(o, 768), relu);
  // Tied: no W_dec (768 x 6,144 x 4 = 18,874,368) in parameters, gradients and both Adam states.
  o.tied = true;
  EXPECT_EQ(total(o, 768), relu - 4 * 18874368ULL);
  // Top-k (k = 32): no L1 input; values 4,096 x 32 x 4 = 524,288 and int64 indices 1,048,576.
  o.tied = false;
  o.top_k = 32;
  EXPECT_EQ(total(o, 768), relu - 100663296ULL + 524288ULL + 1048576ULL);
}

TEST(Sae, LargerDictionariesAndBatchesNeverCostLess) {
  SaeOptions o;
  std::uint64_t previous = 0;
  for (std::uint64_t e = 1; e <= 64; e *= 2) {
    o.expansion = e;
    const std::uint64_t now = total(o, 512);
    EXPECT_GE(now, previous);
    SaeOptions bigger = o;
    bigger.batch_tokens *= 2;
    EXPECT_GE(total(bigger, 512), now);
    SaeOptions half = o;
    half.dtype = precisions::bf16;
    half.buffer_dtype = precisions::bf16;
    EXPECT_LE(total(half, 512), now);
    previous = now;
  }
}

TEST(Sae, RejectsZeroSizes) {
  SaeOptions o;
  o.expansion = 0;
  EXPECT_THROW(estimate_sae(o, 768), Error);
  EXPECT_THROW(estimate_sae(SaeOptions{}, 0), Error);
  o = SaeOptions{};
  o.optimizer = Optimizer::adafactor;
  EXPECT_THROW(estimate_sae(o, 768), Error);
}

}  // namespace sae_test
}  // namespace memplan
