// memplan probe: the GPUs, host and environment of this machine, as plain values (the
// report layer does not load drivers, nor link the probe).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "memplan/core/bytes.hpp"
#include "memplan/report/print.hpp"

namespace memplan {

struct ProbeProcessRow {
  std::uint32_t pid = 0;
  std::string name;                  // "" when unknown (another PID namespace)
  std::string type;                  // "compute" or "graphics"
  std::optional<Bytes> used_memory;  // unset when NVML cannot say
};

struct ProbeDeviceRow {
  std::uint32_t index = 0;  // CUDA ordinal
  std::string name;         // the driver's name
  std::string uuid;
  Bytes total_memory;
  std::optional<Bytes> free_memory;  // unset without NVML
  std::optional<Bytes> used_memory;
  std::string compute_capability;  // "8.0"
  std::uint32_t multiprocessors = 0;
  std::uint32_t memory_bus_width_bits = 0;
  std::uint32_t memory_clock_khz = 0;
  double bandwidth_gbs = 0;  // 10^9 bytes per second; 0 when unknown
  std::vector<ProbeProcessRow> processes;
  bool processes_known = false;  // NVML listed the processes
  std::vector<std::string> notes;
};

struct ProbeReport {
  std::string status;          // "ok", "no_driver", "no_device", "driver_error", "driver_too_old"
  std::string reason;          // one line when status is not ok
  std::string driver_version;  // "550.54.15", or ""
  std::string cuda_version;    // "12.4", or ""
  std::vector<ProbeDeviceRow> devices;
  std::string cpu_model;
  std::uint32_t logical_cores = 0;
  std::uint32_t physical_cores = 0;  // 0 when /proc does not say
  std::uint32_t usable_cores = 0;    // CPU affinity; 0 when unknown
  std::optional<Bytes> ram_total;
  std::optional<Bytes> ram_available;
  std::optional<Bytes> memory_limit;  // a cgroup limit below the RAM
  std::string environment;            // "local", "colab", "ssh_remote", ...
  std::string environment_evidence;   // "SSH_CONNECTION is set"
  std::vector<std::string> environment_also;
  std::string environment_detail;     // a task, pod or job id
  std::vector<std::string> warnings;  // devices above the memory warning threshold
  std::vector<std::string> notes;
};

// Writes the probe's status, driver, environment, host and one row per GPU with its
// processes. Table (units) or JSON; no CSV. Throws as require_format.
void print(const ProbeReport& report, const PrintOptions& options, std::ostream& out);

}  // namespace memplan
