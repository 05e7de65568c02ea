// The workload registry (src/plan/workload_registry.cpp) through the public functions that
// come from it: names, parsing, composition, work, and the peak phase it records.
#include <gtest/gtest.h>

#include <set>

#include "reference_models.hpp"

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"
#include "memplan/plan/workload.hpp"

namespace memplan {
namespace workload_registry_test {

using testing::llama2_7b;
using testing::tiny;

// Whether `kind` is one of WorkloadKind's enumerators. The switch has no default, so the
// compiler (-Wswitch) names an enumerator added to workload.hpp and not listed here.
bool is_enumerator(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::weights:
    case WorkloadKind::inference:
    case WorkloadKind::generation:
    case WorkloadKind::extraction:
    case WorkloadKind::streaming_extraction:
    case WorkloadKind::training:
    case WorkloadKind::sae:
    case WorkloadKind::fisher_spectrum:
    case WorkloadKind::grouped_fisher:
    case WorkloadKind::hessian:
    case WorkloadKind::full_fisher:
    case WorkloadKind::lanczos:
    case WorkloadKind::sample_gradients:
    case WorkloadKind::tracin:
    case WorkloadKind::attention_patterns:
    case WorkloadKind::qkov:
    case WorkloadKind::embedding_singularities:
    case WorkloadKind::fiber_bundle:
    case WorkloadKind::superposition:
    case WorkloadKind::cka: return true;
  }
  return false;
}

std::vector<WorkloadKind> every_kind() {
  std::vector<WorkloadKind> kinds;
  for (int i = 0; i < 64; ++i) {  // an enum class's underlying type is int: every value is valid
    if (is_enumerator(static_cast<WorkloadKind>(i))) kinds.push_back(static_cast<WorkloadKind>(i));
  }
  return kinds;
}

Workload of(WorkloadKind kind, std::uint64_t batch, std::uint64_t seq) {
  Workload w;
  w.kind = kind;
  w.batch = batch;
  w.seq_len = seq;
  if (kind == WorkloadKind::generation) w.new_tokens = 8;
  w.analysis.largest_device = DeviceLimit{"h200-sxm-141gb", Bytes(150754820096ULL)};
  return w;
}

TEST(WorkloadRegistry, EveryKindHasExactlyOneEntry) {
  const std::vector<WorkloadKind> kinds = every_kind();
  const std::vector<std::string> names = workload_names();
  ASSERT_EQ(names.size(), kinds.size());  // one entry per enumerator, no more
  std::set<std::string> seen;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    const std::string name = to_string(kinds[i]);
    SCOPED_TRACE(name);
    EXPECT_EQ(names[i], name);  // listed in the enum's order
    EXPECT_TRUE(seen.insert(name).second);
    EXPECT_EQ(parse_workload_kind(name), kinds[i]);
    // Each entry composes and counts its work without reaching for another workload.
    testing::expect_consistent(estimate_workload(tiny(), of(kinds[i], 2, 64)));
    EXPECT_NO_THROW(workload_work(tiny(), of(kinds[i], 2, 64)));
  }
  try {
    (void)to_string(static_cast<WorkloadKind>(kinds.size()));
    ADD_FAILURE() << "a kind past the registry had a name";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::internal);
  }
}

TEST(WorkloadRegistry, PeakPhaseNamesTheMomentOfThePeak) {
  // Llama-2-7b at 2048 tokens peaks in the MLP with SDPA and in attention with eager
  // (workload_test.cpp has the bytes); generation peaks after prefill with 256 new tokens
  // and at the last decode step with 1024; training at the optimizer step.
  Workload w = of(WorkloadKind::inference, 1, 2048);
  w.weights.precision = precisions::bf16;
  EXPECT_EQ(estimate_workload(llama2_7b(), w).peak_phase, "mlp");
  w.attention = AttentionVariant::eager;
  EXPECT_EQ(estimate_workload(llama2_7b(), w).peak_phase, "attention");
  w.attention = AttentionVariant::sdpa;
  w.kind = WorkloadKind::generation;
  w.new_tokens = 256;
  EXPECT_EQ(estimate_workload(llama2_7b(), w).peak_phase, "prefill");
  w.new_tokens = 1024;
  EXPECT_EQ(estimate_workload(llama2_7b(), w).peak_phase, "decode");
  EXPECT_EQ(estimate_workload(llama2_7b(), of(WorkloadKind::training, 1, 512)).peak_phase, "optimizer_step");
  EXPECT_EQ(estimate_workload(llama2_7b(), of(WorkloadKind::weights, 1, 512)).peak_phase, "");
}

TEST(WorkloadRegistry, AnalysesHoldTheForwardPassOfInference) {
  // The analyses that read activations compose the forward pass itself: the same KV cache
  // and working set (rows, bytes, formulas) as the inference workload with their attention.
  for (const WorkloadKind kind : {WorkloadKind::attention_patterns, WorkloadKind::qkov, WorkloadKind::fiber_bundle,
                                  WorkloadKind::superposition, WorkloadKind::cka}) {
    SCOPED_TRACE(to_string(kind));
    const Workload analysis = of(kind, 2, 64);
    Workload inference = analysis;
    inference.kind = WorkloadKind::inference;
    if (kind == WorkloadKind::attention_patterns || kind == WorkloadKind::qkov)
      inference.attention = AttentionVariant::eager;
    const Breakdown a = estimate_workload(tiny(), analysis);
    const Breakdown f = estimate_workload(tiny(), inference);
    for (const char* row : {"kv_cache", "forward_workspace"}) {
      ASSERT_NE(a.find(row), nullptr) << row;
      EXPECT_EQ(a.find(row)->bytes, f.find(row)->bytes) << row;
      EXPECT_EQ(a.find(row)->formula, f.find(row)->formula) << row;
      EXPECT_EQ(a.find(row)->detail.size(), f.find(row)->detail.size()) << row;
    }
    EXPECT_EQ(a.peak_phase, f.peak_phase);
  }
}

}  // namespace workload_registry_test
}  // namespace memplan
