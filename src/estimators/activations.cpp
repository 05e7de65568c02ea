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

// A pattern's comma lists may multiply out to at most this many alternatives ({a,b}{c,d} is
// 4; twenty such lists would be a million), and a whole filter to this many names. Ranges
// ({0-79}) do not multiply: they are matched as numbers, not listed.
constexpr std::size_t kMaxPatternAlternatives = 1000;
constexpr std::size_t kMaxFilterNames = 10000;
// Of those, at most this many may be globs or ranges: each is tried on every hook that
// starts with its literal text, where a plain name costs one lookup.
constexpr std::size_t kMaxFilterGlobs = 100;

[[noreturn]] void too_many_alternatives(std::string_view pattern, std::size_t limit, const char* what) {
  throw Error(ErrorKind::invalid_input,
              "hook pattern '" + printable(pattern) + "' expands to more than " + group_digits(limit) + " " + what +
                  ": use a glob such as blocks.*.hook_resid_post or a range such as blocks.{0-79}",
              "activation_cache_filter");
}

// One step of a pattern: literal text, '?' (one character), '*' (any run), or an integer
// range {first-last} that matches a number written without leading zeros.
struct Token {
  enum Kind { literal, one, run, range } kind = literal;
  std::string text;
  std::uint64_t first = 0, last = 0;
};
using Tokens = std::vector<Token>;

void append_glob_text(Tokens& out, std::string_view text) {
  for (const char c : text) {
    if (c == '*' || c == '?') {
      out.push_back({c == '*' ? Token::run : Token::one, "", 0, 0});
    } else if (!out.empty() && out.back().kind == Token::literal) {
      out.back().text += c;
    } else {
      out.push_back({Token::literal, std::string(1, c), 0, 0});
    }
  }
}

void append(Tokens& out, const Tokens& more) {
  for (const Token& t : more) {
    if (t.kind == Token::literal && !out.empty() && out.back().kind == Token::literal) {
      out.back().text += t.text;
    } else {
      out.push_back(t);
    }
  }
}

// Expands the comma lists of `pattern` ({0,5,11}) into token sequences; a range item stays
// one token. An unclosed '{' is literal, as a shell leaves it.
std::vector<Tokens> expand_pattern(std::string_view pattern, std::string_view whole) {
  const std::size_t open = pattern.find('{');
  const std::size_t close = open == std::string_view::npos ? open : pattern.find('}', open);
  if (close == std::string_view::npos) {
    Tokens all;
    append_glob_text(all, pattern);
    return {all};
  }
  const std::string_view body = pattern.substr(open + 1, close - open - 1);
  std::vector<Tokens> items;
  for (std::size_t start = 0; start <= body.size();) {
    const std::size_t comma = std::min(body.find(',', start), body.size());
    const std::string_view item = body.substr(start, comma - start);
    std::uint64_t first = 0, last = 0;
    const std::size_t dash = item.find('-');
    const auto number = [](std::string_view t, std::uint64_t& v) {
      const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      return ec == std::errc() && end == t.data() + t.size() && !t.empty();
    };
    Tokens tokens;
    if (dash != std::string_view::npos && number(item.substr(0, dash), first) && number(item.substr(dash + 1), last) &&
        first <= last) {
      tokens.push_back({Token::range, "", first, last});
    } else {
      append_glob_text(tokens, item);
    }
    items.push_back(std::move(tokens));
    if (items.size() > kMaxPatternAlternatives) too_many_alternatives(whole, kMaxPatternAlternatives, "names");
    start = comma + 1;
  }
  const std::vector<Tokens> tails = expand_pattern(pattern.substr(close + 1), whole);
  if (items.size() * tails.size() > kMaxPatternAlternatives) {  // both <= 1,000: no wrap
    too_many_alternatives(whole, kMaxPatternAlternatives, "names");
  }
  Tokens head;
  append_glob_text(head, pattern.substr(0, open));
  std::vector<Tokens> out;
  for (const Tokens& tail : tails) {
    for (const Tokens& item : items) {
      Tokens& t = out.emplace_back(head);
      append(t, item);
      append(t, tail);
    }
  }
  return out;
}

