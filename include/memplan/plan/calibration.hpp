// Calibration figures: what `memplan calibrate` measured on one GPU and driver (the CUDA
// context, cuBLAS's workspace), carried by a plan in place of the documented defaults.
// Measuring and caching them is the kernels' and io's work (kernels/calibration.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memplan/estimators/overhead.hpp"

namespace memplan {

struct CalibrationFigure {
  std::string name;  // cuda_context, cublas_workspace, allocator_granularity
  std::uint64_t bytes = 0;
  bool measured = false;  // false: the documented default (see `source`)
  std::string source;     // how it was measured, or where the default comes from
};

struct Calibration {
  std::string gpu;                         // device name as the driver reports it
  std::string driver;                      // CUDA version the driver supports, "13.0"
  std::vector<CalibrationFigure> figures;  // cuda_context, cublas_workspace, allocator_granularity
};

// Returns the figures estimates use on a machine that was not calibrated, each with the
// source of its value (docs/accuracy.md lists them).
Calibration default_calibration();

// Returns `options` with the measured figures of `calibration` in place of its
// assumptions: cuda_context (and its low and high, now the measured value) and
// cublas_workspace. Figures that were not measured leave `options` as it is.
OverheadOptions apply_calibration(const Calibration& calibration, OverheadOptions options);

}  // namespace memplan
