// Typed, located reads from a YAML mapping: every failure is a ConfigError naming the
// file, line, column and key. Private to memplan::io; yaml-cpp stays out of public headers.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memplan/core/error.hpp"

namespace memplan::detail {

// Parses `text` as one YAML document. Throws ConfigError at the syntax error's position.
YAML::Node parse_yaml(std::string_view text, const std::string& file);

// Throws ConfigError at `node`'s position (line and column 1-based).
[[noreturn]] void fail_at(const YAML::Node& node, const std::string& file, const std::string& key,
                          const std::string& message, ErrorKind kind = ErrorKind::invalid_input);

class YamlMap {
 public:
  // `what` says what the mapping describes ("a model", "a GPU entry") for messages.
  YamlMap(const YAML::Node& node, std::string file, std::string what);

  // Throws on a key not in `known` (with a did-you-mean) and on a repeated key.
  void reject_unknown(const std::vector<std::string>& known) const;

  bool has(const std::string& key) const;
  // Each reader throws when the key is missing (required readers) or has the wrong type.
  std::uint64_t integer(const std::string& key, std::uint64_t min, std::uint64_t max) const;
  std::optional<std::uint64_t> optional_integer(const std::string& key, std::uint64_t min, std::uint64_t max) const;
  double number(const std::string& key, double min, double max) const;
  bool boolean(const std::string& key) const;
  std::string string(const std::string& key) const;
  std::vector<std::string> string_list(const std::string& key) const;
  const YAML::Node& node() const { return node_; }
  YAML::Node value(const std::string& key) const;

  // Throws ConfigError at `key`'s value (or at the mapping itself when the key is absent).
  [[noreturn]] void fail(const std::string& key, const std::string& message,
                         ErrorKind kind = ErrorKind::invalid_input) const;
  // Runs `parse` on the key's string value and rethrows its Error at the key's position.
  template <typename Parse>
  auto parsed(const std::string& key, Parse parse) const {
    const std::string text = string(key);
    try {
      return parse(text);
    } catch (const ConfigError&) {
      throw;
    } catch (const Error& e) {
      fail(key, e.what());
    }
  }

  const std::string& file() const { return file_; }

 private:
  YAML::Node scalar(const std::string& key) const;

  YAML::Node node_;
  std::string file_;
  std::string what_;
};

}  // namespace memplan::detail
