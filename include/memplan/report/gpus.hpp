// memplan gpus: the built-in GPU table.
#pragma once

#include <ostream>
#include <vector>

#include "memplan/core/gpu_spec.hpp"
#include "memplan/report/print.hpp"

namespace memplan {

struct GpusReport {
  std::vector<GpuSpec> gpus;  // as builtin_gpus returns them
};

// Writes one row per GPU: memory (as the driver reports it), compute capability,
// bandwidth, dense tensor TFLOPS. Table (units) or JSON; no CSV. Throws as require_format.
void print(const GpusReport& report, const PrintOptions& options, std::ostream& out);

}  // namespace memplan
