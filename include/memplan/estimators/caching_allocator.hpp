// PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp), as far as memory
// plans need it: how many bytes of segments it reserves for a sequence of tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "memplan/core/bytes.hpp"
#include "memplan/core/tensor_run.hpp"

namespace memplan {

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

// One step of a job's allocations: a tensor allocated, or the tensor an earlier step
// allocated freed.
struct AllocatorStep {
  bool free = false;        // false: allocate `bytes`; true: free the tensor step `tensor` allocated
  std::uint64_t bytes = 0;  // the tensor's bytes (allocate)
  std::size_t tensor = 0;   // the index of the allocating step (free)
};

// What the allocator held over a replay.
struct AllocatorReplay {
  Bytes peak_allocated;  // the most tensor bytes alive at once
  Bytes peak_blocks;     // the blocks behind them then (512 B rounding, unsplit tails)
  Bytes reserved;        // the segments obtained from cudaMalloc (never released: no OOM)
  Bytes largest_segment;
};

// Appends `more` to `steps`, its frees renumbered to point at the same allocations.
void append_steps(std::vector<AllocatorStep>& steps, const std::vector<AllocatorStep>& more);

// Replays `steps` through the caching allocator's rules, starting empty: a request rounds
// up to 512 B and takes the smallest cached free block of its pool that holds it (the small
// pool for up to 1 MiB), split when the rest is at least 512 B (small pool) or more than
// 1 MiB (large pool); with none, a new segment (2 MiB small; 20 MiB under 10 MiB; else the
// request rounded up to 2 MiB). A freed block merges with free neighbours in its segment.
// Zero-byte tensors take nothing. Throws Error(invalid_input) for a free of a step that is
// not a live allocation, Error(overflow).
AllocatorReplay replay_caching_allocator(const std::vector<AllocatorStep>& steps);

}  // namespace memplan
