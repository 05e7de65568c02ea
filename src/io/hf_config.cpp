// Hugging Face config.json -> ModelSpec. Each model_type's keys and defaults follow its
// transformers configuration class (LlamaConfig, GPT2Config, FalconConfig, ...): a key a
// config leaves out takes the class's default, as transformers itself would, and the
// import says so in a note.
#include "memplan/io/hf_config.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "hf_quantization.hpp"
#include "json_fields.hpp"
#include "memplan/core/bytes.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/text.hpp"
#include "text_file.hpp"

namespace memplan {

namespace {

struct FamilyInfo {
  std::string_view model_type;
  Family family;
  bool tied_by_default;   // the class default of tie_word_embeddings
  std::uint64_t context;  // the class default of max_position_embeddings
  bool reads_head_dim;    // the modeling code honours a head_dim key
  bool reads_kv_heads;    // ... a num_key_value_heads key
};

// Sorted by model_type. Defaults as in transformers' configuration_<model>.py.
constexpr FamilyInfo kFamilies[] = {
    {"bamba", Family::bamba, false, 262144, false, true},
    {"bart", Family::bart, true, 1024, false, false},
    {"bert", Family::bert, false, 512, false, false},
    {"bloom", Family::bloom, true, 2048, false, false},
    {"cohere", Family::cohere, true, 8192, false, true},
    {"cohere2", Family::cohere, true, 8192, true, true},
    {"deepseek_v2", Family::deepseek, false, 2048, false, true},
    {"deepseek_v3", Family::deepseek, false, 4096, false, true},
    {"falcon", Family::falcon, true, 2048, false, false},
    {"falcon_h1", Family::falcon_h1, false, 8192, true, true},
    {"gemma", Family::gemma, true, 8192, true, true},
    {"gemma2", Family::gemma2, true, 8192, true, true},
    {"gemma3", Family::gemma3, true, 131072, true, true},  // its text_config and a SigLIP tower
    {"gemma3_text", Family::gemma3, true, 131072, true, true},
    {"gemma4", Family::gemma3, true, 131072, true, true},  // its text_config (gemma4_text) and Gemma 4's tower
    {"gemma4_text", Family::gemma3, true, 131072, true, true},
    {"gpt2", Family::gpt2, true, 1024, false, false},
    {"gpt_bigcode", Family::gpt_bigcode, true, 1024, false, false},
    {"gpt_neo", Family::gpt_neo, true, 2048, false, false},
    {"gpt_neox", Family::gpt_neox, false, 2048, false, false},
    {"gpt_oss", Family::gpt_oss, false, 131072, true, true},
    {"gptj", Family::gptj, false, 2048, false, false},
    {"granite", Family::granite, false, 2048, false, true},
    {"granitemoe", Family::granitemoe, false, 2048, false, true},
    {"granitemoehybrid", Family::bamba, false, 4096, false, true},  // Granite 4.0: memplan's bamba, or granite
    {"idefics3", Family::llama, false, 2048, true, true},  // its text_config (llama) and a SigLIP tower in tiles
    {"jamba", Family::jamba, false, 262144, false, true},
    {"llama", Family::llama, false, 2048, true, true},
    {"llama4", Family::llama4, false, 4096ULL * 32, true, true},  // its text_config (llama4_text)
    {"llama4_text", Family::llama4, false, 4096ULL * 32, true, true},
    {"llava", Family::llama, false, 2048, true, true},         // its text_config, when a llama, and a CLIP tower
    {"llava_next", Family::llama, false, 2048, true, true},    // its text_config (llama, mistral) and a CLIP tower
    {"mamba", Family::mamba, true, 1ULL << 20, false, false},  // context: no limit; memplan's planning limit
    {"mamba2", Family::mamba2, false, 1ULL << 20, false, false},
    {"mistral", Family::mistral, false, 4096ULL * 32, true, true},
    {"mixtral", Family::mixtral, false, 4096ULL * 32, true, true},
    {"nemotron_h", Family::nemotron_h, false, 4096, true, true},
    {"olmo2", Family::olmo2, false, 2048, false, true},
    {"olmoe", Family::olmoe, false, 4096, false, true},
    {"opt", Family::opt, true, 2048, false, false},
    {"paligemma", Family::gemma, true, 8192, true, true},  // its text_config (gemma, gemma2) and a SigLIP tower
    {"phi", Family::phi, false, 2048, false, true},
    {"phi3", Family::phi3, false, 4096, true, true},
    {"phimoe", Family::phimoe, false, 4096ULL * 32, false, true},
    {"qwen2", Family::qwen2, false, 32768, true, true},
    {"qwen2_5_vl", Family::qwen2, false, 128000, true, true},  // a qwen2 language model and Qwen2.5-VL's tower
    {"qwen2_vl", Family::qwen2, false, 32768, true, true},     // a qwen2 language model and Qwen2-VL's tower
    {"qwen3", Family::qwen3, false, 32768, true, true},
    {"qwen3_5", Family::qwen3_next, false, 32768, true, true},  // its text_config (qwen3_5_text) and a ViT
    {"qwen3_5_moe", Family::qwen3_next, false, 32768, true, true},
    {"qwen3_5_moe_text", Family::qwen3_next, false, 32768, true, true},
    {"qwen3_5_text", Family::qwen3_next, false, 32768, true, true},
    {"qwen3_moe", Family::qwen3_moe, false, 32768, true, true},
    {"qwen3_next", Family::qwen3_next, false, 32768, true, true},
    {"qwen3_vl", Family::qwen3, false, 128000, true, true},  // its text_config (qwen3_vl_text) and a ViT
    {"qwen3_vl_moe", Family::qwen3_moe, false, 128000, true, true},
    {"stablelm", Family::stablelm, false, 4096, false, true},
    {"starcoder2", Family::starcoder2, true, 4096, false, true},
    {"t5", Family::t5, true, 512, false, false},  // context: n_positions, the length it was trained at
    {"whisper", Family::whisper, true, 448, false, false},
    {"zamba2", Family::zamba2, true, 4096, false, true},
};

// The defaults of a text_config's class (transformers' configuration_<model>.py), for the
// vision-language configs that nest one and leave keys out.
struct TextConfigDefaults {
  std::string_view model_type;
  std::string_view config_class;
  std::uint64_t hidden_size, layers, heads, kv_heads, intermediate_size, vocab_size;  // kv_heads 0: as heads
};
constexpr TextConfigDefaults kTextConfigDefaults[] = {
    {"gemma", "GemmaConfig", 3072, 28, 16, 16, 24576, 256000},
    {"gemma3_text", "Gemma3TextConfig", 2304, 26, 8, 4, 9216, 262208},
    {"llama", "LlamaConfig", 4096, 32, 32, 0, 11008, 32000},
    {"mistral", "MistralConfig", 4096, 32, 32, 8, 14336, 32000},
};

const TextConfigDefaults* text_config_defaults(std::string_view model_type) {
  for (const TextConfigDefaults& d : kTextConfigDefaults) {
    if (d.model_type == model_type) return &d;
  }
  return nullptr;
}

// Reads sizes under their Hugging Face names (and old aliases: GPT-2's n_embd), and
// remembers which key fed each spec field so that validate()'s complaints point at it.
class Fields {
 public:
  Fields(const detail::JsonMap& map, std::vector<std::string>& notes) : map_(map), notes_(notes) {}

  // Returns the value of the first of `keys` present; two aliases with different values
  // are an error. `field` is the spec field it fills.
  std::optional<std::uint64_t> optional(const std::string& field, const std::vector<std::string>& keys,
                                        std::uint64_t min = 1) {
    std::optional<std::uint64_t> out;
    std::string source_key;
    for (const std::string& key : keys) {
      if (!map_.has(key)) continue;
      const std::uint64_t v = map_.integer(key, min, detail::kMaxConfigSize);
      if (out && *out != v) {
        map_.fail(key, "'" + key + "' is " + std::to_string(v) + " but '" + source_key + "' is " +
                           std::to_string(*out) + ": they name the same size");
      }
      if (!out) {
        out = v;
        source_key = key;
      }
    }
    if (out) origin_[field] = source_key;
    return out;
  }

  std::uint64_t required(const std::string& field, const std::vector<std::string>& keys) {
    if (std::optional<std::uint64_t> v = optional(field, keys)) return *v;
    for (const std::string& key : keys) {
      if (map_.contains(key)) map_.value(key);  // a null: throws "'key' must be set, not null"
    }
    if (const auto d = class_defaults_.find(keys.front()); d != class_defaults_.end()) {
      note(keys.front() + " is not set: " + std::to_string(d->second) + ", the default of " + defaults_of_);
      return d->second;
    }
    map_.fail(keys.front(), "missing required key '" + keys.front() + "' in " + map_.what());
  }

  // Returns the value of `key`, or `fallback` (the config class's default) with a note.
  std::uint64_t or_default(const std::string& field, const std::string& key, std::uint64_t fallback) {
    if (std::optional<std::uint64_t> v = optional(field, {key})) return *v;
    note(key + " is not set: " + std::to_string(fallback) + ", the class default");
    return fallback;
  }

  // Returns the class default of `key` (with a note), if class_defaults gave one.
  std::optional<std::uint64_t> class_default(const std::string& key) {
    const auto d = class_defaults_.find(key);
    if (d == class_defaults_.end()) return std::nullopt;
    note(key + " is not set: " + std::to_string(d->second) + ", the default of " + defaults_of_);
    return d->second;
  }

  // Sizes a nested config may leave to its class (LLaVA's text_config to LlamaConfig): a key
  // `required` does not find takes its default here, with a note.
  void class_defaults(std::map<std::string, std::uint64_t> defaults, std::string of) {
    class_defaults_ = std::move(defaults);
    defaults_of_ = std::move(of);
  }

  // Records that `field` was derived from `key` (for error positions).
  void from(const std::string& field, const std::string& key) { origin_[field] = key; }

  void note(std::string text) { notes_.push_back(std::move(text)); }

  // Rethrows validate()'s error at the key the offending field came from.
  [[noreturn]] void fail_field(const Error& e) const {
    const auto it = origin_.find(e.key());
    map_.fail(it != origin_.end() ? it->second : e.key(), e.what());
  }

