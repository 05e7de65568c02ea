// memplan check: each plan file against its budget x memory_warning_threshold.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "memplan/io/plan_file.hpp"
#include "memplan/report/print.hpp"

namespace memplan {

struct PlanCheckRow {
  std::string path;              // the plan file as named
  std::optional<PlanFile> plan;  // as parsed; unset when it could not be read (`error`)
  std::string budget;            // as the plan names it: a GPU, a size, "probe: <the GPU found>"
  std::string device;            // the GPU the budget is, when it is one
  PlanOutcome outcome;           // evaluate_plan against the budget: total, limit, verdict, warnings
  std::string error;             // non-empty: the plan could not be read or estimated
};

struct CheckReport {
  std::vector<PlanCheckRow> plans;
};

// Returns whether the row's plan was estimated and fits (verdict fits).
bool plan_fits(const PlanCheckRow& row);

// Writes one line per plan (PASS or FAIL; a plan that could not be read is left to the
// caller's error message) or JSON (docs/schemas/check.schema.json: every plan, all_fit).
// Table (units) or JSON; no CSV. Throws as require_format.
void print(const CheckReport& report, const PrintOptions& options, std::ostream& out);

}  // namespace memplan
