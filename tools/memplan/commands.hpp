// Each subcommand registers its options on the app and sets `exit_code` when it runs.
#pragma once

#include <CLI/CLI.hpp>

#include "memplan/core/error.hpp"
#include "memplan/report/printer.hpp"

namespace memplan::cli {

// Options every reporting command shares: --format, --units.
struct OutputOptions {
  std::string format = "table";
  std::string units = "iec";
  bool explain = false;
  bool csv = false;  // the command prints rows (sweep, measure): --format csv applies

  std::unique_ptr<Printer> printer() const {
    const OutputFormat f = parse_output_format(format);
    if (f == OutputFormat::csv && !csv) {
      throw Error(ErrorKind::invalid_input, "--format csv applies to 'memplan sweep' and 'memplan measure'; accepted here: 'table' or 'json'",
                  "format");
    }
    return make_printer(f, PrintOptions{parse_units(units), explain});
  }
};

void add_output_options(CLI::App& command, OutputOptions& options);

// Splits "a,b,blocks.{0,5}.x" at the commas outside braces: {"a", "b", "blocks.{0,5}.x"}.
std::vector<std::string> split_hook_filters(const std::vector<std::string>& values);

void add_estimate(CLI::App& app, int& exit_code);
void add_hooks(CLI::App& app, int& exit_code);
void add_attention(CLI::App& app, int& exit_code);
void add_models(CLI::App& app, int& exit_code);
void add_gpus(CLI::App& app, int& exit_code);
void add_probe(CLI::App& app, int& exit_code);
void add_resolve(CLI::App& app, int& exit_code);
void add_measure(CLI::App& app, int& exit_code);
void add_calibrate(CLI::App& app, int& exit_code);
void add_import(CLI::App& app, int& exit_code);
void add_check(CLI::App& app, int& exit_code);
void add_fit(CLI::App& app, int& exit_code);
void add_budget_table(CLI::App& app, int& exit_code);
void add_sweep(CLI::App& app, int& exit_code);
void add_recommend(CLI::App& app, int& exit_code);

}  // namespace memplan::cli
