// Readers under hostile input: each case here was once a crash, a hang, an
// unbounded read or an unlocated message, found by the fuzz targets in fuzz/ or by review.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "memplan/core/error.hpp"
#include "memplan/io/hf_config.hpp"
#include "memplan/io/model_file.hpp"
#include "memplan/io/plan_file.hpp"
#include "memplan/io/safetensors.hpp"

namespace memplan {
namespace hardening_test {

template <typename Read>
ConfigError config_error(Read&& read) {
  try {
    read();
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a ConfigError";
  return ConfigError("", 0, 0, "", "");
}

// nlohmann throws out_of_range, not parse_error, for a number beyond a double: it escaped
// as an internal error (exit 3). Found by fuzz_hf_config.
TEST(Hardening, AJsonNumberBeyondADoubleIsLocated) {
  // The first "1e400" sits in a string; the number is the second, on line 4.
  const ConfigError e = config_error([] {
    parse_hf_config("{\n  \"_name_or_path\": \"1e400\",\n  \"model_type\": \"llama\",\n  \"rms_norm_eps\": 1e400\n}",
                    "config.json", "x");
  });
  EXPECT_EQ(e.file(), "config.json");
  EXPECT_EQ(e.line(), 4U);
  EXPECT_EQ(e.column(), 19U);
  EXPECT_EQ(e.message(), "JSON number 1e400 is out of range (beyond a 64-bit floating-point number)");
  EXPECT_EQ(e.kind(), ErrorKind::invalid_input);
}

TEST(Hardening, AJsonNumberBeyondADoubleInASafetensorsHeaderNamesTheByte) {
  const std::string header = R"({"a":{"dtype":"F32","shape":[1e400],"data_offsets":[0,4]}})";
  const ConfigError e = config_error([&] { parse_safetensors_header(header, 4, "m.safetensors"); });
  // 8 bytes of length, then the header: "1e400" starts at header byte 29, file byte 37.
  EXPECT_EQ(e.message(), "at byte 37: JSON number 1e400 is out of range (beyond a 64-bit floating-point number)");
}

// Reads are bounded by what they read, not by what stat says: /dev/zero reports 0 bytes
// and never ends. It was read until memory ran out.
TEST(Hardening, ConfigFilesAreReadUpTo16MiBAndYamlFilesUpTo1MiB) {
  // Sparse regular files one byte past each limit: refused by size, read no further.
  const auto sparse = [](const char* name, std::streamoff size) {
    const std::string path = (std::filesystem::temp_directory_path() / name).string();
    std::ofstream out(path, std::ios::binary);
    out.seekp(size - 1);
    out.put('\n');
    return path;
  };
  const std::string yaml = sparse("memplan-1mib-plus-one.yaml", 1024 * 1024 + 1);
  const std::string json = sparse("memplan-16mib-plus-one.json", 16 * 1024 * 1024 + 1);
  EXPECT_EQ(config_error([&] { load_model_file(yaml); }).message(),
            "is larger than 1,048,576 bytes, the most memplan reads as a model file");
  EXPECT_EQ(config_error([&] { load_plan_file(yaml); }).message(),
            "is larger than 1,048,576 bytes, the most memplan reads as a plan file");
  EXPECT_EQ(config_error([&] { load_hf_config(json); }).message(),
            "is larger than 16,777,216 bytes, the most memplan reads as a config.json");
  std::filesystem::remove(yaml);
  std::filesystem::remove(json);
}

TEST(Hardening, DevicesAreRefusedBeforeTheyAreRead) {
  if (!std::filesystem::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  EXPECT_EQ(config_error([] { load_model_file("/dev/zero"); }).message(), "is a character device, not a model file");
  EXPECT_EQ(config_error([] { load_plan_file("/dev/zero"); }).message(), "is a character device, not a plan file");
  EXPECT_EQ(config_error([] { load_hf_config("/dev/zero"); }).message(), "is a character device, not a config.json");
}

TEST(Hardening, DirectoriesAndMissingFilesAreNamed) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  EXPECT_EQ(config_error([&] { load_plan_file(dir); }).message(), "is a directory, not a plan file");
  EXPECT_EQ(config_error([&] { read_safetensors_index(dir + "/x.index.json"); }).message(), "no such file");
}

// A plan whose sizes are each in range but whose product passes 2^64 bytes: the overflow
// used to escape with no file, line or key; it is now located at the workload, kind overflow.
TEST(Hardening, APlansOverflowNamesThePlan) {
  const ConfigError e = config_error([] {
    parse_plan_yaml("model: llama-2-7b\nworkload:\n  kind: inference\n  batch_size: 1099511627776\n  seq_len: 4096\n",
                    "plan.yaml", "");
  });
  EXPECT_EQ(e.kind(), ErrorKind::overflow);
  EXPECT_EQ(e.file(), "plan.yaml");
  EXPECT_EQ(e.line(), 3U);
  EXPECT_EQ(e.key(), "workload");
  EXPECT_NE(e.message().find("exceeds 2^64 - 1"), std::string::npos) << e.what();
}

// A layer selection ending at 2^64 - 1 looped for ever (l <= last never fails); a brace
// range there did the same in a hook filter.
TEST(Hardening, APlansLayerRangeAtTheTopOfUint64Ends) {
  // Read exactly (no wrap to 0), then refused at its key: gpt2 has blocks 0-11. (layers
  // applies to the caching workloads only: on weights it is an error of its own.)
  try {
    (void)parse_plan_yaml("model: gpt2\nworkload:\n  kind: extraction\n  layers: \"18446744073709551615\"\n",
                          "plan.yaml", "");
    FAIL() << "a layer past the model was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "layers");
    EXPECT_EQ(e.line(), 4U);
    EXPECT_NE(std::string(e.what()).find("layer 18446744073709551615 does not exist"), std::string::npos) << e.what();
  }
}

}  // namespace hardening_test
}  // namespace memplan
