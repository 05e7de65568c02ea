#include <fmt/format.h>

#include <array>

#include "memplan/core/error.hpp"
#include "memplan/report/printer.hpp"

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
  throw Error(ErrorKind::invalid_input, "unknown format '" + std::string(text) + "'; accepted: 'table', 'json' or 'csv'",
              "format");
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

}  // namespace memplan
