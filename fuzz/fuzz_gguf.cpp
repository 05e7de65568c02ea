// Fuzz target: a whole .gguf file (read_gguf: the magic, version, counts, typed metadata,
// tensor infos and offsets; never the data), then what `memplan estimate model.gguf` does
// with it: the architecture mapping and the weights priced from the stored tensors. The
// input is written to a scratch file and read as a user's file is; the same bytes are also
// parsed from memory (parse_gguf), which must agree.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "memplan/estimators/weights.hpp"
#include "memplan/io/gguf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace memplan;
  static const fuzz::ScratchDir scratch;
  const std::string path = (scratch.path() / "model.gguf").string();
  fuzz::write_bytes(path, data, size);
  GgufFile file;
  if (!fuzz::reads_or_locates([&] { file = read_gguf(path); })) return 0;
  if (file.file_bytes != size) fuzz::finding("file_bytes is not the file's size", std::to_string(file.file_bytes));
  std::uint64_t sum = 0;
  for (const GgufTensor& t : file.tensors) {
    sum += t.bytes;
    if (t.offset % file.alignment != 0) fuzz::finding("an unaligned offset was accepted", t.name);
    __extension__ const unsigned __int128 end = static_cast<unsigned __int128>(file.data_offset) + t.offset + t.bytes;
    if (end > size) fuzz::finding("tensor data past the end was accepted", t.name);
  }
  if (sum != file.bytes) fuzz::finding("the tensors' bytes do not sum to the file's", std::to_string(file.bytes));
  const GgufFile from_memory = parse_gguf(fuzz::text_of(data, size), size, path);
  if (from_memory.tensors.size() != file.tensors.size() || from_memory.bytes != file.bytes ||
      from_memory.metadata.size() != file.metadata.size()) {
    fuzz::finding("parse_gguf and read_gguf disagree", path);
  }
  GgufImport model;
  if (!fuzz::reads_or_locates([&] { model = gguf_model(file); })) return 0;
  fuzz::computes_or_refuses([&] {
    const Breakdown weights = estimate_weights(model.entry.spec);
    if (!file.tensors.empty() && weights.total().count() != file.bytes) {
      fuzz::finding("the weights are not the sum of the stored tensors", std::to_string(weights.total().count()));
    }
  });
  return 0;
}
