// Fuzz target: a whole .safetensors file (read_safetensors: the 8-byte header length, the
// JSON header, the data area it must tile), then the comparison `memplan import` makes with
// tests/data/safetensors/tiny-llama's architecture. The input is written to a scratch file and read as a user's file
// is.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "memplan/io/hf_config.hpp"
#include "memplan/io/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace memplan;
  static const fuzz::ScratchDir scratch;
  static const HfImport tiny_llama = load_hf_config(MEMPLAN_FUZZ_TINY_LLAMA);
  const std::string path = (scratch.path() / "model.safetensors").string();
  fuzz::write_bytes(path, data, size);
  SafetensorsInventory inventory;
  if (!fuzz::reads_or_locates([&] { inventory = read_safetensors(path); })) return 0;
  if (inventory.file_bytes != size)
    fuzz::finding("file_bytes is not the file's size", std::to_string(inventory.file_bytes));
  fuzz::computes_or_refuses([&] {
    const CheckpointComparison c = compare_checkpoint(inventory, tiny_llama.entry.spec);
    if (c.compared_elements > c.checkpoint_elements) fuzz::finding("more elements compared than held", path);
  });
  return 0;
}
