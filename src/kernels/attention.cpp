// The CPU attention kernels. Each variant allocates exactly the tensors estimate_attention
// lists for it (batched over B*H, as the PyTorch reference code materialises them), and
// nothing else on the heap, on every CPU: every matrix product goes through
// product_in_panels, which keeps Eigen's GEMM packing buffers on the stack (see there).
// So the measured heap peak and the estimate can be compared row for row.
#include "memplan/kernels/attention.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <type_traits>

#include "memplan/core/bytes.hpp"
#include "memplan/core/error.hpp"

namespace memplan {

namespace {

using Index = Eigen::Index;
template <typename T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using MatMap = Eigen::Map<Mat<T>>;
template <typename T>
using ConstMatMap = Eigen::Map<const Mat<T>>;
template <typename T>
using VecMap = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>;

constexpr double kEps = 1e-6;  // the attention notebook's normaliser epsilon
constexpr Index kTile = 64;    // sdpa: query and key tile (the CPU analogue of a shared-memory tile)

// Eigen's matrix product (GEMM) packs its operands into two blocking buffers of kc x mc
// and kc x nc elements, and picks kc, mc and nc from the CPU's cache sizes (read with
// cpuid: Eigen::l1CacheSize() and co.). A buffer of up to EIGEN_STACK_ALLOCATION_LIMIT
// bytes (128 KiB) is on the stack, a larger one on the heap. Left alone, whether a product
// touched the heap depended on the machine: P x V in eager attention at N = 256, D = 32
// (row-major, so Eigen computes V^T P^T: kc = 256, mc = 32) packs a 256 x 256 fp32 panel of
// P, 256 KiB on the heap, where L1 is 32 KiB (Skylake, Zen 2-4, the CI runner's EPYC), but
// a 256 x 12 one, 12 KiB on the stack, where L1 is 48 KiB (Ice Lake and later). kc, mc and
// nc never exceed the product's depth, rows and columns, so cutting a product into
// sub-products of at most kPanel in each of the three bounds both buffers by kPanel^2
// elements, together within the stack limit, on every CPU and at every shape. This is
// local to each call: no global setting (Eigen::setCpuCacheSizes) is touched.
// The largest power of two whose two kPanel x kPanel packing buffers fit the limit together.
template <typename T>
constexpr Index panel_edge() {
  Index edge = 1;
  while (2 * (2 * edge) * (2 * edge) * static_cast<Index>(sizeof(T)) <= EIGEN_STACK_ALLOCATION_LIMIT) edge *= 2;
  return edge;
}
template <typename T>
constexpr Index kPanel = panel_edge<T>();  // 128 for float, 64 for double
static_assert(2 * kPanel<float> * kPanel<float> * sizeof(float) <= EIGEN_STACK_ALLOCATION_LIMIT);
static_assert(2 * kPanel<double> * kPanel<double> * sizeof(double) <= EIGEN_STACK_ALLOCATION_LIMIT);

enum class Into { assign, add };

// dst = alpha * lhs * rhs (Into::assign) or dst += alpha * lhs * rhs (Into::add), computed
// as sub-products of at most kPanel rows, columns and depth (see above). Same result up
// to the order of the depth sums; no temporaries (blocks of maps are direct-access).
template <typename Dst, typename Lhs, typename Rhs>
void product_in_panels(Dst&& dst, const Lhs& lhs, const Rhs& rhs, typename std::decay_t<Dst>::Scalar alpha, Into into) {
  using T = typename std::decay_t<Dst>::Scalar;
  constexpr Index p = kPanel<T>;
  const Index rows = lhs.rows();
  const Index cols = rhs.cols();
  const Index depth = lhs.cols();
  if (depth == 0) {
    if (into == Into::assign) dst.setZero();
    return;
  }
  for (Index i = 0; i < rows; i += p) {
    const Index mi = std::min(p, rows - i);
    for (Index j = 0; j < cols; j += p) {
      const Index nj = std::min(p, cols - j);
      auto out = dst.block(i, j, mi, nj);
      for (Index l = 0; l < depth; l += p) {
        const Index kl = std::min(p, depth - l);
        const auto a = lhs.block(i, l, mi, kl);
        const auto b = rhs.block(l, j, kl, nj);
        if (l == 0 && into == Into::assign) {
          out.noalias() = alpha * (a * b);
        } else {
          out.noalias() += alpha * (a * b);
        }
      }
    }
  }
}

// elu(x) + 1, the feature map of linear attention (Katharopoulos et al., 2020).
template <typename T>
T phi(T x) {
  return x > T(0) ? x + T(1) : std::exp(x);
}

// Returns `count` as an Eigen index; throws Error(overflow) if it does not fit.
Index as_index(std::uint64_t count, const char* what) {
  if (count > static_cast<std::uint64_t>(std::numeric_limits<Index>::max())) {
    throw Error(ErrorKind::overflow, std::string(what) + " does not fit in a signed 64-bit index");
  }
  return static_cast<Index>(count);
}

std::size_t as_size(Index count) { return static_cast<std::size_t>(count); }

struct Dims {
  Index B, H, N, D, C, BH;
};

Dims check_dims(AttentionVariant variant, const AttentionDims& d, std::size_t nq, std::size_t nk, std::size_t nv) {
  for (const auto& [value, key] : {std::pair{d.batch, "batch"},
                                   {d.heads, "heads"},
                                   {d.seq, "seq"},
                                   {d.head_dim, "head_dim"},
                                   {d.chunk, "chunk"}}) {
    if (value == 0) throw Error(ErrorKind::invalid_input, std::string(key) + " must be at least 1", key);
  }
  const std::uint64_t bhn = checked_mul(checked_mul(d.batch, d.heads, "B*H"), d.seq, "B*H*N");
  const std::uint64_t elements = checked_mul(bhn, d.head_dim, "B*H*N*D");
  // The largest tensor any variant holds, checked once so the kernels can use plain products.
  const std::uint64_t widest = std::max(checked_mul(bhn, d.seq, "B*H*N*N"),
                                        variant == AttentionVariant::causal_linear_naive
                                            ? checked_mul(elements, d.head_dim, "B*H*N*D*D")
                                            : 0);
  as_index(widest, "an attention tensor's element count");
  for (const auto& [size, name] : {std::pair{nq, "q"}, {nk, "k"}, {nv, "v"}}) {
    if (size != elements) {
      throw Error(ErrorKind::invalid_input, std::string(name) + " has " + std::to_string(size) +
                                                " elements; B*H*N*D is " + std::to_string(elements));
    }
  }
  Dims out{};
  out.B = as_index(d.batch, "batch");
  out.H = as_index(d.heads, "heads");
  out.N = as_index(d.seq, "seq");
  out.D = as_index(d.head_dim, "head_dim");
  out.C = std::min(as_index(d.chunk, "chunk"), out.N);
  out.BH = out.B * out.H;
  return out;
}

// Row-wise softmax of `scores` into `probabilities` (same shape), stable (max subtracted).
template <typename T>
void softmax_rows(const Eigen::Ref<const Mat<T>>& scores, Eigen::Ref<Mat<T>> probabilities) {
  for (Index r = 0; r < scores.rows(); ++r) {
    const T top = scores.row(r).maxCoeff();
    probabilities.row(r) = (scores.row(r).array() - top).exp();
    probabilities.row(r) /= probabilities.row(r).sum();
  }
}

// The feature map applied to a whole [B][H][N][D] tensor: a new tensor of the same size.
template <typename T>
std::vector<T> feature_map(std::span<const T> x) {
  std::vector<T> out(x.size());
  std::transform(x.begin(), x.end(), out.begin(), phi<T>);
  return out;
}

template <typename T>
struct Heads {
  Dims d;
  const T* q;
  const T* k;
  const T* v;
  ConstMatMap<T> head(const T* base, Index bh) const { return ConstMatMap<T>(base + bh * d.N * d.D, d.N, d.D); }
  MatMap<T> head(T* base, Index bh) const { return MatMap<T>(base + bh * d.N * d.D, d.N, d.D); }
};

// scores, probabilities (B*H*N*N each) and the output, all alive together.
template <typename T>
void eager(const Heads<T>& x, AttentionResult<T>& result) {
  const Dims& d = x.d;
  const T scale = T(1) / std::sqrt(static_cast<T>(d.D));
  Mat<T> scores(d.BH * d.N, d.N);
  for (Index bh = 0; bh < d.BH; ++bh) {
    product_in_panels(scores.middleRows(bh * d.N, d.N), x.head(x.q, bh), x.head(x.k, bh).transpose(), scale,
                      Into::assign);
  }
  Mat<T> probabilities(d.BH * d.N, d.N);
  softmax_rows<T>(scores, probabilities);
  result.output.resize(as_size(d.BH * d.N * d.D));
  for (Index bh = 0; bh < d.BH; ++bh) {
    product_in_panels(x.head(result.output.data(), bh), probabilities.middleRows(bh * d.N, d.N), x.head(x.v, bh), T(1),
                      Into::assign);
  }
}

// Queries in chunks of C: one chunk's B*H*C*N scores and probabilities at a time.
template <typename T>
void chunked(const Heads<T>& x, AttentionResult<T>& result) {
  const Dims& d = x.d;
  const T scale = T(1) / std::sqrt(static_cast<T>(d.D));
  result.output.resize(as_size(d.BH * d.N * d.D));
  Mat<T> scores(d.BH * d.C, d.N);
  Mat<T> probabilities(d.BH * d.C, d.N);
  for (Index c0 = 0; c0 < d.N; c0 += d.C) {
    const Index cn = std::min(d.C, d.N - c0);
    for (Index bh = 0; bh < d.BH; ++bh) {
      auto s = scores.block(bh * d.C, 0, cn, d.N);
      auto p = probabilities.block(bh * d.C, 0, cn, d.N);
      product_in_panels(s, x.head(x.q, bh).middleRows(c0, cn), x.head(x.k, bh).transpose(), scale, Into::assign);
      softmax_rows<T>(s, p);
      product_in_panels(x.head(result.output.data(), bh).middleRows(c0, cn), p, x.head(x.v, bh), T(1), Into::assign);
    }
  }
}

// Flash-style: 64 x 64 tiles of scores on the stack (the CPU's on-chip memory), an online
// softmax per query row, and only the output and the fp32 log-sum-exp on the heap.
template <typename T>
void sdpa(const Heads<T>& x, AttentionResult<T>& result) {
  const Dims& d = x.d;
  const T scale = T(1) / std::sqrt(static_cast<T>(d.D));
  result.output.assign(as_size(d.BH * d.N * d.D), T(0));
  result.logsumexp.resize(as_size(d.BH * d.N));
  std::array<T, kTile * kTile> tile{};
  std::array<T, kTile> row_max{};
  std::array<T, kTile> row_sum{};
  for (Index bh = 0; bh < d.BH; ++bh) {
    const auto q = x.head(x.q, bh);
    const auto k = x.head(x.k, bh);
    const auto v = x.head(x.v, bh);
    auto out = x.head(result.output.data(), bh);
    for (Index i0 = 0; i0 < d.N; i0 += kTile) {
      const Index br = std::min(kTile, d.N - i0);
      auto acc = out.middleRows(i0, br);
      row_max.fill(-std::numeric_limits<T>::infinity());
      row_sum.fill(T(0));
      for (Index j0 = 0; j0 < d.N; j0 += kTile) {
        const Index bc = std::min(kTile, d.N - j0);
        MatMap<T> s(tile.data(), br, bc);
        product_in_panels(s, q.middleRows(i0, br), k.middleRows(j0, bc).transpose(), scale, Into::assign);
        for (Index r = 0; r < br; ++r) {
          const auto ur = static_cast<std::size_t>(r);
          const T next_max = std::max(row_max[ur], s.row(r).maxCoeff());
          const T rescale = std::exp(row_max[ur] - next_max);
          s.row(r) = (s.row(r).array() - next_max).exp();
          row_sum[ur] = row_sum[ur] * rescale + s.row(r).sum();
          acc.row(r) *= rescale;
          row_max[ur] = next_max;
        }
        product_in_panels(acc, s, v.middleRows(j0, bc), T(1), Into::add);
      }
      for (Index r = 0; r < br; ++r) {
        const auto ur = static_cast<std::size_t>(r);
        acc.row(r) /= row_sum[ur];
        result.logsumexp[as_size(bh * d.N + i0 + r)] = static_cast<float>(row_max[ur] + std::log(row_sum[ur]));
      }
    }
  }
}

// Bidirectional linear attention: phi(q), phi(k), the B*H*D*D state sum_n phi(k_n) v_n^T,
// k_sum, the output and the normaliser.
template <typename T>
void linear(const Heads<T>& x, std::span<const T> q, std::span<const T> k, AttentionResult<T>& result) {
  const Dims& d = x.d;
  const std::vector<T> phi_q = feature_map(q);
  const std::vector<T> phi_k = feature_map(k);
  Mat<T> kv_state(d.BH * d.D, d.D);
  Mat<T> k_sum(d.BH, d.D);
  result.output.resize(as_size(d.BH * d.N * d.D));
  std::vector<T> normaliser(as_size(d.BH * d.N));
  for (Index bh = 0; bh < d.BH; ++bh) {
    const auto pq = x.head(phi_q.data(), bh);
    const auto pk = x.head(phi_k.data(), bh);
    auto state = kv_state.middleRows(bh * d.D, d.D);
    product_in_panels(state, pk.transpose(), x.head(x.v, bh), T(1), Into::assign);
    k_sum.row(bh) = pk.colwise().sum();
    auto out = x.head(result.output.data(), bh);
    product_in_panels(out, pq, state, T(1), Into::assign);
    VecMap<T> norm(normaliser.data() + bh * d.N, d.N);
    norm.noalias() = pq * k_sum.row(bh).transpose();
    for (Index n = 0; n < d.N; ++n) out.row(n) /= norm(n) + T(kEps);
  }
}

// The notebook's cumsum form: the outer products phi(k_n) v_n^T and their cumulative sum,
// B*H*N*D*D each, then phi(q_n) against the running state.
template <typename T>
void causal_linear_naive(const Heads<T>& x, std::span<const T> q, std::span<const T> k, AttentionResult<T>& result) {
  const Dims& d = x.d;
  const Index dd = d.D * d.D;
  const std::vector<T> phi_q = feature_map(q);
  const std::vector<T> phi_k = feature_map(k);
  std::vector<T> kv_outer(as_size(d.BH * d.N * dd));
  std::vector<T> kv_cumsum(as_size(d.BH * d.N * dd));
  std::vector<T> k_cumsum(as_size(d.BH * d.N * d.D));
  result.output.resize(as_size(d.BH * d.N * d.D));
  std::vector<T> normaliser(as_size(d.BH * d.N));
  for (Index bh = 0; bh < d.BH; ++bh) {
    const auto pq = x.head(phi_q.data(), bh);
    const auto pk = x.head(phi_k.data(), bh);
    const auto v = x.head(x.v, bh);
    auto kc = x.head(k_cumsum.data(), bh);
    auto out = x.head(result.output.data(), bh);
    T* outer_base = kv_outer.data() + bh * d.N * dd;
    T* cumsum_base = kv_cumsum.data() + bh * d.N * dd;
    for (Index n = 0; n < d.N; ++n) {  // kv = einsum('nd,nv->ndv')
      MatMap<T>(outer_base + n * dd, d.D, d.D).noalias() = pk.row(n).transpose() * v.row(n);
    }
    for (Index n = 0; n < d.N; ++n) {  // cumsum over n, of the states and of phi(k)
      MatMap<T> cs(cumsum_base + n * dd, d.D, d.D);
      const MatMap<T> outer(outer_base + n * dd, d.D, d.D);
      if (n == 0) {
        cs = outer;
        kc.row(0) = pk.row(0);
      } else {
        cs = MatMap<T>(cumsum_base + (n - 1) * dd, d.D, d.D) + outer;
        kc.row(n) = kc.row(n - 1) + pk.row(n);
      }
    }
    for (Index n = 0; n < d.N; ++n) {  // out = einsum('nd,ndv->nv') / (einsum('nd,nd->n') + eps)
      out.row(n).noalias() = pq.row(n) * MatMap<T>(cumsum_base + n * dd, d.D, d.D);
      const T norm = pq.row(n).dot(kc.row(n));
      normaliser[as_size(bh * d.N + n)] = norm;
      out.row(n) /= norm + T(kEps);
    }
  }
}

// Chunks of C tokens: the state carried from earlier chunks, this chunk's state and its
// C x C causal scores (B*H of each), plus the carried phi(k) sum (B*H*D, for the normaliser).
template <typename T>
void causal_linear_chunked(const Heads<T>& x, std::span<const T> q, std::span<const T> k, AttentionResult<T>& result) {
  const Dims& d = x.d;
  const std::vector<T> phi_q = feature_map(q);
  const std::vector<T> phi_k = feature_map(k);
  Mat<T> carried_state = Mat<T>::Zero(d.BH * d.D, d.D);
  Mat<T> chunk_state(d.BH * d.D, d.D);
  Mat<T> intra_chunk_scores(d.BH * d.C, d.C);
  Mat<T> k_sum = Mat<T>::Zero(d.BH, d.D);
  result.output.resize(as_size(d.BH * d.N * d.D));
  for (Index c0 = 0; c0 < d.N; c0 += d.C) {
    const Index cn = std::min(d.C, d.N - c0);
    for (Index bh = 0; bh < d.BH; ++bh) {
      const auto pq = x.head(phi_q.data(), bh).middleRows(c0, cn);
      const auto pk = x.head(phi_k.data(), bh).middleRows(c0, cn);
      const auto v = x.head(x.v, bh).middleRows(c0, cn);
      auto carried = carried_state.middleRows(bh * d.D, d.D);
      auto s = intra_chunk_scores.block(bh * d.C, 0, cn, cn);
      product_in_panels(s, pq, pk.transpose(), T(1), Into::assign);
      s.template triangularView<Eigen::StrictlyUpper>().setZero();
      auto out = x.head(result.output.data(), bh).middleRows(c0, cn);
      product_in_panels(out, pq, carried, T(1), Into::assign);
      product_in_panels(out, s, v, T(1), Into::add);
      for (Index i = 0; i < cn; ++i) {
        const T norm = pq.row(i).dot(k_sum.row(bh)) + s.row(i).sum();
        out.row(i) /= norm + T(kEps);
      }
      auto state = chunk_state.middleRows(bh * d.D, d.D);
      product_in_panels(state, pk.transpose(), v, T(1), Into::assign);
      carried += state;
      k_sum.row(bh) += pk.colwise().sum();
    }
  }
}

// One token at a time: S += phi(k_n) v_n^T, z += phi(k_n), out_n = phi(q_n) S / (phi(q_n).z + eps).
template <typename T>
void recurrent(const Heads<T>& x, AttentionResult<T>& result) {
  const Dims& d = x.d;
  Mat<T> state = Mat<T>::Zero(d.BH * d.D, d.D);
  Mat<T> k_sum = Mat<T>::Zero(d.BH, d.D);
  result.output.assign(as_size(d.BH * d.N * d.D), T(0));
  for (Index bh = 0; bh < d.BH; ++bh) {
    const auto q = x.head(x.q, bh);
    const auto k = x.head(x.k, bh);
    const auto v = x.head(x.v, bh);
    auto s = state.middleRows(bh * d.D, d.D);
    auto out = x.head(result.output.data(), bh);
    for (Index n = 0; n < d.N; ++n) {
      for (Index i = 0; i < d.D; ++i) {
        const T pk = phi(k(n, i));
        k_sum(bh, i) += pk;
        s.row(i) += pk * v.row(n);
      }
      T norm = 0;
      for (Index i = 0; i < d.D; ++i) {
        const T pq = phi(q(n, i));
        out.row(n) += pq * s.row(i);
        norm += pq * k_sum(bh, i);
      }
      out.row(n) /= norm + T(kEps);
    }
  }
}

}  // namespace

template <typename T>
AttentionResult<T> attention_cpu(AttentionVariant variant, const AttentionDims& dims, std::span<const T> q,
                                 std::span<const T> k, std::span<const T> v) {
  const Heads<T> x{check_dims(variant, dims, q.size(), k.size(), v.size()), q.data(), k.data(), v.data()};
  AttentionResult<T> result;
  switch (variant) {
    case AttentionVariant::eager: eager(x, result); break;
    case AttentionVariant::sdpa: sdpa(x, result); break;
    case AttentionVariant::chunked: chunked(x, result); break;
    case AttentionVariant::linear: linear(x, q, k, result); break;
    case AttentionVariant::causal_linear_naive: causal_linear_naive(x, q, k, result); break;
    case AttentionVariant::causal_linear_chunked: causal_linear_chunked(x, q, k, result); break;
    case AttentionVariant::recurrent: recurrent(x, result); break;
  }
  return result;
}

template AttentionResult<float> attention_cpu<float>(AttentionVariant, const AttentionDims&, std::span<const float>,
                                                     std::span<const float>, std::span<const float>);
template AttentionResult<double> attention_cpu<double>(AttentionVariant, const AttentionDims&, std::span<const double>,
                                                       std::span<const double>, std::span<const double>);

}  // namespace memplan
