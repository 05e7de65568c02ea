#include "memplan/estimators/kv_cache.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "parallel_internal.hpp"

namespace memplan {

namespace {

constexpr detail::NameTable<MlaCache, 2> kMlaCaches{
    {{MlaCache::latent, "latent"}, {MlaCache::decompressed, "decompressed"}}};

void check_shape(const KvCacheOptions& o) {
  if (o.batch == 0) throw Error(ErrorKind::invalid_input, "batch must be at least 1", "batch");
  if (o.tokens == 0) throw Error(ErrorKind::invalid_input, "the sequence must hold at least 1 token", "seq_len");
}

// The tokens a layer of `kind` holds per sequence before paging, and the window capping them (0: none).
std::pair<std::uint64_t, std::uint64_t> held_tokens(const ModelSpec& s, AttentionKind kind, const KvCacheOptions& o) {
  std::uint64_t window = 0;
  if (kind == AttentionKind::sliding) window = s.sliding_window;
  if (kind == AttentionKind::chunked) window = s.attention_chunk;
  if (kind == AttentionKind::sliding && o.sliding_keeps_prompt) return {o.tokens, 0};
  if (o.honor_sliding_window && window != 0 && o.tokens > window) return {window, window};
  return {o.tokens, 0};
}

std::uint64_t paged_tokens(std::uint64_t tokens, const KvCacheOptions& o) {
  return o.page_tokens > 0 ? checked_mul(ceil_div(tokens, o.page_tokens), o.page_tokens, "paged tokens") : tokens;
}

// A (batch * tokens * heads) x width matrix at the cache precision (one scale per row when quantised).
std::uint64_t matrix_bytes(const KvCacheOptions& o, std::uint64_t tokens, std::uint64_t heads, std::uint64_t width) {
  const std::uint64_t rows = checked_mul(checked_mul(o.batch, tokens, "batch * tokens"), heads,
                                         "batch * tokens * heads");
  return ceil_div(matrix_bits(o.precision, rows, width), 8);
}

// What one layer keeps: one or two tensors (keys and values, or the latent) of these shapes.
struct LayerCache {
  std::string kind;          // detail row: "full_layers", "sliding_layers", ...
  std::uint64_t tokens = 0;  // per sequence, paged
  std::uint64_t window = 0;  // the cap applied, 0 for none
  struct Tensor {
    std::string_view name;
    std::uint64_t heads, width, bytes;
    bool fp32 = false;  // kept in fp32 whatever the cache's precision (a gated DeltaNet's recurrent state)
  };
  std::vector<Tensor> tensors;
  bool operator==(const LayerCache& o) const {
    return kind == o.kind && tokens == o.tokens && tensors.size() == o.tensors.size() &&
           std::equal(tensors.begin(), tensors.end(), o.tensors.begin(),
                      [](const Tensor& a, const Tensor& b) { return a.name == b.name && a.bytes == b.bytes; });
  }
};

// A state-space layer's state per sequence: conv channels x d_conv and d_inner x d_state. A
// gated DeltaNet's recurrent state is fp32: chunk_gated_delta_rule returns its final state in
// fp32 (fla's kernels and transformers' torch fallback), and Qwen3NextDynamicCache keeps it so.
LayerCache state_cache(const ModelSpec& s, const KvCacheOptions& o) {
  LayerCache c{"ssm_state", 0, 0, {}};
  KvCacheOptions state = o;
  state.precision = o.state_precision;
  const auto add = [&](std::string_view name, std::uint64_t width, bool fp32) {
    KvCacheOptions t = state;
    if (fp32) t.precision = precisions::fp32;
    c.tensors.push_back({name, 1, width, matrix_bytes(t, 1, 1, width), fp32});
  };
  add("conv_state", checked_mul(ssm_conv_channels(s.ssm), s.ssm.d_conv, "conv channels x d_conv"), false);
  add("ssm_state", checked_mul(s.ssm.d_inner, s.ssm.d_state, "d_inner x d_state"), s.ssm.version == 3);
  return c;
}

Item state_item(const LayerCache& c, std::uint64_t layers, const KvCacheOptions& o, const std::string& name) {
  std::vector<Item> detail;
  Bytes total(0);
  for (const LayerCache::Tensor& t : c.tensors) {
    const Bytes b = Bytes(t.bytes).times(layers, "state bytes");
    total = total.plus(b, "state bytes");
    detail.push_back({std::string(t.name),
                      b,
                      std::to_string(layers) + " layers x " + std::to_string(t.width) + " x " +
                          std::to_string(o.batch) + " batch at " +
                          describe(t.fp32 ? precisions::fp32 : o.state_precision),
                      std::nullopt,
                      "",
                      {}});
  }
  return Item{name,
              total,
              std::to_string(layers) + " state-space layers x (conv state " + std::to_string(c.tensors[0].width) +
                  " + SSM state " + std::to_string(c.tensors[1].width) + ") x " + std::to_string(o.batch) +
                  " batch at " + describe(o.state_precision) + (c.tensors[1].fp32 ? " (the SSM state fp32)" : ""),
              std::nullopt,
              "a fixed size per sequence: it does not grow with the tokens",
              std::move(detail)};
}

LayerCache layer_cache(const ModelSpec& s, AttentionKind kind, const KvCacheOptions& o) {
  if (kind == AttentionKind::mamba) return state_cache(s, o);
  const auto [held, window] = held_tokens(s, kind, o);
  LayerCache c{to_string(kind) + "_layers", paged_tokens(held, o), window, {}};
  const auto add = [&](std::string_view name, std::uint64_t heads, std::uint64_t width) {
    c.tensors.push_back({name, heads, width, matrix_bytes(o, c.tokens, heads, width)});
  };
  if (kind == AttentionKind::mla && o.mla_cache == MlaCache::latent) {
    add("latent", 1, checked_add(s.mla.kv_lora_rank, s.mla.qk_rope_head_dim, "kv_lora_rank + qk_rope_head_dim"));
  } else if (kind == AttentionKind::mla) {
    add("keys", s.n_heads, s.d_head);
    add("values", s.n_heads, s.mla.v_head_dim);
  } else {
    // Gemma 4's full-attention layers keep their own heads' keys and values.
    const ModelSpec& v = kind == AttentionKind::full && has_global_heads(s) ? global_layer_view(s) : s;
    add("keys", v.n_kv_heads, v.d_head);
    add("values", v.n_kv_heads, v.d_head);
  }
  return c;
}

// An encoder-decoder's cross-attention keys and values of the source, per decoder layer.
LayerCache cross_cache(const ModelSpec& s, const KvCacheOptions& o) {
  LayerCache c{"cross_layers", paged_tokens(o.cross_tokens, o), 0, {}};
  c.tensors.push_back({"cross_keys", s.n_heads, s.d_head, matrix_bytes(o, c.tokens, s.n_heads, s.d_head)});
  c.tensors.push_back({"cross_values", s.n_heads, s.d_head, matrix_bytes(o, c.tokens, s.n_heads, s.d_head)});
  return c;
}

std::string tokens_text(const LayerCache& c, const KvCacheOptions& o) {
  std::string how = std::to_string(c.tokens) + " tokens";
  const std::uint64_t unpaged = c.window != 0 ? c.window : c.kind == "cross_layers" ? o.cross_tokens : o.tokens;
  if (c.window != 0)
    how = std::to_string(c.window) + " tokens (" + (c.kind == "chunked_layers" ? "chunk" : "sliding window") + ")";
  if (c.tokens != unpaged)
    how += " rounded up to " + std::to_string(c.tokens) + " (pages of " + std::to_string(o.page_tokens) + ")";
  return how;
}

std::string tensor_formula(std::uint64_t layers, const LayerCache::Tensor& t, const std::string& how,
                           const KvCacheOptions& o, bool latent) {
  const std::string shape = latent ? std::to_string(t.width) + " (kv_lora_rank + qk_rope_head_dim)"
                                   : std::to_string(t.heads) + " kv_heads x " + std::to_string(t.width) + " d_head";
  return std::to_string(layers) + " layers x " + shape + " x " + how + " x " + std::to_string(o.batch) + " batch at " +
         describe(o.precision);
}

// One run of layers keeping the same: its row, detailed by tensor.
Item group_item(const LayerCache& c, std::uint64_t layers, const KvCacheOptions& o, const std::string& name) {
  const std::string how = tokens_text(c, o);
  const bool latent = c.tensors.size() == 1;
  std::vector<Item> detail;
  Bytes total(0);
  for (const LayerCache::Tensor& t : c.tensors) {
    const Bytes b = Bytes(t.bytes).times(layers, "KV cache bytes");
    total = total.plus(b, "KV cache bytes");
    detail.push_back({std::string(t.name), b, tensor_formula(layers, t, how, o, latent), std::nullopt, "", {}});
  }
  std::string formula;
  if (latent) {
    formula = detail.front().formula;
  } else if (c.tensors[0].width == c.tensors[1].width) {
    formula = "2 (keys, values) x " + detail.front().formula;
  } else {
    formula = "keys + values: " + std::to_string(layers) + " layers x " + std::to_string(c.tensors[0].heads) +
              " heads x (" + std::to_string(c.tensors[0].width) + " + " + std::to_string(c.tensors[1].width) + ") x " +
              how + " x " + std::to_string(o.batch) + " batch at " + describe(o.precision);
  }
  std::string note;
  if (c.kind == "cross_layers") {
    formula += " (source positions)";
    note = "the cross-attention's, computed once from the encoder's output: fixed while tokens are generated";
  } else if (c.window != 0) {
    note = "capped at the model's " + std::to_string(c.window) + "-token " +
           (c.kind == "chunked_layers" ? "attention chunk" : "sliding window");
  } else if (c.kind == "sliding_layers" && o.sliding_keeps_prompt) {
    note =
        "the whole prompt: transformers keeps a window's slice of it, whose storage is the prompt's until the "
        "first decode step";
  }
  return Item{name, total, formula, std::nullopt, note, std::move(detail)};
}

// Runs of layers keeping the same, in layer order, merged by kind.
std::vector<std::pair<LayerCache, std::uint64_t>> layer_groups(const ModelSpec& s, const KvCacheOptions& o) {
  check_shape(o);
  std::vector<std::pair<LayerCache, std::uint64_t>> out;
  const auto add = [&out](LayerCache c, std::uint64_t layers) {
    const auto same = std::find_if(out.begin(), out.end(), [&](const auto& g) { return g.first == c; });
    if (same != out.end()) {
      same->second += layers;
    } else {
      out.emplace_back(std::move(c), layers);
    }
  };
  // Gemma 4 E2B's and E4B's last kv_shared_layers layers read an earlier layer's: no cache of their own.
  for (const auto& [kind, layers] : cache_layer_counts(s)) add(layer_cache(s, kind, o), layers);
  if (is_encoder_decoder(s) && o.cross_tokens != 0) out.emplace_back(cross_cache(s, o), s.n_layers);
  // A state beside every attention layer's keys and values, with the mixer-only layers' states.
  if (s.parallel_ssm) add(state_cache(s, o), attention_layers(s));
  return out;
}

}  // namespace

std::string to_string(MlaCache value) { return detail::name_of(kMlaCaches, value); }

MlaCache parse_mla_cache(std::string_view text) {
  return detail::parse_named(kMlaCaches, text, "mla_cache", "MLA cache convention");
}

std::vector<TensorRun> kv_cache_allocations(const ModelSpec& spec, const KvCacheOptions& options) {
  std::vector<TensorRun> out;
  for (const auto& [c, layers] : layer_groups(spec, options)) {
    for (const LayerCache::Tensor& t : c.tensors) out.push_back({t.bytes, layers});
  }
  return out;
}

Breakdown estimate_kv_cache(const ModelSpec& spec, const KvCacheOptions& o) {
  const std::vector<std::pair<LayerCache, std::uint64_t>> groups = layer_groups(spec, o);
  const auto item = [&](const LayerCache& c, std::uint64_t layers, const std::string& name) {
    return c.kind == "ssm_state" ? state_item(c, layers, o, name) : group_item(c, layers, o, name);
  };
  if (groups.size() == 1) {
    const bool state = groups.front().first.kind == "ssm_state";
    return Breakdown{{item(groups.front().first, groups.front().second, state ? "ssm_state" : "kv_cache")}};
  }
  std::vector<Item> detail;
  Bytes total(0);
  std::vector<std::string> parts;
  for (const auto& [c, layers] : groups) {
    detail.push_back(item(c, layers, c.kind));
    total = total.plus(detail.back().bytes, "KV cache bytes");
    parts.push_back(c.kind == "ssm_state" ? std::to_string(layers) + " state-space layers at a fixed size"
                                          : std::to_string(layers) + " " + c.kind.substr(0, c.kind.size() - 7) +
                                                " at " + std::to_string(c.tokens) + " tokens");
  }
  std::string formula = "per layer: ";
  for (std::size_t i = 0; i < parts.size(); ++i) formula += (i == 0 ? "" : ", ") + parts[i];
  return Breakdown{{Item{"kv_cache", total, formula, std::nullopt, "", std::move(detail)}}};
}

}  // namespace memplan
