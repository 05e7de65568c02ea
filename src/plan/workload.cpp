#include "memplan/plan/workload.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <utility>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "memplan/estimators/kv_cache.hpp"

#include "analysis_workloads.hpp"

namespace memplan {

namespace {

constexpr std::array<std::pair<WorkloadKind, std::string_view>, 20> kKinds{{
    {WorkloadKind::weights, "weights"},
    {WorkloadKind::inference, "inference"},
    {WorkloadKind::generation, "generation"},
    {WorkloadKind::extraction, "extraction"},
    {WorkloadKind::streaming_extraction, "streaming_extraction"},
    {WorkloadKind::training, "training"},
    {WorkloadKind::sae, "sae"},
    {WorkloadKind::fisher_spectrum, "fisher_spectrum"},
    {WorkloadKind::grouped_fisher, "grouped_fisher"},
    {WorkloadKind::hessian, "hessian"},
    {WorkloadKind::full_fisher, "full_fisher"},
    {WorkloadKind::lanczos, "lanczos"},
    {WorkloadKind::sample_gradients, "sample_gradients"},
    {WorkloadKind::tracin, "tracin"},
    {WorkloadKind::attention_patterns, "attention_patterns"},
    {WorkloadKind::qkov, "qkov"},
    {WorkloadKind::embedding_singularities, "embedding_singularities"},
    {WorkloadKind::fiber_bundle, "fiber_bundle"},
    {WorkloadKind::superposition, "superposition"},
    {WorkloadKind::cka, "cka"},
}};

using Dims = std::initializer_list<std::pair<const char*, std::uint64_t>>;

Bytes tensor_bytes(const char* name, Dims dims, const Precision& dtype) {
  std::uint64_t elements = 1;
  for (const auto& dim : dims) elements = checked_mul(elements, dim.second, "elements of", name);
  return Bytes(ceil_div(checked_mul(elements, element_bits(dtype.format), "bits of", name), 8));
}

// The forward pass's tensors come in four groups: the block input (alive throughout a
// block), the attention phase, the MLP phase, and the logits at the end.
enum Group : std::size_t { kInput, kAttention, kMlp, kLogits, kGroups };

// Receive forward_tensors' tensors: WorkspaceItems keeps each as a row with its shape
// (estimate_workload), WorkspaceBytes only sums each group (estimate_workload_bytes).
class WorkspaceItems {
 public:
  void add(Group g, const char* name, Dims dims, const Precision& dtype) {
    std::string shape;
    for (const auto& [label, size] : dims) shape += (shape.empty() ? "" : " x ") + std::string(label) + "=" + std::to_string(size);
    rows_[g].push_back({name, tensor_bytes(name, dims, dtype), shape + " at " + to_string(dtype), std::nullopt, "", {}});
  }
  void add_attention(AttentionVariant variant, const AttentionShape& shape) {
    Breakdown tensors = estimate_attention(variant, shape);
    for (Item& r : tensors.components.front().detail) {
      r.name = "attn_" + r.name;
      rows_[kAttention].push_back(std::move(r));
    }
  }
  std::vector<Item>& rows(Group g) { return rows_[g]; }
  Bytes sum(Group g) const {
    Bytes sum;
    for (const Item& r : rows_[g]) sum = sum.plus(r.bytes, "forward workspace");
    return sum;
  }

 private:
  std::array<std::vector<Item>, kGroups> rows_;
};

class WorkspaceBytes {
 public:
  void add(Group g, const char* name, Dims dims, const Precision& dtype) {
    sums_[g] = sums_[g].plus(tensor_bytes(name, dims, dtype), "forward workspace");
  }
  void add_attention(AttentionVariant variant, const AttentionShape& shape) {
    sums_[kAttention] = sums_[kAttention].plus(attention_bytes(variant, shape), "forward workspace");
  }
  Bytes sum(Group g) const { return sums_[g]; }

