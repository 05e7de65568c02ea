#include "memplan/core/quantized_checkpoint.hpp"

#include "memplan/core/bytes.hpp"
#include "memplan/core/error.hpp"

namespace memplan {

namespace {

std::string shape_text(std::uint64_t rows, std::uint64_t cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

std::uint64_t mul(std::uint64_t a, std::uint64_t b) { return checked_mul(a, b, "quantised tensor bytes"); }
std::uint64_t add(std::uint64_t a, std::uint64_t b) { return checked_add(a, b, "quantised tensor bytes"); }

// The inputs one scale covers along a row: the group, or the whole row.
std::uint64_t group_of(const CheckpointQuantization& q, std::uint64_t cols) {
  return q.group_size == 0 ? cols : q.group_size;
}

// The scales of an fp8 / int8 / packed weight at its grain.
std::uint64_t scale_count(const CheckpointQuantization& q, std::uint64_t rows, std::uint64_t cols) {
  switch (q.grain) {
    case ScaleGrain::tensor: return 1;
    case ScaleGrain::channel: return rows;
    case ScaleGrain::group: {
      const std::uint64_t g = group_of(q, cols);
      if (cols % g != 0) {
        throw_invalid_input("group_size", "group_size " + std::to_string(g) + " does not divide the " +
                                              std::to_string(cols) + " inputs of a " + shape_text(rows, cols) +
                                              " layer");
      }
      return mul(rows, cols / g);
    }
    case ScaleGrain::block: return mul(ceil_div(rows, q.block_rows), ceil_div(cols, q.block_cols));
  }
  return 1;
}

}  // namespace

std::uint64_t quantized_linear_bytes(const CheckpointQuantization& q, std::uint64_t rows, std::uint64_t cols) {
  const std::uint64_t n = mul(rows, cols);
  switch (q.layout) {
    case QuantLayout::awq: {
      // WQLinear_GEMM asserts both: outputs pack 8 to an int32, groups tile the inputs.
      if (q.bits != 4)
        throw_invalid_input("bits",
                            "AWQ stores 4-bit weights only (AutoAWQ's WQLinear_GEMM), not " + std::to_string(q.bits));
      const std::uint64_t g = group_of(q, cols);
      if (cols % g != 0) {
        throw_invalid_input("group_size", "group_size " + std::to_string(g) + " does not divide the " +
                                              std::to_string(cols) + " inputs of a " + shape_text(rows, cols) +
                                              " layer");
      }
      if (rows % 8 != 0) {
        throw_invalid_input("bits", "AWQ packs 8 outputs to an int32: a " + shape_text(rows, cols) + " layer's " +
                                        std::to_string(rows) + " outputs are not a multiple of 8");
      }
      const std::uint64_t words = rows / 8, groups = cols / g;
      const std::uint64_t qweight = mul(mul(cols, words), 4);
      const std::uint64_t qzeros = mul(mul(groups, words), 4);
      const std::uint64_t scales = mul(mul(groups, rows), 2);
      return add(add(qweight, qzeros), scales);
    }
    case QuantLayout::gptq: {
      // qweight packs along the inputs, qzeros along the outputs, 32 values' bits to
      // `bits` int32 words (infeatures // 32 * bits rows): both sizes must be multiples of 32.
      if (cols % 32 != 0 || rows % 32 != 0) {
        throw_invalid_input("bits", "GPTQ packs 32 weights into `bits` int32 words: a " + shape_text(rows, cols) +
                                        " layer's sizes are not multiples of 32");
      }
      const std::uint64_t groups = ceil_div(cols, group_of(q, cols));
      const std::uint64_t qweight = mul(mul(mul(cols / 32, q.bits), rows), 4);
      const std::uint64_t qzeros = mul(mul(groups, mul(rows / 32, q.bits)), 4);
      const std::uint64_t scales = mul(mul(groups, rows), 2);
      const std::uint64_t g_idx = mul(cols, 4);
      return add(add(add(qweight, qzeros), scales), g_idx);
    }
    case QuantLayout::bnb_4bit: {
      const std::uint64_t blocks = ceil_div(n, 64);
      std::uint64_t bytes = add(ceil_div(n, 2), 16ULL * 4);  // packed weight + the 16-entry fp32 code
      if (q.double_quant) {
        // absmax as uint8, its own fp32 absmax per 256 blocks, the 256-entry fp32 code and the fp32 offset
        bytes = add(bytes, add(blocks, add(mul(ceil_div(blocks, 256), 4), 256 * 4 + 4)));
      } else {
        bytes = add(bytes, mul(blocks, 4));
      }
      return bytes;
    }
    case QuantLayout::bnb_8bit: return add(n, mul(rows, 4));
    case QuantLayout::fp8:
    case QuantLayout::int8:
    case QuantLayout::packed: {
      std::uint64_t weight = n;
      const std::uint64_t per_word = 32 / q.bits;
      if (q.layout == QuantLayout::packed) {
        // weight_packed int32 [rows, ceil(cols / per_word)], the last word padded; weight_shape int64 [2]
        weight = add(mul(mul(rows, ceil_div(cols, per_word)), 4), 2ULL * 8);
      }
      const std::uint64_t scales = scale_count(q, rows, cols);
      std::uint64_t bytes = add(weight, mul(scales, q.scale_bytes));
      if (q.zero_points) {
        // one zero-point per scale: int8, or for packed group/channel scales int32 words of
        // per_word zero-points along the outputs
        const bool packed_zeros = q.layout == QuantLayout::packed &&
                                  (q.grain == ScaleGrain::group || q.grain == ScaleGrain::channel);
        bytes = add(bytes, packed_zeros ? mul(mul(ceil_div(rows, per_word), scales / rows), 4) : scales);
      }
      if (q.input_scale) bytes = add(bytes, q.scale_bytes);
      return bytes;
    }
    case QuantLayout::mxfp4: {
      if (cols % 32 != 0) {
        throw_invalid_input("quant_method", "MXFP4 stores blocks of 32 inputs: a " + shape_text(rows, cols) +
                                                " layer's " + std::to_string(cols) +
                                                " inputs are not a multiple of 32");
      }
      return mul(mul(rows, cols / 32), 16 + 1);
    }
  }
  return n;
}

std::string layout_name(const CheckpointQuantization& q) {
  const auto group = [&] { return q.group_size == 0 ? std::string("-row") : "-g" + std::to_string(q.group_size); };
  const auto grain = [&]() -> std::string {
    switch (q.grain) {
      case ScaleGrain::tensor: return "-tensor";
      case ScaleGrain::channel: return "-channel";
      case ScaleGrain::group: return group();
      case ScaleGrain::block: return "-block" + std::to_string(q.block_rows) + "x" + std::to_string(q.block_cols);
    }
    return "";
  };
  const std::string bits = std::to_string(q.bits);
  switch (q.layout) {
    case QuantLayout::awq: return "awq-int" + bits + group();
    case QuantLayout::gptq: return "gptq-int" + bits + group();
    case QuantLayout::bnb_4bit: return "bnb-" + q.bnb_type + (q.double_quant ? "-dq" : "");
    case QuantLayout::bnb_8bit: return "bnb-int8";
    case QuantLayout::fp8: return "fp8" + grain();
    case QuantLayout::int8: return "int8" + grain();
    case QuantLayout::packed: return "int" + bits + "-packed" + grain();
    case QuantLayout::mxfp4: return "mxfp4";
  }
  return "quantised";
}

}  // namespace memplan
