#include "memplan/estimators/megatron.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "memplan/core/rows.hpp"
#include "parallel_internal.hpp"

namespace memplan {

namespace {

constexpr detail::NameTable<PipelineSchedule, 2> kSchedules{{
    {PipelineSchedule::one_f_one_b, "1f1b"},
    {PipelineSchedule::gpipe, "gpipe"},
}};

std::string plural(std::uint64_t count, const std::string& one, const std::string& many) {
  return group_digits(count) + " " + (count == 1 ? one : many);
}

// ------------------------------------------------------------------ slice weights

std::string shape_text(const TensorGroup& g, std::uint64_t copies) {
  std::string out = (copies > 1 ? std::to_string(copies) + " x " : "") + std::string(g.name) + " " +
                    std::to_string(g.rows);
  if (g.cols > 1) out += "x" + std::to_string(g.cols);
  return out;
}

Precision storage(const TensorGroup& g, const WeightsOptions& o) {
  if (!is_quantized(o.precision) || g.role == TensorRole::linear) return o.precision;
  if (g.role == TensorRole::lm_head && o.quantize_lm_head) return o.precision;
  return o.unquantized;
}

// ------------------------------------------------------------------ the training step

// Terms of layer_activations that every tensor-parallel rank holds whole (Korthikanti et
// al. 2022, §4.2.2: the 10sbh of LayerNorm inputs, dropout masks and the inputs of the
// column-parallel linears); sequence parallelism splits them along the sequence.
bool replicated_across_tensor_ranks(const std::string& name) {
  static constexpr std::array<std::string_view, 8> kNames{"norm_inputs",      "qkv_input",
                                                          "mlp_input",        "attention_residual_dropout_mask",
                                                          "mlp_dropout_mask", "router_probs",
                                                          "expert_inputs",    "expert_outputs"};
  return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

std::string layer_range(std::uint64_t first, std::uint64_t count) {
  if (count == 1) return "layer " + std::to_string(first);
  return "layers " + std::to_string(first) + "-" + std::to_string(first + count - 1);
}

// The request as a whole, before any model arithmetic. Throws Error(invalid_input).
void check_request(const TrainingShape& shape, const TrainingOptions& tr, const ParallelTrainingOptions& par) {
  if (par.tensor == 0) throw_invalid_input("tensor_parallel", "the tensor-parallel degree (`tp`) must be at least 1");
  if (par.data == 0) throw_invalid_input("data_parallel", "the data-parallel degree (`dp`) must be at least 1");
  if (par.micro_batches == 0)
    throw_invalid_input("micro_batches", "a step needs at least 1 micro-batch (`micro_batches`)");
  if (shape.batch == 0) throw_invalid_input("batch", "batch must be at least 1");
  if (shape.seq == 0) throw_invalid_input("seq_len", "seq_len must be at least 1");
  if (tr.lora.rank > 0) {
    throw_invalid_input("lora_rank",
                        "multi-GPU layouts plan full training; LoRA with `tp`/`pp`/`dp`/`zero`/`fsdp` is not modelled");
  }
  if (tr.double_backward || !tr.extra.empty()) {
    throw_invalid_input("workload", "multi-GPU layouts plan the training workload, not the gradient analyses");
  }
  if (is_quantized(shape.weights.precision)) {
    throw_invalid_input("precision",
                        "training needs float weights (bf16, fp16, fp32), not " + to_string(shape.weights.precision));
  }
}

// What tensor and pipeline parallelism cannot combine with. Throws Error(invalid_input).
void check_megatron_combinations(const TrainingShape& shape, const ParallelTrainingOptions& par) {
  if (par.sharding == Sharding::zero3 && par.pipeline > 1) {
    throw_invalid_input("pipeline_parallel",
                        "DeepSpeed's pipeline engine supports ZeRO stages 0-2, not 3: use `zero` 1 or 2 with `pp`");
  }
  if (par.expert > 1) {
    if (par.data % par.expert != 0) {
      throw_invalid_input("expert_parallel",
                          "expert parallelism splits the experts across data-parallel replicas: `ep` " +
                              group_digits(par.expert) + " must divide `dp` " + group_digits(par.data));
    }
    const std::uint64_t group = par.sharding == Sharding::fsdp_hybrid ? par.shard_group : par.data;
    if (par.sharding != Sharding::none && group % par.expert != 0) {
      throw_invalid_input("expert_parallel",
                          "the experts' states shard over the replicas holding the same experts, " +
                              group_digits(group) + " / `ep` " + group_digits(par.expert) +
                              ": `ep` must divide the sharding group (`shard_group` for fsdp hybrid)");
    }
  }
  if (par.sequence_parallel) {
    if (par.tensor < 2) {
      throw_invalid_input("sequence_parallel",
                          "sequence parallelism splits what tensor parallelism replicates: it needs `tp` 2 or more");
    }
    if (shape.seq % par.tensor != 0) {
      throw_invalid_input("sequence_parallel", "sequence parallelism splits the sequence " + group_digits(par.tensor) +
                                                   " ways: seq_len " + group_digits(shape.seq) +
                                                   " is not divisible by `tp` " + group_digits(par.tensor));
    }
  }
}

// One layer's activations on one rank, and what its backward adds.
struct LayerTerms {
  Item full;                       // layer_activations of the shard, the whole sequence
  std::vector<Item> stored;        // what each layer keeps for backward, as recomputation leaves it
  std::vector<Item> backward;      // one layer's backward temporaries (and what recomputation rebuilds)
  bool recomputes = false;         // backward rebuilds something
  std::uint64_t seq_per_rank = 0;  // s, or s / t with sequence parallelism
};

LayerTerms layer_terms(const ModelSpec& ss, const TrainingShape& shape, const TrainingOptions& tr,
                       const ParallelTrainingOptions& par) {
  const Precision& e = shape.compute;
  LayerTerms out;
  out.seq_per_rank = par.sequence_parallel ? shape.seq / par.tensor : shape.seq;
  // A state-space model (tensor_parallel_shard refuses hybrids).
  const BlockMixer ssm = ssm_layers(ss) > 0 ? BlockMixer::ssm : BlockMixer::attention;
  out.full = layer_activations(ss, shape, false, ssm);
  TrainingShape sp_shape = shape;
  sp_shape.seq = out.seq_per_rank;
  const Item layer_sp = par.sequence_parallel ? layer_activations(ss, sp_shape, false, ssm) : out.full;
  std::vector<Item> terms;  // the terms of one layer, the replicated ones split by sequence parallelism
  for (const Item& r : out.full.detail) {
    if (par.sequence_parallel && replicated_across_tensor_ranks(r.name)) {
      for (const Item& q : layer_sp.detail) {
        if (q.name == r.name) terms.push_back(q);
      }
    } else {
      terms.push_back(r);
    }
  }
  const Bytes layer_all = sum_bytes(terms, "one layer's activations");
  if (tr.recompute == Recompute::full) {
    out.stored.push_back(
        tensor_row("layer_input", {{"s", out.seq_per_rank}, {"b", shape.batch}, {"h", ss.d_model}}, e));
    out.backward.push_back(
        bytes_row("layer_in_backward", layer_all, "one layer recomputed from its input: " + out.full.formula));
  } else {
    Bytes core;
    for (const Item& r : terms) {
      if (tr.recompute == Recompute::selective && recomputed_by_selective(r.name)) {
        core = core.plus(r.bytes, "attention core");
        continue;
      }
      out.stored.push_back(r);
    }
    if (core.count() > 0) {
      out.backward.push_back(bytes_row("attention_core_recomputed", core,
                                       "one layer's attention core (a*s^2 terms), recomputed in backward"));
    }
  }
  out.recomputes = !out.backward.empty();
  const std::uint64_t n_mlp = ss.mlp == MlpKind::gated ? 3 : 2;
  const std::uint64_t k_experts = ss.experts > 0 ? ss.experts_per_token : 1;
  out.backward.push_back(tensor_row("activation_gradients",
                                    {{"2", 2}, {"s", out.seq_per_rank}, {"b", shape.batch}, {"h", ss.d_model}}, e));
  if (ss.mlp != MlpKind::none) {
    out.backward.push_back(tensor_row(
        "mlp_intermediate_grads",
        {{std::to_string(n_mlp), n_mlp}, {"k", k_experts}, {"s", shape.seq}, {"b", shape.batch}, {"f/t", ss.d_mlp}},
        e));
  }
  return out;
}

std::string engine_name(const ParallelTrainingOptions& par) {
  const bool megatron = par.tensor > 1 || par.pipeline > 1;
  const Sharding sh = par.sharding;
  if (megatron) {
    return sh == Sharding::none || sh == Sharding::zero1 ? "megatron"
           : is_fsdp(sh)                                 ? "megatron+fsdp"
                                                         : "megatron+deepspeed";
  }
  return sh == Sharding::none ? "ddp" : is_fsdp(sh) ? "fsdp" : "deepspeed";
}

// The layout's name, degrees and one-line description.
LayoutEstimate layout_header(const ParallelTrainingOptions& par, std::uint64_t shards) {
  const std::uint64_t t = par.tensor, p = par.pipeline, d = par.data, m = par.micro_batches;
  const bool megatron = t > 1 || p > 1;
  LayoutEstimate out;
  out.engine = engine_name(par);
  out.tensor = t;
  out.pipeline = p;
  out.data = d;
  out.sharding = to_string(par.sharding);
  out.world_size = checked_mul(checked_mul(t, p, "GPUs"), d, "GPUs");
  out.description = "t=" + group_digits(t) + " x p=" + group_digits(p) + " x d=" + group_digits(d) + " = " +
                    plural(out.world_size, "GPU", "GPUs") + "; " +
                    (par.expert > 1 ? "experts split " + group_digits(par.expert) + " ways within d; " : "") +
                    detail::sharding_text(par.sharding, shards) +
                    (par.sharding == Sharding::zero1 && megatron ? " (Megatron's distributed optimizer)" : "") +
                    (p > 1 ? "; " + to_string(par.schedule) + " with " + plural(m, "micro-batch", "micro-batches")
                           : "") +
                    (par.sequence_parallel ? "; sequence parallel" : "") +
                    (par.offload_optimizer ? "; optimizer offloaded" : "") +
                    (par.offload_params ? "; parameters offloaded" : "");
  return out;
}

// `item` once per micro-batch in flight.
Item in_flight(Item item, std::uint64_t flight) {
  item.bytes = item.bytes.times(flight, item.name);
  item.formula = group_digits(flight) + " x (" + item.formula + ")";
  return item;
}

// One pipeline stage of the layout, on one rank.
struct Stage {
  std::uint64_t index = 0;   // i of p
  std::uint64_t flight = 0;  // micro-batches whose activations it holds at once
  LayerSlice slice;          // its layers and whether it holds the embeddings and the head
};

// The activations of the micro-batches stage `st` holds in flight: each stored term of its
// layers, the embedding dropout mask on the first stage, the final-norm and LM-head inputs
// on the last.
Item stage_activations(const ModelSpec& spec, const ModelSpec& ss, const TrainingShape& shape,
                       const TrainingOptions& tr, const ParallelTrainingOptions& par, const LayerTerms& layer,
                       const Stage& st) {
  const std::uint64_t k = st.slice.layers;
  const std::uint64_t copies = checked_mul(st.flight, k, "layer activations in flight");
  std::vector<Item> rows;
  for (const Item& term : layer.stored) {
    Item r = term;
    r.bytes = term.bytes.times(copies, term.name);
    r.formula = plural(st.flight, "micro-batch", "micro-batches") + " x " + plural(k, "layer", "layers") + " x (" +
                term.formula + ")";
    rows.push_back(std::move(r));
  }
  const TensorDims sbh{{"s", layer.seq_per_rank}, {"b", shape.batch}, {"h", ss.d_model}};
  if (st.slice.embeddings && shape.dropout) {
    rows.push_back(in_flight(tensor_row("embedding_dropout_mask", sbh, 8, "1 B (bool mask)"), st.flight));
  }
  if (st.slice.head && spec.final_norm) {
    rows.push_back(in_flight(tensor_row("final_norm_input", sbh, shape.compute), st.flight));
  }
  if (st.slice.head && spec.lm_head != LmHead::none) {
    rows.push_back(in_flight(tensor_row("lm_head_input", sbh, shape.compute), st.flight));
  }
  const std::uint64_t p = par.pipeline;
  const std::string schedule_text = p > 1 ? " (" + to_string(par.schedule) + ", stage " + group_digits(st.index) +
                                                " of " + group_digits(p) + ", " + group_digits(par.micro_batches) +
                                                " micro-batches)"
                                          : "";
  return group_row("activations", std::move(rows),
                   plural(st.flight, "micro-batch", "micro-batches") + " in flight" + schedule_text + " x " +
                       group_digits(k) + " layers; " + layer.full.formula +
                       (par.tensor > 1 ? ", tensor-parallel shard" : "") +
                       (par.sequence_parallel ? ", sequence parallel" : "") + "; recompute " + to_string(tr.recompute));
}

// What forward and backward add beside the stored activations: the loss on the last stage,
// one layer's backward temporaries, and what ZeRO-3 or FSDP gathers.
std::vector<Item> forward_backward_rows(const ModelSpec& spec, const ModelSpec& ss, const TrainingShape& shape,
                                        const LayerTerms& layer, const Stage& st, std::optional<Item> gathered) {
  const Precision& e = shape.compute;
  std::vector<Item> out;
  if (st.slice.head && spec.lm_head != LmHead::none) {
    const TensorDims sbv{{"s", shape.seq}, {"b", shape.batch}, {"V/t", ss.vocab_size}};
    std::vector<Item> loss{tensor_row("logits", sbv, e)};
    if (element_bits(e.format) != 32) loss.push_back(tensor_row("logits_fp32", sbv, precisions::fp32));
    loss.push_back(in_flight(tensor_row("log_probs", sbv, precisions::fp32), st.flight));
    out.push_back(group_row("loss", std::move(loss),
                            "logits of this rank's vocabulary shard, their fp32 copy and the log-softmax kept for "
                            "backward"));
  }
  out.push_back(group_row("backward_workspace", layer.backward,
                          "one layer's backward: the gradient flowing down the residual stream and the one "
                          "accumulated, the MLP's gradient temporaries" +
                              std::string(layer.recomputes ? ", and what recomputation rebuilds" : "")));
  if (gathered) out.push_back(std::move(*gathered));
  return out;
}

// One moment of the step: the states on the device (host rows aside), `extra`, the
// activations while forward and backward run, and the overhead of what is allocated.
Breakdown phase(const std::vector<detail::StateRow>& states, const Item* activations, std::vector<Item> extra,
                const std::optional<OverheadOptions>& overhead) {
  Breakdown b;
  std::vector<TensorRun> persistent;
  for (const detail::StateRow& r : states) {
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
  if (activations != nullptr) {
    b.components.push_back(*activations);
    transient = activations->bytes;
  }
  for (Item& x : extra) {
    transient = transient.plus(x.bytes, "transient");
    b.components.push_back(std::move(x));
  }
  if (overhead) {
    b.components.push_back(std::move(estimate_overhead(*overhead, persistent, {transient, {}}).components.front()));
  }
  return b;
}

// The larger of the two moments, with the other beside it as an alternative to "total".
Breakdown peak_of(Breakdown forward_backward, Breakdown step) {
  const bool step_peaks = step.total() > forward_backward.total();
  Breakdown& peak = step_peaks ? step : forward_backward;
  const Breakdown& other = step_peaks ? forward_backward : step;
  std::string parts;
  for (const Item& c : other.components) parts += (parts.empty() ? "" : " + ") + c.name;
  peak.alternatives.push_back(
      {"total", bytes_row(step_peaks ? "phase_forward_backward" : "phase_optimizer_step", other.total(), parts,
                          step_peaks ? "during forward and backward, activations alive"
                                     : "during the optimizer step, activations freed")});
  for (Item& c : peak.components) {
    if (c.name == (step_peaks ? "weights" : "activations")) {
      c.note = std::string("peak ") + (step_peaks ? "during the optimizer step" : "during forward and backward") +
               (c.note.empty() ? "" : "; " + c.note);
    }
  }
  return std::move(peak);
}

// "embeddings, layers 0-19; 1/8 of each attention and MLP matrix and of the vocabulary; states 1/2".
std::string stage_holds(const ModelSpec& spec, const ParallelTrainingOptions& par, const LayerSlice& slice,
                        std::uint64_t shards) {
  std::vector<std::string> holds;
  if (slice.embeddings) holds.emplace_back("embeddings");
  holds.push_back(layer_range(slice.first_layer, slice.layers));
  if (slice.head) {
    holds.emplace_back(spec.lm_head == LmHead::tied && par.pipeline > 1 ? "final norm, tied LM head copy"
                                                                        : "final norm, LM head");
  }
  std::string out;
  for (const std::string& h : holds) out += (out.empty() ? "" : ", ") + h;
  if (par.tensor > 1) {
    out += "; 1/" + group_digits(par.tensor) + " of each attention and MLP matrix and of the vocabulary";
  }
  if (shards > 1 && par.expert > 1) {
    const std::uint64_t expert_shards = shards / par.expert;
    out += "; states 1/" + group_digits(shards) + ", the experts' " +
           (expert_shards > 1 ? "1/" + group_digits(expert_shards) : std::string("whole"));
  } else if (shards > 1) {
    out += "; states 1/" + group_digits(shards);
  }
  return out;
}

std::vector<std::string> layout_notes(const ModelSpec& spec, const TensorShard& shard,
                                      const ParallelTrainingOptions& par, const detail::StateDtypes& dtypes,
                                      bool megatron_default_grads) {
  const bool megatron = par.tensor > 1 || par.pipeline > 1;
  std::vector<std::string> out;
  if (shard.padded_vocab != spec.vocab_size) {
    out.push_back("vocabulary padded from " + group_digits(spec.vocab_size) + " to " +
                  group_digits(shard.padded_vocab) + " rows (Megatron make_vocab_size_divisible_by " +
                  group_digits(par.vocab_multiple) + " x t)");
  }
  if (par.pipeline > 1 && spec.lm_head == LmHead::tied) {
    out.push_back(
        "tied embeddings: Megatron keeps a copy of the token table on the last stage for the LM head and "
        "all-reduces their gradients");
  }
  if (megatron_default_grads && dtypes.grad_bits == 32) {
    out.push_back(
        "gradients in fp32: Megatron-LM accumulates and all-reduces a bf16 model's gradients in fp32 (main_grad), "
        "18 B/param with Adam (6 + 12/d with the distributed optimizer); `grad_precision` bf16 is its "
        "--grad-reduce-in-bf16");
  } else if (megatron && dtypes.grad_bits < 32) {
    out.push_back(
        "16-bit gradients: Megatron-LM keeps an fp16 model's main_grad in fp16 unless "
        "--accumulate-allreduce-grads-in-fp32 (`grad_precision` fp32: 18 B/param with Adam)");
  }
  out.push_back(
      "gradients are counted alongside the activations: they accumulate across micro-batches (pipeline "
      "schedules, gradient accumulation)");
  if (par.expert > 1) {
    const std::uint64_t local = spec.experts / par.expert;
    out.push_back("expert parallelism: each GPU holds " + group_digits(local) + " of the " +
                  group_digits(spec.experts) +
                  " routed experts of every MoE layer, with their gradients and optimizer states, and receives about " +
                  "as many routed tokens as without it (balanced routing); its router is counted as those " +
                  group_digits(local) + " experts' columns, " + group_digits(spec.d_model) + " x " +
                  group_digits(spec.experts - local) + " parameters a MoE layer fewer than the replicated one");
    if (par.sharding != Sharding::none) {
      out.push_back(
          "sharded states with expert parallelism: the experts' parameters, gradients and optimizer states "
          "shard over the dp / ep replicas holding the same experts, the rest over all dp (DeepSpeed-MoE's "
          "expert data-parallel group; Megatron's expert data parallelism)");
    }
  }
  if (par.sharding == Sharding::none && par.data > 1) {
    out.push_back("data parallelism without sharding replicates every state: `zero` 1|2|3 or `fsdp` shard it");
  }
  return out;
}

}  // namespace

// ----------------------------------------------------------------------- tensor parallel

TensorShard tensor_parallel_shard(const ModelSpec& spec, const TensorShardOptions& o) {
  const std::uint64_t t = o.degree;
  if (t == 0) throw_invalid_input("tensor_parallel", "the tensor-parallel degree (`tp`) must be at least 1");
  TensorShard out{spec, t, 1, spec.vocab_size};
  const std::uint64_t multiple = std::max<std::uint64_t>(o.vocab_multiple, 1);
  out.padded_vocab = checked_mul(ceil_div(spec.vocab_size, multiple), multiple, "the padded vocabulary");
  const std::string over = "tensor parallelism over " + group_digits(t) + " GPUs";
  if (spec.vision.d_model != 0) {
    throw_invalid_input("tensor_parallel", spec.name +
                                               " has a vision tower, which memplan's multi-GPU training layouts do "
                                               "not place: plan it on one GPU, or its weights with `device_map`");
  }
  if (ssm_layers(spec) > 0 && o.split_state_space) {
    const SsmSizes& m = spec.ssm;
    const bool headed = m.version != 1;
    const std::uint64_t units = headed ? m.heads : m.d_inner;
    if (units % t != 0) {
      throw_invalid_input("tensor_parallel", spec.name + "'s " + group_digits(units) +
                                                 (headed ? " state-space heads" : " state-space channels (d_inner)") +
                                                 " do not split evenly over " + group_digits(t) + " GPUs");
    }
    if (headed && m.groups % t != 0 && m.groups != 1) {
      throw_invalid_input("tensor_parallel", spec.name + "'s " + group_digits(m.groups) +
                                                 (m.version == 3 ? " key heads" : " state-space groups") +
                                                 " do not split evenly over " + group_digits(t) +
                                                 " GPUs (vLLM replicates a single group, not " +
                                                 group_digits(m.groups) + ")");
    }
    out.spec.ssm.d_inner = m.d_inner / t;
    if (headed) {
      out.spec.ssm.heads = m.heads / t;
      out.spec.ssm.groups = m.groups % t == 0 ? m.groups / t : 1;
    }
    if (attention_layers(spec) == 0) {  // a state-space model alone: the mixers, the vocabulary
      if (out.padded_vocab % t != 0)
        throw_invalid_input("tensor_parallel", "the padded vocabulary of " + group_digits(out.padded_vocab) +
                                                   " rows does not split evenly over " + group_digits(t) + " GPUs");
      out.spec.vocab_size = out.padded_vocab / t;
      return out;
    }
  } else if (ssm_layers(spec) > 0) {
    if (t > 1) {
      throw_invalid_input("tensor_parallel", spec.name + " has " + ssm_layers_text(spec) +
                                                 ", which memplan does not split over "
                                                 "tensor-parallel ranks: use `pp`, `zero` or `fsdp`");
    }
    if (attention_layers(spec) > 0) {
      throw_invalid_input("tensor_parallel", spec.name +
                                                 " mixes attention and state-space layers, and memplan's "
                                                 "multi-GPU layouts hold one kind of block: plan it on one "
                                                 "GPU, or with `device_map` layers");
    }
    return out;  // one rank: nothing split
  }
  if (spec.n_heads % t != 0) {
    throw_invalid_input("tensor_parallel", spec.name + " has " + group_digits(spec.n_heads) +
                                               " attention heads, which " + over +
                                               " cannot split evenly: `tp` must divide n_heads");
  }
  std::uint64_t kv = spec.n_kv_heads;
  if (spec.n_kv_heads >= t) {
    if (spec.n_kv_heads % t != 0) {
      throw_invalid_input("tensor_parallel", spec.name + " has " + group_digits(spec.n_kv_heads) +
                                                 " key/value heads, which " + over +
                                                 " cannot split evenly: `tp` must divide n_kv_heads");
    }
    kv = spec.n_kv_heads / t;
  } else if (!o.replicate_kv_heads) {
    throw_invalid_input("tensor_parallel", spec.name + " has " + group_digits(spec.n_kv_heads) +
                                               " key/value heads, fewer than `tp` " + group_digits(t) +
                                               ": Megatron-LM needs the query groups to divide evenly across "
                                               "tensor-parallel ranks (vLLM serving replicates KV heads instead)");
  } else if (t % spec.n_kv_heads != 0) {
    throw_invalid_input("tensor_parallel",
                        spec.name + " has " + group_digits(spec.n_kv_heads) + " key/value heads and `tp` " +
                            group_digits(t) +
                            ": each KV head is replicated on t / n_kv_heads ranks, so `tp` must be a "
                            "multiple of n_kv_heads");
  } else {
    kv = 1;
    out.kv_replicas = t / spec.n_kv_heads;
  }
  // Gemma 4's full-attention layers' own key/value heads split (or replicate) the same way.
  std::uint64_t global_kv = spec.global_kv_heads;
  if (global_kv != 0 && global_kv >= t) {
    if (global_kv % t != 0) {
      throw_invalid_input("tensor_parallel", spec.name + " has " + group_digits(global_kv) +
                                                 " key/value heads in its full-attention layers, which " + over +
                                                 " cannot split evenly: `tp` must divide them");
    }
    global_kv /= t;
  } else if (global_kv != 0) {
    if (!o.replicate_kv_heads || t % global_kv != 0) {
      throw_invalid_input("tensor_parallel", spec.name + " has " + group_digits(global_kv) +
                                                 " key/value heads in its full-attention layers and `tp` " +
                                                 group_digits(t) +
                                                 ": vLLM replicates each on t / heads ranks, so `tp` must be a "
                                                 "multiple of them (Megatron-LM: a divisor)");
    }
    global_kv = 1;
  }
  if (spec.d_mlp % t != 0) {
    throw_invalid_input("tensor_parallel", spec.name + "'s MLP intermediate size " + group_digits(spec.d_mlp) +
                                               " does not split evenly over " + group_digits(t) +
                                               " GPUs: `tp` must divide d_mlp");
  }
  if (out.padded_vocab % t != 0) {
    throw_invalid_input("tensor_parallel", "the vocabulary of " + group_digits(out.padded_vocab) + " rows (" +
                                               group_digits(spec.vocab_size) + " padded to a multiple of " +
                                               group_digits(multiple) + ") does not split evenly over " +
                                               group_digits(t) + " GPUs");
  }
  for (const auto& [width, what] :
       {std::pair{spec.d_expert, "expert"}, std::pair{spec.d_shared_expert, "shared-expert"}}) {
    if (width % t != 0) {
      throw_invalid_input("tensor_parallel", spec.name + "'s " + what + " intermediate size " + group_digits(width) +
                                                 " does not split evenly over " + group_digits(t) + " GPUs");
    }
  }
  const std::uint64_t e = o.expert_degree;
  if (e > 1 && (spec.experts == 0 || spec.experts % e != 0)) {
    throw_invalid_input("expert_parallel",
                        spec.experts == 0
                            ? spec.name + " has no experts: `ep` applies to mixture-of-experts models"
                            : spec.name + "'s " + group_digits(spec.experts) + " experts do not split evenly over " +
                                  group_digits(e) + " GPUs: `ep` must divide the experts");
  }
  out.spec.n_heads = spec.n_heads / t;
  out.spec.n_kv_heads = kv;
  out.spec.global_kv_heads = global_kv;
  out.spec.d_mlp = spec.d_mlp / t;
  out.spec.d_expert = spec.d_expert / t;
  out.spec.d_shared_expert = spec.d_shared_expert / t;
  out.spec.experts = spec.experts / std::max<std::uint64_t>(e, 1);
  out.spec.vocab_size = out.padded_vocab / t;
  // A checkpoint's stored tensors (a quantised checkpoint, a .gguf) split as the architecture
  // does: a tensor of a split component keeps 1/t of its bytes (rounded up: block scales split
  // with their blocks), experts spread over `ep` by count; norms, the router and the rest whole.
  for (StoredTensors& st : out.spec.stored_weights) {
    const bool split = st.component == "embeddings" || st.component == "attention" || st.component == "mlp" ||
                       st.component == "experts" || st.component == "lm_head";
    if (split) {
      st.bytes = ceil_div(st.bytes, t);
      st.elements = ceil_div(st.elements, t);
    }
    if (st.component == "experts" && e > 1) st.copies = ceil_div(st.copies, e);
  }
  out.spec.stored_layers.reset();  // llama.cpp's layers: it runs on one GPU
  return out;
}

// ----------------------------------------------------------------------- pipeline

std::string to_string(PipelineSchedule schedule) { return detail::name_of(kSchedules, schedule); }

PipelineSchedule parse_pipeline_schedule(std::string_view text) {
  return detail::parse_named(kSchedules, text, "schedule", "pipeline schedule");
}

std::vector<std::uint64_t> pipeline_stage_layers(std::uint64_t n_layers, std::uint64_t stages,
                                                 const std::vector<std::uint64_t>& requested) {
  if (stages == 0)
    throw_invalid_input("pipeline_parallel", "the pipeline needs at least 1 stage (`pp` 1 is no pipeline)");
  if (!requested.empty()) {
    if (requested.size() != stages) {
      throw_invalid_input("stage_layers", "`stage_layers` lists " + group_digits(requested.size()) +
                                              " stages but `pp` is " + group_digits(stages));
    }
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < requested.size(); ++i) {
      if (requested[i] == 0) {
        throw_invalid_input("stage_layers",
                            "stage " + group_digits(i) + " has 0 layers: every stage needs at least one");
      }
      total = checked_add(total, requested[i], "layers");
    }
    if (total != n_layers) {
      throw_invalid_input("stage_layers", "`stage_layers` adds up to " + group_digits(total) +
                                              " layers; the model has " + group_digits(n_layers));
    }
    return requested;
  }
  if (stages > n_layers) {
    throw_invalid_input("pipeline_parallel",
                        "the model's " + group_digits(n_layers) + " layers cannot fill " + group_digits(stages) +
                            " pipeline stages: every stage needs at least one layer (`pp` at most " +
                            group_digits(n_layers) + ")");
  }
  std::vector<std::uint64_t> out(stages, n_layers / stages);
  const std::uint64_t extra = n_layers % stages;
  for (std::uint64_t i = stages - extra; i < stages; ++i) ++out[i];
  return out;
}

std::uint64_t micro_batches_in_flight(PipelineSchedule schedule, std::uint64_t stages, std::uint64_t stage,
                                      std::uint64_t micro_batches) {
  if (micro_batches == 0) throw_invalid_input("micro_batches", "a step needs at least 1 micro-batch");
  if (stage >= stages) {
    throw_invalid_input("pipeline_parallel",
                        "stage " + group_digits(stage) + " is outside a " + group_digits(stages) + "-stage pipeline");
  }
  if (schedule == PipelineSchedule::gpipe) return micro_batches;
  return std::min(stages - stage, micro_batches);
}

// ----------------------------------------------------------------------- slices

namespace detail {

bool is_head_group(const TensorGroup& g) {
  return g.component == "lm_head" || g.component == "pooler" || g.name.starts_with("final_norm");
}

std::vector<std::pair<TensorGroup, std::uint64_t>> slice_groups(const ModelSpec& spec, const LayerSlice& slice) {
  if (checked_add(slice.first_layer, slice.layers, "layers") > spec.n_layers) {
    throw_invalid_input("layers", "layers " + group_digits(slice.first_layer) + " to " +
                                      group_digits(slice.first_layer + slice.layers) + " are outside " + spec.name +
                                      "'s " + group_digits(spec.n_layers) + " layers");
  }
  std::vector<std::pair<TensorGroup, std::uint64_t>> out;
  for (const TensorGroup& g : model_tensors(spec)) {
    if (g.component == "embeddings") {
      if (slice.embeddings) out.emplace_back(g, g.copies);
    } else if (is_head_group(g)) {
      if (slice.head) out.emplace_back(g, g.copies);
    } else if (spec.shared.blocks != 0 && g.layers == LayerSet::none) {  // a shared block's, in its first user
      const std::uint64_t blocks = shared_blocks_in(spec, slice.first_layer, slice.layers);
      if (blocks > 0) out.emplace_back(g, checked_mul(g.copies / spec.shared.blocks, blocks, "copies on a slice"));
    } else {
      const std::uint64_t copies = checked_mul(copies_per_layer(spec, g),
                                               layers_in(spec, g.layers, slice.first_layer, slice.layers),
                                               "copies on a slice");
      if (copies > 0) out.emplace_back(g, copies);
    }
  }
  if (slice.head && slice.tied_head_copy && spec.lm_head == LmHead::tied) {
    out.emplace_back(
        TensorGroup{"lm_head", "lm_head_tied_copy", spec.vocab_size, spec.d_model, 1, TensorRole::embedding}, 1);
  }
  return out;
}

}  // namespace detail

Item slice_weights(const ModelSpec& spec, const WeightsOptions& options, const LayerSlice& slice) {
  Item weights = bytes_row("weights", Bytes(0), "");
  weights.params = 0;
  std::vector<std::string> open;  // per detail row: the precision run being written
  for (const auto& [g, copies] : detail::slice_groups(spec, slice)) {
    if (weights.detail.empty() || weights.detail.back().name != g.component) {
      weights.detail.push_back(bytes_row(std::string(g.component), Bytes(0), ""));
      weights.detail.back().params = 0;
      open.emplace_back();
    }
    Item& r = weights.detail.back();
    const std::string precision = to_string(storage(g, options));
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
    if (r.name == "lm_head" && spec.lm_head == LmHead::tied) {
      r.note = "a copy of the tied token table (Megatron keeps one on the last stage)";
    }
    weights.bytes = weights.bytes.plus(r.bytes, "weights");
    weights.params = checked_add(*weights.params, *r.params, "parameters");
    parts.push_back(r.name);
  }
  weights.formula = group_digits(*weights.params) + " params of " +
                    (parts.empty() ? std::string("nothing") : quoted_list(parts, "and")) + " at " +
                    describe(options.precision);
  return weights;
}

std::vector<TensorRun> slice_weight_allocations(const ModelSpec& spec, const WeightsOptions& options,
                                                const LayerSlice& slice) {
  std::vector<TensorRun> out;
  for (const auto& [g, copies] : detail::slice_groups(spec, slice)) {
    out.push_back({weight_tensor_bytes(g, options), copies});
  }
  return out;
}

// ----------------------------------------------------------------------- the training step

LayoutEstimate estimate_parallel_training(const ModelSpec& spec, const TrainingShape& shape_in,
                                          const TrainingOptions& training, const ParallelTrainingOptions& par,
                                          const std::optional<OverheadOptions>& overhead) {
  check_request(shape_in, training, par);
  const std::uint64_t state_elements = detail::optimizer_state_elements(training.optimizer);
  const std::uint64_t shards = detail::shard_count(par);
  check_megatron_combinations(shape_in, par);

  const std::uint64_t t = par.tensor, p = par.pipeline;
  const bool megatron = t > 1 || p > 1;
  // Megatron-LM runs fused LayerNorm/RMSNorm and bias-GeLU kernels (Korthikanti et al.'s
  // accounting); DeepSpeed and FSDP train the Hugging Face modules as they are.
  // Its fused scale-mask-softmax keeps the probabilities in the compute dtype (Korthikanti's
  // 2as^2b), not Hugging Face eager's fp32 softmax with a 16-bit copy.
  TrainingShape shape = shape_in;
  if (megatron) {
    shape.hf_unfused_ops = false;
    shape.softmax_fp32 = false;
  }
  // Megatron-LM accumulates and all-reduces a bf16 model's gradients in fp32 (main_grad;
  // megatron/training/arguments.py: "bfloat16 requires gradient accumulation and all-reduce to
  // be done in fp32"); fp16 keeps fp16 ones.
  TrainingOptions tr = training;
  if (megatron && !tr.grad_precision && shape.weights.precision == precisions::bf16)
    tr.grad_precision = precisions::fp32;
  const TensorShard shard = tensor_parallel_shard(
      spec, {t, megatron ? checked_mul(par.vocab_multiple, t, "vocabulary multiple") : 1, false, par.expert});
  const ModelSpec& ss = shard.spec;
  const std::vector<std::uint64_t> stages = pipeline_stage_layers(spec.n_layers, p, par.stage_layers);
  if (is_quantized(shape.compute)) {
    throw_invalid_input("compute", "the activation dtype must be a float precision (fp32, tf32, bf16, fp16), got " +
                                       to_string(shape.compute));
  }
  const detail::StateDtypes dtypes = detail::state_dtypes(shape, tr, state_elements);
  const LayerTerms layer = layer_terms(ss, shape, tr, par);

  LayoutEstimate out = layout_header(par, shards);
  std::uint64_t first = 0;
  for (std::uint64_t i = 0; i < p; ++i) {
    Stage st;
    st.index = i;
    st.flight = micro_batches_in_flight(par.schedule, p, i, par.micro_batches);
    st.slice = {first, stages[i], i == 0, i + 1 == p, p > 1};
    const detail::StageParameters params{ss, shape.weights, st.slice, slice_weights(ss, shape.weights, st.slice)};
    detail::ShardedStates states = detail::sharded_states(params, dtypes, par, shards);
    const Item activations = stage_activations(spec, ss, shape, tr, par, layer, st);
    std::vector<Item> step_rows;
    if (states.optimizer_workspace) step_rows.push_back(std::move(*states.optimizer_workspace));

    DeviceMemory dev;
    dev.role = p == 1 ? "every GPU" : "stage " + std::to_string(i);
    dev.count = checked_mul(t, par.data, "devices per stage");
    dev.holds = stage_holds(spec, par, st.slice, shards);
    dev.breakdown = peak_of(phase(states.rows, &activations,
                                  forward_backward_rows(spec, ss, shape, layer, st,
                                                        detail::gathered_parameters(params, dtypes, par.sharding)),
                                  overhead),
                            phase(states.rows, nullptr, std::move(step_rows), overhead));
    out.devices.push_back(std::move(dev));
    first += stages[i];
  }
  out.notes = layout_notes(spec, shard, par, dtypes, megatron && !training.grad_precision);
  return out;
}

}  // namespace memplan
