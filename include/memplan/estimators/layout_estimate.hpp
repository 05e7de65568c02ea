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

// llama.cpp's figures beside its devices.
struct LlamaCppLayout {
  std::uint64_t n_ctx = 0;         // -c
  std::uint64_t cells = 0;         // KV cells per full-attention layer and sequence
  std::uint64_t window_cells = 0;  // a sliding-window layer's cells per stream; 0 = none
  std::uint64_t state_cells = 0;   // a state-space model's recurrent state slots (one per sequence)
  std::uint64_t n_seq = 1;         // -np: sequences, each with its own cells unless kv_unified
  std::uint64_t n_ubatch = 0;      // -ub
  std::uint64_t gpu_layers = 0;    // repeating layers on the GPU
  std::uint64_t n_layers = 0;
  bool output_on_gpu = false;
  bool gpu = false;  // false: the plan is for the CPU alone
  std::string cache_type_k, cache_type_v;
  bool flash_attn = true;
  bool kv_unified = false;      // one cache stream for all sequences
  bool server = false;          // llama-server's rules
  std::uint64_t outputs = 0;    // the micro-batch's outputs the compute buffer holds
  std::string draft;            // the draft model's name; empty = none
  std::uint64_t n_cpu_moe = 0;  // --n-cpu-moe: the first N layers' experts in host memory
};

struct LayoutEstimate {
  std::string engine;            // "megatron", "deepspeed", "fsdp", "ddp", "vllm", "accelerate", "tensor_parallel"
  std::string description;       // "t=8 x p=4 x d=2 = 64 GPUs; ZeRO-1"
  std::uint64_t world_size = 1;  // GPUs in all
  std::uint64_t tensor = 1, pipeline = 1, data = 1;
  std::string sharding = "none";
  std::vector<DeviceMemory> devices;       // one per device role
  std::optional<ServingCapacity> serving;  // vLLM
  std::optional<LlamaCppLayout> llama_cpp;
  std::vector<std::string> offloaded;  // placement: what lands on the CPU or disk instead of a GPU
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
