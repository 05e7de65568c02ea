#include "memplan/plan/sweep.hpp"

#include <gtest/gtest.h>

#include "memplan/core/error.hpp"
#include "reference_models.hpp"

namespace memplan {
namespace sweep_test {

using testing::gpt2;
using testing::llama2_7b;

TEST(Sweep, GridNestsModelsWorkloadsPrecisionsBatchesSequences) {
  SweepAxes a;
  a.workloads = {WorkloadKind::inference, WorkloadKind::training};
  a.precisions = {precisions::fp16, parse_precision("int4")};
  a.batches = {1, 2, 4, 8};
  a.seqs = {512, 2048};
  const std::vector<SweepPoint> g = expand_grid(2, a);
  ASSERT_EQ(g.size(), 2U * 2 * 2 * 4 * 2);  // 64
  EXPECT_EQ(g[0].seq, 512U);
  EXPECT_EQ(g[1].seq, 2048U);  // sequences vary fastest
  EXPECT_EQ(g[2].batch, 2U);
  EXPECT_EQ(g[8].precision, parse_precision("int4"));
  EXPECT_EQ(g[16].workload, WorkloadKind::training);
  EXPECT_EQ(g[32].model, 1U);
  EXPECT_EQ(g.back().model, 1U);
  EXPECT_EQ(g.back().batch, 8U);
}

TEST(Sweep, BadAxesNameTheAxis) {
  const auto key_of = [](const SweepAxes& a, std::size_t models) {
    try {
      expand_grid(models, a);
    } catch (const Error& e) {
      return e.key();
    }
    return std::string("no error");
  };
  SweepAxes a;
  EXPECT_EQ(key_of(a, 0), "model");
  a.batches = {1, 0};
  EXPECT_EQ(key_of(a, 1), "batch");
  a.batches = {1};
  a.seqs = {};
  EXPECT_EQ(key_of(a, 1), "seq");
  a.seqs = std::vector<std::uint64_t>(1000, 512);
  a.batches = std::vector<std::uint64_t>(101, 1);  // 101,000 points > 100,000
  EXPECT_EQ(key_of(a, 1), "grid");
}

TEST(Sweep, RowsCarryTotalsLargestPartAndFit) {
  // Weights only: bf16 13,476,831,232 B (6,738,415,616 x 2); int4-g128 3,864,010,752 B
  // (linear 6,476,005,376 x 4.125 bits + 262,410,240 fp16 parameters).
  SweepAxes a;
  a.workloads = {WorkloadKind::weights};
  a.precisions = {precisions::bf16, parse_precision("int4")};
  a.seqs = {2048};
  const std::vector<SweepRow> rows = run_sweep({llama2_7b()}, Workload{}, a, Bytes{10ULL << 30});
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0].total->count(), 13476831232ULL);
  EXPECT_EQ(rows[0].largest, "weights");
  EXPECT_EQ(rows[0].largest_bytes.count(), 13476831232ULL);
  EXPECT_EQ(rows[0].allocated.count(), 13476831232ULL);  // no overhead row for weights alone
  EXPECT_FALSE(*rows[0].fits);
  EXPECT_EQ(rows[1].total->count(), 3864010752ULL);
  EXPECT_TRUE(*rows[1].fits);
}

TEST(Sweep, APointThatCannotRunIsARowNotAnError) {
  // GPT-2 has 1024 learned positions: 2048 tokens cannot be run; 512 can.
  SweepAxes a;
  a.seqs = {512, 2048};
  const std::vector<SweepRow> rows = run_sweep({gpt2()}, Workload{}, a, std::nullopt);
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_TRUE(rows[0].total.has_value());
  EXPECT_FALSE(rows[0].fits.has_value());
  EXPECT_FALSE(rows[1].total.has_value());
  EXPECT_NE(rows[1].error.find("learned positions for 1024 tokens"), std::string::npos);
}

TEST(Sweep, GenerationPointsGenerateAndOthersDoNot) {
  SweepAxes a;
  a.new_tokens = 128;
  const Workload gen = workload_at(Workload{}, SweepPoint{0, WorkloadKind::generation, precisions::bf16, 2, 1024}, a);
  EXPECT_EQ(gen.new_tokens, 128U);
  EXPECT_EQ(gen.batch, 2U);
  EXPECT_EQ(gen.seq_len, 1024U);
  Workload base;
  base.new_tokens = 64;  // given on the command line: wins over the axes' default
  EXPECT_EQ(workload_at(base, SweepPoint{0, WorkloadKind::generation, precisions::bf16, 1, 1}, a).new_tokens, 64U);
  EXPECT_EQ(workload_at(base, SweepPoint{0, WorkloadKind::inference, precisions::bf16, 1, 1}, a).new_tokens, 0U);
}

TEST(Sweep, MoreBatchOrSequenceNeverCostsLess) {
  SweepAxes a;
  a.workloads = {WorkloadKind::inference, WorkloadKind::extraction, WorkloadKind::training};
  a.batches = {1, 2, 4};
  a.seqs = {128, 256, 512};
  const std::vector<SweepRow> rows = run_sweep({gpt2()}, Workload{}, a, std::nullopt);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    ASSERT_TRUE(rows[i].total) << rows[i].error;
    if (i % 3 != 0) {
      EXPECT_GE(*rows[i].total, *rows[i - 1].total) << "seq " << rows[i].point.seq;
    }
    if (i % 9 >= 3) {
      EXPECT_GE(*rows[i].total, *rows[i - 3].total) << "batch " << rows[i].point.batch;
    }
  }
}

}  // namespace sweep_test
}  // namespace memplan
