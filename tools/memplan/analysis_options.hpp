// The command-line knobs of the training and analysis workloads (issue 4), shared by
// every command that builds a Workload: `memplan estimate MODEL --workload training ...`.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memplan/plan/workload.hpp"

namespace memplan::cli {

struct AnalysisArgs {
  // training
  std::string optimizer = "adamw";
  std::string grad_precision;            // "" = the trainable weights' dtype
  bool no_master_weights = false;
  bool fused_optimizer = false;
  std::uint64_t grad_accumulation = 1;
  bool keep_grads = false;
  std::string recompute = "none";
  bool dropout = false;
  std::uint64_t lora_rank = 0;
  std::vector<std::string> lora_targets{"q", "v"};
  std::string lora_dtype = "fp32";
  // sae
  std::uint64_t sae_d_in = 0;
  std::uint64_t sae_expansion = 8;
  std::uint64_t sae_features = 0;
  std::uint64_t sae_batch_tokens = 4096;
  std::string sae_dtype = "fp32";
  std::uint64_t sae_top_k = 0;
  bool sae_tied = false;
  std::uint64_t sae_buffer_tokens = 262144;
  bool sae_seed_formula = false;
  // curvature
  std::uint64_t fisher_blocks = 0;
  std::uint64_t fisher_block_size = 0;
  bool fisher_one_block = false;
  std::string fisher_grouping = "channel";
  bool fisher_per_sample = false;
  std::uint64_t hessian_params = 0;
  std::string curvature_dtype = "fp32";
  std::uint64_t lanczos_k = 20;
  std::uint64_t lanczos_iterations = 100;
  bool no_reorthogonalize = false;
  std::string lanczos_dtype = "fp32";
  std::uint64_t micro_batch = 0;
  // sample gradients and TracIn
  std::uint64_t samples = 0;
  std::string compress = "none";         // none, int8, int8+zlib
  double zlib_ratio = 8;
  double keep_fraction = 1;
  std::uint32_t index_bits = 64;
  std::string gradient_layers;
  bool gradients_on_host = false;
  bool vectorized = false;
  std::uint64_t checkpoints = 10;
  std::uint64_t train_samples = 0;
  std::uint64_t test_samples = 1;
  std::uint64_t projection = 0;
  // attention analyses
  std::string pattern_dtype = "fp32";
  bool one_layer = false;
  bool attention_reduce = false;
  std::uint64_t pattern_chunk = 0;
  std::uint64_t heads = 0;
  // representation analyses
  std::uint64_t points = 1000;
  std::uint64_t neighbours = 100;
  std::uint64_t features = 0;
  bool overlap = false;
  // time
  double efficiency = 0;                 // 0 = each part's stated factor
};

// Registers the options above on `cmd` (grouped under "Training and analyses").
// Returns `text` parsed as a float precision; Error(invalid_input) naming `option` when it
// is a quantised one.
Precision float_option(const std::string& text, const char* option);

void add_analysis_options(CLI::App& cmd, AnalysisArgs& args);

// Sets workload.analysis from `args`, and for the hessian and full_fisher workloads (set
// workload.kind first) the largest GPU of the built-in table, for "at most N parameters
// fit". Throws Error(invalid_input) naming the option.
void apply_analysis_options(const AnalysisArgs& args, Workload& workload);

// Returns the built-in GPU with the most memory (parsing the table: milliseconds, once).
std::optional<DeviceLimit> largest_builtin_gpu();

}  // namespace memplan::cli
