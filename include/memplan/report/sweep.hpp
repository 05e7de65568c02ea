// memplan sweep: a grid of plans (plan/sweep.hpp), one row per point.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "memplan/core/gpu_spec.hpp"
#include "memplan/plan/recommend.hpp"
#include "memplan/plan/sweep.hpp"
#include "memplan/report/print.hpp"

namespace memplan {

struct SweepReportRow {
  SweepRow row;                           // run_sweep's row: the point, its total, largest part and verdict
  std::optional<GpuOption> smallest_gpu;  // with `smallest_gpu`: the first GPU of gpu_options that fits it
};

struct SweepReport {
  std::vector<std::string> models;   // the models' names, as SweepPoint::model indexes them
  SweepAxes axes;                    // the axes swept, precisions as resolved
  std::optional<GpuSpec> device;     // the GPU each point is held against
  double threshold = 0.85;           // the limit is budget_limit(device memory, threshold)
  bool smallest_gpu = false;         // rows say the smallest GPU of the table that holds them
  std::vector<SweepReportRow> rows;  // in run_sweep's order
  std::vector<std::string> notes;    // how precisions were resolved
};

template <>
inline constexpr bool has_csv<SweepReport> = true;

// Writes one row per point. Table (units), JSON (docs/schemas/sweep.schema.json) or CSV
// (one header line, exact bytes). Throws as require_format.
void print(const SweepReport& report, const PrintOptions& options, std::ostream& out);

// Returns a self-contained SVG chart of a sweep: total memory (log scale) against sequence
// length (or batch, when one sequence length is swept), one line per model x workload x
// precision x batch (or sequence), and the limit and the GPU's memory as horizontal lines.
// Points without an estimate are left out. Throws Error(invalid_input) when no point has one.
std::string sweep_svg(const SweepReport& report, Units units);

}  // namespace memplan
