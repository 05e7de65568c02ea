// Weights: the bytes a model's parameters occupy at a storage precision.
#pragma once

#include "memplan/core/breakdown.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/precision.hpp"
#include "memplan/core/tensor_run.hpp"

#include <vector>

namespace memplan {

struct WeightsOptions {
  Precision precision = precisions::bf16;  // storage of every tensor, or of the linear layers when quantised
  Precision unquantized =
      precisions::fp16;           // embeddings, norms, biases, router and LM head when `precision` is quantised
  bool quantize_lm_head = false;  // quantise an untied LM head along with the linear layers
};

// Returns a Breakdown with one component, "weights", whose detail has one row per model
// component (embeddings, attention, mlp or experts and router, norms, lm_head, pooler)
// with its parameter count and bytes. Sub-byte formats are summed in bits and rounded up
// once per tensor. A spec with stored_weights (a .gguf) is priced from those instead: each
// row sums its component's stored bytes, and `options` does not apply. Throws
// Error(overflow) if a count exceeds 64 bits.
Breakdown estimate_weights(const ModelSpec& spec, const WeightsOptions& options = {});

// Returns the bytes of one tensor of `group` at `options`: ceil(bits / 8), with linear layers
// at options.precision and the tensors quantisers leave alone at options.unquantized, as
// estimate_weights counts them. Throws Error(overflow).
std::uint64_t weight_tensor_bytes(const TensorGroup& group, const WeightsOptions& options);

// Returns each weight tensor as an allocation (bytes per tensor, copies), for the
// caching-allocator model; the stored tensors when the spec has stored_weights. Throws
// Error(overflow).
std::vector<TensorRun> weight_allocations(const ModelSpec& spec, const WeightsOptions& options = {});

}  // namespace memplan
