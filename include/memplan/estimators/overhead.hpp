// Overheads: what a CUDA process holds beyond its tensors. Each term is its own row with
// its assumption stated and overridable, and a range where the assumption is uncertain.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/tensor_run.hpp"

namespace memplan {

// PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp).
inline constexpr std::uint64_t kAllocatorMinBlock = 512;               // every request rounds up to 512 B
inline constexpr std::uint64_t kAllocatorSmallSize = 1ULL << 20;       // <= 1 MiB: small pool
inline constexpr std::uint64_t kAllocatorSmallSegment = 2ULL << 20;    // small pool segments of 2 MiB
inline constexpr std::uint64_t kAllocatorMinLargeAlloc = 10ULL << 20;  // < 10 MiB: served from 20 MiB segments
inline constexpr std::uint64_t kAllocatorLargeSegment = 20ULL << 20;
inline constexpr std::uint64_t kAllocatorRoundLarge = 2ULL << 20;  // >= 10 MiB: own segment, rounded to 2 MiB

// Returns the memory PyTorch's caching allocator reserves for tensors allocated once and
// kept (weights, a preallocated cache), packed in order: requests round up to 512 B;
// those of at most 1 MiB share 2 MiB segments, those under 10 MiB share 20 MiB segments,
// larger ones get a segment each rounded up to 2 MiB. Throws Error(overflow).
Bytes allocator_reserved(const std::vector<TensorRun>& tensors);

struct OverheadOptions {
  Bytes cuda_context{512ULL << 20};  // context + kernel images; measured 300-1000 MiB (docs)
  Bytes cuda_context_low{256ULL << 20};
  Bytes cuda_context_high{1024ULL << 20};
  std::string cuda_context_source;        // where a given cuda_context comes from; "" = the assumption
  std::optional<Bytes> cublas_workspace;  // unset: PyTorch's default for the device (8.125 or 32 MiB)
  std::string cublas_workspace_source;    // where a given cublas_workspace comes from; "" = "given"
  bool hopper_or_newer = false;           // compute capability >= 9.0 (PyTorch uses a 32 MiB workspace)
  double fragmentation = 0.10;            // margin on transient tensors (the forward pass's working set)
  double fragmentation_low = 0.0;
  double fragmentation_high = 0.25;
  bool host = false;                  // a job on the CPU: no CUDA context, cuBLAS workspace or caching allocator
  bool eager_module_loading = false;  // CUDA_MODULE_LOADING=EAGER: every kernel image loaded at start
};

// What CUDA_MODULE_LOADING=EAGER adds to a PyTorch process's context: 640 MiB at its creation
// and 414 MiB more when cuBLAS loads (PyTorch 2.11, CUDA 13.0, H200; docs/accuracy.md), against
// lazy loading; PyTorch 1.13's build added 362 MiB (pytorch/pytorch#86509), the low end.
inline constexpr std::uint64_t kEagerModuleLoadingBytes = 1105199104;
inline constexpr std::uint64_t kEagerModuleLoadingLowBytes = 379584512;

// The overhead's four rows as bytes, without the breakdown's text.
struct OverheadBytes {
  Bytes context;
  Bytes cublas_workspace;
  Bytes allocator_rounding;  // reserved - allocated for the persistent tensors
  Bytes fragmentation;       // options.fragmentation of the transient tensors
  Bytes total() const;       // throws Error(overflow)
};

// Returns the rows estimate_overhead lists, as numbers only (for callers estimating in a
// loop). Throws as estimate_overhead.
OverheadBytes overhead_bytes(const OverheadOptions& options, const std::vector<TensorRun>& persistent, Bytes transient);

// Returns a Breakdown with one component, "overhead", whose rows are cuda_context,
// cublas_workspace, allocator_rounding (reserved - allocated for `persistent`), and
// fragmentation (a fraction of `transient`); for a `host` job only fragmentation (malloc
// leaves gaps too). Throws Error(invalid_input) for a fraction
// outside 0..1 and Error(overflow).
Breakdown estimate_overhead(const OverheadOptions& options, const std::vector<TensorRun>& persistent, Bytes transient);

}  // namespace memplan
