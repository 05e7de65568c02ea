// write_file_atomically: readers see the old file or the whole new one; a failure, even
// half-way through the bytes, leaves no temporary and no changed file behind.
#include "memplan/io/atomic_file.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "memplan/core/error.hpp"

namespace memplan {
namespace atomic_file_test {

namespace fs = std::filesystem;

class AtomicFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "memplan-atomic-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static std::string read(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  // Every entry of the directory, hidden temporaries included.
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const fs::directory_entry& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path dir_;
};

TEST_F(AtomicFile, WritesTheWholeFileAndNothingElse) {
  write_file_atomically(path("model.yaml"), "family: gpt2\n");
  EXPECT_EQ(read(path("model.yaml")), "family: gpt2\n");
  EXPECT_EQ(entries(), std::vector<std::string>{"model.yaml"});
}

TEST_F(AtomicFile, ReplacesAFileAndKeepsItsPermissions) {
  write_file_atomically(path("report.xml"), "old");
  ASSERT_EQ(::chmod(path("report.xml").c_str(), 0640), 0);
  write_file_atomically(path("report.xml"), "new and longer");
  EXPECT_EQ(read(path("report.xml")), "new and longer");
  struct stat st {};
  ASSERT_EQ(::stat(path("report.xml").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640U);
  EXPECT_EQ(entries(), std::vector<std::string>{"report.xml"});
}

TEST_F(AtomicFile, AMissingDirectoryCreatesNothing) {
  try {
    write_file_atomically(path("missing/report.xml"), "x");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), path("missing/report.xml"));
    EXPECT_NE(e.message().find("directory '" + path("missing") + "' does not exist"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(entries().empty());
}

TEST_F(AtomicFile, ADirectoryInTheWayIsLeftAlone) {
  fs::create_directory(path("out.svg"));
  EXPECT_THROW(write_file_atomically(path("out.svg"), "<svg/>"), ConfigError);
  EXPECT_TRUE(fs::is_directory(path("out.svg")));
  EXPECT_EQ(entries(), std::vector<std::string>{"out.svg"});
}

// The disk fills half-way through the bytes (a file-size limit of 64 bytes, in a child
// process): the error names the file, the old contents survive, the temporary is gone.
TEST_F(AtomicFile, AWriteThatFailsHalfWayChangesNothing) {
  write_file_atomically(path("plan.xml"), "the old report");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);  // past the limit write(2) fails with EFBIG instead of killing us
    const rlimit limit{64, 64};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(3);
    try {
      write_file_atomically(path("plan.xml"), std::string(4096, 'x'));
    } catch (const ConfigError& e) {
      ::_exit(e.message().find("writing failed") != std::string::npos ? 0 : 2);
    }
    ::_exit(1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the write succeeded; 2: another error; 3: no file-size limit";
  EXPECT_EQ(read(path("plan.xml")), "the old report");
  EXPECT_EQ(entries(), std::vector<std::string>{"plan.xml"});
}

}  // namespace atomic_file_test
}  // namespace memplan
