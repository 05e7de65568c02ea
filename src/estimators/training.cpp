#include "memplan/estimators/training.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <utility>

#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/rows.hpp"
#include "memplan/core/text.hpp"

namespace memplan {

namespace {

// Gemma's RMSNorm (Gemma, Gemma 2, Gemma 3): output = norm(x.float()) * (1 + weight.float()).
bool gemma_rmsnorm(const ModelSpec& s) {
  return s.norm == NormKind::rmsnorm &&
         (s.family == Family::gemma || s.family == Family::gemma2 || s.family == Family::gemma3);
}

constexpr std::array<std::pair<Optimizer, std::string_view>, 9> kOptimizers{{
    {Optimizer::none, "none"},
    {Optimizer::sgd, "sgd"},
    {Optimizer::sgd_momentum, "sgd_momentum"},
    {Optimizer::adam, "adam"},
    {Optimizer::adamw, "adamw"},
    {Optimizer::adam_8bit, "adam_8bit"},
    {Optimizer::adafactor, "adafactor"},
    {Optimizer::paged_adamw, "paged_adamw"},
    {Optimizer::paged_adamw_8bit, "paged_adamw_8bit"},
}};

constexpr std::array<std::pair<Recompute, std::string_view>, 3> kRecompute{{
    {Recompute::none, "none"},
    {Recompute::selective, "selective"},
    {Recompute::full, "full"},
}};

constexpr std::uint64_t kAdam8bitBlock = 256;     // bitsandbytes: one fp32 absmax per 256 state elements
constexpr std::uint64_t kAdam8bitMinSize = 4096;  // bitsandbytes min_8bit_size: smaller tensors keep 32-bit states
constexpr std::uint64_t kPagedMinSize = 100000;  // bitsandbytes get_state_buffer: smaller tensors' states are not paged

Item mask(const std::string& name, const TensorDims& dims) { return tensor_row(name, dims, 8, "1 B (bool mask)"); }

// `count` copies of an item (count layers of one layer's term).
Item times(const Item& item, std::uint64_t count, const std::string& label) {
  Item out = item;
  out.bytes = item.bytes.times(count, item.name);
  out.formula = std::to_string(count) + " " + label + " x (" + item.formula + ")";
  out.detail.clear();
  return out;
}

bool is_layer_group(const TensorGroup& g) { return g.layers != LayerSet::none; }

bool is_adaptable(const TensorGroup& g) {
  return g.role == TensorRole::linear &&
         (g.component == "attention" || g.component == "ssm" || g.component == "mlp" || g.component == "experts" ||
          g.component == "encoder" || g.component == "cross_attention");
}

// Whether LoRA target `target` names group `g`: its name, or, as PEFT matches module names,
// the last part of an encoder's or a cross-attention's ("q" is encoder.q and cross.q too).
bool targets(const TensorGroup& g, const std::string& target) {
  const std::string_view name = g.name;
  return name == target ||
         (name.size() > target.size() && name.ends_with(target) && name[name.size() - target.size() - 1] == '.' &&
          (name.starts_with("encoder.") || name.starts_with("cross.")));
}

// A trainable tensor run: `copies` tensors of rows x cols.
struct Trainable {
  std::string name;
  std::uint64_t rows = 0;
  std::uint64_t cols = 1;
  std::uint64_t copies = 1;
  bool per_layer = false;            // repeated in every block
  bool head = false;                 // gradient produced at the top of backward (LM head, final norm, a tied embedding)
  LayerSet layers = LayerSet::none;  // the blocks holding it (dense or MoE MLPs differ)
  std::uint64_t elements() const { return checked_mul(rows, cols, "elements of", name); }
  std::uint64_t params() const { return checked_mul(copies, elements(), "parameters of", name); }
};

std::vector<std::string> adaptable_names(const ModelSpec& spec) {
  std::vector<std::string> names;
  for (const TensorGroup& g : model_tensors(spec)) {
    if (is_adaptable(g) && std::find(names.begin(), names.end(), g.name) == names.end()) names.emplace_back(g.name);
  }
  return names;
}

std::vector<Trainable> trainable_tensors(const ModelSpec& spec, const LoraOptions& lora) {
  std::vector<Trainable> out;
  if (lora.rank == 0) {
    for (const TensorGroup& g : model_tensors(spec)) {
      if (g.component == "vision") continue;  // a vision tower stays frozen (LLaVA's and Qwen2-VL's recipes)
      const bool head = g.component == "lm_head" || g.name.rfind("final_norm", 0) == 0 ||
                        (spec.lm_head == LmHead::tied && g.name == "token_embedding");
      out.push_back({std::string(g.name), g.rows, g.cols, g.copies, is_layer_group(g), head, g.layers});
    }
    return out;
  }
  if (lora.targets.empty())
    throw Error(ErrorKind::invalid_input, "LoRA needs at least one target projection", "lora_targets");
  const std::vector<std::string> names = adaptable_names(spec);
  const bool all = std::find(lora.targets.begin(), lora.targets.end(), "all") != lora.targets.end();
  for (const std::string& t : lora.targets) {
    if (t != "all" && std::find(names.begin(), names.end(), t) == names.end()) {
      throw Error(ErrorKind::invalid_input,
                  "unknown LoRA target '" + printable(t) + "' for " + spec.name + did_you_mean(t, names) +
                      "; accepted: " + quoted_list(names) + " or 'all'",
                  "lora_targets");
    }
  }
  for (const TensorGroup& g : model_tensors(spec)) {
    if (!is_adaptable(g)) continue;
    if (!all &&
        std::none_of(lora.targets.begin(), lora.targets.end(), [&](const std::string& t) { return targets(g, t); }))
      continue;
    out.push_back({"lora_A." + std::string(g.name), lora.rank, g.cols, g.copies, true, false, g.layers});
    out.push_back({"lora_B." + std::string(g.name), g.rows, lora.rank, g.copies, true, false, g.layers});
  }
  return out;
}

// Whether some blocks are dense and others MoE (DeepSeek's first_k_dense_replace).
bool dense_and_moe_blocks(const ModelSpec& s) {
  return layers_in(s, LayerSet::moe_mlp, 0, s.n_layers) > 0 && layers_in(s, LayerSet::dense_mlp, 0, s.n_layers) > 0;
}

// Megatron-core's get_capacity(tokens * k, E, factor): ceil(k * tokens / E * factor) slots per
// expert, computed in floating point as it does.
std::uint64_t expert_capacity(const ModelSpec& s, const TrainingShape& shape) {
  const std::uint64_t routed = checked_mul(checked_mul(shape.seq, shape.batch, "tokens"), s.experts_per_token,
                                           "routed tokens");
  const double slots = std::ceil(static_cast<double>(routed) / static_cast<double>(s.experts) *
                                 shape.expert_capacity_factor);
  if (!(slots < 9.2e18)) throw Error(ErrorKind::overflow, "expert capacity exceeds 64 bits", "expert_capacity_factor");
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(slots));
}

std::uint64_t float_bits(const Precision& p, const char* key, const std::string& what) {
  if (is_quantized(p)) {
    throw Error(ErrorKind::invalid_input,
                what + " must be a float precision (fp32, tf32, bf16, fp16), got " + to_string(p), key);
  }
  return element_bits(p.format);
}

// Per-tensor optimizer state, in bytes, for one tensor of `t`.
Bytes state_bytes(Optimizer o, const Trainable& t, std::uint64_t state_bits) {
  const std::uint64_t n = t.elements();
  switch (o) {
    case Optimizer::none:
    case Optimizer::sgd: return Bytes(0);
    case Optimizer::sgd_momentum: return bits_to_bytes(n, state_bits, "momentum");
    case Optimizer::adam:
    case Optimizer::adamw: return bits_to_bytes(n, state_bits, "Adam states").times(2, "Adam states");
    case Optimizer::paged_adamw: return bits_to_bytes(n, 32, "Adam states").times(2, "Adam states");
    case Optimizer::adam_8bit:
    case Optimizer::paged_adamw_8bit: {
      if (n < kAdam8bitMinSize) return bits_to_bytes(n, 32, "Adam states").times(2, "Adam states");
      const std::uint64_t per_state = checked_add(n, checked_mul(ceil_div(n, kAdam8bitBlock), 4, "absmax"),
                                                  "8-bit state");
      return Bytes(per_state).times(2, "8-bit Adam states");
    }
    case Optimizer::adafactor: {
      if (t.rows > 1 && t.cols > 1) {
        return bits_to_bytes(checked_add(t.rows, t.cols, "factored moments"), state_bits, "Adafactor");
      }
      return bits_to_bytes(n, state_bits, "Adafactor");
    }
  }
  return Bytes(0);
}

std::string optimizer_formula(Optimizer o, std::uint64_t state_bits) {
  const std::string e = std::to_string(state_bits / 8) + " B";
  switch (o) {
    case Optimizer::none: return "no optimizer";
    case Optimizer::sgd: return "SGD keeps no state";
    case Optimizer::sgd_momentum: return "one momentum buffer per parameter at " + e;
    case Optimizer::adam:
    case Optimizer::adamw: return "exp_avg + exp_avg_sq: 2 x parameters x " + e;
    case Optimizer::adam_8bit:
    case Optimizer::paged_adamw_8bit:
      return "bitsandbytes 8-bit: 2 x (1 B per element + 4 B absmax per 256) per tensor; tensors under 4096 elements "
             "keep 2 x 4 B";
    case Optimizer::paged_adamw: return "bitsandbytes 32-bit: exp_avg + exp_avg_sq, 2 x parameters x 4 B";
    case Optimizer::adafactor:
      return "Adafactor (beta1=None): (rows + cols) x " + e + " per matrix, elements x " + e + " per vector";
  }
  return "";
}

}  // namespace

