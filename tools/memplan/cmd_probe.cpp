// memplan probe: the GPUs, host and environment this machine has. Exit 0 whenever it
// answered, including "no driver": that is an answer, printed with its reason.
#include <iostream>

#include "commands.hpp"
#include "memplan/probe/probe.hpp"
#include "memplan/report/probe.hpp"

namespace memplan::cli {

namespace {

struct ProbeArgs {
  double warn_above = 0.85;  // TheLoom's memory_warning_threshold
  OutputOptions output;
};

ProbeReport to_report(const ProbeResult& r, double warn_above) {
  ProbeReport report;
  report.status = to_string(r.status);
  report.reason = r.reason;
  report.driver_version = r.driver_version;
  report.cuda_version = r.cuda_version;
  for (const ProbedDevice& d : r.devices) {
    ProbeDeviceRow row;
    row.index = d.index;
    row.name = d.name;
    row.uuid = d.uuid;
    row.total_memory = d.total_memory;
    row.free_memory = d.free_memory;
    row.used_memory = d.used_memory;
    row.compute_capability = to_string(d.compute_capability);
    row.multiprocessors = d.multiprocessors;
    row.memory_bus_width_bits = d.memory_bus_width_bits;
    row.memory_clock_khz = d.memory_clock_khz;
    row.bandwidth_gbs = d.bandwidth_gbs;
    for (const GpuProcess& p : d.processes) row.processes.push_back({p.pid, p.name, p.type, p.used_memory});
    row.processes_known = d.processes_known;
    row.notes = d.notes;
    report.devices.push_back(std::move(row));
  }
  report.cpu_model = r.host.cpu_model;
  report.logical_cores = r.host.logical_cores;
  report.physical_cores = r.host.physical_cores;
  report.usable_cores = r.host.usable_cores;
  report.ram_total = r.host.ram_total;
  report.ram_available = r.host.ram_available;
  report.memory_limit = r.host.memory_limit;
  report.environment = to_string(r.environment.kind);
  report.environment_evidence = r.environment.evidence;
  report.environment_also = r.environment.also;
  report.environment_detail = r.environment.detail;
  for (const MemoryWarning& w : check_memory_threshold(r, warn_above)) report.warnings.push_back(w.message);
  report.notes = r.notes;
  return report;
}

}  // namespace

void define_probe(CLI::App& self, int& exit_code, const NamedOptions& /*named*/) {
  auto args = std::make_shared<ProbeArgs>();
  CLI::App* cmd = &self;
  cmd->description(
      "Show the NVIDIA GPUs this machine has (memory from NVML, compute capability, processes),\n"
      "the host CPU and RAM, and the environment (Colab, Modal, RunPod, Vast.ai, Lambda, SLURM,\n"
      "Kubernetes, SSH, container or local). The driver is loaded at run time: with none, the\n"
      "reason is printed and the exit code is still 0.");
  cmd->add_option("--warn-above", args->warn_above, "Warn about GPUs whose used memory exceeds this fraction")
      ->capture_default_str();
  add_output_options(*cmd, args->output);
  cmd->callback([args, &exit_code] {
    const PrintOptions print_options = args->output.print_options<ProbeReport>();
    print(to_report(probe(), args->warn_above), print_options, std::cout);
    exit_code = 0;
  });
}

}  // namespace memplan::cli
