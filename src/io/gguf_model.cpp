// A GGUF file's llama.cpp metadata mapped onto a ModelSpec, and its tensors onto the spec's
// stored weights. Key names are llama.cpp's (src/llama-arch.cpp, LLM_KV_NAMES, at
// ggml-org/llama.cpp commit 00395eb285c7c6821ff372e3ca41dae9da33c2c7); tensor names follow
// its LLM_TENSOR_NAMES ("token_embd", "blk.N.attn_q", "output", ...).
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>
#include <tuple>

#include "memplan/core/bytes.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/text.hpp"
#include "memplan/io/gguf.hpp"
#include "text_file.hpp"

namespace memplan {

namespace {

struct ArchFamily {
  std::string_view architecture;  // general.architecture as llama.cpp writes it
  Family family;
};

// The architectures whose every parameter memplan's spec describes. llama.cpp writes
// "llama" for Llama, Mistral and Mixtral checkpoints alike (Mixtral: with an expert count),
// and "granitehybrid" for Granite 4.0-H and Bamba.
constexpr ArchFamily kArchitectures[] = {
    {"falcon", Family::falcon},
    {"falcon-h1", Family::falcon_h1},
    {"gemma", Family::gemma},
    {"gemma2", Family::gemma2},
    {"gemma3", Family::gemma3},
    {"gemma4", Family::gemma3},  // Gemma 4: the full-attention layers' own heads (read from the tensors)
    {"gpt2", Family::gpt2},
    {"gptneox", Family::gpt_neox},
    {"granitehybrid", Family::bamba},
    {"llama", Family::llama},
    {"mamba", Family::mamba},
    {"mamba2", Family::mamba2},
    {"nemotron_h", Family::nemotron_h},
    {"nemotron_h_moe", Family::nemotron_h},  // Nemotron 3: its E layers are experts
    {"phi2", Family::phi},
    {"phi3", Family::phi3},
    {"qwen2", Family::qwen2},
    {"qwen2vl", Family::qwen2},  // Qwen2-VL's and Qwen2.5-VL's text models: M-RoPE
    {"qwen3", Family::qwen3},
    {"qwen3moe", Family::qwen3_moe},
    {"qwen35", Family::qwen3_next},
    {"qwen35moe", Family::qwen3_next},
    {"qwen3next", Family::qwen3_next},
    {"qwen3vl", Family::qwen3},  // Qwen3-VL's text models: M-RoPE and deepstack inputs
    {"qwen3vlmoe", Family::qwen3_moe},
};

// The GGUF key (after "{arch}.") behind each spec field validate() may name.
struct SpecKey {
  std::string_view spec;
  std::string_view gguf;
};
constexpr SpecKey kSpecKeys[] = {{"d_model", "embedding_length"},
                                 {"n_layers", "block_count"},
                                 {"n_heads", "attention.head_count"},
                                 {"n_kv_heads", "attention.head_count_kv"},
                                 {"d_head", "attention.key_length"},
                                 {"d_mlp", "feed_forward_length"},
                                 {"max_seq_len", "context_length"},
                                 {"experts", "expert_count"},
                                 {"experts_per_token", "expert_used_count"},
                                 {"sliding_window", "attention.sliding_window"},
                                 {"ssm_d_inner", "ssm.inner_size"},
                                 {"ssm_d_state", "ssm.state_size"},
                                 {"ssm_d_conv", "ssm.conv_kernel"},
                                 {"ssm_dt_rank", "ssm.time_step_rank"},
                                 {"ssm_heads", "ssm.time_step_rank"},
                                 {"ssm_groups", "ssm.group_count"},
                                 {"deepstack_layers", "n_deepstack_layers"}};

// The weights row a tensor belongs to, from its llama.cpp name.
std::string component_of(std::string_view name) {
  for (std::string_view suffix : {".weight", ".bias"}) {
    if (name.ends_with(suffix)) {
      name.remove_suffix(suffix.size());
      break;
    }
  }
  if (name == "token_embd" || name == "position_embd" || name == "token_types" || name == "token_embd_norm" ||
      name == "per_layer_token_embd") {  // Gemma 4 E2B's per-layer token embeddings: the input layer's too
    return "embeddings";
  }
  if (name == "per_layer_model_proj") return "per_layer_inputs";
  if (name == "output") return "lm_head";
  if (name == "output_norm") return "norms";
  if (!name.starts_with("blk.")) return "other";
  name.remove_prefix(4);
  const std::size_t dot = name.find('.');
  if (dot == std::string_view::npos) return "other";
  name.remove_prefix(dot + 1);  // "attn_q", "ffn_up_exps", "ffn_gate.3", ...
  if (name.find("norm") != std::string_view::npos) return "norms";
  if (name.starts_with("ssm_") || name == "attn_gate") return "ssm";  // attn_gate: a gated DeltaNet's z
  if (name == "ffn_gate_inp_shexp") return "router";                  // the shared expert's gate
  if (name.ends_with("_shexp")) return "mlp";
  if (name == "attn_q" || name == "attn_k" || name == "attn_v" || name == "attn_qkv" || name == "attn_output") {
    return "attention";
  }
  if (name == "ffn_gate_inp") return "router";
  if (name.ends_with("_exps") || (name.starts_with("ffn_") && name.find('.') != std::string_view::npos)) {
    return "experts";  // stacked experts (ffn_up_exps) or one tensor per expert (ffn_up.3)
  }
  if (name == "ffn_gate" || name == "ffn_up" || name == "ffn_down") return "mlp";
  if (name == "inp_gate" || name == "proj") return "per_layer_inputs";  // Gemma 4 E2B's, per layer
  if (name == "layer_output_scale") return "norms";
  return "other";
}

class Mapper {
 public:
  explicit Mapper(const GgufFile& f) : f_(f) {
    for (const GgufTensor& t : f.tensors) tensors_[t.name] = &t;
  }

  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw ConfigError(f_.path, 0, 0, key, message);
  }

  const GgufTensor* tensor(const std::string& name) const {
    const auto it = tensors_.find(name);
    return it == tensors_.end() ? nullptr : it->second;
  }
  bool has(const std::string& name) const { return tensor(name) != nullptr; }
  bool has_prefix(std::string_view prefix) const {
    const auto it = tensors_.lower_bound(std::string(prefix));
    return it != tensors_.end() && std::string_view(it->first).starts_with(prefix);
  }

