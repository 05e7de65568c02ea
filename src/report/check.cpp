// memplan check: table and JSON.
#include "memplan/report/check.hpp"

#include <fmt/format.h>

#include "common.hpp"

namespace memplan {

bool plan_fits(const PlanCheckRow& row) { return row.error.empty() && row.plan && row.outcome.fits.value_or(false); }

namespace {

using detail::ordered_json;

// The plan's notes (settings that do not apply), then the resolver's warnings.
std::vector<std::string> notes_of(const PlanCheckRow& p) {
  std::vector<std::string> notes = p.plan->notes;
  notes.insert(notes.end(), p.outcome.warnings.begin(), p.outcome.warnings.end());
  return notes;
}

void table(const CheckReport& r, const PrintOptions& options, std::ostream& out) {
  const Units u = options.units;
  for (const PlanCheckRow& p : r.plans) {
    if (!p.error.empty() || !p.plan) continue;  // errors go to stderr
    const PlanOutcome& o = p.outcome;
    out << fmt::format("{} {}  {} {}  {} of {} ({:g}% limit {})", plan_fits(p) ? "PASS" : "FAIL", p.path,
                       p.plan->model.spec.name, to_string(p.plan->workload.kind), format_bytes(o.total, u),
                       format_bytes(o.budget.value_or(Bytes(0)), u), p.plan->memory.memory_warning_threshold * 100.0,
                       format_bytes(o.limit.value_or(Bytes(0)), u));
    out << fmt::format("  [{}, {}]\n", p.budget, to_string(o.precision));
    for (const std::string& n : notes_of(p)) out << "  note: " << n << '\n';
  }
}

void json(const CheckReport& r, std::ostream& out) {
  ordered_json plans = ordered_json::array();
  bool all_fit = true;
  for (const PlanCheckRow& p : r.plans) {
    ordered_json j;
    j["plan"] = p.path;
    if (!p.error.empty() || !p.plan) {
      j["error"] = p.error;
      all_fit = false;
      plans.push_back(j);
      continue;
    }
    const PlanOutcome& o = p.outcome;
    j["model"] = p.plan->model.spec.name;
    j["workload"] = to_string(p.plan->workload.kind);
    j["precision"] = to_string(o.precision);
    j["budget"] = p.budget;
    if (!p.device.empty()) j["device"] = p.device;
    j["total_bytes"] = o.total.count();
    j["budget_bytes"] = o.budget.value_or(Bytes(0)).count();
    j["threshold"] = p.plan->memory.memory_warning_threshold;
    j["limit_bytes"] = o.limit.value_or(Bytes(0)).count();
    j["verdict"] = to_string(o.verdict.value_or(Verdict::does_not_fit));
    j["fits"] = plan_fits(p);
    j["notes"] = notes_of(p);
    all_fit = all_fit && plan_fits(p);
    plans.push_back(j);
  }
  ordered_json j;
  j["schema_version"] = json_schema_version;
  j["plans"] = plans;
  j["all_fit"] = all_fit;
  detail::emit(j, out);
}

}  // namespace

void print(const CheckReport& report, const PrintOptions& options, std::ostream& out) {
  require_format<CheckReport>(options.format);
  if (options.format == OutputFormat::json) return json(report, out);
  table(report, options, out);
}

}  // namespace memplan
