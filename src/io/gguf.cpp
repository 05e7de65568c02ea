// GGUF headers (ggml docs/gguf.md): the magic "GGUF", a uint32 version, uint64 tensor and
// key-value counts, the typed key-value pairs, the tensor infos (name, dimensions, ggml type,
// offset), padding to general.alignment, then the tensor data, which is never read.
// Debian 12 packages no GGUF reader (no ggml or gguf library), so this is a small reader of
// its own: every count, length and offset is checked against the bytes left in the file and
// the limits in gguf.hpp before it is used, sizes go through checked arithmetic, and it
// follows ggml's own reader (ggml src/gguf.cpp, gguf_init_from_reader) on what it refuses.
#include "memplan/io/gguf.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <streambuf>
#include <type_traits>
#include <unordered_set>

#include "memplan/core/bytes.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"

namespace memplan {

namespace {

namespace fs = std::filesystem;

struct RemovedType {
  std::uint32_t id;
  std::string_view name;
};
constexpr std::array<RemovedType, 8> kRemovedTypes{{{4, "Q4_2"},
                                                    {5, "Q4_3"},
                                                    {31, "Q4_0_4_4"},
                                                    {32, "Q4_0_4_8"},
                                                    {33, "Q4_0_8_8"},
                                                    {36, "IQ4_NL_4_4"},
                                                    {37, "IQ4_NL_4_8"},
                                                    {38, "IQ4_NL_8_8"}}};

constexpr std::array<std::string_view, 13> kValueTypeNames{"uint8",  "int8",    "uint16", "int16",  "uint32",
                                                           "int32",  "float32", "bool",   "string", "array",
                                                           "uint64", "int64",   "float64"};

// Bytes of one value of a fixed-size type; 0 for string and array.
std::uint64_t fixed_size(GgufValueType t) {
  switch (t) {
    case GgufValueType::uint8:
    case GgufValueType::int8:
    case GgufValueType::boolean: return 1;
    case GgufValueType::uint16:
    case GgufValueType::int16: return 2;
    case GgufValueType::uint32:
    case GgufValueType::int32:
    case GgufValueType::float32: return 4;
    case GgufValueType::uint64:
    case GgufValueType::int64:
    case GgufValueType::float64: return 8;
    case GgufValueType::string:
    case GgufValueType::array: return 0;
  }
  return 0;
}

std::string value_type_list() {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < kValueTypeNames.size(); ++i) {
    names.push_back(std::to_string(i) + " (" + std::string(kValueTypeNames[i]) + ")");
  }
  return quoted_list(names, "and");
}

std::string at(std::uint64_t offset) { return "at byte " + group_digits(offset) + ": "; }

// A streambuf over bytes in memory, so that one reader serves files and buffers.
class ViewBuf : public std::streambuf {
 public:
  explicit ViewBuf(std::string_view bytes) {
    char* begin = const_cast<char*>(bytes.data());  // read only: the get area is never written
    setg(begin, begin, begin + bytes.size());
  }
};

// Reads the header front to back. Every read is checked against the bytes the file has left
// and the header limit first; nothing is allocated for a length that was not checked.
class Reader {
 public:
  Reader(std::istream& in, std::uint64_t file_size, std::string file)
      : in_(in), file_size_(file_size), file_(std::move(file)) {}

  std::uint64_t position() const { return pos_; }
  std::uint64_t left() const { return file_size_ - pos_; }
  const std::string& file() const { return file_; }

  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw ConfigError(file_, 0, 0, key, message);
  }

  // True when `n` more bytes lie within the file and the header limit.
  bool fits(std::uint64_t n) const {
    return n <= left() && n <= max_gguf_header_bytes - std::min(pos_, max_gguf_header_bytes);
  }

  // Throws unless `n` more bytes of `what` lie within the file and the header limit.
  void need(std::uint64_t n, const std::string& key, const std::string& what) const {
    if (n > left()) {
      fail(key, at(pos_) + what + " needs " + group_digits(n) + " bytes but the file has " + group_digits(left()) +
                    " left: a truncated or damaged file");
    }
    if (n > max_gguf_header_bytes - std::min(pos_, max_gguf_header_bytes)) {
      fail(key, at(pos_) + what + " ends past " + group_digits(max_gguf_header_bytes) +
                    " bytes: memplan reads GGUF headers (metadata and tensor infos) of up to 256 MiB");
    }
  }

