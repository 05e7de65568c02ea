// Every parameter tensor of a model, and exact parameter counts by component.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "memplan/core/model_spec.hpp"

namespace memplan {

enum class TensorRole {
  embedding,  // token, position and token-type tables
  linear,     // a weight matrix of a linear layer (the part quantisers quantise)
  bias,       // a linear layer's bias vector
  norm,       // LayerNorm / RMSNorm weight or bias
  router,     // the MoE router (gate) matrix, kept in 16-bit by quantisers
  lm_head,    // the output projection to the vocabulary, when untied
  ssm,        // a state-space layer's conv1d, A_log, D and dt_bias: not nn.Linear, kept by quantisers
  conv,       // a convolution's kernel (Whisper's audio front end): not nn.Linear, kept by quantisers
};

// A set of identical tensors: `copies` tensors of rows x cols (cols = 1 for vectors).
struct TensorGroup {
  // Names are static text (string literals), so listing a model's tensors allocates once.
  // The breakdown row: embeddings, attention, cross_attention, ssm, mlp, experts, router,
  // norms, lm_head, vision, projector, encoder, pooler.
  std::string_view component;
  std::string_view name;     // tensor within the component: q, k, v, o, up, gate, down, ...
  std::uint64_t rows = 0;    // output features, or table rows
  std::uint64_t cols = 1;    // input features, or table width
  std::uint64_t copies = 1;  // layers (x experts) holding this tensor
  TensorRole role = TensorRole::linear;
  LayerSet layers = LayerSet::none;  // the layers holding it (copies / their number each); none: not per layer
};

// Returns how many copies of `group` each layer holding it has (experts per MoE layer, 1 for
// most); the group's own copies for a group that is not per layer.
std::uint64_t copies_per_layer(const ModelSpec& spec, const TensorGroup& group);

// Returns every parameter tensor of `spec`, grouped, in component order. Assumes a
// validated spec. Throws Error(overflow) if a size exceeds 64 bits.
std::vector<TensorGroup> model_tensors(const ModelSpec& spec);

struct ComponentParams {
  std::string component;
  std::uint64_t params = 0;
};

// Returns the parameter count of each component, in the order model_tensors gives them.
std::vector<ComponentParams> parameters_by_component(const ModelSpec& spec);

// Returns the exact total parameter count (tied matrices counted once).
std::uint64_t count_parameters(const ModelSpec& spec);

// Returns the parameters of block `layer` (its attention, MLP or experts, and norms).
// Throws Error(overflow).
std::uint64_t layer_parameters(const ModelSpec& spec, std::uint64_t layer);

// The multi-token-prediction layers a DeepSeek-V3 checkpoint adds (num_nextn_predict_layers),
// which count_parameters leaves out: each is one more block like the last, eh_proj
// (2·d_model -> d_model), enorm, hnorm and shared_head.norm, and (in the checkpoint) its own
// copies of the token embedding and the LM head. Qwen3-Next's and Qwen3.5's (mtp.*) are the
// same block, fc and three norms, sharing the model's embedding and head.
struct MtpParameters {
  std::uint64_t own = 0;     // the block, eh_proj and the norms
  std::uint64_t stored = 0;  // own plus the embedding and head copies the checkpoint holds
};
// Returns zeros for a spec without mtp_layers. Throws Error(overflow).
MtpParameters mtp_parameters(const ModelSpec& spec);

// Returns the parameter count of one tensor group: copies x rows x cols. Throws Error(overflow).
std::uint64_t group_parameters(const TensorGroup& group);

}  // namespace memplan
