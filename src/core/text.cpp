#include "memplan/core/text.hpp"

#include <algorithm>
#include <cctype>
#include <locale>
#include <numeric>
#include <sstream>

namespace memplan {

namespace {
char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }
}  // namespace

std::string lowered(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), lower);
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitution = diagonal + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitution});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> closest_names(std::string_view wanted, const std::vector<std::string>& candidates,
                                       std::size_t limit) {
  const std::string want = lowered(wanted);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const std::string& candidate : candidates) {
    const std::string cand = lowered(candidate);
    const std::size_t allowed = std::max<std::size_t>(2, std::max(want.size(), cand.size()) / 3);
    const bool contains = !want.empty() && (cand.find(want) != std::string::npos ||
                                            (want.size() >= 4 && want.find(cand) != std::string::npos));
    // The length difference bounds the distance from below: a hostile megabyte-long name
    // costs a scan, not a megabyte-by-name table.
    const std::size_t gap = want.size() > cand.size() ? want.size() - cand.size() : cand.size() - want.size();
    const std::size_t distance = gap > allowed ? gap : edit_distance(want, cand);
    if (distance <= allowed || contains) scored.emplace_back(contains ? 0 : distance, candidate);
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  // Only the nearest: one clear suggestion beats three vague ones.
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scored.size() && i < limit && scored[i].first == scored[0].first; ++i) {
    out.push_back(scored[i].second);
  }
  return out;
}

std::string quoted_list(const std::vector<std::string>& names, std::string_view conjunction) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += (i + 1 == names.size()) ? " " + std::string(conjunction) + " " : std::string(", ");
    out += "'" + names[i] + "'";
  }
  return out;
}

std::string did_you_mean(std::string_view wanted, const std::vector<std::string>& candidates) {
  const std::vector<std::string> close = closest_names(wanted, candidates);
  if (close.empty()) return "";
  return " (did you mean " + quoted_list(close) + "?)";
}

std::string printable(std::string_view text) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      out += c;
    } else {
      out += "\\x";
      out += hex[byte >> 4];
      out += hex[byte & 0xf];
    }
  }
  return out;
}

std::string group_digits(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

namespace {

// A string stream in the classic locale formats as printf does in the C locale.
std::string stream_text(double value, int digits, std::ios_base::fmtflags floatfield) {
  std::ostringstream out;
  out.imbue(std::locale::classic());
  out.setf(floatfield, std::ios_base::floatfield);
  out.precision(digits);
  out << value;
  return out.str();
}

}  // namespace

std::string fixed_text(double value, int digits) { return stream_text(value, digits, std::ios_base::fixed); }
std::string scientific_text(double value, int digits) { return stream_text(value, digits, std::ios_base::scientific); }
std::string general_text(double value, int digits) { return stream_text(value, digits, {}); }

std::string shortest_text(double value) {
  for (int digits = 1; digits < 17; ++digits) {
    std::string text = general_text(value, digits);
    std::istringstream in(text);
    in.imbue(std::locale::classic());
    double back = 0;
    if (in >> back && back == value) return text;
  }
  return general_text(value, 17);  // 17 significant digits read back as any double
}

std::optional<ReleaseNumbers> release_numbers(std::string_view text) {
  ReleaseNumbers out;
  std::size_t i = 0;
  while (out.count < 3) {
    const std::size_t start = i;
    std::uint32_t v = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && i - start < 6)
      v = v * 10 + static_cast<std::uint32_t>(text[i++] - '0');
    if (i == start) return std::nullopt;
    out.parts[out.count++] = v;
    if (i == text.size()) break;
    if (text[i] != '.') return std::nullopt;
    ++i;
  }
  if (out.count < 2 || i != text.size()) return std::nullopt;
  return out;
}

}  // namespace memplan
