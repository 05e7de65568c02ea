#include "memplan/core/ggml_types.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "memplan/core/bytes.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"

namespace memplan {

namespace {

// The ggml types and their block layouts, from ggml-org/ggml at commit
// d99724f2b141fed9e1a9f402213506c081433465 (2026-08-21): the ids are enum ggml_type in
// include/ggml.h; block_size and type_size are .blck_size and .type_size of the type_traits
// table in src/ggml.c, i.e. QK* and sizeof(block_*) of src/ggml-common.h, whose
// static_asserts give each size (QK_K = 256). The same figures are gguf-py's
// GGML_QUANT_SIZES (llama.cpp gguf-py/gguf/constants.py). Ids 4, 5 (Q4_2, Q4_3), 31-33
// (Q4_0_4_4, Q4_0_4_8, Q4_0_8_8) and 36-38 (IQ4_NL_4_4, _4_8, _8_8) were removed from ggml
// and from GGUF files; ggml's type_traits gives them block size 0.
constexpr std::array<GgmlType, 35> kTypes{{
    {0, "F32", 1, 4},          // float
    {1, "F16", 1, 2},          // ggml_fp16_t
    {2, "Q4_0", 32, 18},       // d (fp16) + 16 B of nibbles
    {3, "Q4_1", 32, 20},       // d, m (fp16) + 16 B
    {6, "Q5_0", 32, 22},       // d + qh (4 B) + 16 B
    {7, "Q5_1", 32, 24},       // d, m + qh + 16 B
    {8, "Q8_0", 32, 34},       // d + 32 int8
    {9, "Q8_1", 32, 36},       // d, s + 32 int8
    {10, "Q2_K", 256, 84},     // d, dmin + 16 scales + 64 B
    {11, "Q3_K", 256, 110},    // d + 64 B qs + 32 B hmask + 12 B scales
    {12, "Q4_K", 256, 144},    // d, dmin + 12 B scales + 128 B
    {13, "Q5_K", 256, 176},    // d, dmin + 12 B scales + 128 B + 32 B qh
    {14, "Q6_K", 256, 210},    // d + 16 scales + 128 B ql + 64 B qh
    {15, "Q8_K", 256, 292},    // float d + 256 int8 + 16 int16 bsums
    {16, "IQ2_XXS", 256, 66},  // d + 32 uint16
    {17, "IQ2_XS", 256, 74},   // d + 32 uint16 + 8 B scales
    {18, "IQ3_XXS", 256, 98},  // d + 96 B
    {19, "IQ1_S", 256, 50},    // d + 32 B qs + 8 uint16 qh
    {20, "IQ4_NL", 32, 18},    // d + 16 B
    {21, "IQ3_S", 256, 110},   // d + 64 B qs + 8 B qh + 32 B signs + 4 B scales
    {22, "IQ2_S", 256, 82},    // d + 64 B qs + 8 B qh + 8 B scales
    {23, "IQ4_XS", 256, 136},  // d + scales_h (2 B) + 4 B scales_l + 128 B
    {24, "I8", 1, 1},         {25, "I16", 1, 2}, {26, "I32", 1, 4},
    {27, "I64", 1, 8},        {28, "F64", 1, 8}, {29, "IQ1_M", 256, 56},  // 32 B qs + 16 B qh + 8 B scales
    {30, "BF16", 1, 2},                                                   // ggml_bf16_t
    {34, "TQ1_0", 256, 54},                                               // 48 B qs + 4 B qh + d
    {35, "TQ2_0", 256, 66},                                               // 64 B qs + d
    {39, "MXFP4", 32, 17},                                                // e (1 B) + 16 B
    {40, "NVFP4", 64, 36},                                                // 4 B of E4M3 scales + 32 B
    {41, "Q1_0", 128, 18},                                                // d + 16 B
    {42, "Q2_0", 64, 18},                                                 // d + 16 B
}};

}  // namespace

const std::vector<GgmlType>& ggml_types() {
  static const std::vector<GgmlType> types(kTypes.begin(), kTypes.end());
  return types;
}

const GgmlType* find_ggml_type(std::uint32_t id) {
  for (const GgmlType& t : kTypes) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

const GgmlType& parse_ggml_type(std::string_view name) {
  std::vector<std::string> names;
  for (const GgmlType& t : kTypes) {
    if (t.name.size() == name.size() && std::equal(t.name.begin(), t.name.end(), name.begin(), [](char a, char b) {
          return a == (b >= 'a' && b <= 'z' ? static_cast<char>(b - 'a' + 'A') : b);
        })) {
      return t;
    }
    names.emplace_back(t.name);
  }
  throw Error(ErrorKind::invalid_input,
              "unknown ggml type '" + printable(name) + "'" + did_you_mean(name, names) + "; memplan prices " +
                  quoted_list(names, "and"),
              "ggml_type");
}

std::uint64_t ggml_tensor_bytes(const GgmlType& type, std::uint64_t elements) {
  if (elements % type.block_size != 0) {
    throw Error(ErrorKind::invalid_input,
                group_digits(elements) + " elements of " + std::string(type.name) + " are not a whole number of its " +
                    std::to_string(type.block_size) + "-element blocks",
                "ggml_type");
  }
  return checked_mul(elements / type.block_size, type.type_size, "bytes of", type.name);
}

}  // namespace memplan
