#include "memplan/io/checkpoint_model.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <string_view>
#include <tuple>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "memplan/io/hf_config.hpp"

namespace memplan {
namespace {

namespace fs = std::filesystem;

bool has_part(std::string_view name, std::string_view part) { return name.find(part) != std::string_view::npos; }

// Integer and 8-bit-or-smaller float tensors: what quantisers store (packed weights, zero
// points, group indices, fp8 or 4-bit values), whose elements are not parameters.
bool packed_dtype(std::string_view dtype) {
  return dtype.starts_with("I") || dtype.starts_with("U") || dtype.starts_with("F8") || dtype.starts_with("F4") ||
         dtype.starts_with("F6") || dtype == "E8M0";
}

}  // namespace

std::string checkpoint_component(const std::string& tensor_name) {
  const std::string_view n = tensor_name;
  // The LM head first: "lm_head" and GPT-NeoX's "embed_out" (an output, despite its name).
  if (n.starts_with("lm_head.") || has_part(n, ".lm_head.") || n.starts_with("embed_out.")) return "lm_head";
  if (has_part(n, "embed") || has_part(n, "wte.") || has_part(n, "wpe.")) return "embeddings";
  // Norms before attention and MLP: "post_attention_layernorm" and "attn.q_norm" are norms.
  if (has_part(n, "norm") || has_part(n, ".ln_") || n.starts_with("ln_")) return "norms";
  if (has_part(n, ".experts.")) return "experts";
  if (has_part(n, ".gate.") || has_part(n, ".router.")) return "router";  // MoE routers (Mixtral, Qwen-MoE)
  if (has_part(n, "attn") || has_part(n, "attention")) return "attention";
  if (has_part(n, "mlp") || has_part(n, "feed_forward") || has_part(n, "ffn") || has_part(n, ".fc")) return "mlp";
  return "other";
}

ModelEntry checkpoint_model(ModelEntry config, const SafetensorsInventory& inventory, const std::string& origin) {
  ModelSpec& spec = config.spec;
  const CheckpointComparison comparison = compare_checkpoint(inventory, spec);
  // A tied LM head stored a second time shares the embedding's memory once loaded.
  std::vector<std::string> tied_copies;
  for (const CheckpointExtra& e : comparison.extra) {
    if (e.kind == "tied copy") tied_copies.push_back(e.pattern);
  }
  std::map<std::tuple<std::string, std::string, std::uint64_t, std::uint64_t>, std::uint64_t> groups;
  bool packed = false;
  for (const SafetensorsTensor& t : inventory.tensors) {
    if (std::find(tied_copies.begin(), tied_copies.end(), t.name) != tied_copies.end()) continue;
    packed = packed || packed_dtype(t.dtype);
    ++groups[{checkpoint_component(t.name), t.dtype, t.elements, t.bytes}];
  }
  spec.stored_weights.clear();
  spec.stored_layers.reset();
  for (const auto& [key, copies] : groups) {
    const auto& [component, dtype, elements, bytes] = key;
    spec.stored_weights.push_back({component, dtype, elements, bytes, copies});
  }
  std::string types;
  for (const SafetensorsDtypeTotal& d : inventory.dtypes) {
    types += (types.empty() ? "" : ", ") + d.dtype + " x " + group_digits(d.tensors);
  }
  spec.stored_weights_source = "its safetensors headers: " + types;
  if (!comparison.matches() && !packed) {
    spec.import_warnings.push_back(
        "the checkpoint holds " + group_digits(comparison.compared_elements) +
        " parameter elements and the config.json's " + "architecture " + group_digits(comparison.architecture_params) +
        ": the weights are priced from the checkpoint, the caches and activations from the config ('memplan import " +
        inventory.path + "' lists the tensors)");
  }
  config.origin = origin;
  return config;
}

ModelEntry load_checkpoint_model(const std::string& path, const std::string& as_model_type) {
  std::error_code ec;
  const fs::path given(path);
  fs::path dir = given.parent_path();
  fs::path weights = given;
  if (fs::is_directory(given, ec)) {
    dir = given;
    weights.clear();
    for (const char* name : {"model.safetensors.index.json", "model.safetensors"}) {
      if (fs::is_regular_file(dir / name, ec)) {
        weights = dir / name;
        break;
      }
    }
    if (weights.empty()) {  // one other .safetensors file (adapter_model.safetensors is not a model)
      std::vector<fs::path> found;
      for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
        if (entry.path().extension() == ".safetensors") found.push_back(entry.path());
      }
      if (found.size() == 1) weights = found.front();
    }
  }
  if (dir.empty()) dir = ".";
  const fs::path config = dir / "config.json";
  if (!fs::is_regular_file(config, ec)) {
    throw ConfigError(path, 0, 0, "config.json",
                      "no config.json " + std::string(fs::is_directory(given, ec) ? "in" : "beside") +
                          " it: memplan reads the architecture from a Hugging Face config.json");
  }
  HfImport imported = load_hf_config(config.string(), as_model_type);
  if (weights.empty()) {
    // A directory with a config but no weights: the architecture at the planned precision.
    imported.entry.origin = path;
    return imported.entry;
  }
  return checkpoint_model(std::move(imported.entry), read_checkpoint(weights.string()), path);
}

}  // namespace memplan
