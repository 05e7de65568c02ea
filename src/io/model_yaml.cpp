// The model description format: configs/models/*.yaml and users' own model files.

#include "memplan/io/model_file.hpp"

#include "memplan/core/error.hpp"
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
                                             "attn_output_gate",
                                             "d_expert",
                                             "d_shared_expert",
                                             "first_dense_layers",
                                             "moe_every",
                                             "router_bias",
                                             "shared_expert_gate",
                                             "attention_chunk",
                                             "global_every",
                                             "global_attention",
                                             "layer_types",
                                             "global_kv_heads",
                                             "global_d_head",
                                             "global_k_eq_v",
                                             "layer_scalar",
                                             "router_scales",
                                             "moe_norms",
                                             "kv_shared_layers",
                                             "double_wide_mlp",
                                             "per_layer_input",
                                             "q_lora_rank",
                                             "kv_lora_rank",
                                             "qk_nope_head_dim",
                                             "qk_rope_head_dim",
                                             "v_head_dim",
                                             "attention_sinks",
                                             "final_logit_softcapping",
                                             "mtp_layers",
                                             "mrope",
                                             "deepstack_layers",
                                             "ssm_version",
                                             "ssm_d_inner",
                                             "ssm_d_state",
                                             "ssm_d_conv",
                                             "ssm_dt_rank",
                                             "ssm_heads",
                                             "ssm_groups",
                                             "ssm_chunk",
                                             "ssm_conv_bias",
                                             "ssm_proj_bias",
                                             "ssm_out_proj_bias",
                                             "ssm_gated_norm",
                                             "ssm_dt_bc_norms",
                                             "parallel_ssm",
                                             "shared_blocks",
                                             "shared_adapter_rank",
                                             "shared_mlp_adapters",
                                             "shared_attention_adapters",
                                             "vision_d_model",
                                             "vision_layers",
                                             "vision_heads",
                                             "vision_d_mlp",
                                             "vision_patch",
                                             "vision_image_size",
                                             "vision_kind",
                                             "vision_merge",
                                             "vision_temporal_patch",
                                             "vision_min_pixels",
                                             "vision_max_pixels",
                                             "vision_longest_edge",
                                             "vision_positions",
                                             "vision_deepstack",
                                             "vision_soft_tokens",
                                             "encoder_layers",
                                             "encoder_positions",
                                             "encoder_mel_bins",
                                             "relative_buckets",
                                             "rotary_dim",
                                             "attn_k_bias",
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
  read_count(map, "ssm_version", s.ssm.version, 0);
  read_count(map, "ssm_d_inner", s.ssm.d_inner, 0);
  read_count(map, "ssm_d_state", s.ssm.d_state, 0);
  read_count(map, "ssm_d_conv", s.ssm.d_conv, 0);
  read_count(map, "ssm_dt_rank", s.ssm.dt_rank, 0);
  read_count(map, "ssm_heads", s.ssm.heads, 0);
  read_count(map, "ssm_groups", s.ssm.groups, 0);
  read_count(map, "ssm_chunk", s.ssm.chunk, 0);
  s.ssm.conv_bias = s.ssm.version != 3;  // a gated DeltaNet's convolution has none
  read_flag(map, "ssm_conv_bias", s.ssm.conv_bias);
  read_flag(map, "ssm_proj_bias", s.ssm.proj_bias);
  s.ssm.out_proj_bias = s.ssm.proj_bias;  // one flag for both unless out_proj's is given
  read_flag(map, "ssm_out_proj_bias", s.ssm.out_proj_bias);
  read_flag(map, "ssm_gated_norm", s.ssm.gated_norm);
  read_flag(map, "ssm_dt_bc_norms", s.ssm.dt_bc_norms);
  read_flag(map, "parallel_ssm", s.parallel_ssm);
  read_count(map, "shared_blocks", s.shared.blocks, 0);
  read_count(map, "shared_adapter_rank", s.shared.adapter_rank, 0);
  read_flag(map, "shared_mlp_adapters", s.shared.mlp_adapters);
  read_flag(map, "shared_attention_adapters", s.shared.attention_adapters);
  read_count(map, "vision_d_model", s.vision.d_model, 0);
  read_count(map, "vision_layers", s.vision.n_layers, 0);
  read_count(map, "vision_heads", s.vision.n_heads, 0);
  read_count(map, "vision_d_mlp", s.vision.d_mlp, 0);
  read_count(map, "vision_patch", s.vision.patch, 0);
  read_count(map, "vision_image_size", s.vision.image_size, 0);
  if (map.has("vision_kind")) s.vision.kind = map.parsed("vision_kind", parse_vision_kind);
  if (keeps_image_size(s.vision)) s.vision = qwen_vl_tower(s.vision, s.vision.kind);
  read_count(map, "vision_merge", s.vision.merge, 1);
  read_count(map, "vision_temporal_patch", s.vision.temporal_patch, 1);
  read_count(map, "vision_min_pixels", s.vision.min_pixels, 0);
  read_count(map, "vision_max_pixels", s.vision.max_pixels, 0);
  read_count(map, "vision_longest_edge", s.vision.longest_edge, 0);
  read_count(map, "vision_positions", s.vision.positions, 0);
  read_count(map, "vision_deepstack", s.vision.deepstack, 0);
  read_count(map, "vision_soft_tokens", s.vision.soft_tokens, 0);
  read_count(map, "encoder_layers", s.encoder.n_layers, 0);
  read_count(map, "encoder_positions", s.encoder.n_positions, 0);
  read_count(map, "encoder_mel_bins", s.encoder.mel_bins, 0);
  // A pure state-space model (ssm sizes, no layer_types, no attention beside the mixers) has
  // no attention heads to size.
  const bool attention_free = s.ssm.version != 0 && !map.has("layer_types") && !s.parallel_ssm;
  if (attention_free) {
    for (const char* key : {"n_heads", "n_kv_heads", "d_head"}) {
      if (map.has(key)) map.fail(key, std::string(key) + " is set but every layer is a state-space layer");
    }
  } else {
    s.n_heads = map.integer("n_heads", 1, detail::kMaxConfigSize);
    s.n_kv_heads = map.optional_integer("n_kv_heads", 1, detail::kMaxConfigSize).value_or(s.n_heads);
  }
  read_count(map, "q_lora_rank", s.mla.q_lora_rank, 0);
  read_count(map, "kv_lora_rank", s.mla.kv_lora_rank, 0);
  read_count(map, "qk_nope_head_dim", s.mla.qk_nope_head_dim, 0);
  read_count(map, "qk_rope_head_dim", s.mla.qk_rope_head_dim, 0);
  read_count(map, "v_head_dim", s.mla.v_head_dim, 0);
  if (!attention_free && map.has("d_head")) {
    s.d_head = map.integer("d_head", 1, detail::kMaxConfigSize);
  } else if (attention_free) {
    s.d_head = 0;
  } else if (s.mla.kv_lora_rank != 0) {
    s.d_head = s.mla.qk_nope_head_dim + s.mla.qk_rope_head_dim;  // the query/key head of latent attention
  } else if (s.d_model % s.n_heads != 0) {
    map.fail("d_head", "d_model " + std::to_string(s.d_model) + " is not divisible by n_heads " +
                           std::to_string(s.n_heads) + ": set d_head explicitly");
  } else {
    s.d_head = s.d_model / s.n_heads;
  }
  if (map.has("mlp")) s.mlp = map.parsed("mlp", parse_mlp_kind);
  if (s.mlp != MlpKind::none || map.has("d_mlp")) s.d_mlp = map.integer("d_mlp", 1, detail::kMaxConfigSize);
  if (map.has("activation")) s.activation = map.string("activation");
  s.vocab_size = map.integer("vocab_size", 1, detail::kMaxConfigSize);
  s.max_seq_len = map.integer("max_seq_len", 1, detail::kMaxConfigSize);
  if (map.has("positional")) s.positional = map.parsed("positional", parse_positional);
  read_count(map, "n_positions", s.n_positions, 1);
  read_count(map, "relative_buckets", s.relative_buckets, 0);
  read_count(map, "rotary_dim", s.rotary_dim, 0);
  if (map.has("norm")) s.norm = map.parsed("norm", parse_norm_kind);
  read_count(map, "norms_per_layer", s.norms_per_layer, 0);
  read_flag(map, "parallel_block", s.parallel_block);
  read_flag(map, "final_norm", s.final_norm);
  read_flag(map, "embedding_norm", s.embedding_norm);
  read_count(map, "type_vocab_size", s.type_vocab_size, 0);
  read_flag(map, "pooler", s.pooler);
  read_flag(map, "attn_qkv_bias", s.attn_qkv_bias);
  read_flag(map, "attn_k_bias", s.attn_k_bias);
  read_flag(map, "attn_out_bias", s.attn_out_bias);
  read_flag(map, "mlp_bias", s.mlp_bias);
  if (map.has("lm_head")) s.lm_head = map.parsed("lm_head", parse_lm_head);
  read_flag(map, "lm_head_bias", s.lm_head_bias);
  read_count(map, "experts", s.experts, 0);
  read_count(map, "experts_per_token", s.experts_per_token, 0);
  read_count(map, "sliding_window", s.sliding_window, 0);
  if (map.has("qk_norm")) s.qk_norm = map.parsed("qk_norm", parse_qk_norm);
  read_flag(map, "attn_output_gate", s.attn_output_gate);
  read_count(map, "d_expert", s.d_expert, 0);
  read_count(map, "d_shared_expert", s.d_shared_expert, 0);
  read_count(map, "first_dense_layers", s.first_dense_layers, 0);
  read_count(map, "moe_every", s.moe_every, 1);
  read_flag(map, "router_bias", s.router_bias);
  read_flag(map, "shared_expert_gate", s.shared_expert_gate);
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
  read_count(map, "global_kv_heads", s.global_kv_heads, 0);
  read_count(map, "global_d_head", s.global_d_head, 0);
  read_flag(map, "global_k_eq_v", s.global_k_eq_v);
  read_flag(map, "layer_scalar", s.layer_scalar);
  read_flag(map, "router_scales", s.router_scales);
  read_count(map, "moe_norms", s.moe_norms, 0);
  read_count(map, "kv_shared_layers", s.kv_shared_layers, 0);
  read_flag(map, "double_wide_mlp", s.double_wide_mlp);
  read_count(map, "per_layer_input", s.per_layer_input, 0);
  read_flag(map, "attention_sinks", s.attention_sinks);
  read_flag(map, "final_logit_softcapping", s.final_logit_softcapping);
  read_count(map, "mtp_layers", s.mtp_layers, 0);
  read_flag(map, "mrope", s.mrope);
  read_count(map, "deepstack_layers", s.deepstack_layers, 0);
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

}  // namespace memplan
