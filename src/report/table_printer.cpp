#include <fmt/format.h>

#include <algorithm>

#include "memplan/core/text.hpp"
#include "printers.hpp"

namespace memplan::detail {

namespace {

std::string percent(Bytes part, Bytes whole) {
  if (whole.count() == 0) return "-";
  return fmt::format("{:.1f}%", 100.0 * static_cast<double>(part.count()) / static_cast<double>(whole.count()));
}

std::string tflops_of(const GpuSpec& g, Format format) {
  for (const auto& [f, value] : g.dense_tflops) {
    if (f == format) return fmt::format("{:g}", value);
  }
  return "-";
}

}  // namespace

void TablePrinter::models(const std::vector<ModelRow>& rows, std::ostream& out) const {
  std::size_t name_width = 4;
  for (const ModelRow& m : rows) name_width = std::max(name_width, m.name.size());
  out << fmt::format("{:<{}}  {:<9}  {:>16}  {:>6}  {:>6}  {:>9}  {:>7}  {:>7}\n", "name", name_width, "family",
                     "parameters", "layers", "d_model", "heads/kv", "vocab", "context");
  for (const ModelRow& m : rows) {
    out << fmt::format("{:<{}}  {:<9}  {:>16}  {:>6}  {:>7}  {:>9}  {:>7}  {:>7}\n", m.name, name_width, m.family,
                       group_digits(m.params), m.n_layers, m.d_model, fmt::format("{}/{}", m.n_heads, m.n_kv_heads),
                       m.vocab_size, m.max_seq_len);
  }
  out << fmt::format("\n{} built-in models; memplan estimate NAME for one, or pass a path to your own .yaml\n",
                     rows.size());
}

void TablePrinter::gpus(const std::vector<GpuSpec>& gpus, std::ostream& out) const {
  std::size_t name_width = 4;
  for (const GpuSpec& g : gpus) name_width = std::max(name_width, g.name.size());
  out << fmt::format("{:<{}}  {:>11}  {:>4}  {:>9}  {:>9}  {:>9}  {:>9}  {}\n", "name", name_width, "memory", "cc",
                     "bandwidth", "fp16 TF", "bf16 TF", "fp8 TF", "display name");
  for (const GpuSpec& g : gpus) {
    out << fmt::format("{:<{}}  {:>11}  {:>4}  {:>9}  {:>9}  {:>9}  {:>9}  {}\n", g.name, name_width,
                       format_bytes(g.memory, options_.units), to_string(g.compute_capability),
                       fmt::format("{:g} GB/s", g.bandwidth_gbs), tflops_of(g, Format::fp16),
                       tflops_of(g, Format::bf16), tflops_of(g, Format::fp8_e4m3), g.display);
  }
  out << fmt::format("\n{} GPUs; memory as the driver reports it; TF = peak dense tensor TFLOPS\n", gpus.size());
}

void TablePrinter::resolve(const ResolveReport& r, std::ostream& out) const {
  const Resolution& res = r.resolution;
  out << fmt::format("resolved   {}  ({})\n", to_string(res.precision), describe(res.precision));
  out << fmt::format("requested  {}\n", res.requested);
  out << fmt::format("device     {}{}\n", res.device, r.device_source.empty() ? "" : ", from " + r.device_source);
  out << fmt::format("policy     {}\n", res.policy);
  out << fmt::format("reason     {}\n\n", res.reason);
  std::size_t width = 0;
  for (const ResolveStep& step : res.chain) width = std::max(width, to_string(step.format).size());
  for (std::size_t i = 0; i < res.chain.size(); ++i) {
    const ResolveStep& step = res.chain[i];
    out << fmt::format("{:<11}{:<{}}  {:<8}  {}\n", i == 0 ? "chain" : "", to_string(step.format), width,
                       step.accepted ? "chosen" : "rejected", step.reason);
  }
  if (!res.warnings.empty()) out << '\n';
  for (const std::string& w : res.warnings) out << "warning: " << w << '\n';
}

void TablePrinter::probe(const ProbeReport& r, std::ostream& out) const {
  const auto size = [&](const std::optional<Bytes>& b) { return b ? format_bytes(*b, options_.units) : "?"; };
  out << fmt::format("status       {}{}\n", r.status, r.reason.empty() ? "" : ": " + r.reason);
  if (!r.driver_version.empty() || !r.cuda_version.empty()) {
    out << fmt::format("driver       {}{}\n", r.driver_version.empty() ? "version unknown" : r.driver_version,
                       r.cuda_version.empty() ? "" : " (CUDA " + r.cuda_version + ")");
  }
  out << fmt::format("environment  {} ({}{})", r.environment, r.environment_evidence,
                     r.environment_detail.empty() ? "" : ": " + r.environment_detail);
  for (const std::string& a : r.environment_also) out << "; also " << a;
  out << '\n';
  std::string cores = fmt::format("{} logical cores", r.logical_cores);
  if (r.physical_cores > 0) cores += fmt::format(", {} physical", r.physical_cores);
  if (r.usable_cores > 0 && r.usable_cores != r.logical_cores) cores += fmt::format(", {} usable", r.usable_cores);
  out << fmt::format("host         {}: {}; RAM {} total, {} available{}\n",
                     r.cpu_model.empty() ? "CPU model unknown" : r.cpu_model, cores, size(r.ram_total),
                     size(r.ram_available),
                     r.memory_limit ? ", container limit " + format_bytes(*r.memory_limit, options_.units) : "");

  if (!r.devices.empty()) {
    std::size_t name_width = 4;
    for (const ProbeDeviceRow& d : r.devices) name_width = std::max(name_width, d.name.size());
    const std::string row = "{:<3}  {:<{}}  {:>4}  {:>4}  {:>11}  {:>11}  {:>11}  {:>10}  {}\n";
    out << '\n'
        << fmt::format(fmt::runtime(row), "gpu", "name", name_width, "cc", "SMs", "total", "used", "free",
                       "bandwidth", "uuid");
    for (const ProbeDeviceRow& d : r.devices) {
      out << fmt::format(fmt::runtime(row), d.index, d.name, name_width, d.compute_capability, d.multiprocessors,
                         format_bytes(d.total_memory, options_.units), size(d.used_memory), size(d.free_memory),
                         d.bandwidth_gbs > 0 ? fmt::format("{:.0f} GB/s", d.bandwidth_gbs) : "?", d.uuid);
      for (const ProbeProcessRow& p : d.processes) {
        out << fmt::format("     pid {} ({}{}): {}\n", p.pid, p.name.empty() ? "" : p.name + ", ", p.type,
                           size(p.used_memory));
      }
      for (const std::string& n : d.notes) out << fmt::format("     note: {}\n", n);
    }
  }
  if (!r.notes.empty() || !r.warnings.empty()) out << '\n';
  for (const std::string& w : r.warnings) out << "warning: " << w << '\n';
  for (const std::string& n : r.notes) out << "note: " << n << '\n';
  out << (options_.units == Units::iec ? "\nsizes in IEC units (1 GiB = 1024^3 bytes); `format` json gives exact bytes\n"
                                       : "\nsizes in SI units (1 GB = 1000^3 bytes); `format` json gives exact bytes\n");
}

}  // namespace memplan::detail

