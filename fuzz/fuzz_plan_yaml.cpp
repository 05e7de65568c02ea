// Fuzz target: a plan file (parse_plan_yaml), then what `memplan check` computes from what
// it accepts: the plan estimated against its budget. Relative model paths are read from
// tests/cli/data/plans/, as the corpus's plans expect.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "fuzz_support.hpp"
#include "memplan/io/plan_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace memplan;
  PlanFile plan;
  if (!fuzz::reads_or_locates(
          [&] { plan = parse_plan_yaml(fuzz::text_of(data, size), "fuzz-plan.yaml", MEMPLAN_FUZZ_PLAN_DIR); })) {
    return 0;
  }
  std::optional<Bytes> budget;
  if (plan.budget.kind == BudgetKind::gpu || plan.budget.kind == BudgetKind::bytes) budget = plan.budget.bytes;
  fuzz::computes_or_refuses([&] {
    const PlanOutcome outcome = evaluate_plan(plan, plan.budget.gpu, budget);
    if (outcome.limit && *outcome.limit > *outcome.budget) {
      fuzz::finding("a plan's limit exceeds its budget", plan.budget.text);
    }
  });
  return 0;
}
