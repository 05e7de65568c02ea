// ggml's tensor types (what GGUF files and llama.cpp's caches store): ids, names and block
// layouts, as data, for the GGUF reader (io/gguf.hpp) and the llama.cpp estimator.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace memplan {

// A ggml tensor type: `block_size` elements are stored together in `type_size` bytes (the
// quantised types' scales and minimums included), as ggml's type_traits table defines it.
struct GgmlType {
  std::uint32_t id = 0;          // enum ggml_type
  std::string_view name;         // ggml's type name, upper-cased: "F32", "Q4_K", "IQ2_XXS"
  std::uint64_t block_size = 1;  // elements per block
  std::uint64_t type_size = 0;   // bytes per block
};

// Returns every ggml type memplan prices, in id order (F32 ... Q2_0).
const std::vector<GgmlType>& ggml_types();

// Returns the type with id `id`, or nullptr for an id ggml never defined or has removed.
const GgmlType* find_ggml_type(std::uint32_t id);

// Returns the type named `name` (any case: "q4_k", "Q4_K"). Throws Error(invalid_input, key
// "ggml_type") listing the known names, with a did-you-mean.
const GgmlType& parse_ggml_type(std::string_view name);

// Returns the bytes `elements` elements of `type` take: elements / block_size x type_size.
// Throws Error(invalid_input, key "ggml_type") when `elements` is not a whole number of
// blocks, and Error(overflow) past 2^64 - 1.
std::uint64_t ggml_tensor_bytes(const GgmlType& type, std::uint64_t elements);

}  // namespace memplan
