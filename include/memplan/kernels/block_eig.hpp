// Block eigendecomposition: the spectrum of a block-diagonal matrix (a per-block Fisher
// or Gauss-Newton approximation) one b x b block at a time.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace memplan {

// Returns the eigenvalues of `count` symmetric b x b blocks stored one after another
// (count*b*b elements; each block row- or column-major, as it is symmetric): count*b
// values, block by block, ascending within a block. One Eigen SelfAdjointEigenSolver
// is reused for every block, so the workspace is one b x b matrix plus O(b) vectors
// (estimate_block_eig in memplan/estimators/block_eig.hpp). Instantiated for float and
// double. Throws Error(invalid_input) when b or count is 0 or the span has the wrong length.
template <typename T>
std::vector<T> block_eigenvalues(std::span<const T> blocks, std::uint64_t block_size, std::uint64_t count);

extern template std::vector<float> block_eigenvalues<float>(std::span<const float>, std::uint64_t, std::uint64_t);
extern template std::vector<double> block_eigenvalues<double>(std::span<const double>, std::uint64_t, std::uint64_t);

}  // namespace memplan
