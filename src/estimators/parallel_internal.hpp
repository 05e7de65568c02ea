// What the multi-GPU rooms (megatron.cpp, sharding.cpp, placement.cpp, serving.cpp) share
// and do not publish: their error helper, name tables, the tensor groups of a layer slice,
// and the training state as a sharding lays it out, which estimate_parallel_training
// (megatron.cpp) asks sharding.cpp for, stage by stage.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/precision.hpp"
#include "memplan/core/tensor_run.hpp"
#include "memplan/core/text.hpp"
#include "memplan/estimators/megatron.hpp"
#include "memplan/estimators/sharding.hpp"
#include "memplan/estimators/training.hpp"

namespace memplan::detail {

template <typename Enum, std::size_t N>
using NameTable = std::array<std::pair<Enum, std::string_view>, N>;

// Returns the value `text` names in `table`. Throws Error(invalid_input, key) listing the
// accepted names, with a did-you-mean.
template <typename Enum, std::size_t N>
Enum parse_named(const NameTable<Enum, N>& table, std::string_view text, const char* key, const std::string& what) {
  std::vector<std::string> names;
  for (const auto& [value, name] : table) {
    if (name == text) return value;
    names.emplace_back(name);
  }
  throw_invalid_input(key, "unknown " + what + " '" + printable(text) + "'" + did_you_mean(text, names) +
                               "; accepted: " + quoted_list(names));
}

// Returns the name of `value` in `table` (the first entry's for a value it lacks).
template <typename Enum, std::size_t N>
std::string name_of(const NameTable<Enum, N>& table, Enum value) {
  for (const auto& [v, name] : table) {
    if (v == value) return std::string(name);
  }
  return std::string(table.front().second);
}

// True for the tensors after the blocks: the final norm, the LM head, the pooler.
bool is_head_group(const TensorGroup& group);

// Returns the tensor groups of `slice` of `spec`, each with its copies on the slice (a tied
// LM head's copy of the token table added when the slice asks for one). Throws
// Error(invalid_input, key "layers") for a slice outside the model, Error(overflow).
std::vector<std::pair<TensorGroup, std::uint64_t>> slice_groups(const ModelSpec& spec, const LayerSlice& slice);

// ------------------------------------------------------------------------------------
// The training state of one pipeline stage on one rank, as the sharding leaves it
// (sharding.cpp), for estimate_parallel_training (megatron.cpp).

// What a training step keeps per parameter, in bits: ZeRO's 2 + 2 + K bytes, generalised.
struct StateDtypes {
  Precision weights;    // the trained weights' dtype
  Precision gradients;  // grad_precision, else the weights'
  std::uint64_t weight_bits = 16;
  std::uint64_t grad_bits = 16;
  bool master = false;            // an fp32 master copy the optimizer updates (16-bit weights, a stepping optimizer)
  std::uint64_t state_bits = 32;  // one optimizer state element: fp32 with master or fp32 weights, else the weights'
  std::uint64_t k_bits = 0;       // optimizer state bits per parameter: ZeRO's K x 8
  std::uint64_t flat_bits = 16;   // FSDP's flat parameters: the dtype the model is loaded in
  Optimizer optimizer = Optimizer::adamw;
};

// Returns the optimizer's state elements per parameter (0, 1 or 2). Throws
// Error(invalid_input, key "optimizer") for optimizers whose states are per tensor
// (8-bit Adam, Adafactor), which ZeRO's K bytes per parameter cannot shard.
std::uint64_t optimizer_state_elements(Optimizer optimizer);

// Returns the state dtypes of `shape` trained with `training`. Throws Error(invalid_input,
// key "precision" or "grad_precision") for a dtype that is not a float.
StateDtypes state_dtypes(const TrainingShape& shape, const TrainingOptions& training, std::uint64_t state_elements);

// Returns N, the ranks one state is split over: d for ZeRO and FSDP, the shard group for
// hybrid, 1 without sharding. Throws Error(invalid_input, key "shard_group" or "offload")
// for a shard group or offload the sharding does not support.
std::uint64_t shard_count(const ParallelTrainingOptions& parallel);

// Returns "ZeRO-1 over 8", "FSDP HYBRID_SHARD over groups of 8", "replicated (DDP)".
std::string sharding_text(Sharding sh, std::uint64_t over);

// One state row of a rank and how the caching allocator sees it.
struct StateRow {
  Item item;
  bool host = false;                   // kept in host RAM (offload)
  TensorRun allocation;                // as the allocator sees it (flat buffers are one allocation)
  std::vector<TensorRun> allocations;  // per-tensor allocations (unsharded weights), replacing `allocation`
};

// One pipeline stage's parameters on one tensor-parallel rank, before sharding.
struct StageParameters {
  const ModelSpec& spec;          // the rank's shard of the model
  const WeightsOptions& weights;  // their precision
  LayerSlice slice;               // the stage's layers
  Item weights_row;               // slice_weights(spec, weights, slice): Psi = *weights_row.params
};

struct ShardedStates {
  std::vector<StateRow> rows;               // weights, gradients, master weights, optimizer states
  std::optional<Item> optimizer_workspace;  // the fp32 upcast of 16-bit gradients for the master-weight step
};

// Returns the weights, gradients, master weights and optimizer states of `stage` on one
// rank, split over `shards` as `parallel.sharding` does, the offloaded ones marked host.
// Throws Error(overflow).
ShardedStates sharded_states(const StageParameters& stage, const StateDtypes& dtypes,
                             const ParallelTrainingOptions& parallel, std::uint64_t shards);

// Returns what ZeRO-3 or FSDP gathers to compute `stage` (nothing for the other
// shardings). Throws Error(overflow).
std::optional<Item> gathered_parameters(const StageParameters& stage, const StateDtypes& dtypes, Sharding sharding);

}  // namespace memplan::detail
