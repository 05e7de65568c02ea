#include "memplan/estimators/parallelism.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/text.hpp"

namespace memplan {

namespace {

[[noreturn]] void invalid(const char* key, const std::string& message) {
  throw Error(ErrorKind::invalid_input, message, key);
}

std::string n(std::uint64_t v) { return group_digits(v); }
std::string s(std::uint64_t v) { return std::to_string(v); }

Item row(std::string name, Bytes bytes, std::string formula, std::string note = {}) {
  return {std::move(name), bytes, std::move(formula), std::nullopt, std::move(note), {}};
}

Bytes sum_of(const std::vector<Item>& items, std::string_view what) {
  Bytes total;
  for (const Item& i : items) total = total.plus(i.bytes, what);
  return total;
}

Item group(std::string name, std::vector<Item> detail, std::string formula, std::string note = {}) {
  Item out = row(std::move(name), sum_of(detail, "a layout component"), std::move(formula), std::move(note));
  out.detail = std::move(detail);
  return out;
}

// `elements` at `bits` per element, rounded up to whole bytes once.
Bytes bytes_at(std::uint64_t elements, std::uint64_t bits, std::string_view what) {
  return Bytes(ceil_div(checked_mul(elements, bits, what), 8));
}

using Dims = std::vector<std::pair<std::string, std::uint64_t>>;

Item tensor(const std::string& name, const Dims& dims, std::uint32_t bits, const std::string& dtype) {
  std::uint64_t elements = 1;
  std::string text;
  for (const auto& [label, size] : dims) {
    elements = checked_mul(elements, size, "elements of", name);
    text += (text.empty() ? "" : " x ") + label + "=" + s(size);
  }
  return row(name, bytes_at(elements, bits, "bits of " + name), text + " at " + dtype);
}

Item at(const std::string& name, const Dims& dims, const Precision& p) {
  return tensor(name, dims, element_bits(p.format), to_string(p));
}

// Terms of layer_activations that every tensor-parallel rank holds whole (Korthikanti et
// al. 2022, §4.2.2: the 10sbh of LayerNorm inputs, dropout masks and the inputs of the
// column-parallel linears); sequence parallelism splits them along the sequence.
bool replicated_across_tensor_ranks(const std::string& name) {
  static constexpr std::array<std::string_view, 8> kNames{"norm_inputs",     "qkv_input",     "mlp_input",
                                                          "attention_residual_dropout_mask",
                                                          "mlp_dropout_mask", "router_probs", "expert_inputs",
                                                          "expert_outputs"};
  return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

// The a*s^2 terms selective recomputation drops (as estimate_training does).
bool is_attention_core(const std::string& name) {
  return name == "softmax_output" || name == "attention_dropout_mask" || name == "attention_dropout_output" ||
         name == "probabilities_16bit";
}

bool is_head_group(const TensorGroup& g) {
  return g.component == "lm_head" || g.component == "pooler" || g.name.starts_with("final_norm");
}

bool is_bias(const TensorGroup& g) {
  return g.name.ends_with(".bias");
}

std::string shape_text(const TensorGroup& g, std::uint64_t copies) {
  std::string out = (copies > 1 ? s(copies) + " x " : "") + std::string(g.name) + " " + s(g.rows);
  if (g.cols > 1) out += "x" + s(g.cols);
  return out;
}

Precision storage(const TensorGroup& g, const WeightsOptions& o) {
  if (!is_quantized(o.precision) || g.role == TensorRole::linear) return o.precision;
  if (g.role == TensorRole::lm_head && o.quantize_lm_head) return o.precision;
  return o.unquantized;
}

// The tensor groups of `slice`, with their copies on the slice.
std::vector<std::pair<TensorGroup, std::uint64_t>> slice_groups(const ModelSpec& spec, const LayerSlice& slice) {
  if (checked_add(slice.first_layer, slice.layers, "layers") > spec.n_layers) {
    invalid("layers", "layers " + s(slice.first_layer) + " to " + s(slice.first_layer + slice.layers) + " are outside " +
                          spec.name + "'s " + s(spec.n_layers) + " layers");
  }
  std::vector<std::pair<TensorGroup, std::uint64_t>> out;
  for (const TensorGroup& g : model_tensors(spec)) {
    if (g.component == "embeddings") {
      if (slice.embeddings) out.emplace_back(g, g.copies);
    } else if (is_head_group(g)) {
      if (slice.head) out.emplace_back(g, g.copies);
    } else {
      const std::uint64_t copies = checked_mul(g.copies / spec.n_layers, slice.layers, "copies on a slice");
      if (copies > 0) out.emplace_back(g, copies);
    }
  }
  if (slice.head && slice.tied_head_copy && spec.lm_head == LmHead::tied) {
    out.emplace_back(TensorGroup{"lm_head", "lm_head_tied_copy", spec.vocab_size, spec.d_model, 1, TensorRole::embedding},
                     1);
  }
  return out;
}

}  // namespace

// ----------------------------------------------------------------------- tensor parallel

TensorShard tensor_parallel_shard(const ModelSpec& spec, const TensorShardOptions& o) {
  const std::uint64_t t = o.degree;
  if (t == 0) invalid("tensor_parallel", "the tensor-parallel degree (--tp) must be at least 1");
  TensorShard out{spec, t, 1, spec.vocab_size};
  const std::uint64_t multiple = std::max<std::uint64_t>(o.vocab_multiple, 1);
  out.padded_vocab = checked_mul(ceil_div(spec.vocab_size, multiple), multiple, "the padded vocabulary");
  const std::string over = "tensor parallelism over " + s(t) + " GPUs";
  if (spec.n_heads % t != 0) {
    invalid("tensor_parallel", spec.name + " has " + s(spec.n_heads) + " attention heads, which " + over +
                                   " cannot split evenly: --tp must divide n_heads");
  }
  std::uint64_t kv = spec.n_kv_heads;
  if (spec.n_kv_heads >= t) {
    if (spec.n_kv_heads % t != 0) {
      invalid("tensor_parallel", spec.name + " has " + s(spec.n_kv_heads) + " key/value heads, which " + over +
                                     " cannot split evenly: --tp must divide n_kv_heads");
    }
    kv = spec.n_kv_heads / t;
  } else if (!o.replicate_kv_heads) {
    invalid("tensor_parallel", spec.name + " has " + s(spec.n_kv_heads) + " key/value heads, fewer than --tp " + s(t) +
                                   ": Megatron-LM needs the query groups to divide evenly across tensor-parallel ranks "
                                   "(vLLM serving replicates KV heads instead)");
  } else if (t % spec.n_kv_heads != 0) {
    invalid("tensor_parallel", spec.name + " has " + s(spec.n_kv_heads) + " key/value heads and --tp " + s(t) +
                                   ": each KV head is replicated on t / n_kv_heads ranks, so --tp must be a multiple of "
                                   "n_kv_heads");
  } else {
    kv = 1;
    out.kv_replicas = t / spec.n_kv_heads;
  }
  if (spec.d_mlp % t != 0) {
    invalid("tensor_parallel", spec.name + "'s MLP intermediate size " + s(spec.d_mlp) + " does not split evenly over " +
                                   s(t) + " GPUs: --tp must divide d_mlp");
  }
  if (out.padded_vocab % t != 0) {
    invalid("tensor_parallel", "the vocabulary of " + s(out.padded_vocab) + " rows (" + s(spec.vocab_size) +
                                   " padded to a multiple of " + s(multiple) + ") does not split evenly over " + s(t) +
                                   " GPUs");
  }
  out.spec.n_heads = spec.n_heads / t;
  out.spec.n_kv_heads = kv;
  out.spec.d_mlp = spec.d_mlp / t;
  out.spec.vocab_size = out.padded_vocab / t;
  // A checkpoint's stored tensors (a .gguf) are not split per rank: a shard is priced from
  // its architecture at the requested precision, as every multi-GPU layout is.
  out.spec.stored_weights.clear();
  return out;
}

// ----------------------------------------------------------------------- pipeline

namespace {
constexpr std::array<std::pair<PipelineSchedule, std::string_view>, 2> kSchedules{{
    {PipelineSchedule::one_f_one_b, "1f1b"},
    {PipelineSchedule::gpipe, "gpipe"},
}};
constexpr std::array<std::pair<Sharding, std::string_view>, 7> kShardings{{
    {Sharding::none, "none"},
    {Sharding::zero1, "zero1"},
    {Sharding::zero2, "zero2"},
    {Sharding::zero3, "zero3"},
    {Sharding::fsdp_full, "fsdp_full"},
    {Sharding::fsdp_grad_op, "fsdp_grad_op"},
    {Sharding::fsdp_hybrid, "fsdp_hybrid"},
}};
constexpr std::array<std::pair<PlacementPolicy, std::string_view>, 3> kPolicies{{
    {PlacementPolicy::balanced, "balanced"},
    {PlacementPolicy::balanced_low_0, "balanced_low_0"},
    {PlacementPolicy::sequential, "sequential"},
}};

template <typename Enum, std::size_t N>
Enum parse_named(const std::array<std::pair<Enum, std::string_view>, N>& table, std::string_view text, const char* key,
                 const std::string& what) {
  std::vector<std::string> names;
  for (const auto& [value, name] : table) {
    if (name == text) return value;
    names.emplace_back(name);
  }
  invalid(key, "unknown " + what + " '" + printable(text) + "'" + did_you_mean(text, names) + "; accepted: " +
                   quoted_list(names));
}

template <typename Enum, std::size_t N>
std::string name_of(const std::array<std::pair<Enum, std::string_view>, N>& table, Enum value) {
  for (const auto& [v, name] : table) {
    if (v == value) return std::string(name);
  }
  return std::string(table.front().second);
}
}  // namespace

std::string to_string(PipelineSchedule schedule) { return name_of(kSchedules, schedule); }
PipelineSchedule parse_pipeline_schedule(std::string_view text) {
  return parse_named(kSchedules, text, "schedule", "pipeline schedule");
}
std::string to_string(Sharding sharding) { return name_of(kShardings, sharding); }
Sharding parse_sharding(std::string_view text) { return parse_named(kShardings, text, "sharding", "sharding"); }
std::string to_string(PlacementPolicy policy) { return name_of(kPolicies, policy); }
PlacementPolicy parse_placement_policy(std::string_view text) {
  if (text == "auto") return PlacementPolicy::balanced;  // transformers: "auto" is "balanced"
  return parse_named(kPolicies, text, "device_map", "device_map (also 'auto')");
}

std::vector<std::uint64_t> pipeline_stage_layers(std::uint64_t n_layers, std::uint64_t stages,
                                                 const std::vector<std::uint64_t>& requested) {
  if (stages == 0) invalid("pipeline_parallel", "the pipeline needs at least 1 stage (--pp 1 is no pipeline)");
  if (!requested.empty()) {
    if (requested.size() != stages) {
      invalid("stage_layers", "--stage-layers lists " + s(requested.size()) + " stages but --pp is " + s(stages));
    }
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < requested.size(); ++i) {
      if (requested[i] == 0) invalid("stage_layers", "stage " + s(i) + " has 0 layers: every stage needs at least one");
      total = checked_add(total, requested[i], "layers");
    }
    if (total != n_layers) {
      invalid("stage_layers", "--stage-layers adds up to " + s(total) + " layers; the model has " + s(n_layers));
    }
    return requested;
  }
  if (stages > n_layers) {
    invalid("pipeline_parallel", "the model's " + s(n_layers) + " layers cannot fill " + s(stages) +
                                     " pipeline stages: every stage needs at least one layer (--pp at most " +
                                     s(n_layers) + ")");
  }
  std::vector<std::uint64_t> out(stages, n_layers / stages);
  const std::uint64_t extra = n_layers % stages;
  for (std::uint64_t i = stages - extra; i < stages; ++i) ++out[i];
  return out;
}

std::uint64_t micro_batches_in_flight(PipelineSchedule schedule, std::uint64_t stages, std::uint64_t stage,
                                      std::uint64_t micro_batches) {
  if (micro_batches == 0) invalid("micro_batches", "a step needs at least 1 micro-batch");
  if (stage >= stages) invalid("pipeline_parallel", "stage " + s(stage) + " is outside a " + s(stages) + "-stage pipeline");
  if (schedule == PipelineSchedule::gpipe) return micro_batches;
  return std::min(stages - stage, micro_batches);
}

Item slice_weights(const ModelSpec& spec, const WeightsOptions& options, const LayerSlice& slice) {
  Item weights = row("weights", Bytes(0), "");
  weights.params = 0;
  std::vector<std::string> open;  // per detail row: the precision run being written
  for (const auto& [g, copies] : slice_groups(spec, slice)) {
    if (weights.detail.empty() || weights.detail.back().name != g.component) {
      weights.detail.push_back(row(std::string(g.component), Bytes(0), ""));
      weights.detail.back().params = 0;
      open.emplace_back();
    }
    Item& r = weights.detail.back();
    const Precision p = storage(g, options);
    const std::string precision = to_string(p);
    const Bytes b = Bytes(weight_tensor_bytes(g, options)).times(copies, "bytes of", g.name);
    r.bytes = r.bytes.plus(b, "bytes of", g.component);
    r.params = checked_add(*r.params, checked_mul(copies, checked_mul(g.rows, g.cols, "elements"), "parameters"),
                           "parameters of", g.component);
    if (precision != open.back()) {
      if (!open.back().empty()) r.formula += ") @" + open.back() + " + ";
      r.formula += "(";
      open.back() = precision;
    } else {
      r.formula += " + ";
    }
    r.formula += shape_text(g, copies);
  }
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < weights.detail.size(); ++i) {
    Item& r = weights.detail[i];
    r.formula += ") @" + open[i];
    if (r.name == "lm_head" && spec.lm_head == LmHead::tied) r.note = "a copy of the tied token table (Megatron keeps one on the last stage)";
    weights.bytes = weights.bytes.plus(r.bytes, "weights");
    weights.params = checked_add(*weights.params, *r.params, "parameters");
    parts.push_back(r.name);
  }
  weights.formula = n(*weights.params) + " params of " + (parts.empty() ? std::string("nothing") : quoted_list(parts, "and")) +
                    " at " + describe(options.precision);
  return weights;
}

