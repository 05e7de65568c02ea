// Validators for the numeric options outside the option table (measure, attention, hooks,
// budget-table): a whole number from 1 to 2^40 (CLI11 alone reads -1 into an unsigned as
// 2^64-1), and a finite decimal in [low, high] (CLI11's Range lets nan through).
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace memplan::cli {

inline CLI::Validator count_range() {
  return CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40, "a whole number from 1 to 2^40");
}

inline CLI::Validator finite_range(double low, double high) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        char* end = nullptr;
        const double x = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(x) || x < low || x > high) {
          char range[64];
          std::snprintf(range, sizeof range, "%g to %g", low, high);
          return "Value " + text + " is not a finite number from " + range;
        }
        return {};
      },
      "FINITE", "finite");
}

}  // namespace memplan::cli
