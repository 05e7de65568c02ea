// memplan import: a Hugging Face config.json turned into a model file, or a safetensors
// checkpoint inventoried from its headers and set beside its architecture.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "memplan/io/hf_config.hpp"
#include "memplan/io/model_file.hpp"
#include "memplan/io/safetensors.hpp"
#include "memplan/report/print.hpp"

namespace memplan {

// memplan import CONFIG.json: the model file a config maps to.
struct ImportReport {
  std::string input;   // the config.json read
  std::string output;  // the model file written; "" when the YAML goes to stdout
  HfImport imported;   // load_hf_config: the spec, model_type, what the importer decided
  std::string yaml;    // the model file's text (model_yaml)
};

// Writes the model file itself when it was not written elsewhere (so that `memplan import
// config.json > model.yaml` works), else what was imported and where. Table or JSON; no
// CSV. Throws as require_format.
void print(const ImportReport& report, const PrintOptions& options, std::ostream& out);

// memplan import FILE.safetensors|INDEX.json: a checkpoint's tensors, from its headers only.
struct CheckpointReport {
  SafetensorsInventory inventory;                  // read_safetensors or read_safetensors_index
  bool list_tensors = false;                       // print every tensor, not only the totals per dtype
  std::optional<ModelEntry> architecture;          // what it was compared with: a config.json beside it, or a model
  std::optional<CheckpointComparison> comparison;  // compare_checkpoint(inventory, architecture->spec)
  std::vector<std::string> notes;                  // what was not compared, and why
};

// Writes the checkpoint's files, tensors and bytes per dtype (every tensor with
// list_tensors) and how it compares with the architecture. Table (units) or JSON; no CSV.
// Throws as require_format.
void print(const CheckpointReport& report, const PrintOptions& options, std::ostream& out);

}  // namespace memplan
