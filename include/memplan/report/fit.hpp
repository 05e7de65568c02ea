// memplan fit: the largest batch, sequence length or chunk that fits on a GPU, and what binds.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "memplan/plan/fit.hpp"
#include "memplan/plan/plan.hpp"
#include "memplan/plan/verdict.hpp"
#include "memplan/report/print.hpp"

namespace memplan {

struct FitReport {
  Plan plan;                     // the plan as given, bound for the GPU: its budget x threshold is the limit
  FitResult result;              // fit_largest over one knob, against budget_limit(*plan.budget, plan.threshold)
  std::optional<Verdict> given;  // the verdict of the plan as given (estimate_totals)
  std::string option;            // the knob as an option of the front-end ("--batch"); "" when it has none
  std::optional<Bytes> limit;    // the search's limit when not budget x threshold (llama.cpp's --fit)
  std::string limit_rule;        // what sets it, in words ("" = the threshold)
};

// Writes the search's answer: the limit, the largest value that fits and its total, the
// next value's total and the component that binds, and the plan as given. Table (units)
// or JSON (docs/schemas/fit.schema.json); no CSV. Throws as require_format.
void print(const FitReport& report, const PrintOptions& options, std::ostream& out);

}  // namespace memplan
