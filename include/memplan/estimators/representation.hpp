// Representation analyses of TensorScope: embedding singularities, the fiber-bundle test, the
// superposition regime and linear CKA, each sized from its shapes (samples, hidden size,
// vocabulary, features).
#pragma once

#include <cstdint>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/core/precision.hpp"

namespace memplan {

struct RepresentationOptions {
  std::uint64_t samples = 1000;        // N: activation vectors analysed (TensorScope's examples use 1000)
  std::uint64_t neighbours = 100;      // k: nearest neighbours of each point for local PCA
  std::uint64_t features = 0;          // superposition: F candidate features; 0 = 8 x d_model
  std::uint64_t chunk = 1024;          // rows per pairwise-distance chunk
  bool overlap = false;                // superposition: keep the F x F feature-overlap (interference) matrix
  Precision dtype = precisions::fp32;  // analysis arithmetic (TensorScope assumes float32)
};

// Returns component "embedding_singularities": the token embedding upcast (V x d), one
// chunk of token-to-token distances (chunk x V), the chunk's k nearest neighbours (values
// and int64 indices), one token's neighbourhood (k x d), its Gram or covariance
// (min(k, d)^2) and that matrix's eigendecomposition. Throws Error(invalid_input), Error(overflow).
Breakdown estimate_embedding_singularities(const ModelSpec& spec, const RepresentationOptions& options);

// Returns component "fiber_bundle": N points (N x d), their distances (N x N), one
// point's neighbourhood (k x d), its d x d local covariance and that matrix's
// eigendecomposition (O(N d^3) time over the points).
Breakdown estimate_fiber_bundle(const ModelSpec& spec, const RepresentationOptions& options);

// Returns component "superposition": activations (N x d), candidate feature directions
// (F x d), feature activations (N x F) and, with overlap, the F x F interference matrix.
Breakdown estimate_superposition(const ModelSpec& spec, const RepresentationOptions& options);

// Returns component "cka": the residual stream of every layer boundary (n_layers + 1) for
// N samples, the cheaper of the two linear-CKA forms (centred N x N Gram matrices of every
// layer, or the d x d cross-covariances of one pair at a time; the other is an
// alternative) and the (n_layers + 1)^2 similarity matrix.
Breakdown estimate_cka(const ModelSpec& spec, const RepresentationOptions& options);

}  // namespace memplan
