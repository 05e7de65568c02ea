#include "memplan/estimators/serving.hpp"

#include <gtest/gtest.h>

#include "layout_fixtures.hpp"

namespace memplan {
namespace serving_test {

using testing::expect_invalid;

// ------------------------------------------------------------------- vLLM arithmetic

TEST(Serving, KvBudgetIsWhatUtilizationLeaves) {
  // 80 GiB at 0.9: ceil(85,899,345,920 x 0.9) = 77,309,411,328; less 40e9 of weights and
  // activations = 37,309,411,328; blocks of 1,310,720 B: 28,464 (remainder 1,077,248).
  const ServingCapacity c = vllm_kv_capacity(Bytes(85899345920ULL), 0.9, Bytes(40000000000ULL), Bytes(1310720), 16,
                                             4096);
  EXPECT_EQ(c.requested.count(), 77309411328ULL);
  EXPECT_EQ(c.kv_budget.count(), 37309411328ULL);
  EXPECT_EQ(c.blocks, 28464u);
  EXPECT_EQ(c.tokens, 28464u * 16);
  EXPECT_EQ(c.full_sequences, 28464u * 16 / 4096);  // 111
  EXPECT_TRUE(c.holds_a_sequence());
  const ServingCapacity none = vllm_kv_capacity(Bytes(85899345920ULL), 0.5, Bytes(50000000000ULL), Bytes(1310720), 16,
                                                4096);
  EXPECT_EQ(none.blocks, 0u);
  EXPECT_EQ(none.shortfall.count(), 50000000000ULL - 42949672960ULL);
  EXPECT_FALSE(none.holds_a_sequence());
  expect_invalid([] { vllm_kv_capacity(Bytes(1), 0.0, Bytes(0), Bytes(1), 16, 1); }, "gpu_memory_utilization");
  expect_invalid([] { vllm_kv_capacity(Bytes(1), 1.5, Bytes(0), Bytes(1), 16, 1); }, "gpu_memory_utilization");
}

}  // namespace serving_test
}  // namespace memplan
