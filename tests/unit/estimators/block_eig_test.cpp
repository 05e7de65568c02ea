#include "memplan/estimators/block_eig.hpp"

#include <gtest/gtest.h>

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"

namespace memplan {
namespace block_eig_test {

std::uint64_t total(const BlockEigShape& s) {
  const Breakdown b = estimate_block_eig(s);
  testing::expect_consistent(b);
  return b.total().count();
}

TEST(BlockEig, CountsEigenvaluesAndOneSolver) {
  // 64 blocks of 128, fp32: eigenvalues 64 x 128 x 4 = 32,768; solver 128^2 x 4 = 65,536
  // and (3 x 128 - 2) x 4 = 1,528; the blocks themselves 64 x 128^2 x 4 = 4,194,304.
  EXPECT_EQ(total({64, 128, precisions::fp32, false}), 32768ULL + 65536 + 1528);
  EXPECT_EQ(total({64, 128, precisions::fp32, true}), 4194304ULL + 32768 + 65536 + 1528);
}

TEST(BlockEig, LargerNeverCostsLess) {
  std::uint64_t previous = 0;
  for (std::uint64_t b = 1; b <= 512; b *= 2) {
    const std::uint64_t now = total({8, b, precisions::fp32, true});
    EXPECT_GT(now, previous);
    EXPECT_LE(now, total({9, b, precisions::fp32, true}));
    previous = now;
  }
}

TEST(BlockEig, RejectsZeroSizes) {
  EXPECT_THROW(estimate_block_eig({0, 4, precisions::fp32, true}), Error);
  EXPECT_THROW(estimate_block_eig({4, 0, precisions::fp32, true}), Error);
}

}  // namespace block_eig_test
}  // namespace memplan
