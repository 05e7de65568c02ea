#include "memplan/estimators/caching_allocator.hpp"

#include <algorithm>
#include <string>
#include <tuple>

#include "memplan/core/error.hpp"

namespace memplan {

namespace {

std::uint64_t round_up(std::uint64_t value, std::uint64_t multiple) {
  return checked_mul(ceil_div(value, multiple), multiple, "allocator rounding");
}

// The allocator's request size: at least 512 B, a multiple of 512 B.
std::uint64_t request_size(std::uint64_t bytes) { return round_up(bytes, kAllocatorMinBlock); }

// A new segment for a request of `size` (get_allocation_size).
std::uint64_t segment_size(std::uint64_t size) {
  if (size <= kAllocatorSmallSize) return kAllocatorSmallSegment;
  if (size < kAllocatorMinLargeAlloc) return kAllocatorLargeSegment;
  return round_up(size, kAllocatorRoundLarge);
}

// The replay's blocks: each a piece of one segment, linked to its neighbours there.
class BlockPools {
 public:
  using Pool = std::vector<std::size_t>;

  explicit BlockPools(std::size_t steps) { blocks_.reserve(2 * steps); }

  // Returns the block of `size` bytes it hands out (found or split off a cached block, or
  // the head of a new segment).
  std::size_t allocate(std::uint64_t size) {
    const bool small = size <= kAllocatorSmallSize;
    Pool& pool = small ? small_ : large_;
    const auto it = best_fit(pool, size);
    std::size_t b = 0;
    if (it == pool.end()) {
      const std::uint64_t bytes = segment_size(size);
      reserved_ = checked_add(reserved_, bytes, "reserved bytes");
      largest_segment_ = std::max(largest_segment_, bytes);
      b = blocks_.size();
      blocks_.push_back({bytes, segments_++, 0, kNone, kNone, false, small});
    } else {
      b = *it;
      *it = pool.back();
      pool.pop_back();
    }
    const Block head = blocks_[b];
    const std::uint64_t rest = head.size - size;
    if (small ? rest >= kAllocatorMinBlock : rest > kAllocatorSmallSize) {  // should_split
      const std::size_t tail = blocks_.size();
      blocks_.push_back({rest, head.segment, head.offset + size, b, head.next, true, small});
      if (head.next != kNone) blocks_[head.next].prev = tail;
      blocks_[b].next = tail;
      blocks_[b].size = size;
      pool.push_back(tail);
    }
    blocks_[b].free = false;
    return b;
  }

  // Returns block `b` to its pool, merged with a free neighbour on either side.
  void release(std::size_t b) {
    Pool& pool = blocks_[b].small ? small_ : large_;
    blocks_[b].free = true;
    if (const std::size_t p = blocks_[b].prev; p != kNone && blocks_[p].free) {
      take(pool, p);
      absorb_next(p);
      b = p;
    }
    if (const std::size_t n = blocks_[b].next; n != kNone && blocks_[n].free) {
      take(pool, n);
      absorb_next(b);
    }
    pool.push_back(b);
  }

  std::uint64_t size(std::size_t b) const { return blocks_[b].size; }
  std::uint64_t reserved() const { return reserved_; }
  std::uint64_t largest_segment() const { return largest_segment_; }

 private:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  struct Block {
    std::uint64_t size;
    std::size_t segment;
    std::uint64_t offset;
    std::size_t prev, next;
    bool free;
    bool small;  // in the small pool
  };
  // The smallest free block of `pool` that holds `size`, the lowest address on a tie (the
  // allocator's pools are sets ordered by size, then address). A pool holds a few dozen
  // blocks at most here, so a scan beats a tree.
  Pool::iterator best_fit(Pool& pool, std::uint64_t size) const {
    auto best = pool.end();
    const auto key = [&](std::size_t b) { return std::tuple{blocks_[b].size, blocks_[b].segment, blocks_[b].offset}; };
    for (auto it = pool.begin(); it != pool.end(); ++it) {
      if (blocks_[*it].size >= size && (best == pool.end() || key(*it) < key(*best))) best = it;
    }
    return best;
  }

