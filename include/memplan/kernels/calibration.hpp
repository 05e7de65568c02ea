// Calibration: the per-machine figures other tools guess with a constant, measured once
// on a GPU and kept per GPU and driver in a small cache file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memplan/kernels/cuda.hpp"
#include "memplan/plan/calibration.hpp"

namespace memplan {

struct CalibrationOutcome {
  CudaDeviceInfo device;                   // status ok when calibration ran
  std::optional<Calibration> calibration;  // empty when there is no usable device
};

// Measures on device 0 (best on an idle GPU: the context figure is the drop in free
// memory when memplan's context is created). Figures that cannot be measured keep the
// default and say so. Never throws for an absent device: the outcome says why.
// Throws Error(internal) when a CUDA call fails on a present device.
CalibrationOutcome calibrate_cuda();

// Returns the cache file: $MEMPLAN_CACHE_DIR/calibration.json, else
// $XDG_CACHE_HOME/memplan/calibration.json, else $HOME/.cache/memplan/calibration.json.
// Throws Error(invalid_input) when none of those variables is set.
std::string calibration_cache_path();

// Adds or replaces the entry for (gpu, driver) in the cache file at `path`, creating its
// directory. Throws Error(internal) when the file cannot be written and
// Error(invalid_input) when an existing file is not a memplan calibration cache.
void store_calibration(const std::string& path, const Calibration& calibration);

// Returns the entry for (gpu, driver) in the cache at `path`, or nothing when the file
// or the entry is absent. Throws Error(invalid_input) on a malformed file.
std::optional<Calibration> load_calibration(const std::string& path, const std::string& gpu, const std::string& driver);

}  // namespace memplan
