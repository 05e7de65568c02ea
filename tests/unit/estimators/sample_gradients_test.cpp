#include "memplan/estimators/sample_gradients.hpp"

#include <gtest/gtest.h>

#include "reference_models.hpp"

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"

namespace memplan {
namespace sample_gradients_test {

using testing::llama2_7b;
constexpr std::uint64_t kParams = 6738415616ULL;

std::uint64_t store(const SampleGradientOptions& o, std::uint64_t batch = 32) {
  const Breakdown b = estimate_sample_gradients(llama2_7b(), o, batch);
  testing::expect_consistent(b);
  return b.components.empty() ? b.host_total().count() : b.total().count();
}

TEST(SampleGradients, UncompressedIsBatchTimesParametersTimesFour) {
  // TensorScope: "7B model, batch=32: ~896GB" (7e9 x 32 x 4). Llama-2-7b: 6,738,415,616 x 32 x 4
  // = 862,517,198,848 B (862.5 GB, 803.3 GiB).
  EXPECT_EQ(store({}), 862517198848ULL);
}

TEST(SampleGradients, Int8AndZlibAtTheDocumentsRatio) {
  // int8: 1 B per entry plus one fp32 scale for each of the 291 tensors (1,164 B):
  // 6,738,416,780 B per sample; zlib at TensorScope's assumed 8 (x int8's 4 = 32):
  // ceil(6,738,416,780 / 8) = 842,302,098 per sample; x 32 = 26,953,667,136 (TensorScope: ~28GB).
  SampleGradientOptions o;
  o.int8 = true;
  EXPECT_EQ(store(o), 32 * 6738416780ULL);
  o.zlib_ratio = 8;
  EXPECT_EQ(store(o), 32 * 842302098ULL);
  const Breakdown b = estimate_sample_gradients(llama2_7b(), o, 32);
  const Item& row = b.components.front();  // of b: a reference into the temporary outlived it
  ASSERT_TRUE(row.high.has_value());
  EXPECT_EQ(row.high->count(), 32 * 6738416780ULL);  // if zlib gains nothing
}

TEST(SampleGradients, GatingKeepsValuesAndIndices) {
  // Top 1%: ceil(0.01 x 6,738,415,616) = 67,384,157 entries; int8 values 67,384,157 B,
  // int64 indices 539,073,256 B, scales 1,164 B: 606,458,577 B per sample.
  SampleGradientOptions o;
  o.int8 = true;
  o.kept_fraction = 0.01;
  EXPECT_EQ(store(o), 32 * 606458577ULL);
  o.index_bits = 32;  // int32 indices: 269,536,628 B
  EXPECT_EQ(store(o), 32 * (67384157ULL + 269536628ULL + 1164ULL));
}

TEST(SampleGradients, PerLayerSelection) {
  // One Llama-2-7b block: q, k, v, o 4 x 16,777,216 + gate, up, down 3 x 45,088,768 + two
  // norms 8,192 = 202,383,360 parameters.
  EXPECT_EQ(selected_parameters(llama2_7b(), {0, 31}), 2 * 202383360ULL);
  EXPECT_EQ(selected_tensors(llama2_7b(), {0, 31}), 18ULL);
  SampleGradientOptions o;
  o.layers = {0, 31};
  EXPECT_EQ(store(o), 32 * 2 * 202383360ULL * 4);
  o.layers = {32};
  EXPECT_THROW(store(o), Error);
}

TEST(SampleGradients, OnTheHostTheGpuHoldsNone) {
  SampleGradientOptions o;
  o.on_host = true;
  const Breakdown b = estimate_sample_gradients(llama2_7b(), o, 4);
  EXPECT_TRUE(b.components.empty());
  EXPECT_EQ(b.host_total().count(), 4 * kParams * 4);
}

TEST(SampleGradients, TracinStoresCheckpointsTimesSamples) {
  // 10 checkpoints x 32 samples x 26,953,662,464 B = 8,625,171,988,480 (8.6 TB), test
  // gradients 10 x 1 x 26,953,662,464, scores 32 x 1 x 4.
  TracinOptions t;
  const Breakdown full = estimate_tracin(llama2_7b(), t, {}, 32);
  testing::expect_consistent(full);
  EXPECT_EQ(full.total().count(), 320 * 26953662464ULL + 10 * 26953662464ULL + 128);
  // Projected to k = 8,192: 32,768 B per gradient; store 10,485,760, test 327,680, scores
  // 128, one projection block of 8,192 x 4,096 x 4 = 134,217,728.
  t.projection = 8192;
  EXPECT_EQ(estimate_tracin(llama2_7b(), t, {}, 32).total().count(), 10485760ULL + 327680ULL + 128 + 134217728ULL);
  t.checkpoints = 0;
  EXPECT_THROW(estimate_tracin(llama2_7b(), t, {}, 32), Error);
}

TEST(SampleGradients, MoreSamplesNeverCostLessAndCompressionNeverMore) {
  SampleGradientOptions raw, packed;
  packed.int8 = true;
  packed.zlib_ratio = 2;
  std::uint64_t previous = 0;
  for (std::uint64_t b = 1; b <= 64; b *= 2) {
    const std::uint64_t now = store(raw, b);
    EXPECT_GE(now, previous);
    EXPECT_LE(store(packed, b), now);
    previous = now;
  }
  SampleGradientOptions bad;
  bad.kept_fraction = 0;
  EXPECT_THROW(store(bad), Error);
  bad = {};
  bad.zlib_ratio = 0.5;
  EXPECT_THROW(store(bad), Error);
}

}  // namespace sample_gradients_test
}  // namespace memplan
