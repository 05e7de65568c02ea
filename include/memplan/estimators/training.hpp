// Training: gradients, optimizer states, fp32 master weights, LoRA/QLoRA adapters, the
// activations kept for backward (Korthikanti et al. 2022, term by term) with
// recomputation, the fp32 loss, and the peak over the phases of a step (forward,
// backward, optimizer step). Also the gradient pass every gradient-based analysis runs
// (optimizer none), and the double backward of a Hessian- or Fisher-vector product.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/core/precision.hpp"
#include "memplan/core/tensor_run.hpp"
#include "memplan/estimators/weights.hpp"

namespace memplan {

enum class Optimizer {
  none,              // gradients only (an analysis's gradient pass): no state, no step
  sgd,               // no state
  sgd_momentum,      // one momentum buffer
  adam,              // exp_avg and exp_avg_sq
  adamw,             // as adam (decoupled weight decay needs no state)
  adam_8bit,         // bitsandbytes: two uint8 states + an fp32 absmax per 256; tensors < 4096 elements stay 32-bit
  adafactor,         // Hugging Face Adafactor (beta1=None): row and column second moments of each matrix
  paged_adamw,       // bitsandbytes PagedAdamW: fp32 states, those of tensors of 1e5+ elements in unified memory
  paged_adamw_8bit,  // bitsandbytes PagedAdamW8bit: adam_8bit's states, paged as paged_adamw's
};
std::string to_string(Optimizer optimizer);
// Throws Error(invalid_input, key "optimizer") listing the accepted names.
Optimizer parse_optimizer(std::string_view text);
std::vector<std::string> optimizer_names();

// How torch.optim runs Adam's step (its `foreach` and `fused` arguments).
enum class OptimizerImpl {
  automatic,  // what the stated PyTorch picks on CUDA: the per-parameter loop before 2.0, foreach from 2.0
  foreach,    // _multi_tensor_adam(w): intermediates the size of every parameter
  fused,      // fused=True: one kernel, no intermediates
  loop,       // foreach=False (_single_tensor_adam(w)): two temporaries the size of one tensor
};
std::string to_string(OptimizerImpl impl);
// Throws Error(invalid_input, key "optimizer_impl") listing the accepted names.
OptimizerImpl parse_optimizer_impl(std::string_view text);

// How a training step mixes precisions: one named recipe each (docs/estimators.md, "Mixed
// precision"), resolved by the plan into the weights', activations', gradients' and master
// copy's dtypes.
enum class MixedPrecision {
  amp,     // torch.autocast over fp32 weights: fp32 weights, gradients and states; each matmul
           //   casts its weight and input to the compute dtype (bf16, or fp16 with a GradScaler)
  master,  // 16-bit weights and gradients, an fp32 master copy the optimizer updates (DeepSpeed,
           //   Megatron-LM with fp32 gradients, Apex O2)
  pure,    // 16-bit weights, gradients and optimizer states; no master copy
  fp32,    // no mixed precision: fp32 (TF32 matmuls) throughout
};
std::string to_string(MixedPrecision mode);
// Throws Error(invalid_input, key "mixed_precision") listing the accepted names.
MixedPrecision parse_mixed_precision(std::string_view text);

// A PyTorch release, for behaviour that changed between releases.
struct TorchVersion {
  std::uint32_t major = 2;
  std::uint32_t minor = 5;
  auto operator<=>(const TorchVersion&) const = default;
};
// Parses "2.1" or "1.13" (a patch level, "2.1.2", is read and ignored). Throws
// Error(invalid_input, key "torch_version").
TorchVersion parse_torch_version(std::string_view text);

enum class Recompute {
  none,       // every layer keeps all its activations
  selective,  // the attention core (the a*s^2 terms) is recomputed (Korthikanti et al.)
  full,       // each layer keeps its input only; one layer is recomputed at a time in backward
};
std::string to_string(Recompute recompute);
// Throws Error(invalid_input, key "recompute") listing the accepted names.
Recompute parse_recompute(std::string_view text);
// True for the activations of the attention core (softmax output, dropout mask and output,
// 16-bit probabilities): the a*s^2 terms Recompute::selective drops.
bool recomputed_by_selective(const std::string& activation);

// What one forward pass runs on: shapes and dtypes.
struct TrainingShape {
  std::uint64_t batch = 1;               // b: sequences per micro-batch
  std::uint64_t seq = 2048;              // s: tokens per sequence (an encoder-decoder's target)
  std::uint64_t source = 0;              // an encoder-decoder's source positions per sequence; 0: a decoder
  std::uint64_t images = 0;              // a vision-language model's images per sequence (their tokens in seq)
  ImageGrid image;                       // one of them as the tower sees it
  WeightsOptions weights;                // storage of the (base) weights
  Precision compute = precisions::bf16;  // activation dtype
  bool flash_attention = true;           // fused attention (FlashAttention, SDPA): no a*s^2 tensors kept
  bool softmax_fp32 = false;             // eager attention: softmax in fp32 plus a 16-bit copy (Hugging Face eager)
  bool dropout = false;                  // dropout layers (GPT-3/Megatron): 1-byte masks and dropout outputs
  double expert_capacity_factor = 0;     // MoE: each expert's tokens padded to ceil(k*s*b/E * factor) slots
                                         //   (Megatron-core's get_capacity); 0 = dropless, k*s*b rows in all
  bool hf_unfused_ops = true;            // Hugging Face's RMSNorm and gelu_new are written as PyTorch ops and
                                         //   keep extra tensors for backward (measured: docs/accuracy.md)
  bool autocast = false;                 // torch.autocast over fp32 weights: the residual stream and norms
                                         //   stay fp32, each matmul keeps its own 16-bit copy of its input
                                         //   and of its weight (MixedPrecision::amp)
  bool frozen_base = false;              // LoRA: the base's weights need no gradient (set from the options)
  bool frozen_down_proj = false;         // LoRA without an adapter on the MLP's down projection (set from the options)
};

struct LoraOptions {
  std::uint64_t rank = 0;  // r; 0 = full fine-tuning
  std::vector<std::string> targets = {
      "q", "v"};  // projections with adapters (PEFT's Llama default q_proj, v_proj); "all" = every linear
  Precision dtype = precisions::fp32;  // adapter weights (PEFT autocast_adapter_dtype upcasts them to fp32)
};

struct TrainingOptions {
  Optimizer optimizer = Optimizer::adamw;
  std::optional<Precision>
      grad_precision;          // unset: the trainable weights' dtype (16-bit gradients: Adam 16 B/param; fp32: 18)
  bool master_weights = true;  // fp32 master copy of 16-bit trainable weights (Megatron, DeepSpeed, AMP)
  OptimizerImpl optimizer_impl = OptimizerImpl::automatic;  // torch.optim's step (assumed fused with master weights)
  TorchVersion torch_version;  // picks the automatic implementation and foreach Adam's intermediates (2 before 2.1)
  std::uint64_t grad_accumulation = 1;    // micro-batches per step; > 1 keeps the gradients through every forward
  bool keep_grads = false;                // zero_grad(set_to_none=False): gradients stay allocated between steps
  Recompute recompute = Recompute::none;  // activation recomputation (checkpointing)
  LoraOptions lora;              // rank > 0: the base is frozen and only adapters train (QLoRA with a 4-bit base)
  bool double_backward = false;  // a Hessian/Fisher-vector product: backward with create_graph, then a second backward
  bool router_aux_loss = false;  // MoE: output_router_logits, transformers' load_balancing_loss_func at the loss
  std::vector<Item> extra;       // analysis state held through every phase (Fisher blocks, Lanczos vectors, ...)
};

// Returns "layer_activations": the tensors one transformer block keeps for backward at
// `shape` with no recomputation, one detail row per term (norm inputs, q, k, v, softmax
// output, dropout masks, MLP intermediates, ...). For a GPT-3 layer (LayerNorm, 4h
// GeLU MLP, dropout, eager 16-bit softmax) the rows sum to Korthikanti et al.'s
// s*b*h*(34 + 5*a*s/h) bytes. A model with experts gets its MoE block unless `dense_block`
// asks for one of its dense blocks (DeepSeek's first_k_dense_replace layers); `mixer` asks
// for a state-space layer's block (its mixer's tensors in place of the attention's) or an
// MLP alone. A model with layers that are an MLP alone (Nemotron-H) has no MLP in its
// attention and state-space blocks. Throws Error(invalid_input), Error(overflow).
enum class BlockMixer { attention, ssm, parallel, none };  // parallel: both side by side (Falcon-H1)
Item layer_activations(const ModelSpec& spec, const TrainingShape& shape, bool dense_block = false,
                       BlockMixer mixer = BlockMixer::attention);

// One candidate peak: the components alive at that moment.
struct TrainingPhase {
  std::string name;    // forward, backward_top, backward_bottom, backward_end, optimizer_step, hessian_vector_product
  std::string moment;  // in words: "at the loss, all activations kept"
  std::vector<Item>
      components;   // weights, master_weights, optimizer_states, gradients, activations, loss, workspaces, extra
  Bytes transient;  // bytes freed after the phase (what the fragmentation margin applies to)
  // Returns the checked sum of the components. Throws Error(overflow).
  Bytes total() const;
};

struct TrainingEstimate {
  std::vector<TrainingPhase> phases;
  std::size_t peak = 0;                // index of the largest phase
  std::uint64_t trainable_params = 0;  // adapters under LoRA, else every parameter
  std::vector<Item> host;              // what may live in host RAM: a paged optimizer's paged states
  std::vector<TensorRun>
      persistent;  // allocations kept across steps (weights, master, states), for the allocator model
};

// Returns every phase of one training step (or gradient pass) of `spec` at `shape`.
// Throws Error(invalid_input) naming the key (a quantised base without LoRA, unknown
// LoRA targets, grad_accumulation 0) and Error(overflow).
TrainingEstimate estimate_training_phases(const ModelSpec& spec, const TrainingShape& shape,
                                          const TrainingOptions& options);

// Returns the peak phase as a Breakdown, the other phases' totals as alternatives that
// replace "total" (the whole plan at another moment). Throws as estimate_training_phases.
Breakdown estimate_training(const ModelSpec& spec, const TrainingShape& shape, const TrainingOptions& options);

// Returns the trainable parameters under `options.lora` (every parameter without LoRA).
// Throws Error(invalid_input, key "lora_targets") for a target the model does not have.
std::uint64_t trainable_parameters(const ModelSpec& spec, const LoraOptions& lora);

}  // namespace memplan
