// The GPU table format: configs/gpus.yaml.

#include "memplan/io/gpu_table.hpp"

#include <set>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "yaml_fields.hpp"

namespace memplan {

namespace {

const std::vector<std::string> kGpuKeys = {"name",
                                           "aliases",
                                           "display",
                                           "memory_mib",
                                           "memory_source",
                                           "cuda_total_bytes",
                                           "cuda_total_source",
                                           "cuda_context_bytes",
                                           "cuda_context_source",
                                           "compute_capability",
                                           "tensor_paths",
                                           "bandwidth_gbs",
                                           "dense_tflops",
                                           "source"};

// The table spells fp8 tensor paths "fp8"; they are e4m3/e5m2 paths alike.
Format parse_table_format(std::string_view text) {
  if (text == "fp8") return Format::fp8_e4m3;
  const Precision p = parse_precision(text);
  return p.format;
}

GpuSpec parse_gpu(const YAML::Node& node, const std::string& file) {
  const detail::YamlMap map(node, file, "a GPU entry");
  map.reject_unknown(kGpuKeys);
  GpuSpec g;
  g.name = map.string("name");
  g.aliases = map.has("aliases") ? map.string_list("aliases") : std::vector<std::string>{};
  g.display = map.string("display");
  g.memory = Bytes(map.integer("memory_mib", 1, 1ULL << 30) * MiB);
  g.memory_source = map.has("memory_source") ? map.string("memory_source") : "";
  if (map.has("cuda_total_bytes")) {
    g.cuda_memory = Bytes(map.integer("cuda_total_bytes", 1, g.memory.count()));  // never above the driver's total
    g.cuda_memory_source = map.string("cuda_total_source");
  }
  if (map.has("cuda_context_bytes")) {
    g.cuda_context = Bytes(map.integer("cuda_context_bytes", 1, g.memory.count()));
    g.cuda_context_source = map.string("cuda_context_source");
  }
  g.compute_capability = map.parsed("compute_capability", parse_compute_capability);
  for (const std::string& path : map.string_list("tensor_paths")) {
    try {
      g.tensor_paths.push_back(parse_table_format(path));
    } catch (const Error& e) {
      map.fail("tensor_paths", e.what());
    }
  }
  g.bandwidth_gbs = map.number("bandwidth_gbs", 1, 1e6);
  const detail::YamlMap tflops(map.value("dense_tflops"), file, "dense_tflops");
  for (const auto& entry : tflops.node()) {
    const std::string key = entry.first.Scalar();
    try {
      g.dense_tflops.emplace_back(parse_table_format(key), tflops.number(key, 0, 1e6));
    } catch (const ConfigError&) {
      throw;
    } catch (const Error& e) {
      detail::fail_at(entry.first, file, key, e.what());
    }
  }
  g.source = map.string("source");
  return g;
}

}  // namespace

std::vector<GpuSpec> parse_gpu_table(std::string_view text, const std::string& file) {
  const YAML::Node root = detail::parse_yaml(text, file);
  const detail::YamlMap map(root, file, "a GPU table");
  map.reject_unknown({"gpus"});
  const YAML::Node list = map.value("gpus");
  if (!list.IsSequence()) map.fail("gpus", "'gpus' must be a list of GPU entries");
  std::vector<GpuSpec> out;
  std::set<std::string> names;
  for (const YAML::Node& item : list) {
    GpuSpec g = parse_gpu(item, file);
    std::vector<std::string> all = g.aliases;
    all.push_back(g.name);
    for (const std::string& n : all) {
      if (!names.insert(lowered(n)).second) detail::fail_at(item, file, "name", "GPU name '" + n + "' is used twice");
    }
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace memplan
