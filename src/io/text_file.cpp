#include "text_file.hpp"

#include <filesystem>
#include <fstream>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "memplan/io/file_checks.hpp"

namespace memplan::detail {

std::string read_text_file(const std::string& path, std::string_view what, std::uint64_t limit) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw ConfigError(path, 0, 0, "", "is a directory, not " + std::string(what));
  require_regular_input(path, what);  // a FIFO would block the open
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, 0, 0, "", fs::exists(path, ec) ? "cannot be read" : "no such file");
  std::string text;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > limit) {
      throw ConfigError(path, 0, 0, "",
                        "is larger than " + group_digits(limit) + " bytes, the most memplan reads as " +
                            std::string(what));
    }
  }
  if (in.bad()) throw ConfigError(path, 0, 0, "", "cannot be read");
  // A UTF-8 byte order mark is no part of the document: without it, positions start at 1:1
  // on the first character a person sees.
  if (text.starts_with("\xEF\xBB\xBF")) text.erase(0, 3);
  return text;
}

}  // namespace memplan::detail
