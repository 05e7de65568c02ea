#include "memplan/core/error.hpp"

#include <utility>

namespace memplan {

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::invalid_input: return "invalid_input";
    case ErrorKind::overflow: return "overflow";
    case ErrorKind::internal: return "internal";
  }
  return "internal";
}

Error::Error(ErrorKind kind, const std::string& message, std::string key)
    : std::runtime_error(message), kind_(kind), key_(std::move(key)) {}

namespace {
std::string located(const std::string& file, std::size_t line, std::size_t column, const std::string& message) {
  std::string where = file;
  if (line > 0) {
    where += ':' + std::to_string(line);
    if (column > 0) where += ':' + std::to_string(column);
  }
  return where.empty() ? message : where + ": " + message;
}
}  // namespace

void throw_invalid_input(std::string key, const std::string& message) {
  throw Error(ErrorKind::invalid_input, message, std::move(key));
}

ConfigError::ConfigError(std::string file, std::size_t line, std::size_t column, std::string key,
                         const std::string& message, ErrorKind kind)
    : Error(kind, located(file, line, column, message), std::move(key)),
      file_(std::move(file)),
      line_(line),
      column_(column),
      message_(message) {}

}  // namespace memplan
