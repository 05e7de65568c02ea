// Options as front-ends receive them (a name and its words, from a command line or from
// Python keyword arguments), and the command line's spelling of a plan: --flags for the
// option table's keys, and the `memplan estimate` line that reproduces a changed plan.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "memplan/frontend/device.hpp"
#include "memplan/plan/options.hpp"

namespace memplan {

// One option of the table as given: its words (none for a flag that is set).
struct GivenOption {
  const OptionDef* def = nullptr;
  std::vector<std::string> values;
};

// Returns the settings the given options describe, applied in order (set_option).
// Throws Error(invalid_input, key).
PlanSettings settings_from(const std::vector<GivenOption>& given);

// Returns "--batch" for the option with key "batch_size" (its short alias is not used).
std::string flag_of(const OptionDef& option);

// Returns `text` with control characters other than newline and tab (ESC, CR, ...) written
// as \xNN, so that a name read from a file cannot drive the terminal.
std::string terminal_safe(std::string_view text);

// Returns terminal_safe(text) with every `key` naming an option written as its flag
// (--batch), and `kind` as -w: the CLI's text and JSON, and the Python module's to_dict().
std::string render_for_cli(std::string_view text);

// `memplan estimate MODEL` with the given options and `change` applied over them: the
// command that shows a changed plan.
std::vector<std::string> estimate_command(const std::string& model, const DeviceArgs& device,
                                          const std::vector<GivenOption>& given,
                                          const std::vector<OptionSetting>& change);

}  // namespace memplan
