// Building the rows of a Breakdown. Every estimator writes its rows with these, so a
// tensor reads "B=2 x H=16 at bf16", a count of elements "<how> = 4,096 x fp32" and a group
// of rows sums its detail exactly, wherever it comes from. Numbers in formula prose are
// digit-grouped with group_digits (core/text.hpp); a tensor's dims are written plainly.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/precision.hpp"
#include "memplan/core/text.hpp"

namespace memplan {

// A tensor's dimensions, outermost first, each with the label its formula shows:
// {{"B", 2}, {"H", 16}, {"N", 4096}}.
using TensorDims = std::vector<std::pair<std::string, std::uint64_t>>;

// Returns the dims as a formula writes them: "B=2 x H=16 x N=4096" ("" for none).
std::string dims_text(const TensorDims& dims);

// Returns the product of the dims (1 for none). Throws Error(overflow) naming "elements of `name`".
std::uint64_t dims_elements(const TensorDims& dims, std::string_view name);

// Returns `elements` at `bits` per element in bytes, rounded up once to a whole byte.
// Throws Error(overflow) naming `what`.
Bytes bits_to_bytes(std::uint64_t elements, std::uint64_t bits, std::string_view what);

// Returns `elements` stored as `dtype` in bytes, rounded up once: matrix_bits of one row, so
// a quantised format's scales count (a float format is elements x its width). Throws
// Error(overflow) naming "bits of `name`".
Bytes dtype_bytes(std::uint64_t elements, const Precision& dtype, std::string_view name = {});

// Returns a row of `bytes` that `formula` explains, with an optional note.
Item bytes_row(std::string name, Bytes bytes, std::string formula, std::string note = {});

// Returns a row of `elements` stored as `dtype` (dtype_bytes), its formula
// "<formula> = <elements, digit-grouped> x <dtype>". Throws Error(overflow).
Item elements_row(std::string name, std::uint64_t elements, const Precision& dtype, const std::string& formula);

// Returns a tensor of `dims` stored as `dtype` (dtype_bytes), its formula
// "B=2 x H=16 at bf16". Throws Error(overflow) naming the tensor.
Item tensor_row(std::string name, const TensorDims& dims, const Precision& dtype);

// Returns a tensor of `dims` at `bits` per element (rounded up once), its formula
// "B=2 x H=16 at <dtype_text>", for element types that are not a Precision ("int64",
// "1 B (bool mask)"). Throws Error(overflow) naming the tensor.
Item tensor_row(std::string name, const TensorDims& dims, std::uint32_t bits, const std::string& dtype_text);

// Returns a row whose bytes are the checked sum of `detail`'s, holding them as its detail
// rows. Throws Error(overflow) naming the row.
Item group_row(std::string name, std::vector<Item> detail, std::string formula, std::string note = {});

// Returns the checked sum of the rows' bytes. Throws Error(overflow) naming `what`.
Bytes sum_bytes(const std::vector<Item>& rows, std::string_view what);

}  // namespace memplan
