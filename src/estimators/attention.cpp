#include "memplan/estimators/attention.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <utility>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"

namespace memplan {

namespace {

constexpr std::array<std::pair<AttentionVariant, std::string_view>, 7> kVariants{{
    {AttentionVariant::eager, "eager"},
    {AttentionVariant::sdpa, "sdpa"},
    {AttentionVariant::chunked, "chunked"},
    {AttentionVariant::linear, "linear"},
    {AttentionVariant::causal_linear_naive, "causal_linear_naive"},
    {AttentionVariant::causal_linear_chunked, "causal_linear_chunked"},
    {AttentionVariant::recurrent, "recurrent"},
}};

using Dims = std::initializer_list<std::pair<const char*, std::uint64_t>>;

Bytes tensor_bytes(const char* name, Dims dims, const Precision& dtype) {
  std::uint64_t elements = 1;
  for (const auto& dim : dims) elements = checked_mul(elements, dim.second, "elements of", name);
  return Bytes(ceil_div(matrix_bits(dtype, 1, elements), 8));
}

// Receive every tensor a variant holds at its peak: ItemSink lists them with their shapes
// (estimate_attention), ByteSink only adds them up (attention_bytes). One list of tensors,
// attention_tensors below, feeds both, so the two cannot disagree.
class ItemSink {
 public:
  explicit ItemSink(const Precision& dtype) : dtype_(dtype) {}

  void add(const char* name, Dims dims, const Precision& dtype) {
    std::string shape;
    for (const auto& [label, size] : dims)
      shape += (shape.empty() ? "" : " x ") + std::string(label) + "=" + std::to_string(size);
    const Bytes bytes = tensor_bytes(name, dims, dtype);
    item_.detail.push_back({name, bytes, shape + " at " + to_string(dtype), std::nullopt, "", {}});
    item_.bytes = item_.bytes.plus(bytes, "attention bytes");
  }
  void add(const char* name, Dims dims) { add(name, dims, dtype_); }
  Item take(std::string formula) {
    item_.name = "attention";
    item_.formula = std::move(formula);
    return std::move(item_);
  }

 private:
  Precision dtype_;
  Item item_;
};

class ByteSink {
 public:
  explicit ByteSink(const Precision& dtype) : dtype_(dtype) {}

  void add(const char* name, Dims dims, const Precision& dtype) {
    const Bytes bytes = tensor_bytes(name, dims, dtype);
    total_ = total_.plus(bytes, "attention bytes");
    sizes_.push_back(bytes.count());
  }
  void add(const char* name, Dims dims) { add(name, dims, dtype_); }
  Bytes total() const { return total_; }
  std::vector<std::uint64_t> take_sizes() { return std::move(sizes_); }

