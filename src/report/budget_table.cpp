// memplan budget-table: table and JSON.
#include "memplan/report/budget_table.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common.hpp"
#include "memplan/core/text.hpp"

namespace memplan {

namespace {

using detail::ordered_json;

std::string status_text(const std::string& status) {
  if (status == "ok") return "fits";
  if (status == "warn") return "tight";
  if (status == "no") return "no";
  return status;
}

void table(const BudgetTableReport& r, const PrintOptions& options, std::ostream& out) {
  const Units u = options.units;
  out << fmt::format("model      {} ({} parameters)\n", r.model, group_digits(r.params));
  out << fmt::format("device     {}: {}\n", r.gpu, format_bytes(r.gpu_memory, u));
  out << fmt::format("beside     TensorScope's \"{} Model on 80GB GPU\" table\n\n", r.seed_table);
  std::size_t metric_width = 6;
  for (const BudgetRow& row : r.rows) metric_width = std::max(metric_width, row.metric.size());
  const std::string header = fmt::format("{:<{}}  {:>5}  {:>5}  {:>11}  {:>11}  {:>10}  {:<4}  |  {:>8}  {:>7}  {:<5}",
                                         "metric", metric_width, "batch", "seq", "analysis", "total", "time", "fits",
                                         "TS mem", "TS time", "TS");
  out << header << '\n' << std::string(header.size(), '-') << '\n';
  for (const BudgetRow& row : r.rows) {
    const std::string analysis = row.analysis ? format_bytes(*row.analysis, u) : row.needed;
    const std::string total = row.total ? format_bytes(*row.total, u) : row.needed;
    out << fmt::format("{:<{}}  {:>5}  {:>5}  {:>11}  {:>11}  {:>10}  {:<4}  |  {:>8}  {:>7}  {:<5}\n", row.metric,
                       metric_width, row.batch, row.seq, analysis, total,
                       row.seconds ? format_duration(*row.seconds) : "-", row.fits ? "yes" : "NO",
                       row.seed_memory.empty() ? "-" : row.seed_memory, row.seed_time.empty() ? "-" : row.seed_time,
                       row.seed_memory.empty() ? "-" : status_text(row.seed_status));
  }
  out << '\n';
  for (const BudgetRow& row : r.rows) {
    out << fmt::format("{}: {}{}\n", row.metric, row.workload, row.note.empty() ? "" : "; " + row.note);
  }
  if (!r.notes.empty()) out << '\n';
  for (const std::string& n : r.notes) out << "note: " << n << '\n';
  out << "\ntime: " << r.time_assumption << '\n'
      << (u == Units::iec ? "sizes in IEC units (1 GiB = 1024^3 bytes; `units` si for GB); TensorScope writes GB"
                          : "sizes in SI units (1 GB = 1000^3 bytes)")
      << "; `format` json gives exact bytes\n";
}

void json(const BudgetTableReport& r, std::ostream& out) {
  ordered_json rows = ordered_json::array();
  for (const BudgetRow& row : r.rows) {
    ordered_json j{{"metric", row.metric}, {"workload", row.workload}, {"batch", row.batch}, {"seq", row.seq}};
    j["analysis_bytes"] = row.analysis ? ordered_json(row.analysis->count()) : ordered_json();
    j["total_bytes"] = row.total ? ordered_json(row.total->count()) : ordered_json();
    if (!row.needed.empty()) j["needed"] = row.needed;
    j["seconds"] = row.seconds ? ordered_json(*row.seconds) : ordered_json();
    j["fits"] = row.fits;
    j["seed"] = {{"memory", row.seed_memory}, {"time", row.seed_time}, {"status", row.seed_status}};
    j["note"] = row.note;
    rows.push_back(j);
  }
  ordered_json j;
  j["schema_version"] = json_schema_version;
  j["model"] = {{"name", r.model}, {"params", r.params}};
  j["device"] = {{"name", r.gpu}, {"memory_bytes", r.gpu_memory.count()}};
  j["seed_table"] = r.seed_table;
  j["time_assumption"] = r.time_assumption;
  j["rows"] = rows;
  j["notes"] = r.notes;
  detail::emit(j, out);
}

}  // namespace

void print(const BudgetTableReport& report, const PrintOptions& options, std::ostream& out) {
  require_format<BudgetTableReport>(options.format);
  if (options.format == OutputFormat::json) return json(report, out);
  table(report, options, out);
}

}  // namespace memplan
