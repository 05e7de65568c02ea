#include "memplan/core/model_spec.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

#include "memplan/core/bytes.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/text.hpp"

namespace memplan {

namespace {

template <typename Enum, std::size_t N>
using Names = std::array<std::pair<Enum, std::string_view>, N>;

constexpr Names<Family, 42> kFamilies{{{Family::gpt2, "gpt2"},
                                       {Family::gpt_neox, "gpt-neox"},
                                       {Family::llama, "llama"},
                                       {Family::mistral, "mistral"},
                                       {Family::mixtral, "mixtral"},
                                       {Family::qwen2, "qwen2"},
                                       {Family::gemma, "gemma"},
                                       {Family::phi, "phi"},
                                       {Family::phi3, "phi3"},
                                       {Family::opt, "opt"},
                                       {Family::falcon, "falcon"},
                                       {Family::bert, "bert"},
                                       {Family::qwen3, "qwen3"},
                                       {Family::qwen3_moe, "qwen3-moe"},
                                       {Family::gemma2, "gemma2"},
                                       {Family::gemma3, "gemma3"},
                                       {Family::deepseek, "deepseek"},
                                       {Family::gpt_oss, "gpt-oss"},
                                       {Family::llama4, "llama4"},
                                       {Family::olmo2, "olmo2"},
                                       {Family::olmoe, "olmoe"},
                                       {Family::phimoe, "phimoe"},
                                       {Family::granite, "granite"},
                                       {Family::granitemoe, "granitemoe"},
                                       {Family::cohere, "cohere"},
                                       {Family::starcoder2, "starcoder2"},
                                       {Family::gpt_bigcode, "gpt-bigcode"},
                                       {Family::gptj, "gptj"},
                                       {Family::gpt_neo, "gpt-neo"},
                                       {Family::bloom, "bloom"},
                                       {Family::stablelm, "stablelm"},
                                       {Family::mamba, "mamba"},
                                       {Family::mamba2, "mamba2"},
                                       {Family::bamba, "bamba"},
                                       {Family::jamba, "jamba"},
                                       {Family::nemotron_h, "nemotron_h"},
                                       {Family::falcon_h1, "falcon_h1"},
                                       {Family::qwen3_next, "qwen3_next"},
                                       {Family::zamba2, "zamba2"},
                                       {Family::t5, "t5"},
                                       {Family::bart, "bart"},
                                       {Family::whisper, "whisper"}}};
constexpr Names<MlpKind, 3> kMlpKinds{{{MlpKind::plain, "plain"}, {MlpKind::gated, "gated"}, {MlpKind::none, "none"}}};
constexpr Names<Positional, 5> kPositionals{{{Positional::learned, "learned"},
                                             {Positional::rotary, "rotary"},
                                             {Positional::alibi, "alibi"},
                                             {Positional::none, "none"},
                                             {Positional::relative, "relative"}}};
constexpr Names<NormKind, 2> kNormKinds{{{NormKind::layernorm, "layernorm"}, {NormKind::rmsnorm, "rmsnorm"}}};
constexpr Names<LmHead, 3> kLmHeads{{{LmHead::tied, "tied"}, {LmHead::untied, "untied"}, {LmHead::none, "none"}}};
constexpr Names<AttentionKind, 7> kAttentionKinds{{{AttentionKind::full, "full"},
                                                   {AttentionKind::sliding, "sliding"},
                                                   {AttentionKind::chunked, "chunked"},
                                                   {AttentionKind::nope, "nope"},
                                                   {AttentionKind::mla, "mla"},
                                                   {AttentionKind::mamba, "mamba"},
                                                   {AttentionKind::mlp, "mlp"}}};
constexpr Names<QkNorm, 3> kQkNorms{{{QkNorm::none, "none"}, {QkNorm::head, "head"}, {QkNorm::width, "width"}}};
constexpr Names<VisionKind, 9> kVisionKinds{{{VisionKind::clip, "clip"},
                                             {VisionKind::qwen2_vl, "qwen2_vl"},
                                             {VisionKind::qwen2_5_vl, "qwen2_5_vl"},
                                             {VisionKind::qwen3_5, "qwen3_5"},
                                             {VisionKind::gemma3, "gemma3"},
                                             {VisionKind::paligemma, "paligemma"},
                                             {VisionKind::llava_next, "llava_next"},
                                             {VisionKind::idefics3, "idefics3"},
                                             {VisionKind::gemma4, "gemma4"}}};

template <typename Enum, std::size_t N>
std::string name_of(const Names<Enum, N>& names, Enum value) {
  for (const auto& [e, text] : names) {
    if (e == value) return std::string(text);
  }
  return "?";
}

template <typename Enum, std::size_t N>
Enum parse_name(const Names<Enum, N>& names, std::string_view text, const char* key) {
  std::vector<std::string> accepted;
  for (const auto& [e, name] : names) {
    if (name == text) return e;
    accepted.emplace_back(name);
  }
  throw Error(ErrorKind::invalid_input,
              "unknown " + std::string(key) + " '" + printable(text) + "'" + did_you_mean(text, accepted) +
                  "; accepted: " + quoted_list(accepted),
              key);
}

void require_positive(const char* key, std::uint64_t value) {
  if (value == 0) throw_invalid_input(key, std::string(key) + " must be at least 1");
}

void check_experts(const ModelSpec& s) {
  if (s.experts != 0) {
    if (s.moe_every == 0) throw_invalid_input("moe_every", "moe_every must be at least 1");
    if (s.first_dense_layers >= s.n_layers) {
      throw_invalid_input("first_dense_layers", "first_dense_layers " + std::to_string(s.first_dense_layers) +
                                                    " leaves none of the " + std::to_string(s.n_layers) +
                                                    " layers with experts");
    }
    return;
  }
  for (const auto& [key, value] : {std::pair<const char*, std::uint64_t>{"d_expert", s.d_expert},
                                   {"d_shared_expert", s.d_shared_expert},
                                   {"first_dense_layers", s.first_dense_layers}}) {
    if (value != 0) throw_invalid_input(key, std::string(key) + " is set but the model has no experts (experts: 0)");
  }
  if (s.router_bias) throw_invalid_input("router_bias", "router_bias is set but the model has no experts (experts: 0)");
}

void check_ssm(const ModelSpec& s) {
  const SsmSizes& m = s.ssm;
  if (s.parallel_ssm && m.version != 2)
    throw_invalid_input("parallel_ssm", "parallel_ssm runs a Mamba-2 mixer beside each attention: ssm_version 2");
  if (m.version == 0) {
    if (m.d_inner != 0 || m.d_state != 0 || m.d_conv != 0 || m.dt_rank != 0 || m.heads != 0 || m.groups != 0)
      throw_invalid_input("ssm_version",
                          "state-space sizes are set but ssm_version is 0: say 1 (Mamba), 2 (Mamba-2) or 3 "
                          "(gated DeltaNet)");
    return;
  }
  if (m.version > 3)
    throw_invalid_input("ssm_version", "ssm_version must be 1 (Mamba), 2 (Mamba-2) or 3 (gated DeltaNet)");
  require_positive("ssm_d_inner", m.d_inner);
  require_positive("ssm_d_state", m.d_state);
  require_positive("ssm_d_conv", m.d_conv);
  if (m.version == 1) {
    require_positive("ssm_dt_rank", m.dt_rank);
    if (m.heads != 0 || m.groups != 0 || m.chunk != 0)
      throw_invalid_input("ssm_heads", "Mamba (ssm_version 1) has no heads or groups: they are Mamba-2's");
    return;
  }
  require_positive("ssm_heads", m.heads);
  require_positive("ssm_groups", m.groups);
  require_positive("ssm_chunk", m.chunk);
  if (m.dt_rank != 0)
    throw_invalid_input("ssm_dt_rank", "ssm_version " + std::to_string(m.version) + " has no dt_rank: it is Mamba's");
  if (m.version == 3 && m.conv_bias)
    throw_invalid_input("ssm_conv_bias", "a gated DeltaNet's convolution (ssm_version 3) has no bias");
  if (m.d_inner % m.heads != 0) {
    throw_invalid_input("ssm_heads", "ssm_heads " + std::to_string(m.heads) + " must divide ssm_d_inner " +
                                         std::to_string(m.d_inner) + " (each head is d_inner / heads wide)");
  }
  if (m.heads % m.groups != 0) {
    throw_invalid_input("ssm_groups", "ssm_groups " + std::to_string(m.groups) + " must divide ssm_heads " +
                                          std::to_string(m.heads) +
                                          (m.version == 3 ? " (key heads are shared by value heads)" : ""));
  }
}

// Zamba2's shared blocks (see SharedBlocks), once layer_types is known to fit n_layers.
void check_shared_blocks(const ModelSpec& s) {
  const SharedBlocks& b = s.shared;
  if (b.blocks == 0) {
    if (b.adapter_rank != 0 || b.mlp_adapters || b.attention_adapters)
      throw_invalid_input("shared_adapter_rank", "shared-block adapters are set but shared_blocks is 0");
    return;
  }
  if (!s.parallel_ssm || s.layer_types.empty())
    throw_invalid_input("shared_blocks",
                        "shared_blocks (Zamba2's) are used by a hybrid's attention layers: they need "
                        "parallel_ssm and layer_types saying which layers attend");
  if (b.blocks > attention_layers(s))
    throw_invalid_input("shared_blocks", "shared_blocks " + std::to_string(b.blocks) + " is more than the " +
                                             std::to_string(attention_layers(s)) + " attention layers that use them");
  if ((b.mlp_adapters || b.attention_adapters) != (b.adapter_rank != 0))
    throw_invalid_input("shared_adapter_rank",
                        "shared-block adapters need a rank (shared_adapter_rank) and a place (shared_mlp_adapters, "
                        "shared_attention_adapters), both or neither");
  if (s.mlp == MlpKind::none || s.experts != 0 || s.mla.kv_lora_rank != 0 || mlp_only_layers(s) != 0)
    throw_invalid_input("shared_blocks",
                        "a shared block holds plain attention and a dense MLP: no experts, "
                        "latent attention or MLP-only layers beside it");
  if (checked_mul(s.n_heads, s.d_head, "n_heads * d_head") != checked_mul(2, s.d_model, "2 d_model"))
    throw_invalid_input("d_head", "a shared block's heads span its 2 d_model input: n_heads x d_head must be " +
                                      std::to_string(2 * s.d_model));
}

// Gemma 4's global heads (see ModelSpec::global_kv_heads): beside sliding layers, over plain attention.
void check_global_heads(const ModelSpec& s) {
  const auto counts = attention_layer_counts(s);
  const auto has = [&](AttentionKind k) {
    return std::any_of(counts.begin(), counts.end(), [k](const auto& c) { return c.first == k; });
  };
  if (!has(AttentionKind::full) || s.mla.kv_lora_rank != 0 || s.ssm.version != 0)
    throw_invalid_input(s.global_kv_heads != 0 ? "global_kv_heads"
                        : s.global_d_head != 0 ? "global_d_head"
                                               : "global_k_eq_v",
                        "global heads are the full-attention layers' own (Gemma 4): the model needs full-attention "
                        "layers, plain attention, no state-space layers");
  const std::uint64_t kv = s.global_kv_heads != 0 ? s.global_kv_heads : s.n_kv_heads;
  if (kv > s.n_heads || s.n_heads % kv != 0) {
    throw_invalid_input("global_kv_heads", "global_kv_heads " + std::to_string(kv) + " must divide n_heads " +
                                               std::to_string(s.n_heads) +
                                               " (each key/value head serves a whole group of query heads)");
  }
}

void check_vision(const ModelSpec& s) {
  const VisionTower& v = s.vision;
  if (v.d_model == 0) {
    if (v.n_layers != 0 || v.n_heads != 0 || v.d_mlp != 0 || v.patch != 0 || v.image_size != 0 || v.merge != 1 ||
        v.temporal_patch != 1 || v.min_pixels != 0 || v.max_pixels != 0 || v.longest_edge != 0 || v.positions != 0 ||
        v.soft_tokens != 0 || v.kind != VisionKind::clip)
      throw_invalid_input("vision_d_model", "vision tower sizes are set but vision_d_model is 0");
    return;
  }
  require_positive("vision_layers", v.n_layers);
  require_positive("vision_heads", v.n_heads);
  require_positive("vision_d_mlp", v.d_mlp);
  require_positive("vision_patch", v.patch);
  if (v.d_model % v.n_heads != 0) {
    throw_invalid_input("vision_heads", "vision_heads " + std::to_string(v.n_heads) + " must divide vision_d_model " +
                                            std::to_string(v.d_model));
  }
  if (v.kind == VisionKind::gemma4) {  // Gemma 4's: images at their own aspect ratio, up to soft_tokens each
    if (v.positions == 0 || v.soft_tokens == 0 || v.merge == 0 || v.image_size != 0 || v.deepstack != 0)
      throw_invalid_input("vision_soft_tokens",
                          "a gemma4 tower has a 2-D position table (vision_positions, position_embedding_size "
                          "10,240), a token budget an image (vision_soft_tokens, 280) and its pooling "
                          "(vision_merge, 3), and no vision_image_size");
    return;
  }
  if (v.soft_tokens != 0)
    throw_invalid_input("vision_soft_tokens", "vision_soft_tokens is Gemma 4's (vision_kind gemma4)");
  if ((v.kind == VisionKind::qwen3_5) != (v.positions != 0)) {
    throw_invalid_input("vision_positions", v.kind == VisionKind::qwen3_5
                                                ? "a qwen3_5 tower has a learned position table: vision_positions "
                                                  "(num_position_embeddings, 2,304 in Qwen3.5's checkpoints)"
                                                : "vision_positions is Qwen3.5's position table (vision_kind qwen3_5)");
  }
  if (v.deepstack != 0 && v.kind != VisionKind::qwen3_5) {
    throw_invalid_input("vision_deepstack", "vision_deepstack is Qwen3-VL's deepstack mergers (vision_kind qwen3_5)");
  }
  if (v.deepstack > v.n_layers) {
    throw_invalid_input("vision_deepstack", "vision_deepstack " + std::to_string(v.deepstack) +
                                                " is more mergers than the tower's " + std::to_string(v.n_layers) +
                                                " layers");
  }
  if (!keeps_image_size(v)) {
    if (v.image_size < v.patch || v.image_size % v.patch != 0) {
      throw_invalid_input("vision_image_size", "vision_image_size " + std::to_string(v.image_size) +
                                                   " must be a whole number of patches of " + std::to_string(v.patch));
    }
    const std::uint64_t side = v.image_size / v.patch;
    const bool merges = v.kind == VisionKind::gemma3 || v.kind == VisionKind::idefics3;
    if (merges && (v.merge == 0 || side % v.merge != 0)) {
      throw_invalid_input("vision_merge", "vision_merge " + std::to_string(v.merge) + " must divide the " +
                                              std::to_string(side) + " patches of an image's side (" +
                                              (v.kind == VisionKind::gemma3 ? "Gemma 3 pools" : "Idefics3 shuffles") +
                                              " them)");
    }
    for (const auto& [key, set] : {std::pair<const char*, bool>{"vision_merge", v.merge != 1 && !merges},
                                   {"vision_longest_edge", v.longest_edge != 0 && v.kind != VisionKind::idefics3},
                                   {"vision_temporal_patch", v.temporal_patch != 1},
                                   {"vision_min_pixels", v.min_pixels != 0},
                                   {"vision_max_pixels", v.max_pixels != 0}}) {
      if (set)
        throw_invalid_input(key, std::string(key) + " does not apply to vision_kind " + to_string(v.kind) +
                                     ", which resizes every image to vision_image_size");
    }
    return;
  }
  if (v.image_size != 0)
    throw_invalid_input("vision_image_size",
                        "a Qwen vision tower takes images of any size: leave vision_image_size out");
  require_positive("vision_merge", v.merge);
  require_positive("vision_temporal_patch", v.temporal_patch);
  require_positive("vision_min_pixels", v.min_pixels);
  if (v.max_pixels < v.min_pixels) {
    throw_invalid_input("vision_max_pixels", "vision_max_pixels " + std::to_string(v.max_pixels) +
                                                 " is below vision_min_pixels " + std::to_string(v.min_pixels));
  }
}

void check_encoder(const ModelSpec& s) {
  const EncoderStack& e = s.encoder;
  if (s.positional == Positional::relative) {
    require_positive("relative_buckets", s.relative_buckets);
  } else if (s.relative_buckets != 0) {
    throw_invalid_input("relative_buckets",
                        "relative_buckets sizes relative-position bias tables, but positional is '" +
                            to_string(s.positional) + "'");
  }
  if (!s.attn_k_bias && !s.attn_qkv_bias)
    throw_invalid_input("attn_k_bias", "attn_k_bias: false leaves out a key bias, but attn_qkv_bias is false");
  if (e.n_layers == 0) {
    if (e.n_positions != 0 || e.mel_bins != 0)
      throw_invalid_input("encoder_layers", "encoder sizes are set but encoder_layers is 0");
    return;
  }
  if (s.lm_head == LmHead::none)
    throw_invalid_input("lm_head", "an encoder-decoder's decoder needs an LM head (lm_head: tied or untied)");
  // Only what T5, BART and Whisper are: the estimators price no other mix.
  for (const auto& [key, set] : {std::pair<const char*, bool>{"experts", s.experts != 0},
                                 {"ssm_version", s.ssm.version != 0},
                                 {"vision_d_model", s.vision.d_model != 0},
                                 {"layer_types", !s.layer_types.empty()},
                                 {"sliding_window", s.sliding_window != 0},
                                 {"kv_lora_rank", s.mla.kv_lora_rank != 0}}) {
    if (set)
      throw_invalid_input(key, std::string(key) +
                                   " is set, but memplan describes encoder-decoders with one "
                                   "kind of attention and a dense MLP (T5, BART, Whisper)");
  }
  if (s.n_kv_heads != s.n_heads)
    throw_invalid_input("n_kv_heads",
                        "an encoder-decoder's attention has a key/value head per query head: "
                        "n_kv_heads must equal n_heads (" +
                            std::to_string(s.n_heads) + ")");
  if (e.mel_bins != 0 && e.n_positions == 0) {
    throw_invalid_input("encoder_positions",
                        "an audio encoder (encoder_mel_bins) needs its position table: encoder_positions, the "
                        "frames it reads after the convolutions (Whisper: 1500)");
  }
}

void check_attention(const ModelSpec& s) {
  const MlaSizes& m = s.mla;
  const bool mla = m.kv_lora_rank != 0;
  if (mla) {
    require_positive("qk_rope_head_dim", m.qk_rope_head_dim);
    require_positive("v_head_dim", m.v_head_dim);
    if (m.qk_nope_head_dim + m.qk_rope_head_dim != s.d_head) {
      throw_invalid_input("d_head", "d_head " + std::to_string(s.d_head) +
                                        " must be qk_nope_head_dim + qk_rope_head_dim (" +
                                        std::to_string(m.qk_nope_head_dim) + " + " +
                                        std::to_string(m.qk_rope_head_dim) + ") for latent attention");
    }
    if (s.n_kv_heads != s.n_heads) {
      throw_invalid_input("n_kv_heads",
                          "latent attention decompresses keys and values for every head: n_kv_heads must equal "
                          "n_heads (" +
                              std::to_string(s.n_heads) + ")");
    }
  } else if (m.q_lora_rank != 0 || m.qk_nope_head_dim != 0 || m.qk_rope_head_dim != 0 || m.v_head_dim != 0) {
    throw_invalid_input("kv_lora_rank", "latent attention sizes are set but kv_lora_rank is 0");
  }
  if (s.global_attention != AttentionKind::full && s.global_attention != AttentionKind::nope) {
    throw_invalid_input("global_attention",
                        "global_attention must be 'full' or 'nope', not '" + to_string(s.global_attention) + "'");
  }
  if (s.global_every != 0 && s.sliding_window == 0 && s.attention_chunk == 0) {
    throw_invalid_input("global_every",
                        "global_every makes every " + std::to_string(s.global_every) +
                            "th layer global, but the others need a sliding_window or an attention_chunk");
  }
  if (s.sliding_window != 0 && s.attention_chunk != 0 && s.layer_types.empty()) {
    throw_invalid_input("attention_chunk",
                        "a model has sliding or chunked local layers, not both, unless layer_types says "
                        "which layer is which");
  }
  if (!s.layer_types.empty()) {
    if (s.layer_types.size() != s.n_layers) {
      throw_invalid_input("layer_types", "layer_types lists " + std::to_string(s.layer_types.size()) +
                                             " layers but n_layers is " + std::to_string(s.n_layers));
    }
    for (const AttentionKind k : s.layer_types) {
      if (k == AttentionKind::sliding && s.sliding_window == 0)
        throw_invalid_input("layer_types", "layer_types has sliding layers but sliding_window is 0");
      if (k == AttentionKind::chunked && s.attention_chunk == 0)
        throw_invalid_input("layer_types", "layer_types has chunked layers but attention_chunk is 0");
      if (k == AttentionKind::mamba) {
        if (s.ssm.version == 0)
          throw_invalid_input("layer_types", "layer_types has 'mamba' layers but ssm_version is 0");
        continue;
      }
      if (k == AttentionKind::mlp) {
        if (s.mlp == MlpKind::none)
          throw_invalid_input("layer_types",
                              "layer_types has 'mlp' layers (an MLP alone), which need an MLP: mlp plain or gated");
        continue;
      }
      if ((k == AttentionKind::mla) != mla)
        throw_invalid_input("layer_types", mla ? "a latent-attention model's layers are all 'mla'"
                                               : "layer_types has 'mla' layers but kv_lora_rank is 0");
    }
  }
}

}  // namespace

std::string to_string(Family value) { return name_of(kFamilies, value); }
std::string to_string(MlpKind value) { return name_of(kMlpKinds, value); }
std::string to_string(Positional value) { return name_of(kPositionals, value); }
std::string to_string(NormKind value) { return name_of(kNormKinds, value); }
std::string to_string(LmHead value) { return name_of(kLmHeads, value); }

Family parse_family(std::string_view text) { return parse_name(kFamilies, text, "family"); }
MlpKind parse_mlp_kind(std::string_view text) { return parse_name(kMlpKinds, text, "mlp"); }
Positional parse_positional(std::string_view text) { return parse_name(kPositionals, text, "positional"); }
NormKind parse_norm_kind(std::string_view text) { return parse_name(kNormKinds, text, "norm"); }
LmHead parse_lm_head(std::string_view text) { return parse_name(kLmHeads, text, "lm_head"); }
std::string to_string(AttentionKind value) { return name_of(kAttentionKinds, value); }
std::string to_string(QkNorm value) { return name_of(kQkNorms, value); }
AttentionKind parse_attention_kind(std::string_view text, const char* key) {
  return parse_name(kAttentionKinds, text, key);
}
QkNorm parse_qk_norm(std::string_view text) { return parse_name(kQkNorms, text, "qk_norm"); }
std::string to_string(VisionKind value) { return name_of(kVisionKinds, value); }
VisionKind parse_vision_kind(std::string_view text) { return parse_name(kVisionKinds, text, "vision_kind"); }

namespace {
// The kind of the layers outside the pattern's global ones.
AttentionKind local_attention(const ModelSpec& s) {
  // Without layer_types a state-space model is pure, unless its mixers run beside attention.
  if (s.ssm.version != 0 && !s.parallel_ssm) return AttentionKind::mamba;
  if (s.mla.kv_lora_rank != 0) return AttentionKind::mla;
  if (s.attention_chunk != 0) return AttentionKind::chunked;
  return s.sliding_window != 0 ? AttentionKind::sliding : AttentionKind::full;
}

// How many of the layers numbered [0, end) (counting from 1: layers 1..end) are multiples of `every`.
std::uint64_t multiples_below(std::uint64_t end, std::uint64_t every) { return every == 0 ? 0 : end / every; }
}  // namespace

AttentionKind attention_kind(const ModelSpec& s, std::uint64_t layer) {
  if (!s.layer_types.empty()) return s.layer_types.at(layer);
  if (s.global_every != 0 && s.mla.kv_lora_rank == 0 && (layer + 1) % s.global_every == 0) return s.global_attention;
  return local_attention(s);
}

bool has_global_heads(const ModelSpec& s) { return s.global_kv_heads != 0 || s.global_d_head != 0 || s.global_k_eq_v; }

std::vector<std::pair<AttentionKind, std::uint64_t>> cache_layer_counts(const ModelSpec& s) {
  if (s.kv_shared_layers == 0) return attention_layer_counts(s);
  std::vector<std::pair<AttentionKind, std::uint64_t>> out;
  for (std::uint64_t il = 0; il + s.kv_shared_layers < s.n_layers; ++il) {
    const AttentionKind kind = attention_kind(s, il);
    if (!attends(kind)) continue;
    const auto same = std::find_if(out.begin(), out.end(), [kind](const auto& c) { return c.first == kind; });
    if (same != out.end()) {
      ++same->second;
    } else {
      out.emplace_back(kind, 1);
    }
  }
  return out;
}

ModelSpec global_layer_view(const ModelSpec& s) {
  ModelSpec g = s;
  if (s.global_kv_heads != 0) g.n_kv_heads = s.global_kv_heads;
  if (s.global_d_head != 0) g.d_head = s.global_d_head;
  return g;
}

std::vector<std::pair<AttentionKind, std::uint64_t>> attention_layer_counts(const ModelSpec& s) {
  std::vector<std::pair<AttentionKind, std::uint64_t>> out;
  const auto add = [&out](AttentionKind kind, std::uint64_t layers) {
    if (layers == 0) return;
    const auto same = std::find_if(out.begin(), out.end(), [kind](const auto& c) { return c.first == kind; });
    if (same != out.end()) {
      same->second += layers;
    } else {
      out.emplace_back(kind, layers);
    }
  };
  if (!s.layer_types.empty()) {
    for (const AttentionKind kind : s.layer_types) {
      if (kind != AttentionKind::mlp) add(kind, 1);  // an MLP alone has no mixer to count
    }
    return out;
  }
  const std::uint64_t global = s.mla.kv_lora_rank == 0 ? multiples_below(s.n_layers, s.global_every) : 0;
  if (s.global_every == 1) add(s.global_attention, global);  // layer 0 is global: it comes first
  add(local_attention(s), s.n_layers - global);
  add(s.global_attention, s.global_every == 1 ? 0 : global);
  return out;
}

std::uint64_t ssm_conv_channels(const SsmSizes& m) {
  if (m.version == 1) return m.d_inner;
  return checked_add(m.d_inner, checked_mul(2 * m.groups, m.d_state, "2 groups x d_state"), "conv channels");
}

std::uint64_t mlp_only_layers(const ModelSpec& s) {
  return static_cast<std::uint64_t>(std::count(s.layer_types.begin(), s.layer_types.end(), AttentionKind::mlp));
}

std::uint64_t ssm_only_layers(const ModelSpec& s) {
  if (s.ssm.version == 0) return 0;
  if (s.layer_types.empty()) return s.parallel_ssm ? 0 : s.n_layers;
  return static_cast<std::uint64_t>(std::count(s.layer_types.begin(), s.layer_types.end(), AttentionKind::mamba));
}

std::uint64_t ssm_layers(const ModelSpec& s) {
  if (s.ssm.version == 0) return 0;
  return s.parallel_ssm ? s.n_layers - mlp_only_layers(s) : ssm_only_layers(s);
}

std::string ssm_layers_text(const ModelSpec& s) {
  if (!s.parallel_ssm)
    return std::to_string(ssm_layers(s)) +
           (s.ssm.version == 3 ? " gated DeltaNet layers" : " state-space (Mamba) layers");
  const std::string beside = std::to_string(attention_layers(s)) +
                             " layers that each run a Mamba-2 mixer beside their attention";
  const std::uint64_t alone = ssm_only_layers(s);
  return alone == 0 ? beside : std::to_string(alone) + " state-space (Mamba-2) layers and " + beside;
}

ModelSpec encoder_as_model(const ModelSpec& s) {
  ModelSpec e = s;
  e.n_layers = s.encoder.n_layers;
  e.encoder = {};
  e.lm_head = LmHead::none;
  e.lm_head_bias = false;
  return e;
}

namespace {
// Python's round(n / f) * f for positive integers: halves go to the even multiple.
std::uint64_t round_half_even(std::uint64_t n, std::uint64_t f) {
  std::uint64_t q = n / f;
  const std::uint64_t twice = 2 * (n % f);
  if (twice > f || (twice == f && q % 2 == 1)) ++q;
  return q * f;
}
}  // namespace

namespace {
// LLaVA-NeXT's processor (select_best_resolution, _get_number_of_features): the pinpoint
// (height, width) that keeps most of the image's pixels, then wastes least; its tiles of
// image_size; the tiles' patch grid unpadded to the image's aspect ratio, a newline token per
// row, and the resized whole image's patches.
ImageGrid anyres_grid(const VisionTower& v, std::uint64_t width, std::uint64_t height) {
  if (width == 0 || height == 0) throw_invalid_input("image_size", "an image needs a width and a height of 1 or more");
  // LLaVA-1.6's image_grid_pinpoints, in units of image_size (336): (height, width).
  constexpr std::array<std::pair<std::uint64_t, std::uint64_t>, 5> kPinpoints{{{1, 2}, {2, 1}, {2, 2}, {3, 1}, {1, 3}}};
  const double w = static_cast<double>(width), h = static_cast<double>(height);
  // Python starts min_wasted_resolution at infinity: an image too thin to keep a pixel at any
  // pinpoint still gets the least wasteful one.
  std::uint64_t best_h = 0, best_w = 0, max_effective = 0, min_wasted = std::numeric_limits<std::uint64_t>::max();
  for (const auto& [ph, pw] : kPinpoints) {
    const std::uint64_t pin_h = ph * v.image_size, pin_w = pw * v.image_size;
    const double scale = std::min(static_cast<double>(pin_w) / w, static_cast<double>(pin_h) / h);
    const auto down_w = static_cast<std::uint64_t>(w * scale), down_h = static_cast<std::uint64_t>(h * scale);
    const std::uint64_t effective = std::min(checked_mul(down_w, down_h, "pixels"),
                                             checked_mul(width, height, "pixels"));
    const std::uint64_t wasted = pin_w * pin_h - effective;
    if (effective > max_effective || (effective == max_effective && wasted < min_wasted)) {
      max_effective = effective;
      min_wasted = wasted;
      best_h = pin_h;
      best_w = pin_w;
    }
  }
  const std::uint64_t side = v.image_size / v.patch;
  std::uint64_t rows = side * (best_h / v.image_size), cols = side * (best_w / v.image_size);
  // int(round(x, 7)): the unpadded side, rounded off float noise first.
  const auto whole = [](double x) { return static_cast<std::uint64_t>(std::round(x * 1e7) / 1e7); };
  if (w / h > static_cast<double>(cols) / static_cast<double>(rows)) {
    const std::uint64_t new_rows = whole(h * (static_cast<double>(cols) / w));
    rows -= 2 * ((rows - new_rows) / 2);
  } else {
    const std::uint64_t new_cols = whole(w * (static_cast<double>(rows) / h));
    cols -= 2 * ((cols - new_cols) / 2);
  }
  const std::uint64_t tokens = rows * cols + rows + side * side;  // unpadded, newlines, the whole image
  const std::uint64_t crops = 1 + (best_h / v.image_size) * (best_w / v.image_size);
  return {best_w, best_h, side * side + 1, tokens, crops};
}

// Idefics3ImageProcessor: the longest side resized to longest_edge (the other by the aspect
// ratio, made even; both at most 4096), then both rounded up to whole tiles of image_size; a
// larger image is cut into those tiles and resized whole to one more. Idefics3Processor writes
// each tile as a separator, <row_r_col_c> and its tokens, a newline after each row (the last
// one's merged with the next into one "\n\n" token), then a newline, a separator,
// <global-img>, the whole image's tokens and a separator.
ImageGrid idefics3_grid(const VisionTower& v, std::uint64_t width, std::uint64_t height) {
  const std::uint64_t tile_tokens = image_tokens(v), side = v.image_size / v.patch;
  const ImageGrid single{v.image_size, v.image_size, side * side, tile_tokens + 3, 1};
  if (v.longest_edge == 0) return single;
  if (width == 0 || height == 0) throw_invalid_input("image_size", "an image needs a width and a height of 1 or more");
  // _resize_output_size_rescale_to_max_len, then _resize_output_size_scale_below_upper_bound.
  const auto even = [](std::uint64_t n) { return n % 2 != 0 ? n + 1 : n; };
  double w = static_cast<double>(width), h = static_cast<double>(height);
  const double aspect = w / h;
  if (w >= h) {
    w = static_cast<double>(v.longest_edge);
    h = static_cast<double>(even(static_cast<std::uint64_t>(w / aspect)));
  } else {
    h = static_cast<double>(v.longest_edge);
    w = static_cast<double>(even(static_cast<std::uint64_t>(h * aspect)));
  }
  h = std::max(h, 1.0);
  w = std::max(w, 1.0);
  constexpr double kMaxSide = 4096;
  const double bounded_aspect = w / h;
  if (w >= h && w > kMaxSide) {
    w = kMaxSide;
    h = std::max(1.0, std::floor(w / bounded_aspect));
  } else if (h > w && h > kMaxSide) {
    h = kMaxSide;
    w = std::max(1.0, std::floor(h * bounded_aspect));
  }
  // resize_for_vision_encoder: both sides up to multiples of the tile, by the aspect ratio.
  const double tile = static_cast<double>(v.image_size), ratio = w / h;
  if (w >= h) {
    w = std::ceil(w / tile) * tile;
    h = std::ceil(std::floor(w / ratio) / tile) * tile;
  } else {
    h = std::ceil(h / tile) * tile;
    w = std::ceil(std::floor(h * ratio) / tile) * tile;
  }
  const auto rows = static_cast<std::uint64_t>(h / tile), cols = static_cast<std::uint64_t>(w / tile);
  if (rows <= 1 && cols <= 1) return single;
  const std::uint64_t tiles = rows * cols;
  const std::uint64_t tokens = checked_add(checked_mul(tiles, tile_tokens + 2, "tile tokens"), rows + tile_tokens + 3,
                                           "image tokens");
  return {static_cast<std::uint64_t>(w), static_cast<std::uint64_t>(h), side * side, tokens, tiles + 1};
}
}  // namespace

ImageGrid image_grid(const VisionTower& v, std::uint64_t width, std::uint64_t height) {
  if (v.kind == VisionKind::llava_next) return anyres_grid(v, width, height);
  if (v.kind == VisionKind::idefics3) return idefics3_grid(v, width, height);
  if (v.kind == VisionKind::gemma4) {  // priced at its budget, the most an image becomes (no size)
    const std::uint64_t tokens = v.soft_tokens;
    return {0, 0, checked_mul(tokens, v.merge * v.merge, "patches per image"), tokens};
  }
  if (!keeps_image_size(v)) {  // the processor resizes (LLaVA: and crops) every image to image_size square
    const std::uint64_t side = v.image_size / v.patch;
    const bool class_token = v.kind == VisionKind::clip;
    return {v.image_size, v.image_size, side * side + (class_token ? 1 : 0), image_tokens(v)};
  }
  if (width == 0 || height == 0) throw_invalid_input("image_size", "an image needs a width and a height of 1 or more");
  if (std::max(width, height) > 200 * std::min(width, height)) {
    throw_invalid_input("image_size", "Qwen2-VL's processor refuses images whose aspect ratio is above 200 (" +
                                          std::to_string(width) + "x" + std::to_string(height) + ")");
  }
  // transformers' smart_resize (Qwen2VLImageProcessor), its floats where it uses them.
  const std::uint64_t f = checked_mul(v.patch, v.merge, "patch x merge");
  std::uint64_t h = std::max(f, round_half_even(height, f)), w = std::max(f, round_half_even(width, f));
  const double pixels = static_cast<double>(width) * static_cast<double>(height);
  const double factor = static_cast<double>(f);
  if (checked_mul(h, w, "resized pixels") > v.max_pixels) {
    const double beta = std::sqrt(pixels / static_cast<double>(v.max_pixels));
    h = std::max(f, static_cast<std::uint64_t>(std::floor(static_cast<double>(height) / beta / factor)) * f);
    w = std::max(f, static_cast<std::uint64_t>(std::floor(static_cast<double>(width) / beta / factor)) * f);
  } else if (h * w < v.min_pixels) {
    const double beta = std::sqrt(static_cast<double>(v.min_pixels) / pixels);
    h = static_cast<std::uint64_t>(std::ceil(static_cast<double>(height) * beta / factor)) * f;
    w = static_cast<std::uint64_t>(std::ceil(static_cast<double>(width) * beta / factor)) * f;
  }
  const std::uint64_t patches = checked_mul(h / v.patch, w / v.patch, "patches per image");
  return {w, h, patches, patches / (v.merge * v.merge)};
}

ModelSpec vision_as_model(const ModelSpec& s) {
  const VisionTower& v = s.vision;
  ModelSpec t;
  t.name = s.name + "'s vision tower";
  t.d_model = v.d_model;
  t.n_layers = v.n_layers;
  t.n_heads = v.n_heads;
  t.n_kv_heads = v.n_heads;
  t.d_head = v.d_model / v.n_heads;
  // Qwen2.5-VL's and Gemma 4's blocks: RMS norms and a gated MLP; Gemma 4's rotate q and k
  // (2-D positions) after per-head norms.
  const bool rms_gated = v.kind == VisionKind::qwen2_5_vl || v.kind == VisionKind::gemma4;
  t.mlp = rms_gated ? MlpKind::gated : MlpKind::plain;
  t.d_mlp = v.d_mlp;
  t.norm = rms_gated ? NormKind::rmsnorm : NormKind::layernorm;
  t.positional = keeps_image_size(v) || v.kind == VisionKind::gemma4 ? Positional::rotary : Positional::learned;
  if (v.kind == VisionKind::gemma4) t.qk_norm = QkNorm::head;
  t.lm_head = LmHead::none;
  t.vocab_size = 0;
  return t;
}

bool is_moe_layer(const ModelSpec& s, std::uint64_t layer) {
  // Where the MLPs are layers of their own (Nemotron-H), experts make every one of them MoE (Nemotron 3).
  if (mlp_only_layers(s) > 0) return s.experts > 0 && attention_kind(s, layer) == AttentionKind::mlp;
  return s.experts > 0 && layer >= s.first_dense_layers && s.moe_every != 0 && (layer + 1) % s.moe_every == 0;
}

bool layer_holds(const ModelSpec& s, LayerSet set, std::uint64_t layer) {
  switch (set) {
    case LayerSet::none: return false;
    case LayerSet::all: return true;
    case LayerSet::dense_mlp:
      return mlp_only_layers(s) > 0 ? attention_kind(s, layer) == AttentionKind::mlp && s.experts == 0
                                    : !is_moe_layer(s, layer);
    case LayerSet::moe_mlp: return is_moe_layer(s, layer);
    case LayerSet::attention: return attends(attention_kind(s, layer));
    case LayerSet::ssm:
      return attention_kind(s, layer) == AttentionKind::mamba || (s.parallel_ssm && attends(attention_kind(s, layer)));
    case LayerSet::ssm_only: return attention_kind(s, layer) == AttentionKind::mamba;
    case LayerSet::global_attention: return has_global_heads(s) && attention_kind(s, layer) == AttentionKind::full;
    case LayerSet::local_attention:
      return attends(attention_kind(s, layer)) &&
             !(has_global_heads(s) && attention_kind(s, layer) == AttentionKind::full);
  }
  return false;
}

std::uint64_t layers_in(const ModelSpec& s, LayerSet set, std::uint64_t first, std::uint64_t count) {
  const std::uint64_t end = count > s.n_layers - std::min(first, s.n_layers) ? s.n_layers : first + count;
  const std::uint64_t begin = std::min(first, end);
  const std::uint64_t in_range = end - begin;
  if (set == LayerSet::none) return 0;
  if (set == LayerSet::all) return in_range;
  if (set == LayerSet::global_attention || set == LayerSet::local_attention) {
    // Full-attention layers with heads of their own: the pattern's multiples of global_every in
    // closed form, else listed (none without global heads).
    std::uint64_t full = 0;
    if (has_global_heads(s) && !s.layer_types.empty()) {
      for (std::uint64_t i = begin; i < end; ++i) full += s.layer_types[i] == AttentionKind::full ? 1 : 0;
    } else if (has_global_heads(s) && s.global_every != 0 && s.global_attention == AttentionKind::full) {
      full = multiples_below(end, s.global_every) - multiples_below(begin, s.global_every);
    } else if (has_global_heads(s) && local_attention(s) == AttentionKind::full) {
      full = in_range;
    }
    return set == LayerSet::global_attention ? full : layers_in(s, LayerSet::attention, begin, end - begin) - full;
  }
  if (set == LayerSet::attention || set == LayerSet::ssm || set == LayerSet::ssm_only ||
      ((set == LayerSet::dense_mlp || set == LayerSet::moe_mlp) && mlp_only_layers(s) > 0)) {
    std::uint64_t ssm = 0, mlp = 0;  // layers with a state-space mixer alone, with an MLP alone
    if (s.ssm.version != 0 && s.layer_types.empty() && !s.parallel_ssm) ssm = in_range;
    for (std::uint64_t i = begin; i < end && !s.layer_types.empty(); ++i) {
      ssm += s.layer_types[i] == AttentionKind::mamba ? 1 : 0;
      mlp += s.layer_types[i] == AttentionKind::mlp ? 1 : 0;
    }
    // The model's MLPs are layers of their own, all dense or (with experts) all MoE.
    if (set == LayerSet::dense_mlp) return s.experts == 0 ? mlp : 0;
    if (set == LayerSet::moe_mlp) return s.experts == 0 ? 0 : mlp;
    if (set == LayerSet::ssm_only) return ssm;
    if (set == LayerSet::ssm && s.parallel_ssm) return in_range - mlp;  // every attention layer has its mixer too
    return set == LayerSet::ssm ? ssm : in_range - ssm - mlp;
  }
  // MoE layers: from max(begin, first_dense_layers), those whose number (from 1) is a multiple of moe_every.
  std::uint64_t moe = 0;
  if (s.experts > 0 && s.moe_every != 0) {
    const std::uint64_t from = std::max(begin, std::min(s.first_dense_layers, end));
    moe = multiples_below(end, s.moe_every) - multiples_below(from, s.moe_every);
  }
  return set == LayerSet::moe_mlp ? moe : in_range - moe;
}

std::uint64_t shared_blocks_in(const ModelSpec& s, std::uint64_t first, std::uint64_t count) {
  const std::uint64_t blocks = s.shared.blocks;
  if (blocks == 0) return 0;
  const std::uint64_t before = layers_in(s, LayerSet::attention, 0, first);
  const std::uint64_t through = checked_add(before, layers_in(s, LayerSet::attention, first, count), "layers");
  return std::min(blocks, through) - std::min(blocks, before);
}

bool uniform_layers(const ModelSpec& s) {
  const std::uint64_t moe = layers_in(s, LayerSet::moe_mlp, 0, s.n_layers);
  return attention_layer_counts(s).size() <= 1 && (moe == 0 || moe == s.n_layers);
}

ModelSpec family_defaults(Family family) {
  ModelSpec s;
  s.family = family;
  switch (family) {
    case Family::gpt2:  // GPT-2: learned positions, pre-LN with biases everywhere, tied head
      s.mlp = MlpKind::plain;
      s.activation = "gelu_new";
      s.positional = Positional::learned;
      s.norm = NormKind::layernorm;
      s.attn_qkv_bias = s.attn_out_bias = s.mlp_bias = true;
      s.lm_head = LmHead::tied;
      break;
    case Family::gpt_neox:  // Pythia: rotary, LayerNorm, biases, untied embed_out, parallel residual
      s.mlp = MlpKind::plain;
      s.parallel_block = true;
      s.activation = "gelu";
      s.norm = NormKind::layernorm;
      s.attn_qkv_bias = s.attn_out_bias = s.mlp_bias = true;
      break;
    case Family::llama:
    case Family::mistral:
    case Family::mixtral:
    case Family::phi3: break;  // the struct's defaults: gated SiLU MLP, rotary, RMSNorm, no biases, untied
    case Family::qwen2:        // biases on q, k, v only
      s.attn_qkv_bias = true;
      break;
    case Family::gemma:  // tied head, GeGLU
      s.activation = "gelu_tanh";
      s.lm_head = LmHead::tied;
      break;
    case Family::phi:  // Phi-2: parallel block with one LayerNorm, biases, biased head
      s.mlp = MlpKind::plain;
      s.activation = "gelu_new";
      s.norm = NormKind::layernorm;
      s.norms_per_layer = 1;
      s.parallel_block = true;
      s.attn_qkv_bias = s.attn_out_bias = s.mlp_bias = true;
      s.lm_head_bias = true;
      break;
    case Family::opt:  // learned positions with an offset of 2 rows, ReLU, biases, tied
      s.mlp = MlpKind::plain;
      s.activation = "relu";
      s.positional = Positional::learned;
      s.norm = NormKind::layernorm;
      s.attn_qkv_bias = s.attn_out_bias = s.mlp_bias = true;
      s.lm_head = LmHead::tied;
      break;
    case Family::falcon:  // Falcon-7B: parallel block, one LayerNorm, no biases, tied
      s.mlp = MlpKind::plain;
      s.activation = "gelu";
      s.norm = NormKind::layernorm;
      s.norms_per_layer = 1;
      s.parallel_block = true;
      s.lm_head = LmHead::tied;
      break;
    case Family::qwen3:  // Qwen2's block without q/k/v biases, with per-head RMSNorms on q and k
    case Family::qwen3_moe: s.qk_norm = QkNorm::head; break;
    case Family::gemma2:  // Gemma with sandwich norms: before and after attention and the MLP
      s.activation = "gelu_tanh";
      s.lm_head = LmHead::tied;
      s.norms_per_layer = 4;
      break;
    case Family::gemma3:  // Gemma 2 with per-head q/k RMSNorms
      s.activation = "gelu_tanh";
      s.lm_head = LmHead::tied;
      s.norms_per_layer = 4;
      s.qk_norm = QkNorm::head;
      break;
    case Family::deepseek:
    case Family::llama4:
    case Family::granite:
    case Family::granitemoe: break;  // Llama's block; their configs add experts and attention
    case Family::gpt_oss:            // biases on attention, experts and router; a sink logit per head
      s.attn_qkv_bias = s.attn_out_bias = s.mlp_bias = true;
      s.router_bias = true;
      s.attention_sinks = true;
      break;
    case Family::olmo2:  // norms after attention and the MLP (not before), q/k norms over the width
    case Family::olmoe: s.qk_norm = QkNorm::width; break;
    case Family::phimoe:  // LayerNorms with biases
      s.norm = NormKind::layernorm;
      break;
    case Family::cohere:  // parallel block with one weight-only LayerNorm, tied head
      s.norms_per_layer = 1;
      s.parallel_block = true;
      s.lm_head = LmHead::tied;
      break;
    case Family::starcoder2:  // LayerNorms, plain GELU MLP, biases (use_bias), tied
      s.mlp = MlpKind::plain;
      s.activation = "gelu_pytorch_tanh";
      s.norm = NormKind::layernorm;
      s.attn_qkv_bias = s.attn_out_bias = s.mlp_bias = true;
      s.lm_head = LmHead::tied;
      break;
    case Family::gpt_bigcode:  // GPT-2 with multi-query attention
      s.mlp = MlpKind::plain;
      s.activation = "gelu_pytorch_tanh";
      s.positional = Positional::learned;
      s.norm = NormKind::layernorm;
      s.attn_qkv_bias = s.attn_out_bias = s.mlp_bias = true;
      s.lm_head = LmHead::tied;
      break;
    case Family::gptj:  // parallel block with one LayerNorm, unbiased attention, biased untied head
      s.mlp = MlpKind::plain;
      s.activation = "gelu_new";
      s.norm = NormKind::layernorm;
      s.norms_per_layer = 1;
      s.parallel_block = true;
      s.mlp_bias = true;
      s.lm_head_bias = true;
      break;
    case Family::gpt_neo:  // GPT-2 with unbiased q, k, v
      s.mlp = MlpKind::plain;
      s.activation = "gelu_new";
      s.positional = Positional::learned;
      s.norm = NormKind::layernorm;
      s.attn_out_bias = s.mlp_bias = true;
      s.lm_head = LmHead::tied;
      break;
    case Family::bloom:  // ALiBi, a LayerNorm after the embeddings, biases everywhere, tied
      s.mlp = MlpKind::plain;
      s.activation = "gelu";
      s.positional = Positional::alibi;
      s.norm = NormKind::layernorm;
      s.embedding_norm = true;
      s.attn_qkv_bias = s.attn_out_bias = s.mlp_bias = true;
      s.lm_head = LmHead::tied;
      break;
    case Family::stablelm:  // gated MLP with LayerNorms
      s.norm = NormKind::layernorm;
      break;
    case Family::mamba:   // a norm and a state-space mixer per layer, tied head
    case Family::mamba2:  // the same, with Mamba-2's mixer
      s.mlp = MlpKind::none;
      s.positional = Positional::none;
      s.norms_per_layer = 1;
      s.lm_head = LmHead::tied;
      break;
    case Family::bamba:      // Llama's block where most layers' attention is a Mamba-2 mixer
    case Family::falcon_h1:  // Llama's block with a Mamba-2 mixer beside every attention
      s.positional = Positional::rotary;
      break;
    case Family::zamba2:  // one norm and a Mamba-2 mixer per layer; shared GELU blocks, RoPE only with use_mem_rope
      s.activation = "gelu";
      s.positional = Positional::none;
      s.norms_per_layer = 1;
      s.lm_head = LmHead::tied;
      s.parallel_ssm = true;
      break;
    case Family::qwen3_next:  // Qwen3's block, its attention gated, most layers gated DeltaNet, a gated shared expert
      s.qk_norm = QkNorm::head;
      s.attn_output_gate = true;
      s.shared_expert_gate = true;
      break;
    case Family::jamba:  // Llama's block without rotary: Mamba mixers and attention, dense MLPs and experts
      s.positional = Positional::none;
      break;
    case Family::nemotron_h:  // one norm and one mixer per layer (Mamba-2, attention or a ReLU² MLP), no rotary
      s.mlp = MlpKind::plain;
      s.activation = "relu2";
      s.positional = Positional::none;
      s.norms_per_layer = 1;
      break;
    case Family::t5:  // T5 v1.0: ReLU MLP, no biases, weight-only RMS norms, relative buckets, tied head
      s.mlp = MlpKind::plain;
      s.activation = "relu";
      s.positional = Positional::relative;
      s.relative_buckets = 32;  // T5Config's relative_attention_num_buckets
      s.lm_head = LmHead::tied;
      break;
    case Family::bart:  // post-LN LayerNorms with an embedding norm, biases, learned positions, tied head
      s.mlp = MlpKind::plain;
      s.activation = "gelu";
      s.positional = Positional::learned;
      s.norm = NormKind::layernorm;
      s.embedding_norm = true;
      s.final_norm = false;
      s.attn_qkv_bias = s.attn_out_bias = s.mlp_bias = true;
      s.lm_head = LmHead::tied;
      break;
    case Family::whisper:  // pre-LN LayerNorms, biases except on the keys, learned positions, tied head
      s.mlp = MlpKind::plain;
      s.activation = "gelu";
      s.positional = Positional::learned;
      s.norm = NormKind::layernorm;
      s.attn_qkv_bias = s.attn_out_bias = s.mlp_bias = true;
      s.attn_k_bias = false;
      s.lm_head = LmHead::tied;
      break;
    case Family::bert:  // post-LN encoder: embedding LayerNorm, token types, pooler, no LM head
      s.mlp = MlpKind::plain;
      s.activation = "gelu";
      s.positional = Positional::learned;
      s.norm = NormKind::layernorm;
      s.final_norm = false;
      s.embedding_norm = true;
      s.type_vocab_size = 2;
      s.pooler = true;
      s.attn_qkv_bias = s.attn_out_bias = s.mlp_bias = true;
      s.lm_head = LmHead::none;
      break;
  }
  return s;
}

void validate(const ModelSpec& s) {
  require_positive("d_model", s.d_model);
  require_positive("n_layers", s.n_layers);
  require_positive("vocab_size", s.vocab_size);
  require_positive("max_seq_len", s.max_seq_len);
  check_ssm(s);
  check_vision(s);
  check_encoder(s);
  if (s.mlp == MlpKind::none) {
    if (s.d_mlp != 0) throw_invalid_input("d_mlp", "d_mlp is set but mlp is 'none'");
    if (s.experts != 0) throw_invalid_input("experts", "experts are set but mlp is 'none'");
  } else {
    require_positive("d_mlp", s.d_mlp);
  }
  if (!s.layer_types.empty() && s.layer_types.size() != s.n_layers) {
    throw_invalid_input("layer_types", "layer_types lists " + std::to_string(s.layer_types.size()) +
                                           " layers but n_layers is " + std::to_string(s.n_layers));
  }
  if (attention_layers(s) == 0) {  // a pure state-space model: no heads to size
    for (const auto& [key, value] : {std::pair<const char*, std::uint64_t>{"n_heads", s.n_heads},
                                     {"n_kv_heads", s.n_kv_heads},
                                     {"d_head", s.d_head}}) {
      if (value != 0) throw_invalid_input(key, std::string(key) + " is set but no layer has attention");
    }
  } else {
    require_positive("n_heads", s.n_heads);
    require_positive("n_kv_heads", s.n_kv_heads);
    require_positive("d_head", s.d_head);
  }
  if (s.n_kv_heads > s.n_heads || (s.n_kv_heads != 0 && s.n_heads % s.n_kv_heads != 0)) {
    throw_invalid_input("n_kv_heads", "n_kv_heads " + std::to_string(s.n_kv_heads) + " must divide n_heads " +
                                          std::to_string(s.n_heads) +
                                          " (each key/value head serves a whole group of query heads)");
  }
  check_shared_blocks(s);
  if (has_global_heads(s)) check_global_heads(s);
  if (s.kv_shared_layers >= s.n_layers && s.kv_shared_layers != 0) {
    throw_invalid_input("kv_shared_layers", "kv_shared_layers " + std::to_string(s.kv_shared_layers) +
                                                " must be fewer than the model's " + std::to_string(s.n_layers) +
                                                " layers (Gemma 4 E2B: 20 of 35)");
  }
  if (s.double_wide_mlp && s.kv_shared_layers == 0) {
    throw_invalid_input("double_wide_mlp",
                        "double_wide_mlp widens the MLPs of the kv_shared_layers, and there are none");
  }
  if (s.deepstack_layers != 0 && s.deepstack_layers >= s.n_layers) {
    throw_invalid_input("deepstack_layers", "deepstack_layers " + std::to_string(s.deepstack_layers) +
                                                " must be fewer than the model's " + std::to_string(s.n_layers) +
                                                " layers (Qwen3-VL-8B: 3 of 36)");
  }
  if (s.lm_head_bias && s.lm_head == LmHead::none) {
    throw_invalid_input("lm_head_bias", "lm_head_bias is set but lm_head is 'none'");
  }
  if (s.experts == 0 && s.experts_per_token != 0) {
    throw_invalid_input("experts_per_token", "experts_per_token is " + std::to_string(s.experts_per_token) +
                                                 " but the model has no experts (experts: 0)");
  }
  if (s.experts > 0 && (s.experts_per_token == 0 || s.experts_per_token > s.experts)) {
    throw_invalid_input("experts_per_token",
                        "experts_per_token must be between 1 and experts (" + std::to_string(s.experts) + ")");
  }
  check_experts(s);
  check_attention(s);
  if (s.rotary_dim != 0) {
    if (s.positional != Positional::rotary) {
      throw_invalid_input("rotary_dim",
                          "rotary_dim is the rotated width of a rotary model's heads, but positional is '" +
                              to_string(s.positional) + "'");
    }
    if (s.rotary_dim % 2 != 0 || s.rotary_dim > s.d_head) {
      throw_invalid_input("rotary_dim", "rotary_dim " + std::to_string(s.rotary_dim) +
                                            " must be even and at most d_head (" + std::to_string(s.d_head) + ")");
    }
  }
  if (s.n_positions != 0 && s.positional != Positional::learned) {
    throw_invalid_input("n_positions", "n_positions sizes a learned position table, but positional is '" +
                                           to_string(s.positional) + "'");
  }

  // Sizes that are each in range can still multiply past 64 bits: say so at the largest of
  // them, so that a loader can point at its key, not only at the arithmetic.
  try {
    (void)count_parameters(s);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::overflow) throw;
    std::pair<const char*, std::uint64_t> largest{"d_model", s.d_model};
    for (const auto& size : {std::pair<const char*, std::uint64_t>{"d_mlp", s.d_mlp},
                             {"n_layers", s.n_layers},
                             {"vocab_size", s.vocab_size},
                             {"d_head", s.d_head},
                             {"n_heads", s.n_heads}}) {
      if (size.second > largest.second) largest = size;
    }
    throw Error(ErrorKind::overflow,
                std::string("the model's parameter count does not fit in 64 bits (") + e.what() + "); '" +
                    largest.first + "' " + std::to_string(largest.second) + " is the largest of its sizes",
                largest.first);
  }
}

}  // namespace memplan