 private:
  const detail::JsonMap& map_;
  std::vector<std::string>& notes_;
  std::map<std::string, std::string> origin_;
  std::map<std::string, std::uint64_t> class_defaults_;
  std::string defaults_of_;
};

// A config's layer_types entry as memplan's attention kind (transformers' spellings).
// linear_attention is a gated DeltaNet layer, read where the model has them (`linear`).
AttentionKind layer_type(const detail::JsonMap& map, const nlohmann::json& entry, bool linear) {
  const std::string text = entry.is_string() ? entry.get<std::string>() : std::string();
  if (text == "full_attention") return AttentionKind::full;
  if (text == "sliding_attention") return AttentionKind::sliding;
  if (text == "chunked_attention") return AttentionKind::chunked;
  if (linear && text == "linear_attention") return AttentionKind::mamba;
  map.fail("layer_types",
           "layer_types holds '" + printable(entry.is_string() ? text : entry.dump()) +
               "': memplan reads full_attention, sliding_attention, chunked_attention" +
               (linear ? " and linear_attention" : " and, for Qwen3-Next and Qwen3.5, linear_attention"));
}

// Replaces s.layer_types by the compact pattern (global_every, global_attention) when that
// says the same: written model files stay short.
void compact_layer_types(ModelSpec& s) {
  const std::vector<AttentionKind> types = s.layer_types;
  // The pattern's other layers are sliding or chunked: a state-space layer keeps the list.
  if (std::find(types.begin(), types.end(), AttentionKind::mamba) != types.end()) return;
  for (const AttentionKind global : {AttentionKind::full, AttentionKind::nope}) {
    for (const std::uint64_t every : {0ULL, 2ULL, 3ULL, 4ULL, 5ULL, 6ULL, 8ULL}) {
      s.layer_types.clear();
      s.global_every = every;
      s.global_attention = global;
      bool same = true;
      for (std::size_t i = 0; i < types.size() && same; ++i) same = attention_kind(s, i) == types[i];
      if (same) return;
    }
  }
  s.global_every = 0;
  s.global_attention = AttentionKind::full;
  s.layer_types = types;
}

// Reads layer_types when the config has it; returns whether it did.
bool read_layer_types(const detail::JsonMap& map, ModelSpec& s) {
  if (!map.has("layer_types")) return false;
  const nlohmann::json& list = map.value("layer_types");
  if (!list.is_array() || list.size() != s.n_layers) {
    map.fail("layer_types", "layer_types must list one entry per layer (" + std::to_string(s.n_layers) + ")");
  }
  for (const nlohmann::json& e : list) s.layer_types.push_back(layer_type(map, e, s.ssm.version == 3));
  compact_layer_types(s);
  return true;
}

// Experts read from `experts_key` and `top_k_key`; `width_key` the expert's size when it is
// not intermediate_size.
void read_experts(Fields& f, ModelSpec& s, const char* experts_key, const char* top_k_key,
                  const char* width_key = nullptr) {
  s.experts = f.required("experts", {experts_key});
  s.experts_per_token = f.required("experts_per_token", {top_k_key});
  if (width_key != nullptr) s.d_expert = f.required("d_expert", {width_key});
}

// The state-space sizes of a Mamba (version 1) or Mamba-2 (2) mixer, under the keys of
// MambaConfig / Mamba2Config, or a hybrid's (Bamba, Jamba: mamba_d_state, ...). A key left
// out takes the class default, and the import says so.
void read_ssm_sizes(const detail::JsonMap& map, Fields& f, ModelSpec& s, std::uint64_t version) {
  const bool hybrid = s.family == Family::bamba || s.family == Family::jamba;  // mamba_-prefixed keys
  SsmSizes& m = s.ssm;
  m.version = version;
  m.d_state = f.or_default("ssm_d_state", hybrid ? "mamba_d_state" : "state_size",
                           version == 1 ? 16
                           : hybrid     ? 256
                                        : 128);
  m.d_conv = f.or_default("ssm_d_conv", hybrid ? "mamba_d_conv" : "conv_kernel", 4);
  const std::uint64_t expand = f.or_default("ssm_d_inner", hybrid ? "mamba_expand" : "expand", 2);
  m.d_inner = checked_mul(expand, s.d_model, "expand x hidden_size");
  m.conv_bias = map.boolean_or(hybrid ? "mamba_conv_bias" : "use_conv_bias", true);
  m.proj_bias = m.out_proj_bias = map.boolean_or(hybrid ? "mamba_proj_bias" : "use_bias", false);
  if (version == 1) {
    // time_step_rank "auto" is ceil(hidden_size / 16) (MambaConfig).
    const char* key = hybrid ? "mamba_dt_rank" : "time_step_rank";
    if (map.has(key) && map.value(key).is_string()) {
      if (map.value(key).get<std::string>() != "auto") map.fail(key, std::string(key) + " must be \"auto\" or a size");
      m.dt_rank = ceil_div(s.d_model, 16);
      f.from("ssm_dt_rank", key);
    } else {
      m.dt_rank = f.optional("ssm_dt_rank", {key}).value_or(ceil_div(s.d_model, 16));
    }
    // A hybrid's intermediate_size is its MLP's; a Mamba's is the mixer's inner width.
    if (std::optional<std::uint64_t> inner = hybrid ? std::nullopt : f.optional("ssm_d_inner", {"intermediate_size"});
        inner && *inner != m.d_inner) {
      map.fail("intermediate_size", "intermediate_size " + std::to_string(*inner) + " is not expand x hidden_size (" +
                                        std::to_string(m.d_inner) + "), which MambaMixer uses");
    }
    return;
  }
  m.heads = f.or_default("ssm_heads", hybrid ? "mamba_n_heads" : "num_heads", 128);
  m.groups = f.or_default("ssm_groups", hybrid ? "mamba_n_groups" : "n_groups", hybrid ? 1 : 8);
  m.chunk = f.or_default("ssm_chunk", hybrid ? "mamba_chunk_size" : "chunk_size", 256);
  const char* head_key = hybrid ? "mamba_d_head" : "head_dim";
  if (map.has(head_key) && !(hybrid && map.value(head_key).is_string() && map.value(head_key) == "auto")) {
    const std::uint64_t head = map.integer(head_key, 1, detail::kMaxConfigSize);
    if (checked_mul(head, m.heads, "heads x head_dim") != m.d_inner) {
      map.fail(head_key, std::string(head_key) + " " + std::to_string(head) + " x " + std::to_string(m.heads) +
                             " heads is not the inner width expand x hidden_size (" + std::to_string(m.d_inner) + ")");
    }
  }
}

// Rotary embeddings on part of each head: int(d_head x fraction) rotated dimensions, as
// transformers and vLLM size their rotary tables; `fallback` is the class default.
void set_rotary_dim(ModelSpec& s, std::uint64_t width) { s.rotary_dim = width == s.d_head ? 0 : width; }

void read_rotary_fraction(const detail::JsonMap& map, Fields& f, ModelSpec& s, const std::string& key,
                          double fallback) {
  const double fraction = map.has(key) ? map.number(key, 0, 1) : fallback;
  set_rotary_dim(s, static_cast<std::uint64_t>(static_cast<double>(s.d_head) * fraction));
  if (map.has(key)) {
    f.from("rotary_dim", key);
  } else {
    f.note(key + " is not set: " + nlohmann::json(fallback).dump() + ", the class default");
  }
}

// The families whose layers differ, or whose blocks add norms, experts or latent attention.
// GraniteMoeHybridConfig (Granite 4.0): layer_types "mamba" (a Mamba-2 mixer) or "attention" in each
// layer; after every mixer the shared MLP (shared_intermediate_size) and, with num_local_experts,
// routed experts of intermediate_size beside it (a shared expert without a gate); the hybrids'
// attention has no rotary (position_embedding_type "nope"). A model of attention layers alone
// (Granite 4.0 Micro, 1B, 350M) is Granite's transformer with RoPE; its mamba_* keys are unused.
void read_granite_hybrid(const detail::JsonMap& map, Fields& f, ModelSpec& s) {
  const nlohmann::json& list = map.value("layer_types");
  if (!list.is_array() || list.size() != s.n_layers) {
    map.fail("layer_types", "layer_types must list one entry per layer (" + std::to_string(s.n_layers) + ")");
  }
  s.layer_types.clear();
  for (const nlohmann::json& e : list) {
    const std::string kind = e.is_string() ? e.get<std::string>() : std::string();
    if (kind != "mamba" && kind != "attention") {
      map.fail("layer_types", "layer_types holds 'mamba' and 'attention', not " + printable(e.dump()));
    }
    s.layer_types.push_back(kind == "mamba" ? AttentionKind::mamba : AttentionKind::full);
  }
  s.attn_qkv_bias = s.attn_out_bias = map.boolean_or("attention_bias", false);
  s.d_mlp = f.required("d_mlp", {"shared_intermediate_size"});
  if (const std::uint64_t experts = f.optional("experts", {"num_local_experts"}, 0).value_or(0); experts > 0) {
    s.experts = experts;
    s.experts_per_token = f.required("experts_per_token", {"num_experts_per_tok"});
    s.d_expert = f.required("d_expert", {"intermediate_size"});
    s.d_shared_expert = s.d_mlp;
    f.from("d_shared_expert", "shared_intermediate_size");
  }
  const bool rope = map.optional_string("position_embedding_type").value_or("") == "rope";
  s.positional = rope ? Positional::rotary : Positional::none;
  if (std::none_of(s.layer_types.begin(), s.layer_types.end(),
                   [](AttentionKind k) { return k == AttentionKind::mamba; })) {
    s.family = Family::granite;
    s.layer_types.clear();
    return;
  }
  read_ssm_sizes(map, f, s, 2);
}

// Gemma 4's text model (Gemma4TextConfig): Gemma 3's blocks with the full-attention layers' own
// heads (num_global_key_value_heads of global_head_dim; attention_k_eq_v: no v_proj there), a
// learned scalar per layer and, with enable_moe_block, routed experts beside every layer's MLP.
void read_gemma4_text(const detail::JsonMap& map, Fields& f, ModelSpec& s) {
  // E2B and E4B: per-layer input embeddings, the last layers reading an earlier layer's cache,
  // and (E2B) those layers' MLPs twice as wide.
  s.per_layer_input = map.optional_integer("hidden_size_per_layer_input", 0, detail::kMaxConfigSize).value_or(0);
  if (s.per_layer_input != 0 &&
      map.optional_integer("vocab_size_per_layer_input", 1, detail::kMaxConfigSize).value_or(s.vocab_size) !=
          s.vocab_size) {
    map.fail("vocab_size_per_layer_input",
             "memplan reads per-layer input embeddings of the token embedding's rows (vocab_size)");
  }
  s.kv_shared_layers = map.optional_integer("num_kv_shared_layers", 0, detail::kMaxConfigSize).value_or(0);
  s.double_wide_mlp = s.kv_shared_layers != 0 && map.boolean_or("use_double_wide_mlp", false);
  s.global_d_head = f.optional("global_d_head", {"global_head_dim"}).value_or(0);
  s.global_kv_heads = f.optional("global_kv_heads", {"num_global_key_value_heads"}).value_or(0);
  s.global_k_eq_v = map.boolean_or("attention_k_eq_v", false);
  f.from("global_k_eq_v", "attention_k_eq_v");
  s.layer_scalar = true;
  if (map.boolean_or("enable_moe_block", false)) {
    // Gemma4TextDecoderLayer: the dense MLP (intermediate_size) beside the experts, each with
    // its own pre and post norms, and a router with a scale on its input and one per expert.
    read_experts(f, s, "num_experts", "top_k_experts");
    s.d_expert = f.required("d_expert", {"moe_intermediate_size", "expert_intermediate_size"});
    s.d_shared_expert = s.d_mlp;
    f.from("d_shared_expert", "intermediate_size");
    s.router_scales = true;
    s.moe_norms = 3;
  }
}

void import_recent_family(const detail::JsonMap& map, Fields& f, ModelSpec& s, const std::string& type) {
  const auto window = [&](std::uint64_t fallback) {
    s.sliding_window = f.optional("sliding_window", {"sliding_window"}).value_or(fallback);
  };
  switch (s.family) {
    case Family::qwen3:
    case Family::qwen3_moe:
      s.attn_qkv_bias = s.attn_out_bias = map.boolean_or("attention_bias", false);
      if (map.boolean_or("use_sliding_window", false)) {
        map.fail("use_sliding_window",
                 "use_sliding_window with max_window_layers (sliding attention on some "
                 "layers only) is not something memplan reads for Qwen3 yet");
      }
      if (s.family == Family::qwen3_moe) {
        read_experts(f, s, "num_experts", "num_experts_per_tok", "moe_intermediate_size");
        s.moe_every = map.optional_integer("decoder_sparse_step", 1, detail::kMaxConfigSize).value_or(1);
        if (map.has("mlp_only_layers") && !map.value("mlp_only_layers").empty()) {
          map.fail("mlp_only_layers",
                   "mlp_only_layers (dense MLPs on listed layers) is not something memplan's "
                   "layer description holds; it has first_dense_layers and moe_every");
        }
      }
      break;
    case Family::gemma2:
    case Family::gemma3: {
      s.attn_qkv_bias = s.attn_out_bias = map.boolean_or("attention_bias", false);
      window(4096);
      if (!read_layer_types(map, s)) {
        // Gemma 2: layer i is local when i is even; Gemma 3: global when (i + 1) % pattern == 0.
        s.global_every = s.family == Family::gemma2
                             ? 2
                             : map.optional_integer("sliding_window_pattern", 1, detail::kMaxConfigSize).value_or(6);
        f.from("global_every", s.family == Family::gemma2 ? "sliding_window" : "sliding_window_pattern");
      }
      if (map.has("attn_logit_softcapping")) {
        f.note("attn_logit_softcapping: a tanh on the attention scores, priced as the attention kernel's");
      }
      s.final_logit_softcapping = map.has("final_logit_softcapping") &&
                                  map.number("final_logit_softcapping", 0, 1e6) > 0;
      if (type == "gemma4_text") read_gemma4_text(map, f, s);
      break;
    }
    case Family::deepseek: {
      MlaSizes& m = s.mla;
      m.q_lora_rank = map.optional_integer("q_lora_rank", 1, detail::kMaxConfigSize).value_or(0);
      m.kv_lora_rank = f.required("kv_lora_rank", {"kv_lora_rank"});
      m.qk_nope_head_dim = f.required("qk_nope_head_dim", {"qk_nope_head_dim"});
      m.qk_rope_head_dim = f.required("qk_rope_head_dim", {"qk_rope_head_dim"});
      m.v_head_dim = f.required("v_head_dim", {"v_head_dim"});
      s.d_head = checked_add(m.qk_nope_head_dim, m.qk_rope_head_dim, "qk_nope_head_dim + qk_rope_head_dim");
      f.from("d_head", "qk_nope_head_dim");
      s.n_kv_heads = s.n_heads;  // keys and values are decompressed for every head
      s.attn_qkv_bias = s.attn_out_bias = map.boolean_or("attention_bias", false);
      read_experts(f, s, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size");
      s.d_shared_expert = checked_mul(map.optional_integer("n_shared_experts", 0, detail::kMaxConfigSize).value_or(0),
                                      s.d_expert, "n_shared_experts x moe_intermediate_size");
      f.from("d_shared_expert", "n_shared_experts");
      s.first_dense_layers = map.optional_integer("first_k_dense_replace", 0, detail::kMaxConfigSize).value_or(0);
      f.from("first_dense_layers", "first_k_dense_replace");
      s.moe_every = map.optional_integer("moe_layer_freq", 1, detail::kMaxConfigSize).value_or(1);
      f.from("moe_every", "moe_layer_freq");
      // V3's router keeps a score-correction bias per expert (topk_method noaux_tc).
      s.router_bias = map.optional_string("topk_method").value_or(type == "deepseek_v3" ? "noaux_tc" : "greedy") ==
                      "noaux_tc";
      s.mtp_layers = map.optional_integer("num_nextn_predict_layers", 0, detail::kMaxConfigSize).value_or(0);
      if (s.mtp_layers > 0) {
        f.note("num_nextn_predict_layers " + std::to_string(s.mtp_layers) +
               ": the checkpoint adds multi-token-prediction layers that transformers and vLLM do not load by "
               "default; they are not counted");
      }
      break;
    }
    case Family::gpt_oss:
      s.attn_qkv_bias = s.attn_out_bias = map.boolean_or("attention_bias", true);
      read_experts(f, s, "num_local_experts", "num_experts_per_tok");
      window(128);
      if (!read_layer_types(map, s)) s.global_every = 2;
      break;
    case Family::llama4: {
      s.attn_qkv_bias = s.attn_out_bias = map.boolean_or("attention_bias", false);
      read_experts(f, s, "num_local_experts", "num_experts_per_tok", "intermediate_size");
      s.d_shared_expert = s.d_expert;  // one shared expert of the experts' size
      f.from("d_shared_expert", "intermediate_size");
      s.moe_every = map.optional_integer("interleave_moe_layer_step", 1, detail::kMaxConfigSize).value_or(1);
      f.from("moe_every", "interleave_moe_layer_step");
      s.attention_chunk = f.optional("attention_chunk", {"attention_chunk_size"}).value_or(0);
      // no_rope_layers: 1 where a layer uses rotary embeddings; the others are global NoPE layers.
      if (map.has("no_rope_layers") && map.value("no_rope_layers").is_array() && !map.value("no_rope_layers").empty()) {
        const nlohmann::json& rope = map.value("no_rope_layers");
        if (rope.size() != s.n_layers) map.fail("no_rope_layers", "no_rope_layers must list one entry per layer");
        for (const nlohmann::json& e : rope) {
          if (!e.is_number_integer()) map.fail("no_rope_layers", "no_rope_layers must hold 0 and 1");
          const bool uses_rope = e.get<std::int64_t>() != 0;
          s.layer_types.push_back(!uses_rope               ? AttentionKind::nope
                                  : s.attention_chunk != 0 ? AttentionKind::chunked
                                                           : AttentionKind::full);
        }
        compact_layer_types(s);
      } else if (s.attention_chunk != 0) {
        s.global_every = 4;  // Llama4TextConfig: every 4th layer is NoPE and global
        s.global_attention = AttentionKind::nope;
      }
      if (map.boolean_or("use_qk_norm", false)) f.note("use_qk_norm: an L2 norm without weights, no parameters");
      break;
    }
    case Family::olmo2:
    case Family::olmoe:
      s.attn_qkv_bias = s.attn_out_bias = map.boolean_or("attention_bias", false);
      if (s.family == Family::olmoe) read_experts(f, s, "num_experts", "num_experts_per_tok");
      break;
    case Family::phimoe:
      s.attn_qkv_bias = s.attn_out_bias = map.boolean_or("attention_bias", false);
      s.lm_head_bias = map.boolean_or("lm_head_bias", false);
      read_experts(f, s, "num_local_experts", "num_experts_per_tok");
      window(0);
      break;
    case Family::granite:
    case Family::granitemoe:
      s.attn_qkv_bias = s.attn_out_bias = map.boolean_or("attention_bias", false);
      s.mlp_bias = s.family == Family::granite && map.boolean_or("mlp_bias", false);
      if (s.family == Family::granitemoe) read_experts(f, s, "num_local_experts", "num_experts_per_tok");
      f.note("Granite's embedding, residual, attention and logit multipliers scale values, no memory");
      break;
    case Family::cohere:
      s.attn_qkv_bias = s.attn_out_bias = map.boolean_or("attention_bias", false);
      if (map.boolean_or("use_qk_norm", false)) s.qk_norm = QkNorm::width;
      if (type == "cohere2") {
        window(4096);
        if (!read_layer_types(map, s)) {
          s.global_every = map.optional_integer("sliding_window_pattern", 1, detail::kMaxConfigSize).value_or(4);
        }
        s.global_attention = AttentionKind::nope;  // Cohere2's global layers have no rotary embeddings
      }
      f.note("CohereLayerNorm has a weight and no bias: priced as one vector per norm");
      break;
    case Family::starcoder2:
      s.attn_qkv_bias = s.attn_out_bias = s.mlp_bias = map.boolean_or("use_bias", true);
      window(0);
      break;
    case Family::gpt_bigcode:
      if (!map.boolean_or("scale_attn_weights", true)) f.note("scale_attn_weights false: no memory");
      break;
    case Family::gptj:
      if (std::optional<std::uint64_t> rotary = f.optional("rotary_dim", {"rotary_dim"})) {
        set_rotary_dim(s, *rotary);
      }
      break;
    case Family::gpt_neo: {
      // attention_layers (written from attention_types [[["global", "local"], 12]]): global
      // layers see every token, local ones the last window_size.
      if (!map.has("attention_layers")) break;
      const nlohmann::json& layers = map.value("attention_layers");
      if (!layers.is_array() || layers.size() != s.n_layers) {
        map.fail("attention_layers",
                 "attention_layers must list one entry per layer (" + std::to_string(s.n_layers) + ")");
      }
      for (const nlohmann::json& e : layers) {
        const std::string kind = e.is_string() ? e.get<std::string>() : std::string();
        if (kind != "global" && kind != "local") {
          map.fail("attention_layers", "attention_layers holds 'global' and 'local', not " + printable(e.dump()));
        }
        s.layer_types.push_back(kind == "local" ? AttentionKind::sliding : AttentionKind::full);
      }
      s.sliding_window = f.optional("sliding_window", {"window_size"}).value_or(256);
      break;
    }
    case Family::bamba: {
      if (type == "granitemoehybrid") {
        read_granite_hybrid(map, f, s);
        break;
      }
      // Mamba-2 mixers everywhere but the layers attn_layer_indices lists, which have attention.
      read_ssm_sizes(map, f, s, 2);
      s.layer_types.assign(s.n_layers, AttentionKind::mamba);
      if (map.has("attn_layer_indices")) {
        const nlohmann::json& list = map.value("attn_layer_indices");
        if (!list.is_array()) map.fail("attn_layer_indices", "attn_layer_indices must be a list of layer numbers");
        for (const nlohmann::json& e : list) {
          if (!e.is_number_unsigned() || e.get<std::uint64_t>() >= s.n_layers) {
            map.fail("attn_layer_indices", "attn_layer_indices holds " + printable(e.dump()) +
                                               ": each entry must be a layer number below " +
                                               std::to_string(s.n_layers));
          }
          s.layer_types[e.get<std::size_t>()] = AttentionKind::full;
        }
      }
      s.attn_qkv_bias = s.attn_out_bias = map.boolean_or("attention_bias", false);
      s.mlp_bias = map.boolean_or("mlp_bias", false);
      break;
    }
    case Family::nemotron_h: {
      // NemotronHConfig: hybrid_override_pattern has a letter per layer, each layer one RMSNorm
      // and one of: M a Mamba-2 mixer of mamba_num_heads x mamba_head_dim, * attention (no
      // rotary), - a ReLU² MLP. The checkpoints' remote code names the head attention_head_dim.
      if (std::optional<std::uint64_t> head = f.optional("d_head", {"attention_head_dim"})) s.d_head = *head;
      SsmSizes& m = s.ssm;
      m.version = 2;
      m.heads = f.or_default("ssm_heads", "mamba_num_heads", 128);
      m.d_inner = checked_mul(m.heads, f.or_default("ssm_d_inner", "mamba_head_dim", 64),
                              "mamba_num_heads x mamba_head_dim");
      m.d_state = f.or_default("ssm_d_state", "ssm_state_size", 128);
      m.d_conv = f.or_default("ssm_d_conv", "conv_kernel", 4);
      m.groups = f.or_default("ssm_groups", "n_groups", 8);
      m.chunk = f.or_default("ssm_chunk", "chunk_size", 128);
      m.conv_bias = map.boolean_or("use_conv_bias", true);
      m.proj_bias = m.out_proj_bias = map.boolean_or("use_bias", false);
      if (m.heads % m.groups != 0) map.fail("n_groups", "n_groups must divide mamba_num_heads");
      const std::string pattern = map.has("hybrid_override_pattern") ? map.string("hybrid_override_pattern") : "";
      if (pattern.size() != s.n_layers) {
        map.fail(map.has("hybrid_override_pattern") ? "hybrid_override_pattern" : "num_hidden_layers",
                 "hybrid_override_pattern has a letter per layer (M, * or -): " + std::to_string(pattern.size()) +
                     " letters for " + std::to_string(s.n_layers) + " layers");
      }
      // Nemotron 3: E an MLP layer of routed experts (non-gated, as the MLP) beside a shared expert,
      // a sigmoid router with a score-correction bias per expert.
      s.layer_types.clear();
      for (const char c : pattern) {
        if (c == 'M') {
          s.layer_types.push_back(AttentionKind::mamba);
        } else if (c == '*') {
          s.layer_types.push_back(AttentionKind::full);
        } else if (c == '-' || c == 'E') {
          s.layer_types.push_back(AttentionKind::mlp);
        } else {
          map.fail("hybrid_override_pattern", std::string("hybrid_override_pattern letter '") +
                                                  printable(std::string(1, c)) +
                                                  "' is not M (Mamba-2), * (attention), - (MLP) or E (experts)");
        }
      }
      if (pattern.find('E') != std::string::npos) {
        if (pattern.find('-') != std::string::npos) {
          map.fail("hybrid_override_pattern",
                   "hybrid_override_pattern mixes - (dense MLP) and E (experts) layers, which memplan's layer "
                   "description cannot place; every released Nemotron 3 has E layers alone");
        }
        if (map.has("moe_latent_size") && !map.value("moe_latent_size").is_null()) {
          map.fail("moe_latent_size",
                   "moe_latent_size: experts run in a latent space (Nemotron 3 Super), which "
                   "memplan does not describe yet");
        }
        s.experts = f.required("experts", {"n_routed_experts"});
        s.experts_per_token = f.required("experts_per_token", {"num_experts_per_tok"});
        s.d_expert = f.required("d_expert", {"moe_intermediate_size"});
        s.d_shared_expert = checked_mul(f.required("d_shared_expert", {"moe_shared_expert_intermediate_size"}),
                                        map.optional_integer("n_shared_experts", 0, detail::kMaxConfigSize).value_or(1),
                                        "shared");
        s.router_bias = true;  // e_score_correction_bias
      }
      s.attn_qkv_bias = s.attn_out_bias = map.boolean_or("attention_bias", false);
      s.mlp_bias = map.boolean_or("mlp_bias", false);
      if (map.has("mlp_hidden_act")) s.activation = map.string("mlp_hidden_act");
      break;
    }
    case Family::falcon_h1: {
      // FalconH1Config: every decoder layer runs attention and a Mamba-2 mixer on the same
      // normed input and sums them, then an MLP. The mixer is mamba_d_ssm wide (else
      // mamba_expand x hidden_size), its gated RMSNorm only with mamba_rms_norm, in_proj's bias
      // mamba_proj_bias, out_proj's projectors_bias; attention_bias and mlp_bias are forced off.
      s.parallel_ssm = true;
      SsmSizes& m = s.ssm;
      m.version = 2;
      const bool width_given = map.has("mamba_d_ssm") && !map.value("mamba_d_ssm").is_null();
      m.d_inner = width_given ? f.or_default("ssm_d_inner", "mamba_d_ssm", 1024)
                              : checked_mul(f.or_default("ssm_d_inner", "mamba_expand", 2), s.d_model,
                                            "mamba_expand x hidden_size");
      m.heads = f.or_default("ssm_heads", "mamba_n_heads", 128);
      m.groups = f.or_default("ssm_groups", "mamba_n_groups", 1);
      m.d_state = f.or_default("ssm_d_state", "mamba_d_state", 256);
      m.d_conv = f.or_default("ssm_d_conv", "mamba_d_conv", 4);
      m.chunk = f.or_default("ssm_chunk", "mamba_chunk_size", 256);
      m.conv_bias = map.boolean_or("mamba_conv_bias", true);
      m.proj_bias = map.boolean_or("mamba_proj_bias", false);
      m.out_proj_bias = map.boolean_or("projectors_bias", false);
      m.gated_norm = map.boolean_or("mamba_rms_norm", false);
      if (map.has("mamba_d_head") && !(map.value("mamba_d_head").is_string() && map.value("mamba_d_head") == "auto")) {
        const std::uint64_t head = map.integer("mamba_d_head", 1, detail::kMaxConfigSize);
        if (checked_mul(head, m.heads, "mamba_n_heads x mamba_d_head") != m.d_inner) {
          map.fail("mamba_d_head", "mamba_d_head " + std::to_string(head) + " x " + std::to_string(m.heads) +
                                       " heads is not the mixer's width " + std::to_string(m.d_inner) +
                                       " (mamba_d_ssm)");
        }
      }
      if (m.heads % m.groups != 0) map.fail("mamba_n_groups", "mamba_n_groups must divide mamba_n_heads");
      s.attn_qkv_bias = s.attn_out_bias = s.mlp_bias = false;
      f.note("attention_bias and mlp_bias: FalconH1Config sets both false whatever the file says");
      break;
    }
    case Family::zamba2: {
      // Zamba2Config: every layer a Mamba-2 mixer (n_mamba_heads heads of mamba_headdim over
      // mamba_expand x hidden_size); the "hybrid" layers of layers_block_type also run one of
      // num_mem_blocks shared blocks (attention over 2 x hidden_size, attention_head_dim =
      // 2 x hidden_size / heads, a gated MLP) with their own linear and adapters.
      SsmSizes& m = s.ssm;
      m.version = 2;
      m.d_inner = checked_mul(f.or_default("ssm_d_inner", "mamba_expand", 2), s.d_model, "mamba_expand x hidden_size");
      m.heads = f.or_default("ssm_heads", "n_mamba_heads", 8);
      m.groups = f.or_default("ssm_groups", "mamba_ngroups", 1);
      m.d_state = f.or_default("ssm_d_state", "mamba_d_state", 64);
      m.d_conv = f.or_default("ssm_d_conv", "mamba_d_conv", 4);
      m.chunk = f.or_default("ssm_chunk", "chunk_size", 256);
      m.conv_bias = true;  // Zamba2MambaMixer's conv1d always has a bias, whatever use_conv_bias says
      m.proj_bias = m.out_proj_bias = s.mlp_bias = map.boolean_or("add_bias_linear", false);
      if (m.d_inner % m.heads != 0 || m.heads % m.groups != 0)
        map.fail("n_mamba_heads",
                 "n_mamba_heads must divide mamba_expand x hidden_size and mamba_ngroups must "
                 "divide n_mamba_heads");
      if (const std::optional<std::uint64_t> head = map.optional_integer("mamba_headdim", 1, detail::kMaxConfigSize);
          head && *head * m.heads != m.d_inner) {
        map.fail("mamba_headdim", "mamba_headdim " + std::to_string(*head) + " x " + std::to_string(m.heads) +
                                      " heads is not the mixer's width mamba_expand x hidden_size (" +
                                      std::to_string(m.d_inner) + ")");
      }
      const std::uint64_t width = checked_mul(2, s.d_model, "2 x hidden_size");
      if (const std::optional<std::uint64_t> a = map.optional_integer("attention_hidden_size", 1,
                                                                      detail::kMaxConfigSize);
          a && *a != width) {
        map.fail("attention_hidden_size", "attention_hidden_size " + std::to_string(*a) +
                                              ": Zamba2's shared blocks read the hidden state beside the embeddings, "
                                              "2 x hidden_size (" +
                                              std::to_string(width) + ")");
      }
      s.d_head = f.optional("d_head", {"attention_head_dim"}).value_or(width / s.n_heads);
      s.positional = map.boolean_or("use_mem_rope", false) ? Positional::rotary : Positional::none;
      s.layer_types.clear();
      if (map.has("layers_block_type")) {
        const nlohmann::json& kinds = map.value("layers_block_type");
        if (!kinds.is_array() || kinds.size() != s.n_layers)
          map.fail("layers_block_type",
                   "layers_block_type must list one entry per layer (" + std::to_string(s.n_layers) + ")");
        for (const nlohmann::json& e : kinds) {
          const std::string kind = e.is_string() ? e.get<std::string>() : std::string();
          if (kind != "mamba" && kind != "hybrid")
            map.fail("layers_block_type", "layers_block_type holds 'mamba' and 'hybrid', not " + printable(e.dump()));
          s.layer_types.push_back(kind == "hybrid" ? AttentionKind::full : AttentionKind::mamba);
        }
      } else if (map.has("hybrid_layer_ids") && map.value("hybrid_layer_ids").is_array()) {
        s.layer_types.assign(s.n_layers, AttentionKind::mamba);  // Zamba2Config derives one from the other
        for (const nlohmann::json& e : map.value("hybrid_layer_ids")) {
          if (!e.is_number_unsigned() || e.get<std::uint64_t>() >= s.n_layers)
            map.fail("hybrid_layer_ids", "hybrid_layer_ids holds " + printable(e.dump()) +
                                             ": each entry must be a layer number below " + std::to_string(s.n_layers));
          s.layer_types[e.get<std::size_t>()] = AttentionKind::full;
        }
      } else {
        map.fail("num_hidden_layers",
                 "a Zamba2 config needs layers_block_type (or hybrid_layer_ids), which says which layers use the "
                 "shared blocks (\"hybrid\") and which are Mamba-2 alone (\"mamba\")");
      }
      SharedBlocks& b = s.shared;
      b.blocks = f.or_default("shared_blocks", "num_mem_blocks", 1);
      b.adapter_rank = f.or_default("shared_adapter_rank", "adapter_rank", 128);
      b.mlp_adapters = true;  // Zamba2MLP has a gate_up adapter per use
      b.attention_adapters = map.boolean_or("use_shared_attention_adapter", false);
      if (b.blocks > attention_layers(s))
        map.fail("num_mem_blocks", "num_mem_blocks " + std::to_string(b.blocks) + " is more than the " +
                                       std::to_string(attention_layers(s)) + " hybrid layers that use the blocks");
      f.note(
          "the shared blocks are stored once and counted once; each hybrid layer adds its own linear and "
          "rank-" +
          std::to_string(b.adapter_rank) + " adapters, keys and values");
      break;
    }
    case Family::jamba: {
      // JambaConfig: layer i has attention when i % attn_layer_period == attn_layer_offset, a
      // Mamba mixer (with RMSNorms on dt, B and C) otherwise; experts when i %
      // expert_layer_period == expert_layer_offset, a dense MLP otherwise.
      read_ssm_sizes(map, f, s, 1);
      s.ssm.dt_bc_norms = true;
      const auto period = [&](const char* key, std::uint64_t fallback) {
        return map.optional_integer(key, 1, detail::kMaxConfigSize).value_or(fallback);
      };
      const std::uint64_t attn_period = period("attn_layer_period", 8);
      const std::uint64_t attn_offset = map.optional_integer("attn_layer_offset", 0, attn_period - 1).value_or(4);
      s.layer_types.assign(s.n_layers, AttentionKind::mamba);
      for (std::uint64_t i = attn_offset; i < s.n_layers; i += attn_period) s.layer_types[i] = AttentionKind::full;
      const std::uint64_t experts = f.optional("experts", {"num_experts"}).value_or(16);
      if (experts > 1) {
        s.experts = experts;
        s.experts_per_token = f.optional("experts_per_token", {"num_experts_per_tok"}).value_or(2);
        const std::uint64_t expert_period = period("expert_layer_period", 2);
        const std::uint64_t expert_offset =
            map.optional_integer("expert_layer_offset", 0, expert_period - 1).value_or(1);
        if (expert_offset + 1 != expert_period) {
          map.fail("expert_layer_offset",
                   "experts on layers i % " + std::to_string(expert_period) + " == " + std::to_string(expert_offset) +
                       ": memplan's layer description puts them where (i + 1) is a multiple of moe_every, so "
                       "expert_layer_offset must be expert_layer_period - 1");
        }
        s.moe_every = expert_period;
      }
      break;
    }
    case Family::qwen3_next: {
      // Qwen3NextConfig, Qwen3_5TextConfig: layer_types (or every full_attention_interval-th
      // layer) full attention with an output gate, the others gated DeltaNet.
      s.attn_qkv_bias = s.attn_out_bias = map.boolean_or("attention_bias", false);
      s.attn_output_gate = map.boolean_or("attn_output_gate", true);
      SsmSizes& m = s.ssm;
      m.version = 3;
      m.groups = f.required("ssm_groups", {"linear_num_key_heads"});
      m.heads = f.required("ssm_heads", {"linear_num_value_heads"});
      m.d_state = f.required("ssm_d_state", {"linear_key_head_dim"});
      m.d_inner = checked_mul(m.heads, f.required("ssm_d_inner", {"linear_value_head_dim"}),
                              "linear_num_value_heads x linear_value_head_dim");
      m.d_conv = f.required("ssm_d_conv", {"linear_conv_kernel_dim"});
      m.chunk = 64;  // chunk_gated_delta_rule's
      m.conv_bias = m.proj_bias = m.out_proj_bias = false;
      if (!read_layer_types(map, s)) {
        const std::uint64_t every =
            map.optional_integer("full_attention_interval", 1, detail::kMaxConfigSize).value_or(4);
        s.layer_types.assign(s.n_layers, AttentionKind::mamba);
        for (std::uint64_t i = every - 1; i < s.n_layers; i += every) s.layer_types[i] = AttentionKind::full;
      }
      // partial_rotary_factor, at the top or (newer configs) in rope_parameters.
      const bool nested_rope = !map.has("partial_rotary_factor") && map.has("rope_parameters") &&
                               map.value("rope_parameters").is_object() &&
                               map.value("rope_parameters").contains("partial_rotary_factor");
      if (nested_rope) {
        read_rotary_fraction(map.object("rope_parameters", "the rope_parameters"), f, s, "partial_rotary_factor", 0.25);
      } else {
        read_rotary_fraction(map, f, s, "partial_rotary_factor", 0.25);
      }
      if (f.optional("experts", {"num_experts"}).value_or(0) != 0) {
        read_experts(f, s, "num_experts", "num_experts_per_tok", "moe_intermediate_size");
        s.d_shared_expert = f.optional("d_shared_expert", {"shared_expert_intermediate_size"}).value_or(0);
        s.moe_every = map.optional_integer("decoder_sparse_step", 1, detail::kMaxConfigSize).value_or(1);
        if (map.has("mlp_only_layers") && !map.value("mlp_only_layers").empty()) {
          map.fail("mlp_only_layers",
                   "mlp_only_layers (dense MLPs on listed layers) is not something memplan's "
                   "layer description holds; it has first_dense_layers and moe_every");
        }
      }
      // The checkpoints add one multi-token-prediction layer, which transformers does not load.
      s.mtp_layers = map.optional_integer("mtp_num_hidden_layers", 0, detail::kMaxConfigSize)
                         .value_or(type == "qwen3_next" ? 1 : 0);
      if (s.mtp_layers > 0) {
        f.note(std::to_string(s.mtp_layers) +
               " multi-token-prediction layer (mtp.*) in the checkpoint, not counted: transformers "
               "does not load it, nor vLLM without a speculative config" +
               (map.has("mtp_num_hidden_layers") ? " (mtp_num_hidden_layers)" : " (Qwen3-Next's checkpoints)"));
      }
      break;
    }
    case Family::bloom: f.note("ALiBi positions: no position table"); break;
    case Family::stablelm:
      s.attn_qkv_bias = map.boolean_or("use_qkv_bias", false);
      s.parallel_block = map.boolean_or("use_parallel_residual", false);
      if (s.parallel_block) s.norms_per_layer = 1;
      if (map.boolean_or("qk_layernorm", false)) s.qk_norm = QkNorm::width;  // one LayerNorm per head
      read_rotary_fraction(map, f, s, "partial_rotary_factor", 0.25);        // StableLmConfig
      break;
    default: break;
  }
}

// A transformer's sizes, biases, norms, experts and windows under `info`'s keys.
void read_transformer(const detail::JsonMap& map, Fields& f, ModelSpec& s, const FamilyInfo& info) {
  const Family family = info.family;
  const std::string type(info.model_type);
  const bool gpt2 = family == Family::gpt2 || family == Family::gpt_bigcode || family == Family::gptj;
  const auto alias = [&](const char* name_hf, const char* name_gpt2) {
    return gpt2 ? std::vector<std::string>{name_gpt2, name_hf} : std::vector<std::string>{name_hf};
  };

  // Sizes.
  std::vector<std::string> hidden_keys = alias("hidden_size", "n_embd");
  if (family == Family::falcon) hidden_keys.push_back("n_embed");  // FalconConfig still accepts the old name
  s.d_model = f.required("d_model", hidden_keys);
  if (family == Family::bloom) hidden_keys.push_back("n_embed");  // BloomConfig's old name
  std::vector<std::string> layer_keys = alias("num_hidden_layers", "n_layer");
  std::vector<std::string> head_keys = alias("num_attention_heads", "n_head");
  if (family == Family::gpt_neo) {
    layer_keys = {"num_layers"};
    head_keys = {"num_heads"};
  } else if (family == Family::bloom) {
    layer_keys = {"n_layer", "num_hidden_layers"};
    head_keys = {"n_head", "num_attention_heads"};
  }
  s.n_layers = f.required("n_layers", layer_keys);
  s.n_heads = f.required("n_heads", head_keys);
  s.vocab_size = f.required("vocab_size", {"vocab_size"});

  std::vector<std::string> context_keys = alias("max_position_embeddings", "n_positions");
  if (family == Family::bloom) context_keys = {"seq_length"};  // ALiBi: no table; the training length
  if (std::optional<std::uint64_t> context = f.optional("max_seq_len", context_keys)) {
    s.max_seq_len = *context;
  } else {
    s.max_seq_len = info.context;
    f.note("max_position_embeddings is not set: " + std::to_string(info.context) + ", the default for model_type " +
           type);
  }

  if (info.reads_head_dim && map.has("head_dim")) {
    s.d_head = f.required("d_head", {"head_dim"});
  } else if (family == Family::gemma || family == Family::gemma2 || family == Family::gemma3) {
    s.d_head = 256;
    f.note("head_dim is not set: 256, the default of model_type " + type);
  } else if (family == Family::deepseek) {
    s.d_head = 0;  // set from the latent-attention sizes below
  } else if (s.d_model % s.n_heads != 0) {
    map.fail(head_keys.front(), "hidden size " + std::to_string(s.d_model) + " is not divisible by " +
                                    std::to_string(s.n_heads) + " heads" +
                                    (info.reads_head_dim ? " and the config gives no head_dim" : ""));
  } else {
    s.d_head = s.d_model / s.n_heads;
    f.from("d_head", head_keys.front());
  }

  s.n_kv_heads = s.n_heads;
  f.from("n_kv_heads", head_keys.front());
  if (info.reads_kv_heads) {
    if (std::optional<std::uint64_t> kv = f.optional("n_kv_heads", {"num_key_value_heads"})) {
      s.n_kv_heads = *kv;
    } else if (std::optional<std::uint64_t> kv_default = f.class_default("num_key_value_heads")) {
      s.n_kv_heads = *kv_default;
    }
  } else if (family == Family::falcon) {
    // FalconAttention: the new decoder architecture (40B, 180B) has num_kv_heads K/V heads;
    // otherwise multi_query (the default) means one shared K/V head, and false one per head.
    if (map.boolean_or("new_decoder_architecture", false)) {
      if (std::optional<std::uint64_t> kv = f.optional("n_kv_heads", {"num_kv_heads"})) s.n_kv_heads = *kv;
    } else if (map.boolean_or("multi_query", true)) {
      s.n_kv_heads = 1;
      f.from("n_kv_heads", "multi_query");
    }
  } else if (family == Family::gpt_bigcode && map.boolean_or("multi_query", true)) {
    s.n_kv_heads = 1;  // GPTBigCode's multi-query attention: one key/value head
    f.from("n_kv_heads", "multi_query");
  }

  switch (family) {
    case Family::gpt2:
    case Family::gpt_bigcode:
    case Family::gptj:
      if (std::optional<std::uint64_t> inner = f.optional("d_mlp", {"n_inner"})) {
        s.d_mlp = *inner;
      } else {
        s.d_mlp = checked_mul(4, s.d_model, "4 x n_embd");
        f.from("d_mlp", "n_embd");
      }
      break;
    case Family::falcon:
      if (std::optional<std::uint64_t> ffn = f.optional("d_mlp", {"ffn_hidden_size"})) {
        s.d_mlp = *ffn;
      } else {
        s.d_mlp = checked_mul(4, s.d_model, "4 x hidden_size");
        f.from("d_mlp", "hidden_size");
      }
      break;
    case Family::opt: s.d_mlp = f.required("d_mlp", {"ffn_dim"}); break;
    case Family::gpt_neo:
      if (std::optional<std::uint64_t> inner = f.optional("d_mlp", {"intermediate_size"})) {
        s.d_mlp = *inner;
      } else {
        s.d_mlp = checked_mul(4, s.d_model, "4 x hidden_size");
        f.from("d_mlp", "hidden_size");
      }
      break;
    case Family::bloom:  // BloomMLP is always 4 x hidden_size
      s.d_mlp = checked_mul(4, s.d_model, "4 x hidden_size");
      f.from("d_mlp", "hidden_size");
      break;
    case Family::llama4:  // intermediate_size is the experts'; dense layers have intermediate_size_mlp
      s.d_mlp = f.required("d_mlp", {"intermediate_size_mlp"});
      break;
    case Family::qwen3_next:  // Qwen3.5-MoE's text config has no dense width: every layer has experts
      if (std::optional<std::uint64_t> width = f.optional("d_mlp", {"intermediate_size"})) {
        s.d_mlp = *width;
      } else {
        s.d_mlp = f.required("d_mlp", {"moe_intermediate_size"});
      }
      break;
    default: s.d_mlp = f.required("d_mlp", {"intermediate_size"}); break;
  }

  // Activation: informational, but kept so the model file reads like the config.
  std::optional<std::string> activation;
  if (gpt2 || family == Family::opt || family == Family::gpt_neo) {
    activation = map.optional_string("activation_function");
  } else if ((family == Family::gemma || family == Family::gemma2 || family == Family::gemma3) &&
             map.has("hidden_activation")) {
    activation = map.optional_string("hidden_activation");
  } else if (family == Family::falcon) {
    activation = map.optional_string("activation");
  } else {
    activation = map.optional_string("hidden_act");
  }
  if (activation && !activation->empty()) s.activation = *activation;

  // Head tying: the class default unless the config says.
  const bool tied = map.boolean_or("tie_word_embeddings", info.tied_by_default);
  if (family != Family::bert) s.lm_head = tied ? LmHead::tied : LmHead::untied;
  f.from("lm_head", "tie_word_embeddings");

  // Family specifics: biases, blocks, norms, positions, experts, windows.
  switch (family) {
    case Family::llama:
    case Family::gemma:
      s.attn_qkv_bias = s.attn_out_bias = map.boolean_or("attention_bias", false);
      if (family == Family::llama) s.mlp_bias = map.boolean_or("mlp_bias", false);
      break;
    case Family::gpt_neox:
      s.attn_qkv_bias = s.attn_out_bias = map.boolean_or("attention_bias", true);
      s.parallel_block = map.boolean_or("use_parallel_residual", true);
      read_rotary_fraction(map, f, s, "rotary_pct", 0.25);  // GPTNeoXConfig
      break;
    case Family::phi:
      if (map.boolean_or("qk_layernorm", false)) {
        map.fail("qk_layernorm",
                 "qk_layernorm adds LayerNorms on the per-head queries and keys, which memplan's "
                 "model spec cannot describe");
      }
      read_rotary_fraction(map, f, s, "partial_rotary_factor", 0.5);  // PhiConfig
      break;
    case Family::opt: {
      s.attn_qkv_bias = s.attn_out_bias = s.mlp_bias = map.boolean_or("enable_bias", true);
      if (std::optional<std::uint64_t> proj = f.optional("word_embed_proj_dim", {"word_embed_proj_dim"});
          proj && *proj != s.d_model) {
        map.fail("word_embed_proj_dim",
                 "word_embed_proj_dim " + std::to_string(*proj) + " differs from hidden_size " +
                     std::to_string(s.d_model) +
                     ": the model projects its embeddings in and out (project_in, project_out, as opt-350m "
                     "does), which memplan's model spec cannot describe");
      }
      if (!map.boolean_or("layer_norm_elementwise_affine", true)) {
        map.fail("layer_norm_elementwise_affine",
                 "LayerNorms without weights and biases are not something memplan's model spec can describe");
      }
      s.final_norm = map.boolean_or("do_layer_norm_before", true) && !map.boolean_or("_remove_final_layer_norm", false);
      s.n_positions = checked_add(s.max_seq_len, 2, "max_position_embeddings + 2");
      f.from("n_positions", "max_position_embeddings");
      f.note("OPT's learned position table has max_position_embeddings + 2 = " + std::to_string(s.n_positions) +
             " rows (an offset of 2)");
      break;
    }
    case Family::falcon: {
      const bool bias = map.boolean_or("bias", false);
      s.attn_qkv_bias = s.attn_out_bias = s.mlp_bias = bias;
      if (map.boolean_or("alibi", false)) s.positional = Positional::alibi;
      s.parallel_block = map.boolean_or("parallel_attn", true);
      const bool new_arch = map.boolean_or("new_decoder_architecture", false);
      const std::uint64_t parallel_norms =
          map.optional_integer("num_ln_in_parallel_attn", 1, 2).value_or(new_arch ? 2 : 1);
      s.norms_per_layer = s.parallel_block ? parallel_norms : 2;
      break;
    }
    case Family::bert: {
      if (std::optional<std::string> kind = map.optional_string("position_embedding_type");
          kind && *kind != "absolute") {
        map.fail("position_embedding_type",
                 "position_embedding_type '" + printable(*kind) +
                     "' adds relative-distance embeddings that memplan's model spec cannot describe (only 'absolute')");
      }
      if (std::optional<std::uint64_t> token_types = f.optional("type_vocab_size", {"type_vocab_size"}, 0)) {
        s.type_vocab_size = *token_types;
      }
      break;
    }
    default: break;
  }

  if (family == Family::mixtral) {
    s.experts = f.required("experts", {"num_local_experts"});
    s.experts_per_token = f.required("experts_per_token", {"num_experts_per_tok"});
  }
  import_recent_family(map, f, s, type);

  if (family == Family::mistral || family == Family::mixtral || family == Family::phi3) {
    s.sliding_window = f.optional("sliding_window", {"sliding_window"}).value_or(0);
  } else if (family == Family::qwen2) {
    if (map.boolean_or("use_sliding_window", false)) {
      s.sliding_window = f.optional("sliding_window", {"sliding_window"}).value_or(4096);
      if (std::optional<std::uint64_t> first = map.optional_integer("max_window_layers", 0, detail::kMaxConfigSize);
          first && *first > 0 && *first < s.n_layers) {
        f.note("use_sliding_window: Qwen2 applies the window only from layer max_window_layers = " +
               std::to_string(*first) + "; memplan applies it to every layer");
      }
    } else if (map.has("sliding_window")) {
      f.note("sliding_window is ignored: use_sliding_window is false");
    }
  }
}

// A ViT's sizes in a vision_config (hidden_size, num_hidden_layers, num_attention_heads,
// intermediate_size, patch_size, image_size); a key left out takes its config class's default
// (`d`, in that order), and a note names them.
struct VitDefaults {
  const char* config_class;
  std::uint64_t hidden, layers, heads, mlp, patch, image;
};
void read_vit_sizes(const detail::JsonMap& vision, const VitDefaults& d, VisionTower& v,
                    std::vector<std::string>& notes) {
  std::vector<std::string> defaulted;
  const auto size = [&](const char* key, std::uint64_t fallback) {
    if (const std::optional<std::uint64_t> value = vision.optional_integer(key, 1, detail::kMaxConfigSize))
      return *value;
    defaulted.push_back(std::string(key) + " " + std::to_string(fallback));
    return fallback;
  };
  v.d_model = size("hidden_size", d.hidden);
  v.n_layers = size("num_hidden_layers", d.layers);
  v.n_heads = size("num_attention_heads", d.heads);
  v.d_mlp = size("intermediate_size", d.mlp);
  v.patch = size("patch_size", d.patch);
  v.image_size = size("image_size", d.image);
  if (!defaulted.empty())
    notes.push_back("vision_config leaves to " + std::string(d.config_class) + ": " + quoted_list(defaulted, "and"));
}

// LLaVA's or LLaVA-NeXT's (`next`) vision tower (vision_config, a CLIPVisionConfig: keys left
// out take its defaults) and projector; the head's tying is the outer config's. A note says
// what an image costs in tokens.
void read_llava_vision(const detail::JsonMap& outer, bool next, ModelSpec& s, std::vector<std::string>& notes) {
  const detail::JsonMap vision = outer.object("vision_config", "the vision_config of a LLaVA config");
  if (const std::optional<std::string> type = vision.optional_string("model_type");
      type && *type != "clip_vision_model") {
    vision.fail("model_type",
                "a LLaVA vision tower of type '" + printable(*type) + "': memplan reads CLIP's (clip_vision_model)");
  }
  VisionTower& v = s.vision;
  read_vit_sizes(vision, {"CLIPVisionConfig", 768, 12, 12, 3072, 32, 224}, v, notes);
  if (outer.has("vision_feature_layer") && !outer.value("vision_feature_layer").is_number_integer()) {
    outer.fail("vision_feature_layer",
               "vision_feature_layer must be one layer: a list concatenates several layers' "
               "features into a wider projector, which memplan does not read");
  }
  if (!outer.boolean_or("multimodal_projector_bias", true)) {
    outer.fail("multimodal_projector_bias", "a projector without biases is not something memplan reads");
  }
  s.lm_head = outer.boolean_or("tie_word_embeddings", false) ? LmHead::tied : LmHead::untied;
  if (next) {  // LLaVA-1.6's tiles ("anyres"), a newline token per row, the class token dropped
    v.kind = VisionKind::llava_next;
    const nlohmann::json pinpoints = {{336, 672}, {672, 336}, {672, 672}, {1008, 336}, {336, 1008}};
    if (outer.has("image_grid_pinpoints") && outer.value("image_grid_pinpoints") != pinpoints) {
      outer.fail("image_grid_pinpoints", "image_grid_pinpoints other than LLaVA-1.6's " + pinpoints.dump() +
                                             " are not something memplan reads");
    }
    if (v.image_size != 336)
      vision.fail("image_size", "LLaVA-NeXT's tiles are 336 pixels; memplan reads no other image_size");
    if (!outer.boolean_or("use_image_newline_parameter", true)) {
      outer.fail("use_image_newline_parameter",
                 "a LLaVA-NeXT without its newline token is not something memplan reads");
    }
    if (outer.optional_string("vision_feature_select_strategy").value_or("default") != "default") {
      outer.fail("vision_feature_select_strategy",
                 "memplan reads the default strategy (the class token dropped), not 'full'");
    }
    notes.push_back(
        "images are cut into 336-pixel tiles (the best of LLaVA-1.6's grid pinpoints) beside the whole "
        "image: up to 2,928 tokens each; `images` N with `image_size` WxH prices them");
    return;
  }
  notes.push_back("each image becomes " + std::to_string(image_tokens(v)) + " tokens (resized to " +
                  std::to_string(v.image_size) + "x" + std::to_string(v.image_size) +
                  "): `images` N adds them to the sequence and prices the tower's pass");
}

// Idefics3's and SmolVLM's SigLIP tower (vision_config, an Idefics3VisionConfig: keys left out
// take its defaults) and connector: scale_factor x scale_factor patches shuffled into one token
// through one unbiased linear. The processor's tiling (preprocessor_config.json's
// size.longest_edge) is read where the checkpoints copy it into vision_config, else taken as 4
// tiles a side, as every Idefics3 and SmolVLM checkpoint ships it.
void read_idefics3_vision(const detail::JsonMap& outer, ModelSpec& s, std::vector<std::string>& notes) {
  const detail::JsonMap vision = outer.object("vision_config", "the vision_config of an Idefics3 config");
  VisionTower& v = s.vision;
  v.kind = VisionKind::idefics3;
  read_vit_sizes(vision, {"Idefics3VisionConfig", 1152, 12, 16, 3072, 32, 224}, v, notes);
  v.merge = outer.optional_integer("scale_factor", 1, 64).value_or(2);
  const auto longest_edge = [&](const char* key) -> std::optional<std::uint64_t> {
    if (!vision.has(key)) return std::nullopt;
    const detail::JsonMap edge = vision.object(key, std::string("vision_config's ") + key);
    return edge.integer("longest_edge", 1, detail::kMaxConfigSize);
  };
  if (const std::optional<std::uint64_t> tile = longest_edge("max_image_size"); tile && *tile != v.image_size) {
    vision.fail("max_image_size", "max_image_size.longest_edge " + std::to_string(*tile) +
                                      ": the processor's tiles are the tower's image_size (" +
                                      std::to_string(v.image_size) + ")");
  }
  if (const std::optional<std::uint64_t> edge = longest_edge("size")) {
    v.longest_edge = *edge;
  } else {
    v.longest_edge = checked_mul(4, v.image_size, "4 x image_size");
    notes.push_back("the processor resizes an image's longest side to " + std::to_string(v.longest_edge) +
                    " pixels (4 tiles, as the Idefics3 and SmolVLM checkpoints' preprocessor_config.json says); "
                    "`vision_longest_edge` in the model file changes it, 0 turns the tiling off");
  }
  s.lm_head = outer.boolean_or("tie_word_embeddings", false) ? LmHead::tied : LmHead::untied;
  notes.push_back("each " + std::to_string(v.image_size) + "-pixel tile becomes " + std::to_string(image_tokens(v)) +
                  " tokens (" + std::to_string(v.image_size / v.patch) + "^2 patches shuffled " +
                  std::to_string(v.merge) + "x" + std::to_string(v.merge) +
                  "); an image is cut into tiles beside its whole: `images` N with `image_size` WxH prices them");
}

// Qwen2-VL's or Qwen2.5-VL's vision tower (vision_config) and merger. Their sizes are
// required: the class defaults differ between transformers releases.
void read_qwen_vl_vision(const detail::JsonMap& outer, VisionKind kind, ModelSpec& s, std::vector<std::string>& notes) {
  const bool qwen2_5 = kind == VisionKind::qwen2_5_vl;
  const detail::JsonMap vision = outer.object("vision_config", "the vision_config of a Qwen VL config");
  VisionTower& v = s.vision;
  v = qwen_vl_tower(v, kind);
  // Qwen2-VL names the tower's width embed_dim and the merger's output hidden_size;
  // Qwen2.5-VL names them hidden_size and out_hidden_size, and gives the MLP's width.
  v.d_model = vision.integer(qwen2_5 ? "hidden_size" : "embed_dim", 1, detail::kMaxConfigSize);
  v.n_layers = vision.integer("depth", 1, detail::kMaxConfigSize);
  v.n_heads = vision.integer("num_heads", 1, detail::kMaxConfigSize);
  v.d_mlp = qwen2_5 ? vision.integer("intermediate_size", 1, detail::kMaxConfigSize)
                    : checked_mul(v.d_model, vision.integer("mlp_ratio", 1, 64), "embed_dim x mlp_ratio");
  v.patch = vision.integer("patch_size", 1, detail::kMaxConfigSize);
  v.merge = vision.integer("spatial_merge_size", 1, 64);
  v.temporal_patch = vision.integer("temporal_patch_size", 1, 64);
  if (const std::optional<std::uint64_t> channels = vision.optional_integer("in_chans", 1, 64);
      channels && *channels != 3)
    vision.fail("in_chans", "a tower over " + std::to_string(*channels) + " channels: memplan reads RGB images (3)");
  // The merger projects into the language model: its width must be the language model's.
  const char* out_key = qwen2_5 ? "out_hidden_size" : "hidden_size";
  if (const std::optional<std::uint64_t> out = vision.optional_integer(out_key, 1, detail::kMaxConfigSize);
      out && *out != s.d_model) {
    vision.fail(out_key, "the merger's output width " + std::to_string(*out) +
                             " is not the language model's hidden_size " + std::to_string(s.d_model));
  }
  notes.push_back("images keep their aspect ratio: sides rounded to multiples of " + std::to_string(v.patch * v.merge) +
                  " pixels, between " + group_digits(v.min_pixels) + " and " + group_digits(v.max_pixels) +
                  " pixels (the checkpoints' preprocessor_config.json), one token per " +
                  std::to_string(v.merge * v.merge) + " patches; `images` N with `image_size` WxH prices them");
  // One layer at a time sets the pass's peak, and some layers attend over the whole image.
  if (qwen2_5 && !vision.has("fullatt_block_indexes"))
    vision.fail("depth",
                "a Qwen2.5-VL tower without fullatt_block_indexes (every layer windowed) is not something "
                "memplan reads");
}

// Qwen3.5's ViT (vision_config, Qwen3_5VisionConfig) and merger; the head is tied where the
// outer config says so and the text_config does not.
void read_qwen3_5_vision(const detail::JsonMap& outer, const detail::JsonMap& text, ModelSpec& s,
                         std::vector<std::string>& notes) {
  const detail::JsonMap vision = outer.object("vision_config", "the vision_config of a Qwen3.5 config");
  VisionTower& v = s.vision;
  v = qwen_vl_tower(v, VisionKind::qwen3_5);
  v.d_model = vision.integer("hidden_size", 1, detail::kMaxConfigSize);
  v.n_layers = vision.integer("depth", 1, detail::kMaxConfigSize);
  v.n_heads = vision.integer("num_heads", 1, detail::kMaxConfigSize);
  v.d_mlp = vision.integer("intermediate_size", 1, detail::kMaxConfigSize);
  v.patch = vision.integer("patch_size", 1, detail::kMaxConfigSize);
  v.merge = vision.integer("spatial_merge_size", 1, 64);
  v.temporal_patch = vision.integer("temporal_patch_size", 1, 64);
  v.positions = vision.integer("num_position_embeddings", 1, detail::kMaxConfigSize);
  if (const std::optional<std::uint64_t> channels = vision.optional_integer("in_channels", 1, 64);
      channels && *channels != 3)
    vision.fail("in_channels", "a tower over " + std::to_string(*channels) + " channels: memplan reads RGB images (3)");
  // Qwen3-VL's deepstack mergers, one per listed layer, whose outputs the language model's first
  // layers add; Qwen3.5 has none. Both rotate the text by M-RoPE.
  const bool qwen3_vl = s.family == Family::qwen3 || s.family == Family::qwen3_moe;
  if (vision.has("deepstack_visual_indexes")) {
    const nlohmann::json& layers = vision.value("deepstack_visual_indexes");
    if (!layers.is_array())
      vision.fail("deepstack_visual_indexes", "deepstack_visual_indexes must be a list of the tower's layer indexes");
    for (const nlohmann::json& layer : layers) {
      if (!layer.is_number_unsigned() || layer.get<std::uint64_t>() >= v.n_layers) {
        vision.fail("deepstack_visual_indexes", "deepstack_visual_indexes lists '" + printable(layer.dump()) +
                                                    "', not a layer of the tower's " + std::to_string(v.n_layers) +
                                                    " (0 to " + std::to_string(v.n_layers - 1) + ")");
      }
    }
    if (!qwen3_vl && !layers.empty()) {
      vision.fail("deepstack_visual_indexes", "deepstack mergers in a Qwen3.5 tower, which has none (Qwen3-VL's do)");
    }
    v.deepstack = layers.size();
  }
  if (qwen3_vl) {
    s.deepstack_layers = v.deepstack;
    s.mrope = true;
  }
  if (const std::optional<std::uint64_t> out = vision.optional_integer("out_hidden_size", 1, detail::kMaxConfigSize);
      out && *out != s.d_model) {
    vision.fail("out_hidden_size", "the merger's output width " + std::to_string(*out) +
                                       " is not the language model's hidden_size " + std::to_string(s.d_model));
  }
  if (!text.has("tie_word_embeddings") && outer.has("tie_word_embeddings")) {
    s.lm_head = outer.boolean_or("tie_word_embeddings", false) ? LmHead::tied : LmHead::untied;
  }
  notes.push_back("images keep their aspect ratio: sides rounded to multiples of " + std::to_string(v.patch * v.merge) +
                  " pixels, between " + group_digits(v.min_pixels) + " and " + group_digits(v.max_pixels) +
                  " pixels (the checkpoints' preprocessor_config.json), one token per " +
                  std::to_string(v.merge * v.merge) + " patches; `images` N with `image_size` WxH prices them");
}

// Gemma 3's or PaliGemma's SigLIP tower (vision_config, a SiglipVisionConfig: keys left out
// take its defaults) and projector. Gemma 3 pools each image's patches into
// mm_tokens_per_image tokens; PaliGemma keeps every patch.
void read_siglip_vision(const detail::JsonMap& outer, VisionKind kind, ModelSpec& s, std::vector<std::string>& notes) {
  const detail::JsonMap vision = outer.object("vision_config", "the vision_config of a SigLIP vision-language config");
  if (const std::optional<std::string> type = vision.optional_string("model_type");
      type && *type != "siglip_vision_model") {
    vision.fail("model_type",
                "a vision tower of type '" + printable(*type) + "': memplan reads SigLIP's (siglip_vision_model) here");
  }
  if (vision.boolean_or("vision_use_head", false)) {
    vision.fail("vision_use_head",
                "vision_use_head: true adds SigLIP's attention-pooling head, which neither "
                "Gemma 3 nor PaliGemma has and memplan does not read");
  }
  VisionTower& v = s.vision;
  v.kind = kind;
  read_vit_sizes(vision, {"SiglipVisionConfig", 768, 12, 12, 3072, 16, 224}, v, notes);
  const std::uint64_t side = v.patch == 0 ? 0 : v.image_size / v.patch;
  if (kind == VisionKind::gemma3) {
    const std::uint64_t tokens = outer.optional_integer("mm_tokens_per_image", 1, detail::kMaxConfigSize).value_or(256);
    std::uint64_t per_side = 1;
    while ((per_side + 1) * (per_side + 1) <= tokens) ++per_side;
    if (per_side * per_side != tokens || side % per_side != 0) {
      outer.fail("mm_tokens_per_image", "mm_tokens_per_image " + std::to_string(tokens) +
                                            " must be a square whose side divides the image's " + std::to_string(side) +
                                            " patches a side (Gemma 3 pools them)");
    }
    v.merge = side / per_side;
  } else {
    const std::uint64_t projection =
        vision.optional_integer("projection_dim", 1, detail::kMaxConfigSize)
            .value_or(outer.optional_integer("projection_dim", 1, detail::kMaxConfigSize).value_or(s.d_model));
    if (projection != s.d_model) {
      vision.fail("projection_dim", "the projector's output width " + std::to_string(projection) +
                                        " is not the language model's hidden_size " + std::to_string(s.d_model));
    }
  }
  notes.push_back("each image becomes " + std::to_string(image_tokens(v)) + " tokens (resized to " +
                  std::to_string(v.image_size) + "x" + std::to_string(v.image_size) +
                  "): `images` N adds them to the sequence and prices the tower's pass");
}

// Gemma 4's vision tower (vision_config, a Gemma4VisionConfig) and embed_vision's projection;
// its audio tower (audio_config, E2B's and E4B's) is not read.
void read_gemma4_vision(const detail::JsonMap& outer, ModelSpec& s, std::vector<std::string>& notes) {
  if (outer.has("audio_config")) {
    outer.fail("audio_config",
               "an audio tower (Gemma 4 E2B's and E4B's) is not something memplan reads yet: their "
               "text models are read from a text_config alone, or from a .gguf");
  }
  if (!outer.has("vision_config")) return;
  const detail::JsonMap vision = outer.object("vision_config", "the vision_config of a Gemma 4 config");
  if (const std::optional<std::string> type = vision.optional_string("model_type"); type && *type != "gemma4_vision") {
    vision.fail("model_type", "a vision tower of type '" + printable(*type) + "': memplan reads gemma4_vision here");
  }
  const auto required = [&](const char* key) { return vision.integer(key, 1, detail::kMaxConfigSize); };
  VisionTower& v = s.vision;
  v.kind = VisionKind::gemma4;
  v.d_model = required("hidden_size");
  v.n_layers = required("num_hidden_layers");
  v.n_heads = required("num_attention_heads");
  v.d_mlp = required("intermediate_size");
  v.patch = required("patch_size");
  v.merge = required("pooling_kernel_size");
  v.positions = required("position_embedding_size");
  const std::uint64_t head = vision.optional_integer("head_dim", 1, detail::kMaxConfigSize).value_or(0);
  if (v.d_model % v.n_heads != 0 || (head != 0 && head * v.n_heads != v.d_model)) {
    vision.fail("head_dim",
                "memplan reads a Gemma 4 tower whose heads span its hidden_size (head_dim x "
                "num_attention_heads = hidden_size)");
  }
  if (vision.optional_integer("num_key_value_heads", 1, detail::kMaxConfigSize).value_or(v.n_heads) != v.n_heads) {
    vision.fail("num_key_value_heads", "memplan reads a Gemma 4 tower with a key/value head per query head");
  }
  if (!vision.boolean_or("standardize", false) || vision.boolean_or("use_clipped_linears", false)) {
    vision.fail("standardize",
                "memplan reads the 31B's and 26B-A4B's tower (standardize: true, no clipped "
                "linears), not yet E2B's and E4B's");
  }
  v.soft_tokens = outer.optional_integer("vision_soft_tokens_per_image", 1, detail::kMaxConfigSize)
                      .value_or(
                          vision.optional_integer("default_output_length", 1, detail::kMaxConfigSize).value_or(280));
  notes.push_back("each image becomes at most " + std::to_string(v.soft_tokens) + " tokens (" +
                  std::to_string(v.soft_tokens * v.merge * v.merge) + " patches, pooled " + std::to_string(v.merge) +
                  "x" + std::to_string(v.merge) + "): `images` N prices each at that budget");
}

// A Mamba or Mamba-2 model (MambaConfig, Mamba2Config): embeddings, a norm and a mixer per
// layer, a final norm, the head. No attention, so no heads and no context limit.
void read_state_space_model(const detail::JsonMap& map, Fields& f, ModelSpec& s, const FamilyInfo& info) {
  s.d_model = f.required("d_model", {"hidden_size", "d_model"});
  s.n_layers = f.required("n_layers", {"num_hidden_layers", "n_layer"});
  s.vocab_size = f.required("vocab_size", {"vocab_size"});
  s.max_seq_len = info.context;
  f.note("a state-space model has no position table and no context limit: planning limit " +
         std::to_string(info.context) + " tokens");
  read_ssm_sizes(map, f, s, info.family == Family::mamba ? 1 : 2);
  s.lm_head = map.boolean_or("tie_word_embeddings", info.tied_by_default) ? LmHead::tied : LmHead::untied;
  f.from("lm_head", "tie_word_embeddings");
}

// An encoder-decoder (T5Config, BartConfig, WhisperConfig): the decoder's sizes in the spec,
// the encoder's layers and position table in s.encoder. The two stacks must have the same
// heads and MLP width, as every released T5, BART and Whisper checkpoint has.
void read_encoder_decoder(const detail::JsonMap& map, Fields& f, ModelSpec& s, const FamilyInfo& info) {
  const auto same = [&](const char* encoder_key, const char* decoder_key, std::uint64_t decoder_value) {
    const std::uint64_t v = f.required(encoder_key, {encoder_key});
    if (v != decoder_value) {
      map.fail(encoder_key, std::string(encoder_key) + " is " + std::to_string(v) + " but " + decoder_key + " is " +
                                std::to_string(decoder_value) +
                                ": memplan describes encoder and decoder layers of the same heads and MLP width");
    }
  };
  if (info.family == Family::t5) {
    s.d_model = f.required("d_model", {"d_model"});
    s.encoder.n_layers = f.required("encoder_layers", {"num_layers"});
    s.n_layers = f.optional("n_layers", {"num_decoder_layers"}).value_or(s.encoder.n_layers);
    s.n_heads = s.n_kv_heads = f.required("n_heads", {"num_heads"});
    s.d_head = f.required("d_head", {"d_kv"});
    s.d_mlp = f.required("d_mlp", {"d_ff"});
    s.vocab_size = f.required("vocab_size", {"vocab_size"});
    if (std::optional<std::uint64_t> buckets = f.optional("relative_buckets", {"relative_attention_num_buckets"})) {
      s.relative_buckets = *buckets;
    } else {
      f.note("relative_attention_num_buckets is not set: 32, the default of T5Config");
    }
    // feed_forward_proj: "relu", "gelu", or "gated-" and an activation (T5 v1.1, Flan-T5: "gated-gelu").
    const std::string proj = map.optional_string("feed_forward_proj").value_or("relu");
    const bool gated = proj.starts_with("gated-");
    s.mlp = gated ? MlpKind::gated : MlpKind::plain;
    s.activation = gated ? proj.substr(6) : proj;
    if (s.activation.empty() || s.activation.find('-') != std::string::npos) {
      map.fail("feed_forward_proj", "feed_forward_proj '" + printable(proj) +
                                        "' is not an activation or 'gated-' and one (T5Config reads 'relu', "
                                        "'gated-gelu', ...)");
    }
    // T5Config: "gated-gelu" runs gelu_new (NewGELUActivation), "for backwards compatibility".
    if (proj == "gated-gelu") s.activation = "gelu_new";
    if (std::optional<std::uint64_t> context = f.optional("max_seq_len", {"n_positions"})) {
      s.max_seq_len = *context;
    } else {
      s.max_seq_len = info.context;
      f.note("n_positions is not set: 512, the length T5 was trained at");
    }
    f.note("relative positions set no hard limit on the source or target length; max_seq_len " +
           std::to_string(s.max_seq_len) + " is the length the model was trained at");
  } else {
    s.d_model = f.required("d_model", {"d_model"});
    s.n_layers = f.required("n_layers", {"decoder_layers"});
    s.encoder.n_layers = f.required("encoder_layers", {"encoder_layers"});
    s.n_heads = s.n_kv_heads = f.required("n_heads", {"decoder_attention_heads"});
    s.d_mlp = f.required("d_mlp", {"decoder_ffn_dim"});
    same("encoder_attention_heads", "decoder_attention_heads", s.n_heads);
    same("encoder_ffn_dim", "decoder_ffn_dim", s.d_mlp);
    s.vocab_size = f.required("vocab_size", {"vocab_size"});
    if (s.d_model % s.n_heads != 0) {
      map.fail("decoder_attention_heads",
               "d_model " + std::to_string(s.d_model) + " is not divisible by " + std::to_string(s.n_heads) + " heads");
    }
    s.d_head = s.d_model / s.n_heads;
    if (info.family == Family::bart) {
      // BartLearnedPositionalEmbedding: max_position_embeddings + 2 rows (fairseq's offset), one per stack.
      s.max_seq_len = f.required("max_seq_len", {"max_position_embeddings"});
      s.n_positions = s.encoder.n_positions = checked_add(s.max_seq_len, 2, "position rows");
      f.from("n_positions", "max_position_embeddings");
      if (map.boolean_or("add_final_layer_norm", false) || map.boolean_or("normalize_before", false)) {
        map.fail(map.has("normalize_before") ? "normalize_before" : "add_final_layer_norm",
                 "a pre-norm BART (mBART's layout) is not model_type bart in transformers: memplan reads BART's "
                 "post-norm layers");
      }
    } else {
      s.max_seq_len = s.n_positions = f.required("max_seq_len", {"max_target_positions"});
      s.encoder.n_positions = f.required("encoder_positions", {"max_source_positions"});
      s.encoder.mel_bins = f.required("encoder_mel_bins", {"num_mel_bins"});
    }
  }
  s.lm_head = map.boolean_or("tie_word_embeddings", info.tied_by_default) ? LmHead::tied : LmHead::untied;
  f.from("lm_head", "tie_word_embeddings");
}

std::string last_path_part(std::string text) {
  while (!text.empty() && (text.back() == '/' || text.back() == '\\')) text.pop_back();
  const std::size_t slash = text.find_last_of("/\\");
  return slash == std::string::npos ? text : text.substr(slash + 1);
}

std::string yaml_quote(std::string_view text) {
  static const char* const kHex = "0123456789abcdef";
  std::string out = "\"";
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += ch;
    }
  }
  return out + '"';
}

const char* yaml_bool(bool value) { return value ? "true" : "false"; }

}  // namespace

