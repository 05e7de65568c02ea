// memplan models: the built-in model table.
#pragma once

#include <ostream>
#include <vector>

#include "memplan/io/model_file.hpp"
#include "memplan/report/print.hpp"

namespace memplan {

struct ModelsReport {
  std::vector<ModelEntry> models;  // as load_builtin_model returns them
};

// Writes one row per model with its parameter count (count_parameters), sizes and source.
// Table or JSON; no CSV. Throws as require_format.
void print(const ModelsReport& report, const PrintOptions& options, std::ostream& out);

}  // namespace memplan
