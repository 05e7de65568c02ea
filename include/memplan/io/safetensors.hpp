// safetensors checkpoints, read from their headers only: what tensors a checkpoint holds,
// its exact element count and bytes per dtype, and how that compares with an architecture.
// The files are treated as untrusted: the header size is bounded, and dtypes, shapes and
// offsets are validated before anything is believed. Tensor data is never read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memplan/core/model_spec.hpp"

namespace memplan {

// Headers longer than this are refused (the safetensors library refuses 100 MB).
inline constexpr std::uint64_t max_safetensors_header_bytes = 100ULL * 1024 * 1024;

// One tensor, as its header entry describes it.
struct SafetensorsTensor {
  std::string name;
  std::string dtype;                 // as the header spells it: "BF16", "F32", "I32", ...
  std::vector<std::uint64_t> shape;  // empty for a scalar
  std::uint64_t elements = 0;        // product of the shape (1 for a scalar)
  std::uint64_t bytes = 0;           // data_offsets end - begin = elements x the dtype's size
  std::uint64_t offset = 0;          // data_offsets begin, from the start of the data area
  std::string file;                  // the .safetensors file holding it
};

struct SafetensorsDtypeTotal {
  std::string dtype;
  std::uint64_t tensors = 0;
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;
};

struct SafetensorsInventory {
  std::string path;                                           // what was read: a .safetensors file or an index
  std::vector<std::string> files;                             // the .safetensors files read, in order
  std::vector<SafetensorsTensor> tensors;                     // sorted by name
  std::vector<SafetensorsDtypeTotal> dtypes;                  // sorted by bytes, largest first
  std::vector<std::pair<std::string, std::string>> metadata;  // the first file's __metadata__, sorted
  std::uint64_t elements = 0;                                 // exact count: every element of every tensor
  std::uint64_t bytes = 0;                                    // tensor data bytes
  std::uint64_t file_bytes = 0;                               // the files' sizes, headers included
  std::optional<std::uint64_t> index_total_size;              // an index's metadata.total_size
};

// Returns the dtypes the safetensors format defines, in its order (BOOL, F4, ..., U64).
std::vector<std::string> safetensors_dtypes();

// Returns the size of one element of `dtype` in bits (F4: 4, F6_E2M3: 6, BF16: 16, ...).
// Throws Error(invalid_input, key "dtype") listing the known dtypes.
std::uint64_t safetensors_dtype_bits(std::string_view dtype);

// Validates a header (its JSON text) against a data area of `data_size` bytes and returns
// its tensors with `file` as their file. Checks: a JSON object whose __metadata__ maps
// strings to strings and whose other members are {dtype, shape, data_offsets}; known
// dtypes; the shape's element count x the dtype's size equals end - begin (sub-byte dtypes:
// a whole number of bytes); offsets within the data area; and the tensors, in offset order,
// tile the data area exactly (no overlap, no gap, nothing left over).
// Throws ConfigError naming `file` and, as the key, the tensor at fault.
SafetensorsInventory parse_safetensors_header(std::string_view header, std::uint64_t data_size,
                                              const std::string& file);

// Reads one .safetensors file: the 8-byte little-endian header length, then the header.
// Throws ConfigError (missing, a directory, shorter than 8 bytes, a header length over
// max_safetensors_header_bytes or past the end of the file, an invalid header).
SafetensorsInventory read_safetensors(const std::string& path);

// Reads a sharded checkpoint's model.safetensors.index.json and the header of each shard
// its weight_map names (paths relative to the index, never outside its directory). Every
// tensor of weight_map must be in the shard it names and every shard tensor in weight_map.
// Throws ConfigError naming the index or the shard, and the tensor.
SafetensorsInventory read_safetensors_index(const std::string& path);

// read_safetensors_index for a name ending in ".json", read_safetensors otherwise.
SafetensorsInventory read_checkpoint(const std::string& path);

// Checkpoint tensors that are not parameters of the architecture, grouped by name pattern
// (layer numbers replaced by '*').
struct CheckpointExtra {
  std::string kind;     // "buffer", "tied copy" or "task head"
  std::string pattern;  // "model.layers.*.self_attn.rotary_emb.inv_freq"
  std::string why;      // one line for people
  std::uint64_t tensors = 0;
  std::uint64_t elements = 0;
};

struct CheckpointComparison {
  std::uint64_t architecture_params = 0;  // count_parameters(spec)
  std::uint64_t checkpoint_elements = 0;  // every element of every tensor
  std::vector<CheckpointExtra> extra;     // what the checkpoint holds beyond the parameters
  std::uint64_t compared_elements = 0;    // checkpoint_elements minus the extras
  bool matches() const { return compared_elements == architecture_params; }
};

// Compares a checkpoint with an architecture: known non-parameter tensors are set aside
// (rotary inv_freq and GPT-2 attention-mask buffers, position_ids, a stored copy of a tied
// LM head, task heads such as BERT's cls.*) and the rest is compared with the count.
// Throws Error(overflow) only on absurd sizes.
CheckpointComparison compare_checkpoint(const SafetensorsInventory& checkpoint, const ModelSpec& spec);

}  // namespace memplan
