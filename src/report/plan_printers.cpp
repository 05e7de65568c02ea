// The CSV printer: memplan measure's rows, and the refusal of every report that is not a grid.
#include <fmt/format.h>

#include "memplan/core/error.hpp"
#include "printers.hpp"

namespace memplan::detail {

namespace {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// The reports that are not grids of rows refuse csv where every refusal is made.
[[noreturn]] void csv_not_available() {
  require_format(OutputFormat::csv, /*csv=*/false);
  throw Error(ErrorKind::internal, "require_format accepted csv for a report without it");
}

}  // namespace

// ---------------------------------------------------------------- csv: grids only

void CsvPrinter::models(const std::vector<ModelRow>&, std::ostream&) const { csv_not_available(); }
void CsvPrinter::gpus(const std::vector<GpuSpec>&, std::ostream&) const { csv_not_available(); }
void CsvPrinter::resolve(const ResolveReport&, std::ostream&) const { csv_not_available(); }
void CsvPrinter::probe(const ProbeReport&, std::ostream&) const { csv_not_available(); }
void CsvPrinter::measurement(const MeasureReport& r, std::ostream& out) const {
  out << "kernel,device,dtype,variant," << r.size_label
      << ",shape,estimate_bytes,measured_bytes,ratio,seconds_best,seconds_median,note\n";
  for (const MeasureRow& row : r.rows) {
    const std::string ratio =
        row.measured && row.estimate.count() > 0
            ? fmt::format("{:.4f}", static_cast<double>(row.measured->count()) / static_cast<double>(row.estimate.count()))
            : "";
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", r.kernel, csv_field(r.device), r.dtype, row.variant,
                       row.size, csv_field(row.shape), row.estimate.count(),
                       row.measured ? std::to_string(row.measured->count()) : "", ratio,
                       row.measured ? fmt::format("{:.9g}", row.seconds_best) : "",
                       row.measured ? fmt::format("{:.9g}", row.seconds_median) : "", csv_field(row.note));
  }
}
void CsvPrinter::calibration(const CalibrationReport&, std::ostream&) const { csv_not_available(); }
void CsvPrinter::hooks(const HooksReport&, std::ostream&) const { csv_not_available(); }
void CsvPrinter::attention_table(const AttentionTableReport&, std::ostream&) const { csv_not_available(); }
void CsvPrinter::imported_model(const ImportReport&, std::ostream&) const { csv_not_available(); }
void CsvPrinter::checkpoint(const CheckpointReport&, std::ostream&) const { csv_not_available(); }
void CsvPrinter::budget_table(const BudgetTableReport&, std::ostream&) const { csv_not_available(); }

}  // namespace memplan::detail
