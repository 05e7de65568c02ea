// The command-line knobs of a Workload, shared by every command that builds one the way
// `memplan estimate` does (estimate, sweep, recommend), so that a plan described on one
// command line means the same plan on another.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "analysis_options.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/plan/workload.hpp"

namespace memplan::cli {

struct WorkloadArgs {
  std::string workload = "inference";
  std::uint64_t batch = 1;
  std::uint64_t seq = 0;  // 0: min(2048, the model's context)
  std::uint64_t new_tokens = 0;
  std::string unquantized = "fp16";
  bool quantize_lm_head = false;
  std::string compute;
  std::string kv_precision;
  std::uint64_t kv_page = 0;
  bool no_kv_cache = false;
  std::string attention = "sdpa";
  std::uint64_t attention_chunk = 512;
  bool logits_fp32 = false;
  std::vector<std::string> filter;
  std::string layers;
  std::uint64_t pos_slice = 0;
  bool remove_batch_dim = false;
  std::uint64_t stop_at_layer = 0;
  bool incl_bwd = false;
  bool cache_on_cpu = false;
  std::uint64_t streaming_chunk = 512;
  bool no_overhead = false;
  std::string cuda_context;
  double fragmentation = 0.10;
  AnalysisArgs analysis;  // training and analysis workloads (analysis_options.hpp)
};

// Registers -w/--workload, -b/--batch and -s/--seq on `cmd` (sweep registers lists of its own instead).
void add_workload_shape_options(CLI::App& cmd, WorkloadArgs& args);

// Registers every other workload knob on `cmd` (the analysis ones grouped under "Training and analyses").
void add_workload_options(CLI::App& cmd, WorkloadArgs& args);

// Returns the Workload `args` describe on `spec` (weights.precision left at its default:
// the caller resolves it). `cmd` says which options were given. Throws
// Error(invalid_input) naming the option.
Workload build_workload(const WorkloadArgs& args, const ModelSpec& spec, const CLI::App& cmd);

}  // namespace memplan::cli
