#include "memplan/estimators/attention.hpp"

#include <gtest/gtest.h>

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"

namespace memplan {
namespace attention_test {

// The shape of the attention profiling notebook's worked example: B=4, H=8, N=8192, D=64, fp16.
AttentionShape seed_shape() {
  AttentionShape s;
  s.batch = 4;
  s.heads = 8;
  s.seq = 8192;
  s.head_dim = 64;
  s.dtype = precisions::fp16;
  s.chunk = 512;
  return s;
}

std::uint64_t bytes(AttentionVariant v, const AttentionShape& s) {
  const Breakdown b = estimate_attention(v, s);
  testing::expect_consistent(b);
  return b.total().count();
}

std::uint64_t row(AttentionVariant v, const AttentionShape& s, const std::string& name) {
  const Breakdown b = estimate_attention(v, s);  // kept: a loop over a temporary's member reads freed memory
  for (const Item& d : b.components.front().detail) {
    if (d.name == name) return d.bytes.count();
  }
  ADD_FAILURE() << "no row " << name;
  return 0;
}

constexpr std::uint64_t kInputs = 3ULL * 4 * 8 * 8192 * 64 * 2;  // q, k, v: 100,663,296
constexpr std::uint64_t kBHND = 4ULL * 8 * 8192 * 64 * 2;        // 33,554,432

TEST(Attention, EagerHoldsScoresAndProbabilities) {
  // The notebook's "4.3 GB just for attention scores": 4 x 8 x 8192^2 x 2 = 4,294,967,296.
  EXPECT_EQ(row(AttentionVariant::eager, seed_shape(), "scores"), 4294967296ULL);
  EXPECT_EQ(bytes(AttentionVariant::eager, seed_shape()), kInputs + 2 * 4294967296ULL + kBHND);
  AttentionShape hf = seed_shape();
  hf.softmax_fp32 = true;
  EXPECT_EQ(row(AttentionVariant::eager, hf, "probabilities"), 2 * 4294967296ULL);
  // Then .to(query.dtype): a 16-bit copy while the fp32 one and the scores are alive.
  EXPECT_EQ(row(AttentionVariant::eager, hf, "probabilities_16bit"), 4294967296ULL);
}

TEST(Attention, SdpaKeepsOnlyOutputAndLogSumExp) {
  // output 33,554,432 + fp32 log-sum-exp 4 x 8 x 8192 x 4 = 1,048,576.
  EXPECT_EQ(bytes(AttentionVariant::sdpa, seed_shape()), kInputs + kBHND + 1048576ULL);
}

TEST(Attention, ChunkedHoldsOneChunkOfScores) {
  // 2 x (4 x 8 x 512 x 8192 x 2) = 536,870,912.
  EXPECT_EQ(bytes(AttentionVariant::chunked, seed_shape()), kInputs + 536870912ULL + kBHND);
}

TEST(Attention, LinearStateIsQuarterMegabyteNotTwo) {
  // The notebook says "2 MB"; 4 x 8 x 64 x 64 x 2 = 262,144 B = 0.26 MB.
  EXPECT_EQ(row(AttentionVariant::linear, seed_shape(), "kv_state"), 262144ULL);
  // phi(q), phi(k), state, k_sum 4x8x64x2 = 4,096, output, normaliser 4x8x8192x2 = 524,288.
  EXPECT_EQ(bytes(AttentionVariant::linear, seed_shape()),
            kInputs + 2 * kBHND + 262144ULL + 4096ULL + kBHND + 524288ULL);
}

TEST(Attention, CausalNaiveCumsumIsTwoGigabytesNotSeventeen) {
  // The notebook says "17 GB"; 4 x 8 x 8192 x 64 x 64 x 2 = 2,147,483,648 B = 2.15 GB (8x less).
  EXPECT_EQ(row(AttentionVariant::causal_linear_naive, seed_shape(), "kv_cumsum"), 2147483648ULL);
  EXPECT_EQ(bytes(AttentionVariant::causal_linear_naive, seed_shape()),
            kInputs + 2 * kBHND + 2 * 2147483648ULL + kBHND + kBHND + 524288ULL);
}

TEST(Attention, CausalChunkedAndRecurrentAreLinearInN) {
  // chunked: phi(q), phi(k), two D x D states (262,144 each), 512 x 512 scores 4x8x512^2x2 = 16,777,216,
  // the running phi(k) sum 4x8x64x2 = 4,096.
  EXPECT_EQ(bytes(AttentionVariant::causal_linear_chunked, seed_shape()),
            kInputs + 2 * kBHND + 2 * 262144ULL + 16777216ULL + 4096ULL + kBHND);
  EXPECT_EQ(bytes(AttentionVariant::recurrent, seed_shape()), kInputs + 262144ULL + 4096ULL + kBHND);
}

// The chunked causal kernel (src/kernels/attention.cpp) carries the normaliser's running
// sum of phi(k) across chunks: B x H x D in the compute dtype, alive with everything else.
TEST(Attention, CausalChunkedCarriesTheRunningSumOfPhiK) {
  AttentionShape s;
  s.batch = 1;
  s.heads = 4;
  s.seq = 512;
  s.head_dim = 32;
  s.chunk = 512;
  s.dtype = precisions::fp32;
  s.include_inputs = false;
  // k_sum: B x H x D x 4 B = 1 x 4 x 32 x 4 = 512.
  EXPECT_EQ(row(AttentionVariant::causal_linear_chunked, s, "k_sum"), 1ULL * 4 * 32 * 4);
  // phi(q), phi(k), output 1x4x512x32x4 = 262,144 each; carried and chunk states 1x4x32x32x4 =
  // 16,384 each; scores 1x4x512x512x4 = 4,194,304; k_sum 512: 5,014,016.
  EXPECT_EQ(bytes(AttentionVariant::causal_linear_chunked, s), 3 * 262144ULL + 2 * 16384ULL + 4194304ULL + 512ULL);
  EXPECT_EQ(bytes(AttentionVariant::causal_linear_chunked, s), 5014016ULL);
  // In fp16 it halves with the rest: 1 x 4 x 32 x 2 = 256.
  s.dtype = precisions::fp16;
  EXPECT_EQ(row(AttentionVariant::causal_linear_chunked, s, "k_sum"), 256ULL);
  EXPECT_EQ(attention_bytes(AttentionVariant::causal_linear_chunked, s),
            estimate_attention(AttentionVariant::causal_linear_chunked, s).total());
}

TEST(Attention, LongerSequencesNeverCostLess) {
  for (AttentionVariant v : all_attention_variants()) {
    SCOPED_TRACE(to_string(v));
    AttentionShape s = seed_shape();
    std::uint64_t previous = 0;
    for (std::uint64_t n : {1U, 256U, 512U, 513U, 4096U, 8192U}) {
      s.seq = n;
      const std::uint64_t now = bytes(v, s);
      EXPECT_GT(now, previous);
      previous = now;
    }
  }
}

TEST(Attention, NotebookTheoryComputedItsWay) {
  // The notebook's theoretical_memory(4, 8, 8192, 64): inputs + one matrix or state.
  const Breakdown theory = notebook_attention_theory(seed_shape());
  ASSERT_EQ(theory.components.size(), 3U);
  EXPECT_EQ(theory.components[0].bytes.count(), kInputs + 4294967296ULL);  // 4.3 GB matrix, as it says
  EXPECT_EQ(theory.components[1].bytes.count(), kInputs + 262144ULL);      // 0.26 MB, not "2 MB"
  EXPECT_EQ(theory.components[2].bytes.count(), kInputs + 2147483648ULL);  // 2.15 GB, not "17 GB"
}

TEST(Attention, VariantNamesRoundTrip) {
  for (AttentionVariant v : all_attention_variants()) EXPECT_EQ(parse_attention_variant(to_string(v)), v);
  EXPECT_THROW(parse_attention_variant("flash2"), Error);
}

}  // namespace attention_test
}  // namespace memplan