// Whether `tokens` match all of `name`: the set of positions reachable after each token,
// so '*' and ranges never backtrack (tokens x length x at most 20 digits).
bool matches_tokens(const Tokens& tokens, std::string_view name) {
  std::vector<char> at(name.size() + 1, 0), next(name.size() + 1, 0);
  at[0] = 1;
  for (const Token& t : tokens) {
    std::fill(next.begin(), next.end(), 0);
    bool any = false;
    for (std::size_t pos = 0; pos <= name.size(); ++pos) {
      if (!at[pos]) continue;
      any = true;
      switch (t.kind) {
        case Token::literal:
          if (name.substr(pos).starts_with(t.text)) next[pos + t.text.size()] = 1;
          break;
        case Token::one:
          if (pos < name.size()) next[pos + 1] = 1;
          break;
        case Token::run: std::fill(next.begin() + static_cast<std::ptrdiff_t>(pos), next.end(), 1); break;
        case Token::range: {
          std::uint64_t value = 0;
          for (std::size_t end = pos; end < name.size() && name[end] >= '0' && name[end] <= '9'; ++end) {
            if (end > pos && name[pos] == '0') break;  // "07" is not how a layer number is written
            if (__builtin_mul_overflow(value, 10, &value) ||
                __builtin_add_overflow(value, static_cast<std::uint64_t>(name[end] - '0'), &value)) {
              break;
            }
            if (value > t.last) break;
            if (value >= t.first) next[end + 1] = 1;
          }
          break;
        }
      }
    }
    if (!any) return false;
    at.swap(next);
  }
  return at[name.size()] != 0;
}

// A filter: its patterns' alternatives, indexed. Plain names are found in a map; globs and
// ranges are tried only on names that start with their literal text. Matching a hook costs
// one lookup per character of its name plus the globs of the matching prefixes (at most
// 100 in all), whatever the number of patterns.
class HookFilter {
 public:
  explicit HookFilter(const std::vector<std::string>& patterns) {
    std::size_t names = 0, globs = 0;
    for (std::size_t i = 0; i < patterns.size(); ++i) {
      const std::string& pattern = patterns[i];
      for (Tokens& t : expand_pattern(pattern, pattern)) {
        if (++names > kMaxFilterNames) too_many_alternatives(pattern, kMaxFilterNames, "names in the filter");
        if (t.empty() || (t.size() == 1 && t.front().kind == Token::literal)) {
          exact_[t.empty() ? std::string() : t.front().text].push_back(i);
        } else {
          if (++globs > kMaxFilterGlobs)
            too_many_alternatives(pattern, kMaxFilterGlobs, "globs and ranges in the filter");
          const std::string prefix = t.front().kind == Token::literal ? t.front().text : std::string();
          globs_[prefix].push_back({i, std::move(t)});
        }
      }
    }
  }

  // Returns whether any pattern matches `name`; sets matched[i] for each pattern i that
  // does (a pattern already known to match is not tried again once `name` is selected).
  bool match(std::string_view name, std::vector<bool>& matched) const {
    bool any = false;
    if (const auto it = exact_.find(name); it != exact_.end()) {
      for (const std::size_t i : it->second) matched[i] = any = true;
    }
    for (std::size_t length = 0; !globs_.empty() && length <= name.size(); ++length) {
      const auto it = globs_.find(name.substr(0, length));
      if (it == globs_.end()) continue;
      for (const auto& [i, tokens] : it->second) {
        if (any && matched[i]) continue;
        if (matches_tokens(tokens, name)) matched[i] = any = true;
      }
    }
    return any;
  }

 private:
  std::map<std::string, std::vector<std::size_t>, std::less<>> exact_;
  std::map<std::string, std::vector<std::pair<std::size_t, Tokens>>, std::less<>> globs_;
};

}  // namespace

bool hook_name_matches(std::string_view pattern, std::string_view name) {
  std::vector<bool> matched(1);
  return HookFilter({std::string(pattern)}).match(name, matched);
}

