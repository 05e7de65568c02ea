// memplan recommend MODEL --gpu G [estimate's options]: the plan against the GPU and, when
// it does not fit, the changes that save memory, each estimated again and ranked
// (plan/recommend.hpp), with the `memplan estimate` command line of each changed plan;
// and the smallest GPUs of the table that fit the plan as given.
#include <iostream>

#include "commands.hpp"
#include "memplan/io/gpu_table.hpp"
#include "memplan/io/model_file.hpp"
#include "memplan/plan/fit.hpp"
#include "memplan/plan/recommend.hpp"
#include "memplan/report/recommend.hpp"
#include "plan_options.hpp"
#include "progress.hpp"

namespace memplan::cli {

namespace {

struct RecommendArgs {
  std::string as;  // --as
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

// A change as the command line writes it: its flags, and the whole `memplan estimate` line.
ChangeCommand command_of(const RecommendArgs& a, const Mitigation& m) {
  return {flags_of(m.settings), estimate_command(a.model, a.device, a.options, m.settings)};
}

int run_recommend(const RecommendArgs& a) {
  const PrintOptions print_options = a.output.print_options<RecommendReport>();
  const ModelEntry model = find_model(a.model, say_fetch, a.as);
  const PlanSettings settings = plan_settings(a.options);
  RecommendReport report;
  const DeviceChoice device = choose_device(a.device, settings);
  require_named_gpu(device, "recommend");
  report.plan = bind(model.spec, settings, device);
  const Plan& plan = report.plan;

  // The plan as `memplan estimate --gpu G` plans it: precision resolved for the GPU.
  RecommendRequest request;
  request.device = device_capability(*plan.device);
  request.policy = settings.policy;
  request.workload = plan.workload;
  request.limit = budget_limit(*plan.budget, plan.threshold);
  report.recommendation = recommend(plan.model, request);
  for (const Mitigation& m : report.recommendation.mitigations) report.commands.push_back(command_of(a, m));
  if (report.recommendation.combined) report.combined_command = command_of(a, *report.recommendation.combined);
  report.gpus = gpu_options(plan.model, plan.workload, settings.precision, settings.policy, known_gpus(),
                            plan.threshold);
  print(report, print_options, std::cout);
  return 0;
}

}  // namespace

void define_recommend(CLI::App& self, int& exit_code, const NamedOptions& named) {
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
  cmd->add_option("MODEL", args->model,
                  "Built-in name, .yaml, config.json, snapshot dir, .safetensors, .gguf or Hub id ORG/NAME[@REV]")
      ->required();
  add_as_option(*cmd, args->as);
  add_device_options(*cmd, args->device, /*gpu_required=*/true, /*probe=*/false, /*capacity=*/false);
  add_plan_options(*cmd, args->options, named);
  add_output_options(*cmd, args->output);
  cmd->callback([args, &exit_code] { exit_code = run_recommend(*args); });
}

}  // namespace memplan::cli
