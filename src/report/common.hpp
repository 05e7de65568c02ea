// What several reports' writers share; private to memplan::report.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/report/estimate.hpp"
#include "memplan/report/print.hpp"

namespace memplan::detail {

using nlohmann::ordered_json;

// Writes `j` indented by two, and a newline; invalid UTF-8 (a file name in another
// encoding) is written as U+FFFD, so that the output is always JSON.
void emit(const ordered_json& j, std::ostream& out);

// Returns part / whole as "12.5%", or "-" for a whole of 0.
std::string percent(Bytes part, Bytes whole);

// Returns "1 model", "3 models".
std::string plural(std::size_t n, const char* word);

// Returns "yes, 1.20 GiB left" or "NO, 3.40 GiB over": `total` against `limit`.
std::string fit_text(Bytes total, Bytes limit, bool fits, Units units);

// Adds headroom_bytes (total <= limit) or over_bytes (it is not) to `j`: both exact, never negative.
void headroom_json(ordered_json& j, Bytes total, Bytes limit);

// Returns `text` as one CSV field: quoted, with quotes doubled, when it holds a comma, a
// quote or a line break.
std::string csv_field(const std::string& text);

// --- estimate.cpp: what an estimate and a layout share ---

// The words an estimate's header prints, from its plan.
struct EstimateHeader {
  std::string model;
  std::string family;
  std::string origin;
  std::uint64_t params = 0;
  std::string workload_kind;  // "serving" for vLLM serving, which has no batch or sequence
  std::uint64_t batch = 0;    // 0: none (the weights alone, a server)
  std::uint64_t seq_len = 0;
  std::uint64_t new_tokens = 0;
  std::uint64_t target_len = 0;  // an encoder-decoder's forward pass: decoder tokens (seq_len is the source)
  bool encoder_decoder = false;
  std::uint64_t images = 0;        // a vision-language model's images per sequence
  std::uint64_t image_tokens = 0;  // the tokens of one image
  std::uint64_t image_width = 0;   // its size after the processor's resize
  std::uint64_t image_height = 0;
  std::uint64_t image_crops = 1;    // the tower's images per image (LLaVA-NeXT: its tiles and the whole)
  std::string precision_requested;  // as asked: "auto" or a name
  std::string precision_resolved;
  std::string precision_description;  // "bf16, 2 B/param; activations bf16"
  std::string mixed_precision;        // training: amp, master, pure or fp32; empty otherwise
  std::vector<std::string> warnings;  // the plan's (none for a server: they are about the sequence)
};
EstimateHeader estimate_header(const EstimateReport& report);

// Writes the model, workload and precision lines of a table.
void header_table(const EstimateHeader& header, std::ostream& out);

// The JSON header: schema_version, model, workload, precision.
ordered_json header_json(const EstimateHeader& header);

// Adds a breakdown's components, total_bytes (with allocated_bytes and reserved_bytes when
// it has an overhead row), the low/high range, host rows and alternatives to `j`: the
// estimate and each device of a layout.
void add_breakdown_json(ordered_json& j, const Breakdown& breakdown);
// Adds peak_phase (when the breakdown names one) and largest_unit, the largest component.
void add_peak_json(ordered_json& j, const Breakdown& breakdown);

// --- layout.cpp: an estimate with a layout (report.estimate.layout set) ---

void layout_table(const EstimateReport& report, const PrintOptions& options, std::ostream& out);
void layout_json(const EstimateReport& report, std::ostream& out);

}  // namespace memplan::detail
