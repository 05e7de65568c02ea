// The shipped configs/ tables as C++ values, written at build time by
// tools/builtin_tables from the YAML files (which it parses and validates): a built-in
// model or the GPU table costs no parsing when the CLI starts.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "memplan/core/gpu_spec.hpp"
#include "memplan/io/model_file.hpp"

namespace memplan::detail {

struct BuiltinModel {
  std::string_view name;  // the file name without ".yaml"
  ModelEntry (*make)();
};

// The built-in models, sorted by name.
std::span<const BuiltinModel> builtin_model_table();

// configs/gpus.yaml's GPUs, in file order.
std::vector<GpuSpec> builtin_gpu_table();

}  // namespace memplan::detail
