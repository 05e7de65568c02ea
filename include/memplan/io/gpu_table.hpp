// The GPU table (configs/gpus.yaml), shipped in the binary.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "memplan/core/gpu_spec.hpp"

namespace memplan {

// Parses a GPU table: a mapping with a `gpus:` list. Throws ConfigError.
std::vector<GpuSpec> parse_gpu_table(std::string_view text, const std::string& file);

// Returns the built-in GPU table, in file order.
std::vector<GpuSpec> builtin_gpus();

// Returns the built-in table followed by the GPUs of `user_file` (the format of
// configs/gpus.yaml; docs/configs.md) when it is not empty. Throws ConfigError naming the
// file: unreadable, invalid, or a name or alias a built-in GPU already has.
std::vector<GpuSpec> gpu_table(const std::string& user_file);

// Returns the GPU of `table` whose name or alias is `name` (case-insensitive), or nullptr.
const GpuSpec* match_gpu(std::string_view name, const std::vector<GpuSpec>& table);

// Returns the GPU whose name or alias is `name` (case-insensitive). Throws
// Error(invalid_input) naming the closest names.
GpuSpec find_gpu(std::string_view name, const std::vector<GpuSpec>& table);

}  // namespace memplan
