#include "memplan/estimators/curvature.hpp"

#include <gtest/gtest.h>

#include "reference_models.hpp"

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"

namespace memplan {
namespace curvature_test {

using testing::llama2_7b;

std::uint64_t blocks_total(std::uint64_t blocks, std::uint64_t b, bool keep = true) {
  FisherBlockOptions o;
  o.blocks = blocks;
  o.block_size = b;
  o.keep_blocks = keep;
  const Breakdown r = estimate_fisher_blocks(o);
  testing::expect_consistent(r);
  return r.total().count();
}

TEST(Curvature, A1024BlockIsMegabytesNotGigabytes) {
  // TensorScope: "~4GB for 1024x1024 blocks". One block in fp32: 1024^2 x 4 = 4,194,304 B (4 MiB);
  // one sample's gradient slice 4,096; eigenvalues 4,096; the solver's copy 4,194,304 and
  // its vectors (3 x 1024 - 2) x 4 = 12,280: 8,409,080 B = 8.0 MiB.
  EXPECT_EQ(blocks_total(1, 1024), 8409080ULL);
  // TensorScope's 7B reading, 32 blocks of 4096: 32 x 4096^2 x 4 = 2,147,483,648 kept, slices and
  // eigenvalues 524,288 each, solver 67,108,864 + 49,144.
  EXPECT_EQ(blocks_total(32, 4096), 2147483648ULL + 2 * 524288ULL + 67108864ULL + 49144ULL);
  // One block at a time: the block, one slice, all eigenvalues, the solver.
  EXPECT_EQ(blocks_total(32, 4096, false), 67108864ULL + 16384ULL + 524288ULL + 67108864ULL + 49144ULL);
}

TEST(Curvature, GroupedFisherOfLlama2_7b) {
  // Per layer: q, k, v, o 4 x 4,096 rows + gate, up 2 x 11,008 + down 4,096 = 42,496
  // channels and 2 norm vectors; x 32 = 1,359,936; token embedding 32,000 rows, final norm
  // 1, lm_head 32,000: 1,423,937 groups. fp32: 5,695,748 B. (TensorScope's "~1.4MB" matches the
  // group count, not its bytes.)
  EXPECT_EQ(fisher_groups(llama2_7b(), FisherGrouping::channel), 1423937ULL);
  // Per tensor: 9 per layer x 32 + token embedding + final norm + lm_head = 291.
  EXPECT_EQ(fisher_groups(llama2_7b(), FisherGrouping::tensor), 291ULL);
  GroupedFisherOptions o;
  const Breakdown b = estimate_grouped_fisher(llama2_7b(), o);
  testing::expect_consistent(b);
  EXPECT_EQ(b.total().count(), 5695748ULL);
  o.per_sample = true;  // groups x 32 samples
  EXPECT_EQ(estimate_grouped_fisher(llama2_7b(), o).total().count(), 5695748ULL * 32);
  EXPECT_THROW(parse_fisher_grouping("row"), Error);
}

TEST(Curvature, FullHessianSaysWhereItStopsFitting) {
  // H200 as the driver reports it: 143,771 MiB = 150,754,820,096 B. fp32 n^2 x 4 <= that:
  // n <= floor(sqrt(37,688,705,024)) = 194,135 (194,135^2 = 37,688,398,225; 194,136^2 =
  // 37,688,786,496 is over).
  const DeviceLimit h200{"h200-sxm-141gb", Bytes(150754820096ULL)};
  const FullCurvatureSize size = full_curvature_size(6738415616ULL, precisions::fp32, "Hessian", "llama-2-7b", h200);
  EXPECT_FALSE(size.exact);  // 1.816e20 B does not fit in 64 bits
  EXPECT_EQ(size.max_params, 194135ULL);
  EXPECT_NE(size.message.find("would need 181.6 EB"), std::string::npos) << size.message;
  EXPECT_NE(size.message.find("the largest GPU in the table (h200-sxm-141gb) has 150.8 GB"), std::string::npos);
  EXPECT_NE(size.message.find("at most 194,135 parameters fit"), std::string::npos);
  try {
    estimate_full_curvature(6738415616ULL, precisions::fp32, "hessian", "llama-2-7b", h200);
    FAIL() << "a 7B Hessian exceeds 64 bits";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::overflow);
    EXPECT_NE(std::string(e.what()).find("at most 194,135 parameters fit"), std::string::npos);
  }
  // GPT-2 small, 124,439,808 parameters: n^2 x 4 = 61,941,063,260,307,456 B (61.9 PB) each
  // for the matrix and the solver's copy, plus (3n - 2) x 4 of vectors.
  const Breakdown gpt2 = estimate_full_curvature(124439808ULL, precisions::fp32, "hessian", "gpt2", h200);
  testing::expect_consistent(gpt2);
  EXPECT_EQ(gpt2.total().count(), 2 * 61941063260307456ULL + (3 * 124439808ULL - 2) * 4);
}

TEST(Curvature, LargerBlocksNeverCostLess) {
  std::uint64_t previous = 0;
  for (std::uint64_t b = 1; b <= 2048; b *= 2) {
    const std::uint64_t now = blocks_total(8, b);
    EXPECT_GE(now, previous);
    EXPECT_LE(now, blocks_total(16, b));
    previous = now;
  }
  EXPECT_THROW(blocks_total(0, 8), Error);
  EXPECT_THROW(full_curvature_size(0, precisions::fp32, "Hessian", "x", std::nullopt), Error);
}

}  // namespace curvature_test
}  // namespace memplan
