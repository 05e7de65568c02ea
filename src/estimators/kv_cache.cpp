#include "memplan/estimators/kv_cache.hpp"

#include <algorithm>

#include "memplan/core/error.hpp"

namespace memplan {

namespace {

struct Layout {
  std::uint64_t tokens = 0;     // held per sequence after window and paging
  std::string how;              // "2048 tokens", "4096 tokens (sliding window)", ...
  std::string note;
  std::uint64_t per_layer = 0;  // bytes of one layer's keys (or values)
};

Layout layout(const ModelSpec& spec, const KvCacheOptions& o) {
  if (o.batch == 0) throw Error(ErrorKind::invalid_input, "batch must be at least 1", "batch");
  if (o.tokens == 0) throw Error(ErrorKind::invalid_input, "the sequence must hold at least 1 token", "seq_len");

  std::uint64_t tokens = o.tokens;
  std::string how = std::to_string(o.tokens) + " tokens";
  std::string note;
  if (o.honor_sliding_window && spec.sliding_window > 0 && tokens > spec.sliding_window) {
    tokens = spec.sliding_window;
    how = std::to_string(tokens) + " tokens (sliding window)";
    note = "capped at the model's " + std::to_string(spec.sliding_window) + "-token sliding window";
  }
  if (o.page_tokens > 0) {
    const std::uint64_t paged = checked_mul(ceil_div(tokens, o.page_tokens), o.page_tokens, "paged tokens");
    if (paged != tokens) how += " rounded up to " + std::to_string(paged) + " (pages of " + std::to_string(o.page_tokens) + ")";
    tokens = paged;
  }

  // One layer's keys: a (batch * tokens * kv_heads) x d_head matrix; values the same.
  const std::uint64_t rows = checked_mul(checked_mul(o.batch, tokens, "batch * tokens"), spec.n_kv_heads,
                                         "batch * tokens * kv_heads");
  return {tokens, how, note, ceil_div(matrix_bits(o.precision, rows, spec.d_head), 8)};
}

}  // namespace

TensorRun kv_cache_allocations(const ModelSpec& spec, const KvCacheOptions& options) {
  return {layout(spec, options).per_layer, checked_mul(2, spec.n_layers, "KV cache tensors")};
}

Breakdown estimate_kv_cache(const ModelSpec& spec, const KvCacheOptions& o) {
  const auto [tokens, how, note, per_layer] = layout(spec, o);
  const Bytes one_side = Bytes(per_layer).times(spec.n_layers, "KV cache bytes");

  const std::string formula = std::to_string(spec.n_layers) + " layers x " + std::to_string(spec.n_kv_heads) +
                              " kv_heads x " + std::to_string(spec.d_head) + " d_head x " + how + " x " +
                              std::to_string(o.batch) + " batch at " + describe(o.precision);
  Item keys{"keys", one_side, formula, std::nullopt, "", {}};
  Item values{"values", one_side, formula, std::nullopt, "", {}};
  Item cache{"kv_cache", one_side.plus(one_side, "KV cache bytes"), "2 (keys, values) x " + formula,
             std::nullopt, note, {keys, values}};
  return Breakdown{{cache}};
}

}  // namespace memplan
