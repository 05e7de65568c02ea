// Multi-GPU layouts: how the engines people use spread a model over devices, and what each
// device then holds. Megatron-LM tensor and pipeline parallelism (Shoeybi et al. 2019;
// Narayanan et al. 2021; sequence parallelism, Korthikanti et al. 2022), DeepSpeed ZeRO
// stages 1-3 with CPU offload (Rajbhandari et al. 2020), PyTorch FSDP (Zhao et al. 2023),
// vLLM's KV-cache budget, and accelerate's device_map layer placement.
// docs/estimators.md#parallelism gives every formula and its source.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/core/tensor_run.hpp"
#include "memplan/estimators/overhead.hpp"
#include "memplan/estimators/training.hpp"
#include "memplan/estimators/weights.hpp"

namespace memplan {

// ------------------------------------------------------------------------------------
// Tensor parallelism: one rank's share of the model.

struct TensorShard {
  ModelSpec spec;                  // one rank's model: n_heads / t, KV heads per rank, d_mlp / t, padded vocabulary / t
  std::uint64_t degree = 1;        // t
  std::uint64_t kv_replicas = 1;   // ranks that hold the same KV head (t / n_kv_heads when n_kv_heads < t), else 1
  std::uint64_t padded_vocab = 0;  // the vocabulary after padding, before the split
};

struct TensorShardOptions {
  std::uint64_t degree = 1;          // t
  std::uint64_t vocab_multiple = 1;  // the vocabulary is padded up to a multiple of this, then split t ways
                                     //   (Megatron: 128 x t; vLLM: 64); 1 = no padding
  bool replicate_kv_heads = false;   // n_kv_heads < t: each rank keeps one KV head (vLLM); false: an error (Megatron)
};

// Returns what one of t tensor-parallel ranks holds, as a model spec: attention heads and
// the MLP's intermediate size split t ways (Megatron's column/row-parallel linears), KV
// heads split or replicated, the vocabulary padded and split (vocab-parallel embedding and
// LM head); d_model, norms, position tables, biases of row-parallel outputs and the MoE
// router stay whole (replicated). The shard carries no stored_weights: it is priced from the
// architecture at the requested precision. Throws Error(invalid_input, key "tensor_parallel") when
// t is 0 or does not divide n_heads, n_kv_heads (or, with replication, is not a multiple of
// it), d_mlp or the padded vocabulary; Error(overflow).
TensorShard tensor_parallel_shard(const ModelSpec& spec, const TensorShardOptions& options);

// ------------------------------------------------------------------------------------
// Pipeline parallelism: layers per stage and micro-batches in flight.

enum class PipelineSchedule {
  one_f_one_b,  // "1f1b": PipeDream-Flush (Narayanan et al. 2021), Megatron's default
  gpipe,        // every micro-batch's forward before any backward (Huang et al. 2019)
};
std::string to_string(PipelineSchedule schedule);  // "1f1b", "gpipe"
// Throws Error(invalid_input, key "schedule") listing the accepted names.
PipelineSchedule parse_pipeline_schedule(std::string_view text);

// Returns the layers of each of `stages` pipeline stages, first to last: `requested` when
// given (it must have one positive entry per stage summing to n_layers), else n_layers /
// stages each with the remainder given one layer apiece to the last stages (they hold the
// fewest micro-batches under 1F1B). Throws Error(invalid_input, key "pipeline_parallel" or
// "stage_layers") for 0 stages, more stages than layers, or a list that does not add up.
std::vector<std::uint64_t> pipeline_stage_layers(std::uint64_t n_layers, std::uint64_t stages,
                                                 const std::vector<std::uint64_t>& requested = {});

// Returns the micro-batches whose activations stage `stage` (0-based) of `stages` holds at
// once: GPipe all `micro_batches`; 1F1B min(stages - stage, micro_batches). Throws
// Error(invalid_input) for 0 micro-batches or a stage out of range.
std::uint64_t micro_batches_in_flight(PipelineSchedule schedule, std::uint64_t stages, std::uint64_t stage,
                                      std::uint64_t micro_batches);

// A contiguous part of the model: what one pipeline stage or one GPU of a placement holds.
struct LayerSlice {
  std::uint64_t first_layer = 0;
  std::uint64_t layers = 0;         // transformer blocks first_layer .. first_layer + layers - 1
  bool embeddings = true;           // the token, position and token-type tables (the first stage)
  bool head = true;                 // the final norm, LM head and pooler (the last stage)
  bool tied_head_copy = false;      // a tied LM head keeps its own copy of the token table here (Megatron, p > 1)
};

// Returns component "weights" for the tensors of `slice` of `spec` at `options`, one detail
// row per model component with its parameters and bytes (sub-byte formats rounded up per
// tensor, as estimate_weights). Throws Error(invalid_input, key "layers") for a slice
// outside the model, Error(overflow).
Item slice_weights(const ModelSpec& spec, const WeightsOptions& options, const LayerSlice& slice);
// Returns the slice's weight tensors as allocations, for the caching-allocator model.
std::vector<TensorRun> slice_weight_allocations(const ModelSpec& spec, const WeightsOptions& options,
                                                const LayerSlice& slice);

// ------------------------------------------------------------------------------------
// Data parallelism: replicas, and how ZeRO and FSDP shard the training state.

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

struct ParallelTrainingOptions {
  std::uint64_t tensor = 1;                  // t: Megatron tensor parallelism
  bool sequence_parallel = false;            // Korthikanti et al.: activations replicated across t split along the sequence
  std::uint64_t pipeline = 1;                // p: pipeline stages
  std::vector<std::uint64_t> stage_layers;   // layers per stage, first to last; empty = even (pipeline_stage_layers)
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  std::uint64_t micro_batches = 1;           // m: micro-batches per step per pipeline (TrainingShape.batch sequences each)
  std::uint64_t data = 1;                    // d: data-parallel replicas
  Sharding sharding = Sharding::none;
  std::uint64_t shard_group = 0;             // fsdp_hybrid: ranks per shard group (a node: 8); must divide d
  bool offload_optimizer = false;            // DeepSpeed offload_optimizer: master weights, states, fp32 gradients in host RAM
  bool offload_params = false;               // ZeRO-3 offload_param, or FSDP CPUOffload(offload_params=True)
  std::uint64_t reduce_bucket = 500000000;   // DeepSpeed reduce_bucket_size (elements) of ZeRO-2/3 and offload
  std::uint64_t vocab_multiple = 128;        // Megatron make_vocab_size_divisible_by: vocabulary padded to this x t
};

// One device of a layout, or a set of identical ones.
struct DeviceMemory {
  std::string role;                  // "stage 0", "every GPU", "gpu 1"
  std::uint64_t count = 1;           // devices this entry stands for
  std::string holds;                 // in words: "token_embedding, layers 0-19; 1/8 of each matrix"
  std::string gpu;                   // the GPU it is checked against ("" when none was named)
  std::optional<Bytes> capacity;     // that GPU's memory as the driver reports it
  Breakdown breakdown;               // device memory; host rows for what this device keeps in host RAM
  // True when no capacity is set or the total fits in it. Throws Error(overflow).
  bool fits() const;
};

// vLLM's KV-cache budget on one rank (vllm/v1/worker/gpu_worker.py determine_available_memory).
struct ServingCapacity {
  Bytes capacity;                    // the GPU's memory as the driver reports it
  double gpu_memory_utilization = 0.9;
  Bytes requested;                   // floor(gpu_memory_utilization x capacity)
  Bytes non_kv;                      // weights + activation peak + non-torch allocations
  Bytes kv_budget;                   // requested - non_kv (0 when non_kv is larger)
  Bytes shortfall;                   // non_kv - requested when it is larger, else 0
  Bytes block_bytes;                 // one block: block_size tokens of every layer's keys and values on one rank
  std::uint64_t block_size = 16;
  std::uint64_t blocks = 0;          // floor(kv_budget / block_bytes)
  std::uint64_t tokens = 0;          // blocks x block_size
  std::uint64_t max_model_len = 0;
  std::uint64_t full_sequences = 0;  // floor(tokens / max_model_len): sequences at full length held at once
  // True when the cache holds at least one sequence of max_model_len (vLLM refuses to start otherwise).
  bool holds_a_sequence() const { return max_model_len > 0 && tokens >= max_model_len; }
};

// Returns vLLM's KV budget arithmetic. Throws Error(invalid_input, key
// "gpu_memory_utilization") outside (0, 1], Error(invalid_input) for a zero block size or
// block bytes, Error(overflow).
ServingCapacity vllm_kv_capacity(Bytes capacity, double gpu_memory_utilization, Bytes non_kv, Bytes block_bytes,
                                 std::uint64_t block_size, std::uint64_t max_model_len);

struct LayoutEstimate {
  std::string engine;                     // "megatron", "deepspeed", "fsdp", "ddp", "vllm", "accelerate", "tensor_parallel"
  std::string description;                // "t=8 x p=4 x d=2 = 64 GPUs; ZeRO-1"
  std::uint64_t world_size = 1;           // GPUs in all
  std::uint64_t tensor = 1, pipeline = 1, data = 1;
  std::string sharding = "none";
  std::vector<DeviceMemory> devices;      // one per device role
  std::optional<ServingCapacity> serving; // vLLM
  std::vector<std::string> offloaded;     // placement: what lands on the CPU or disk instead of a GPU
  std::vector<std::string> notes;
  // Returns the index of the device with the largest share of its capacity (the largest
  // total when capacities are not set). Throws Error(overflow).
  std::size_t worst() const;
  // Returns whether the layout fits: every device within its capacity, nothing offloaded,
  // and (vLLM) the KV cache holding a full-length sequence; nullopt when a device has no
  // capacity to check. Throws Error(overflow).
  std::optional<bool> fits() const;
};

// Returns the memory of every device role of a training step laid out as `parallel` asks:
// for each pipeline stage (one role when p = 1), standing for t x d devices: its share of
// the weights (TensorShard, LayerSlice), gradients, fp32 master weights and optimizer
// states as the sharding leaves them (ZeRO: 2Psi + 2Psi + K Psi / N at stage 1 ...), the
// activations of the micro-batches it holds in flight (layer_activations of the shard,
// sequence parallelism splitting the replicated terms), the loss on the last stage, ZeRO-3 /
// FSDP's gathered parameters, and `overhead` when set. Megatron layouts (t > 1 or p > 1)
// count fused norm and GeLU kernels (shape.hf_unfused_ops off). The larger of the
// forward/backward peak and the optimizer step is reported, the other as an alternative
// replacing "total" (phase_forward_backward or phase_optimizer_step). Throws
// Error(invalid_input) naming the key for impossible or unsupported layouts, Error(overflow).
LayoutEstimate estimate_parallel_training(const ModelSpec& spec, const TrainingShape& shape,
                                          const TrainingOptions& training, const ParallelTrainingOptions& parallel,
                                          const std::optional<OverheadOptions>& overhead);

// ------------------------------------------------------------------------------------
// device_map placement (accelerate infer_auto_device_map, transformers from_pretrained).

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
  std::string name;                       // token_embedding, layers.0, ..., final_norm, lm_head
  Bytes bytes;
  std::uint64_t params = 0;
  std::optional<std::uint64_t> layer;     // block index for layers.N
  std::uint64_t modules = 0;              // parameter-holding modules inside (get_balanced_memory's leaf count)
  std::vector<TensorRun> tensors;         // its weight tensors as allocations
};

