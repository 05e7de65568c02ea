// Weights: the bytes a model's parameters occupy at a storage precision.
#pragma once

#include "memplan/core/breakdown.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/precision.hpp"
#include "memplan/core/tensor_run.hpp"

#include <vector>

namespace memplan {

// A bitsandbytes release: what its 4- and 8-bit matmuls keep for the backward pass and
// dequantise changed between releases.
struct BitsandbytesVersion {
  std::uint32_t major = 0;
  std::uint32_t minor = 50;
  std::uint32_t patch = 0;
  auto operator<=>(const BitsandbytesVersion&) const = default;
};
// Parses "0.43.2" or "0.45" (patch 0). Throws Error(invalid_input, key "bitsandbytes_version").
BitsandbytesVersion parse_bitsandbytes_version(std::string_view text);
std::string to_string(const BitsandbytesVersion& version);

// Whose non-parameter tensors a loaded model holds beside its weights.
enum class BufferRuntime {
  none,          // the parameters alone; llama.cpp (its rope factors are tensors of the file)
  transformers,  // each rotary embedding's inv_freq and original_inv_freq (fp32), Gemma's embed_scale
  vllm,          // one cos_sin_cache per rotary setting: max positions x rotary width, model dtype
};

struct WeightsOptions {
  Precision precision = precisions::bf16;  // storage of every tensor, or of the linear layers when quantised
  Precision unquantized =
      precisions::fp16;              // embeddings, norms, biases, router and LM head when `precision` is quantised
  bool quantize_lm_head = false;     // quantise an untied LM head along with the linear layers
  BitsandbytesVersion bitsandbytes;  // the release running nf4/fp4 and LLM.int8 linear layers
  BufferRuntime buffers = BufferRuntime::none;  // a plan sets its engine's
};

// A tensor a loaded model holds that is not a parameter (a registered buffer).
struct ModelBuffer {
  std::string name;  // as the runtime names it: "rotary_emb.inv_freq"
  std::uint64_t elements = 0;
  std::uint64_t element_bytes = 0;
  std::uint64_t copies = 1;
};

// Returns the buffers `options.buffers`' runtime makes for `spec` (read at transformers 4.57
// and vLLM 0.10), in the dtype it keeps them. Throws Error(overflow).
std::vector<ModelBuffer> model_buffers(const ModelSpec& spec, const WeightsOptions& options);

// Which bitsandbytes layers run the linear layers, where they keep or make tensors that
// other quantised layers do not.
enum class BitsandbytesLinears {
  none,
  four_bit,   // Linear4bit: nf4 or fp4 at `precision`, or a checkpoint stored as bnb-nf4 / bnb-fp4
  eight_bit,  // Linear8bitLt (LLM.int8): int8 with one scale per row, or a bnb-int8 checkpoint
};
BitsandbytesLinears bitsandbytes_linears(const ModelSpec& spec, const WeightsOptions& options);

// Returns the elements of the largest linear weight of `components` (weights rows such as
// "attention", "mlp", "experts") that `options` quantises; 0 when none is quantised. Throws
// Error(overflow).
std::uint64_t largest_quantized_linear(const ModelSpec& spec, const WeightsOptions& options,
                                       std::initializer_list<std::string_view> components);

// Whether bitsandbytes dequantises a 4-bit weight whole for a matmul over `rows` input rows
// (tokens x sequences) that keeps no graph: before 0.50 for every matmul but a single row's
// (matmul_4bit's gemv_4bit), from 0.50 above the 4 rows its own kernel always takes (up to
// 1536 the choice depends on the GPU: counted). A backward always dequantises.
bool bitsandbytes_dequantizes(const WeightsOptions& options, std::uint64_t rows);

// Returns a Breakdown with one component, "weights", whose detail has one row per model
// component (embeddings, attention, mlp or experts and router, norms, lm_head, pooler)
// with its parameter count and bytes, and a "buffers" row (no parameters) for model_buffers. Sub-byte formats are
// summed in bits and rounded up once per tensor. A spec with stored_weights (a .gguf) is priced from those instead:
// each row sums its component's stored bytes, and `options` does not apply. Throws Error(overflow) if a count exceeds
// 64 bits.
Breakdown estimate_weights(const ModelSpec& spec, const WeightsOptions& options = {});

// Returns the bytes of one tensor of `group` at `options`: ceil(bits / 8), with linear layers
// at options.precision and the tensors quantisers leave alone at options.unquantized, as
// estimate_weights counts them. Throws Error(overflow).
std::uint64_t weight_tensor_bytes(const TensorGroup& group, const WeightsOptions& options);

// Returns each weight tensor and buffer as an allocation (bytes per tensor, copies), for the
// caching-allocator model; the stored tensors when the spec has stored_weights. Throws
// Error(overflow).
std::vector<TensorRun> weight_allocations(const ModelSpec& spec, const WeightsOptions& options = {});

}  // namespace memplan
