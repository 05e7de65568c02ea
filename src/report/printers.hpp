// The concrete printers; private to memplan::report.
#pragma once

#include <nlohmann/json.hpp>

#include "memplan/report/printer.hpp"

namespace memplan::detail {

// One breakdown row and its detail as JSON (json_printer.cpp).
nlohmann::ordered_json item_json(const Item& item);
// Adds a breakdown's components, total_bytes (with allocated_bytes and reserved_bytes when
// `allocator_figures` and it has an overhead row), the low/high range, host rows and
// alternatives to `j`: the estimate report and each device of a layout report.
void add_breakdown_json(nlohmann::ordered_json& j, const Breakdown& breakdown, bool allocator_figures);

class TablePrinter final : public Printer {
 public:
  explicit TablePrinter(PrintOptions options) : options_(options) {}
  void estimate(const EstimateReport& report, std::ostream& out) const override;
  void models(const std::vector<ModelRow>& rows, std::ostream& out) const override;
  void gpus(const std::vector<GpuSpec>& gpus, std::ostream& out) const override;
  void resolve(const ResolveReport& report, std::ostream& out) const override;
  void probe(const ProbeReport& report, std::ostream& out) const override;
  void measurement(const MeasureReport& report, std::ostream& out) const override;
  void calibration(const CalibrationReport& report, std::ostream& out) const override;
  void hooks(const HooksReport& report, std::ostream& out) const override;
  void attention_table(const AttentionTableReport& report, std::ostream& out) const override;
  void imported_model(const ImportReport& report, std::ostream& out) const override;
  void checkpoint(const CheckpointReport& report, std::ostream& out) const override;
  void check(const CheckReport& report, std::ostream& out) const override;
  void fit(const FitReport& report, std::ostream& out) const override;
  void budget_table(const BudgetTableReport& report, std::ostream& out) const override;  // budget_table_printer.cpp
  void sweep(const SweepReport& report, std::ostream& out) const override;                // plan_printers.cpp
  void recommend(const RecommendReport& report, std::ostream& out) const override;        // plan_printers.cpp
  void layout(const LayoutReport& report, std::ostream& out) const override;              // layout_printers.cpp

 private:
  PrintOptions options_;
};

// Exact integers only, so units and explain do not apply: formulas are always included.
class JsonPrinter final : public Printer {
 public:
  void estimate(const EstimateReport& report, std::ostream& out) const override;
  void models(const std::vector<ModelRow>& rows, std::ostream& out) const override;
  void gpus(const std::vector<GpuSpec>& gpus, std::ostream& out) const override;
  void resolve(const ResolveReport& report, std::ostream& out) const override;
  void probe(const ProbeReport& report, std::ostream& out) const override;
  void measurement(const MeasureReport& report, std::ostream& out) const override;
  void calibration(const CalibrationReport& report, std::ostream& out) const override;
  void hooks(const HooksReport& report, std::ostream& out) const override;
  void attention_table(const AttentionTableReport& report, std::ostream& out) const override;
  void imported_model(const ImportReport& report, std::ostream& out) const override;
  void checkpoint(const CheckpointReport& report, std::ostream& out) const override;
  void check(const CheckReport& report, std::ostream& out) const override;
  void fit(const FitReport& report, std::ostream& out) const override;
  void budget_table(const BudgetTableReport& report, std::ostream& out) const override;  // budget_table_printer.cpp
  void sweep(const SweepReport& report, std::ostream& out) const override;                // plan_printers.cpp
  void recommend(const RecommendReport& report, std::ostream& out) const override;        // plan_printers.cpp
  void layout(const LayoutReport& report, std::ostream& out) const override;              // layout_printers.cpp
};

// Comma-separated values with exact bytes, one header line: for grids (memplan sweep). The
// other reports are not tables of rows; they throw Error(invalid_input) naming the formats
// that apply.
class CsvPrinter final : public Printer {
 public:
  void estimate(const EstimateReport& report, std::ostream& out) const override;
  void models(const std::vector<ModelRow>& rows, std::ostream& out) const override;
  void gpus(const std::vector<GpuSpec>& gpus, std::ostream& out) const override;
  void resolve(const ResolveReport& report, std::ostream& out) const override;
  void probe(const ProbeReport& report, std::ostream& out) const override;
  void measurement(const MeasureReport& report, std::ostream& out) const override;
  void calibration(const CalibrationReport& report, std::ostream& out) const override;
  void hooks(const HooksReport& report, std::ostream& out) const override;
  void attention_table(const AttentionTableReport& report, std::ostream& out) const override;
  void imported_model(const ImportReport& report, std::ostream& out) const override;
  void checkpoint(const CheckpointReport& report, std::ostream& out) const override;
  void check(const CheckReport& report, std::ostream& out) const override;
  void fit(const FitReport& report, std::ostream& out) const override;
  void budget_table(const BudgetTableReport& report, std::ostream& out) const override;
  void sweep(const SweepReport& report, std::ostream& out) const override;
  void recommend(const RecommendReport& report, std::ostream& out) const override;
  void layout(const LayoutReport& report, std::ostream& out) const override;              // layout_printers.cpp
};

}  // namespace memplan::detail
