// A config.json's quantization_config: which layout the checkpoint's linear layers are stored
// in and which modules stay unquantised. Private to memplan::io (hf_config.cpp).
#pragma once

#include <string>
#include <vector>

#include "json_fields.hpp"
#include "memplan/core/model_spec.hpp"

namespace memplan::detail {

// Reads config's "quantization_config" (when present) for `spec`, an architecture already
// mapped from `model_type`, and fills spec.stored_weights (each tensor group's exact bytes
// in the checkpoint's layout), spec.stored_weights_source and, for a method or a family
// memplan does not price, spec.import_warnings. Appends what it assumed to `notes`. Throws
// ConfigError at the key at fault: an unknown bnb quant type, AWQ bits other than 4, a
// group_size that does not divide a layer's inputs, a negative size, and the like.
void import_quantization(const JsonMap& config, const std::string& model_type, ModelSpec& spec,
                         std::vector<std::string>& notes);

}  // namespace memplan::detail
