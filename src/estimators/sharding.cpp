#include "memplan/estimators/sharding.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "memplan/core/rows.hpp"
#include "parallel_internal.hpp"

namespace memplan {

namespace {

constexpr detail::NameTable<Sharding, 7> kShardings{{
    {Sharding::none, "none"},
    {Sharding::zero1, "zero1"},
    {Sharding::zero2, "zero2"},
    {Sharding::zero3, "zero3"},
    {Sharding::fsdp_full, "fsdp_full"},
    {Sharding::fsdp_grad_op, "fsdp_grad_op"},
    {Sharding::fsdp_hybrid, "fsdp_hybrid"},
}};

std::uint64_t layout_float_bits(const Precision& p, const char* key, const std::string& what) {
  if (is_quantized(p)) {
    throw_invalid_input(key, what + " must be a float precision (fp32, tf32, bf16, fp16), got " + to_string(p));
  }
  return element_bits(p.format);
}

std::string bytes_each(std::uint64_t bits) { return std::to_string(bits / 8) + " B"; }

// A stage's parameters on one rank, and the part of them one rank owns once they are sharded.
struct Partition {
  std::uint64_t psi = 0;   // Psi
  std::uint64_t part = 0;  // ceil(Psi / N)
  std::string text;        // "ceil(6,738,415,616 params / 8) = 842,301,952 params", or "Psi params" for N = 1
};

// With expert parallelism the rank's experts (already 1/ep of them) shard over the replicas
// holding the same experts, N / ep of them (DeepSpeed-MoE's expert data-parallel group,
// Megatron's expert data parallelism); everything else over all N.
Partition partition(const detail::StageParameters& stage, std::uint64_t shards, std::uint64_t expert_degree) {
  Partition out;
  out.psi = *stage.weights_row.params;
  std::uint64_t experts = 0;
  for (const Item& r : stage.weights_row.detail) {
    if (r.name == "experts") experts = *r.params;
  }
  if (expert_degree > 1 && shards > 1 && experts > 0) {
    const std::uint64_t dense = out.psi - experts, expert_shards = shards / expert_degree;
    out.part = checked_add(ceil_div(dense, shards), ceil_div(experts, expert_shards), "partition");
    out.text = "ceil(" + group_digits(dense) + " params / " + group_digits(shards) + ") + ceil(" +
               group_digits(experts) + " expert params / " + group_digits(expert_shards) +
               ") = " + group_digits(out.part) + " params";
    return out;
  }
  out.part = ceil_div(out.psi, shards);
  out.text = shards > 1 ? "ceil(" + group_digits(out.psi) + " params / " + group_digits(shards) +
                              ") = " + group_digits(out.part) + " params"
                        : group_digits(out.psi) + " params";
  return out;
}

// Collects state rows; a flat buffer is one allocation.
class StateRows {
 public:
  void flat(Item item, bool host) {
    const std::uint64_t bytes = item.bytes.count();
    out_.rows.push_back({std::move(item), host, {bytes, 1}, {}});
  }
  void tensors(Item item, std::vector<TensorRun> allocations) {
    out_.rows.push_back({std::move(item), false, {}, std::move(allocations)});
  }
  detail::ShardedStates& result() { return out_; }

