// The knobs of the training and interpretability workloads (training, sae, fisher_spectrum,
// grouped_fisher, hessian, full_fisher, lanczos, sample_gradients, tracin,
// attention_patterns, qkov, embedding_singularities, fiber_bundle, superposition, cka).
// Workload holds one AnalysisOptions; estimate_workload composes them (docs/estimators.md).
#pragma once

#include <cstdint>
#include <optional>

#include "memplan/core/precision.hpp"
#include "memplan/estimators/attention_analysis.hpp"
#include "memplan/estimators/compute_time.hpp"
#include "memplan/estimators/curvature.hpp"
#include "memplan/estimators/representation.hpp"
#include "memplan/estimators/sae.hpp"
#include "memplan/estimators/sample_gradients.hpp"
#include "memplan/estimators/training.hpp"

namespace memplan {

struct LanczosOptions {
  std::uint64_t k = 20;                // eigenvalues wanted (TensorScope: k=20)
  std::uint64_t iterations = 100;      // m Lanczos steps (TensorScope: iterations=100)
  bool reorthogonalize = true;         // keep all m+1 basis vectors (false: three vectors)
  Precision dtype = precisions::fp32;  // Lanczos vectors
};

struct AnalysisOptions {
  TrainingOptions training;           // training: optimizer, gradients, recomputation, LoRA
  bool dropout = false;               // training: dropout layers (GPT-3 style) with their masks
  double expert_capacity_factor = 0;  // training, MoE: experts padded to capacity (Megatron, DeepSpeed); 0 = dropless
  SaeOptions sae;                     // sae
  std::uint64_t sae_store_batch =
      32;  // sae: prompts per LM forward that refills the store (SAELens store_batch_size_prompts)
  std::uint64_t sae_context = 128;      // sae: tokens per prompt (SAELens context_size)
  FisherBlockOptions fisher;            // fisher_spectrum
  GroupedFisherOptions grouped_fisher;  // grouped_fisher (samples: the workload's batch)
  std::uint64_t hessian_params = 0;     // hessian, full_fisher: the matrix covers this many parameters; 0 = all
  Precision curvature_dtype = precisions::fp32;  // hessian, full_fisher matrix dtype
  LanczosOptions lanczos;                        // lanczos
  std::uint64_t micro_batch = 0;                 // sequences per backward in a gradient pass; 0 = 1 for per-sample
                                                 //   analyses (Fisher, sample gradients, TracIn), the batch for Lanczos
  SampleGradientOptions sample_gradients;        // sample_gradients (and TracIn's compression)
  TracinOptions tracin;                          // tracin
  double zlib_bytes_per_second = 50e6;           // host zlib throughput for time estimates (level 6, one core)
  AttentionAnalysisOptions attention;            // attention_patterns, qkov
  RepresentationOptions representation;          // embedding_singularities, fiber_bundle, superposition, cka
  std::optional<DeviceLimit> largest_device;     // the largest GPU of the table, for "at most N parameters fit"
  std::optional<double> efficiency;              // time estimates: replaces every part's efficiency factor
};

}  // namespace memplan
