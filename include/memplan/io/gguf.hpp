// GGUF files (ggml's format for llama.cpp models), read from their headers only: the
// metadata and every tensor's name, shape, ggml type and offset. Tensor data is never read:
// a file's size is taken from the file system and each tensor's bytes from its type.
// The files are treated as untrusted: every count, length and offset is checked against the
// file's size and the limits below before anything is believed or allocated (docs/gguf.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "memplan/core/ggml_types.hpp"
#include "memplan/estimators/llama_cpp.hpp"
#include "memplan/io/model_file.hpp"

namespace memplan {

// Limits on what a header may declare (docs/hardening.md). Real models stay far below them.
inline constexpr std::uint64_t max_gguf_header_bytes = 256ULL * 1024 * 1024;  // metadata + tensor infos
inline constexpr std::uint64_t max_gguf_tensors = 1ULL << 20;                 // tensor infos
inline constexpr std::uint64_t max_gguf_metadata = 1ULL << 20;                // key-value pairs
inline constexpr std::uint64_t max_gguf_key_bytes = 65535;                    // the GGUF spec's limit
inline constexpr std::uint64_t max_gguf_tensor_name_bytes = 63;               // ggml's GGML_MAX_NAME (64) less its NUL
inline constexpr std::uint32_t max_gguf_dims = 4;                             // ggml's GGML_MAX_DIMS
inline constexpr std::uint64_t max_gguf_kept_string_bytes = 4096;  // longer string values keep their length only

// GGUF metadata value types (gguf_metadata_value_type), spelled as the GGUF spec names them
// in lower case ("bool" for boolean).
enum class GgufValueType : std::uint32_t {
  uint8 = 0,
  int8 = 1,
  uint16 = 2,
  int16 = 3,
  uint32 = 4,
  int32 = 5,
  float32 = 6,
  boolean = 7,
  string = 8,
  array = 9,
  uint64 = 10,
  int64 = 11,
  float64 = 12,
};
std::string to_string(GgufValueType type);

struct GgufValue {
  GgufValueType type = GgufValueType::uint8;
  GgufValueType element_type = GgufValueType::uint8;  // arrays: the type of their elements
  std::uint64_t count = 0;                            // arrays: elements; strings: bytes
  // Scalars: unsigned integers as uint64_t, signed ones as int64_t, floats as double, bool;
  // strings of at most max_gguf_kept_string_bytes. Arrays and longer strings: monostate
  // (an array's elements are skipped, never stored).
  std::variant<std::monostate, std::uint64_t, std::int64_t, double, bool, std::string> value;

  // Returns an integer value that is >= 0 (any integer type), or nullopt.
  std::optional<std::uint64_t> whole_number() const;
};

struct GgufMetadata {
  std::string key;  // "general.architecture", "llama.block_count", ...
  GgufValue value;
};

// One tensor, as its tensor info describes it.
struct GgufTensor {
  std::string name;                  // "blk.0.attn_q.weight"
  std::vector<std::uint64_t> shape;  // ggml order: shape[0] is the row (the contiguous dimension)
  GgmlType type;
  std::uint64_t elements = 0;  // product of the shape (1 for no dimensions)
  std::uint64_t bytes = 0;     // elements / block_size x type_size
  std::uint64_t offset = 0;    // from the start of the tensor data, a multiple of the alignment
};

struct GgufTypeTotal {
  std::string type;  // "Q4_K"
  std::uint64_t tensors = 0;
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;
};

struct GgufFile {
  std::string path;                    // the file, as named
  std::uint32_t version = 0;           // 2 or 3
  std::uint64_t alignment = 32;        // general.alignment, or 32
  std::uint64_t data_offset = 0;       // where the tensor data starts in the file
  std::uint64_t file_bytes = 0;        // the file's size
  std::vector<GgufMetadata> metadata;  // in file order
  std::vector<GgufTensor> tensors;     // in file order (which is offset order)
  std::vector<GgufTypeTotal> types;    // per ggml type, largest bytes first
  std::uint64_t elements = 0;          // every element of every tensor
  std::uint64_t bytes = 0;             // the tensors' bytes, the padding between them not counted

  // Returns the value of `key`, or nullptr.
  const GgufValue* find(std::string_view key) const;
};

// Parses a GGUF header from `bytes`, the first bytes of a file of `file_size` bytes (all of
// it, or only its header: the data is never looked at; a header fetched by a range request
// is enough). Checks: the magic, version 2 or 3, the counts against the limits and the bytes
// left, each key (non-empty, unique, at most 65,535 bytes) and value (a known type, bools 0
// or 1, no nested arrays, strings and arrays within the file), general.alignment (a uint32
// power of two), each tensor (a unique name of at most 63 bytes, at most 4 dimensions, under
// 2^63 elements, a priced ggml type, a row that is a whole number of blocks) and the offsets
// (each a multiple of the alignment, the tensors one after another in info order as ggml
// reads them, each ending within `file_size`). Throws ConfigError naming `file` and, as the
// key, the field, metadata key or tensor at fault; the message gives the byte offset.
GgufFile parse_gguf(std::string_view bytes, std::uint64_t file_size, const std::string& file);

// Reads the header of the .gguf file at `path` (parse_gguf over the file; at most the header,
// never the tensor data). Throws ConfigError (missing, a directory or not a regular file,
// unreadable, or as parse_gguf).
GgufFile read_gguf(const std::string& path);

// What a GGUF file maps to.
struct GgufImport {
  ModelEntry entry;                // the architecture, with spec.stored_weights from the tensors
  std::string architecture;        // general.architecture ("llama", "qwen2", ...)
  std::vector<std::string> notes;  // what the mapping decided, one line each
};

// Returns the general.architecture values gguf_model maps, sorted.
std::vector<std::string> gguf_architectures();

// Maps a GGUF file's llama.cpp metadata ({arch}.block_count, .embedding_length,
// .feed_forward_length, .attention.head_count/_kv, .attention.key_length/value_length,
// .context_length, .expert_count/.expert_used_count, .attention.sliding_window, the
// tokenizer's token count) and its tensors (biases, norms, a tied head, learned positions,
// a gated MLP) onto a ModelSpec named after the file, and groups its tensors into
// spec.stored_weights (component, ggml type, size) so the weights are priced as stored.
// Throws ConfigError naming the file and the key: an unmapped architecture (listing the
// mapped ones), a missing or mistyped key, a per-layer array where one value is needed, or
// sizes the spec cannot hold.
GgufImport gguf_model(const GgufFile& file);

// read_gguf then gguf_model.
GgufImport load_gguf_model(const std::string& path);

// Maps a vision tower's file for llama.cpp's --mmproj (general.architecture "clip", written by
// convert_hf_to_gguf.py --mmproj; keys and tensors as tools/mtmd/clip.cpp reads them) onto
// the tower llama_cpp's estimate prices. Throws ConfigError naming the file and the key: not a
// "clip" file, no vision encoder, a projector other than those memplan has recorded (gemma3),
// a missing or mistyped key or tensor.
LlamaCppProjector gguf_projector(const GgufFile& file);

// read_gguf then gguf_projector.
LlamaCppProjector load_gguf_projector(const std::string& path);

}  // namespace memplan