 private:
  detail::ShardedStates out_;
};

// FSDP: the fp32 (or load-dtype) flat parameters, their gradients and the optimizer states,
// all sharded, all moved to the host together by CPUOffload.
void fsdp_states(const Partition& p, const detail::StateDtypes& dt, const ParallelTrainingOptions& par,
                 StateRows& rows) {
  const std::string flat_each = bytes_each(dt.flat_bits);
  rows.flat(bytes_row("weights", bits_to_bytes(p.part, dt.flat_bits, "FSDP parameters"),
                      p.text + " x " + flat_each + ": FSDP's sharded flat parameters" +
                          (dt.master ? " in fp32, also the optimizer's master copy (MixedPrecision gathers them in " +
                                           to_string(dt.weights) + ")"
                                     : "")),
            par.offload_params);
  rows.flat(bytes_row("gradients", bits_to_bytes(p.part, dt.flat_bits, "FSDP gradients"),
                      p.text + " x " + flat_each +
                          ": sharded gradients, reduce-scattered into the flat parameters' dtype"),
            par.offload_params);
  if (dt.k_bits > 0) {
    rows.flat(bytes_row("optimizer_states", bits_to_bytes(p.part, dt.k_bits, "optimizer states"),
                        p.text + " x " + bytes_each(dt.k_bits) + " (" + to_string(dt.optimizer) + ", fp" +
                            std::to_string(dt.state_bits) + ")"),
              par.offload_params);
  }
}

// DDP and ZeRO's gradients: every gradient (DDP, ZeRO-1), this rank's partition and the
// reduce bucket (ZeRO-2, 3), or only the bucket with the partition offloaded in fp32.
void zero_gradients(const Partition& p, const detail::StateDtypes& dt, const ParallelTrainingOptions& par,
                    StateRows& rows) {
  const std::string grad_each = bytes_each(dt.grad_bits);
  const Bytes bucket = bits_to_bytes(par.reduce_bucket, dt.grad_bits, "reduce bucket");
  const std::string bucket_text = group_digits(par.reduce_bucket) + " elements x " + grad_each +
                                  ": DeepSpeed's reduce bucket (reduce_bucket_size, contiguous_gradients)";
  if (par.offload_optimizer) {
    rows.flat(bytes_row("gradients", bucket, bucket_text + "; the gradients themselves go to host memory"), false);
    rows.flat(bytes_row("fp32_gradients", bits_to_bytes(p.part, 32, "fp32 gradients"),
                        p.text + " x 4 B: the gradient partition the CPU optimizer steps with"),
              true);
  } else if (par.sharding == Sharding::zero2 || par.sharding == Sharding::zero3) {
    rows.flat(group_row("gradients",
                        {bytes_row("partition", bits_to_bytes(p.part, dt.grad_bits, "gradient partition"),
                                   p.text + " x " + grad_each),
                         bytes_row("reduce_bucket", bucket, bucket_text)},
                        "this rank's gradient partition and the bucket gradients are reduced through"),
              false);
  } else {
    rows.flat(bytes_row("gradients", bits_to_bytes(p.psi, dt.grad_bits, "gradients"),
                        group_digits(p.psi) + " params x " + grad_each + " (" + to_string(dt.gradients) +
                            "): every gradient of the slice"),
              false);
  }
}

// DDP and ZeRO: the 16-bit parameters (whole, or ZeRO-3's partition), the gradients, and
// the master weights and optimizer states this rank owns (all of them without sharding).
void zero_states(const detail::StageParameters& stage, const Partition& p, const detail::StateDtypes& dt,
                 const ParallelTrainingOptions& par, StateRows& rows) {
  if (par.sharding == Sharding::zero3) {
    rows.flat(bytes_row("weights", bits_to_bytes(p.part, dt.weight_bits, "ZeRO-3 parameters"),
                        p.text + " x " + bytes_each(dt.weight_bits) + ": this rank's partition of the " +
                            to_string(dt.weights) + " parameters"),
              par.offload_params);
  } else {
    rows.tensors(stage.weights_row, slice_weight_allocations(stage.spec, stage.weights, stage.slice));
  }
  zero_gradients(p, dt, par, rows);
  const bool sharded = par.sharding != Sharding::none;
  const std::uint64_t owned = sharded ? p.part : p.psi;
  const std::string owned_text = sharded ? p.text : group_digits(p.psi) + " params";
  if (dt.master) {
    rows.flat(bytes_row("master_weights", bits_to_bytes(owned, 32, "master weights"),
                        owned_text + " x 4 B (fp32 copy the optimizer updates)"),
              par.offload_optimizer);
  }
  if (dt.k_bits > 0) {
    rows.flat(bytes_row("optimizer_states", bits_to_bytes(owned, dt.k_bits, "optimizer states"),
                        owned_text + " x " + bytes_each(dt.k_bits) + " (" + to_string(dt.optimizer) + ", fp" +
                            std::to_string(dt.state_bits) + ")"),
              par.offload_optimizer);
  }
  if (dt.master && dt.grad_bits < 32 && !par.offload_optimizer) {
    rows.result().optimizer_workspace = bytes_row("optimizer_workspace", bits_to_bytes(owned, 32, "fp32 gradients"),
                                                  "16-bit gradients upcast to fp32 for the master-weight step: " +
                                                      owned_text + " x 4 B");
  }
}

}  // namespace

std::string to_string(Sharding sharding) { return detail::name_of(kShardings, sharding); }

Sharding parse_sharding(std::string_view text) { return detail::parse_named(kShardings, text, "sharding", "sharding"); }

bool is_fsdp(Sharding sharding) {
  return sharding == Sharding::fsdp_full || sharding == Sharding::fsdp_grad_op || sharding == Sharding::fsdp_hybrid;
}

namespace detail {

std::uint64_t optimizer_state_elements(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::none:
    case Optimizer::sgd: return 0;
    case Optimizer::sgd_momentum: return 1;
    case Optimizer::adam:
    case Optimizer::adamw: return 2;
    case Optimizer::adam_8bit:
    case Optimizer::adafactor:
    case Optimizer::paged_adamw:
    case Optimizer::paged_adamw_8bit:
      throw_invalid_input(
          "optimizer", "layouts shard optimizer states as K bytes per parameter (ZeRO's K); " + to_string(optimizer) +
                           " keeps per-tensor states and is not modelled with `zero`/`fsdp`/`tp`/`pp`/`dp`");
  }
  return 0;
}

StateDtypes state_dtypes(const TrainingShape& shape, const TrainingOptions& tr, std::uint64_t state_elements) {
  StateDtypes out;
  out.weights = shape.weights.precision;
  out.weight_bits = layout_float_bits(out.weights, "precision", "the trained weights' dtype");
  out.gradients = tr.grad_precision.value_or(out.weights);
  out.grad_bits = layout_float_bits(out.gradients, "grad_precision", "the gradient dtype");
  const bool stepping = tr.optimizer != Optimizer::none;
  out.master = stepping && tr.master_weights && out.weight_bits < 32;
  out.state_bits = (out.master || out.weight_bits == 32) ? 32 : out.weight_bits;
  out.k_bits = checked_mul(state_elements, out.state_bits, "state bits");
  out.flat_bits = out.master ? 32 : out.weight_bits;
  out.optimizer = tr.optimizer;
  return out;
}

std::uint64_t shard_count(const ParallelTrainingOptions& par) {
  const Sharding sh = par.sharding;
  std::uint64_t shards = 1;
  if (sh == Sharding::fsdp_hybrid) {
    if (par.shard_group == 0) {
      throw_invalid_input("shard_group",
                          "`fsdp` hybrid shards within groups of GPUs and replicates across them: give the "
                          "group size with `shard_group` N (a node, e.g. 8)");
    }
    if (par.data % par.shard_group != 0) {
      throw_invalid_input("shard_group", "`shard_group` " + group_digits(par.shard_group) + " must divide `dp` " +
                                             group_digits(par.data));
    }
    shards = par.shard_group;
  } else {
    if (par.shard_group != 0) throw_invalid_input("shard_group", "`shard_group` applies to `fsdp` hybrid only");
    if (sh != Sharding::none) shards = par.data;
  }
  if (par.offload_optimizer) {
    if (sh == Sharding::none) {
      throw_invalid_input("offload", "optimizer offload is DeepSpeed's ZeRO-Offload: it needs `zero` 1, 2 or 3");
    }
    if (is_fsdp(sh)) {
      throw_invalid_input("offload",
                          "FSDP offloads parameters, gradients and optimizer states together "
                          "(CPUOffload(offload_params=True)): use `offload` params");
    }
  }
  if (par.offload_params && sh != Sharding::zero3 && !is_fsdp(sh)) {
    throw_invalid_input("offload",
                        "parameter offload needs ZeRO stage 3 (DeepSpeed offload_param) or FSDP (CPUOffload)");
  }
  return shards;
}

std::string sharding_text(Sharding sh, std::uint64_t over) {
  const std::string n = group_digits(over);
  switch (sh) {
    case Sharding::none: return "replicated (DDP)";
    case Sharding::zero1: return "ZeRO-1 over " + n;
    case Sharding::zero2: return "ZeRO-2 over " + n;
    case Sharding::zero3: return "ZeRO-3 over " + n;
    case Sharding::fsdp_full: return "FSDP FULL_SHARD over " + n;
    case Sharding::fsdp_grad_op: return "FSDP SHARD_GRAD_OP over " + n;
    case Sharding::fsdp_hybrid: return "FSDP HYBRID_SHARD over groups of " + n;
  }
  return "";
}

ShardedStates sharded_states(const StageParameters& stage, const StateDtypes& dtypes,
                             const ParallelTrainingOptions& parallel, std::uint64_t shards) {
  const Partition p = partition(stage, shards, parallel.expert);
  StateRows rows;
  if (is_fsdp(parallel.sharding)) {
    fsdp_states(p, dtypes, parallel, rows);
  } else {
    zero_states(stage, p, dtypes, parallel, rows);
  }
  return std::move(rows.result());
}

std::optional<Item> gathered_parameters(const StageParameters& stage, const StateDtypes& dt, Sharding sharding) {
  const std::string w_each = bytes_each(dt.weight_bits), g_each = bytes_each(dt.grad_bits);
  if (sharding == Sharding::zero3) {
    std::uint64_t largest = 0;
    for (const auto& [g, copies] : slice_groups(stage.spec, stage.slice)) {
      largest = std::max(largest, checked_mul(g.rows, g.cols, "elements"));
    }
    return bytes_row("gathered_parameters",
                     bits_to_bytes(largest, checked_add(dt.weight_bits, dt.grad_bits, "bits"), "gathered parameters"),
                     "the largest module (" + group_digits(largest) +
                         " elements) gathered with its gradient: " + group_digits(largest) + " x (" + w_each + " + " +
                         g_each + ") (DeepSpeed estimate_zero3_model_states_mem_needs: 4 x largest_layer_params)");
  }
  if (!is_fsdp(sharding)) return std::nullopt;
  const std::uint64_t k = stage.slice.layers;
  const std::uint64_t psi = *stage.weights_row.params;
  const std::uint64_t layer_params =
      k == 0 ? 0 : *slice_weights(stage.spec, stage.weights, {stage.slice.first_layer, 1, false, false, false}).params;
  const std::string unit_gradients_text = group_digits(layer_params) + " params x " + g_each +
                                          ": one block's gradients before the reduce-scatter";
  if (sharding == Sharding::fsdp_grad_op) {
    return group_row("gathered_parameters",
                     {bytes_row("parameters", bits_to_bytes(psi, dt.weight_bits, "gathered parameters"),
                                group_digits(psi) + " params x " + w_each +
                                    ": SHARD_GRAD_OP keeps every unit gathered from forward to backward"),
                      bytes_row("unit_gradients", bits_to_bytes(layer_params, dt.grad_bits, "unit gradients"),
                                unit_gradients_text)},
                     "gathered parameters and one unit's unsharded gradients");
  }
  const std::uint64_t root = psi - checked_mul(layer_params, k, "layer parameters");
  const std::uint64_t units = std::min<std::uint64_t>(k, 2);
  return group_row(
      "gathered_parameters",
      {bytes_row("root_unit", bits_to_bytes(root, dt.weight_bits, "root unit"),
                 group_digits(root) + " params x " + w_each +
                     ": the root unit (embeddings, final norm, LM head) stays gathered through backward"),
       bytes_row("block_units", bits_to_bytes(checked_mul(units, layer_params, "units"), dt.weight_bits, "block units"),
                 group_digits(units) + " blocks x " + group_digits(layer_params) + " params x " + w_each +
                     ": the block computing and the next one prefetched (BACKWARD_PRE)"),
       bytes_row("unit_gradients", bits_to_bytes(k == 0 ? 0 : layer_params, dt.grad_bits, "unit gradients"),
                 unit_gradients_text)},
      "FSDP units all-gathered in " + to_string(dt.weights) + " (one transformer block per unit)");
}

}  // namespace detail

}  // namespace memplan