  void read(void* out, std::uint64_t n, const std::string& key, const std::string& what) {
    need(n, key, what);
    in_.read(static_cast<char*>(out), static_cast<std::streamsize>(n));
    if (static_cast<std::uint64_t>(in_.gcount()) != n) ended(key, what);
    pos_ += n;
  }

  void skip(std::uint64_t n, const std::string& key, const std::string& what) {
    need(n, key, what);
    if (n == 0) return;
    in_.ignore(static_cast<std::streamsize>(n));
    if (static_cast<std::uint64_t>(in_.gcount()) != n) ended(key, what);
    pos_ += n;
  }

  template <typename T>
  T number(const std::string& key, const std::string& what) {
    std::array<unsigned char, sizeof(T)> b{};
    read(b.data(), b.size(), key, what);
    std::uint64_t v = 0;
    for (std::size_t i = b.size(); i-- > 0;) v = (v << 8) | b[i];  // little-endian
    if constexpr (std::is_same_v<T, float>) {
      return std::bit_cast<float>(static_cast<std::uint32_t>(v));
    } else if constexpr (std::is_same_v<T, double>) {
      return std::bit_cast<double>(v);
    } else {
      return static_cast<T>(v);
    }
  }

  // A GGUF string: a uint64 length, then that many bytes. Longer than `limit`: refused.
  std::string string(std::uint64_t limit, const std::string& key, const std::string& what) {
    const std::uint64_t start = pos_;
    const auto length = number<std::uint64_t>(key, "the length of " + what);
    if (length > limit) {
      fail(key, at(start) + what + " is " + group_digits(length) + " bytes long; the most a GGUF file may use is " +
                    group_digits(limit));
    }
    need(length, key, what);
    std::string out(static_cast<std::size_t>(length), '\0');
    read(out.data(), length, key, what);
    return out;
  }

 private:
  [[noreturn]] void ended(const std::string& key, const std::string& what) const {
    fail(key, at(pos_) + "the bytes given end inside " + what + " (the file is " + group_digits(file_size_) +
                  " bytes): only a part of the header was read");
  }

  std::istream& in_;
  std::uint64_t file_size_;
  std::string file_;
  std::uint64_t pos_ = 0;
};

// One value of type `t` (not an array), stored when it is a scalar or a short string.
void read_scalar(Reader& r, GgufValueType t, GgufValue& out, const std::string& key) {
  const std::uint64_t start = r.position();
  const std::string what = "the " + to_string(t) + " value of '" + printable(key) + "'";
  switch (t) {
    case GgufValueType::uint8: out.value = std::uint64_t{r.number<std::uint8_t>(key, what)}; return;
    case GgufValueType::uint16: out.value = std::uint64_t{r.number<std::uint16_t>(key, what)}; return;
    case GgufValueType::uint32: out.value = std::uint64_t{r.number<std::uint32_t>(key, what)}; return;
    case GgufValueType::uint64: out.value = r.number<std::uint64_t>(key, what); return;
    case GgufValueType::int8:
      out.value = std::int64_t{static_cast<std::int8_t>(r.number<std::uint8_t>(key, what))};
      return;
    case GgufValueType::int16:
      out.value = std::int64_t{static_cast<std::int16_t>(r.number<std::uint16_t>(key, what))};
      return;
    case GgufValueType::int32:
      out.value = std::int64_t{static_cast<std::int32_t>(r.number<std::uint32_t>(key, what))};
      return;
    case GgufValueType::int64: out.value = static_cast<std::int64_t>(r.number<std::uint64_t>(key, what)); return;
    case GgufValueType::float32: out.value = double{r.number<float>(key, what)}; return;
    case GgufValueType::float64: out.value = r.number<double>(key, what); return;
    case GgufValueType::boolean: {
      const auto b = r.number<std::uint8_t>(key, what);
      if (b > 1)
        r.fail(key, at(start) + "'" + printable(key) + "' is a bool of value " + std::to_string(b) +
                        "; GGUF bools are 0 or 1");
      out.value = b == 1;
      return;
    }
    case GgufValueType::string: {
      const auto length = r.number<std::uint64_t>(key, "the length of " + what);
      out.count = length;
      r.need(length, key, what);
      if (length <= max_gguf_kept_string_bytes) {
        std::string text(static_cast<std::size_t>(length), '\0');
        r.read(text.data(), length, key, what);
        out.value = std::move(text);
      } else {
        r.skip(length, key, what);
      }
      return;
    }
    case GgufValueType::array: break;
  }
  r.fail(key, at(start) + "'" + printable(key) + "': an array inside an array (ggml refuses nested arrays too)");
}

