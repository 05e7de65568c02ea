// memplan budget-table: TensorScope's "Memory Budget Table" (7B and 70B on an 80 GB GPU) regenerated
// from memplan's own formulas, each row beside the document's figures.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "commands.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/text.hpp"
#include "memplan/io/gpu_table.hpp"
#include "memplan/io/model_file.hpp"
#include "memplan/plan/workload.hpp"
#include "memplan/report/budget_table.hpp"
#include "plan_options.hpp"
#include "progress.hpp"
#include "validators.hpp"

namespace memplan::cli {

namespace {

enum class Variant { plain, compressed };

// One row of TensorScope's tables: the metric, its batch and sequence, and the document's figures.
struct SeedRow {
  const char* metric;
  WorkloadKind kind;
  Variant variant;
  std::uint64_t batch;  // 0 = "Any"
  std::uint64_t seq;
  const char* memory;
  const char* time;
  const char* status;  // ok (a check mark), warn (a warning sign), no (a cross)
};

constexpr SeedRow kTable7b[] = {
    {"Fisher Spectrum", WorkloadKind::fisher_spectrum, Variant::plain, 32, 512, "~8GB", "~5min", "ok"},
    {"Lanczos (k=20)", WorkloadKind::lanczos, Variant::plain, 32, 512, "~4GB", "~2min", "ok"},
    {"Attention Analysis", WorkloadKind::attention_patterns, Variant::plain, 32, 512, "~2GB", "~1min", "ok"},
    {"Attention Analysis", WorkloadKind::attention_patterns, Variant::plain, 32, 2048, "~16GB", "~8min", "ok"},
    {"Attention Analysis", WorkloadKind::attention_patterns, Variant::plain, 32, 4096, "~64GB", "~30min", "warn"},
    {"Sample Conflicts (compressed)", WorkloadKind::sample_gradients, Variant::compressed, 32, 512, "~28GB", "~10min",
     "ok"},
    {"Sample Conflicts (uncompressed)", WorkloadKind::sample_gradients, Variant::plain, 32, 512, "~896GB", "N/A", "no"},
    {"TracIn (10 checkpoints)", WorkloadKind::tracin, Variant::plain, 32, 512, "~40GB", "~20min", "ok"},
};

constexpr SeedRow kTable70b[] = {
    {"Fisher Spectrum", WorkloadKind::fisher_spectrum, Variant::plain, 8, 512, "~60GB", "~30min", "ok"},
    {"Lanczos (k=20)", WorkloadKind::lanczos, Variant::plain, 8, 512, "~30GB", "~15min", "ok"},
    {"Attention Analysis", WorkloadKind::attention_patterns, Variant::plain, 8, 512, "~10GB", "~5min", "ok"},
    {"Attention Analysis", WorkloadKind::attention_patterns, Variant::plain, 8, 2048, "~70GB", "~40min", "warn"},
    {"Sample Conflicts (compressed)", WorkloadKind::sample_gradients, Variant::compressed, 8, 512, "~70GB", "~60min",
     "warn"},
    {"Full Hessian", WorkloadKind::hessian, Variant::plain, 0, 512, "OOM", "N/A", "no"},
};

struct BudgetArgs {
  std::string model{default_model_name};
  std::string gpu = "a100-80gb";
  std::string table = "auto";
  std::uint64_t batch = 0;
  std::string precision = "bf16";
  double zlib_ratio = 8;
  double efficiency = 0;
  OutputOptions output;
};

const char* analysis_component(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::fisher_spectrum: return "fisher_blocks";
    case WorkloadKind::lanczos: return "lanczos";
    case WorkloadKind::attention_patterns: return "attention_patterns";
    case WorkloadKind::sample_gradients: return "sample_gradients";
    case WorkloadKind::tracin: return "tracin";
    default: return "hessian";
  }
}

std::string fmt_ratio(double ratio) { return fmt::format("{:g}", ratio); }

std::string largest_parts(const Breakdown& b, Units units) {
  std::vector<const Item*> parts;
  for (const Item& c : b.components) parts.push_back(&c);
  std::sort(parts.begin(), parts.end(), [](const Item* x, const Item* y) { return x->bytes > y->bytes; });
  std::string out;
  for (std::size_t i = 0; i < parts.size() && i < 3; ++i) {
    out += (i == 0 ? "" : ", ") + parts[i]->name + " " + format_bytes(parts[i]->bytes, units);
  }
  return out;
}

int run_budget_table(const BudgetArgs& args) {
  const PrintOptions print_options = args.output.print_options<BudgetTableReport>();
  const Units units = print_options.units;
  const ModelEntry entry = find_model(args.model, say_fetch);
  const ModelSpec& spec = entry.spec;
  const std::vector<GpuSpec> table = known_gpus();
  const GpuSpec gpu = find_gpu(args.gpu, table);
  const std::uint64_t params = count_parameters(spec);
  std::string which = args.table;
  if (which == "auto") which = params > 20000000000ULL ? "70b" : "7b";
  if (which != "7b" && which != "70b") {
    throw Error(ErrorKind::invalid_input, "unknown table '" + args.table + "'; accepted: '7b', '70b' or 'auto'",
                "--table");
  }
  const auto* rows = which == "7b" ? std::begin(kTable7b) : std::begin(kTable70b);
  const auto* rows_end = which == "7b" ? std::end(kTable7b) : std::end(kTable70b);

  BudgetTableReport report;
  report.model = spec.name;
  report.params = params;
  report.gpu = gpu.name;
  report.gpu_memory = gpu.memory;
  report.seed_table = which == "7b" ? "7B" : "70B";
  for (const SeedRow* row = rows; row != rows_end; ++row) {
    BudgetRow out;
    out.metric = row->metric;
    out.seed_memory = row->memory;
    out.seed_time = row->time;
    out.seed_status = row->status;
    const std::uint64_t batch = args.batch > 0 ? args.batch : (row->batch > 0 ? row->batch : 1);
    out.batch = row->batch == 0 && args.batch == 0 ? "any" : std::to_string(batch);
    out.seq = row->batch == 0 ? "any" : std::to_string(row->seq);
    // Every other knob at its documented default.
    PlanSettings settings;
    settings.workload.kind = row->kind;
    settings.workload.batch = batch;
    settings.workload.seq_len = row->seq;
    settings.given = {"batch_size", "seq_len"};
    settings.precision = args.precision;
    settings.workload.kv_cache = false;  // an analysis pass generates nothing: use_cache=False
    DeviceChoice device = choose_device(DeviceArgs{}, settings);
    device.gpu = gpu;
    Workload w = bind(spec, settings, device).workload;
    if (args.efficiency != 0) w.analysis.efficiency = args.efficiency;
    out.workload = "--workload " + to_string(row->kind) + " --batch " + std::to_string(batch) + " --seq " +
                   std::to_string(row->seq) + " --no-kv-cache";
    if (row->variant == Variant::compressed) {
      w.analysis.sample_gradients.int8 = true;
      w.analysis.sample_gradients.zlib_ratio = args.zlib_ratio;
      out.workload += " --compress int8+zlib --zlib-ratio " + fmt_ratio(args.zlib_ratio);
    }
    if (row->kind == WorkloadKind::lanczos) out.workload += " (k 20, 100 iterations, reorthogonalised)";
    if (row->kind == WorkloadKind::tracin) out.workload += " (10 checkpoints, full fp32 gradients)";
    if (row->seq > spec.max_seq_len) {
      out.note = "beyond " + spec.name + "'s context of " + std::to_string(spec.max_seq_len) + " tokens";
      report.rows.push_back(std::move(out));
      continue;
    }
    try {
      const Breakdown b = estimate_workload(spec, w);
      out.total = b.total();
      if (const Item* a = b.find(analysis_component(row->kind))) out.analysis = a->bytes;
      out.fits = b.total() <= gpu.memory;
      out.note = out.fits ? "fits with " + format_bytes(Bytes(gpu.memory.count() - b.total().count()), units) + " left"
                          : "largest parts: " + largest_parts(b, units);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::overflow) throw;
      out.fits = false;
      if (row->kind == WorkloadKind::hessian || row->kind == WorkloadKind::full_fisher) {
        // The dense n x n matrix: its size, exact past 64 bits.
        const FullCurvatureSize size = full_curvature_size(params, w.analysis.curvature_dtype,
                                                           row->kind == WorkloadKind::hessian ? "Hessian" : "Fisher",
                                                           spec.name, w.analysis.largest_device);
        out.needed = wide_size_text(size.bytes);
        out.note = size.message;
      } else {
        out.note = std::string("the total does not fit in 64 bits: ") + e.what();  // this row's own overflow
      }
    }
    if (const auto time = estimate_workload_time(spec, w, gpu)) {
      out.seconds = time->seconds;
      if (report.time_assumption.empty()) report.time_assumption = time->assumption;
    }
    report.rows.push_back(std::move(out));
  }
  report.notes.push_back(
      "analysis: the metric's own state (what TensorScope's Memory column appears to size); total: everything "
      "the GPU holds at the job's peak (weights in " +
      args.precision + ", the forward/backward passes, the analysis, CUDA overhead)");
  report.notes.push_back(
      "docs/estimators.md (\"budget tables\") sets each row beside TensorScope's with the reason for the difference");
  print(report, print_options, std::cout);
  return 0;
}

}  // namespace

