// memplan resolve: table and JSON.
#include "memplan/report/resolve.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common.hpp"

namespace memplan {

namespace {

using detail::ordered_json;

void table(const ResolveReport& r, std::ostream& out) {
  const Resolution& res = r.resolution;
  out << fmt::format("resolved   {}  ({})\n", to_string(res.precision), describe(res.precision));
  out << fmt::format("requested  {}\n", res.requested);
  out << fmt::format("device     {}{}\n", res.device, r.device_source.empty() ? "" : ", from " + r.device_source);
  out << fmt::format("policy     {}\n", res.policy);
  out << fmt::format("reason     {}\n\n", res.reason);
  std::size_t width = 0;
  for (const ResolveStep& step : res.chain) width = std::max(width, to_string(step.format).size());
  for (std::size_t i = 0; i < res.chain.size(); ++i) {
    const ResolveStep& step = res.chain[i];
    out << fmt::format("{:<11}{:<{}}  {:<8}  {}\n", i == 0 ? "chain" : "", to_string(step.format), width,
                       step.accepted ? "chosen" : "rejected", step.reason);
  }
  if (!res.warnings.empty()) out << '\n';
  for (const std::string& w : res.warnings) out << "warning: " << w << '\n';
}

void json(const ResolveReport& r, std::ostream& out) {
  const Resolution& res = r.resolution;
  ordered_json chain = ordered_json::array();
  for (const ResolveStep& step : res.chain) {
    chain.push_back({{"precision", to_string(step.format)}, {"accepted", step.accepted}, {"reason", step.reason}});
  }
  ordered_json device{{"kind", to_string(r.device.kind)}, {"name", r.device.name}};
  device["compute_capability"] = r.device.kind == DeviceKind::gpu ? ordered_json(to_string(r.device.compute_capability))
                                                                  : ordered_json(nullptr);
  device["source"] = r.device_source;
  ordered_json j;
  j["schema_version"] = json_schema_version;
  j["policy"] = res.policy;
  j["device"] = device;
  j["precision"] = {{"requested", res.requested},
                    {"resolved", to_string(res.precision)},
                    {"description", describe(res.precision)},
                    {"reason", res.reason},
                    {"warnings", res.warnings},
                    {"chain", chain},
                    {"fell_back", res.fell_back},
                    {"engine_refuses", res.engine_refuses}};
  detail::emit(j, out);
}

}  // namespace

void print(const ResolveReport& report, const PrintOptions& options, std::ostream& out) {
  require_format<ResolveReport>(options.format);
  if (options.format == OutputFormat::json) return json(report, out);
  table(report, out);
}

}  // namespace memplan
