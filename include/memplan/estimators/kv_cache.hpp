// KV cache: the keys and values a decoder keeps for every token it has seen.
#pragma once

#include <cstdint>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/core/precision.hpp"
#include "memplan/core/tensor_run.hpp"

namespace memplan {

struct KvCacheOptions {
  std::uint64_t batch = 1;                 // sequences held at once
  std::uint64_t tokens = 2048;             // tokens per sequence: prompt + generated
  Precision precision = precisions::fp16;  // cache dtype: fp16, bf16, fp8, int8 (row scales), int4-gN
  std::uint64_t page_tokens = 0;           // paged allocation (vLLM blocks of N tokens); 0 = contiguous
  bool honor_sliding_window = true;        // cap at the model's sliding window (vLLM, HF SlidingWindowCache)
};

// Returns a Breakdown with one component, "kv_cache", detailed as "keys" and "values":
// 2 x n_layers x n_kv_heads x d_head x tokens x batch elements at `precision`, with
// tokens capped by the sliding window and rounded up to whole pages. Quantised caches
// carry one scale per (token, head) row, as a matrix of (batch*tokens*kv_heads) x d_head.
// Throws Error(invalid_input) for batch or tokens of 0, Error(overflow).
Breakdown estimate_kv_cache(const ModelSpec& spec, const KvCacheOptions& options);

// Returns the cache as allocations: one keys and one values tensor per layer (the layout
// of Hugging Face's caches and vLLM's per-layer blocks). Throws as estimate_kv_cache.
TensorRun kv_cache_allocations(const ModelSpec& spec, const KvCacheOptions& options);

}  // namespace memplan
