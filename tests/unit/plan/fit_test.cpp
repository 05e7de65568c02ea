#include "memplan/plan/fit.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "memplan/core/error.hpp"
#include "reference_models.hpp"

namespace memplan {
namespace fit_test {

using testing::llama2_7b;

constexpr std::uint64_t kLlamaWeightsBf16 = 13476831232ULL;  // 6,738,415,616 x 2

// Llama-2-7b in bf16 without the CUDA overhead rows, logits kept in bf16: every term is
// linear in the knob, so the boundary can be found by hand.
Workload llama(WorkloadKind kind, std::uint64_t batch, std::uint64_t seq) {
  Workload w;
  w.kind = kind;
  w.batch = batch;
  w.seq_len = seq;
  w.weights.precision = precisions::bf16;
  w.include_overhead = false;
  w.logits_fp32 = false;
  return w;
}

TEST(Fit, BudgetLimitIsExact) {
  EXPECT_EQ(budget_limit(Bytes{100}, 0.85).count(), 85U);
  EXPECT_EQ(budget_limit(Bytes{3}, 0.5).count(), 1U);  // 1.5 rounds down
  // 24 GiB x 0.85 = 25,769,803,776 x 0.85 = 21,904,333,209.6
  EXPECT_EQ(budget_limit(Bytes{24ULL << 30}, 0.85).count(), 21904333209ULL);
  EXPECT_EQ(budget_limit(Bytes{std::numeric_limits<std::uint64_t>::max()}, 1.0).count(),
            std::numeric_limits<std::uint64_t>::max());
}

TEST(Fit, LargestBatchByHand) {
  // Per sequence of 512 tokens: KV cache 2 x 32 layers x 512 x 4096 x 2 B = 268,435,456; the
  // peak phase is the MLP: block input 2 x 512 x 4096 x 2 = 8,388,608 + 3 x 512 x 11008 x 2 =
  // 33,816,576. Total(B) = 13,476,831,232 + 310,640,640 B. Under 20 GiB (21,474,836,480):
  // (21,474,836,480 - 13,476,831,232) / 310,640,640 = 25.7, so 25 fits and 26 does not.
  const FitResult r = fit_largest(llama2_7b(), llama(WorkloadKind::inference, 1, 512), FitKnob::batch,
                                  Bytes{20ULL << 30});
  EXPECT_EQ(r.value, 25U);
  ASSERT_TRUE(r.breakdown.has_value());
  EXPECT_EQ(r.breakdown->total().count(), kLlamaWeightsBf16 + 25ULL * 310640640ULL);
  ASSERT_TRUE(r.next_total.has_value());
  EXPECT_EQ(r.next_total->count(), kLlamaWeightsBf16 + 26ULL * 310640640ULL);
  EXPECT_EQ(r.next_total->count(), 21553487872ULL);
  EXPECT_EQ(r.binding, "kv_cache");  // 268 MB more per sequence, against 42 MB of workspace
  EXPECT_EQ(r.binding_bytes.count(), 26ULL * 268435456ULL);
  EXPECT_EQ(r.cap, 1ULL << 24);
}

TEST(Fit, LargestSequenceByHand) {
  // Per token: KV 2 x 32 x 4096 x 2 = 524,288 + MLP phase 2 x 4096 x 2 + 3 x 11008 x 2 =
  // 82,432 = 606,720. Under 14 GiB (15,032,385,536): 1,555,554,304 / 606,720 = 2563.9.
  const FitResult r = fit_largest(llama2_7b(), llama(WorkloadKind::inference, 1, 2048), FitKnob::seq,
                                  Bytes{14ULL << 30});
  EXPECT_EQ(r.value, 2563U);
  EXPECT_EQ(r.breakdown->total().count(), kLlamaWeightsBf16 + 2563ULL * 606720ULL);
  EXPECT_EQ(r.next_total->count(), kLlamaWeightsBf16 + 2564ULL * 606720ULL);
  EXPECT_EQ(r.cap, 4096U);  // the model's context
}

TEST(Fit, LargestStreamingChunkByHand) {
  // Streaming extraction of 4096 tokens caching blocks.*.hook_resid_post: the KV cache holds
  // the whole sequence (2 x 32 x 4096 x 4096 x 2 = 2 GiB); per chunk token: 32 hooks x 4096 x 2
  // = 262,144 cached + the MLP phase 82,432 = 344,576. Total(C) = 15,624,314,880 + 344,576 C.
  // Under 16,000,000,000: 375,685,120 / 344,576 = 1090.3.
  Workload w = llama(WorkloadKind::streaming_extraction, 1, 4096);
  w.cache.filter = {"blocks.*.hook_resid_post"};
  const FitResult r = fit_largest(llama2_7b(), w, FitKnob::streaming_chunk, Bytes{16000000000ULL});
  EXPECT_EQ(r.value, 1090U);
  EXPECT_EQ(r.breakdown->total().count(), 15624314880ULL + 1090ULL * 344576ULL);
  EXPECT_EQ(r.next_total->count(), 16000247296ULL);  // 15,624,314,880 + 1091 x 344,576
  EXPECT_EQ(r.binding, "activations");
  EXPECT_EQ(r.cap, 4096U);  // a chunk longer than the sequence holds no more
}

TEST(Fit, AttentionChunkAgreesWithTheEstimateAtTheBoundary) {
  // Eager-like chunks: B x H x C x M scores and probabilities. The boundary is checked against
  // estimate_workload itself: the value fits, the next does not.
  Workload w = llama(WorkloadKind::inference, 4, 4096);
  w.attention = AttentionVariant::chunked;
  w.kv_cache = false;
  const Bytes limit{18ULL << 30};
  const FitResult r = fit_largest(llama2_7b(), w, FitKnob::attention_chunk, limit);
  ASSERT_GT(r.value, 1U);
  ASSERT_LT(r.value, 4096U);
  Workload at = w, next = w;
  at.attention_chunk = r.value;
  next.attention_chunk = r.value + 1;
  EXPECT_LE(estimate_workload(llama2_7b(), at).total(), limit);
  EXPECT_GT(estimate_workload(llama2_7b(), next).total(), limit);
  EXPECT_EQ(r.binding, "forward_workspace");
}

TEST(Fit, NothingFitsAndTheCapFits) {
  const Workload w = llama(WorkloadKind::inference, 1, 512);
  const FitResult none = fit_largest(llama2_7b(), w, FitKnob::batch, Bytes{1ULL << 30});
  EXPECT_EQ(none.value, 0U);
  EXPECT_FALSE(none.breakdown.has_value());
  ASSERT_TRUE(none.next_total.has_value());
  EXPECT_EQ(none.next_total->count(), kLlamaWeightsBf16 + 310640640ULL);  // at batch 1

  const FitResult all = fit_largest(llama2_7b(), w, FitKnob::seq, Bytes{64ULL << 30});
  EXPECT_EQ(all.value, 4096U);
  EXPECT_FALSE(all.next_total.has_value());
  EXPECT_FALSE(all.next_overflows);
}

TEST(Fit, AnOverflowingTotalDoesNotFit) {
  // batch 2^24 of 4096 tokens of KV cache is 2^24 x 2 GiB = 2^55 bytes, still representable; a
  // cap of 2^40 sequences is not: the search stops below the overflow.
  Workload w = llama(WorkloadKind::inference, 1, 4096);
  const FitResult r = fit_largest(llama2_7b(), w, FitKnob::batch, Bytes{std::numeric_limits<std::uint64_t>::max()},
                                  1ULL << 40);
  EXPECT_GT(r.value, 1ULL << 20);
  EXPECT_LT(r.value, 1ULL << 40);
  EXPECT_TRUE(r.next_overflows);
  EXPECT_FALSE(r.next_total.has_value());
}

TEST(Fit, ChoosesTheChunkTheWorkloadHas) {
  Workload w = llama(WorkloadKind::streaming_extraction, 1, 4096);
  EXPECT_EQ(choose_fit_knob("chunk", w), FitKnob::streaming_chunk);
  EXPECT_EQ(choose_fit_knob("batch", w), FitKnob::batch);
  EXPECT_EQ(choose_fit_knob("seq", w), FitKnob::seq);
  w.kind = WorkloadKind::inference;
  w.attention = AttentionVariant::causal_linear_chunked;
  EXPECT_EQ(choose_fit_knob("chunk", w), FitKnob::attention_chunk);
  EXPECT_EQ(choose_fit_knob("attention_chunk", w), FitKnob::attention_chunk);
  EXPECT_THROW(choose_fit_knob("streaming_chunk", w), Error);
  w.attention = AttentionVariant::sdpa;
  try {
    choose_fit_knob("chunk", w);
    FAIL() << "sdpa has no chunk";
  } catch (const Error& e) {
    EXPECT_EQ(e.key(), "vary");
    EXPECT_NE(std::string(e.what()).find("streaming_extraction"), std::string::npos);
  }
  EXPECT_THROW(choose_fit_knob("layers", w), Error);
}

TEST(Fit, SequenceCapLeavesRoomForGeneratedTokens) {
  Workload w = llama(WorkloadKind::generation, 1, 512);
  w.new_tokens = 256;
  EXPECT_EQ(fit_knob_cap(llama2_7b(), w, FitKnob::seq), 4096U - 256U);
  w.new_tokens = 4096;
  EXPECT_THROW(fit_knob_cap(llama2_7b(), w, FitKnob::seq), Error);
}

}  // namespace fit_test
}  // namespace memplan
