#include "json_fields.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "memplan/core/text.hpp"

namespace memplan::detail {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Returns the offset just past the string whose opening quote is at `open` (or the end of
// the text when it never closes).
std::size_t string_end(std::string_view text, std::size_t open) {
  for (std::size_t i = open + 1; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '"') {
      return i + 1;
    }
  }
  return text.size();
}

// Returns the offset of the opening quote of the string containing byte `offset`, if any.
std::optional<std::size_t> string_around(std::string_view text, std::size_t offset) {
  std::size_t i = 0;
  while (i < text.size() && i <= offset) {
    if (text[i] == '"') {
      const std::size_t end = string_end(text, i);
      if (offset > i && offset < end) return i;
      if (end == text.size() && offset >= i) return i;  // an unterminated string runs to the end
      i = end;
    } else {
      ++i;
    }
  }
  return std::nullopt;
}

// Returns the offset of the first appearance of `token` outside strings, in one pass.
std::optional<std::size_t> first_outside_strings(std::string_view text, std::string_view token) {
  if (token.empty()) return std::nullopt;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '"') {
      i = string_end(text, i);
    } else if (text.compare(i, token.size(), token) == 0) {
      return i;
    } else {
      ++i;
    }
  }
  return std::nullopt;
}

// Returns the offset of the `nth` (1-based) member key `key` of any object, in one pass:
// a string equal to "key" followed by a colon.
std::optional<std::size_t> nth_key(std::string_view text, const std::string& key, int nth) {
  const std::string quoted = nlohmann::json(key).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] != '"') {
      ++i;
      continue;
    }
    const std::size_t end = string_end(text, i);
    std::size_t j = end;
    while (j < text.size() && is_space(text[j])) ++j;
    if (j < text.size() && text[j] == ':' && text.substr(i, end - i) == quoted && --nth == 0) return i;
    i = end;
  }
  return std::nullopt;
}

// Strips nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 5: " prefix.
std::string parse_message(const std::string& what) {
  const std::size_t column = what.find("column ");
  const std::size_t colon = what.find(": ", column == std::string::npos ? 0 : column);
  std::string message = colon == std::string::npos ? what : what.substr(colon + 2);
  return printable(message);
}

// Throws ConfigError at byte `offset` of `text`: by line and column, or by file byte.
[[noreturn]] void fail_json(std::string_view text, const std::string& file, std::optional<std::uint64_t> byte_base,
                            std::size_t offset, const std::string& key, const std::string& message) {
  if (byte_base) throw ConfigError(file, 0, 0, key, "at byte " + std::to_string(*byte_base + offset) + ": " + message);
  const TextPosition p = position_of(text, offset);
  throw ConfigError(file, p.line, p.column, key, message);
}

std::string short_dump(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

}  // namespace

TextPosition position_of(std::string_view text, std::size_t offset) {
  if (offset > text.size()) offset = text.size();
  TextPosition p{1, 1};
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

std::string python_infinities_as_null(std::string_view text) {
  std::string out(text);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '"') {
      i = string_end(out, i) - 1;
      continue;
    }
    const std::size_t start = i;
    if (out[i] == '-') ++i;
    if (out.compare(i, 8, "Infinity") == 0) {
      out.replace(start, i + 8 - start, std::string("null").append(i + 8 - start - 4, ' '));
      i = start + 3;
    } else {
      i = start;
    }
  }
  return out;
}

