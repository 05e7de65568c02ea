// CPU attention kernels (Eigen), one per estimate_attention variant. Each materialises
// what the estimator says that variant holds, so `memplan measure attention` can compare
// the allocator's real peak with the estimate. memplan::kernels; not part of the core.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "memplan/estimators/attention.hpp"

namespace memplan {

struct AttentionDims {
  std::uint64_t batch = 1;      // B
  std::uint64_t heads = 1;      // H
  std::uint64_t seq = 1;        // N, query and key positions (self-attention)
  std::uint64_t head_dim = 64;  // D
  std::uint64_t chunk = 512;    // C: query chunk (chunked) or token chunk (causal_linear_chunked)
};

template <typename T>
struct AttentionResult {
  std::vector<T> output;         // B*H*N*D, layout [B][H][N][D]
  std::vector<float> logsumexp;  // sdpa only: B*H*N row log-sum-exp (what flash attention saves); else empty
};

// Runs `variant` on q, k, v, each B*H*N*D elements laid out [B][H][N][D], and returns the
// output. eager, sdpa and chunked compute softmax(q k^T / sqrt(D)) v without a mask;
// linear uses phi(x) = elu(x) + 1 bidirectionally; causal_linear_naive,
// causal_linear_chunked and recurrent compute the causal linear attention
// out_n = sum_{m<=n} (phi(q_n).phi(k_m)) v_m / (sum_{m<=n} phi(q_n).phi(k_m) + 1e-6).
// The tensors each variant allocates are listed in docs/accuracy.md.
// Instantiated for float and double. Throws Error(invalid_input) on zero sizes or spans
// of the wrong length, Error(overflow).
template <typename T>
AttentionResult<T> attention_cpu(AttentionVariant variant, const AttentionDims& dims, std::span<const T> q,
                                 std::span<const T> k, std::span<const T> v);

extern template AttentionResult<float> attention_cpu<float>(AttentionVariant, const AttentionDims&,
                                                            std::span<const float>, std::span<const float>,
                                                            std::span<const float>);
extern template AttentionResult<double> attention_cpu<double>(AttentionVariant, const AttentionDims&,
                                                              std::span<const double>, std::span<const double>,
                                                              std::span<const double>);

}  // namespace memplan
