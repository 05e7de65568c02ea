// A model as a Hugging Face checkpoint holds it: the architecture from its config.json and
// the weights as its safetensors headers store them, tensor by tensor (an fp32 norm in a
// bf16 file, a quantised layer's packed integers and scales). Tensor data is never read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memplan/io/model_file.hpp"
#include "memplan/io/safetensors.hpp"

namespace memplan {

// Returns the weights row a checkpoint tensor belongs to, from its name: "embeddings",
// "attention", "mlp", "experts", "router", "norms", "lm_head" or "other".
std::string checkpoint_component(const std::string& tensor_name);

// Returns the model `config` describes with stored_weights taken from `inventory`: every
// tensor priced at its stored bytes, grouped by component, type and size. A tensor
// inventory that differs from the architecture's parameter count (beyond the buffers and
// tied copies compare_checkpoint sets aside) becomes an import warning, shown with every
// estimate. `origin` names what the user gave (a directory, a file, a Hub id).
ModelEntry checkpoint_model(ModelEntry config, const SafetensorsInventory& inventory, const std::string& origin);

// Returns the model in a snapshot directory (config.json plus model.safetensors.index.json,
// model.safetensors or one other *.safetensors file), or beside a .safetensors file or an
// index. A directory without weights is its config.json's architecture. Throws ConfigError
// naming the path: no config.json, an invalid config or header. `as_model_type`: as
// load_hf_config.
ModelEntry load_checkpoint_model(const std::string& path, const std::string& as_model_type = {});

}  // namespace memplan