std::string to_string(Optimizer optimizer) {
  for (const auto& [o, name] : kOptimizers) {
    if (o == optimizer) return std::string(name);
  }
  return "adamw";
}

std::vector<std::string> optimizer_names() {
  std::vector<std::string> out;
  out.reserve(std::size(kOptimizers));
  for (const auto& entry : kOptimizers) out.emplace_back(entry.second);
  return out;
}

Optimizer parse_optimizer(std::string_view text) {
  for (const auto& [o, name] : kOptimizers) {
    if (name == text) return o;
  }
  throw Error(ErrorKind::invalid_input,
              "unknown optimizer '" + printable(text) + "'" + did_you_mean(text, optimizer_names()) +
                  "; accepted: " + quoted_list(optimizer_names()),
              "optimizer");
}

std::string to_string(OptimizerImpl impl) {
  switch (impl) {
    case OptimizerImpl::automatic: return "auto";
    case OptimizerImpl::foreach: return "foreach";
    case OptimizerImpl::fused: return "fused";
    case OptimizerImpl::loop: return "loop";
  }
  return "auto";
}

OptimizerImpl parse_optimizer_impl(std::string_view text) {
  for (const OptimizerImpl i :
       {OptimizerImpl::automatic, OptimizerImpl::foreach, OptimizerImpl::fused, OptimizerImpl::loop}) {
    if (to_string(i) == text) return i;
  }
  const std::vector<std::string> names{"auto", "foreach", "fused", "loop"};
  throw Error(ErrorKind::invalid_input,
              "unknown optimizer implementation '" + printable(text) + "'" + did_you_mean(text, names) +
                  "; accepted: " + quoted_list(names),
              "optimizer_impl");
}

std::string to_string(MixedPrecision mode) {
  switch (mode) {
    case MixedPrecision::amp: return "amp";
    case MixedPrecision::master: return "master";
    case MixedPrecision::pure: return "pure";
    case MixedPrecision::fp32: return "fp32";
  }
  return "amp";
}

MixedPrecision parse_mixed_precision(std::string_view text) {
  for (const MixedPrecision m :
       {MixedPrecision::amp, MixedPrecision::master, MixedPrecision::pure, MixedPrecision::fp32}) {
    if (to_string(m) == text) return m;
  }
  const std::vector<std::string> names{"amp", "master", "pure", "fp32"};
  throw Error(ErrorKind::invalid_input,
              "unknown mixed precision '" + printable(text) + "'" + did_you_mean(text, names) +
                  "; accepted: " + quoted_list(names) +
                  " (amp: torch.autocast over fp32 weights; master: 16-bit weights with an fp32 master copy; pure: "
                  "16-bit throughout; fp32: none)",
              "mixed_precision");
}

TorchVersion parse_torch_version(std::string_view text) {
  const std::optional<ReleaseNumbers> r = release_numbers(text);
  if (!r || r->parts[0] == 0) {
    throw Error(ErrorKind::invalid_input,
                "`torch_version` is a PyTorch release such as 2.1 or 1.13, not '" + printable(text) + "'",
                "torch_version");
  }
  return {r->parts[0], r->parts[1]};
}

std::string to_string(Recompute recompute) {
  for (const auto& [r, name] : kRecompute) {
    if (r == recompute) return std::string(name);
  }
  return "none";
}

Recompute parse_recompute(std::string_view text) {
  std::vector<std::string> names;
  for (const auto& [r, name] : kRecompute) {
    if (name == text) return r;
    names.emplace_back(name);
  }
  throw Error(ErrorKind::invalid_input,
              "unknown recomputation '" + printable(text) + "'" + did_you_mean(text, names) +
                  "; accepted: " + quoted_list(names),
              "recompute");
}

bool recomputed_by_selective(const std::string& activation) {
  return activation == "softmax_output" || activation == "attention_dropout_mask" ||
         activation == "attention_dropout_output" || activation == "probabilities_16bit";
}

Bytes TrainingPhase::total() const { return sum_bytes(components, "the phase total"); }

std::uint64_t trainable_parameters(const ModelSpec& spec, const LoraOptions& lora) {
  std::uint64_t total = 0;
  for (const Trainable& t : trainable_tensors(spec, lora))
    total = checked_add(total, t.params(), "trainable parameters");
  return total;
}

namespace {

// What a state-space layer's mixer keeps for backward as mamba_ssm's fused kernels save it
// (transformers' training path): the in_proj input; Mamba (mamba_inner_fn, checkpoint_lvl 1,
// which recomputes the convolution and the step sizes): xz, x_dbl, contiguous copies of B and
// C, the scan output and its fp32 intermediate states per 2048-token chunk; Mamba-2
// (mamba_split_conv1d_scan_combined, which recomputes the norm and out_proj's input): in_proj's
// output zxbcdt, the scan output and the gated norm's fp32 rstd.
void ssm_activations(const ModelSpec& s, const TrainingShape& shape, std::vector<Item>& rows) {
  const SsmSizes& m = s.ssm;
  const std::uint64_t b = shape.batch, seq = shape.seq;
  const Precision& e = shape.compute;
  rows.push_back(tensor_row("ssm_input", {{"s", seq}, {"b", b}, {"h", s.d_model}}, e));
  if (m.version == 1) {
    rows.push_back(tensor_row("xz", {{"s", seq}, {"b", b}, {"2 d_inner", 2 * m.d_inner}}, e));
    rows.push_back(tensor_row("x_dbl", {{"s", seq}, {"b", b}, {"dt_rank+2 d_state", m.dt_rank + 2 * m.d_state}}, e));
    rows.push_back(tensor_row("b_c_copies", {{"2", 2}, {"s", seq}, {"b", b}, {"d_state", m.d_state}}, e));
    rows.push_back(tensor_row("scan_output", {{"s", seq}, {"b", b}, {"d_inner", m.d_inner}}, e));
    rows.push_back(tensor_row(
        "scan_states",
        {{"b", b}, {"d_inner", m.d_inner}, {"chunks of 2048", ceil_div(seq, 2048)}, {"2 d_state", 2 * m.d_state}},
        precisions::fp32));
    return;
  }
  if (m.version == 3) {
    // A gated DeltaNet with fla's kernels (derived from their code, not measured): z is a view
    // of in_proj_qkvz's output, which it keeps whole; the convolution's input and output; the
    // gates; chunk_gated_delta_rule's fp32 K K^T per chunk; the output, and the gated norm's
    // output that out_proj saves.
    const std::uint64_t conv = ssm_conv_channels(m);
    rows.push_back(tensor_row("in_proj_qkvz", {{"s", seq}, {"b", b}, {"conv+d_inner", conv + m.d_inner}}, e));
    rows.push_back(tensor_row("conv_in_out", {{"2", 2}, {"s", seq}, {"b", b}, {"conv", conv}}, e));
    rows.push_back(tensor_row("gates", {{"2", 2}, {"s", seq}, {"b", b}, {"heads", m.heads}}, precisions::fp32));
    rows.push_back(
        tensor_row("chunk_kkt", {{"s", seq}, {"b", b}, {"heads", m.heads}, {"chunk", m.chunk}}, precisions::fp32));
    rows.push_back(tensor_row("scan_and_norm_out", {{"2", 2}, {"s", seq}, {"b", b}, {"d_inner", m.d_inner}}, e));
    return;
  }
  const std::uint64_t width = m.d_inner + ssm_conv_channels(m) + m.heads;
  rows.push_back(tensor_row("zxbcdt", {{"s", seq}, {"b", b}, {"d_inner+conv+heads", width}}, e));
  rows.push_back(tensor_row("scan_output", {{"s", seq}, {"b", b}, {"d_inner", m.d_inner}}, e));
  rows.push_back(tensor_row("norm_rstd", {{"s", seq}, {"b", b}, {"groups", m.groups}}, precisions::fp32));
}

// torch.autocast casts each matmul's input on its own (its cache holds weights only): the
// normed input is copied once per projection reading it. One for a family that fuses q, k
// and v into one linear (GPT-2's and GPT-BigCode's c_attn, GPT-NeoX's, Falcon's and BLOOM's
// query_key_value, Phi-3's qkv_proj); two for latent attention (q_a or q, and kv_a).
std::uint64_t qkv_casts(const ModelSpec& s) {
  switch (s.family) {
    case Family::gpt2:
    case Family::gpt_bigcode:
    case Family::gpt_neox:
    case Family::falcon:
    case Family::bloom:
    case Family::phi3: return 1;
    default: return s.mla.kv_lora_rank != 0 ? 2 : 3;
  }
}

// The same for the MLP's input: gate and up (one for Phi-3's fused gate_up_proj), a plain
// MLP's up, or a MoE block's router and its shared experts' gate and up (the routed experts
// cast the rows they gather: expert_inputs).
std::uint64_t mlp_casts(const ModelSpec& s, bool moe) {
  if (moe) return 1 + (s.d_shared_expert == 0 ? 0 : s.mlp == MlpKind::gated ? 2 : 1);
  return s.mlp == MlpKind::gated && s.family != Family::phi3 ? 2 : 1;
}

// What a decoder layer's cross-attention keeps for backward: its norm's input (and the
// fp32 copy of an unfused RMSNorm), the query's input, q, the source's keys and values,
// the probabilities (eager) or the softmax statistics (fused), the output before o.
std::vector<Item> cross_attention_activations(const ModelSpec& s, const TrainingShape& shape) {
  const std::uint64_t b = shape.batch, seq = shape.seq, src = shape.source, h = s.d_model, a = s.n_heads;
  const Precision& e = shape.compute;
  const std::uint64_t width = checked_mul(a, s.d_head, "n_heads * d_head");
  std::vector<Item> rows;
  rows.push_back(tensor_row("cross_norm_input", {{"s", seq}, {"b", b}, {"h", h}}, e));
  if (s.norm == NormKind::rmsnorm && shape.hf_unfused_ops)
    rows.push_back(tensor_row("cross_rmsnorm_fp32_copy", {{"s", seq}, {"b", b}, {"h", h}}, precisions::fp32));
  rows.push_back(tensor_row("cross_q_input", {{"s", seq}, {"b", b}, {"h", h}}, e));
  rows.push_back(tensor_row("cross_q", {{"s", seq}, {"b", b}, {"a*d_head", width}}, e));
  rows.push_back(tensor_row("cross_kv", {{"2", 2}, {"source", src}, {"b", b}, {"a*d_head", width}}, e));
  const TensorDims scores{{"b", b}, {"a", a}, {"s", seq}, {"source", src}};
  if (shape.flash_attention) {
    rows.push_back(tensor_row("cross_softmax_lse", {{"b", b}, {"a", a}, {"s", seq}}, precisions::fp32));
  } else {
    rows.push_back(tensor_row("cross_softmax_output", scores, shape.softmax_fp32 ? precisions::fp32 : e));
    if (shape.softmax_fp32 && element_bits(e.format) != 32)
      rows.push_back(tensor_row("cross_probabilities_16bit", scores, e));
  }
  rows.push_back(tensor_row("cross_attention_output", {{"s", seq}, {"b", b}, {"a*d_head", width}}, e));
  return rows;
}

// An attention's and an MLP's (or experts') saved tensors, term by term.
void attention_activations(const ModelSpec& s, const TrainingShape& shape, std::vector<Item>& rows);
void mlp_activations(const ModelSpec& s, const TrainingShape& shape, bool moe, std::vector<Item>& rows);

// What a use of a shared block (Zamba2) keeps beyond its attention and MLP: the concatenated
// input its 2 d_model norm reads, the MLP norm's input, its linear's input, and each adapter's
// rank-wide middle (the up matrix's input).
void shared_block_activations(const ModelSpec& s, const TrainingShape& shape, std::vector<Item>& rows) {
  const std::uint64_t b = shape.batch, seq = shape.seq, h = s.d_model;
  const Precision& e = shape.compute;
  rows.push_back(tensor_row("shared_block_input", {{"s", seq}, {"b", b}, {"2h", 2 * h}}, e));
  rows.push_back(tensor_row("pre_mlp_norm_input", {{"s", seq}, {"b", b}, {"h", h}}, e));
  if (s.norm == NormKind::rmsnorm && shape.hf_unfused_ops)
    rows.push_back(tensor_row("shared_norm_fp32_copies", {{"s", seq}, {"b", b}, {"3h", 3 * h}}, precisions::fp32));
  if (!shape.frozen_base) rows.push_back(tensor_row("shared_linear_input", {{"s", seq}, {"b", b}, {"h", h}}, e));
  const SharedBlocks& sb = s.shared;
  const std::uint64_t adapters = (sb.mlp_adapters ? 1 : 0) + (sb.attention_adapters ? 3 : 0);
  if (adapters != 0) {
    rows.push_back(
        tensor_row("adapter_middles", {{"adapters", adapters}, {"s", seq}, {"b", b}, {"rank", sb.adapter_rank}}, e));
  }
}

}  // namespace

