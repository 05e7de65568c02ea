// The concrete printers; private to memplan::report.
#pragma once

#include "memplan/report/printer.hpp"

namespace memplan::detail {

class TablePrinter final : public Printer {
 public:
  explicit TablePrinter(PrintOptions options) : options_(options) {}
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
  void budget_table(const BudgetTableReport& report, std::ostream& out) const override;  // budget_table_printer.cpp

 private:
  PrintOptions options_;
};

// Exact integers only, so units and explain do not apply: formulas are always included.
class JsonPrinter final : public Printer {
 public:
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
  void budget_table(const BudgetTableReport& report, std::ostream& out) const override;  // budget_table_printer.cpp
};

// Comma-separated values with exact bytes, one header line: for grids (memplan measure; a
// sweep prints through sweep.hpp). The other reports are not tables of rows; they throw as
// require_format.
class CsvPrinter final : public Printer {
 public:
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
  void budget_table(const BudgetTableReport& report, std::ostream& out) const override;
};

}  // namespace memplan::detail
