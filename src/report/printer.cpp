#include "memplan/report/printer.hpp"

#include "printers.hpp"

namespace memplan {

std::unique_ptr<Printer> make_printer(OutputFormat format, const PrintOptions& options) {
  switch (format) {
    case OutputFormat::table: return std::make_unique<detail::TablePrinter>(options);
    case OutputFormat::json: return std::make_unique<detail::JsonPrinter>();
    case OutputFormat::csv: return std::make_unique<detail::CsvPrinter>();
  }
  return std::make_unique<detail::TablePrinter>(options);
}

}  // namespace memplan
