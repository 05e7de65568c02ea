// memplan recommend MODEL --gpu G [estimate's options]: the plan against the GPU and, when
// it does not fit, the changes that save memory, each estimated again and ranked
// (plan/recommend.hpp), with the `memplan estimate` command line of each changed plan;
// and the smallest GPUs of the table that fit the plan as given.
#include <iostream>

#include "commands.hpp"
#include "memplan/frontend/requests.hpp"
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

int run_recommend(const RecommendArgs& a) {
  const PrintOptions print_options = a.output.print_options<RecommendReport>();
  const ModelEntry model = find_model(a.model, say_fetch, a.as);
  const RecommendReport report = recommend_report(model, a.model, given_options(a.options), a.device);
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
