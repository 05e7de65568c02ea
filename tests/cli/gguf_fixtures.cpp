// Writes the GGUF files the CLI tests read (tests/cli/gguf.cmake) and, with --corpus, the
// seeds of fuzz/corpus/gguf/: small complete models and hostile headers, made with the same
// writer as the unit tests (tests/support/gguf_writer.hpp).
//   memplan_gguf_fixtures DIR            every-type.gguf, tiny-llama.gguf and bad-*.gguf
//   memplan_gguf_fixtures --corpus DIR   the fuzz seeds (what fuzz/corpus/gguf/ holds)
#include <cstdio>
#include <filesystem>
#include <string>

#include "gguf_writer.hpp"

namespace {

using memplan::testing::GgufData;
using memplan::testing::GgufWriter;
using memplan::testing::le32;
using memplan::testing::le64;

namespace fs = std::filesystem;

void write_raw(const fs::path& path, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) {
    throw std::runtime_error("cannot write " + path.string());
  }
}

// Hostile files, one fault each; their names say which.
void write_bad(const fs::path& dir) {
  GgufWriter w = memplan::testing::tiny_llama();
  w.tensor_count = 1ULL << 60;
  w.write(dir / "bad-huge-tensor-count.gguf");

  GgufWriter offset = memplan::testing::tiny_llama();
  offset.tensor("extra.weight", {32}, "F32", 4200);
  offset.write(dir / "bad-unaligned-offset.gguf");

  GgufWriter order;
  order.str("general.architecture", "llama").tensor("a", {64}, "F32").tensor("b", {64}, "F32", 128);
  order.write(dir / "bad-overlapping-offset.gguf");

  GgufWriter past = memplan::testing::tiny_llama();
  past.write(dir / "bad-truncated-data.gguf", GgufData::none);

  GgufWriter type;
  type.str("general.architecture", "llama").tensor_id("w", {32}, 99);
  type.write(dir / "bad-unknown-type.gguf");

  GgufWriter removed;
  removed.tensor_id("w", {32}, 31);
  removed.write(dir / "bad-removed-type.gguf");

  GgufWriter dims;
  dims.tensor("w", {1ULL << 32, 1ULL << 32}, "F32");
  dims.write(dir / "bad-dims-overflow.gguf", GgufData::none);

  GgufWriter row;
  row.tensor("w", {100, 256}, "Q4_K");
  row.write(dir / "bad-partial-block.gguf");

  GgufWriter string;
  string.raw_kv("general.name", le32(memplan::testing::kString) + le64(1ULL << 40) + "abc");
  string.write(dir / "bad-string-length.gguf");

  GgufWriter array;
  array.raw_kv("tokenizer.ggml.tokens",
               le32(memplan::testing::kArray) + le32(memplan::testing::kString) + le64(1ULL << 61));
  array.write(dir / "bad-array-length.gguf");

  GgufWriter nested;
  nested.raw_kv("x.nested", le32(memplan::testing::kArray) + le32(memplan::testing::kArray) + le64(1));
  nested.write(dir / "bad-nested-array.gguf");

  GgufWriter boolean;
  boolean.raw_kv("x.flag", le32(memplan::testing::kBool) + std::string(1, '\2'));
  boolean.write(dir / "bad-bool.gguf");

  GgufWriter dup;
  dup.u32("a.b", 1).u32("a.b", 2);
  dup.write(dir / "bad-duplicate-key.gguf");

  GgufWriter twice;
  twice.tensor("w", {32}, "F32").tensor("w", {32}, "F32");
  twice.write(dir / "bad-duplicate-tensor.gguf");

  GgufWriter align;
  align.u32("general.alignment", 48);
  align.write(dir / "bad-alignment.gguf");

  GgufWriter name;
  name.tensor(std::string(64, 'n'), {32}, "F32");
  name.write(dir / "bad-long-name.gguf");

  GgufWriter arch;
  arch.str("general.architecture", "rwkv6");
  arch.write(dir / "bad-architecture.gguf");

  write_raw(dir / "bad-magic.gguf", "GGML" + le32(3) + le64(0) + le64(0));
  write_raw(dir / "bad-version-1.gguf", "GGUF" + le32(1) + le64(0) + le64(0));
  write_raw(dir / "bad-big-endian.gguf", "GGUF" + le32(3U << 24) + le64(0) + le64(0));
  write_raw(dir / "bad-truncated-header.gguf", "GGUF" + le32(3) + le64(0));
}