  // A whole number under `key`, from min to 2^40; nullopt when absent.
  std::optional<std::uint64_t> count(const std::string& key, std::uint64_t min) const {
    const GgufValue* v = f_.find(key);
    if (v == nullptr) return std::nullopt;
    if (v->type == GgufValueType::array) {
      fail(key, "'" + key + "' is a per-layer array of " + group_digits(v->count) + " " + to_string(v->element_type) +
                    "s: memplan's model spec holds one value for every layer");
    }
    const std::optional<std::uint64_t> n = v->whole_number();
    if (!n) fail(key, "'" + key + "' must be a whole number >= 0, got a " + to_string(v->type) + describe(*v));
    if (*n < min || *n > detail::kMaxConfigSize) {
      fail(key, "'" + key + "' is " + group_digits(*n) + "; it must be from " + std::to_string(min) + " to 2^40");
    }
    return n;
  }
  std::uint64_t required(const std::string& key, std::uint64_t min) const {
    const std::optional<std::uint64_t> n = count(key, min);
    if (!n) fail(key, "missing '" + key + "', which llama.cpp writes for every " + arch_ + " model");
    return *n;
  }
  bool is_array(const std::string& key) const {
    const GgufValue* v = f_.find(key);
    return v != nullptr && v->type == GgufValueType::array;
  }
  std::optional<bool> flag(const std::string& key) const {
    const GgufValue* v = f_.find(key);
    if (v == nullptr) return std::nullopt;
    const bool* b = std::get_if<bool>(&v->value);
    if (b == nullptr) fail(key, "'" + key + "' must be a bool, got a " + to_string(v->type));
    return *b;
  }

  void set_architecture(std::string arch) { arch_ = std::move(arch); }

 private:
  static std::string describe(const GgufValue& v) {
    if (const auto* s = std::get_if<std::int64_t>(&v.value)) return " of value " + std::to_string(*s);
    if (const auto* d = std::get_if<double>(&v.value)) return " of value " + std::to_string(*d);
    return "";
  }

