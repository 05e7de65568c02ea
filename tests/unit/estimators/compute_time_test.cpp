#include "memplan/estimators/compute_time.hpp"

#include <gtest/gtest.h>

#include "reference_models.hpp"

#include "memplan/core/error.hpp"

namespace memplan {
namespace compute_time_test {

GpuSpec a100() {
  GpuSpec g;
  g.name = "a100-sxm4-80gb";
  g.bandwidth_gbs = 2039;
  g.dense_tflops = {{Format::fp32, 19.5}, {Format::tf32, 156}, {Format::fp16, 312}, {Format::bf16, 312}};
  return g;
}

GpuSpec v100() {  // no bf16 figure
  GpuSpec g;
  g.name = "v100";
  g.bandwidth_gbs = 900;
  g.dense_tflops = {{Format::fp32, 15.7}, {Format::fp16, 125}};
  return g;
}

TEST(ComputeTime, FlopsOverPeakTimesEfficiency) {
  Work w;
  w.name = "step";
  w.flops = 1.248e15;
  w.format = Format::bf16;
  w.efficiency = 0.4;
  // 1.248e15 / (312e12 x 0.4) = 10 s.
  const TimeEstimate t = estimate_time({w}, a100());
  EXPECT_DOUBLE_EQ(t.seconds, 10.0);
  // An explicit factor replaces the part's: 1.248e15 / (312e12 x 0.8) = 5 s.
  EXPECT_DOUBLE_EQ(estimate_time({w}, a100(), 0.8).seconds, 5.0);
  EXPECT_THROW(estimate_time({w}, a100(), 1.5), Error);
}

TEST(ComputeTime, MemoryBoundAndHostParts) {
  Work w;
  w.name = "copy";
  w.flops = 1e9;             // negligible next to the traffic
  w.bytes_moved = 2.039e12;  // one second at 2,039 GB/s
  w.host_bytes = 1e8;
  w.host_bytes_per_second = 5e7;  // two seconds of zlib
  EXPECT_NEAR(estimate_time({w}, a100()).seconds, 3.0, 1e-3);
}

TEST(ComputeTime, FallsBackToAListedPrecision) {
  Format used = Format::bf16;
  EXPECT_DOUBLE_EQ(peak_tflops(v100(), Format::bf16, used), 125);
  EXPECT_EQ(used, Format::fp16);
  EXPECT_DOUBLE_EQ(peak_tflops(v100(), Format::tf32, used), 15.7);
  EXPECT_EQ(used, Format::fp32);
  GpuSpec none;
  none.name = "blank";
  EXPECT_THROW(peak_tflops(none, Format::fp32, used), Error);
}

TEST(ComputeTime, ForwardFlopsCountMatmulsAndAttention) {
  // A one-layer Llama-style model: q, k, v, o 4 x 4,096 + gate, up, down 3 x 16,384 +
  // lm_head 64,000 = 129,536 matmul parameters (the token embedding is a lookup). Per token
  // 2 x 129,536 + 4 x 1 layer x 16 keys x 2 heads x 32 = 259,072 + 4,096; 2 x 16 tokens.
  const ModelSpec s = testing::tiny();
  EXPECT_DOUBLE_EQ(matmul_parameters(s), 129536.0);
  EXPECT_DOUBLE_EQ(forward_flops(s, 2, 16), 32.0 * (259072 + 4096));
  EXPECT_LT(forward_flops(s, 2, 16), forward_flops(s, 2, 32));
}

}  // namespace compute_time_test
}  // namespace memplan
