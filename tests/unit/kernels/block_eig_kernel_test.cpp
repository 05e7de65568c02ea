// Per-block eigenvalues against Eigen's full solver on the whole block-diagonal matrix.
#include "memplan/kernels/block_eig.hpp"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <random>

#include "memplan/core/error.hpp"

namespace memplan {
namespace block_eig_kernel_test {

TEST(BlockEigKernel, MatchesTheFullSolverOnTheBlockDiagonalMatrix) {
  constexpr std::uint64_t count = 6, b = 17;
  std::mt19937 rng(9);
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> blocks(count * b * b);
  Eigen::MatrixXd full = Eigen::MatrixXd::Zero(count * b, count * b);
  for (std::uint64_t c = 0; c < count; ++c) {
    // A Fisher block is a Gram matrix G^T G / S: symmetric positive semi-definite.
    Eigen::MatrixXd g(8, b);
    for (Eigen::Index i = 0; i < g.size(); ++i) g.data()[i] = normal(rng);
    const Eigen::MatrixXd fisher = g.transpose() * g / 8.0;
    Eigen::Map<Eigen::MatrixXd>(blocks.data() + c * b * b, b, b) = fisher;
    full.block(static_cast<Eigen::Index>(c * b), static_cast<Eigen::Index>(c * b), b, b) = fisher;
  }
  std::vector<double> values = block_eigenvalues<double>(blocks, b, count);
  ASSERT_EQ(values.size(), count * b);
  for (std::uint64_t c = 0; c < count; ++c) {  // ascending within each block
    EXPECT_TRUE(std::is_sorted(values.begin() + static_cast<std::ptrdiff_t>(c * b),
                               values.begin() + static_cast<std::ptrdiff_t>((c + 1) * b)));
  }
  std::sort(values.begin(), values.end());
  const Eigen::VectorXd expected =
      Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(full, Eigen::EigenvaluesOnly).eigenvalues();
  for (std::size_t i = 0; i < values.size(); ++i) {
    EXPECT_NEAR(values[i], expected(static_cast<Eigen::Index>(i)),
                1e-10 * (1 + std::abs(expected(static_cast<Eigen::Index>(i)))));
  }
  // Rank 8 per block: 9 of each block's 17 eigenvalues are zero.
  EXPECT_EQ(std::count_if(values.begin(), values.end(), [](double x) { return std::abs(x) < 1e-10; }),
            static_cast<std::ptrdiff_t>(count * 9));
}

TEST(BlockEigKernel, RejectsAWrongLength) {
  const std::vector<float> blocks(2 * 3 * 3 - 1);
  EXPECT_THROW(block_eigenvalues<float>(blocks, 3, 2), Error);
  EXPECT_THROW(block_eigenvalues<float>(blocks, 0, 2), Error);
}

}  // namespace block_eig_kernel_test
}  // namespace memplan
