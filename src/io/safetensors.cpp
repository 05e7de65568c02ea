// safetensors headers (https://github.com/huggingface/safetensors, "Format"): 8 bytes of
// little-endian header length N, N bytes of JSON, then the data area the JSON's
// data_offsets point into. Only the first 8 + N bytes of a file are ever read.
#include "memplan/io/safetensors.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "json_fields.hpp"
#include "memplan/core/bytes.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/text.hpp"
#include "memplan/io/file_checks.hpp"
#include "text_file.hpp"

namespace memplan {

namespace {

namespace fs = std::filesystem;

struct DtypeBits {
  std::string_view name;
  std::uint64_t bits;
};

// The safetensors Dtype enum, in its order, with Dtype::bitsize().
constexpr std::array<DtypeBits, 20> kDtypes{{{"BOOL", 8}, {"F4", 4},      {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"U8", 8},
                                             {"I8", 8},   {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"I16", 16},
                                             {"U16", 16}, {"F16", 16},    {"BF16", 16},   {"I32", 32},    {"U32", 32},
                                             {"F32", 32}, {"C64", 64},    {"F64", 64},    {"I64", 64},    {"U64", 64}}};

// An index is JSON text; bound it like a header.
constexpr std::uintmax_t kMaxIndexBytes = max_safetensors_header_bytes;

[[noreturn]] void tensor_error(const std::string& file, const std::string& name, const std::string& message) {
  throw ConfigError(file, 0, 0, name, "tensor '" + printable(name) + "': " + message);
}

std::string range_text(std::uint64_t begin, std::uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

std::string short_json(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

// Reads a list of unsigned integers, or says what is wrong with it.
std::optional<std::vector<std::uint64_t>> unsigned_list(const nlohmann::json& value) {
  if (!value.is_array()) return std::nullopt;
  std::vector<std::uint64_t> out;
  for (const nlohmann::json& item : value) {
    if (!item.is_number_unsigned()) return std::nullopt;
    out.push_back(item.get<std::uint64_t>());
  }
  return out;
}

SafetensorsTensor parse_tensor(const std::string& name, const nlohmann::json& entry, std::uint64_t data_size,
                               const std::string& file) {
  if (!entry.is_object()) {
    tensor_error(file, name, "expected {\"dtype\", \"shape\", \"data_offsets\"}, got " + short_json(entry));
  }
  SafetensorsTensor t;
  t.name = name;
  t.file = file;
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    if (!entry.contains(key)) tensor_error(file, name, std::string("missing \"") + key + "\"");
  }
  const nlohmann::json& dtype = entry.at("dtype");
  if (!dtype.is_string()) tensor_error(file, name, "dtype must be a string such as \"BF16\", got " + short_json(dtype));
  t.dtype = dtype.get<std::string>();
  std::uint64_t bits = 0;
  try {
    bits = safetensors_dtype_bits(t.dtype);
  } catch (const Error& e) {
    tensor_error(file, name, e.what());
  }

  const std::optional<std::vector<std::uint64_t>> shape = unsigned_list(entry.at("shape"));
  if (!shape)
    tensor_error(file, name,
                 "shape must be a list of sizes (whole numbers >= 0), got " + short_json(entry.at("shape")));
  t.shape = *shape;
  const std::optional<std::vector<std::uint64_t>> offsets = unsigned_list(entry.at("data_offsets"));
  if (!offsets || offsets->size() != 2) {
    tensor_error(file, name,
                 "data_offsets must be [begin, end] (two whole numbers), got " + short_json(entry.at("data_offsets")));
  }
  const std::uint64_t begin = (*offsets)[0], end = (*offsets)[1];
  if (end < begin) tensor_error(file, name, "data_offsets " + range_text(begin, end) + " end before they begin");
  if (end > data_size) {
    tensor_error(file, name,
                 "data_offsets " + range_text(begin, end) + " run past the end of the data area (" +
                     group_digits(data_size) + " bytes)");
  }

  t.elements = 1;
  std::uint64_t total_bits = 0;
  try {
    for (const std::uint64_t d : t.shape) t.elements = checked_mul(t.elements, d, "elements");
    total_bits = checked_mul(t.elements, bits, "bits");
  } catch (const Error&) {
    tensor_error(file, name, "shape " + shape_text(t.shape) + " of " + t.dtype + " holds more than 2^64 bits");
  }
  if (total_bits % 8 != 0) {
    tensor_error(file, name,
                 group_digits(t.elements) + " elements of " + t.dtype + " (" + std::to_string(bits) +
                     " bits each) are not a whole number of bytes");
  }
  t.bytes = total_bits / 8;
  if (end - begin != t.bytes) {
    tensor_error(file, name,
                 "shape " + shape_text(t.shape) + " of " + t.dtype + " needs " + group_digits(t.bytes) +
                     " bytes but data_offsets " + range_text(begin, end) + " hold " + group_digits(end - begin));
  }
  t.offset = begin;
  return t;
}

// The tensors, in offset order, must tile [0, data_size) exactly.
void check_tiling(std::vector<SafetensorsTensor> tensors, std::uint64_t data_size, const std::string& file) {
  std::sort(tensors.begin(), tensors.end(), [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
    return a.offset != b.offset ? a.offset < b.offset : a.bytes < b.bytes;
  });
  std::uint64_t covered = 0;
  const SafetensorsTensor* previous = nullptr;
  for (const SafetensorsTensor& t : tensors) {
    if (t.offset < covered) {
      tensor_error(file, t.name,
                   "data_offsets " + range_text(t.offset, t.offset + t.bytes) + " overlap tensor '" +
                       printable(previous->name) + "' " +
                       range_text(previous->offset, previous->offset + previous->bytes));
    }
    if (t.offset > covered) {
      tensor_error(file, t.name,
                   "data_offsets " + range_text(t.offset, t.offset + t.bytes) + " leave bytes " +
                       range_text(covered, t.offset) + " of the data area to no tensor" +
                       (previous ? " (after tensor '" + printable(previous->name) + "')" : ""));
    }
    covered = t.offset + t.bytes;
    previous = &t;
  }
  if (covered != data_size) {
    const std::string what = "the data area has " + group_digits(data_size) + " bytes but the tensors cover " +
                             group_digits(covered) + ": bytes " + range_text(covered, data_size) +
                             " belong to no tensor";
    if (previous) tensor_error(file, previous->name, "is the last tensor, and " + what);
    throw ConfigError(file, 0, 0, "", what);
  }
}

void add_totals(SafetensorsInventory& inv) {
  std::map<std::string, SafetensorsDtypeTotal> by_dtype;
  inv.elements = inv.bytes = 0;
  for (const SafetensorsTensor& t : inv.tensors) {
    SafetensorsDtypeTotal& d = by_dtype[t.dtype];
    d.dtype = t.dtype;
    ++d.tensors;
    d.elements = checked_add(d.elements, t.elements, "elements of", t.dtype);
    d.bytes = checked_add(d.bytes, t.bytes, "bytes of", t.dtype);
    inv.elements = checked_add(inv.elements, t.elements, "checkpoint elements");
    inv.bytes = checked_add(inv.bytes, t.bytes, "checkpoint bytes");
  }
  inv.dtypes.clear();
  for (auto& [name, total] : by_dtype) inv.dtypes.push_back(total);
  std::stable_sort(inv.dtypes.begin(), inv.dtypes.end(),
                   [](const SafetensorsDtypeTotal& a, const SafetensorsDtypeTotal& b) { return a.bytes > b.bytes; });
  std::sort(inv.tensors.begin(), inv.tensors.end(),
            [](const SafetensorsTensor& a, const SafetensorsTensor& b) { return a.name < b.name; });
}

// Opens `path` for reading and returns its size; throws ConfigError when it cannot.
std::uint64_t open_input(const std::string& path, std::ifstream& in) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw ConfigError(path, 0, 0, "", "is a directory, not a checkpoint file");
  require_regular_input(path, "a checkpoint file");  // before opening: a FIFO would block
  in.open(path, std::ios::binary);
  if (!in) throw ConfigError(path, 0, 0, "", fs::exists(path, ec) ? "cannot be read" : "no such file");
  if (!fs::is_regular_file(path, ec)) {
    throw ConfigError(path, 0, 0, "", "is not a regular file: a safetensors file is read by its size and offsets");
  }
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) throw ConfigError(path, 0, 0, "", "cannot be read: " + ec.message());
  return size;
}

// "a/b/../c" and "/x" would leave the index's directory.
bool stays_inside(const fs::path& relative) {
  if (relative.empty() || relative.is_absolute() || relative.has_root_name()) return false;
  for (const fs::path& part : relative) {
    if (part == "..") return false;
  }
  return true;
}

std::string name_pattern(const std::string& name) {
  std::string out;
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t dot = std::min(name.find('.', start), name.size());
    const std::string_view part(name.data() + start, dot - start);
    const bool number = !part.empty() &&
                        std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    out += number ? std::string("*") : std::string(part);
    if (dot == name.size()) break;
    out += '.';
    start = dot + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> safetensors_dtypes() {
  std::vector<std::string> out;
  out.reserve(std::size(kDtypes));
  for (const DtypeBits& d : kDtypes) out.emplace_back(d.name);
  return out;
}

std::uint64_t safetensors_dtype_bits(std::string_view dtype) {
  for (const DtypeBits& d : kDtypes) {
    if (d.name == dtype) return d.bits;
  }
  const std::vector<std::string> known = safetensors_dtypes();
  throw Error(ErrorKind::invalid_input,
              "unknown dtype '" + printable(dtype) + "'" + did_you_mean(dtype, known) + "; safetensors dtypes are " +
                  quoted_list(known, "and"),
              "dtype");
}

SafetensorsInventory parse_safetensors_header(std::string_view header, std::uint64_t data_size,
                                              const std::string& file) {
  const nlohmann::json root = detail::parse_json(header, file, std::uint64_t{8}, /*duplicates_checked_by_caller=*/true);
  if (!root.is_object()) {
    throw ConfigError(file, 0, 0, "",
                      "the header must be a JSON object of tensor names, got " + detail::json_type_name(root));
  }
  std::set<std::string> seen;
  for (const detail::JsonMember& m : detail::top_level_members(header)) {
    if (!seen.insert(m.key).second) tensor_error(file, m.key, "appears twice in the header");
  }

  SafetensorsInventory inv;
  inv.path = file;
  inv.files = {file};
  for (const auto& [name, entry] : root.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) {
        throw ConfigError(file, 0, 0, name, "'__metadata__' must map strings to strings, got " + short_json(entry));
      }
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) {
          throw ConfigError(file, 0, 0, name,
                            "'__metadata__' must map strings to strings; '" + printable(key) + "' is " +
                                short_json(value));
        }
        inv.metadata.emplace_back(key, value.get<std::string>());
      }
      continue;
    }
    inv.tensors.push_back(parse_tensor(name, entry, data_size, file));
  }
  std::sort(inv.metadata.begin(), inv.metadata.end());
  check_tiling(inv.tensors, data_size, file);
  add_totals(inv);
  return inv;
}

