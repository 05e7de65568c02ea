// device_map placement: where accelerate's infer_auto_device_map (transformers'
// from_pretrained(device_map=...)) puts each module of a model across GPUs, the CPU and
// disk, after get_balanced_memory has set each GPU's budget.
// docs/estimators.md, "device_map placement", gives the rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memplan/core/bytes.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/core/tensor_run.hpp"
#include "memplan/estimators/weights.hpp"

namespace memplan {

enum class PlacementPolicy {
  balanced,        // device_map="auto" / "balanced": get_balanced_memory, then in order
  balanced_low_0,  // "balanced_low_0": GPU 0 takes as little as possible
  sequential,      // "sequential": fill each GPU in turn
};
std::string to_string(PlacementPolicy policy);  // "balanced", "balanced_low_0", "sequential"
// Accepts "auto" for balanced. Throws Error(invalid_input, key "device_map").
PlacementPolicy parse_placement_policy(std::string_view text);

// A module placed whole, in the order Hugging Face models declare them.
struct PlacementUnit {
  std::string name;  // token_embedding, layers.0, ..., final_norm, lm_head
  Bytes bytes;
  std::uint64_t params = 0;
  std::optional<std::uint64_t> layer;  // block index for layers.N
  std::uint64_t modules = 0;           // parameter-holding modules inside (get_balanced_memory's leaf count)
  std::vector<TensorRun> tensors;      // its weight tensors as allocations
};

// Returns the model's placement units in declaration order: the embedding tables, each
// block (never split: _no_split_modules), the final norm, the LM head (a tied head shares
// the token table and adds nothing), the pooler. Throws Error(overflow).
std::vector<PlacementUnit> placement_units(const ModelSpec& spec, const WeightsOptions& options);

struct PlacementOptions {
  PlacementPolicy policy = PlacementPolicy::balanced;
  std::vector<Bytes> max_memory;    // per GPU, what the loader may use (accelerate's max_memory)
  bool user_max_memory = false;     // given by the user: a single GPU keeps all of it (else 90%)
  std::optional<Bytes> cpu_memory;  // host RAM for offloaded units; unset = unlimited
};

struct Placement {
  std::vector<Bytes> max_memory;  // per GPU after balancing
  Bytes largest_unit;             // the largest unit: kept free on GPU 0 for offloaded layers
  std::vector<int> device;        // per unit: GPU index, -1 = cpu, -2 = disk
  std::vector<Bytes> used;        // per GPU: bytes of weights placed
};

// Returns where accelerate's infer_auto_device_map puts each unit: max_memory balanced by
// get_balanced_memory (per GPU total / n + 1.25 x max(largest block, mean module), the last
// GPU keeping its own), then units in order onto GPU 0, 1, ... with GPU 0 keeping room for
// the largest unit, then the CPU, then disk. Throws Error(invalid_input, key "gpus") with no
// GPUs, Error(overflow).
Placement place_units(const std::vector<PlacementUnit>& units, const PlacementOptions& options);

}  // namespace memplan
