#include "workload_registry.hpp"

#include <array>
#include <string>

#include "memplan/core/error.hpp"

#include "analysis_workloads.hpp"
#include "forward_workloads.hpp"

namespace memplan::detail {

namespace {

using K = WorkloadKind;

// One line per workload, in the order of WorkloadKind (entry i is kind i); the
// static_assert below holds the table to that.
constexpr std::array kRegistry{
    WorkloadEntry{K::weights, "weights", compose_weights, weights_work, weights_bytes},
    WorkloadEntry{K::inference, "inference", compose_inference, one_forward_work, inference_bytes},
    WorkloadEntry{K::generation, "generation", compose_generation, generation_work, generation_bytes},
    WorkloadEntry{K::extraction, "extraction", compose_extraction, one_forward_work},
    WorkloadEntry{K::streaming_extraction, "streaming_extraction", compose_extraction, one_forward_work},
    WorkloadEntry{K::training, "training", compose_training, training_work},
    WorkloadEntry{K::sae, "sae", compose_sae, sae_work},
    WorkloadEntry{K::fisher_spectrum, "fisher_spectrum", compose_fisher_spectrum, fisher_spectrum_work},
    WorkloadEntry{K::grouped_fisher, "grouped_fisher", compose_grouped_fisher, grouped_fisher_work},
    WorkloadEntry{K::hessian, "hessian", compose_hessian, full_curvature_work},
    WorkloadEntry{K::full_fisher, "full_fisher", compose_full_fisher, full_curvature_work},
    WorkloadEntry{K::lanczos, "lanczos", compose_lanczos, lanczos_work},
    WorkloadEntry{K::sample_gradients, "sample_gradients", compose_sample_gradients, sample_gradients_work},
    WorkloadEntry{K::tracin, "tracin", compose_tracin, tracin_work},
    WorkloadEntry{K::attention_patterns, "attention_patterns", compose_attention_patterns, attention_patterns_work},
    WorkloadEntry{K::qkov, "qkov", compose_qkov, qkov_work},
    WorkloadEntry{K::embedding_singularities, "embedding_singularities", compose_embedding_singularities,
                  embedding_singularities_work},
    WorkloadEntry{K::fiber_bundle, "fiber_bundle", compose_fiber_bundle, fiber_bundle_work},
    WorkloadEntry{K::superposition, "superposition", compose_superposition, superposition_work},
    WorkloadEntry{K::cka, "cka", compose_cka, cka_work},
};

constexpr bool well_formed() {
  for (std::size_t i = 0; i < kRegistry.size(); ++i) {
    const WorkloadEntry& e = kRegistry[i];
    if (static_cast<std::size_t>(e.kind) != i || e.name.empty() || e.compose == nullptr || e.work == nullptr)
      return false;
    for (std::size_t j = 0; j < i; ++j) {
      if (kRegistry[j].name == e.name) return false;
    }
  }
  return true;
}
static_assert(well_formed(),
              "entry i of the workload registry is WorkloadKind i, named once, with compose and work functions");

}  // namespace

std::span<const WorkloadEntry> workload_registry() { return kRegistry; }

const WorkloadEntry& workload_entry(WorkloadKind kind) {
  const auto i = static_cast<std::size_t>(kind);
  if (i >= kRegistry.size()) {
    throw Error(ErrorKind::internal, "workload kind " + std::to_string(i) + " has no entry in the workload registry");
  }
  return kRegistry[i];
}

}  // namespace memplan::detail