GgufValueType value_type(Reader& r, const std::string& key, const std::string& what) {
  const std::uint64_t start = r.position();
  const auto id = r.number<std::uint32_t>(key, what);
  if (id >= kValueTypeNames.size()) {
    r.fail(key, at(start) + what + " is " + std::to_string(id) + ", not a GGUF value type: the types are " +
                    value_type_list());
  }
  return static_cast<GgufValueType>(id);
}

GgufMetadata read_metadata(Reader& r, std::uint64_t index, std::uint64_t count) {
  const std::string which = "metadata key " + group_digits(index + 1) + " of " + group_digits(count);
  const std::uint64_t start = r.position();
  GgufMetadata kv;
  kv.key = r.string(max_gguf_key_bytes, "", which);
  if (kv.key.empty()) r.fail("", at(start) + which + " is empty");
  const std::string& key = kv.key;
  GgufValue& v = kv.value;
  v.type = value_type(r, key, "the value type of '" + printable(key) + "'");
  if (v.type != GgufValueType::array) {
    read_scalar(r, v.type, v, key);
    return kv;
  }
  const std::uint64_t array_at = r.position();
  v.element_type = value_type(r, key, "the element type of array '" + printable(key) + "'");
  if (v.element_type == GgufValueType::array) {
    r.fail(key, at(array_at) + "'" + printable(key) +
                    "' is an array of arrays: ggml refuses nested arrays, and so does memplan");
  }
  v.count = r.number<std::uint64_t>(key, "the length of array '" + printable(key) + "'");
  const std::uint64_t each = v.element_type == GgufValueType::string ? 8
                                                                     : fixed_size(v.element_type);  // a string's least
  const std::string what = "array '" + printable(key) + "' (" + group_digits(v.count) + " " +
                           to_string(v.element_type) + "s)";
  if (v.count > r.left() / each) {
    r.fail(key, at(r.position()) + what + " needs at least " +
                    (v.count > UINT64_MAX / each ? std::string("2^64") : group_digits(v.count * each)) +
                    " bytes but the file has " + group_digits(r.left()) + " left");
  }
  if (v.element_type != GgufValueType::string) {
    r.skip(v.count * each, key, what);
    return kv;
  }
  // Bounded: each string takes at least 8 bytes of the file. A vocabulary has 10^5 of them, so
  // the message naming string i is built only when that string does not fit.
  const auto string_i = [&](std::uint64_t i) { return "string " + group_digits(i) + " of " + what; };
  for (std::uint64_t i = 0; i < v.count; ++i) {
    if (!r.fits(8)) r.need(8, key, "the length of " + string_i(i));
    const auto length = r.number<std::uint64_t>(key, what);
    if (!r.fits(length)) r.need(length, key, string_i(i));
    r.skip(length, key, what);
  }
  return kv;
}

