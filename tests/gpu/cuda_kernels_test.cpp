// The CUDA attention kernels against the CPU ones, and their pool-measured peak against
// the estimate, on a real NVIDIA GPU (ctest label gpu). Without one every test skips with
// the runtime's reason. Not run by the author: no GPU was available when it was written.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "memplan/estimators/attention.hpp"
#include "memplan/kernels/attention.hpp"
#include "memplan/kernels/cuda.hpp"

namespace memplan {
namespace {

#define MEMPLAN_REQUIRE_GPU()                                       \
  do {                                                              \
    const CudaDeviceInfo info = cuda_device_info();                 \
    if (info.status != CudaStatus::ok) GTEST_SKIP() << info.reason; \
  } while (false)

std::vector<float> random_values(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> out(count);
  for (float& x : out) x = normal(rng);
  return out;
}

TEST(CudaKernels, MatchTheCpuKernels) {
  MEMPLAN_REQUIRE_GPU();
  const AttentionDims dims{2, 3, 100, 32, 48};
  const std::size_t count = 2 * 3 * 100 * 32;
  const auto q = random_values(count, 1), k = random_values(count, 2), v = random_values(count, 3);
  for (const AttentionVariant variant : all_attention_variants()) {
    if (!attention_cuda_supports(variant)) continue;
    const std::vector<float> cpu = attention_cpu<float>(variant, dims, q, k, v).output;
    for (const Format dtype : {Format::fp32, Format::fp16}) {
      const std::vector<float> gpu = attention_cuda(variant, dims, q, k, v, dtype);
      ASSERT_EQ(gpu.size(), cpu.size());
      const double tolerance = dtype == Format::fp32 ? 1e-4 : 2e-2;
      for (std::size_t i = 0; i < cpu.size(); ++i) {
        ASSERT_NEAR(gpu[i], cpu[i], tolerance * (1 + std::abs(cpu[i])))
            << to_string(variant) << " " << to_string(dtype) << " at " << i;
      }
    }
  }
}

TEST(CudaKernels, PoolPeakIsTheEstimate) {
  MEMPLAN_REQUIRE_GPU();
  for (const AttentionVariant variant : all_attention_variants()) {
    if (!attention_cuda_supports(variant)) continue;
    for (const Format dtype : {Format::fp32, Format::fp16}) {
      const AttentionDims dims{2, 4, 1024, 64, 256};
      AttentionShape shape;
      shape.batch = 2;
      shape.heads = 4;
      shape.seq = 1024;
      shape.head_dim = 64;
      shape.chunk = 256;
      shape.dtype = dtype == Format::fp16 ? precisions::fp16 : precisions::fp32;
      shape.include_inputs = false;
      const double estimate = static_cast<double>(estimate_attention(variant, shape).total().count());
      const CudaMeasurement m = measure_attention_cuda(variant, dims, dtype, 2);
      const double ratio = static_cast<double>(m.peak_bytes) / estimate;
      EXPECT_GE(ratio, 0.95) << to_string(variant) << " " << to_string(dtype);
      EXPECT_LE(ratio, 1.10) << to_string(variant) << " " << to_string(dtype);
      EXPECT_GT(m.seconds_best, 0);
    }
  }
}

// The two state-carrying variants at chunk sizes that stress the chunk loop: one token a
// chunk, a chunk that does not divide N, exactly N, and larger than N (C = min(chunk, N)).
TEST(CudaKernels, CausalLinearChunkedAndRecurrentMatchTheCpuAtEveryChunkSize) {
  MEMPLAN_REQUIRE_GPU();
  const std::size_t count = 1 * 2 * 70 * 16;
  const auto q = random_values(count, 4), k = random_values(count, 5), v = random_values(count, 6);
  const std::uint64_t chunks[] = {1, 7, 70, 100};
  for (const std::uint64_t chunk : chunks) {
    const AttentionDims dims{1, 2, 70, 16, chunk};
    for (const AttentionVariant variant : {AttentionVariant::causal_linear_chunked, AttentionVariant::recurrent}) {
      const std::vector<float> cpu = attention_cpu<float>(variant, dims, q, k, v).output;
      for (const Format dtype : {Format::fp32, Format::fp16}) {
        const std::vector<float> gpu = attention_cuda(variant, dims, q, k, v, dtype);
        ASSERT_EQ(gpu.size(), cpu.size());
        const double tolerance = dtype == Format::fp32 ? 1e-4 : 2e-2;
        for (std::size_t i = 0; i < cpu.size(); ++i) {
          ASSERT_NEAR(gpu[i], cpu[i], tolerance * (1 + std::abs(cpu[i])))
              << to_string(variant) << " " << to_string(dtype) << " chunk " << chunk << " at " << i;
        }
      }
    }
  }
}

// The pool holds exactly the tensors the estimate lists, byte for byte: a full last chunk,
// a partial one (N = 1000, C = 256) and C > N. Every tensor here is a multiple of 1 KiB,
// so an allocator that aligns requests to 1 KiB or less cannot move the figure.
TEST(CudaKernels, CausalLinearChunkedAndRecurrentPoolPeakEqualsTheEstimate) {
  MEMPLAN_REQUIRE_GPU();
  for (const AttentionDims dims :
       {AttentionDims{2, 4, 1024, 64, 256}, AttentionDims{2, 4, 1000, 64, 256}, AttentionDims{2, 4, 200, 64, 512}}) {
    for (const AttentionVariant variant : {AttentionVariant::causal_linear_chunked, AttentionVariant::recurrent}) {
      for (const Format dtype : {Format::fp32, Format::fp16}) {
        AttentionShape shape;
        shape.batch = dims.batch;
        shape.heads = dims.heads;
        shape.seq = dims.seq;
        shape.head_dim = dims.head_dim;
        shape.chunk = dims.chunk;
        shape.dtype = dtype == Format::fp16 ? precisions::fp16 : precisions::fp32;
        shape.include_inputs = false;
        const std::uint64_t estimate = estimate_attention(variant, shape).total().count();
        const CudaMeasurement m = measure_attention_cuda(variant, dims, dtype, 2);
        EXPECT_EQ(m.peak_bytes, estimate)
            << to_string(variant) << " " << to_string(dtype) << " N=" << dims.seq << " C=" << dims.chunk;
      }
    }
  }
}

}  // namespace
}  // namespace memplan
