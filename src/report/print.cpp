#include "memplan/report/print.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>

#include "memplan/core/error.hpp"

namespace memplan {

Units parse_units(std::string_view text) {
  if (text == "iec") return Units::iec;
  if (text == "si") return Units::si;
  throw Error(ErrorKind::invalid_input, "unknown units '" + std::string(text) + "'; accepted: 'iec' (GiB) or 'si' (GB)",
              "units");
}

OutputFormat parse_output_format(std::string_view text) {
  if (text == "table") return OutputFormat::table;
  if (text == "json") return OutputFormat::json;
  if (text == "csv") return OutputFormat::csv;
  throw Error(ErrorKind::invalid_input,
              "unknown format '" + std::string(text) + "'; accepted: 'table', 'json' or 'csv'", "format");
}

void require_format(OutputFormat format, bool csv) {
  if (format == OutputFormat::csv && !csv) {
    throw Error(ErrorKind::invalid_input,
                "`format` csv applies to 'memplan sweep' and 'memplan measure'; accepted here: 'table' or 'json'",
                "format");
  }
}

std::string format_bytes(Bytes bytes, Units units) {
  static constexpr std::array<const char*, 7> iec{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  static constexpr std::array<const char*, 7> si{"B", "KB", "MB", "GB", "TB", "PB", "EB"};
  const double base = units == Units::iec ? 1024.0 : 1000.0;
  const auto& names = units == Units::iec ? iec : si;
  const std::uint64_t count = bytes.count();
  if (count < static_cast<std::uint64_t>(base)) return fmt::format("{} B", count);
  double value = static_cast<double>(count);
  std::size_t unit = 0;
  // Round first, so 1023.999 KiB prints as 1.00 MiB rather than 1024.00 KiB.
  while (unit + 1 < names.size() && value >= base * (1 - 0.005 / base)) {
    value /= base;
    ++unit;
  }
  return fmt::format("{:.2f} {}", value, names[unit]);
}

std::string format_duration(double seconds) {
  if (!(seconds >= 0) || std::isinf(seconds)) return "-";
  if (seconds == 0) return "0 ms";
  if (seconds < 0.01) return fmt::format("{:.2g} ms", seconds * 1e3);  // 0.23 ms, 4.5 ms: not "0 ms"
  if (seconds < 1) return fmt::format("{:.0f} ms", seconds * 1e3);
  if (seconds < 60) return fmt::format("{:.2g} s", seconds);
  if (seconds < 3600) return fmt::format("{:.2g} min", seconds / 60);
  if (seconds < 86400 * 2) return fmt::format("{:.2g} h", seconds / 3600);
  if (seconds < 86400 * 365.25 * 2) return fmt::format("{:.2g} days", seconds / 86400);
  return fmt::format("{:.2g} years", seconds / (86400 * 365.25));
}

}  // namespace memplan
