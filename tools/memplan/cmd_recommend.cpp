// memplan recommend MODEL --gpu G [estimate's options]: the plan against the GPU and, when
// it does not fit, the changes that save memory, each estimated again and ranked
// (plan/recommend.hpp), with the `memplan estimate` command line of each changed plan;
// and the smallest GPUs of the table that fit the plan as given.
#include <iostream>

#include "commands.hpp"
#include "memplan/core/error.hpp"
#include "memplan/io/gpu_table.hpp"
#include "memplan/io/model_file.hpp"
#include "memplan/plan/fit.hpp"
#include "memplan/plan/recommend.hpp"
#include "memplan/resolve/resolver.hpp"
#include "workload_options.hpp"

namespace memplan::cli {

namespace {

struct RecommendArgs {
  std::string model;
  std::string gpu;
  std::string precision = "auto";
  std::string policy = "pytorch";
  double threshold = 0.85;
  WorkloadArgs knobs;
  OutputOptions output;
};

// Options of `recommend` that `estimate` does not have.
bool recommend_only(const std::string& name) {
  return name == "--threshold" || name == "--format" || name == "--units" || name == "--help";
}

// The options given on this command line, as `memplan estimate` takes them (long names).
std::vector<std::pair<std::string, std::vector<std::string>>> given_options(const CLI::App& cmd) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const CLI::Option* opt : cmd.get_options()) {
    if (opt->count() == 0 || opt->get_lnames().empty()) continue;  // not given, or the positional MODEL
    const std::string name = opt->get_name();
    if (recommend_only(name)) continue;
    std::vector<std::string> values;
    if (opt->get_type_size() != 0) {
      std::string joined;
      for (const std::string& v : opt->results()) joined += (joined.empty() ? "" : ",") + v;
      values.push_back(joined);
    }
    out.emplace_back(name, values);
  }
  return out;
}

// `memplan estimate MODEL` + the given options less those `change` sets + `change`.
std::vector<std::string> estimate_command(const std::string& model,
                                          const std::vector<std::pair<std::string, std::vector<std::string>>>& given,
                                          const std::vector<std::string>& change) {
  std::vector<std::string> out = {"memplan", "estimate", model};
  for (const auto& [name, values] : given) {
    if (std::find(change.begin(), change.end(), name) != change.end()) continue;
    out.push_back(name);
    out.insert(out.end(), values.begin(), values.end());
  }
  out.insert(out.end(), change.begin(), change.end());
  return out;
}

MitigationRow row_of(const Mitigation& m, const std::vector<std::string>& command) {
  MitigationRow r;
  r.kind = m.kind;
  r.change = m.change;
  r.options = m.options;
  r.command = command;
  r.tradeoff = m.tradeoff;
  r.total = m.total;
  r.saved = m.saved;
  r.host = m.host;
  r.fits = m.fits;
  return r;
}

