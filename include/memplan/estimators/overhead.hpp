// Overheads: what a CUDA process holds beyond its tensors. Each term is its own row with
// its assumption stated and overridable, and a range where the assumption is uncertain.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/tensor_run.hpp"
#include "memplan/estimators/caching_allocator.hpp"

namespace memplan {

struct OverheadOptions {
  Bytes cuda_context{512ULL << 20};  // context + kernel images; measured 300-1000 MiB (docs)
  Bytes cuda_context_low{256ULL << 20};
  Bytes cuda_context_high{1024ULL << 20};
  std::string cuda_context_source;        // where a given cuda_context comes from; "" = the assumption
  std::optional<Bytes> cublas_workspace;  // unset: PyTorch's default for the device (8.125 or 32 MiB)
  std::string cublas_workspace_source;    // where a given cublas_workspace comes from; "" = "given"
  bool hopper_or_newer = false;           // compute capability >= 9.0 (PyTorch uses a 32 MiB workspace)
  double fragmentation = 0.10;            // margin on transient tensors whose allocation order is unknown
  double fragmentation_low = 0.0;
  double fragmentation_high = 0.25;
  bool fragmentation_given = false;   // the margin applies even where the order is known (--fragmentation)
  bool host = false;                  // a job on the CPU: no CUDA context, cuBLAS workspace or caching allocator
  bool eager_module_loading = false;  // CUDA_MODULE_LOADING=EAGER: every kernel image loaded at start
};

// What CUDA_MODULE_LOADING=EAGER adds to a PyTorch process's context: 640 MiB at its creation
// and 414 MiB more when cuBLAS loads (PyTorch 2.11, CUDA 13.0, H200; docs/accuracy.md), against
// lazy loading; PyTorch 1.13's build added 362 MiB (pytorch/pytorch#86509), the low end.
inline constexpr std::uint64_t kEagerModuleLoadingBytes = 1105199104;
inline constexpr std::uint64_t kEagerModuleLoadingLowBytes = 379584512;

// The tensors of a plan's peak that are freed after it.
struct TransientTensors {
  Bytes bytes;                       // alive at the peak
  std::vector<AllocatorStep> steps;  // the order the job allocates and frees them in; empty: unknown
};

// The overhead's four rows as bytes, without the breakdown's text.
struct OverheadBytes {
  Bytes context;
  Bytes cublas_workspace;
  Bytes allocator_rounding;  // reserved - allocated for the persistent tensors
  Bytes fragmentation;       // reserved - allocated for the transient tensors (replayed, or the margin)
  Bytes total() const;       // throws Error(overflow)
};

// Returns the rows estimate_overhead lists, as numbers only (for callers estimating in a
// loop). Throws as estimate_overhead.
OverheadBytes overhead_bytes(const OverheadOptions& options, const std::vector<TensorRun>& persistent,
                             const TransientTensors& transient);

// Returns a Breakdown with one component, "overhead", whose rows are cuda_context,
// cublas_workspace, allocator_rounding (reserved - allocated for `persistent`), and
// fragmentation: where `transient.steps` give the order, the segments the caching
// allocator reserves replaying them less the peak's bytes (low: the peak's own rounding;
// high: one more segment of the largest size), else options.fragmentation of the bytes.
// For a `host` job only the margin (malloc leaves gaps too). Throws Error(invalid_input)
// for a fraction outside 0..1 or steps that free what they did not allocate, Error(overflow).
Breakdown estimate_overhead(const OverheadOptions& options, const std::vector<TensorRun>& persistent,
                            const TransientTensors& transient);

}  // namespace memplan
