// Output files written whole or not at all (docs/hardening.md, "Atomic output").
#include "memplan/io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>

#include "memplan/core/error.hpp"
#include "memplan/io/file_checks.hpp"

namespace memplan {

void write_file_atomically(const std::string& path, std::string_view text, const std::vector<std::string>& inputs) {
  require_output_target(path, inputs);
  namespace fs = std::filesystem;
  const fs::path target(path);
  const auto fail = [&](const std::string& why) { throw ConfigError(path, 0, 0, "", "cannot write: " + why); };
  std::error_code ec;
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  if (!fs::exists(dir, ec)) fail("directory '" + dir.string() + "' does not exist");
  if (!fs::is_directory(dir, ec)) fail("'" + dir.string() + "' is not a directory");
  if (fs::is_directory(target, ec)) fail("it is a directory; name a file");
  if (target.filename().empty()) fail("no file name");

  // A fresh name beside the target (rename is atomic only within one file system).
  static std::atomic<unsigned> counter{0};
  std::string temp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temp = (dir /
            ("." + target.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++)))
               .string();
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) {
      fail("cannot create a file in '" + dir.string() + "': " + std::generic_category().message(errno));
    }
  }
  if (fd < 0) fail("cannot find a free temporary name in '" + dir.string() + "'");
  // Replacing a file keeps its permission bits (a fresh file takes the umask's).
  struct stat existing {};
  if (::stat(path.c_str(), &existing) == 0) (void)::fchmod(fd, existing.st_mode & 07777);

  const auto abandon = [&](const std::string& what) {
    const int error = errno;
    if (fd >= 0) ::close(fd);
    ::unlink(temp.c_str());
    fail(what + ": " + std::generic_category().message(error));
  };
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) errno = EIO;  // write(2) made no progress and set no error
    if (n <= 0) abandon("writing failed");
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) abandon("flushing to disk failed");
  const int closed = ::close(fd);
  fd = -1;
  if (closed != 0) abandon("closing failed");
  if (::rename(temp.c_str(), path.c_str()) != 0) abandon("renaming the temporary file failed");
}

}  // namespace memplan
