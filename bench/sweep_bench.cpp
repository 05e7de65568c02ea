// A million plans (25 models x 10 precisions x 40 batch sizes x 100 sequence lengths,
// 1% to 100% of each model's context)
// estimated one after another on one thread, the way a planner sweeps a grid. One
// benchmark iteration is the whole sweep; the models are loaded once, before timing.
#include <benchmark/benchmark.h>

#include <algorithm>

#include "plans.hpp"

namespace memplan::bench {
namespace {

void sweep(benchmark::State& state, Estimate estimate) {
  const Grid& grid = million_plan_grid();
  for (auto _ : state) {
    std::uint64_t largest = 0;
    for (const ModelSpec& model : grid.models) {
      for (const Precision& precision : grid.precisions) {
        for (const std::uint64_t batch : grid.batches) {
          for (const std::uint64_t percent : grid.seq_percents) {
            const std::uint64_t seq = std::max<std::uint64_t>(1, model.max_seq_len * percent / 100);
            const Bytes total = estimate(Plan{&model, precision, batch, seq});
            if (total.count() > largest) largest = total.count();
          }
        }
      }
    }
    benchmark::DoNotOptimize(largest);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * grid.size()));
  state.counters["plans"] = static_cast<double>(grid.size());
}

void BM_sweep_million_plans(benchmark::State& state) { sweep(state, weights); }
void BM_sweep_million_plans_kv_cache(benchmark::State& state) { sweep(state, weights_kv_cache); }
void BM_sweep_million_plans_full(benchmark::State& state) { sweep(state, full); }
void BM_sweep_million_plans_weights_totals(benchmark::State& state) { sweep(state, weights_totals); }
void BM_sweep_million_plans_full_totals(benchmark::State& state) { sweep(state, full_totals); }

BENCHMARK(BM_sweep_million_plans)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3);
BENCHMARK(BM_sweep_million_plans_kv_cache)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3);
BENCHMARK(BM_sweep_million_plans_full)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3);
BENCHMARK(BM_sweep_million_plans_weights_totals)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3);
BENCHMARK(BM_sweep_million_plans_full_totals)->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3);

}  // namespace
}  // namespace memplan::bench
