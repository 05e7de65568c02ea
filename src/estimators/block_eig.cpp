#include "memplan/estimators/block_eig.hpp"

#include <string>
#include <utility>

#include "memplan/core/error.hpp"

namespace memplan {

namespace {

Item row(const std::string& name, std::uint64_t elements, const Precision& dtype, std::string formula) {
  const Bytes bytes(ceil_div(matrix_bits(dtype, 1, elements), 8));
  return {name, bytes, std::move(formula) + " = " + std::to_string(elements) + " x " + to_string(dtype), std::nullopt,
          "", {}};
}

}  // namespace

Breakdown estimate_block_eig(const BlockEigShape& s) {
  const std::uint64_t count = s.blocks, b = s.block_size;
  for (const auto& [value, key] : {std::pair{count, "blocks"}, {b, "block_size"}}) {
    if (value == 0) throw Error(ErrorKind::invalid_input, std::string(key) + " must be at least 1", key);
  }
  const std::string cs = std::to_string(count), bs = std::to_string(b);
  const std::uint64_t bb = checked_mul(b, b, "block elements");
  Item item;
  item.name = "block_eig";
  if (s.include_inputs) {
    item.detail.push_back(row("blocks", checked_mul(count, bb, "block elements"), s.dtype,
                              "blocks x b x b = " + cs + " x " + bs + " x " + bs));
  }
  item.detail.push_back(row("eigenvalues", checked_mul(count, b, "eigenvalues"), s.dtype, "blocks x b = " + cs + " x " + bs));
  item.detail.push_back(row("solver_matrix", bb, s.dtype, "b x b, tridiagonalised in place"));
  const std::uint64_t vectors = b > 1 ? checked_mul(3, b, "solver vectors") - 2 : 3;
  item.detail.push_back(row("solver_vectors", vectors, s.dtype,
                            "eigenvalues b, off-diagonal and Householder coefficients b-1 each"));
  for (const Item& d : item.detail) item.bytes = item.bytes.plus(d.bytes, "block eigendecomposition bytes");
  item.formula = "one b x b block at a time with a reused solver; blocks = " + cs + ", b = " + bs;
  return Breakdown{{item}};
}

}  // namespace memplan