SafetensorsInventory read_safetensors(const std::string& path) {
  std::ifstream in;
  const std::uint64_t size = open_input(path, in);
  if (size < 8) {
    throw ConfigError(path, 0, 0, "",
                      "is " + std::to_string(size) +
                          " bytes: too short for a safetensors file (it starts with an "
                          "8-byte header length)");
  }
  std::array<unsigned char, 8> prefix{};
  in.read(reinterpret_cast<char*>(prefix.data()), 8);
  if (!in) throw ConfigError(path, 0, 0, "", "cannot read the header length");
  std::uint64_t length = 0;
  for (std::size_t i = 8; i-- > 0;) length = (length << 8) | prefix[i];
  if (length > max_safetensors_header_bytes) {
    throw ConfigError(path, 0, 0, "",
                      "header length " + group_digits(length) +
                          " bytes is over the 100 MiB limit: not a safetensors file, or a damaged one");
  }
  if (length > size - 8) {
    throw ConfigError(path, 0, 0, "",
                      "header length " + group_digits(length) + " bytes runs past the end of the file (" +
                          group_digits(size - 8) + " bytes follow the length): a truncated or damaged file");
  }
  std::string header(static_cast<std::size_t>(length), '\0');
  in.read(header.data(), static_cast<std::streamsize>(length));
  if (static_cast<std::uint64_t>(in.gcount()) != length) {
    throw ConfigError(path, 0, 0, "", "the file ended while its header was read");
  }
  SafetensorsInventory inv = parse_safetensors_header(header, size - 8 - length, path);
  inv.file_bytes = size;
  return inv;
}