std::vector<TensorRun> slice_weight_allocations(const ModelSpec& spec, const WeightsOptions& options,
                                                const LayerSlice& slice) {
  std::vector<TensorRun> out;
  for (const auto& [g, copies] : slice_groups(spec, slice)) out.push_back({weight_tensor_bytes(g, options), copies});
  return out;
}

// ----------------------------------------------------------------------- devices

bool DeviceMemory::fits() const { return !capacity || breakdown.total() <= *capacity; }

std::size_t LayoutEstimate::worst() const {
  std::size_t out = 0;
  bool all_capacities = !devices.empty();
  for (const DeviceMemory& d : devices) all_capacities = all_capacities && d.capacity && d.capacity->count() > 0;
  long double best = -1;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const long double total = static_cast<long double>(devices[i].breakdown.total().count());
    const long double value = all_capacities ? total / static_cast<long double>(devices[i].capacity->count()) : total;
    if (value > best) {
      best = value;
      out = i;
    }
  }
  return out;
}

std::optional<bool> LayoutEstimate::fits() const {
  bool ok = offloaded.empty() && (!serving || serving->holds_a_sequence());
  for (const DeviceMemory& d : devices) {
    if (!d.capacity) return std::nullopt;
    ok = ok && d.fits();
  }
  return ok;
}

