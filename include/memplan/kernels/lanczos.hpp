// Lanczos iteration for the largest eigenvalues of a symmetric operator that is only
// available as a matrix-vector product (a Hessian- or Fisher-vector product).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace memplan {

struct LanczosRunOptions {
  std::uint64_t k = 10;          // eigenvalues wanted: the k largest (algebraic)
  std::uint64_t iterations = 0;  // Krylov steps m; 0 = min(n, 2k + 40)
  bool reorthogonalize = true;   // full reorthogonalisation: keeps all m+1 basis vectors (m+1)*n;
                                 // off: three vectors only, but ghost copies of converged values appear
  std::uint64_t seed = 42;       // of the random start vector
};

template <typename T>
struct LanczosResult {
  std::vector<T> eigenvalues;    // the k largest Ritz values, largest first (fewer if m < k)
  std::uint64_t iterations = 0;  // steps taken; fewer than asked when an invariant subspace was found
};

// y = A x for a symmetric A of dimension n; x and y have n elements and do not overlap.
template <typename T>
using MatVec = std::function<void(std::span<const T> x, std::span<T> y)>;

// Returns the k largest Ritz values of the n x n symmetric operator `apply` after m
// Lanczos steps. Memory at the peak: with reorthogonalisation the (m+1) x n basis, the
// work vector and m+1 coefficients; without it three n-vectors; plus the 2m tridiagonal
// entries. The Ritz step (O(m)) runs after the vectors are freed. estimate_lanczos in
// memplan/estimators/lanczos.hpp counts the same tensors.
// Instantiated for float and double. Throws Error(invalid_input) when n or k is 0.
template <typename T>
LanczosResult<T> lanczos_topk(std::uint64_t n, const MatVec<T>& apply, const LanczosRunOptions& options = {});

extern template LanczosResult<float> lanczos_topk<float>(std::uint64_t, const MatVec<float>&, const LanczosRunOptions&);
extern template LanczosResult<double> lanczos_topk<double>(std::uint64_t, const MatVec<double>&,
                                                           const LanczosRunOptions&);

}  // namespace memplan
