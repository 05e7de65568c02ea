#include "memplan/kernels/lanczos.hpp"

#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <utility>

#include "memplan/core/error.hpp"

namespace memplan {

namespace {

using Index = Eigen::Index;
template <typename T>
using Vec = Eigen::Matrix<T, Eigen::Dynamic, 1>;
template <typename T>
using ColMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;

template <typename T>
void random_unit(Eigen::Ref<Vec<T>> x, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<T> normal(T(0), T(1));
  for (Index i = 0; i < x.size(); ++i) x(i) = normal(rng);
  x /= x.norm();
}

// The k largest eigenvalues of the steps x steps tridiagonal matrix (alpha; beta), largest
// first. Scales alpha and beta in place.
//
// Eigen's tridiagonal QR deflates where |e_i| <= eps * sqrt(|d_i| + |d_i+1|). That test is
// not scale-invariant: it assumes the matrix was scaled to max |entry| <= 1, which
// SelfAdjointEigenSolver::compute() does before it tridiagonalises, and
// computeFromTridiagonal() does not. Unscaled, with entries near 100 (the unit test's
// spectrum) the threshold is eps * sqrt(200) = 3e-15, ten times below the eps * |T| = 2e-14
// rounding a QR step leaves on a subdiagonal entry; plain Lanczos's ghost copies of the
// converged values (clusters of equal eigenvalues) then stall it, and it gives up after
// 30 * steps sweeps ("did not converge"), depending on the last bits of alpha and beta. So
// scale first, by a power of two: exact, so the Ritz values of s * A are exactly s times those
// of A.
template <typename T>
std::vector<T> top_ritz_values(std::vector<T>& alpha, std::vector<T>& beta, std::size_t steps, std::uint64_t k) {
  const auto m = static_cast<Index>(steps);
  Eigen::Map<Vec<T>> diag(alpha.data(), m);
  Eigen::Map<Vec<T>> sub(beta.data(), std::max<Index>(m - 1, 0));
  const T largest = std::max(diag.cwiseAbs().maxCoeff(), m > 1 ? sub.cwiseAbs().maxCoeff() : T(0));
  T scale = T(1);
  if (largest > T(0) && std::isfinite(largest)) {
    int exponent = 0;
    std::frexp(largest, &exponent);  // largest = f * 2^exponent, f in [0.5, 1)
    scale = std::ldexp(T(1), exponent);
    diag /= scale;
    sub /= scale;
  }
  Eigen::SelfAdjointEigenSolver<ColMat<T>> solver;
  solver.computeFromTridiagonal(diag, sub, Eigen::EigenvaluesOnly);
  if (solver.info() != Eigen::Success) {
    throw Error(ErrorKind::internal, "the tridiagonal eigensolver did not converge");
  }
  const auto& ascending = solver.eigenvalues();
  const auto wanted = std::min<Index>(static_cast<Index>(std::min<std::uint64_t>(k, steps)), m);
  std::vector<T> out(static_cast<std::size_t>(wanted));
  for (Index i = 0; i < wanted; ++i) out[static_cast<std::size_t>(i)] = ascending(m - 1 - i) * scale;
  return out;
}

}  // namespace

template <typename T>
LanczosResult<T> lanczos_topk(std::uint64_t dimension, const MatVec<T>& apply, const LanczosRunOptions& options) {
  if (dimension == 0) throw Error(ErrorKind::invalid_input, "the operator's dimension must be at least 1", "dimension");
  if (options.k == 0) throw Error(ErrorKind::invalid_input, "k must be at least 1", "k");
  if (dimension > static_cast<std::uint64_t>(std::numeric_limits<Index>::max() / 2)) {
    throw Error(ErrorKind::overflow, "the operator's dimension does not fit in an index");
  }
  const std::uint64_t wanted_steps = options.iterations ? options.iterations : 2 * options.k + 40;
  const auto n = static_cast<Index>(dimension);
  const auto m = static_cast<Index>(std::min(wanted_steps, dimension));
  // A breakdown (beta ~ 0) means the Krylov space is invariant: its Ritz values are exact.
  const T tiny = std::numeric_limits<T>::epsilon() * T(64);

  std::vector<T> alpha(static_cast<std::size_t>(m));
  std::vector<T> beta(static_cast<std::size_t>(m));
  std::size_t steps = 0;
  const auto span_of = [n](auto& v) { return std::span<T>(v.data(), static_cast<std::size_t>(n)); };
  const auto cspan_of = [n](const auto& v) { return std::span<const T>(v.data(), static_cast<std::size_t>(n)); };

  if (options.reorthogonalize) {
    ColMat<T> basis(n, m + 1);  // q_0 .. q_m
    Vec<T> w(n);
    Vec<T> coefficients(m + 1);
    random_unit<T>(basis.col(0), options.seed);
    for (Index j = 0; j < m; ++j) {
      apply(cspan_of(basis.col(j)), span_of(w));
      const T a = w.dot(basis.col(j));
      alpha[static_cast<std::size_t>(j)] = a;
      // Classical Gram-Schmidt against every kept vector, twice ("twice is enough").
      for (int pass = 0; pass < 2; ++pass) {
        auto h = coefficients.head(j + 1);
        h.noalias() = basis.leftCols(j + 1).transpose() * w;
        w.noalias() -= basis.leftCols(j + 1) * h;
      }
      const T b = w.norm();
      beta[static_cast<std::size_t>(j)] = b;
      steps = static_cast<std::size_t>(j + 1);
      if (b <= tiny * std::max(std::abs(a), T(1))) break;
      basis.col(j + 1) = w / b;
    }
  } else {
    Vec<T> previous = Vec<T>::Zero(n);
    Vec<T> current(n);
    Vec<T> w(n);
    random_unit<T>(current, options.seed);
    for (Index j = 0; j < m; ++j) {
      apply(cspan_of(current), span_of(w));
      const T a = w.dot(current);
      alpha[static_cast<std::size_t>(j)] = a;
      w -= a * current;
      if (j > 0) w -= beta[static_cast<std::size_t>(j - 1)] * previous;
      const T b = w.norm();
      beta[static_cast<std::size_t>(j)] = b;
      steps = static_cast<std::size_t>(j + 1);
      if (b <= tiny * std::max(std::abs(a), T(1))) break;
      previous.swap(current);  // swaps storage, allocates nothing
      current = w / b;
    }
  }
  LanczosResult<T> result;
  result.eigenvalues = top_ritz_values(alpha, beta, steps, options.k);
  result.iterations = steps;
  return result;
}

template LanczosResult<float> lanczos_topk<float>(std::uint64_t, const MatVec<float>&, const LanczosRunOptions&);
template LanczosResult<double> lanczos_topk<double>(std::uint64_t, const MatVec<double>&, const LanczosRunOptions&);

}  // namespace memplan
