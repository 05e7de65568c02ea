#include "common.hpp"

#include <fmt/format.h>

namespace memplan::detail {

void emit(const ordered_json& j, std::ostream& out) {
  out << j.dump(2, ' ', false, ordered_json::error_handler_t::replace) << '\n';
}

std::string percent(Bytes part, Bytes whole) {
  if (whole.count() == 0) return "-";
  return fmt::format("{:.1f}%", 100.0 * static_cast<double>(part.count()) / static_cast<double>(whole.count()));
}

std::string plural(std::size_t n, const char* word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

std::string fit_text(Bytes total, Bytes limit, bool fits, Units u) {
  return fits ? fmt::format("yes, {} left", format_bytes(Bytes(limit.count() - total.count()), u))
              : fmt::format("NO, {} over", format_bytes(Bytes(total.count() - limit.count()), u));
}

void headroom_json(ordered_json& j, Bytes total, Bytes limit) {
  if (total <= limit) {
    j["headroom_bytes"] = limit.count() - total.count();
  } else {
    j["over_bytes"] = total.count() - limit.count();
  }
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace memplan::detail