nlohmann::json parse_json(std::string_view text, const std::string& file, std::optional<std::uint64_t> byte_base,
                          bool duplicates_checked_by_caller) {
  const auto fail_at = [&](std::size_t offset, const std::string& key, const std::string& message) {
    fail_json(text, file, byte_base, offset, key, message);
  };
  // Depth first, outside strings, so that nothing deep reaches the parser.
  std::size_t depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      i = string_end(text, i) - 1;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxJsonDepth) {
        fail_at(i, "", "JSON nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
      }
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  try {
    // A duplicate key would silently keep its last value: refuse it, at its second place.
    std::vector<std::set<std::string>> keys;
    std::optional<std::string> duplicate;
    const nlohmann::json::parser_callback_t watch = [&](int, nlohmann::json::parse_event_t event,
                                                        nlohmann::json& parsed) {
      using Event = nlohmann::json::parse_event_t;
      if (event == Event::object_start) keys.emplace_back();
      if (event == Event::object_end && !keys.empty()) keys.pop_back();
      if (event == Event::key && !keys.empty() && !duplicate && !keys.back().insert(parsed.get<std::string>()).second) {
        duplicate = parsed.get<std::string>();
      }
      return true;
    };
    nlohmann::json out = nlohmann::json::parse(text.begin(), text.end(), watch);
    if (duplicate && !duplicates_checked_by_caller) {
      fail_at(nth_key(text, *duplicate, 2).value_or(0), *duplicate,
              "key '" + printable(*duplicate) + "' appears twice (JSON would keep only the last)");
    }
    return out;
  } catch (const nlohmann::json::parse_error& e) {
    const std::size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    std::string message = "JSON syntax error: " + parse_message(e.what());
    std::string key;
    if (const std::optional<std::size_t> open = string_around(text, offset)) {
      const std::size_t end = string_end(text, *open);
      const std::size_t stop = end > *open + 1 && text[end - 1] == '"' ? end - 1 : end;
      key = std::string(text.substr(*open + 1, std::min<std::size_t>(stop - *open - 1, 200)));
      message += " (in the string '" + printable(key) + "')";
    }
    fail_json(text, file, byte_base, offset, key, message);
  } catch (const nlohmann::json::out_of_range& e) {
    // A number beyond a double (1e400). nlohmann gives the token but no position: the token's
    // first appearance outside a string is where it stands.
    const std::string what = e.what();  // "[json.exception.out_of_range.406] number overflow parsing '1e400'"
    const std::size_t open = what.find('\''), close = what.rfind('\'');
    const std::string token = open < close ? what.substr(open + 1, close - open - 1) : std::string();
    const std::size_t offset = first_outside_strings(text, token).value_or(0);
    fail_json(text, file, byte_base, offset, "",
              "JSON number " + printable(token) + " is out of range (beyond a 64-bit floating-point number)");
  }
}

std::vector<JsonMember> top_level_members(std::string_view text) {
  std::vector<JsonMember> members;
  std::size_t i = 0;
  while (i < text.size() && is_space(text[i])) ++i;
  if (i == text.size() || text[i] != '{') return members;
  std::size_t depth = 0;
  bool expect_key = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      const std::size_t end = string_end(text, i);
      if (depth == 1 && expect_key) {
        JsonMember m;
        m.key_offset = i;
        try {
          m.key = nlohmann::json::parse(text.substr(i, end - i)).get<std::string>();
        } catch (const nlohmann::json::exception&) {
          m.key = std::string(text.substr(i + 1, end - i - 2));
        }
        std::size_t j = end;
        while (j < text.size() && (is_space(text[j]) || text[j] == ':')) ++j;
        m.value_offset = j;
        members.push_back(std::move(m));
        expect_key = false;
        i = j - 1;
      } else {
        i = end - 1;
      }
    } else if (c == '{' || c == '[') {
      if (++depth == 1) expect_key = true;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) break;
    } else if (c == ',' && depth == 1) {
      expect_key = true;
    }
  }
  return members;
}

std::string json_type_name(const nlohmann::json& value) {
  if (value.is_object()) return "an object";
  if (value.is_array()) return "an array";
  if (value.is_string()) return "a string";
  if (value.is_boolean()) return "true/false";
  if (value.is_null()) return "null";
  return "a number";
}

namespace {

std::size_t first_non_space(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && is_space(text[i])) ++i;
  return i;
}

}  // namespace

JsonMap::JsonMap(const nlohmann::json& object, std::string_view text, std::string file, std::string what)
    : JsonMap(object, text, std::move(file), std::move(what), first_non_space(text)) {}

JsonMap::JsonMap(const nlohmann::json& object, std::string_view text, std::string file, std::string what,
                 std::size_t base)
    : object_(object), text_(text), file_(std::move(file)), what_(std::move(what)), base_(base) {
  if (!object_.is_object()) {
    const TextPosition p = position_of(text_, base_);
    throw ConfigError(file_, p.line, p.column, "",
                      "expected " + what_ + " as a JSON object {...}, got " + json_type_name(object_));
  }
  members_ = top_level_members(text_.substr(base_));
  std::set<std::string> seen;
  for (JsonMember& m : members_) {
    m.key_offset += base_;
    m.value_offset += base_;
    if (!seen.insert(m.key).second) {
      const TextPosition p = position_of(text_, m.key_offset);
      throw ConfigError(file_, p.line, p.column, m.key, "key '" + printable(m.key) + "' appears twice");
    }
  }
}

