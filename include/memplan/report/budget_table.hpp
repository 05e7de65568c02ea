// memplan budget-table: the published memory budget tables (7B and 70B on an 80 GB GPU),
// regenerated from memplan's formulas.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "memplan/core/bytes.hpp"
#include "memplan/report/print.hpp"

namespace memplan {

struct BudgetRow {
  std::string metric;    // the published table's name: "Fisher Spectrum", "Lanczos (k=20)", ...
  std::string workload;  // the memplan workload and knobs that plan it
  std::string batch;     // "32", or "any"
  std::string seq;
  std::optional<Bytes> analysis;  // the metric's own state (what the published Memory column sizes)
  std::optional<Bytes> total;     // everything the GPU holds at the peak (model, passes, overhead)
  std::string needed;             // when no 64-bit byte count can hold it: "181.6 EB"
  std::optional<double> seconds;  // estimated time (FLOPs / (peak x efficiency))
  bool fits = false;
  std::string seed_memory;  // the published figures, "" where the table has no such row
  std::string seed_time;
  std::string seed_status;  // "ok", "warn", "no"
  std::string note;         // why memplan differs, or what would make it fit
};

struct BudgetTableReport {
  std::string model;
  std::uint64_t params = 0;
  std::string gpu;         // device name
  Bytes gpu_memory;        // as the driver reports it
  std::string seed_table;  // "7B" or "70B": the published table the rows are set beside
  std::string time_assumption;
  std::vector<BudgetRow> rows;
  std::vector<std::string> notes;
};

// Writes one row per metric beside the published figures. Table (units) or JSON; no CSV.
// Throws as require_format.
void print(const BudgetTableReport& report, const PrintOptions& options, std::ostream& out);

}  // namespace memplan