ServingCapacity vllm_kv_capacity(Bytes capacity, double utilization, Bytes non_kv, Bytes block_bytes,
                                 std::uint64_t block_size, std::uint64_t max_model_len) {
  if (!(utilization > 0.0 && utilization <= 1.0)) {
    invalid("gpu_memory_utilization", "--gpu-memory-utilization must be above 0 and at most 1");
  }
  if (block_size == 0) invalid("block_size", "the KV cache block size must be at least 1 token");
  if (block_bytes.count() == 0) invalid("block_size", "a KV cache block of 0 bytes");
  ServingCapacity out;
  out.capacity = capacity;
  out.gpu_memory_utilization = utilization;
  // vllm/v1/worker/utils.py request_memory: math.ceil(total_gpu_memory * gpu_memory_utilization),
  // in Python's double arithmetic (capacities are below 2^53, so the conversion is exact).
  const double requested = std::ceil(static_cast<double>(capacity.count()) * utilization);
  out.requested = Bytes(std::min<std::uint64_t>(static_cast<std::uint64_t>(requested), capacity.count()));
  out.non_kv = non_kv;
  if (out.requested > non_kv) {
    out.kv_budget = Bytes(out.requested.count() - non_kv.count());
  } else {
    out.shortfall = Bytes(non_kv.count() - out.requested.count());
  }
  out.block_bytes = block_bytes;
  out.block_size = block_size;
  out.blocks = out.kv_budget.count() / block_bytes.count();
  out.tokens = checked_mul(out.blocks, block_size, "KV cache tokens");
  out.max_model_len = max_model_len;
  out.full_sequences = max_model_len > 0 ? out.tokens / max_model_len : 0;
  return out;
}

// ----------------------------------------------------------------------- training

namespace {

std::uint64_t float_bits(const Precision& p, const char* key, const std::string& what) {
  if (is_quantized(p)) {
    invalid(key, what + " must be a float precision (fp32, tf32, bf16, fp16), got " + to_string(p));
  }
  return element_bits(p.format);
}

std::string sharding_text(Sharding sh, std::uint64_t over) {
  switch (sh) {
    case Sharding::none: return "replicated (DDP)";
    case Sharding::zero1: return "ZeRO-1 over " + s(over);
    case Sharding::zero2: return "ZeRO-2 over " + s(over);
    case Sharding::zero3: return "ZeRO-3 over " + s(over);
    case Sharding::fsdp_full: return "FSDP FULL_SHARD over " + s(over);
    case Sharding::fsdp_grad_op: return "FSDP SHARD_GRAD_OP over " + s(over);
    case Sharding::fsdp_hybrid: return "FSDP HYBRID_SHARD over groups of " + s(over);
  }
  return "";
}

std::string layer_range(std::uint64_t first, std::uint64_t count) {
  if (count == 1) return "layer " + s(first);
  return "layers " + s(first) + "-" + s(first + count - 1);
}

struct StateRow {
  Item item;
  bool host = false;
  TensorRun allocation;  // as the allocator sees it (flat buffers are one allocation)
  std::vector<TensorRun> allocations;  // per-tensor allocations (unsharded weights), replacing `allocation`
};

}  // namespace

