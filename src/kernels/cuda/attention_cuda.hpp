// The boundary between the CUDA kernels (attention.cu, compiled by nvcc as C++17) and
// the rest of memplan::kernels (cuda_runtime.cpp). Private to the kernels library.
#pragma once

#include <cstdint>
#include <vector>

namespace memplan::detail {

enum class CudaAttentionKind { eager, sdpa, chunked, linear, causal_linear_naive, causal_linear_chunked, recurrent };

struct CudaAttentionDims {
  std::int64_t batch_heads = 1;  // B*H
  std::int64_t seq = 1;          // N
  std::int64_t head_dim = 64;    // D
  std::int64_t chunk = 512;      // C, for chunked and causal_linear_chunked
};

struct CudaRunStats {
  std::uint64_t peak_bytes = 0;     // max over runs of the private pool's cudaMemPoolAttrUsedMemHigh
  std::vector<float> milliseconds;  // CUDA-event time of each run
};

// Runs one kind `repeats` times on device 0 with fp16 (`half`) or fp32 storage. q, k, v
// (B*H*N*D fp32 values each, [BH][N][D]) are uploaded when given, else filled with
// uniform values in [-1, 1) on the device; either way before the measurement, with
// cudaMalloc (not from the pool). When `output` is given, the first run's output is
// copied into it as fp32. Throws memplan::Error(internal) on any CUDA failure, naming the call.
CudaRunStats run_attention_cuda(CudaAttentionKind kind, const CudaAttentionDims& dims, bool half, std::uint32_t repeats,
                                const float* q, const float* k, const float* v, float* output);

}  // namespace memplan::detail
