// memplan fit MODEL --gpu G --vary batch|seq|chunk: the largest batch, sequence length or
// chunk that fits under the GPU's memory x threshold, by a search that relies on the total
// growing with the value (plan/fit.hpp), and the component that grows the most (the one
// that binds). The plan is built from the same options as `memplan estimate`.
#include <iostream>

#include "commands.hpp"
#include "memplan/core/error.hpp"
#include "memplan/io/gpu_table.hpp"
#include "memplan/io/model_file.hpp"
#include "memplan/plan/fit.hpp"
#include "memplan/resolve/resolver.hpp"
#include "workload_options.hpp"

namespace memplan::cli {

namespace {

struct FitArgs {
  std::string model;
  std::string gpu;
  std::string vary;
  std::string precision = "auto";
  std::string policy = "pytorch";
  double threshold = 0.85;
  WorkloadArgs knobs;
  OutputOptions output;
};

const char* option_of(FitKnob knob) {
  switch (knob) {
    case FitKnob::batch: return "--batch";
    case FitKnob::seq: return "--seq";
    case FitKnob::attention_chunk: return "--attention-chunk";
    case FitKnob::streaming_chunk: return "--streaming-chunk";
  }
  return "";
}

int run_fit(const FitArgs& a, CLI::App& cmd) {
  const auto printer = a.output.printer();
  if (!(a.threshold > 0.0 && a.threshold <= 1.0)) {
    throw Error(ErrorKind::invalid_input, "--threshold must be a fraction in (0, 1]", "threshold");
  }
  const ModelEntry model = find_model(a.model);
  const GpuSpec gpu = find_gpu(a.gpu, builtin_gpus());
  Workload w = build_workload(a.knobs, model.spec, cmd);
  w.overhead.hopper_or_newer = gpu.compute_capability >= ComputeCapability{9, 0};
  ResolveRequest request;
  request.precision = a.precision;
  request.policy = a.policy;
  request.device = device_capability(gpu);
  w.weights.precision = resolve_precision(request).precision;
  const FitKnob knob = choose_fit_knob(a.vary, w);

  FitReport report;
  report.model = model.spec.name;
  report.workload_kind = to_string(w.kind);
  report.gpu = gpu.name;
  report.precision = to_string(w.weights.precision);
  report.vary = to_string(knob);
  report.option = option_of(knob);
  report.threshold = a.threshold;
  report.budget_bytes = gpu.memory;
  report.limit = budget_limit(gpu.memory, a.threshold);
  switch (knob) {
    case FitKnob::batch: report.fixed = "seq_len " + std::to_string(w.seq_len); break;
    case FitKnob::seq: report.fixed = "batch " + std::to_string(w.batch); break;
    default: report.fixed = "batch " + std::to_string(w.batch) + ", seq_len " + std::to_string(w.seq_len); break;
  }
  const FitResult r = fit_largest(model.spec, w, knob, report.limit);
  report.cap = r.cap;
  report.value = r.value;
  if (r.breakdown) report.total = r.breakdown->total();
  report.next_total = r.next_total;
  report.next_overflows = r.next_overflows;
  report.binding = r.binding;
  report.binding_bytes = r.binding_bytes;
  printer->fit(report, std::cout);
  return 0;
}

}  // namespace

void add_fit(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<FitArgs>();
  CLI::App* cmd = app.add_subcommand(
      "fit",
      "The largest batch, sequence length or chunk that fits on a GPU, and the component that binds.\n"
      "Fits means: total <= GPU memory x --threshold (default 0.85, the plan files' default).\n"
      "The plan takes the options of 'memplan estimate'; the varied one is searched from 1 up to\n"
      "2^24 (batch), the model's context (seq) or the sequence length (chunk).\n"
      "Examples:\n"
      "  memplan fit llama-2-7b --gpu a10 --vary seq\n"
      "  memplan fit gpt2 --gpu rtx-3060 --vary batch -w extraction --seq 1024\n"
      "  memplan fit llama-2-7b --gpu rtx-4090 --vary chunk -w streaming_extraction --seq 4096\n"
      "  memplan fit llama-2-7b --gpu a10 --vary chunk --attention chunked --seq 4096 --batch 2");
  cmd->add_option("MODEL", args->model, "Built-in model name or path to a .yaml model file")->required();
  cmd->add_option("-g,--gpu", args->gpu, "GPU of the table (see 'memplan gpus')")->required();
  cmd->add_option("--vary", args->vary,
                  "batch, seq, or chunk: --streaming-chunk for -w streaming_extraction, else --attention-chunk\n"
                  "for --attention chunked|causal_linear_chunked (or name one: streaming_chunk, attention_chunk)")
      ->required();
  add_workload_shape_options(*cmd, args->knobs);
  cmd->add_option("-p,--precision", args->precision, "auto (resolved for the GPU) or a precision")->capture_default_str();
  cmd->add_option("--policy", args->policy, "Whose precision rules: pytorch or vllm")->capture_default_str();
  cmd->add_option("--threshold", args->threshold, "Share of the GPU's memory a job may use, in (0, 1]")
      ->capture_default_str();
  add_workload_options(*cmd, args->knobs);
  add_output_options(*cmd, args->output);
  cmd->callback([args, cmd, &exit_code] { exit_code = run_fit(*args, *cmd); });
}

}  // namespace memplan::cli
