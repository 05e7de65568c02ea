// Plan files: a model, a workload with its knobs, the `memory:` section and a budget, in
// one YAML file that `memplan check` gates CI on (docs/configs.md, "Plan files").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/gpu_spec.hpp"
#include "memplan/io/model_file.hpp"
#include "memplan/plan/fit.hpp"  // budget_limit
#include "memplan/plan/options.hpp"
#include "memplan/plan/verdict.hpp"
#include "memplan/plan/workload.hpp"

namespace memplan {

enum class BudgetKind {
  none,   // the plan names no budget
  gpu,    // a GPU of the table: its driver-reported memory
  bytes,  // a size: "24GiB", "80GB"
  probe,  // the first GPU this machine has, its free memory (the caller probes)
};

struct PlanBudget {
  BudgetKind kind = BudgetKind::none;
  std::string text;            // as written in the plan
  std::optional<GpuSpec> gpu;  // kind gpu
  Bytes bytes;                 // kind gpu: gpu->memory; kind bytes: the size
};

// Parses a budget as a plan or --budget writes it: "probe", a GPU of the table (name or
// alias, case-insensitive), or a size ("24GiB", "80GB"; a bare "80G" is ambiguous).
// Throws Error(invalid_input, key "budget").
PlanBudget parse_budget(std::string_view text);

// TheLoom's `memory:` section.
struct MemorySettings {
  std::string precision_mode = "auto";               // auto, or any precision parse_precision accepts
  std::uint64_t streaming_chunk_size = 512;          // tokens per chunk (streaming_extraction)
  double memory_warning_threshold = 0.85;            // the budget share a plan may use, in (0, 1]
  std::vector<std::string> activation_cache_filter;  // hook names or globs; empty = cache all
  bool enable_gradient_checkpointing = false;        // training: full recomputation
};

struct PlanFile {
  std::string path;       // the plan file, as named
  std::string model_ref;  // `model:` as written
  ModelEntry model;
  PlanSettings settings;  // what the workload: and memory: sections set (bind's input)
  Workload workload;      // the plan bound without a device (weights.precision: auto as bf16)
  MemorySettings memory;
  PlanBudget budget;
  std::vector<std::string> notes;  // settings that do not apply to this workload, and why
};

// Parses a plan. `file` names it in errors; relative model paths resolve against
// `base_dir`. Throws ConfigError naming file:line:column and the key (unknown keys with
// a did-you-mean, missing or wrong-typed values, out-of-range values, unknown models,
// GPUs, precisions and hooks); a model file's own errors name the model file.
PlanFile parse_plan_yaml(std::string_view text, const std::string& file, const std::string& base_dir);

// Reads and parses a plan file. Throws ConfigError (missing, unreadable, a directory, invalid).
PlanFile load_plan_file(const std::string& path);

// A plan estimated against a device.
struct PlanOutcome {
  Precision precision;                // precision_mode resolved
  std::string precision_reason;       // why, for auto
  std::vector<std::string> warnings;  // resolver fallbacks
  Breakdown breakdown;
  Bytes total;
  std::optional<Bytes> budget;     // the budget's bytes, when there is one
  std::optional<Bytes> limit;      // floor(budget x memory_warning_threshold)
  std::optional<Verdict> verdict;  // against the budget and memory_warning_threshold
  std::optional<bool> fits;        // verdict == fits
};

// Resolves precision_mode for `device` (the budget's GPU, or a probed one; without one
// auto assumes compute capability 8.0+, as `memplan estimate` does), estimates the
// workload, and compares its total with `budget` x the threshold. Pure. Throws
// Error(invalid_input) and Error(overflow) as estimate_workload.
PlanOutcome evaluate_plan(const PlanFile& plan, const std::optional<GpuSpec>& device, std::optional<Bytes> budget);

}  // namespace memplan