LayoutEstimate estimate_parallel_training(const ModelSpec& spec, const TrainingShape& shape_in, const TrainingOptions& tr,
                                          const ParallelTrainingOptions& par,
                                          const std::optional<OverheadOptions>& overhead) {
  const std::uint64_t t = par.tensor, p = par.pipeline, d = par.data, m = par.micro_batches;
  if (t == 0) invalid("tensor_parallel", "the tensor-parallel degree (--tp) must be at least 1");
  if (d == 0) invalid("data_parallel", "the data-parallel degree (--dp) must be at least 1");
  if (m == 0) invalid("micro_batches", "a step needs at least 1 micro-batch (--micro-batches)");
  if (shape_in.batch == 0) invalid("batch", "batch must be at least 1");
  if (shape_in.seq == 0) invalid("seq_len", "seq_len must be at least 1");
  if (tr.lora.rank > 0) {
    invalid("lora_rank", "multi-GPU layouts plan full training; LoRA with --tp/--pp/--dp/--zero/--fsdp is not modelled");
  }
  if (tr.double_backward || !tr.extra.empty()) {
    invalid("workload", "multi-GPU layouts plan the training workload, not the gradient analyses");
  }
  if (is_quantized(shape_in.weights.precision)) {
    invalid("precision", "training needs float weights (bf16, fp16, fp32), not " + to_string(shape_in.weights.precision));
  }
  std::uint64_t per_param_state_elements = 0;  // optimizer state elements per parameter
  switch (tr.optimizer) {
    case Optimizer::none:
    case Optimizer::sgd: per_param_state_elements = 0; break;
    case Optimizer::sgd_momentum: per_param_state_elements = 1; break;
    case Optimizer::adam:
    case Optimizer::adamw: per_param_state_elements = 2; break;
    case Optimizer::adam_8bit:
    case Optimizer::adafactor:
      invalid("optimizer", "layouts shard optimizer states as K bytes per parameter (ZeRO's K); " + to_string(tr.optimizer) +
                               " keeps per-tensor states and is not modelled with --zero/--fsdp/--tp/--pp/--dp");
  }

  const Sharding sh = par.sharding;
  const bool fsdp = sh == Sharding::fsdp_full || sh == Sharding::fsdp_grad_op || sh == Sharding::fsdp_hybrid;
  std::uint64_t shards = 1;  // N: ranks one state is split over
  if (sh == Sharding::fsdp_hybrid) {
    if (par.shard_group == 0) {
      invalid("shard_group", "--fsdp hybrid shards within groups of GPUs and replicates across them: give the group "
                             "size with --shard-group N (a node, e.g. 8)");
    }
    if (d % par.shard_group != 0) {
      invalid("shard_group", "--shard-group " + s(par.shard_group) + " must divide --dp " + s(d));
    }
    shards = par.shard_group;
  } else {
    if (par.shard_group != 0) invalid("shard_group", "--shard-group applies to --fsdp hybrid only");
    if (sh != Sharding::none) shards = d;
  }
  if (par.offload_optimizer) {
    if (sh == Sharding::none) {
      invalid("offload", "optimizer offload is DeepSpeed's ZeRO-Offload: it needs --zero 1, 2 or 3");
    }
    if (fsdp) {
      invalid("offload", "FSDP offloads parameters, gradients and optimizer states together "
                         "(CPUOffload(offload_params=True)): use --offload params");
    }
  }
  if (par.offload_params && sh != Sharding::zero3 && !fsdp) {
    invalid("offload", "parameter offload needs ZeRO stage 3 (DeepSpeed offload_param) or FSDP (CPUOffload)");
  }
  if (sh == Sharding::zero3 && p > 1) {
    invalid("pipeline_parallel", "DeepSpeed's pipeline engine supports ZeRO stages 0-2, not 3: use --zero 1 or 2 with --pp");
  }
  if (par.sequence_parallel) {
    if (t < 2) invalid("sequence_parallel", "sequence parallelism splits what tensor parallelism replicates: it needs --tp 2 or more");
    if (shape_in.seq % t != 0) {
      invalid("sequence_parallel", "sequence parallelism splits the sequence " + s(t) + " ways: seq_len " + s(shape_in.seq) +
                                       " is not divisible by --tp " + s(t));
    }
  }

  const bool megatron = t > 1 || p > 1;
  // Megatron-LM runs fused LayerNorm/RMSNorm and bias-GeLU kernels (Korthikanti et al.'s
  // accounting); DeepSpeed and FSDP train the Hugging Face modules as they are.
  TrainingShape shape = shape_in;
  if (megatron) shape.hf_unfused_ops = false;
  const TensorShard shard =
      tensor_parallel_shard(spec, {t, megatron ? checked_mul(par.vocab_multiple, t, "vocabulary multiple") : 1, false});
  const ModelSpec& ss = shard.spec;
  const std::vector<std::uint64_t> stages = pipeline_stage_layers(spec.n_layers, p, par.stage_layers);

  const Precision& e = shape.compute;
  const std::uint64_t e_bits = float_bits(e, "compute", "the activation dtype");
  const std::uint64_t w_bits = float_bits(shape.weights.precision, "precision", "the trained weights' dtype");
  const Precision grad_dtype = tr.grad_precision.value_or(shape.weights.precision);
  const std::uint64_t g_bits = float_bits(grad_dtype, "grad_precision", "the gradient dtype");
  const bool stepping = tr.optimizer != Optimizer::none;
  const bool master = stepping && tr.master_weights && w_bits < 32;
  const std::uint64_t state_bits = (master || w_bits == 32) ? 32 : w_bits;
  const std::uint64_t k_bits = checked_mul(per_param_state_elements, state_bits, "state bits");
  const std::uint64_t flat_bits = master ? 32 : w_bits;  // FSDP's flat parameters: the model's load dtype
  const std::string w_b = s(w_bits / 8) + " B", g_b = s(g_bits / 8) + " B";

  // One layer's activations as this rank keeps them.
  const std::uint64_t seq_sp = par.sequence_parallel ? shape.seq / t : shape.seq;
  const Item layer_full = layer_activations(ss, shape);
  TrainingShape sp_shape = shape;
  sp_shape.seq = seq_sp;
  const Item layer_sp = par.sequence_parallel ? layer_activations(ss, sp_shape) : layer_full;
  std::vector<Item> layer_terms;
  for (const Item& r : layer_full.detail) {
    if (par.sequence_parallel && replicated_across_tensor_ranks(r.name)) {
      for (const Item& q : layer_sp.detail) {
        if (q.name == r.name) layer_terms.push_back(q);
      }
    } else {
      layer_terms.push_back(r);
    }
  }
  const Bytes layer_all = sum_of(layer_terms, "one layer's activations");
  std::vector<Item> stored_terms;
  if (tr.recompute == Recompute::full) {
    stored_terms.push_back(at("layer_input", {{"s", seq_sp}, {"b", shape.batch}, {"h", ss.d_model}}, e));
  } else {
    for (const Item& r : layer_terms) {
      if (tr.recompute == Recompute::selective && is_attention_core(r.name)) continue;
      stored_terms.push_back(r);
    }
  }
  std::vector<Item> recomputed;  // what backward rebuilds for the layer it is in
  if (tr.recompute == Recompute::full) {
    recomputed.push_back(row("layer_in_backward", layer_all, "one layer recomputed from its input: " + layer_full.formula));
  } else if (tr.recompute == Recompute::selective) {
    Bytes core;
    for (const Item& r : layer_terms) {
      if (is_attention_core(r.name)) core = core.plus(r.bytes, "attention core");
    }
    if (core.count() > 0) recomputed.push_back(row("attention_core_recomputed", core, "one layer's attention core (a*s^2 terms), recomputed in backward"));
  }
  const std::uint64_t n_mlp = ss.mlp == MlpKind::gated ? 3 : 2;
  const std::uint64_t k_experts = ss.experts > 0 ? ss.experts_per_token : 1;
  std::vector<Item> backward_terms = recomputed;
  backward_terms.push_back(at("activation_gradients", {{"2", 2}, {"s", seq_sp}, {"b", shape.batch}, {"h", ss.d_model}}, e));
  backward_terms.push_back(at("mlp_intermediate_grads",
                              {{s(n_mlp), n_mlp}, {"k", k_experts}, {"s", shape.seq}, {"b", shape.batch}, {"f/t", ss.d_mlp}}, e));

  const std::string tp_text = t > 1 ? "; 1/" + s(t) + " of each attention and MLP matrix and of the vocabulary" : "";
  LayoutEstimate out;
  out.engine = megatron ? (sh == Sharding::none || sh == Sharding::zero1 ? "megatron" : fsdp ? "megatron+fsdp" : "megatron+deepspeed")
               : sh == Sharding::none ? "ddp"
               : fsdp                 ? "fsdp"
                                      : "deepspeed";
  out.tensor = t;
  out.pipeline = p;
  out.data = d;
  out.sharding = to_string(sh);
  out.world_size = checked_mul(checked_mul(t, p, "GPUs"), d, "GPUs");
  out.description = "t=" + s(t) + " x p=" + s(p) + " x d=" + s(d) + " = " + n(out.world_size) + " GPU" +
                    (out.world_size == 1 ? "" : "s") + "; " + sharding_text(sh, shards) +
                    (sh == Sharding::zero1 && megatron ? " (Megatron's distributed optimizer)" : "") +
                    (p > 1 ? "; " + to_string(par.schedule) + " with " + s(m) + " micro-batch" + (m == 1 ? "" : "es") : "") +
                    (par.sequence_parallel ? "; sequence parallel" : "") +
                    (par.offload_optimizer ? "; optimizer offloaded" : "") + (par.offload_params ? "; parameters offloaded" : "");

  std::uint64_t first = 0;
  for (std::uint64_t i = 0; i < p; ++i) {
    const std::uint64_t k = stages[i];
    const bool is_first = i == 0, is_last = i + 1 == p;
    const LayerSlice slice{first, k, is_first, is_last, p > 1};
    const Item weights = slice_weights(ss, shape.weights, slice);
    const std::uint64_t psi = *weights.params;
    const std::uint64_t part = ceil_div(psi, shards);
    const std::string part_text = shards > 1 ? "ceil(" + n(psi) + " params / " + s(shards) + ") = " + n(part) + " params"
                                             : n(psi) + " params";
    std::vector<StateRow> states;
    const auto flat = [&](Item item, bool host) {
      const std::uint64_t b = item.bytes.count();
      states.push_back({std::move(item), host, {b, 1}, {}});
    };

    // Parameters, gradients, master weights and optimizer states, as the sharding leaves them.
    Bytes step_temporary;
    if (fsdp) {
      flat(row("weights", bytes_at(part, flat_bits, "FSDP parameters"),
               part_text + " x " + s(flat_bits / 8) + " B: FSDP's sharded flat parameters" +
                   (master ? " in fp32, also the optimizer's master copy (MixedPrecision gathers them in " +
                                 to_string(shape.weights.precision) + ")"
                           : "")),
           par.offload_params);
      flat(row("gradients", bytes_at(part, flat_bits, "FSDP gradients"),
               part_text + " x " + s(flat_bits / 8) + " B: sharded gradients, reduce-scattered into the flat parameters' dtype"),
           par.offload_params);
      if (k_bits > 0) {
        flat(row("optimizer_states", bytes_at(part, k_bits, "optimizer states"),
                 part_text + " x " + s(k_bits / 8) + " B (" + to_string(tr.optimizer) + ", fp" + s(state_bits) + ")"),
             par.offload_params);
      }
    } else {
      if (sh == Sharding::zero3) {
        flat(row("weights", bytes_at(part, w_bits, "ZeRO-3 parameters"),
                 part_text + " x " + w_b + ": this rank's partition of the " + to_string(shape.weights.precision) + " parameters"),
             par.offload_params);
      } else {
        StateRow w{weights, false, {}, slice_weight_allocations(ss, shape.weights, slice)};
        states.push_back(std::move(w));
      }
      const Bytes bucket = bytes_at(par.reduce_bucket, g_bits, "reduce bucket");
      const std::string bucket_text = n(par.reduce_bucket) + " elements x " + g_b +
                                      ": DeepSpeed's reduce bucket (reduce_bucket_size, contiguous_gradients)";
      if (par.offload_optimizer) {
        flat(row("gradients", bucket, bucket_text + "; the gradients themselves go to host memory"), false);
        flat(row("fp32_gradients", bytes_at(part, 32, "fp32 gradients"), part_text + " x 4 B: the gradient partition the CPU optimizer steps with"),
             true);
      } else if (sh == Sharding::zero2 || sh == Sharding::zero3) {
        Item g = group("gradients",
                       {row("partition", bytes_at(part, g_bits, "gradient partition"), part_text + " x " + g_b),
                        row("reduce_bucket", bucket, bucket_text)},
                       "this rank's gradient partition and the bucket gradients are reduced through");
        flat(std::move(g), false);
      } else {
        flat(row("gradients", bytes_at(psi, g_bits, "gradients"),
                 n(psi) + " params x " + g_b + " (" + to_string(grad_dtype) + "): every gradient of the slice"),
             false);
      }
      const std::uint64_t owned = sh == Sharding::none ? psi : part;
      const std::string owned_text = sh == Sharding::none ? n(psi) + " params" : part_text;
      if (master) {
        flat(row("master_weights", bytes_at(owned, 32, "master weights"), owned_text + " x 4 B (fp32 copy the optimizer updates)"),
             par.offload_optimizer);
      }
      if (k_bits > 0) {
        flat(row("optimizer_states", bytes_at(owned, k_bits, "optimizer states"),
                 owned_text + " x " + s(k_bits / 8) + " B (" + to_string(tr.optimizer) + ", fp" + s(state_bits) + ")"),
             par.offload_optimizer);
      }
      if (master && g_bits < 32 && !par.offload_optimizer) {
        step_temporary = bytes_at(owned, 32, "fp32 gradients");
      }
    }

    // Parameters gathered for computation (ZeRO-3, FSDP).
    std::optional<Item> gathered;
    if (sh == Sharding::zero3) {
      std::uint64_t largest = 0;
      for (const auto& [g, copies] : slice_groups(ss, slice)) largest = std::max(largest, checked_mul(g.rows, g.cols, "elements"));
      gathered = row("gathered_parameters", bytes_at(largest, checked_add(w_bits, g_bits, "bits"), "gathered parameters"),
                     "the largest module (" + n(largest) + " elements) gathered with its gradient: " + n(largest) + " x (" +
                         w_b + " + " + g_b + ") (DeepSpeed estimate_zero3_model_states_mem_needs: 4 x largest_layer_params)");
    } else if (fsdp) {
      const std::uint64_t layer_params =
          k == 0 ? 0 : *slice_weights(ss, shape.weights, {first, 1, false, false, false}).params;
      const std::uint64_t root = psi - checked_mul(layer_params, k, "layer parameters");
      if (sh == Sharding::fsdp_grad_op) {
        gathered = group("gathered_parameters",
                         {row("parameters", bytes_at(psi, w_bits, "gathered parameters"),
                              n(psi) + " params x " + w_b + ": SHARD_GRAD_OP keeps every unit gathered from forward to backward"),
                          row("unit_gradients", bytes_at(layer_params, g_bits, "unit gradients"),
                              n(layer_params) + " params x " + g_b + ": one block's gradients before the reduce-scatter")},
                         "gathered parameters and one unit's unsharded gradients");
      } else {
        const std::uint64_t units = std::min<std::uint64_t>(k, 2);
        gathered = group(
            "gathered_parameters",
            {row("root_unit", bytes_at(root, w_bits, "root unit"),
                 n(root) + " params x " + w_b + ": the root unit (embeddings, final norm, LM head) stays gathered through backward"),
             row("block_units", bytes_at(checked_mul(units, layer_params, "units"), w_bits, "block units"),
                 s(units) + " blocks x " + n(layer_params) + " params x " + w_b +
                     ": the block computing and the next one prefetched (BACKWARD_PRE)"),
             row("unit_gradients", bytes_at(k == 0 ? 0 : layer_params, g_bits, "unit gradients"),
                 n(layer_params) + " params x " + g_b + ": one block's gradients before the reduce-scatter")},
            "FSDP units all-gathered in " + to_string(shape.weights.precision) + " (one transformer block per unit)");
      }
    }

    // Activations of the micro-batches in flight.
    const std::uint64_t flight = micro_batches_in_flight(par.schedule, p, i, m);
    const std::uint64_t copies = checked_mul(flight, k, "layer activations in flight");
    std::vector<Item> act_rows;
    for (const Item& term : stored_terms) {
      Item r = term;
      r.bytes = term.bytes.times(copies, term.name);
      r.formula = s(flight) + " micro-batch" + (flight == 1 ? "" : "es") + " x " + s(k) + " layer" + (k == 1 ? "" : "s") +
                  " x (" + term.formula + ")";
      act_rows.push_back(std::move(r));
    }
    const Dims sbh{{"s", seq_sp}, {"b", shape.batch}, {"h", ss.d_model}};
    const auto in_flight = [&](Item item) {
      item.bytes = item.bytes.times(flight, item.name);
      item.formula = s(flight) + " x (" + item.formula + ")";
      return item;
    };
    if (is_first && shape.dropout) act_rows.push_back(in_flight(tensor("embedding_dropout_mask", sbh, 8, "1 B (bool mask)")));
    const bool head = spec.lm_head != LmHead::none;
    if (is_last && spec.final_norm) act_rows.push_back(in_flight(at("final_norm_input", sbh, e)));
    if (is_last && head) act_rows.push_back(in_flight(at("lm_head_input", sbh, e)));
    const std::string schedule_text =
        p > 1 ? " (" + to_string(par.schedule) + ", stage " + s(i) + " of " + s(p) + ", " + s(m) + " micro-batches)" : "";
    Item activations = group("activations", act_rows,
                             s(flight) + " micro-batch" + (flight == 1 ? "" : "es") + " in flight" + schedule_text + " x " +
                                 s(k) + " layers; " + layer_full.formula + (t > 1 ? ", tensor-parallel shard" : "") +
                                 (par.sequence_parallel ? ", sequence parallel" : "") + "; recompute " + to_string(tr.recompute));

    std::vector<Item> fb_items;
    if (is_last && head) {
      const Dims sbv{{"s", shape.seq}, {"b", shape.batch}, {"V/t", ss.vocab_size}};
      std::vector<Item> loss{at("logits", sbv, e)};
      if (e_bits != 32) loss.push_back(at("logits_fp32", sbv, precisions::fp32));
      loss.push_back(in_flight(at("log_probs", sbv, precisions::fp32)));
      fb_items.push_back(group("loss", loss, "logits of this rank's vocabulary shard, their fp32 copy and the log-softmax kept for backward"));
    }
    fb_items.push_back(group("backward_workspace", backward_terms,
                             "one layer's backward: the gradient flowing down the residual stream and the one accumulated, "
                             "the MLP's gradient temporaries" +
                                 std::string(recomputed.empty() ? "" : ", and what recomputation rebuilds")));
    if (gathered) fb_items.push_back(*gathered);

    // Two moments: forward/backward (activations alive) and the optimizer step.
    const auto phase = [&](std::vector<Item> extra, bool optimizer_step) {
      Breakdown b;
      std::vector<TensorRun> persistent;
      for (const StateRow& r : states) {
        if (r.host) {
          b.host.push_back(r.item);
          continue;
        }
        b.components.push_back(r.item);
        if (r.allocations.empty()) {
          if (r.allocation.bytes > 0) persistent.push_back(r.allocation);
        } else {
          persistent.insert(persistent.end(), r.allocations.begin(), r.allocations.end());
        }
      }
      Bytes transient;
      if (!optimizer_step) {
        b.components.push_back(activations);
        transient = activations.bytes;
      }
      for (Item& x : extra) {
        transient = transient.plus(x.bytes, "transient");
        b.components.push_back(std::move(x));
      }
      if (overhead) b.components.push_back(std::move(estimate_overhead(*overhead, persistent, transient).components.front()));
      return b;
    };
    Breakdown fb = phase(fb_items, false);
    std::vector<Item> step_items;
    if (step_temporary.count() > 0) {
      step_items.push_back(row("optimizer_workspace", step_temporary,
                               "16-bit gradients upcast to fp32 for the master-weight step: " +
                                   (sh == Sharding::none ? n(psi) + " params" : part_text) + " x 4 B"));
    }
    Breakdown step = phase(step_items, true);
    const bool step_peaks = step.total() > fb.total();
    Breakdown& peak = step_peaks ? step : fb;
    const Breakdown& other = step_peaks ? fb : step;
    std::string parts;
    for (const Item& c : other.components) parts += (parts.empty() ? "" : " + ") + c.name;
    peak.alternatives.push_back(
        {"total", row(step_peaks ? "phase_forward_backward" : "phase_optimizer_step", other.total(), parts,
                      step_peaks ? "during forward and backward, activations alive"
                                 : "during the optimizer step, activations freed")});
    for (Item& c : peak.components) {
      if (c.name == (step_peaks ? "weights" : "activations")) {
        c.note = std::string("peak ") + (step_peaks ? "during the optimizer step" : "during forward and backward") +
                 (c.note.empty() ? "" : "; " + c.note);
      }
    }

    DeviceMemory dev;
    dev.role = p == 1 ? "every GPU" : "stage " + s(i);
    dev.count = checked_mul(t, d, "devices per stage");
    std::vector<std::string> holds;
    if (is_first) holds.emplace_back("embeddings");
    holds.push_back(layer_range(first, k));
    if (is_last) holds.emplace_back(spec.lm_head == LmHead::tied && p > 1 ? "final norm, tied LM head copy" : "final norm, LM head");
    for (const std::string& h : holds) dev.holds += (dev.holds.empty() ? "" : ", ") + h;
    dev.holds += tp_text;
    if (shards > 1) dev.holds += "; states 1/" + s(shards);
    dev.breakdown = std::move(peak);
    out.devices.push_back(std::move(dev));
    first += k;
  }

  if (shard.padded_vocab != spec.vocab_size) {
    out.notes.push_back("vocabulary padded from " + n(spec.vocab_size) + " to " + n(shard.padded_vocab) +
                        " rows (Megatron make_vocab_size_divisible_by " + s(par.vocab_multiple) + " x t)");
  }
  if (p > 1 && spec.lm_head == LmHead::tied) {
    out.notes.push_back("tied embeddings: Megatron keeps a copy of the token table on the last stage for the LM head and "
                        "all-reduces their gradients");
  }
  if (megatron && g_bits < 32) {
    out.notes.push_back("Megatron-LM accumulates gradients in fp32 (main_grad) by default: --grad-precision fp32 gives its "
                        "18 B/param (6 + 12/d with the distributed optimizer)");
  }
  out.notes.push_back("gradients are counted alongside the activations: they accumulate across micro-batches (pipeline "
                      "schedules, gradient accumulation)");
  if (sh == Sharding::none && d > 1) {
    out.notes.push_back("data parallelism without sharding replicates every state: --zero 1|2|3 or --fsdp shard it");
  }
  return out;
}

