#include "memplan/estimators/block_eig.hpp"

#include <string>
#include <utility>

#include "memplan/core/error.hpp"
#include "memplan/core/rows.hpp"

namespace memplan {

Breakdown estimate_block_eig(const BlockEigShape& s) {
  const std::uint64_t count = s.blocks, b = s.block_size;
  for (const auto& [value, key] : {std::pair{count, "blocks"}, {b, "block_size"}}) {
    if (value == 0) throw Error(ErrorKind::invalid_input, std::string(key) + " must be at least 1", key);
  }
  const std::string cs = group_digits(count), bs = group_digits(b);
  const std::uint64_t bb = checked_mul(b, b, "block elements");
  Item item;
  item.name = "block_eig";
  if (s.include_inputs) {
    item.detail.push_back(elements_row("blocks", checked_mul(count, bb, "block elements"), s.dtype,
                                       "blocks x b x b = " + cs + " x " + bs + " x " + bs));
  }
  item.detail.push_back(
      elements_row("eigenvalues", checked_mul(count, b, "eigenvalues"), s.dtype, "blocks x b = " + cs + " x " + bs));
  item.detail.push_back(elements_row("solver_matrix", bb, s.dtype, "b x b, tridiagonalised in place"));
  const std::uint64_t vectors = b > 1 ? checked_mul(3, b, "solver vectors") - 2 : 3;
  item.detail.push_back(elements_row("solver_vectors", vectors, s.dtype,
                                     "eigenvalues b, off-diagonal and Householder coefficients b-1 each"));
  item.bytes = sum_bytes(item.detail, "block eigendecomposition bytes");
  item.formula = "one b x b block at a time with a reused solver; blocks = " + cs + ", b = " + bs;
  return Breakdown{{item}};
}

}  // namespace memplan