GgufTensor read_tensor_info(Reader& r, std::uint64_t index, std::uint64_t count) {
  const std::string which = "tensor info " + group_digits(index + 1) + " of " + group_digits(count);
  const std::uint64_t start = r.position();
  GgufTensor t;
  const auto length = r.number<std::uint64_t>("", "the name length of " + which);
  if (length > max_gguf_tensor_name_bytes) {
    r.fail("", at(start) + "the name of " + which + " is " + group_digits(length) +
                   " bytes long; ggml's limit is 63 (GGML_MAX_NAME 64, with its terminating zero)");
  }
  r.need(length, "", "the name of " + which);
  t.name.assign(static_cast<std::size_t>(length), '\0');
  r.read(t.name.data(), length, "", "the name of " + which);
  const std::string& key = t.name;
  const std::string tensor = "tensor '" + printable(t.name) + "'";

  const std::uint64_t dims_at = r.position();
  const auto n_dims = r.number<std::uint32_t>(key, "the dimension count of " + tensor);
  if (n_dims > max_gguf_dims) {
    r.fail(key, at(dims_at) + tensor + " has " + std::to_string(n_dims) + " dimensions; ggml tensors have at most 4");
  }
  t.elements = 1;
  bool overflow = false;
  for (std::uint32_t d = 0; d < n_dims; ++d) {
    const std::uint64_t dim_at = r.position();
    const auto n = r.number<std::uint64_t>(key, "dimension " + std::to_string(d) + " of " + tensor);
    if (n > static_cast<std::uint64_t>(INT64_MAX)) {
      r.fail(key, at(dim_at) + tensor + " dimension " + std::to_string(d) + " is " + group_digits(n) +
                      ", negative as ggml's int64_t sizes read it");
    }
    t.shape.push_back(n);
    overflow = overflow || __builtin_mul_overflow(t.elements, n, &t.elements);
  }
  if (overflow || t.elements >= static_cast<std::uint64_t>(INT64_MAX)) {
    r.fail(key, at(dims_at) + tensor + " of shape " + shape_text(t.shape) +
                    " has 2^63 elements or more, more than ggml can address");
  }

  const std::uint64_t type_at = r.position();
  const auto type_id = r.number<std::uint32_t>(key, "the ggml type of " + tensor);
  const GgmlType* type = find_ggml_type(type_id);
  if (type == nullptr) {
    const auto removed = std::find_if(kRemovedTypes.begin(), kRemovedTypes.end(),
                                      [&](const RemovedType& x) { return x.id == type_id; });
    std::string ids;
    for (const GgmlType& g : ggml_types())
      ids += (ids.empty() ? "" : ", ") + std::to_string(g.id) + " " + std::string(g.name);
    r.fail(key, at(type_at) + tensor + " has ggml type " + std::to_string(type_id) +
                    (removed != kRemovedTypes.end()
                         ? " (" + std::string(removed->name) +
                               "), which ggml has removed from GGUF files: convert the model again"
                         : ", which is not a ggml type memplan prices (" + ids + ")"));
  }
  t.type = *type;
  const std::uint64_t row = t.shape.empty() ? 1 : t.shape[0];
  if (row % type->block_size != 0) {
    r.fail(key, at(type_at) + tensor + " of shape " + shape_text(t.shape) + " is " + std::string(type->name) +
                    ", whose blocks hold " + std::to_string(type->block_size) + " elements, but its rows hold " +
                    group_digits(row) + ": not a whole number of blocks");
  }
  const std::uint64_t blocks = t.elements / type->block_size;
  if (__builtin_mul_overflow(blocks, type->type_size, &t.bytes)) {
    r.fail(key, at(type_at) + tensor + " of shape " + shape_text(t.shape) + " in " + std::string(type->name) +
                    " takes more than 2^64 - 1 bytes");
  }
  t.offset = r.number<std::uint64_t>(key, "the data offset of " + tensor);
  return t;
}

// Rounds `n` up to a multiple of `alignment` (a power of two); nullopt past 2^64 - 1.
std::optional<std::uint64_t> align_up(std::uint64_t n, std::uint64_t alignment) {
  std::uint64_t padded = 0;
  if (__builtin_add_overflow(n, alignment - 1, &padded)) return std::nullopt;
  return padded & ~(alignment - 1);
}

