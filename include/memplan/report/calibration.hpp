// memplan calibrate: measured per-GPU figures, or why there are none, as plain values
// (the report layer does not link the kernels).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "memplan/core/bytes.hpp"
#include "memplan/report/print.hpp"

namespace memplan {

struct CalibrationRow {
  std::string name;  // cuda_context, cublas_workspace, allocator_granularity, pool_granularity
  Bytes bytes;
  bool measured = false;  // false: the documented default
  std::string source;
};

struct CalibrationReport {
  bool calibrated = false;              // figures were measured on a GPU
  std::string status;                   // the CUDA status: "ok", "not_built", "no_driver", "no_device", "error"
  std::string reason;                   // when not calibrated: why ("no CUDA device: ...")
  std::string gpu;                      // device name, when calibrated
  std::string driver;                   // CUDA version the driver supports, when calibrated
  std::string cache_path;               // where the figures were stored ("" when not stored)
  std::vector<CalibrationRow> figures;  // measured figures, or the defaults estimates use
};

// Writes the figures and where they were stored. Table (units) or JSON; no CSV. Throws as
// require_format.
void print(const CalibrationReport& report, const PrintOptions& options, std::ostream& out);

}  // namespace memplan
