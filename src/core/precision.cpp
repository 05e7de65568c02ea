#include "memplan/core/precision.hpp"

#include <charconv>

#include "memplan/core/bytes.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"

namespace memplan {

std::uint32_t element_bits(Format format) {
  switch (format) {
    case Format::fp32:
    case Format::tf32: return 32;
    case Format::fp16:
    case Format::bf16: return 16;
    case Format::fp8_e4m3:
    case Format::fp8_e5m2:
    case Format::int8: return 8;
    case Format::int4:
    case Format::nf4:
    case Format::fp4: return 4;
  }
  return 32;
}

bool is_quantized(const Precision& precision) { return element_bits(precision.format) <= 8; }

std::uint64_t matrix_bits(const Precision& p, std::uint64_t rows, std::uint64_t cols) {
  const std::uint64_t elements = checked_mul(rows, cols, "matrix elements");
  std::uint64_t bits = checked_mul(elements, element_bits(p.format), "matrix bits");
  std::uint64_t scales = 0;
  switch (p.layout) {
    case ScaleLayout::none: break;
    case ScaleLayout::per_row: scales = rows; break;
    case ScaleLayout::row_groups: scales = checked_mul(rows, ceil_div(cols, p.group_size), "scale count"); break;
    case ScaleLayout::flat_blocks: scales = ceil_div(elements, p.group_size); break;
  }
  const std::uint64_t per_scale = p.scale_bits + p.zero_point_bits;
  bits = checked_add(bits, checked_mul(scales, per_scale, "scale bits"), "matrix bits");
  if (p.second_block_size > 0) {
    bits = checked_add(bits, checked_mul(ceil_div(scales, p.second_block_size), 32, "second-level scale bits"),
                       "matrix bits");
  }
  return bits;
}

double bits_per_weight(const Precision& p) {
  double bits = element_bits(p.format);
  if (p.layout == ScaleLayout::row_groups || p.layout == ScaleLayout::flat_blocks) {
    const double group = p.group_size;
    bits += (p.scale_bits + p.zero_point_bits) / group;
    if (p.second_block_size > 0) bits += 32.0 / (group * p.second_block_size);
  }
  return bits;
}

std::string to_string(Format format) {
  switch (format) {
    case Format::fp32: return "fp32";
    case Format::tf32: return "tf32";
    case Format::fp16: return "fp16";
    case Format::bf16: return "bf16";
    case Format::fp8_e4m3: return "fp8_e4m3";
    case Format::fp8_e5m2: return "fp8_e5m2";
    case Format::int8: return "int8";
    case Format::int4: return "int4";
    case Format::nf4: return "nf4";
    case Format::fp4: return "fp4";
  }
  return "fp32";
}

std::string to_string(const Precision& p) {
  std::string name = to_string(p.format);
  if (p.layout == ScaleLayout::row_groups) {
    name += "-g" + std::to_string(p.group_size);
    if (p.zero_point_bits > 0) name += "-zp";
  }
  if (p.second_block_size > 0) name += "-dq";
  return name;
}

std::string describe(const Precision& p) {
  const std::uint32_t bits = element_bits(p.format);
  if (p.layout == ScaleLayout::none) return to_string(p) + ", " + std::to_string(bits / 8) + " B/param";
  std::string scales;
  if (p.layout == ScaleLayout::per_row) {
    scales = std::to_string(p.scale_bits) + "-bit scale per row";
  } else {
    scales = std::to_string(p.scale_bits) + "-bit scale" + (p.zero_point_bits ? " and zero-point" : "") + " per " +
             std::to_string(p.group_size);
    if (p.second_block_size) scales += ", fp32 scale per " + std::to_string(p.second_block_size) + " scales";
  }
  std::string per_weight = std::to_string(bits_per_weight(p));  // "4.125000"
  per_weight.erase(per_weight.find_last_not_of('0') + 1);
  if (per_weight.back() == '.') per_weight.pop_back();
  return to_string(p) + ": " + std::to_string(bits) + "-bit + " + scales +
         (p.layout == ScaleLayout::per_row ? "" : " = " + per_weight + " bit/param");
}

std::vector<std::string> precision_names() {
  return {"fp32", "tf32",      "fp16",     "bf16",     "fp8",          "fp8_e4m3", "fp8_e5m2", "int8", "int8-g128",
          "int4", "int4-g128", "int4-g64", "int4-g32", "int4-g128-zp", "nf4",      "nf4-dq",   "fp4",  "fp4-dq"};
}

namespace {

constexpr std::uint32_t kFp16ScaleBits = 16;
constexpr std::uint32_t kFp32ScaleBits = 32;
constexpr std::uint32_t kBnbBlockSize = 64;           // bitsandbytes 4-bit default blocksize
constexpr std::uint32_t kBnbSecondBlockSize = 256;    // bitsandbytes nested-quantisation block
constexpr std::uint32_t kDefaultInt4GroupSize = 128;  // GPTQ and AWQ default

[[noreturn]] void unknown(std::string_view name) {
  throw Error(ErrorKind::invalid_input,
              "unknown precision '" + printable(name) + "'" + did_you_mean(name, precision_names()) +
                  "; accepted: fp32, tf32, fp16, bf16, fp8, fp8_e4m3, fp8_e5m2, int8[-gN], int4[-gN][-zp], "
                  "nf4[-dq], fp4[-dq]",
              "precision");
}

Precision grouped(std::string_view name, Format format, std::string_view rest) {
  Precision p{format, ScaleLayout::row_groups, kDefaultInt4GroupSize, kFp16ScaleBits, 0, 0};
  if (rest.starts_with("-g")) {
    rest.remove_prefix(2);
    std::uint32_t group = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), group);
    if (ec != std::errc() || group == 0 || end == rest.data()) unknown(name);
    p.group_size = group;
    rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
  } else if (format == Format::int8) {
    p = Precision{Format::int8, ScaleLayout::per_row, 0, kFp32ScaleBits, 0, 0};
  }
  if (rest == "-zp") {
    if (p.layout != ScaleLayout::row_groups) unknown(name);
    p.zero_point_bits = element_bits(format);
    rest = {};
  }
  if (!rest.empty()) unknown(name);
  return p;
}

}  // namespace

Precision parse_precision(std::string_view name) {
  if (name == "fp32" || name == "float32") return {Format::fp32};
  if (name == "tf32") return {Format::tf32};
  if (name == "fp16" || name == "float16") return {Format::fp16};
  if (name == "bf16" || name == "bfloat16") return {Format::bf16};
  if (name == "fp8" || name == "fp8_e4m3") return {Format::fp8_e4m3};
  if (name == "fp8_e5m2") return {Format::fp8_e5m2};
  if (name.starts_with("int8")) return grouped(name, Format::int8, name.substr(4));
  if (name.starts_with("int4")) return grouped(name, Format::int4, name.substr(4));
  for (const Format format : {Format::nf4, Format::fp4}) {
    const std::string base = to_string(format);
    if (name == base) return {format, ScaleLayout::flat_blocks, kBnbBlockSize, kFp32ScaleBits, 0, 0};
    if (name == base + "-dq") {
      return {format, ScaleLayout::flat_blocks, kBnbBlockSize, 8, 0, kBnbSecondBlockSize};
    }
  }
  unknown(name);
}

}  // namespace memplan
