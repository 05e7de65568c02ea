// Typed, located reads from a JSON object: every failure is a ConfigError naming the
// file, line, column and key. Private to memplan::io; nlohmann_json stays out of public
// headers. nlohmann keeps no positions after parsing, so the positions of an object's
// members are found by a small scanner over the (already validated) text.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "memplan/core/error.hpp"

namespace memplan::detail {

// 1-based line and column (in bytes) of a byte offset in a text.
struct TextPosition {
  std::size_t line = 0;
  std::size_t column = 0;
};

// Returns the position of byte `offset` of `text` (offsets past the end give the end).
TextPosition position_of(std::string_view text, std::size_t offset);

// JSON nested deeper than this is refused before parsing: no real config or safetensors
// header comes close, and a hostile one should not cost a deep recursion.
inline constexpr std::size_t kMaxJsonDepth = 64;

// Parses `text` as one JSON value. Throws ConfigError at the syntax error's line and column
// (nlohmann reports a byte position), naming the string the error sits in when it sits in one
// (an object key: a tensor name or a config key) as the error's key. For JSON inside a
// binary file (a safetensors header) pass `byte_base`, the text's offset in the file: the
// error then names the file byte instead of a line and column. A key twice in one object is
// an error at its second place, unless `duplicates_checked_by_caller` (a safetensors header
// names the tensor that appears twice in its own words).
nlohmann::json parse_json(std::string_view text, const std::string& file,
                          std::optional<std::uint64_t> byte_base = std::nullopt,
                          bool duplicates_checked_by_caller = false);

// Returns `text` with each Infinity and -Infinity outside strings written as null, padded with
// spaces to the same length (line and column numbers stay right). Python's json.dump writes
// float('inf') so, and transformers' configs carry it (Mamba-2's time_step_limit); JSON has
// no such token. NaN is left for the parser to refuse.
std::string python_infinities_as_null(std::string_view text);

// A member of the outermost object of a JSON text: its decoded key and where it starts.
struct JsonMember {
  std::string key;
  std::size_t key_offset = 0;    // byte offset of the key's opening quote
  std::size_t value_offset = 0;  // byte offset of the value's first character
};

// Returns the members of the outermost object of `text` in file order (duplicates
// included). Assumes `text` is valid JSON (parse_json accepted it); returns {} when the
// outermost value is not an object.
std::vector<JsonMember> top_level_members(std::string_view text);

// Returns "object", "array", "string", "number", "true or false" or "null": for messages.
std::string json_type_name(const nlohmann::json& value);

class JsonMap {
 public:
  // `text` is what `object` was parsed from (for positions); `what` says what the object
  // describes ("a Hugging Face config") for messages. Throws when `object` is not an
  // object, and on a key given twice (nlohmann would silently keep the last).
  JsonMap(const nlohmann::json& object, std::string_view text, std::string file, std::string what);

  // The object under `key` (which must be one), located in the same text: its keys' errors
  // name their own line and column. `what` describes it for messages.
  JsonMap object(const std::string& key, std::string what) const;

  // A key counts as present when it is there and not null (Hugging Face writes null for
  // "not set": "sliding_window": null, "head_dim": null).
  bool has(const std::string& key) const;
  // Whether the key is there at all, null included.
  bool contains(const std::string& key) const {
    read_.insert(key);
    return object_.contains(key);
  }
  // Each reader throws when a required key is missing or any key has the wrong type.
  std::uint64_t integer(const std::string& key, std::uint64_t min, std::uint64_t max) const;
  std::optional<std::uint64_t> optional_integer(const std::string& key, std::uint64_t min, std::uint64_t max) const;
  double number(const std::string& key, double min, double max) const;
  bool boolean(const std::string& key) const;
  bool boolean_or(const std::string& key, bool fallback) const;
  std::string string(const std::string& key) const;
  std::optional<std::string> optional_string(const std::string& key) const;
  const nlohmann::json& value(const std::string& key) const;

  // Throws ConfigError at `key`'s value (or at the object itself when the key is absent).
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  // The position of `key`'s value, or of the object when the key is absent.
  TextPosition position(const std::string& key) const;

  const std::string& file() const { return file_; }
  const std::string& what() const { return what_; }

  // The keys of the object, in file order, that no reader above has looked at.
  std::vector<std::string> unread_keys() const;

 private:
  const nlohmann::json& object_;
  std::string_view text_;
  JsonMap(const nlohmann::json& object, std::string_view text, std::string file, std::string what, std::size_t base);

  std::string file_;
  std::string what_;
  std::size_t base_ = 0;  // where the object starts in text_ (a nested object's offset)
  std::vector<JsonMember> members_;
  mutable std::set<std::string, std::less<>> read_;  // keys looked at, for unread_keys
};

}  // namespace memplan::detail
