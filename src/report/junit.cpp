#include "memplan/report/junit.hpp"

#include <fmt/format.h>

#include "xml_text.hpp"

namespace memplan {

using detail::xml_text;

std::string junit_xml(const CheckReport& report, Units units) {
  std::size_t failures = 0, errors = 0;
  for (const PlanCheckRow& p : report.plans) {
    if (!p.error.empty() || !p.plan) {
      ++errors;
    } else if (!plan_fits(p)) {
      ++failures;
    }
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"memplan\" tests=\"{0}\" failures=\"{1}\" errors=\"{2}\">\n",
                     report.plans.size(), failures, errors);
  out += fmt::format(
      "  <testsuite name=\"memplan check\" tests=\"{0}\" failures=\"{1}\" errors=\"{2}\" skipped=\"0\">\n",
      report.plans.size(), failures, errors);
  for (const PlanCheckRow& p : report.plans) {
    const std::string name = xml_text(p.path);
    if (!p.error.empty() || !p.plan) {
      out += fmt::format("    <testcase classname=\"memplan.check\" name=\"{}\">\n", name);
      out += fmt::format("      <error message=\"{}\"/>\n", xml_text(p.error));
      out += "    </testcase>\n";
      continue;
    }
    const PlanOutcome& o = p.outcome;
    const Bytes limit = o.limit.value_or(Bytes(0));
    const std::string summary = fmt::format("{} {}: {} of {} ({:g}% limit {}) on {}, {}", p.plan->model.spec.name,
                                            to_string(p.plan->workload.kind), format_bytes(o.total, units),
                                            format_bytes(o.budget.value_or(Bytes(0)), units),
                                            p.plan->memory.memory_warning_threshold * 100.0, format_bytes(limit, units),
                                            p.budget, to_string(o.precision));
    out += fmt::format("    <testcase classname=\"memplan.check\" name=\"{}\">\n", name);
    if (!plan_fits(p)) {
      out += fmt::format(
          "      <failure message=\"{}\" type=\"over_budget\">total {} bytes &gt; limit {} bytes</failure>\n",
          xml_text("does not fit: " + summary), o.total.count(), limit.count());
    }
    out += fmt::format("      <system-out>{}</system-out>\n", xml_text(summary));
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace memplan
