// memplan estimate MODEL: the memory a workload needs on a model, by component.
#include <spdlog/spdlog.h>

#include <iostream>

#include "commands.hpp"
#include "memplan/frontend/requests.hpp"
#include "plan_options.hpp"
#include "progress.hpp"

namespace memplan::cli {

namespace {

struct EstimateArgs {
  std::string model{default_model_name};
  std::string as;  // --as
  DeviceArgs device;
  PlanOptions options;  // the option table's (plan/options.hpp)
  OutputOptions output;
};

int run_estimate(const EstimateArgs& args) {
  const PrintOptions print_options = args.output.print_options<EstimateReport>();
  const ModelEntry entry = find_model(args.model, say_fetch, args.as);
  spdlog::debug("model {} from {}", entry.spec.name, entry.origin);
  print(estimate_report(entry, plan_settings(args.options), args.device), print_options, std::cout);
  return 0;
}

}  // namespace

void define_estimate(CLI::App& cmd, int& exit_code, const NamedOptions& named) {
  auto args = std::make_shared<EstimateArgs>();
  cmd.description(
      "Estimate the memory a workload needs on a model, and where it goes.\n"
      "MODEL is a built-in name (see 'memplan models'), a model .yaml, a Hugging Face config.json,\n"
      "a snapshot directory or .safetensors file (weights priced from their headers), a .gguf, or\n"
      "a Hub id ORG/NAME[@REV] (the HF cache first, then config and headers only; docs/hub.md).\n"
      "Workloads: weights (parameters only), inference (one forward pass, KV cache kept),\n"
      "generation (prefill + --new-tokens decode steps), extraction (inference that caches\n"
      "TransformerLens hooks: --filter, --layers, --pos-slice ...), streaming_extraction\n"
      "(--streaming-chunk tokens at a time), training, sae and the analyses.\n"
      "Quantised precisions (fp8, int8, int4, nf4, fp4) apply to the linear layers only;\n"
      "embeddings, norms, biases and the LM head stay in --unquantized (fp16), as\n"
      "bitsandbytes, GPTQ and AWQ do.\n"
      "With --gpu the verdict is one of: fits; fits, but above --threshold (default 0.85) of\n"
      "the GPU's memory; does not fit.\n"
      "Examples:\n"
      "  memplan estimate Qwen/Qwen2.5-7B-Instruct --gpu rtx-4090\n"
      "  memplan estimate llama-2-7b --workload extraction --seq 2048 --precision fp16\n"
      "  memplan estimate gpt2 -w extraction --filter 'blocks.*.hook_resid_post' --layers 0,5,11\n"
      "  memplan estimate mistral-7b-v0.1 -w generation --seq 4096 --new-tokens 512 --gpu a10\n"
      "  memplan estimate llama-2-70b -w training --tp 8 --pp 2 --dp 4 --zero 1 --gpu h100");
  cmd.footer("Only the common options are listed: 'memplan help options [WORKLOAD]' lists all " +
             std::to_string(plan_options().size()) + " plan options and the workloads each applies to.");
  cmd.add_option("MODEL", args->model,
                 "Built-in name, .yaml, config.json, snapshot dir, .safetensors, .gguf or Hub id ORG/NAME[@REV]")
      ->capture_default_str();
  add_as_option(cmd, args->as);
  add_device_options(cmd, args->device, /*gpu_required=*/false, /*probe=*/true, /*capacity=*/true);
  add_plan_options(cmd, args->options, named);
  add_output_options(cmd, args->output);
  cmd.add_flag("--explain", args->output.explain, "Show the arithmetic behind each row");
  cmd.callback([args, &exit_code] { exit_code = run_estimate(*args); });
}

}  // namespace memplan::cli
