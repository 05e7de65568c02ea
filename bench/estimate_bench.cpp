// One estimate of llama-2-7b (bf16, batch 1, 4096 tokens) through the library, and the
// parsing a program does once before it estimates in a loop.
#include <benchmark/benchmark.h>

#include "memplan/core/parameters.hpp"
#include "memplan/io/gpu_table.hpp"
#include "memplan/io/model_file.hpp"
#include "plans.hpp"

namespace memplan::bench {
namespace {

void run_7b(benchmark::State& state, Estimate estimate) {
  const Plan& plan = llama_2_7b_plan();
  for (auto _ : state) {
    Bytes total = estimate(plan);
    benchmark::DoNotOptimize(total);
  }
  state.counters["bytes"] = static_cast<double>(estimate(plan).count());
}

void BM_weights_estimate_7b(benchmark::State& state) { run_7b(state, weights); }
void BM_weights_kv_cache_estimate_7b(benchmark::State& state) { run_7b(state, weights_kv_cache); }
void BM_full_estimate_7b(benchmark::State& state) { run_7b(state, full); }
void BM_weights_totals_7b(benchmark::State& state) { run_7b(state, weights_totals); }
void BM_full_totals_7b(benchmark::State& state) { run_7b(state, full_totals); }

BENCHMARK(BM_weights_estimate_7b);
BENCHMARK(BM_weights_kv_cache_estimate_7b);
BENCHMARK(BM_full_estimate_7b);
BENCHMARK(BM_weights_totals_7b);
BENCHMARK(BM_full_totals_7b);

// Where the weights estimate's time goes (docs/performance.md): enumerating the tensors
// (strings for every group), and the checked arithmetic alone over tensors enumerated once.
void BM_model_tensors_7b(benchmark::State& state) {
  const Plan& plan = llama_2_7b_plan();
  for (auto _ : state) {
    auto tensors = model_tensors(*plan.model);
    benchmark::DoNotOptimize(tensors);
  }
}
void BM_weights_arithmetic_only_7b(benchmark::State& state) {
  const Plan& plan = llama_2_7b_plan();
  const std::vector<TensorGroup> tensors = model_tensors(*plan.model);
  for (auto _ : state) {
    Bytes total;
    for (const TensorGroup& g : tensors) {
      total = total.plus(Bytes(ceil_div(matrix_bits(plan.precision, g.rows, g.cols), 8)).times(g.copies, "bytes"),
                         "total");
    }
    benchmark::DoNotOptimize(total);
  }
}
BENCHMARK(BM_model_tensors_7b);
BENCHMARK(BM_weights_arithmetic_only_7b);

// What a program (and the CLI, on every run) pays before its first estimate.
void BM_load_builtin_model_7b(benchmark::State& state) {
  for (auto _ : state) {
    ModelEntry entry = load_builtin_model("llama-2-7b");
    benchmark::DoNotOptimize(entry);
  }
}
void BM_builtin_gpus(benchmark::State& state) {
  for (auto _ : state) {
    auto gpus = builtin_gpus();
    benchmark::DoNotOptimize(gpus);
  }
}
BENCHMARK(BM_load_builtin_model_7b)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_builtin_gpus)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace memplan::bench
