// The CPU attention kernels against the straightforward forms, written here as plain
// loops in double: softmax(q k^T / sqrt(D)) v, and linear attention with phi = elu + 1,
// bidirectional and causal, computed pair by pair in O(N^2).
#include "memplan/kernels/attention.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "memplan/core/error.hpp"

namespace memplan {
namespace attention_kernels_test {

struct Inputs {
  AttentionDims dims;
  std::vector<double> q, k, v;
};

Inputs make_inputs(std::uint64_t batch, std::uint64_t heads, std::uint64_t seq, std::uint64_t head_dim,
                   std::uint64_t chunk) {
  Inputs in{{batch, heads, seq, head_dim, chunk}, {}, {}, {}};
  std::mt19937 rng(5);
  std::normal_distribution<double> normal(0, 1);
  const std::size_t count = batch * heads * seq * head_dim;
  for (auto* x : {&in.q, &in.k, &in.v}) {
    x->resize(count);
    for (double& value : *x) value = normal(rng);
  }
  return in;
}

double phi(double x) { return x > 0 ? x + 1 : std::exp(x); }

// softmax attention, causal = false; or linear attention (bidirectional or causal).
enum class Reference { softmax, linear, causal_linear };

std::vector<double> reference(Reference kind, const Inputs& in) {
  const std::size_t B = in.dims.batch, H = in.dims.heads, N = in.dims.seq, D = in.dims.head_dim;
  std::vector<double> out(B * H * N * D, 0.0);
  for (std::size_t bh = 0; bh < B * H; ++bh) {
    const double* q = in.q.data() + bh * N * D;
    const double* k = in.k.data() + bh * N * D;
    const double* v = in.v.data() + bh * N * D;
    for (std::size_t n = 0; n < N; ++n) {
      std::vector<double> weight(N, 0.0);
      double total = 0;
      const std::size_t last = kind == Reference::causal_linear ? n + 1 : N;
      double top = -INFINITY;
      for (std::size_t m = 0; m < last; ++m) {
        double s = 0;
        for (std::size_t d = 0; d < D; ++d) {
          s += kind == Reference::softmax ? q[n * D + d] * k[m * D + d] : phi(q[n * D + d]) * phi(k[m * D + d]);
        }
        weight[m] = kind == Reference::softmax ? s / std::sqrt(static_cast<double>(D)) : s;
        top = std::max(top, weight[m]);
      }
      for (std::size_t m = 0; m < last; ++m) {
        if (kind == Reference::softmax) weight[m] = std::exp(weight[m] - top);
        total += weight[m];
      }
      if (kind != Reference::softmax) total += 1e-6;
      for (std::size_t m = 0; m < last; ++m) {
        for (std::size_t d = 0; d < D; ++d) out[(bh * N + n) * D + d] += weight[m] / total * v[m * D + d];
      }
    }
  }
  return out;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

std::vector<double> run(AttentionVariant variant, const Inputs& in) {
  return attention_cpu<double>(variant, in.dims, in.q, in.k, in.v).output;
}

// N = 100 is not a multiple of the sdpa tile (64) or the chunk (32): partial tiles are covered.
Inputs odd_shape() { return make_inputs(2, 3, 100, 16, 32); }

TEST(AttentionKernels, EagerMatchesTheSoftmaxFormula) {
  const Inputs in = odd_shape();
  EXPECT_LT(max_abs_diff(run(AttentionVariant::eager, in), reference(Reference::softmax, in)), 1e-12);
}

TEST(AttentionKernels, FlashAndChunkedMatchEager) {
  for (const std::uint64_t chunk : {1ULL, 7ULL, 32ULL, 100ULL, 512ULL}) {
    Inputs in = odd_shape();
    in.dims.chunk = chunk;
    const std::vector<double> eager = run(AttentionVariant::eager, in);
    EXPECT_LT(max_abs_diff(run(AttentionVariant::sdpa, in), eager), 1e-12) << "chunk " << chunk;
    EXPECT_LT(max_abs_diff(run(AttentionVariant::chunked, in), eager), 1e-12) << "chunk " << chunk;
  }
}

TEST(AttentionKernels, FlashLogSumExpIsTheSoftmaxNormaliser) {
  const Inputs in = make_inputs(1, 1, 70, 8, 16);
  const AttentionResult<double> r = attention_cpu<double>(AttentionVariant::sdpa, in.dims, in.q, in.k, in.v);
  ASSERT_EQ(r.logsumexp.size(), 70u);
  for (std::size_t n = 0; n < 70; n += 13) {
    double sum = 0;
    for (std::size_t m = 0; m < 70; ++m) {
      double s = 0;
      for (std::size_t d = 0; d < 8; ++d) s += in.q[n * 8 + d] * in.k[m * 8 + d];
      sum += std::exp(s / std::sqrt(8.0));
    }
    EXPECT_NEAR(r.logsumexp[n], std::log(sum), 1e-5);
  }
}

TEST(AttentionKernels, LinearMatchesThePairwiseForm) {
  const Inputs in = odd_shape();
  EXPECT_LT(max_abs_diff(run(AttentionVariant::linear, in), reference(Reference::linear, in)), 1e-10);
}

TEST(AttentionKernels, CausalLinearVariantsMatchThePairwiseForm) {
  for (const std::uint64_t chunk : {1ULL, 7ULL, 32ULL, 100ULL, 512ULL}) {
    Inputs in = odd_shape();
    in.dims.chunk = chunk;
    const std::vector<double> expected = reference(Reference::causal_linear, in);
    EXPECT_LT(max_abs_diff(run(AttentionVariant::causal_linear_naive, in), expected), 1e-10);
    EXPECT_LT(max_abs_diff(run(AttentionVariant::causal_linear_chunked, in), expected), 1e-10) << "chunk " << chunk;
    EXPECT_LT(max_abs_diff(run(AttentionVariant::recurrent, in), expected), 1e-10);
  }
}

TEST(AttentionKernels, FloatAgreesWithDouble) {
  const Inputs in = make_inputs(1, 2, 64, 16, 16);
  const std::vector<float> q(in.q.begin(), in.q.end()), k(in.k.begin(), in.k.end()), v(in.v.begin(), in.v.end());
  for (const AttentionVariant variant : all_attention_variants()) {
    const std::vector<float> single = attention_cpu<float>(variant, in.dims, q, k, v).output;
    const std::vector<double> wide = run(variant, in);
    ASSERT_EQ(single.size(), wide.size());
    for (std::size_t i = 0; i < wide.size(); ++i) {
      ASSERT_NEAR(single[i], wide[i], 1e-4 * (1 + std::abs(wide[i]))) << to_string(variant) << " at " << i;
    }
  }
}

TEST(AttentionKernels, RejectsBadShapes) {
  const Inputs in = make_inputs(1, 1, 8, 4, 4);
  AttentionDims zero = in.dims;
  zero.head_dim = 0;
  EXPECT_THROW(attention_cpu<double>(AttentionVariant::eager, zero, in.q, in.k, in.v), Error);
  const std::vector<double> short_v(in.v.begin(), in.v.end() - 1);
  try {
    attention_cpu<double>(AttentionVariant::linear, in.dims, in.q, in.k, short_v);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_input);
    EXPECT_NE(std::string(e.what()).find("v has 31 elements; B*H*N*D is 32"), std::string::npos) << e.what();
  }
}

}  // namespace attention_kernels_test
}  // namespace memplan
