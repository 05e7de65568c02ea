#include "memplan/io/gpu_table.hpp"

#include <gtest/gtest.h>

#include "memplan/core/error.hpp"

namespace memplan {
namespace gpu_table_test {

TEST(GpuTable, ShipsTheSeedsGpusWithDriverReportedMemory) {
  const std::vector<GpuSpec> gpus = builtin_gpus();
  EXPECT_GE(gpus.size(), 20U);
  // nvidia-smi prints the H100 80GB as 81559 MiB (DESIGN.md).
  EXPECT_EQ(find_gpu("h100", gpus).memory.count(), 81559ULL * 1024 * 1024);
  EXPECT_EQ(find_gpu("H100-SXM-80GB", gpus).compute_capability, (ComputeCapability{9, 0}));
  for (const char* name : {"rtx-3060-ti", "rtx-3090", "rtx-4090", "gtx-1080-ti", "rtx-2080-ti", "t4", "v100", "a10",
                           "a100-40gb", "a100-80gb", "l4", "l40s", "h200"}) {
    SCOPED_TRACE(name);
    const GpuSpec g = find_gpu(name, gpus);
    EXPECT_GT(g.memory.count(), 4ULL << 30);
    EXPECT_FALSE(g.source.empty());
  }
}

TEST(GpuTable, CapabilitiesFollowTheArchitecture) {
  for (const GpuSpec& g : builtin_gpus()) {
    SCOPED_TRACE(g.name);
    const auto has = [&](Format f) {
      return std::find(g.tensor_paths.begin(), g.tensor_paths.end(), f) != g.tensor_paths.end();
    };
    EXPECT_EQ(has(Format::bf16), g.compute_capability >= (ComputeCapability{8, 0}));
    EXPECT_EQ(has(Format::fp8_e4m3), g.compute_capability >= (ComputeCapability{8, 9}));
  }
}

TEST(GpuTable, UnknownGpuSuggestsTheClosest) {
  try {
    find_gpu("rtx-4900", builtin_gpus());
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rtx-4090"), std::string::npos) << e.what();
  }
}

TEST(GpuTable, RejectsUnknownKeysWithTheirPlace) {
  try {
    parse_gpu_table("gpus:\n  - name: x\n    memory_mb: 1\n", "t.yaml");
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 3U);
    EXPECT_EQ(e.key(), "memory_mb");
    EXPECT_NE(e.message().find("did you mean 'memory_mib'"), std::string::npos) << e.what();
  }
}

}  // namespace gpu_table_test
}  // namespace memplan
