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
#include "plan_options.hpp"

namespace memplan::cli {

namespace {

struct RecommendArgs {
  std::string model;
  DeviceArgs device;
  PlanOptions options;
  OutputOptions output;
};

// The flags that make a change, as the command line writes them.
std::vector<std::string> flags_of(const std::vector<OptionSetting>& settings) {
  std::vector<std::string> out;
  for (const OptionSetting& c : settings) {
    out.push_back(flag_of(*find_option(c.key)));
    if (!c.value.empty()) out.push_back(c.value);
  }
  return out;
}

MitigationRow row_of(const Mitigation& m, const std::vector<std::string>& command) {
  MitigationRow r;
  r.kind = m.kind;
  r.change = m.change;
  r.options = flags_of(m.settings);
  r.command = command;
  r.tradeoff = m.tradeoff;
  r.total = m.total;
  r.saved = m.saved;
  r.host = m.host;
  r.fits = m.fits;
  return r;
}

int run_recommend(const RecommendArgs& a) {
  const auto printer = a.output.printer();
  const ModelEntry model = find_model(a.model);
  const PlanSettings settings = plan_settings(a.options);
  const Plan plan = bind(model.spec, settings, choose_device(a.device, settings));
  const GpuSpec& gpu = *plan.device;

  // The plan as `memplan estimate --gpu G` plans it: precision resolved for the GPU.
  RecommendRequest request;
  request.device = device_capability(gpu);
  request.policy = settings.policy;
  request.workload = plan.workload;
  request.limit = budget_limit(*plan.budget, plan.threshold);
  const Recommendation rec = recommend(model.spec, request);

  const Workload& w = plan.workload;
  RecommendReport report;
  report.model = model.spec.name;
  report.workload_kind = to_string(w.kind);
  if (w.kind != WorkloadKind::weights) {  // the weights alone have no batch or sequence
    report.batch = w.batch;
    report.seq_len = w.seq_len;
  }
  report.new_tokens = w.new_tokens;
  report.precision = to_string(w.weights.precision);
  report.gpu = gpu.name;
  report.gpu_memory = gpu.memory;
  report.threshold = plan.threshold;
  report.total = rec.total;
  report.limit = rec.limit;
  report.fits = rec.fits;
  report.verdict = verdict_of(rec.total, *plan.budget, plan.threshold);
  report.min_devices = rec.min_devices;
  for (const Mitigation& m : rec.mitigations) {
    report.mitigations.push_back(row_of(m, estimate_command(a.model, a.device, a.options, m.settings)));
  }
  if (rec.combined) report.combined = row_of(*rec.combined, estimate_command(a.model, a.device, a.options, rec.combined->settings));
  for (const GpuOption& g : gpu_options(model.spec, w, settings.precision, settings.policy, builtin_gpus(), plan.threshold)) {
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
  for (const std::string& warning : plan.warnings) report.notes.push_back(render_for_cli(warning));
  if (!rec.fits) {
    report.notes.push_back(
        "per-device memory over several GPUs (tensor, pipeline, data parallel with ZeRO or FSDP, device_map) and "
        "offloading weights or optimizer states to the CPU are the multi-GPU layouts' to plan, not recommend's");
  }
  printer->recommend(report, std::cout);
  return 0;
}

}  // namespace

void define_recommend(CLI::App& self, int& exit_code) {
  auto args = std::make_shared<RecommendArgs>();
  CLI::App* cmd = &self;
  cmd->description(
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
  cmd->footer("Only the common options are listed: 'memplan help options [WORKLOAD]' lists them all.");
  cmd->add_option("MODEL", args->model, "Built-in model name or path to a .yaml model file")->required();
  add_device_options(*cmd, args->device, /*gpu_required=*/true, /*probe=*/false);
  add_plan_options(*cmd, args->options);
  add_output_options(*cmd, args->output);
  cmd->callback([args, &exit_code] { exit_code = run_recommend(*args); });
}

}  // namespace memplan::cli