// Returns the model's placement units in declaration order: the embedding tables, each
// block (never split: _no_split_modules), the final norm, the LM head (a tied head shares
// the token table and adds nothing), the pooler. Throws Error(overflow).
std::vector<PlacementUnit> placement_units(const ModelSpec& spec, const WeightsOptions& options);

struct PlacementOptions {
  PlacementPolicy policy = PlacementPolicy::balanced;
  std::vector<Bytes> max_memory;          // per GPU, what the loader may use (accelerate's max_memory)
  bool user_max_memory = false;           // given by the user: a single GPU keeps all of it (else 90%)
  std::optional<Bytes> cpu_memory;        // host RAM for offloaded units; unset = unlimited
};

struct Placement {
  std::vector<Bytes> max_memory;          // per GPU after balancing
  Bytes largest_unit;                     // the largest unit: kept free on GPU 0 for offloaded layers
  std::vector<int> device;                // per unit: GPU index, -1 = cpu, -2 = disk
  std::vector<Bytes> used;                // per GPU: bytes of weights placed
};

// Returns where accelerate's infer_auto_device_map puts each unit: max_memory balanced by
// get_balanced_memory (per GPU total / n + 1.25 x max(largest block, mean module), the last
// GPU keeping its own), then units in order onto GPU 0, 1, ... with GPU 0 keeping room for
// the largest unit, then the CPU, then disk. Throws Error(invalid_input, key "gpus") with no
// GPUs, Error(overflow).
Placement place_units(const std::vector<PlacementUnit>& units, const PlacementOptions& options);

}  // namespace memplan
