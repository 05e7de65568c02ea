// The training and analysis workloads composed by estimate_workload (plan/analysis.hpp).
#include <gtest/gtest.h>

#include "reference_models.hpp"

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"
#include "memplan/plan/workload.hpp"

namespace memplan {
namespace analysis_workload_test {

using testing::llama2_7b;

using testing::tiny;

GpuSpec a100() {
  GpuSpec g;
  g.name = "a100-sxm4-80gb";
  g.memory = Bytes(85899345920ULL);
  g.bandwidth_gbs = 2039;
  g.dense_tflops = {{Format::fp32, 19.5}, {Format::tf32, 156}, {Format::fp16, 312}, {Format::bf16, 312}};
  return g;
}

Workload of(WorkloadKind kind, std::uint64_t batch, std::uint64_t seq) {
  Workload w;
  w.kind = kind;
  w.batch = batch;
  w.seq_len = seq;
  w.analysis.largest_device = DeviceLimit{"h200-sxm-141gb", Bytes(150754820096ULL)};
  return w;
}

const std::vector<WorkloadKind> kAnalyses = {WorkloadKind::training,
                                             WorkloadKind::sae,
                                             WorkloadKind::fisher_spectrum,
                                             WorkloadKind::grouped_fisher,
                                             WorkloadKind::lanczos,
                                             WorkloadKind::sample_gradients,
                                             WorkloadKind::tracin,
                                             WorkloadKind::attention_patterns,
                                             WorkloadKind::qkov,
                                             WorkloadKind::embedding_singularities,
                                             WorkloadKind::fiber_bundle,
                                             WorkloadKind::superposition,
                                             WorkloadKind::cka,
                                             WorkloadKind::hessian,
                                             WorkloadKind::full_fisher};

TEST(AnalysisWorkload, EveryKindComposesConsistentlyWithATime) {
  for (const WorkloadKind kind : kAnalyses) {
    SCOPED_TRACE(to_string(kind));
    EXPECT_EQ(parse_workload_kind(to_string(kind)), kind);
    const Workload w = of(kind, 2, 64);
    const Breakdown b = estimate_workload(tiny(), w);
    testing::expect_consistent(b);
    EXPECT_NE(b.find("weights"), nullptr);
    EXPECT_NE(b.find("overhead"), nullptr);
    const auto time = estimate_workload_time(tiny(), w, a100());
    ASSERT_TRUE(time.has_value());
    EXPECT_GT(time->seconds, 0);
    EXPECT_FALSE(time->assumption.empty());
  }
  EXPECT_FALSE(estimate_workload_time(tiny(), of(WorkloadKind::weights, 1, 64), a100()).has_value());
  GpuSpec probed = a100();  // a probed device has no datasheet throughput
  probed.dense_tflops.clear();
  EXPECT_FALSE(estimate_workload_time(tiny(), of(WorkloadKind::training, 1, 64), probed).has_value());
}

TEST(AnalysisWorkload, TrainingPeaksInTheOptimizerStepAndListsTheOtherPhases) {
  Workload w = of(WorkloadKind::training, 1, 512);
  w.include_overhead = false;
  const Breakdown b = estimate_workload(llama2_7b(), w);
  // 20 bytes per parameter at the step: bf16 weights and gradients, fp32 master, Adam, and
  // the 16-bit gradients upcast for the fp32 update.
  EXPECT_EQ(b.total().count(), 20 * 6738415616ULL);
  bool forward = false;
  for (const Alternative& a : b.alternatives) forward = forward || a.item.name == "phase_forward";
  EXPECT_TRUE(forward);
}

TEST(AnalysisWorkload, TheSeedsSaeFormulaAsAWorkload) {
  // The interpretability compute guide on Llama's 4,096-wide stream, 8x, batch 1 x 4,096 tokens: 5,637,734,400 B
  // (tests/unit/estimators/sae_test.cpp); no model weights, no overhead.
  Workload w = of(WorkloadKind::sae, 1, 4096);
  w.analysis.sae.seed_formula = true;
  const Breakdown b = estimate_workload(llama2_7b(), w);
  EXPECT_EQ(b.total().count(), 5637734400ULL);
  EXPECT_EQ(b.find("weights"), nullptr);
}

TEST(AnalysisWorkload, TheHessianOfA7bModelSaysWhatFits) {
  try {
    estimate_workload(llama2_7b(), of(WorkloadKind::hessian, 1, 512));
    FAIL() << "expected the Hessian to be refused";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the Hessian of llama-2-7b (6,738,415,616 parameters) would need 181.6 EB"), std::string::npos)
        << what;
    EXPECT_NE(what.find("at most 194,135 parameters fit"), std::string::npos) << what;
  }
  // Restricted to 100,000 parameters: 100,000^2 x 4 x 2 (matrix and solver copy) + vectors.
  Workload w = of(WorkloadKind::hessian, 1, 512);
  w.analysis.hessian_params = 100000;
  const Breakdown b = estimate_workload(llama2_7b(), w);
  EXPECT_EQ(b.find("hessian")->bytes.count(), 2 * 40000000000ULL + (3 * 100000ULL - 2) * 4);
}

TEST(AnalysisWorkload, AttentionPatternsOfferTheReducedForm) {
  const Breakdown b = estimate_workload(llama2_7b(), of(WorkloadKind::attention_patterns, 1, 2048));
  EXPECT_EQ(b.find("attention_patterns")->bytes.count(), 17179869184ULL);
  bool reduced = false;
  for (const Alternative& a : b.alternatives) reduced = reduced || a.item.name == "attention_patterns_reduced";
  EXPECT_TRUE(reduced);
}

TEST(AnalysisWorkload, BiggerBatchesNeverCostLess) {
  for (const WorkloadKind kind : kAnalyses) {
    SCOPED_TRACE(to_string(kind));
    std::uint64_t previous = 0;
    for (std::uint64_t b = 1; b <= 8; b *= 2) {
      const std::uint64_t now = estimate_workload(tiny(), of(kind, b, 64)).total().count();
      EXPECT_GE(now, previous);
      previous = now;
    }
  }
}

}  // namespace analysis_workload_test
}  // namespace memplan
