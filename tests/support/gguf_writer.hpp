// Writes GGUF files for the tests: metadata, tensor infos and the tensor data, as zeros, as a
// hole (a sparse file: the size without the bytes) or left out (the header alone). Knobs let
// a test write what no converter would: wrong counts, offsets, types and lengths.
//
// The layouts below are the tests' own, written out from ggml's block structs
// (ggml/src/ggml-common.h: QK_K = 256, ggml_half = 2 bytes) so that the library's table
// (src/io/gguf.cpp) is checked against an independent derivation, not against itself.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace memplan::testing {

struct GgmlLayout {
  const char* name;
  std::uint32_t id;
  std::uint64_t block;  // elements per block
  std::uint64_t bytes;  // bytes per block
  const char* why;      // the block struct's fields, in bytes
};

// Every ggml type memplan prices (ggml include/ggml.h ids), with its block written out.
inline const std::vector<GgmlLayout>& ggml_layouts() {
  static const std::vector<GgmlLayout> layouts = {
      {"F32", 0, 1, 4, "float"},
      {"F16", 1, 1, 2, "half"},
      {"Q4_0", 2, 32, 2 + 32 / 2, "d + 32 nibbles"},
      {"Q4_1", 3, 32, 2 + 2 + 32 / 2, "d, m + 32 nibbles"},
      {"Q5_0", 6, 32, 2 + 4 + 32 / 2, "d + 32 high bits + 32 nibbles"},
      {"Q5_1", 7, 32, 2 + 2 + 4 + 32 / 2, "d, m + 32 high bits + 32 nibbles"},
      {"Q8_0", 8, 32, 2 + 32, "d + 32 int8"},
      {"Q8_1", 9, 32, 2 + 2 + 32, "d, s + 32 int8"},
      {"Q2_K", 10, 256, 2 + 2 + 256 / 16 + 256 / 4, "d, dmin + 16 scale bytes + 2 bits x 256"},
      {"Q3_K", 11, 256, 2 + 256 / 4 + 256 / 8 + 12, "d + 2 bits x 256 + hmask 1 bit x 256 + 12 scale bytes"},
      {"Q4_K", 12, 256, 2 + 2 + 12 + 256 / 2, "d, dmin + 12 scale bytes + 4 bits x 256"},
      {"Q5_K", 13, 256, 2 + 2 + 12 + 256 / 2 + 256 / 8, "d, dmin + 12 scale bytes + 4 bits x 256 + 1 bit x 256"},
      {"Q6_K", 14, 256, 2 + 256 / 16 + 256 / 2 + 256 / 4, "d + 16 scales + 4 low bits x 256 + 2 high bits x 256"},
      {"Q8_K", 15, 256, 4 + 256 + 2 * 256 / 16, "float d + 256 int8 + 16 int16 sums"},
      {"IQ2_XXS", 16, 256, 2 + 2 * 256 / 8, "d + 32 uint16"},
      {"IQ2_XS", 17, 256, 2 + 2 * 256 / 8 + 256 / 32, "d + 32 uint16 + 8 scale bytes"},
      {"IQ3_XXS", 18, 256, 2 + 3 * 256 / 8, "d + 96 bytes"},
      {"IQ1_S", 19, 256, 2 + 256 / 8 + 2 * 256 / 32, "d + 32 bytes + 8 uint16"},
      {"IQ4_NL", 20, 32, 2 + 32 / 2, "d + 32 nibbles"},
      {"IQ3_S", 21, 256, 2 + 256 / 4 + 256 / 32 + 256 / 8 + 256 / 64, "d + 64 qs + 8 qh + 32 signs + 4 scales"},
      {"IQ2_S", 22, 256, 2 + 256 / 4 + 256 / 16, "d + 64 qs (with signs) + 16 bytes qh and scales"},
      {"IQ4_XS", 23, 256, 2 + 2 + 256 / 64 + 256 / 2, "d + scales_h + 4 scales_l + 4 bits x 256"},
      {"I8", 24, 1, 1, "int8"},
      {"I16", 25, 1, 2, "int16"},
      {"I32", 26, 1, 4, "int32"},
      {"I64", 27, 1, 8, "int64"},
      {"F64", 28, 1, 8, "double"},
      {"IQ1_M", 29, 256, 256 / 8 + 256 / 16 + 256 / 32, "32 qs + 16 qh + 8 scales (no d)"},
      {"BF16", 30, 1, 2, "bfloat16"},
      {"TQ1_0", 34, 256, 2 + 256 / 64 + (256 - 4 * 256 / 64) / 5, "d + 4 qh + 48 bytes of base-3 digits"},
      {"TQ2_0", 35, 256, 2 + 256 / 4, "d + 2 bits x 256"},
      {"MXFP4", 39, 32, 1 + 32 / 2, "e8m0 scale + 32 fp4"},
      {"NVFP4", 40, 64, 64 / 16 + 64 / 2, "4 e4m3 scales (one per 16) + 64 fp4"},
      {"Q1_0", 41, 128, 2 + 128 / 8, "d + 1 bit x 128"},
      {"Q2_0", 42, 64, 2 + 64 / 4, "d + 2 bits x 64"},
  };
  return layouts;
}

