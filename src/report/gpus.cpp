// memplan gpus: table and JSON.
#include "memplan/report/gpus.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common.hpp"

namespace memplan {

namespace {

using detail::ordered_json;

std::string tflops_of(const GpuSpec& g, Format format) {
  for (const auto& [f, value] : g.dense_tflops) {
    if (f == format) return fmt::format("{:g}", value);
  }
  return "-";
}

void table(const GpusReport& r, const PrintOptions& options, std::ostream& out) {
  std::size_t name_width = 4;
  for (const GpuSpec& g : r.gpus) name_width = std::max(name_width, g.name.size());
  out << fmt::format("{:<{}}  {:>11}  {:>11}  {:>4}  {:>9}  {:>9}  {:>9}  {:>9}  {}\n", "name", name_width, "memory",
                     "CUDA total", "cc", "bandwidth", "fp16 TF", "bf16 TF", "fp8 TF", "display name");
  for (const GpuSpec& g : r.gpus) {
    out << fmt::format("{:<{}}  {:>11}  {:>11}  {:>4}  {:>9}  {:>9}  {:>9}  {:>9}  {}\n", g.name, name_width,
                       format_bytes(g.memory, options.units),
                       g.cuda_memory.count() != 0 ? format_bytes(g.cuda_memory, options.units) : "-",
                       to_string(g.compute_capability), fmt::format("{:g} GB/s", g.bandwidth_gbs),
                       tflops_of(g, Format::fp16), tflops_of(g, Format::bf16), tflops_of(g, Format::fp8_e4m3),
                       g.display);
  }
  out << fmt::format(
      "\n{} GPUs; memory as the driver reports it (nvidia-smi); CUDA total: what a process can use, measured, and what "
      "plans are held against where given (else the driver's figure); TF = peak dense tensor TFLOPS\n",
      r.gpus.size());
}

void json(const GpusReport& r, std::ostream& out) {
  ordered_json list = ordered_json::array();
  for (const GpuSpec& g : r.gpus) {
    ordered_json paths = ordered_json::array();
    for (const Format f : g.tensor_paths) paths.push_back(to_string(f));
    ordered_json tflops = ordered_json::object();
    for (const auto& [format, value] : g.dense_tflops) tflops[to_string(format)] = value;
    list.push_back({{"name", g.name},
                    {"aliases", g.aliases},
                    {"display", g.display},
                    {"memory_bytes", g.memory.count()},
                    {"cuda_memory_bytes",
                     g.cuda_memory.count() != 0 ? ordered_json(g.cuda_memory.count()) : ordered_json(nullptr)},
                    {"compute_capability", to_string(g.compute_capability)},
                    {"tensor_paths", paths},
                    {"bandwidth_gbs", g.bandwidth_gbs},
                    {"dense_tflops", tflops},
                    {"source", g.source},
                    {"memory_source", g.memory_source},
                    {"cuda_memory_source", g.cuda_memory_source},
                    {"cuda_context_bytes",
                     g.cuda_context.count() != 0 ? ordered_json(g.cuda_context.count()) : ordered_json(nullptr)},
                    {"cuda_context_source", g.cuda_context_source}});
  }
  detail::emit({{"schema_version", json_schema_version}, {"gpus", list}}, out);
}

}  // namespace

void print(const GpusReport& report, const PrintOptions& options, std::ostream& out) {
  require_format<GpusReport>(options.format);
  if (options.format == OutputFormat::json) return json(report, out);
  table(report, options, out);
}

}  // namespace memplan