SafetensorsInventory read_safetensors_index(const std::string& path) {
  const std::string text = detail::read_text_file(path, "a safetensors index", kMaxIndexBytes);
  const nlohmann::json root = detail::parse_json(text, path);
  const detail::JsonMap map(root, text, path, "a safetensors index (model.safetensors.index.json)");

  SafetensorsInventory inv;
  inv.path = path;
  if (map.has("metadata")) {
    const nlohmann::json& metadata = map.value("metadata");
    if (!metadata.is_object()) map.fail("metadata", "'metadata' must be an object such as {\"total_size\": 123}");
    const auto total = metadata.find("total_size");
    if (total != metadata.end()) {
      if (!total->is_number_unsigned()) {
        map.fail("metadata", "metadata.total_size must be a whole number of bytes, got " + short_json(*total));
      }
      inv.index_total_size = total->get<std::uint64_t>();
    }
  }
  const nlohmann::json& weight_map = map.value("weight_map");
  if (!weight_map.is_object() || weight_map.empty()) {
    map.fail("weight_map", "'weight_map' must map each tensor name to its shard file, got " + short_json(weight_map));
  }
  std::map<std::string, std::string> shard_of;  // tensor -> shard, as the index says
  std::set<std::string> shards;                 // each shard once, in order (a linear search was quadratic)
  for (const auto& [tensor, shard] : weight_map.items()) {
    if (!shard.is_string() || shard.get<std::string>().empty()) {
      map.fail("weight_map",
               "weight_map maps tensor '" + printable(tensor) + "' to " + short_json(shard) + ", not a file name");
    }
    const std::string file = shard.get<std::string>();
    if (!stays_inside(fs::path(file))) {
      map.fail("weight_map", "weight_map puts tensor '" + printable(tensor) + "' in '" + printable(file) +
                                 "': shard files must be relative paths inside the index's directory");
    }
    shard_of[tensor] = file;
    shards.insert(file);
  }

  const fs::path dir = fs::path(path).parent_path();
  std::set<std::string> found;
  for (const std::string& shard : shards) {
    const std::string shard_path = (dir / shard).string();
    SafetensorsInventory part = read_safetensors(shard_path);
    if (inv.files.empty()) inv.metadata = part.metadata;
    inv.files.push_back(shard_path);
    inv.file_bytes = checked_add(inv.file_bytes, part.file_bytes, "checkpoint file bytes");
    for (SafetensorsTensor& t : part.tensors) {
      const auto listed = shard_of.find(t.name);
      if (listed == shard_of.end()) {
        throw ConfigError(shard_path, 0, 0, t.name,
                          "tensor '" + printable(t.name) + "' is in this shard but not in the weight_map of " + path);
      }
      if (listed->second != shard) {
        throw ConfigError(shard_path, 0, 0, t.name,
                          "tensor '" + printable(t.name) + "' is in this shard but " + path + " puts it in '" +
                              printable(listed->second) + "'");
      }
      found.insert(t.name);
      inv.tensors.push_back(std::move(t));
    }
  }
  for (const auto& [tensor, shard] : shard_of) {
    if (!found.contains(tensor)) {
      const detail::TextPosition p = map.position("weight_map");
      throw ConfigError(path, p.line, p.column, tensor,
                        "weight_map puts tensor '" + printable(tensor) + "' in '" + printable(shard) +
                            "', which holds no such tensor");
    }
  }
  add_totals(inv);
  return inv;
}

