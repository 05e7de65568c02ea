// memplan measure: table, JSON and CSV.
#include "memplan/report/measure.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common.hpp"

namespace memplan {

namespace {

using detail::ordered_json;

std::string measure_time(double seconds) {
  if (seconds <= 0) return "-";
  if (seconds < 1e-3) return fmt::format("{:.1f} us", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.2f} ms", seconds * 1e3);
  return fmt::format("{:.2f} s", seconds);
}

void table(const MeasureReport& r, const PrintOptions& options, std::ostream& out) {
  out << fmt::format("measure    {} on {}, {}, {}, {} repeat{}\n", r.kernel, r.device, r.dtype, r.parameters, r.repeats,
                     r.repeats == 1 ? "" : "s");
  out << fmt::format("method     {}\n\n", r.method);
  std::size_t variant_width = 7;
  for (const MeasureRow& row : r.rows) variant_width = std::max(variant_width, row.variant.size());
  const std::string header = fmt::format("{:<{}}  {:>8}  {:>11}  {:>11}  {:>6}  {:>10}  {:>10}", "variant",
                                         variant_width, r.size_label, "estimate", "measured", "ratio", "time best",
                                         "median");
  out << header << '\n';
  std::vector<std::string> notes;
  for (const MeasureRow& row : r.rows) {
    const std::string measured = row.measured ? format_bytes(*row.measured, options.units) : "-";
    const std::string ratio = row.measured && row.estimate.count()
                                  ? fmt::format("{:.3f}", static_cast<double>(row.measured->count()) /
                                                              static_cast<double>(row.estimate.count()))
                                  : "-";
    out << fmt::format("{:<{}}  {:>8}  {:>11}  {:>11}  {:>6}  {:>10}  {:>10}\n", row.variant, variant_width, row.size,
                       format_bytes(row.estimate, options.units), measured, ratio, measure_time(row.seconds_best),
                       measure_time(row.seconds_median));
    if (!row.note.empty()) notes.push_back(fmt::format("{} {}={}: {}", row.variant, r.size_label, row.size, row.note));
  }
  if (!notes.empty() || !r.notes.empty()) out << '\n';
  for (const std::string& n : r.notes) out << "note: " << n << '\n';
  for (const std::string& n : notes) out << "note: " << n << '\n';
  out << "\nratio = measured / estimate; "
      << (options.units == Units::iec ? "sizes in IEC units (1 MiB = 1024^2 bytes)"
                                      : "sizes in SI units (1 MB = 1000^2 bytes)")
      << "; `format` json gives exact bytes\n";
}

void json(const MeasureReport& r, std::ostream& out) {
  ordered_json rows = ordered_json::array();
  for (const MeasureRow& row : r.rows) {
    ordered_json j{
        {"variant", row.variant}, {"size", row.size}, {"shape", row.shape}, {"estimate_bytes", row.estimate.count()}};
    j["measured_bytes"] = row.measured ? ordered_json(row.measured->count()) : ordered_json();
    j["ratio"] = row.measured && row.estimate.count() ? ordered_json(static_cast<double>(row.measured->count()) /
                                                                     static_cast<double>(row.estimate.count()))
                                                      : ordered_json();
    j["seconds_best"] = row.seconds_best;
    j["seconds_median"] = row.seconds_median;
    if (!row.note.empty()) j["note"] = row.note;
    rows.push_back(j);
  }
  ordered_json j;
  j["schema_version"] = json_schema_version;
  j["measure"] = {{"kernel", r.kernel},         {"device", r.device},   {"dtype", r.dtype},
                  {"parameters", r.parameters}, {"size", r.size_label}, {"method", r.method},
                  {"repeats", r.repeats},       {"notes", r.notes},     {"rows", rows}};
  detail::emit(j, out);
}

void csv(const MeasureReport& r, std::ostream& out) {
  out << "kernel,device,dtype,variant," << r.size_label
      << ",shape,estimate_bytes,measured_bytes,ratio,seconds_best,seconds_median,note\n";
  for (const MeasureRow& row : r.rows) {
    const std::string ratio = row.measured && row.estimate.count() > 0
                                  ? fmt::format("{:.4f}", static_cast<double>(row.measured->count()) /
                                                              static_cast<double>(row.estimate.count()))
                                  : "";
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", r.kernel, detail::csv_field(r.device), r.dtype,
                       row.variant, row.size, detail::csv_field(row.shape), row.estimate.count(),
                       row.measured ? std::to_string(row.measured->count()) : "", ratio,
                       row.measured ? fmt::format("{:.9g}", row.seconds_best) : "",
                       row.measured ? fmt::format("{:.9g}", row.seconds_median) : "", detail::csv_field(row.note));
  }
}

}  // namespace

void print(const MeasureReport& report, const PrintOptions& options, std::ostream& out) {
  require_format<MeasureReport>(options.format);
  switch (options.format) {
    case OutputFormat::table: return table(report, options, out);
    case OutputFormat::json: return json(report, out);
    case OutputFormat::csv: return csv(report, out);
  }
}

}  // namespace memplan