Item layer_activations(const ModelSpec& s, const TrainingShape& shape, bool dense_block, BlockMixer mixer) {
  const bool ssm_block = mixer == BlockMixer::ssm;
  const bool both = mixer == BlockMixer::parallel;
  // Nemotron-H's MLPs are layers of their own; Zamba2's are its shared blocks', in the attention layers.
  const bool has_mlp = s.mlp != MlpKind::none && (mlp_only_layers(s) == 0 || mixer == BlockMixer::none) &&
                       !(s.shared.blocks != 0 && ssm_block);
  const std::uint64_t b = shape.batch, seq = shape.seq, h = s.d_model;
  const bool moe = s.experts > 0 && !dense_block;
  if (shape.expert_capacity_factor > 0 && s.experts == 0) {
    throw Error(ErrorKind::invalid_input,
                "`expert_capacity_factor` pads MoE experts to a capacity: " + s.name + " has no experts",
                "expert_capacity_factor");
  }
  if (b == 0) throw Error(ErrorKind::invalid_input, "batch must be at least 1", "batch");
  if (seq == 0) throw Error(ErrorKind::invalid_input, "seq_len must be at least 1", "seq_len");
  const Precision& e = shape.compute;
  float_bits(e, "compute", "the activation dtype");
  const TensorDims sbh{{"s", seq}, {"b", b}, {"h", h}};
  std::vector<Item> rows;
  const TensorDims norms{{"norms", s.norms_per_layer}, {"s", seq}, {"b", b}, {"h", h}};
  // Gemma's RMSNorm multiplies by (1 + weight) in fp32: the normalised x it keeps for the
  // weight's gradient is fp32, where LlamaRMSNorm keeps it cast back (measured, docs/accuracy.md).
  const bool fp32_normed = gemma_rmsnorm(s) && shape.hf_unfused_ops;
  if (s.norms_per_layer > 0) {
    if (fp32_normed) {
      rows.push_back(tensor_row("rmsnorm_fp32_outputs", norms, precisions::fp32));
    } else {  // under autocast the residual stream and what a norm makes of it stay fp32
      rows.push_back(tensor_row("norm_inputs", norms, shape.autocast ? precisions::fp32 : e));
    }
  }
  // LlamaRMSNorm: x.to(fp32), then x * rsqrt(mean(x^2)) kept for the weight's product:
  // 4 bytes per element more than a fused norm keeps, in any compute dtype.
  if (s.norms_per_layer > 0 && s.norm == NormKind::rmsnorm && shape.hf_unfused_ops) {
    rows.push_back(tensor_row("rmsnorm_fp32_copies", norms, precisions::fp32));
  }
  if (ssm_block || both) ssm_activations(s, shape, rows);
  if (mixer == BlockMixer::attention || both) attention_activations(s, shape, rows);
  if (s.shared.blocks != 0 && both) shared_block_activations(s, shape, rows);
  if (shape.dropout && mixer != BlockMixer::none) rows.push_back(mask("attention_residual_dropout_mask", sbh));
  if (has_mlp) mlp_activations(s, shape, moe, rows);
  const bool mixed = dense_and_moe_blocks(s);
  const bool hybrid = (ssm_only_layers(s) > 0 && attention_layers(s) > 0) || mlp_only_layers(s) > 0;
  const std::string prefix = !hybrid                     ? ""
                             : mixer == BlockMixer::ssm  ? "ssm_"
                             : mixer == BlockMixer::none ? "mlp_"
                                                         : "attention_";
  return group_row(prefix +
                       (!mixed ? ""
                        : moe  ? "moe_"
                               : "dense_") +
                       "layer_activations",
                   std::move(rows),
                   "what one block keeps for backward (Korthikanti et al. 2022, term by term" +
                       std::string(ssm_block || both ? "; the state-space mixer as mamba_ssm's kernels save it" : "") +
                       "), s=" + std::to_string(seq) + ", b=" + std::to_string(b) + ", h=" + std::to_string(h) +
                       (ssm_block ? std::string() : ", a=" + std::to_string(s.n_heads)) +
                       (ssm_block               ? ""
                        : shape.flash_attention ? ", fused attention"
                                                : ", eager attention"));
}