// ------------------------- memplan measure / calibrate (issue 6) -------------------------
namespace memplan::detail {

namespace {

std::string measure_time(double seconds) {
  if (seconds <= 0) return "-";
  if (seconds < 1e-3) return fmt::format("{:.1f} us", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.2f} ms", seconds * 1e3);
  return fmt::format("{:.2f} s", seconds);
}

}  // namespace

void TablePrinter::measurement(const MeasureReport& r, std::ostream& out) const {
  out << fmt::format("measure    {} on {}, {}, {}, {} repeat{}\n", r.kernel, r.device, r.dtype, r.parameters,
                     r.repeats, r.repeats == 1 ? "" : "s");
  out << fmt::format("method     {}\n\n", r.method);
  std::size_t variant_width = 7;
  for (const MeasureRow& row : r.rows) variant_width = std::max(variant_width, row.variant.size());
  const std::string header = fmt::format("{:<{}}  {:>8}  {:>11}  {:>11}  {:>6}  {:>10}  {:>10}", "variant",
                                         variant_width, r.size_label, "estimate", "measured", "ratio", "time best",
                                         "median");
  out << header << '\n';
  std::vector<std::string> notes;
  for (const MeasureRow& row : r.rows) {
    const std::string measured = row.measured ? format_bytes(*row.measured, options_.units) : "-";
    const std::string ratio = row.measured && row.estimate.count()
                                  ? fmt::format("{:.3f}", static_cast<double>(row.measured->count()) /
                                                              static_cast<double>(row.estimate.count()))
                                  : "-";
    out << fmt::format("{:<{}}  {:>8}  {:>11}  {:>11}  {:>6}  {:>10}  {:>10}\n", row.variant, variant_width, row.size,
                       format_bytes(row.estimate, options_.units), measured, ratio, measure_time(row.seconds_best),
                       measure_time(row.seconds_median));
    if (!row.note.empty()) notes.push_back(fmt::format("{} {}={}: {}", row.variant, r.size_label, row.size, row.note));
  }
  if (!notes.empty() || !r.notes.empty()) out << '\n';
  for (const std::string& n : r.notes) out << "note: " << n << '\n';
  for (const std::string& n : notes) out << "note: " << n << '\n';
  out << "\nratio = measured / estimate; "
      << (options_.units == Units::iec ? "sizes in IEC units (1 MiB = 1024^2 bytes)" : "sizes in SI units (1 MB = 1000^2 bytes)")
      << "; `format` json gives exact bytes\n";
}

void TablePrinter::calibration(const CalibrationReport& r, std::ostream& out) const {
  if (r.calibrated) {
    out << fmt::format("calibrated {} (CUDA driver {})\n\n", r.gpu, r.driver);
  } else {
    out << fmt::format("cannot calibrate: {}\nestimates use the documented defaults (docs/accuracy.md):\n\n", r.reason);
  }
  std::size_t name_width = 6;
  for (const CalibrationRow& f : r.figures) name_width = std::max(name_width, f.name.size());
  out << fmt::format("{:<{}}  {:>11}  {:<8}  {}\n", "figure", name_width, "bytes", "origin", "how");
  for (const CalibrationRow& f : r.figures) {
    out << fmt::format("{:<{}}  {:>11}  {:<8}  {}\n", f.name, name_width, format_bytes(f.bytes, options_.units),
                       f.measured ? "measured" : "default", f.source);
  }
  if (!r.cache_path.empty()) out << fmt::format("\nstored in {}; estimates on this GPU and driver use them\n", r.cache_path);
}

}  // namespace memplan::detail

