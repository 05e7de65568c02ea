#include "memplan/plan/recommend.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "memplan/plan/fit.hpp"
#include "reference_models.hpp"

namespace memplan {
namespace recommend_test {

using testing::llama2_7b;

// Llama-2-7b inference, 1 x 2048 tokens in bf16, no CUDA overhead rows, logits in bf16:
//   weights 6,738,415,616 x 2                                  = 13,476,831,232
//   KV cache 2 x 32 layers x 2048 x 4096 x 2                   =  1,073,741,824
//   MLP phase 2 x 2048 x 4096 x 2 + 3 x 2048 x 11008 x 2       =    168,820,736
//   total                                                       = 14,719,393,792
constexpr std::uint64_t kKv = 1073741824ULL, kWorkspace = 168820736ULL;
constexpr std::uint64_t kTotal = 13476831232ULL + kKv + kWorkspace;
// Weights in int4-g128: linear 6,476,005,376 x 4 bits = 3,238,002,688 + fp16 scales per 128
// 101,187,584 + embeddings, norms and lm_head 262,410,240 x 2 = 524,820,480 -> 3,864,010,752.
constexpr std::uint64_t kInt4Weights = 3864010752ULL;
// int8: 6,476,005,376 x 1 + fp32 scale per row (32 x 42,496 rows x 4 = 5,439,488) + 524,820,480.
constexpr std::uint64_t kInt8Weights = 7006265344ULL;

Workload plan() {
  Workload w;
  w.kind = WorkloadKind::inference;
  w.seq_len = 2048;
  w.weights.precision = precisions::bf16;
  w.include_overhead = false;
  w.logits_fp32 = false;
  return w;
}

RecommendRequest request(ComputeCapability cc, Bytes limit) {
  RecommendRequest r;
  r.workload = plan();
  r.device = gpu_with_capability(cc);
  r.limit = limit;
  return r;
}

const Mitigation* find(const Recommendation& r, const std::string& kind, const std::string& option_value = "") {
  for (const Mitigation& m : r.mitigations) {
    if (m.kind == kind &&
        (option_value.empty() || std::any_of(m.settings.begin(), m.settings.end(),
                                             [&](const OptionSetting& o) { return o.value == option_value; }))) {
      return &m;
    }
  }
  return nullptr;
}

TEST(Recommend, APlanThatDoesNotFitGetsAChangeThatFits) {
  const Bytes limit{12ULL << 30};  // 12,884,901,888 < 14,719,393,792
  const Recommendation r = recommend(llama2_7b(), request({8, 0}, limit));
  EXPECT_EQ(r.total.count(), kTotal);
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.min_devices, 2U);  // ceil(14,719,393,792 / 12,884,901,888)
  ASSERT_FALSE(r.mitigations.empty());

  // The first change saves the most: int4 weights (activations stay 16-bit: fp16).
  const Mitigation& best = r.mitigations.front();
  EXPECT_EQ(best.kind, "precision");
  EXPECT_EQ(best.settings, (std::vector<OptionSetting>{{"precision", "int4-g128"}}));
  EXPECT_EQ(best.total.count(), kInt4Weights + kKv + kWorkspace);  // 5,106,573,312
  EXPECT_EQ(best.saved.count(), kTotal - (kInt4Weights + kKv + kWorkspace));
  EXPECT_TRUE(best.fits);

  // The recomputed plan, built from the named change alone, is the same and fits.
  Workload changed = plan();
  changed.weights.precision = parse_precision(best.settings[0].value);
  const Bytes again = estimate_workload(llama2_7b(), changed).total();
  EXPECT_EQ(again, best.total);
  EXPECT_LE(again, limit);

  const Mitigation* int8 = find(r, "precision", "int8");
  ASSERT_NE(int8, nullptr);
  EXPECT_EQ(int8->total.count(), kInt8Weights + kKv + kWorkspace);  // 8,248,827,904
  EXPECT_TRUE(int8->fits);

  // No KV cache saves exactly the cache, and is not enough.
  const Mitigation* no_kv = find(r, "no_kv_cache");
  ASSERT_NE(no_kv, nullptr);
  EXPECT_EQ(no_kv->saved.count(), kKv);
  EXPECT_FALSE(no_kv->fits);

  // Ranked by the memory saved.
  for (std::size_t i = 1; i < r.mitigations.size(); ++i) EXPECT_GE(r.mitigations[i - 1].saved, r.mitigations[i].saved);
  // An A100 (8.0) does not run fp8; batch 1 cannot shrink; SDPA is not eager.
  EXPECT_EQ(find(r, "precision", "fp8_e4m3"), nullptr);
  EXPECT_EQ(find(r, "smaller_batch"), nullptr);
  EXPECT_EQ(find(r, "attention"), nullptr);
  EXPECT_FALSE(r.combined.has_value());  // a single change fits
}

TEST(Recommend, Fp8WhereTheDeviceRunsIt) {
  const Recommendation r = recommend(llama2_7b(), request({9, 0}, Bytes{12ULL << 30}));
  EXPECT_NE(find(r, "precision", "fp8_e4m3"), nullptr);
}

TEST(Recommend, APlanThatFitsSaysSo) {
  const Recommendation r = recommend(llama2_7b(), request({8, 0}, Bytes{16ULL << 30}));
  EXPECT_TRUE(r.fits);
  EXPECT_EQ(r.total.count(), kTotal);
  EXPECT_EQ(r.min_devices, 1U);
}

TEST(Recommend, SmallerBatchIsTheLargestThatFits) {
  // Per sequence of 2048 tokens: KV 1,073,741,824 + MLP phase 168,820,736 = 1,242,562,560.
  // Under 20 GiB (21,474,836,480): (21,474,836,480 - 13,476,831,232) / 1,242,562,560 = 6.4.
  RecommendRequest q = request({8, 0}, Bytes{20ULL << 30});
  q.workload.batch = 16;
  const Recommendation r = recommend(llama2_7b(), q);
  const Mitigation* b = find(r, "smaller_batch");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->settings, (std::vector<OptionSetting>{{"batch_size", "6"}}));
  EXPECT_EQ(b->total.count(), 13476831232ULL + 6ULL * 1242562560ULL);
  EXPECT_TRUE(b->fits);
}