namespace {
void attention_activations(const ModelSpec& s, const TrainingShape& shape, std::vector<Item>& rows) {
  const std::uint64_t b = shape.batch, seq = shape.seq, h = s.d_model, a = s.n_heads;
  const Precision& e = shape.compute;
  const std::uint64_t q_width = checked_mul(a, s.d_head, "n_heads * d_head");
  const std::uint64_t kv_width = checked_mul(s.n_kv_heads, s.d_head, "n_kv_heads * d_head");
  const MlaSizes& m = s.mla;
  const bool mla = m.kv_lora_rank != 0;
  // Latent attention's values are v_head_dim wide, its keys qk_nope + qk_rope (d_head).
  const std::uint64_t v_width = mla ? checked_mul(a, m.v_head_dim, "n_heads * v_head_dim") : kv_width;
  // A shared block's (Zamba2) attention reads the layer's input beside the embeddings: 2h wide.
  const bool wide = s.shared.blocks != 0;
  const std::pair<std::string, std::uint64_t> in{wide ? "2h" : "h", wide ? 2 * h : h};
  if (shape.autocast) {
    rows.push_back(tensor_row("qkv_input_casts", {{"casts", qkv_casts(s)}, {"s", seq}, {"b", b}, in}, e));
  } else {
    rows.push_back(tensor_row("qkv_input", {{"s", seq}, {"b", b}, in}, e));
  }
  if (mla) {
    // The low-rank projections' outputs, each kept as its norm's input and the next projection's.
    if (m.q_lora_rank != 0)
      rows.push_back(tensor_row("q_latent", {{"2", 2}, {"s", seq}, {"b", b}, {"q_lora_rank", m.q_lora_rank}}, e));
    rows.push_back(tensor_row(
        "kv_latent", {{"s", seq}, {"b", b}, {"kv_lora_rank+qk_rope", m.kv_lora_rank + m.qk_rope_head_dim}}, e));
    rows.push_back(tensor_row("kv_latent_normed", {{"s", seq}, {"b", b}, {"kv_lora_rank", m.kv_lora_rank}}, e));
  }
  // q/k norms (Qwen3, Gemma 3, OLMo 2) are RMSNorms over the projections' outputs: each keeps
  // its fp32 input copy and, for its weight's gradient, its normalised output (not under LoRA,
  // where the weight is frozen).
  if (s.qk_norm != QkNorm::none && shape.hf_unfused_ops) {
    const TensorDims qk{{"s", seq}, {"b", b}, {"(a+a_kv)*d_head", checked_add(q_width, kv_width, "q and k widths")}};
    rows.push_back(tensor_row("qk_norm_fp32_copies", qk, precisions::fp32));
    if (!shape.frozen_base) rows.push_back(tensor_row("qk_norm_outputs", qk, gemma_rmsnorm(s) ? precisions::fp32 : e));
  }
  rows.push_back(tensor_row("q", {{"s", seq}, {"b", b}, {"a*d_head", q_width}}, e));
  rows.push_back(tensor_row("k", {{"s", seq}, {"b", b}, {"a_kv*d_head", kv_width}}, e));
  if (mla) {
    rows.push_back(tensor_row("v", {{"s", seq}, {"b", b}, {"a*v_head_dim", v_width}}, e));
  } else {
    rows.push_back(tensor_row("v", {{"s", seq}, {"b", b}, {"a_kv*d_head", kv_width}}, e));
  }
  const TensorDims scores{{"b", b}, {"a", a}, {"s", seq}, {"s", seq}};
  if (shape.flash_attention) {
    rows.push_back(tensor_row("softmax_lse", {{"b", b}, {"a", a}, {"s", seq}}, precisions::fp32));
  } else {
    rows.push_back(tensor_row("softmax_output", scores, shape.softmax_fp32 ? precisions::fp32 : e));
    if (shape.dropout) {
      rows.push_back(mask("attention_dropout_mask", scores));
      rows.push_back(tensor_row("attention_dropout_output", scores, e));
    } else if (shape.softmax_fp32 && element_bits(e.format) != 32) {
      rows.push_back(tensor_row("probabilities_16bit", scores, e));
    }
  }
  if (mla) {
    rows.push_back(tensor_row("attention_output", {{"s", seq}, {"b", b}, {"a*v_head_dim", v_width}}, e));
  } else {
    rows.push_back(tensor_row("attention_output", {{"s", seq}, {"b", b}, {"a*d_head", q_width}}, e));
  }
}

void mlp_activations(const ModelSpec& s, const TrainingShape& shape, bool moe, std::vector<Item>& rows) {
  const std::uint64_t b = shape.batch, seq = shape.seq, h = s.d_model, f = s.d_mlp;
  const Precision& e = shape.compute;
  const TensorDims sbh{{"s", seq}, {"b", b}, {"h", h}};
  const bool shared_input = s.parallel_block && s.norms_per_layer == 1;
  if (shape.autocast) {
    rows.push_back(tensor_row("mlp_input_casts", {{"casts", mlp_casts(s, moe)}, {"s", seq}, {"b", b}, {"h", h}}, e));
  } else if (!shared_input) {
    rows.push_back(tensor_row("mlp_input", sbh, e));
  }
  if (moe) {
    const std::uint64_t k = s.experts_per_token;
    rows.push_back(tensor_row("router_probs", {{"s", seq}, {"b", b}, {"experts", s.experts}}, precisions::fp32));
    // The experts' rows: every routed token (dropless), or E experts x capacity slots, padded.
    TensorDims routed{{"k", k}, {"s", seq}, {"b", b}};
    if (shape.expert_capacity_factor > 0) routed = {{"E", s.experts}, {"capacity", expert_capacity(s, shape)}};
    const auto with = [&](TensorDims head, std::initializer_list<std::pair<std::string, std::uint64_t>> tail) {
      head.insert(head.end(), routed.begin(), routed.end());
      for (const auto& d : tail) head.push_back(d);
      return head;
    };
    rows.push_back(tensor_row("expert_inputs", with({}, {{"h", h}}), e));
    const std::uint64_t n = s.mlp == MlpKind::gated ? 4 : 2;
    rows.push_back(
        tensor_row("expert_intermediates", with({{std::to_string(n), n}}, {{"f_expert", expert_width(s)}}), e));
    rows.push_back(tensor_row("expert_outputs", with({}, {{"h", h}}), e));
    if (s.d_shared_expert != 0) {
      rows.push_back(tensor_row("shared_expert_intermediates",
                                {{std::to_string(n), n}, {"s", seq}, {"b", b}, {"f_shared", s.d_shared_expert}}, e));
    }
  } else if (s.mlp == MlpKind::gated) {
    const TensorDims sbf{{"s", seq}, {"b", b}, {"f", f}};
    rows.push_back(tensor_row("gate_output", sbf, e));
    rows.push_back(tensor_row("activation_output", sbf, e));
    rows.push_back(tensor_row("up_output", sbf, e));
    // A frozen down projection's matmul keeps no input: autograd saves x only to compute the
    // weight's gradient (measured: LoRA on Llama-2-7b and Qwen3-8B, docs/accuracy.md).
    if (!shape.frozen_down_proj) rows.push_back(tensor_row("down_input", sbf, e));
    if (s.activation == "gelu_new" && shape.hf_unfused_ops) {  // T5 v1.1's gate: as the plain MLP's below
      rows.push_back(tensor_row("gelu_new_intermediates", {{"3", 3}, {"s", seq}, {"b", b}, {"f", f}}, e));
    }
  } else {
    const TensorDims sbf{{"s", seq}, {"b", b}, {"f", f}};
    rows.push_back(tensor_row("activation_input", sbf, e));
    rows.push_back(tensor_row("activation_output", sbf, e));
    // NewGELUActivation, 0.5x(1 + tanh(...)) in PyTorch ops: tanh's output, 0.5x and
    // 1 + tanh are kept besides the input.
    if (s.activation == "gelu_new" && shape.hf_unfused_ops) {
      rows.push_back(tensor_row("gelu_new_intermediates", {{"3", 3}, {"s", seq}, {"b", b}, {"f", f}}, e));
    }
  }
  if (shape.dropout) rows.push_back(mask("mlp_dropout_mask", sbh));
}
}  // namespace