std::vector<std::string> hf_model_types() {
  std::vector<std::string> out;
  for (const FamilyInfo& f : kFamilies) out.emplace_back(f.model_type);
  return out;
}

HfImport parse_hf_config(std::string_view text, const std::string& file, const std::string& name,
                         const std::string& as_model_type) {
  const std::string json = detail::python_infinities_as_null(text);
  text = json;
  const nlohmann::json root = detail::parse_json(text, file);
  const detail::JsonMap outer(root, text, file, "a Hugging Face config");
  HfImport out;
  out.model_type = outer.string("model_type");
  // Llama 4 checkpoints wrap the language model's config in text_config, beside a vision tower's.
  std::optional<detail::JsonMap> text_config;
  if (out.model_type == "llama4") {
    text_config.emplace(outer.object("text_config", "the text_config of a Llama 4 config"));
    out.notes.push_back("the language model (text_config); the vision tower and its projector are not counted");
  }
  // A vision-language model's language model, in a nested text_config whose model_type (the
  // first of `accepted` when left out, its keys left to that class's defaults) must be one
  // memplan reads with that tower. `what` names the config ("a LLaVA").
  std::string text_type;  // a nested text_config's model_type
  const auto nested_text_config = [&](const std::string& what, std::initializer_list<std::string_view> accepted,
                                      const std::string& reads) {
    text_config.emplace(outer.object("text_config", "the text_config of " + what + " config"));
    text_type = text_config->optional_string("model_type").value_or(std::string(*accepted.begin()));
    if (std::find(accepted.begin(), accepted.end(), text_type) == accepted.end()) {
      text_config->fail("model_type", what + " config whose language model is '" + printable(text_type) +
                                          "': memplan reads " + reads);
    }
  };
  // LLaVA, Idefics3: a llama beside a CLIP or SigLIP vision_config; LLaVA-NeXT: a llama or a
  // mistral beside CLIP's; Gemma 3 and PaliGemma: a Gemma beside SigLIP's.
  const bool llava = out.model_type == "llava";
  const bool llava_next = out.model_type == "llava_next";
  const bool idefics3 = out.model_type == "idefics3";
  const bool siglip_vlm = out.model_type == "gemma3" || out.model_type == "paligemma";
  if (llava) nested_text_config("a LLaVA", {"llama"}, "LLaVA with a llama text_config (LLaVA-1.5)");
  if (idefics3) nested_text_config("an Idefics3", {"llama"}, "Idefics3 and SmolVLM with a llama text_config");
  if (llava_next) {
    nested_text_config("a LLaVA-NeXT", {"llama", "mistral"}, "LLaVA-NeXT with a llama or mistral text_config");
  }
  if (out.model_type == "gemma3") nested_text_config("a gemma3", {"gemma3_text"}, "gemma3_text");
  const bool gemma4 = out.model_type == "gemma4";
  if (gemma4) nested_text_config("a gemma4", {"gemma4_text"}, "gemma4_text");
  if (out.model_type == "paligemma") {
    nested_text_config("a paligemma", {"gemma", "gemma2"}, "gemma (PaliGemma) or gemma2 (PaliGemma 2)");
  }
  // Qwen3.5: a qwen3_5_text (qwen3_5_moe_text) text_config beside its ViT's vision_config.
  const bool qwen3_5_vl = out.model_type == "qwen3_5" || out.model_type == "qwen3_5_moe";
  if (out.model_type == "qwen3_5") nested_text_config("a Qwen3.5", {"qwen3_5_text"}, "qwen3_5_text");
  if (out.model_type == "qwen3_5_moe") nested_text_config("a Qwen3.5-MoE", {"qwen3_5_moe_text"}, "qwen3_5_moe_text");
  // Qwen3-VL: a qwen3_vl_text (qwen3_vl_moe_text) text_config beside Qwen3.5's ViT with deepstack
  // mergers.
  const bool qwen3_vl = out.model_type == "qwen3_vl" || out.model_type == "qwen3_vl_moe";
  if (out.model_type == "qwen3_vl") nested_text_config("a Qwen3-VL", {"qwen3_vl_text"}, "qwen3_vl_text");
  if (out.model_type == "qwen3_vl_moe") {
    nested_text_config("a Qwen3-VL-MoE", {"qwen3_vl_moe_text"}, "qwen3_vl_moe_text");
  }
  // Qwen2-VL: the language model's keys at the top (or, as newer transformers save it, in
  // text_config) beside the tower's vision_config.
  const bool qwen_vl = out.model_type == "qwen2_vl" || out.model_type == "qwen2_5_vl";
  if (qwen_vl && outer.has("text_config"))
    text_config.emplace(outer.object("text_config", "the text_config of a Qwen2-VL config"));
  const detail::JsonMap& map = text_config ? *text_config : outer;
  const auto family_of = [](std::string_view type) -> const FamilyInfo* {
    for (const FamilyInfo& f : kFamilies) {
      if (f.model_type == type) return &f;
    }
    return nullptr;
  };
  const FamilyInfo* info = family_of(siglip_vlm || llava_next || gemma4 ? std::string_view(text_type)
                                                                        : std::string_view(out.model_type));
  const std::vector<std::string> types = hf_model_types();
  // No did-you-mean: a model_type spelled like a known one (llava, qwen3_next) is a
  // different architecture, and following the suggestion would price the wrong one.
  if (info == nullptr && as_model_type.empty()) {
    map.fail("model_type", "unsupported model_type '" + printable(out.model_type) + "'; memplan imports " +
                               quoted_list(types, "and") +
                               ". If this architecture is one of them under another name, `as` MODEL_TYPE reads it "
                               "as that one and lists every key it did not use");
  }
  if (!as_model_type.empty()) {
    if (info != nullptr) {
      map.fail("model_type", "model_type '" + printable(out.model_type) + "' is one memplan imports: `as` " +
                                 printable(as_model_type) + " applies to model_types it does not know");
    }
    info = family_of(as_model_type);
    if (info == nullptr) {
      throw Error(ErrorKind::invalid_input,
                  "`as` " + printable(as_model_type) + " is not a model_type memplan imports; it imports " +
                      quoted_list(types, "and"),
                  "as");
    }
  }

  Fields f(map, out.notes);
  // A nested text_config may leave sizes to its class's defaults.
  if (const TextConfigDefaults* d = text_config_defaults(text_type)) {
    std::map<std::string, std::uint64_t> sizes{{"hidden_size", d->hidden_size},
                                               {"num_hidden_layers", d->layers},
                                               {"num_attention_heads", d->heads},
                                               {"intermediate_size", d->intermediate_size},
                                               {"vocab_size", d->vocab_size}};
    if (d->kv_heads != 0) sizes["num_key_value_heads"] = d->kv_heads;
    f.class_defaults(std::move(sizes), std::string(d->config_class) + " (text_config)");
  }
  const Family family = info->family;
  const std::string type(info->model_type);  // the `as` model_type when one was given
  ModelSpec s = family_defaults(family);
  s.name = name;
  // LLaVA's text_config names the language model it started from: the checkpoint is the outer config's.
  if (const std::optional<std::string> path =
          (llava || llava_next || siglip_vlm || idefics3 || gemma4 ? outer : map).optional_string("_name_or_path")) {
    const std::string last = last_path_part(*path);
    if (!last.empty() && last != "." && last != "..") s.name = printable(last);  // no control bytes in a name
  }

  if (family == Family::mamba || family == Family::mamba2) {
    read_state_space_model(map, f, s, *info);
  } else if (family == Family::t5 || family == Family::bart || family == Family::whisper) {
    read_encoder_decoder(map, f, s, *info);
  } else {
    read_transformer(map, f, s, *info);
  }
  if (llava || llava_next) read_llava_vision(outer, llava_next, s, out.notes);
  if (idefics3) read_idefics3_vision(outer, s, out.notes);
  if (siglip_vlm)
    read_siglip_vision(outer, out.model_type == "gemma3" ? VisionKind::gemma3 : VisionKind::paligemma, s, out.notes);
  if (qwen_vl) {
    read_qwen_vl_vision(outer, out.model_type == "qwen2_vl" ? VisionKind::qwen2_vl : VisionKind::qwen2_5_vl, s,
                        out.notes);
    s.mrope = true;  // rope_scaling's mrope_section: a position of three ids (llama.cpp keeps four)
  }
  if (qwen3_5_vl || qwen3_vl) read_qwen3_5_vision(outer, map, s, out.notes);
  if (gemma4) read_gemma4_vision(outer, s, out.notes);

  // Notes that change nothing but tell the reader what the file is.
  for (const char* key : {"torch_dtype", "dtype"}) {
    if (map.has(key) && map.value(key).is_string()) {
      f.note("weights saved as " + printable(map.value(key).get<std::string>()) + " (" + key + ")");
      break;
    }
  }
  if (map.has("architectures") && map.value("architectures").is_array() && !map.value("architectures").empty() &&
      map.value("architectures").front().is_string()) {
    const std::string arch = map.value("architectures").front().get<std::string>();
    if (family == Family::bert && arch != "BertModel") {
      f.note("architectures names " + printable(arch) +
             ": memplan counts BertModel (embeddings, encoder, pooler), not the task heads the checkpoint adds");
    } else if (family != Family::bert && !arch.ends_with("ForCausalLM") && !arch.ends_with("LMHeadModel") &&
               !((is_encoder_decoder(s) || s.vision.d_model != 0) && arch.ends_with("ForConditionalGeneration"))) {
      f.note("architectures names " + printable(arch) + ": memplan counts the model with a language-model head");
    }
  }

  try {
    validate(s);
  } catch (const Error& e) {
    f.fail_field(e);
  }
  detail::import_quantization(map, type, s, out.notes);
  if (!as_model_type.empty()) {
    // Read as another architecture: every key the import did not look at may size tensors
    // memplan now leaves out, so each estimate shows them.
    const std::vector<std::string> unread = map.unread_keys();
    s.import_warnings.push_back(
        "model_type '" + printable(out.model_type) + "' read as '" + type + "' (`as`): memplan did not use " +
        (unread.empty() ? std::string("no key: every key was read") : quoted_list(unread, "and")) +
        "; any tensors they describe are not counted");
    out.notes.push_back(s.import_warnings.back());
  }
  out.entry.spec = std::move(s);
  out.entry.origin = file;
  out.entry.source = file;
  return out;
}