// ----------------------------------------------------------------------- placement

std::vector<PlacementUnit> placement_units(const ModelSpec& spec, const WeightsOptions& options) {
  std::vector<PlacementUnit> out;
  PlacementUnit layer;  // one block's tensors, repeated n_layers times
  const auto add = [&](PlacementUnit& u, const TensorGroup& g, std::uint64_t copies) {
    const std::uint64_t each = weight_tensor_bytes(g, options);
    u.bytes = u.bytes.plus(Bytes(each).times(copies, "bytes of", g.name), "bytes of", u.name);
    u.tensors.push_back({each, copies});
    u.params = checked_add(u.params, checked_mul(copies, checked_mul(g.rows, g.cols, "elements"), "parameters"), "parameters");
    if (!is_bias(g)) u.modules = checked_add(u.modules, copies, "modules");
  };
  const auto unit_named = [&](const std::string& name) -> PlacementUnit& {
    for (PlacementUnit& u : out) {
      if (u.name == name) return u;
    }
    out.push_back({name, Bytes(0), 0, std::nullopt, 0, {}});
    return out.back();
  };
  const auto base = [](const std::string& name) {
    const std::size_t dot = name.find('.');
    return dot == std::string::npos ? name : name.substr(0, dot);
  };
  bool layers_added = false;
  for (const TensorGroup& g : model_tensors(spec)) {
    if (g.component == "embeddings" || is_head_group(g)) {
      if (!layers_added && is_head_group(g)) {
        for (std::uint64_t i = 0; i < spec.n_layers; ++i) {
          PlacementUnit u = layer;
          u.name = "layers." + s(i);
          u.layer = i;
          out.push_back(std::move(u));
        }
        layers_added = true;
      }
      add(unit_named(g.component == "lm_head" ? std::string("lm_head") : base(std::string(g.name))), g, g.copies);
    } else {
      layer.name = "layers";
      add(layer, g, g.copies / spec.n_layers);
    }
  }
  if (!layers_added) {
    for (std::uint64_t i = 0; i < spec.n_layers; ++i) {
      PlacementUnit u = layer;
      u.name = "layers." + s(i);
      u.layer = i;
      out.push_back(std::move(u));
    }
  }
  return out;
}

