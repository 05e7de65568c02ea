// memplan hooks MODEL: the hook points a TransformerLens-style model exposes, with shapes
// and bytes, and what a selection of them costs beside the full cache.
#include <iostream>
#include <map>

#include "commands.hpp"
#include "memplan/estimators/activations.hpp"
#include "memplan/io/model_file.hpp"
#include "memplan/report/hooks.hpp"
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
  ActivationCacheOptions o;
  o.batch = a.batch;
  o.seq = a.seq ? a.seq : std::min<std::uint64_t>(2048, entry.spec.max_seq_len);
  o.precision = parse_precision(a.precision);
  o.filter = split_hook_filters(a.filter);
  if (!a.layers.empty()) o.layers = parse_layer_selection(a.layers);
  o.pos_slice = a.pos_slice;
  o.remove_batch_dim = a.remove_batch_dim;
  const Breakdown selected = estimate_activation_cache(entry.spec, o);

  HooksReport r;
  r.model = entry.spec.name;
  r.batch = o.batch;
  r.seq_len = o.seq;
  r.dtype = to_string(o.precision);
  std::map<std::string, std::size_t> row_of_kind;
  for (const Hook& h : selected_hooks(entry.spec, o)) {
    const Bytes bytes = hook_bytes(h, o);
    const std::string key = a.all ? h.name : h.kind;
    auto [it, fresh] = row_of_kind.emplace(key, r.rows.size());
    if (fresh) r.rows.push_back({key, 0, hook_shape_text(h, o), bytes, Bytes(0)});
    HookRow& row = r.rows[it->second];
    ++row.count;
    row.bytes = row.bytes.plus(bytes, "hook bytes");
    ++r.selected_hooks;
  }
  r.selected_bytes = selected.total();
  r.all_hooks = model_hooks(entry.spec, o.batch, o.seq).size();
  r.all_bytes = selected.alternatives.empty() ? r.selected_bytes : selected.alternatives.front().item.bytes;
  r.note = transformer_lens_gap(entry.spec);
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
