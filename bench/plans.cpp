#include "plans.hpp"

#include <string>
#include <utility>

#include "memplan/estimators/kv_cache.hpp"
#include "memplan/estimators/weights.hpp"
#include "memplan/io/model_file.hpp"
#include "memplan/plan/workload.hpp"

namespace memplan::bench {

Bytes weights(const Plan& plan) {
  WeightsOptions options;
  options.precision = plan.precision;
  return estimate_weights(*plan.model, options).total();
}

Bytes weights_kv_cache(const Plan& plan) {
  KvCacheOptions kv;
  kv.batch = plan.batch;
  kv.tokens = plan.seq;
  // Caches are fp16/bf16/fp8/int8/int4; a model quantised below that keeps an fp16 cache.
  kv.precision = is_quantized(plan.precision) ? precisions::fp16 : plan.precision;
  return weights(plan) + estimate_kv_cache(*plan.model, kv).total();
}

namespace {

Workload workload_of(const Plan& plan, WorkloadKind kind) {
  Workload workload;
  workload.kind = kind;
  workload.batch = plan.batch;
  workload.seq_len = plan.seq;
  workload.weights.precision = plan.precision;
  return workload;
}

}  // namespace

Bytes full(const Plan& plan) {
  return estimate_workload(*plan.model, workload_of(plan, WorkloadKind::inference)).total();
}

Bytes weights_totals(const Plan& plan) {
  return estimate_workload_bytes(*plan.model, workload_of(plan, WorkloadKind::weights)).total;
}

Bytes full_totals(const Plan& plan) {
  return estimate_workload_bytes(*plan.model, workload_of(plan, WorkloadKind::inference)).total;
}

const Plan& llama_2_7b_plan() {
  static const ModelSpec model = load_builtin_model("llama-2-7b").spec;
  static const Plan plan{&model, precisions::bf16, 1, 4096};
  return plan;
}

const Grid& million_plan_grid() {
  static const Grid grid = [] {
    Grid g;
    for (const std::string& name : builtin_model_names()) {
      if (g.models.size() == 25) break;
      ModelSpec spec = load_builtin_model(name).spec;
      if (is_encoder_decoder(spec)) continue;  // their plans need a target length too
      g.models.push_back(std::move(spec));
    }
    for (const char* name : {"fp32", "fp16", "bf16", "fp8", "int8", "int4", "int4-g64-zp", "nf4", "nf4-dq", "fp4"}) {
      g.precisions.push_back(parse_precision(name));
    }
    for (std::uint64_t b = 1; b <= 40; ++b) g.batches.push_back(b);
    for (std::uint64_t p = 1; p <= 100; ++p) g.seq_percents.push_back(p);
    return g;
  }();
  return grid;
}

}  // namespace memplan::bench
