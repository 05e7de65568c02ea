// memplan sweep MODEL... : one workload over a grid of models x workloads x precisions x
// batch sizes x sequence lengths (plan/sweep.hpp), as a table, CSV, JSON or an SVG chart.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iostream>

#include "commands.hpp"
#include "memplan/core/error.hpp"
#include "memplan/io/atomic_file.hpp"
#include "memplan/io/file_checks.hpp"
#include "memplan/io/gpu_table.hpp"
#include "memplan/io/model_file.hpp"
#include "memplan/plan/fit.hpp"
#include "memplan/plan/recommend.hpp"  // gpu_options
#include "memplan/plan/sweep.hpp"
#include "memplan/report/sweep.hpp"
#include "memplan/resolve/resolver.hpp"
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

// Each value of an axis checked as the option table checks the option (`key`).
std::vector<std::uint64_t> axis_counts(const std::vector<std::string>& values, std::string_view key) {
  std::vector<std::uint64_t> out;
  for (const std::string& v : values) {
    PlanSettings scratch;
    set_option(scratch, *find_option(key), {v});
    out.push_back(key == "batch_size" ? scratch.workload.batch : scratch.workload.seq_len);
  }
  return out;
}

int run_sweep(const SweepArgs& a) {
  const PrintOptions print_options = a.output.print_options<SweepReport>();
  if (!a.svg.empty()) require_output_target(a.svg, a.models);  // before any work
  const PlanSettings settings = plan_settings(a.options);
  std::vector<ModelSpec> models;
  SweepReport report;
  for (const std::string& ref : a.models) {
    models.push_back(find_model(ref, say_fetch, a.as).spec);
    report.models.push_back(models.back().name);
    for (const std::string& w : models.back().import_warnings) report.notes.push_back(models.back().name + ": " + w);
  }

  SweepAxes axes;
  axes.workloads.clear();
  for (const std::string& w : a.workloads) axes.workloads.push_back(parse_workload_kind(w));
  axes.batches = axis_counts(a.batches, "batch_size");
  axes.seqs = axis_counts(a.seqs, "seq_len");
  if (axes.seqs.empty()) {
    std::uint64_t shortest = 2048;
    for (const ModelSpec& m : models) shortest = std::min(shortest, m.max_seq_len);
    axes.seqs = {shortest};
  }

  WorkloadMask kinds = 0;
  for (const WorkloadKind kind : axes.workloads) kinds |= workload_bit(kind);
  PlanSettings base_settings = settings;
  base_settings.workload.kind = axes.workloads.front();
  const DeviceArgs device{a.gpu};
  DeviceChoice choice = choose_device(device, base_settings);
  require_named_gpu(choice, "sweep");
  for (const WorkloadKind kind : axes.workloads) {
    PlanSettings s = base_settings;
    s.workload.kind = kind;
    if (!choice.largest) choice.largest = choose_device(DeviceArgs{}, s).largest;
  }
  const Plan plan = bind(models.front(), base_settings, choice, kinds);
  const std::optional<GpuSpec>& gpu = plan.device;
  const std::string& policy = settings.policy;
  // Each requested precision resolved once: for the GPU, or auto as bf16 without one.
  axes.precisions.clear();
  for (const std::string& p : a.precisions) {
    axes.named.push_back(p != "auto");
    if (gpu) {
      ResolveRequest q;
      q.precision = p;
      q.policy = policy;
      q.device = device_capability(*gpu);
      const Resolution res = resolve_precision(q);
      axes.precisions.push_back(res.precision);
      if (p == "auto")
        report.notes.push_back("auto on " + gpu->name + ": " + to_string(res.precision) + " (" + res.reason + ")");
      for (const std::string& w : res.warnings) report.notes.push_back(w);
    } else if (p == "auto") {
      axes.precisions.push_back(precisions::bf16);
      report.notes.push_back("auto with no --gpu: bf16 (assumes compute capability 8.0+)");
    } else {
      axes.precisions.push_back(parse_precision(p));
    }
  }

  Workload base = plan.workload;
  base.analysis.largest_device = choice.largest;
  report.axes = axes;
  report.device = gpu;
  report.threshold = plan.threshold;
  report.smallest_gpu = a.smallest_gpu;
  const std::vector<GpuSpec> table = a.smallest_gpu ? known_gpus() : std::vector<GpuSpec>{};
  bool any = false;
  std::size_t points = 1;
  for (const std::size_t n :
       {models.size(), axes.workloads.size(), axes.precisions.size(), axes.batches.size(), axes.seqs.size()}) {
    points *= n;
  }
  std::vector<SweepRow> rows;
  {
    Progress progress("sweeping plans", points);
    rows = run_sweep(models, base, axes, plan.budget, plan.threshold, [&] { progress.step(); });
  }
  for (SweepRow& row : rows) {
    SweepReportRow out;
    if (a.smallest_gpu && row.total) {
      // The point's precision on each GPU of the table (bf16 runs as fp16 where bf16 does not).
      const Workload w = workload_at(base, row.point, axes);
      for (GpuOption& g :
           gpu_options(models[row.point.model], w, to_string(row.point.precision), policy, table, plan.threshold)) {
        if (g.fits) {
          out.smallest_gpu = std::move(g);
          break;
        }
      }
    }
    any = any || row.total.has_value();
    out.row = std::move(row);
    report.rows.push_back(std::move(out));
  }
  if (!any)
    throw Error(ErrorKind::invalid_input, "no point of the sweep can be estimated: " + report.rows.front().row.error);
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
