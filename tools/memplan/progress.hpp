// A progress line on stderr for commands that run longer than a second: what is being done,
// how far along, and about how long the rest takes. On a terminal it rewrites one line; to
// a file or a CI log it writes at most one line a second.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstddef>
#include <iostream>
#include <string>
#include <string_view>

namespace memplan::cli {

class Progress {
 public:
  Progress(std::string verb, std::size_t total)
      : verb_(std::move(verb)), total_(total), tty_(isatty(STDERR_FILENO) != 0) {}
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress() {
    if (shown_ && tty_) std::cerr << "\r\033[K" << std::flush;
  }

  // Counts one unit done; `what` names the next one.
  void step(std::string_view what = {}) {
    ++done_;
    const auto now = std::chrono::steady_clock::now();
    if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::seconds(1)) return;
    last_ = now;
    shown_ = true;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double left = done_ > 0 ? elapsed * static_cast<double>(total_ - std::min(done_, total_)) /
                                        static_cast<double>(done_)
                                  : 0;
    std::cerr << (tty_ ? "\r\033[K" : "") << "memplan: " << verb_ << ' ' << done_ << '/' << total_ << " ("
              << (100 * done_ / (total_ == 0 ? 1 : total_)) << "%)";
    if (!what.empty()) std::cerr << ", " << what;
    std::cerr << ", about " << std::llround(left) << " s left" << (tty_ ? "" : "\n") << std::flush;
  }

 private:
  std::string verb_;
  std::size_t total_;
  std::size_t done_ = 0;
  bool tty_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
};

// Says on stderr what a Hub fetch is doing (find_model's progress): each step is one
// network round that may take seconds, so each gets a line of its own.
inline void say_fetch(const std::string& what) { std::cerr << "memplan: " << what << std::endl; }

}  // namespace memplan::cli
