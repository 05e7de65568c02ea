// The result of a multi-GPU layout: one Breakdown per device role, whichever engine laid
// the workload out (estimators/megatron.hpp for training, plan/layout.hpp for tensor-parallel
// inference, vLLM serving and device_map placement).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/bytes.hpp"
#include "memplan/estimators/serving.hpp"

namespace memplan {

// One device of a layout, or a set of identical ones.
struct DeviceMemory {
  std::string role;               // "stage 0", "every GPU", "gpu 1"
  std::uint64_t count = 1;        // devices this entry stands for
  std::string holds;              // in words: "token_embedding, layers 0-19; 1/8 of each matrix"
  std::string gpu;                // the GPU it is checked against ("" when none was named)
  std::optional<Bytes> capacity;  // that GPU's memory as the driver reports it
  Breakdown breakdown;            // device memory; host rows for what this device keeps in host RAM
  // True when no capacity is set or the total fits in it. Throws Error(overflow).
  bool fits() const;
};

struct LayoutEstimate {
  std::string engine;            // "megatron", "deepspeed", "fsdp", "ddp", "vllm", "accelerate", "tensor_parallel"
  std::string description;       // "t=8 x p=4 x d=2 = 64 GPUs; ZeRO-1"
  std::uint64_t world_size = 1;  // GPUs in all
  std::uint64_t tensor = 1, pipeline = 1, data = 1;
  std::string sharding = "none";
  std::vector<DeviceMemory> devices;       // one per device role
  std::optional<ServingCapacity> serving;  // vLLM
  std::vector<std::string> offloaded;      // placement: what lands on the CPU or disk instead of a GPU
  std::vector<std::string> notes;
  // Returns the index of the device with the largest share of its capacity (the largest
  // total when capacities are not set). Throws Error(overflow).
  std::size_t worst() const;
  // Returns whether the layout fits: every device within its capacity, nothing offloaded,
  // and (vLLM) the KV cache holding a full-length sequence; nullopt when a device has no
  // capacity to check. Throws Error(overflow).
  std::optional<bool> fits() const;
};

}  // namespace memplan
