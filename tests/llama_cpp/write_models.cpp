// Writes the small GGUF models the llama.cpp comparison loads (tests/llama_cpp/test_llama_cpp.py):
// three architectures llama.cpp and memplan both read, in k-quant, 8-bit and 16-bit types, a
// small llama to draft with, a Mamba, a Mamba-2 and a Nemotron-H hybrid,
// with zeros for data (llama.cpp allocates by type and shape; the values never matter here).
//   memplan_llama_cpp_models DIR
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "gguf_writer.hpp"

namespace {

using memplan::testing::GgufWriter;

struct Shape {
  std::string arch;  // llama, qwen2 or gpt2
  std::uint64_t d, layers, heads, kv_heads, ff, vocab, context;
  const char* matrices;  // the linear layers' type
  const char* embedding;
  const char* head;  // nullptr: tied to the embedding
};

GgufWriter model(const Shape& s) {
  const std::uint64_t hd = s.d / s.heads, q = s.heads * hd, kv = s.kv_heads * hd;
  GgufWriter w;
  const auto key = [&](const char* k) { return s.arch + "." + k; };
  w.str("general.architecture", s.arch)
      .str("general.name", s.arch + "-test")
      .u32(key("context_length"), static_cast<std::uint32_t>(s.context))
      .u32(key("embedding_length"), static_cast<std::uint32_t>(s.d))
      .u32(key("block_count"), static_cast<std::uint32_t>(s.layers))
      .u32(key("feed_forward_length"), static_cast<std::uint32_t>(s.ff))
      .u32(key("attention.head_count"), static_cast<std::uint32_t>(s.heads))
      .u32(key("attention.head_count_kv"), static_cast<std::uint32_t>(s.kv_heads));
  if (s.arch == "gpt2") {
    w.f32(key("attention.layer_norm_epsilon"), 1e-5f);
  } else {
    w.u32(key("rope.dimension_count"), static_cast<std::uint32_t>(hd))
        .f32(key("attention.layer_norm_rms_epsilon"), 1e-6f);
  }
  if (s.arch == "qwen2vl") w.u32_array(key("rope.dimension_sections"), {16, 24, 24, 0});  // M-RoPE
  w.spm_vocabulary(s.vocab);
  w.tensor("token_embd.weight", {s.d, s.vocab}, s.embedding);
  if (s.arch == "gpt2") w.tensor("position_embd.weight", {s.d, s.context}, "F32");
  for (std::uint64_t b = 0; b < s.layers; ++b) {
    const std::string p = "blk." + std::to_string(b) + ".";
    w.tensor(p + "attn_norm.weight", {s.d}, "F32");
    if (s.arch == "gpt2") {
      w.tensor(p + "attn_norm.bias", {s.d}, "F32")
          .tensor(p + "attn_qkv.weight", {s.d, q + 2 * kv}, s.matrices)
          .tensor(p + "attn_qkv.bias", {q + 2 * kv}, "F32")
          .tensor(p + "attn_output.weight", {q, s.d}, s.matrices)
          .tensor(p + "attn_output.bias", {s.d}, "F32")
          .tensor(p + "ffn_norm.weight", {s.d}, "F32")
          .tensor(p + "ffn_norm.bias", {s.d}, "F32")
          .tensor(p + "ffn_up.weight", {s.d, s.ff}, s.matrices)
          .tensor(p + "ffn_up.bias", {s.ff}, "F32")
          .tensor(p + "ffn_down.weight", {s.ff, s.d}, s.matrices)
          .tensor(p + "ffn_down.bias", {s.d}, "F32");
      continue;
    }
    w.tensor(p + "attn_q.weight", {s.d, q}, s.matrices)
        .tensor(p + "attn_k.weight", {s.d, kv}, s.matrices)
        .tensor(p + "attn_v.weight", {s.d, kv}, s.matrices);
    if (s.arch == "qwen2" || s.arch == "qwen2vl") {
      w.tensor(p + "attn_q.bias", {q}, "F32")
          .tensor(p + "attn_k.bias", {kv}, "F32")
          .tensor(p + "attn_v.bias", {kv}, "F32");
    }
    w.tensor(p + "attn_output.weight", {q, s.d}, s.matrices)
        .tensor(p + "ffn_norm.weight", {s.d}, "F32")
        .tensor(p + "ffn_gate.weight", {s.d, s.ff}, s.matrices)
        .tensor(p + "ffn_up.weight", {s.d, s.ff}, s.matrices)
        .tensor(p + "ffn_down.weight", {s.ff, s.d}, s.matrices);
  }
  w.tensor("output_norm.weight", {s.d}, "F32");
  if (s.arch == "gpt2") w.tensor("output_norm.bias", {s.d}, "F32");
  if (s.head != nullptr) w.tensor("output.weight", {s.d, s.vocab}, s.head);
  return w;
}

// A Mamba (d_state 16, d_conv 4, d_inner 2 d) or, with groups > 0, a Mamba-2 of that many
// groups and `heads` heads: llama.cpp's tensors (src/models/mamba.cpp, mamba2.cpp), the
// conv1d F32 as llama-quantize leaves it.
struct SsmShape {
  std::uint64_t d, layers, vocab, d_state, dt_rank, groups, heads;
  const char* matrices;
};

GgufWriter ssm_model(const SsmShape& s) {
  const std::string arch = s.groups == 0 ? "mamba" : "mamba2";
  const std::uint64_t inner = 2 * s.d, conv = inner + 2 * s.groups * s.d_state, d_conv = 4;
  GgufWriter w;
  const auto key = [&](const char* k) { return arch + "." + k; };
  w.str("general.architecture", arch)
      .str("general.name", arch + "-test")
      .u32(key("context_length"), 1U << 20U)
      .u32(key("embedding_length"), static_cast<std::uint32_t>(s.d))
      .u32(key("block_count"), static_cast<std::uint32_t>(s.layers))
      .u32(key("feed_forward_length"), 0)
      .u32(key("attention.head_count"), 0)
      .u32(key("ssm.conv_kernel"), static_cast<std::uint32_t>(d_conv))
      .u32(key("ssm.inner_size"), static_cast<std::uint32_t>(inner))
      .u32(key("ssm.state_size"), static_cast<std::uint32_t>(s.d_state))
      .u32(key("ssm.time_step_rank"), static_cast<std::uint32_t>(s.groups == 0 ? s.dt_rank : s.heads))
      .f32(key("attention.layer_norm_rms_epsilon"), 1e-5f);
  if (s.groups != 0) w.u32(key("ssm.group_count"), static_cast<std::uint32_t>(s.groups));
  w.spm_vocabulary(s.vocab);
  w.tensor("token_embd.weight", {s.d, s.vocab}, s.matrices);
  for (std::uint64_t b = 0; b < s.layers; ++b) {
    const std::string p = "blk." + std::to_string(b) + ".";
    w.tensor(p + "attn_norm.weight", {s.d}, "F32")
        .tensor(p + "ssm_conv1d.weight", {d_conv, conv}, "F32")
        .tensor(p + "ssm_conv1d.bias", {conv}, "F32")
        .tensor(p + "ssm_out.weight", {inner, s.d}, s.matrices);
    if (s.groups == 0) {
      w.tensor(p + "ssm_in.weight", {s.d, 2 * inner}, s.matrices)
          .tensor(p + "ssm_x.weight", {inner, s.dt_rank + 2 * s.d_state}, s.matrices)
          .tensor(p + "ssm_dt.weight", {s.dt_rank, inner}, "F32")
          .tensor(p + "ssm_dt.bias", {inner}, "F32")
          .tensor(p + "ssm_a", {s.d_state, inner}, "F32")
          .tensor(p + "ssm_d", {inner}, "F32");
    } else {
      w.tensor(p + "ssm_in.weight", {s.d, inner + conv + s.heads}, s.matrices)
          .tensor(p + "ssm_dt.bias", {s.heads}, "F32")
          .tensor(p + "ssm_a", {1, s.heads}, "F32")
          .tensor(p + "ssm_d", {1, s.heads}, "F32")
          .tensor(p + "ssm_norm.weight", {inner / s.groups, s.groups}, "F32");
    }
  }
  w.tensor("output_norm.weight", {s.d}, "F32");
  return w;
}

// A Nemotron-H of `pattern` (a letter per layer as NemotronHConfig's hybrid_override_pattern:
// M a Mamba-2 mixer, * attention without rotary, - a ReLU² MLP): llama.cpp's nemotron_h
// (src/models/nemotron-h.cpp) reads per-layer head_count_kv and feed_forward_length arrays,
// 0 where the layer has no attention or no MLP.
// With `experts` (Granite 4.0-H Tiny and Small), each layer's MLP is that many routed experts of
// ff (2 a token) beside a shared expert of twice the width (src/models/granite-hybrid.cpp).
GgufWriter nemotron_h(std::uint64_t d, const std::string& pattern, std::uint64_t vocab, const char* matrices,
                      const std::string& arch = "nemotron_h", std::uint64_t experts = 0) {
  const std::uint64_t heads = 4, kv_heads = 2, hd = 64, ff = 512;
  const std::uint64_t inner = 2 * d, d_state = 32, groups = 2, ssm_heads = 8, conv = inner + 2 * groups * d_state;
  // Granite 4.0-H (granitehybrid): a SwiGLU MLP after every mixer, feed_forward_length one value.
  // Falcon-H1 (every layer P): attention and a Mamba-2 mixer side by side, then that MLP.
  const bool falcon = arch == "falcon-h1", granite = arch == "granitehybrid" || falcon;
  std::vector<std::uint32_t> kv, ffn;
  for (const char c : pattern) {
    kv.push_back(c == '*' || c == 'P' ? kv_heads : 0);
    ffn.push_back(c == '-' || c == 'E' ? ff : 0);
  }
  const auto key = [&](const char* k) { return arch + "." + k; };
  GgufWriter w;
  w.str("general.architecture", arch)
      .str("general.name", arch + "-test")
      .u32(key("context_length"), 8192)
      .u32(key("embedding_length"), static_cast<std::uint32_t>(d))
      .u32(key("block_count"), static_cast<std::uint32_t>(pattern.size()))
      .u32(key("attention.head_count"), heads)
      .u32_array(key("attention.head_count_kv"), kv)
      .u32(key("attention.key_length"), hd)
      .u32(key("attention.value_length"), hd)
      .u32(key("ssm.conv_kernel"), 4)
      .u32(key("ssm.inner_size"), static_cast<std::uint32_t>(inner))
      .u32(key("ssm.state_size"), d_state)
      .u32(key("ssm.time_step_rank"), ssm_heads)
      .u32(key("ssm.group_count"), groups)
      .f32(key("attention.layer_norm_epsilon"), 1e-5f)
      .f32(key("attention.layer_norm_rms_epsilon"), 1e-5f);
  if (granite) {
    w.u32(key("feed_forward_length"), ff).u32(key("rope.dimension_count"), hd);
    if (experts > 0) {
      w.u32(key("expert_count"), static_cast<std::uint32_t>(experts))
          .u32(key("expert_used_count"), 2)
          .u32(key("expert_shared_feed_forward_length"), 2 * ff);
    }
  } else {
    w.u32_array(key("feed_forward_length"), ffn);
    if (experts > 0) {  // Nemotron 3 (nemotron_h_moe): E layers of ReLU² experts, sigmoid-routed
      w.u32(key("expert_count"), static_cast<std::uint32_t>(experts))
          .u32(key("expert_used_count"), 2)
          .u32(key("expert_feed_forward_length"), ff)
          .u32(key("expert_shared_feed_forward_length"), 2 * ff)
          .boolean(key("expert_weights_norm"), true)
          .f32(key("expert_weights_scale"), 2.5f);
    }
  }
  w.spm_vocabulary(vocab);
  w.tensor("token_embd.weight", {d, vocab}, matrices);
  for (std::uint64_t b = 0; b < pattern.size(); ++b) {
    const std::string p = "blk." + std::to_string(b) + ".";
    w.tensor(p + "attn_norm.weight", {d}, "F32");
    if (pattern[b] == 'M' || pattern[b] == 'P') {
      w.tensor(p + "ssm_in.weight", {d, inner + conv + ssm_heads}, matrices)
          .tensor(p + "ssm_conv1d.weight", {4, conv}, "F32")
          .tensor(p + "ssm_conv1d.bias", {conv}, "F32")
          .tensor(p + "ssm_dt.bias", {ssm_heads}, "F32")
          .tensor(p + "ssm_a", {1, ssm_heads}, "F32")
          .tensor(p + "ssm_d", {1, ssm_heads}, "F32")
          .tensor(p + "ssm_norm.weight", {inner / groups, groups}, "F32")
          .tensor(p + "ssm_out.weight", {inner, d}, matrices);
    }
    if (pattern[b] == '*' || pattern[b] == 'P') {
      w.tensor(p + "attn_q.weight", {d, heads * hd}, matrices)
          .tensor(p + "attn_k.weight", {d, kv_heads * hd}, matrices)
          .tensor(p + "attn_v.weight", {d, kv_heads * hd}, matrices)
          .tensor(p + "attn_output.weight", {heads * hd, d}, matrices);
    }
    if (pattern[b] == '-') {
      w.tensor(p + "ffn_up.weight", {d, ff}, matrices).tensor(p + "ffn_down.weight", {ff, d}, matrices);
    }
    if (pattern[b] == 'E') {
      w.tensor(p + "ffn_gate_inp.weight", {d, experts}, "F32")
          .tensor(p + "exp_probs_b.bias", {experts}, "F32")
          .tensor(p + "ffn_up_exps.weight", {d, ff, experts}, matrices)
          .tensor(p + "ffn_down_exps.weight", {ff, d, experts}, matrices)
          .tensor(p + "ffn_up_shexp.weight", {d, 2 * ff}, matrices)
          .tensor(p + "ffn_down_shexp.weight", {2 * ff, d}, matrices);
    }
    if (granite && experts > 0) {
      w.tensor(p + "ffn_norm.weight", {d}, "F32")
          .tensor(p + "ffn_gate_inp.weight", {d, experts}, "F32")
          .tensor(p + "ffn_gate_exps.weight", {d, ff, experts}, matrices)
          .tensor(p + "ffn_up_exps.weight", {d, ff, experts}, matrices)
          .tensor(p + "ffn_down_exps.weight", {ff, d, experts}, matrices)
          .tensor(p + "ffn_gate_shexp.weight", {d, 2 * ff}, matrices)
          .tensor(p + "ffn_up_shexp.weight", {d, 2 * ff}, matrices)
          .tensor(p + "ffn_down_shexp.weight", {2 * ff, d}, matrices);
    } else if (granite) {
      w.tensor(p + (falcon ? "ffn_norm" : "ffn_norm.weight"), {d}, "F32")
          .tensor(p + "ffn_gate.weight", {d, ff}, matrices)
          .tensor(p + "ffn_up.weight", {d, ff}, matrices)
          .tensor(p + "ffn_down.weight", {ff, d}, matrices);
    }
  }
  w.tensor("output_norm.weight", {d}, "F32").tensor("output.weight", {d, vocab}, matrices);
  return w;
}

// A Qwen3.5 (llama.cpp's qwen35, src/models/qwen35.cpp): every 4th layer gated attention
// (q_proj twice the heads' width, q/k norms), the others gated DeltaNet of `k_heads` key and
// `v_heads` value heads of `head` (llama.cpp's key and value widths are ssm.state_size), a
// SwiGLU MLP and a post-attention norm in every layer; with `experts`, Qwen3.5-MoE (qwen35moe):
// that many routed experts of 128 (2 per token) and a gated shared expert of 256 instead.
GgufWriter qwen35(std::uint64_t d, std::uint64_t layers, std::uint64_t vocab, const char* matrices,
                  std::uint64_t experts = 0) {
  const std::uint64_t heads = 4, kv_heads = 2, hd = 64, ff = 512, k_heads = 2, v_heads = 4, head = 32;
  const std::uint64_t key = k_heads * head, value = v_heads * head, conv = 2 * key + value;
  const std::uint64_t ff_expert = 128, ff_shared = 256;
  const std::string arch = experts == 0 ? "qwen35" : "qwen35moe";
  const auto k = [&](const char* name) { return arch + "." + name; };
  GgufWriter w;
  w.str("general.architecture", arch)
      .str("general.name", arch + "-test")
      .u32(k("context_length"), 8192)
      .u32(k("embedding_length"), static_cast<std::uint32_t>(d))
      .u32(k("block_count"), static_cast<std::uint32_t>(layers))
      .u32(k("feed_forward_length"), ff)
      .u32(k("attention.head_count"), heads)
      .u32(k("attention.head_count_kv"), kv_heads)
      .u32(k("attention.key_length"), hd)
      .u32(k("attention.value_length"), hd)
      .u32(k("rope.dimension_count"), hd / 4)
      .u32_array(k("rope.dimension_sections"), {3, 3, 2, 0})
      .f32(k("attention.layer_norm_rms_epsilon"), 1e-6f)
      .u32(k("ssm.conv_kernel"), 4)
      .u32(k("ssm.inner_size"), static_cast<std::uint32_t>(value))
      .u32(k("ssm.state_size"), static_cast<std::uint32_t>(head))
      .u32(k("ssm.time_step_rank"), static_cast<std::uint32_t>(v_heads))
      .u32(k("ssm.group_count"), static_cast<std::uint32_t>(k_heads))
      .u32(k("full_attention_interval"), 4);
  if (experts != 0) {
    w.u32(k("expert_count"), static_cast<std::uint32_t>(experts))
        .u32(k("expert_used_count"), 2)
        .u32(k("expert_feed_forward_length"), ff_expert)
        .u32(k("expert_shared_feed_forward_length"), ff_shared);
  }
  w.spm_vocabulary(vocab);
  w.tensor("token_embd.weight", {d, vocab}, matrices);
  for (std::uint64_t b = 0; b < layers; ++b) {
    const std::string p = "blk." + std::to_string(b) + ".";
    w.tensor(p + "attn_norm.weight", {d}, "F32").tensor(p + "post_attention_norm.weight", {d}, "F32");
    if ((b + 1) % 4 == 0) {
      w.tensor(p + "attn_q.weight", {d, 2 * heads * hd}, matrices)
          .tensor(p + "attn_k.weight", {d, kv_heads * hd}, matrices)
          .tensor(p + "attn_v.weight", {d, kv_heads * hd}, matrices)
          .tensor(p + "attn_output.weight", {heads * hd, d}, matrices)
          .tensor(p + "attn_q_norm.weight", {hd}, "F32")
          .tensor(p + "attn_k_norm.weight", {hd}, "F32");
    } else {
      w.tensor(p + "attn_qkv.weight", {d, conv}, matrices)
          .tensor(p + "attn_gate.weight", {d, value}, matrices)
          .tensor(p + "ssm_conv1d.weight", {4, conv}, "F32")
          .tensor(p + "ssm_dt.bias", {v_heads}, "F32")
          .tensor(p + "ssm_a", {v_heads}, "F32")
          .tensor(p + "ssm_beta.weight", {d, v_heads}, matrices)
          .tensor(p + "ssm_alpha.weight", {d, v_heads}, matrices)
          .tensor(p + "ssm_norm.weight", {head}, "F32")
          .tensor(p + "ssm_out.weight", {value, d}, matrices);
    }
    if (experts != 0) {
      w.tensor(p + "ffn_gate_inp.weight", {d, experts}, "F32")
          .tensor(p + "ffn_gate_exps.weight", {d, ff_expert, experts}, matrices)
          .tensor(p + "ffn_up_exps.weight", {d, ff_expert, experts}, matrices)
          .tensor(p + "ffn_down_exps.weight", {ff_expert, d, experts}, matrices)
          .tensor(p + "ffn_gate_inp_shexp.weight", {d}, "F32")
          .tensor(p + "ffn_gate_shexp.weight", {d, ff_shared}, matrices)
          .tensor(p + "ffn_up_shexp.weight", {d, ff_shared}, matrices)
          .tensor(p + "ffn_down_shexp.weight", {ff_shared, d}, matrices);
      continue;
    }
    w.tensor(p + "ffn_gate.weight", {d, ff}, matrices)
        .tensor(p + "ffn_up.weight", {d, ff}, matrices)
        .tensor(p + "ffn_down.weight", {ff, d}, matrices);
  }
  w.tensor("output_norm.weight", {d}, "F32").tensor("output.weight", {d, vocab}, matrices);
  return w;
}

// Qwen3 (per-head q/k norms, no biases), Qwen3-MoE (its MLP 8 routed experts of 128, 2 a token,
// expert_feed_forward_length their width) and a Mixtral-like llama (the same experts, their
// width feed_forward_length): three layers of 4 heads of 128, Q8_0. Qwen3-VL's text models
// (qwen3vl, qwen3vlmoe) have five layers, the first `deepstack` of which add an image's
// deepstack features, and M-RoPE's sections.
GgufWriter qwen3_or_moe(const std::string& arch, std::uint64_t experts, std::uint32_t deepstack = 0) {
  const bool vl = arch.starts_with("qwen3vl");
  const std::uint64_t d = 256, layers = vl ? 5 : 3, heads = 4, kv_heads = 2, hd = 128, ff = 768, expert_ff = 128,
                      vocab = 2048;
  const char* m = "Q8_0";
  const auto key = [&](const char* k) { return arch + "." + k; };
  GgufWriter w;
  w.str("general.architecture", arch)
      .str("general.name", arch + "-test")
      .u32(key("context_length"), 32768)
      .u32(key("embedding_length"), d)
      .u32(key("block_count"), layers)
      .u32(key("feed_forward_length"), arch == "llama" ? expert_ff : ff)
      .u32(key("attention.head_count"), heads)
      .u32(key("attention.head_count_kv"), kv_heads)
      .u32(key("attention.key_length"), hd)
      .u32(key("attention.value_length"), hd)
      .f32(key("attention.layer_norm_rms_epsilon"), 1e-6f);
  if (experts > 0) {
    w.u32(key("expert_count"), static_cast<std::uint32_t>(experts)).u32(key("expert_used_count"), 2);
    if (arch != "llama") w.u32(key("expert_feed_forward_length"), expert_ff);
  }
  if (vl) w.u32(key("n_deepstack_layers"), deepstack).u32_array(key("rope.dimension_sections"), {24, 20, 20, 0});
  w.spm_vocabulary(vocab);
  w.tensor("token_embd.weight", {d, vocab}, m);
  for (std::uint64_t b = 0; b < layers; ++b) {
    const std::string p = "blk." + std::to_string(b) + ".";
    w.tensor(p + "attn_norm.weight", {d}, "F32")
        .tensor(p + "attn_q.weight", {d, heads * hd}, m)
        .tensor(p + "attn_k.weight", {d, kv_heads * hd}, m)
        .tensor(p + "attn_v.weight", {d, kv_heads * hd}, m)
        .tensor(p + "attn_output.weight", {heads * hd, d}, m)
        .tensor(p + "ffn_norm.weight", {d}, "F32");
    if (arch != "llama") w.tensor(p + "attn_k_norm.weight", {hd}, "F32").tensor(p + "attn_q_norm.weight", {hd}, "F32");
    if (experts > 0) {
      w.tensor(p + "ffn_gate_inp.weight", {d, experts}, "F32")
          .tensor(p + "ffn_gate_exps.weight", {d, expert_ff, experts}, m)
          .tensor(p + "ffn_up_exps.weight", {d, expert_ff, experts}, m)
          .tensor(p + "ffn_down_exps.weight", {expert_ff, d, experts}, m);
    } else {
      w.tensor(p + "ffn_gate.weight", {d, ff}, m)
          .tensor(p + "ffn_up.weight", {d, ff}, m)
          .tensor(p + "ffn_down.weight", {ff, d}, m);
    }
  }
  w.tensor("output_norm.weight", {d}, "F32").tensor("output.weight", {d, vocab}, m);
  return w;
}

// Gemma 2's and 3's text models: sandwich norms, heads wider than d_model / heads, a tied
// head, sliding-window layers (Gemma 2: every other; Gemma 3: of every six the last is global)
// and Gemma 3's per-head q/k norms (Gemma 2 soft-caps its scores and logits instead).
GgufWriter gemma(const std::string& arch, std::uint64_t d, std::uint64_t layers, std::uint64_t window,
                 std::uint64_t vocab, const char* matrices) {
  const std::uint64_t heads = 4, kv_heads = 2, hd = 128, ff = 4 * d;
  const bool gemma3 = arch == "gemma3";
  const auto key = [&](const char* k) { return arch + "." + k; };
  GgufWriter w;
  w.str("general.architecture", arch)
      .str("general.name", arch + "-test")
      .u32(key("context_length"), 8192)
      .u32(key("embedding_length"), static_cast<std::uint32_t>(d))
      .u32(key("block_count"), static_cast<std::uint32_t>(layers))
      .u32(key("feed_forward_length"), static_cast<std::uint32_t>(ff))
      .u32(key("attention.head_count"), heads)
      .u32(key("attention.head_count_kv"), kv_heads)
      .u32(key("attention.key_length"), hd)
      .u32(key("attention.value_length"), hd)
      .u32(key("attention.sliding_window"), static_cast<std::uint32_t>(window))
      .f32(key("attention.layer_norm_rms_epsilon"), 1e-6f);
  if (!gemma3) w.f32(key("attn_logit_softcapping"), 50.0f).f32(key("final_logit_softcapping"), 30.0f);
  w.spm_vocabulary(vocab);
  w.tensor("token_embd.weight", {d, vocab}, matrices);
  for (std::uint64_t b = 0; b < layers; ++b) {
    const std::string p = "blk." + std::to_string(b) + ".";
    w.tensor(p + "attn_norm.weight", {d}, "F32")
        .tensor(p + "attn_q.weight", {d, heads * hd}, matrices)
        .tensor(p + "attn_k.weight", {d, kv_heads * hd}, matrices)
        .tensor(p + "attn_v.weight", {d, kv_heads * hd}, matrices)
        .tensor(p + "attn_output.weight", {heads * hd, d}, matrices)
        .tensor(p + "post_attention_norm.weight", {d}, "F32");
    if (gemma3) w.tensor(p + "attn_k_norm.weight", {hd}, "F32").tensor(p + "attn_q_norm.weight", {hd}, "F32");
    w.tensor(p + "ffn_norm.weight", {d}, "F32")
        .tensor(p + "ffn_gate.weight", {d, ff}, matrices)
        .tensor(p + "ffn_up.weight", {d, ff}, matrices)
        .tensor(p + "ffn_down.weight", {ff, d}, matrices)
        .tensor(p + "post_ffw_norm.weight", {d}, "F32");
  }
  w.tensor("output_norm.weight", {d}, "F32");
  return w;
}

// Gemma 4's text model (src/models/gemma4.cpp) as its converter writes it: sliding layers with
// heads of 64 (2 key/value heads), of every six the last a full-attention layer with heads of
// 128 (one key/value head) and no attn_v (its keys are its values), a rope_freqs table for them;
// head_count_kv and the window pattern per-layer arrays; a scalar on each layer's output;
// with `experts`, 8 experts of 64 (2 a token) beside each layer's dense MLP.
// E2B-like (`per_layer` > 0): of every five layers the last is full attention, each layer has
// its own per_layer-wide token embedding, and the last two layers read the cache of the last
// earlier layer of their kind (no attn_k or attn_v) with MLPs twice as wide.
GgufWriter gemma4(std::uint64_t d, std::uint64_t layers, std::uint64_t window, std::uint64_t vocab, bool experts,
                  const char* matrices, std::uint64_t per_layer = 0) {
  const std::uint64_t heads = 4, kv_swa = 2, kv_full = 1, hd_swa = 64, hd_full = 128, ff = 2 * d;
  const std::uint64_t n_expert = 8, expert_ff = 64, pattern = per_layer > 0 ? 5 : 6;
  const std::uint64_t shared = per_layer > 0 ? 2 : 0;
  const auto key = [](const char* k) { return std::string("gemma4.") + k; };
  std::vector<bool> swa;
  std::vector<std::uint32_t> kv, widths;
  for (std::uint64_t b = 0; b < layers; ++b) {
    swa.push_back((b + 1) % pattern != 0);
    kv.push_back(static_cast<std::uint32_t>(swa.back() ? kv_swa : kv_full));
    widths.push_back(static_cast<std::uint32_t>(b + shared >= layers ? 2 * ff : ff));
  }
  GgufWriter w;
  w.str("general.architecture", "gemma4")
      .str("general.name", "gemma4-test")
      .u32(key("context_length"), 8192)
      .u32(key("embedding_length"), static_cast<std::uint32_t>(d))
      .u32(key("block_count"), static_cast<std::uint32_t>(layers))
      .u32(key("attention.head_count"), heads)
      .u32_array(key("attention.head_count_kv"), kv)
      .u32(key("attention.key_length"), hd_full)
      .u32(key("attention.value_length"), hd_full)
      .u32(key("attention.key_length_swa"), hd_swa)
      .u32(key("attention.value_length_swa"), hd_swa)
      .u32(key("attention.sliding_window"), static_cast<std::uint32_t>(window))
      .bool_array(key("attention.sliding_window_pattern"), swa)
      .u32(key("attention.shared_kv_layers"), static_cast<std::uint32_t>(shared))
      .u32(key("embedding_length_per_layer_input"), static_cast<std::uint32_t>(per_layer))
      .u32(key("rope.dimension_count"), hd_full)
      .u32(key("rope.dimension_count_swa"), hd_swa)
      .f32(key("attention.layer_norm_rms_epsilon"), 1e-6f)
      .f32(key("final_logit_softcapping"), 30.0f);
  if (shared > 0) {
    w.u32_array(key("feed_forward_length"), widths);
  } else {
    w.u32(key("feed_forward_length"), static_cast<std::uint32_t>(ff));
  }
  if (experts) {
    w.u32(key("expert_count"), n_expert)
        .u32(key("expert_used_count"), 2)
        .u32(key("expert_feed_forward_length"), expert_ff);
  }
  w.spm_vocabulary(vocab);
  w.tensor("token_embd.weight", {d, vocab}, matrices).tensor("rope_freqs.weight", {hd_full / 2}, "F32");
  if (per_layer > 0) {
    w.tensor("per_layer_token_embd.weight", {per_layer * layers, vocab}, matrices)
        .tensor("per_layer_model_proj.weight", {d, per_layer * layers}, matrices)
        .tensor("per_layer_proj_norm.weight", {per_layer}, "F32");
  }
  for (std::uint64_t b = 0; b < layers; ++b) {
    const std::string p = "blk." + std::to_string(b) + ".";
    const std::uint64_t hd = swa[b] ? hd_swa : hd_full, kv_heads = kv[b], width = widths[b];
    const bool own_cache = b + shared < layers;
    w.tensor(p + "attn_norm.weight", {d}, "F32").tensor(p + "attn_q.weight", {d, heads * hd}, matrices);
    if (own_cache) w.tensor(p + "attn_k.weight", {d, kv_heads * hd}, matrices);
    if (own_cache && (swa[b] || per_layer > 0)) w.tensor(p + "attn_v.weight", {d, kv_heads * hd}, matrices);
    w.tensor(p + "attn_output.weight", {heads * hd, d}, matrices).tensor(p + "attn_q_norm.weight", {hd}, "F32");
    if (own_cache) w.tensor(p + "attn_k_norm.weight", {hd}, "F32");
    w.tensor(p + "post_attention_norm.weight", {d}, "F32")
        .tensor(p + "layer_output_scale.weight", {1}, "F32")
        .tensor(p + "ffn_norm.weight", {d}, "F32")
        .tensor(p + "ffn_gate.weight", {d, width}, matrices)
        .tensor(p + "ffn_up.weight", {d, width}, matrices)
        .tensor(p + "ffn_down.weight", {width, d}, matrices)
        .tensor(p + "post_ffw_norm.weight", {d}, "F32");
    if (per_layer > 0) {
      w.tensor(p + "inp_gate.weight", {d, per_layer}, matrices)
          .tensor(p + "proj.weight", {per_layer, d}, matrices)
          .tensor(p + "post_norm.weight", {d}, "F32");
    }
    if (experts) {
      w.tensor(p + "ffn_gate_inp.weight", {d, n_expert}, "F32")
          .tensor(p + "ffn_gate_inp.scale", {d}, "F32")
          .tensor(p + "pre_ffw_norm_2.weight", {d}, "F32")
          .tensor(p + "post_ffw_norm_1.weight", {d}, "F32")
          .tensor(p + "post_ffw_norm_2.weight", {d}, "F32")
          .tensor(p + "ffn_gate_up_exps.weight", {d, 2 * expert_ff, n_expert}, matrices)
          .tensor(p + "ffn_down_exps.weight", {expert_ff, d, n_expert}, matrices)
          .tensor(p + "ffn_down_exps.scale", {n_expert}, "F32");
    }
  }
  w.tensor("output_norm.weight", {d}, "F32");
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: memplan_llama_cpp_models DIR\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  // A Q4_K_M-like llama (k-quant matrices, Q6_K head), a tied 8-bit qwen2 with biases, and
  // an f16 gpt2; the norms F32, as converters write them.
  model({"llama", 256, 3, 4, 2, 768, 2048, 4096, "Q4_K", "Q4_K", "Q6_K"}).write(dir / "llama-q4_k.gguf");
  model({"qwen2", 384, 2, 6, 2, 1024, 4096, 8192, "Q8_0", "Q8_0", nullptr}).write(dir / "qwen2-q8_0-tied.gguf");
  // Qwen2-VL's and Qwen2.5-VL's text model: qwen2 with M-RoPE (four positions a token).
  model({"qwen2vl", 384, 2, 6, 2, 1024, 4096, 8192, "Q8_0", "Q8_0", "Q8_0"}).write(dir / "qwen2vl-q8_0.gguf");
  model({"gpt2", 256, 2, 4, 4, 1024, 2048, 1024, "F16", "F16", "F16"}).write(dir / "gpt2-f16.gguf");
  // A draft for qwen2-q8_0-tied: within llama-server's 128 tokens of its vocabulary, and so
  // narrow that its logits outweigh its layers.
  model({"llama", 128, 2, 2, 1, 384, 4160, 4096, "Q8_0", "Q8_0", "Q8_0"}).write(dir / "llama-draft-q8_0.gguf");
  // A Mamba in q8_0 and a Mamba-2 of two groups in f16, both tied (state-space layers: a
  // recurrent state per sequence, no KV cache).
  ssm_model({256, 3, 2048, 16, 16, 0, 0, "Q8_0"}).write(dir / "mamba-q8_0.gguf");
  ssm_model({256, 2, 2048, 32, 0, 2, 8, "F16"}).write(dir / "mamba2-f16.gguf");
  // A hybrid: Nemotron-H's Mamba-2, attention and MLP layers, its head untied.
  nemotron_h(256, "M*M-M*", 2048, "Q8_0").write(dir / "nemotron_h-q8_0.gguf");
  // Nemotron 3: Mamba-2, attention and layers of 8 ReLU² experts (2 a token) beside a shared expert.
  nemotron_h(256, "MEM*EM", 2048, "Q8_0", "nemotron_h_moe", 8).write(dir / "nemotron_h_moe-q8_0.gguf");
  // Granite 4.0-H: Mamba-2 or attention, a gated MLP in every layer.
  nemotron_h(256, "MM*MM*", 2048, "Q4_K", "granitehybrid").write(dir / "granitehybrid-q4_k.gguf");
  // Granite 4.0-H Tiny's kind: 8 routed experts (2 a token) and a shared expert in every layer.
  nemotron_h(256, "MM*MM*", 2048, "Q8_0", "granitehybrid", 8).write(dir / "granitehybrid-moe-q8_0.gguf");
  // Falcon-H1: attention and a Mamba-2 mixer side by side in every layer, then a gated MLP.
  nemotron_h(256, "PPP", 2048, "Q8_0", "falcon-h1").write(dir / "falcon-h1-q8_0.gguf");
  // Qwen3.5: gated DeltaNet layers and a gated attention layer in four.
  qwen35(256, 8, 2048, "Q8_0").write(dir / "qwen35-q8_0.gguf");
  // Qwen3.5-MoE: the same layers with 8 routed experts and a gated shared expert, in f16.
  qwen35(256, 4, 2048, "F16", 8).write(dir / "qwen35moe-f16.gguf");
  qwen3_or_moe("qwen3", 0).write(dir / "qwen3-q8_0.gguf");
  qwen3_or_moe("qwen3moe", 8).write(dir / "qwen3moe-q8_0.gguf");
  qwen3_or_moe("llama", 8).write(dir / "llama-moe-q8_0.gguf");
  // Qwen3-VL's text models: two deepstack layers, as many as mmproj-qwen3vl-f16's mergers.
  qwen3_or_moe("qwen3vl", 0, 2).write(dir / "qwen3vl-q8_0.gguf");
  qwen3_or_moe("qwen3vlmoe", 8, 2).write(dir / "qwen3vlmoe-q8_0.gguf");
  // Gemma 3: seven layers (six sliding over 512 tokens, one global), Q8_0; and with a vocabulary
  // of 32,768, whose logits outweigh a layer (as Gemma 3's 262,144 do).
  gemma("gemma3", 256, 7, 512, 2048, "Q8_0").write(dir / "gemma3-q8_0.gguf");
  gemma4(256, 7, 512, 2048, false, "Q8_0").write(dir / "gemma4-q8_0.gguf");
  gemma4(256, 7, 512, 2048, true, "Q8_0").write(dir / "gemma4moe-q8_0.gguf");
  gemma4(256, 7, 512, 2048, false, "Q8_0", 32).write(dir / "gemma4e-q8_0.gguf");
  gemma("gemma3", 256, 7, 512, 32768, "Q8_0").write(dir / "gemma3-v32k-q8_0.gguf");
  // Gemma 2: six layers, every other sliding over 512 tokens, soft-capped; a vocabulary of 32,768.
  gemma("gemma2", 256, 6, 512, 32768, "Q8_0").write(dir / "gemma2-v32k-q8_0.gguf");
  // Vision towers for --mmproj beside llama-q4_k (width 256): Gemma 3's SigLIP and its pooled
  // projector.
  memplan::testing::gemma3_mmproj({224, 14, 192, 3, 3, 768, 256, "F16"}).write(dir / "mmproj-gemma3-f16.gguf");
  // Qwen3-VL's: four layers of width 128 with deepstack mergers on two, positions on a 24 x 24
  // grid of 16-pixel patches, merged 2 x 2 into the same width.
  memplan::testing::qwen3vl_mmproj({384, 16, 128, 4, 2, 512, 256, {1, 3}, "F16"})
      .write(dir / "mmproj-qwen3vl-f16.gguf");
  // Qwen2-VL's and Qwen2.5-VL's beside qwen2vl-q8_0 (width 384): three layers of width 128 over
  // 14-pixel patches; Qwen2.5-VL's four attend in windows but every second.
  memplan::testing::qwen2vl_mmproj({false, 448, 14, 128, 3, 2, 512, 384, 0, "F16"})
      .write(dir / "mmproj-qwen2vl-f16.gguf");
  memplan::testing::qwen2vl_mmproj({true, 448, 14, 128, 4, 2, 512, 384, 2, "F16"})
      .write(dir / "mmproj-qwen2.5vl-f16.gguf");
  return 0;
}
