// Fuzz target: a sharded checkpoint's model.safetensors.index.json (read_safetensors_index)
// beside the two shards of tests/data/safetensors/tiny-llama-sharded: the weight_map must
// agree with the shards' headers, and shard names must stay inside the index's directory.
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "fuzz_support.hpp"
#include "memplan/io/safetensors.hpp"

namespace {

// A scratch directory holding copies of the fixture's shards.
const std::filesystem::path& checkpoint_dir() {
  static const memplan::fuzz::ScratchDir scratch;
  static const bool copied = [] {
    const std::filesystem::path fixture(MEMPLAN_FUZZ_SHARDED);
    for (const char* shard : {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}) {
      std::filesystem::copy_file(fixture / shard, scratch.path() / shard);
    }
    return true;
  }();
  (void)copied;
  return scratch.path();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace memplan;
  const std::string path = (checkpoint_dir() / "model.safetensors.index.json").string();
  fuzz::write_bytes(path, data, size);
  SafetensorsInventory inventory;
  if (!fuzz::reads_or_locates([&] { inventory = read_safetensors_index(path); })) return 0;
  if (inventory.files.empty() || inventory.tensors.empty())
    fuzz::finding("an index accepted with no shard or tensor", path);
  return 0;
}
