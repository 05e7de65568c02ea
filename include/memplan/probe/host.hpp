// The host machine: CPU and RAM, so a CPU fallback is planned too. Read from /proc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "memplan/core/bytes.hpp"

namespace memplan {

struct HostInfo {
  std::string cpu_model;               // "Intel(R) Xeon(R) Platinum 8480+", or "" when /proc does not say
  std::uint32_t logical_cores = 0;     // processors listed in /proc/cpuinfo
  std::uint32_t physical_cores = 0;    // distinct (physical id, core id) pairs; 0 when not listed
  std::uint32_t usable_cores = 0;      // CPUs this process may run on (affinity); 0 when unknown
  std::optional<Bytes> ram_total;      // MemTotal
  std::optional<Bytes> ram_available;  // MemAvailable: what a new process can take without swapping
  std::optional<Bytes> memory_limit;   // a cgroup memory limit (containers), when one is set
};

// Returns the CPU facts of a /proc/cpuinfo text (model, logical and physical cores).
HostInfo parse_cpuinfo(std::string_view text);
// Fills ram_total and ram_available from a /proc/meminfo text (kB lines); leaves the rest.
void parse_meminfo(std::string_view text, HostInfo& host);

// Returns the host's facts from `<proc_root>/cpuinfo`, `<proc_root>/meminfo`, the process's
// CPU affinity and its cgroup memory limit. A file that cannot be read leaves its fields
// empty; never throws for a missing file.
HostInfo read_host(const std::string& proc_root = "/proc");

}  // namespace memplan
