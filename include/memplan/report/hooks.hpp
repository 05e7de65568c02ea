// memplan hooks: the hook points of a model with shapes and bytes.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "memplan/core/bytes.hpp"
#include "memplan/report/print.hpp"

namespace memplan {

struct HookRow {
  std::string name;         // a hook, or a kind ("blocks.*.hook_resid_post") when grouped
  std::uint64_t count = 1;  // hooks in the row
  std::string shape;        // "[batch=1, pos=2048, d_model=4096]"
  Bytes bytes_each;
  Bytes bytes;  // all hooks of the row
};

struct HooksReport {
  std::string model;
  std::uint64_t batch = 0;
  std::uint64_t seq_len = 0;
  std::string dtype;
  std::vector<HookRow> rows;  // the selected hooks
  std::uint64_t selected_hooks = 0;
  std::uint64_t all_hooks = 0;
  Bytes selected_bytes;
  Bytes all_bytes;   // the full cache, for comparison
  std::string note;  // why the names are not TransformerLens' own (transformer_lens_gap); "" when they are
};

// Writes one row per hook (or kind of hook), and the selection against the full cache.
// Table (units) or JSON; no CSV. Throws as require_format.
void print(const HooksReport& report, const PrintOptions& options, std::ostream& out);

}  // namespace memplan
