// Curvature: the per-block Fisher spectrum, the grouped (coarse) Fisher, and the full
// n x n Fisher or Hessian with the point where it stops fitting any GPU. (Lanczos and the
// Hessian-vector product are lanczos.hpp and training.hpp's double backward; the
// workload composes them.)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/bytes.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/core/precision.hpp"

namespace memplan {

// The largest device memplan knows of, for "at most N parameters fit" answers.
struct DeviceLimit {
  std::string name;  // "h200-sxm-141gb"
  Bytes memory;      // as the driver reports it
};

struct FisherBlockOptions {
  std::uint64_t blocks = 0;            // diagonal blocks; 0 = n_layers (TensorScope: "32 layers -> 32 blocks")
  std::uint64_t block_size = 0;        // b parameters per block; 0 = d_model (TensorScope: "~4096 x 4096")
  Precision dtype = precisions::fp32;  // blocks, gradient slices and eigenvalues
  bool keep_blocks = true;             // all blocks accumulated at once (blocks x b^2); false: one block at a time
};

// Returns a Breakdown with one component, "fisher_blocks": the accumulated blocks (all,
// or one), one sample's gradient restricted to them, and one block's eigendecomposition
// (estimate_block_eig: the solver's b x b copy, 3b - 2 vectors, blocks x b eigenvalues).
// Throws Error(invalid_input), Error(overflow).
Breakdown estimate_fisher_blocks(const FisherBlockOptions& options);

enum class FisherGrouping {
  tensor,   // one group per parameter tensor (per layer)
  channel,  // one group per output row of each matrix (a token for embeddings), one per vector
};
std::string to_string(FisherGrouping grouping);
// Throws Error(invalid_input, key "fisher_grouping").
FisherGrouping parse_fisher_grouping(std::string_view text);

struct GroupedFisherOptions {
  FisherGrouping grouping = FisherGrouping::channel;
  std::uint64_t samples = 32;  // per-sample contributions (the workload's batch)
  bool per_sample = false;     // keep groups x samples values (for variances); false: running sums
  Precision dtype = precisions::fp32;
};

// Returns the number of groups of `spec` under `grouping`. Throws Error(overflow).
std::uint64_t fisher_groups(const ModelSpec& spec, FisherGrouping grouping);

// Returns a Breakdown with one component, "grouped_fisher": groups (x samples) values.
// The gradient pass that feeds it is the caller's. Throws Error(invalid_input), Error(overflow).
Breakdown estimate_grouped_fisher(const ModelSpec& spec, const GroupedFisherOptions& options);

// The size of a dense n x n curvature matrix, computed wide so that it can be stated
// even where it exceeds 64 bits.
struct FullCurvatureSize {
  std::uint64_t params = 0;      // n
  long double bytes = 0;         // n^2 x element bytes
  std::optional<Bytes> exact;    // the same, when it fits in 64 bits
  std::uint64_t max_params = 0;  // the largest n whose matrix fits on `largest` (0 without one)
  std::string message;           // "the Hessian of llama-2-7b would need 181.6 EB ...; the largest GPU ..."
};

// Returns the size of `what` ("Hessian" or "Fisher") for n = `params` at `dtype`, and the
// sentence users asked for: "the Hessian of MODEL would need X TB; the largest GPU in the
// table (NAME) has Y GB; at most Z parameters fit". Throws Error(invalid_input) when
// params is 0.
FullCurvatureSize full_curvature_size(std::uint64_t params, const Precision& dtype, const std::string& what,
                                      const std::string& model, const std::optional<DeviceLimit>& largest);

// Returns a Breakdown with one component named `name` ("hessian" or "fisher"): the n x n
// matrix and the eigensolver's copy of it (2 n^2 elements) plus its O(n) vectors, with
// the message of full_curvature_size as the note. Throws Error(overflow) whose message
// is that sentence when n^2 bytes exceed 64 bits.
Breakdown estimate_full_curvature(std::uint64_t params, const Precision& dtype, const std::string& name,
                                  const std::string& model, const std::optional<DeviceLimit>& largest);

// Returns "12.3 TB", "181.6 EB": decimal units for sizes beyond 64 bits.
std::string wide_size_text(long double bytes);

}  // namespace memplan