namespace memplan::detail {

void TablePrinter::hooks(const HooksReport& r, std::ostream& out) const {
  const Units u = options_.units;
  out << fmt::format("hooks of {} at batch {} x {} tokens, {}\n\n", r.model, r.batch, r.seq_len, r.dtype);
  std::size_t name_width = 4, shape_width = 5;
  for (const HookRow& row : r.rows) {
    name_width = std::max(name_width, row.name.size());
    shape_width = std::max(shape_width, row.shape.size());
  }
  const std::string header = fmt::format("{:<{}}  {:>5}  {:<{}}  {:>11}  {:>11}", "hook", name_width, "count", "shape",
                                         shape_width, "each", "total");
  out << header << '\n';
  for (const HookRow& row : r.rows) {
    out << fmt::format("{:<{}}  {:>5}  {:<{}}  {:>11}  {:>11}\n", row.name, name_width, row.count, row.shape,
                       shape_width, format_bytes(row.bytes_each, u), format_bytes(row.bytes, u));
  }
  out << std::string(header.size(), '-') << '\n';
  out << fmt::format("selected {} of {} hooks: {}", r.selected_hooks, r.all_hooks, format_bytes(r.selected_bytes, u));
  if (r.selected_hooks != r.all_hooks) {
    out << fmt::format("; the full cache is {} (this selection saves {})", format_bytes(r.all_bytes, u),
                       format_bytes(Bytes(r.all_bytes.count() - r.selected_bytes.count()), u));
  }
  out << "\n";
}

void TablePrinter::attention_table(const AttentionTableReport& r, std::ostream& out) const {
  const Units u = options_.units;
  out << fmt::format("attention memory at B={}, H={}, D={}, {} (chunk {}); peak of one call{}\n\n", r.batch, r.heads,
                     r.head_dim, r.dtype, r.chunk, r.include_inputs ? ", q/k/v included" : ", q/k/v not included");
  std::size_t name_width = 7;
  for (const AttentionTableRow& row : r.rows) name_width = std::max(name_width, row.variant.size());
  out << fmt::format("{:<{}}", "variant", name_width);
  for (const std::uint64_t n : r.seq_lens) out << fmt::format("  {:>11}", fmt::format("N={}", n));
  out << '\n';
  for (const AttentionTableRow& row : r.rows) {
    out << fmt::format("{:<{}}", row.variant, name_width);
    for (const Bytes b : row.bytes) out << fmt::format("  {:>11}", format_bytes(b, u));
    out << '\n';
  }
  out << "\n003 theory rows use the source notebook's formulas (inputs plus one N x N matrix, one D x D\n"
         "state, or one N x D x D cumulative state); memplan's rows count every tensor the variant holds\n"
         "at once. docs/estimators.md explains each difference.\n";
}

}  // namespace memplan::detail

