// The forward-pass workloads: what one forward pass holds at its peak (the block's
// attention or MLP phase, or the logits), the KV cache of generation, the hook cache of
// extraction; and their FLOPs.
#include "forward_workloads.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <utility>

#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/text.hpp"
#include "memplan/estimators/activations.hpp"
#include "memplan/estimators/attention.hpp"
#include "memplan/estimators/kv_cache.hpp"
#include "memplan/estimators/overhead.hpp"
#include "memplan/estimators/weights.hpp"

#include "workload_registry.hpp"

namespace memplan::detail {

namespace {

constexpr double kModelEfficiency = 0.4;
constexpr const char* kModelEfficiencyReason =
    "model FLOPs utilisation of tuned PyTorch training and inference is typically 30-50% of dense peak";

using Dims = std::initializer_list<std::pair<const char*, std::uint64_t>>;

Bytes tensor_bytes(const char* name, Dims dims, const Precision& dtype) {
  std::uint64_t elements = 1;
  for (const auto& dim : dims) elements = checked_mul(elements, dim.second, "elements of", name);
  return Bytes(ceil_div(checked_mul(elements, element_bits(dtype.format), "bits of", name), 8));
}

// The forward pass's tensors come in six groups: the block input (alive throughout a
// block), the attention phase, an encoder-decoder's cross-attention phase, a state-space
// layer's mixer phase, the MLP phase, and the logits at the end.
enum Group : std::size_t { kInput, kAttention, kCross, kSsm, kMlp, kLogits, kGroups };

// Receive forward_tensors' tensors: WorkspaceItems keeps each as a row with its shape
// (the breakdown), WorkspaceBytes only sums each group (estimate_workload_bytes).
class WorkspaceItems {
 public:
  void add(Group g, const char* name, Dims dims, const Precision& dtype) {
    std::string shape;
    for (const auto& [label, size] : dims)
      shape += (shape.empty() ? "" : " x ") + std::string(label) + "=" + std::to_string(size);
    rows_[g].push_back(
        {name, tensor_bytes(name, dims, dtype), shape + " at " + to_string(dtype), std::nullopt, "", {}});
    sizes_[g].push_back(rows_[g].back().bytes.count());
  }
  void add_attention(AttentionVariant variant, const AttentionShape& shape, Group g = kAttention) {
    Breakdown tensors = estimate_attention(variant, shape);
    for (Item& r : tensors.components.front().detail) {
      r.name = (g == kCross ? "cross_" : "attn_") + r.name;
      sizes_[g].push_back(r.bytes.count());
      rows_[g].push_back(std::move(r));
    }
  }
  const std::vector<std::uint64_t>& sizes(Group g) const { return sizes_[g]; }
  std::vector<Item>& rows(Group g) { return rows_[g]; }
  Bytes sum(Group g) const {
    Bytes sum;
    for (const Item& r : rows_[g]) sum = sum.plus(r.bytes, "forward workspace");
    return sum;
  }

 private:
  std::array<std::vector<Item>, kGroups> rows_;
  std::array<std::vector<std::uint64_t>, kGroups> sizes_;
};

class WorkspaceBytes {
 public:
  void add(Group g, const char* name, Dims dims, const Precision& dtype) {
    const Bytes bytes = tensor_bytes(name, dims, dtype);
    sums_[g] = sums_[g].plus(bytes, "forward workspace");
    sizes_[g].push_back(bytes.count());
  }
  // The tensors one by one, for the allocator's replay (attention_bytes only sums them).
  void add_attention(AttentionVariant variant, const AttentionShape& shape, Group g = kAttention) {
    for (const std::uint64_t bytes : attention_tensor_bytes(variant, shape)) {
      sums_[g] = sums_[g].plus(Bytes(bytes), "forward workspace");
      sizes_[g].push_back(bytes);
    }
  }
  Bytes sum(Group g) const { return sums_[g]; }
  const std::vector<std::uint64_t>& sizes(Group g) const { return sizes_[g]; }

