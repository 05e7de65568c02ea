#include "memplan/estimators/activations.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"

namespace memplan {

namespace {

class HookList {
 public:
  explicit HookList(std::vector<Hook>& out) : out_(out) {}

  void add(std::optional<std::uint64_t> layer, const std::string& suffix, std::vector<Dim> shape,
           std::uint32_t element_bits = 0) {
    const std::string prefix = layer ? "blocks." + std::to_string(*layer) + "." : "";
    const std::string kind_prefix = layer ? "blocks.*." : "";
    out_.push_back({prefix + suffix, kind_prefix + suffix, layer, std::move(shape), element_bits});
  }

 private:
  std::vector<Hook>& out_;
};

// A pattern may name at most this many hooks once its braces are expanded: blocks.{0-79}
// needs 80, and a product of ranges should not exhaust memory.
constexpr std::size_t kMaxPatternNames = 10000;

[[noreturn]] void too_many_names(std::string_view pattern) {
  throw Error(ErrorKind::invalid_input,
              "hook pattern '" + printable(pattern) + "' expands to more than " + group_digits(kMaxPatternNames) +
                  " names: use a glob such as blocks.*.hook_resid_post",
              "activation_cache_filter");
}

std::vector<std::string> expand_braces(std::string_view pattern) {
  const std::size_t open = pattern.find('{');
  if (open == std::string_view::npos) return {std::string(pattern)};
  const std::size_t close = pattern.find('}', open);
  if (close == std::string_view::npos) return {std::string(pattern)};
  const std::string_view head = pattern.substr(0, open);
  const std::string_view body = pattern.substr(open + 1, close - open - 1);
  std::vector<std::string> alternatives;
  std::size_t start = 0;
  while (start <= body.size()) {
    const std::size_t comma = std::min(body.find(',', start), body.size());
    const std::string_view item = body.substr(start, comma - start);
    std::uint64_t first = 0, last = 0;
    const std::size_t dash = item.find('-');
    const auto number = [](std::string_view t, std::uint64_t& v) {
      const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      return ec == std::errc() && end == t.data() + t.size() && !t.empty();
    };
    if (dash != std::string_view::npos && number(item.substr(0, dash), first) &&
        number(item.substr(dash + 1), last) && first <= last) {
      if (last - first >= kMaxPatternNames) too_many_names(pattern);
      for (std::uint64_t v = first;; ++v) {  // stops at last: v <= last would never fail for last = 2^64 - 1
        alternatives.push_back(std::to_string(v));
        if (v == last) break;
      }
    } else {
      alternatives.emplace_back(item);
    }
    if (alternatives.size() > kMaxPatternNames) too_many_names(pattern);
    start = comma + 1;
  }
  const std::vector<std::string> tails = expand_braces(pattern.substr(close + 1));
  if (alternatives.size() * tails.size() > kMaxPatternNames) too_many_names(pattern);  // both <= 10^4: no wrap
  std::vector<std::string> out;
  for (const std::string& tail : tails) {
    for (const std::string& alt : alternatives) out.push_back(std::string(head) + alt + tail);
  }
  return out;
}

bool glob(std::string_view p, std::string_view s) {
  std::size_t pi = 0, si = 0, star = std::string_view::npos, mark = 0;
  while (si < s.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == s[si])) {
      ++pi;
      ++si;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = si;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      si = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

bool matches_any(const std::vector<std::string>& globs, std::string_view name) {
  return std::any_of(globs.begin(), globs.end(), [&](const std::string& g) { return glob(g, name); });
}

// One filter pattern, braces expanded. Exact names are found in a set and globs by their
// literal prefix, so blocks.{0-9999}.* against DeepSeek-V3's ~48,000 hooks costs a few
// lookups per hook, not 10,000 glob matches (which made selection quadratic).
class PatternMatcher {
 public:
  explicit PatternMatcher(const std::vector<std::string>& names) {
    for (const std::string& n : names) {
      const std::size_t wildcard = n.find_first_of("*?");
      if (wildcard == std::string::npos) {
        exact_.insert(n);
      } else {
        globs_by_prefix_[n.substr(0, wildcard)].push_back(n);
      }
    }
  }

  bool matches(std::string_view name) const {
    if (exact_.find(name) != exact_.end()) return true;
    for (std::size_t length = 0; length <= name.size(); ++length) {
      const auto it = globs_by_prefix_.find(name.substr(0, length));
      if (it != globs_by_prefix_.end() && matches_any(it->second, name)) return true;
    }
    return false;
  }

 private:
  std::set<std::string, std::less<>> exact_;
  std::map<std::string, std::vector<std::string>, std::less<>> globs_by_prefix_;
};

}  // namespace

bool hook_name_matches(std::string_view pattern, std::string_view name) {
  return matches_any(expand_braces(pattern), name);
}

std::vector<Hook> model_hooks(const ModelSpec& s, std::uint64_t batch, std::uint64_t seq, std::uint64_t key_positions) {
  // Hooks are listed one by one, so their number is bounded before the list is built: at
  // most 20 per block, plus 3 per expert. DeepSeek-V3 (61 blocks, 256 experts) has ~48,000.
  constexpr std::uint64_t kMaxHooks = 1000000;
  const std::uint64_t per_block = checked_add(20, checked_mul(3, s.experts, "expert hooks"), "hooks per block");
  const std::uint64_t bound = checked_mul(s.n_layers, per_block, "hooks");
  if (bound > kMaxHooks) {
    throw Error(ErrorKind::invalid_input,
                s.name + " has " + group_digits(s.n_layers) + " blocks" +
                    (s.experts > 0 ? " of " + group_digits(s.experts) + " experts" : std::string()) + ": up to " +
                    group_digits(bound) + " hooks, more than the " + group_digits(kMaxHooks) +
                    " memplan lists for a hook cache",
                s.experts > 0 ? "experts" : "n_layers");
  }
  const std::uint64_t keys = key_positions ? key_positions : seq;
  std::vector<Hook> out;
  HookList h(out);
  const Dim b{"batch", batch}, p{"pos", seq}, d{"d_model", s.d_model}, one{"1", 1};
  const Dim heads{"head_index", s.n_heads}, kv_heads{"head_index", s.n_kv_heads}, dh{"d_head", s.d_head};
  const Dim mlp{"d_mlp", s.d_mlp};
  const bool rotary = s.positional == Positional::rotary;

  h.add(std::nullopt, "hook_embed", {b, p, d});
  if (s.positional == Positional::learned) h.add(std::nullopt, "hook_pos_embed", {b, p, d});
  for (std::uint64_t l = 0; l < s.n_layers; ++l) {
    h.add(l, "hook_resid_pre", {b, p, d});
    h.add(l, "ln1.hook_scale", {b, p, one});
    h.add(l, "ln1.hook_normalized", {b, p, d});
    h.add(l, "attn.hook_q", {b, p, heads, dh});
    h.add(l, "attn.hook_k", {b, p, kv_heads, dh});
    h.add(l, "attn.hook_v", {b, p, kv_heads, dh});
    if (rotary) {
      h.add(l, "attn.hook_rot_q", {b, p, heads, dh});
      h.add(l, "attn.hook_rot_k", {b, p, kv_heads, dh});
    }
    h.add(l, "attn.hook_attn_scores", {b, heads, {"query_pos", seq}, {"key_pos", keys}});
    h.add(l, "attn.hook_pattern", {b, heads, {"query_pos", seq}, {"key_pos", keys}});
    h.add(l, "attn.hook_z", {b, p, heads, dh});
    h.add(l, "hook_attn_out", {b, p, d});
    if (!s.parallel_block) h.add(l, "hook_resid_mid", {b, p, d});
    if (s.norms_per_layer >= 2) {
      h.add(l, "ln2.hook_scale", {b, p, one});
      h.add(l, "ln2.hook_normalized", {b, p, d});
    }
    if (s.experts > 0) {
      // Per-expert hooks see the tokens routed to that expert: batch*pos*k/E of them
      // when routing is balanced (the real split depends on the data).
      const std::uint64_t tokens = checked_mul(batch, seq, "batch * seq");
      const Dim routed{"routed_tokens", ceil_div(checked_mul(tokens, s.experts_per_token, "routed tokens"), s.experts)};
      h.add(l, "mlp.hook_expert_weights", {b, p, {"experts", s.experts}});
      h.add(l, "mlp.hook_expert_indices", {b, p, {"top_k", s.experts_per_token}}, 64);
      for (std::uint64_t e = 0; e < s.experts; ++e) {
        const std::string expert = "mlp.experts." + std::to_string(e) + ".";
        h.add(l, expert + "hook_pre", {routed, mlp});
        if (s.mlp == MlpKind::gated) h.add(l, expert + "hook_pre_linear", {routed, mlp});
        h.add(l, expert + "hook_post", {routed, mlp});
      }
    } else {
      h.add(l, "mlp.hook_pre", {b, p, mlp});
      if (s.mlp == MlpKind::gated) h.add(l, "mlp.hook_pre_linear", {b, p, mlp});
      h.add(l, "mlp.hook_post", {b, p, mlp});
    }
    h.add(l, "hook_mlp_out", {b, p, d});
    h.add(l, "hook_resid_post", {b, p, d});
  }
  if (s.final_norm) {
    h.add(std::nullopt, "ln_final.hook_scale", {b, p, one});
    h.add(std::nullopt, "ln_final.hook_normalized", {b, p, d});
  }
  return out;
}

std::string hook_shape_text(const Hook& h, const ActivationCacheOptions& o) {
  std::string out = "[";
  bool sliced = false;
  for (const Dim& d : h.shape) {
    if (d.label == "batch" && o.remove_batch_dim) continue;
    std::uint64_t size = d.size;
    if (!sliced && o.pos_slice > 0 && (d.label == "pos" || d.label == "query_pos")) {
      size = std::min(size, o.pos_slice);
      sliced = true;
    }
    out += (out.size() > 1 ? ", " : "") + d.label + "=" + std::to_string(size);
  }
  return out + "]";
}

Bytes hook_bytes(const Hook& h, const ActivationCacheOptions& o) {
  std::uint64_t elements = 1;
  bool sliced = false;
  for (const Dim& d : h.shape) {
    if (d.label == "batch" && o.remove_batch_dim) continue;
    std::uint64_t size = d.size;
    if (!sliced && o.pos_slice > 0 && (d.label == "pos" || d.label == "query_pos")) {
      size = std::min(size, o.pos_slice);
      sliced = true;
    }
    elements = checked_mul(elements, size, "elements of " + h.name);
  }
  const std::uint64_t bits = h.element_bits ? h.element_bits : element_bits(o.precision.format);
  Bytes bytes(ceil_div(checked_mul(elements, bits, "bits of " + h.name), 8));
  if (o.incl_bwd && h.element_bits == 0) bytes = bytes.times(2, "bytes of " + h.name + " and its gradient");
  return bytes;
}

std::vector<Hook> selected_hooks(const ModelSpec& spec, const ActivationCacheOptions& o) {
  std::vector<Hook> all = model_hooks(spec, o.batch, o.seq, o.key_positions);
  std::vector<PatternMatcher> patterns;  // each pattern's braces expanded once, not once per hook
  for (const std::string& pattern : o.filter) {
    const PatternMatcher& matcher = patterns.emplace_back(expand_braces(pattern));
    const bool matched = std::any_of(all.begin(), all.end(), [&](const Hook& h) { return matcher.matches(h.name); });
    if (!matched) {
      std::vector<std::string> names;
      for (const Hook& h : all) {
        if (!h.layer || *h.layer == 0) names.push_back(h.name);
      }
      throw Error(ErrorKind::invalid_input,
                  "activation_cache_filter entry '" + printable(pattern) + "' matches no hook of " + spec.name + " (" +
                      std::to_string(spec.n_layers) + " blocks, 0-" + std::to_string(spec.n_layers - 1) + ")" +
                      did_you_mean(pattern, names) + "; memplan hooks " + spec.name + " lists them",
                  "activation_cache_filter");
    }
  }
  for (const std::uint64_t layer : o.layers) {
    if (layer >= spec.n_layers) {
      throw Error(ErrorKind::invalid_input,
                  "layer " + std::to_string(layer) + " does not exist: " + spec.name + " has blocks 0-" +
                      std::to_string(spec.n_layers - 1),
                  "layers");
    }
  }
  if (o.stop_at_layer && *o.stop_at_layer > spec.n_layers) {
    throw Error(ErrorKind::invalid_input,
                "stop_at_layer " + std::to_string(*o.stop_at_layer) + " is past the last block (" +
                    std::to_string(spec.n_layers) + " blocks)",
                "stop_at_layer");
  }
  const std::set<std::uint64_t> layers(o.layers.begin(), o.layers.end());
  std::vector<Hook> out;
  for (Hook& h : all) {
    if (o.stop_at_layer && (!h.layer ? h.name.starts_with("ln_final") : *h.layer >= *o.stop_at_layer)) continue;
    if (!layers.empty() && (!h.layer || layers.count(*h.layer) == 0)) continue;
    if (!patterns.empty() &&
        std::none_of(patterns.begin(), patterns.end(), [&](const auto& p) { return p.matches(h.name); })) {
      continue;
    }
    out.push_back(std::move(h));
  }
  return out;
}

std::vector<TensorRun> activation_cache_allocations(const ModelSpec& spec, const ActivationCacheOptions& o) {
  std::vector<TensorRun> out;
  if (o.on_cpu) return out;
  for (const Hook& h : selected_hooks(spec, o)) {
    const Bytes bytes = hook_bytes(h, o);
    const bool gradient = o.incl_bwd && h.element_bits == 0;  // hook_bytes counted the gradient too
    out.push_back({gradient ? bytes.count() / 2 : bytes.count(), gradient ? 2U : 1U});
  }
  return out;
}

Breakdown estimate_activation_cache(const ModelSpec& spec, const ActivationCacheOptions& o) {
  if (o.batch == 0) throw Error(ErrorKind::invalid_input, "batch must be at least 1", "batch");
  if (o.seq == 0) throw Error(ErrorKind::invalid_input, "the sequence must hold at least 1 token", "seq_len");
  if (is_quantized(o.precision)) {
    throw Error(ErrorKind::invalid_input,
                "activations are cached in the compute dtype (fp32, bf16 or fp16), not " + to_string(o.precision),
                "precision");
  }
  const std::vector<Hook> hooks = selected_hooks(spec, o);

  Item cache{"activations", Bytes(0), "", std::nullopt, "", {}};
  // One detail row per hook kind ("blocks.*.hook_resid_post"), in forward order.
  std::map<std::string, std::size_t> row_of_kind;
  std::vector<std::size_t> hook_count;
  std::vector<const Hook*> example;
  for (const Hook& h : hooks) {
    auto [it, fresh] = row_of_kind.emplace(h.kind, cache.detail.size());
    if (fresh) {
      cache.detail.push_back({h.kind, Bytes(0), "", std::nullopt, "", {}});
      hook_count.push_back(0);
      example.push_back(&h);
    }
    Item& row = cache.detail[it->second];
    row.bytes = row.bytes.plus(hook_bytes(h, o), "bytes of " + h.kind);
    ++hook_count[it->second];
  }
  const std::string dtype = to_string(o.precision) + (o.incl_bwd ? ", x 2 with gradients" : "");
  for (std::size_t i = 0; i < cache.detail.size(); ++i) {
    Item& row = cache.detail[i];
    row.formula = std::to_string(hook_count[i]) + " hook" + (hook_count[i] == 1 ? "" : "s") + " x " +
                  hook_shape_text(*example[i], o) + " at " + dtype;
    cache.bytes = cache.bytes.plus(row.bytes, "activation cache bytes");
  }
  const std::size_t all_count = model_hooks(spec, o.batch, o.seq, o.key_positions).size();
  cache.formula = std::to_string(hooks.size()) + " of " + std::to_string(all_count) + " hooks at " + dtype;
  if (o.pos_slice) cache.formula += ", last " + std::to_string(o.pos_slice) + " positions";
  if (o.remove_batch_dim) cache.formula += ", batch element 0 only";

  Breakdown out;
  if (o.on_cpu) {
    Item host = cache;
    host.note = "kept on the CPU (device=\"cpu\"): each hook is copied off the GPU as the forward pass produces it";
    out.host.push_back(std::move(host));
    cache.bytes = Bytes(0);
    for (Item& row : cache.detail) row.bytes = Bytes(0);
    cache.note = "cached on the host; see host memory";
  }
  const bool narrowed = !o.filter.empty() || !o.layers.empty() || o.stop_at_layer.has_value();
  if (narrowed) {
    ActivationCacheOptions full = o;
    full.filter.clear();
    full.layers.clear();
    full.stop_at_layer.reset();
    full.on_cpu = false;
    Bytes full_bytes;
    std::size_t count = 0;
    try {
      for (const Hook& h : selected_hooks(spec, full)) {
        full_bytes = full_bytes.plus(hook_bytes(h, full), "full activation cache bytes");
        ++count;
      }
      out.alternatives.push_back({"activations",
                                  {"activations_full_cache", full_bytes,
                                   "all " + std::to_string(count) + " hooks at " + dtype, std::nullopt,
                                   "what caching every hook would take", {}}});
    } catch (const Error& e) {
      // The comparison is past 2^64 bytes; the selective cache itself is not.
      if (e.kind() != ErrorKind::overflow) throw;
      cache.note += std::string(cache.note.empty() ? "" : "; ") + "caching every hook would take more than 2^64 bytes";
    }
  }
  out.components.push_back(std::move(cache));
  return out;
}

std::vector<std::uint64_t> parse_layer_selection(std::string_view text) {
  constexpr std::size_t kMaxSelectedLayers = 1000000;  // far past any model; bounds what a typo can allocate
  std::vector<std::uint64_t> out;
  std::set<std::uint64_t> seen;
  const auto bad = [&] {
    throw Error(ErrorKind::invalid_input,
                "invalid layer selection '" + printable(text) + "': expected numbers and ranges such as 3, 0,5,11 or 0-11",
                "layers");
  };
  const auto too_many = [&] {
    throw Error(ErrorKind::invalid_input,
                "layer selection '" + printable(text.substr(0, 100)) + "' names more than " +
                    group_digits(kMaxSelectedLayers) + " layers",
                "layers");
  };
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    const std::size_t dash = item.find('-');
    std::uint64_t first = 0, last = 0;
    const auto number = [](std::string_view t, std::uint64_t& v) {
      const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      return ec == std::errc() && end == t.data() + t.size() && !t.empty();
    };
    if (dash == std::string_view::npos) {
      if (!number(item, first)) bad();
      last = first;
    } else if (!number(item.substr(0, dash), first) || !number(item.substr(dash + 1), last) || first > last) {
      bad();
    }
    if (last - first >= kMaxSelectedLayers) too_many();
    for (std::uint64_t l = first;; ++l) {  // stops at last: l <= last would never fail for last = 2^64 - 1
      if (seen.insert(l).second) out.push_back(l);
      if (out.size() > kMaxSelectedLayers) too_many();
      if (l == last) break;
    }
    start = comma + 1;
  }
  return out;
}

}  // namespace memplan
