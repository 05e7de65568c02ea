// Tensor-parallel serving: vLLM's KV-cache budget on one rank, from what the GPU has, the
// share gpu_memory_utilization allows, and what the weights and the profiled activation peak
// already take (vllm/v1/worker/gpu_worker.py determine_available_memory).
// docs/estimators.md#tensor-parallel-serving-vllm gives the formulas; plan/layout.hpp
// composes them with a model's weights and KV blocks.
#pragma once

#include <cstdint>
#include <optional>

#include "memplan/core/bytes.hpp"

namespace memplan {

// vLLM's KV-cache budget on one rank.
struct ServingCapacity {
  Bytes capacity;  // the GPU's memory as the driver reports it
  double gpu_memory_utilization = 0.9;
  Bytes requested;        // floor(gpu_memory_utilization x capacity)
  Bytes non_kv;           // weights + activation peak + non-torch allocations
  Bytes kv_budget;        // requested - non_kv (0 when non_kv is larger), or kv_cache_memory_bytes as given
  bool kv_given = false;  // kv_budget is vLLM's kv_cache_memory_bytes, not what the profile left
  Bytes shortfall;        // non_kv - requested when it is larger, else 0
  Bytes block_bytes;      // one block: block_size tokens of every layer's keys and values on one rank
  std::uint64_t block_size = 16;
  std::uint64_t blocks = 0;  // floor(kv_budget / block_bytes)
  std::uint64_t tokens = 0;  // blocks x block_size
  std::uint64_t max_model_len = 0;
  std::uint64_t full_sequences = 0;  // floor(tokens / max_model_len): sequences at full length held at once
  // True when the cache holds at least one sequence of max_model_len (vLLM refuses to start otherwise).
  bool holds_a_sequence() const { return max_model_len > 0 && tokens >= max_model_len; }
};

// Returns vLLM's KV budget arithmetic; `given` (kv_cache_memory_bytes) is the budget instead of
// what gpu_memory_utilization leaves. Throws Error(invalid_input, key
// "gpu_memory_utilization") outside (0, 1], Error(invalid_input) for a zero block size or
// block bytes, Error(overflow).
ServingCapacity vllm_kv_capacity(Bytes capacity, double gpu_memory_utilization, Bytes non_kv, Bytes block_bytes,
                                 std::uint64_t block_size, std::uint64_t max_model_len,
                                 std::optional<Bytes> given = std::nullopt);

}  // namespace memplan
