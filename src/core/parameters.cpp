#include "memplan/core/parameters.hpp"

#include "memplan/core/bytes.hpp"

namespace memplan {

namespace {

void add_norm(std::vector<TensorGroup>& out, const ModelSpec& s, const char* weight, const char* bias,
              std::uint64_t width, std::uint64_t copies, LayerSet layers) {
  if (copies == 0) return;
  out.push_back({"norms", weight, width, 1, copies, TensorRole::norm, layers});
  if (s.norm == NormKind::layernorm) out.push_back({"norms", bias, width, 1, copies, TensorRole::norm, layers});
}

// A linear layer in -> out, `copies` times, with an optional bias.
void add_linear(std::vector<TensorGroup>& out, std::string_view component, const char* name, const char* bias_name,
                std::uint64_t in, std::uint64_t out_features, std::uint64_t copies, bool bias, LayerSet layers) {
  if (copies == 0) return;
  out.push_back({component, name, out_features, in, copies, TensorRole::linear, layers});
  if (bias) out.push_back({component, bias_name, out_features, 1, copies, TensorRole::bias, layers});
}

// A state-space layer's mixer (transformers' MambaMixer / Mamba2Mixer), in every ssm layer.
void add_ssm(std::vector<TensorGroup>& out, const ModelSpec& s) {
  const std::uint64_t layers = ssm_layers(s);
  if (layers == 0) return;
  const SsmSizes& m = s.ssm;
  const LayerSet set = LayerSet::ssm;
  const std::uint64_t conv = ssm_conv_channels(m);
  const std::uint64_t two_d_inner = checked_mul(2, m.d_inner, "2 d_inner");
  if (m.version == 1) {
    add_linear(out, "ssm", "in_proj", "in_proj.bias", s.d_model, two_d_inner, layers, m.proj_bias, set);
    out.push_back({"ssm", "conv1d", conv, m.d_conv, layers, TensorRole::ssm, set});
    if (m.conv_bias) out.push_back({"ssm", "conv1d.bias", conv, 1, layers, TensorRole::ssm, set});
    const std::uint64_t x_out = checked_add(m.dt_rank, checked_mul(2, m.d_state, "2 d_state"), "x_proj width");
    add_linear(out, "ssm", "x_proj", "x_proj.bias", m.d_inner, x_out, layers, false, set);
    add_linear(out, "ssm", "dt_proj", "dt_proj.bias", m.dt_rank, m.d_inner, layers, true, set);
    out.push_back({"ssm", "A_log", m.d_inner, m.d_state, layers, TensorRole::ssm, set});
    out.push_back({"ssm", "D", m.d_inner, 1, layers, TensorRole::ssm, set});
    if (m.dt_bc_norms) {
      out.push_back({"ssm", "dt_norm.weight", m.dt_rank, 1, layers, TensorRole::norm, set});
      out.push_back({"ssm", "b_norm.weight", m.d_state, 1, layers, TensorRole::norm, set});
      out.push_back({"ssm", "c_norm.weight", m.d_state, 1, layers, TensorRole::norm, set});
    }
  } else if (m.version == 3) {
    // Gated DeltaNet (transformers' Qwen3NextGatedDeltaNet): in_proj_qkvz yields q, k (the
    // key heads, 2 groups d_state), v and the gate z (d_inner each); in_proj_ba b and a per
    // value head (Qwen3.5 splits both pairs into four linears of the same total).
    add_linear(out, "ssm", "in_proj_qkvz", "in_proj_qkvz.bias", s.d_model, checked_add(conv, m.d_inner, "qkvz width"),
               layers, false, set);
    add_linear(out, "ssm", "in_proj_ba", "in_proj_ba.bias", s.d_model, checked_mul(2, m.heads, "2 heads"), layers,
               false, set);
    out.push_back({"ssm", "conv1d", conv, m.d_conv, layers, TensorRole::ssm, set});
    out.push_back({"ssm", "dt_bias", m.heads, 1, layers, TensorRole::ssm, set});
    out.push_back({"ssm", "A_log", m.heads, 1, layers, TensorRole::ssm, set});
    out.push_back({"ssm", "gated_norm.weight", m.d_inner / m.heads, 1, layers, TensorRole::norm, set});
  } else {
    // in_proj yields z (d_inner), x, B, C (the conv's channels) and dt (one per head).
    const std::uint64_t in_out = checked_add(checked_add(m.d_inner, conv, "in_proj width"), m.heads, "in_proj width");
    add_linear(out, "ssm", "in_proj", "in_proj.bias", s.d_model, in_out, layers, m.proj_bias, set);
    out.push_back({"ssm", "conv1d", conv, m.d_conv, layers, TensorRole::ssm, set});
    if (m.conv_bias) out.push_back({"ssm", "conv1d.bias", conv, 1, layers, TensorRole::ssm, set});
    out.push_back({"ssm", "dt_bias", m.heads, 1, layers, TensorRole::ssm, set});
    out.push_back({"ssm", "A_log", m.heads, 1, layers, TensorRole::ssm, set});
    out.push_back({"ssm", "D", m.heads, 1, layers, TensorRole::ssm, set});
    if (m.gated_norm) out.push_back({"ssm", "gated_norm.weight", m.d_inner, 1, layers, TensorRole::norm, set});
  }
  add_linear(out, "ssm", "out_proj", "out_proj.bias", m.d_inner, s.d_model, layers, m.out_proj_bias, set);
}

void add_attention(std::vector<TensorGroup>& out, const ModelSpec& s) {
  // Shared blocks (Zamba2) hold the attention once per block, not per layer, over 2 d_model.
  const bool shared = s.shared.blocks != 0;
  const std::uint64_t layers = shared ? s.shared.blocks : attention_layers(s);
  if (layers == 0) return;
  const LayerSet all = shared ? LayerSet::none : LayerSet::attention;
  const std::uint64_t in = shared ? checked_mul(2, s.d_model, "2 d_model") : s.d_model;
  const MlaSizes& m = s.mla;
  const std::uint64_t q_width = checked_mul(s.n_heads, s.d_head, "n_heads * d_head");
  if (m.kv_lora_rank != 0) {
    // DeepSeek-V2's attention: queries through an optional low-rank pair, keys and values
    // decompressed from a latent of kv_lora_rank plus one rotary key part shared by the heads.
    if (m.q_lora_rank != 0) {
      add_linear(out, "attention", "q_a", "q_a.bias", s.d_model, m.q_lora_rank, layers, s.attn_qkv_bias, all);
      add_linear(out, "attention", "q_b", "q_b.bias", m.q_lora_rank, q_width, layers, false, all);
    } else {
      add_linear(out, "attention", "q", "q.bias", s.d_model, q_width, layers, false, all);
    }
    const std::uint64_t kv_a = checked_add(m.kv_lora_rank, m.qk_rope_head_dim, "kv_lora_rank + qk_rope_head_dim");
    add_linear(out, "attention", "kv_a", "kv_a.bias", s.d_model, kv_a, layers, s.attn_qkv_bias, all);
    const std::uint64_t kv_b = checked_mul(s.n_heads, checked_add(m.qk_nope_head_dim, m.v_head_dim, "head widths"),
                                           "n_heads * (qk_nope_head_dim + v_head_dim)");
    add_linear(out, "attention", "kv_b", "kv_b.bias", m.kv_lora_rank, kv_b, layers, false, all);
    add_linear(out, "attention", "o", "o.bias", checked_mul(s.n_heads, m.v_head_dim, "n_heads * v_head_dim"), s.d_model,
               layers, s.attn_out_bias, all);
    return;
  }
  // Gemma 4's full-attention layers have heads of their own: their q, k, (v) and o apart.
  const bool global = has_global_heads(s);
  const auto projections = [&](const ModelSpec& v, std::uint64_t n, LayerSet set, bool values) {
    const std::uint64_t q = checked_mul(v.n_heads, v.d_head, "n_heads * d_head");
    const std::uint64_t kv_width = checked_mul(v.n_kv_heads, v.d_head, "n_kv_heads * d_head");
    // A gated attention's q_proj also yields the gate: twice the queries' width.
    const std::uint64_t q_out = v.attn_output_gate ? checked_mul(2, q, "q_proj width") : q;
    add_linear(out, "attention", "q", "q.bias", in, q_out, n, v.attn_qkv_bias, set);
    add_linear(out, "attention", "k", "k.bias", in, kv_width, n, v.attn_qkv_bias && v.attn_k_bias, set);
    if (values) add_linear(out, "attention", "v", "v.bias", in, kv_width, n, v.attn_qkv_bias, set);
    add_linear(out, "attention", "o", "o.bias", q, v.d_model, n, v.attn_out_bias, set);
  };
  if (global) {
    projections(s, layers_in(s, LayerSet::local_attention, 0, s.n_layers), LayerSet::local_attention, true);
    projections(global_layer_view(s), layers_in(s, LayerSet::global_attention, 0, s.n_layers),
                LayerSet::global_attention, !s.global_k_eq_v);
  } else {
    projections(s, layers, all, true);
  }
  if (s.attention_sinks) out.push_back({"attention", "sinks", s.n_heads, 1, layers, TensorRole::bias, all});
  if (s.positional == Positional::relative) {  // T5: one table in the stack's first layer
    out.push_back({"attention", "relative_attention_bias", s.relative_buckets, s.n_heads, 1, TensorRole::embedding,
                   LayerSet::none});
  }
}

// What each use of a shared block adds to its attention (Zamba2's Zamba2HybridLayer): a
// d_model x d_model linear of its own and, with attention_adapters, a down and an up matrix
// on each of q, k and v.
void add_shared_attention_uses(std::vector<TensorGroup>& out, const ModelSpec& s) {
  const SharedBlocks& b = s.shared;
  if (b.blocks == 0) return;
  const std::uint64_t uses = attention_layers(s), d = s.d_model, two_d = checked_mul(2, d, "2 d_model");
  const LayerSet set = LayerSet::attention;
  out.push_back({"attention", "shared.linear", d, d, uses, TensorRole::linear, set});
  if (b.attention_adapters) {
    out.push_back({"attention", "shared.qkv_adapters.down", b.adapter_rank, two_d, 3 * uses, TensorRole::linear, set});
    out.push_back({"attention", "shared.qkv_adapters.up", two_d, b.adapter_rank, 3 * uses, TensorRole::linear, set});
  }
}

// Every decoder layer's attention over the encoder's output, and its norm (T5's
// EncDecAttention, BART's and Whisper's encoder_attn).
void add_cross_attention(std::vector<TensorGroup>& out, const ModelSpec& s) {
  if (!is_encoder_decoder(s)) return;
  const std::uint64_t layers = s.n_layers, width = checked_mul(s.n_heads, s.d_head, "n_heads * d_head");
  const LayerSet all = LayerSet::all;
  add_linear(out, "cross_attention", "cross.q", "cross.q.bias", s.d_model, width, layers, s.attn_qkv_bias, all);
  add_linear(out, "cross_attention", "cross.k", "cross.k.bias", s.d_model, width, layers,
             s.attn_qkv_bias && s.attn_k_bias, all);
  add_linear(out, "cross_attention", "cross.v", "cross.v.bias", s.d_model, width, layers, s.attn_qkv_bias, all);
  add_linear(out, "cross_attention", "cross.o", "cross.o.bias", width, s.d_model, layers, s.attn_out_bias, all);
  out.push_back({"cross_attention", "cross.norm.weight", s.d_model, 1, layers, TensorRole::norm, all});
  if (s.norm == NormKind::layernorm)
    out.push_back({"cross_attention", "cross.norm.bias", s.d_model, 1, layers, TensorRole::norm, all});
}

// The encoder stack (see EncoderStack): not per decoder layer.
void add_encoder(std::vector<TensorGroup>& out, const ModelSpec& s) {
  const EncoderStack& e = s.encoder;
  if (e.n_layers == 0) return;
  const std::uint64_t d = s.d_model, layers = e.n_layers, width = checked_mul(s.n_heads, s.d_head, "n_heads * d_head");
  const LayerSet none = LayerSet::none;
  const std::uint64_t norm_tensors = s.norm == NormKind::layernorm ? 2 : 1;  // weight, and a bias
  if (e.mel_bins != 0) {  // Whisper's conv1 (mel bins -> d, 3 taps) and conv2 (d -> d, 3 taps), biased
    out.push_back({"encoder", "encoder.conv1", d, checked_mul(e.mel_bins, 3, "mel bins x 3"), 1, TensorRole::conv});
    out.push_back({"encoder", "encoder.conv1.bias", d, 1, 1, TensorRole::bias});
    out.push_back({"encoder", "encoder.conv2", d, checked_mul(d, 3, "d_model x 3"), 1, TensorRole::conv});
    out.push_back({"encoder", "encoder.conv2.bias", d, 1, 1, TensorRole::bias});
  }
  if (e.n_positions != 0)
    out.push_back({"encoder", "encoder.position_embedding", e.n_positions, d, 1, TensorRole::embedding});
  if (s.positional == Positional::relative) {
    out.push_back(
        {"encoder", "encoder.relative_attention_bias", s.relative_buckets, s.n_heads, 1, TensorRole::embedding});
  }
  if (s.embedding_norm) out.push_back({"encoder", "encoder.embedding_norm", d, norm_tensors, 1, TensorRole::norm});
  add_linear(out, "encoder", "encoder.q", "encoder.q.bias", d, width, layers, s.attn_qkv_bias, none);
  add_linear(out, "encoder", "encoder.k", "encoder.k.bias", d, width, layers, s.attn_qkv_bias && s.attn_k_bias, none);
  add_linear(out, "encoder", "encoder.v", "encoder.v.bias", d, width, layers, s.attn_qkv_bias, none);
  add_linear(out, "encoder", "encoder.o", "encoder.o.bias", width, d, layers, s.attn_out_bias, none);
  if (s.mlp == MlpKind::gated)
    add_linear(out, "encoder", "encoder.gate", "encoder.gate.bias", d, s.d_mlp, layers, s.mlp_bias, none);
  add_linear(out, "encoder", "encoder.up", "encoder.up.bias", d, s.d_mlp, layers, s.mlp_bias, none);
  add_linear(out, "encoder", "encoder.down", "encoder.down.bias", s.d_mlp, d, layers, s.mlp_bias, none);
  out.push_back({"encoder", "encoder.layer_norms", d, 2 * norm_tensors, layers, TensorRole::norm});
  if (s.final_norm) out.push_back({"encoder", "encoder.final_norm", d, norm_tensors, 1, TensorRole::norm});
}

// A gated or plain MLP of `width`, `copies` times.
void add_mlp(std::vector<TensorGroup>& out, const ModelSpec& s, std::string_view component, const char* prefix,
             std::uint64_t width, std::uint64_t copies, LayerSet layers) {
  struct Names {
    const char *gate, *gate_bias, *up, *up_bias, *down, *down_bias;
  };
  static constexpr Names kPlain{"gate", "gate.bias", "up", "up.bias", "down", "down.bias"};
  static constexpr Names kShared{"shared_gate",    "shared_gate.bias", "shared_up",
                                 "shared_up.bias", "shared_down",      "shared_down.bias"};
  const Names& n = std::string_view(prefix) == "shared" ? kShared : kPlain;
  if (s.mlp == MlpKind::gated)
    add_linear(out, component, n.gate, n.gate_bias, s.d_model, width, copies, s.mlp_bias, layers);
  add_linear(out, component, n.up, n.up_bias, s.d_model, width, copies, s.mlp_bias, layers);
  add_linear(out, component, n.down, n.down_bias, width, s.d_model, copies, s.mlp_bias, layers);
}

// A vision tower and its projector (VisionKind says which): not per language-model layer.
void add_vision(std::vector<TensorGroup>& out, const ModelSpec& s) {
  const VisionTower& v = s.vision;
  if (v.d_model == 0) return;
  const std::uint64_t d = v.d_model, layers = v.n_layers;
  const LayerSet none = LayerSet::none;
  const bool clip = v.kind == VisionKind::clip || v.kind == VisionKind::llava_next;
  const bool siglip = v.kind == VisionKind::gemma3 || v.kind == VisionKind::paligemma || v.kind == VisionKind::idefics3;
  const std::uint64_t pixels_per_patch = checked_mul(checked_mul(3, v.temporal_patch, "3 x temporal patch"),
                                                     checked_mul(v.patch, v.patch, "patch^2"), "pixels per patch");
  if (v.kind == VisionKind::gemma4) {
    // Gemma4VisionModel: an unbiased patch projection, a position table per axis, blocks of RMS
    // norms (four, and q and k norms per head) around unbiased q, k, v, o and a gated MLP, the
    // standardisation's bias and scale; embed_vision's projection into the text model.
    const std::uint64_t head = d / v.n_heads;
    out.push_back({"vision", "patch_embedding", d, pixels_per_patch, 1, TensorRole::embedding, none});
    out.push_back({"vision", "position_embedding", checked_mul(2, v.positions, "2 axes x positions"), d, 1,
                   TensorRole::embedding, none});
    for (const char* name : {"vision.q", "vision.k", "vision.v", "vision.o"}) {
      out.push_back({"vision", name, d, d, layers, TensorRole::linear, none});
    }
    out.push_back({"vision", "vision.gate", v.d_mlp, d, layers, TensorRole::linear, none});
    out.push_back({"vision", "vision.up", v.d_mlp, d, layers, TensorRole::linear, none});
    out.push_back({"vision", "vision.down", d, v.d_mlp, layers, TensorRole::linear, none});
    out.push_back(
        {"vision", "vision.norms", checked_add(4 * d, 2 * head, "norm widths"), 1, layers, TensorRole::norm, none});
    out.push_back({"vision", "std_bias_and_scale", 2 * d, 1, 1, TensorRole::norm, none});
    out.push_back({"projector", "projector.linear", s.d_model, d, 1, TensorRole::linear, none});
    return;
  }
  if (clip) {
    const std::uint64_t positions = checked_add(image_tokens(v), 1, "patches + class token");
    out.push_back({"vision", "class_embedding", d, 1, 1, TensorRole::embedding, none});
    out.push_back({"vision", "patch_embedding", d, pixels_per_patch, 1, TensorRole::embedding, none});
    out.push_back({"vision", "position_embedding", positions, d, 1, TensorRole::embedding, none});
    out.push_back({"vision", "pre_norm", 2 * d, 1, 1, TensorRole::norm, none});
  } else if (siglip) {  // SigLIP: a biased patch convolution and learned positions, no class token
    const std::uint64_t side = v.image_size / v.patch;
    out.push_back({"vision", "patch_embedding", d, pixels_per_patch, 1, TensorRole::embedding, none});
    out.push_back({"vision", "patch_embedding.bias", d, 1, 1, TensorRole::bias, none});
    out.push_back({"vision", "position_embedding", side * side, d, 1, TensorRole::embedding, none});
  } else {  // Qwen's: an unbiased Conv3d over 2-frame patches, rotary positions
    out.push_back({"vision", "patch_embedding", d, pixels_per_patch, 1, TensorRole::embedding, none});
    if (v.kind == VisionKind::qwen3_5) {  // a biased one, and a learned position table beside the rotary
      out.push_back({"vision", "patch_embedding.bias", d, 1, 1, TensorRole::bias, none});
      out.push_back({"vision", "position_embedding", v.positions, d, 1, TensorRole::embedding, none});
    }
  }
  for (const char* name : {"vision.q", "vision.k", "vision.v", "vision.o"}) {
    out.push_back({"vision", name, d, d, layers, TensorRole::linear, none});
  }
  out.push_back({"vision", "vision.qkvo.bias", 4 * d, 1, layers, TensorRole::bias, none});
  const bool rms = v.kind == VisionKind::qwen2_5_vl;  // RMSNorms and a gated MLP (Qwen2.5-VL)
  out.push_back({"vision", "vision.norms", (rms ? 2 : 4) * d, 1, layers, TensorRole::norm, none});
  if (rms) {
    out.push_back({"vision", "vision.gate", v.d_mlp, d, layers, TensorRole::linear, none});
    out.push_back({"vision", "vision.gate.bias", v.d_mlp, 1, layers, TensorRole::bias, none});
  }
  out.push_back({"vision", "vision.fc1", v.d_mlp, d, layers, TensorRole::linear, none});
  out.push_back({"vision", "vision.fc1.bias", v.d_mlp, 1, layers, TensorRole::bias, none});
  out.push_back({"vision", "vision.fc2", d, v.d_mlp, layers, TensorRole::linear, none});
  out.push_back({"vision", "vision.fc2.bias", d, 1, layers, TensorRole::bias, none});
  if (siglip) {
    out.push_back({"vision", "post_norm", 2 * d, 1, 1, TensorRole::norm, none});
    if (v.kind == VisionKind::gemma3) {  // mm_soft_emb_norm and mm_input_projection_weight
      out.push_back({"projector", "projector.norm", d, 1, 1, TensorRole::norm, none});
      out.push_back({"projector", "projector.linear", s.d_model, d, 1, TensorRole::linear, none});
    } else if (v.kind == VisionKind::idefics3) {  // the connector's modality_projection over shuffled patches
      out.push_back({"projector", "projector.linear", s.d_model, checked_mul(d, v.merge * v.merge, "shuffled width"), 1,
                     TensorRole::linear, none});
    } else {
      out.push_back({"projector", "projector.linear", s.d_model, d, 1, TensorRole::linear, none});
      out.push_back({"projector", "projector.linear.bias", s.d_model, 1, 1, TensorRole::bias, none});
    }
    return;
  }
  if (clip) {
    out.push_back({"vision", "post_norm", 2 * d, 1, 1, TensorRole::norm, none});
    out.push_back({"projector", "projector.linear_1", s.d_model, d, 1, TensorRole::linear, none});
    out.push_back({"projector", "projector.linear_1.bias", s.d_model, 1, 1, TensorRole::bias, none});
    out.push_back({"projector", "projector.linear_2", s.d_model, s.d_model, 1, TensorRole::linear, none});
    out.push_back({"projector", "projector.linear_2.bias", s.d_model, 1, 1, TensorRole::bias, none});
    // LLaVA-NeXT's learned token ending each row of an image's tiles.
    if (v.kind == VisionKind::llava_next)
      out.push_back({"projector", "image_newline", s.d_model, 1, 1, TensorRole::embedding, none});
    return;
  }
  // Qwen's merger: a norm, then merge^2 patches concatenated through two linear layers.
  const std::uint64_t merged = checked_mul(d, v.merge * v.merge, "merged patch width");
  out.push_back({"projector", "projector.norm", (rms ? 1 : 2) * d, 1, 1, TensorRole::norm, none});
  out.push_back({"projector", "projector.linear_1", merged, merged, 1, TensorRole::linear, none});
  out.push_back({"projector", "projector.linear_1.bias", merged, 1, 1, TensorRole::bias, none});
  out.push_back({"projector", "projector.linear_2", s.d_model, merged, 1, TensorRole::linear, none});
  out.push_back({"projector", "projector.linear_2.bias", s.d_model, 1, 1, TensorRole::bias, none});
  // Qwen3-VL's deepstack mergers: each a LayerNorm over the merged width (use_postshuffle_norm)
  // and the merger's two layers.
  if (v.deepstack > 0) {
    out.push_back({"projector", "deepstack.norm", 2 * merged, 1, v.deepstack, TensorRole::norm, none});
    out.push_back({"projector", "deepstack.linear_1", merged, merged, v.deepstack, TensorRole::linear, none});
    out.push_back({"projector", "deepstack.linear_1.bias", merged, 1, v.deepstack, TensorRole::bias, none});
    out.push_back({"projector", "deepstack.linear_2", s.d_model, merged, v.deepstack, TensorRole::linear, none});
    out.push_back({"projector", "deepstack.linear_2.bias", s.d_model, 1, v.deepstack, TensorRole::bias, none});
  }
}

}  // namespace

std::uint64_t copies_per_layer(const ModelSpec& spec, const TensorGroup& g) {
  const std::uint64_t layers = layers_in(spec, g.layers, 0, spec.n_layers);
  return layers == 0 ? g.copies : g.copies / layers;
}

std::vector<TensorGroup> model_tensors(const ModelSpec& s) {
  std::vector<TensorGroup> out;
  out.reserve(60);  // the most groups a model has (latent attention, shared experts, a vision tower): one allocation
  const std::uint64_t layers = s.n_layers;

  out.push_back({"embeddings", "token_embedding", s.vocab_size, s.d_model, 1, TensorRole::embedding});
  if (s.positional == Positional::learned) {
    const std::uint64_t rows = s.n_positions != 0 ? s.n_positions : s.max_seq_len;
    out.push_back({"embeddings", "position_embedding", rows, s.d_model, 1, TensorRole::embedding});
  }
  if (s.type_vocab_size > 0) {
    out.push_back({"embeddings", "token_type_embedding", s.type_vocab_size, s.d_model, 1, TensorRole::embedding});
  }
  if (s.embedding_norm) {
    out.push_back({"embeddings", "embedding_norm.weight", s.d_model, 1, 1, TensorRole::norm});
    if (s.norm == NormKind::layernorm)
      out.push_back({"embeddings", "embedding_norm.bias", s.d_model, 1, 1, TensorRole::norm});
  }

  if (s.per_layer_input != 0) {
    // Gemma 4 E2B's and E4B's per-layer inputs: a token table of n_layers x per_layer_input
    // columns, the hidden state's projection to them and its norm; in each layer a gate, a
    // projection back to d_model and a norm.
    const std::uint64_t w = s.per_layer_input, all = checked_mul(layers, w, "n_layers x per_layer_input");
    out.push_back({"embeddings", "per_layer_token_embedding", s.vocab_size, all, 1, TensorRole::embedding});
    out.push_back({"per_layer_inputs", "per_layer_model_projection", all, s.d_model, 1, TensorRole::linear});
    out.push_back(
        {"per_layer_inputs", "per_layer_input_gate", w, s.d_model, layers, TensorRole::linear, LayerSet::all});
    out.push_back(
        {"per_layer_inputs", "per_layer_projection", s.d_model, w, layers, TensorRole::linear, LayerSet::all});
  }
  add_attention(out, s);
  add_shared_attention_uses(out, s);
  add_cross_attention(out, s);
  add_ssm(out, s);

  const std::uint64_t moe_layers = layers_in(s, LayerSet::moe_mlp, 0, layers);
  const SharedBlocks& shared = s.shared;
  if (shared.blocks != 0) {  // the MLPs are the shared blocks', with an adapter on gate_up per use
    add_mlp(out, s, "mlp", "", s.d_mlp, shared.blocks, LayerSet::none);
    if (shared.mlp_adapters) {
      const std::uint64_t uses = attention_layers(s);
      const std::uint64_t gate_up = checked_mul(s.mlp == MlpKind::gated ? 2 : 1, s.d_mlp, "gate_up width");
      out.push_back({"mlp", "shared.gate_up_adapter.down", shared.adapter_rank, s.d_model, uses, TensorRole::linear,
                     LayerSet::attention});
      out.push_back({"mlp", "shared.gate_up_adapter.up", gate_up, shared.adapter_rank, uses, TensorRole::linear,
                     LayerSet::attention});
    }
  } else {
    const std::uint64_t dense_layers = s.mlp == MlpKind::none ? 0 : layers_in(s, LayerSet::dense_mlp, 0, layers);
    add_mlp(out, s, "mlp", "", s.d_mlp, dense_layers, LayerSet::dense_mlp);
    // Gemma 4 E2B's KV-sharing layers: their MLP twice as wide (the second half here, not
    // attributed to a layer).
    if (s.double_wide_mlp) add_mlp(out, s, "mlp", "", s.d_mlp, s.kv_shared_layers, LayerSet::none);
  }
  if (moe_layers > 0) {
    add_mlp(out, s, "mlp", "shared", s.d_shared_expert, s.d_shared_expert != 0 ? moe_layers : 0, LayerSet::moe_mlp);
    add_mlp(out, s, "experts", "", expert_width(s), checked_mul(moe_layers, s.experts, "MoE layers * experts"),
            LayerSet::moe_mlp);
    out.push_back({"router", "router", s.experts, s.d_model, moe_layers, TensorRole::router, LayerSet::moe_mlp});
    if (s.shared_expert_gate && s.d_shared_expert != 0) {
      out.push_back({"router", "shared_expert_gate", 1, s.d_model, moe_layers, TensorRole::router, LayerSet::moe_mlp});
    }
    if (s.router_scales) {
      out.push_back({"router", "router.scale", s.d_model, 1, moe_layers, TensorRole::norm, LayerSet::moe_mlp});
      out.push_back(
          {"router", "router.per_expert_scale", s.experts, 1, moe_layers, TensorRole::norm, LayerSet::moe_mlp});
    }
    if (s.router_bias) {
      out.push_back({"router", "router.bias", s.experts, 1, moe_layers, TensorRole::bias, LayerSet::moe_mlp});
    }
  }

  add_norm(out, s, "layer_norm.weight", "layer_norm.bias", s.d_model,
           checked_mul(layers, s.norms_per_layer, "n_layers * norms_per_layer"), LayerSet::all);
  add_norm(out, s, "moe_norms.weight", "moe_norms.bias", s.d_model, checked_mul(moe_layers, s.moe_norms, "MoE norms"),
           LayerSet::moe_mlp);
  if (s.per_layer_input != 0) {  // the per-layer inputs' norms: the projection's, and one in each layer
    out.push_back({"norms", "per_layer_projection_norm", s.per_layer_input, 1, 1, TensorRole::norm});
    out.push_back({"norms", "post_per_layer_input_norm", s.d_model, 1, layers, TensorRole::norm, LayerSet::all});
  }
  if (shared.blocks != 0) {  // each shared block's input norm (over 2 d_model) and MLP norm
    add_norm(out, s, "shared.input_norm.weight", "shared.input_norm.bias", checked_mul(2, s.d_model, "2 d_model"),
             shared.blocks, LayerSet::none);
    add_norm(out, s, "shared.pre_mlp_norm.weight", "shared.pre_mlp_norm.bias", s.d_model, shared.blocks,
             LayerSet::none);
  }
  if (s.qk_norm != QkNorm::none) {
    const bool head = s.qk_norm == QkNorm::head;
    const auto qk_norms = [&](const ModelSpec& v, std::uint64_t attending, LayerSet set) {
      add_norm(out, v, "q_norm.weight", "q_norm.bias", head ? v.d_head : checked_mul(v.n_heads, v.d_head, "q width"),
               attending, set);
      add_norm(out, v, "k_norm.weight", "k_norm.bias", head ? v.d_head : checked_mul(v.n_kv_heads, v.d_head, "k width"),
               attending, set);
    };
    if (has_global_heads(s)) {
      qk_norms(s, layers_in(s, LayerSet::local_attention, 0, layers), LayerSet::local_attention);
      qk_norms(global_layer_view(s), layers_in(s, LayerSet::global_attention, 0, layers), LayerSet::global_attention);
    } else {
      qk_norms(s, attention_layers(s), LayerSet::attention);
    }
  }
  if (s.layer_scalar) out.push_back({"norms", "layer_scalar", 1, 1, layers, TensorRole::norm, LayerSet::all});
  if (s.mla.q_lora_rank != 0)
    add_norm(out, s, "q_a_norm.weight", "q_a_norm.bias", s.mla.q_lora_rank, layers, LayerSet::all);
  if (s.mla.kv_lora_rank != 0) {
    add_norm(out, s, "kv_a_norm.weight", "kv_a_norm.bias", s.mla.kv_lora_rank, layers, LayerSet::all);
  }
  if (s.final_norm) add_norm(out, s, "final_norm.weight", "final_norm.bias", s.d_model, 1, LayerSet::none);

  if (s.lm_head == LmHead::untied) {
    out.push_back({"lm_head", "lm_head", s.vocab_size, s.d_model, 1, TensorRole::lm_head});
  }
  if (s.lm_head != LmHead::none && s.lm_head_bias) {
    out.push_back({"lm_head", "lm_head.bias", s.vocab_size, 1, 1, TensorRole::bias});
  }
  add_vision(out, s);
  add_encoder(out, s);
  if (s.pooler) {
    out.push_back({"pooler", "pooler", s.d_model, s.d_model, 1, TensorRole::linear});
    out.push_back({"pooler", "pooler.bias", s.d_model, 1, 1, TensorRole::bias});
  }
  return out;
}

std::uint64_t group_parameters(const TensorGroup& g) {
  return checked_mul(g.copies, checked_mul(g.rows, g.cols, "tensor elements"), "parameters of", g.name);
}

std::vector<ComponentParams> parameters_by_component(const ModelSpec& spec) {
  std::vector<ComponentParams> out;
  for (const TensorGroup& g : model_tensors(spec)) {
    if (out.empty() || out.back().component != g.component) out.push_back({std::string(g.component), 0});
    out.back().params = checked_add(out.back().params, group_parameters(g), "parameters of", g.component);
  }
  return out;
}

std::uint64_t count_parameters(const ModelSpec& spec) {
  std::uint64_t total = 0;
  for (const ComponentParams& c : parameters_by_component(spec)) {
    total = checked_add(total, c.params, "total parameters");
  }
  return total;
}

std::uint64_t layer_parameters(const ModelSpec& spec, std::uint64_t layer) {
  std::uint64_t total = 0;
  for (const TensorGroup& g : model_tensors(spec)) {
    if (!layer_holds(spec, g.layers, layer)) continue;
    const std::uint64_t each = checked_mul(g.rows, g.cols, "tensor elements");
    total = checked_add(total, checked_mul(copies_per_layer(spec, g), each, "layer parameters"), "layer parameters");
  }
  return total;
}

MtpParameters mtp_parameters(const ModelSpec& spec) {
  if (spec.mtp_layers == 0 || spec.n_layers == 0) return {};
  const std::uint64_t d = spec.d_model;
  const std::uint64_t each = checked_add(checked_add(layer_parameters(spec, spec.n_layers - 1),
                                                     checked_mul(2 * d, d, "eh_proj"), "MTP layer"),
                                         checked_mul(3, d, "MTP norms"), "MTP layer");
  MtpParameters out;
  out.own = checked_mul(spec.mtp_layers, each, "MTP parameters");
  // DeepSeek's checkpoints store the layer's own copies of the embedding and head; Qwen's share
  // the model's (mtp_use_dedicated_embeddings false).
  const std::uint64_t copies = spec.family == Family::qwen3_next
                                   ? 0
                                   : checked_mul(2, checked_mul(spec.vocab_size, d, "embedding"), "embedding and head");
  out.stored = checked_add(out.own, checked_mul(spec.mtp_layers, copies, "MTP copies"), "MTP parameters");
  return out;
}

}  // namespace memplan
