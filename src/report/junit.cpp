#include "memplan/report/junit.hpp"

#include <fmt/format.h>

#include "xml_text.hpp"

namespace memplan {

using detail::xml_text;

std::string junit_xml(const CheckReport& report, Units units) {
  std::size_t failures = 0, errors = 0;
  for (const PlanCheckRow& p : report.plans) {
    if (!p.error.empty()) {
      ++errors;
    } else if (!p.fits) {
      ++failures;
    }
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"memplan\" tests=\"{0}\" failures=\"{1}\" errors=\"{2}\">\n",
                     report.plans.size(), failures, errors);
  out += fmt::format("  <testsuite name=\"memplan check\" tests=\"{0}\" failures=\"{1}\" errors=\"{2}\" skipped=\"0\">\n",
                     report.plans.size(), failures, errors);
  for (const PlanCheckRow& p : report.plans) {
    const std::string name = xml_text(p.plan);
    if (!p.error.empty()) {
      out += fmt::format("    <testcase classname=\"memplan.check\" name=\"{}\">\n", name);
      out += fmt::format("      <error message=\"{}\"/>\n", xml_text(p.error));
      out += "    </testcase>\n";
      continue;
    }
    const std::string summary =
        fmt::format("{} {}: {} of {} ({:g}% limit {}) on {}, {}", p.model, p.workload_kind, format_bytes(p.total, units),
                    format_bytes(p.budget_bytes, units), p.threshold * 100.0, format_bytes(p.limit, units), p.budget,
                    p.precision);
    out += fmt::format("    <testcase classname=\"memplan.check\" name=\"{}\">\n", name);
    if (!p.fits) {
      out += fmt::format("      <failure message=\"{}\" type=\"over_budget\">total {} bytes &gt; limit {} bytes</failure>\n",
                         xml_text("does not fit: " + summary), p.total.count(), p.limit.count());
    }
    out += fmt::format("      <system-out>{}</system-out>\n", xml_text(summary));
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace memplan
