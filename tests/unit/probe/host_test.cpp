#include "memplan/probe/host.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace memplan {
namespace host_test {

// Two hyperthreads on each of two cores of one socket.
constexpr const char* kCpuinfo =
    "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz\n"
    "physical id\t: 0\ncore id\t\t: 0\n\n"
    "processor\t: 1\nmodel name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz\nphysical id\t: 0\ncore id\t\t: 1\n\n"
    "processor\t: 2\nmodel name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz\nphysical id\t: 0\ncore id\t\t: 0\n\n"
    "processor\t: 3\nmodel name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz\nphysical id\t: 0\ncore id\t\t: 1\n";

constexpr const char* kMeminfo =
    "MemTotal:       16318412 kB\nMemFree:         1234567 kB\nMemAvailable:   12000000 kB\nBuffers:  1 kB\n";

TEST(Host, ParsesCpuinfo) {
  const HostInfo h = parse_cpuinfo(kCpuinfo);
  EXPECT_EQ(h.cpu_model, "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz");
  EXPECT_EQ(h.logical_cores, 4U);
  EXPECT_EQ(h.physical_cores, 2U);
}

TEST(Host, TwoSocketsCountTheirCoresApart) {
  const HostInfo h = parse_cpuinfo(
      "processor : 0\nphysical id : 0\ncore id : 0\nprocessor : 1\nphysical id : 1\ncore id : 0\n");
  EXPECT_EQ(h.logical_cores, 2U);
  EXPECT_EQ(h.physical_cores, 2U);
}

TEST(Host, ArmCpuinfoWithoutModelName) {
  const HostInfo h = parse_cpuinfo("processor\t: 0\nBogoMIPS\t: 50.00\nCPU part\t: 0xd0c\n\nprocessor\t: 1\n");
  EXPECT_EQ(h.logical_cores, 2U);
  EXPECT_EQ(h.physical_cores, 0U);  // not listed
  EXPECT_EQ(h.cpu_model, "");
}

TEST(Host, ParsesMeminfoInKibibytes) {
  HostInfo h;
  parse_meminfo(kMeminfo, h);
  ASSERT_TRUE(h.ram_total && h.ram_available);
  EXPECT_EQ(h.ram_total->count(), 16318412ULL * 1024);
  EXPECT_EQ(h.ram_available->count(), 12000000ULL * 1024);
}

TEST(Host, ReadsAProcTreeAndToleratesAMissingOne) {
  const std::filesystem::path root = std::filesystem::temp_directory_path() / "memplan_host_test_proc";
  std::filesystem::create_directories(root);
  std::ofstream(root / "cpuinfo") << kCpuinfo;
  std::ofstream(root / "meminfo") << kMeminfo;
  const HostInfo h = read_host(root.string());
  EXPECT_EQ(h.logical_cores, 4U);
  ASSERT_TRUE(h.ram_total);
  EXPECT_EQ(h.ram_total->count(), 16318412ULL * 1024);
  EXPECT_GT(h.usable_cores, 0U);  // from this process's affinity
  std::filesystem::remove_all(root);

  const HostInfo none = read_host("/nonexistent/proc");
  EXPECT_EQ(none.logical_cores, 0U);
  EXPECT_FALSE(none.ram_total);
}

}  // namespace host_test
}  // namespace memplan
