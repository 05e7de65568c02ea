#include "yaml_fields.hpp"

#include <charconv>
#include <cmath>
#include <set>
#include <vector>

#include "memplan/core/text.hpp"

namespace memplan::detail {

YAML::Node parse_yaml(std::string_view text, const std::string& file) {
  try {
    // A second document ("---" after content) would otherwise be dropped without a word.
    // Found by lines: yaml-cpp's LoadAll can loop forever on malformed input.
    bool content = false;
    std::size_t line = 0;
    for (std::size_t start = 0; start < text.size(); ++line) {
      std::size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      const std::string_view row = text.substr(start, end - start);
      const bool separator = row.starts_with("---") && (row.size() == 3 || row[3] == ' ' || row[3] == '\r');
      if (separator && content) {
        throw ConfigError(file, line + 1, 1, "",
                          "the file holds more than one YAML document (separated by '---'); "
                          "memplan reads one per file");
      }
      if (!separator && !row.empty() && row[0] != '#' && row.find_first_not_of(" \t\r") != std::string_view::npos) {
        content = true;
      }
      start = end + 1;
    }
    return YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    throw ConfigError(file, static_cast<std::size_t>(e.mark.line + 1), static_cast<std::size_t>(e.mark.column + 1), "",
                      "YAML syntax error: " + e.msg);
  }
}

void fail_at(const YAML::Node& node, const std::string& file, const std::string& key, const std::string& message,
             ErrorKind kind) {
  const YAML::Mark mark = node.Mark();
  const bool known = mark.line >= 0;  // yaml-cpp marks nodes it made up, not read, with -1
  throw ConfigError(file, known ? static_cast<std::size_t>(mark.line + 1) : 0,
                    known ? static_cast<std::size_t>(mark.column + 1) : 0, key, message, kind);
}

YamlMap::YamlMap(const YAML::Node& node, std::string file, std::string what)
    : node_(node), file_(std::move(file)), what_(std::move(what)) {
  if (!node_.IsDefined() || node_.IsNull()) {
    throw ConfigError(file_, 0, 0, "", "the file is empty: expected " + what_ + " as a YAML mapping of keys to values");
  }
  if (!node_.IsMap()) fail_at(node_, file_, "", "expected " + what_ + " as a YAML mapping of keys to values");
}

void YamlMap::reject_unknown(const std::vector<std::string>& known) const {
  std::set<std::string> seen;
  for (const auto& entry : node_) {
    const YAML::Node key_node = entry.first;
    if (!key_node.IsScalar()) fail_at(key_node, file_, "", "keys must be plain words");
    const std::string& key = key_node.Scalar();
    if (!seen.insert(key).second) fail_at(key_node, file_, key, "key '" + key + "' appears twice");
    bool ok = false;
    for (const std::string& k : known) ok = ok || k == key;
    if (!ok)
      fail_at(key_node, file_, key, "unknown key '" + printable(key) + "' in " + what_ + did_you_mean(key, known));
  }
}

bool YamlMap::has(const std::string& key) const { return static_cast<bool>(node_[key]); }

YAML::Node YamlMap::value(const std::string& key) const {
  const YAML::Node v = node_[key];
  if (!v) fail(key, "missing required key '" + key + "' in " + what_);
  return v;
}

void YamlMap::fail(const std::string& key, const std::string& message, ErrorKind kind) const {
  const YAML::Node v = node_[key];
  if (v && v.Mark().line >= 0) fail_at(v, file_, key, message, kind);
  fail_at(node_, file_, key, message, kind);
}

YAML::Node YamlMap::scalar(const std::string& key) const {
  const YAML::Node v = value(key);
  if (!v.IsScalar())
    fail(key, "'" + key + "' must be a single value, not a " +
                  (v.IsMap()        ? "mapping"
                   : v.IsSequence() ? "list"
                                    : "null"));
  return v;
}

std::uint64_t YamlMap::integer(const std::string& key, std::uint64_t min, std::uint64_t max) const {
  const std::string text = scalar(key).Scalar();
  std::uint64_t out = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  const std::string range = std::to_string(min) + " to " + group_digits(max);
  if (!text.empty() && text[0] == '-') fail(key, "'" + key + "' must be an integer from " + range + ", got " + text);
  if (ec == std::errc::result_out_of_range)
    fail(key, "'" + key + "' is too large: " + text + " (at most " + group_digits(max) + ")");
  if (ec != std::errc() || ptr != end) fail(key, "'" + key + "' must be a whole number, got '" + printable(text) + "'");
  if (out < min || out > max) fail(key, "'" + key + "' must be from " + range + ", got " + text);
  return out;
}

std::optional<std::uint64_t> YamlMap::optional_integer(const std::string& key, std::uint64_t min,
                                                       std::uint64_t max) const {
  if (!has(key)) return std::nullopt;
  return integer(key, min, max);
}

double YamlMap::number(const std::string& key, double min, double max) const {
  const std::string text = scalar(key).Scalar();
  double out = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  if (ec != std::errc() || ptr != end || !std::isfinite(out))
    fail(key, "'" + key + "' must be a number, got '" + printable(text) + "'");
  if (out < min || out > max) {
    fail(key, "'" + key + "' must be from " + std::to_string(min) + " to " + std::to_string(max) + ", got " + text);
  }
  return out;
}

bool YamlMap::boolean(const std::string& key) const {
  const std::string text = scalar(key).Scalar();
  if (text == "true") return true;
  if (text == "false") return false;
  fail(key, "'" + key + "' must be true or false, got '" + printable(text) + "'");
}

std::string YamlMap::string(const std::string& key) const {
  std::string text = scalar(key).Scalar();
  if (text.empty()) fail(key, "'" + key + "' must not be empty");
  return text;
}

std::vector<std::string> YamlMap::string_list(const std::string& key) const {
  const YAML::Node v = value(key);
  if (!v.IsSequence()) fail(key, "'" + key + "' must be a list such as [a, b]");
  std::vector<std::string> out;
  for (const YAML::Node& item : v) {
    if (!item.IsScalar() || item.Scalar().empty()) fail_at(item, file_, key, "'" + key + "' must hold plain words");
    out.push_back(item.Scalar());
  }
  return out;
}

}  // namespace memplan::detail
