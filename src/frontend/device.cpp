#include "memplan/frontend/device.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "memplan/io/gpu_table.hpp"
#include "memplan/kernels/calibration.hpp"
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

std::vector<GpuSpec> gpu_list(const std::vector<std::string>& entries, const std::vector<GpuSpec>& table) {
  constexpr std::uint64_t kMostGpus = 4096;
  std::vector<GpuSpec> out;
  for (const std::string& entry : entries) {
    std::uint64_t copies = 1;
    std::string name = entry;
    const std::size_t x = entry.find('x');
    if (x != std::string::npos && x > 0 &&
        std::all_of(entry.begin(), entry.begin() + static_cast<std::ptrdiff_t>(x),
                    [](unsigned char c) { return std::isdigit(c) != 0; })) {
      const std::string digits = entry.substr(0, x);
      copies = digits.size() > 4 ? kMostGpus + 1 : std::stoull(digits);
      name = entry.substr(x + 1);
      if (copies == 0 || copies > kMostGpus) {
        throw Error(ErrorKind::invalid_input,
                    "`gpus`: '" + printable(entry) + "' asks for " + digits + " GPUs (1 to " +
                        std::to_string(kMostGpus) + ")",
                    "gpus");
      }
    }
    const GpuSpec gpu = find_gpu(name, table);
    for (std::uint64_t i = 0; i < copies; ++i) out.push_back(gpu);
    if (out.size() > kMostGpus) {
      throw Error(ErrorKind::invalid_input, "`gpus` lists more than " + std::to_string(kMostGpus) + " GPUs", "gpus");
    }
  }
  return out;
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
  // The table (with the user's GPU file) is read once, and only when a GPU is looked up.
  std::optional<std::vector<GpuSpec>> loaded;
  const auto table = [&]() -> const std::vector<GpuSpec>& {
    if (!loaded) loaded = known_gpus();
    return *loaded;
  };
  if (!d.gpu && !args.gpu.empty()) {
    // A name of the table first ("4090" is an alias); else text that starts with a digit is
    // a capacity, with its unit: a bare "24" would be 24 bytes.
    const std::string& text = args.gpu;
    if (const GpuSpec* named = match_gpu(text, table())) {
      d.gpu = *named;
    } else if (std::isdigit(static_cast<unsigned char>(text.front())) == 0) {
      d.gpu = find_gpu(text, table());  // throws, naming the closest GPUs
    } else if (std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) {
      throw Error(ErrorKind::invalid_input,
                  "`gpu` " + printable(text) + ": no GPU has that name, and a capacity needs its unit (" + text +
                      "GiB or " + text + "GB)",
                  "gpu");
    } else {
      d.budget = parse_size(text);
    }
  }
  if (!settings.layout.gpus.empty()) d.gpus = gpu_list(settings.layout.gpus, table());
  const WorkloadKind kind = settings.workload.kind;
  if (kind == WorkloadKind::hessian || kind == WorkloadKind::full_fisher) {
    // Only the full-curvature analyses say how many parameters the largest GPU could take.
    const auto largest = std::max_element(table().begin(), table().end(),
                                          [](const GpuSpec& x, const GpuSpec& y) { return x.memory < y.memory; });
    if (largest != table().end()) d.largest = DeviceLimit{largest->name, largest->memory};
  }
  return d;
}

void require_named_gpu(const DeviceChoice& device, std::string_view command) {
  if (device.gpu || !device.budget) return;
  throw Error(ErrorKind::invalid_input,
              std::string(command) + " needs a GPU from the table (`gpu` NAME; memplan gpus lists them): it " +
                  "resolves precisions by the GPU's compute capability, which a bare capacity does not have",
              "gpu");
}

}  // namespace memplan
