// llama.cpp's compute buffer as ggml's graph allocator reserves it, replayed (llama_cpp.cpp uses it).
#pragma once

#include <cstdint>
#include <vector>

namespace memplan::detail {

// The shape of the graph llama.cpp reserves: a micro-batch of n_ubatch tokens against n_kv
// cells, n_outputs of them outputs (the last layer keeps only those rows after its attention).
struct LlamaCppGraphShape {
  bool gpt2 = false;  // LayerNorm, fused qkv, learned positions, GELU MLP (else llama/qwen2: RMSNorm, SwiGLU)
  bool flash_attn = true;
  std::uint64_t n_layers = 0, d_model = 0, n_heads = 0, n_kv_heads = 0, d_head = 0, d_ff = 0, vocab = 0;
  std::uint64_t n_ubatch = 0, n_kv = 0;
  bool k_quantized = false, v_quantized = false;  // a block-quantised cache type (q8_0, q4_0, ...)
  bool k_f32 = false, v_f32 = false;              // an f32 cache
  std::uint64_t n_seq = 1;       // -np: cache streams; the mask holds ceil(n_ubatch / n_seq) rows for each
  std::uint64_t n_outputs = 0;   // rows kept past the last layer's attention (n_outputs_max); 0 = n_ubatch
  std::uint64_t alignment = 32;  // the buffer type's: the CPU's TENSOR_ALIGNMENT 32, CUDA's 128
  std::uint64_t positions = 1;   // position ids a token: 4 under M-RoPE (Qwen2-VL)
};

// Returns the bytes ggml-alloc's dynamic allocator (ggml/src/ggml-alloc.c) reaches over the
// tensors' allocations and frees in the order llama.cpp v0.5.0 makes them for this graph:
// best fit among the free blocks but the last, else the last; neighbours merged on free;
// the buffer's alignment. The order was recorded from an instrumented build of that release
// (AT_PRINTF in ggml-alloc.c) for 1, 2, 3, 4, 6 and 8 layers and every cache type; a graph is
// the first layer, the middle layers (all alike) and the last layer with the output. Throws
// Error(overflow).
std::uint64_t llama_cpp_graph_bytes(const LlamaCppGraphShape& shape);

// The graph of a Mamba or Mamba-2 model (src/models/mamba-base.cpp): per layer an RMSNorm, the
// input projection, the convolution over the cached d_conv - 1 columns and the micro-batch,
// the selective scan (its output holds the micro-batch's outputs and the sequences' new
// states) and the output projection; the sequences split the micro-batch evenly.
struct LlamaCppSsmGraphShape {
  std::uint64_t version = 1;  // 1: Mamba, 2: Mamba-2
  std::uint64_t n_layers = 0, d_model = 0, vocab = 0;
  std::uint64_t d_inner = 0, d_state = 0, d_conv = 0;
  std::uint64_t dt_rank = 0;            // Mamba
  std::uint64_t heads = 0, groups = 0;  // Mamba-2
  std::uint64_t n_ubatch = 0;           // a multiple of n_seq
  std::uint64_t n_seq = 1;              // sequences in the micro-batch (-np), each a state slot
  std::uint64_t n_outputs = 0;          // 0 = n_ubatch
  std::uint64_t alignment = 32;
};

// Returns the bytes ggml-alloc reaches over this graph's allocations and frees, in the order
// the same release makes them (recorded as above for Mamba and Mamba-2 of 1 to 4 layers and 1
// to 4 sequences). Throws Error(overflow).
std::uint64_t llama_cpp_ssm_graph_bytes(const LlamaCppSsmGraphShape& shape);

// Gemma 3's graph (src/models/gemma3.cpp) for one micro-batch: sliding-window and global
// layers, each kind with its own cache's row indices and mask among the inputs; per layer an
// RMSNorm, q, k and v with per-head RMSNorms, attention, the output projection normed and added
// in place, and a GELU-gated MLP likewise; the embeddings kept beside their scaled copy.
struct LlamaCppGemma3GraphShape {
  bool flash_attn = true;
  std::vector<bool> sliding;  // each layer: a sliding-window layer (else global)
  std::uint64_t d_model = 0, n_heads = 0, n_kv_heads = 0, d_head = 0, d_ff = 0, vocab = 0;
  std::uint64_t n_ubatch = 0;                        // a multiple of n_seq
  std::uint64_t global_cells = 0, window_cells = 0;  // each kind's cells per stream
  std::uint64_t n_seq = 1;                           // cache streams
  std::uint64_t n_outputs = 0;                       // 0 = n_ubatch
  std::uint64_t alignment = 32;
};

// Returns the bytes ggml-alloc reaches over this graph in the order llama.cpp v0.5.0 makes its
// allocations and frees (recorded on the CPU for seven layers of each kind's pattern, with and
// without flash attention, f16 caches). Throws Error(overflow).
std::uint64_t llama_cpp_gemma3_graph_bytes(const LlamaCppGemma3GraphShape& shape);

// Qwen3's graph (src/models/qwen3.cpp, qwen3moe.cpp, qwen3vl.cpp, qwen3vlmoe.cpp): per layer an
// RMS norm, q, k and v with per-head q and k norms, attention, then a SwiGLU MLP or routed
// experts (the router's logits, their sort, the top k's weights normalised, each token's k
// experts' gate, up and down, their sum). Qwen3-VL's text models pad the tokens' embeddings to
// (1 + deepstack) x d_model, which the first `deepstack` layers read and the last of them frees.
struct LlamaCppQwen3GraphShape {
  bool flash_attn = true;
  std::vector<bool> experts;  // each layer: routed experts (else a dense MLP of d_ff)
  std::uint64_t d_model = 0, n_heads = 0, n_kv_heads = 0, d_head = 0, d_ff = 0, vocab = 0;
  std::uint64_t n_experts = 0, experts_per_token = 0, expert_width = 0;
  bool k_quantized = false, v_quantized = false;  // a block-quantised cache type (q8_0, q4_0, ...)
  std::uint64_t n_ubatch = 0;                     // a multiple of n_seq
  std::uint64_t n_kv = 0;                         // cells per stream
  std::uint64_t n_seq = 1;                        // cache streams
  std::uint64_t n_outputs = 0;                    // 0 = n_ubatch
  std::uint64_t positions = 1;                    // position ids a token: M-RoPE's 4 (Qwen3-VL)
  std::uint64_t deepstack = 0;                    // layers that add deepstack features; fewer than the layers
  std::uint64_t alignment = 32;
};

// Returns the bytes ggml-alloc reaches over this graph in the order llama.cpp v0.5.0 makes its
// allocations and frees (recorded on the CPU for Qwen3, Qwen3-MoE, Qwen3-VL and Qwen3-VL-MoE
// text models, with and without flash attention, f16, f32 and quantised caches). Throws
// Error(overflow).
std::uint64_t llama_cpp_qwen3_graph_bytes(const LlamaCppQwen3GraphShape& shape);

// The graph of one image through a vision tower in llama.cpp's mtmd (tools/mtmd/clip.cpp):
// - gemma3 (models/siglip.cpp): the image, its patches (im2col in the patch kernel's type, a
//   matmul), n_layers ViT blocks (LayerNorm, biased q, k and v, attention with f16 copies of K
//   and V under flash attention, a GELU MLP), the final LayerNorm, an n_merge x n_merge
//   average pool, an RMS norm and the projection into the text model's width;
// - qwen3vl (models/qwen3vl.cpp, Qwen3-VL and Qwen3.5): the patches of two temporal kernels
//   added, the learned positions interpolated to the image's grid, blocks of fused qkv with
//   M-RoPE, the final LayerNorm and the 2 x 2 merger's MLP; a deepstack layer's output is kept
//   to the end, where its own merger runs and every merger's output is concatenated;
// - qwen2vl (models/qwen2vl.cpp, Qwen2-VL and Qwen2.5-VL): the same patches without positions,
//   q, k and v apart; Qwen2.5-VL's windowed layers read an f32 mask of every patch pair (an f16
//   copy of it under flash attention, and a copy a layer), its patches reordered by window and
//   back, RMS norms (the last in place) and a SiLU-gated MLP.
enum class VisionGraph { gemma3, qwen3vl, qwen2vl };

struct LlamaCppVisionGraphShape {
  VisionGraph graph = VisionGraph::gemma3;
  bool flash_attn = true;
  std::uint64_t width = 0, height = 0, patch_size = 0;  // pixels: the image's sides, a patch's
  std::uint64_t n_layers = 0, d_model = 0, n_heads = 0, d_ff = 0;
  std::uint64_t n_merge = 4;              // gemma3: the pool's kernel and stride
  std::uint64_t text_width = 0;           // the projection's output rows
  std::uint64_t patch_element_bytes = 2;  // the patch kernels' type: im2col writes in it
  std::uint64_t projection_bytes = 0;     // gemma3: mm.input_projection.weight, copied transposed
  std::vector<bool> deepstack;            // qwen3vl: the layers with a deepstack merger
  bool qwen2_5 = false;                   // qwen2vl: Qwen2.5-VL's RMS norms and gated MLP
  std::uint64_t window_pattern = 0;       // qwen2vl: every layer but each n-th attends in windows; 0: none
  std::uint64_t alignment = 32;
};

// Returns the bytes ggml-alloc reaches over this graph's allocations and frees, in the order
// llama.cpp v0.5.0's mtmd makes them (recorded on the CPU for 1 to 4 layers, with and without
// flash attention; qwen3vl with deepstack mergers on none, two and three layers; qwen2vl with
// windows in every other layer, in none and in all but the last). Throws
// Error(overflow).
std::uint64_t llama_cpp_vision_graph_bytes(const LlamaCppVisionGraphShape& shape);

}  // namespace memplan::detail
