// What every report shares: the output formats and units, sizes and durations for people,
// and the one place a format a report does not have is refused. Each report has its own
// header beside this one (estimate.hpp, fit.hpp, sweep.hpp, ...): the report, which holds
// the library's results as they are, and `print`, which writes it in the format asked for.
#pragma once

#include <string>
#include <string_view>

#include "memplan/core/bytes.hpp"

namespace memplan {

enum class Units { iec, si };                  // KiB/MiB/GiB (powers of 1024) or KB/MB/GB (powers of 1000)
enum class OutputFormat { table, json, csv };  // csv: the reports that are grids of rows (has_csv)

// Parse the CLI spellings ("iec", "si"; "table", "json", "csv"). Throw Error(invalid_input)
// with key "units" or "format".
Units parse_units(std::string_view text);
OutputFormat parse_output_format(std::string_view text);

// Returns bytes as a value and unit with two decimals: "12.55 GiB", "13.48 GB", "512 B".
std::string format_bytes(Bytes bytes, Units units);

// Returns a duration for people, two significant figures: "850 ms", "4.2 s", "12 min",
// "3.1 h", "2.0 days", "4.5e+06 years".
std::string format_duration(double seconds);

// JSON schema version of every report; bumped only when a field is renamed or removed.
inline constexpr int json_schema_version = 1;

struct PrintOptions {
  OutputFormat format = OutputFormat::table;
  Units units = Units::iec;  // tables only: JSON and CSV carry exact bytes
  bool explain = false;      // tables only: each row's formula (JSON always has them)
};

// Every report prints as a table and as JSON; those that are grids of rows (a sweep, a
// measurement) also as CSV. A report's header sets has_csv<Report> = true when it has CSV.
template <class Report>
inline constexpr bool has_csv = false;

// Returns normally when a report with (or without) a CSV form prints in `format`. Throws
// Error(invalid_input, key "format") for csv on a report without one:
// "`format` csv applies to 'memplan sweep' and 'memplan measure'; accepted here: 'table' or 'json'".
void require_format(OutputFormat format, bool csv);

// require_format for a report type: a command calls it before doing its work, and every
// `print` calls it before writing anything.
template <class Report>
void require_format(OutputFormat format) {
  require_format(format, has_csv<Report>);
}

}  // namespace memplan
