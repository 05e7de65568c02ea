// Hugging Face config.json files: the architecture of a published model, mapped onto a
// ModelSpec so that memplan can plan for any checkpoint of a supported family.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "memplan/io/model_file.hpp"

namespace memplan {

// What a config.json maps to, and what the importer decided on the way.
struct HfImport {
  ModelEntry entry;                // the spec; origin and source name the config.json
  std::string model_type;          // config.json's model_type ("llama", "gpt_neox", ...)
  std::vector<std::string> notes;  // defaults taken and keys read without parameters, one line each
};

// Returns the model_type values the importer maps, sorted.
std::vector<std::string> hf_model_types();

// Maps the text of a config.json. `file` names it in errors and becomes the entry's origin
// and source. spec.name is the last part of the config's _name_or_path when it has one
// ("meta-llama/Llama-2-7b-hf" -> "Llama-2-7b-hf"), otherwise `name`. Keys that change no
// parameter count are ignored;
// keys that add parameters memplan's spec cannot describe (OPT's word_embed_proj_dim !=
// hidden_size, Phi's qk_layernorm, BERT's relative position embeddings) are refused.
// A quantization_config fills spec.stored_weights with the checkpoint's layout
// (docs/quantization.md) and says what it assumed in the notes; a method memplan does not
// price becomes spec.import_warnings instead.
// Throws ConfigError naming file:line:column and the key (an unsupported model_type lists
// the supported ones; JSON syntax errors are located by nlohmann's byte position; a
// quantization_config whose values its library could not store).
// `as_model_type` reads a model_type memplan does not know as one it does, on the user's
// word: the entry's import_warnings then name every config key the import did not use.
// It is refused for a model_type memplan knows.
HfImport parse_hf_config(std::string_view text, const std::string& file, const std::string& name,
                         const std::string& as_model_type = {});

// Reads and maps a config.json. Without a _name_or_path the model is named after the
// directory holding a "config.json", or after any other file without its ".json".
// Throws ConfigError (missing, unreadable, a directory, larger than 16 MiB, or invalid).
HfImport load_hf_config(const std::string& path, const std::string& as_model_type = {});

// Returns a model file (the YAML parse_model_yaml reads) stating every field of
// entry.spec, with entry.source and any published count; `comments` become "# " lines at
// the top. Parsing the result gives back the same spec.
std::string model_yaml(const ModelEntry& entry, const std::vector<std::string>& comments = {});

}  // namespace memplan
