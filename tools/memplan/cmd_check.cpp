// memplan check PLAN...: the CI gate. Exit 0 when every plan fits under its budget x
// memory_warning_threshold, 1 when any does not, 2 when any plan cannot be read (even if
// others fail their budget).
#include <spdlog/spdlog.h>

#include <iostream>

#include "commands.hpp"
#include "memplan/core/error.hpp"
#include "memplan/io/atomic_file.hpp"
#include "memplan/io/file_checks.hpp"
#include "memplan/io/plan_file.hpp"
#include "memplan/probe/probe.hpp"
#include "memplan/report/check.hpp"
#include "memplan/report/junit.hpp"
#include "plan_options.hpp"

namespace memplan::cli {

namespace {

struct CheckArgs {
  std::vector<std::string> plans;
  std::string budget;  // for plans that name none
  std::string junit;
  OutputOptions output;
};

// The device a probe budget means, probed once per run.
struct Probed {
  bool done = false;
  std::optional<GpuSpec> gpu;
  std::string reason;
};

PlanCheckRow check_one(const std::string& path, const std::optional<PlanBudget>& fallback, Probed& probed) {
  PlanCheckRow row;
  row.path = path;
  PlanFile plan = load_plan_file(path);
  PlanBudget budget = plan.budget;
  if (budget.kind == BudgetKind::none) {
    if (!fallback) {
      throw ConfigError(path, 0, 0, "budget",
                        "the plan names no budget: add 'budget: GPU|SIZE|probe' or pass --budget");
    }
    budget = *fallback;
  }
  std::optional<GpuSpec> device = budget.gpu;
  Bytes budget_bytes = budget.bytes;
  if (budget.kind == BudgetKind::probe) {
    if (!probed.done) {
      const ProbeResult result = probe();
      if (const ProbedDevice* d = first_device(result)) {
        probed.gpu = to_gpu_spec(*d);
        if (d->free_memory) probed.gpu->memory = *d->free_memory;  // what is free now
      } else {
        probed.reason = result.reason;
      }
      probed.done = true;
    }
    if (!probed.gpu)
      throw ConfigError(path, 0, 0, "budget", "budget 'probe' found no usable GPU (" + probed.reason + ")");
    device = probed.gpu;
    budget_bytes = probed.gpu->memory;
  }
  row.outcome = evaluate_plan(plan, device, budget_bytes);
  row.budget = budget.kind == BudgetKind::probe ? "probe: " + device->display : budget.text;
  if (device) row.device = device->name.empty() ? device->display : device->name;
  row.plan = std::move(plan);
  return row;
}

int run_check(const CheckArgs& args) {
  const PrintOptions print_options = args.output.print_options<CheckReport>();
  if (!args.junit.empty()) require_output_target(args.junit, args.plans);  // before any work
  std::optional<PlanBudget> fallback;
  if (!args.budget.empty()) fallback = parse_budget(args.budget);

  CheckReport report;
  Probed probed;
  bool bad_input = false, over_budget = false;
  for (const std::string& path : args.plans) {
    try {
      report.plans.push_back(check_one(path, fallback, probed));
      over_budget = over_budget || !plan_fits(report.plans.back());
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::internal) throw;
      // One of several plans: an error not located in a file (an overflow at the resolved
      // precision) still names the plan.
      const std::string message = dynamic_cast<const ConfigError*>(&e) ? e.what() : path + ": " + e.what();
      std::cerr << "memplan: error: " << render_for_cli(message) << '\n';
      PlanCheckRow row;
      row.path = path;
      row.error = message;
      report.plans.push_back(row);
      bad_input = true;
    }
  }
  print(report, print_options, std::cout);
  if (!args.junit.empty()) {
    write_file_atomically(args.junit, junit_xml(report, print_options.units), args.plans);
    spdlog::debug("wrote {}", args.junit);
  }
  return bad_input ? 2 : over_budget ? 1 : 0;
}

}  // namespace

void define_check(CLI::App& self, int& exit_code, const NamedOptions& /*named*/) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = &self;
  cmd->description(
      "Check plan files against their budgets: the CI gate.\n"
      "A plan (docs/configs.md) names a model, a workload, the memory: section and a budget\n"
      "(a GPU, a size such as 24GiB, or probe). A plan fits when its total is at most\n"
      "budget x memory_warning_threshold (default 0.85).\n"
      "Exit codes: 0 every plan fits, 1 any does not, 2 a plan cannot be read (or bad usage).\n"
      "Examples:\n"
      "  memplan check configs/plans/*.yaml\n"
      "  memplan check plan.yaml --junit memplan-report.xml --format json");
  cmd->add_option("PLAN", args->plans, "Plan files (.yaml)")->required();
  cmd->add_option("--budget", args->budget,
                  "Budget for plans that name none: a GPU name, a size (24GiB, 80GB) or probe");
  cmd->add_option("--junit", args->junit,
                  "Also write a JUnit XML report here, one testcase per plan (atomically: all or nothing;\n"
                  "its folder must exist: memplan creates no directories)");
  add_output_options(*cmd, args->output);
  cmd->callback([args, &exit_code] { exit_code = run_check(*args); });
}

}  // namespace memplan::cli