void check_offsets(GgufFile& f, const Reader& r) {
  std::uint64_t expected = 0;  // where the next tensor must start: ggml's running, padded size
  const GgufTensor* previous = nullptr;
  for (const GgufTensor& t : f.tensors) {
    const std::string tensor = "tensor '" + printable(t.name) + "'";
    if (t.offset % f.alignment != 0) {
      r.fail(t.name, tensor + ": data offset " + group_digits(t.offset) + " is not a multiple of the alignment (" +
                         group_digits(f.alignment) + ")");
    }
    if (t.offset != expected) {
      r.fail(t.name, tensor + ": data offset " + group_digits(t.offset) + ", but " +
                         (previous ? "the tensors before it end at " + group_digits(expected) + " (after '" +
                                         printable(previous->name) + "', each padded to " + group_digits(f.alignment) +
                                         " bytes)"
                                   : std::string("the first tensor starts at 0")) +
                         ": the tensors' data must follow one another in the order of their infos, as ggml reads them");
    }
    const std::uint64_t room = f.file_bytes - f.data_offset;
    if (t.offset > room || t.bytes > room - t.offset) {
      r.fail(t.name, tensor + ": its data, " + group_digits(t.bytes) + " bytes at data offset " +
                         group_digits(t.offset) + ", runs past the end of the file (" + group_digits(room) +
                         " bytes of data after the header at byte " + group_digits(f.data_offset) +
                         "): a truncated file");
    }
    const std::optional<std::uint64_t> padded = align_up(t.bytes, f.alignment);
    if (!padded || *padded > UINT64_MAX - expected) r.fail(t.name, tensor + ": the data offsets pass 2^64 - 1");
    expected += *padded;
    previous = &t;
  }
}

void add_totals(GgufFile& f) {
  std::map<std::string, GgufTypeTotal> by_type;
  for (const GgufTensor& t : f.tensors) {
    GgufTypeTotal& total = by_type[std::string(t.type.name)];
    total.type = t.type.name;
    ++total.tensors;
    total.elements = checked_add(total.elements, t.elements, "elements of", t.type.name);
    total.bytes = checked_add(total.bytes, t.bytes, "bytes of", t.type.name);
    f.elements = checked_add(f.elements, t.elements, "GGUF elements");
    f.bytes = checked_add(f.bytes, t.bytes, "GGUF tensor bytes");
  }
  for (auto& [name, total] : by_type) f.types.push_back(total);
  std::stable_sort(f.types.begin(), f.types.end(),
                   [](const GgufTypeTotal& a, const GgufTypeTotal& b) { return a.bytes > b.bytes; });
}

