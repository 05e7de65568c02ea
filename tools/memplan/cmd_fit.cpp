// memplan fit MODEL --gpu G --vary batch|seq|chunk: the largest batch, sequence length or
// chunk whose verdict is "fits" (total <= GPU memory x threshold), by a search that relies
// on the total growing with the value (plan/fit.hpp), and the component that grows the most
// (the one that binds). The plan is bound as `memplan estimate` binds it.
#include <iostream>

#include "commands.hpp"
#include "memplan/frontend/requests.hpp"
#include "plan_options.hpp"
#include "progress.hpp"

namespace memplan::cli {

namespace {

struct FitArgs {
  std::string as;  // --as
  std::string model;
  std::string vary;
  DeviceArgs device;
  PlanOptions options;
  OutputOptions output;
};

int run_fit(const FitArgs& a) {
  if (a.device.gpu.empty() && a.device.cpu.empty()) {
    throw Error(ErrorKind::invalid_input,
                "`gpu` is required: the GPU (or a capacity such as 24GiB) to fit on, or `cpu`", "gpu");
  }
  const PrintOptions print_options = a.output.print_options<FitReport>();
  const ModelEntry model = find_model(a.model, say_fetch, a.as);
  print(fit_report(model, plan_settings(a.options), a.device, a.vary), print_options, std::cout);
  return 0;
}

}  // namespace

void define_fit(CLI::App& self, int& exit_code, const NamedOptions& named) {
  auto args = std::make_shared<FitArgs>();
  CLI::App* cmd = &self;
  cmd->description(
      "The largest batch, sequence length or chunk that fits on a GPU (or --cpu), and the component that binds.\n"
      "Fits means: total <= GPU memory x --threshold (default 0.85, the plan files' default).\n"
      "The plan takes the options of 'memplan estimate'; the varied one is searched from 1 up to\n"
      "2^24 (batch), the model's context (seq) or the sequence length (chunk).\n"
      "Examples:\n"
      "  memplan fit llama-2-7b --gpu a10 --vary seq\n"
      "  memplan fit gpt2 --gpu rtx-3060 --vary batch -w extraction --seq 1024\n"
      "  memplan fit llama-2-7b --gpu rtx-4090 --vary chunk -w streaming_extraction --seq 4096\n"
      "  memplan fit llama-2-7b --gpu a10 --vary chunk --attention chunked --seq 4096 --batch 2\n"
      "  memplan fit model.gguf --engine llama.cpp --gpu rtx-3060 --vary ngl\n"
      "  memplan fit model.gguf --engine llama.cpp --cpu --vary ctx\n"
      "  memplan fit qwen3-30b-a3b --engine llama.cpp --gpu rtx-4070 -p int4 --seq 16384 --vary n_cpu_moe");
  cmd->footer("Only the common options are listed: 'memplan help options [WORKLOAD]' lists them all.");
  cmd->add_option("MODEL", args->model,
                  "Built-in name, .yaml, config.json, snapshot dir, .safetensors, .gguf or Hub id ORG/NAME[@REV]")
      ->required();
  add_as_option(*cmd, args->as);
  add_device_options(*cmd, args->device, /*gpu_required=*/false, /*probe=*/false, /*capacity=*/true);
  add_cpu_option(*cmd, args->device);
  cmd->add_option("--vary", args->vary,
                  "batch, seq, or chunk: --streaming-chunk for -w streaming_extraction, else --attention-chunk\n"
                  "for --attention chunked|causal_linear_chunked (or name one: streaming_chunk, attention_chunk);\n"
                  "with --engine llama.cpp ngl (most layers on the GPU), ctx (longest -c) or n_cpu_moe\n"
                  "(fewest layers whose experts stay in host memory)")
      ->required();
  add_plan_options(*cmd, args->options, named);
  add_output_options(*cmd, args->output);
  cmd->callback([args, &exit_code] { exit_code = run_fit(*args); });
}

}  // namespace memplan::cli
