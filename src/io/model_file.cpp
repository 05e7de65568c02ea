#include "memplan/io/model_file.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>

#include "embedded_configs.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "memplan/io/checkpoint_model.hpp"
#include "memplan/io/gguf.hpp"
#include "memplan/io/hf_config.hpp"
#include "memplan/io/hub.hpp"
#include "text_file.hpp"
#include "yaml_fields.hpp"

namespace memplan {

namespace {

const std::vector<std::string> kModelKeys = {"family",
                                             "d_model",
                                             "n_layers",
                                             "n_heads",
                                             "n_kv_heads",
                                             "d_head",
                                             "d_mlp",
                                             "mlp",
                                             "activation",
                                             "vocab_size",
                                             "max_seq_len",
                                             "positional",
                                             "n_positions",
                                             "norm",
                                             "norms_per_layer",
                                             "parallel_block",
                                             "final_norm",
                                             "embedding_norm",
                                             "type_vocab_size",
                                             "pooler",
                                             "attn_qkv_bias",
                                             "attn_out_bias",
                                             "mlp_bias",
                                             "lm_head",
                                             "lm_head_bias",
                                             "experts",
                                             "experts_per_token",
                                             "sliding_window",
                                             "qk_norm",
                                             "d_expert",
                                             "d_shared_expert",
                                             "first_dense_layers",
                                             "moe_every",
                                             "router_bias",
                                             "attention_chunk",
                                             "global_every",
                                             "global_attention",
                                             "layer_types",
                                             "q_lora_rank",
                                             "kv_lora_rank",
                                             "qk_nope_head_dim",
                                             "qk_rope_head_dim",
                                             "v_head_dim",
                                             "attention_sinks",
                                             "mtp_layers",
                                             "source",
                                             "published_params",
                                             "published_params_source"};

void read_flag(const detail::YamlMap& map, const std::string& key, bool& field) {
  if (map.has(key)) field = map.boolean(key);
}

void read_count(const detail::YamlMap& map, const std::string& key, std::uint64_t& field, std::uint64_t min) {
  if (map.has(key)) field = map.integer(key, min, detail::kMaxConfigSize);
}

}  // namespace

ModelEntry parse_model_yaml(std::string_view text, const std::string& file, const std::string& name) {
  const YAML::Node root = detail::parse_yaml(text, file);
  const detail::YamlMap map(root, file, "a model description");
  map.reject_unknown(kModelKeys);

  ModelEntry entry;
  entry.origin = file;
  ModelSpec& s = entry.spec;
  s = family_defaults(map.parsed("family", parse_family));
  s.name = name;
  s.d_model = map.integer("d_model", 1, detail::kMaxConfigSize);
  s.n_layers = map.integer("n_layers", 1, detail::kMaxConfigSize);
  s.n_heads = map.integer("n_heads", 1, detail::kMaxConfigSize);
  s.n_kv_heads = map.optional_integer("n_kv_heads", 1, detail::kMaxConfigSize).value_or(s.n_heads);
  read_count(map, "q_lora_rank", s.mla.q_lora_rank, 0);
  read_count(map, "kv_lora_rank", s.mla.kv_lora_rank, 0);
  read_count(map, "qk_nope_head_dim", s.mla.qk_nope_head_dim, 0);
  read_count(map, "qk_rope_head_dim", s.mla.qk_rope_head_dim, 0);
  read_count(map, "v_head_dim", s.mla.v_head_dim, 0);
  if (map.has("d_head")) {
    s.d_head = map.integer("d_head", 1, detail::kMaxConfigSize);
  } else if (s.mla.kv_lora_rank != 0) {
    s.d_head = s.mla.qk_nope_head_dim + s.mla.qk_rope_head_dim;  // the query/key head of latent attention
  } else if (s.d_model % s.n_heads != 0) {
    map.fail("d_head", "d_model " + std::to_string(s.d_model) + " is not divisible by n_heads " +
                           std::to_string(s.n_heads) + ": set d_head explicitly");
  } else {
    s.d_head = s.d_model / s.n_heads;
  }
  s.d_mlp = map.integer("d_mlp", 1, detail::kMaxConfigSize);
  if (map.has("mlp")) s.mlp = map.parsed("mlp", parse_mlp_kind);
  if (map.has("activation")) s.activation = map.string("activation");
  s.vocab_size = map.integer("vocab_size", 1, detail::kMaxConfigSize);
  s.max_seq_len = map.integer("max_seq_len", 1, detail::kMaxConfigSize);
  if (map.has("positional")) s.positional = map.parsed("positional", parse_positional);
  read_count(map, "n_positions", s.n_positions, 1);
  if (map.has("norm")) s.norm = map.parsed("norm", parse_norm_kind);
  read_count(map, "norms_per_layer", s.norms_per_layer, 0);
  read_flag(map, "parallel_block", s.parallel_block);
  read_flag(map, "final_norm", s.final_norm);
  read_flag(map, "embedding_norm", s.embedding_norm);
  read_count(map, "type_vocab_size", s.type_vocab_size, 0);
  read_flag(map, "pooler", s.pooler);
  read_flag(map, "attn_qkv_bias", s.attn_qkv_bias);
  read_flag(map, "attn_out_bias", s.attn_out_bias);
  read_flag(map, "mlp_bias", s.mlp_bias);
  if (map.has("lm_head")) s.lm_head = map.parsed("lm_head", parse_lm_head);
  read_flag(map, "lm_head_bias", s.lm_head_bias);
  read_count(map, "experts", s.experts, 0);
  read_count(map, "experts_per_token", s.experts_per_token, 0);
  read_count(map, "sliding_window", s.sliding_window, 0);
  if (map.has("qk_norm")) s.qk_norm = map.parsed("qk_norm", parse_qk_norm);
  read_count(map, "d_expert", s.d_expert, 0);
  read_count(map, "d_shared_expert", s.d_shared_expert, 0);
  read_count(map, "first_dense_layers", s.first_dense_layers, 0);
  read_count(map, "moe_every", s.moe_every, 1);
  read_flag(map, "router_bias", s.router_bias);
  read_count(map, "attention_chunk", s.attention_chunk, 0);
  read_count(map, "global_every", s.global_every, 0);
  if (map.has("global_attention")) {
    s.global_attention = map.parsed("global_attention",
                                    [](std::string_view t) { return parse_attention_kind(t, "global_attention"); });
  }
  if (map.has("layer_types")) {
    for (const std::string& t : map.string_list("layer_types")) {
      try {
        s.layer_types.push_back(parse_attention_kind(t));
      } catch (const Error& e) {
        map.fail("layer_types", "layer " + std::to_string(s.layer_types.size()) + ": " + e.what());
      }
    }
  }
  read_flag(map, "attention_sinks", s.attention_sinks);
  read_count(map, "mtp_layers", s.mtp_layers, 0);
  if (map.has("source")) entry.source = map.string("source");
  entry.published_params = map.optional_integer("published_params", 1, UINT64_MAX);
  if (map.has("published_params_source")) entry.published_params_source = map.string("published_params_source");

  try {
    validate(s);
  } catch (const Error& e) {
    map.fail(e.key(), e.what(), e.kind());
  }
  return entry;
}

ModelEntry load_model_file(const std::string& path) {
  const std::string text = detail::read_text_file(path, "a model file", detail::kMaxYamlFileBytes);
  const std::filesystem::path file(path);
  const bool yaml = file.extension() == ".yaml" || file.extension() == ".yml";
  return parse_model_yaml(text, path, (yaml ? file.stem() : file.filename()).string());
}

std::vector<std::string> builtin_model_names() {
  std::vector<std::string> names;
  for (const detail::EmbeddedFile& f : detail::embedded_model_files()) names.emplace_back(f.name);
  std::sort(names.begin(), names.end());
  return names;
}

ModelEntry load_builtin_model(std::string_view name) {
  // Each parsed once: `check` over many plans and a sweep name the same models again and again.
  static std::mutex mutex;
  static std::map<std::string, ModelEntry, std::less<>> parsed;
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = parsed.find(name); it != parsed.end()) return it->second;
  for (const detail::EmbeddedFile& f : detail::embedded_model_files()) {
    if (f.name == name) {
      ModelEntry entry = parse_model_yaml(f.text, "configs/models/" + std::string(f.name) + ".yaml", std::string(name));
      entry.origin = "built-in";
      return parsed.emplace(std::string(name), std::move(entry)).first->second;
    }
  }
  const std::vector<std::string> close = closest_names(name, builtin_model_names());
  throw Error(ErrorKind::invalid_input,
              "unknown model '" + printable(name) + "'" +
                  (close.empty() ? std::string() : "; closest built-in models: " + quoted_list(close)) +
                  " (memplan models lists them all; a path to a .yaml file works too)",
              "model");
}

