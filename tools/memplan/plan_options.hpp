// The option table (plan/options.hpp) on the command line: each table entry becomes a
// --flag, given values are parsed into PlanSettings by the table, and messages that name an
// option as `key` are written with its flag. Also the device options every planning
// command shares (--gpu, --probe).
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memplan/frontend/command_line.hpp"
#include "memplan/frontend/device.hpp"
#include "memplan/plan/plan.hpp"

namespace memplan::cli {

// The table's options registered on one command.
struct PlanOptions {
  std::vector<std::pair<const OptionDef*, CLI::Option*>> options;
};

// Which of the option table's options a command line names. A command registers only those:
// registering all ~100 was a sixth of an estimate's process (CLI11 checks each new name
// against every earlier one), and an option that is not on the command line has nothing to
// parse. --help or -h anywhere names them all; a word with a single dash (-w, -b4) names
// every option that has a one-letter alias.
class NamedOptions {
 public:
  NamedOptions(int argc, const char* const* argv);
  bool names(const OptionDef& option) const;

 private:
  bool all_ = false;
  bool short_flags_ = false;
  std::vector<std::string> long_names_;  // "batch" for --batch and --batch=4
};

// Registers the table options `named` names on `cmd`, except those in `skip` (keys). Options
// that are not `common` are hidden from --help (`memplan help options` lists them) unless
// `show_all`.
void add_plan_options(CLI::App& cmd, PlanOptions& out, const NamedOptions& named,
                      const std::vector<std::string_view>& skip = {}, bool show_all = false);

// Returns every table option's flag ("--batch"), for did-you-mean on a mistyped flag.
std::vector<std::string> plan_option_flags();

// Returns the options given on the command line, in the table's order.
std::vector<GivenOption> given_options(const PlanOptions& options);

// Returns the settings the given options describe. Throws Error(invalid_input, key).
PlanSettings plan_settings(const PlanOptions& options);

// --as MODEL_TYPE: read a config.json of a model_type memplan does not know as a known one.
void add_as_option(CLI::App& cmd, std::string& as);

// Registers -g/--gpu (required for commands that need a GPU; `capacity`: it also takes a
// size such as 24GiB) and, with `probe`, --probe and --no-calibration.
void add_device_options(CLI::App& cmd, DeviceArgs& args, bool gpu_required, bool probe, bool capacity);

// Adds --cpu[=SIZE]: plan for the host's CPU and RAM instead of a GPU.
void add_cpu_option(CLI::App& cmd, DeviceArgs& args);

}  // namespace memplan::cli
