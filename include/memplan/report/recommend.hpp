// memplan recommend: the plan against its GPU, the changes that save memory (plan/recommend.hpp),
// and the GPUs of the table that hold it as given.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "memplan/plan/plan.hpp"
#include "memplan/plan/recommend.hpp"
#include "memplan/report/print.hpp"

namespace memplan {

// A change as the front-end writes it.
struct ChangeCommand {
  std::vector<std::string> options;  // the options that make it: {"--precision", "int4-g128"}
  std::vector<std::string> command;  // the whole command line of the changed plan
};

struct RecommendReport {
  Plan plan;                      // the plan as given, bound for the GPU (plan.device, plan.budget)
  Recommendation recommendation;  // recommend() against budget_limit(*plan.budget, plan.threshold)
  std::vector<ChangeCommand>
      commands;                    // commands[i] makes recommendation.mitigations[i]; a change without one prints none
  ChangeCommand combined_command;  // makes recommendation.combined
  std::vector<GpuOption> gpus;     // gpu_options over the table, smallest first
};

// Writes the plan's verdict, the changes ranked with their command lines and costs, what
// more GPUs would take, and the smallest GPUs that fit it as given. Table (units) or JSON
// (docs/schemas/recommend.schema.json); no CSV. The plan's warnings name options as `key`.
// Throws as require_format.
void print(const RecommendReport& report, const PrintOptions& options, std::ostream& out);

}  // namespace memplan
