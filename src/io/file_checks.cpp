#include "memplan/io/file_checks.hpp"

#include <sys/stat.h>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"

namespace memplan {

namespace {

// "a FIFO", "a character device", ...: what a stat mode is, for messages.
std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

}  // namespace

void require_regular_input(const std::string& path, std::string_view what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return;
  throw ConfigError(printable(path), 0, 0, "", "is " + kind_of(st.st_mode) + ", not " + std::string(what));
}

void require_output_target(const std::string& path, const std::vector<std::string>& inputs) {
  struct stat target {};
  if (::stat(path.c_str(), &target) != 0) return;  // a new file
  if (S_ISDIR(target.st_mode)) return;             // write_file_atomically says "it is a directory"
  if (!S_ISREG(target.st_mode)) {
    throw ConfigError(printable(path), 0, 0, "",
                      "cannot write: it is " + kind_of(target.st_mode) +
                          "; memplan writes regular files only (write to a file, or print to stdout)");
  }
  for (const std::string& input : inputs) {
    struct stat in {};
    if (::stat(input.c_str(), &in) == 0 && in.st_dev == target.st_dev && in.st_ino == target.st_ino) {
      throw ConfigError(printable(path), 0, 0, "",
                        "cannot write: it is one of this command's inputs ('" + printable(input) + "')");
    }
  }
}

}  // namespace memplan
