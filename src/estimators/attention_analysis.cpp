#include "memplan/estimators/attention_analysis.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "memplan/core/error.hpp"
#include "memplan/core/rows.hpp"

namespace memplan {

namespace {

std::uint64_t check(const ModelSpec& s, std::uint64_t batch, std::uint64_t seq, const AttentionAnalysisOptions& o) {
  if (batch == 0) throw Error(ErrorKind::invalid_input, "batch must be at least 1", "batch");
  if (seq == 0) throw Error(ErrorKind::invalid_input, "seq_len must be at least 1", "seq_len");
  if (attention_layers(s) == 0) {
    throw Error(ErrorKind::invalid_input,
                "attention analyses do not apply to " + s.name + ": its " + group_digits(s.n_layers) +
                    " layers are state-space (Mamba) layers, with no attention patterns or QK/OV circuits",
                "workload");
  }
  if (o.heads > s.n_heads) {
    throw Error(ErrorKind::invalid_input,
                "cannot analyse " + group_digits(o.heads) + " heads: " + s.name + " has " + group_digits(s.n_heads) +
                    " per layer",
                "heads");
  }
  if (is_quantized(o.dtype))
    throw Error(ErrorKind::invalid_input, "the pattern dtype must be a float precision", "pattern_dtype");
  return o.heads > 0 ? o.heads : s.n_heads;
}

}  // namespace

Breakdown estimate_attention_patterns(const ModelSpec& s, std::uint64_t batch, std::uint64_t seq,
                                      const AttentionAnalysisOptions& o) {
  const std::uint64_t heads = check(s, batch, seq, o);
  const std::uint64_t layers = o.all_layers ? attention_layers(s) : 1;
  const std::uint64_t chunk = o.chunk > 0 ? std::min(o.chunk, seq) : seq;
  std::vector<Item> rows;
  if (o.reduce) {
    rows.push_back(tensor_row("row_statistics",
                              {{"layers", attention_layers(s)}, {"b", batch}, {"heads", heads}, {"s", seq}},
                              precisions::fp32));
    rows.push_back(
        tensor_row("pattern_chunk", {{"b", batch}, {"heads", heads}, {"chunk", chunk}, {"s", seq}}, o.dtype));
  } else {
    rows.push_back(
        tensor_row("patterns", {{"layers", layers}, {"b", batch}, {"heads", heads}, {"s", seq}, {"s", seq}}, o.dtype));
    if (chunk < seq) {
      rows.push_back(
          tensor_row("pattern_chunk", {{"b", batch}, {"heads", heads}, {"chunk", chunk}, {"s", seq}}, o.dtype));
    }
  }
  Item item = group_row("attention_patterns", std::move(rows),
                        o.reduce ? "entropy per query row kept, patterns computed " + group_digits(chunk) +
                                       " rows at a time and dropped"
                                 : std::string(o.all_layers ? "every layer's" : "one layer's") +
                                       " patterns kept: layers x b x heads x s^2 x bytes");
  if (!o.reduce && o.all_layers) {
    item.note =
        "chunking does not shrink kept patterns; reduce them per chunk (entropy) or analyse one layer at a time";
  }
  return Breakdown{{item}};
}

Breakdown estimate_qkov(const ModelSpec& s, std::uint64_t batch, std::uint64_t seq, const AttentionAnalysisOptions& o) {
  const std::uint64_t heads = check(s, batch, seq, o);
  const std::uint64_t d = s.d_model;
  const std::uint64_t chunk = o.chunk > 0 ? std::min(o.chunk, seq) : seq;
  const std::uint64_t all_heads = checked_mul(attention_layers(s), heads, "heads");
  std::vector<Item> rows{
      tensor_row("qk_ov_circuits", {{"2", 2}, {"heads", heads}, {"d", d}, {"d", d}}, o.dtype),
      tensor_row("composition_scores", {{"3", 3}, {"L*heads", all_heads}, {"L*heads", all_heads}}, precisions::fp32),
      tensor_row("layer_patterns", {{"b", batch}, {"heads", heads}, {"chunk", chunk}, {"s", seq}}, o.dtype),
  };
  Item item = group_row("qkov_circuits", std::move(rows),
                        "dense QK and OV circuits of one layer's " + group_digits(heads) +
                            " heads (d x d each), Q/K/V composition scores between every pair of heads, one layer's "
                            "patterns");
  item.note = "one layer at a time; all " + group_digits(attention_layers(s)) + " layers' circuits at once would be " +
              group_digits(attention_layers(s)) + "x the circuits row";
  return Breakdown{{item}};
}

}  // namespace memplan
