// memplan measure: memplan's own kernels run, the estimate beside the peak memory measured.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "memplan/core/bytes.hpp"
#include "memplan/report/print.hpp"

namespace memplan {

struct MeasureRow {
  std::string variant;            // attention variant, "reorth"/"plain" (lanczos), or "" (block_eig)
  std::uint64_t size = 0;         // the swept size: seq (attention), dimension (lanczos), block size (block_eig)
  std::string shape;              // every size of the point: "B=4 H=8 N=512 D=64"
  Bytes estimate;                 // memplan's estimate of the same quantity
  std::optional<Bytes> measured;  // peak bytes above the baseline; empty when not measured
  double seconds_best = 0;        // fastest run (wall clock on the CPU, CUDA events on a GPU)
  double seconds_median = 0;
  std::string note;  // why `measured` is empty, or what differs for this row
};

struct MeasureReport {
  std::string kernel;      // "attention", "lanczos", "block_eig"
  std::string device;      // "cpu" or "cuda (NVIDIA H100 80GB HBM3)"
  std::string dtype;       // "fp32"
  std::string parameters;  // the fixed sizes: "B=4 H=8 D=64 chunk=512"
  std::string size_label;  // heading of the swept size: "seq", "n", "b"
  std::string method;      // how the peak was measured and what the estimate counts
  std::uint32_t repeats = 0;
  std::vector<std::string> notes;  // fallbacks ("no CUDA device: ...; measured on the CPU")
  std::vector<MeasureRow> rows;
};

template <>
inline constexpr bool has_csv<MeasureReport> = true;

// Writes one row per measured point: estimate, measured peak, their ratio, times. Table
// (units), JSON or CSV (exact bytes). Throws as require_format.
void print(const MeasureReport& report, const PrintOptions& options, std::ostream& out);

// Returns a log-log SVG chart of a measurement: per variant, the estimate as a dashed line
// over the swept size and the measured peaks as dots (what the attention notebook plots with matplotlib).
// Throws Error(invalid_input) when no row has a size and a byte count to plot.
std::string measure_svg(const MeasureReport& report, Units units);

}  // namespace memplan
