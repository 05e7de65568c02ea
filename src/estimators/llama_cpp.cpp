#include "memplan/estimators/llama_cpp.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "memplan/core/bytes.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "memplan/estimators/weights.hpp"

#include "llama_cpp_graph.hpp"

namespace memplan {

namespace {

constexpr std::uint64_t kCellBlock = 256;  // llama_context pads n_ctx to a multiple of 256
constexpr std::uint64_t kF32 = 4;

std::string digits(std::uint64_t v) { return group_digits(v); }

Item buffer_row(std::string name, std::uint64_t bytes, std::string formula, std::string note = {}) {
  return {std::move(name), Bytes(bytes), std::move(formula), std::nullopt, std::move(note), {}};
}

const GgmlType& ggml_type(std::uint32_t id, const char* key) {
  const GgmlType* t = find_ggml_type(id);
  if (t == nullptr) throw Error(ErrorKind::invalid_input, "no ggml type " + std::to_string(id), key);
  return *t;
}

// Bytes of one layer's keys or values: cells rows of `width` elements of `type`.
std::uint64_t cache_bytes(const GgmlType& type, std::uint64_t width, std::uint64_t cells, const char* key) {
  if (width % type.block_size != 0) {
    throw Error(ErrorKind::invalid_input,
                "a " + std::string(type.name) + " cache stores rows in blocks of " + std::to_string(type.block_size) +
                    " elements; this model's rows are " + std::to_string(width) + " wide (llama.cpp refuses it)",
                key);
  }
  return checked_mul(checked_mul(width / type.block_size, type.type_size, "KV cache"), cells, "KV cache");
}

// The cells a layer holds: every cell of the context, or for a sliding-window layer
// (llama-kv-cache-iswa.cpp) its window plus one micro-batch, padded to 256, at most the context;
// a unified cache holds the window of each of its `sequences`.
std::uint64_t layer_cells(AttentionKind kind, const ModelSpec& spec, std::uint64_t cells, std::uint64_t n_ubatch,
                          std::uint64_t sequences) {
  std::uint64_t window = 0;
  if (kind == AttentionKind::sliding) window = spec.sliding_window;
  if (kind == AttentionKind::chunked) window = spec.attention_chunk;
  if (window == 0) return cells;
  const std::uint64_t windows = checked_mul(window, sequences, "KV cells");
  return std::min(cells, ceil_div(checked_add(windows, n_ubatch, "KV cells"), kCellBlock) * kCellBlock);
}

// "layer 0" or "layers 0-N" for the first n layers.
std::string layer_range(std::uint64_t n) { return n == 1 ? "layer 0" : "layers 0-" + digits(n - 1); }

}  // namespace

const std::vector<std::uint32_t>& llama_cpp_cache_types() {
  static const std::vector<std::uint32_t> types = {0, 1,  30, 8, 2,
                                                   3, 20, 6,  7};  // F32 F16 BF16 Q8_0 Q4_0 Q4_1 IQ4_NL Q5_0 Q5_1
  return types;
}

const GgmlType& parse_llama_cpp_cache_type(std::string_view name, const char* key) {
  std::vector<std::string> names;
  for (const std::uint32_t id : llama_cpp_cache_types()) names.push_back(lowered(find_ggml_type(id)->name));
  const std::string want = lowered(name);
  for (const std::uint32_t id : llama_cpp_cache_types()) {
    const GgmlType& t = *find_ggml_type(id);
    if (lowered(t.name) == want) return t;
  }
  throw Error(ErrorKind::invalid_input,
              "`" + std::string(key) + "` is a llama.cpp cache type: " + quoted_list(names, "or") + ", not '" +
                  printable(name) + "'" + did_you_mean(name, names),
              key);
}

std::uint64_t llama_cpp_cells(std::uint64_t n_ctx, std::uint64_t n_seq, bool kv_unified) {
  const std::uint64_t padded = ceil_div(n_ctx, kCellBlock) * kCellBlock;
  if (kv_unified) return padded;
  return ceil_div(padded / std::max<std::uint64_t>(n_seq, 1), kCellBlock) * kCellBlock;
}

LlamaCppWeights llama_cpp_weights(const ModelSpec& spec, const Precision& weights) {
  LlamaCppWeights out;
  if (spec.stored_layers) {
    const StoredLayers& l = *spec.stored_layers;
    out.input = l.input;
    out.layers = l.blocks;
    out.experts = l.experts;
    out.experts.resize(out.layers.size(), 0);
    out.output = l.output;
    out.tied_head = l.tied_head;
    out.stored = true;
    return out;
  }
  // The architecture at a precision: the embeddings in the input layer; a block is what one
  // more layer adds; the output layer the rest (final norm, an untied head).
  WeightsOptions o;
  o.precision = weights;
  const auto priced = [&](const ModelSpec& s) {
    const Breakdown b = estimate_weights(s, o);
    std::uint64_t embeddings = 0, head = 0, experts = 0;
    for (const Item& c : b.components.front().detail) {
      if (c.name == "embeddings") embeddings = c.bytes.count();
      if (c.name == "lm_head") head = c.bytes.count();
      if (c.name == "experts") experts = c.bytes.count();
    }
    return std::array<std::uint64_t, 4>{b.total().count(), embeddings, head, experts};
  };
  // A vision-language model's text model: llama.cpp reads its vision tower from a file of its
  // own (--mmproj; estimate_llama_cpp_projector).
  ModelSpec text = spec;
  text.vision = {};
  const auto [total, embeddings, head, experts] = priced(text);
  const std::uint64_t L = std::max<std::uint64_t>(spec.n_layers, 1);
  // The routed experts, alike in every layer that has them.
  const std::uint64_t moe_layers = layers_in(spec, LayerSet::moe_mlp, 0, spec.n_layers);
  const std::uint64_t per_moe_layer = moe_layers == 0 ? 0 : experts / moe_layers;
  out.input = embeddings;
  out.experts.assign(L, 0);
  for (std::uint64_t il = 0; il < spec.n_layers; ++il) {
    if (layer_holds(spec, LayerSet::moe_mlp, il)) out.experts[il] = per_moe_layer;
  }
  if (spec.n_layers >= 2 && uniform_layers(spec)) {
    ModelSpec fewer = text;
    fewer.n_layers -= 1;
    out.layers.assign(L, total - priced(fewer)[0]);
  } else {
    // Layers that differ: an even share each of all but the experts, and the experts where they are.
    const std::uint64_t share = (total - embeddings - head - per_moe_layer * moe_layers) / L;
    out.layers.assign(L, share);
    for (std::uint64_t il = 0; il < L; ++il) out.layers[il] += out.experts[il];
  }
  std::uint64_t blocks = 0;
  for (const std::uint64_t b : out.layers) blocks = checked_add(blocks, b, "weights");
  out.output = total - embeddings - blocks;
  if (spec.lm_head == LmHead::tied) {
    const Precision& embedding = is_quantized(weights) ? o.unquantized : weights;
    out.tied_head = ceil_div(
        checked_mul(checked_mul(spec.vocab_size, spec.d_model, "head"), element_bits(embedding.format), "head"), 8);
  }
  return out;
}

LlamaCppEstimate estimate_llama_cpp(const ModelSpec& spec, const LlamaCppOptions& o) {
  if (o.n_ctx == 0) throw Error(ErrorKind::invalid_input, "llama.cpp's context (-c) must be at least 1", "seq_len");
  if (o.n_ubatch == 0) throw Error(ErrorKind::invalid_input, "`ubatch` must be at least 1", "ubatch");
  if (spec.lm_head == LmHead::none) {
    throw Error(ErrorKind::invalid_input, "llama.cpp's estimate is for decoders; " + spec.name + " has no LM head",
                "engine");
  }
  const bool recurrent = ssm_layers(spec) > 0;
  if (spec.family == Family::zamba2) {
    throw Error(ErrorKind::invalid_input,
                "llama.cpp has no Zamba2 architecture (src/llama-arch.cpp): plan " + spec.name +
                    " with `engine` pytorch",
                "engine");
  }
  // A Mamba or Mamba-2 has state-space layers alone; a hybrid (Jamba, Bamba, Nemotron-H,
  // Falcon-H1) also attention layers, whose KV cache llama_memory_hybrid keeps beside the state.
  const bool state_only = recurrent && attention_layers(spec) == 0;
  // src/models/mamba.cpp: "only an expansion factor of 2 is supported for now".
  if (spec.family == Family::mamba && spec.ssm.d_inner != checked_mul(2, spec.d_model, "d_inner")) {
    throw Error(ErrorKind::invalid_input,
                "llama.cpp runs Mamba only with an inner width of twice d_model; " + spec.name + " has " +
                    digits(spec.ssm.d_inner) + " for d_model " + digits(spec.d_model),
                "engine");
  }
  if (spec.mla.kv_lora_rank != 0) {
    throw Error(ErrorKind::invalid_input,
                "memplan does not model llama.cpp's cache for latent attention (" + spec.name +
                    "): use `engine` pytorch or vllm",
                "engine");
  }
  const GgmlType& tk = ggml_type(o.type_k, "cache_type_k");
  const GgmlType& tv = ggml_type(o.type_v, "cache_type_v");
  if (!o.flash_attn && tv.block_size != 1) {
    throw Error(ErrorKind::invalid_input,
                "llama.cpp needs flash attention for a quantised V cache (" + lowered(tv.name) +
                    "): set `flash_attn` on or `cache_type_v` f16",
                "cache_type_v");
  }

  if (o.n_seq == 0) throw Error(ErrorKind::invalid_input, "`parallel` (-np) must be at least 1", "parallel");
  if (!o.kv_unified && o.n_ctx / o.n_seq == 0) {
    throw Error(ErrorKind::invalid_input,
                "-c " + digits(o.n_ctx) + " over -np " + digits(o.n_seq) +
                    " sequences leaves none a token: llama.cpp gives each n_ctx / n_seq",
                "parallel");
  }
  LlamaCppEstimate out;
  const std::uint64_t L = spec.n_layers, S = o.kv_unified ? 1 : o.n_seq;
  const std::uint64_t ctx_cells = llama_cpp_cells(o.n_ctx, o.n_seq, o.kv_unified);
  // A state-space model keeps no KV cells but a recurrent state slot per sequence
  // (llama_memory_recurrent's mem_size, max(1, n_seq_max)), unified or not.
  out.cells = state_only ? 0 : ctx_cells;
  out.state_cells = recurrent ? std::max<std::uint64_t>(o.n_seq, 1) : 0;
  out.streams = S;
  // The worst micro-batch (llama_context::sched_reserve): n_ubatch tokens, which llama_context
  // caps at -c as given (n_batch = min(n_ctx, n_batch) before -c is padded), n_outputs_max of
  // them outputs; graph_reserve then rounds the tokens up to a multiple of -np, one equal share
  // per sequence, and keeps the outputs as they were.
  const std::uint64_t ubatch = std::min(o.n_ubatch, o.n_ctx);
  const std::uint64_t tokens = std::min(ubatch, checked_mul(ctx_cells, S, "cells"));
  const std::uint64_t T = checked_mul(ceil_div(tokens, o.n_seq), o.n_seq, "micro-batch");
  const std::uint64_t outputs = o.n_outputs == 0 ? tokens : std::min(o.n_outputs, tokens);
  out.outputs = outputs;
  const std::uint64_t on_gpu = o.gpu ? std::min(o.gpu_layers, L) : 0;
  out.gpu_layers = on_gpu;
  out.output_on_gpu = o.gpu && o.gpu_layers > L;
  const auto layer_on_gpu = [&](std::uint64_t il) { return il >= L - on_gpu; };

  // Weights: the input layer on the host, each block and the output layer where -ngl puts them.
  const LlamaCppWeights w = llama_cpp_weights(spec, o.weights);
  std::uint64_t w_gpu = 0, w_host = w.input, experts_kept = 0;
  for (std::uint64_t il = 0; il < w.layers.size(); ++il) {
    // --n-cpu-moe: an offloaded layer's routed experts stay in host memory (a tensor override).
    const std::uint64_t kept = layer_on_gpu(il) && il < o.n_cpu_moe ? w.experts[il] : 0;
    experts_kept = checked_add(experts_kept, kept, "weights");
    w_host = checked_add(w_host, kept, "weights");
    std::uint64_t& sum = layer_on_gpu(il) ? w_gpu : w_host;
    sum = checked_add(sum, w.layers[il] - kept, "weights");
  }
  // A tied head on the host is the embedding itself; on the GPU it is a copy.
  if (out.output_on_gpu) {
    w_gpu = checked_add(checked_add(w_gpu, w.output, "weights"), w.tied_head, "weights");
  } else {
    w_host = checked_add(w_host, w.output, "weights");
  }
  const std::string source = w.stored ? "the .gguf's tensors, each rounded up to 32 bytes"
                                      : "the architecture at " + to_string(o.weights);

  // The KV cache: per layer, keys and values of n_kv_heads x d_head per cell (Gemma 4's
  // full-attention layers: their own heads).
  const std::uint64_t width = checked_mul(spec.n_kv_heads, spec.d_head, "KV width");
  const ModelSpec global_view = global_layer_view(spec);
  const std::uint64_t global_width = checked_mul(global_view.n_kv_heads, global_view.d_head, "KV width");
  const bool global_heads = has_global_heads(spec);
  std::uint64_t kv_gpu = 0, kv_host = 0, largest_kv = 0;
  std::uint64_t window_kv = 0;  // a sliding or chunked layer's cells, beside full layers' (two caches)
  bool full_layers = false;
  // The recurrent state (llama_memory_recurrent): per layer f32 rows of the convolution's last
  // d_conv - 1 columns (r) and of the scan's state (s), a row each per slot, each tensor
  // aligned as its buffer aligns.
  const std::uint64_t alignment = o.gpu && (on_gpu > 0 || out.output_on_gpu) ? 128U : 32U;
  const auto aligned = [](std::uint64_t bytes, std::uint64_t to) { return checked_mul(ceil_div(bytes, to), to, "c"); };
  const std::uint64_t n_embd_r = recurrent ? checked_mul(spec.ssm.d_conv - 1, ssm_conv_channels(spec.ssm), "state") : 0;
  const std::uint64_t n_embd_s = checked_mul(spec.ssm.d_state, spec.ssm.d_inner, "state");
  std::uint64_t state_gpu = 0, state_host = 0;
  for (std::uint64_t il = 0; il < L; ++il) {
    if (layer_holds(spec, LayerSet::ssm, il)) {
      const std::uint64_t align = layer_on_gpu(il) ? 128U : 32U;  // CUDA's buffers, the CPU's
      const std::uint64_t bytes = checked_add(
          aligned(checked_mul(checked_mul(n_embd_r, out.state_cells, "state"), kF32, "state"), align),
          aligned(checked_mul(checked_mul(n_embd_s, out.state_cells, "state"), kF32, "state"), align), "state");
      std::uint64_t& sum = layer_on_gpu(il) ? state_gpu : state_host;
      sum = checked_add(sum, bytes, "state");
    }
  }
  const std::string state_formula = digits(out.state_cells) +
                                    (out.state_cells == 1 ? " slot" : " slots (one per sequence)") + " x f32 (conv " +
                                    digits(n_embd_r) + " = (d_conv - 1) x " + digits(ssm_conv_channels(spec.ssm)) +
                                    " channels, scan " + digits(n_embd_s) + " = d_state x d_inner) per layer";

  for (std::uint64_t il = 0; il < L; ++il) {
    const AttentionKind kind = attention_kind(spec, il);
    if (!attends(kind) || il + spec.kv_shared_layers >= L) continue;  // Gemma 4 E2B's shared layers: no cache
    const std::uint64_t cells = layer_cells(kind, spec, out.cells, ubatch, o.kv_unified ? o.n_seq : 1);
    largest_kv = std::max(largest_kv, cells);
    if (kind == AttentionKind::sliding || kind == AttentionKind::chunked) {
      window_kv = std::max(window_kv, cells);
      out.window_cells = window_kv;
    } else {
      full_layers = true;
    }
    const std::uint64_t kv_row = global_heads && kind == AttentionKind::full ? global_width : width;
    const std::uint64_t bytes = checked_mul(checked_add(cache_bytes(tk, kv_row, cells, "cache_type_k"),
                                                        cache_bytes(tv, kv_row, cells, "cache_type_v"), "KV cache"),
                                            S, "KV cache");
    std::uint64_t& sum = layer_on_gpu(il) ? kv_gpu : kv_host;
    sum = checked_add(sum, bytes, "KV cache");
  }
  const std::string shared = o.n_seq > 1 ? ", one stream the " + digits(o.n_seq) + " sequences share (--kv-unified)"
                                         : std::string();
  const std::string kv_formula = (S == 1 ? digits(out.cells) + " cells (-c " + digits(o.n_ctx) + " rounded up to 256" +
                                               shared + ")"
                                         : digits(S) + " sequences x " + digits(out.cells) + " cells (-c " +
                                               digits(o.n_ctx) + " / -np " + digits(S) + ", rounded up to 256)") +
                                 " x " + digits(width) + " (n_kv_heads x d_head) per layer" +
                                 (global_heads ? " (" + digits(global_width) + " in a full-attention layer)" : "") +
                                 ", K " + lowered(tk.name) + ", V " + lowered(tv.name);

  // The output buffer: one row of f32 logits per sequence (llama_context::output_reserve).
  const std::uint64_t output_buffer = checked_mul(checked_mul(spec.vocab_size, kF32, "output buffer"), o.n_seq,
                                                  "output");

  // The compute buffer: what ggml's graph allocator reserves for the worst micro-batch, n_ubatch
  // tokens, all of them outputs, against every cell. For the graphs memplan has recorded
  // (llama/qwen2 and gpt2 blocks) it is replayed exactly; otherwise the replay's closed form,
  // which can be off by several percent where the allocator's free holes fall differently.
  // The MLP's width a token: a dense layer's, or a transformer's experts, whose gate and up
  // projections llama.cpp computes for each of a token's experts ([width, k, tokens]; read from
  // its allocator trace of Qwen3-MoE). A hybrid's experts keep their own forms below.
  const std::uint64_t moe_layers_here = spec.experts == 0 ? 0 : layers_in(spec, LayerSet::moe_mlp, 0, spec.n_layers);
  // Gemma 4's dense MLP runs beside its experts in every layer (its d_shared_expert).
  const std::uint64_t dense_width = std::max(moe_layers_here < spec.n_layers ? spec.d_mlp : 0,
                                             global_heads ? spec.d_shared_expert : 0);
  const std::uint64_t F = spec.experts > 0 && !recurrent
                              ? std::max(dense_width, checked_mul(spec.experts_per_token, expert_width(spec), "c"))
                              : std::max(spec.d_mlp, expert_width(spec));
  const std::uint64_t d = spec.d_model, V = spec.vocab_size;
  const std::uint64_t n_kv = std::max<std::uint64_t>(largest_kv, 1);
  const std::uint64_t per_token = checked_mul(T, kF32, "compute buffer");
  detail::LlamaCppGraphShape shape{spec.family == Family::gpt2, o.flash_attn, L, d, spec.n_heads, spec.n_kv_heads,
                                   spec.d_head, F, V, T, n_kv, tk.block_size != 1, tv.block_size != 1, tk.id == 0,
                                   tv.id == 0, S, outputs,
                                   // The graph runs where the layers are: CUDA's buffers align to
                                   // 128 bytes, the CPU's to 32 (ggml's TENSOR_ALIGNMENT).
                                   alignment, spec.mrope ? 4U : 1U};
  const auto kinds = attention_layer_counts(spec);
  const bool sliding = std::any_of(kinds.begin(), kinds.end(),
                                   [](const auto& c) { return c.first != AttentionKind::full; });
  const bool llama_like = (spec.family == Family::llama || spec.family == Family::mistral ||
                           spec.family == Family::qwen2) &&
                          spec.mlp == MlpKind::gated && spec.norm == NormKind::rmsnorm;
  const bool gpt2_like = spec.family == Family::gpt2 && spec.mlp == MlpKind::plain;
  const bool recorded = (llama_like || gpt2_like) && spec.experts == 0 && !sliding && spec.deepstack_layers == 0 &&
                        checked_mul(spec.n_heads, spec.d_head, "c") == d;
  std::uint64_t compute = 0;
  // A hybrid's graph is not recorded: the larger of the transformer's closed form below and
  // the replay of a Mamba graph of its state-space sizes.
  const auto ssm_graph = [&] {
    return detail::llama_cpp_ssm_graph_bytes({spec.ssm.version, L, d, V, spec.ssm.d_inner, spec.ssm.d_state,
                                              spec.ssm.d_conv, spec.ssm.dt_rank, spec.ssm.heads, spec.ssm.groups, T,
                                              o.n_seq, outputs, alignment});
  };
  // A gated DeltaNet layer (src/models/qwen35.cpp, ggml's fused gated_delta_net), read from
  // llama.cpp's allocator trace: above the graph's inputs (tokens, embeddings, M-RoPE's four
  // positions, the cache's row indices, output ids: 9 f32 rows; the mask), the embeddings and the
  // residual stream, the layer's norm and the larger of its two stages: the qkv projection beside
  // the convolution's input (its state's d_conv - 1 columns prepended), or the convolution's
  // output, l2-normed q and k, the gates and projections of b and a, and the op's result (every
  // token's output and each sequence's new state). Not recorded as a graph: a closed form.
  const auto gated_delta_peak = [&](const auto& rows, std::uint64_t D, std::uint64_t mask) {
    const SsmSizes& m = spec.ssm;
    const std::uint64_t conv = ssm_conv_channels(m), key = checked_mul(m.groups, m.d_state, "c");
    const std::uint64_t seqs = std::max<std::uint64_t>(o.n_seq, 1);
    const std::uint64_t conv_input = checked_mul(checked_add(T, checked_mul(m.d_conv - 1, seqs, "c"), "c"),
                                                 checked_mul(conv, kF32, "c"), "c");
    const std::uint64_t state = checked_mul(checked_mul(m.d_state, m.d_inner, "c"), checked_mul(seqs, kF32, "c"), "c");
    const std::uint64_t stage1 = checked_add(rows(conv), conv_input, "c");
    const std::uint64_t stage2 = checked_add(rows(checked_add(checked_add(conv, checked_mul(2, key, "c"), "c"),
                                                              checked_add(checked_mul(4, m.heads, "c"), m.d_inner, "c"),
                                                              "c")),
                                             state, "c");
    return checked_add(checked_add(checked_add(rows(9), mask, "c"), checked_mul(3, D, "c"), "c"),
                       std::max(stage1, stage2), "c");
  };
  // Gemma 3's graph is recorded for 16-bit caches (a quantised one adds rotations, an f32 one
  // copies under flash attention); its layers' kinds and each kind's cells.
  const auto sixteen_bit = [](const GgmlType& t) { return t.id == 1 || t.id == 30; };  // F16, BF16
  const bool gemma3_recorded = spec.family == Family::gemma3 && spec.experts == 0 && !recurrent && sixteen_bit(tk) &&
                               sixteen_bit(tv) && !global_heads;
  // Qwen3's graph (and Qwen3-MoE's, Qwen3-VL's) is recorded for every cache type.
  const bool qwen3_recorded = (spec.family == Family::qwen3 || spec.family == Family::qwen3_moe) && !recurrent &&
                              !sliding && spec.qk_norm == QkNorm::head && spec.mlp == MlpKind::gated &&
                              spec.norm == NormKind::rmsnorm && !spec.attn_qkv_bias && !spec.attn_out_bias &&
                              spec.d_shared_expert == 0 && spec.deepstack_layers < L;
  if (state_only) {
    compute = ssm_graph();
  } else if (qwen3_recorded) {
    detail::LlamaCppQwen3GraphShape q3;
    q3.flash_attn = o.flash_attn;
    for (std::uint64_t il = 0; il < L; ++il) q3.experts.push_back(is_moe_layer(spec, il));
    q3.d_model = d;
    q3.n_heads = spec.n_heads;
    q3.n_kv_heads = spec.n_kv_heads;
    q3.d_head = spec.d_head;
    q3.d_ff = spec.d_mlp;
    q3.vocab = V;
    q3.n_experts = spec.experts;
    q3.experts_per_token = spec.experts_per_token;
    q3.expert_width = expert_width(spec);
    q3.k_quantized = tk.block_size != 1;
    q3.v_quantized = tv.block_size != 1;
    q3.n_ubatch = T;
    q3.n_kv = n_kv;
    q3.n_seq = S;
    q3.n_outputs = outputs;
    q3.positions = spec.mrope ? 4 : 1;
    q3.deepstack = spec.deepstack_layers;
    q3.alignment = alignment;
    compute = detail::llama_cpp_qwen3_graph_bytes(q3);
  } else if (recorded && !recurrent) {
    compute = detail::llama_cpp_graph_bytes(shape);
  } else if (gemma3_recorded) {
    detail::LlamaCppGemma3GraphShape g3;
    g3.flash_attn = o.flash_attn;
    for (std::uint64_t il = 0; il < L; ++il) g3.sliding.push_back(attention_kind(spec, il) != AttentionKind::full);
    g3.d_model = d;
    g3.n_heads = spec.n_heads;
    g3.n_kv_heads = spec.n_kv_heads;
    g3.d_head = spec.d_head;
    g3.d_ff = F;
    g3.vocab = V;
    g3.n_ubatch = T;
    g3.global_cells = n_kv;
    g3.window_cells = window_kv;
    g3.n_seq = S;
    g3.n_outputs = outputs;
    g3.alignment = alignment;
    compute = detail::llama_cpp_gemma3_graph_bytes(g3);
  } else {
    // inputs I, then the larger of a layer's peak and the logits above the final norm.
    const auto rows = [&](std::uint64_t cols) { return checked_mul(per_token, cols, "compute buffer"); };
    // Gemma 4's closed form takes its wider layers' queries and keys (a first-layer estimate).
    const std::uint64_t kv_width = std::max(width, global_width);
    const std::uint64_t D = rows(d), Q = rows(checked_mul(spec.n_heads, global_view.d_head, "c"));
    const std::uint64_t g = rows(spec.mlp == MlpKind::gated ? checked_mul(3, F, "c") : F);
    const std::uint64_t mask = checked_mul(checked_mul(n_kv, T, "c"), o.flash_attn ? 2 : 4, "compute buffer");
    // A model of windowed and full layers keeps two caches (llama_kv_cache_iswa), each with its
    // row indices and mask among the graph's inputs (read from llama.cpp's allocator trace of
    // Gemma 3, whose graph also keeps the embeddings and their scaled copy alive).
    const std::uint64_t window_inputs =
        window_kv == 0 || !full_layers
            ? 0
            : checked_add(checked_add(rows(2), o.flash_attn ? rows(2) : rows(checked_mul(2, kv_width, "c")), "c"),
                          checked_mul(checked_mul(window_kv, T, "c"), o.flash_attn ? 2 : 4, "compute buffer"), "c");
    // Qwen2-VL's and Qwen3-VL's M-RoPE take four positions a token, not one. Qwen3-VL's input
    // embeddings are (1 + deepstack_layers) x d_model wide (src/llama-graph.cpp, build_inp_embd):
    // the graph's embeddings input, held to its end, and the tokens' embeddings padded to that
    // width, which the deepstack layers read and the last of them frees (read from llama.cpp's
    // allocator trace of qwen3vl, whose graph is replayed; this is the first layer's closed form
    // for a model of another family given deepstack layers).
    // Gemma 4 E2B's and E4B's per-layer inputs, n_layers x per_layer_input wide, are computed
    // before the first layer and read by every one (src/models/gemma4.cpp).
    const std::uint64_t deepstack = checked_add(checked_mul(spec.deepstack_layers, D, "compute buffer"),
                                                rows(checked_mul(spec.per_layer_input, L, "c")), "compute buffer");
    const std::uint64_t inputs = checked_add(
        checked_add(o.flash_attn
                        ? checked_add(checked_add(rows(7), D, "c"), mask, "c")
                        : checked_add(checked_add(checked_add(rows(5), rows(checked_mul(2, kv_width, "c")), "c"), D,
                                                  "c"),
                                      mask, "c"),
                    window_inputs, "c"),
        checked_add(spec.mrope ? rows(3) : 0, deepstack, "c"), "c");
    const bool gemma = spec.family == Family::gemma || spec.family == Family::gemma2 || spec.family == Family::gemma3;
    const std::uint64_t mlp_beside = checked_mul(gemma ? 4 : 3, D, "c");  // residuals, norms, Gemma's scaled copy
    // Past the last layer's attention only the output rows remain: the norms and the logits.
    const std::uint64_t out_rows = checked_mul(outputs, kF32, "compute buffer");
    const std::uint64_t logits = checked_add(
        checked_mul(out_rows, checked_add(checked_add(1, checked_mul(2, d, "c"), "c"), V, "c"), "compute buffer"),
        deepstack, "c");
    if (spec.family == Family::qwen3_next) {
      // Qwen3.5's graph (recorded from llama.cpp's allocator trace): M-RoPE's four positions a
      // token and the state slots' ids among the inputs; the residual added in place, so the MLP,
      // or the gated attention's q projection (queries and gate), its normed queries and the
      // scores, sit above the inputs, the residual and a freed norm's hole.
      const std::uint64_t slots = checked_mul(ceil_div(checked_mul(std::max<std::uint64_t>(o.n_seq, 1), 4, "c"), 32),
                                              32, "c");
      const std::uint64_t in = checked_add(
          checked_add(checked_add(o.flash_attn ? rows(10) : checked_add(rows(8), rows(checked_mul(2, width, "c")), "c"),
                                  D, "c"),
                      mask, "c"),
          slots, "c");
      const std::uint64_t mlp = checked_add(checked_add(in, checked_mul(2, D, "c"), "c"), g, "c");
      // The logits above the tokens and embeddings, which the graph holds to its end.
      const std::uint64_t head = checked_add(
          checked_add(rows(1), D, "c"),
          checked_mul(out_rows, checked_add(checked_mul(2, d, "c"), V, "c"), "compute buffer"), "c");
      compute = std::max(mlp, head);
      // With experts the last layer's routing leaves a hole of the residual and the router's
      // sort (a row of experts a token) below the logits, which then sit above every input.
      if (spec.experts > 0) {
        const std::uint64_t moe_head = checked_add(checked_add(checked_add(in, checked_mul(3, D, "c"), "c"),
                                                               rows(spec.experts), "c"),
                                                   checked_mul(out_rows, V, "compute buffer"), "c");
        compute = std::max(compute, moe_head);
      }
      if (!o.flash_attn) {
        const std::uint64_t scores = checked_mul(rows(n_kv), spec.n_heads, "c");
        compute = std::max(compute, checked_add(checked_add(checked_add(in, checked_mul(2, D, "c"), "c"),
                                                            checked_mul(3, Q, "c"), "c"),
                                                scores, "c"));
      }
    } else if (o.flash_attn) {
      // A deepstack layer's peak sits above the padded embeddings too.
      compute = std::max(checked_add(checked_add(checked_add(inputs, deepstack, "c"), mlp_beside, "c"), g, "c"),
                         logits);
    } else {
      const std::uint64_t scores = checked_mul(rows(n_kv), spec.n_heads, "c");
      const std::uint64_t under = checked_add(inputs, deepstack, "c");  // and the padded embeddings
      compute = std::max(
          {checked_add(checked_add(checked_add(under, checked_mul(2, D, "c"), "c"), checked_mul(2, Q, "c"), "c"),
                       scores, "c"),
           checked_add(checked_add(under, checked_mul(2, D, "c"), "c"), g, "c"),
           checked_add(checked_add(checked_add(rows(1), checked_mul(3, D, "c"), "c"), g, "c"), deepstack, "c"),
           logits});
    }
    // A hybrid's attention inputs (the cache's row indices and the mask) are allocated first
    // and freed in its last attention layer: a Mamba layer's peak sits above them.
    if (recurrent) {
      const std::uint64_t held = checked_add(
          checked_add(rows(2), o.flash_attn ? rows(2) : rows(checked_mul(2, width, "c")), "c"), mask, "c");
      // Where an MLP follows each mixer (Bamba, Granite 4.0-H, Jamba, Falcon-H1) the residual
      // stream and the positions are live beside it too; beside Falcon-H1's mixer also the
      // attention's output, which the two branches' sum waits for.
      const std::uint64_t beside = spec.family == Family::nemotron_h ? 0
                                   : spec.parallel_ssm               ? checked_add(checked_mul(2, D, "c"), rows(1), "c")
                                                                     : checked_add(D, rows(1), "c");
      compute = std::max(compute, spec.ssm.version == 3
                                      ? gated_delta_peak(rows, D, mask)
                                      : checked_add(checked_add(ssm_graph(), held, "c"), beside, "c"));
      // Granite 4.0-H's experts (granite-hybrid.cpp: build_moe_ffn, then the shared expert), read
      // from llama.cpp's allocator trace: above the graph's inputs (tokens, embeddings, the state
      // slots' ids, positions, the cache's row indices, the mask, output ids) and the residual, the
      // norm and the router's logits and sort, then either the experts' gate, up and SwiGLU, k rows
      // a token, or, once their weighted outputs are summed, the down projection's hole, the sum and
      // the shared expert's gate, up and SwiGLU.
      if (spec.experts > 0 && spec.family == Family::bamba) {
        const std::uint64_t k = spec.experts_per_token;
        const std::uint64_t slot_ids = aligned(checked_mul(std::max<std::uint64_t>(o.n_seq, 1), 4, "c"), alignment);
        const std::uint64_t inputs_moe = checked_add(
            checked_add(checked_add(rows(4), D, "c"), slot_ids, "c"),
            checked_add(checked_add(o.flash_attn ? rows(2) : rows(checked_mul(2, width, "c")), mask, "c"),
                        aligned(checked_mul(outputs, 4, "c"), alignment), "c"),
            "c");
        const std::uint64_t routed = checked_add(inputs_moe, rows(checked_mul(2, spec.experts, "c")), "c");
        const std::uint64_t experts_peak = checked_add(
            checked_add(routed, checked_mul(2, D, "c"), "c"),
            rows(checked_mul(checked_mul(3, k, "c"), expert_width(spec), "c")), "c");
        const std::uint64_t shared_peak =
            spec.d_shared_expert == 0 ? 0
                                      : checked_add(checked_add(checked_add(routed, checked_mul(3, D, "c"), "c"),
                                                                rows(checked_mul(k, d, "c")), "c"),
                                                    rows(checked_mul(3, spec.d_shared_expert, "c")), "c");
        // Without flash attention an attention layer's scores sit above the previous layer's
        // routing hole (its norm and the router's logits and sort) and its summed experts.
        const std::uint64_t attention_peak =
            o.flash_attn
                ? 0
                : checked_add(checked_add(checked_add(inputs, slot_ids, "c"),
                                          checked_add(checked_mul(3, D, "c"), checked_mul(2, Q, "c"), "c"), "c"),
                              checked_add(rows(checked_mul(2, spec.experts, "c")),
                                          checked_mul(rows(n_kv), spec.n_heads, "c"), "c"),
                              "c");
        compute = std::max({compute, experts_peak, shared_peak, attention_peak});
      }
    }
  }
  // Tokens, positions (M-RoPE's four) and the cache's i64 row indices per token, i32 ids per output,
  // the embeddings (Qwen3-VL's (1 + deepstack_layers) x d_model wide).
  // A Mamba's: tokens, i32 ids per output and per state slot, the embeddings.
  const std::uint64_t host_inputs =
      state_only
          ? checked_add(checked_mul(checked_add(checked_add(T, outputs, "c"), out.state_cells, "c"), 4, "c"),
                        checked_mul(per_token, d, "c"), "c")
          : checked_add(checked_add(checked_mul(T, spec.mrope ? 36 : 24, "c"), checked_mul(outputs, 4, "c"), "c"),
                        checked_mul(per_token, checked_mul(d, 1 + spec.deepstack_layers, "c"), "c"), "c");
  const std::string batch_text = "one micro-batch of " + digits(T) + " tokens (-ub)" +
                                 (outputs < tokens ? ", " + digits(outputs) + " of them outputs," : std::string());
  const std::string compute_formula =
      state_only
          ? batch_text + " over " + digits(o.n_seq) + (o.n_seq == 1 ? " sequence" : " sequences") +
                "; ggml's allocator replayed over llama.cpp's Mamba" + (spec.ssm.version == 2 ? "-2" : "") + " graph"
          : batch_text + " against " + digits(n_kv) + " cells" +
                (o.flash_attn ? ", flash attention" : ", without flash attention: every head's scores") +
                ((recorded && !recurrent) || gemma3_recorded || qwen3_recorded
                     ? "; ggml's allocator replayed over llama.cpp's graph"
                 : spec.ssm.version == 3 ? "; closed form read from llama.cpp's allocator trace of its qwen35 graph"
                 : recurrent             ? "; closed form, at least a Mamba graph's (hybrid graph not recorded)"
                                         : "; closed form (graph not recorded)");

  const auto add = [](Breakdown& b, Item item) {
    if (item.bytes.count() > 0) b.components.push_back(std::move(item));
  };
  const std::string weights_note = "from " + source;
  if (o.gpu) {
    add(out.gpu,
        buffer_row("weights", w_gpu,
                   digits(on_gpu) + " of " + digits(L) + " layers" + (out.output_on_gpu ? " and the output layer" : ""),
                   weights_note));
    add(out.gpu, buffer_row("kv_cache", kv_gpu, kv_formula, digits(on_gpu) + " layers' cache"));
    add(out.gpu, buffer_row("recurrent_state", state_gpu, state_formula, digits(on_gpu) + " layers' state"));
    if (on_gpu > 0 || out.output_on_gpu) add(out.gpu, buffer_row("compute_buffer", compute, compute_formula));
  }
  add(out.host, buffer_row("weights", w_host,
                           "the input layer" + (on_gpu < L ? ", " + digits(L - on_gpu) + " layers" : std::string()) +
                               (experts_kept > 0 ? ", the routed experts of " + layer_range(std::min(o.n_cpu_moe, L)) +
                                                       " (--n-cpu-moe)"
                                                 : std::string()) +
                               (out.output_on_gpu ? std::string() : " and the output layer"),
                           weights_note));
  add(out.host, buffer_row("kv_cache", kv_host, kv_formula, digits(L - on_gpu) + " layers' cache"));
  add(out.host, buffer_row("recurrent_state", state_host, state_formula, digits(L - on_gpu) + " layers' state"));
  add(out.host, buffer_row("output_buffer", output_buffer,
                           "V=" + digits(V) + " f32 logits for " +
                               (o.n_seq == 1 ? "one sequence" : "each of " + digits(o.n_seq) + " sequences")));
  const bool offloaded = on_gpu > 0 || out.output_on_gpu;
  add(out.host, offloaded ? buffer_row("compute_buffer", host_inputs,
                                       "the host's part of the graph: its inputs and the embedded micro-batch (" +
                                           digits(T) + " x d_model " + digits(d) + " f32)")
                          : buffer_row("compute_buffer", compute, compute_formula));
  return out;
}

LlamaCppProjectorEstimate estimate_llama_cpp_projector(const LlamaCppProjector& p, const ModelSpec& text,
                                                       bool flash_attn, bool on_gpu) {
  // tools/mtmd/mtmd.cpp refuses a tower whose output (clip_n_mmproj_embd: the projection and
  // each deepstack merger's features beside it) is not the text model's input width
  // (llama_model_n_embd_inp: d_model and a d_model for each deepstack layer).
  const std::uint64_t mergers = static_cast<std::uint64_t>(std::count(p.deepstack.begin(), p.deepstack.end(), true));
  const std::uint64_t given = checked_mul(p.text_width, 1 + mergers, "mmproj");
  const std::uint64_t taken = checked_mul(text.d_model, 1 + text.deepstack_layers, "mmproj");
  if (given != taken) {
    const std::string from = mergers == 0 ? " (its projection's)"
                                          : " (" + group_digits(p.text_width) + " from its projection and " +
                                                group_digits(p.text_width) + " from each of its " +
                                                group_digits(mergers) + " deepstack mergers)";
    const std::string into = text.deepstack_layers == 0
                                 ? " (its d_model; no deepstack layers)"
                                 : " (its d_model " + group_digits(text.d_model) +
                                       " and as many again for each of its " + group_digits(text.deepstack_layers) +
                                       " deepstack layers)";
    throw Error(ErrorKind::invalid_input,
                "`mmproj` " + p.name + " gives the text model embeddings " + group_digits(given) + " wide" + from +
                    "; " + text.name + " takes " + group_digits(taken) + into +
                    ": llama.cpp refuses the pair (the file belongs to another model)",
                "mmproj");
  }
  const std::uint64_t alignment = on_gpu ? 128 : 32;  // CUDA's buffers, the CPU's (TENSOR_ALIGNMENT)
  LlamaCppProjectorEstimate out;
  for (const std::uint64_t t : p.tensors) {
    out.weights = checked_add(out.weights, checked_mul(ceil_div(t, alignment), alignment, "mmproj"), "mmproj");
    out.fit_bytes = checked_add(out.fit_bytes, t, "mmproj");
  }
  // One image's graph: Gemma 3's fixed image, or a Qwen image of `tokens` merged tokens (the
  // graph depends on its patches alone, so a strip of them stands for every shape).
  detail::LlamaCppVisionGraphShape g;
  g.flash_attn = flash_attn;
  g.patch_size = p.patch_size;
  g.n_layers = p.n_layers;
  g.d_model = p.d_model;
  g.n_heads = p.n_heads;
  g.d_ff = p.d_ff;
  g.n_merge = p.n_merge;
  g.text_width = p.text_width;
  g.patch_element_bytes = p.patch_element_bytes;
  g.projection_bytes = p.projection_bytes;
  g.deepstack = p.deepstack;
  g.qwen2_5 = p.type == "qwen2.5vl_merger";
  g.window_pattern = p.window_pattern;
  g.alignment = alignment;
  const auto padded = [](std::uint64_t bytes) { return checked_mul(ceil_div(bytes, 32), 32, "mmproj"); };
  const auto inputs = [&](const detail::LlamaCppVisionGraphShape& shape) {
    const std::uint64_t pixels = checked_mul(3, checked_mul(shape.width, shape.height, "mmproj"), "mmproj");
    std::uint64_t bytes = padded(checked_mul(pixels, kF32, "mmproj"));
    if (shape.graph == detail::VisionGraph::gemma3) return bytes;
    // M-RoPE's four i32 a patch; Qwen2.5-VL's windows: an i32 a token each way and the f32 mask
    // of every patch pair.
    const std::uint64_t patches = (shape.width / p.patch_size) * (shape.height / p.patch_size);
    bytes = checked_add(bytes, padded(checked_mul(patches, 16, "mmproj")), "mmproj");
    if (shape.window_pattern > 0) bytes = checked_add(bytes, checked_mul(2, padded(patches), "mmproj"), "mmproj");
    if (shape.window_pattern > 1)  // a windowed layer: (pattern - 1) of every pattern
      bytes = checked_add(bytes, checked_mul(checked_mul(patches, patches, "mmproj"), kF32, "mmproj"), "mmproj");
    return bytes;
  };
  if (p.type == "gemma3") {
    g.width = g.height = p.image_size;
    out.compute = out.warmup = detail::llama_cpp_vision_graph_bytes(g);
    out.image = inputs(g);
  } else {
    g.graph = p.type == "qwen3vl_merger" ? detail::VisionGraph::qwen3vl : detail::VisionGraph::qwen2vl;
    const auto strip = [&](std::uint64_t tokens) {
      g.width = checked_mul(checked_mul(tokens, p.n_merge, "mmproj"), p.patch_size, "mmproj");
      g.height = checked_mul(p.n_merge, p.patch_size, "mmproj");
      return detail::llama_cpp_vision_graph_bytes(g);
    };
    out.warmup = strip(p.warmup_tokens);
    const std::uint64_t warm_inputs = inputs(g);
    out.compute = std::max(out.warmup, strip(std::max(p.max_tokens, p.warmup_tokens)));
    out.image = std::max(warm_inputs, inputs(g));
  }
  if (!on_gpu) out.image = 0;
  out.fit_bytes = checked_add(out.fit_bytes, out.warmup, "mmproj");
  return out;
}

}  // namespace memplan