std::string transformer_lens_gap(const ModelSpec& spec) {
  const bool cohere2 = spec.family == Family::cohere &&
                       (spec.sliding_window != 0 || spec.global_every != 0 || !spec.layer_types.empty());
  const char* architecture = spec.vision.d_model != 0            ? "LlavaForConditionalGeneration"
                             : spec.family == Family::llama4     ? "Llama4ForCausalLM"
                             : spec.family == Family::starcoder2 ? "Starcoder2ForCausalLM"
                             : cohere2                           ? "Cohere2ForCausalLM"
                                                                 : nullptr;
  if (architecture == nullptr) return {};
  return std::string("TransformerLens does not load ") + architecture +
         " (its architecture_gaps.json lists it): the hook names are its conventions applied to the same tensors, "
         "as forward hooks on the model's modules would capture them";
}

std::vector<Hook> model_hooks(const ModelSpec& s, std::uint64_t batch, std::uint64_t seq, std::uint64_t key_positions) {
  if (is_encoder_decoder(s)) {
    throw Error(ErrorKind::invalid_input,
                "memplan lists HookedTransformer's hook names, a decoder's; " + s.name + " (" + to_string(s.family) +
                    ") has an encoder and a decoder, whose hooks (TransformerLens's HookedEncoderDecoder names "
                    "encoder.N and decoder.N blocks) memplan does not list yet",
                "workload");
  }
  if (ssm_layers(s) > 0) {
    throw Error(ErrorKind::invalid_input,
                "TransformerLens has no hook points for state-space (Mamba) layers, and memplan names hooks as it "
                "does: hook lists and the extraction workloads do not apply to " +
                    s.name + " (" + to_string(s.family) + ", " + ssm_layers_text(s) +
                    "). The residual stream is d_model wide per token: the sae and cka workloads "
                    "price caching it",
                "workload");
  }
  // Hooks are listed one by one, so their number is bounded before the list is built: at
  // most 20 per block (24 with sandwich norms), plus 3 per expert. DeepSeek-V3 (61 blocks,
  // 256 experts) has ~48,000.
  constexpr std::uint64_t kMaxHooks = 1000000;
  const std::uint64_t per_block = checked_add(s.norms_per_layer == 4 ? 24 : 20,
                                              checked_mul(3, s.experts, "expert hooks"), "hooks per block");
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
  // Latent attention's values (and so z) are v_head_dim wide, its queries and keys d_head.
  const Dim dv = s.mla.kv_lora_rank != 0 ? Dim{"d_head", s.mla.v_head_dim} : dh;
  const bool rotary = s.positional == Positional::rotary;

  h.add(std::nullopt, "hook_embed", {b, p, d});
  if (s.positional == Positional::learned) h.add(std::nullopt, "hook_pos_embed", {b, p, d});
  for (std::uint64_t l = 0; l < s.n_layers; ++l) {
    h.add(l, "hook_resid_pre", {b, p, d});
    h.add(l, "ln1.hook_scale", {b, p, one});
    h.add(l, "ln1.hook_normalized", {b, p, d});
    h.add(l, "attn.hook_q", {b, p, heads, dh});
    h.add(l, "attn.hook_k", {b, p, kv_heads, dh});
    h.add(l, "attn.hook_v", {b, p, kv_heads, dv});
    if (rotary) {
      h.add(l, "attn.hook_rot_q", {b, p, heads, dh});
      h.add(l, "attn.hook_rot_k", {b, p, kv_heads, dh});
    }
    h.add(l, "attn.hook_attn_scores", {b, heads, {"query_pos", seq}, {"key_pos", keys}});
    h.add(l, "attn.hook_pattern", {b, heads, {"query_pos", seq}, {"key_pos", keys}});
    h.add(l, "attn.hook_z", {b, p, heads, dv});
    if (s.norms_per_layer == 4) {  // sandwich norms (Gemma 2, 3): TransformerLens' ln1_post and ln2_post
      h.add(l, "ln1_post.hook_scale", {b, p, one});
      h.add(l, "ln1_post.hook_normalized", {b, p, d});
    }
    h.add(l, "hook_attn_out", {b, p, d});
    if (!s.parallel_block) h.add(l, "hook_resid_mid", {b, p, d});
    if (s.norms_per_layer >= 2) {
      h.add(l, "ln2.hook_scale", {b, p, one});
      h.add(l, "ln2.hook_normalized", {b, p, d});
    }
    if (is_moe_layer(s, l)) {
      // Per-expert hooks see the tokens routed to that expert: batch*pos*k/E of them
      // when routing is balanced (the real split depends on the data).
      const std::uint64_t tokens = checked_mul(batch, seq, "batch * seq");
      const Dim routed{"routed_tokens", ceil_div(checked_mul(tokens, s.experts_per_token, "routed tokens"), s.experts)};
      h.add(l, "mlp.hook_expert_weights", {b, p, {"experts", s.experts}});
      h.add(l, "mlp.hook_expert_indices", {b, p, {"top_k", s.experts_per_token}}, 64);
      const Dim width{"d_mlp", expert_width(s)};
      for (std::uint64_t e = 0; e < s.experts; ++e) {
        const std::string expert = "mlp.experts." + std::to_string(e) + ".";
        h.add(l, expert + "hook_pre", {routed, width});
        if (s.mlp == MlpKind::gated) h.add(l, expert + "hook_pre_linear", {routed, width});
        h.add(l, expert + "hook_post", {routed, width});
      }
    } else {
      h.add(l, "mlp.hook_pre", {b, p, mlp});
      if (s.mlp == MlpKind::gated) h.add(l, "mlp.hook_pre_linear", {b, p, mlp});
      h.add(l, "mlp.hook_post", {b, p, mlp});
    }
    if (s.norms_per_layer == 4) {
      h.add(l, "ln2_post.hook_scale", {b, p, one});
      h.add(l, "ln2_post.hook_normalized", {b, p, d});
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
    elements = checked_mul(elements, size, "elements of", h.name);
  }
  const std::uint64_t bits = h.element_bits ? h.element_bits : element_bits(o.precision.format);
  Bytes bytes(ceil_div(checked_mul(elements, bits, "bits of", h.name), 8));
  if (o.incl_bwd && h.element_bits == 0) bytes = bytes.times(2, "bytes of " + h.name + " and its gradient");
  return bytes;
}

std::vector<Hook> selected_hooks(const ModelSpec& spec, const ActivationCacheOptions& o) {
  std::vector<Hook> all = model_hooks(spec, o.batch, o.seq, o.key_positions);
  const HookFilter filter(o.filter);
  std::vector<bool> matched(o.filter.size(), false), selected(all.size(), o.filter.empty());
  for (std::size_t h = 0; h < all.size() && !o.filter.empty(); ++h) selected[h] = filter.match(all[h].name, matched);
  for (std::size_t i = 0; i < o.filter.size(); ++i) {
    if (matched[i]) continue;
    const std::string& pattern = o.filter[i];
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
  for (std::size_t i = 0; i < all.size(); ++i) {
    Hook& h = all[i];
    if (!selected[i]) continue;
    if (o.stop_at_layer && (!h.layer ? h.name.starts_with("ln_final") : *h.layer >= *o.stop_at_layer)) continue;
    if (!layers.empty() && (!h.layer || !layers.contains(*h.layer))) continue;
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
    row.bytes = row.bytes.plus(hook_bytes(h, o), "bytes of", h.kind);
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
  cache.note = transformer_lens_gap(spec);

  Breakdown out;
  if (o.on_cpu) {
    Item host = cache;
    host.note = "kept on the CPU (device=\"cpu\"): each hook is copied off the GPU as the forward pass produces it";
    out.host.push_back(std::move(host));
    cache.bytes = Bytes(0);
    for (Item& row : cache.detail) row.bytes = Bytes(0);
    cache.note = "cached on the host; see host memory" + (cache.note.empty() ? "" : "; " + cache.note);
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
                                  {"activations_full_cache",
                                   full_bytes,
                                   "all " + std::to_string(count) + " hooks at " + dtype,
                                   std::nullopt,
                                   "what caching every hook would take",
                                   {}}});
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
                "invalid layer selection '" + printable(text) +
                    "': expected numbers and ranges such as 3, 0,5,11 or 0-11",
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
