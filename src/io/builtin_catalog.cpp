// The built-in model and GPU tables (compiled in from configs/ by tools/builtin_tables) and
// the lookups by name: no files, no YAML, so that a build without them (the web page,
// web/) has every built-in model and GPU.
#include <algorithm>

#include "builtin_tables.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "memplan/io/gpu_table.hpp"
#include "memplan/io/model_file.hpp"

namespace memplan {

std::vector<std::string> builtin_model_names() {
  std::vector<std::string> names;
  for (const detail::BuiltinModel& m : detail::builtin_model_table()) names.emplace_back(m.name);
  return names;
}

ModelEntry load_builtin_model(std::string_view name) {
  const std::span<const detail::BuiltinModel> table = detail::builtin_model_table();
  const auto it = std::lower_bound(table.begin(), table.end(), name,
                                   [](const detail::BuiltinModel& m, std::string_view n) { return m.name < n; });
  if (it != table.end() && it->name == name) return it->make();
  const std::vector<std::string> close = closest_names(name, builtin_model_names());
  throw Error(ErrorKind::invalid_input,
              "unknown model '" + printable(name) + "'" +
                  (close.empty() ? std::string() : "; closest built-in models: " + quoted_list(close)) +
                  " (memplan models lists them all; a path to a .yaml file works too)",
              "model");
}

std::vector<GpuSpec> builtin_gpus() { return detail::builtin_gpu_table(); }

const GpuSpec* match_gpu(std::string_view name, const std::vector<GpuSpec>& table) {
  const std::string want = lowered(name);
  for (const GpuSpec& g : table) {
    if (lowered(g.name) == want) return &g;
    for (const std::string& alias : g.aliases) {
      if (lowered(alias) == want) return &g;
    }
  }
  return nullptr;
}

GpuSpec find_gpu(std::string_view name, const std::vector<GpuSpec>& table) {
  if (const GpuSpec* g = match_gpu(name, table)) return *g;
  std::vector<std::string> known;
  known.reserve(table.size());
  for (const GpuSpec& g : table) known.push_back(g.name);
  const std::vector<std::string> close = closest_names(name, known);
  throw Error(ErrorKind::invalid_input,
              "unknown GPU '" + printable(name) + "'" +
                  (close.empty() ? std::string() : "; closest: " + quoted_list(close)) +
                  " (memplan gpus lists them all)",
              "gpu");
}

}  // namespace memplan
