// Lanczos top-k against Eigen's full symmetric eigensolver on a matrix with a known spectrum.
#include "memplan/kernels/lanczos.hpp"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <random>

#include "eigen_caches.hpp"
#include "memplan/core/error.hpp"

namespace memplan {
namespace lanczos_kernel_test {

// A = Q diag(spectrum) Q^T with Q a random orthogonal matrix. Eigen's QR and products
// round according to their cache blocking, and plain Lanczos is sensitive to the last bits
// of its operator, so the blocking is pinned: the same A on every machine.
Eigen::MatrixXd with_spectrum(const Eigen::VectorXd& spectrum, unsigned seed) {
  const testing::PinnedEigenCaches pinned(testing::kSkylakeClient);
  const Eigen::Index n = spectrum.size();
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  Eigen::MatrixXd g(n, n);
  for (Eigen::Index i = 0; i < g.size(); ++i) g.data()[i] = normal(rng);
  const Eigen::MatrixXd q = Eigen::HouseholderQR<Eigen::MatrixXd>(g).householderQ();
  return q * spectrum.asDiagonal() * q.transpose();
}

// Ten separated top eigenvalues (100, 95, ..., 55) over 290 in [0, 1).
Eigen::VectorXd known_spectrum() {
  Eigen::VectorXd s(300);
  for (Eigen::Index i = 0; i < 10; ++i) s(i) = 100.0 - 5.0 * static_cast<double>(i);
  for (Eigen::Index i = 10; i < 300; ++i) s(i) = static_cast<double>(i - 10) / 290.0;
  return s;
}

MatVec<double> dense(const Eigen::MatrixXd& a) {
  return [&a](std::span<const double> x, std::span<double> y) {
    Eigen::Map<Eigen::VectorXd>(y.data(), a.rows()).noalias() = a *
                                                                Eigen::Map<const Eigen::VectorXd>(x.data(), a.cols());
  };
}

std::vector<double> full_solver_top(const Eigen::MatrixXd& a, std::size_t k) {
  const Eigen::VectorXd all = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(a, Eigen::EigenvaluesOnly).eigenvalues();
  std::vector<double> top;
  for (std::size_t i = 0; i < k; ++i) top.push_back(all(all.size() - 1 - static_cast<Eigen::Index>(i)));
  return top;
}

TEST(LanczosKernel, TopKMatchesTheFullEigensolver) {
  const Eigen::MatrixXd a = with_spectrum(known_spectrum(), 3);
  const std::vector<double> expected = full_solver_top(a, 10);
  for (std::size_t i = 0; i < 10; ++i) EXPECT_NEAR(expected[i], 100.0 - 5.0 * static_cast<double>(i), 1e-9);
  LanczosRunOptions options;
  options.k = 10;
  options.iterations = 80;
  const LanczosResult<double> r = lanczos_topk<double>(300, dense(a), options);
  ASSERT_EQ(r.eigenvalues.size(), 10u);
  for (std::size_t i = 0; i < 10; ++i) {
    EXPECT_NEAR(r.eigenvalues[i], expected[i], 1e-6 * std::abs(expected[i])) << "eigenvalue " << i;
  }
}

TEST(LanczosKernel, WithoutReorthogonalisationTheLargestConvergesAndNothingIsInvented) {
  const Eigen::MatrixXd a = with_spectrum(known_spectrum(), 4);
  LanczosRunOptions options;
  options.k = 10;
  options.iterations = 120;
  options.reorthogonalize = false;
  const LanczosResult<double> r = lanczos_topk<double>(300, dense(a), options);
  ASSERT_FALSE(r.eigenvalues.empty());
  EXPECT_NEAR(r.eigenvalues.front(), 100.0, 1e-6 * 100.0);
  // Lost orthogonality makes ghost copies of converged values, never values outside the spectrum.
  const Eigen::VectorXd truth = known_spectrum();
  for (const double value : r.eigenvalues) {
    double nearest = INFINITY;
    for (Eigen::Index i = 0; i < truth.size(); ++i) nearest = std::min(nearest, std::abs(truth(i) - value));
    EXPECT_LT(nearest, 1e-4 * 100.0) << value;
  }
}

// The Ritz step's eigensolver works on the tridiagonal matrix scaled by a power of two, as
// Eigen's dense solver scales its input: the answer for s * A is exactly s times the answer
// for A, and the solver converges at every scale. Unscaled, Eigen's deflation test
// (|e| <= eps * sqrt(|d_i| + |d_i+1|)) is too strict for entries far above 1: plain Lanczos
// on this operator did not converge at 2^0 (this A), and at 2^6 or 2^10 for A as built
// under each of four cache configurations tried.
TEST(LanczosKernel, RitzValuesScaleExactlyWithTheOperator) {
  const Eigen::MatrixXd a = with_spectrum(known_spectrum(), 4);
  for (const bool reorthogonalize : {false, true}) {
    LanczosRunOptions options;
    options.k = 10;
    options.iterations = reorthogonalize ? 80 : 120;
    options.reorthogonalize = reorthogonalize;
    const std::vector<double> unit = lanczos_topk<double>(300, dense(a), options).eigenvalues;
    ASSERT_EQ(unit.size(), 10u);
    EXPECT_NEAR(unit.front(), 100.0, 1e-6 * 100.0);
    for (const int exponent : {-10, -4, 2, 4, 6, 10}) {
      const double scale = std::ldexp(1.0, exponent);
      const Eigen::MatrixXd scaled = scale * a;  // exact: a power of two
      std::vector<double> values;
      ASSERT_NO_THROW(values = lanczos_topk<double>(300, dense(scaled), options).eigenvalues)
          << "scale 2^" << exponent << (reorthogonalize ? ", reorthogonalised" : ", plain");
      ASSERT_EQ(values.size(), unit.size());
      for (std::size_t i = 0; i < unit.size(); ++i) {
        EXPECT_EQ(values[i], scale * unit[i]) << "scale 2^" << exponent << ", eigenvalue " << i;
      }
    }
  }
}

TEST(LanczosKernel, InvariantSubspaceStopsEarlyWithExactValues) {
  // A rank-3 operator: from a generic start the Krylov space is invariant after 4 steps
  // (the start vector's null-space part plus three eigenvectors), so Lanczos stops there.
  Eigen::VectorXd s = Eigen::VectorXd::Zero(50);
  s(0) = 3;
  s(1) = 2;
  s(2) = 1;
  const Eigen::MatrixXd a = with_spectrum(s, 5);
  LanczosRunOptions options;
  options.k = 3;
  options.iterations = 20;
  const LanczosResult<double> r = lanczos_topk<double>(50, dense(a), options);
  EXPECT_LE(r.iterations, 5u);
  ASSERT_EQ(r.eigenvalues.size(), 3u);
  EXPECT_NEAR(r.eigenvalues[0], 3, 1e-9);
  EXPECT_NEAR(r.eigenvalues[1], 2, 1e-9);
  EXPECT_NEAR(r.eigenvalues[2], 1, 1e-9);
}

TEST(LanczosKernel, FloatVersionAgreesToSinglePrecision) {
  const Eigen::MatrixXd a = with_spectrum(known_spectrum(), 6);
  const Eigen::MatrixXf af = a.cast<float>();
  const MatVec<float> apply = [&af](std::span<const float> x, std::span<float> y) {
    Eigen::Map<Eigen::VectorXf>(y.data(), af.rows()).noalias() = af *
                                                                 Eigen::Map<const Eigen::VectorXf>(x.data(), af.cols());
  };
  LanczosRunOptions options;
  options.k = 5;
  const LanczosResult<float> r = lanczos_topk<float>(300, apply, options);
  ASSERT_EQ(r.eigenvalues.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_NEAR(r.eigenvalues[i], 100.0 - 5.0 * static_cast<double>(i), 1e-3);
}

TEST(LanczosKernel, RejectsZeroSizes) {
  const Eigen::MatrixXd a = Eigen::MatrixXd::Identity(4, 4);
  EXPECT_THROW(lanczos_topk<double>(0, dense(a)), Error);
  LanczosRunOptions options;
  options.k = 0;
  EXPECT_THROW(lanczos_topk<double>(4, dense(a), options), Error);
}

}  // namespace lanczos_kernel_test
}  // namespace memplan