GgufFile parse_stream(std::istream& in, std::uint64_t file_size, const std::string& file) {
  Reader r(in, file_size, file);
  GgufFile f;
  f.path = file;
  f.file_bytes = file_size;

  if (file_size < 8) {
    r.fail("", "is " + group_digits(file_size) +
                   " bytes: too short for a GGUF file (the magic 'GGUF' and a version come first)");
  }
  std::array<char, 4> magic{};
  r.read(magic.data(), 4, "magic", "the magic");
  if (std::memcmp(magic.data(), "GGUF", 4) != 0) {
    r.fail("magic", "does not start with the GGUF magic: its first bytes are '" +
                        printable(std::string_view(magic.data(), 4)) + "', a GGUF file's are 'GGUF'");
  }
  f.version = r.number<std::uint32_t>("version", "the version");
  if ((f.version & 0xFFFFu) == 0 && f.version != 0) {
    r.fail("version", at(4) + "version " + group_digits(f.version) +
                          " reads as a big-endian file's: memplan reads little-endian GGUF files");
  }
  if (f.version != 2 && f.version != 3) {
    r.fail("version",
           at(4) + "GGUF version " + std::to_string(f.version) +
               (f.version == 1
                    ? " is no longer read by ggml or memplan (v1 used 32-bit counts): convert the model again"
                    : ": memplan reads versions 2 and 3"));
  }
  const auto tensor_count = r.number<std::uint64_t>("tensor_count", "tensor_count");
  const auto kv_count = r.number<std::uint64_t>("metadata_kv_count", "metadata_kv_count");
  // The least bytes each entry can take: a key or name length (8), one byte of key, a type
  // (4) and a one-byte value; a tensor info's name length (8), dimension count (4), type (4)
  // and offset (8).
  if (tensor_count > max_gguf_tensors || tensor_count > r.left() / 24) {
    r.fail("tensor_count", at(8) + "tensor_count is " + group_digits(tensor_count) + ": " +
                               (tensor_count > max_gguf_tensors
                                    ? "more than the " + group_digits(max_gguf_tensors) + " tensors memplan reads"
                                    : "tensor infos take at least 24 bytes each, and the file has " +
                                          group_digits(r.left()) + " bytes left"));
  }
  if (kv_count > max_gguf_metadata || kv_count > r.left() / 14) {
    r.fail("metadata_kv_count",
           at(16) + "metadata_kv_count is " + group_digits(kv_count) + ": " +
               (kv_count > max_gguf_metadata
                    ? "more than the " + group_digits(max_gguf_metadata) + " key-value pairs memplan reads"
                    : "key-value pairs take at least 14 bytes each, and the file has " + group_digits(r.left()) +
                          " bytes left"));
  }

  std::unordered_set<std::string> keys;
  for (std::uint64_t i = 0; i < kv_count; ++i) {
    const std::uint64_t start = r.position();
    GgufMetadata kv = read_metadata(r, i, kv_count);
    if (!keys.insert(kv.key).second)
      r.fail(kv.key, at(start) + "metadata key '" + printable(kv.key) + "' appears twice");
    f.metadata.push_back(std::move(kv));
  }
  if (const GgufValue* a = f.find("general.alignment")) {
    const auto* n = std::get_if<std::uint64_t>(&a->value);
    if (a->type != GgufValueType::uint32 || n == nullptr) {
      r.fail("general.alignment", "general.alignment is a " + to_string(a->type) + "; it must be a uint32");
    }
    if (*n == 0 || !std::has_single_bit(*n)) {
      r.fail("general.alignment", "general.alignment is " + group_digits(*n) + ", not a power of two");
    }
    f.alignment = *n;
  }

  std::unordered_set<std::string> names;
  f.tensors.reserve(static_cast<std::size_t>(tensor_count));
  for (std::uint64_t i = 0; i < tensor_count; ++i) {
    const std::uint64_t start = r.position();
    GgufTensor t = read_tensor_info(r, i, tensor_count);
    if (!names.insert(t.name).second) r.fail(t.name, at(start) + "tensor '" + printable(t.name) + "' appears twice");
    f.tensors.push_back(std::move(t));
  }
  f.data_offset = r.position();
  if (tensor_count > 0) {
    const std::optional<std::uint64_t> aligned = align_up(f.data_offset, f.alignment);
    if (!aligned || *aligned > file_size) {
      r.fail("general.alignment", at(f.data_offset) + "the tensor data would start at the next multiple of " +
                                      group_digits(f.alignment) + ", past the end of the file (" +
                                      group_digits(file_size) + " bytes): a truncated file");
    }
    f.data_offset = *aligned;
  }
  check_offsets(f, r);
  add_totals(f);
  return f;
}

}  // namespace

std::string to_string(GgufValueType type) {
  const auto i = static_cast<std::size_t>(type);
  return i < kValueTypeNames.size() ? std::string(kValueTypeNames[i]) : "type " + std::to_string(i);
}

std::optional<std::uint64_t> GgufValue::whole_number() const {
  if (const auto* u = std::get_if<std::uint64_t>(&value)) return *u;
  if (const auto* s = std::get_if<std::int64_t>(&value); s && *s >= 0) return static_cast<std::uint64_t>(*s);
  return std::nullopt;
}

const GgufValue* GgufFile::find(std::string_view key) const {
  for (const GgufMetadata& m : metadata) {
    if (m.key == key) return &m.value;
  }
  return nullptr;
}

GgufFile parse_gguf(std::string_view bytes, std::uint64_t file_size, const std::string& file) {
  if (bytes.size() > file_size) {
    throw ConfigError(file, 0, 0, "",
                      group_digits(bytes.size()) + " bytes given for a file of " + group_digits(file_size));
  }
  ViewBuf buffer(bytes);
  std::istream in(&buffer);
  return parse_stream(in, file_size, file);
}

GgufFile read_gguf(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw ConfigError(path, 0, 0, "", "is a directory, not a GGUF file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, 0, 0, "", fs::exists(path, ec) ? "cannot be read" : "no such file");
  if (!fs::is_regular_file(path, ec)) {
    throw ConfigError(path, 0, 0, "", "is not a regular file: a GGUF file is read by its size and offsets");
  }
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) throw ConfigError(path, 0, 0, "", "cannot be read: " + ec.message());
  return parse_stream(in, size, path);
}

}  // namespace memplan
