// memplan attention: table and JSON.
#include "memplan/report/attention.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common.hpp"

namespace memplan {

namespace {

using detail::ordered_json;

void table(const AttentionTableReport& r, const PrintOptions& options, std::ostream& out) {
  const Units u = options.units;
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

void json(const AttentionTableReport& r, std::ostream& out) {
  ordered_json rows = ordered_json::array();
  for (const AttentionTableRow& row : r.rows) {
    ordered_json bytes = ordered_json::array();
    for (const Bytes b : row.bytes) bytes.push_back(b.count());
    rows.push_back({{"variant", row.variant}, {"bytes", bytes}});
  }
  ordered_json j{{"schema_version", json_schema_version},
                 {"batch_size", r.batch},
                 {"heads", r.heads},
                 {"head_dim", r.head_dim},
                 {"dtype", r.dtype},
                 {"chunk", r.chunk},
                 {"include_inputs", r.include_inputs},
                 {"seq_lens", r.seq_lens},
                 {"rows", rows}};
  detail::emit(j, out);
}

}  // namespace

void print(const AttentionTableReport& report, const PrintOptions& options, std::ostream& out) {
  require_format<AttentionTableReport>(options.format);
  if (options.format == OutputFormat::json) return json(report, out);
  table(report, options, out);
}

}  // namespace memplan