  static void take(Pool& pool, std::size_t b) {
    const auto it = std::find(pool.begin(), pool.end(), b);
    *it = pool.back();
    pool.pop_back();
  }

  // Folds the block after `b` in its segment into `b`.
  void absorb_next(std::size_t b) {
    const std::size_t n = blocks_[b].next;
    blocks_[b].size += blocks_[n].size;
    blocks_[b].next = blocks_[n].next;
    if (blocks_[n].next != kNone) blocks_[blocks_[n].next].prev = b;
  }

  std::vector<Block> blocks_;
  Pool small_, large_;  // the free blocks of each pool
  std::size_t segments_ = 0;
  std::uint64_t reserved_ = 0;
  std::uint64_t largest_segment_ = 0;
};

}  // namespace

Bytes allocator_reserved(const std::vector<TensorRun>& tensors) {
  std::uint64_t small = 0, medium = 0, large = 0;
  for (const TensorRun& t : tensors) {
    if (t.bytes == 0 || t.count == 0) continue;
    const std::uint64_t rounded = request_size(t.bytes);
    if (rounded <= kAllocatorSmallSize) {
      small = checked_add(small, checked_mul(rounded, t.count, "small allocations"), "small allocations");
    } else if (rounded < kAllocatorMinLargeAlloc) {
      medium = checked_add(medium, checked_mul(rounded, t.count, "medium allocations"), "medium allocations");
    } else {
      const std::uint64_t segment = round_up(rounded, kAllocatorRoundLarge);
      large = checked_add(large, checked_mul(segment, t.count, "large allocations"), "large allocations");
    }
  }
  std::uint64_t reserved = large;
  reserved = checked_add(reserved, round_up(small, kAllocatorSmallSegment), "reserved bytes");
  reserved = checked_add(reserved, round_up(medium, kAllocatorLargeSegment), "reserved bytes");
  return Bytes(reserved);
}

void append_steps(std::vector<AllocatorStep>& steps, const std::vector<AllocatorStep>& more) {
  const std::size_t base = steps.size();
  for (AllocatorStep s : more) {
    if (s.free) s.tensor += base;
    steps.push_back(s);
  }
}

AllocatorReplay replay_caching_allocator(const std::vector<AllocatorStep>& steps) {
  BlockPools pools(steps.size());
  // Each allocating step's block while it lives: kDead before and after, kEmpty for no bytes.
  constexpr std::size_t kDead = static_cast<std::size_t>(-1), kEmpty = kDead - 1;
  std::vector<std::size_t> block_of(steps.size(), kDead);
  std::uint64_t allocated = 0, blocks = 0;
  AllocatorReplay out;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const AllocatorStep& s = steps[i];
    if (!s.free) {
      if (s.bytes == 0) {
        block_of[i] = kEmpty;
        continue;
      }
      block_of[i] = pools.allocate(request_size(s.bytes));
      allocated = checked_add(allocated, s.bytes, "allocated bytes");
      blocks = checked_add(blocks, pools.size(block_of[i]), "allocated blocks");
      if (allocated > out.peak_allocated.count()) {
        out.peak_allocated = Bytes(allocated);
        out.peak_blocks = Bytes(blocks);
      }
      continue;
    }
    if (s.tensor >= i || steps[s.tensor].free || block_of[s.tensor] == kDead) {
      throw Error(ErrorKind::invalid_input,
                  "allocator step " + std::to_string(i) + " frees step " + std::to_string(s.tensor) +
                      ", which is not a live allocation",
                  "steps");
    }
    const std::size_t b = block_of[s.tensor];
    block_of[s.tensor] = kDead;
    if (b == kEmpty) continue;
    allocated -= steps[s.tensor].bytes;
    blocks -= pools.size(b);
    pools.release(b);
  }
  out.reserved = Bytes(pools.reserved());
  out.largest_segment = Bytes(pools.largest_segment());
  return out;
}

}  // namespace memplan