  const GgufFile& f_;
  std::map<std::string, const GgufTensor*> tensors_;
  std::string arch_;
};

// The file's tensors, grouped by component, type and size, in file order of first appearance.
// In a gated DeltaNet's layers (`deltanet`: Qwen3.5's, where blk.N.ssm_conv1d is) attn_qkv is
// the mixer's q, k and v projection, not attention's.
std::vector<StoredTensors> stored_weights(const GgufFile& f, bool deltanet) {
  std::vector<StoredTensors> out;
  std::map<std::tuple<std::string, std::string, std::uint64_t, std::uint64_t>, std::size_t> index;
  std::set<std::string> mixer_qkv;
  if (deltanet) {
    for (const GgufTensor& t : f.tensors) {
      if (t.name.ends_with(".ssm_conv1d.weight"))
        mixer_qkv.insert(t.name.substr(0, t.name.size() - std::string_view("ssm_conv1d.weight").size()) +
                         "attn_qkv.weight");
    }
  }
  for (const GgufTensor& t : f.tensors) {
    std::string component = mixer_qkv.contains(t.name) ? "ssm" : component_of(t.name);
    const auto key = std::make_tuple(component, std::string(t.type.name), t.elements, t.bytes);
    const auto [it, added] = index.emplace(key, out.size());
    if (added) {
      out.push_back({std::move(component), std::string(t.type.name), t.elements, t.bytes, 1});
    } else {
      ++out[it->second].copies;
    }
  }
  return out;
}

// Whether a block's tensor (its name after "blk.N") is a routed expert's, as --n-cpu-moe's
// pattern \.ffn_(up|down|gate|gate_up)_(ch|)exps picks them (common/common.h), biases included.
bool routed_experts(std::string_view rest) {
  for (const std::string_view m : {".ffn_up_", ".ffn_down_", ".ffn_gate_", ".ffn_gate_up_"}) {
    if (rest.starts_with(m) &&
        (rest.substr(m.size()).starts_with("exps") || rest.substr(m.size()).starts_with("chexps"))) {
      return true;
    }
  }
  return false;
}

// The tensors by the llama.cpp layer that loads them (src/llama-model.cpp: the input layer
// always on the CPU, blocks and the output layer where -ngl puts them), each rounded up to
// ggml's CPU buffer alignment (32 bytes, TENSOR_ALIGNMENT in ggml-cpu).
StoredLayers stored_layers(const GgufFile& f, std::uint64_t n_layers) {
  constexpr std::uint64_t kAlignment = 32;
  StoredLayers out;
  out.blocks.assign(n_layers, 0);
  out.experts.assign(n_layers, 0);
  bool head = false;
  std::uint64_t token_embd = 0;
  for (const GgufTensor& t : f.tensors) {
    const std::uint64_t bytes = checked_mul(ceil_div(t.bytes, kAlignment), kAlignment, "GGUF tensor bytes");
    const std::string_view name = t.name;
    std::uint64_t* sum = &out.blocks.front();
    if (component_of(name) == "embeddings") {
      sum = &out.input;
      if (name == "token_embd.weight") token_embd = bytes;
    } else if (name.starts_with("output")) {
      sum = &out.output;
      if (name == "output.weight") head = true;
    } else if (name.starts_with("blk.")) {
      std::uint64_t block = 0;
      const char* first = name.data() + 4;
      const auto [end, ec] = std::from_chars(first, name.data() + name.size(), block);
      if (ec == std::errc() && block < n_layers) {
        sum = &out.blocks[block];
        if (routed_experts(std::string_view(end, static_cast<std::size_t>(name.data() + name.size() - end)))) {
          out.experts[block] = checked_add(out.experts[block], bytes, "GGUF layer bytes");
        }
      }
    }
    *sum = checked_add(*sum, bytes, "GGUF layer bytes");
  }
  if (!head) out.tied_head = token_embd;
  return out;
}

// A transformer's attention heads, head size and MLP width.
void read_attention_and_mlp(const Mapper& m, const std::string& p, ModelSpec& s, std::vector<std::string>& notes) {
  s.n_heads = m.required(p + "attention.head_count", 1);
  s.n_kv_heads = m.count(p + "attention.head_count_kv", 1).value_or(s.n_heads);

  // d_head: key_length, else d_model / n_heads; one size for keys and values.
  const std::optional<std::uint64_t> key_length = m.count(p + "attention.key_length", 1);
  const std::optional<std::uint64_t> value_length = m.count(p + "attention.value_length", 1);
  if (key_length && value_length && *key_length != *value_length) {
    m.fail(p + "attention.value_length", "'" + p + "attention.value_length' " + group_digits(*value_length) +
                                             " differs from key_length " + group_digits(*key_length) +
                                             ": memplan's model spec has one head size for keys and values");
  }
  if (key_length || value_length) {
    s.d_head = key_length ? *key_length : *value_length;
  } else if (s.d_model % s.n_heads != 0) {
    m.fail(p + "attention.head_count", "embedding_length " + group_digits(s.d_model) +
                                           " is not divisible by head_count " + group_digits(s.n_heads) +
                                           " and the file gives no attention.key_length");
  } else {
    s.d_head = s.d_model / s.n_heads;
  }

  // d_mlp: feed_forward_length, else the up projection's width.
  if (const std::optional<std::uint64_t> ff = m.count(p + "feed_forward_length", 1)) {
    s.d_mlp = *ff;
  } else if (const GgufTensor* up = m.tensor("blk.0.ffn_up.weight"); up && up->shape.size() >= 2) {
    s.d_mlp = up->shape[1];
    notes.push_back("no " + p + "feed_forward_length: d_mlp " + group_digits(s.d_mlp) + " from blk.0.ffn_up.weight");
  } else {
    m.fail(p + "feed_forward_length",
           "missing '" + p + "feed_forward_length', and no blk.0.ffn_up.weight to read it from");
  }
}

// Gemma 2's and 3's sliding-window layers as llama.cpp lays them out (src/models/gemma2.cpp,
// gemma3.cpp, load_swa_pattern): of every `pattern` layers the last is global, the rest slide
// over the window; Gemma 2's window is 4,096 unless the file gives one, and a Gemma 3 without
// one has global layers only.
void read_gemma_windows(const Mapper& m, const std::string& p, Family family, ModelSpec& s) {
  if (family == Family::gemma2 && s.sliding_window == 0) s.sliding_window = 4096;
  if (s.sliding_window == 0) return;
  s.global_every = m.count(p + "attention.sliding_window_pattern", 1).value_or(family == Family::gemma2 ? 2 : 6);
}

// Gemma 4's layers (src/models/gemma4.cpp): the sliding-window layers' heads key_length_swa wide,
// the full-attention layers' key_length; head_count_kv and the window pattern are per-layer
// arrays, whose elements a GGUF reader skips, so each layer's kind comes from its attn_q and its
// key/value heads from its attn_k; a full-attention layer without attn_v uses its keys as values.
// E2B and E4B: per-layer input embeddings (embedding_length_per_layer_input), the last
// shared_kv_layers layers reading an earlier layer's cache (their attn_k optional), and a
// per-layer feed_forward_length array when those layers' MLPs are twice as wide (read from
// their ffn_up).
void read_gemma4_layers(const Mapper& m, const std::string& p, ModelSpec& s) {
  s.n_heads = m.required(p + "attention.head_count", 1);
  const std::uint64_t full = m.required(p + "attention.key_length", 1);
  const std::uint64_t swa = m.required(p + "attention.key_length_swa", 1);
  s.per_layer_input = m.count(p + "embedding_length_per_layer_input", 0).value_or(0);
  s.kv_shared_layers = m.count(p + "attention.shared_kv_layers", 0).value_or(0);
  if (s.kv_shared_layers >= s.n_layers) {
    m.fail(p + "attention.shared_kv_layers", "'" + p + "attention.shared_kv_layers' is " +
                                                 group_digits(s.kv_shared_layers) + ", not fewer than the " +
                                                 group_digits(s.n_layers) + " layers");
  }
  const auto ffn_width = [&](std::uint64_t il) {
    const GgufTensor* up = m.tensor("blk." + std::to_string(il) + ".ffn_up.weight");
    if (up == nullptr || up->shape.size() < 2)
      m.fail(p + "feed_forward_length", "a per-layer feed_forward_length and no blk." + std::to_string(il) +
                                            ".ffn_up.weight to read the layer's width from");
    return up->shape[1];
  };
  if (m.is_array(p + "feed_forward_length")) {
    s.d_mlp = ffn_width(0);
    const std::uint64_t last = ffn_width(s.n_layers - 1);
    s.double_wide_mlp = s.kv_shared_layers != 0 && last == checked_mul(2, s.d_mlp, "d_mlp");
    if (last != s.d_mlp && !s.double_wide_mlp)
      m.fail(p + "feed_forward_length",
             "Gemma 4's MLPs are d_mlp wide, or twice that in the KV-sharing layers; the "
             "last layer's is " +
                 group_digits(last) + " beside " + group_digits(s.d_mlp));
  } else {
    s.d_mlp = m.required(p + "feed_forward_length", 1);
  }
  s.d_head = swa;
  s.global_d_head = full;
  if (full == swa) {
    m.fail(p + "attention.key_length",
           "Gemma 4's full-attention heads are wider than its sliding ones; this file "
           "gives both " +
               group_digits(full) + ", which leaves the layers' kinds unknown");
  }
  s.layer_types.clear();
  bool values_of_their_own = true;
  for (std::uint64_t il = 0; il < s.n_layers; ++il) {
    const std::string blk = "blk." + std::to_string(il) + ".";
    const GgufTensor* q = m.tensor(blk + "attn_q.weight");
    const GgufTensor* k = m.tensor(blk + "attn_k.weight");
    const bool shared = il + s.kv_shared_layers >= s.n_layers;
    if (q == nullptr || q->shape.size() < 2 || (!shared && (k == nullptr || k->shape.size() < 2)))
      m.fail(blk + "attn_q.weight",
             "a Gemma 4 layer without attn_q and attn_k: memplan reads each layer's kind from them");
    const bool global = q->shape[1] == checked_mul(s.n_heads, full, "q width");
    if (!global && q->shape[1] != checked_mul(s.n_heads, swa, "q width"))
      m.fail(blk + "attn_q.weight", blk + "attn_q.weight is " + group_digits(q->shape[1]) +
                                        " wide: neither head_count x key_length nor x key_length_swa");
    s.layer_types.push_back(global ? AttentionKind::full : AttentionKind::sliding);
    if (shared && (k == nullptr || k->shape.size() < 2)) continue;  // reads an earlier layer's cache
    const std::uint64_t width = global ? full : swa;
    std::uint64_t& heads = global ? s.global_kv_heads : s.n_kv_heads;
    if (k->shape[1] % width != 0 || (heads != 0 && heads != k->shape[1] / width))
      m.fail(blk + "attn_k.weight", "memplan reads Gemma 4 layers of one kind with the same key/value heads");
    heads = k->shape[1] / width;
    if (global && !m.has(blk + "attn_v.weight")) values_of_their_own = false;
  }
  if (s.n_kv_heads == 0) s.n_kv_heads = s.global_kv_heads;  // a model of full layers only: one head count
  s.global_k_eq_v = !values_of_their_own;
  s.layer_scalar = m.has("blk.0.layer_output_scale.weight");
  // The pattern in closed form where every global_every-th layer is the full one.
  for (std::uint64_t every = 1; every <= s.n_layers; ++every) {
    bool regular = true;
    for (std::uint64_t il = 0; il < s.n_layers && regular; ++il)
      regular = (s.layer_types[il] == AttentionKind::full) == ((il + 1) % every == 0);
    if (regular) {
      s.global_every = every;
      s.layer_types.clear();
      break;
    }
  }
}

// A Mamba's or Mamba-2's state-space sizes (llama.cpp's src/models/mamba.cpp, mamba2.cpp):
// no attention, no MLP. Mamba-2's time_step_rank is its head count.
void read_ssm_sizes(const Mapper& m, const std::string& p, Family family, ModelSpec& s) {
  SsmSizes& ssm = s.ssm;
  ssm.version = family == Family::mamba ? 1 : 2;
  ssm.d_conv = m.required(p + "ssm.conv_kernel", 1);
  ssm.d_inner = m.required(p + "ssm.inner_size", 1);
  ssm.d_state = m.required(p + "ssm.state_size", 1);
  const std::uint64_t rank = m.required(p + "ssm.time_step_rank", 1);
  if (ssm.version == 1) {
    ssm.dt_rank = rank;
    ssm.dt_bc_norms = m.has("blk.0.ssm_dt_norm.weight");
  } else {
    ssm.heads = rank;
    ssm.groups = m.required(p + "ssm.group_count", 1);
    ssm.chunk = 256;  // Mamba-2's default chunk_size; llama.cpp's scan has none
    ssm.gated_norm = m.has("blk.0.ssm_norm.weight") || !m.has_prefix("blk.0.");
  }
  ssm.conv_bias = m.has("blk.0.ssm_conv1d.bias") || !m.has_prefix("blk.0.");
  ssm.proj_bias = m.has("blk.0.ssm_in.bias");
  ssm.out_proj_bias = m.has("blk.0.ssm_out.bias");
  s.n_heads = s.n_kv_heads = s.d_head = s.d_mlp = 0;
}

// A hybrid of Mamba-2 and attention layers. llama.cpp marks the kinds with per-layer
// head_count_kv (and Nemotron-H's feed_forward_length) arrays, 0 where a layer has none, which
// GGUF readers skip; the tensors say the same: blk.N.ssm_in a Mamba-2 layer, blk.N.attn_q (or
// attn_qkv) attention, and for Nemotron-H blk.N.ffn_up a layer that is an MLP alone. Granite
// 4.0-H (granitehybrid, memplan's bamba) has an MLP after every mixer; Falcon-H1 runs attention
// and a Mamba-2 mixer side by side in every layer, then an MLP. Head counts and widths come
// from the first such tensors.
void read_hybrid_layers(const Mapper& m, const std::string& p, Family family, ModelSpec& s) {
  read_ssm_sizes(m, p, Family::mamba2, s);
  if (!m.has_prefix("blk.")) {
    m.fail(p + "block_count",
           "a " + p.substr(0, p.size() - 1) + " file without tensors: memplan reads which layers attend from them");
  }
  // Granite 4.0-H Tiny and Small: routed experts of feed_forward_length beside a shared expert
  // of expert_shared_feed_forward_length (ffn_*_exps, ffn_*_shexp) after every mixer. Nemotron 3
  // (nemotron_h_moe): layers of ReLU² experts of expert_feed_forward_length (blk.N.ffn_up_exps)
  // beside a shared expert, sigmoid-routed with a bias per expert (exp_probs_b).
  const bool experts = m.count(p + "expert_count", 0).value_or(0) > 0;
  if (experts && family == Family::falcon_h1) {
    m.fail(p + "expert_count", "a falcon-h1 with experts: memplan does not describe one");
  }
  if (m.count(p + "moe_latent_size", 0).value_or(0) > 0) {
    m.fail(p + "moe_latent_size", "experts in a latent space (Nemotron 3 Super): memplan does not describe them yet");
  }
  const bool mlp_layers = family == Family::nemotron_h, side_by_side = family == Family::falcon_h1;
  const GgufTensor *q = nullptr, *k = nullptr, *up = nullptr;
  s.layer_types.clear();
  s.parallel_ssm = side_by_side;
  for (std::uint64_t il = 0; il < s.n_layers; ++il) {
    const std::string b = "blk." + std::to_string(il) + ".";
    if (up == nullptr) up = m.tensor(b + "ffn_up.weight");
    if (side_by_side) {
      if (!m.has(b + "ssm_in.weight") || !m.has(b + "attn_q.weight")) {
        m.fail(p + "block_count",
               "layer " + std::to_string(il) + " lacks ssm_in or attn_q: every Falcon-H1 layer runs both side by side");
      }
      if (q == nullptr) q = m.tensor(b + "attn_q.weight"), k = m.tensor(b + "attn_k.weight");
      continue;
    }
    if (m.has(b + "ssm_in.weight")) {
      s.layer_types.push_back(AttentionKind::mamba);
    } else if (m.has(b + "attn_q.weight") || m.has(b + "attn_qkv.weight")) {
      s.layer_types.push_back(AttentionKind::full);
      if (q == nullptr) q = m.tensor(b + "attn_q.weight"), k = m.tensor(b + "attn_k.weight");
    } else if (mlp_layers && (m.has(b + "ffn_up.weight") || m.has(b + "ffn_up_exps.weight"))) {
      s.layer_types.push_back(AttentionKind::mlp);
    } else {
      m.fail(p + "block_count", "layer " + std::to_string(il) + " has no ssm_in or attn_q" +
                                    (mlp_layers ? " or ffn_up tensor: neither Mamba-2, attention nor MLP"
                                                : " tensor: neither Mamba-2 nor attention"));
    }
  }
  const std::uint64_t heads = m.required(p + "attention.head_count", 1);
  s.d_head = m.count(p + "attention.key_length", 1).value_or(s.d_model / heads);
  const auto width = [](const GgufTensor* t) { return t != nullptr && t->shape.size() >= 2 ? t->shape[1] : 0; };
  s.n_heads = q != nullptr ? width(q) / s.d_head : heads;
  s.n_kv_heads = k != nullptr ? width(k) / s.d_head : s.n_heads;
  if (experts && mlp_layers) {
    s.d_expert = m.required(p + "expert_feed_forward_length", 1);
    s.d_shared_expert = m.count(p + "expert_shared_feed_forward_length", 0).value_or(0);
    s.d_mlp = s.d_expert;
    for (std::uint64_t il = 0; il < s.layer_types.size(); ++il) {  // the first expert layer's router
      if (s.layer_types[il] != AttentionKind::mlp) continue;
      s.router_bias = m.has("blk." + std::to_string(il) + ".exp_probs_b.bias");
      break;
    }
  } else if (experts) {
    s.d_expert = m.required(p + "feed_forward_length", 1);
    s.d_shared_expert = m.count(p + "expert_shared_feed_forward_length", 0).value_or(0);
    s.d_mlp = s.d_shared_expert != 0 ? s.d_shared_expert : s.d_expert;
  } else {
    s.d_mlp = width(up);
  }
}

// Qwen3-Next and Qwen3.5 (llama.cpp's qwen3next, qwen35, qwen35moe; src/models/qwen35.cpp):
// gated DeltaNet layers (blk.N.ssm_conv1d) and gated attention layers (blk.N.attn_q, twice the
// heads' width: queries and the output gate), an MLP or experts in each. llama.cpp's key and
// value head widths are both ssm.state_size; time_step_rank is the value heads, group_count the
// key heads. A file's multi-token-prediction blocks (nextn_predict_layers, the last blocks) are
// not the model's layers: llama.cpp skips them unless asked to load them.
void read_gated_delta_layers(const Mapper& m, const std::string& p, ModelSpec& s) {
  SsmSizes& ssm = s.ssm;
  ssm.version = 3;
  ssm.d_conv = m.required(p + "ssm.conv_kernel", 1);
  ssm.d_inner = m.required(p + "ssm.inner_size", 1);
  ssm.d_state = m.required(p + "ssm.state_size", 1);
  ssm.heads = m.required(p + "ssm.time_step_rank", 1);
  ssm.groups = m.required(p + "ssm.group_count", 1);
  ssm.chunk = 64;
  ssm.conv_bias = ssm.proj_bias = ssm.out_proj_bias = false;
  if (!m.has_prefix("blk.")) {
    m.fail(p + "block_count",
           "a " + p.substr(0, p.size() - 1) + " file without tensors: memplan reads which layers attend from them");
  }
  const std::uint64_t mtp = m.count(p + "nextn_predict_layers", 0).value_or(0);
  if (mtp >= s.n_layers) {
    m.fail(p + "nextn_predict_layers", "nextn_predict_layers " + group_digits(mtp) + " leaves no layer of the " +
                                           group_digits(s.n_layers) + " blocks to the model");
  }
  s.n_layers -= mtp;
  s.mtp_layers = mtp;
  const GgufTensor *q = nullptr, *k = nullptr;
  s.layer_types.clear();
  for (std::uint64_t il = 0; il < s.n_layers; ++il) {
    const std::string b = "blk." + std::to_string(il) + ".";
    if (m.has(b + "ssm_conv1d.weight")) {
      s.layer_types.push_back(AttentionKind::mamba);
    } else if (m.has(b + "attn_q.weight")) {
      s.layer_types.push_back(AttentionKind::full);
      if (q == nullptr) q = m.tensor(b + "attn_q.weight"), k = m.tensor(b + "attn_k.weight");
    } else {
      m.fail(p + "block_count", "layer " + std::to_string(il) +
                                    " has no ssm_conv1d or attn_q tensor: neither gated DeltaNet nor attention");
    }
  }
  const std::uint64_t heads = m.required(p + "attention.head_count", 1);
  s.d_head = m.count(p + "attention.key_length", 1).value_or(s.d_model / heads);
  const auto width = [](const GgufTensor* t) { return t != nullptr && t->shape.size() >= 2 ? t->shape[1] : 0; };
  s.n_heads = q != nullptr ? width(q) / (2 * s.d_head) : heads;
  s.n_kv_heads = k != nullptr ? width(k) / s.d_head : m.count(p + "attention.head_count_kv", 1).value_or(heads);
  if (const std::optional<std::uint64_t> rotary = m.count(p + "rope.dimension_count", 1); rotary && *rotary < s.d_head)
    s.rotary_dim = *rotary;
  if (m.count(p + "expert_count", 0).value_or(0) > 0) {
    s.d_expert = m.required(p + "expert_feed_forward_length", 1);
    s.d_shared_expert = m.count(p + "expert_shared_feed_forward_length", 0).value_or(0);
    s.d_mlp = m.count(p + "feed_forward_length", 1).value_or(s.d_expert);
  } else {
    s.d_mlp = m.required(p + "feed_forward_length", 1);
  }
}

// The file without its multi-token-prediction blocks (blk.N, N >= the model's layers).
GgufFile trunk_of(const GgufFile& f, std::uint64_t n_layers) {
  GgufFile out = f;
  std::erase_if(out.tensors, [&](const GgufTensor& t) {
    std::uint64_t block = 0;
    const std::string_view name = t.name;
    if (!name.starts_with("blk.")) return false;
    const auto [end, ec] = std::from_chars(name.data() + 4, name.data() + name.size(), block);
    return ec == std::errc() && block >= n_layers;
  });
  return out;
}

}  // namespace

