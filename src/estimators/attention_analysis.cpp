#include "memplan/estimators/attention_analysis.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"

namespace memplan {

namespace {

std::string n(std::uint64_t v) { return std::to_string(v); }

Item row(const std::string& name, const std::vector<std::pair<std::string, std::uint64_t>>& dims, const Precision& dtype) {
  std::uint64_t elements = 1;
  std::string text;
  for (const auto& [label, size] : dims) {
    elements = checked_mul(elements, size, "elements of", name);
    text += (text.empty() ? "" : " x ") + label + "=" + n(size);
  }
  const Bytes bytes(ceil_div(matrix_bits(dtype, 1, elements), 8));
  return {name, bytes, text + " at " + to_string(dtype), std::nullopt, "", {}};
}

Item group(const std::string& name, std::vector<Item> detail, const std::string& formula) {
  Bytes sum;
  for (const Item& d : detail) sum = sum.plus(d.bytes, name);
  return {name, sum, formula, std::nullopt, "", std::move(detail)};
}

std::uint64_t check(const ModelSpec& s, std::uint64_t batch, std::uint64_t seq, const AttentionAnalysisOptions& o) {
  if (batch == 0) throw Error(ErrorKind::invalid_input, "batch must be at least 1", "batch");
  if (seq == 0) throw Error(ErrorKind::invalid_input, "seq_len must be at least 1", "seq_len");
  if (o.heads > s.n_heads) {
    throw Error(ErrorKind::invalid_input,
                "cannot analyse " + n(o.heads) + " heads: " + s.name + " has " + n(s.n_heads) + " per layer", "heads");
  }
  if (is_quantized(o.dtype)) throw Error(ErrorKind::invalid_input, "the pattern dtype must be a float precision", "pattern_dtype");
  return o.heads > 0 ? o.heads : s.n_heads;
}

}  // namespace

Breakdown estimate_attention_patterns(const ModelSpec& s, std::uint64_t batch, std::uint64_t seq,
                                      const AttentionAnalysisOptions& o) {
  const std::uint64_t heads = check(s, batch, seq, o);
  const std::uint64_t layers = o.all_layers ? s.n_layers : 1;
  const std::uint64_t chunk = o.chunk > 0 ? std::min(o.chunk, seq) : seq;
  std::vector<Item> rows;
  if (o.reduce) {
    rows.push_back(row("row_statistics", {{"layers", s.n_layers}, {"b", batch}, {"heads", heads}, {"s", seq}}, precisions::fp32));
    rows.push_back(row("pattern_chunk", {{"b", batch}, {"heads", heads}, {"chunk", chunk}, {"s", seq}}, o.dtype));
  } else {
    rows.push_back(row("patterns", {{"layers", layers}, {"b", batch}, {"heads", heads}, {"s", seq}, {"s", seq}}, o.dtype));
    if (chunk < seq) {
      rows.push_back(row("pattern_chunk", {{"b", batch}, {"heads", heads}, {"chunk", chunk}, {"s", seq}}, o.dtype));
    }
  }
  Item item = group("attention_patterns", std::move(rows),
                    o.reduce ? "entropy per query row kept, patterns computed " + n(chunk) + " rows at a time and dropped"
                             : std::string(o.all_layers ? "every layer's" : "one layer's") +
                                   " patterns kept: layers x b x heads x s^2 x bytes");
  if (!o.reduce && o.all_layers) {
    item.note = "chunking does not shrink kept patterns; reduce them per chunk (entropy) or analyse one layer at a time";
  }
  return Breakdown{{item}};
}

Breakdown estimate_qkov(const ModelSpec& s, std::uint64_t batch, std::uint64_t seq, const AttentionAnalysisOptions& o) {
  const std::uint64_t heads = check(s, batch, seq, o);
  const std::uint64_t d = s.d_model;
  const std::uint64_t chunk = o.chunk > 0 ? std::min(o.chunk, seq) : seq;
  const std::uint64_t all_heads = checked_mul(s.n_layers, heads, "heads");
  std::vector<Item> rows{
      row("qk_ov_circuits", {{"2", 2}, {"heads", heads}, {"d", d}, {"d", d}}, o.dtype),
      row("composition_scores", {{"3", 3}, {"L*heads", all_heads}, {"L*heads", all_heads}}, precisions::fp32),
      row("layer_patterns", {{"b", batch}, {"heads", heads}, {"chunk", chunk}, {"s", seq}}, o.dtype),
  };
  Item item = group("qkov_circuits", std::move(rows),
                    "dense QK and OV circuits of one layer's " + n(heads) + " heads (d x d each), Q/K/V composition "
                    "scores between every pair of heads, one layer's patterns");
  item.note = "one layer at a time; all " + n(s.n_layers) + " layers' circuits at once would be " + n(s.n_layers) + "x the circuits row";
  return Breakdown{{item}};
}

}  // namespace memplan
