// The subcommands. main registers each by name and summary, and only the invoked one's
// options (define_X), so that start-up costs one command's options, not all of them.
#pragma once

#include <CLI/CLI.hpp>

#include <span>

#include "memplan/core/error.hpp"
#include "memplan/report/print.hpp"

namespace memplan::cli {

class NamedOptions;

// Options every reporting command shares: --format, --units (--explain where it applies).
struct OutputOptions {
  std::string format = "table";
  std::string units = "iec";
  bool explain = false;

  // Returns the options to print `Report` with. Throws Error(invalid_input, key "format" or
  // "units") for an unknown format or units, and for a format the report does not have
  // (require_format): commands call it before doing any work.
  template <class Report>
  PrintOptions print_options() const {
    const OutputFormat f = parse_output_format(format);
    require_format<Report>(f);
    return PrintOptions{f, parse_units(units), explain};
  }
};

void add_output_options(CLI::App& command, OutputOptions& options);

// Splits "a,b,blocks.{0,5}.x" at the commas outside braces: {"a", "b", "blocks.{0,5}.x"}.
std::vector<std::string> split_hook_filters(const std::vector<std::string>& values);

struct Command {
  const char* name;
  const char* summary;  // one line, for `memplan --help`
  // Its description, options and callback; `named`: which of the option table's options
  // the command line names (plan_options.hpp).
  void (*define)(CLI::App& cmd, int& exit_code, const NamedOptions& named);
};

// Every subcommand, in the order `memplan --help` lists them.
std::span<const Command> commands();

void define_estimate(CLI::App& cmd, int& exit_code, const NamedOptions& named);
void define_hooks(CLI::App& self, int& exit_code, const NamedOptions& named);
void define_attention(CLI::App& self, int& exit_code, const NamedOptions& named);
void define_models(CLI::App& self, int& exit_code, const NamedOptions& named);
void define_gpus(CLI::App& self, int& exit_code, const NamedOptions& named);
void define_probe(CLI::App& self, int& exit_code, const NamedOptions& named);
void define_resolve(CLI::App& self, int& exit_code, const NamedOptions& named);
void define_measure(CLI::App& self, int& exit_code, const NamedOptions& named);
void define_calibrate(CLI::App& self, int& exit_code, const NamedOptions& named);
void define_import(CLI::App& self, int& exit_code, const NamedOptions& named);
void define_check(CLI::App& self, int& exit_code, const NamedOptions& named);
void define_fit(CLI::App& self, int& exit_code, const NamedOptions& named);
void define_budget_table(CLI::App& self, int& exit_code, const NamedOptions& named);
void define_sweep(CLI::App& self, int& exit_code, const NamedOptions& named);
void define_recommend(CLI::App& self, int& exit_code, const NamedOptions& named);
void define_help(CLI::App& cmd, int& exit_code, const NamedOptions& named);
void define_completion(CLI::App& cmd, int& exit_code, const NamedOptions& named);

}  // namespace memplan::cli
