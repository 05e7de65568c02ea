// What every fuzz target checks beyond "it did not crash": bad input must come back as the
// error the CLI turns into exit 2 with a located message. An internal error (exit 3), any
// other exception, or an error that names no file is a finding, and aborts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include "memplan/core/error.hpp"

namespace memplan::fuzz {

[[noreturn]] inline void finding(const std::string& what, const std::string& detail) {
  std::fprintf(stderr, "memplan fuzz finding: %s: %s\n", what.c_str(), detail.c_str());
  std::abort();
}

inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Runs `read`, which parses a file. Returns true when it accepted the input. A rejection must
// be a ConfigError naming a file (the CLI prints it as "file:line:col: message").
template <typename Read>
bool reads_or_locates(Read&& read) {
  try {
    read();
    return true;
  } catch (const ConfigError& e) {
    if (e.file().empty()) finding("a ConfigError names no file", e.what());
    if (e.message().empty()) finding("a ConfigError has no message", e.what());
  } catch (const Error& e) {
    finding(std::string("an unlocated ") + to_string(e.kind()) + " error from a file reader", e.what());
  }
  return false;
}

// Runs `compute` on input the readers accepted. It may refuse with invalid_input or
// overflow (exit 2); an internal error is a finding. Other exceptions escape: libFuzzer
// reports them as crashes, as the CLI would report them as internal errors.
template <typename Compute>
bool computes_or_refuses(Compute&& compute) {
  try {
    compute();
    return true;
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::internal) finding("an internal error", e.what());
  }
  return false;
}

// A directory of this process's own (parallel fuzzing jobs must not share files), removed
// when the process exits normally.
class ScratchDir {
 public:
  ScratchDir() {
    std::error_code ec;
    std::string tmp = (std::filesystem::temp_directory_path(ec) / "memplan-fuzz-XXXXXX").string();
    if (ec || ::mkdtemp(tmp.data()) == nullptr) finding("cannot create a scratch directory", tmp);
    path_ = tmp;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Writes `size` bytes to `path`, replacing it.
inline void write_bytes(const std::filesystem::path& path, const std::uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || (size > 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
    finding("cannot write a scratch file", path.string());
  }
}

}  // namespace memplan::fuzz
