#include "memplan/core/rows.hpp"

namespace memplan {

std::string dims_text(const TensorDims& dims) {
  std::string out;
  for (const auto& [label, size] : dims) out += (out.empty() ? "" : " x ") + label + "=" + std::to_string(size);
  return out;
}

std::uint64_t dims_elements(const TensorDims& dims, std::string_view name) {
  std::uint64_t elements = 1;
  for (const auto& dim : dims) elements = checked_mul(elements, dim.second, "elements of", name);
  return elements;
}

Bytes bits_to_bytes(std::uint64_t elements, std::uint64_t bits, std::string_view what) {
  return Bytes(ceil_div(checked_mul(elements, bits, what), 8));
}

Bytes dtype_bytes(std::uint64_t elements, const Precision& dtype, std::string_view name) {
  if (dtype.layout != ScaleLayout::none) return Bytes(ceil_div(matrix_bits(dtype, 1, elements), 8));
  return Bytes(ceil_div(checked_mul(elements, element_bits(dtype.format), "bits of", name), 8));
}

Item bytes_row(std::string name, Bytes bytes, std::string formula, std::string note) {
  return {std::move(name), bytes, std::move(formula), std::nullopt, std::move(note), {}};
}

Item elements_row(std::string name, std::uint64_t elements, const Precision& dtype, const std::string& formula) {
  const Bytes bytes = dtype_bytes(elements, dtype, name);
  return bytes_row(std::move(name), bytes, formula + " = " + group_digits(elements) + " x " + to_string(dtype));
}

Item tensor_row(std::string name, const TensorDims& dims, const Precision& dtype) {
  const Bytes bytes = dtype_bytes(dims_elements(dims, name), dtype, name);
  return bytes_row(std::move(name), bytes, dims_text(dims) + " at " + to_string(dtype));
}

Item tensor_row(std::string name, const TensorDims& dims, std::uint32_t bits, const std::string& dtype_text) {
  const Bytes bytes(ceil_div(checked_mul(dims_elements(dims, name), bits, "bits of", name), 8));
  return bytes_row(std::move(name), bytes, dims_text(dims) + " at " + dtype_text);
}

Item group_row(std::string name, std::vector<Item> detail, std::string formula, std::string note) {
  Item out = bytes_row(std::move(name), Bytes(0), std::move(formula), std::move(note));
  out.bytes = sum_bytes(detail, out.name);
  out.detail = std::move(detail);
  return out;
}

Bytes sum_bytes(const std::vector<Item>& rows, std::string_view what) {
  Bytes sum;
  for (const Item& row : rows) sum = sum.plus(row.bytes, what);
  return sum;
}

}  // namespace memplan
