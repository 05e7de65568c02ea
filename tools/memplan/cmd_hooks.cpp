// memplan hooks MODEL: the hook points a TransformerLens-style model exposes, with shapes
// and bytes, and what a selection of them costs beside the full cache.
#include <iostream>

#include "commands.hpp"
#include "memplan/frontend/requests.hpp"
#include "plan_options.hpp"
#include "progress.hpp"
#include "validators.hpp"

namespace memplan::cli {

namespace {

struct HooksArgs {
  std::string model{default_model_name};
  std::string as;  // --as
  std::uint64_t batch = 1;
  std::uint64_t seq = 0;
  std::string precision = "bf16";
  std::vector<std::string> filter;
  std::string layers;
  std::uint64_t pos_slice = 0;
  bool remove_batch_dim = false;
  bool all = false;
  OutputOptions output;
};

void run_hooks(const HooksArgs& a) {
  const PrintOptions print_options = a.output.print_options<HooksReport>();
  const ModelEntry entry = find_model(a.model, say_fetch, a.as);
  HooksRequest request;
  request.batch = a.batch;
  request.seq = a.seq;
  request.precision = a.precision;
  request.filter = split_hook_filters(a.filter);
  request.layers = a.layers;
  request.pos_slice = a.pos_slice;
  request.remove_batch_dim = a.remove_batch_dim;
  request.all = a.all;
  const HooksReport r = hooks_report(entry, request);
  print(r, print_options, std::cout);
}

}  // namespace

void define_hooks(CLI::App& self, int& exit_code, const NamedOptions& /*named*/) {
  auto args = std::make_shared<HooksArgs>();
  CLI::App* cmd = &self;
  cmd->description(
      "List a model's hook points (TransformerLens names) with shapes and bytes.\n"
      "Rows group the same hook across blocks (blocks.*.hook_resid_post); --all lists each.\n"
      "Examples:\n"
      "  memplan hooks gpt2 --seq 1024 --precision fp32\n"
      "  memplan hooks llama-2-7b --filter 'blocks.*.hook_resid_post' --layers 0-3");
  cmd->add_option("MODEL", args->model,
                  "Built-in name, .yaml, config.json, snapshot dir, .safetensors, .gguf or Hub id ORG/NAME[@REV]")
      ->capture_default_str();
  add_as_option(*cmd, args->as);
  cmd->add_option("-b,--batch", args->batch, "Batch size")->capture_default_str()->check(count_range());
  cmd->add_option("-s,--seq", args->seq, "Tokens per sequence (default: 2048, or the model's context if shorter)")
      ->check(count_range());
  cmd->add_option("-p,--precision", args->precision, "Activation dtype: fp32, bf16, fp16")->capture_default_str();
  cmd->add_option("--filter", args->filter, "Hook names or globs to select; repeat or comma-separate")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--layers", args->layers, "Only these blocks: 3, 0,5,11 or 0-11");
  cmd->add_option("--pos-slice", args->pos_slice, "Only the last N positions")->check(count_range());
  cmd->add_flag("--remove-batch-dim", args->remove_batch_dim, "Batch element 0 only");
  cmd->add_flag("--all", args->all, "One row per hook instead of per hook kind");
  add_output_options(*cmd, args->output);
  cmd->callback([args, &exit_code] {
    run_hooks(*args);
    exit_code = 0;
  });
}

}  // namespace memplan::cli
