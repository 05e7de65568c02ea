// llama.cpp as it allocates: the model's tensors in the buffers of the devices their layers
// are on, a KV cache of whole 256-cell blocks in the cache types asked for, the output
// buffer, and the compute buffer ggml's graph allocator reserves for one micro-batch.
// docs/llama-cpp.md gives each rule with the llama.cpp source it comes from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/ggml_types.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/core/precision.hpp"

namespace memplan {

struct LlamaCppOptions {
  std::uint64_t n_ctx = 4096;            // -c: tokens of context (cells are whole blocks of 256)
  std::uint64_t n_ubatch = 512;          // -ub: tokens per micro-batch (the compute buffer's size)
  std::uint64_t n_seq = 1;               // -np: sequences, each its own stream of n_ctx / n_seq cells
  bool kv_unified = false;               // --kv-unified: one stream of n_ctx cells the sequences share
  std::uint64_t n_outputs = 0;           // n_outputs_max: rows a micro-batch keeps for sampling; 0 = all
                                         //   (llama-server sets it to its slots' samples)
  std::uint32_t type_k = 1, type_v = 1;  // -ctk / -ctv: ggml type ids of the cache (1 = F16)
  bool flash_attn = true;                // -fa (auto turns it on where the backend has it: CPU, CUDA, Metal)
  std::uint64_t gpu_layers = 0;  // -ngl: the last N repeating layers on the GPU; N > n_layers adds the output layer
  std::uint64_t n_cpu_moe = 0;   // --n-cpu-moe: the routed experts of the first N layers stay in host memory
  bool gpu = false;              // a GPU to offload to (false: everything on the host)
  Precision weights = precisions::fp16;  // the weights' type when the model is not a .gguf
  bool server = false;                   // llama-server's rules (for the description)
  bool fit_context = false;              // llama-server's --fit with -c unset: the trained context for each slot,
                                         //   reduced until 1 GiB stays free (the plan layer does it)
};

// A draft model for speculative decoding: its own context beside the main one, on the same
// -c, -np and -ub, with its own cache types and layers on the GPU.
struct LlamaCppDraft {
  ModelSpec spec;
  LlamaCppOptions options;
  std::uint64_t draft_max = 3;  // --draft-max
};

// A vision tower llama.cpp loads from a file of its own (--mmproj; tools/mtmd/clip.cpp), as
// the front-end reads it from that file's header. llama-server puts it on the GPU unless
// --no-mmproj-offload, and reserves a compute buffer for one warm-up image.
struct LlamaCppProjector {
  std::string name;  // the file, as named
  std::string type;  // clip.projector_type: gemma3, qwen3vl_merger, qwen2vl_merger or qwen2.5vl_merger
  std::uint64_t image_size = 0, patch_size = 0;  // pixels on a side: gemma3's image, a patch
  std::uint64_t d_model = 0, d_ff = 0, n_layers = 0, n_heads = 0;
  std::uint64_t n_merge = 4;              // patches merged a side: Gemma 3's pool (4), Qwen's merger (2)
  std::uint64_t text_width = 0;           // the projection's output: the text model's d_model
  std::uint64_t patch_element_bytes = 2;  // v.patch_embd.weight's element (im2col writes in it)
  std::uint64_t projection_bytes = 0;     // gemma3: mm.input_projection.weight
  std::vector<bool> deepstack;            // qwen3vl: the layers with a deepstack merger
  std::uint64_t window_pattern = 0;       // qwen2.5vl: windows in every layer but each n-th (n_wa_pattern)
  std::uint64_t warmup_tokens = 0;        // qwen3vl: the warm-up image's tokens (46 x 46)
  std::uint64_t max_tokens = 0;           // qwen3vl: the largest image's tokens (--image-max-tokens, 4,096)
  std::vector<std::uint64_t> tensors;     // each tensor's bytes, as stored
  bool offload = true;                    // --mmproj-offload (llama-server's default)
};

struct LlamaCppProjectorEstimate {
  std::uint64_t weights = 0;    // the tensors' buffer: each tensor padded to the buffer's alignment
  std::uint64_t compute = 0;    // the largest image's graph (gemma3: its one size), on the tower's device
  std::uint64_t warmup = 0;     // the warm-up image's graph, what llama.cpp reserves at start-up
  std::uint64_t image = 0;      // the graph's inputs (the image, Qwen's positions) in the host's compute
                                //   buffer when the tower is offloaded (ggml's scheduler keeps inputs there)
  std::uint64_t fit_bytes = 0;  // what llama-server's --fit sets aside for it: the tensors unpadded and the
                                //   device's compute buffer at the warm-up (mtmd_get_memory_usage)
};

// Returns the vision tower's buffers with flash attention on or off, on a GPU (CUDA's 128-byte
// alignment) or the CPU (32). Throws Error(invalid_input, "mmproj") when what it feeds the text
// model (its projection's width, and a deepstack merger's as wide beside it for each) does not
// match the model's `text` input embeddings (d_model, and as many again for each of its
// deepstack_layers): llama.cpp refuses the pair. Error(overflow).
LlamaCppProjectorEstimate estimate_llama_cpp_projector(const LlamaCppProjector& projector, const ModelSpec& text,
                                                       bool flash_attn, bool on_gpu);

// Where a model's tensors go: the input layer (token and position embeddings) always in host
// memory, each repeating layer and the output layer (final norm and LM head) where -ngl puts it.
struct LlamaCppWeights {
  std::uint64_t input = 0;             // token_embd, position_embd, ...
  std::vector<std::uint64_t> layers;   // blk.N.*
  std::vector<std::uint64_t> experts;  // of each layer's bytes, the routed experts' (blk.N.ffn_*_exps)
  std::uint64_t output = 0;            // output_norm and an untied output (LM head)
  std::uint64_t tied_head = 0;         // a tied head: token_embd, which the output layer loads again off the host
  bool stored = false;                 // from a .gguf's tensors (else the architecture at a precision)
};

struct LlamaCppEstimate {
  std::uint64_t cells = 0;         // KV cells per layer and stream (each sequence's, or the unified one's)
  std::uint64_t window_cells = 0;  // a sliding-window or chunked layer's cells per stream; 0 = none
  std::uint64_t state_cells = 0;   // a state-space model's recurrent state slots: one per sequence (-np)
  std::uint64_t streams = 1;       // cache streams: n_seq, or 1 when unified
  std::uint64_t outputs = 0;       // the worst micro-batch's outputs (its logits in the compute buffer)
  std::uint64_t gpu_layers = 0;    // repeating layers on the GPU
  bool output_on_gpu = false;
  Breakdown gpu;   // what the GPU holds (empty without one)
  Breakdown host;  // what host RAM holds
};

// Returns the weights per llama.cpp layer: a .gguf's tensors as stored, or the architecture
// at `weights` precision. Throws Error(overflow).
LlamaCppWeights llama_cpp_weights(const ModelSpec& spec, const Precision& weights);

// Returns the KV cells of each cache stream llama.cpp allocates for n_ctx tokens over n_seq
// sequences (-np), llama_context's n_ctx_seq: n_ctx rounded up to 256, then, unless the cache
// is unified (one stream for all), divided among the sequences and rounded up to 256 again.
std::uint64_t llama_cpp_cells(std::uint64_t n_ctx, std::uint64_t n_seq = 1, bool kv_unified = false);

// Returns the GPU's and the host's memory for `spec` under `options`. Throws
// Error(invalid_input) for what llama.cpp refuses (a quantised V cache without flash
// attention, a cache type whose blocks do not divide a row, n_ubatch or n_ctx of 0, a model
// llama.cpp cannot run such as one without an LM head), Error(unsupported) for latent
// attention, whose llama.cpp cache memplan does not model, and for a state-space hybrid (a
// Mamba's or Mamba-2's recurrent state is priced), Error(overflow).
LlamaCppEstimate estimate_llama_cpp(const ModelSpec& spec, const LlamaCppOptions& options);

// The cache types llama.cpp accepts for -ctk / -ctv (common/arg.cpp kv_cache_types).
const std::vector<std::uint32_t>& llama_cpp_cache_types();

// Returns the cache type named `name` ("q8_0", "F16"); throws Error(invalid_input, key) listing them.
const GgmlType& parse_llama_cpp_cache_type(std::string_view name, const char* key);

}  // namespace memplan
