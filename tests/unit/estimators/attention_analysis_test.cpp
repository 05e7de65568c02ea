#include "memplan/estimators/attention_analysis.hpp"

#include <gtest/gtest.h>

#include "reference_models.hpp"

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"

namespace memplan {
namespace attention_analysis_test {

using testing::llama2_7b;

std::uint64_t patterns(std::uint64_t batch, std::uint64_t seq, const AttentionAnalysisOptions& o = {}) {
  const Breakdown b = estimate_attention_patterns(llama2_7b(), batch, seq, o);
  testing::expect_consistent(b);
  return b.total().count();
}

TEST(AttentionAnalysis, SeedsPerSequenceFigures) {
  // TensorScope: seq^2 x 32 heads x 32 layers x 4 B: ~1GB at 512, ~16GB at 2048, ~64GB at 4096,
  // exactly 1, 16 and 64 GiB for one sequence.
  EXPECT_EQ(patterns(1, 512), 1073741824ULL);
  EXPECT_EQ(patterns(1, 2048), 17179869184ULL);
  EXPECT_EQ(patterns(1, 4096), 68719476736ULL);
  // TensorScope's budget table runs batch 32: 32 x 1 GiB at 512.
  EXPECT_EQ(patterns(32, 512), 34359738368ULL);
}

TEST(AttentionAnalysis, ReductionAndOneLayerAtATime) {
  AttentionAnalysisOptions o;
  o.all_layers = false;  // one layer: 32 x 2048^2 x 4
  EXPECT_EQ(patterns(1, 2048, o), 536870912ULL);
  o.all_layers = true;
  o.reduce = true;
  o.chunk = 512;  // entropy per row 32 x 32 x 2048 x 4 + a chunk 32 x 512 x 2048 x 4
  EXPECT_EQ(patterns(1, 2048, o), 8388608ULL + 134217728ULL);
}

TEST(AttentionAnalysis, Qkov) {
  // Circuits of one layer 2 x 32 x 4096^2 x 4 = 4,294,967,296; composition 3 x 1024^2 x 4 =
  // 12,582,912; one layer's patterns 32 x 512^2 x 4 = 33,554,432.
  const Breakdown b = estimate_qkov(llama2_7b(), 1, 512, {});
  testing::expect_consistent(b);
  EXPECT_EQ(b.total().count(), 4294967296ULL + 12582912ULL + 33554432ULL);
  AttentionAnalysisOptions o;
  o.heads = 33;
  EXPECT_THROW(estimate_qkov(llama2_7b(), 1, 512, o), Error);
}

TEST(AttentionAnalysis, LongerSequencesAndBatchesNeverCostLess) {
  for (const bool reduce : {false, true}) {
    AttentionAnalysisOptions o;
    o.reduce = reduce;
    o.chunk = reduce ? 256 : 0;
    std::uint64_t previous = 0;
    for (std::uint64_t s = 64; s <= 4096; s *= 2) {
      const std::uint64_t now = patterns(1, s, o);
      EXPECT_GE(now, previous);
      EXPECT_LE(now, patterns(2, s, o));
      AttentionAnalysisOptions half = o;
      half.dtype = precisions::bf16;
      EXPECT_LE(patterns(1, s, half), now);
      previous = now;
    }
  }
}

}  // namespace attention_analysis_test
}  // namespace memplan
