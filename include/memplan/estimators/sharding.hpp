// Data parallelism's sharded training state: DeepSpeed ZeRO stages 1-3 with CPU offload
// (Rajbhandari et al. 2020; Ren et al. 2021) and PyTorch FSDP (Zhao et al. 2023), as
// estimate_parallel_training (estimators/megatron.hpp) lays them out on each rank: which of
// the parameters, gradients, fp32 master weights and optimizer states are split N ways,
// which go to host RAM, and what is gathered to compute.
// docs/estimators.md#data-parallelism-ddp-zero-stages-13-offload-fsdp gives the formulas.
#pragma once

#include <string>
#include <string_view>

namespace memplan {

enum class Sharding {
  none,          // plain data parallelism (DDP): every rank holds every state
  zero1,         // DeepSpeed ZeRO-1 (and Megatron's distributed optimizer): optimizer states and master weights sharded
  zero2,         // ZeRO-2: gradients too
  zero3,         // ZeRO-3: parameters too, all-gathered module by module
  fsdp_full,     // FSDP FULL_SHARD: parameters, gradients and optimizer states sharded; units gathered one by one
  fsdp_grad_op,  // FSDP SHARD_GRAD_OP: parameters stay gathered from forward to backward
  fsdp_hybrid,   // FSDP HYBRID_SHARD: FULL_SHARD within a shard group, replicated across groups
};
std::string to_string(Sharding sharding);  // "none", "zero1", ..., "fsdp_full", "fsdp_grad_op", "fsdp_hybrid"
// Throws Error(invalid_input, key "sharding") listing the accepted names.
Sharding parse_sharding(std::string_view text);

// True for the three FSDP strategies.
bool is_fsdp(Sharding sharding);

}  // namespace memplan
