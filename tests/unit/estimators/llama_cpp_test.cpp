#include "memplan/estimators/llama_cpp.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "layout_fixtures.hpp"
#include "reference_models.hpp"

namespace memplan {
namespace llama_cpp_test {

using testing::expect_invalid;

std::uint64_t bytes_of(const Breakdown& b, const std::string& name) {
  const Item* i = b.find(name);
  return i == nullptr ? 0 : i->bytes.count();
}

// Llama-2-7B's blocks at the comparison models' small sizes: heads of d / heads.
ModelSpec small_llama(std::uint64_t d, std::uint64_t layers, std::uint64_t heads, std::uint64_t kv_heads,
                      std::uint64_t ff, std::uint64_t vocab) {
  ModelSpec s = testing::llama2_7b();
  s.d_model = d;
  s.n_layers = layers;
  s.n_heads = heads;
  s.n_kv_heads = kv_heads;
  s.d_head = d / heads;
  s.d_mlp = ff;
  s.vocab_size = vocab;
  return s;
}

// The host's compute buffer of a CPU plan at -c ctx -ub ubatch over n_seq sequences: with
// `server`, llama-server's one unified cache and an output a sequence; K and V of ggml type `cache`.
std::uint64_t cpu_compute_buffer(const ModelSpec& s, std::uint64_t ctx, std::uint64_t ubatch, std::uint64_t n_seq,
                                 bool server, bool flash_attn, std::uint32_t cache = 1) {
  LlamaCppOptions o;
  o.n_ctx = ctx;
  o.n_ubatch = ubatch;
  o.n_seq = n_seq;
  o.kv_unified = server;
  o.n_outputs = server ? n_seq : 0;
  o.flash_attn = flash_attn;
  o.type_k = o.type_v = cache;
  return bytes_of(estimate_llama_cpp(s, o).host, "compute_buffer");
}

TEST(LlamaCpp, CellsAreTheContextInBlocksOf256) {
  EXPECT_EQ(llama_cpp_cells(1), 256u);
  EXPECT_EQ(llama_cpp_cells(256), 256u);
  EXPECT_EQ(llama_cpp_cells(257), 512u);
  EXPECT_EQ(llama_cpp_cells(1000), 1024u);
  EXPECT_EQ(llama_cpp_cells(4096), 4096u);
}

TEST(LlamaCpp, CellsArePaddedBeforeTheSequencesShareThem) {
  // llama_context pads -c to 256 first, then gives each of -np sequences its share padded
  // again: 1025 -> 1280, / 2 = 640 -> 768 (1025 / 2 = 512 padded alone would be 512 cells).
  EXPECT_EQ(llama_cpp_cells(1025, 2), 768u);
  EXPECT_EQ(llama_cpp_cells(2100, 3), 768u);  // 2304 / 3 = 768
  // --kv-unified: one stream of the padded context for them all.
  EXPECT_EQ(llama_cpp_cells(1000, 3, true), 1024u);
}

TEST(LlamaCpp, AUnifiedCacheIsOneStreamAndEverySequenceKeepsItsLogits) {
  // Llama-2-7B at -c 1000 over 3 sequences: 1,024 cells x 32 layers x 4096 x 2 B x (K + V) in
  // one stream, where separate streams would be 3 x 512 cells; a row of 32,000 f32 logits each.
  LlamaCppOptions o;
  o.n_ctx = 1000;
  o.n_seq = 3;
  o.kv_unified = true;
  const LlamaCppEstimate e = estimate_llama_cpp(testing::llama2_7b(), o);
  EXPECT_EQ(e.streams, 1u);
  EXPECT_EQ(bytes_of(e.host, "kv_cache"), 1024ULL * 32 * 4096 * 2 * 2);
  EXPECT_EQ(bytes_of(e.host, "output_buffer"), 3ULL * 32000 * 4);
}

TEST(LlamaCpp, FewOutputsAsLlamaCppReservedThem) {
  // Measured with tests/llama_cpp/context_probe.cpp (llama.cpp v0.5.0, CPU) on the comparison's
  // llama-draft-q8_0 (d 128, 2 layers, 2 heads of 64, 1 key/value head, ff 384, 4,160 tokens):
  // llama_context::memory_breakdown's compute bytes. n_outputs_max is what llama-server sets.
  struct Run {
    std::uint64_t ctx, n_seq;
    bool unified;
    std::uint64_t outputs;
    bool flash_attn;
    std::uint64_t compute;
  };
  const Run runs[] = {
      {4096, 4, true, 4, true, 7614496},     // -np 4 slots, one output each: a layer is the peak
      {4096, 4, true, 0, true, 9046016},     // every token an output: 512 x 4,160 f32 logits
      {4096, 4, true, 16, false, 26746944},  // with 3 drafted tokens a slot, without flash attention
      {2100, 3, false, 0, true, 9046560},    // the 512-token micro-batch made 513, a multiple of 3
  };
  const ModelSpec s = small_llama(128, 2, 2, 1, 384, 4160);
  for (const Run& r : runs) {
    LlamaCppOptions o;
    o.n_ctx = r.ctx;
    o.n_seq = r.n_seq;
    o.kv_unified = r.unified;
    o.n_outputs = r.outputs;
    o.flash_attn = r.flash_attn;
    EXPECT_EQ(bytes_of(estimate_llama_cpp(s, o).host, "compute_buffer"), r.compute)
        << "-c " << r.ctx << " -np " << r.n_seq << " outputs " << r.outputs;
  }
}

TEST(LlamaCpp, NCpuMoeKeepsTheFirstLayersExpertsOnTheHost) {
  // Llama-2-7B's blocks with Mixtral's experts (8 of 14,336 wide), the first layer dense: at
  // fp16 each MoE layer's experts are 8 x 3 x 4096 x 14,336 x 2 B = 2,818,572,288 B.
  ModelSpec s = testing::llama2_7b();
  s.experts = 8;
  s.experts_per_token = 2;
  s.d_expert = 14336;
  s.first_dense_layers = 1;
  const std::uint64_t experts = 8ULL * 3 * 4096 * 14336 * 2;
  const LlamaCppWeights w = llama_cpp_weights(s, precisions::fp16);
  EXPECT_EQ(w.experts[0], 0u);
  EXPECT_EQ(w.experts[1], experts);
  EXPECT_EQ(w.experts[31], experts);
  // --n-cpu-moe 2 with every layer on the GPU: layer 1's experts join the token embedding
  // (32,000 x 4096 x 2 B) on the host; layer 0 has none to keep.
  LlamaCppOptions o;
  o.gpu = true;
  o.gpu_layers = 33;
  o.n_cpu_moe = 2;
  const LlamaCppEstimate e = estimate_llama_cpp(s, o);
  EXPECT_EQ(bytes_of(e.host, "weights"), 32000ULL * 4096 * 2 + experts);
  o.n_cpu_moe = 0;
  EXPECT_EQ(bytes_of(estimate_llama_cpp(s, o).gpu, "weights"), bytes_of(e.gpu, "weights") + experts);
}

TEST(LlamaCpp, Llama2KvCacheAsItsLogsPrintIt) {
  // llama.cpp logs "KV self size = 2048.00 MiB, K (f16): 1024.00 MiB" for Llama-2-7B at -c 4096:
  // 32 layers x 4096 cells x 4096 (32 heads x 128) x 2 B x (K + V).
  LlamaCppOptions o;
  o.n_ctx = 4096;
  const LlamaCppEstimate f16 = estimate_llama_cpp(testing::llama2_7b(), o);
  EXPECT_EQ(bytes_of(f16.host, "kv_cache"), 32ULL * 4096 * 4096 * 2 * 2);
  // q8_0: blocks of 32 elements in 34 bytes: 4096 / 32 x 34 = 4,352 B per row (544 MiB for K).
  o.type_k = o.type_v = parse_llama_cpp_cache_type("q8_0", "cache_type_k").id;
  const LlamaCppEstimate q8 = estimate_llama_cpp(testing::llama2_7b(), o);
  EXPECT_EQ(bytes_of(q8.host, "kv_cache"), 32ULL * 4096 * 4352 * 2);
}

TEST(LlamaCpp, NglPutsTheLastLayersOnTheGpuAndTheOutputLayerPastThem) {
  // Llama-2-7B at fp16: a block is 4 x 4096^2 + 3 x 4096 x 11008 weights and two norms of
  // 4096 = 202,383,360 x 2 B = 404,766,720 B; the embedding and the head 32000 x 4096 x 2 B
  // = 262,144,000 B each; the final norm 8,192 B. 6,738,415,616 parameters in all.
  constexpr std::uint64_t kBlock = 404766720, kTable = 262144000, kNorm = 8192;
  LlamaCppOptions o;
  o.n_ctx = 4096;
  o.gpu = true;
  o.gpu_layers = 16;
  const LlamaCppEstimate half = estimate_llama_cpp(testing::llama2_7b(), o);
  EXPECT_EQ(half.gpu_layers, 16u);
  EXPECT_FALSE(half.output_on_gpu);
  EXPECT_EQ(bytes_of(half.gpu, "weights"), 16 * kBlock);
  EXPECT_EQ(bytes_of(half.host, "weights"), kTable + 16 * kBlock + kNorm + kTable);
  EXPECT_EQ(bytes_of(half.gpu, "kv_cache"), 16ULL * 4096 * 4096 * 2 * 2);
  EXPECT_EQ(bytes_of(half.host, "kv_cache"), 16ULL * 4096 * 4096 * 2 * 2);

  o.gpu_layers = 32;  // every repeating layer; the output layer stays on the host
  EXPECT_FALSE(estimate_llama_cpp(testing::llama2_7b(), o).output_on_gpu);
  o.gpu_layers = 33;
  const LlamaCppEstimate all = estimate_llama_cpp(testing::llama2_7b(), o);
  EXPECT_TRUE(all.output_on_gpu);
  EXPECT_EQ(bytes_of(all.gpu, "weights"), 32 * kBlock + kNorm + kTable);
  EXPECT_EQ(bytes_of(all.host, "weights"), kTable);  // the input layer never leaves the host
  EXPECT_EQ(bytes_of(all.gpu, "weights") + bytes_of(all.host, "weights"), 6738415616ULL * 2);
  EXPECT_EQ(bytes_of(all.host, "kv_cache"), 0u);
}

TEST(LlamaCpp, ATiedHeadIsLoadedAgainOnTheGpu) {
  // gpt2 ties its head: on the host the output layer is the final norm (LayerNorm, 2 x 768 x
  // 2 B); offloaded, it also holds the 50257 x 768 embedding again at fp16.
  LlamaCppOptions o;
  o.n_ctx = 1024;
  o.gpu = true;
  o.gpu_layers = 12;
  const std::uint64_t host = bytes_of(estimate_llama_cpp(testing::gpt2(), o).gpu, "weights");
  o.gpu_layers = 13;
  const std::uint64_t offloaded = bytes_of(estimate_llama_cpp(testing::gpt2(), o).gpu, "weights");
  EXPECT_EQ(offloaded - host, 2ULL * 768 * 2 + 50257ULL * 768 * 2);
}

// The compute buffer as llama.cpp v0.5.0 (node-llama-cpp 3.22.1, CPU) reported it: its
// context's bytes less the KV cache, measured here on 2026-11-27 for models of these shapes
// (tests/llama_cpp reruns such comparisons against llama.cpp itself).
struct Measured {
  Family family;
  std::uint64_t d, layers, heads, kv_heads, ff, vocab, ubatch, ctx;
  bool flash_attn;
  std::uint64_t compute;
};

TEST(LlamaCpp, ComputeBufferIsWhatLlamaCppReserved) {
  const Measured runs[] = {
      {Family::llama, 256, 2, 4, 2, 688, 2048, 256, 512, true, 3431424},
      {Family::llama, 256, 2, 4, 2, 688, 2048, 256, 512, false, 4199424},
      {Family::llama, 512, 2, 4, 2, 1376, 2048, 512, 4096, true, 16857088},
      {Family::llama, 512, 2, 4, 2, 1792, 2048, 512, 512, false, 16263168},
      {Family::gpt2, 256, 2, 4, 2, 1024, 2048, 512, 512, true, 5769216},
      {Family::llama, 256, 2, 8, 2, 1024, 8192, 512, 4096, true, 17827840},
      {Family::llama, 768, 1, 8, 8, 3072, 32000, 256, 512, false, 34341888},
      {Family::llama, 256, 2, 8, 8, 688, 32000, 512, 512, true, 66586624},
  };
  for (const Measured& m : runs) {
    ModelSpec s = m.family == Family::gpt2 ? testing::gpt2() : testing::llama2_7b();
    s.d_model = m.d;
    s.n_layers = m.layers;
    s.n_heads = m.heads;
    s.n_kv_heads = m.kv_heads;
    s.d_head = m.d / m.heads;
    s.d_mlp = m.ff;
    s.vocab_size = m.vocab;
    s.max_seq_len = 8192;
    EXPECT_EQ(cpu_compute_buffer(s, m.ctx, m.ubatch, 1, false, m.flash_attn), m.compute)
        << "d " << m.d << " layers " << m.layers << " ff " << m.ff << " vocab " << m.vocab << " fa " << m.flash_attn;
  }
}

// A Mamba (version 1) or Mamba-2 of llama.cpp's shapes: d_inner 2 d_model, conv 4 taps.
ModelSpec state_space(std::uint64_t version, std::uint64_t d, std::uint64_t layers, std::uint64_t vocab,
                      std::uint64_t d_state, std::uint64_t rank, std::uint64_t groups) {
  ModelSpec s = family_defaults(version == 1 ? Family::mamba : Family::mamba2);
  s.name = "ssm";
  s.d_model = d;
  s.n_layers = layers;
  s.vocab_size = vocab;
  s.max_seq_len = 1 << 20;
  s.ssm.version = version;
  s.ssm.d_inner = 2 * d;
  s.ssm.d_state = d_state;
  s.ssm.d_conv = 4;
  if (version == 1) {
    s.ssm.dt_rank = rank;
  } else {
    s.ssm.heads = rank;
    s.ssm.groups = groups;
    s.ssm.chunk = 256;
  }
  return s;
}

TEST(LlamaCpp, AStateSpaceModelKeepsAStateSlotPerSequenceAndNoCells) {
  // Mamba-130M's sizes (d 768, 24 layers, d_inner 1536, state 16, conv 4) over -np 4, unified
  // or not: per layer and slot f32 rows of (4 - 1) x 1536 conv columns and 16 x 1536 states,
  // (4,608 + 24,576) x 4 B = 116,736 B; x 4 slots x 24 layers.
  LlamaCppOptions o;
  o.n_ctx = 8192;
  o.n_seq = 4;
  for (const bool unified : {false, true}) {
    o.kv_unified = unified;
    const LlamaCppEstimate e = estimate_llama_cpp(state_space(1, 768, 24, 50280, 16, 48, 0), o);
    EXPECT_EQ(e.cells, 0u);
    EXPECT_EQ(e.state_cells, 4u);
    EXPECT_EQ(bytes_of(e.host, "kv_cache"), 0u);
    EXPECT_EQ(bytes_of(e.host, "recurrent_state"), 116736ULL * 4 * 24);
  }
  // Codestral Mamba's (d 4096, 64 layers, d_inner 8192, state 128, 8 groups): the conv runs over
  // 8192 + 2 x 8 x 128 = 10,240 channels; (3 x 10,240 + 128 x 8192) x 4 B per layer, one slot.
  const LlamaCppEstimate one = estimate_llama_cpp(state_space(2, 4096, 64, 32768, 128, 128, 8), LlamaCppOptions{});
  EXPECT_EQ(bytes_of(one.host, "recurrent_state"), (3ULL * 10240 + 128ULL * 8192) * 4 * 64);
}

TEST(LlamaCpp, StateSpaceComputeBufferIsWhatLlamaCppReserved) {
  // Measured with tests/llama_cpp/context_probe.cpp (llama.cpp v0.5.0, CPU) on the comparison's
  // mamba-q8_0 (d 256, 3 layers, state 16, dt_rank 16) and mamba2-f16 (d 256, 2 layers, state
  // 32, 8 heads, 2 groups), both of 2,048 tokens: llama_context::memory_breakdown's compute bytes.
  struct Run {
    std::uint64_t version, layers, d_state, rank, groups, ctx, ubatch, n_seq, outputs, compute;
  };
  const Run runs[] = {
      {1, 3, 16, 16, 0, 1024, 512, 1, 0, 6864928}, {1, 3, 16, 16, 0, 4096, 512, 4, 0, 7000096},
      {1, 3, 16, 16, 0, 2100, 512, 3, 0, 6968384}, {1, 3, 16, 16, 0, 4096, 128, 7, 7, 2086496},
      {2, 2, 32, 8, 2, 1024, 512, 1, 0, 7638048},  {2, 2, 32, 8, 2, 5000, 512, 5, 0, 8071840},
      {2, 2, 32, 8, 2, 2048, 256, 2, 2, 3841088},
  };
  for (const Run& r : runs) {
    LlamaCppOptions o;
    o.n_ctx = r.ctx;
    o.n_ubatch = r.ubatch;
    o.n_seq = r.n_seq;
    o.n_outputs = r.outputs;
    const ModelSpec s = state_space(r.version, 256, r.layers, 2048, r.d_state, r.rank, r.groups);
    EXPECT_EQ(bytes_of(estimate_llama_cpp(s, o).host, "compute_buffer"), r.compute)
        << "version " << r.version << " -c " << r.ctx << " -ub " << r.ubatch << " -np " << r.n_seq;
  }
}

// Gemma 3's tower (tools/mtmd, projector gemma3) of `layers` blocks of width d over an image
// of `image` pixels a side in 14-pixel patches, projected into `text` dimensions, f16.
LlamaCppProjector gemma3_tower(std::uint64_t image, std::uint64_t d, std::uint64_t layers, std::uint64_t heads,
                               std::uint64_t ff, std::uint64_t text) {
  LlamaCppProjector p;
  p.name = "mmproj.gguf";
  p.type = "gemma3";
  p.image_size = image;
  p.patch_size = 14;
  p.d_model = d;
  p.d_ff = ff;
  p.n_layers = layers;
  p.n_heads = heads;
  p.text_width = text;
  p.projection_bytes = text * d * 2;
  return p;
}

// The text model a tower feeds: its width, and the layers that add deepstack features.
ModelSpec text_model(std::uint64_t d_model, std::uint64_t deepstack = 0) {
  ModelSpec s;
  s.name = "text";
  s.d_model = d_model;
  s.deepstack_layers = deepstack;
  return s;
}

TEST(LlamaCpp, AVisionTowersComputeBufferIsWhatLlamaCppReserved) {
  // Measured with llama.cpp v0.5.0's mtmd on the CPU (mtmd_get_memory_usage less the tensors'
  // bytes; tests/llama_cpp/mmproj_probe.cpp) for towers the comparison's writer makes, flash
  // attention on and off; the last is Gemma 3 4B's tower, whose 121.25 MiB llama.cpp also logs on
  // CUDA for ggml-org/gemma-3-4b-it-GGUF (ggml-org/llama.cpp#22790).
  struct Run {
    std::uint64_t image, d, layers, heads, ff, text;
    bool flash_attn;
    std::uint64_t compute;
  };
  const Run runs[] = {
      {224, 192, 1, 3, 768, 256, true, 1277952},        {224, 192, 3, 3, 768, 256, true, 1376256},
      {224, 192, 4, 3, 768, 256, true, 1376256},        {224, 192, 3, 3, 768, 256, false, 1966080},
      {448, 192, 2, 3, 768, 256, true, 5505024},        {448, 192, 2, 3, 768, 256, false, 17301504},
      {896, 1152, 27, 16, 4304, 2560, true, 127139840},
  };
  for (const Run& r : runs) {
    const LlamaCppProjector p = gemma3_tower(r.image, r.d, r.layers, r.heads, r.ff, r.text);
    EXPECT_EQ(estimate_llama_cpp_projector(p, text_model(r.text), r.flash_attn, false).compute, r.compute)
        << r.image << " px, " << r.layers << " layers, flash attention " << r.flash_attn;
  }
}

// Qwen3-VL's or Qwen3.5's tower (projector qwen3vl_merger): 16-pixel patches of two temporal
// f16 kernels, merged 2 x 2, deepstack mergers on the layers listed, sized for its warm-up
// image (46 x 46 tokens) alone.
LlamaCppProjector qwen3vl_tower(std::uint64_t d, std::uint64_t layers, std::uint64_t heads, std::uint64_t ff,
                                std::uint64_t text, const std::vector<std::uint64_t>& deepstack) {
  LlamaCppProjector p;
  p.name = "mmproj.gguf";
  p.type = "qwen3vl_merger";
  p.image_size = 768;
  p.patch_size = 16;
  p.d_model = d;
  p.d_ff = ff;
  p.n_layers = layers;
  p.n_heads = heads;
  p.n_merge = 2;
  p.text_width = text;
  p.deepstack.assign(layers, false);
  for (const std::uint64_t il : deepstack) p.deepstack[il] = true;
  p.warmup_tokens = p.max_tokens = 46 * 46;
  return p;
}

TEST(LlamaCpp, AQwenVisionTowersComputeBufferIsWhatLlamaCppReserved) {
  // Measured with llama.cpp v0.5.0's mtmd on the CPU (mtmd_get_memory_usage less the tensors'
  // bytes; tests/llama_cpp/mmproj_probe.cpp) for the warm-up image, 92 x 92 patches, of towers
  // the comparison's writer makes: with and without deepstack mergers, an f32 patch kernel (the
  // fifth), flash attention on and off.
  struct Run {
    std::uint64_t d, layers, heads, ff, text;
    std::vector<std::uint64_t> deepstack;
    std::uint64_t patch_bytes;
    std::uint64_t flash, plain;  // the compute buffer with flash attention, without
  };
  const Run runs[] = {
      {512, 2, 8, 2048, 1024, {}, 2, 112808192, 2422599936},
      {512, 3, 8, 2048, 1024, {0, 1}, 2, 147476736, 2439934208},
      {512, 4, 8, 2048, 1024, {0, 2, 3}, 2, 147476736, 2439934208},
      {256, 4, 4, 4096, 2048, {1, 3}, 2, 164811008, 1215701248},
      {384, 3, 6, 1536, 4096, {2}, 4, 177676288, 1810483456},
      {1024, 2, 16, 4096, 2048, {}, 2, 234148096, 4853731584},
  };
  for (const Run& r : runs) {
    LlamaCppProjector p = qwen3vl_tower(r.d, r.layers, r.heads, r.ff, r.text, r.deepstack);
    p.patch_element_bytes = r.patch_bytes;
    // The text model reads the deepstack features beside the embeddings; llama.cpp refuses a
    // text model without as many deepstack layers ("mismatch between text model (n_embd = 256)
    // and mmproj (n_embd = 768)", mtmd_init_from_file with the comparison's files).
    const ModelSpec text = text_model(r.text, r.deepstack.size());
    EXPECT_EQ(estimate_llama_cpp_projector(p, text, true, false).compute, r.flash) << r.d << " x " << r.layers;
    EXPECT_EQ(estimate_llama_cpp_projector(p, text, false, false).compute, r.plain) << r.d << " x " << r.layers;
    if (!r.deepstack.empty())
      expect_invalid([&] { estimate_llama_cpp_projector(p, text_model(r.text), true, false); }, "mmproj");
  }
  // As llama.cpp logs them: Qwen3.5-2B's tower on the CPU (24 layers of 1,024, 16 heads, MLP
  // 4,096), "CPU compute buffer size = 223.30 MiB"; a Qwen3.6 tower's (27 layers of 1,152, MLP
  // 4,304) on CUDA and Vulkan, "248.10 MiB", its host buffer the image and M-RoPE's positions,
  // "24.93 MiB" (code-index ids 56777796281, 58091952734).
  const auto mib = [](std::uint64_t bytes) { return std::round(static_cast<double>(bytes) / (1 << 20) * 100) / 100; };
  EXPECT_EQ(mib(estimate_llama_cpp_projector(qwen3vl_tower(1024, 24, 16, 4096, 2048, {}), text_model(2048), true, false)
                    .compute),
            223.30);
  const LlamaCppProjectorEstimate q36 = estimate_llama_cpp_projector(qwen3vl_tower(1152, 27, 16, 4304, 5120, {}),
                                                                     text_model(5120), true, true);
  EXPECT_EQ(mib(q36.compute), 248.10);
  EXPECT_EQ(mib(q36.image), 24.93);
  EXPECT_EQ(q36.image, 3ULL * 1472 * 1472 * 4 + 8464ULL * 16);  // the pixels, four i32 positions a patch
}

TEST(LlamaCpp, AQwenVisionTowersBufferForAnImageIsWhatLlamaCppAllocates) {
  // Images encoded by llama.cpp v0.5.0's mtmd (mtmd_encode_chunk, CPU) with a tower of three
  // layers of width 128 (2 heads, MLP 512) into 256, without the warm-up: the graph's peak in
  // ggml-alloc's trace for 512 x 512 (256 tokens), 1,024 x 512 (512) and 2,048 x 1,024 (2,048)
  // pixels, and 1,024 x 512 without flash attention. An image's buffer is its patches', whatever
  // its shape.
  struct Run {
    std::uint64_t tokens;
    bool flash_attn;
    std::uint64_t compute;
  };
  for (const Run& r :
       {Run{256, true, 5259264}, Run{512, true, 10518528}, Run{2048, true, 42074112}, Run{512, false, 40927232}}) {
    LlamaCppProjector p = qwen3vl_tower(128, 3, 2, 512, 256, {});
    p.warmup_tokens = p.max_tokens = r.tokens;
    EXPECT_EQ(estimate_llama_cpp_projector(p, text_model(256), r.flash_attn, false).compute, r.compute) << r.tokens;
  }
}

TEST(LlamaCpp, AQwenVisionTowersBufferGrowsToItsLargestImage) {
  // An image of 4,096 tokens is 16,384 patches; its graph outweighs the warm-up's 8,464, and
  // the warm-up figure stays what llama-server's --fit sets aside.
  LlamaCppProjector p = qwen3vl_tower(1152, 27, 16, 4304, 5120, {});
  const std::uint64_t warmup = estimate_llama_cpp_projector(p, text_model(5120), true, true).compute;
  p.max_tokens = 4096;
  const LlamaCppProjectorEstimate e = estimate_llama_cpp_projector(p, text_model(5120), true, true);
  EXPECT_EQ(e.warmup, warmup);
  EXPECT_GT(e.compute, warmup);
  EXPECT_EQ(e.image, 3ULL * 16384 * 16 * 16 * 4 + 16384ULL * 16);
  EXPECT_EQ(e.fit_bytes, warmup);  // no tensors listed in this tower
}

// Qwen2-VL's tower (qwen2vl_merger) or Qwen2.5-VL's (qwen2.5vl_merger, windows in every layer
// but each window_pattern-th): 14-pixel patches, merged 2 x 2, sized for the warm-up image.
LlamaCppProjector qwen2vl_tower(bool qwen2_5, std::uint64_t d, std::uint64_t layers, std::uint64_t heads,
                                std::uint64_t ff, std::uint64_t text, std::uint64_t window_pattern) {
  LlamaCppProjector p = qwen3vl_tower(d, layers, heads, ff, text, {});
  p.type = qwen2_5 ? "qwen2.5vl_merger" : "qwen2vl_merger";
  p.image_size = 448;
  p.patch_size = 14;
  p.window_pattern = window_pattern;
  return p;
}

TEST(LlamaCpp, AQwen2VisionTowersComputeBufferIsWhatLlamaCppReserved) {
  // Measured with llama.cpp v0.5.0's mtmd on the CPU (mtmd_get_memory_usage less the tensors'
  // bytes) for the warm-up image, 92 x 92 patches, of towers the comparison's writer makes:
  // Qwen2-VL's (LayerNorms, a GELU MLP) and Qwen2.5-VL's (RMS norms, a gated MLP) with windows in
  // every other layer, in three layers of four, in none; the last two are Qwen2.5-VL-7B's and
  // Qwen2-VL-7B's towers (32 layers of 1,280 into 3,584). A window mask of every patch pair,
  // 8,464² x 4 B, and its f16 copies under flash attention make Qwen2.5-VL's buffer.
  struct Run {
    bool qwen2_5;
    std::uint64_t d, layers, heads, ff, text, window_pattern;
    std::uint64_t flash, plain;  // the compute buffer with flash attention, without
  };
  const Run runs[] = {
      {false, 128, 3, 2, 512, 256, 0, 37377024, 597490688},
      {true, 128, 4, 2, 512, 256, 2, 449895488, 884064832},
      {true, 128, 4, 2, 512, 256, 4, 449895488, 884064832},
      {true, 128, 5, 2, 512, 256, 2, 449895488, 884064832},
      {false, 192, 2, 3, 768, 384, 0, 46044160, 892715008},
      {true, 128, 3, 2, 512, 256, 0, 72045568, 597490688},
      {true, 1280, 32, 16, 3420, 3584, 8, 739025728, 5108210240},
      {false, 1280, 32, 16, 5120, 3584, 0, 280056832, 4821636096},
  };
  for (const Run& r : runs) {
    const LlamaCppProjector p = qwen2vl_tower(r.qwen2_5, r.d, r.layers, r.heads, r.ff, r.text, r.window_pattern);
    EXPECT_EQ(estimate_llama_cpp_projector(p, text_model(r.text), true, false).compute, r.flash)
        << r.d << " x " << r.layers << " windows " << r.window_pattern;
    EXPECT_EQ(estimate_llama_cpp_projector(p, text_model(r.text), false, false).compute, r.plain)
        << r.d << " x " << r.layers << " windows " << r.window_pattern;
  }
  // Encoded past the warm-up (mtmd_encode_chunk; the encode graph's peak in ggml-alloc's trace)
  // by the four-layer Qwen2.5-VL tower: 1,024 x 512 pixels become 666 tokens, 2,048 x 1,024
  // 2,701; with flash attention, and the first without.
  for (const auto& [tokens, flash_attn, compute] :
       {std::tuple{666ULL, true, 48895104ULL}, std::tuple{2701ULL, true, 725964000ULL},
        std::tuple{666ULL, false, 92840448ULL}}) {
    LlamaCppProjector p = qwen2vl_tower(true, 128, 4, 2, 512, 256, 2);
    p.warmup_tokens = p.max_tokens = tokens;
    EXPECT_EQ(estimate_llama_cpp_projector(p, text_model(256), flash_attn, false).compute, compute) << tokens;
  }
}

TEST(LlamaCpp, AVisionTowersTensorsArePaddedToTheirBuffer) {
  // Three tensors of 4,608, 17,216 and 2,654,208 B: as stored on the CPU (32-byte alignment,
  // all multiples), 17,216 padded to 17,280 on CUDA (128); llama-server's --fit sets aside the
  // tensors unpadded and the compute buffer; on the GPU the 896 x 896 image (3 x 896² x 4 B)
  // is the host's.
  LlamaCppProjector p = gemma3_tower(896, 1152, 27, 16, 4304, 2560);
  p.tensors = {4608, 17216, 2654208};
  const LlamaCppProjectorEstimate cpu = estimate_llama_cpp_projector(p, text_model(2560), true, false);
  EXPECT_EQ(cpu.weights, 4608u + 17216 + 2654208);
  EXPECT_EQ(cpu.image, 0u);
  const LlamaCppProjectorEstimate gpu = estimate_llama_cpp_projector(p, text_model(2560), true, true);
  EXPECT_EQ(gpu.weights, 4608u + 17280 + 2654208);
  EXPECT_EQ(gpu.image, 3ULL * 896 * 896 * 4);
  EXPECT_EQ(gpu.fit_bytes, 4608u + 17216 + 2654208 + 127139840);
  expect_invalid([&] { estimate_llama_cpp_projector(p, text_model(4096), true, true); }, "mmproj");
}

TEST(LlamaCpp, AUnifiedCacheKeepsEverySequencesWindow) {
  // llama-kv-cache-iswa.cpp: a sliding layer of a unified cache holds n_swa x n_seq + n_ubatch
  // cells, padded to 256. Gemma 3's pattern (five sliding layers of 512 in six) at -c 4096 over
  // -np 4: 512 x 4 + 512 = 2,560 cells; the global layer 4,096. Measured with context_probe on the
  // comparison's gemma3-q8_0 (7 layers, 2 KV heads of 128): 19,922,944 B of f16 K and V.
  ModelSpec s = small_llama(256, 7, 4, 2, 1024, 2048);
  s.d_head = 128;
  s.sliding_window = 512;
  s.global_every = 6;
  LlamaCppOptions o;
  o.n_ctx = 4096;
  o.n_seq = 4;
  o.kv_unified = true;
  const std::uint64_t cell = 2 * 128 * 2 * 2;  // K and V of 2 heads of 128 in f16
  EXPECT_EQ(bytes_of(estimate_llama_cpp(s, o).host, "kv_cache"), (6 * 2560 + 4096) * cell);
  EXPECT_EQ((6 * 2560 + 4096) * cell, 19922944u);
}

TEST(LlamaCpp, Gemma3sComputeBufferIsWhatLlamaCppReserved) {
  // Measured with tests/llama_cpp/context_probe.cpp (llama.cpp v0.5.0, CPU, swa_full off) on
  // Gemma 3 4B's shape (34 layers of 2,560, 8 heads and 4 KV heads of 256, MLP 10,240, a
  // vocabulary of 262,144, a window of 1,024; Q8_0): llama_context::memory_breakdown's compute
  // bytes, where the logits bind.
  ModelSpec s = small_llama(2560, 34, 8, 4, 10240, 262144);
  s.family = Family::gemma3;
  s.d_head = 256;
  s.sliding_window = 1024;
  s.global_every = 6;
  struct Run {
    std::uint64_t ctx, ubatch, n_seq;
    bool server, flash_attn;
    std::uint64_t compute;
  };
  const Run runs[] = {
      {4096, 512, 1, false, true, 552601600},
      {4096, 512, 1, false, false, 547358720},
      {32768, 512, 4, true, true, 121131040},
      {8192, 2048, 1, false, true, 2189434880},
  };
  for (const Run& r : runs) {
    EXPECT_EQ(cpu_compute_buffer(s, r.ctx, r.ubatch, r.n_seq, r.server, r.flash_attn), r.compute)
        << "-c " << r.ctx << " -ub " << r.ubatch << " -np " << r.n_seq << " fa " << r.flash_attn;
  }
}

TEST(LlamaCpp, Qwen3VLsComputeBufferIsWhatLlamaCppReserved) {
  // Measured with tests/llama_cpp/context_probe.cpp (llama.cpp v0.5.0, CPU) on GGUF headers of
  // Qwen3-VL-8B's text model (qwen3vl: 36 layers of 4,096, 32 heads and 8 KV heads of 128, MLP
  // 12,288, a vocabulary of 151,936, 3 deepstack layers) and Qwen3-VL-30B-A3B's (qwen3vlmoe: 48
  // layers of 2,048, 4 KV heads, 128 experts of 768, 8 a token): llama_context's compute bytes.
  ModelSpec dense = small_llama(4096, 36, 32, 8, 12288, 151936);
  dense.family = Family::qwen3;
  dense.d_head = 128;
  dense.qk_norm = QkNorm::head;
  dense.mrope = true;
  dense.deepstack_layers = 3;
  ModelSpec moe = dense;
  moe.family = Family::qwen3_moe;
  moe.n_layers = 48;
  moe.d_model = 2048;
  moe.n_kv_heads = 4;
  moe.d_mlp = 6144;
  moe.experts = 128;
  moe.experts_per_token = 8;
  moe.d_expert = 768;
  // And a small one (5 layers of 256, 4 heads and 2 KV heads of 128, MLP 768, 2,048 tokens) with
  // one deepstack layer: its padded embeddings are freed after layer 0, before layer 1's scores.
  ModelSpec small = dense;
  small.n_layers = 5;
  small.d_model = 256;
  small.n_heads = 4;
  small.n_kv_heads = 2;
  small.d_mlp = 768;
  small.vocab_size = 2048;
  small.deepstack_layers = 1;
  struct Run {
    const ModelSpec* spec;
    std::uint64_t ctx, ubatch, n_seq;
    bool server, flash_attn;
    std::uint32_t cache;  // ggml type of K and V
    std::uint64_t compute;
  };
  const Run runs[] = {
      {&dense, 4096, 512, 1, false, true, 1, 365711360}, {&dense, 4096, 512, 1, false, false, 1, 381698048},
      {&dense, 32768, 512, 4, true, true, 1, 192956448}, {&dense, 16384, 512, 1, false, true, 8, 361498624},
      {&moe, 4096, 512, 1, false, true, 1, 332138496},   {&moe, 16384, 2048, 1, false, true, 1, 1328553984},
      {&small, 2048, 512, 1, false, false, 1, 26755072},
  };
  for (const Run& r : runs) {
    EXPECT_EQ(cpu_compute_buffer(*r.spec, r.ctx, r.ubatch, r.n_seq, r.server, r.flash_attn, r.cache), r.compute)
        << r.spec->n_layers << " layers, -c " << r.ctx << " -ub " << r.ubatch << " fa " << r.flash_attn;
  }
  // Without its deepstack inputs and M-RoPE the dense model is Qwen3-8B (qwen3, measured the
  // same way): 36 MiB less at -c 4096 -ub 512.
  ModelSpec plain = dense;
  plain.mrope = false;
  plain.deepstack_layers = 0;
  EXPECT_EQ(cpu_compute_buffer(plain, 4096, 512, 1, false, true), 327944192U);
}

TEST(LlamaCpp, AContextBelowTheMicroBatchCapsIt) {
  // llama_context caps n_ubatch at -c as given (n_batch = min(n_ctx, n_batch)), before -c is
  // padded to 256: -c 300 -ub 512 reserves a 300-token graph. Measured with context_probe on the
  // comparison's llama-q4_k (d 256, 3 layers, 4 heads, 2 KV heads, ff 768, 2,048 tokens).
  const ModelSpec s = small_llama(256, 3, 4, 2, 768, 2048);
  LlamaCppOptions o;
  o.n_ctx = 300;
  EXPECT_EQ(bytes_of(estimate_llama_cpp(s, o).host, "compute_buffer"), 4309248u);
  o.n_seq = 3;
  o.n_ctx = 100;
  EXPECT_EQ(bytes_of(estimate_llama_cpp(s, o).host, "compute_buffer"), 1412960u);
}

TEST(LlamaCpp, RefusesWhatLlamaCppRefuses) {
  LlamaCppOptions o;
  o.type_v = parse_llama_cpp_cache_type("q4_0", "cache_type_v").id;
  o.flash_attn = false;
  expect_invalid([&] { estimate_llama_cpp(testing::llama2_7b(), o); }, "cache_type_v");
  expect_invalid([] { parse_llama_cpp_cache_type("q4_k", "cache_type_k"); }, "cache_type_k");
  LlamaCppOptions zero;
  zero.n_ubatch = 0;
  expect_invalid([&] { estimate_llama_cpp(testing::llama2_7b(), zero); }, "ubatch");
  // src/models/mamba.cpp: "only an expansion factor of 2 is supported for now".
  ModelSpec wide = state_space(1, 256, 2, 2048, 16, 16, 0);
  wide.ssm.d_inner = 3 * 256;
  expect_invalid([&] { estimate_llama_cpp(wide, LlamaCppOptions{}); }, "engine");
  // llama.cpp has no Zamba2 (src/llama-arch.cpp).
  ModelSpec zamba = state_space(2, 256, 4, 2048, 32, 8, 2);
  zamba.family = Family::zamba2;
  expect_invalid([&] { estimate_llama_cpp(zamba, LlamaCppOptions{}); }, "engine");
}

}  // namespace llama_cpp_test
}  // namespace memplan
