// A bound plan: a model, the knobs the option table set, and the device it runs on, with
// its precision resolved, its overhead for that device and its budget. Every command goes
// parse -> bind -> estimate -> print through the two calls here, so a plan means the same
// on every command (estimate, fit, sweep, recommend, check, plan files, layouts).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/gpu_spec.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/estimators/compute_time.hpp"
#include "memplan/estimators/parallelism.hpp"
#include "memplan/plan/calibration.hpp"
#include "memplan/plan/layout.hpp"
#include "memplan/plan/options.hpp"
#include "memplan/plan/verdict.hpp"
#include "memplan/resolve/resolver.hpp"

namespace memplan {

// Where the plan runs, as the front-end found it (the GPU table and the probe are I/O).
struct DeviceChoice {
  std::optional<GpuSpec> gpu;              // the GPU named, a plan's budget GPU, or the probed one
  bool cpu = false;                        // the host CPU instead of a GPU (budget: its RAM, when known)
  bool probed = false;                     // gpu came from the probe: its memory is what is free now
  std::vector<GpuSpec> gpus;               // the `gpus` list of a device_map layout, in order
  std::optional<Bytes> budget;             // a budget in bytes instead of the GPU's memory (plan files)
  std::optional<Calibration> calibration;  // measured figures for this GPU and driver (memplan calibrate)
  std::optional<DeviceLimit> largest;      // the largest GPU of the table, for "at most N parameters fit"
  std::vector<std::string> warnings;       // from choosing it ("no GPU found; using ...")
};

struct Plan {
  ModelSpec model;
  Workload workload;                    // ready to estimate: precision resolved, overhead for the device
  std::string precision_requested;      // as asked: auto or a name
  std::string precision_note;           // why auto chose what it chose (empty for a named precision)
  std::optional<GpuSpec> device;        // the GPU the verdict and time are for
  bool cpu = false;                     // planned for the host CPU: no GPU, no CUDA overheads
  std::optional<LayoutOptions> layout;  // set when a multi-GPU layout was asked for
  std::optional<Bytes> budget;          // the device's memory (or the budget given): what must hold the plan
  double threshold = 0.85;              // the budget share a plan may use before its verdict warns
  std::vector<std::string> warnings;    // resolver fallbacks, a context overrun, the device choice's
};

// Returns the plan `settings` describe on `model` for `device`: the defaults that depend on
// the model filled in (seq_len = min(2048, context), 256 new tokens for generation), every
// option checked against the workload, the precision resolved for the device (auto without
// one assumes compute capability 8.0+), Hopper's cuBLAS workspace, the calibration applied
// (a cuda_context given as an option wins), and the layout options built. Pure. Throws
// Error(invalid_input, key) naming the option at fault. `kinds`: the workloads the options
// are checked against (0: the plan's own; a sweep passes every workload it runs).
Plan bind(const ModelSpec& model, const PlanSettings& settings, const DeviceChoice& device, WorkloadMask kinds = 0);

struct PlanEstimate {
  Breakdown breakdown;                   // one device (empty when the plan has a layout)
  std::optional<LayoutEstimate> layout;  // per device role, when the plan has a layout
  Bytes total;                           // what must fit on the most loaded device
  std::optional<Verdict> verdict;        // when the plan has a budget
  std::optional<TimeEstimate> time;      // with a GPU that lists its throughput (not for layouts)
};

// Returns the plan's memory: estimate_workload, or estimate_layout for a layout; the verdict
// against its budget; and, with a GPU of the table, the time. Throws as those do.
PlanEstimate estimate(const Plan& plan);

// The figures of estimate() a search or sweep needs, without rows or time (fast for
// weights, inference and generation: workload.hpp's estimate_workload_bytes).
struct PlanTotals {
  WorkloadBytes bytes;
  std::optional<Verdict> verdict;
};
PlanTotals estimate_totals(const Plan& plan);

}  // namespace memplan
