// Per-sample gradients (sample-level conflict detection, influence functions): the store
// of one gradient per sample, its int8 quantisation and zlib compression at a stated,
// overridable ratio, importance gating (values plus indices), per-layer selection, and
// TracIn (checkpoints x training samples x stored gradient, optionally projected).
#pragma once

#include <cstdint>
#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/core/precision.hpp"

namespace memplan {

struct SampleGradientOptions {
  std::uint64_t samples = 0;           // gradients stored; 0 = the workload's batch
  Precision dtype = precisions::fp32;  // an uncompressed entry (TensorScope counts 4 bytes)
  bool int8 = false;                   // int8 quantisation: 1 B per entry plus one fp32 scale per tensor
  double zlib_ratio = 0;              // 0 = no zlib; else bytes / ratio (TensorScope assumes 8 on top of int8's 4: 32x)
  double kept_fraction = 1.0;         // importance gating: keep this fraction of the entries as values + indices
  std::uint32_t index_bits = 64;      // index dtype of the kept entries (torch.topk / nonzero: int64)
  std::vector<std::uint64_t> layers;  // only these blocks' parameters; empty = every parameter
  bool on_host = false;               // the store lives in host RAM (compressed blobs usually do)
  bool vectorized = false;            // torch.func.vmap: the batch's raw gradients exist at once before compression
};

// Returns the parameters whose gradients are kept: those of `layers` (every parameter when
// empty). Throws Error(invalid_input, key "layers") for a block the model lacks.
std::uint64_t selected_parameters(const ModelSpec& spec, const std::vector<std::uint64_t>& layers);

// Returns the number of parameter tensors whose gradients are kept (for per-tensor scales).
std::uint64_t selected_tensors(const ModelSpec& spec, const std::vector<std::uint64_t>& layers);

// Returns one stored gradient of `entries` values (over `tensors` tensors) under `options`,
// as an Item "stored_gradient" whose detail lists values, indices, scales and the zlib
// saving; with zlib, `high` is the size zlib might leave it at (ratio 1). Throws
// Error(invalid_input) for a fraction outside (0, 1] or a ratio below 1, Error(overflow).
Item stored_gradient(std::uint64_t entries, std::uint64_t tensors, const SampleGradientOptions& options);

// Returns a Breakdown with one component "sample_gradients" (samples x stored gradient),
// moved to `host` when on_host. `batch` is used when options.samples is 0. Throws as
// stored_gradient and selected_parameters.
Breakdown estimate_sample_gradients(const ModelSpec& spec, const SampleGradientOptions& options, std::uint64_t batch);

struct TracinOptions {
  std::uint64_t checkpoints = 10;   // C: checkpoints the influence sums over
  std::uint64_t train_samples = 0;  // N: training samples scored; 0 = the workload's batch
  std::uint64_t test_samples = 1;   // M: test samples whose influence is asked
  std::uint64_t projection = 0;     // k: random projection of each gradient to k dimensions; 0 = none
  bool store_all = true;            // keep every checkpoint's gradients (C x N); false: one checkpoint at a time
};

// Returns a Breakdown with one component "tracin": the gradient store (C or 1) x N x
// stored gradient, the test gradients (M per checkpoint), the N x M influence scores in
// fp32, and with a projection one k-row block of the projection matrix at a time
// (regenerated from a seed). Compression and gating follow `gradients`. Throws as
// stored_gradient, Error(invalid_input) for zero counts.
Breakdown estimate_tracin(const ModelSpec& spec, const TracinOptions& options, const SampleGradientOptions& gradients,
                          std::uint64_t batch);

}  // namespace memplan
