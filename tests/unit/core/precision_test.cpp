#include "memplan/core/precision.hpp"

#include <gtest/gtest.h>

#include "memplan/core/error.hpp"

namespace memplan {
namespace precision_test {

TEST(Precision, ElementSizes) {
  EXPECT_EQ(element_bits(parse_precision("fp32").format), 32U);
  EXPECT_EQ(element_bits(parse_precision("tf32").format), 32U);  // TF32 is stored as FP32
  EXPECT_EQ(element_bits(parse_precision("bf16").format), 16U);
  EXPECT_EQ(element_bits(parse_precision("fp8").format), 8U);
  EXPECT_EQ(parse_precision("fp8").format, Format::fp8_e4m3);
  EXPECT_EQ(parse_precision("float16"), precisions::fp16);
}

TEST(Precision, QuantisedBitsPerWeightIncludeScales) {
  EXPECT_DOUBLE_EQ(bits_per_weight(parse_precision("int4")), 4.125);            // 4 + 16/128
  EXPECT_DOUBLE_EQ(bits_per_weight(parse_precision("int4-g64")), 4.25);         // 4 + 16/64
  EXPECT_DOUBLE_EQ(bits_per_weight(parse_precision("int4-g128-zp")), 4.15625);  // 4 + (16 + 4)/128
  EXPECT_DOUBLE_EQ(bits_per_weight(parse_precision("nf4")), 4.5);               // 4 + 32/64
  EXPECT_DOUBLE_EQ(bits_per_weight(parse_precision("nf4-dq")), 4.126953125);    // 4 + 8/64 + 32/(64*256)
  EXPECT_DOUBLE_EQ(bits_per_weight(parse_precision("bf16")), 16.0);
}

TEST(Precision, MatrixBitsAreExact) {
  // int8 (LLM.int8): one fp32 scale per output row.
  EXPECT_EQ(matrix_bits(parse_precision("int8"), 4096, 4096), 4096ULL * 4096 * 8 + 4096ULL * 32);
  // int4-g128 on 10 x 130: each row has ceil(130/128) = 2 groups.
  EXPECT_EQ(matrix_bits(parse_precision("int4"), 10, 130), 10ULL * 130 * 4 + 10ULL * 2 * 16);
  // nf4 blocks run over the flattened tensor: 1000 elements -> ceil(1000/64) = 16 blocks.
  EXPECT_EQ(matrix_bits(parse_precision("nf4"), 10, 100), 1000ULL * 4 + 16ULL * 32);
  // nf4-dq: 16 blocks of 8-bit scales plus ceil(16/256) = 1 fp32 second-level scale.
  EXPECT_EQ(matrix_bits(parse_precision("nf4-dq"), 10, 100), 1000ULL * 4 + 16ULL * 8 + 32);
  EXPECT_EQ(matrix_bits(precisions::bf16, 3, 5), 15ULL * 16);
}

TEST(Precision, CanonicalNamesRoundTrip) {
  for (const char* name : {"fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "int8", "int8-g128", "int4-g128",
                           "int4-g32", "int4-g128-zp", "nf4", "nf4-dq", "fp4", "fp4-dq"}) {
    EXPECT_EQ(to_string(parse_precision(name)), name);
  }
  EXPECT_EQ(to_string(parse_precision("int4")), "int4-g128");
}

TEST(Precision, QuantisedMeansLinearLayersOnly) {
  EXPECT_FALSE(is_quantized(precisions::fp16));
  EXPECT_FALSE(is_quantized(parse_precision("tf32")));
  EXPECT_TRUE(is_quantized(parse_precision("fp8")));
  EXPECT_TRUE(is_quantized(parse_precision("int4")));
}

TEST(Precision, UnknownNamesListTheAccepted) {
  for (const char* bad : {"fp61", "int3", "int4-g0", "int4-gx", "int8-zp", "nf4-zp", "", "BF16"}) {
    SCOPED_TRACE(bad);
    try {
      parse_precision(bad);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_input);
      EXPECT_NE(std::string(e.what()).find("accepted:"), std::string::npos);
    }
  }
  try {
    parse_precision("fp61");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'fp16'"), std::string::npos) << e.what();
  }
}

}  // namespace precision_test
}  // namespace memplan
