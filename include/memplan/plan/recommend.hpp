// Recommendations: when a plan does not fit, the changes that reduce its memory, each
// computed by estimating the changed plan (no guessed percentages), ranked by the memory
// it saves; and the GPUs of a table the plan fits as given. `memplan recommend` prints them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memplan/core/bytes.hpp"
#include "memplan/core/gpu_spec.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/core/precision.hpp"
#include "memplan/plan/options.hpp"
#include "memplan/plan/workload.hpp"
#include "memplan/resolve/resolver.hpp"

namespace memplan {

struct RecommendRequest {
  Workload workload;               // the plan as given, weights.precision already resolved for the device
  DeviceCapability device;         // what a changed precision must run on (fp8 needs compute capability 8.9+)
  std::string policy = "pytorch";  // whose precision rules decide that (resolve/resolver.hpp)
  Bytes limit;                     // the memory the plan may use: budget_limit(device memory, threshold)
  std::uint64_t lora_rank = 16;    // the adapter rank the LoRA and QLoRA changes propose
};

// One change to the plan, estimated.
struct Mitigation {
  std::string kind;    // stable snake_case: precision, kv_cache_precision, no_kv_cache, selective_cache,
                       //   cache_on_cpu, streaming, attention, recompute, optimizer_8bit, fused_optimizer,
                       //   lora, qlora, gradient_compression, gradients_on_host, tracin_projection,
                       //   one_layer_patterns, reduced_patterns, pattern_chunks, lanczos_three_vectors,
                       //   fisher_one_block, smaller_batch, combined
  std::string change;  // what changes, in words: "weights in int4-g128 instead of bf16"
  std::vector<OptionSetting> settings;  // the options that make the change: {{"precision", "int4-g128"}}
  std::string tradeoff;                 // what it costs (accuracy, compute, host RAM, a different job)
  Workload workload;                    // the plan with the change
  Bytes total;                          // estimate_workload(spec, workload).total()
  Bytes saved;        // the plan's total less `total` (always > 0: changes that save nothing are left out)
  Bytes host;         // host (CPU) memory the changed plan needs (Breakdown::host_total)
  bool fits = false;  // total <= limit
};

struct Recommendation {
  Bytes total;  // the plan as given
  Bytes limit;
  bool fits = false;                    // total <= limit
  std::vector<Mitigation> mitigations;  // every change that saves memory, the most saved first (ties by kind)
  std::optional<Mitigation> combined;   // when no single change fits: greedily, the change that saves the most on the
                                        //   plan so far (one per knob), until the plan fits; then the largest batch
                                        //   that fits. Set whether or not it reaches the limit.
  std::uint64_t min_devices = 1;        // ceil(total / limit): no layout over fewer such devices can hold the plan
};

// Returns the plan's total against request.limit and, ranked, the changes that apply to
// its workload kind: lower weight precision (fp16/bf16 from fp32; fp8, int8, int4-g128
// where the device runs them), KV cache precision (generation) or no KV cache (a single
// forward pass), a selective hook cache, the cache on the CPU, streaming extraction with
// the largest chunk that fits, fused or chunked attention instead of eager, recomputation,
// an 8-bit or fused optimizer, LoRA and QLoRA (training), gradient compression and host
// storage (sample_gradients, tracin), analysis knobs (one layer's patterns, chunks,
// Lanczos without reorthogonalisation, one Fisher block), and the largest smaller batch
// that fits (training keeps its effective batch with gradient accumulation). A change the
// estimators reject for this plan (Error invalid_input) is left out. Throws
// Error(invalid_input) and Error(overflow) when the plan itself cannot be estimated.
Recommendation recommend(const ModelSpec& spec, const RecommendRequest& request);

// The plan on one GPU of a table.
struct GpuOption {
  GpuSpec gpu;
  Precision precision;                // the plan's precision_mode resolved for this GPU
  std::vector<std::string> warnings;  // the resolver's fallbacks ("bf16 needs 8.0; v100 has 7.0: fp16")
  std::optional<Bytes> total;         // unset when the total overflows 64 bits
  Bytes limit;                        // budget_limit(gpu.memory, threshold)
  bool fits = false;
};

// Returns the plan on every GPU of `table`: `precision_mode` ("auto", "bf16", "int4", ...)
// resolved for each under `policy`, the Hopper cuBLAS workspace where it applies, and the
// total against budget_limit(memory, threshold). Sorted by memory, smallest first (ties by
// name), so the first that fits is the smallest GPU for the plan. Throws
// Error(invalid_input) for an unknown precision or policy, or a plan the estimators reject.
std::vector<GpuOption> gpu_options(const ModelSpec& spec, const Workload& workload, const std::string& precision_mode,
                                   const std::string& policy, const std::vector<GpuSpec>& table, double threshold);

}  // namespace memplan
