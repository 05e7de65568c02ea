// memplan hooks: table and JSON.
#include "memplan/report/hooks.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common.hpp"

namespace memplan {

namespace {

using detail::ordered_json;

void table(const HooksReport& r, const PrintOptions& options, std::ostream& out) {
  const Units u = options.units;
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
  if (!r.note.empty()) out << "\nnote: " << r.note << '\n';
}

void json(const HooksReport& r, std::ostream& out) {
  ordered_json rows = ordered_json::array();
  for (const HookRow& row : r.rows) {
    rows.push_back({{"name", row.name},
                    {"count", row.count},
                    {"shape", row.shape},
                    {"bytes_each", row.bytes_each.count()},
                    {"bytes", row.bytes.count()}});
  }
  ordered_json j{{"schema_version", json_schema_version},
                 {"model", r.model},
                 {"batch_size", r.batch},
                 {"seq_len", r.seq_len},
                 {"dtype", r.dtype},
                 {"hooks", rows},
                 {"selected_hooks", r.selected_hooks},
                 {"all_hooks", r.all_hooks},
                 {"selected_bytes", r.selected_bytes.count()},
                 {"all_bytes", r.all_bytes.count()},
                 {"note", r.note}};
  detail::emit(j, out);
}

}  // namespace

void print(const HooksReport& report, const PrintOptions& options, std::ostream& out) {
  require_format<HooksReport>(options.format);
  if (options.format == OutputFormat::json) return json(report, out);
  table(report, options, out);
}

}  // namespace memplan
