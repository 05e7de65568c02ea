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
  std::uint64_t full_sequences = 0;  // sequences at full length held at once
  // A model with state-space layers: its KV cache groups (attention's and the Mamba layers'),
  // the blocks one full-length request holds across them, and a Mamba layer's state for one
  // request before its page is padded to the attention page. 0 / 1 / 0 for attention alone.
  std::uint64_t kv_groups = 1;
  std::uint64_t group_layers = 0;  // layers a group holds (a block is a page in each)
  std::uint64_t per_request_blocks = 0;
  Bytes state_bytes;
  // vLLM's "Maximum concurrency": blocks over a request's blocks, or tokens over max_model_len.
  double concurrency() const;
  // "GPU KV cache size" as vLLM after 0.20.0 logs it, int(concurrency x max_model_len), when
  // `concurrency_tokens` is set; else `tokens`, as 0.11-0.20.0 log it.
  bool concurrency_tokens = false;
  std::uint64_t logged_tokens() const;
  // True when the cache holds at least one sequence of max_model_len (vLLM refuses to start otherwise).
  bool holds_a_sequence() const { return full_sequences > 0; }
};

// A model's layers as vLLM's KV cache sees them (kv_cache_interface.py): its attention layers,
// each token_bytes (keys and values) a token on one rank, and its Mamba layers, each state_bytes
// (convolution and SSM state) a request.
struct VllmLayerPages {
  std::uint64_t attention_layers = 0, mamba_layers = 0;
  Bytes token_bytes, state_bytes;
  std::uint64_t state_blocks = 1;  // blocks a request holds in each Mamba group: 2 with prefix caching's align mode
};

// Returns vLLM's KV budget arithmetic; `given` (kv_cache_memory_bytes) is the budget instead of
// what gpu_memory_utilization leaves. Throws Error(invalid_input, key
// "gpu_memory_utilization") outside (0, 1], Error(invalid_input) for a zero block size or
// block bytes, Error(overflow).
ServingCapacity vllm_kv_capacity(Bytes capacity, double gpu_memory_utilization, Bytes non_kv, Bytes block_bytes,
                                 std::uint64_t block_size, std::uint64_t max_model_len,
                                 std::optional<Bytes> given = std::nullopt);

// The same with Mamba layers (vLLM 0.11-0.20): a hybrid's attention block grows to 16-token
// multiples until one layer's page holds a Mamba layer's state, whose page is padded to it; the
// layers fall into groups of min(attention, Mamba) layers (the larger count when within 1.5x),
// a block costs a page in each of a group's layers, and a request holds ceil(max_model_len /
// block_size) blocks in each attention group and state_blocks in each Mamba group. A model of Mamba
// layers alone is one group whose page is the state and whose block holds a whole request.
// "GPU KV cache size" is (blocks / groups) x block_size, as vLLM logs it up to 0.20.0. Throws
// as vllm_kv_capacity, and Error(invalid_input) for a model without Mamba layers.
ServingCapacity vllm_state_space_capacity(Bytes capacity, double gpu_memory_utilization, Bytes non_kv,
                                          const VllmLayerPages& layers, std::uint64_t block_size,
                                          std::uint64_t max_model_len, std::optional<Bytes> given = std::nullopt);

// A model of sliding-window and full-attention layers under vLLM's hybrid KV cache manager:
// each kind's bytes a token in one layer (keys and values on this rank), its layers and, for
// the sliding kind, its window.
struct VllmAttentionPages {
  std::uint64_t full_layers = 0, sliding_layers = 0;
  Bytes full_token_bytes, sliding_token_bytes;
  std::uint64_t window = 0;
  // The tokens a request can have in flight beyond its window (SlidingWindowSpec): max_num_batched_tokens,
  // twice that from vLLM 0.26 (two batches under async scheduling).
  std::uint64_t in_flight_tokens = 0;
};

// The same for VllmAttentionPages (kv_cache_utils.py, vLLM 0.20-0.29): the smaller page grows
// to the larger by a larger block size (Gemma 4's full layers: 32 tokens; padded where the
// ratio is not whole), the layers fall into groups as with Mamba, a block costs a page in each
// of a group's layers, and a request holds ceil(max_model_len / block) blocks in each full
// group and ceil(min(window - 1 + in_flight_tokens, max_model_len) / block) + 1 in each sliding
// group. "GPU KV cache size" is int(concurrency x max_model_len) when `concurrency_tokens`
// (vLLM after 0.20.0), else (blocks / groups) x the smallest block. Throws as vllm_kv_capacity.
ServingCapacity vllm_sliding_capacity(Bytes capacity, double gpu_memory_utilization, Bytes non_kv,
                                      const VllmAttentionPages& layers, std::uint64_t block_size,
                                      std::uint64_t max_model_len, bool concurrency_tokens,
                                      std::optional<Bytes> given = std::nullopt);

}  // namespace memplan