// Small valid models of each mapped shape, and every type on 256-element vectors.
void write_small(const fs::path& dir) {
  memplan::testing::tiny_llama().write(dir / "tiny-llama.gguf");

  GgufWriter v2 = memplan::testing::tiny_llama();
  v2.version = 2;
  v2.alignment = 64;
  v2.u32("general.alignment", 64);
  v2.write(dir / "tiny-llama-v2-align64.gguf");

  // A Mixtral-like llama: two layers of four routed experts (their Q8_0 matrices 3 x 8,704 B a
  // layer: 64 x 4 rows of 32 elements, or 32 x 4 of 64, at 34 B a block of 32).
  GgufWriter moe;
  moe.str("general.architecture", "llama")
      .u32("llama.context_length", 256)
      .u32("llama.embedding_length", 32)
      .u32("llama.block_count", 2)
      .u32("llama.feed_forward_length", 64)
      .u32("llama.attention.head_count", 2)
      .u32("llama.attention.head_count_kv", 1)
      .u32("llama.expert_count", 4)
      .u32("llama.expert_used_count", 2)
      .tokens("tokenizer.ggml.tokens", 4);
  moe.tensor("token_embd.weight", {32, 4}, "F32");
  for (const std::string layer : {"blk.0.", "blk.1."}) {
    moe.tensor(layer + "attn_norm.weight", {32}, "F32")
        .tensor(layer + "attn_q.weight", {32, 32}, "Q8_0")
        .tensor(layer + "attn_k.weight", {32, 16}, "Q8_0")
        .tensor(layer + "attn_v.weight", {32, 16}, "Q8_0")
        .tensor(layer + "attn_output.weight", {32, 32}, "Q8_0")
        .tensor(layer + "ffn_norm.weight", {32}, "F32")
        .tensor(layer + "ffn_gate_inp.weight", {32, 4}, "F32")
        .tensor(layer + "ffn_gate_exps.weight", {32, 64, 4}, "Q8_0")
        .tensor(layer + "ffn_up_exps.weight", {32, 64, 4}, "Q8_0")
        .tensor(layer + "ffn_down_exps.weight", {64, 32, 4}, "Q8_0");
  }
  moe.tensor("output_norm.weight", {32}, "F32").tensor("output.weight", {32, 4}, "F32");
  moe.write(dir / "tiny-moe.gguf");

  GgufWriter qwen;
  qwen.str("general.architecture", "qwen2")
      .u32("qwen2.context_length", 64)
      .u32("qwen2.embedding_length", 32)
      .u32("qwen2.block_count", 1)
      .u32("qwen2.feed_forward_length", 32)
      .u32("qwen2.attention.head_count", 2)
      .u32("qwen2.attention.head_count_kv", 2)
      .tokens("tokenizer.ggml.tokens", 4);
  qwen.tensor("token_embd.weight", {32, 4}, "F32")
      .tensor("blk.0.attn_norm.weight", {32}, "F32")
      .tensor("blk.0.attn_q.weight", {32, 32}, "Q8_0")
      .tensor("blk.0.attn_q.bias", {32}, "F32")
      .tensor("blk.0.attn_k.weight", {32, 32}, "Q8_0")
      .tensor("blk.0.attn_k.bias", {32}, "F32")
      .tensor("blk.0.attn_v.weight", {32, 32}, "Q8_0")
      .tensor("blk.0.attn_v.bias", {32}, "F32")
      .tensor("blk.0.attn_output.weight", {32, 32}, "IQ4_NL")
      .tensor("blk.0.ffn_norm.weight", {32}, "F32")
      .tensor("blk.0.ffn_gate.weight", {32, 32}, "MXFP4")
      .tensor("blk.0.ffn_up.weight", {32, 32}, "Q5_0")
      .tensor("blk.0.ffn_down.weight", {32, 32}, "Q5_1")
      .tensor("output_norm.weight", {32}, "F32");
  qwen.write(dir / "tiny-qwen2-tied.gguf");

  GgufWriter gpt2;
  gpt2.str("general.architecture", "gpt2")
      .u32("gpt2.context_length", 8)
      .u32("gpt2.embedding_length", 32)
      .u32("gpt2.block_count", 1)
      .u32("gpt2.feed_forward_length", 64)
      .u32("gpt2.attention.head_count", 2)
      .tokens("tokenizer.ggml.tokens", 4);
  gpt2.tensor("token_embd.weight", {32, 4}, "F16")
      .tensor("position_embd.weight", {32, 8}, "F32")
      .tensor("blk.0.attn_norm.weight", {32}, "F32")
      .tensor("blk.0.attn_norm.bias", {32}, "F32")
      .tensor("blk.0.attn_qkv.weight", {32, 96}, "Q8_0")
      .tensor("blk.0.attn_qkv.bias", {96}, "F32")
      .tensor("blk.0.attn_output.weight", {32, 32}, "Q8_0")
      .tensor("blk.0.attn_output.bias", {32}, "F32")
      .tensor("blk.0.ffn_norm.weight", {32}, "F32")
      .tensor("blk.0.ffn_norm.bias", {32}, "F32")
      .tensor("blk.0.ffn_up.weight", {32, 64}, "Q4_1")
      .tensor("blk.0.ffn_up.bias", {64}, "F32")
      .tensor("blk.0.ffn_down.weight", {64, 32}, "Q4_1")
      .tensor("blk.0.ffn_down.bias", {32}, "F32")
      .tensor("output_norm.weight", {32}, "F32")
      .tensor("output_norm.bias", {32}, "F32");
  gpt2.write(dir / "tiny-gpt2.gguf");

  // Vision towers for --mmproj: Gemma 3 4B's (SigLIP of 27 layers of 1,152 over 896 x 896
  // pixels in 14 x 14 patches, projected into 2,560; 840 MB of f16 and f32 written as a hole),
  // a small one into tiny-llama's width of 32, and one with LLaVA's projector.
  memplan::testing::gemma3_mmproj({896, 14, 1152, 27, 16, 4304, 2560, "F16"})
      .write(dir / "mmproj-gemma3-4b.gguf", GgufData::sparse);
  memplan::testing::gemma3_mmproj({56, 14, 64, 2, 2, 128, 32, "F16"}).write(dir / "mmproj-tiny.gguf");
  memplan::testing::gemma3_mmproj({56, 14, 64, 2, 2, 128, 32, "F16", "mlp"}).write(dir / "mmproj-mlp.gguf");
  // A Qwen3.6-27B-shaped tower (27 layers of 1,152 in 16-pixel patches, positions on a 48 x 48
  // grid, projected into 5,120), its data a hole.
  memplan::testing::qwen3vl_mmproj({768, 16, 1152, 27, 16, 4304, 5120, {}, "F16"})
      .write(dir / "mmproj-qwen3.6-27b.gguf", GgufData::sparse);

  // Qwen3-VL-8B's text model (qwen3vl: 36 layers of 4,096, 32 heads and 8 KV heads of 128, MLP
  // 12,288, 151,936 tokens, 3 deepstack layers; Q8_0, its data a hole) and its tower (27 layers
  // of 1,152 over 16-pixel patches on a 48 x 48 grid, deepstack mergers after layers 8, 16 and
  // 24, projected into 4,096; a hole).
  GgufWriter vl;
  vl.str("general.architecture", "qwen3vl")
      .u32("qwen3vl.context_length", 262144)
      .u32("qwen3vl.embedding_length", 4096)
      .u32("qwen3vl.block_count", 36)
      .u32("qwen3vl.feed_forward_length", 12288)
      .u32("qwen3vl.attention.head_count", 32)
      .u32("qwen3vl.attention.head_count_kv", 8)
      .u32("qwen3vl.attention.key_length", 128)
      .u32("qwen3vl.attention.value_length", 128)
      .u32("qwen3vl.n_deepstack_layers", 3)
      .u32_array("qwen3vl.rope.dimension_sections", {24, 20, 20, 0})
      .tokens("tokenizer.ggml.tokens", 151936);
  vl.tensor("token_embd.weight", {4096, 151936}, "Q8_0");
  for (int b = 0; b < 36; ++b) {
    const std::string p = "blk." + std::to_string(b) + ".";
    vl.tensor(p + "attn_norm.weight", {4096}, "F32")
        .tensor(p + "attn_q.weight", {4096, 4096}, "Q8_0")
        .tensor(p + "attn_k.weight", {4096, 1024}, "Q8_0")
        .tensor(p + "attn_v.weight", {4096, 1024}, "Q8_0")
        .tensor(p + "attn_output.weight", {4096, 4096}, "Q8_0")
        .tensor(p + "attn_k_norm.weight", {128}, "F32")
        .tensor(p + "attn_q_norm.weight", {128}, "F32")
        .tensor(p + "ffn_norm.weight", {4096}, "F32")
        .tensor(p + "ffn_gate.weight", {4096, 12288}, "Q8_0")
        .tensor(p + "ffn_up.weight", {4096, 12288}, "Q8_0")
        .tensor(p + "ffn_down.weight", {12288, 4096}, "Q8_0");
  }
  vl.tensor("output_norm.weight", {4096}, "F32").tensor("output.weight", {4096, 151936}, "Q8_0");
  vl.write(dir / "qwen3-vl-8b.gguf", GgufData::sparse);
  memplan::testing::qwen3vl_mmproj({768, 16, 1152, 27, 16, 4304, 4096, {8, 16, 24}, "F16"})
      .write(dir / "mmproj-qwen3-vl-8b.gguf", GgufData::sparse);

  // Qwen2.5-VL-7B's tower (32 layers of 1,280 over 14-pixel patches, windows in all but every
  // eighth, projected into 3,584; a hole).
  memplan::testing::qwen2vl_mmproj({true, 448, 14, 1280, 32, 16, 3420, 3584, 8, "F16"})
      .write(dir / "mmproj-qwen2.5-vl-7b.gguf", GgufData::sparse);

  GgufWriter all;
  all.str("general.architecture", "llama");
  for (const memplan::testing::GgmlLayout& l : memplan::testing::ggml_layouts()) {
    all.tensor(std::string("t.") + l.name, {256}, l.name);
  }
  all.write(dir / "every-type-vectors.gguf");
}

}  // namespace

int main(int argc, char** argv) {
  const bool corpus = argc == 3 && std::string(argv[1]) == "--corpus";
  if (argc != 2 && !corpus) {
    std::fprintf(stderr, "usage: memplan_gguf_fixtures [--corpus] DIR\n");
    return 2;
  }
  const fs::path dir = argv[argc - 1];
  try {
    fs::create_directories(dir);
    write_small(dir);
    write_bad(dir);
    if (!corpus) memplan::testing::every_type_llama().write(dir / "every-type.gguf");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "memplan_gguf_fixtures: %s\n", e.what());
    return 1;
  }
  return 0;
}
