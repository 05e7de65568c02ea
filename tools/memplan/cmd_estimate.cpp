// memplan estimate MODEL: the memory a workload needs on a model, by component.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iostream>

#include "commands.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/io/gpu_table.hpp"
#include "memplan/io/model_file.hpp"
#include "memplan/kernels/calibration.hpp"
#include "memplan/plan/workload.hpp"
#include "memplan/probe/probe.hpp"
#include "layout_options.hpp"
#include "memplan/resolve/resolver.hpp"
#include "workload_options.hpp"

namespace memplan::cli {

namespace {

struct EstimateArgs {
  std::string model{default_model_name};
  std::string precision = "auto";
  std::string policy = "pytorch";
  bool probe = false;
  bool no_calibration = false;
  std::string gpu;
  WorkloadArgs knobs;  // the workload (workload_options.hpp), shared with sweep and recommend
  OutputOptions output;
  LayoutArgs layout;  // multi-GPU layouts (layout_options.hpp)
};

// Returns the figures `memplan calibrate` stored for this GPU and driver, or nothing; an
// unreadable cache is a warning, not an error: the documented defaults still apply.
std::optional<Calibration> cached_calibration(const std::string& gpu, const std::string& cuda,
                                              std::vector<std::string>& warnings) {
  std::string path;
  try {
    path = calibration_cache_path();
  } catch (const Error&) {
    return std::nullopt;  // no cache directory: nothing was ever stored
  }
  try {
    return load_calibration(path, gpu, cuda);
  } catch (const Error& e) {
    warnings.push_back("calibration cache " + path + " not used: " + e.what() +
                       "; the overhead uses the documented defaults");
    return std::nullopt;
  }
}

int run_estimate(const EstimateArgs& args, CLI::App& cmd) {
  const auto printer = args.output.printer();
  const ModelEntry entry = find_model(args.model);
  spdlog::debug("model {} from {}", entry.spec.name, entry.origin);

  std::vector<std::string> warnings;
  std::optional<GpuSpec> gpu;
  std::optional<Calibration> calibration;
  if (args.probe) {
    const ProbeResult probed = probe();
    if (const ProbedDevice* device = first_device(probed)) {
      if (!args.no_calibration) calibration = cached_calibration(device->name, probed.cuda_version, warnings);
      gpu = to_gpu_spec(*device);
      if (device->free_memory) {
        gpu->memory = *device->free_memory;  // plan against what is free now, not the card's total
        gpu->display += " (free memory now)";
      }
      spdlog::debug("probed {}: {} bytes free", gpu->display, gpu->memory.count());
    } else {
      warnings.push_back("--probe found no usable GPU (" + probed.reason + ")" +
                         (args.gpu.empty() ? "" : "; using --gpu " + args.gpu));
    }
  }
  if (!gpu && !args.gpu.empty()) gpu = find_gpu(args.gpu, builtin_gpus());
  const bool layout = layout_requested(cmd);
  const bool gpu_named = gpu.has_value();
  if (!gpu && layout) gpu = layout_resolution_gpu(args.layout);  // --gpus: resolve for the weakest
  Workload workload = build_workload(args.knobs, entry.spec, cmd);
  if (gpu) workload.overhead.hopper_or_newer = gpu->compute_capability >= ComputeCapability{9, 0};
  if (calibration) {
    const OverheadOptions calibrated = apply_calibration(*calibration, workload.overhead);
    if (!args.knobs.cuda_context.empty()) {  // the user's figure wins over the cache's
      workload.overhead.cublas_workspace = calibrated.cublas_workspace;
      workload.overhead.cublas_workspace_source = calibrated.cublas_workspace_source;
    } else {
      workload.overhead = calibrated;
    }
  }

  // The precision the job runs in: resolved against the device when there is one.
  std::string auto_note;
  ResolveRequest request;
  request.precision = args.precision;
  request.policy = args.policy;
  if (gpu) {
    request.device = device_capability(*gpu);
    const Resolution resolution = resolve_precision(request);
    workload.weights.precision = resolution.precision;
    for (const std::string& w : resolution.warnings) warnings.push_back(w);
    if (args.precision == "auto") auto_note = " (" + resolution.reason + ")";
  } else if (args.precision == "auto") {
    find_policy(args.policy);  // still reject an unknown policy
    workload.weights.precision = precisions::bf16;
    auto_note = " (auto with no device: assumes compute capability 8.0+; --gpu NAME or --probe resolves it)";
  } else {
    workload.weights.precision = parse_precision(args.precision);
  }

  EstimateReport report;
  report.model = entry.spec.name;
  report.family = to_string(entry.spec.family);
  report.model_origin = entry.origin;
  report.params = count_parameters(entry.spec);
  report.workload_kind = to_string(workload.kind);
  if (workload.kind != WorkloadKind::weights) {
    report.batch = workload.batch;
    report.seq_len = workload.seq_len;
    report.new_tokens = workload.new_tokens;
  }
  const Precision& weights = workload.weights.precision;
  report.precision_requested = args.precision;
  report.precision_resolved = to_string(weights);
  report.precision_description =
      is_quantized(weights)
          ? describe(weights) + " on linear layers; " + to_string(workload.weights.unquantized) + " elsewhere"
          : describe(weights);
  if (workload.kind != WorkloadKind::weights) {
    report.precision_description += "; activations " + to_string(compute_precision(workload));
  }
  report.precision_description += auto_note;
  if (workload.seq_len + workload.new_tokens > entry.spec.max_seq_len) {
    warnings.push_back(std::to_string(workload.seq_len + workload.new_tokens) + " tokens exceed " + entry.spec.name +
                       "'s context of " + std::to_string(entry.spec.max_seq_len));
  }
  report.warnings = warnings;
  if (layout) return run_layout(args.layout, entry.spec, workload, report, gpu, gpu_named, *printer);
  report.breakdown = estimate_workload(entry.spec, workload);
  if (gpu) {
    report.device = gpu;
    report.fits = report.breakdown.total() <= gpu->memory;
    // A probed GPU carries no throughput figures: no time estimate then, rather than an error.
    if (!gpu->dense_tflops.empty()) report.time = estimate_workload_time(entry.spec, workload, *gpu);
  }
  printer->estimate(report, std::cout);
  return 0;
}

}  // namespace

void add_estimate(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<EstimateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "estimate",
      "Estimate the memory a workload needs on a model, and where it goes.\n"
      "MODEL is a built-in name (see 'memplan models') or a path to a model .yaml file.\n"
      "Workloads: weights (parameters only), inference (one forward pass, KV cache kept),\n"
      "generation (prefill + --new-tokens decode steps), extraction (inference that caches\n"
      "TransformerLens hooks: --filter, --layers, --pos-slice ...), streaming_extraction\n"
      "(--streaming-chunk tokens at a time).\n"
      "Quantised precisions (fp8, int8, int4, nf4, fp4) apply to the linear layers only;\n"
      "embeddings, norms, biases and the LM head stay in --unquantized (fp16), as\n"
      "bitsandbytes, GPTQ and AWQ do.\n"
      "Examples:\n"
      "  memplan estimate llama-2-7b --workload extraction --seq 2048 --precision fp16\n"
      "  memplan estimate gpt2 -w extraction --filter 'blocks.*.hook_resid_post' --layers 0,5,11\n"
      "  memplan estimate mistral-7b-v0.1 -w generation --seq 4096 --new-tokens 512 --gpu a10");
  cmd->add_option("MODEL", args->model, "Built-in model name or path to a .yaml model file")->capture_default_str();
  add_workload_shape_options(*cmd, args->knobs);
  cmd->add_option("-p,--precision", args->precision,
                  "Weight precision: auto (bf16, else fp16, else fp32, for the device), fp32, tf32,\n"
                  "fp16, bf16, fp8, fp8_e5m2, int8, int8-gN, int4 (= int4-g128, fp16 scales),\n"
                  "int4-gN[-zp], nf4[-dq], fp4[-dq]")
      ->capture_default_str();
  cmd->add_option("--policy", args->policy, "Whose precision rules: pytorch or vllm (see 'memplan resolve')")
      ->capture_default_str();
  cmd->add_flag("--probe", args->probe,
                "Plan for the first GPU this machine has, against its free memory; the overhead uses\n"
                "this GPU's 'memplan calibrate' figures when they are cached");
  cmd->add_flag("--no-calibration", args->no_calibration, "With --probe: ignore cached calibration figures");
  add_workload_options(*cmd, args->knobs);
  add_layout_options(*cmd, args->layout);
  cmd->add_option("-g,--gpu", args->gpu, "Say whether it fits on this GPU (see 'memplan gpus')");
  add_output_options(*cmd, args->output);
  cmd->add_flag("--explain", args->output.explain, "Show the arithmetic behind each row");
  cmd->callback([args, cmd, &exit_code] { exit_code = run_estimate(*args, *cmd); });
}

}  // namespace memplan::cli
