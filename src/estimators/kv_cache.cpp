#include "memplan/estimators/kv_cache.hpp"

#include <algorithm>

#include "memplan/core/error.hpp"

namespace memplan {

namespace {

// Tokens one sequence holds: capped by a sliding window, then rounded up to whole pages.
std::uint64_t windowed_tokens(const ModelSpec& spec, const KvCacheOptions& o) {
  if (o.batch == 0) throw Error(ErrorKind::invalid_input, "batch must be at least 1", "batch");
  if (o.tokens == 0) throw Error(ErrorKind::invalid_input, "the sequence must hold at least 1 token", "seq_len");
  const bool capped = o.honor_sliding_window && spec.sliding_window > 0 && o.tokens > spec.sliding_window;
  return capped ? spec.sliding_window : o.tokens;
}

std::uint64_t paged_tokens(std::uint64_t tokens, const KvCacheOptions& o) {
  return o.page_tokens > 0 ? checked_mul(ceil_div(tokens, o.page_tokens), o.page_tokens, "paged tokens") : tokens;
}

// One layer's keys: a (batch * tokens * kv_heads) x d_head matrix; values the same.
std::uint64_t layer_bytes(const ModelSpec& spec, const KvCacheOptions& o, std::uint64_t tokens) {
  const std::uint64_t rows = checked_mul(checked_mul(o.batch, tokens, "batch * tokens"), spec.n_kv_heads,
                                         "batch * tokens * kv_heads");
  return ceil_div(matrix_bits(o.precision, rows, spec.d_head), 8);
}

}  // namespace

TensorRun kv_cache_allocations(const ModelSpec& spec, const KvCacheOptions& options) {
  const std::uint64_t tokens = paged_tokens(windowed_tokens(spec, options), options);
  return {layer_bytes(spec, options, tokens), checked_mul(2, spec.n_layers, "KV cache tensors")};
}

Breakdown estimate_kv_cache(const ModelSpec& spec, const KvCacheOptions& o) {
  const std::uint64_t windowed = windowed_tokens(spec, o);
  const std::uint64_t tokens = paged_tokens(windowed, o);
  std::string how = std::to_string(windowed) + " tokens";
  std::string note;
  if (windowed != o.tokens) {
    how += " (sliding window)";
    note = "capped at the model's " + std::to_string(spec.sliding_window) + "-token sliding window";
  }
  if (tokens != windowed)
    how += " rounded up to " + std::to_string(tokens) + " (pages of " + std::to_string(o.page_tokens) + ")";
  const Bytes one_side = Bytes(layer_bytes(spec, o, tokens)).times(spec.n_layers, "KV cache bytes");

  const std::string formula = std::to_string(spec.n_layers) + " layers x " + std::to_string(spec.n_kv_heads) +
                              " kv_heads x " + std::to_string(spec.d_head) + " d_head x " + how + " x " +
                              std::to_string(o.batch) + " batch at " + describe(o.precision);
  Item keys{"keys", one_side, formula, std::nullopt, "", {}};
  Item values{"values", one_side, formula, std::nullopt, "", {}};
  Item cache{
      "kv_cache",    one_side.plus(one_side, "KV cache bytes"), "2 (keys, values) x " + formula, std::nullopt, note,
      {keys, values}};
  return Breakdown{{cache}};
}

}  // namespace memplan
