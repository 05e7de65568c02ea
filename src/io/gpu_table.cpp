#include "memplan/io/gpu_table.hpp"

#include "builtin_tables.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"

namespace memplan {

std::vector<GpuSpec> builtin_gpus() { return detail::builtin_gpu_table(); }

GpuSpec find_gpu(std::string_view name, const std::vector<GpuSpec>& table) {
  const std::string want = lowered(name);
  std::vector<std::string> known;
  for (const GpuSpec& g : table) {
    if (lowered(g.name) == want) return g;
    for (const std::string& alias : g.aliases) {
      if (lowered(alias) == want) return g;
    }
    known.push_back(g.name);
  }
  const std::vector<std::string> close = closest_names(name, known);
  throw Error(ErrorKind::invalid_input,
              "unknown GPU '" + printable(name) + "'" +
                  (close.empty() ? std::string() : "; closest: " + quoted_list(close)) +
                  " (memplan gpus lists them all)",
              "gpu");
}

}  // namespace memplan
