#include "memplan/estimators/placement.hpp"

#include <gtest/gtest.h>

#include "layout_fixtures.hpp"
#include "reference_models.hpp"

namespace memplan {
namespace placement_test {

using testing::expect_invalid;
using testing::llama2_70b;
using testing::llama2_7b;

// ------------------------------------------------------------------- placement

TEST(Placement, UnitsFollowTheModuleOrder) {
  const std::vector<PlacementUnit> units = placement_units(llama2_70b(), {});
  ASSERT_EQ(units.size(), 1u + 80 + 1 + 1);
  EXPECT_EQ(units.front().name, "token_embedding");
  EXPECT_EQ(units[1].name, "layers.0");
  EXPECT_EQ(units[80].name, "layers.79");
  EXPECT_EQ(units[81].name, "final_norm");
  EXPECT_EQ(units[82].name, "lm_head");
  // One block: 2*8192^2 + 2*8192*1024 + 3*8192*28672 + 2*8192 = 855,654,400 params, bf16; nine modules.
  EXPECT_EQ(units[1].bytes.count(), 2 * 855654400ULL);
  EXPECT_EQ(units[1].modules, 9u);
  // A tied LM head shares the token table: no unit of its own.
  const std::vector<PlacementUnit> gpt2 = placement_units(testing::gpt2(), {});
  EXPECT_EQ(gpt2.back().name, "final_norm");
}

TEST(Placement, Llama70bBalancedOverThreeA100s) {
  // transformers device_map="auto": per GPU total/3 + int(1.25 x one block) =
  // 45,984,432,128 + 2,139,136,000 = 48,123,568,128 for GPUs 0 and 1; GPU 2 keeps its free
  // memory (80 GiB less a 512 MiB context). GPU 0 keeps a block (1,711,308,800) free: the
  // token table and 26 blocks fit in 46,412,259,328; GPU 1 takes 28 blocks; GPU 2 the rest.
  const std::vector<PlacementUnit> units = placement_units(llama2_70b(), {});
  const Bytes free(85899345920ULL - 536870912ULL);
  const Placement p = place_units(units, {PlacementPolicy::balanced, {free, free, free}, false, std::nullopt});
  EXPECT_EQ(p.max_memory[0].count(), 48123568128ULL);
  EXPECT_EQ(p.max_memory[1].count(), 48123568128ULL);
  EXPECT_EQ(p.max_memory[2], free);
  EXPECT_EQ(p.largest_unit.count(), 1711308800ULL);
  EXPECT_EQ(p.device[0], 0);   // token_embedding
  EXPECT_EQ(p.device[26], 0);  // layers.25
  EXPECT_EQ(p.device[27], 1);  // layers.26
  EXPECT_EQ(p.device[54], 1);  // layers.53
  EXPECT_EQ(p.device[55], 2);  // layers.54
  EXPECT_EQ(p.device[82], 2);  // lm_head
  EXPECT_EQ(p.used[0].count(), 524288000ULL + 26 * 1711308800ULL);
}

TEST(Placement, WhatDoesNotFitGoesToTheCpu) {
  // Sequential over two 24 GiB budgets: 140 GB of bf16 weights cannot fit.
  const std::vector<PlacementUnit> units = placement_units(llama2_70b(), {});
  const Bytes budget(24ULL << 30);
  const Placement p = place_units(units, {PlacementPolicy::sequential, {budget, budget}, true, std::nullopt});
  EXPECT_EQ(p.device.back(), -1);  // lm_head on the CPU
  // GPU 0 keeps a block free: (24 GiB - 1,711,308,800 - 524,288,000) / 1,711,308,800 = 13 blocks.
  EXPECT_EQ(p.device[13], 0);
  EXPECT_EQ(p.device[14], 1);
  // With a host budget too small for the rest, the remainder goes to disk.
  const Placement disk = place_units(units, {PlacementPolicy::sequential, {budget, budget}, true, Bytes(8ULL << 30)});
  EXPECT_EQ(disk.device.back(), -2);
  expect_invalid([&] { place_units(units, {}); }, "gpus");
}

TEST(Placement, OneGpuKeepsTenPercent) {
  const std::vector<PlacementUnit> units = placement_units(llama2_7b(), {});
  const Placement p = place_units(units, {PlacementPolicy::balanced, {Bytes(1000)}, false, std::nullopt});
  EXPECT_EQ(p.max_memory[0].count(), 900u);
  const Placement user = place_units(units, {PlacementPolicy::balanced, {Bytes(1000)}, true, std::nullopt});
  EXPECT_EQ(user.max_memory[0].count(), 1000u);
}

}  // namespace placement_test
}  // namespace memplan
