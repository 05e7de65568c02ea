// memplan sweep MODEL... : one workload over a grid of models x workloads x precisions x
// batch sizes x sequence lengths (plan/sweep.hpp), as a table, CSV, JSON or an SVG chart.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iostream>

#include "commands.hpp"
#include "memplan/core/error.hpp"
#include "memplan/io/atomic_file.hpp"
#include "memplan/io/gpu_table.hpp"
#include "memplan/io/model_file.hpp"
#include "memplan/plan/fit.hpp"
#include "memplan/plan/recommend.hpp"  // gpu_options
#include "memplan/plan/sweep.hpp"
#include "memplan/resolve/resolver.hpp"
#include "workload_options.hpp"

namespace memplan::cli {

namespace {

struct SweepArgs {
  std::vector<std::string> models;
  std::vector<std::string> workloads{"inference"};
  std::vector<std::uint64_t> batches{1};
  std::vector<std::uint64_t> seqs;  // empty: min(2048, the shortest context of the models)
  std::vector<std::string> precisions{"auto"};
  std::string policy = "pytorch";
  std::string gpu;
  double threshold = 0.85;
  std::string svg;
  bool smallest_gpu = false;
  WorkloadArgs knobs;
  OutputOptions output;
};

int run_sweep(const SweepArgs& a, CLI::App& cmd) {
  const auto printer = a.output.printer();
  const Units units = parse_units(a.output.units);
  if (!(a.threshold > 0.0 && a.threshold <= 1.0)) {
    throw Error(ErrorKind::invalid_input, "--threshold must be a fraction in (0, 1]", "threshold");
  }
  std::vector<ModelSpec> models;
  SweepReport report;
  for (const std::string& ref : a.models) models.push_back(find_model(ref).spec);

  SweepAxes axes;
  axes.workloads.clear();
  for (const std::string& w : a.workloads) axes.workloads.push_back(parse_workload_kind(w));
  axes.batches = a.batches;
  axes.seqs = a.seqs;
  if (axes.seqs.empty()) {
    std::uint64_t shortest = 2048;
    for (const ModelSpec& m : models) shortest = std::min(shortest, m.max_seq_len);
    axes.seqs = {shortest};
  }

  std::optional<GpuSpec> gpu;
  if (!a.gpu.empty()) gpu = find_gpu(a.gpu, builtin_gpus());
  // Each requested precision resolved once: for the GPU, or auto as bf16 without one.
  axes.precisions.clear();
  find_policy(a.policy);
  for (const std::string& p : a.precisions) {
    if (gpu) {
      ResolveRequest q;
      q.precision = p;
      q.policy = a.policy;
      q.device = device_capability(*gpu);
      const Resolution res = resolve_precision(q);
      axes.precisions.push_back(res.precision);
      if (p == "auto") report.notes.push_back("auto on " + gpu->name + ": " + to_string(res.precision) + " (" + res.reason + ")");
      for (const std::string& w : res.warnings) report.notes.push_back(w);
    } else if (p == "auto") {
      axes.precisions.push_back(precisions::bf16);
      report.notes.push_back("auto with no --gpu: bf16 (assumes compute capability 8.0+)");
    } else {
      axes.precisions.push_back(parse_precision(p));
    }
  }

  Workload base = build_workload(a.knobs, models.front(), cmd);
  for (const WorkloadKind kind : axes.workloads) {
    if (kind == WorkloadKind::hessian || kind == WorkloadKind::full_fisher) base.analysis.largest_device = largest_builtin_gpu();
  }
  std::optional<Bytes> limit;
  if (gpu) {
    base.overhead.hopper_or_newer = gpu->compute_capability >= ComputeCapability{9, 0};
    limit = budget_limit(gpu->memory, a.threshold);
  }
  report.models = models.size();
  report.workloads = axes.workloads.size();
  report.precisions = axes.precisions.size();
  report.batches = axes.batches.size();
  report.seqs = axes.seqs.size();
  report.device = gpu;
  report.threshold = a.threshold;
  report.limit = limit;
  report.smallest_gpu = a.smallest_gpu;
  const std::vector<GpuSpec> table = a.smallest_gpu ? builtin_gpus() : std::vector<GpuSpec>{};
  bool any = false;
  for (const SweepRow& row : run_sweep(models, base, axes, limit)) {
    SweepReportRow out;
    out.model = models[row.point.model].name;
    out.workload = to_string(row.point.workload);
    out.precision = to_string(row.point.precision);
    out.batch = row.point.batch;
    out.seq_len = row.point.seq;
    out.total = row.total;
    out.allocated = row.allocated;
    out.largest = row.largest;
    out.largest_bytes = row.largest_bytes;
    out.fits = row.fits;
    if (a.smallest_gpu && row.total) {
      // The point's precision on each GPU of the table (bf16 runs as fp16 where bf16 does not).
      const Workload w = workload_at(base, row.point, axes);
      for (const GpuOption& g : gpu_options(models[row.point.model], w, to_string(row.point.precision), a.policy, table,
                                            a.threshold)) {
        if (g.fits) {
          out.smallest_gpu = g.gpu;
          if (g.precision != row.point.precision) out.smallest_gpu_precision = to_string(g.precision);
          break;
        }
      }
    }
    out.notes = row.notes;
    out.error = row.error;
    any = any || row.total.has_value();
    report.rows.push_back(std::move(out));
  }
  if (!any) throw Error(ErrorKind::invalid_input, "no point of the sweep can be estimated: " + report.rows.front().error);
  if (!a.svg.empty()) {
    write_file_atomically(a.svg, sweep_svg(report, units));
    spdlog::debug("wrote {}", a.svg);
  }
  printer->sweep(report, std::cout);
  return 0;
}

}  // namespace

void add_sweep(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Estimate a grid of plans: models x workloads x precisions x batch sizes x sequence lengths.\n"
      "Each row: the total, the allocated tensors (total less CUDA context and allocator overhead),\n"
      "the largest component and, with --gpu, whether it fits under memory x --threshold.\n"
      "Lists are comma-separated. A point that cannot be run (a sequence longer than a model's\n"
      "learned positions) is reported in a note, not an error.\n"
      "Examples:\n"
      "  memplan sweep llama-2-7b mistral-7b-v0.1 --batch 1,2,4,8 --seq 512,2048 --precision fp16,int4 --gpu rtx-4090\n"
      "  memplan sweep llama-2-7b --workload inference,training --seq 512,1024,2048,4096 --svg sweep.svg\n"
      "  memplan sweep pythia-2.8b llama-2-7b llama-2-13b llama-2-70b -w extraction --seq 2048 \\\n"
      "      --precision fp32,fp16,bf16 --filter 'blocks.*.hook_resid_post' --smallest-gpu --units si   (001's table)\n"
      "  memplan sweep gpt2 gpt2-xl pythia-6.9b -w extraction --seq 1024 -p fp32,bf16 --smallest-gpu  (004's guide)\n"
      "  memplan sweep gpt2 --batch 1,8,64 --seq 256,1024 --format csv > sweep.csv");
  cmd->add_option("MODEL", args->models, "Built-in model names or paths to .yaml model files")->required();
  cmd->add_option("-w,--workload", args->workloads, "Workloads: inference, generation, extraction, training, ...")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("-b,--batch", args->batches, "Batch sizes")->delimiter(',')->capture_default_str();
  cmd->add_option("-s,--seq", args->seqs, "Sequence lengths (default: 2048, or the shortest context if shorter)")
      ->delimiter(',');
  cmd->add_option("-p,--precision", args->precisions, "Weight precisions (auto resolves for --gpu; see 'estimate --help')")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--policy", args->policy, "Whose precision rules: pytorch or vllm")->capture_default_str();
  cmd->add_option("-g,--gpu", args->gpu, "Say whether each plan fits on this GPU (see 'memplan gpus')");
  cmd->add_option("--threshold", args->threshold, "Share of the GPU's memory a plan may use, in (0, 1]")->capture_default_str();
  cmd->add_flag("--smallest-gpu", args->smallest_gpu,
                "Add a column: the GPU of the table with the least memory that holds each plan under\n"
                "memory x --threshold (its precision resolved for that GPU)");
  cmd->add_option("--svg", args->svg,
                  "Also write an SVG chart here: total (log scale) against sequence length (or batch), one line\n"
                  "per model x workload x precision x batch, the GPU's memory and the limit as lines (atomically)");
  add_workload_options(*cmd, args->knobs);
  cmd->add_option("--format", args->output.format,
                  "Output: table (for people), csv (exact bytes, one row per plan) or json (exact bytes, schema_version 1)")
      ->capture_default_str();
  cmd->add_option("--units", args->output.units, "Sizes in iec (KiB, MiB, GiB: powers of 1024) or si (KB, MB, GB)")
      ->capture_default_str();
  args->output.csv = true;
  cmd->callback([args, cmd, &exit_code] { exit_code = run_sweep(*args, *cmd); });
}

}  // namespace memplan::cli
