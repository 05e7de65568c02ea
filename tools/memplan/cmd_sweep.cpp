// memplan sweep MODEL... : one workload over a grid of models x workloads x precisions x
// batch sizes x sequence lengths (plan/sweep.hpp), as a table, CSV, JSON or an SVG chart.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iostream>

#include "commands.hpp"
#include "memplan/core/error.hpp"
#include "memplan/frontend/requests.hpp"
#include "memplan/io/atomic_file.hpp"
#include "memplan/io/file_checks.hpp"
#include "plan_options.hpp"
#include "progress.hpp"

namespace memplan::cli {

namespace {

struct SweepArgs {
  std::vector<std::string> models;
  std::string as;  // --as, for every model
  std::vector<std::string> workloads{"inference"};
  std::vector<std::string> batches{"1"};
  std::vector<std::string> seqs;  // empty: min(2048, the shortest context of the models)
  std::vector<std::string> precisions{"auto"};
  std::string gpu;
  std::string svg;
  bool smallest_gpu = false;
  PlanOptions options;  // the table's, less the axes above
  OutputOptions output;
};

int run_sweep(const SweepArgs& a) {
  const PrintOptions print_options = a.output.print_options<SweepReport>();
  if (!a.svg.empty()) require_output_target(a.svg, a.models);  // before any work
  const PlanSettings settings = plan_settings(a.options);
  SweepRequest request;
  for (const std::string& ref : a.models) request.models.push_back(find_model(ref, say_fetch, a.as));
  request.workloads = a.workloads;
  request.batches = a.batches;
  request.seqs = a.seqs;
  request.precisions = a.precisions;
  request.gpu = a.gpu;
  request.smallest_gpu = a.smallest_gpu;
  std::size_t points = request.models.size();
  for (const std::size_t n :
       {a.workloads.size(), a.precisions.size(), a.batches.size(), std::max<std::size_t>(1, a.seqs.size())}) {
    points *= n;
  }
  SweepReport report;
  {
    Progress progress("sweeping plans", points);
    report = sweep_report(request, settings, [&] { progress.step(); });
  }
  if (!a.svg.empty()) {
    write_file_atomically(a.svg, sweep_svg(report, print_options.units), a.models);
    spdlog::debug("wrote {}", a.svg);
  }
  print(report, print_options, std::cout);
  return 0;
}

}  // namespace

void define_sweep(CLI::App& self, int& exit_code, const NamedOptions& named) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = &self;
  cmd->description(
      "Estimate a grid of plans: models x workloads x precisions x batch sizes x sequence lengths.\n"
      "Each row: the total, the allocated tensors (total less CUDA context and allocator overhead),\n"
      "the largest component and, with --gpu, whether it fits under memory x --threshold.\n"
      "Lists are comma-separated. A point that cannot be run (a sequence longer than a model's\n"
      "learned positions) is reported in a note, not an error.\n"
      "Examples:\n"
      "  memplan sweep llama-2-7b mistral-7b-v0.1 --batch 1,2,4,8 --seq 512,2048 --precision fp16,int4 --gpu rtx-4090\n"
      "  memplan sweep llama-2-7b --workload inference,training --seq 512,1024,2048,4096 --svg sweep.svg\n"
      "  memplan sweep pythia-2.8b llama-2-7b llama-2-13b llama-2-70b -w extraction --seq 2048 \\\n"
      "      --precision fp32,fp16,bf16 --filter 'blocks.*.hook_resid_post' --smallest-gpu --units si   (TheLoom's "
      "table)\n"
      "  memplan sweep gpt2 gpt2-xl pythia-6.9b -w extraction --seq 1024 -p fp32,bf16 --smallest-gpu  (the "
      "interpretability compute guide)\n"
      "  memplan sweep gpt2 --batch 1,8,64 --seq 256,1024 --format csv > sweep.csv");
  cmd->add_option("MODEL", args->models,
                  "Models, each as estimate takes one: a built-in name, a file, a snapshot directory or a Hub id")
      ->required();
  add_as_option(*cmd, args->as);
  cmd->add_option("-w,--workload", args->workloads, "Workloads: inference, generation, extraction, training, ...")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("-b,--batch", args->batches, "Batch sizes")->delimiter(',')->capture_default_str();
  cmd->add_option("-s,--seq", args->seqs, "Sequence lengths (default: 2048, or the shortest context if shorter)")
      ->delimiter(',');
  cmd->add_option("-p,--precision", args->precisions,
                  "Weight precisions (auto resolves for --gpu; see 'estimate --help')")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("-g,--gpu", args->gpu, "Say whether each plan fits on this GPU (see 'memplan gpus')");
  cmd->add_flag("--smallest-gpu", args->smallest_gpu,
                "Add a column: the GPU of the table with the least memory that holds each plan under\n"
                "memory x --threshold (its precision resolved for that GPU)");
  cmd->add_option("--svg", args->svg,
                  "Also write an SVG chart here: total (log scale) against sequence length (or batch), one line\n"
                  "per model x workload x precision x batch, the GPU's memory and the limit as lines (atomically)");
  add_plan_options(*cmd, args->options, named, {"kind", "batch_size", "seq_len", "precision"});
  cmd->add_option(
         "--format", args->output.format,
         "Output: table (for people), csv (exact bytes, one row per plan) or json (exact bytes, schema_version 1)")
      ->capture_default_str();
  cmd->add_option("--units", args->output.units, "Sizes in iec (KiB, MiB, GiB: powers of 1024) or si (KB, MB, GB)")
      ->capture_default_str();
  cmd->callback([args, &exit_code] { exit_code = run_sweep(*args); });
}

}  // namespace memplan::cli
