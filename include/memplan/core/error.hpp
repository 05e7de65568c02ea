// The one error hierarchy of memplan. The CLI catches memplan::Error once, in main, and
// maps its kind to an exit code; library users can do the same or inspect the fields.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace memplan {

enum class ErrorKind {
  invalid_input,  // a value, name or file the user gave is wrong (exit code 2)
  overflow,       // an exact byte count does not fit in 64 bits (exit code 2)
  internal,       // a bug or an unexpected environment failure (exit code 3)
};

// Returns the lowercase word for `kind` ("invalid_input", "overflow", "internal").
const char* to_string(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  // `key` names the input field the error is about ("n_heads"), or is empty.
  Error(ErrorKind kind, const std::string& message, std::string key = {});

  ErrorKind kind() const noexcept { return kind_; }
  const std::string& key() const noexcept { return key_; }

 private:
  ErrorKind kind_;
  std::string key_;
};

// Throws Error(invalid_input, message, key).
[[noreturn]] void throw_invalid_input(std::string key, const std::string& message);

// An error at a place in a file. line and column are 1-based; 0 means unknown.
// what() reads like a compiler's: "plan.yaml:12:5: unknown key 'n_head' (did you mean 'n_heads'?)".
// Its kind is invalid_input, or overflow for values whose byte counts exceed 64 bits.
class ConfigError : public Error {
 public:
  ConfigError(std::string file, std::size_t line, std::size_t column, std::string key, const std::string& message,
              ErrorKind kind = ErrorKind::invalid_input);

  const std::string& file() const noexcept { return file_; }
  std::size_t line() const noexcept { return line_; }
  std::size_t column() const noexcept { return column_; }
  // The message without the location prefix.
  const std::string& message() const noexcept { return message_; }

 private:
  std::string file_;
  std::size_t line_;
  std::size_t column_;
  std::string message_;
};

}  // namespace memplan
