// The storage layouts of quantised Hugging Face checkpoints (a config.json's
// quantization_config): the exact bytes one linear layer takes as each library stores it,
// scales, zero-points and index tensors included. docs/quantization.md cites each layout.
#pragma once

#include <cstdint>
#include <string>

namespace memplan {

enum class QuantLayout {
  awq,       // AutoAWQ WQLinear_GEMM: int32 qweight [in, out/8], int32 qzeros, fp16 scales per group
  gptq,      // auto-gptq QuantLinear: int32 qweight [in*bits/32, out], qzeros, fp16 scales, int32 g_idx [in]
  bnb_4bit,  // bitsandbytes Params4bit: uint8 (2 weights a byte), fp32 absmax per 64, 16-entry code
  bnb_8bit,  // bitsandbytes Int8Params: int8 weight, fp32 SCB per output row
  fp8,       // one fp8 e4m3 byte per weight; scales per `grain`
  int8,      // one int8 byte per weight; scales per `grain` (compressed-tensors int-quantized)
  packed,    // compressed-tensors pack-quantized: int32 weight_packed [out, ceil(in*bits/32)], int64 weight_shape [2]
  mxfp4,     // gpt-oss experts: 16 bytes of e2m1 pairs + one e8m0 byte per 32 inputs
};

// Where the scales of an fp8 or compressed-tensors weight sit.
enum class ScaleGrain {
  tensor,   // one scale for the tensor
  channel,  // one per output row
  group,    // one per `group_size` inputs of each row
  block,    // one per block_rows x block_cols tile
};

struct CheckpointQuantization {
  QuantLayout layout = QuantLayout::awq;
  std::uint64_t bits = 4;                 // bits per stored weight (awq, gptq, compressed)
  std::uint64_t group_size = 0;           // inputs per scale (awq, gptq, group grain); 0 = a whole row
  bool double_quant = false;              // bnb 4-bit: absmax as uint8 with an fp32 absmax per 256 and an offset
  ScaleGrain grain = ScaleGrain::tensor;  // fp8 and compressed-tensors
  std::uint64_t block_rows = 128;         // block grain: output rows per scale
  std::uint64_t block_cols = 128;         // block grain: inputs per scale
  std::uint64_t scale_bytes = 4;          // bytes of one fp8 / compressed-tensors scale
  bool zero_points = false;               // compressed-tensors: asymmetric, a zero-point beside each scale
  bool input_scale = false;               // a static activation scale of scale_bytes stored per layer
  std::string bnb_type = "nf4";           // bnb 4-bit's code: nf4 or fp4 (the name only; both store 16 fp32 entries)
};

// Returns the bytes one linear layer with `rows` outputs and `cols` inputs takes in `q`'s
// layout, every tensor the library stores for it included (a bias is not: it stays in the
// model's dtype). Throws Error(invalid_input) keyed at the configuration key the shape
// conflicts with ("bits", "group_size", "weight_block_size") when the library could not
// store it (AWQ's outputs not a multiple of 8, a group that does not divide the inputs,
// MXFP4 inputs not a multiple of 32, ...), Error(overflow) past 64 bits.
std::uint64_t quantized_linear_bytes(const CheckpointQuantization& q, std::uint64_t rows, std::uint64_t cols);

// The layout's short name for breakdown rows: "awq-int4-g128", "gptq-int4-g128",
// "bnb-nf4-dq", "bnb-int8", "fp8-block128x128", "fp8-channel", "mxfp4", "int4-packed-g128",
// "int8-channel".
std::string layout_name(const CheckpointQuantization& q);

}  // namespace memplan
