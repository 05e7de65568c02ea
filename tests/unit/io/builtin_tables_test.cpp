// The built-in tables are written as C++ values at build time (tools/builtin_tables); these
// tests check that what the library holds is what configs/ says.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "memplan/core/model_spec.hpp"
#include "memplan/io/gpu_table.hpp"
#include "memplan/io/model_file.hpp"

namespace memplan {
namespace builtin_tables_test {

const std::filesystem::path kConfigs = MEMPLAN_CONFIGS;

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every file of configs/models is a built-in of the name of its file, and nothing else is.
TEST(BuiltinTables, HoldEveryModelFileByItsName) {
  std::vector<std::string> files;
  for (const auto& f : std::filesystem::directory_iterator(kConfigs / "models")) {
    const std::string name = f.path().filename().string();
    if (name.ends_with(".yaml")) files.push_back(name.substr(0, name.size() - 5));
  }
  std::sort(files.begin(), files.end());
  EXPECT_EQ(builtin_model_names(), files);
  EXPECT_NE(std::find(files.begin(), files.end(), "qwen2.5-0.5b"), files.end()) << "a name with a dot keeps it";
}

// Field by field, each built-in equals its file read by the model file reader, which
// tests/unit/io/model_file_test.cpp checks against hand-written files. A field the
// generator forgot to write keeps its default and differs here.
TEST(BuiltinTables, EveryModelEqualsItsFile) {
  for (const std::string& name : builtin_model_names()) {
    SCOPED_TRACE(name);
    const ModelEntry built_in = load_builtin_model(name);
    ModelEntry file = parse_model_yaml(read(kConfigs / "models" / (name + ".yaml")), "f.yaml", name);
    EXPECT_EQ(built_in.origin, "built-in");
    file.origin = built_in.origin;
    EXPECT_TRUE(built_in == file);
  }
}

TEST(BuiltinTables, GpuTableEqualsItsFile) {
  const std::vector<GpuSpec> table = builtin_gpus();
  EXPECT_TRUE(table == parse_gpu_table(read(kConfigs / "gpus.yaml"), "gpus.yaml"));
  // Hand-read from configs/gpus.yaml: a fractional figure and a memory in MiB survive.
  const GpuSpec h100 = find_gpu("h100", table);
  EXPECT_EQ(h100.memory.count(), 81559ULL * 1024 * 1024);
  EXPECT_EQ(h100.dense_tflops.size(), 6U);
  EXPECT_EQ(h100.dense_tflops[1], std::make_pair(Format::tf32, 494.7));
  EXPECT_EQ(h100.compute_capability, (ComputeCapability{9, 0}));
}

// Hand-read from configs/models/gemma-2-9b.yaml.
TEST(BuiltinTables, KeepTheLayerPatternAndTheSources) {
  const ModelEntry e = load_builtin_model("gemma-2-9b");
  EXPECT_EQ(e.spec.family, Family::gemma2);
  EXPECT_EQ(e.spec.d_head, 256U);
  EXPECT_EQ(e.spec.sliding_window, 4096U);
  EXPECT_EQ(e.spec.global_every, 2U);
  EXPECT_EQ(attention_kind(e.spec, 0), AttentionKind::sliding);
  EXPECT_EQ(attention_kind(e.spec, 1), AttentionKind::full);
  EXPECT_EQ(e.spec.activation, "gelu_pytorch_tanh");
  EXPECT_EQ(e.published_params, 9241705984U);
  EXPECT_EQ(e.source, "https://huggingface.co/google/gemma-2-9b/blob/main/config.json");
}

}  // namespace builtin_tables_test
}  // namespace memplan
