// Reading a config file whole, bounded: a path to /dev/zero, a log or a checkpoint given
// by mistake must end in a clear error, not exhaust memory. Private to memplan::io.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace memplan::detail {

// Config files (config.json, safetensors index) larger than this are refused.
inline constexpr std::uint64_t kMaxConfigFileBytes = 16ULL * 1024 * 1024;

// YAML files (model, plan) larger than this are refused: yaml-cpp keeps about 280 bytes per
// node, so a 16 MiB flow list cost 3.7 GB; 1 MiB bounds it near 280 MB and 3 s, and a real
// model or plan file is a few KiB.
inline constexpr std::uint64_t kMaxYamlFileBytes = 1024ULL * 1024;

// The largest size (a dimension, a count of layers, heads or tokens) a model or plan file,
// a config.json or a GGUF header may give: larger values are not architectures but typos.
// Products of sizes are checked for overflow anyway.
inline constexpr std::uint64_t kMaxConfigSize = 1ULL << 40;

// Returns the contents of `path`. `what` names the expected kind of file for messages ("a
// model file"). Throws ConfigError naming `path`: a directory, no such file, unreadable, or
// more than `limit` bytes (found by reading, so that pipes and devices are bounded too).
std::string read_text_file(const std::string& path, std::string_view what, std::uint64_t limit = kMaxConfigFileBytes);

}  // namespace memplan::detail
