// Model description files (configs/models/*.yaml and users' own) and the built-in catalog.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memplan/core/model_spec.hpp"
#include "memplan/plan/options.hpp"

namespace memplan {

struct ModelEntry {
  ModelSpec spec;
  std::string origin;                             // the file it was read from, or "built-in"
  std::string source;                             // where the architecture figures come from
  std::optional<std::uint64_t> published_params;  // a published total to check the count against
  std::string published_params_source;            // where that total was published
  bool operator==(const ModelEntry&) const = default;
};

// Parses a model description. `file` names it in errors; `name` becomes spec.name.
// Keys a file leaves out take the family's conventions (family_defaults); d_head
// defaults to d_model / n_heads and n_kv_heads to n_heads.
// Throws ConfigError naming file:line:column and the key.
ModelEntry parse_model_yaml(std::string_view text, const std::string& file, const std::string& name);

// Reads and parses a model file; its name is the file name without ".yaml".
// Throws ConfigError (missing, unreadable, a directory, or invalid).
ModelEntry load_model_file(const std::string& path);

// Names of the models shipped in the binary, sorted.
std::vector<std::string> builtin_model_names();

// Returns a built-in model. Throws Error(invalid_input) naming the closest names.
ModelEntry load_builtin_model(std::string_view name);

// Returns the model a user named: a snapshot directory, a .safetensors file or a
// model.safetensors.index.json (the config.json beside them, the weights as their headers
// store them: load_checkpoint_model); a Hugging Face config.json (load_hf_config); a GGUF
// file (load_gguf_model); a model file (.yaml, .yml, or another path that exists); a
// Hugging Face Hub id ORG/NAME[@REVISION] that is not a local path (load_hub_model); or a
// built-in name.
// `progress` (may be empty) hears what is fetched from the network, one line per step.
// `as_model_type` reads a config of a model_type memplan does not know as a known one
// (load_hf_config); refused (key "as") for a built-in, a model file or a GGUF file.
ModelEntry find_model(std::string_view name_or_path, const std::function<void(const std::string&)>& progress = {},
                      const std::string& as_model_type = {});

// Returns `settings` with the files its engine options name read: the draft model
// `layout.draft` names looked up (find_model) into draft_model, and the vision tower
// `layout.mmproj` names read (load_gguf_projector) into mmproj, each when named and not yet
// read. Throws as find_model (its errors naming the key `draft`) and load_gguf_projector.
PlanSettings with_engine_files(PlanSettings settings, const std::function<void(const std::string&)>& progress = {});

// The model `memplan estimate` uses when none is named.
inline constexpr std::string_view default_model_name = "llama-2-7b";

}  // namespace memplan