std::vector<std::string> gguf_architectures() {
  std::vector<std::string> out;
  for (const ArchFamily& a : kArchitectures) out.emplace_back(a.architecture);
  std::sort(out.begin(), out.end());
  return out;
}

GgufImport gguf_model(const GgufFile& f) {
  Mapper m(f);
  GgufImport out;
  const GgufValue* arch_value = f.find("general.architecture");
  if (arch_value == nullptr)
    m.fail("general.architecture", "missing 'general.architecture', which every GGUF model has");
  const auto* arch = std::get_if<std::string>(&arch_value->value);
  if (arch == nullptr) {
    m.fail("general.architecture",
           "'general.architecture' must be a short string, got a " + to_string(arch_value->type));
  }
  out.architecture = *arch;
  if (*arch == "clip") {
    m.fail("general.architecture",
           "this is a vision tower's file (general.architecture 'clip', an mmproj), not a model: plan the model's "
           "own .gguf and add `mmproj` " +
               f.path);
  }
  const auto known = std::find_if(std::begin(kArchitectures), std::end(kArchitectures),
                                  [&](const ArchFamily& a) { return a.architecture == *arch; });
  if (known == std::end(kArchitectures)) {
    m.fail("general.architecture", "unsupported architecture '" + printable(*arch) + "'" +
                                       did_you_mean(*arch, gguf_architectures()) + "; memplan maps " +
                                       quoted_list(gguf_architectures(), "and"));
  }
  m.set_architecture(*arch);
  const std::string p = *arch + ".";

  ModelEntry& entry = out.entry;
  entry.origin = f.path;
  entry.source = "GGUF metadata and tensor infos of " + f.path;
  const std::uint64_t experts = m.count(p + "expert_count", 0).value_or(0);
  const Family family = known->family == Family::llama && experts > 0 ? Family::mixtral : known->family;
  ModelSpec& s = entry.spec;
  s = family_defaults(family);
  s.name = std::filesystem::path(f.path).stem().string();
  if (const GgufValue* name = f.find("general.name")) {
    if (const auto* text = std::get_if<std::string>(&name->value))
      out.notes.push_back("general.name: " + printable(*text));
  }

  s.d_model = m.required(p + "embedding_length", 1);
  s.n_layers = m.required(p + "block_count", 1);
  s.max_seq_len = m.required(p + "context_length", 1);
  if (family == Family::mamba || family == Family::mamba2) {
    read_ssm_sizes(m, p, family, s);
  } else if (family == Family::nemotron_h || family == Family::bamba || family == Family::falcon_h1) {
    read_hybrid_layers(m, p, family, s);
  } else if (family == Family::qwen3_next) {
    read_gated_delta_layers(m, p, s);
  } else if (*arch == "gemma4") {
    read_gemma4_layers(m, p, s);
  } else {
    read_attention_and_mlp(m, p, s, out.notes);
  }

  // vocab_size: the token embedding's rows (what the parameters are), else the vocabulary.
  std::optional<std::uint64_t> vocab = m.count(p + "vocab_size", 1);
  std::string vocab_from = p + "vocab_size";
  if (!vocab) {
    if (const GgufValue* tokens = f.find("tokenizer.ggml.tokens"); tokens && tokens->type == GgufValueType::array) {
      vocab = tokens->count;
      vocab_from = "tokenizer.ggml.tokens";
    }
  }
  if (const GgufTensor* embd = m.tensor("token_embd.weight"); embd && embd->shape.size() >= 2) {
    if (vocab && *vocab != embd->shape[1]) {
      out.notes.push_back(vocab_from + " lists " + group_digits(*vocab) + " tokens; token_embd.weight has " +
                          group_digits(embd->shape[1]) + " rows, which vocab_size follows");
    }
    vocab = embd->shape[1];
  }
  if (!vocab || *vocab == 0 || *vocab > detail::kMaxConfigSize) {
    m.fail("tokenizer.ggml.tokens", "no vocabulary size: the file has no " + p +
                                        "vocab_size, no tokenizer.ggml.tokens and no token_embd.weight");
  }
  s.vocab_size = *vocab;

  if (experts > 0) {
    s.experts = experts;
    s.experts_per_token = m.required(p + "expert_used_count", 1);
    // Qwen3-MoE's experts have a width of their own (moe_intermediate_size).
    if (family == Family::qwen3_moe) s.d_expert = m.required(p + "expert_feed_forward_length", 1);
    // Gemma 4's experts sit beside the dense MLP, their router scaled on its input and per expert.
    if (*arch == "gemma4") {
      s.d_expert = m.required(p + "expert_feed_forward_length", 1);
      s.d_shared_expert = s.d_mlp;
      s.router_scales = true;
    }
  }
  // Qwen2-VL's and Qwen3-VL's text models rotate by M-RoPE (rope.dimension_sections); Qwen3-VL's
  // first layers add the tower's deepstack features (src/models/qwen3vl.cpp).
  if (*arch == "qwen2vl" || *arch == "qwen3vl" || *arch == "qwen3vlmoe") {
    s.mrope = true;
    s.deepstack_layers = m.count(p + "n_deepstack_layers", 0).value_or(0);
  }
  s.sliding_window = m.count(p + "attention.sliding_window", 0).value_or(0);
  if ((family == Family::gemma2 || family == Family::gemma3) && *arch != "gemma4") read_gemma_windows(m, p, family, s);
  if (const std::optional<bool> parallel = m.flag(p + "use_parallel_residual")) s.parallel_block = *parallel;

  // What the tensors say about biases, norms, the head and positions (blk.0 stands for all).
  if (!f.tensors.empty()) {
    s.attn_qkv_bias = m.has("blk.0.attn_q.bias") || m.has("blk.0.attn_qkv.bias");
    s.attn_out_bias = m.has("blk.0.attn_output.bias");
    s.mlp_bias = m.has("blk.0.ffn_up.bias") || m.has("blk.0.ffn_down.bias");
    if (m.has("blk.0.attn_norm.weight"))
      s.norm = m.has("blk.0.attn_norm.bias") ? NormKind::layernorm : NormKind::rmsnorm;
    std::uint64_t norms = 0;
    for (const GgufTensor& t : f.tensors) {
      // A Mamba-2 mixer's gated norm (ssm_norm) is the mixer's, not a layer norm.
      // (Falcon-H1's ffn_norm has no ".weight" in its name.)
      // Per-head q/k norms, where the family has them, are the spec's qk_norm, not layer norms.
      const bool qk = s.qk_norm != QkNorm::none &&
                      (t.name == "blk.0.attn_q_norm.weight" || t.name == "blk.0.attn_k_norm.weight");
      if (t.name.starts_with("blk.0.") && (t.name.ends_with("norm.weight") || t.name.ends_with("_norm")) &&
          !t.name.starts_with("blk.0.ssm_") && !qk) {
        ++norms;
      }
    }
    if (norms > 0) s.norms_per_layer = norms;
    s.final_norm = m.has("output_norm.weight");
    s.lm_head = m.has("output.weight") ? LmHead::untied : LmHead::tied;
    s.lm_head_bias = m.has("output.bias");
    if (const GgufTensor* pos = m.tensor("position_embd.weight"); pos && pos->shape.size() >= 2) {
      s.positional = Positional::learned;
      if (pos->shape[1] != s.max_seq_len) s.n_positions = pos->shape[1];
    }
    const GgufTensor* up = m.tensor("blk.0.ffn_up.weight");
    // A gate tensor, or gate and up in one tensor of twice the width (Phi-3): gated.
    if (m.has_prefix("blk.0.ffn_gate.") || m.has_prefix("blk.0.ffn_gate_exps.") ||
        (up && up->shape.size() >= 2 && up->shape[1] == 2 * s.d_mlp)) {
      s.mlp = MlpKind::gated;
    } else if (up || m.has_prefix("blk.0.ffn_up_exps.")) {
      s.mlp = MlpKind::plain;
    }
  }

  try {
    validate(s);
  } catch (const Error& e) {
    const auto gguf = std::find_if(std::begin(kSpecKeys), std::end(kSpecKeys),
                                   [&](const SpecKey& k) { return k.spec == e.key(); });
    const std::string key = gguf == std::end(kSpecKeys) ? e.key() : p + std::string(gguf->gguf);
    // Each size is at most 2^40, but their products can pass 2^64: located, kind overflow.
    if (e.kind() == ErrorKind::overflow) {
      throw ConfigError(f.path, 0, 0, key, std::string("the architecture's sizes overflow: ") + e.what(), e.kind());
    }
    m.fail(key, e.what());
  }

  const std::uint64_t params = count_parameters(s);

  if (s.mtp_layers > 0) {
    out.notes.push_back(group_digits(s.mtp_layers) + " multi-token-prediction block" + (s.mtp_layers == 1 ? "" : "s") +
                        " (nextn_predict_layers) after the model's " + group_digits(s.n_layers) +
                        " layers: not counted, llama.cpp skips them unless it drafts with them");
  }
  const GgufFile trunk = s.mtp_layers > 0 ? trunk_of(f, s.n_layers) : GgufFile{};
  const GgufFile& file = s.mtp_layers > 0 ? trunk : f;
  s.stored_weights = stored_weights(file, s.ssm.version == 3);
  if (!f.tensors.empty()) s.stored_layers = stored_layers(file, s.n_layers);
  if (f.tensors.empty()) {
    out.notes.push_back("no tensors (a vocabulary-only file?): the weights are priced from the architecture");
    return out;
  }
  std::uint64_t parameter_elements = 0, other = 0;
  for (const GgufTensor& t : file.tensors) {
    std::uint64_t& sum = component_of(t.name) == "other" ? other : parameter_elements;
    sum = checked_add(sum, t.elements, "GGUF elements");
  }
  if (parameter_elements != params) {
    out.notes.push_back("the file's parameter tensors hold " + group_digits(parameter_elements) +
                        " elements and the architecture counts " + group_digits(params) +
                        ": the weights are priced from the file, the rest of the estimate from the architecture");
  }
  if (other > 0) {
    out.notes.push_back(group_digits(other) +
                        " elements in tensors that are not parameters (rope_freqs and the like): "
                        "priced with the weights, as llama.cpp loads them");
  }
  return out;
}

