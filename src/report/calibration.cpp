// memplan calibrate: table and JSON.
#include "memplan/report/calibration.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common.hpp"

namespace memplan {

namespace {

using detail::ordered_json;

void table(const CalibrationReport& r, const PrintOptions& options, std::ostream& out) {
  if (r.calibrated) {
    out << fmt::format("calibrated {} (CUDA driver {})\n\n", r.gpu, r.driver);
  } else {
    out << fmt::format("cannot calibrate: {}\nestimates use the documented defaults (docs/accuracy.md):\n\n", r.reason);
  }
  std::size_t name_width = 6;
  for (const CalibrationRow& f : r.figures) name_width = std::max(name_width, f.name.size());
  out << fmt::format("{:<{}}  {:>11}  {:<8}  {}\n", "figure", name_width, "bytes", "origin", "how");
  for (const CalibrationRow& f : r.figures) {
    out << fmt::format("{:<{}}  {:>11}  {:<8}  {}\n", f.name, name_width, format_bytes(f.bytes, options.units),
                       f.measured ? "measured" : "default", f.source);
  }
  if (!r.cache_path.empty())
    out << fmt::format("\nstored in {}; estimates on this GPU and driver use them\n", r.cache_path);
}

void json(const CalibrationReport& r, std::ostream& out) {
  ordered_json figures = ordered_json::array();
  for (const CalibrationRow& f : r.figures) {
    figures.push_back({{"name", f.name}, {"bytes", f.bytes.count()}, {"measured", f.measured}, {"source", f.source}});
  }
  ordered_json j;
  j["schema_version"] = json_schema_version;
  j["calibration"] = {{"calibrated", r.calibrated}, {"status", r.status}};
  if (!r.reason.empty()) j["calibration"]["reason"] = r.reason;
  if (r.calibrated) {
    j["calibration"]["gpu"] = r.gpu;
    j["calibration"]["driver"] = r.driver;
  }
  if (!r.cache_path.empty()) j["calibration"]["cache_path"] = r.cache_path;
  j["calibration"]["figures"] = figures;
  detail::emit(j, out);
}

}  // namespace

void print(const CalibrationReport& report, const PrintOptions& options, std::ostream& out) {
  require_format<CalibrationReport>(options.format);
  if (options.format == OutputFormat::json) return json(report, out);
  table(report, options, out);
}

}  // namespace memplan