ModelEntry find_model(std::string_view name_or_path, const std::function<void(const std::string&)>& progress,
                      const std::string& as_model_type) {
  const std::string path(name_or_path);
  const auto ends = [&](std::string_view suffix) { return name_or_path.ends_with(suffix); };
  std::error_code ec;
  // A snapshot directory, a .safetensors file or an index: the config.json beside them
  // and the weights as their headers store them.
  if (std::filesystem::is_directory(path, ec) || ends(".safetensors") || ends(".safetensors.index.json")) {
    return load_checkpoint_model(path, as_model_type);
  }
  if (ends(".json")) return load_hf_config(path, as_model_type).entry;  // a Hugging Face config
  if (name_or_path.find('/') != std::string_view::npos && !ends(".gguf") && !ends(".yaml") && !ends(".yml") &&
      !std::filesystem::exists(path, ec)) {
    // ORG/NAME names a Hub model unless a file of that name is here.
    if (const std::optional<HubId> id = parse_hub_id(name_or_path)) return load_hub_model(*id, progress, as_model_type);
  }
  if (!as_model_type.empty()) {
    throw Error(ErrorKind::invalid_input,
                "`as` applies to a Hugging Face config.json, a snapshot or a Hub id; '" + printable(path) +
                    "' is a built-in model, a model file or a GGUF file",
                "as");
  }
  if (ends(".gguf")) return load_gguf_model(path).entry;  // a llama.cpp model
  if (ends(".yaml") || ends(".yml")) return load_model_file(path);
  if (name_or_path.find('/') != std::string_view::npos) return load_model_file(path);
  return load_builtin_model(name_or_path);
}

}  // namespace memplan