Placement place_units(const std::vector<PlacementUnit>& units, const PlacementOptions& o) {
  const std::size_t gpus = o.max_memory.size();
  if (gpus == 0) invalid("gpus", "device_map placement needs at least one GPU (--gpus)");
  Placement out;
  out.max_memory = o.max_memory;
  std::vector<Bytes>& mm = out.max_memory;
  Bytes total;
  std::uint64_t modules = 0;
  Bytes largest_block;
  for (const PlacementUnit& u : units) {
    total = total.plus(u.bytes, "model bytes");
    modules = checked_add(modules, u.modules, "modules");
    if (u.layer) largest_block = std::max(largest_block, u.bytes);
  }

  // transformers get_balanced_memory (device_map "auto", "balanced", "balanced_low_0").
  if (o.policy != PlacementPolicy::sequential) {
    bool low_zero = o.policy == PlacementPolicy::balanced_low_0;
    if (gpus == 1) {
      low_zero = false;
      if (!o.user_max_memory) mm[0] = Bytes(mm[0].count() / 10 * 9 + mm[0].count() % 10 * 9 / 10);  // floor(0.9 x free)
    } else {
      std::uint64_t per_gpu = total.count() / (low_zero ? gpus - 1 : gpus);
      const std::uint64_t mean = modules > 0 ? total.count() / modules : 0;
      const std::uint64_t biggest = std::max(largest_block.count(), mean);
      const std::uint64_t buffer = biggest / 4 * 5 + biggest % 4 * 5 / 4;  // int(1.25 x max(block, mean module))
      per_gpu = checked_add(per_gpu, buffer, "per-GPU budget");
      for (std::size_t i = 0; i + 1 < gpus; ++i) {
        const Bytes cap = (low_zero && i == 0) ? mm[0] : Bytes(per_gpu);
        mm[i] = std::min(cap, mm[i]);
      }
      if (low_zero) {
        Bytes others;
        for (std::size_t i = 1; i < gpus; ++i) others = others.plus(mm[i], "GPU budgets");
        const Bytes min_zero = total > others ? Bytes(total.count() - others.count()) : Bytes(0);
        mm[0] = std::min(min_zero, mm[0]);
      }
    }
  }

  // accelerate infer_auto_device_map: units in order; GPU 0 and the CPU keep room for the
  // largest remaining unit (an offloaded layer is brought there to run).
  out.device.assign(units.size(), -2);
  out.used.assign(gpus, Bytes(0));
  Bytes cpu_used;
  std::uint64_t max_size = 0;
  std::size_t max_count = 0;
  const auto recompute = [&](std::size_t from) {
    max_size = 0;
    max_count = 0;
    for (std::size_t j = from; j < units.size(); ++j) {
      if (units[j].bytes.count() > max_size) {
        max_size = units[j].bytes.count();
        max_count = 0;
      }
      if (units[j].bytes.count() == max_size) ++max_count;
    }
  };
  recompute(0);
  out.largest_unit = Bytes(max_size);
  std::size_t current = 0;  // 0..gpus-1: GPUs; gpus: cpu; gpus+1: disk
  for (std::size_t i = 0; i < units.size(); ++i) {
    const std::uint64_t size = units[i].bytes.count();
    if (size == max_size && max_count > 0) --max_count;
    if (max_count == 0) recompute(i + 1);
    while (true) {
      if (current > gpus) {  // disk: unlimited
        out.device[i] = -2;
        break;
      }
      const bool cpu = current == gpus;
      const bool main = current == 0 || cpu;
      if (cpu && !o.cpu_memory) {
        out.device[i] = -1;
        cpu_used = cpu_used.plus(units[i].bytes, "cpu bytes");
        break;
      }
      const std::uint64_t cap = cpu ? o.cpu_memory->count() : mm[current].count();
      const std::uint64_t reserve = main ? max_size : 0;
      const Bytes used = cpu ? cpu_used : out.used[current];
      if (cap >= reserve && used.count() + size <= cap - reserve) {
        if (cpu) {
          out.device[i] = -1;
          cpu_used = cpu_used.plus(units[i].bytes, "cpu bytes");
        } else {
          out.device[i] = static_cast<int>(current);
          out.used[current] = out.used[current].plus(units[i].bytes, "GPU bytes");
        }
        break;
      }
      ++current;
    }
  }
  return out;
}

}  // namespace memplan