JsonMap JsonMap::object(const std::string& key, std::string what) const {
  const nlohmann::json& v = value(key);
  if (!v.is_object())
    fail(key, "'" + key + "' must be an object {...}, got " + json_type_name(v) + " " + short_dump(v));
  // The last of duplicates wins, as in nlohmann.
  const auto member = std::find_if(members_.rbegin(), members_.rend(),
                                   [&](const JsonMember& m) { return m.key == key; });
  return JsonMap(v, text_, file_, std::move(what), member != members_.rend() ? member->value_offset : base_);
}

bool JsonMap::has(const std::string& key) const {
  read_.insert(key);
  const auto it = object_.find(key);
  return it != object_.end() && !it->is_null();
}

const nlohmann::json& JsonMap::value(const std::string& key) const {
  read_.insert(key);
  const auto it = object_.find(key);
  if (it == object_.end()) fail(key, "missing required key '" + key + "' in " + what_);
  if (it->is_null()) fail(key, "'" + key + "' must be set, not null, in " + what_);
  return *it;
}

std::vector<std::string> JsonMap::unread_keys() const {
  std::vector<std::string> out;
  for (const JsonMember& m : members_) {
    if (!read_.contains(m.key) && std::find(out.begin(), out.end(), m.key) == out.end()) out.push_back(m.key);
  }
  return out;
}

TextPosition JsonMap::position(const std::string& key) const {
  // The last of duplicates wins, as in nlohmann.
  const auto member = std::find_if(members_.rbegin(), members_.rend(),
                                   [&](const JsonMember& m) { return m.key == key; });
  if (member != members_.rend()) return position_of(text_, member->value_offset);
  return position_of(text_, base_);
}

void JsonMap::fail(const std::string& key, const std::string& message) const {
  const TextPosition p = position(key);
  throw ConfigError(file_, p.line, p.column, key, message);
}

std::uint64_t JsonMap::integer(const std::string& key, std::uint64_t min, std::uint64_t max) const {
  const nlohmann::json& v = value(key);
  const std::string range = std::to_string(min) + " to " + group_digits(max);
  if (v.is_number_unsigned()) {
    const auto out = v.get<std::uint64_t>();
    if (out < min || out > max) fail(key, "'" + key + "' must be from " + range + ", got " + std::to_string(out));
    return out;
  }
  if (v.is_number_integer()) fail(key, "'" + key + "' must be an integer from " + range + ", got " + short_dump(v));
  if (v.is_number_float() && std::abs(v.get<double>()) >= 18446744073709551616.0) {
    fail(key, "'" + key + "' is too large: " + short_dump(v) + " (at most " + group_digits(max) + ")");
  }
  if (v.is_number_float()) fail(key, "'" + key + "' must be a whole number, got " + short_dump(v));
  fail(key, "'" + key + "' must be a whole number, got " + json_type_name(v) + " " + short_dump(v));
}

std::optional<std::uint64_t> JsonMap::optional_integer(const std::string& key, std::uint64_t min,
                                                       std::uint64_t max) const {
  if (!has(key)) return std::nullopt;
  return integer(key, min, max);
}

double JsonMap::number(const std::string& key, double min, double max) const {
  const nlohmann::json& v = value(key);
  if (!v.is_number()) fail(key, "'" + key + "' must be a number, got " + json_type_name(v) + " " + short_dump(v));
  const double out = v.get<double>();
  if (!std::isfinite(out) || out < min || out > max) {
    fail(key, "'" + key + "' must be from " + short_dump(min) + " to " + short_dump(max) + ", got " + short_dump(v));
  }
  return out;
}

bool JsonMap::boolean(const std::string& key) const {
  const nlohmann::json& v = value(key);
  if (!v.is_boolean()) fail(key, "'" + key + "' must be true or false, got " + short_dump(v));
  return v.get<bool>();
}

bool JsonMap::boolean_or(const std::string& key, bool fallback) const { return has(key) ? boolean(key) : fallback; }

std::string JsonMap::string(const std::string& key) const {
  const nlohmann::json& v = value(key);
  if (!v.is_string()) fail(key, "'" + key + "' must be a string, got " + json_type_name(v) + " " + short_dump(v));
  return v.get<std::string>();
}

std::optional<std::string> JsonMap::optional_string(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return string(key);
}

}  // namespace memplan::detail
