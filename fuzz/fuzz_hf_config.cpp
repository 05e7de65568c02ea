// Fuzz target: a Hugging Face config.json (parse_hf_config), then what `memplan import`
// does with what it accepts: the model file it writes must read back as the same model.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/io/hf_config.hpp"
#include "memplan/io/model_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace memplan;
  HfImport imported;
  if (!fuzz::reads_or_locates([&] { imported = parse_hf_config(fuzz::text_of(data, size), "config.json", "fuzz"); })) {
    return 0;
  }
  const std::string yaml = model_yaml(imported.entry, imported.notes);
  ModelEntry reread;
  try {
    reread = parse_model_yaml(yaml, "imported.yaml", imported.entry.spec.name);
  } catch (const Error& e) {
    fuzz::finding("an imported config does not read back", std::string(e.what()) + "\n" + yaml);
  }
  std::uint64_t params = 0;
  if (!fuzz::computes_or_refuses([&] { params = count_parameters(imported.entry.spec); })) return 0;
  if (count_parameters(reread.spec) != params) {
    fuzz::finding("an imported config reads back as another model", yaml);
  }
  return 0;
}
