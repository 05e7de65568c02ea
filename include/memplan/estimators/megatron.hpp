// Megatron-style training over t x p x d GPUs: tensor parallelism (one rank's share of the
// model), pipeline parallelism (layers per stage and micro-batches in flight), and the
// training step laid out over both with d data-parallel replicas, whose states ZeRO or FSDP
// may shard (estimators/sharding.hpp). Shoeybi et al. 2019; Narayanan et al. 2021; sequence
// parallelism, Korthikanti et al. 2022. docs/estimators.md#parallelism-multi-gpu-layouts
// gives every formula and its source.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/core/tensor_run.hpp"
#include "memplan/estimators/layout_estimate.hpp"
#include "memplan/estimators/overhead.hpp"
#include "memplan/estimators/sharding.hpp"
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
  std::uint64_t expert_degree = 1;   // e: each MoE layer's routed experts split e ways (expert parallelism)
  bool split_state_space = false;    // state-space mixers split t ways by head (vLLM); false: t > 1 an error
};

// Returns what one of t tensor-parallel ranks holds, as a model spec: attention heads and
// the MLP's intermediate size split t ways (Megatron's column/row-parallel linears), KV
// heads split or replicated, the vocabulary padded and split (vocab-parallel embedding and
// LM head), a MoE layer's expert and shared-expert widths split t ways and its routed
// experts e ways (expert parallelism: the shard's `experts` are the E/e it holds, and its
// router, sized by them, is E/e columns of the d x E one); d_model, norms, position tables,
// biases of row-parallel outputs stay whole (replicated). The shard carries no stored_weights: it is priced from the
// architecture at the requested precision. Throws Error(invalid_input, key "tensor_parallel") when
// t is 0 or does not divide n_heads, n_kv_heads (or, with replication, is not a multiple of
// it), d_mlp, the expert widths or the padded vocabulary, and (key "expert_parallel") when e
// does not divide the experts; Error(overflow). With split_state_space, a state-space mixer
// splits too, as vLLM's do: its inner width, heads and groups (a gated DeltaNet's value and key
// heads) t ways, one group replicated on every rank (vLLM's extra_groups_for_head_shards);
// otherwise a model with state-space layers and t > 1 is refused.
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
  std::uint64_t layers = 0;     // transformer blocks first_layer .. first_layer + layers - 1
  bool embeddings = true;       // the token, position and token-type tables (the first stage)
  bool head = true;             // the final norm, LM head and pooler (the last stage)
  bool tied_head_copy = false;  // a tied LM head keeps its own copy of the token table here (Megatron, p > 1)
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
// The training step over t x p x d GPUs.

struct ParallelTrainingOptions {
  std::uint64_t tensor = 1;        // t: Megatron tensor parallelism
  bool sequence_parallel = false;  // Korthikanti et al.: activations replicated across t split along the sequence
  std::uint64_t pipeline = 1;      // p: pipeline stages
  std::vector<std::uint64_t> stage_layers;  // layers per stage, first to last; empty = even (pipeline_stage_layers)
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  std::uint64_t micro_batches = 1;  // m: micro-batches per step per pipeline (TrainingShape.batch sequences each)
  std::uint64_t data = 1;           // d: data-parallel replicas
  std::uint64_t expert = 1;         // e: expert parallelism within the d replicas: E/e routed experts per GPU
  Sharding sharding = Sharding::none;
  std::uint64_t shard_group = 0;   // fsdp_hybrid: ranks per shard group (a node: 8); must divide d
  bool offload_optimizer = false;  // DeepSpeed offload_optimizer: master weights, states, fp32 gradients in host RAM
  bool offload_params = false;     // ZeRO-3 offload_param, or FSDP CPUOffload(offload_params=True)
  std::uint64_t reduce_bucket = 500000000;  // DeepSpeed reduce_bucket_size (elements) of ZeRO-2/3 and offload
  std::uint64_t vocab_multiple = 128;       // Megatron make_vocab_size_divisible_by: vocabulary padded to this x t
};

// Returns the memory of every device role of a training step laid out as `parallel` asks:
// for each pipeline stage (one role when p = 1), standing for t x d devices: its share of
// the weights (TensorShard, LayerSlice), gradients, fp32 master weights and optimizer
// states as the sharding leaves them (ZeRO: 2Psi + 2Psi + K Psi / N at stage 1 ...), the
// activations of the micro-batches it holds in flight (layer_activations of the shard,
// sequence parallelism splitting the replicated terms), the loss on the last stage, ZeRO-3 /
// FSDP's gathered parameters, and `overhead` when set. Megatron layouts (t > 1 or p > 1)
// count fused norm, GeLU and softmax kernels (shape.hf_unfused_ops and softmax_fp32 off) and,
// with bf16 weights and training.grad_precision unset, fp32 gradients. The larger of the
// forward/backward peak and the optimizer step is reported, the other as an alternative
// replacing "total" (phase_forward_backward or phase_optimizer_step). Throws
// Error(invalid_input) naming the key for impossible or unsupported layouts, Error(overflow).
LayoutEstimate estimate_parallel_training(const ModelSpec& spec, const TrainingShape& shape,
                                          const TrainingOptions& training, const ParallelTrainingOptions& parallel,
                                          const std::optional<OverheadOptions>& overhead);

}  // namespace memplan
