#include "memplan/io/gpu_table.hpp"

#include "builtin_tables.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "text_file.hpp"

namespace memplan {

std::vector<GpuSpec> builtin_gpus() { return detail::builtin_gpu_table(); }

std::vector<GpuSpec> gpu_table(const std::string& user_file) {
  std::vector<GpuSpec> table = builtin_gpus();
  if (user_file.empty()) return table;
  const std::vector<GpuSpec> own = parse_gpu_table(
      detail::read_text_file(user_file, "a GPU file", detail::kMaxYamlFileBytes), user_file);
  for (const GpuSpec& g : own) {
    std::vector<std::string> names = g.aliases;
    names.push_back(g.name);
    for (const std::string& n : names) {
      if (const GpuSpec* built_in = match_gpu(n, table)) {
        throw ConfigError(user_file, 0, 0, "name",
                          "GPU name '" + printable(n) + "' is already the built-in " + built_in->name +
                              "'s (memplan gpus lists them); give yours another name");
      }
    }
    table.push_back(g);
  }
  return table;
}

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
