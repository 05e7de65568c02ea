#include "memplan/core/rows.hpp"

#include <gtest/gtest.h>

#include <string>

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"

namespace memplan {
namespace rows_test {

TEST(Rows, TensorRowWritesItsDimsAndRoundsOnce) {
  // 2 x 16 x 4096 elements at bf16: 131,072 x 2 = 262,144 B.
  const Item t = tensor_row("q", {{"B", 2}, {"H", 16}, {"N", 4096}}, precisions::bf16);
  EXPECT_EQ(t.name, "q");
  EXPECT_EQ(t.bytes.count(), 262144u);
  EXPECT_EQ(t.formula, "B=2 x H=16 x N=4096 at bf16");
  // 3 x 5 bool masks at 1 B; 7 elements at 4 bits round up once: 28 bits = 4 B, not 7 x 1.
  EXPECT_EQ(tensor_row("mask", {{"s", 3}, {"b", 5}}, 8, "1 B (bool mask)").formula, "s=3 x b=5 at 1 B (bool mask)");
  EXPECT_EQ(tensor_row("packed", {{"n", 7}}, 4, "4-bit").bytes.count(), 4u);
}

TEST(Rows, ElementsRowGroupsItsDigitsAndNamesTheDtype) {
  const Item e = elements_row("basis", 4096 * 41, precisions::fp32, "(m+1) x n = 41 x 4,096");
  EXPECT_EQ(e.bytes.count(), 4096u * 41 * 4);
  EXPECT_EQ(e.formula, "(m+1) x n = 41 x 4,096 = 167,936 x fp32");
}

TEST(Rows, QuantisedDtypesCountTheirScales) {
  // int4 with an fp16 scale per 128: 256 elements = 128 B + 2 scales x 2 B = 132 B.
  EXPECT_EQ(dtype_bytes(256, parse_precision("int4")).count(), 132u);
  EXPECT_EQ(dtype_bytes(256, precisions::fp16).count(), 512u);
}

TEST(Rows, GroupRowSumsItsDetail) {
  const Item g = group_row("loss", {bytes_row("logits", Bytes(100), "a"), bytes_row("log_probs", Bytes(28), "b")},
                           "both", "a note");
  EXPECT_EQ(g.bytes.count(), 128u);
  EXPECT_EQ(g.note, "a note");
  ASSERT_EQ(g.detail.size(), 2u);
  testing::expect_consistent(Breakdown{{g}});
  EXPECT_EQ(sum_bytes(g.detail, "loss").count(), 128u);
}

TEST(Rows, OverflowNamesTheTensor) {
  try {
    tensor_row("huge", {{"a", 1ULL << 40}, {"b", 1ULL << 40}}, precisions::fp32);
    ADD_FAILURE() << "expected Error(overflow)";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::overflow);
    EXPECT_NE(std::string(e.what()).find("elements of huge"), std::string::npos) << e.what();
  }
  EXPECT_THROW(bits_to_bytes(1ULL << 62, 8, "bits"), Error);
}

}  // namespace rows_test
}  // namespace memplan
