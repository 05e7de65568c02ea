#include "memplan/estimators/caching_allocator.hpp"

#include <gtest/gtest.h>

#include "memplan/core/error.hpp"

namespace memplan {
namespace caching_allocator_test {

constexpr std::uint64_t MiB = 1ULL << 20;

AllocatorStep alloc(std::uint64_t bytes) { return {.free = false, .bytes = bytes, .tensor = 0}; }
AllocatorStep release(std::size_t step) { return {.free = true, .bytes = 0, .tensor = step}; }

TEST(AllocatorReserved, FollowsPytorchSegmentRules) {
  EXPECT_EQ(allocator_reserved({{1000, 1}}).count(), 2 * MiB);        // 1,024 B in a 2 MiB small segment
  EXPECT_EQ(allocator_reserved({{8192, 65}}).count(), 2 * MiB);       // 65 norms of 8 KiB share one segment
  EXPECT_EQ(allocator_reserved({{3 * MiB, 3}}).count(), 20 * MiB);    // 3 x 3 MiB in one 20 MiB segment
  EXPECT_EQ(allocator_reserved({{32 * MiB, 4}}).count(), 128 * MiB);  // large, already 2 MiB multiples
  // GPT-2's fp16 token embedding, 50257 x 768 x 2 = 77,194,752 B, gets a segment of
  // ceil(77,194,752 / 2 MiB) = 37 x 2 MiB = 77,594,624 B.
  EXPECT_EQ(allocator_reserved({{77194752, 1}}).count(), 77594624ULL);
  EXPECT_EQ(allocator_reserved({}).count(), 0U);
}

TEST(CachingAllocatorReplay, AFreedBlockTooSmallForTheNextRequestStaysReserved) {
  // 30 MiB freed cannot hold 40 MiB: a second segment, 30 + 40 reserved for 40 allocated.
  const AllocatorReplay r = replay_caching_allocator({alloc(30 * MiB), release(0), alloc(40 * MiB)});
  EXPECT_EQ(r.reserved.count(), 70 * MiB);
  EXPECT_EQ(r.peak_allocated.count(), 40 * MiB);
  EXPECT_EQ(r.largest_segment.count(), 40 * MiB);
}

TEST(CachingAllocatorReplay, ALargerFreedBlockIsSplit) {
  // 40 MiB freed holds 30 MiB with 10 MiB left over (more than 1 MiB: split off).
  const AllocatorReplay r = replay_caching_allocator({alloc(40 * MiB), release(0), alloc(30 * MiB)});
  EXPECT_EQ(r.reserved.count(), 40 * MiB);
  EXPECT_EQ(r.peak_blocks.count(), 40 * MiB);  // the 40 MiB tensor's block was the peak
}

TEST(CachingAllocatorReplay, ALiveSplitPieceStrandsItsSegment) {
  // A and B: 40 MiB segments each. C (30 MiB) splits A's freed block: 30 used, 10 free.
  // B freed: 40 free there. D (50 MiB) fits neither 10 nor 40: a third segment.
  const AllocatorReplay r = replay_caching_allocator(
      {alloc(40 * MiB), alloc(40 * MiB), release(0), alloc(30 * MiB), release(1), alloc(50 * MiB)});
  EXPECT_EQ(r.reserved.count(), (40 + 40 + 50) * MiB);
  EXPECT_EQ(r.peak_allocated.count(), 80 * MiB);  // A and B together, or C and D
}

TEST(CachingAllocatorReplay, FreedNeighboursMergeBack) {
  // X and Y are cut from A's 40 MiB block (10 | 10 | 20 free); freed, the three merge back
  // into 40 MiB, which the last request takes whole: no second segment.
  const AllocatorReplay r = replay_caching_allocator(
      {alloc(40 * MiB), release(0), alloc(10 * MiB), alloc(10 * MiB), release(2), release(3), alloc(40 * MiB)});
  EXPECT_EQ(r.reserved.count(), 40 * MiB);
}

TEST(CachingAllocatorReplay, SmallAndMediumRequestsTakeTheirPoolsSegments) {
  // 1,000 B rounds to 1,024 B in a 2 MiB small segment; 1 MiB + 1 B rounds to 1 MiB + 512 B,
  // a large-pool request under 10 MiB: a 20 MiB segment, split.
  const AllocatorReplay r = replay_caching_allocator({alloc(1000), alloc(MiB + 1)});
  EXPECT_EQ(r.reserved.count(), 22 * MiB);
  EXPECT_EQ(r.peak_allocated.count(), 1000 + MiB + 1);
  EXPECT_EQ(r.peak_blocks.count(), 1024 + MiB + 512);
}

TEST(CachingAllocatorReplay, ATailOfAtMostOneMibIsNotSplit) {
  // 11 MiB gets a 12 MiB segment; the 1 MiB left is not more than 1 MiB, so the tensor's
  // block is the whole 12 MiB.
  const AllocatorReplay r = replay_caching_allocator({alloc(11 * MiB)});
  EXPECT_EQ(r.reserved.count(), 12 * MiB);
  EXPECT_EQ(r.peak_blocks.count(), 12 * MiB);
  EXPECT_EQ(r.peak_allocated.count(), 11 * MiB);
}

TEST(CachingAllocatorReplay, RejectsAFreeOfNoLiveAllocation) {
  EXPECT_THROW(replay_caching_allocator({alloc(MiB), release(0), release(0)}), Error);
  EXPECT_THROW(replay_caching_allocator({release(0)}), Error);
  EXPECT_THROW(replay_caching_allocator({alloc(MiB), release(2), alloc(MiB)}), Error);
  EXPECT_EQ(replay_caching_allocator({alloc(0), release(0)}).reserved.count(), 0U);
}

}  // namespace caching_allocator_test
}  // namespace memplan
