#include "memplan/io/gpu_table.hpp"

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "text_file.hpp"

namespace memplan {

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

}  // namespace memplan