SafetensorsInventory read_checkpoint(const std::string& path) {
  return path.ends_with(".json") ? read_safetensors_index(path) : read_safetensors(path);
}

CheckpointComparison compare_checkpoint(const SafetensorsInventory& checkpoint, const ModelSpec& spec) {
  CheckpointComparison out;
  out.architecture_params = count_parameters(spec);
  out.checkpoint_elements = checkpoint.elements;
  const std::uint64_t embedding = checked_mul(spec.vocab_size, spec.d_model, "vocab_size x d_model");
  std::uint64_t extra_elements = 0;
  for (const SafetensorsTensor& t : checkpoint.tensors) {
    const std::string& n = t.name;
    std::string kind, why;
    if (n.ends_with("inv_freq")) {
      kind = "buffer";
      why = "rotary inv_freq buffers saved by older transformers; recomputed at load, not parameters";
    } else if (spec.family == Family::gpt2 && (n.ends_with(".attn.bias") || n.ends_with(".attn.masked_bias"))) {
      kind = "buffer";
      why = "GPT-2 causal-mask buffers (attn.bias), not parameters";
    } else if (n.ends_with("position_ids")) {
      kind = "buffer";
      why = "position_ids buffers, not parameters";
    } else if (n.starts_with("cls.") || n.starts_with("classifier.") || n.starts_with("score.") ||
               n.starts_with("qa_outputs.")) {
      kind = "task head";
      why = "a task head (BertForPreTraining's cls.*, a classifier or score layer) outside the base model";
    } else if (spec.lm_head == LmHead::tied && (n == "lm_head.weight" || n.ends_with(".lm_head.weight")) &&
               t.elements == embedding) {
      kind = "tied copy";
      why = "the LM head tied to the token embedding, stored a second time";
    } else {
      continue;
    }
    const std::string pattern = name_pattern(n);
    auto it = std::find_if(out.extra.begin(), out.extra.end(),
                           [&](const CheckpointExtra& e) { return e.kind == kind && e.pattern == pattern; });
    if (it == out.extra.end()) it = out.extra.insert(out.extra.end(), CheckpointExtra{kind, pattern, why, 0, 0});
    ++it->tensors;
    it->elements = checked_add(it->elements, t.elements, "checkpoint elements");
    extra_elements = checked_add(extra_elements, t.elements, "checkpoint elements");
  }
  out.compared_elements = checkpoint.elements - extra_elements;
  return out;
}

}  // namespace memplan