void define_budget_table(CLI::App& self, int& exit_code, const NamedOptions& /*named*/) {
  auto args = std::make_shared<BudgetArgs>();
  CLI::App* cmd = &self;
  cmd->description(
      "Regenerate TensorScope's memory budget table (7B or 70B on an 80 GB GPU) from memplan's formulas:\n"
      "per metric its batch, sequence, memory (the analysis and the whole job), estimated time and\n"
      "whether it fits, beside the document's figures.\n"
      "Examples:\n"
      "  memplan budget-table --model llama-2-7b --gpu a100-80gb\n"
      "  memplan budget-table --model llama-2-70b --gpu h100 --format json");
  cmd->add_option("-m,--model", args->model,
                  "Built-in name, .yaml, config.json, snapshot dir, .safetensors, .gguf or Hub id ORG/NAME[@REV]")
      ->capture_default_str();
  cmd->add_option("-g,--gpu", args->gpu, "GPU to plan for (see 'memplan gpus')")->capture_default_str();
  cmd->add_option("--table", args->table, "Which of TensorScope's tables: 7b, 70b or auto (by parameter count)")
      ->capture_default_str();
  cmd->add_option("-b,--batch", args->batch, "Batch for every row (default: the table's, 32 or 8)")
      ->check(count_range());
  cmd->add_option("-p,--precision", args->precision, "Weight precision")->capture_default_str();
  cmd->add_option("--zlib-ratio", args->zlib_ratio, "Assumed zlib ratio on top of int8 (TensorScope: 8, i.e. 32x)")
      ->capture_default_str()
      ->check(finite_range(1.0, 1e6));
  cmd->add_option("--efficiency", args->efficiency,
                  "Time estimates: fraction of peak throughput (default: stated per part)")
      ->check(finite_range(1e-6, 1.0));
  add_output_options(*cmd, args->output);
  cmd->callback([args, &exit_code] { exit_code = run_budget_table(*args); });
}

}  // namespace memplan::cli