inline const GgmlLayout& ggml_layout(std::string_view name) {
  for (const GgmlLayout& l : ggml_layouts()) {
    if (name == l.name) return l;
  }
  throw std::invalid_argument("no ggml layout " + std::string(name));
}

// Bytes of `elements` elements of `type`, from the layouts above.
inline std::uint64_t layout_bytes(std::string_view type, std::uint64_t elements) {
  const GgmlLayout& l = ggml_layout(type);
  return elements / l.block * l.bytes;
}

inline std::string le32(std::uint32_t n) {
  std::string out(4, '\0');
  for (std::size_t i = 0; i < 4; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out;
}
inline std::string le64(std::uint64_t n) {
  std::string out(8, '\0');
  for (std::size_t i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out;
}
inline std::string gguf_string(std::string_view s) { return le64(s.size()) + std::string(s); }

// GGUF value type ids.
enum : std::uint32_t { kU8 = 0, kI8, kU16, kI16, kU32, kI32, kF32, kBool, kString, kArray, kU64, kI64, kF64 };

enum class GgufData {
  zeros,   // the tensor data written as zero bytes
  sparse,  // the file sized to hold the data, which is a hole (no bytes on disk)
  none,    // the header alone
};

class GgufWriter {
 public:
  struct Tensor {
    std::string name;
    std::vector<std::uint64_t> shape;                    // ggml order: shape[0] is the row
    std::uint32_t type = 0;                              // ggml type id
    std::optional<std::uint64_t> offset = std::nullopt;  // default: packed, each padded to the alignment
  };

  std::uint32_t version = 3;
  std::optional<std::uint64_t> tensor_count;  // default: the tensors added
  std::optional<std::uint64_t> kv_count;      // default: the pairs added
  std::uint64_t alignment = 32;               // used to lay out the data; general.alignment is written by u32()

  GgufWriter& u32(std::string_view key, std::uint32_t v) { return raw_kv(key, le32(kU32) + le32(v)); }
  GgufWriter& u64(std::string_view key, std::uint64_t v) { return raw_kv(key, le32(kU64) + le64(v)); }
  GgufWriter& i32(std::string_view key, std::int32_t v) {
    return raw_kv(key, le32(kI32) + le32(static_cast<std::uint32_t>(v)));
  }
  GgufWriter& f32(std::string_view key, float v) {
    std::uint32_t bits = 0;
    static_assert(sizeof bits == sizeof v);
    __builtin_memcpy(&bits, &v, sizeof bits);
    return raw_kv(key, le32(kF32) + le32(bits));
  }
  GgufWriter& boolean(std::string_view key, bool v) {
    return raw_kv(key, le32(kBool) + std::string(1, v ? '\1' : '\0'));
  }
  GgufWriter& str(std::string_view key, std::string_view v) { return raw_kv(key, le32(kString) + gguf_string(v)); }
  // An array of `count` strings "t0", "t1", ... (a vocabulary).
  GgufWriter& tokens(std::string_view key, std::uint64_t count) {
    std::string value = le32(kArray) + le32(kString) + le64(count);
    for (std::uint64_t i = 0; i < count; ++i) value += gguf_string("t" + std::to_string(i));
    return raw_kv(key, value);
  }
  // A SentencePiece vocabulary llama.cpp loads: <unk>, <s>, </s>, the 256 byte tokens, then
  // "t259", "t260", ... up to `count` tokens, with their token types.
  GgufWriter& spm_vocabulary(std::uint64_t count) {
    std::string tokens = le32(kArray) + le32(kString) + le64(count);
    std::string types = le32(kArray) + le32(kI32) + le64(count);
    for (std::uint64_t i = 0; i < count; ++i) {
      std::string text = "t" + std::to_string(i);
      std::uint32_t type = 1;  // normal
      if (i < 3) {
        text = i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>";
        type = i == 0 ? 2 : 3;  // unknown, control
      } else if (i < 3 + 256) {
        const char* hex = "0123456789ABCDEF";
        text = std::string("<0x") + hex[(i - 3) >> 4] + hex[(i - 3) & 15] + ">";
        type = 6;  // byte
      }
      tokens += gguf_string(text);
      types += le32(type);
    }
    str("tokenizer.ggml.model", "llama");
    raw_kv("tokenizer.ggml.tokens", tokens);
    return raw_kv("tokenizer.ggml.token_type", types);
  }
  GgufWriter& u32_array(std::string_view key, const std::vector<std::uint32_t>& values) {
    std::string value = le32(kArray) + le32(kU32) + le64(values.size());
    for (std::uint32_t v : values) value += le32(v);
    return raw_kv(key, value);
  }
  GgufWriter& bool_array(std::string_view key, const std::vector<bool>& values) {
    std::string value = le32(kArray) + le32(kBool) + le64(values.size());
    for (const bool v : values) value += std::string(1, v ? '\1' : '\0');
    return raw_kv(key, value);
  }
  GgufWriter& f32_array(std::string_view key, const std::vector<float>& values) {
    std::string value = le32(kArray) + le32(kF32) + le64(values.size());
    for (float v : values) {
      std::uint32_t bits = 0;
      __builtin_memcpy(&bits, &v, sizeof bits);
      value += le32(bits);
    }
    return raw_kv(key, value);
  }
  // A key and the raw bytes of its value (type included).
  GgufWriter& raw_kv(std::string_view key, const std::string& value) {
    kvs_ += gguf_string(key) + value;
    ++n_kv_;
    return *this;
  }

  GgufWriter& tensor(std::string name, std::vector<std::uint64_t> shape, std::string_view type,
                     std::optional<std::uint64_t> offset = std::nullopt) {
    return tensor_id(std::move(name), std::move(shape), ggml_layout(type).id, offset);
  }
  GgufWriter& tensor_id(std::string name, std::vector<std::uint64_t> shape, std::uint32_t type,
                        std::optional<std::uint64_t> offset = std::nullopt) {
    tensors_.push_back({std::move(name), std::move(shape), type, offset});
    return *this;
  }
  // Raw bytes appended after the tensor infos, before the padding (a hostile tail).
  GgufWriter& raw_tail(const std::string& bytes) {
    tail_ += bytes;
    return *this;
  }

  const std::vector<Tensor>& tensors() const { return tensors_; }

  static std::uint64_t elements(const Tensor& t) {
    std::uint64_t n = 1;
    for (std::uint64_t d : t.shape) n *= d;
    return n;
  }
  // A tensor's bytes from the tests' layouts (0 for an unknown type).
  static std::uint64_t bytes(const Tensor& t) {
    for (const GgmlLayout& l : ggml_layouts()) {
      if (l.id == t.type) return elements(t) / l.block * l.bytes;
    }
    return 0;
  }
  std::uint64_t padded(std::uint64_t n) const { return (n + alignment - 1) / alignment * alignment; }

  // The header: magic, version, counts, metadata, tensor infos, padding to the alignment.
  std::string header() const {
    std::string out = "GGUF" + le32(version) + le64(tensor_count.value_or(tensors_.size())) +
                      le64(kv_count.value_or(n_kv_)) + kvs_;
    std::uint64_t next = 0;
    for (const Tensor& t : tensors_) {
      out += gguf_string(t.name) + le32(static_cast<std::uint32_t>(t.shape.size()));
      for (std::uint64_t d : t.shape) out += le64(d);
      out += le32(t.type) + le64(t.offset.value_or(next));
      next += padded(bytes(t));
    }
    out += tail_;
    if (!tensors_.empty()) out.resize(padded(out.size()), '\0');
    return out;
  }
  // The tensor data's size: every tensor padded to the alignment.
  std::uint64_t data_bytes() const {
    std::uint64_t n = 0;
    for (const Tensor& t : tensors_) n += padded(bytes(t));
    return n;
  }
  std::uint64_t file_bytes() const { return header().size() + data_bytes(); }

  // Writes the file; returns its path as a string.
  std::string write(const std::filesystem::path& path, GgufData data = GgufData::zeros) const {
    const std::string head = header();
    if (data == GgufData::zeros && data_bytes() > (64ULL << 20)) {
      throw std::invalid_argument("a test GGUF file of more than 64 MiB of data: write it sparse or without data");
    }
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << head;
      if (data == GgufData::zeros) {
        const std::string block(1 << 16, '\0');
        for (std::uint64_t left = data_bytes(); left > 0;) {
          const std::uint64_t n = left < block.size() ? left : block.size();
          out.write(block.data(), static_cast<std::streamsize>(n));
          left -= n;
        }
      }
      if (!out) throw std::runtime_error("cannot write " + path.string());
    }
    if (data == GgufData::sparse) std::filesystem::resize_file(path, head.size() + data_bytes());
    return path.string();
  }

 private:
  std::string kvs_;
  std::uint64_t n_kv_ = 0;
  std::vector<Tensor> tensors_;
  std::string tail_;
};

// The keys every vision tower's file for --mmproj has (tools/mtmd/clip.cpp reads them).
inline GgufWriter clip_header(const std::string& projector, std::uint64_t image_size, std::uint64_t patch,
                              std::uint64_t d, std::uint64_t layers, std::uint64_t heads, std::uint64_t ff,
                              std::uint64_t text_d, const char* activation = "clip.use_gelu") {
  GgufWriter w;
  w.str("general.architecture", "clip")
      .str("general.name", projector + "-mmproj-test")
      .boolean("clip.has_vision_encoder", true)
      .str("clip.projector_type", projector)
      .boolean(activation, true)
      .u32("clip.vision.image_size", static_cast<std::uint32_t>(image_size))
      .u32("clip.vision.patch_size", static_cast<std::uint32_t>(patch))
      .u32("clip.vision.embedding_length", static_cast<std::uint32_t>(d))
      .u32("clip.vision.feed_forward_length", static_cast<std::uint32_t>(ff))
      .u32("clip.vision.block_count", static_cast<std::uint32_t>(layers))
      .u32("clip.vision.attention.head_count", static_cast<std::uint32_t>(heads))
      .u32("clip.vision.projection_dim", static_cast<std::uint32_t>(text_d))
      .f32("clip.vision.attention.layer_norm_epsilon", 1e-6f)
      .f32_array("clip.vision.image_mean", {0.5f, 0.5f, 0.5f})
      .f32_array("clip.vision.image_std", {0.5f, 0.5f, 0.5f});
  return w;
}

// A ViT block's LayerNorms and biased MLP (ln1, ffn_up, ffn_down, ln2), as Gemma 3's and
// Qwen3-VL's towers write them after the block's attention.
inline void layer_norms_and_mlp(GgufWriter& w, const std::string& p, std::uint64_t d, std::uint64_t ff,
                                const char* matrices) {
  w.tensor(p + "ln1.weight", {d}, "F32")
      .tensor(p + "ln1.bias", {d}, "F32")
      .tensor(p + "ffn_up.weight", {d, ff}, matrices)
      .tensor(p + "ffn_up.bias", {ff}, "F32")
      .tensor(p + "ffn_down.weight", {ff, d}, matrices)
      .tensor(p + "ffn_down.bias", {d}, "F32")
      .tensor(p + "ln2.weight", {d}, "F32")
      .tensor(p + "ln2.bias", {d}, "F32");
}

// A vision tower's file for llama.cpp's --mmproj with Gemma 3's projector, as
// convert_hf_to_gguf.py --mmproj writes one (tools/mtmd/clip.cpp's names): a SigLIP ViT of
// `layers` blocks over image_size² pixels in patch² patches, a final LayerNorm, then the
// pooled projection into the text model's width (`text_d`).
struct Gemma3Tower {
  std::uint64_t image_size, patch, d, layers, heads, ff, text_d;
  const char* matrices;  // the linear layers' type
  const char* projector = "gemma3";
};

inline GgufWriter gemma3_mmproj(const Gemma3Tower& s) {
  const std::uint64_t patches = (s.image_size / s.patch) * (s.image_size / s.patch);
  GgufWriter w = clip_header(s.projector, s.image_size, s.patch, s.d, s.layers, s.heads, s.ff, s.text_d);
  w.tensor("v.patch_embd.weight", {s.patch, s.patch, 3, s.d}, "F16")
      .tensor("v.patch_embd.bias", {s.d}, "F32")
      .tensor("v.position_embd.weight", {s.d, patches}, "F16");
  for (std::uint64_t b = 0; b < s.layers; ++b) {
    const std::string p = "v.blk." + std::to_string(b) + ".";
    for (const char* m : {"attn_q", "attn_k", "attn_v", "attn_out"}) {
      w.tensor(p + m + ".weight", {s.d, s.d}, s.matrices).tensor(p + m + ".bias", {s.d}, "F32");
    }
    layer_norms_and_mlp(w, p, s.d, s.ff, s.matrices);
  }
  w.tensor("v.post_ln.weight", {s.d}, "F32")
      .tensor("v.post_ln.bias", {s.d}, "F32")
      .tensor("mm.input_projection.weight", {s.text_d, s.d}, s.matrices)
      .tensor("mm.soft_emb_norm.weight", {s.d}, "F32");
  return w;
}

// A Qwen3-VL or Qwen3.5 vision tower's file for --mmproj (projector qwen3vl_merger, as
// convert_hf_to_gguf.py writes it): a ViT of `layers` blocks of width d with fused qkv, patches
// of patch² pixels from two temporal kernels, learned positions on a grid of image_size /
// patch a side, 2 x 2 patches merged into the text width (text_d), and deepstack mergers on
// the layers listed.
struct Qwen3VlTower {
  std::uint64_t image_size, patch, d, layers, heads, ff, text_d;
  std::vector<std::uint64_t> deepstack;
  const char* matrices;
};

inline GgufWriter qwen3vl_mmproj(const Qwen3VlTower& s) {
  const std::uint64_t side = s.image_size / s.patch, merged = 4 * s.d;
  GgufWriter w = clip_header("qwen3vl_merger", s.image_size, s.patch, s.d, s.layers, s.heads, s.ff, s.text_d);
  w.u32("clip.vision.spatial_merge_size", 2);
  w.tensor("v.patch_embd.weight", {s.patch, s.patch, 3, s.d}, "F16")
      .tensor("v.patch_embd.weight.1", {s.patch, s.patch, 3, s.d}, "F16")
      .tensor("v.patch_embd.bias", {s.d}, "F32")
      .tensor("v.position_embd.weight", {s.d, side * side}, "F32");  // interpolated: ggml wants f32
  for (std::uint64_t b = 0; b < s.layers; ++b) {
    const std::string p = "v.blk." + std::to_string(b) + ".";
    w.tensor(p + "attn_qkv.weight", {s.d, 3 * s.d}, s.matrices)
        .tensor(p + "attn_qkv.bias", {3 * s.d}, "F32")
        .tensor(p + "attn_out.weight", {s.d, s.d}, s.matrices)
        .tensor(p + "attn_out.bias", {s.d}, "F32");
    layer_norms_and_mlp(w, p, s.d, s.ff, s.matrices);
  }
  for (const std::uint64_t b : s.deepstack) {
    const std::string p = "v.deepstack." + std::to_string(b) + ".";
    w.tensor(p + "norm.weight", {merged}, "F32")
        .tensor(p + "norm.bias", {merged}, "F32")
        .tensor(p + "fc1.weight", {merged, merged}, s.matrices)
        .tensor(p + "fc1.bias", {merged}, "F32")
        .tensor(p + "fc2.weight", {merged, s.text_d}, s.matrices)
        .tensor(p + "fc2.bias", {s.text_d}, "F32");
  }
  w.tensor("v.post_ln.weight", {s.d}, "F32")
      .tensor("v.post_ln.bias", {s.d}, "F32")
      .tensor("mm.0.weight", {merged, merged}, s.matrices)
      .tensor("mm.0.bias", {merged}, "F32")
      .tensor("mm.2.weight", {merged, s.text_d}, s.matrices)
      .tensor("mm.2.bias", {s.text_d}, "F32");
  return w;
}

// Qwen2-VL's tower (projector qwen2vl_merger: LayerNorms, a GELU MLP) or Qwen2.5-VL's
// (qwen2.5vl_merger: RMS norms, a SiLU-gated MLP with biases, window attention in every layer
// but each window_pattern-th): 14-pixel patches of two temporal kernels, no patch bias or
// learned positions, q, k and v apart, a 2 x 2 merger into text_d.
struct Qwen2VlTower {
  bool qwen2_5;
  std::uint64_t image_size, patch, d, layers, heads, ff, text_d;
  std::uint32_t window_pattern;  // Qwen2.5-VL's n_wa_pattern (8: full attention in layers 7, 15, ...)
  const char* matrices;
};

inline GgufWriter qwen2vl_mmproj(const Qwen2VlTower& s) {
  const std::uint64_t merged = 4 * s.d;
  GgufWriter w = clip_header(s.qwen2_5 ? "qwen2.5vl_merger" : "qwen2vl_merger", s.image_size, s.patch, s.d, s.layers,
                             s.heads, s.ff, s.text_d, s.qwen2_5 ? "clip.use_silu" : "clip.use_gelu");
  if (s.qwen2_5) w.u32("clip.vision.n_wa_pattern", s.window_pattern);
  w.tensor("v.patch_embd.weight", {s.patch, s.patch, 3, s.d}, "F16")
      .tensor("v.patch_embd.weight.1", {s.patch, s.patch, 3, s.d}, "F16");
  for (std::uint64_t b = 0; b < s.layers; ++b) {
    const std::string p = "v.blk." + std::to_string(b) + ".";
    for (const char* x : {"attn_q", "attn_k", "attn_v", "attn_out"}) {
      w.tensor(p + x + ".weight", {s.d, s.d}, s.matrices).tensor(p + x + ".bias", {s.d}, "F32");
    }
    w.tensor(p + "ln1.weight", {s.d}, "F32").tensor(p + "ln2.weight", {s.d}, "F32");
    if (!s.qwen2_5) w.tensor(p + "ln1.bias", {s.d}, "F32").tensor(p + "ln2.bias", {s.d}, "F32");
    w.tensor(p + "ffn_up.weight", {s.d, s.ff}, s.matrices)
        .tensor(p + "ffn_up.bias", {s.ff}, "F32")
        .tensor(p + "ffn_down.weight", {s.ff, s.d}, s.matrices)
        .tensor(p + "ffn_down.bias", {s.d}, "F32");
    if (s.qwen2_5) w.tensor(p + "ffn_gate.weight", {s.d, s.ff}, s.matrices).tensor(p + "ffn_gate.bias", {s.ff}, "F32");
  }
  w.tensor("v.post_ln.weight", {s.d}, "F32");  // the merger's norm (visual.merger.ln_q)
  if (!s.qwen2_5) w.tensor("v.post_ln.bias", {s.d}, "F32");
  w.tensor("mm.0.weight", {merged, merged}, s.matrices)
      .tensor("mm.0.bias", {merged}, "F32")
      .tensor("mm.2.weight", {merged, s.text_d}, s.matrices)
      .tensor("mm.2.bias", {s.text_d}, "F32");
  return w;
}

// A Llama-architecture model whose tensors, between them, use every type of ggml_layouts():
// d_model 256, 4 blocks, 4 heads of 64, d_mlp 256, a vocabulary of 256 (so every row is a
// whole number of 256-element blocks). Tensor i takes type i of the list, the last few
// wrapping round to the start.
inline GgufWriter every_type_llama() {
  GgufWriter w;
  w.str("general.architecture", "llama")
      .str("general.name", "every-type")
      .u32("general.alignment", 32)
      .u32("llama.context_length", 2048)
      .u32("llama.embedding_length", 256)
      .u32("llama.block_count", 4)
      .u32("llama.feed_forward_length", 256)
      .u32("llama.attention.head_count", 4)
      .u32("llama.attention.head_count_kv", 4)
      .u32("llama.rope.dimension_count", 64)
      .f32("llama.attention.layer_norm_rms_epsilon", 1e-5f)
      .u32("general.file_type", 15)
      .str("tokenizer.ggml.model", "llama")
      .tokens("tokenizer.ggml.tokens", 256);
  const std::vector<GgmlLayout>& types = ggml_layouts();
  std::size_t next = 0;
  const auto add = [&](const std::string& name, std::vector<std::uint64_t> shape) {
    w.tensor(name, std::move(shape), types[next++ % types.size()].name);
  };
  add("token_embd.weight", {256, 256});
  for (int b = 0; b < 4; ++b) {
    const std::string blk = "blk." + std::to_string(b) + ".";
    add(blk + "attn_norm.weight", {256});
    add(blk + "attn_q.weight", {256, 256});
    add(blk + "attn_k.weight", {256, 256});
    add(blk + "attn_v.weight", {256, 256});
    add(blk + "attn_output.weight", {256, 256});
    add(blk + "ffn_norm.weight", {256});
    add(blk + "ffn_gate.weight", {256, 256});
    add(blk + "ffn_up.weight", {256, 256});
    add(blk + "ffn_down.weight", {256, 256});
  }
  add("output_norm.weight", {256});
  add("output.weight", {256, 256});
  return w;
}

// A small Llama-architecture model: d_model 32, one block, 2 heads of 16 (GQA: 1 K/V head),
// d_mlp 64, a vocabulary of 8; F32 norms, Q8_0 and Q4_0 matrices, an F16 embedding and head.
inline GgufWriter tiny_llama() {
  GgufWriter w;
  w.str("general.architecture", "llama")
      .str("general.name", "tiny-llama")
      .u32("llama.context_length", 128)
      .u32("llama.embedding_length", 32)
      .u32("llama.block_count", 1)
      .u32("llama.feed_forward_length", 64)
      .u32("llama.attention.head_count", 2)
      .u32("llama.attention.head_count_kv", 1)
      .tokens("tokenizer.ggml.tokens", 8);
  w.tensor("token_embd.weight", {32, 8}, "F16")
      .tensor("blk.0.attn_norm.weight", {32}, "F32")
      .tensor("blk.0.attn_q.weight", {32, 32}, "Q8_0")
      .tensor("blk.0.attn_k.weight", {32, 16}, "Q8_0")
      .tensor("blk.0.attn_v.weight", {32, 16}, "Q8_0")
      .tensor("blk.0.attn_output.weight", {32, 32}, "Q4_0")
      .tensor("blk.0.ffn_norm.weight", {32}, "F32")
      .tensor("blk.0.ffn_gate.weight", {32, 64}, "Q4_0")
      .tensor("blk.0.ffn_up.weight", {32, 64}, "Q4_0")
      .tensor("blk.0.ffn_down.weight", {64, 32}, "Q4_0")
      .tensor("output_norm.weight", {32}, "F32")
      .tensor("output.weight", {32, 8}, "F16");
  return w;
}

}  // namespace memplan::testing
