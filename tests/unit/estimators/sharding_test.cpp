#include "memplan/estimators/sharding.hpp"

#include <gtest/gtest.h>

#include "breakdown_check.hpp"
#include "layout_fixtures.hpp"
#include "memplan/estimators/megatron.hpp"
#include "reference_models.hpp"

namespace memplan {
namespace sharding_test {

using testing::bf16_shape;
using testing::bytes_of;
using testing::expect_all_consistent;
using testing::expect_invalid;
using testing::llama2_7b;
using testing::StateBytes;
using testing::states_of;

// ------------------------------------------------------------------- data parallel

LayoutEstimate data_parallel(Sharding sharding, std::uint64_t d = 8) {
  ParallelTrainingOptions par;
  par.data = d;
  par.sharding = sharding;
  return estimate_parallel_training(llama2_7b(), bf16_shape(), {}, par, std::nullopt);
}

constexpr std::uint64_t kPsi = 6738415616ULL;  // Llama-2-7b
constexpr std::uint64_t kPart = kPsi / 8;      // 842,301,952: divides exactly
constexpr std::uint64_t kBucket = 500000000ULL * 2;

TEST(DataParallel, ZeroStagesFollowRajbhandariFigure1) {
  // Adam in mixed precision, Psi parameters, N = 8 ranks, K = 12 (fp32 master + two states).
  const StateBytes ddp = states_of(data_parallel(Sharding::none).devices[0].breakdown);
  EXPECT_EQ(ddp.weights + ddp.gradients + ddp.master + ddp.states, 16 * kPsi);  // (2 + 2 + K) Psi

  const StateBytes z1 = states_of(data_parallel(Sharding::zero1).devices[0].breakdown);
  EXPECT_EQ(z1.weights, 2 * kPsi);
  EXPECT_EQ(z1.gradients, 2 * kPsi);
  EXPECT_EQ(z1.master + z1.states, 12 * kPart);  // 2Psi + 2Psi + K Psi / N

  const StateBytes z2 = states_of(data_parallel(Sharding::zero2).devices[0].breakdown);
  EXPECT_EQ(z2.weights, 2 * kPsi);
  EXPECT_EQ(z2.gradients, 2 * kPart + kBucket);  // 2Psi/N and DeepSpeed's reduce bucket (5e8 x 2 B)
  EXPECT_EQ(z2.master + z2.states, 12 * kPart);

  const LayoutEstimate z3l = data_parallel(Sharding::zero3);
  const StateBytes z3 = states_of(z3l.devices[0].breakdown);
  EXPECT_EQ(z3.weights + (z3.gradients - kBucket) + z3.master + z3.states, 16 * kPart);  // 16 Psi / N
  // The largest module gathered with its gradient: the token table 32000 x 4096, 4 B each.
  EXPECT_EQ(bytes_of(z3l.devices[0].breakdown, "gathered_parameters"), 32000ULL * 4096 * 4);
  expect_all_consistent(z3l);
}

TEST(DataParallel, MatchesTheSingleGpuTrainingEstimatorWithoutSharding) {
  // One GPU, no sharding: the state rows are the training estimator's, byte for byte.
  const LayoutEstimate l = data_parallel(Sharding::none, 1);
  const Breakdown single = estimate_training(llama2_7b(), bf16_shape(), {});
  for (const char* name : {"weights", "master_weights", "optimizer_states"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(bytes_of(l.devices[0].breakdown, name), bytes_of(single, name));
  }
  EXPECT_EQ(bytes_of(l.devices[0].breakdown, "weights"), 2 * kPsi);
  EXPECT_EQ(bytes_of(l.devices[0].breakdown, "master_weights"), 4 * kPsi);
  EXPECT_EQ(bytes_of(l.devices[0].breakdown, "optimizer_states"), 8 * kPsi);
}

TEST(DataParallel, OptimizerOffloadMovesTheStatesToTheHost) {
  ParallelTrainingOptions par;
  par.data = 8;
  par.sharding = Sharding::zero2;
  par.offload_optimizer = true;
  const LayoutEstimate l = estimate_parallel_training(llama2_7b(), bf16_shape(), {}, par, std::nullopt);
  const Breakdown& b = l.devices[0].breakdown;
  EXPECT_EQ(b.find("master_weights"), nullptr);
  EXPECT_EQ(b.find("optimizer_states"), nullptr);
  EXPECT_EQ(bytes_of(b, "gradients"), kBucket);  // the bucket; the gradients go to the host
  // Host, per rank: master 4, Adam 8 and fp32 gradients 4 bytes per parameter of the partition.
  EXPECT_EQ(b.host_total().count(), 16 * kPart);
  testing::expect_consistent(b);
}

TEST(DataParallel, FsdpFullShardGathersTheRootAndTwoBlocks) {
  const LayoutEstimate l = data_parallel(Sharding::fsdp_full);
  const Breakdown& b = l.devices[0].breakdown;
  // Sharded fp32 flat parameters, fp32 gradients and Adam: 16 Psi / N.
  EXPECT_EQ(bytes_of(b, "weights") + bytes_of(b, "gradients") + bytes_of(b, "optimizer_states"), 16 * kPart);
  EXPECT_EQ(b.find("master_weights"), nullptr);  // the fp32 shards are the master copy
  // Gathered in bf16: the root unit (token table, final norm, LM head: 262,148,096 params)
  // and two blocks (202,383,360 each), plus one block's bf16 gradients.
  EXPECT_EQ(bytes_of(b, "gathered_parameters"), (262148096ULL + 2 * 202383360ULL) * 2 + 202383360ULL * 2);
  testing::expect_consistent(b);
}

TEST(DataParallel, FsdpHybridShardsWithinTheGroup) {
  ParallelTrainingOptions par;
  par.data = 16;
  par.sharding = Sharding::fsdp_hybrid;
  par.shard_group = 8;
  const LayoutEstimate l = estimate_parallel_training(llama2_7b(), bf16_shape(), {}, par, std::nullopt);
  const Breakdown& b = l.devices[0].breakdown;
  EXPECT_EQ(bytes_of(b, "weights") + bytes_of(b, "gradients") + bytes_of(b, "optimizer_states"), 16 * kPart);
  EXPECT_EQ(l.devices[0].count, 16u);
  // SHARD_GRAD_OP keeps every unit gathered between forward and backward.
  const LayoutEstimate grad_op = data_parallel(Sharding::fsdp_grad_op);
  EXPECT_EQ(bytes_of(grad_op.devices[0].breakdown, "gathered_parameters"), 2 * kPsi + 2 * 202383360ULL);
}

TEST(DataParallel, AStageNeverCostsMoreThanTheOneBelow) {
  // Property: each ZeRO stage shards more; per device it never needs more.
  std::uint64_t previous = data_parallel(Sharding::none).devices[0].breakdown.total().count();
  for (const Sharding s : {Sharding::zero1, Sharding::zero2}) {
    const std::uint64_t total = data_parallel(s).devices[0].breakdown.total().count();
    EXPECT_LE(total, previous) << to_string(s);
    previous = total;
  }
  // More ranks never cost more per rank.
  EXPECT_LE(data_parallel(Sharding::zero3, 16).devices[0].breakdown.total(),
            data_parallel(Sharding::zero3, 8).devices[0].breakdown.total());
}

}  // namespace sharding_test
}  // namespace memplan