namespace {
TrainingEstimate training_phases(const ModelSpec& s, const TrainingShape& shape, const TrainingOptions& o) {
  if (o.grad_accumulation == 0) {
    throw Error(ErrorKind::invalid_input, "grad_accumulation must be at least 1", "grad_accumulation");
  }
  // The kinds of block: by mixer (attention, or a state-space layer in a hybrid) and by MLP
  // (dense, or MoE where dense blocks come too: DeepSeek, Jamba); each kind's activations.
  struct BlockKind {
    LayerSet mixer;  // all, attention or ssm
    LayerSet mlp;    // all, dense_mlp or moe_mlp
    Item activations;
    std::string label;  // "layers", "dense layers", "state-space MoE layers", ...
  };
  // A parallel hybrid's attention blocks each hold both mixers (Falcon-H1; Zamba2 beside
  // layers with the mixer alone).
  const bool hybrid = ssm_only_layers(s) > 0 && attention_layers(s) > 0;
  const bool moe_only = layers_in(s, LayerSet::moe_mlp, 0, s.n_layers) == s.n_layers;
  std::vector<BlockKind> kinds;
  for (const LayerSet mixer : {LayerSet::attention, LayerSet::ssm_only}) {
    if ((mixer == LayerSet::attention ? attention_layers(s) : ssm_only_layers(s)) == 0) continue;
    const BlockMixer block = mixer == LayerSet::ssm_only ? BlockMixer::ssm
                             : s.parallel_ssm            ? BlockMixer::parallel
                                                         : BlockMixer::attention;
    const std::string what = !hybrid ? "" : block == BlockMixer::ssm ? "state-space " : "attention ";
    const LayerSet kind_mixer = hybrid || mlp_only_layers(s) > 0 ? mixer : LayerSet::all;
    if (dense_and_moe_blocks(s)) {
      kinds.push_back(
          {kind_mixer, LayerSet::dense_mlp, layer_activations(s, shape, true, block), what + "dense layers"});
      kinds.push_back({kind_mixer, LayerSet::moe_mlp, layer_activations(s, shape, false, block), what + "MoE layers"});
    } else {
      kinds.push_back({kind_mixer, LayerSet::all, layer_activations(s, shape, !moe_only, block), what + "layers"});
    }
  }
  if (mlp_only_layers(s) > 0) {  // Nemotron-H: the MLPs are layers of their own
    kinds.push_back(
        {LayerSet::all, LayerSet::dense_mlp, layer_activations(s, shape, true, BlockMixer::none), "MLP layers"});
  }
  // An encoder-decoder's decoder layers keep their cross-attention's tensors too.
  const bool encoder_decoder = is_encoder_decoder(s) && shape.source != 0;
  if (encoder_decoder) {
    for (BlockKind& k : kinds) {
      for (Item& r : cross_attention_activations(s, shape)) {
        k.activations.bytes = k.activations.bytes.plus(r.bytes, "layer activations");
        k.activations.detail.push_back(std::move(r));
      }
      k.label = "decoder layers";
    }
  }
  // The layers of [first, first + count) of kind `k`: closed form unless both sets matter
  // (a hybrid's layer_types list, short enough to walk).
  const auto kind_layers = [&](const BlockKind& k, std::uint64_t first, std::uint64_t count) {
    if (k.mixer == LayerSet::all) return layers_in(s, k.mlp, first, count);
    if (k.mlp == LayerSet::all) return layers_in(s, k.mixer, first, count);
    std::uint64_t n = 0;
    for (std::uint64_t i = first; i < std::min(s.n_layers, first + count); ++i)
      n += layer_holds(s, k.mixer, i) && layer_holds(s, k.mlp, i) ? 1 : 0;
    return n;
  };
  const auto kind_of = [&](std::uint64_t layer) -> const BlockKind& {
    for (const BlockKind& k : kinds) {
      if (layer_holds(s, k.mixer, layer) && layer_holds(s, k.mlp, layer)) return k;
    }
    return kinds.front();
  };
  const Precision& e = shape.compute;
  const std::uint64_t b = shape.batch, seq = shape.seq, h = s.d_model, L = s.n_layers;
  const bool lora = o.lora.rank > 0;
  const bool base_quantized = is_quantized(shape.weights.precision);
  if (base_quantized && !lora) {
    throw Error(ErrorKind::invalid_input,
                "gradients need float weights: " + to_string(shape.weights.precision) +
                    " weights can only be trained through adapters (QLoRA): set lora_rank",
                "lora_rank");
  }
  const Precision trainable_dtype = lora ? o.lora.dtype : shape.weights.precision;
  const std::uint64_t trainable_bits = float_bits(trainable_dtype, lora ? "lora_dtype" : "precision",
                                                  "the trainable weights' dtype");
  const Precision grad_dtype = o.grad_precision.value_or(trainable_dtype);
  const std::uint64_t grad_bits = float_bits(grad_dtype, "grad_precision", "the gradient dtype");
  const bool stepping = o.optimizer != Optimizer::none;
  const bool master = stepping && o.master_weights && trainable_bits < 32;
  const std::uint64_t state_bits = (master || trainable_bits == 32) ? 32 : trainable_bits;

  TrainingEstimate out;
  const std::vector<Trainable> trainables = trainable_tensors(s, o.lora);

  // Weights: the base (frozen under LoRA) plus the adapters.
  Item weights = std::move(estimate_weights(s, shape.weights).components.front());
  out.persistent = weight_allocations(s, shape.weights);
  Bytes grads_layer, grads_head, grads_other, master_bytes, state_total, paged_total;
  std::uint64_t paged_params = 0;
  std::uint64_t trainable = 0, largest = 0, adapter_params = 0;
  Bytes adapter_bytes;
  for (const Trainable& t : trainables) {
    trainable = checked_add(trainable, t.params(), "trainable parameters");
    largest = std::max(largest, t.elements());
    const Bytes g = bits_to_bytes(t.elements(), grad_bits, "gradients").times(t.copies, "gradients");
    if (t.per_layer) {
      grads_layer = grads_layer.plus(g, "gradients");
    } else if (t.head) {
      grads_head = grads_head.plus(g, "gradients");
    } else {
      grads_other = grads_other.plus(g, "gradients");
    }
    if (lora) {
      adapter_params = checked_add(adapter_params, t.params(), "adapter parameters");
      const Bytes w = bits_to_bytes(t.elements(), trainable_bits, "adapters");
      adapter_bytes = adapter_bytes.plus(w.times(t.copies, "adapters"), "adapters");
      out.persistent.push_back({w.count(), t.copies});
    }
    if (master) {
      const Bytes m = bits_to_bytes(t.elements(), 32, "master weights");
      master_bytes = master_bytes.plus(m.times(t.copies, "master weights"), "master weights");
      out.persistent.push_back({m.count(), t.copies});
    }
    if (stepping) {
      const Bytes st = state_bytes(o.optimizer, t, state_bits);
      // A paged optimizer allocates the two state buffers of a large tensor with
      // cudaMallocManaged (bitsandbytes get_state_buffer): the driver moves them to host RAM
      // when the GPU runs short. Its 8-bit absmax blocks stay on the device.
      const bool paged = (o.optimizer == Optimizer::paged_adamw || o.optimizer == Optimizer::paged_adamw_8bit) &&
                         t.elements() >= kPagedMinSize;
      if (paged) {
        const Bytes buffers = o.optimizer == Optimizer::paged_adamw
                                  ? st
                                  : Bytes(checked_mul(2, t.elements(), "8-bit state buffers"));
        paged_total = paged_total.plus(buffers.times(t.copies, "paged states"), "paged states");
        paged_params = checked_add(paged_params, t.params(), "paged parameters");
        const Bytes absmax = Bytes(st.count() - buffers.count());
        state_total = state_total.plus(absmax.times(t.copies, "optimizer states"), "optimizer states");
        if (absmax.count() > 0) out.persistent.push_back({absmax.count(), t.copies});
      } else {
        state_total = state_total.plus(st.times(t.copies, "optimizer states"), "optimizer states");
        if (st.count() > 0) out.persistent.push_back({st.count(), t.copies});
      }
    }
  }
  out.trainable_params = trainable;
  if (lora) {
    weights.detail.push_back({"lora_adapters",
                              adapter_bytes,
                              group_digits(adapter_params) + " adapter params (rank " + std::to_string(o.lora.rank) +
                                  " on " + quoted_list(o.lora.targets, "and") + ") at " + to_string(o.lora.dtype),
                              adapter_params,
                              "trainable; the base is frozen",
                              {}});
    weights.bytes = weights.bytes.plus(adapter_bytes, "weights");
    weights.params = checked_add(*weights.params, adapter_params, "parameters");
    weights.note = weights.note.empty() ? "base frozen" : weights.note + "; base frozen";
  } else if (s.vision.d_model != 0) {
    weights.note = weights.note.empty() ? "vision tower frozen" : weights.note + "; vision tower frozen";
  }
  // A tied LM head shares the token embedding: its gradient is counted once, at the head.
  const Bytes grads_all = grads_layer.plus(grads_head, "gradients").plus(grads_other, "gradients");
  // The last block's own gradients (an MoE block's where the first blocks are dense).
  Bytes grads_one_layer;
  for (const Trainable& tr : trainables) {
    if (!tr.per_layer || L == 0 || !layer_holds(s, tr.layers, L - 1)) continue;
    const std::uint64_t holding = layers_in(s, tr.layers, 0, L);
    grads_one_layer = grads_one_layer.plus(
        bits_to_bytes(tr.elements(), grad_bits, "gradients").times(tr.copies / holding, "gradients"), "gradients");
  }
  const std::string grad_text = std::to_string(grad_bits / 8) + " B";

  std::vector<Item> persistent_items{weights};
  if (master) {
    persistent_items.push_back({"master_weights",
                                master_bytes,
                                group_digits(trainable) + " trainable params x 4 B (fp32 copy the optimizer updates)",
                                std::nullopt,
                                "",
                                {}});
  }
  if (stepping && state_total.count() > 0) {
    persistent_items.push_back({"optimizer_states",
                                state_total,
                                to_string(o.optimizer) + ": " + optimizer_formula(o.optimizer, state_bits) + "; " +
                                    group_digits(trainable) + " trainable params",
                                std::nullopt,
                                "",
                                {}});
  }
  if (paged_total.count() > 0) {
    out.host.push_back({"paged_optimizer_states",
                        paged_total,
                        to_string(o.optimizer) + ": the state buffers of the tensors of 100,000 elements or more (" +
                            group_digits(paged_params) + " params) in unified memory",
                        std::nullopt,
                        "on the GPU while there is room; CUDA migrates them to host RAM when it runs short (slower "
                        "steps, no OOM)",
                        {}});
  }
  for (const Item& x : o.extra) {
    persistent_items.push_back(x);
    out.persistent.push_back({x.bytes.count(), 1});
  }
  const bool grads_alive = o.keep_grads || o.grad_accumulation > 1;
  const auto gradients = [&](Bytes bytes, const std::string& which) {
    return Item{"gradients",
                bytes,
                which + "; " + group_digits(trainable) + " trainable params x " + grad_text + " (" +
                    to_string(grad_dtype) + ")",
                std::nullopt,
                "",
                {}};
  };
  const Item all_grads = gradients(grads_all, "every gradient");
  const std::string alive_reason = o.grad_accumulation > 1 ? "kept across " + std::to_string(o.grad_accumulation) +
                                                                 " accumulated micro-batches"
                                                           : "kept between steps (set_to_none=False)";

  // What each layer keeps across the forward pass, per kind of block.
  const auto stored_terms = [&](const BlockKind& k) {
    std::vector<Item> terms;
    if (o.recompute == Recompute::full) {
      terms.push_back(tensor_row("layer_input", {{"s", seq}, {"b", b}, {"h", h}}, e));
    } else {
      for (const Item& term : k.activations.detail) {
        if (o.recompute == Recompute::selective && recomputed_by_selective(term.name)) continue;
        terms.push_back(term);
      }
    }
    return terms;
  };
  // The terms kept by `count` layers from `first`, a term both kinds keep alike as one row;
  // then, when `working` is set, that layer's activations while its backward runs.
  const auto layers_item = [&](std::uint64_t first, std::uint64_t count, std::optional<std::uint64_t> working) {
    struct Kept {
      Item term;
      std::uint64_t layers;
      std::string label;
    };
    std::vector<Kept> kept;
    for (const BlockKind& k : kinds) {
      const std::uint64_t n = kind_layers(k, first, count);
      if (n == 0) continue;
      for (const Item& term : stored_terms(k)) {
        const auto same = std::find_if(kept.begin(), kept.end(), [&](const Kept& x) {
          return x.term.name == term.name && x.term.bytes == term.bytes;
        });
        if (same != kept.end()) {
          same->layers = checked_add(same->layers, n, "layers");
          same->label = "layers";
        } else {
          kept.push_back({term, n, k.label});
        }
      }
    }
    std::vector<Item> rows;
    rows.reserve(kept.size() + 1);
    for (const Kept& x : kept) {
      rows.push_back(times(x.term, x.layers, x.layers == 1 ? x.label.substr(0, x.label.size() - 1) : x.label));
    }
    if (working) {
      const BlockKind& k = kind_of(*working);
      const Item& layer = k.activations;
      Item w{"layer_in_backward", layer.bytes, "", std::nullopt, "", {}};
      if (o.recompute == Recompute::full) {
        w.bytes = layer.bytes.plus(sum_bytes(stored_terms(k), "stored layer activations"), "layer in backward");
        w.formula = "its input checkpoint and the layer recomputed from it: " + layer.formula;
      } else if (o.recompute == Recompute::selective) {
        w.formula = "its kept activations and its attention core, recomputed: " + layer.formula;
      } else {
        w.formula = "its saved activations: " + layer.formula;
      }
      rows.push_back(std::move(w));
    }
    return rows;
  };
  const std::string recompute_text = o.recompute == Recompute::full ? "full recomputation: each layer keeps its input"
                                     : o.recompute == Recompute::selective
                                         ? "selective recomputation: the attention core is recomputed"
                                         : "no recomputation";
  std::vector<Item> tail;
  if (shape.dropout) tail.push_back(mask("embedding_dropout_mask", {{"s", seq}, {"b", b}, {"h", h}}));
  // Under autocast the residual stream is fp32: fp32 embeddings plus 16-bit outputs promote.
  const Precision& stream = shape.autocast ? precisions::fp32 : e;
  if (s.final_norm) tail.push_back(tensor_row("final_norm_input", {{"s", seq}, {"b", b}, {"h", h}}, stream));
  if (s.final_norm && s.norm == NormKind::rmsnorm && shape.hf_unfused_ops) {
    tail.push_back(tensor_row("final_rmsnorm_fp32_copy", {{"s", seq}, {"b", b}, {"h", h}}, precisions::fp32));
  }
  const bool head = s.lm_head != LmHead::none;
  if (head) tail.push_back(tensor_row("lm_head_input", {{"s", seq}, {"b", b}, {"h", h}}, e));
  // An encoder-decoder's encoder ran first: every encoder layer's saved tensors (over the
  // source), its final norm's input and its output (the cross-attentions' keys' and values'
  // input) stay until the decoder's backward reaches them.
  std::vector<Item> before_layers;
  if (encoder_decoder) {
    TrainingShape source_shape = shape;
    source_shape.seq = shape.source;
    const ModelSpec encoder = encoder_as_model(s);
    const Item layer = layer_activations(encoder, source_shape, true, BlockMixer::attention);
    const std::uint64_t src = shape.source, encoder_layers = s.encoder.n_layers;
    if (o.recompute == Recompute::full) {
      before_layers.push_back(times(tensor_row("encoder_layer_input", {{"s", src}, {"b", b}, {"h", h}}, e),
                                    encoder_layers, "encoder layers"));
    } else {
      for (const Item& term : layer.detail) {
        if (o.recompute == Recompute::selective && recomputed_by_selective(term.name)) continue;
        Item row = times(term, encoder_layers, "encoder layers");
        row.name = "encoder_" + row.name;
        before_layers.push_back(std::move(row));
      }
    }
    if (s.encoder.mel_bins != 0) {  // Whisper's convolutions keep their inputs over the mel frames (2 x source)
      const std::uint64_t frames = checked_mul(2, src, "mel frames");
      before_layers.push_back(
          tensor_row("encoder_mel_input", {{"b", b}, {"mel_bins", s.encoder.mel_bins}, {"frames", frames}}, e));
      before_layers.push_back(
          tensor_row("encoder_conv_outputs", {{"2", 2}, {"b", b}, {"h", h}, {"frames", frames}}, e));
      before_layers.push_back(tensor_row("encoder_conv2_output", {{"b", b}, {"h", h}, {"s", src}}, e));
    }
    if (s.final_norm)
      before_layers.push_back(tensor_row("encoder_final_norm_input", {{"s", src}, {"b", b}, {"h", h}}, e));
    before_layers.push_back(tensor_row("encoder_output", {{"s", src}, {"b", b}, {"h", h}}, e));
  }
  // A trained projector keeps its inputs for its gradients (the frozen tower keeps nothing).
  if (shape.images != 0 && !lora) {
    const VisionTower& v = s.vision;
    const ImageGrid& g = shape.image;
    const std::uint64_t images = shape.images;
    if (v.kind == VisionKind::clip || v.kind == VisionKind::llava_next) {  // every crop's patches but the class token
      const std::uint64_t features = checked_mul(g.crops, g.patches - 1, "projector rows");
      before_layers.push_back(tensor_row(
          "projector_input", {{"b", b}, {"images", images}, {"features", features}, {"d_vision", v.d_model}}, e));
      before_layers.push_back(tensor_row(
          "projector_hidden", {{"2", 2}, {"b", b}, {"images", images}, {"features", features}, {"h", h}}, e));
    } else if (v.kind == VisionKind::idefics3) {  // the shuffled patches of every tile
      before_layers.push_back(
          tensor_row("projector_input",
                     {{"b", b},
                      {"images", images},
                      {"crops", g.crops},
                      {"tokens", image_tokens(v)},
                      {"merge^2 d_vision", checked_mul(v.d_model, v.merge * v.merge, "shuffled width")}},
                     e));
    } else if (v.kind == VisionKind::gemma3 || v.kind == VisionKind::paligemma ||
               v.kind == VisionKind::gemma4) {  // Gemma 3 and 4: the norm's input too
      const std::uint64_t inputs = v.kind == VisionKind::paligemma ? 1 : 2;
      before_layers.push_back(tensor_row(
          "projector_input",
          {{"tensors", inputs}, {"b", b}, {"images", images}, {"tokens", g.tokens}, {"d_vision", v.d_model}}, e));
    } else {
      const std::uint64_t merged = checked_mul(v.d_model, v.merge * v.merge, "merged patch width");
      before_layers.push_back(tensor_row(
          "merger_norm_input", {{"b", b}, {"images", images}, {"patches", g.patches}, {"d_vision", v.d_model}}, e));
      before_layers.push_back(tensor_row(
          "merger_hidden", {{"3", 3}, {"b", b}, {"images", images}, {"tokens", g.tokens}, {"merge^2 d", merged}}, e));
    }
  }
  // torch.autocast's 16-bit copies of the weights its matmuls cast: its cache keeps them
  // through the forward pass and autograd each until its layer's backward (the input's
  // gradient needs it). The frozen vision tower runs without autograd and keeps none.
  std::vector<std::uint64_t> cast_per_layer;  // elements cast in each layer
  std::uint64_t cast_head = 0, cast_other = 0;
  if (shape.autocast) {
    cast_per_layer.assign(L, 0);
    for (const TensorGroup& g : model_tensors(s)) {
      const bool cast = g.role == TensorRole::linear || g.role == TensorRole::bias || g.role == TensorRole::router ||
                        g.role == TensorRole::lm_head || g.role == TensorRole::conv;
      if (!cast || g.component == "vision") continue;
      const std::uint64_t elements = checked_mul(g.rows, g.cols, "elements of", std::string(g.name));
      if (g.layers == LayerSet::none) {
        std::uint64_t& into = g.component == "lm_head" ? cast_head : cast_other;
        into = checked_add(into, checked_mul(elements, g.copies, "cast elements"), "cast elements");
        continue;
      }
      const std::uint64_t each = checked_mul(elements, copies_per_layer(s, g), "cast elements");
      for (std::uint64_t l = 0; l < L; ++l) {
        if (layer_holds(s, g.layers, l)) cast_per_layer[l] = checked_add(cast_per_layer[l], each, "cast elements");
      }
    }
    if (s.lm_head == LmHead::tied) {  // the head multiplies by the embedding table: cast for it
      cast_head = checked_add(cast_head, checked_mul(s.vocab_size, h, "tied head"), "cast elements");
    }
  }
  const auto weight_copies = [&](std::uint64_t layers, bool head) {
    std::uint64_t n = cast_other;
    for (std::uint64_t l = 0; l < std::min(layers, L); ++l) n = checked_add(n, cast_per_layer[l], "cast elements");
    if (head) n = checked_add(n, cast_head, "cast elements");
    Item row = tensor_row("autocast_weight_copies", {{"weight elements", n}}, e);
    row.formula = "the " + std::to_string(std::min(layers, L)) + " layers'" + (head ? " and the head's" : "") +
                  " weights cast by autocast, " + group_digits(n) + " x " + std::to_string(element_bits(e.format) / 8) +
                  " B (" + to_string(e) + ")";
    return row;
  };
  const auto activations = [&](std::uint64_t stored_count, std::optional<std::uint64_t> working, bool with_tail,
                               const std::string& what) {
    std::vector<Item> rows = before_layers;
    for (Item& r : layers_item(0, stored_count, working)) rows.push_back(std::move(r));
    if (with_tail) {
      for (const Item& t : tail) rows.push_back(t);
    }
    // The layers below the one in backward and that one still hold their copies.
    if (shape.autocast) rows.push_back(weight_copies(working ? *working + 1 : stored_count, with_tail));
    return group_row("activations", std::move(rows), what + "; " + recompute_text);
  };

  const TensorDims sbv{{"s", seq}, {"b", b}, {"V", s.vocab_size}};
  const bool upcast = element_bits(e.format) != 32;
  std::vector<Item> loss_fwd, loss_bwd, loss_hvp;
  if (head) {
    loss_fwd.push_back(tensor_row("logits", sbv, e));
    if (upcast) loss_fwd.push_back(tensor_row("logits_fp32", sbv, precisions::fp32));
    loss_fwd.push_back(tensor_row("log_probs", sbv, precisions::fp32));
    // The logits themselves are gone by now: only the log-softmax is saved, and a loop that
    // drops the model's output before backward (Trainer does) frees them.
    loss_bwd.push_back(tensor_row("log_probs", sbv, precisions::fp32));
    loss_bwd.push_back(tensor_row("grad_log_probs", sbv, precisions::fp32));
    loss_bwd.push_back(tensor_row("grad_logits_fp32", sbv, precisions::fp32));
    loss_hvp = loss_bwd;
    loss_hvp.insert(loss_hvp.begin(),
                    tensor_row("logits", sbv, e));  // the graph kept for the second backward holds them
    if (upcast) loss_hvp.push_back(tensor_row("grad_logits", sbv, e));
    loss_hvp.push_back(
        tensor_row("second_backward_logits", {{"2", 2}, {"s", seq}, {"b", b}, {"V", s.vocab_size}}, precisions::fp32));
  }

  // transformers' load_balancing_loss_func (Mixtral, Qwen2/3-MoE, OLMoE, Phi-MoE, Granite-MoE)
  // after the cross-entropy: every MoE layer's router logits, concatenated, their softmax
  // (kept for backward), the top-k, and a one-hot int64 expert mask with its fp32 copy for
  // the mean.
  if (o.router_aux_loss) {
    const std::uint64_t moe_layers = layers_in(s, LayerSet::moe_mlp, 0, L);
    if (moe_layers == 0) {
      throw Error(ErrorKind::invalid_input, "`router_aux_loss` balances MoE routers: " + s.name + " has no experts",
                  "router_aux_loss");
    }
    const std::uint64_t E = s.experts, k = s.experts_per_token;
    const TensorDims logits{{"moe_layers", moe_layers}, {"s", seq}, {"b", b}, {"E", E}};
    const TensorDims mask{{"moe_layers", moe_layers}, {"s", seq}, {"b", b}, {"k", k}, {"E", E}};
    const TensorDims top{{"moe_layers", moe_layers}, {"s", seq}, {"b", b}, {"k", k}};
    std::vector<Item> aux{tensor_row("router_logits", logits, e),
                          tensor_row("router_logits_concatenated", logits, e),
                          tensor_row("router_probabilities", logits, e),
                          tensor_row("top_k_weights", top, e),
                          tensor_row("top_k_experts", top, 64, "8 B (int64)"),
                          tensor_row("expert_mask", mask, 64, "8 B (int64 one-hot)"),
                          tensor_row("expert_mask_fp32", mask, precisions::fp32)};
    loss_fwd.push_back(group_row("router_aux_loss", std::move(aux),
                                 "transformers' load_balancing_loss_func over " + std::to_string(moe_layers) +
                                     " MoE layers' router logits (output_router_logits)"));
    loss_bwd.push_back(tensor_row("router_probabilities", logits, e));
  }

  // Gradient temporaries inside one layer's backward, and the gradient flowing down.
  std::vector<Item> mlp_ws, attn_ws;
  {
    // The wider of the blocks' MLPs: k routed experts, or a dense block's d_mlp.
    const bool routed = s.experts > 0 && layers_in(s, LayerSet::moe_mlp, 0, L) > 0;
    const bool dense = layers_in(s, LayerSet::dense_mlp, 0, L) > 0;
    const bool experts_wider = routed && (!dense || checked_mul(s.experts_per_token, expert_width(s),
                                                                "k * expert width") >= s.d_mlp);
    const std::uint64_t k = experts_wider ? s.experts_per_token : 1;
    const std::uint64_t n = s.mlp == MlpKind::gated ? 3 : 2;
    TensorDims dims{{std::to_string(n), n}, {"k", k}, {"s", seq}, {"b", b}};
    if (experts_wider && shape.expert_capacity_factor > 0)
      dims = {{std::to_string(n), n}, {"E", s.experts}, {"capacity", expert_capacity(s, shape)}};
    dims.emplace_back("f", experts_wider ? expert_width(s) : s.d_mlp);
    mlp_ws.push_back(tensor_row("mlp_intermediate_grads", dims, e));
    if (shape.flash_attention) {
      const std::uint64_t qkv = checked_mul(checked_add(s.n_heads, checked_mul(2, s.n_kv_heads, "kv"), "qkv heads"),
                                            s.d_head, "qkv");
      attn_ws.push_back(tensor_row("grad_qkv", {{"s", seq}, {"b", b}, {"(a+2a_kv)*d_head", qkv}}, e));
      attn_ws.push_back(
          tensor_row("grad_q_accumulator",
                     {{"s", seq}, {"b", b}, {"a*d_head", checked_mul(s.n_heads, s.d_head, "n_heads * d_head")}},
                     precisions::fp32));
    } else {
      const TensorDims scores{{"b", b}, {"a", s.n_heads}, {"s", seq}, {"s", seq}};
      attn_ws.push_back(tensor_row("grad_probabilities", scores, e));
      attn_ws.push_back(tensor_row("grad_scores", scores, shape.softmax_fp32 ? precisions::fp32 : e));
    }
  }
  const Bytes mlp_b = sum_bytes(mlp_ws, "mlp backward"), attn_b = sum_bytes(attn_ws, "attention backward");
  const Item flowing = tensor_row("activation_gradients", {{"2", 2}, {"s", seq}, {"b", b}, {"h", h}}, stream);
  Item backward_ws = group_row("backward_workspace", {flowing},
                               "the gradient flowing down the residual stream and the one being accumulated, plus the "
                               "larger of the block's MLP and attention gradient temporaries");
  for (Item& r : attn_b > mlp_b ? attn_ws : mlp_ws) backward_ws.detail.push_back(std::move(r));
  // bitsandbytes computes a frozen 4- or 8-bit layer's input gradient against the weight
  // dequantised whole to the activations' dtype (MatMul4Bit.backward's dequantize_4bit,
  // MatMul8bitLt.backward's CB.to(dtype)): one layer's at a time, the largest counted.
  if (bitsandbytes_linears(s, shape.weights) != BitsandbytesLinears::none) {
    const std::uint64_t largest_weight = largest_quantized_linear(s, shape.weights,
                                                                  {"attention", "cross_attention", "mlp", "experts"});
    if (largest_weight != 0) {
      Item dequantized = tensor_row("dequantized_weight", {{"largest_linear", largest_weight}}, e);
      dequantized.note = "bitsandbytes dequantises each frozen weight for its input's gradient";
      backward_ws.detail.push_back(std::move(dequantized));
    }
  }
  backward_ws.bytes = sum_bytes(backward_ws.detail, "backward workspace");

  const auto make_phase = [&](std::string name, std::string moment, std::vector<Item> phase_items) {
    TrainingPhase p;
    p.name = std::move(name);
    p.moment = std::move(moment);
    p.components = persistent_items;
    for (Item& i : phase_items) {
      if (i.bytes.count() == 0 && i.name != "gradients") continue;
      if (i.name != "gradients") p.transient = p.transient.plus(i.bytes, "transient bytes");
      p.components.push_back(std::move(i));
    }
    // Gradients are transient unless they persist across micro-batches or steps.
    for (const Item& c : p.components) {
      if (c.name == "gradients" && !grads_alive) p.transient = p.transient.plus(c.bytes, "transient bytes");
    }
    out.phases.push_back(std::move(p));
  };
  const auto with_grads = [&](std::vector<Item> items, Bytes bytes, const std::string& which) {
    if (grads_alive) {
      Item g = all_grads;
      g.note = alive_reason;
      items.insert(items.begin(), g);
    } else if (bytes.count() > 0) {
      items.insert(items.begin(), gradients(bytes, which));
    }
    return items;
  };

  const std::string all_layers = std::to_string(L) + " layers";
  make_phase(
      "forward", "at the loss: every layer's saved activations and the fp32 logits",
      with_grads({activations(L, std::nullopt, true, "saved by " + all_layers),
                  group_row("loss", loss_fwd,
                            "logits in the compute dtype, their fp32 copy and the log-softmax kept for backward "
                            "(cross-entropy in fp32)" +
                                std::string(o.router_aux_loss ? "; then the routers' load-balancing loss" : ""))},
                 Bytes(0), ""));
  if (o.double_backward) {
    Item acts = activations(L, std::nullopt, true, "saved by " + all_layers + " for the first backward");
    Item graph = acts;
    graph.name = "first_backward_graph";
    graph.formula =
        "the first backward (create_graph=True) keeps its own saved tensors for the second: taken as "
        "large as the forward's saved activations";
    graph.detail.clear();
    graph.low = Bytes(graph.bytes.count() / 2);
    graph.high = graph.bytes.plus(Bytes(graph.bytes.count() / 2), "first backward graph, high");
    graph.note = "an approximation: each backward op saves its inputs for the second backward";
    Item g = all_grads;
    g.formula = "the first backward's gradients, part of the graph; " + g.formula;
    make_phase(
        "hessian_vector_product",
        "at the second backward: the forward's activations, the first backward's graph and gradients, and "
        "six logits-shaped tensors",
        {g, acts, graph,
         group_row("loss", loss_hvp,
                   "logits-shaped tensors of the double backward: forward, first backward (kept), second backward"),
         backward_ws});
  } else {
    make_phase(
        "backward_start", "at the loss gradient: every activation still kept",
        with_grads(
            {activations(L, std::nullopt, true, "saved by " + all_layers),
             group_row("loss", loss_bwd,
                       "the gradient of the fp32 cross-entropy: log-softmax, its gradient and the logits' gradient")},
            Bytes(0), ""));
    if (L > 0) {
      make_phase("backward_top", "in the last layer's backward: the layers below still kept, the head's gradients made",
                 with_grads({activations(L - 1, L - 1, false,
                                         std::to_string(L - 1) + " layers below, plus the layer in backward"),
                             backward_ws},
                            grads_head.plus(grads_one_layer, "gradients"), "the head's and one layer's gradients"));
      make_phase("backward_bottom", "in the first layer's backward: every layer's gradients made",
                 with_grads({activations(0, 0, false, "the first layer, in backward"), backward_ws},
                            grads_head.plus(grads_layer, "gradients"), "the head's and every layer's gradients"));
    }
    make_phase("backward_end", "after the embedding's backward: every gradient made",
               with_grads({flowing}, grads_all, "every gradient"));
  }
  if (stepping) {
    std::vector<Item> ws;
    if (master && grad_bits < 32) {
      ws.push_back({"fp32_gradients",
                    bits_to_bytes(trainable, 32, "fp32 gradients"),
                    group_digits(trainable) + " x 4 B: 16-bit gradients upcast for the fp32 master step",
                    std::nullopt,
                    "",
                    {}});
    }
    // With fp32 master copies memplan assumes the engine's fused optimizer (Megatron, DeepSpeed);
    // without them, torch.optim's implementation as the stated PyTorch runs it.
    const TorchVersion v = o.torch_version;
    OptimizerImpl impl = o.optimizer_impl;
    if (impl == OptimizerImpl::automatic) impl = v < TorchVersion{2, 0} ? OptimizerImpl::loop : OptimizerImpl::foreach;
    const std::string release = "PyTorch " + std::to_string(v.major) + "." + std::to_string(v.minor);
    if (!master) {
      const bool adam = o.optimizer == Optimizer::adam || o.optimizer == Optimizer::adamw;
      if (adam && impl == OptimizerImpl::foreach) {
        // pytorch/pytorch#104898 (2.1) made denom in place: before it sqrt(exp_avg_sq) and
        // denom = that + eps were two tensor lists at once (pytorch/pytorch#97712).
        const std::uint64_t lists = v < TorchVersion{2, 1} ? 2 : 1;
        ws.push_back(
            {"foreach_intermediates",
             bits_to_bytes(trainable, state_bits, "foreach intermediates").times(lists, "foreach intermediates"),
             std::to_string(lists) + " x " + group_digits(trainable) + " x " + std::to_string(state_bits / 8) +
                 " B: foreach Adam's " +
                 (lists == 2 ? "sqrt(exp_avg_sq) and denom for every tensor at once"
                             : "sqrt(exp_avg_sq), made denom in place, for every tensor at once") +
                 " (" + release + ")",
             std::nullopt,
             "",
             {}});
      } else if (adam && impl == OptimizerImpl::loop) {
        ws.push_back({"loop_temporaries",
                      bits_to_bytes(checked_mul(2, largest, "loop temporaries"), state_bits, "loop temporaries"),
                      "2 x the largest tensor (" + group_digits(largest) + " elements) x " +
                          std::to_string(state_bits / 8) +
                          " B: the per-parameter step's exp_avg_sq.sqrt() and its quotient, one tensor at a time (" +
                          release + ")",
                      std::nullopt,
                      "",
                      {}});
      } else if (o.optimizer == Optimizer::adafactor) {
        ws.push_back({"per_tensor_temporaries",
                      bits_to_bytes(checked_mul(2, largest, "Adafactor temporaries"), 32, "Adafactor"),
                      "2 x the largest tensor (" + group_digits(largest) + " elements) x 4 B: grad^2 and the update",
                      std::nullopt,
                      "",
                      {}});
      }
    }
    Item g = all_grads;
    if (grads_alive) g.note = alive_reason;
    std::vector<Item> items{g};
    if (!ws.empty()) items.push_back(group_row("optimizer_workspace", ws, "temporaries of the optimizer step"));
    make_phase("optimizer_step", "during the optimizer step: every gradient and the step's temporaries",
               std::move(items));
  }
  for (std::size_t i = 1; i < out.phases.size(); ++i) {
    if (out.phases[i].total() > out.phases[out.peak].total()) out.peak = i;
  }
  return out;
}
}  // namespace