HfImport load_hf_config(const std::string& path, const std::string& as_model_type) {
  namespace fs = std::filesystem;
  const std::string text = detail::read_text_file(path, "a config.json");
  std::error_code ec;
  const fs::path p(path);
  std::string name = p.stem().string();
  if (p.filename() == "config.json") {
    const std::string dir = last_path_part(fs::absolute(p, ec).parent_path().string());
    if (!dir.empty()) name = dir;
  }
  return parse_hf_config(text, path, name, as_model_type);
}

std::string model_yaml(const ModelEntry& entry, const std::vector<std::string>& comments) {
  const ModelSpec& s = entry.spec;
  std::ostringstream out;
  // A comment is one line: any control byte (LF, CR, ESC) from a config's strings is
  // written as \xNN, so no other YAML reader sees an injected key.
  for (const std::string& line : comments) out << "# " << printable(line) << '\n';
  out << "family: " << to_string(s.family) << '\n'
      << "d_model: " << s.d_model << '\n'
      << "n_layers: " << s.n_layers << '\n';
  if (attention_layers(s) != 0) {
    out << "n_heads: " << s.n_heads << '\n' << "n_kv_heads: " << s.n_kv_heads << '\n' << "d_head: " << s.d_head << '\n';
  }
  if (s.mlp != MlpKind::none) out << "d_mlp: " << s.d_mlp << '\n';
  out << "mlp: " << to_string(s.mlp) << '\n';
  if (!s.activation.empty()) out << "activation: " << yaml_quote(s.activation) << '\n';
  out << "vocab_size: " << s.vocab_size << '\n'
      << "max_seq_len: " << s.max_seq_len << '\n'
      << "positional: " << to_string(s.positional) << '\n';
  if (s.n_positions != 0) out << "n_positions: " << s.n_positions << '\n';
  out << "norm: " << to_string(s.norm) << '\n'
      << "norms_per_layer: " << s.norms_per_layer << '\n'
      << "parallel_block: " << yaml_bool(s.parallel_block) << '\n'
      << "final_norm: " << yaml_bool(s.final_norm) << '\n'
      << "embedding_norm: " << yaml_bool(s.embedding_norm) << '\n'
      << "type_vocab_size: " << s.type_vocab_size << '\n'
      << "pooler: " << yaml_bool(s.pooler) << '\n'
      << "attn_qkv_bias: " << yaml_bool(s.attn_qkv_bias) << '\n'
      << "attn_out_bias: " << yaml_bool(s.attn_out_bias) << '\n'
      << "mlp_bias: " << yaml_bool(s.mlp_bias) << '\n'
      << "lm_head: " << to_string(s.lm_head) << '\n'
      << "lm_head_bias: " << yaml_bool(s.lm_head_bias) << '\n'
      << "experts: " << s.experts << '\n'
      << "experts_per_token: " << s.experts_per_token << '\n'
      << "sliding_window: " << s.sliding_window << '\n';
  // The per-layer description, only where a model has it: uniform models read as before.
  if (s.qk_norm != QkNorm::none) out << "qk_norm: " << to_string(s.qk_norm) << '\n';
  const std::pair<const char*, std::uint64_t> sizes[] = {{"d_expert", s.d_expert},
                                                         {"d_shared_expert", s.d_shared_expert},
                                                         {"first_dense_layers", s.first_dense_layers},
                                                         {"attention_chunk", s.attention_chunk},
                                                         {"global_every", s.global_every},
                                                         {"global_kv_heads", s.global_kv_heads},
                                                         {"global_d_head", s.global_d_head},
                                                         {"kv_shared_layers", s.kv_shared_layers},
                                                         {"per_layer_input", s.per_layer_input},
                                                         {"q_lora_rank", s.mla.q_lora_rank},
                                                         {"kv_lora_rank", s.mla.kv_lora_rank},
                                                         {"qk_nope_head_dim", s.mla.qk_nope_head_dim},
                                                         {"qk_rope_head_dim", s.mla.qk_rope_head_dim},
                                                         {"v_head_dim", s.mla.v_head_dim},
                                                         {"mtp_layers", s.mtp_layers},
                                                         {"deepstack_layers", s.deepstack_layers},
                                                         {"ssm_version", s.ssm.version},
                                                         {"ssm_d_inner", s.ssm.d_inner},
                                                         {"ssm_d_state", s.ssm.d_state},
                                                         {"ssm_d_conv", s.ssm.d_conv},
                                                         {"ssm_dt_rank", s.ssm.dt_rank},
                                                         {"ssm_heads", s.ssm.heads},
                                                         {"ssm_groups", s.ssm.groups},
                                                         {"ssm_chunk", s.ssm.chunk},
                                                         {"vision_d_model", s.vision.d_model},
                                                         {"vision_layers", s.vision.n_layers},
                                                         {"vision_heads", s.vision.n_heads},
                                                         {"vision_d_mlp", s.vision.d_mlp},
                                                         {"vision_patch", s.vision.patch},
                                                         {"vision_image_size", s.vision.image_size},
                                                         {"vision_min_pixels", s.vision.min_pixels},
                                                         {"vision_max_pixels", s.vision.max_pixels},
                                                         {"vision_longest_edge", s.vision.longest_edge},
                                                         {"vision_positions", s.vision.positions},
                                                         {"vision_deepstack", s.vision.deepstack},
                                                         {"vision_soft_tokens", s.vision.soft_tokens},
                                                         {"encoder_layers", s.encoder.n_layers},
                                                         {"encoder_positions", s.encoder.n_positions},
                                                         {"encoder_mel_bins", s.encoder.mel_bins},
                                                         {"relative_buckets", s.relative_buckets},
                                                         {"shared_blocks", s.shared.blocks},
                                                         {"shared_adapter_rank", s.shared.adapter_rank},
                                                         {"rotary_dim", s.rotary_dim}};
  for (const auto& [key, value] : sizes) {
    if (value != 0) out << key << ": " << value << '\n';
  }
  if (s.moe_every != 1) out << "moe_every: " << s.moe_every << '\n';
  if (s.router_bias) out << "router_bias: true\n";
  if (s.shared_expert_gate && s.d_shared_expert != 0) out << "shared_expert_gate: true\n";
  if (s.attn_output_gate) out << "attn_output_gate: true\n";
  if (s.attention_sinks) out << "attention_sinks: true\n";
  if (s.final_logit_softcapping) out << "final_logit_softcapping: true\n";
  if (s.mrope) out << "mrope: true\n";
  if (s.global_k_eq_v) out << "global_k_eq_v: true\n";
  if (s.layer_scalar) out << "layer_scalar: true\n";
  if (s.router_scales) out << "router_scales: true\n";
  if (s.double_wide_mlp) out << "double_wide_mlp: true\n";
  if (s.moe_norms != 0) out << "moe_norms: " << s.moe_norms << '\n';
  if (!s.attn_k_bias) out << "attn_k_bias: false\n";
  if (s.vision.kind != VisionKind::clip) out << "vision_kind: " << to_string(s.vision.kind) << '\n';
  if (s.vision.merge != 1) out << "vision_merge: " << s.vision.merge << '\n';
  if (s.vision.temporal_patch != 1) out << "vision_temporal_patch: " << s.vision.temporal_patch << '\n';
  if (s.ssm.version != 0) {
    out << "ssm_conv_bias: " << yaml_bool(s.ssm.conv_bias) << '\n'
        << "ssm_proj_bias: " << yaml_bool(s.ssm.proj_bias) << '\n';
    if (s.ssm.out_proj_bias != s.ssm.proj_bias) out << "ssm_out_proj_bias: " << yaml_bool(s.ssm.out_proj_bias) << '\n';
    if (s.ssm.version == 2 && !s.ssm.gated_norm) out << "ssm_gated_norm: false\n";
    if (s.ssm.dt_bc_norms) out << "ssm_dt_bc_norms: true\n";
    if (s.parallel_ssm) out << "parallel_ssm: true\n";
  }
  if (s.shared.mlp_adapters) out << "shared_mlp_adapters: true\n";
  if (s.shared.attention_adapters) out << "shared_attention_adapters: true\n";
  if (s.global_every != 0 && s.global_attention != AttentionKind::full) {
    out << "global_attention: " << to_string(s.global_attention) << '\n';
  }
  if (!s.layer_types.empty()) {
    out << "layer_types: [";
    for (std::size_t i = 0; i < s.layer_types.size(); ++i) out << (i == 0 ? "" : ", ") << to_string(s.layer_types[i]);
    out << "]\n";
  }
  if (!entry.source.empty()) out << "source: " << yaml_quote(entry.source) << '\n';
  if (entry.published_params) out << "published_params: " << *entry.published_params << '\n';
  if (!entry.published_params_source.empty()) {
    out << "published_params_source: " << yaml_quote(entry.published_params_source) << '\n';
  }
  return out.str();
}

}  // namespace memplan