 private:
  Precision dtype_;
  Bytes total_;
  std::vector<std::uint64_t> sizes_;
};

// Feeds `t` every tensor of `variant` at its peak; returns the formula in words.
template <typename Sink>
const char* attention_tensors(AttentionVariant variant, const AttentionShape& s, Sink& t) {
  const std::uint64_t B = s.batch, H = s.heads, N = s.seq, M = s.kv_seq ? s.kv_seq : s.seq, D = s.head_dim;
  for (const auto& [value, key] : {std::pair{B, "batch"}, {H, "heads"}, {N, "seq"}, {D, "head_dim"}}) {
    if (value == 0) throw Error(ErrorKind::invalid_input, std::string(key) + " must be at least 1", key);
  }
  const bool chunked = variant == AttentionVariant::chunked || variant == AttentionVariant::causal_linear_chunked;
  if (chunked && s.chunk == 0) throw Error(ErrorKind::invalid_input, "chunk must be at least 1", "chunk");
  const std::uint64_t C = std::min(s.chunk, N);
  const Precision fp32 = precisions::fp32;

  if (s.include_inputs) {
    t.add("q", {{"B", B}, {"H", H}, {"N", N}, {"D", D}});
    t.add("k", {{"B", B}, {"H", H}, {"M", M}, {"D", D}});
    t.add("v", {{"B", B}, {"H", H}, {"M", M}, {"D", D}});
  }
  switch (variant) {
    case AttentionVariant::eager:
      t.add("scores", {{"B", B}, {"H", H}, {"N", N}, {"M", M}});
      t.add("probabilities", {{"B", B}, {"H", H}, {"N", N}, {"M", M}}, s.softmax_fp32 ? fp32 : s.dtype);
      // softmax(scores, dtype=float32).to(query.dtype): the cast is born while the scores and the
      // fp32 softmax are both alive (measured: Llama-2-7b eager, docs/accuracy.md). T5's fp32
      // copy of the scores is larger, and gone by the time of its cast.
      if (s.softmax_fp32 && element_bits(s.dtype.format) != 32) {
        if (s.softmax_of_fp32_copy) {
          t.add("scores_fp32", {{"B", B}, {"H", H}, {"N", N}, {"M", M}}, fp32);
        } else {
          t.add("probabilities_16bit", {{"B", B}, {"H", H}, {"N", N}, {"M", M}});
        }
      }
      t.add("output", {{"B", B}, {"H", H}, {"N", N}, {"D", D}});
      return "scores and probabilities B*H*N*M each, held together through softmax, plus the output";
    case AttentionVariant::sdpa:
      t.add("output", {{"B", B}, {"H", H}, {"N", N}, {"D", D}});
      t.add("logsumexp", {{"B", B}, {"H", H}, {"N", N}}, fp32);
      return "tiles stay in on-chip memory; only the output and the fp32 log-sum-exp per row reach HBM";
    case AttentionVariant::chunked:
      t.add("chunk_scores", {{"B", B}, {"H", H}, {"C", C}, {"M", M}});
      t.add("chunk_probabilities", {{"B", B}, {"H", H}, {"C", C}, {"M", M}});
      t.add("output", {{"B", B}, {"H", H}, {"N", N}, {"D", D}});
      return "queries in chunks of C: one chunk's C*M scores and probabilities at a time, plus the output";
    case AttentionVariant::linear:
      t.add("phi_q", {{"B", B}, {"H", H}, {"N", N}, {"D", D}});
      t.add("phi_k", {{"B", B}, {"H", H}, {"M", M}, {"D", D}});
      t.add("kv_state", {{"B", B}, {"H", H}, {"D", D}, {"D", D}});
      t.add("k_sum", {{"B", B}, {"H", H}, {"D", D}});
      t.add("output", {{"B", B}, {"H", H}, {"N", N}, {"D", D}});
      t.add("normaliser", {{"B", B}, {"H", H}, {"N", N}});
      return "feature maps phi(q), phi(k), the B*H*D*D state sum_n phi(k_n) v_n^T, and the output: O(N*D + D^2)";
    case AttentionVariant::causal_linear_naive:
      t.add("phi_q", {{"B", B}, {"H", H}, {"N", N}, {"D", D}});
      t.add("phi_k", {{"B", B}, {"H", H}, {"N", N}, {"D", D}});
      t.add("kv_outer", {{"B", B}, {"H", H}, {"N", N}, {"D", D}, {"D", D}});
      t.add("kv_cumsum", {{"B", B}, {"H", H}, {"N", N}, {"D", D}, {"D", D}});
      t.add("k_cumsum", {{"B", B}, {"H", H}, {"N", N}, {"D", D}});
      t.add("output", {{"B", B}, {"H", H}, {"N", N}, {"D", D}});
      t.add("normaliser", {{"B", B}, {"H", H}, {"N", N}});
      return "the outer products phi(k_n) v_n^T and their cumulative sum, B*H*N*D*D each, are both alive";
    case AttentionVariant::causal_linear_chunked:
      t.add("phi_q", {{"B", B}, {"H", H}, {"N", N}, {"D", D}});
      t.add("phi_k", {{"B", B}, {"H", H}, {"N", N}, {"D", D}});
      t.add("carried_state", {{"B", B}, {"H", H}, {"D", D}, {"D", D}});
      t.add("chunk_state", {{"B", B}, {"H", H}, {"D", D}, {"D", D}});
      t.add("intra_chunk_scores", {{"B", B}, {"H", H}, {"C", C}, {"C", C}});
      t.add("k_sum", {{"B", B}, {"H", H}, {"D", D}});
      t.add("output", {{"B", B}, {"H", H}, {"N", N}, {"D", D}});
      return "state carried between chunks of C, one chunk's state and its C*C causal scores, the running sum of "
             "phi(k) the normaliser divides by (B*H*D, carried across chunks), plus the output";
    case AttentionVariant::recurrent:
      t.add("state", {{"B", B}, {"H", H}, {"D", D}, {"D", D}});
      t.add("k_sum", {{"B", B}, {"H", H}, {"D", D}});
      t.add("output", {{"B", B}, {"H", H}, {"N", N}, {"D", D}});
      return "one token at a time: the B*H*D*D state and the output";
  }
  return "";
}

}  // namespace

std::string to_string(AttentionVariant variant) {
  for (const auto& [v, name] : kVariants) {
    if (v == variant) return std::string(name);
  }
  return "eager";
}

std::vector<AttentionVariant> all_attention_variants() {
  std::vector<AttentionVariant> out;
  out.reserve(std::size(kVariants));
  for (const auto& entry : kVariants) out.push_back(entry.first);
  return out;
}

AttentionVariant parse_attention_variant(std::string_view text) {
  std::vector<std::string> names;
  for (const auto& [v, name] : kVariants) {
    if (name == text) return v;
    names.emplace_back(name);
  }
  throw Error(ErrorKind::invalid_input,
              "unknown attention variant '" + printable(text) + "'" + did_you_mean(text, names) +
                  "; accepted: " + quoted_list(names),
              "attention");
}

Breakdown estimate_attention(AttentionVariant variant, const AttentionShape& s) {
  ItemSink t(s.dtype);
  const char* formula = attention_tensors(variant, s, t);
  return Breakdown{{t.take(to_string(variant) + ": " + formula)}};
}

Bytes attention_bytes(AttentionVariant variant, const AttentionShape& s) {
  ByteSink t(s.dtype);
  attention_tensors(variant, s, t);
  return t.total();
}

std::vector<std::uint64_t> attention_tensor_bytes(AttentionVariant variant, const AttentionShape& s) {
  ByteSink t(s.dtype);
  attention_tensors(variant, s, t);
  return t.take_sizes();
}

Breakdown notebook_attention_theory(const AttentionShape& s) {
  AttentionShape inputs_only = s;
  inputs_only.include_inputs = true;
  const Bytes inputs = [&] {
    Bytes sum;
    const Breakdown sdpa = estimate_attention(AttentionVariant::sdpa, inputs_only);
    for (const Item& d : sdpa.components.front().detail) {
      if (d.name == "q" || d.name == "k" || d.name == "v") sum = sum.plus(d.bytes, "inputs");
    }
    return sum;
  }();
  const std::uint64_t B = s.batch, H = s.heads, N = s.seq, D = s.head_dim;
  const auto elements = [](std::initializer_list<std::uint64_t> dims) {
    std::uint64_t n = 1;
    for (const std::uint64_t d : dims) n = checked_mul(n, d, "attention theory elements");
    return n;
  };
  const auto at = [&](std::uint64_t n) { return Bytes(ceil_div(matrix_bits(s.dtype, 1, n), 8)); };
  const auto peak = [&](const char* name, std::uint64_t n, const char* what) {
    return Item{name, inputs.plus(at(n), name), "inputs 3*B*H*N*D + " + std::string(what), std::nullopt, "", {}};
  };
  Breakdown out;
  out.components.push_back(peak("standard_peak", elements({B, H, N, N}), "one B*H*N*N attention matrix"));
  out.components.push_back(peak("linear_bidir_peak", elements({B, H, D, D}), "one B*H*D*D state"));
  out.components.push_back(peak("linear_causal_peak", elements({B, H, N, D, D}), "one B*H*N*D*D cumulative state"));
  return out;
}

}  // namespace memplan
