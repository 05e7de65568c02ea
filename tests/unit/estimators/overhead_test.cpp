#include "memplan/estimators/overhead.hpp"

#include <gtest/gtest.h>

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"

namespace memplan {
namespace overhead_test {

constexpr std::uint64_t MiB2 = 2ULL << 20;

TEST(Overhead, RowsAndDefaults) {
  OverheadOptions o;
  const Breakdown b = estimate_overhead(o, {{1000, 1}}, {Bytes(1000), {}});
  testing::expect_consistent(b);
  const Item& overhead = b.components.front();
  ASSERT_EQ(overhead.detail.size(), 4U);
  EXPECT_EQ(overhead.detail[0].bytes.count(), 512ULL << 20);                  // cuda_context
  EXPECT_EQ(overhead.detail[1].bytes.count(), 2 * (4ULL << 20) + 8 * 16384);  // cuBLAS :4096:2:16:8
  EXPECT_EQ(overhead.detail[2].bytes.count(), MiB2 - 1000);                   // allocator rounding
  EXPECT_EQ(overhead.detail[3].bytes.count(), 100U);                          // 10% of 1000
  EXPECT_EQ(overhead.low->count(), (256ULL << 20) + 2 * (4ULL << 20) + 8 * 16384 + MiB2 - 1000);
  EXPECT_EQ(overhead.high->count(), (1024ULL << 20) + 2 * (4ULL << 20) + 8 * 16384 + MiB2 - 1000 + 250);
  o.hopper_or_newer = true;
  EXPECT_EQ(estimate_overhead(o, {}, {}).components.front().detail[1].bytes.count(), 8 * (4ULL << 20));
}

TEST(Overhead, OnTheCpuOnlyTheFragmentationMargin) {
  OverheadOptions o;
  o.host = true;
  const Breakdown b = estimate_overhead(o, {{1000, 1}}, {Bytes(1000), {}});
  testing::expect_consistent(b);
  const Item& overhead = b.components.front();
  ASSERT_EQ(overhead.detail.size(), 1U);
  EXPECT_EQ(overhead.detail[0].name, "fragmentation");
  EXPECT_EQ(overhead.bytes.count(), 100U);  // 10% of 1000; no context, workspace or allocator rounding
  EXPECT_EQ(overhead_bytes(o, {{1000, 1}}, {Bytes(1000), {}}).total().count(), 100U);
}

TEST(Overhead, RejectsAFractionOutsideZeroToOne) {
  OverheadOptions o;
  o.fragmentation = 1.5;
  EXPECT_THROW(estimate_overhead(o, {}, {}), Error);
}

}  // namespace overhead_test
}  // namespace memplan
