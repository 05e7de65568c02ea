// The result of every estimator: named components with exact bytes and the formula
// that produced them, so a report can show the arithmetic.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memplan/core/bytes.hpp"

namespace memplan {

struct Item {
  std::string name;                          // stable snake_case: weights, kv_cache, attention, ...
  Bytes bytes;                               // exact
  std::string formula;                       // how `bytes` was computed, with the numbers filled in
  std::optional<std::uint64_t> params;       // parameter count, for rows that hold parameters
  std::string note;                          // one line a person should know ("tied to token_embedding")
  std::vector<Item> detail;                  // finer rows; their bytes sum to `bytes`
  std::optional<Bytes> low = std::nullopt;   // where an assumption is uncertain: the plausible range
  std::optional<Bytes> high = std::nullopt;  //   around `bytes` (both set, low <= bytes <= high)
};

// A what-if shown beside a plan: `item` in place of the component named `replaces`.
struct Alternative {
  std::string replaces;  // "activations"
  Item item;             // e.g. the full cache, beside a selective one
};

struct Breakdown {
  std::vector<Item> components = {};           // device memory; total() sums these
  std::vector<Item> host = {};                 // host (CPU) memory the plan also needs, e.g. a cache kept on the CPU
  std::vector<Alternative> alternatives = {};  // what-ifs shown side by side
  std::string peak_phase = {};                 // the moment the total is taken at, as the workload names it (mlp,
                                //   decode, optimizer_step, store_refill, ...); empty: one state throughout

  // Returns the checked sum of the components' bytes. Throws Error(overflow).
  Bytes total() const;
  // Returns the sums of the components' low and high ends (bytes where no range is given).
  Bytes total_low() const;
  Bytes total_high() const;
  // Returns the checked sum of the host rows' bytes. Throws Error(overflow).
  Bytes host_total() const;
  // Returns the bytes of the tensors themselves: the total less the "overhead" component.
  Bytes allocated() const;
  // Returns what PyTorch's caching allocator would reserve: allocated plus the overhead's
  // allocator_rounding and fragmentation rows (the context and workspaces are not reserved).
  Bytes reserved() const;
  // Returns the component called `name`, or nullptr.
  const Item* find(const std::string& name) const;
};

}  // namespace memplan