TrainingEstimate estimate_training_phases(const ModelSpec& spec, const TrainingShape& shape,
                                          const TrainingOptions& options) {
  // LoRA leaves the base frozen: what autograd keeps only for the base's weight gradients goes.
  TrainingShape frozen = shape;
  frozen.frozen_base = options.lora.rank > 0;
  const auto targeted = [&](const char* t) {
    return std::find(options.lora.targets.begin(), options.lora.targets.end(), t) != options.lora.targets.end();
  };
  // bitsandbytes' LLM.int8 layers keep their input for the backward pass (MatMul8bitLt's
  // ctx.tensors), and its 4-bit layers did before 0.43.2 (bitsandbytes#1270).
  const BitsandbytesLinears bnb = bitsandbytes_linears(spec, shape.weights);
  const bool keeps_inputs = bnb == BitsandbytesLinears::eight_bit ||
                            (bnb == BitsandbytesLinears::four_bit &&
                             shape.weights.bitsandbytes < BitsandbytesVersion{0, 43, 2});
  frozen.frozen_down_proj = frozen.frozen_base && !targeted("down") && !targeted("all") && !keeps_inputs;
  return training_phases(spec, frozen, options);
}

Breakdown estimate_training(const ModelSpec& spec, const TrainingShape& shape, const TrainingOptions& options) {
  const TrainingEstimate t = estimate_training_phases(spec, shape, options);
  const TrainingPhase& peak = t.phases[t.peak];
  Breakdown out;
  out.components = peak.components;
  Item* noted = nullptr;
  for (Item& c : out.components) {
    if (c.name == "activations") noted = &c;
  }
  if (noted == nullptr) noted = &out.components.back();
  noted->note = "peak in phase " + peak.name + ": " + peak.moment + (noted->note.empty() ? "" : "; " + noted->note);
  for (std::size_t i = 0; i < t.phases.size(); ++i) {
    if (i == t.peak) continue;
    const TrainingPhase& p = t.phases[i];
    std::string parts;
    for (const Item& c : p.components) parts += (parts.empty() ? "" : " + ") + c.name;
    out.alternatives.push_back({"total", {"phase_" + p.name, p.total(), parts, std::nullopt, p.moment, {}}});
  }
  return out;
}

}  // namespace memplan
