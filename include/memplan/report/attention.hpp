// memplan attention: what each attention variant holds at its peak, over sequence lengths.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "memplan/core/bytes.hpp"
#include "memplan/report/print.hpp"

namespace memplan {

struct AttentionTableRow {
  std::string variant;       // "eager", or a row of the attention notebook's theory ("... theory: standard")
  std::vector<Bytes> bytes;  // one per sequence length
};

struct AttentionTableReport {
  std::uint64_t batch = 0, heads = 0, head_dim = 0, chunk = 0;
  std::string dtype;
  bool include_inputs = true;
  std::vector<std::uint64_t> seq_lens;
  std::vector<AttentionTableRow> rows;
};

// Writes one row per variant, one column per sequence length. Table (units) or JSON; no
// CSV. Throws as require_format.
void print(const AttentionTableReport& report, const PrintOptions& options, std::ostream& out);

}  // namespace memplan
