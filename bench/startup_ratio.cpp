// The start-up ratio: `memplan ARGS` against `/bin/true` as whole processes, run
// interleaved (one of each per round, so drift in the machine's load hits both alike), the
// median of each reported with their ratio. Target: memplan estimate within 2.5x of
// /bin/true (docs/performance.md).
//
//   build-bench/bench/memplan_startup_ratio build-bench/memplan [ROUNDS] [-- ARGS...]
//   (default: 300 rounds of `estimate llama-2-7b`)
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace {

// Seconds one run of argv takes, stdout and stderr to /dev/null; exits on a failed run.
double run_once(std::vector<char*>& argv) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) {
    std::fprintf(stderr, "startup_ratio: cannot run %s\n", argv[0]);
    std::exit(2);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  const auto end = std::chrono::steady_clock::now();
  posix_spawn_file_actions_destroy(&actions);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "startup_ratio: %s exited with %d\n", argv[0], WEXITSTATUS(status));
    std::exit(2);
  }
  return std::chrono::duration<double>(end - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MEMPLAN [ROUNDS] [-- ARGS...]\n", argv[0]);
    return 2;
  }
  int rounds = 300;
  int next = 2;
  if (argc > 2 && std::strcmp(argv[2], "--") != 0) rounds = std::max(1, std::atoi(argv[next++]));
  if (next < argc && std::strcmp(argv[next], "--") == 0) ++next;
  std::vector<std::string> words = {argv[1]};
  if (next >= argc) {
    words.insert(words.end(), {"estimate", "llama-2-7b"});
  } else {
    for (int i = next; i < argc; ++i) words.emplace_back(argv[i]);
  }
  std::vector<char*> memplan;
  for (std::string& w : words) memplan.push_back(w.data());
  memplan.push_back(nullptr);
  std::string true_path = "/bin/true";
  std::vector<char*> baseline = {true_path.data(), nullptr};

  for (int i = 0; i < 5; ++i) {  // warm the page cache and the dynamic loader's
    run_once(memplan);
    run_once(baseline);
  }
  std::vector<double> a, b;
  for (int i = 0; i < rounds; ++i) {
    a.push_back(run_once(memplan));
    b.push_back(run_once(baseline));
  }
  const double m = median(a), t = median(b);
  std::string shown;
  for (std::size_t i = 1; i + 1 < memplan.size(); ++i) shown += std::string(" ") + memplan[i];
  std::printf("memplan%s: median %.3f ms over %d interleaved rounds\n", shown.c_str(), m * 1e3, rounds);
  std::printf("/bin/true: median %.3f ms\n", t * 1e3);
  std::printf("ratio %.2f (target: at most 2.5)\n", m / t);
  return 0;
}
