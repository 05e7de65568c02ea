// Which GPU a plan is for, as every front-end (the CLI, the Python module) asks for it: a
// name of the GPU table (with the user's own file), a bare capacity, or the probed GPU.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "memplan/core/gpu_spec.hpp"
#include "memplan/plan/plan.hpp"

namespace memplan {

// The device a plan asks for: `gpu` and `probe` as the options of the same names.
struct DeviceArgs {
  std::string gpu;  // a GPU of the table, or a capacity with its unit ("24GiB"); empty: none
  bool probe = false;
  bool no_calibration = false;
  // The host CPU instead of a GPU: "host" (its available RAM now is the budget) or the budget
  // as a size ("64GiB"); empty: not the CPU.
  std::string cpu;
};

// The GPU table front-ends plan with: the built-in GPUs and, when the environment variable
// MEMPLAN_GPU_FILE names a file in configs/gpus.yaml's format, the user's own.
std::vector<GpuSpec> known_gpus();

// Returns the device `args` choose: `cpu` (the host, its available RAM or the size given:
// the smaller of MemAvailable and a container's memory limit), `probe` (the first GPU, its free memory, cached
// calibration figures), else `gpu` from the table (known_gpus) or, when it is a bare
// capacity ("32GiB", "80GB"), that many bytes as the budget with no GPU's capability; the
// layout's `gpus` from the table; the largest GPU of the table for the full-curvature
// analyses. Throws Error(invalid_input, key "gpu" or "gpus") naming the closest GPUs.
DeviceChoice choose_device(const DeviceArgs& args, const PlanSettings& settings);

// The part of choose_device that needs no machine: `gpu` as a GPU of `load_table()` or a
// capacity (unless `d` already holds a probed GPU), the layout's `gpus`, the largest GPU
// for the full-curvature analyses. `load_table` is called once, and only when a GPU is
// looked up. Throws as choose_device.
void choose_from_table(DeviceChoice& d, const DeviceArgs& args, const PlanSettings& settings,
                       const std::function<std::vector<GpuSpec>()>& load_table);

// Throws Error(invalid_input, key "gpu") when `device` is a bare capacity: `command` needs a
// GPU's capability (precisions to choose) or speed, which a size does not have.
void require_named_gpu(const DeviceChoice& device, std::string_view command);

}  // namespace memplan
