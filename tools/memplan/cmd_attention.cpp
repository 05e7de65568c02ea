// memplan attention: what each attention variant holds at its peak, over sequence lengths,
// beside the attention profiling notebook's theoretical formulas.
#include <iostream>

#include "commands.hpp"
#include "memplan/core/error.hpp"
#include "memplan/estimators/attention.hpp"
#include "memplan/report/attention.hpp"
#include "validators.hpp"

namespace memplan::cli {

namespace {

struct AttentionArgs {
  std::uint64_t batch = 4;
  std::uint64_t heads = 8;
  std::uint64_t head_dim = 64;
  std::vector<std::uint64_t> seq = {512, 1024, 2048, 4096, 8192};
  std::string dtype = "fp16";
  std::uint64_t chunk = 512;
  std::vector<std::string> variants;
  bool no_inputs = false;
  OutputOptions output;
};

void run_attention(const AttentionArgs& a) {
  const PrintOptions print_options = a.output.print_options<AttentionTableReport>();
  const Precision dtype = parse_precision(a.dtype);
  if (is_quantized(dtype)) {
    throw Error(ErrorKind::invalid_input, "--dtype must be fp32, bf16 or fp16, got '" + a.dtype + "'", "dtype");
  }
  std::vector<AttentionVariant> variants;
  for (const std::string& v : a.variants) variants.push_back(parse_attention_variant(v));
  if (variants.empty()) variants = all_attention_variants();

  AttentionTableReport r{a.batch, a.heads, a.head_dim, a.chunk, to_string(dtype), !a.no_inputs, a.seq, {}};
  AttentionShape shape;
  shape.batch = a.batch;
  shape.heads = a.heads;
  shape.head_dim = a.head_dim;
  shape.dtype = dtype;
  shape.chunk = a.chunk;
  shape.include_inputs = !a.no_inputs;
  for (const AttentionVariant v : variants) {
    AttentionTableRow row{to_string(v), {}};
    for (const std::uint64_t n : a.seq) {
      shape.seq = n;
      row.bytes.push_back(estimate_attention(v, shape).total());
    }
    r.rows.push_back(std::move(row));
  }
  for (const char* name : {"standard_peak", "linear_bidir_peak", "linear_causal_peak"}) {
    AttentionTableRow row{std::string("notebook theory: ") + name, {}};
    for (const std::uint64_t n : a.seq) {
      shape.seq = n;
      row.bytes.push_back(notebook_attention_theory(shape).find(name)->bytes);
    }
    r.rows.push_back(std::move(row));
  }
  print(r, print_options, std::cout);
}

}  // namespace

void define_attention(CLI::App& self, int& exit_code, const NamedOptions& /*named*/) {
  auto args = std::make_shared<AttentionArgs>();
  CLI::App* cmd = &self;
  cmd->description(
      "Tabulate the peak memory of one attention call for each variant over sequence lengths,\n"
      "beside the attention notebook's theoretical formulas.\n"
      "Example (the notebook's shapes): memplan attention --batch 4 --heads 8 --head-dim 64 --units si");
  cmd->add_option("-b,--batch", args->batch, "B")->capture_default_str()->check(count_range());
  cmd->add_option("--heads", args->heads, "H")->capture_default_str()->check(count_range());
  cmd->add_option("--head-dim", args->head_dim, "D")->capture_default_str()->check(count_range());
  cmd->add_option("-s,--seq", args->seq, "Sequence lengths N, comma-separated")
      ->delimiter(',')
      ->capture_default_str()
      ->check(count_range());
  cmd->add_option("--dtype", args->dtype, "fp32, bf16 or fp16")->capture_default_str();
  cmd->add_option("--chunk", args->chunk, "Chunk for the chunked variants")
      ->capture_default_str()
      ->check(count_range());
  cmd->add_option("--variant", args->variants,
                  "Variants to show (default all): eager, sdpa, chunked, linear, causal_linear_naive,\n"
                  "causal_linear_chunked, recurrent")
      ->delimiter(',');
  cmd->add_flag("--no-inputs", args->no_inputs, "Leave q, k, v out of each total");
  add_output_options(*cmd, args->output);
  cmd->callback([args, &exit_code] {
    run_attention(*args);
    exit_code = 0;
  });
}

}  // namespace memplan::cli
