#include "memplan/estimators/lanczos.hpp"

#include <gtest/gtest.h>

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"

namespace memplan {
namespace lanczos_test {

std::uint64_t total(const LanczosShape& s) {
  const Breakdown b = estimate_lanczos(s);
  testing::expect_consistent(b);
  return b.total().count();
}

TEST(Lanczos, ReorthogonalisedKeepsTheWholeBasis) {
  // n = 1,000,000 parameters, m = 100 steps, k = 10, fp32:
  // basis 101 x 1e6 x 4 = 404,000,000; work 4,000,000; projections 101 x 4 = 404;
  // tridiagonal 200 x 4 = 800. (The Ritz step afterwards: (199 + 10) x 4 = 836, less.)
  EXPECT_EQ(total({1000000, 100, 10, true, precisions::fp32}), 404000000ULL + 4000000 + 404 + 800);
}

TEST(Lanczos, PlainKeepsThreeVectors) {
  EXPECT_EQ(total({1000000, 100, 10, false, precisions::fp32}), 12000000ULL + 800);
  // bf16 halves every row.
  EXPECT_EQ(total({1000000, 100, 10, false, precisions::bf16}), 6000000ULL + 400);
}

TEST(Lanczos, MoreStepsOrALargerOperatorNeverCostLess) {
  for (const bool reorth : {true, false}) {
    std::uint64_t previous = 0;
    for (std::uint64_t m = 1; m <= 64; m *= 2) {
      const std::uint64_t now = total({4096, m, 4, reorth, precisions::fp32});
      EXPECT_GE(now, previous);
      EXPECT_LE(now, total({8192, m, 4, reorth, precisions::fp32}));
      previous = now;
    }
  }
}

TEST(Lanczos, RejectsImpossibleShapes) {
  EXPECT_THROW(estimate_lanczos({0, 1, 1, true, precisions::fp32}), Error);
  EXPECT_THROW(estimate_lanczos({10, 11, 1, true, precisions::fp32}), Error);
  EXPECT_THROW(estimate_lanczos({10, 5, 0, true, precisions::fp32}), Error);
  EXPECT_THROW(estimate_lanczos({1ULL << 62, 8, 1, true, precisions::fp32}), Error);  // overflow
}

}  // namespace lanczos_test
}  // namespace memplan
