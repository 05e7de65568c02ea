// memplan probe: table and JSON.
#include "memplan/report/probe.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common.hpp"

namespace memplan {

namespace {

using detail::ordered_json;

void table(const ProbeReport& r, const PrintOptions& options, std::ostream& out) {
  const auto size = [&](const std::optional<Bytes>& b) { return b ? format_bytes(*b, options.units) : "?"; };
  out << fmt::format("status       {}{}\n", r.status, r.reason.empty() ? "" : ": " + r.reason);
  if (!r.driver_version.empty() || !r.cuda_version.empty()) {
    out << fmt::format("driver       {}{}\n", r.driver_version.empty() ? "version unknown" : r.driver_version,
                       r.cuda_version.empty() ? "" : " (CUDA " + r.cuda_version + ")");
  }
  out << fmt::format("environment  {} ({}{})", r.environment, r.environment_evidence,
                     r.environment_detail.empty() ? "" : ": " + r.environment_detail);
  for (const std::string& a : r.environment_also) out << "; also " << a;
  out << '\n';
  std::string cores = fmt::format("{} logical cores", r.logical_cores);
  if (r.physical_cores > 0) cores += fmt::format(", {} physical", r.physical_cores);
  if (r.usable_cores > 0 && r.usable_cores != r.logical_cores) cores += fmt::format(", {} usable", r.usable_cores);
  out << fmt::format("host         {}: {}; RAM {} total, {} available{}\n",
                     r.cpu_model.empty() ? "CPU model unknown" : r.cpu_model, cores, size(r.ram_total),
                     size(r.ram_available),
                     r.memory_limit ? ", container limit " + format_bytes(*r.memory_limit, options.units) : "");

  if (!r.devices.empty()) {
    std::size_t name_width = 4;
    for (const ProbeDeviceRow& d : r.devices) name_width = std::max(name_width, d.name.size());
    const std::string row = "{:<3}  {:<{}}  {:>4}  {:>4}  {:>11}  {:>11}  {:>11}  {:>10}  {}\n";
    out << '\n'
        << fmt::format(fmt::runtime(row), "gpu", "name", name_width, "cc", "SMs", "total", "used", "free", "bandwidth",
                       "uuid");
    for (const ProbeDeviceRow& d : r.devices) {
      out << fmt::format(fmt::runtime(row), d.index, d.name, name_width, d.compute_capability, d.multiprocessors,
                         format_bytes(d.total_memory, options.units), size(d.used_memory), size(d.free_memory),
                         d.bandwidth_gbs > 0 ? fmt::format("{:.0f} GB/s", d.bandwidth_gbs) : "?", d.uuid);
      for (const ProbeProcessRow& p : d.processes) {
        out << fmt::format("     pid {} ({}{}): {}\n", p.pid, p.name.empty() ? "" : p.name + ", ", p.type,
                           size(p.used_memory));
      }
      for (const std::string& n : d.notes) out << fmt::format("     note: {}\n", n);
    }
  }
  if (!r.notes.empty() || !r.warnings.empty()) out << '\n';
  for (const std::string& w : r.warnings) out << "warning: " << w << '\n';
  for (const std::string& n : r.notes) out << "note: " << n << '\n';
  out << (options.units == Units::iec ? "\nsizes in IEC units (1 GiB = 1024^3 bytes); `format` json gives exact bytes\n"
                                      : "\nsizes in SI units (1 GB = 1000^3 bytes); `format` json gives exact bytes\n");
}

void json(const ProbeReport& r, std::ostream& out) {
  const auto bytes = [](const std::optional<Bytes>& b) { return b ? ordered_json(b->count()) : ordered_json(nullptr); };
  ordered_json devices = ordered_json::array();
  for (const ProbeDeviceRow& d : r.devices) {
    ordered_json processes = nullptr;
    if (d.processes_known) {
      processes = ordered_json::array();
      for (const ProbeProcessRow& p : d.processes) {
        processes.push_back({{"pid", p.pid}, {"name", p.name}, {"type", p.type}, {"used_bytes", bytes(p.used_memory)}});
      }
    }
    devices.push_back({{"index", d.index},
                       {"name", d.name},
                       {"uuid", d.uuid},
                       {"compute_capability", d.compute_capability},
                       {"multiprocessors", d.multiprocessors},
                       {"memory",
                        {{"total_bytes", d.total_memory.count()},
                         {"free_bytes", bytes(d.free_memory)},
                         {"used_bytes", bytes(d.used_memory)}}},
                       {"memory_bus_width_bits", d.memory_bus_width_bits},
                       {"memory_clock_khz", d.memory_clock_khz},
                       {"bandwidth_gbs", d.bandwidth_gbs},
                       {"processes", processes},
                       {"notes", d.notes}});
  }
  ordered_json j;
  j["schema_version"] = json_schema_version;
  j["status"] = r.status;
  j["reason"] = r.reason;
  j["driver"] = {{"version", r.driver_version}, {"cuda_version", r.cuda_version}};
  j["devices"] = devices;
  j["host"] = {{"cpu_model", r.cpu_model},
               {"logical_cores", r.logical_cores},
               {"physical_cores", r.physical_cores},
               {"usable_cores", r.usable_cores},
               {"ram_total_bytes", bytes(r.ram_total)},
               {"ram_available_bytes", bytes(r.ram_available)},
               {"memory_limit_bytes", bytes(r.memory_limit)}};
  j["environment"] = {{"kind", r.environment},
                      {"evidence", r.environment_evidence},
                      {"also", r.environment_also},
                      {"detail", r.environment_detail}};
  j["warnings"] = r.warnings;
  j["notes"] = r.notes;
  detail::emit(j, out);
}

}  // namespace

void print(const ProbeReport& report, const PrintOptions& options, std::ostream& out) {
  require_format<ProbeReport>(options.format);
  if (options.format == OutputFormat::json) return json(report, out);
  table(report, options, out);
}

}  // namespace memplan