int run_recommend(const RecommendArgs& a, const CLI::App& cmd) {
  const auto printer = a.output.printer();
  if (!(a.threshold > 0.0 && a.threshold <= 1.0)) {
    throw Error(ErrorKind::invalid_input, "--threshold must be a fraction in (0, 1]", "threshold");
  }
  const ModelEntry model = find_model(a.model);
  const std::vector<GpuSpec> table = builtin_gpus();
  const GpuSpec gpu = find_gpu(a.gpu, table);
  Workload w = build_workload(a.knobs, model.spec, cmd);

  // The plan as `memplan estimate --gpu G` plans it: precision resolved for the GPU.
  RecommendRequest request;
  request.device = device_capability(gpu);
  request.policy = a.policy;
  ResolveRequest resolve;
  resolve.precision = a.precision;
  resolve.policy = a.policy;
  resolve.device = request.device;
  const Resolution resolution = resolve_precision(resolve);
  Workload on_gpu = w;
  on_gpu.weights.precision = resolution.precision;
  on_gpu.overhead.hopper_or_newer = gpu.compute_capability >= ComputeCapability{9, 0};
  request.workload = on_gpu;
  request.limit = budget_limit(gpu.memory, a.threshold);
  const Recommendation rec = recommend(model.spec, request);

  RecommendReport report;
  report.model = model.spec.name;
  report.workload_kind = to_string(on_gpu.kind);
  if (on_gpu.kind != WorkloadKind::weights) {  // the weights alone have no batch or sequence
    report.batch = on_gpu.batch;
    report.seq_len = on_gpu.seq_len;
  }
  report.new_tokens = on_gpu.new_tokens;
  report.precision = to_string(on_gpu.weights.precision);
  report.gpu = gpu.name;
  report.gpu_memory = gpu.memory;
  report.threshold = a.threshold;
  report.total = rec.total;
  report.limit = rec.limit;
  report.fits = rec.fits;
  report.min_devices = rec.min_devices;
  const auto given = given_options(cmd);
  for (const Mitigation& m : rec.mitigations) report.mitigations.push_back(row_of(m, estimate_command(a.model, given, m.options)));
  if (rec.combined) report.combined = row_of(*rec.combined, estimate_command(a.model, given, rec.combined->options));
  for (const GpuOption& g : gpu_options(model.spec, w, a.precision, a.policy, table, a.threshold)) {
    GpuFitRow row;
    row.name = g.gpu.name;
    row.memory = g.gpu.memory;
    row.precision = to_string(g.precision);
    row.total = g.total;
    row.limit = g.limit;
    row.fits = g.fits;
    row.warnings = g.warnings;
    report.gpus.push_back(std::move(row));
  }
  report.notes = resolution.warnings;
  if (!rec.fits) {
    report.notes.push_back(
        "per-device memory over several GPUs (tensor, pipeline, data parallel with ZeRO or FSDP, device_map) and "
        "offloading weights or optimizer states to the CPU are the multi-GPU layouts' to plan, not recommend's");
  }
  printer->recommend(report, std::cout);
  return 0;
}

}  // namespace

void add_recommend(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<RecommendArgs>();
  CLI::App* cmd = app.add_subcommand(
      "recommend",
      "What to change when a plan does not fit a GPU, and which GPUs it fits as given.\n"
      "The plan takes the options of 'memplan estimate'. It fits when its total is at most the GPU's\n"
      "memory x --threshold (default 0.85, as fit and the plan files). Each change (lower precision,\n"
      "selective or CPU hook caches, streaming, fused or chunked attention, recomputation, an 8-bit\n"
      "optimizer, LoRA/QLoRA, gradient compression, KV cache quantisation, a smaller batch, ...)\n"
      "is estimated again, not guessed; they are ranked by the memory they save, each with the\n"
      "'memplan estimate' command that shows the changed plan. Then the smallest GPUs of the table\n"
      "that hold the plan unchanged ('memplan gpus').\n"
      "Examples:\n"
      "  memplan recommend llama-2-13b --gpu rtx-4090 -w generation --seq 4096\n"
      "  memplan recommend llama-2-7b --gpu a10 -w extraction --seq 2048\n"
      "  memplan recommend llama-2-7b --gpu a100-80gb -w training --batch 8 --format json");
  cmd->add_option("MODEL", args->model, "Built-in model name or path to a .yaml model file")->required();
  cmd->add_option("-g,--gpu", args->gpu, "GPU of the table the plan must fit (see 'memplan gpus')")->required();
  add_workload_shape_options(*cmd, args->knobs);
  cmd->add_option("-p,--precision", args->precision, "auto (resolved for the GPU) or a precision")->capture_default_str();
  cmd->add_option("--policy", args->policy, "Whose precision rules: pytorch or vllm")->capture_default_str();
  cmd->add_option("--threshold", args->threshold, "Share of the GPU's memory a plan may use, in (0, 1]")
      ->capture_default_str();
  add_workload_options(*cmd, args->knobs);
  add_output_options(*cmd, args->output);
  cmd->callback([args, cmd, &exit_code] { exit_code = run_recommend(*args, *cmd); });
}

}  // namespace memplan::cli
