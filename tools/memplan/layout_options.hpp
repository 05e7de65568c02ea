// The multi-GPU layout options of `memplan estimate`: the same workload, laid out over GPUs
// the way Megatron-LM, DeepSpeed, FSDP, vLLM or accelerate would (plan/layout.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memplan/core/gpu_spec.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/plan/workload.hpp"
#include "memplan/report/printer.hpp"

namespace memplan::cli {

struct LayoutArgs {
  std::uint64_t tp = 1;                  // --tp
  std::uint64_t pp = 1;                  // --pp
  std::uint64_t dp = 1;                  // --dp
  std::string zero;                      // --zero 0|1|2|3
  std::string fsdp;                      // --fsdp full|grad_op|hybrid
  std::uint64_t shard_group = 0;         // --shard-group
  std::vector<std::string> offload;      // --offload optimizer,params
  bool sequence_parallel = false;        // --sequence-parallel
  std::uint64_t micro_batches = 1;       // --micro-batches
  std::string schedule = "1f1b";         // --schedule
  std::string stage_layers;              // --stage-layers 19,20,20,21
  std::string serving;                   // --serving vllm
  double gpu_memory_utilization = 0.9;   // --gpu-memory-utilization
  std::uint64_t max_model_len = 0;       // --max-model-len
  std::uint64_t max_num_seqs = 256;      // --max-num-seqs
  std::uint64_t max_num_batched_tokens = 8192;  // --max-num-batched-tokens
  std::uint64_t block_size = 16;         // --block-size
  std::string device_map;                // --device-map auto|balanced|balanced_low_0|sequential
  std::string gpus;                      // --gpus a100-80gb,a100-80gb,rtx-4090 or 3xa100-80gb
  std::string max_memory;                // --max-memory 70GiB,70GiB,20GiB (or one size for every GPU)
  std::string cpu_memory;                // --cpu-memory 256GiB
};

// Registers the options above on `cmd`, grouped under "Multi-GPU layouts".
void add_layout_options(CLI::App& cmd, LayoutArgs& args);

// True when `cmd` was given any layout option.
bool layout_requested(const CLI::App& cmd);

// Returns the GPUs `--gpus` names, in order ("3xa100-80gb" is three). Throws
// Error(invalid_input, key "gpus") for an unknown name or an empty list.
std::vector<GpuSpec> parse_gpu_list(const std::string& text);

// Returns the GPU `--precision auto` resolves for when only --gpus names devices: the one
// with the lowest compute capability; nullopt without --gpus.
std::optional<GpuSpec> layout_resolution_gpu(const LayoutArgs& args);

// Estimates `workload` on `spec` laid out as `args` ask and prints it; `header` carries the
// model, workload and precision lines, `gpu` the GPU --gpu or --probe named (gpu_named). Returns
// the exit code. Throws Error(invalid_input) naming the option for layouts that do not apply.
int run_layout(const LayoutArgs& args, const ModelSpec& spec, const Workload& workload, const EstimateReport& header,
               const std::optional<GpuSpec>& gpu, bool gpu_named, const Printer& printer);

}  // namespace memplan::cli