 private:
  std::array<Bytes, kGroups> sums_{};
  std::array<std::vector<std::uint64_t>, kGroups> sizes_;
};

// The order a forward pass makes its transient tensors in, for the caching allocator's
// replay: two layers (a third finds the cache as the second left it), each allocating its
// input, then each phase's tensors in turn and freeing them before the next phase, then the
// logits at the end.
template <typename Sink>
std::vector<AllocatorStep> forward_steps(const Sink& t, std::initializer_list<Group> phases) {
  std::vector<AllocatorStep> steps;
  std::size_t tensors = 0;
  for (std::size_t g = 0; g < kGroups; ++g) tensors += t.sizes(static_cast<Group>(g)).size();
  steps.reserve(4 * tensors);
  const auto allocate = [&](Group g) {
    const std::size_t first = steps.size();
    for (const std::uint64_t bytes : t.sizes(g)) steps.push_back({.free = false, .bytes = bytes, .tensor = 0});
    return std::pair{first, steps.size()};
  };
  const auto release = [&](std::pair<std::size_t, std::size_t> range) {
    for (std::size_t i = range.first; i < range.second; ++i) steps.push_back({.free = true, .bytes = 0, .tensor = i});
  };
  for (int layer = 0; layer < 2; ++layer) {
    const auto input = allocate(kInput);
    for (const Group g : phases) release(allocate(g));
    release(input);
  }
  release(allocate(kLogits));
  return steps;
}

// A state-space layer's mixer over S new tokens, as mamba_ssm's kernels run it in
// transformers' cuda_kernels_forward: in_proj's output, the convolution's, Mamba's x_proj
// and step sizes, the scan's output and its gated product (Mamba-2: the chunked scan's fp32
// chunk states, C·B scores and cumulative decays when S > 1, and the gated norm's output).
// The same mixer over S > 1 tokens on transformers' pure-PyTorch path, in fp32 whatever the
// model's dtype. Mamba's slow_forward holds its input's projections, then exp(A x dt), dt x B
// and dt x B x u, each batch x d_inner x S x d_state, while its loop collects S outputs and
// stacks them. Mamba-2's torch_forward pads S to whole chunks (S'), casts x (times dt), B and C
// (repeated to every head) to fp32 beside D's residual, builds the chunks' decay matrices
// (exp of segment sums, heads x S' x chunk) and then C x B for every pair of positions in a
// chunk before summing over the state: batch x S' x chunk x heads x d_state.
template <typename Sink>
void ssm_torch_tensors(const ModelSpec& s, std::uint64_t B, std::uint64_t S, const Precision& c, Sink& t) {
  const SsmSizes& m = s.ssm;
  const Precision& f = precisions::fp32;
  if (m.version == 1) {
    t.add(kSsm, "in_proj_out", {{"B", B}, {"S", S}, {"2 d_inner", 2 * m.d_inner}}, c);
    t.add(kSsm, "conv_out", {{"B", B}, {"S", S}, {"d_inner", m.d_inner}}, c);
    t.add(kSsm, "x_proj_out", {{"B", B}, {"S", S}, {"dt_rank + 2 d_state", m.dt_rank + 2 * m.d_state}}, c);
    t.add(kSsm, "dt", {{"B", B}, {"S", S}, {"d_inner", m.d_inner}}, c);
    if (element_bits(c.format) != 32) t.add(kSsm, "u_fp32", {{"B", B}, {"d_inner", m.d_inner}, {"S", S}}, f);
    for (const char* name : {"discrete_A", "discrete_B", "deltaB_u"})
      t.add(kSsm, name, {{"B", B}, {"d_inner", m.d_inner}, {"S", S}, {"d_state", m.d_state}}, f);
    t.add(kSsm, "scan_outputs", {{"2", 2}, {"B", B}, {"d_inner", m.d_inner}, {"S", S}}, c);
    return;
  }
  const std::uint64_t padded = checked_mul(ceil_div(S, m.chunk), m.chunk, "padded tokens");
  t.add(kSsm, "in_proj_out",
        {{"B", B}, {"S", S}, {"d_inner + conv + heads", m.d_inner + ssm_conv_channels(m) + m.heads}}, c);
  t.add(kSsm, "conv_out", {{"B", B}, {"S", S}, {"conv", ssm_conv_channels(m)}}, c);
  t.add(kSsm, "x_dt_and_d_residual", {{"2", 2}, {"B", B}, {"S'", padded}, {"d_inner", m.d_inner}}, f);
  t.add(kSsm, "b_c_per_head", {{"2", 2}, {"B", B}, {"S'", padded}, {"heads", m.heads}, {"d_state", m.d_state}}, f);
  t.add(kSsm, "chunk_decays", {{"B", B}, {"heads", m.heads}, {"S'", padded}, {"chunk", m.chunk}}, f);
  t.add(kSsm, "c_times_b", {{"B", B}, {"S'", padded}, {"chunk", m.chunk}, {"heads", m.heads}, {"d_state", m.d_state}},
        f);
  t.add(kSsm, "c_times_b_summed", {{"B", B}, {"S'", padded}, {"chunk", m.chunk}, {"heads", m.heads}}, f);
}

// A gated DeltaNet layer over S new tokens as transformers' Qwen3NextGatedDeltaNet runs it with
// flash-linear-attention's kernels (derived from their code, not measured): the two input
// projections, q, k and v concatenated for the convolution and its output, q and k repeated
// to every value head when key heads are fewer, the gates (beta, and g with its cumulative sum
// in fp32); over S > 1 chunk_gated_delta_rule_fwd's chunk matrices (fp32 K K^T and its
// inverse), w and u, the chunk states (chunks x heads x d_state x head width) and the new
// values; then the output, the gated norm's and out_proj's.
template <typename Sink>
void gated_delta_tensors(const ModelSpec& s, std::uint64_t B, std::uint64_t S, const Precision& c, Sink& t) {
  const SsmSizes& m = s.ssm;
  const std::uint64_t conv = ssm_conv_channels(m), head = m.d_inner / m.heads;
  t.add(kSsm, "in_proj_out", {{"B", B}, {"S", S}, {"conv + d_inner + 2 heads", conv + m.d_inner + 2 * m.heads}}, c);
  t.add(kSsm, "conv_in", {{"B", B}, {"S", S}, {"conv", conv}}, c);
  t.add(kSsm, "conv_out", {{"B", B}, {"S", S}, {"conv", conv}}, c);
  if (m.heads != m.groups)
    t.add(kSsm, "qk_repeated", {{"2", 2}, {"B", B}, {"S", S}, {"heads", m.heads}, {"d_state", m.d_state}}, c);
  t.add(kSsm, "gates", {{"2", 2}, {"B", B}, {"S", S}, {"heads", m.heads}}, precisions::fp32);
  if (S > 1) {
    const std::uint64_t chunks = ceil_div(S, m.chunk);
    t.add(kSsm, "chunk_kkt", {{"B", B}, {"S", S}, {"heads", m.heads}, {"chunk", m.chunk}}, precisions::fp32);
    t.add(kSsm, "chunk_inverse", {{"B", B}, {"S", S}, {"heads", m.heads}, {"chunk", m.chunk}}, c);
    t.add(kSsm, "w_u", {{"B", B}, {"S", S}, {"heads", m.heads}, {"d_state + head", m.d_state + head}}, c);
    t.add(kSsm, "chunk_states",
          {{"B", B}, {"chunks", chunks}, {"heads", m.heads}, {"d_state", m.d_state}, {"head", head}}, c);
    t.add(kSsm, "v_new", {{"B", B}, {"S", S}, {"d_inner", m.d_inner}}, c);
  }
  t.add(kSsm, "scan_out", {{"B", B}, {"S", S}, {"d_inner", m.d_inner}}, c);
  t.add(kSsm, "gated_out", {{"B", B}, {"S", S}, {"d_inner", m.d_inner}}, c);
  t.add(kSsm, "out_proj_out", {{"B", B}, {"S", S}, {"d", s.d_model}}, c);
}

template <typename Sink>
void ssm_tensors(const ModelSpec& s, const Workload& w, std::uint64_t B, std::uint64_t S, const Precision& c, Sink& t) {
  if (s.ssm.version == 3) return gated_delta_tensors(s, B, S, c, t);
  if (w.ssm_kernels == SsmKernels::torch && S > 1) return ssm_torch_tensors(s, B, S, c, t);
  const SsmSizes& m = s.ssm;
  const std::uint64_t conv = ssm_conv_channels(m);
  if (m.version == 1) {
    t.add(kSsm, "in_proj_out", {{"B", B}, {"S", S}, {"2 d_inner", 2 * m.d_inner}}, c);
    t.add(kSsm, "conv_out", {{"B", B}, {"S", S}, {"d_inner", m.d_inner}}, c);
    t.add(kSsm, "x_proj_out", {{"B", B}, {"S", S}, {"dt_rank + 2 d_state", m.dt_rank + 2 * m.d_state}}, c);
    t.add(kSsm, "dt", {{"B", B}, {"S", S}, {"d_inner", m.d_inner}}, c);
  } else {
    t.add(kSsm, "in_proj_out", {{"B", B}, {"S", S}, {"d_inner + conv + heads", m.d_inner + conv + m.heads}}, c);
    t.add(kSsm, "conv_out", {{"B", B}, {"S", S}, {"conv", conv}}, c);
    if (S > 1) {
      const std::uint64_t chunks = ceil_div(S, m.chunk), head = m.d_inner / m.heads;
      t.add(kSsm, "chunk_states",
            {{"B", B}, {"chunks", chunks}, {"heads", m.heads}, {"head_dim", head}, {"d_state", m.d_state}},
            precisions::fp32);
      t.add(kSsm, "chunk_scores",
            {{"B", B}, {"chunks", chunks}, {"groups", m.groups}, {"chunk", m.chunk}, {"chunk", m.chunk}},
            precisions::fp32);
      t.add(kSsm, "chunk_decays", {{"2", 2}, {"B", B}, {"heads", m.heads}, {"chunks", chunks}, {"chunk", m.chunk}},
            precisions::fp32);
    }
  }
  t.add(kSsm, "scan_out", {{"B", B}, {"S", S}, {"d_inner", m.d_inner}}, c);
  t.add(kSsm, "gated_out", {{"B", B}, {"S", S}, {"d_inner", m.d_inner}}, c);
  t.add(kSsm, "out_proj_out", {{"B", B}, {"S", S}, {"d", s.d_model}}, c);
}

// bitsandbytes' 4-bit matmul over more rows than its own kernel takes dequantises the weight
// whole to the activations' dtype first (bitsandbytes_dequantizes): the phase's largest weight,
// counted with the phase's other tensors.
template <typename Sink>
void dequantized_weight(const ModelSpec& s, const Workload& w, std::uint64_t rows, Group g,
                        std::initializer_list<std::string_view> components, const Precision& c, Sink& t) {
  if (bitsandbytes_linears(s, w.weights) != BitsandbytesLinears::four_bit) return;
  if (!bitsandbytes_dequantizes(w.weights, rows)) return;
  const std::uint64_t n = largest_quantized_linear(s, w.weights, components);
  if (n != 0) t.add(g, "dequantized_weight", {{"largest_linear", n}}, c);
}

// The shape of one layer's attention core: S queries of every head over `keys` positions,
// its inputs counted by the caller; HF eager softmaxes in fp32 (softmax(dtype=float32)).
AttentionShape scores_shape(const ModelSpec& s, const Workload& w, std::uint64_t B, std::uint64_t S, std::uint64_t keys,
                            const Precision& c) {
  AttentionShape shape;
  shape.batch = B;
  shape.heads = s.n_heads;
  shape.seq = S;
  shape.kv_seq = keys;
  shape.head_dim = s.d_head;
  shape.dtype = c;
  shape.chunk = w.attention_chunk;
  shape.include_inputs = false;
  // gpt-oss's eager attention softmaxes in the model's dtype, over the scores with the sinks appended.
  shape.softmax_fp32 = w.attention == AttentionVariant::eager && !s.attention_sinks;
  // T5Attention upcasts its scores before the softmax (softmax(scores.float())); in fp32 the
  // upcast is the same tensor.
  shape.softmax_of_fp32_copy = s.positional == Positional::relative;
  return shape;
}

// `core_batch` sequences' attention cores are alive at once (the rest wait their turn).
template <typename Sink>
void attention_tensors(const ModelSpec& s, const Workload& w, std::uint64_t B, std::uint64_t S, std::uint64_t keys,
                       const Precision& c, std::uint64_t core_batch, Sink& t) {
  const std::uint64_t d = s.d_model, H = s.n_heads, Hkv = s.n_kv_heads, dh = s.d_head;

  if (s.shared.blocks != 0) {  // Zamba2's shared block reads cat([hidden, embeddings]) through its norm
    t.add(kAttention, "shared_block_input", {{"B", B}, {"S", S}, {"2d", 2 * d}}, c);
    t.add(kAttention, "shared_block_normed", {{"B", B}, {"S", S}, {"2d", 2 * d}}, c);
  }
  // A gated attention's q_proj yields queries and gate together; the gate waits for the output.
  if (s.attn_output_gate) {
    t.add(kAttention, "q_and_gate", {{"B", B}, {"S", S}, {"H", H}, {"2 d_head", 2 * dh}}, c);
  } else {
    t.add(kAttention, "q", {{"B", B}, {"S", S}, {"H", H}, {"d_head", dh}}, c);
  }
  t.add(kAttention, "k_new", {{"B", B}, {"S", S}, {"H_kv", Hkv}, {"d_head", dh}}, c);
  if (s.mla.kv_lora_rank != 0) {  // latent attention decompresses values narrower than keys
    t.add(kAttention, "v_new", {{"B", B}, {"S", S}, {"H_kv", Hkv}, {"d_v", s.mla.v_head_dim}}, c);
  } else {
    t.add(kAttention, "v_new", {{"B", B}, {"S", S}, {"H_kv", Hkv}, {"d_head", dh}}, c);
  }
  if (Hkv < H) {  // Hugging Face's repeat_kv expands keys and values to every query head
    t.add(kAttention, "kv_repeated", {{"2", 2}, {"B", B}, {"H", H}, {"M", keys}, {"d_head", dh}}, c);
  }
  t.add_attention(w.attention, scores_shape(s, w, core_batch, S, keys, c));
  // gpt-oss: cat([scores, sinks]) - max is a new tensor born while the concatenation is alive.
  if (s.attention_sinks && w.attention == AttentionVariant::eager) {
    t.add(kAttention, "attn_sink_logits", {{"B", core_batch}, {"H", H}, {"S", S}, {"M+1", keys + 1}}, c);
  }
  if (s.attn_output_gate) t.add(kAttention, "gated_output", {{"B", B}, {"S", S}, {"H", H}, {"d_head", dh}}, c);
  t.add(kAttention, "o_proj_out", {{"B", B}, {"S", S}, {"d", d}}, c);
  dequantized_weight(s, w, checked_mul(B, S, "rows"), kAttention, {"attention"}, c, t);
}

// A decoder layer's cross-attention over `source` encoder positions: the queries, the
// source's keys and values unless the cache holds them, the scores (eager or SDPA), the output.
template <typename Sink>
void cross_tensors(const ModelSpec& s, const Workload& w, std::uint64_t B, std::uint64_t S, std::uint64_t source,
                   const Precision& c, Sink& t) {
  const std::uint64_t H = s.n_heads, dh = s.d_head;
  t.add(kCross, "cross_q", {{"B", B}, {"S", S}, {"H", H}, {"d_head", dh}}, c);
  if (!w.kv_cache) t.add(kCross, "cross_kv", {{"2", 2}, {"B", B}, {"source", source}, {"H", H}, {"d_head", dh}}, c);
  t.add_attention(w.attention, scores_shape(s, w, B, S, source, c), kCross);
  t.add(kCross, "cross_o_proj_out", {{"B", B}, {"S", S}, {"d", s.d_model}}, c);
}

template <typename Sink>
void mlp_tensors(const ModelSpec& s, const Workload& w, std::uint64_t B, std::uint64_t S, const Precision& c, Sink& t) {
  if (s.mlp == MlpKind::none) return;
  dequantized_weight(s, w, checked_mul(B, S, "rows"), kMlp, {"mlp", "experts"}, c, t);
  const std::uint64_t d = s.d_model;
  // A MoE layer's MLP phase: the busiest expert's tokens (routed evenly) and the shared experts
  // on every token. The model's dense layers (DeepSeek's first k) are the phase when wider.
  const std::uint64_t n = s.mlp == MlpKind::gated ? 3 : 2;
  const std::uint64_t tokens = checked_mul(B, S, "tokens");
  const std::uint64_t routed = s.experts > 0 ? ceil_div(checked_mul(tokens, s.experts_per_token, "routed"), s.experts)
                                             : 0;
  const bool has_dense = layers_in(s, LayerSet::dense_mlp, 0, s.n_layers) > 0;
  const bool moe_wider = s.experts > 0 &&
                         (!has_dense || checked_add(checked_mul(routed, expert_width(s), "expert elements"),
                                                    checked_mul(tokens, s.d_shared_expert, "shared elements"),
                                                    "MoE elements") >= checked_mul(tokens, s.d_mlp, "MLP elements"));
  if (moe_wider) {
    t.add(kMlp, "router_probs", {{"B", B}, {"S", S}, {"E", s.experts}}, precisions::fp32);
    t.add(kMlp, "moe_output", {{"B", B}, {"S", S}, {"d", d}}, c);
    t.add(kMlp, "expert_intermediate", {{"tensors", n}, {"routed_tokens", routed}, {"d_expert", expert_width(s)}}, c);
    if (s.d_shared_expert != 0) {
      t.add(kMlp, "shared_intermediate", {{"tensors", n}, {"B", B}, {"S", S}, {"d_shared", s.d_shared_expert}}, c);
    }
  } else if (s.mlp == MlpKind::gated) {
    // act(gate(x)), up(x) and their product are alive together: 3 x B x S x d_mlp.
    t.add(kMlp, "mlp_intermediate", {{"3", 3}, {"B", B}, {"S", S}, {"d_mlp", s.d_mlp}}, c);
  } else {
    t.add(kMlp, "mlp_intermediate", {{"2", 2}, {"B", B}, {"S", S}, {"d_mlp", s.d_mlp}}, c);
  }
}

// Feeds `t` the transient tensors of a forward pass over `queries` new tokens per sequence
// attending to `keys` positions, with logits for `logit_positions`, the attention cores of
// `core_batch` sequences at once (0: the whole batch). Returns whether the logits were
// upcast to fp32.
template <typename Sink>
bool forward_tensors(const ModelSpec& s, const Workload& w, std::uint64_t queries, std::uint64_t keys,
                     std::uint64_t logit_positions, Sink& t, std::uint64_t core_batch = 0) {
  const Precision c = compute_precision(w);
  const std::uint64_t B = w.batch, S = queries, d = s.d_model;

  t.add(kInput, "block_input", {{"B", B}, {"S", S}, {"d", d}}, c);
  t.add(kInput, "normed_input", {{"B", B}, {"S", S}, {"d", d}}, c);
  // Zamba2 keeps the token embeddings for every shared block (original_hidden_states).
  if (s.shared.blocks != 0) t.add(kInput, "embeddings_kept", {{"B", B}, {"S", S}, {"d", d}}, c);
  // T5 computes its relative-position bias (the mask added) once per stack and hands it to
  // every layer: batch x heads x queries x keys, alive through the whole stack.
  if (s.positional == Positional::relative)
    t.add(kInput, "position_bias", {{"B", B}, {"H", s.n_heads}, {"S", S}, {"M", keys}}, c);
  if (is_encoder_decoder(s)) {  // the decoder of an encoder-decoder: seq_len is the source
    const std::uint64_t source = w.seq_len;
    t.add(kInput, "encoder_output", {{"B", B}, {"source", source}, {"d", d}}, c);
    if (s.positional == Positional::relative)
      t.add(kInput, "cross_position_bias", {{"B", B}, {"H", s.n_heads}, {"S", S}, {"source", source}}, c);
    cross_tensors(s, w, B, S, source, c, t);
  }
  if (ssm_layers(s) > 0) ssm_tensors(s, w, B, S, c, t);
  if (attention_layers(s) > 0) attention_tensors(s, w, B, S, keys, c, core_batch == 0 ? B : core_batch, t);
  mlp_tensors(s, w, B, S, c, t);

  const bool upcast = w.logits_fp32 && element_bits(c.format) != 32;  // .float() on fp32 logits is the same tensor
  if (s.lm_head != LmHead::none) {
    t.add(kLogits, "final_hidden", {{"B", B}, {"S", logit_positions}, {"d", d}}, c);
    t.add(kLogits, "logits", {{"B", B}, {"S", logit_positions}, {"V", s.vocab_size}}, c);
    // transformers' soft-cap, logits / cap, tanh, * cap: each op's output is born before its input dies.
    if (s.final_logit_softcapping)
      t.add(kLogits, "softcap_logits", {{"B", B}, {"S", logit_positions}, {"V", s.vocab_size}}, c);
    if (upcast)
      t.add(kLogits, "logits_fp32", {{"B", B}, {"S", logit_positions}, {"V", s.vocab_size}}, precisions::fp32);
  }
  return upcast;
}

// The largest transient working set of a forward pass, and the phase it falls in.
struct Workspace {
  Item item;                         // "forward_workspace"
  std::string phase;                 // attention, mlp or logits
  std::vector<AllocatorStep> steps;  // the pass's transient tensors in order (forward_steps); empty: not modelled
};

constexpr std::initializer_list<Group> kBlockPhases = {kAttention, kCross, kSsm, kMlp};

// The largest transient working set of a forward pass: one block's attention or MLP phase
// on top of the block input, or the logits at the end.
Workspace forward_workspace(const ModelSpec& s, const Workload& w, std::uint64_t queries, std::uint64_t keys,
                            std::uint64_t logit_positions, std::uint64_t core_batch = 0) {
  WorkspaceItems t;
  const bool upcast = forward_tensors(s, w, queries, keys, logit_positions, t, core_batch);
  const Bytes input = t.sum(kInput), head = t.sum(kLogits);
  // The phases inside a block: attention, a state-space mixer (Mamba layers), the MLP.
  struct Phase {
    Group group;
    const char* name;
    std::string during;
    Bytes bytes;
  };
  std::vector<Phase> phases;
  if (attention_layers(s) > 0)
    phases.push_back({kAttention, "attention", "attention (" + to_string(w.attention) + ")", {}});
  if (is_encoder_decoder(s))
    phases.push_back({kCross, "cross_attention", "cross-attention (" + to_string(w.attention) + ")", {}});
  if (ssm_layers(s) > 0) phases.push_back({kSsm, "ssm", "the state-space mixer", {}});
  if (s.mlp != MlpKind::none) phases.push_back({kMlp, "mlp", "the MLP", {}});
  std::string formula = "max(";
  const Phase* binding = nullptr;
  for (Phase& p : phases) {
    p.bytes = input.plus(t.sum(p.group), "block phase");
    formula += std::string(p.name) + " phase " + std::to_string(p.bytes.count()) + " B, ";
    if (binding == nullptr || p.bytes > binding->bytes) binding = &p;
  }
  Workspace out{{"forward_workspace", Bytes(0), "", std::nullopt, "", {}}, "", forward_steps(t, kBlockPhases)};
  out.item.formula = formula + "logits " + std::to_string(head.count()) + " B); one block at a time, its input kept";
  if (binding == nullptr || head >= binding->bytes) {
    out.item.detail = std::move(t.rows(kLogits));
    out.item.bytes = head;
    out.item.note = "peak at the logits (" + std::string(upcast ? "upcast to fp32, " : "") + "vocabulary " +
                    std::to_string(s.vocab_size) + ")";
    out.phase = "logits";
  } else {
    out.item.detail = std::move(t.rows(kInput));
    for (Item& r : t.rows(binding->group)) out.item.detail.push_back(std::move(r));
    out.item.bytes = binding->bytes;
    out.item.note = "peak inside a block, during " + binding->during;
    out.phase = binding->name;
  }
  return out;
}

// forward_workspace(...)'s bytes and steps without its rows; no steps where no replay reads
// them (no overhead, or a given fragmentation margin).
TransientTensors forward_workspace_bytes(const ModelSpec& s, const Workload& w, std::uint64_t queries,
                                         std::uint64_t keys, std::uint64_t logit_positions) {
  WorkspaceBytes t;
  forward_tensors(s, w, queries, keys, logit_positions, t);
  const Bytes input = t.sum(kInput);
  const bool replayed = w.include_overhead && !w.overhead.fragmentation_given;
  return {std::max({input.plus(t.sum(kAttention), "attention phase"), input.plus(t.sum(kCross), "cross phase"),
                    input.plus(t.sum(kSsm), "ssm phase"), input.plus(t.sum(kMlp), "mlp phase"), t.sum(kLogits)}),
          replayed ? forward_steps(t, kBlockPhases) : std::vector<AllocatorStep>{}};
}

KvCacheOptions kv_options(const ModelSpec& s, const Workload& w, std::uint64_t tokens) {
  KvCacheOptions o;
  o.batch = w.batch;
  o.tokens = tokens;
  o.precision = w.kv_precision.value_or(compute_precision(w));
  o.page_tokens = w.kv_page_tokens;
  o.mla_cache = w.mla_cache;
  o.sliding_keeps_prompt = tokens <= w.seq_len;  // a pass over the prompt, before any decode step
  o.state_precision = compute_precision(w);
  o.cross_tokens = is_encoder_decoder(s) ? w.seq_len : 0;  // the source's keys and values, per decoder layer
  return o;
}

// Keeps the KV cache of `tokens` positions per sequence, `note` before its own.
void keep_kv(WorkloadComposer& c, const ModelSpec& s, const Workload& w, std::uint64_t tokens,
             const std::string& note) {
  const KvCacheOptions o = kv_options(s, w, tokens);
  Item kv = std::move(estimate_kv_cache(s, o).components.front());
  if (!note.empty()) kv.note = kv.note.empty() ? note : note + "; " + kv.note;
  c.keep(std::move(kv), kv_cache_allocations(s, o));
}

// The totals-only twin of WorkloadComposer for the weights, inference and generation: the
// allocations kept and the bytes of the peak, in the same order, without rows.
class ByteTally {
 public:
  ByteTally(const ModelSpec& s, const Workload& w) : workload_(w), persistent_(weight_allocations(s, w.weights)) {
    for (const TensorRun& run : persistent_) {
      allocated_ = allocated_.plus(Bytes(run.bytes).times(run.count, "weights bytes"), "weights bytes");
    }
  }
  static Bytes run_bytes(const std::vector<TensorRun>& runs) {
    Bytes total(0);
    for (const TensorRun& run : runs)
      total = total.plus(Bytes(run.bytes).times(run.count, "KV cache bytes"), "KV cache bytes");
    return total;
  }
  void keep(const std::vector<TensorRun>& runs) {
    persistent_.insert(persistent_.end(), runs.begin(), runs.end());
    allocated_ = allocated_.plus(run_bytes(runs), "allocated bytes");
  }
  void transient(TransientTensors tensors) { transient_ = std::move(tensors); }
  // The weights alone: no overhead.
  WorkloadBytes weights_only() const { return {allocated_, allocated_, allocated_}; }
  WorkloadBytes finish() const {
    const Bytes allocated = allocated_.plus(transient_.bytes, "allocated bytes");
    if (!workload_.include_overhead) return {allocated, allocated, allocated};
    const OverheadBytes overhead = overhead_bytes(workload_.overhead, persistent_, transient_);
    return {
        allocated.plus(overhead.total(), "the breakdown total"), allocated,
        allocated.plus(overhead.allocator_rounding, "reserved bytes").plus(overhead.fragmentation, "reserved bytes")};
  }

