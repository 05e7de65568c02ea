#include "memplan/estimators/overhead.hpp"

#include <gtest/gtest.h>

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"

namespace memplan {
namespace overhead_test {

constexpr std::uint64_t MiB2 = 2ULL << 20;

TEST(AllocatorReserved, FollowsPytorchSegmentRules) {
  EXPECT_EQ(allocator_reserved({{1000, 1}}).count(), MiB2);                 // 1,024 B in a 2 MiB small segment
  EXPECT_EQ(allocator_reserved({{8192, 65}}).count(), MiB2);                // 65 norms of 8 KiB share one segment
  EXPECT_EQ(allocator_reserved({{3ULL << 20, 3}}).count(), 20ULL << 20);    // 3 x 3 MiB in one 20 MiB segment
  EXPECT_EQ(allocator_reserved({{32ULL << 20, 4}}).count(), 128ULL << 20);  // large, already 2 MiB multiples
  // GPT-2's fp16 token embedding, 50257 x 768 x 2 = 77,194,752 B, gets a segment of
  // ceil(77,194,752 / 2 MiB) = 37 x 2 MiB = 77,594,624 B.
  EXPECT_EQ(allocator_reserved({{77194752, 1}}).count(), 77594624ULL);
  EXPECT_EQ(allocator_reserved({}).count(), 0U);
}

TEST(Overhead, RowsAndDefaults) {
  OverheadOptions o;
  const Breakdown b = estimate_overhead(o, {{1000, 1}}, Bytes(1000));
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
  EXPECT_EQ(estimate_overhead(o, {}, Bytes(0)).components.front().detail[1].bytes.count(), 8 * (4ULL << 20));
}

TEST(Overhead, OnTheCpuOnlyTheFragmentationMargin) {
  OverheadOptions o;
  o.host = true;
  const Breakdown b = estimate_overhead(o, {{1000, 1}}, Bytes(1000));
  testing::expect_consistent(b);
  const Item& overhead = b.components.front();
  ASSERT_EQ(overhead.detail.size(), 1U);
  EXPECT_EQ(overhead.detail[0].name, "fragmentation");
  EXPECT_EQ(overhead.bytes.count(), 100U);  // 10% of 1000; no context, workspace or allocator rounding
  EXPECT_EQ(overhead_bytes(o, {{1000, 1}}, Bytes(1000)).total().count(), 100U);
}

TEST(Overhead, RejectsAFractionOutsideZeroToOne) {
  OverheadOptions o;
  o.fragmentation = 1.5;
  EXPECT_THROW(estimate_overhead(o, {}, Bytes(0)), Error);
}

}  // namespace overhead_test
}  // namespace memplan
