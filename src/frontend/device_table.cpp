// The device a plan asks for from the GPU table alone: no probe, no files.
#include <algorithm>
#include <cctype>
#include <optional>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "memplan/frontend/device.hpp"
#include "memplan/io/gpu_table.hpp"

namespace memplan {

namespace {

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

void choose_from_table(DeviceChoice& d, const DeviceArgs& args, const PlanSettings& settings,
                       const std::function<std::vector<GpuSpec>()>& load_table) {
  // Read once, and only when a GPU is looked up.
  std::optional<std::vector<GpuSpec>> loaded;
  const auto table = [&]() -> const std::vector<GpuSpec>& {
    if (!loaded) loaded = load_table();
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
      d.budget = parse_size(text, SizeRounding::down);  // "23.53GiB" as PyTorch and vLLM print a total
    }
  }
  if (!settings.layout.gpus.empty()) d.gpus = gpu_list(settings.layout.gpus, table());
  const WorkloadKind kind = settings.workload.kind;
  if (kind == WorkloadKind::hessian || kind == WorkloadKind::full_fisher) {
    // Only the full-curvature analyses say how many parameters the largest GPU could take.
    const auto largest = std::max_element(table().begin(), table().end(), [](const GpuSpec& x, const GpuSpec& y) {
      return usable_memory(x) < usable_memory(y);
    });
    if (largest != table().end()) d.largest = DeviceLimit{largest->name, usable_memory(*largest)};
  }
}

void require_named_gpu(const DeviceChoice& device, std::string_view command) {
  if (device.gpu || !device.budget) return;
  throw Error(ErrorKind::invalid_input,
              std::string(command) + " needs a GPU from the table (`gpu` NAME; memplan gpus lists them): it " +
                  "resolves precisions by the GPU's compute capability, which a bare capacity does not have",
              "gpu");
}

}  // namespace memplan