 private:
  const Workload& workload_;
  std::vector<TensorRun> persistent_;
  Bytes allocated_;
  TransientTensors transient_;
};

bool causal(const ModelSpec& s) { return s.lm_head != LmHead::none; }  // encoders keep no cache

// The tokens of a generation: the prompt and the new ones.
std::uint64_t generated_total(const Workload& w) {
  return checked_add(w.seq_len, w.new_tokens, "prompt + generated tokens");
}

// ------------------------------------------------------------------ encoder-decoders

// T5's attention (T5Attention) has no SDPA path in transformers: it always materialises
// its scores and softmaxes them in fp32, whatever `attention` says.
Workload as_run(const ModelSpec& s, const Workload& w) {
  Workload out = w;
  if (s.positional == Positional::relative) out.attention = AttentionVariant::eager;
  return out;
}

// Whisper's front end before the encoder's layers: conv1 over the mel frames (twice the
// positions: conv2 has stride 2) and its GELU, the input still alive. The encoder's working
// set when it is the larger.
void audio_front_end(const ModelSpec& s, const Workload& w, Workspace& encoder) {
  const Precision c = compute_precision(w);
  const std::uint64_t B = w.batch, frames = checked_mul(2, w.seq_len, "mel frames");
  WorkspaceItems t;
  t.add(kInput, "mel_input", {{"B", B}, {"mel_bins", s.encoder.mel_bins}, {"frames", frames}}, c);
  t.add(kInput, "conv1_output", {{"B", B}, {"d", s.d_model}, {"frames", frames}}, c);
  t.add(kInput, "conv1_gelu_output", {{"B", B}, {"d", s.d_model}, {"frames", frames}}, c);
  const Bytes front = t.sum(kInput);
  if (front <= encoder.item.bytes) return;
  encoder.item.detail = std::move(t.rows(kInput));
  encoder.item.bytes = front;
  encoder.item.formula = "the audio front end: the mel frames, conv1's output and its GELU";
  encoder.item.note = "peak in the audio front end, before the encoder's layers";
  encoder.phase = "audio_front_end";
}

// The decoder's tokens: generated (generation) or in one forward pass (inference).
std::uint64_t target_tokens(const Workload& w) {
  return w.kind == WorkloadKind::generation ? w.new_tokens : w.target_len;
}

// An encoder-decoder's two candidate peaks: the encoder's pass over the source (nothing
// kept yet but the weights), and the decoder's (the whole target in one pass, or the last
// decode step) with the encoder's output, the self-attention cache of the target and the
// cross-attention cache of the source.
void compose_encoder_decoder(const ModelSpec& s, const Workload& given, WorkloadComposer& c) {
  const Workload w = as_run(s, given);
  const bool generation = w.kind == WorkloadKind::generation;
  const std::uint64_t T = target_tokens(w);
  const bool cache = generation || w.kv_cache;
  Workspace encoder = forward_workspace(encoder_as_model(s), w, w.seq_len, w.seq_len, 0);
  if (s.encoder.mel_bins != 0) audio_front_end(s, w, encoder);
  Workspace decoder = generation ? forward_workspace(s, w, 1, T, 1) : forward_workspace(s, w, T, T, T);
  const Bytes kv = cache ? estimate_kv_cache(s, kv_options(s, w, T)).total() : Bytes(0);
  const std::string eager = s.positional == Positional::relative && given.attention != AttentionVariant::eager
                                ? "; T5's attention is eager in transformers (no SDPA), so its scores are counted"
                                : "";
  if (encoder.item.bytes > kv.plus(decoder.item.bytes, "decoder peak")) {
    const bool front_end = encoder.phase == "audio_front_end";
    encoder.item.note = "peak in the encoder (" + std::to_string(s.encoder.n_layers) + " layers over " +
                        std::to_string(w.seq_len) + " source positions), before the decoder runs; " +
                        encoder.item.note + eager;
    c.transient(std::move(encoder.item), front_end ? "audio_front_end" : "encoder");
    // The decoder's phase, smaller, is where the caches live: show it beside.
    c.alternative("forward_workspace",
                  {"decoder_phase",
                   kv.plus(decoder.item.bytes, "decoder peak"),
                   (cache ? "KV cache " + std::to_string(kv.count()) + " B (self-attention over " + std::to_string(T) +
                                " target tokens, cross-attention over " + std::to_string(w.seq_len) + " source) + "
                          : std::string()) +
                       "decoder workspace " + std::to_string(decoder.item.bytes.count()) + " B",
                   std::nullopt,
                   "the decoder's peak, with its caches: smaller than the encoder's pass here",
                   {}});
    return;
  }
  if (cache) {
    keep_kv(c, s, w, T,
            generation ? "peak at the last decode step: " + std::to_string(T) + " generated tokens over " +
                             std::to_string(w.seq_len) + " source positions"
                       : "");
  }
  decoder.item.note = "in the decoder, the encoder's output kept; " + decoder.item.note + eager;
  c.transient(std::move(decoder.item), generation ? "decode" : decoder.phase);
}

// The totals of a workload `w` (its images' tokens already in seq_len) through its breakdown.
WorkloadBytes breakdown_bytes(const ModelSpec& s, const Workload& w) {
  WorkloadComposer c(s, w);
  workload_entry(w.kind).compose(s, w, c);
  const Breakdown b = std::move(c).finish();
  return {b.total(), b.allocated(), b.reserved()};
}

// ------------------------------------------------------------------ vision-language models

// The vision tower's pass over the batch's images, before the language model runs (nothing
// kept yet but the weights): the pixels, the tower's layers one at a time, LLaVA's hidden
// states of every layer (output_hidden_states=True, to pick vision_feature_layer), or the
// projector into the language model's width when its tensors are the larger.
Workspace vision_workspace(const ModelSpec& s, const Workload& w) {
  const VisionTower& v = s.vision;
  const ImageGrid grid = image_grid(v, w.image_width, w.image_height);
  const Precision c = compute_precision(w);
  const std::uint64_t N = checked_mul(w.batch, w.images, "images in the batch"), P = grid.patches;
  const std::uint64_t crops = checked_mul(N, grid.crops, "the tower's images");  // LLaVA-NeXT: tiles and wholes
  const ModelSpec tower = vision_as_model(s);
  Workload tw = w;
  tw.batch = crops;
  // CLIP and SigLIP attend over their batch of images at once; Qwen's towers run every
  // image's attention in turn (transformers splits the patches by cu_seqlens), one image's
  // core alive at a time.
  Workspace layers = forward_workspace(tower, tw, P, P, 0, keeps_image_size(v) ? 1 : crops);

  WorkspaceItems t;                                           // kInput: alive through the pass; kMlp: the projector
  if (keeps_image_size(v) || v.kind == VisionKind::gemma4) {  // Qwen's (2-frame) and Gemma 4's flattened patches
    const std::uint64_t per_patch = 3 * v.temporal_patch * v.patch * v.patch;
    t.add(kInput, "pixel_values", {{"patches", checked_mul(N, P, "patches")}, {"3 t p^2", per_patch}}, c);
  } else {  // every crop resized to the tower's square
    t.add(kInput, "pixel_values", {{"crops", crops}, {"3", 3}, {"H", v.image_size}, {"W", v.image_size}}, c);
  }
  if (v.kind == VisionKind::clip || v.kind == VisionKind::llava_next) {
    const std::uint64_t features = P - 1;  // the class token dropped
    if (v.n_layers > 1)                    // the last layer's input is its block_input
      t.add(kInput, "hidden_states", {{"layers - 1", v.n_layers - 1}, {"crops", crops}, {"P", P}, {"d", v.d_model}}, c);
    t.add(kMlp, "image_features", {{"crops", crops}, {"features", features}, {"d_vision", v.d_model}}, c);
    t.add(kMlp, "projector_hidden", {{"2", 2}, {"crops", crops}, {"features", features}, {"d", s.d_model}}, c);
    if (v.kind == VisionKind::llava_next)  // the tiles' features, before they are unpadded and packed
      t.add(kMlp, "projector_tiles_out", {{"crops", crops}, {"features", features}, {"d", s.d_model}}, c);
  } else if (v.kind == VisionKind::gemma3 || v.kind == VisionKind::gemma4) {  // pooled, normed, projected
    t.add(kMlp, "image_features", {{"images", N}, {"P", P}, {"d_vision", v.d_model}}, c);
    t.add(kMlp, "pooled_and_normed", {{"2", 2}, {"images", N}, {"tokens", grid.tokens}, {"d_vision", v.d_model}}, c);
  } else if (v.kind == VisionKind::idefics3) {  // every tile's features, shuffled (a contiguous copy), projected
    const std::uint64_t per_tile = image_tokens(v), shuffled = v.d_model * v.merge * v.merge;
    t.add(kMlp, "image_features", {{"crops", crops}, {"P", P}, {"d_vision", v.d_model}}, c);
    t.add(kMlp, "pixel_shuffled", {{"crops", crops}, {"tokens", per_tile}, {"merge^2 d_vision", shuffled}}, c);
    t.add(kMlp, "projector_out", {{"crops", crops}, {"tokens", per_tile}, {"d", s.d_model}}, c);
  } else if (v.kind == VisionKind::paligemma) {  // projected, then scaled by 1 / sqrt(d_model): a copy
    t.add(kMlp, "image_features", {{"images", N}, {"tokens", grid.tokens}, {"d_vision", v.d_model}}, c);
    t.add(kMlp, "projector_scaled", {{"images", N}, {"tokens", grid.tokens}, {"d", s.d_model}}, c);
  } else {
    const std::uint64_t merged = v.d_model * v.merge * v.merge;
    t.add(kMlp, "merger_norm_out", {{"images", N}, {"P", P}, {"d_vision", v.d_model}}, c);
    t.add(kMlp, "merger_hidden", {{"2", 2}, {"images", N}, {"tokens", grid.tokens}, {"merge^2 d_vision", merged}}, c);
    // Qwen3-VL: each deepstack merger's output, kept from its layer to the end of the pass
    // (counted through every layer).
    if (v.deepstack > 0) {
      const Dims features{{"mergers", v.deepstack}, {"images", N}, {"tokens", grid.tokens}, {"d", s.d_model}};
      t.add(kInput, "deepstack_features", features, c);
      t.add(kMlp, "deepstack_features", features, c);
    }
  }
  // Idefics3's image tokens include its tiles' separators and row markers, which are text.
  if (v.kind != VisionKind::idefics3)
    t.add(kMlp, "projector_out", {{"images", N}, {"tokens", grid.tokens}, {"d", s.d_model}}, c);
  const Bytes kept = t.sum(kInput);
  const Bytes in_layers = kept.plus(layers.item.bytes, "vision tower"), projector = t.sum(kMlp);
  const std::string pass = std::to_string(N) + " image" + (N == 1 ? "" : "s") +
                           (grid.crops > 1 ? " (" + std::to_string(grid.crops) + " crops each)" : "") + " of " +
                           std::to_string(grid.width) + "x" + std::to_string(grid.height) + " px, " +
                           std::to_string(P) + " patches each, " + std::to_string(grid.tokens) + " tokens each";
  Workspace out{{"forward_workspace", Bytes(0), "", std::nullopt, "", {}}, "vision_tower", {}};
  if (projector > in_layers) {
    out.item.detail = std::move(t.rows(kMlp));
    out.item.bytes = projector;
    out.item.formula = "the projector over " + pass;
    out.item.note = "peak in the vision tower's projector, before the language model runs";
    return out;
  }
  out.item.detail = std::move(t.rows(kInput));
  for (Item& r : layers.item.detail) out.item.detail.push_back(std::move(r));
  out.item.bytes = in_layers;
  out.item.formula = "the vision tower (" + std::to_string(v.n_layers) + " layers) over " + pass + ": " +
                     layers.item.formula;
  out.item.note = "peak in the vision tower, before the language model runs; " + layers.item.note;
  return out;
}

// A vision-language model's two candidate peaks: the tower's pass over the images (the
// weights only besides) and the language model's, `language` bytes at its peak. Composes
// the tower's when it is the larger and returns true; otherwise adds it as an alternative
// beside the language model's and returns false.
bool compose_vision_pass(const ModelSpec& s, const Workload& w, Bytes language, WorkloadComposer& c) {
  if (w.images == 0) return false;
  Workspace v = vision_workspace(s, w);
  if (v.item.bytes > language) {
    c.alternative("forward_workspace", {"language_model_phase",
                                        language,
                                        "the language model's peak over " + std::to_string(w.seq_len) +
                                            " tokens (text and images), with its KV cache",
                                        std::nullopt,
                                        "smaller than the vision tower's pass here",
                                        {}});
    c.transient(std::move(v.item), std::move(v.phase));
    return true;
  }
  c.alternative("forward_workspace", {"vision_tower_phase",
                                      v.item.bytes,
                                      v.item.formula,
                                      std::nullopt,
                                      "the vision tower's pass, before the language model: smaller here",
                                      {}});
  return false;
}

// ------------------------------------------------------------------ extraction steps

// The hook cache of extraction over `chunk` tokens at a time.
ActivationCacheOptions hook_cache(const Workload& w, std::uint64_t chunk) {
  ActivationCacheOptions cache = w.cache;
  cache.batch = w.batch;
  cache.seq = chunk;
  cache.key_positions = w.seq_len;
  cache.precision = compute_precision(w);
  return cache;
}

// Adds the host rows of the hooks: their own (a cache kept on the CPU), or when streaming
// every chunk's, if collected on the host.
void add_hook_host_rows(WorkloadComposer& c, const ModelSpec& s, const Workload& w, const ActivationCacheOptions& cache,
                        std::vector<Item> own) {
  if (w.kind != WorkloadKind::streaming_extraction) {
    for (Item& h : own) c.host(std::move(h));
    return;
  }
  ActivationCacheOptions whole = cache;
  whole.seq = w.seq_len;
  whole.on_cpu = true;
  Breakdown collected = estimate_activation_cache(s, whole);
  for (Item& h : collected.host) {
    h.note = "all chunks, if collected on the host (collect_streaming_results)";
    c.host(std::move(h));
  }
}

// Adds a selective cache of the residual stream beside a cache of every hook.
void add_residual_alternative(WorkloadComposer& c, const ModelSpec& s, const ActivationCacheOptions& cache) {
  if (!cache.filter.empty() || !cache.layers.empty() || cache.stop_at_layer) return;
  ActivationCacheOptions selective = cache;
  selective.filter = {"blocks.*.hook_resid_post"};
  selective.on_cpu = false;
  Item residual = std::move(estimate_activation_cache(s, selective).components.front());
  c.alternative("activations", {"activations_resid_post_only",
                                residual.bytes,
                                residual.formula,
                                std::nullopt,
                                "a selective cache of the residual stream after each block",
                                {}});
}

}  // namespace

// ------------------------------------------------------------------ shared with the analyses

std::vector<Work> encoder_decoder_work(const ModelSpec& s, const Workload& w) {
  double source_params = 0;
  for (const TensorGroup& g : model_tensors(s)) {
    if (g.role != TensorRole::linear) continue;
    if (g.component == "encoder" || g.name == "cross.k" || g.name == "cross.v")
      source_params += static_cast<double>(group_parameters(g));
  }
  const double target_params = matmul_parameters(s) - source_params;
  const double B = static_cast<double>(w.batch), S = static_cast<double>(w.seq_len);
  const double T = static_cast<double>(target_tokens(w)), width = static_cast<double>(s.n_heads * s.d_head);
  const double encoder_layers = static_cast<double>(s.encoder.n_layers), layers = static_cast<double>(s.n_layers);
  const bool generation = w.kind == WorkloadKind::generation;
  const double attended = (generation ? T / 2 : T) + S;  // the target so far (on average) and the source
  return {model_work("encoder", B * S * (2 * source_params + 4 * encoder_layers * S * width), w,
                     group_digits(w.batch) + " x " + group_digits(w.seq_len) +
                         " source tokens x (2 P_source + 4 L_enc s h), P_source = " + flops_text(source_params)),
          model_work(generation ? "decode" : "decoder", B * T * (2 * target_params + 4 * layers * attended * width), w,
                     group_digits(target_tokens(w)) + (generation ? " decode steps" : " target tokens") + " x " +
                         group_digits(w.batch) +
                         " x (2 P_target + 4 L_dec (target + source) h), P_target = " + flops_text(target_params))};
}

double encoder_decoder_forward_flops(const ModelSpec& s, const Workload& w) {
  double flops = 0;
  for (const Work& part : encoder_decoder_work(s, w)) flops += part.flops;
  return flops;
}

ForwardPass forward_pass(const ModelSpec& s, const Workload& w) {
  ForwardPass f;
  if (w.kv_cache && causal(s)) {
    const KvCacheOptions o = kv_options(s, w, w.seq_len);
    f.kv_cache = std::move(estimate_kv_cache(s, o).components.front());
    f.kv_allocations = kv_cache_allocations(s, o);
  }
  Workspace ws = forward_workspace(s, w, w.seq_len, w.seq_len, w.seq_len);
  f.workspace = std::move(ws.item);
  f.phase = std::move(ws.phase);
  f.steps = std::move(ws.steps);
  return f;
}

void add_forward(WorkloadComposer& c, ForwardPass f) {
  if (f.kv_cache) c.keep(std::move(*f.kv_cache), f.kv_allocations);
  c.transient(std::move(f.workspace), std::move(f.phase), f.steps);
}

void check_positions(const ModelSpec& s, std::uint64_t tokens, const char* key) {
  if (s.positional != Positional::learned) return;
  const std::uint64_t table = s.n_positions ? s.n_positions : s.max_seq_len;
  if (tokens > table) {
    throw Error(ErrorKind::invalid_input,
                s.name + " has learned positions for " + std::to_string(table) + " tokens; " + std::to_string(tokens) +
                    " cannot be run",
                key);
  }
}

Work model_work(const std::string& name, double flops, const Workload& w, std::string formula) {
  Work work;
  work.name = name;
  work.flops = flops;
  work.format = compute_precision(w).format;
  work.efficiency = kModelEfficiency;
  work.efficiency_reason = kModelEfficiencyReason;
  work.formula = std::move(formula);
  return work;
}

Work forward_work(const ModelSpec& s, const Workload& w, std::uint64_t batch, std::uint64_t seq,
                  const std::string& why) {
  return model_work("forward", forward_flops(s, batch, seq), w,
                    why + ": " + group_digits(batch) + " x " + group_digits(seq) +
                        " tokens x (2P + 4 L s h), P = " + flops_text(matmul_parameters(s)));
}

Item vision_pass(const ModelSpec& s, const Workload& w) { return vision_workspace(s, w).item; }

Work vision_work(const ModelSpec& s, const Workload& w) {
  const ImageGrid grid = image_grid(s.vision, w.image_width, w.image_height);
  double tower = 0, projector = 0;
  for (const TensorGroup& g : model_tensors(s)) {
    if (g.role != TensorRole::linear) continue;
    if (g.component == "vision") tower += static_cast<double>(group_parameters(g));
    if (g.component == "projector") projector += static_cast<double>(group_parameters(g));
  }
  const double images = static_cast<double>(w.batch) * static_cast<double>(w.images);
  const double P = static_cast<double>(grid.patches), tokens = static_cast<double>(grid.tokens);
  const double attention = 4 * static_cast<double>(s.vision.n_layers) * P * P * static_cast<double>(s.vision.d_model);
  return model_work("vision", images * (2 * tower * P + attention + 2 * projector * tokens), w,
                    group_digits(w.batch * w.images) + " images x (2 P_tower x " + std::to_string(grid.patches) +
                        " patches + 4 L_v p^2 d_v + 2 P_projector x " + std::to_string(grid.tokens) +
                        " tokens), P_tower = " + flops_text(tower));
}

// ------------------------------------------------------------------ weights

void compose_weights(const ModelSpec&, const Workload&, WorkloadComposer& c) { c.omit_overhead(); }

std::vector<Work> weights_work(const ModelSpec&, const Workload&) { return {}; }

WorkloadBytes weights_bytes(const ModelSpec& s, const Workload& w) { return ByteTally(s, w).weights_only(); }

// ------------------------------------------------------------------ inference

void compose_inference(const ModelSpec& s, const Workload& w, WorkloadComposer& c) {
  if (is_encoder_decoder(s)) return compose_encoder_decoder(s, w, c);
  ForwardPass f = forward_pass(s, w);
  const Bytes language = f.kv_cache ? f.kv_cache->bytes.plus(f.workspace.bytes, "forward peak") : f.workspace.bytes;
  if (compose_vision_pass(s, w, language, c)) return;
  add_forward(c, std::move(f));
}

WorkloadBytes inference_bytes(const ModelSpec& s, const Workload& w) {
  if (is_encoder_decoder(s) || w.images > 0) return breakdown_bytes(s, w);
  ByteTally t(s, w);
  if (w.kv_cache && causal(s)) t.keep(kv_cache_allocations(s, kv_options(s, w, w.seq_len)));
  t.transient(forward_workspace_bytes(s, w, w.seq_len, w.seq_len, w.seq_len));
  return t.finish();
}

std::vector<Work> one_forward_work(const ModelSpec& s, const Workload& w) {
  if (is_encoder_decoder(s)) return encoder_decoder_work(s, w);
  std::vector<Work> out;
  if (w.images > 0) out.push_back(vision_work(s, w));
  out.push_back(forward_work(s, w, w.batch, w.seq_len, "one forward pass"));
  return out;
}

// ------------------------------------------------------------------ generation

// A decode step's tensors as the allocator meets them: after the prompt's pass, whose freed
// segments stay cached.
TransientTensors after_prefill(const std::vector<AllocatorStep>& prefill, const TransientTensors& decode) {
  std::vector<AllocatorStep> steps = prefill;
  append_steps(steps, decode.steps);
  return {decode.bytes, std::move(steps)};
}

// Two candidate peaks: right after prefill (the prompt's cache, the prompt's activations,
// last-position logits) and at the last decode step (the full cache, one token's
// activations). The larger is the job's peak; the overhead does not take part.
void compose_generation(const ModelSpec& s, const Workload& w, WorkloadComposer& c) {
  if (is_encoder_decoder(s)) return compose_encoder_decoder(s, w, c);
  const std::uint64_t total = generated_total(w);
  Workspace prefill_ws = forward_workspace(s, w, w.seq_len, w.seq_len, 1);
  Workspace decode_ws = forward_workspace(s, w, 1, total, 1);
  const Bytes prefill =
      estimate_kv_cache(s, kv_options(s, w, w.seq_len)).total().plus(prefill_ws.item.bytes, "prefill peak");
  const Bytes decode = estimate_kv_cache(s, kv_options(s, w, total)).total().plus(decode_ws.item.bytes, "decode peak");
  if (compose_vision_pass(s, w, std::max(prefill, decode), c)) return;
  if (prefill > decode) {
    keep_kv(c, s, w, w.seq_len, "peak after prefill: the prompt's " + std::to_string(w.seq_len) + " tokens");
    c.transient(std::move(prefill_ws.item), "prefill", prefill_ws.steps);
  } else {
    keep_kv(c, s, w, total,
            "peak at the last decode step: " + std::to_string(w.seq_len) + " prompt + " + std::to_string(w.new_tokens) +
                " new tokens");
    const TransientTensors decode_tensors = after_prefill(prefill_ws.steps, {decode_ws.item.bytes, decode_ws.steps});
    c.transient(std::move(decode_ws.item), "decode", decode_tensors.steps);
  }
}

WorkloadBytes generation_bytes(const ModelSpec& s, const Workload& w) {
  if (is_encoder_decoder(s) || w.images > 0) return breakdown_bytes(s, w);
  const std::uint64_t total = generated_total(w);
  const std::vector<TensorRun> prefill_kv = kv_cache_allocations(s, kv_options(s, w, w.seq_len));
  const std::vector<TensorRun> decode_kv = kv_cache_allocations(s, kv_options(s, w, total));
  const TransientTensors prefill_ws = forward_workspace_bytes(s, w, w.seq_len, w.seq_len, 1);
  const TransientTensors decode_ws = forward_workspace_bytes(s, w, 1, total, 1);
  const bool prefill_binds = ByteTally::run_bytes(prefill_kv).plus(prefill_ws.bytes, "prefill peak") >
                             ByteTally::run_bytes(decode_kv).plus(decode_ws.bytes, "decode peak");
  ByteTally t(s, w);
  t.keep(prefill_binds ? prefill_kv : decode_kv);
  t.transient(prefill_binds ? prefill_ws : after_prefill(prefill_ws.steps, decode_ws));
  return t.finish();
}

std::vector<Work> generation_work(const ModelSpec& s, const Workload& w) {
  if (is_encoder_decoder(s)) return encoder_decoder_work(s, w);
  const double P = matmul_parameters(s);
  const double B = static_cast<double>(w.batch), T = static_cast<double>(w.new_tokens);
  const double ctx = static_cast<double>(w.seq_len) + T / 2;
  const double per_token = 2 * P + 4 * attended_positions(s, ctx) * static_cast<double>(s.n_heads) *
                                       static_cast<double>(s.d_head);
  std::vector<Work> out;
  if (w.images > 0) out.push_back(vision_work(s, w));
  out.push_back(forward_work(s, w, w.batch, w.seq_len, "prefill"));
  out.push_back(model_work("decode", B * T * per_token, w,
                           group_digits(w.new_tokens) + " decode steps x " + group_digits(w.batch) +
                               " sequences x (2P + 4 L ctx h)"));
  return out;
}

// ------------------------------------------------------------------ extraction, streaming_extraction

void compose_extraction(const ModelSpec& s, const Workload& w, WorkloadComposer& c) {
  const bool streaming = w.kind == WorkloadKind::streaming_extraction;
  const std::uint64_t chunk = streaming ? std::min(w.streaming_chunk, w.seq_len) : w.seq_len;
  // TransformerLens's run_with_cache runs forward without a past_kv_cache: no KV cache, unless
  // streaming hands one from each chunk to the next.
  if (causal(s) && streaming) {
    keep_kv(c, s, w, w.seq_len,
            streaming ? "later chunks attend to earlier ones, so the cache holds the whole sequence" : "");
  }
  const ActivationCacheOptions cache = hook_cache(w, chunk);
  Breakdown hooks = estimate_activation_cache(s, cache);
  Item activations = std::move(hooks.components.front());
  if (streaming) {
    activations.note = "one chunk of " + std::to_string(chunk) +
                       " tokens; each chunk's cache leaves the GPU before the next";
  }
  add_hook_host_rows(c, s, w, cache, std::move(hooks.host));
  for (Alternative& a : hooks.alternatives) c.alternative(std::move(a.replaces), std::move(a.item));
  add_residual_alternative(c, s, cache);
  // Each hook's tensor is allocated once and kept: allocator rounding, not fragmentation.
  c.keep(std::move(activations), activation_cache_allocations(s, cache));
  Workspace ws = forward_workspace(s, w, chunk, w.seq_len, chunk);
  c.transient(std::move(ws.item), std::move(ws.phase), ws.steps);
}

}  // namespace memplan::detail
