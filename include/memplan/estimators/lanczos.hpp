// Lanczos: the memory of m Lanczos steps for the top eigenvalues of an n x n symmetric
// operator given as matrix-vector products (Hessian or Fisher spectra).
#pragma once

#include <cstdint>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/precision.hpp"

namespace memplan {

struct LanczosShape {
  std::uint64_t dimension = 1;         // n: the operator's size (parameters it acts on)
  std::uint64_t iterations = 1;        // m: Lanczos steps (Krylov dimension), at most n
  std::uint64_t k = 1;                 // eigenvalues returned
  bool reorthogonalize = true;         // full reorthogonalisation keeps all m+1 basis vectors
  Precision dtype = precisions::fp32;  // element type of the vectors and the tridiagonal matrix
};

// Returns a Breakdown with one component, "lanczos", whose detail lists what the Lanczos
// kernel (memplan/kernels/lanczos.hpp) holds at its peak: with reorthogonalisation the
// (m+1) x n basis, one work vector and the m+1 projection coefficients; without it three
// n-vectors; and the tridiagonal matrix (2m). The Ritz step that follows (the
// eigensolver's 2m - 1 copies and the k results) runs after the vectors are freed and is
// always smaller. The operator itself (and what its matrix-vector product allocates) is
// the caller's and is not counted. Throws Error(invalid_input) when n, m or k is 0 or
// m > n, Error(overflow).
Breakdown estimate_lanczos(const LanczosShape& shape);

}  // namespace memplan
