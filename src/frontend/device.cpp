#include "memplan/frontend/device.hpp"

#include <cctype>
#include <cstdlib>
#include <optional>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "memplan/io/gpu_table.hpp"
#include "memplan/kernels/calibration.hpp"
#include "memplan/probe/host.hpp"
#include "memplan/probe/probe.hpp"

namespace memplan {

namespace {

// Returns the figures `memplan calibrate` stored for this GPU and driver, or nothing; an
// unreadable cache is a warning, not an error: the documented defaults still apply.
std::optional<Calibration> cached_calibration(const std::string& gpu, const std::string& cuda,
                                              std::vector<std::string>& warnings) {
  std::string path;
  try {
    path = calibration_cache_path();
  } catch (const Error&) {
    return std::nullopt;  // no cache directory: nothing was ever stored
  }
  try {
    return load_calibration(path, gpu, cuda);
  } catch (const Error& e) {
    warnings.push_back("calibration cache " + path + " not used: " + e.what() +
                       "; the overhead uses the documented defaults");
    return std::nullopt;
  }
}

}  // namespace

std::vector<GpuSpec> known_gpus() {
  const char* file = std::getenv("MEMPLAN_GPU_FILE");
  try {
    return gpu_table(file != nullptr ? file : "");
  } catch (const Error& e) {
    throw Error(e.kind(), std::string(e.what()) + " (the GPU file MEMPLAN_GPU_FILE names)", e.key());
  }
}

DeviceChoice choose_device(const DeviceArgs& args, const PlanSettings& settings) {
  DeviceChoice d;
  if (!args.cpu.empty()) {
    if (!args.gpu.empty() || args.probe) {
      throw Error(ErrorKind::invalid_input,
                  "`cpu` plans for the host instead of a GPU: give `gpu` or `probe`, not both", "cpu");
    }
    d.cpu = true;
    if (args.cpu != "host") {
      if (std::isdigit(static_cast<unsigned char>(args.cpu.front())) == 0) {
        throw Error(ErrorKind::invalid_input,
                    "`cpu` takes a size with its unit (64GiB), not '" + printable(args.cpu) +
                        "'; a model goes before the options",
                    "cpu");
      }
      d.budget = parse_size(args.cpu);
    } else {
      const HostInfo host = read_host();
      std::optional<Bytes> room = host.ram_available;
      if (host.memory_limit && (!room || *host.memory_limit < *room)) room = host.memory_limit;
      if (room) {
        d.budget = room;
      } else {
        d.warnings.emplace_back(
            "`cpu`: the host's available RAM could not be read; no verdict (give a size: `cpu` 64GiB)");
      }
    }
  }
  if (args.probe) {
    const ProbeResult probed = probe();
    if (const ProbedDevice* device = first_device(probed)) {
      if (!args.no_calibration) d.calibration = cached_calibration(device->name, probed.cuda_version, d.warnings);
      d.gpu = to_gpu_spec(*device);
      d.probed = true;
      if (device->free_memory) {
        d.gpu->memory = *device->free_memory;  // plan against what is free now, not the card's total
        d.gpu->display += " (free memory now)";
      }
    } else {
      d.warnings.push_back("`probe` found no usable GPU (" + probed.reason + ")" +
                           (args.gpu.empty() ? "" : "; using `gpu` " + args.gpu));
    }
  }
  // The table (with the user's GPU file) is read only when a GPU is looked up.
  choose_from_table(d, args, settings, [] { return known_gpus(); });
  return d;
}

}  // namespace memplan