 private:
  std::array<Bytes, kGroups> sums_{};
};

// Feeds `t` the transient tensors of a forward pass over `queries` new tokens per sequence
// attending to `keys` positions, with logits for `logit_positions`. Returns whether the
// logits were upcast to fp32.
template <typename Sink>
bool forward_tensors(const ModelSpec& s, const Workload& w, std::uint64_t queries, std::uint64_t keys,
                     std::uint64_t logit_positions, Sink& t) {
  const Precision c = compute_precision(w);
  const std::uint64_t B = w.batch, S = queries, d = s.d_model, H = s.n_heads, Hkv = s.n_kv_heads, dh = s.d_head;

  t.add(kInput, "block_input", {{"B", B}, {"S", S}, {"d", d}}, c);
  t.add(kInput, "normed_input", {{"B", B}, {"S", S}, {"d", d}}, c);

  t.add(kAttention, "q", {{"B", B}, {"S", S}, {"H", H}, {"d_head", dh}}, c);
  t.add(kAttention, "k_new", {{"B", B}, {"S", S}, {"H_kv", Hkv}, {"d_head", dh}}, c);
  t.add(kAttention, "v_new", {{"B", B}, {"S", S}, {"H_kv", Hkv}, {"d_head", dh}}, c);
  if (Hkv < H) {  // Hugging Face's repeat_kv expands keys and values to every query head
    t.add(kAttention, "kv_repeated", {{"2", 2}, {"B", B}, {"H", H}, {"M", keys}, {"d_head", dh}}, c);
  }
  AttentionShape shape;
  shape.batch = B;
  shape.heads = H;
  shape.seq = S;
  shape.kv_seq = keys;
  shape.head_dim = dh;
  shape.dtype = c;
  shape.chunk = w.attention_chunk;
  shape.include_inputs = false;
  shape.softmax_fp32 = w.attention == AttentionVariant::eager;  // HF eager: softmax(dtype=float32)
  t.add_attention(w.attention, shape);
  t.add(kAttention, "o_proj_out", {{"B", B}, {"S", S}, {"d", d}}, c);

  if (s.experts > 0) {
    const std::uint64_t routed = ceil_div(checked_mul(checked_mul(B, S, "tokens"), s.experts_per_token, "routed"), s.experts);
    t.add(kMlp, "router_probs", {{"B", B}, {"S", S}, {"E", s.experts}}, precisions::fp32);
    t.add(kMlp, "moe_output", {{"B", B}, {"S", S}, {"d", d}}, c);
    const std::uint64_t n = s.mlp == MlpKind::gated ? 3 : 2;
    t.add(kMlp, "expert_intermediate", {{"tensors", n}, {"routed_tokens", routed}, {"d_mlp", s.d_mlp}}, c);
  } else if (s.mlp == MlpKind::gated) {
    // act(gate(x)), up(x) and their product are alive together: 3 x B x S x d_mlp.
    t.add(kMlp, "mlp_intermediate", {{"3", 3}, {"B", B}, {"S", S}, {"d_mlp", s.d_mlp}}, c);
  } else {
    t.add(kMlp, "mlp_intermediate", {{"2", 2}, {"B", B}, {"S", S}, {"d_mlp", s.d_mlp}}, c);
  }

  const bool upcast = w.logits_fp32 && element_bits(c.format) != 32;  // .float() on fp32 logits is the same tensor
  if (s.lm_head != LmHead::none) {
    t.add(kLogits, "final_hidden", {{"B", B}, {"S", logit_positions}, {"d", d}}, c);
    t.add(kLogits, "logits", {{"B", B}, {"S", logit_positions}, {"V", s.vocab_size}}, c);
    if (upcast) t.add(kLogits, "logits_fp32", {{"B", B}, {"S", logit_positions}, {"V", s.vocab_size}}, precisions::fp32);
  }
  return upcast;
}

// The largest transient working set of a forward pass: one block's attention or MLP phase
// on top of the block input, or the logits at the end.
Item forward_workspace(const ModelSpec& s, const Workload& w, std::uint64_t queries, std::uint64_t keys,
                       std::uint64_t logit_positions) {
  WorkspaceItems t;
  const bool upcast = forward_tensors(s, w, queries, keys, logit_positions, t);
  const Bytes input = t.sum(kInput), head = t.sum(kLogits);
  const Bytes attention_phase = input.plus(t.sum(kAttention), "attention phase");
  const Bytes mlp_phase = input.plus(t.sum(kMlp), "mlp phase");
  Item out{"forward_workspace", Bytes(0), "", std::nullopt, "", {}};
  out.formula = "max(attention phase " + std::to_string(attention_phase.count()) + " B, mlp phase " +
                std::to_string(mlp_phase.count()) + " B, logits " + std::to_string(head.count()) +
                " B); one block at a time, its input kept";
  if (head >= attention_phase && head >= mlp_phase) {
    out.detail = std::move(t.rows(kLogits));
    out.bytes = head;
    out.note = "peak at the logits (" + std::string(upcast ? "upcast to fp32, " : "") + "vocabulary " +
               std::to_string(s.vocab_size) + ")";
  } else {
    const bool attention_binds = attention_phase >= mlp_phase;
    out.detail = std::move(t.rows(kInput));
    for (Item& r : t.rows(attention_binds ? kAttention : kMlp)) out.detail.push_back(std::move(r));
    out.bytes = attention_binds ? attention_phase : mlp_phase;
    out.note = std::string("peak inside a block, during ") + (attention_binds ? "attention (" + to_string(w.attention) + ")" : "the MLP");
  }
  return out;
}

// forward_workspace(...).bytes without its rows.
Bytes forward_workspace_bytes(const ModelSpec& s, const Workload& w, std::uint64_t queries, std::uint64_t keys,
                              std::uint64_t logit_positions) {
  WorkspaceBytes t;
  forward_tensors(s, w, queries, keys, logit_positions, t);
  const Bytes input = t.sum(kInput);
  return std::max({input.plus(t.sum(kAttention), "attention phase"), input.plus(t.sum(kMlp), "mlp phase"), t.sum(kLogits)});
}

KvCacheOptions kv_options(const Workload& w, std::uint64_t tokens) {
  KvCacheOptions o;
  o.batch = w.batch;
  o.tokens = tokens;
  o.precision = w.kv_precision.value_or(compute_precision(w));
  o.page_tokens = w.kv_page_tokens;
  return o;
}

void check(const ModelSpec& s, const Workload& w) {
  if (w.batch == 0) throw Error(ErrorKind::invalid_input, "batch must be at least 1", "batch");
  if (w.seq_len == 0) throw Error(ErrorKind::invalid_input, "seq_len must be at least 1", "seq_len");
  if (is_quantized(compute_precision(w))) {
    throw Error(ErrorKind::invalid_input, "the compute dtype must be fp32, tf32, bf16 or fp16", "compute");
  }
  const std::uint64_t total = checked_add(w.seq_len, w.new_tokens, "seq_len + new_tokens");
  if (s.positional == Positional::learned) {
    const std::uint64_t table = s.n_positions ? s.n_positions : s.max_seq_len;
    if (total > table) {
      throw Error(ErrorKind::invalid_input,
                  s.name + " has learned positions for " + std::to_string(table) + " tokens; " + std::to_string(total) +
                      " cannot be run",
                  "seq_len");
    }
  }
  if (w.kind == WorkloadKind::generation && w.new_tokens == 0) {
    throw Error(ErrorKind::invalid_input, "generation needs new_tokens of at least 1", "new_tokens");
  }
  if (w.kind != WorkloadKind::generation && w.new_tokens != 0) {
    throw Error(ErrorKind::invalid_input, "new_tokens applies to the generation workload only", "new_tokens");
  }
  if (w.kind == WorkloadKind::streaming_extraction && w.streaming_chunk == 0) {
    throw Error(ErrorKind::invalid_input, "streaming_chunk_size must be at least 1", "streaming_chunk_size");
  }
}

}  // namespace

std::string to_string(WorkloadKind kind) {
  for (const auto& [k, name] : kKinds) {
    if (k == kind) return std::string(name);
  }
  return "inference";
}

std::vector<std::string> workload_names() {
  std::vector<std::string> out;
  for (const auto& entry : kKinds) out.emplace_back(entry.second);
  return out;
}

WorkloadKind parse_workload_kind(std::string_view text) {
  for (const auto& [k, name] : kKinds) {
    if (name == text) return k;
  }
  throw Error(ErrorKind::invalid_input,
              "unknown workload '" + printable(text) + "'" + did_you_mean(text, workload_names()) + "; accepted: " +
                  quoted_list(workload_names()),
              "workload");
}

Precision compute_precision(const Workload& w) {
  if (w.compute) return *w.compute;
  if (is_quantized(w.weights.precision)) return w.weights.unquantized;
  if (w.weights.precision.format == Format::tf32) return precisions::fp32;
  return w.weights.precision;
}

Breakdown estimate_workload(const ModelSpec& s, const Workload& w) {
  check(s, w);
  Breakdown out = estimate_weights(s, w.weights);
  if (w.kind == WorkloadKind::weights) return out;

  std::vector<TensorRun> persistent = weight_allocations(s, w.weights);
  Bytes transient;
  const auto add = [&](Item item, bool is_transient) {
    if (is_transient) transient = transient.plus(item.bytes, "transient bytes");
    out.components.push_back(std::move(item));
  };
  const auto add_kv = [&](std::uint64_t tokens, const std::string& note) {
    const KvCacheOptions o = kv_options(w, tokens);
    Item kv = std::move(estimate_kv_cache(s, o).components.front());
    if (!note.empty()) kv.note = kv.note.empty() ? note : note + "; " + kv.note;
    persistent.push_back(kv_cache_allocations(s, o));
    add(std::move(kv), false);
  };
  const bool causal = s.lm_head != LmHead::none;  // encoders keep no cache

  switch (w.kind) {
    case WorkloadKind::weights: break;
    case WorkloadKind::inference: {
      if (w.kv_cache && causal) add_kv(w.seq_len, "");
      add(forward_workspace(s, w, w.seq_len, w.seq_len, w.seq_len), true);
      break;
    }
    case WorkloadKind::generation: {
      // Two candidate peaks: right after prefill (the prompt's cache, the prompt's
      // activations, last-position logits) and at the last decode step (the full cache,
      // one token's activations). The larger is the job's peak.
      const std::uint64_t total = checked_add(w.seq_len, w.new_tokens, "prompt + generated tokens");
      const Item prefill_ws = forward_workspace(s, w, w.seq_len, w.seq_len, 1);
      const Item decode_ws = forward_workspace(s, w, 1, total, 1);
      const Bytes prefill = estimate_kv_cache(s, kv_options(w, w.seq_len)).total().plus(prefill_ws.bytes, "prefill peak");
      const Bytes decode = estimate_kv_cache(s, kv_options(w, total)).total().plus(decode_ws.bytes, "decode peak");
      if (prefill > decode) {
        add_kv(w.seq_len, "peak after prefill: the prompt's " + std::to_string(w.seq_len) + " tokens");
        add(prefill_ws, true);
      } else {
        add_kv(total, "peak at the last decode step: " + std::to_string(w.seq_len) + " prompt + " +
                          std::to_string(w.new_tokens) + " new tokens");
        add(decode_ws, true);
      }
      break;
    }
    case WorkloadKind::extraction:
    case WorkloadKind::streaming_extraction: {
      const bool streaming = w.kind == WorkloadKind::streaming_extraction;
      const std::uint64_t chunk = streaming ? std::min(w.streaming_chunk, w.seq_len) : w.seq_len;
      if (causal && (w.kv_cache || streaming)) {
        add_kv(w.seq_len, streaming ? "later chunks attend to earlier ones, so the cache holds the whole sequence" : "");
      }
      ActivationCacheOptions cache = w.cache;
      cache.batch = w.batch;
      cache.seq = chunk;
      cache.key_positions = w.seq_len;
      cache.precision = compute_precision(w);
      Breakdown hooks = estimate_activation_cache(s, cache);
      Item activations = std::move(hooks.components.front());
      if (streaming) {
        activations.note = "one chunk of " + std::to_string(chunk) + " tokens; each chunk's cache leaves the GPU before the next";
        ActivationCacheOptions whole = cache;
        whole.seq = w.seq_len;
        whole.on_cpu = true;
        Breakdown collected = estimate_activation_cache(s, whole);
        for (Item& h : collected.host) {
          h.note = "all chunks, if collected on the host (collect_streaming_results)";
          out.host.push_back(std::move(h));
        }
      } else {
        for (Item& h : hooks.host) out.host.push_back(std::move(h));
      }
      for (Alternative& a : hooks.alternatives) out.alternatives.push_back(std::move(a));
      if (cache.filter.empty() && cache.layers.empty() && !cache.stop_at_layer) {
        ActivationCacheOptions selective = cache;
        selective.filter = {"blocks.*.hook_resid_post"};
        selective.on_cpu = false;
        Item residual = std::move(estimate_activation_cache(s, selective).components.front());
        out.alternatives.push_back({"activations",
                                    {"activations_resid_post_only", residual.bytes, residual.formula, std::nullopt,
                                     "a selective cache of the residual stream after each block", {}}});
      }
      // Each hook's tensor is allocated once and kept: allocator rounding, not fragmentation.
      for (const TensorRun& run : activation_cache_allocations(s, cache)) persistent.push_back(run);
      add(std::move(activations), false);
      add(forward_workspace(s, w, chunk, w.seq_len, chunk), true);
      break;
    }
    case WorkloadKind::training:
    case WorkloadKind::sae:
    case WorkloadKind::fisher_spectrum:
    case WorkloadKind::grouped_fisher:
    case WorkloadKind::hessian:
    case WorkloadKind::full_fisher:
    case WorkloadKind::lanczos:
    case WorkloadKind::sample_gradients:
    case WorkloadKind::tracin:
    case WorkloadKind::attention_patterns:
    case WorkloadKind::qkov:
    case WorkloadKind::embedding_singularities:
    case WorkloadKind::fiber_bundle:
    case WorkloadKind::superposition:
    case WorkloadKind::cka:
      // Training and analyses: src/plan/analysis_workloads.cpp. false: the result is complete (no overhead).
      if (!detail::compose_analysis(s, w, out, persistent, transient)) return out;
      break;
  }
  if (w.include_overhead) {
    OverheadOptions o = w.overhead;
    add(std::move(estimate_overhead(o, persistent, transient).components.front()), false);
  }
  return out;
}

WorkloadBytes estimate_workload_bytes(const ModelSpec& s, const Workload& w) {
  if (w.kind != WorkloadKind::weights && w.kind != WorkloadKind::inference && w.kind != WorkloadKind::generation) {
    const Breakdown b = estimate_workload(s, w);
    return {b.total(), b.allocated(), b.reserved()};
  }
  // The same terms as estimate_workload, in the same order, without their rows.
  check(s, w);
  std::vector<TensorRun> persistent = weight_allocations(s, w.weights);
  Bytes allocated;
  for (const TensorRun& run : persistent) allocated = allocated.plus(Bytes(run.bytes).times(run.count, "weights bytes"), "weights bytes");
  if (w.kind == WorkloadKind::weights) return {allocated, allocated, allocated};

  const auto kv_run = [&](std::uint64_t tokens) { return kv_cache_allocations(s, kv_options(w, tokens)); };
  const auto run_bytes = [](const TensorRun& run) { return Bytes(run.bytes).times(run.count, "KV cache bytes"); };
  const auto keep = [&](const TensorRun& kv) {
    persistent.push_back(kv);
    allocated = allocated.plus(run_bytes(kv), "allocated bytes");
  };
  Bytes transient;
  if (w.kind == WorkloadKind::inference) {
    if (w.kv_cache && s.lm_head != LmHead::none) keep(kv_run(w.seq_len));
    transient = forward_workspace_bytes(s, w, w.seq_len, w.seq_len, w.seq_len);
  } else {  // generation: the larger of the peak after prefill and the peak at the last decode step
    const std::uint64_t total = checked_add(w.seq_len, w.new_tokens, "prompt + generated tokens");
    const TensorRun prefill_kv = kv_run(w.seq_len), decode_kv = kv_run(total);
    const Bytes prefill_ws = forward_workspace_bytes(s, w, w.seq_len, w.seq_len, 1);
    const Bytes decode_ws = forward_workspace_bytes(s, w, 1, total, 1);
    const bool prefill_binds =
        run_bytes(prefill_kv).plus(prefill_ws, "prefill peak") > run_bytes(decode_kv).plus(decode_ws, "decode peak");
    keep(prefill_binds ? prefill_kv : decode_kv);
    transient = prefill_binds ? prefill_ws : decode_ws;
  }
  allocated = allocated.plus(transient, "allocated bytes");
  if (!w.include_overhead) return {allocated, allocated, allocated};
  const OverheadBytes overhead = overhead_bytes(w.overhead, persistent, transient);
  return {allocated.plus(overhead.total(), "the breakdown total"), allocated,
          allocated.plus(overhead.allocator_rounding, "reserved bytes").plus(overhead.fragmentation, "reserved bytes")};
}

}  // namespace memplan
