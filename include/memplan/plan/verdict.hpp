// One verdict everywhere: estimate, fit, sweep, recommend and check answer "does it fit"
// with the same three states, against the same budget and threshold.
#pragma once

#include <string>

#include "memplan/core/bytes.hpp"

namespace memplan {

// The three answers to "does it fit", the same on every command.
enum class Verdict {
  fits,             // total <= budget x threshold
  above_threshold,  // budget x threshold < total <= budget: it fits, with less headroom than asked for
  does_not_fit,     // total > budget
};

// Returns "fits", "above_threshold", "does_not_fit".
std::string to_string(Verdict verdict);

// Returns the verdict for `total` against `budget` and `threshold` (in (0, 1]; the limit is
// budget_limit(budget, threshold), exact).
Verdict verdict_of(Bytes total, Bytes budget, double threshold);

}  // namespace memplan
