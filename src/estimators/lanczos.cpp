#include "memplan/estimators/lanczos.hpp"

#include <string>
#include <utility>
#include <vector>

#include "memplan/core/error.hpp"
#include "memplan/core/rows.hpp"

namespace memplan {

Breakdown estimate_lanczos(const LanczosShape& s) {
  const std::uint64_t n = s.dimension, m = s.iterations, k = s.k;
  for (const auto& [value, key] : {std::pair{n, "dimension"}, {m, "iterations"}, {k, "k"}}) {
    if (value == 0) throw Error(ErrorKind::invalid_input, std::string(key) + " must be at least 1", key);
  }
  if (m > n) {
    throw Error(ErrorKind::invalid_input,
                "iterations (" + std::to_string(m) + ") cannot exceed the dimension (" + std::to_string(n) + ")",
                "iterations");
  }
  const std::string ns = group_digits(n), ms = group_digits(m);
  Item lanczos;
  lanczos.name = "lanczos";
  if (s.reorthogonalize) {
    const std::uint64_t kept = checked_add(m, 1, "Lanczos basis vectors");
    lanczos.detail.push_back(elements_row("basis", checked_mul(kept, n, "Lanczos basis"), s.dtype,
                                          "(m+1) x n = " + group_digits(kept) + " x " + ns));
    lanczos.detail.push_back(elements_row("work_vector", n, s.dtype, "n"));
    lanczos.detail.push_back(elements_row("projections", kept, s.dtype, "m+1 Gram-Schmidt coefficients"));
    lanczos.formula = "full reorthogonalisation: every basis vector is kept, (m+1)*n dominates";
  } else {
    lanczos.detail.push_back(elements_row("vectors", checked_mul(3, n, "Lanczos vectors"), s.dtype,
                                          "previous, current and work: 3 x n = 3 x " + ns));
    lanczos.formula = "three-term recurrence without reorthogonalisation: 3 vectors of n";
  }
  lanczos.detail.push_back(elements_row("tridiagonal", checked_mul(2, m, "tridiagonal entries"), s.dtype,
                                        "alpha and beta, 2 x m = 2 x " + ms));
  lanczos.bytes = sum_bytes(lanczos.detail, "Lanczos bytes");
  // The Ritz step (the tridiagonal eigensolver's 2m - 1 copies and the k results) runs
  // after the vectors are freed and needs less than they did (2m - 1 + k < 3n as k, m <= n).
  lanczos.formula += "; then the Ritz step, smaller, after the vectors are freed; n = " + ns + ", m = " + ms +
                     ", k = " + group_digits(k);
  return Breakdown{{lanczos}};
}

}  // namespace memplan