TEST(Recommend, ExtractionGetsCacheChanges) {
  // A full TransformerLens cache of 2048 tokens does not fit 24 GiB x 0.85; the residual
  // stream alone is 32 x 2048 x 4096 x 2 = 536,870,912 B of cache.
  RecommendRequest q = request({8, 6}, budget_limit(Bytes{24ULL << 30}, 0.85));
  q.workload.kind = WorkloadKind::extraction;
  const Recommendation r = recommend(llama2_7b(), q);
  EXPECT_FALSE(r.fits);
  const Mitigation* selective = find(r, "selective_cache");
  ASSERT_NE(selective, nullptr);
  EXPECT_TRUE(selective->fits);
  Workload check = q.workload;
  check.cache.filter = {"blocks.*.hook_resid_post"};
  const Breakdown b = estimate_workload(llama2_7b(), check);
  EXPECT_EQ(b.find("activations")->bytes.count(), 536870912ULL);
  EXPECT_EQ(selective->total, b.total());

  const Mitigation* cpu = find(r, "cache_on_cpu");
  ASSERT_NE(cpu, nullptr);
  EXPECT_GT(cpu->host.count(), 0U);  // the cache moved to host RAM
  const Mitigation* streaming = find(r, "streaming");
  ASSERT_NE(streaming, nullptr);
  EXPECT_TRUE(streaming->fits);  // the largest chunk that fits, by fit's search
  EXPECT_EQ(streaming->settings[0].value, "streaming_extraction");
}

TEST(Recommend, TrainingCombinesChangesWhenNoneFitsAlone) {
  // Full fine-tuning of a 7B model in bf16 with AdamW needs over 100 GB before activations;
  // no single change brings it under 40 GiB, a combination does.
  RecommendRequest q = request({8, 0}, Bytes{40ULL << 30});
  q.workload.kind = WorkloadKind::training;
  q.workload.batch = 8;
  const Recommendation r = recommend(llama2_7b(), q);
  EXPECT_FALSE(r.fits);
  EXPECT_NE(find(r, "lora"), nullptr);
  EXPECT_NE(find(r, "recompute", "full"), nullptr);
  EXPECT_NE(find(r, "optimizer_8bit"), nullptr);
  bool any = false;
  for (const Mitigation& m : r.mitigations) any = any || m.fits;
  if (!any) {
    ASSERT_TRUE(r.combined.has_value());
    EXPECT_TRUE(r.combined->fits);
    EXPECT_EQ(estimate_workload(llama2_7b(), r.combined->workload).total(), r.combined->total);
  }
  // Every change, estimated on its own workload, gives its total.
  for (const Mitigation& m : r.mitigations) {
    EXPECT_EQ(estimate_workload(llama2_7b(), m.workload).total(), m.total) << m.kind;
  }
}

TEST(Recommend, GpusSortedSmallestFirstWithPrecisionPerGpu) {
  // Weights alone: 13,476,831,232 B in 16 bits. "small" 8 GiB holds 7,301,444,403 at 85%;
  // "old" 16 GiB (compute capability 7.0: auto runs fp16, same bytes) holds 14,602,888,806.
  GpuSpec small, old;
  small.name = "small";
  small.memory = Bytes{8ULL << 30};
  small.compute_capability = {8, 0};
  old.name = "old";
  old.memory = Bytes{16ULL << 30};
  old.compute_capability = {7, 0};
  Workload w = plan();
  w.kind = WorkloadKind::weights;
  const std::vector<GpuOption> g = gpu_options(llama2_7b(), w, "auto", "pytorch", {old, small}, 0.85);
  ASSERT_EQ(g.size(), 2U);
  EXPECT_EQ(g[0].gpu.name, "small");
  EXPECT_FALSE(g[0].fits);
  EXPECT_EQ(g[0].limit.count(), 7301444403ULL);
  EXPECT_EQ(g[0].precision, precisions::bf16);
  EXPECT_EQ(g[1].gpu.name, "old");
  EXPECT_TRUE(g[1].fits);
  EXPECT_EQ(g[1].precision, precisions::fp16);
  EXPECT_EQ(g[1].total->count(), 13476831232ULL);
  EXPECT_EQ(g[1].limit.count(), 14602888806ULL);
}

}  // namespace recommend_test
}  // namespace memplan