GgufImport load_gguf_model(const std::string& path) { return gguf_model(read_gguf(path)); }

LlamaCppProjector gguf_projector(const GgufFile& f) {
  Mapper m(f);
  m.set_architecture("clip (vision tower)");
  const auto text = [&](const std::string& key) -> std::optional<std::string> {
    const GgufValue* v = f.find(key);
    if (v == nullptr) return std::nullopt;
    const auto* t = std::get_if<std::string>(&v->value);
    if (t == nullptr) m.fail(key, "'" + key + "' must be a short string, got a " + to_string(v->type));
    return *t;
  };
  const std::optional<std::string> arch = text("general.architecture");
  if (arch != "clip") {
    m.fail("general.architecture",
           "`mmproj` takes a vision tower's file (general.architecture 'clip', the mmproj-*.gguf beside a model's), "
           "not " +
               (arch ? "a '" + printable(*arch) + "' model" : std::string("a file without general.architecture")));
  }
  if (m.flag("clip.has_vision_encoder") != true) {
    m.fail("clip.has_vision_encoder",
           "this tower has no vision encoder ('clip.has_vision_encoder' is not true): memplan prices vision towers");
  }
  // llama.cpp loads an audio tower from the same file beside the vision one (an omni model's),
  // with a compute buffer of its own that memplan has not recorded.
  if (m.flag("clip.has_audio_encoder") == true) {
    m.fail("clip.has_audio_encoder",
           "this file also holds an audio tower, whose compute buffer memplan has not recorded: it prices vision "
           "towers alone");
  }
  // clip.cpp reads the projector from clip.projector_type, else (a file of several modalities)
  // from clip.vision.projector_type.
  std::string key = "clip.projector_type";
  std::optional<std::string> type = text(key);
  if (!type) type = text(key = "clip.vision.projector_type");
  if (!type) m.fail("clip.projector_type", "missing 'clip.projector_type', which llama.cpp needs to load the tower");
  // The projectors whose graphs memplan has recorded from llama.cpp: Gemma 3's SigLIP with its
  // pooled projection (models/siglip.cpp), Qwen3-VL's and Qwen3.5's tower with its 2 x 2 merger
  // (models/qwen3vl.cpp), and Qwen2-VL's and Qwen2.5-VL's (models/qwen2vl.cpp); other
  // projectors build other graphs.
  const bool gemma3 = *type == "gemma3", qwen2_5 = *type == "qwen2.5vl_merger";
  if (!gemma3 && *type != "qwen3vl_merger" && *type != "qwen2vl_merger" && !qwen2_5) {
    throw ConfigError(f.path, 0, 0, key,
                      "the '" + printable(*type) +
                          "' projector's compute buffer is not recorded; memplan prices the towers of Gemma 3 "
                          "(projector 'gemma3'), Qwen3-VL and Qwen3.5 ('qwen3vl_merger'), Qwen2-VL "
                          "('qwen2vl_merger') and Qwen2.5-VL ('qwen2.5vl_merger') on llama.cpp: plan without "
                          "`mmproj` for the text model alone");
  }
  LlamaCppProjector p;
  p.name = std::filesystem::path(f.path).filename().string();
  p.type = *type;
  const std::string v = "clip.vision.";
  p.image_size = m.required(v + "image_size", 1);
  p.patch_size = m.required(v + "patch_size", 1);
  p.d_model = m.required(v + "embedding_length", 1);
  p.d_ff = m.required(v + "feed_forward_length", 1);
  p.n_layers = m.required(v + "block_count", 1);
  p.n_heads = m.required(v + "attention.head_count", 1);
  // Gemma 3 pools 4 x 4 patches into a token (projector.scale_factor); Qwen merges 2 x 2
  // (spatial_merge_size), the only merge its graph is written for.
  p.n_merge = gemma3 ? m.count(v + "projector.scale_factor", 1).value_or(4)
                     : m.count(v + "spatial_merge_size", 1).value_or(2);
  if (!gemma3 && p.n_merge != 2) {
    m.fail(v + "spatial_merge_size", "llama.cpp's Qwen-VL graphs merge 2 x 2 patches, not " + group_digits(p.n_merge) +
                                         " x " + group_digits(p.n_merge));
  }
  if (p.image_size < p.patch_size) {
    m.fail(v + "image_size", "the image (" + group_digits(p.image_size) + " pixels) is smaller than a patch (" +
                                 group_digits(p.patch_size) + ")");
  }
  if (p.d_model % p.n_heads != 0) {
    m.fail(v + "attention.head_count",
           group_digits(p.n_heads) + " heads do not divide the width " + group_digits(p.d_model));
  }
  const auto tensor = [&](const std::string& name) -> const GgufTensor& {
    const GgufTensor* t = m.tensor(name);
    if (t == nullptr) {
      m.fail(name, "missing tensor '" + name + "', which llama.cpp loads for a " + printable(*type) + " tower");
    }
    return *t;
  };
  const GgufTensor& patch = tensor("v.patch_embd.weight");
  if (patch.type.block_size != 1) {
    m.fail(patch.name, "'" + patch.name + "' is " + std::string(patch.type.name) +
                           ": llama.cpp's patch embedding needs F16 or F32");
  }
  p.patch_element_bytes = patch.type.type_size;
  if (gemma3) {
    const GgufTensor& projection = tensor("mm.input_projection.weight");
    if (projection.shape.size() != 2 || projection.shape[1] != p.d_model) {
      m.fail(projection.name, "'" + projection.name + "' must be [text width, " + group_digits(p.d_model) + "]");
    }
    p.text_width = projection.shape[0];
    p.projection_bytes = projection.bytes;
  } else {
    // The merger's second layer gives the text width; a layer with a deepstack merger has
    // v.deepstack.N.* tensors (clip.cpp finds them so). llama.cpp warms up on 46 x 46 tokens
    // and takes images of up to 4,096 (set_limit_image_tokens, set_warmup_n_tokens).
    const GgufTensor& merger = tensor("mm.2.weight");
    if (merger.shape.size() != 2 || merger.shape[0] != 4 * p.d_model) {
      m.fail(merger.name, "'" + merger.name + "' must be [" + group_digits(4 * p.d_model) + ", text width]");
    }
    p.text_width = merger.shape[1];
    for (std::uint64_t il = 0; il < p.n_layers; ++il)
      p.deepstack.push_back(m.has("v.deepstack." + std::to_string(il) + ".norm.weight"));
    // Qwen2.5-VL attends in windows in every layer but each n_wa_pattern-th (clip.cpp requires
    // the key), through a SiLU-gated MLP, the graph recorded.
    if (qwen2_5) {
      p.window_pattern = m.required(v + "n_wa_pattern", 0);
      tensor("v.blk.0.ffn_gate.weight");
    } else if (*type == "qwen2vl_merger" && m.has("v.blk.0.ffn_gate.weight")) {
      // The old surgery script wrote Qwen2.5-VL's tower as qwen2vl_merger (clip.use_glu_mlp):
      // llama.cpp runs it without its windows, a graph not recorded.
      m.fail("v.blk.0.ffn_gate.weight",
             "a gated MLP in a 'qwen2vl_merger' tower: a Qwen2.5-VL tower in the old surgery script's format, "
             "whose graph memplan has not recorded; convert it again with llama.cpp's convert_hf_to_gguf.py "
             "--mmproj ('qwen2.5vl_merger')");
    }
    p.warmup_tokens = std::uint64_t{46} * 46;
    p.max_tokens = 4096;
  }
  for (const GgufTensor& t : f.tensors) p.tensors.push_back(t.bytes);
  return p;
}

LlamaCppProjector load_gguf_projector(const std::string& path) { return gguf_projector(read_gguf(path)); }

}  // namespace memplan
