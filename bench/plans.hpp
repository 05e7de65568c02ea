// What the benchmarks estimate: plans (a model, a precision, a batch, a sequence length)
// and the estimate functions that turn a plan into bytes through the library.
//
// To benchmark another estimate, write one function `Bytes <name>(const Plan&)` in
// plans.cpp and register it with one line in estimate_bench.cpp (one 7B estimate) and
// one in sweep_bench.cpp (the million-plan sweep), as `full` is.
#pragma once

#include <cstdint>
#include <vector>

#include "memplan/core/bytes.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/core/precision.hpp"

namespace memplan::bench {

struct Plan {
  const ModelSpec* model = nullptr;
  Precision precision = precisions::bf16;  // weights and caches
  std::uint64_t batch = 1;                 // sequences at once
  std::uint64_t seq = 2048;                // tokens per sequence
};

// An estimate: the total device bytes of a plan, as a program linking memplan computes it.
using Estimate = Bytes (*)(const Plan&);

// The weights alone (estimate_weights).
Bytes weights(const Plan& plan);
// Serving: weights plus the KV cache of `batch` sequences of `seq` tokens.
Bytes weights_kv_cache(const Plan& plan);
// The full estimate: an inference workload (estimate_workload): weights, KV cache, the
// forward pass's working set (activations) and overhead.
Bytes full(const Plan& plan);
// The same two through the totals-only path (estimate_workload_bytes): no breakdown built.
Bytes weights_totals(const Plan& plan);
Bytes full_totals(const Plan& plan);

// llama-2-7b in bf16, batch 1, 4096 tokens. The model is loaded once, outside any timing.
const Plan& llama_2_7b_plan();

// The sweep grid, loaded once: 25 built-in models x 10 precisions x 40 batch sizes x
// 100 sequence lengths = 1,000,000 plans. The lengths are 1%, 2%, ... 100% of each
// model's max_seq_len, so every plan is one the model can run.
struct Grid {
  std::vector<ModelSpec> models;
  std::vector<Precision> precisions;
  std::vector<std::uint64_t> batches;
  std::vector<std::uint64_t> seq_percents;
  std::uint64_t size() const { return models.size() * precisions.size() * batches.size() * seq_percents.size(); }
};
const Grid& million_plan_grid();

}  // namespace memplan::bench
