// Block eigendecomposition: the memory of the per-block spectrum of a block-diagonal
// curvature approximation (the per-block Fisher spectrum), one b x b block at a time.
#pragma once

#include <cstdint>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/precision.hpp"

namespace memplan {

struct BlockEigShape {
  std::uint64_t blocks = 1;            // number of diagonal blocks
  std::uint64_t block_size = 1;        // b: each block is b x b
  Precision dtype = precisions::fp32;  // element type of the blocks and the eigenvalues
  bool include_inputs = true;          // count the blocks themselves (blocks * b * b)
};

// Returns a Breakdown with one component, "block_eig", whose detail lists the inputs (when
// included), the blocks * b eigenvalues, and one reused solver's workspace: the b x b
// matrix it tridiagonalises in place and its O(b) vectors (eigenvalues b, off-diagonal
// b - 1, Householder coefficients b - 1), as Eigen's SelfAdjointEigenSolver holds them.
// Throws Error(invalid_input) when blocks or b is 0, Error(overflow).
Breakdown estimate_block_eig(const BlockEigShape& shape);

}  // namespace memplan
