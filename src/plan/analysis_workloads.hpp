// The training and analysis workloads for the registry (private to the plan layer).
#pragma once

#include <cstdint>
#include <vector>

#include "memplan/core/model_spec.hpp"
#include "memplan/estimators/compute_time.hpp"
#include "memplan/plan/workload.hpp"

#include "workload_composer.hpp"

namespace memplan::detail {

// Returns the shapes and dtypes one forward pass of `workload` runs on, at `batch`
// sequences per micro-batch (fused attention for sdpa, fp32 softmax for eager). Throws
// Error(invalid_input, key "attention") for a variant training does not model.
TrainingShape shape_for(const Workload& workload, std::uint64_t batch);

// Each workload's compose function (the memory at its peak, WorkloadComposer) and work
// function (its FLOPs), as workload_registry.cpp lists them. Both throw
// Error(invalid_input) naming the key, Error(overflow).
void compose_training(const ModelSpec& spec, const Workload& workload, WorkloadComposer& composer);
std::vector<Work> training_work(const ModelSpec& spec, const Workload& workload);

void compose_sae(const ModelSpec& spec, const Workload& workload, WorkloadComposer& composer);
std::vector<Work> sae_work(const ModelSpec& spec, const Workload& workload);

void compose_fisher_spectrum(const ModelSpec& spec, const Workload& workload, WorkloadComposer& composer);
std::vector<Work> fisher_spectrum_work(const ModelSpec& spec, const Workload& workload);

void compose_grouped_fisher(const ModelSpec& spec, const Workload& workload, WorkloadComposer& composer);
std::vector<Work> grouped_fisher_work(const ModelSpec& spec, const Workload& workload);

// hessian and full_fisher: the dense n x n matrix.
void compose_hessian(const ModelSpec& spec, const Workload& workload, WorkloadComposer& composer);
void compose_full_fisher(const ModelSpec& spec, const Workload& workload, WorkloadComposer& composer);
std::vector<Work> full_curvature_work(const ModelSpec& spec, const Workload& workload);

void compose_lanczos(const ModelSpec& spec, const Workload& workload, WorkloadComposer& composer);
std::vector<Work> lanczos_work(const ModelSpec& spec, const Workload& workload);

void compose_sample_gradients(const ModelSpec& spec, const Workload& workload, WorkloadComposer& composer);
std::vector<Work> sample_gradients_work(const ModelSpec& spec, const Workload& workload);

void compose_tracin(const ModelSpec& spec, const Workload& workload, WorkloadComposer& composer);
std::vector<Work> tracin_work(const ModelSpec& spec, const Workload& workload);

void compose_attention_patterns(const ModelSpec& spec, const Workload& workload, WorkloadComposer& composer);
std::vector<Work> attention_patterns_work(const ModelSpec& spec, const Workload& workload);

void compose_qkov(const ModelSpec& spec, const Workload& workload, WorkloadComposer& composer);
std::vector<Work> qkov_work(const ModelSpec& spec, const Workload& workload);

void compose_embedding_singularities(const ModelSpec& spec, const Workload& workload, WorkloadComposer& composer);
std::vector<Work> embedding_singularities_work(const ModelSpec& spec, const Workload& workload);

void compose_fiber_bundle(const ModelSpec& spec, const Workload& workload, WorkloadComposer& composer);
std::vector<Work> fiber_bundle_work(const ModelSpec& spec, const Workload& workload);

void compose_superposition(const ModelSpec& spec, const Workload& workload, WorkloadComposer& composer);
std::vector<Work> superposition_work(const ModelSpec& spec, const Workload& workload);

void compose_cka(const ModelSpec& spec, const Workload& workload, WorkloadComposer& composer);
std::vector<Work> cka_work(const ModelSpec& spec, const Workload& workload);

}  // namespace memplan::detail
