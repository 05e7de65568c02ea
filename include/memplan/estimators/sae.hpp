// Sparse autoencoder (SAE) training: the interpretability compute guide's formula where its assumptions hold, and what
// real SAE training adds (the activation store, top-k, tied decoders, dead-feature
// counters, the forward tensors a training step really keeps).
#pragma once

#include <cstdint>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/precision.hpp"
#include "memplan/estimators/training.hpp"

namespace memplan {

struct SaeOptions {
  std::uint64_t d_in = 0;                     // width of the hooked activation; 0 = the model's d_model
  std::uint64_t expansion = 8;                // dictionary size F = expansion x d_in
  std::uint64_t features = 0;                 // F directly; 0 = expansion x d_in
  std::uint64_t batch_tokens = 4096;          // tokens per training step (SAELens train_batch_size_tokens)
  Precision dtype = precisions::fp32;         // SAE parameters and activations (SAELens dtype float32)
  Optimizer optimizer = Optimizer::adam;      // Adam: 2 states per parameter
  std::uint64_t top_k = 0;                    // 0 = ReLU + L1 penalty; k = TopK SAE (k active latents per token)
  bool tied = false;                          // W_dec = W_enc^T: no separate decoder matrix
  std::uint64_t buffer_tokens = 262144;       // activation store (SAELens: 64 batches x 32 prompts x 128 tokens)
  Precision buffer_dtype = precisions::fp32;  // activation store dtype
  bool dead_feature_tracking = true;          // act_freq_scores and n_forward_passes_since_fired: 2 x F x 4 B
  bool seed_formula =
      false;  // the interpretability compute guide's estimate_sae_memory exactly (needs batch and seq below)
  std::uint64_t seed_batch = 1;  // the interpretability compute guide's batch_size (seed_formula only)
  std::uint64_t seed_seq = 128;  // the interpretability compute guide's seq_length (seed_formula only)
};

// Returns the dictionary size F. Throws Error(invalid_input, key "sae_expansion") when it is 0.
std::uint64_t sae_features(const SaeOptions& options, std::uint64_t d_in);

// Returns the SAE's own memory for one training step. With seed_formula, components
// sae_parameters, sae_activations, sae_gradients (= parameters + activations) and
// sae_optimizer (2 x parameters) as the interpretability compute guide computes them. Otherwise sae_parameters,
// sae_gradients, sae_optimizer_states, sae_activations (the tensors a step keeps for
// backward), sae_backward_workspace, activation_store and dead_feature_counters.
// `d_in` must be set (options.d_in or the argument). Throws Error(invalid_input) on zero
// sizes, Error(overflow).
Breakdown estimate_sae(const SaeOptions& options, std::uint64_t d_in);

}  // namespace memplan