// ------------------------------ memplan import (issue 7) ------------------------------
namespace memplan::detail {

void TablePrinter::imported_model(const ImportReport& r, std::ostream& out) const {
  if (r.output.empty()) {  // the model file itself, so that `memplan import config.json > model.yaml` works
    out << r.yaml;
    return;
  }
  out << fmt::format("imported   {} (model_type {})\n", r.input, r.model_type);
  out << fmt::format("wrote      {}: {} ({}, {} parameters)\n", r.output, r.model, r.family, group_digits(r.params));
  if (!r.notes.empty()) out << '\n';
  for (const std::string& n : r.notes) out << "note: " << n << '\n';
}

void TablePrinter::checkpoint(const CheckpointReport& r, std::ostream& out) const {
  const Units u = options_.units;
  out << fmt::format("checkpoint {} ({} file{}, headers only)\n", r.input, r.files.size(), r.files.size() == 1 ? "" : "s");
  out << fmt::format("tensors    {}: {} elements, {} of tensor data ({} on disk)\n", group_digits(r.tensors),
                     group_digits(r.elements), format_bytes(r.bytes, u), format_bytes(r.file_bytes, u));
  if (!r.metadata.empty()) {
    std::string text;
    for (const auto& [key, value] : r.metadata) text += (text.empty() ? "" : ", ") + printable(key) + "=" + printable(value);
    out << fmt::format("metadata   {}\n", text);
  }

  const std::string row = "{:<8}  {:>7}  {:>16}  {:>11}  {:>6}\n";
  out << '\n' << fmt::format(fmt::runtime(row), "dtype", "tensors", "elements", "memory", "share");
  for (const CheckpointDtypeRow& d : r.dtypes) {
    out << fmt::format(fmt::runtime(row), d.dtype, group_digits(d.tensors), group_digits(d.elements),
                       format_bytes(d.bytes, u), percent(d.bytes, r.bytes));
  }
  out << std::string(55, '-') << '\n';
  out << fmt::format(fmt::runtime(row), "total", group_digits(r.tensors), group_digits(r.elements),
                     format_bytes(r.bytes, u), "100%");

  if (!r.tensor_rows.empty()) {
    std::size_t name_width = 6;
    for (const CheckpointTensorRow& t : r.tensor_rows) name_width = std::max(name_width, printable(t.name).size());
    const bool shards = r.files.size() > 1;
    out << '\n'
        << fmt::format("{:<{}}  {:<8}  {:<20}  {:>14}  {:>11}{}\n", "tensor", name_width, "dtype", "shape", "elements",
                       "memory", shards ? "  file" : "");
    for (const CheckpointTensorRow& t : r.tensor_rows) {
      std::string shape = "[";
      for (std::size_t i = 0; i < t.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(t.shape[i]);
      shape += "]";
      out << fmt::format("{:<{}}  {:<8}  {:<20}  {:>14}  {:>11}{}\n", printable(t.name), name_width, t.dtype, shape,
                         group_digits(t.elements), format_bytes(t.bytes, u),
                         shards ? "  " + t.file.substr(t.file.find_last_of('/') + 1) : "");
    }
  }

  if (r.comparison) {
    const CheckpointComparisonReport& c = *r.comparison;
    out << '\n'
        << fmt::format("architecture  {:>16} parameters: {} ({})\n", group_digits(c.architecture_params), c.model,
                       c.model_origin);
    std::uint64_t set_aside = 0;
    for (const CheckpointExtraRow& e : c.extra) {
      out << fmt::format("{:<12}  {:>16} in {} tensor{} {}: {}\n", e.kind, group_digits(e.elements),
                         group_digits(e.tensors), e.tensors == 1 ? "" : "s", printable(e.pattern), e.why);
      set_aside += e.elements;
    }
    out << fmt::format("checkpoint    {:>16} elements", group_digits(c.checkpoint_elements));
    const std::string aside =
        set_aside > 0 ? fmt::format(" once the {} elements that are not parameters are set aside", group_digits(set_aside)) : "";
    if (c.compared_elements == c.architecture_params) {
      out << ": matches the architecture exactly" << aside << '\n';
    } else if (c.compared_elements > c.architecture_params) {
      out << fmt::format(": {} more than the architecture counts{} (unexplained)\n",
                         group_digits(c.compared_elements - c.architecture_params), aside);
    } else {
      out << fmt::format(": {} fewer than the architecture counts{} (unexplained)\n",
                         group_digits(c.architecture_params - c.compared_elements), aside);
    }
  }
  if (!r.notes.empty()) out << '\n';
  for (const std::string& n : r.notes) out << "note: " << n << '\n';
  out << (u == Units::iec ? "\nsizes in IEC units (1 GiB = 1024^3 bytes); `format` json gives exact bytes\n"
                          : "\nsizes in SI units (1 GB = 1000^3 bytes); `format` json gives exact bytes\n");
}

}  // namespace memplan::detail
