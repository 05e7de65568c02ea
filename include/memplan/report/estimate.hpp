// memplan estimate: a bound plan and its estimate, by component, or per device role when
// the plan has a multi-GPU layout (--tp, --pp, --dp, --zero, --fsdp, --serving vllm,
// --device-map).
#pragma once

#include <ostream>
#include <string>

#include "memplan/plan/plan.hpp"
#include "memplan/report/print.hpp"

namespace memplan {

struct EstimateReport {
  std::string model_origin;  // where the model came from: "built-in" or a file path
  Plan plan;                 // bind(...): model, workload, precision, device, threshold, warnings
  PlanEstimate estimate;     // estimate(plan): the breakdown, or one per device role (estimate.layout)
};

// Writes the report: the breakdown with the verdict and time, or, when estimate.layout is
// set, a column per device role. Table (units, explain) or JSON (docs/schemas/
// estimate.schema.json); no CSV. The plan's warnings name options as `key`, as the core
// does. Throws as require_format.
void print(const EstimateReport& report, const PrintOptions& options, std::ostream& out);

}  // namespace memplan
