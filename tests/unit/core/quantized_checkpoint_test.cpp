#include "memplan/core/quantized_checkpoint.hpp"

#include <gtest/gtest.h>

#include "memplan/core/error.hpp"

namespace memplan {
namespace quantized_checkpoint_test {

CheckpointQuantization layout(QuantLayout l, std::uint64_t bits = 4, std::uint64_t group = 128) {
  CheckpointQuantization q;
  q.layout = l;
  q.bits = bits;
  q.group_size = group;
  return q;
}

std::string refusal_key(const CheckpointQuantization& q, std::uint64_t rows, std::uint64_t cols) {
  try {
    quantized_linear_bytes(q, rows, cols);
  } catch (const Error& e) {
    return e.key();
  }
  return "accepted";
}

TEST(QuantizedCheckpoint, OneLayerEach) {
  // 4096 outputs x 4096 inputs.
  // AWQ: qweight 4096 x 512 int32 + qzeros 32 x 512 int32 + scales 32 x 4096 fp16.
  EXPECT_EQ(quantized_linear_bytes(layout(QuantLayout::awq), 4096, 4096), 8388608U + 65536 + 262144);
  // GPTQ 3-bit, one group per row: qweight 384 x 4096 int32 + qzeros 1 x 384 int32 + scales 1 x 4096 fp16
  // + g_idx 4096 int32.
  EXPECT_EQ(quantized_linear_bytes(layout(QuantLayout::gptq, 3, 0), 4096, 4096), 6291456U + 1536 + 8192 + 16384);
  // MXFP4: 4096 x 128 blocks of 16 bytes + 1 scale byte.
  EXPECT_EQ(quantized_linear_bytes(layout(QuantLayout::mxfp4), 4096, 4096), 4096U * 128 * 17);
  // compressed-tensors int4 packed, asymmetric groups of 128 with bf16 scales: weight_packed
  // 4096 x 512 int32, weight_shape 2 int64, scales 4096 x 32 bf16, zero-points 512 x 32 int32.
  CheckpointQuantization ct = layout(QuantLayout::packed);
  ct.grain = ScaleGrain::group;
  ct.scale_bytes = 2;
  ct.zero_points = true;
  EXPECT_EQ(quantized_linear_bytes(ct, 4096, 4096), 8388608U + 16 + 262144 + 65536);
  // bnb 4-bit on an odd count: 3 x 7 = 21 weights in 11 bytes, one block of absmax, the 16-entry code.
  EXPECT_EQ(quantized_linear_bytes(layout(QuantLayout::bnb_4bit), 3, 7), 11U + 4 + 64);
}

TEST(QuantizedCheckpoint, SmallerGroupsNeverCostLess) {
  for (const QuantLayout l : {QuantLayout::awq, QuantLayout::gptq}) {
    std::uint64_t previous = 0;
    for (const std::uint64_t group : {0ULL, 1024ULL, 256ULL, 128ULL, 64ULL, 32ULL}) {
      const std::uint64_t bytes = quantized_linear_bytes(layout(l, 4, group), 4096, 4096);
      EXPECT_GE(bytes, previous) << group;
      previous = bytes;
    }
  }
}

TEST(QuantizedCheckpoint, ShapesTheLibraryCannotStoreAreRefused) {
  EXPECT_EQ(refusal_key(layout(QuantLayout::awq, 3), 4096, 4096), "bits");
  EXPECT_EQ(refusal_key(layout(QuantLayout::awq), 4100, 4096), "bits");  // outputs not a multiple of 8
  EXPECT_EQ(refusal_key(layout(QuantLayout::awq, 4, 96), 4096, 4096), "group_size");
  EXPECT_EQ(refusal_key(layout(QuantLayout::gptq, 3), 4096, 4100), "bits");  // 4100 inputs: not blocks of 32
  EXPECT_EQ(refusal_key(layout(QuantLayout::mxfp4), 2880, 2890), "quant_method");
  CheckpointQuantization huge = layout(QuantLayout::bnb_8bit);
  try {
    quantized_linear_bytes(huge, 1ULL << 40, 1ULL << 40);
    ADD_FAILURE() << "no overflow";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::overflow);
  }
}

}  // namespace quantized_checkpoint_test
}  // namespace memplan
