// The probe against the fake driver (tests/fake_driver), loaded through the same dlopen
// path and environment variables as the real libcuda.so.1 and libnvidia-ml.so.1. The
// expected figures are the fake's script, written out here.
#include "memplan/probe/probe.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>

#include "memplan/core/error.hpp"
#include "memplan/resolve/resolver.hpp"

namespace memplan {
namespace probe_test {

// Sets an environment variable for one test and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// The fake driver behind both variables, playing `scenario`.
struct FakeDriver {
  explicit FakeDriver(const char* scenario, const char* nvml = MEMPLAN_FAKE_DRIVER)
      : cuda_("MEMPLAN_CUDA_LIBRARY", MEMPLAN_FAKE_DRIVER),
        nvml_("MEMPLAN_NVML_LIBRARY", nvml),
        scenario_("MEMPLAN_FAKE_DRIVER_SCENARIO", scenario) {}
  ScopedEnv cuda_;
  ScopedEnv nvml_;
  ScopedEnv scenario_;
};

ProbeOptions devices_only() {
  ProbeOptions options;
  options.read_host = false;
  options.detect_environment = false;
  return options;
}

constexpr std::uint64_t kMiB = 1024ULL * 1024ULL;
constexpr std::uint64_t kA100Total = 81920 * kMiB;                  // 85,899,345,920
constexpr std::uint64_t kA100Used = 20 * 1024 * kMiB + 512 * kMiB;  // pid 4242's 20 GiB + 512 MiB
constexpr std::uint64_t kRtx2080Total = 8192 * kMiB;
constexpr std::uint64_t kRtx2080Used = 256 * kMiB;

TEST(Probe, FakeDriverTwoGpusMatchedByUuid) {
  const FakeDriver fake("two_gpus");
  const ProbeResult r = probe(devices_only());
  ASSERT_EQ(r.status, ProbeStatus::ok) << r.reason;
  EXPECT_TRUE(r.reason.empty());
  EXPECT_EQ(r.driver_version, "550.54.15");
  EXPECT_EQ(r.cuda_version, "12.4");
  ASSERT_EQ(r.devices.size(), 2U);

  // CUDA ordinal 0 is NVML's index 1: the memory must follow the UUID, not the index.
  const ProbedDevice& a100 = r.devices[0];
  EXPECT_EQ(a100.index, 0U);
  EXPECT_EQ(a100.name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(a100.uuid, "GPU-a1000000-0000-0000-0000-000000000001");
  EXPECT_EQ(a100.compute_capability, (ComputeCapability{8, 0}));
  EXPECT_EQ(a100.multiprocessors, 108U);
  EXPECT_EQ(a100.total_memory.count(), 85899345920ULL);
  ASSERT_TRUE(a100.free_memory && a100.used_memory);
  EXPECT_EQ(a100.used_memory->count(), kA100Used);
  EXPECT_EQ(a100.free_memory->count(), 63887638528ULL);  // 59.5 GiB
  EXPECT_EQ(a100.memory_bus_width_bits, 5120U);
  EXPECT_EQ(a100.memory_clock_khz, 1593000U);
  EXPECT_NEAR(a100.bandwidth_gbs, 2039.04, 1e-6);  // 2 x 1.593 GHz x 640 B: the A100 80GB's 2,039 GB/s
  EXPECT_TRUE(a100.processes_known);
  ASSERT_EQ(a100.processes.size(), 1U);
  EXPECT_EQ(a100.processes[0].pid, 4242U);
  EXPECT_EQ(a100.processes[0].type, "compute");
  ASSERT_TRUE(a100.processes[0].used_memory);
  EXPECT_EQ(a100.processes[0].used_memory->count(), 21474836480ULL);

  const ProbedDevice& rtx = r.devices[1];
  EXPECT_EQ(rtx.index, 1U);
  EXPECT_EQ(rtx.name, "NVIDIA GeForce RTX 2080");
  EXPECT_EQ(rtx.compute_capability, (ComputeCapability{7, 5}));
  EXPECT_EQ(rtx.multiprocessors, 46U);
  EXPECT_EQ(rtx.total_memory.count(), kRtx2080Total);
  ASSERT_TRUE(rtx.free_memory);
  EXPECT_EQ(rtx.free_memory->count(), kRtx2080Total - kRtx2080Used);
  EXPECT_NEAR(rtx.bandwidth_gbs, 448.0, 1e-9);  // 2 x 7 GHz x 32 B
  EXPECT_TRUE(rtx.processes_known);
  EXPECT_TRUE(rtx.processes.empty());
  EXPECT_TRUE(r.notes.empty());
}

TEST(Probe, TheProbedTuringCardResolvesAutoToFp16) {
  const FakeDriver fake("two_gpus");
  const ProbeResult r = probe(devices_only());
  ASSERT_EQ(r.devices.size(), 2U);
  ResolveRequest request;
  request.device = device_capability(to_gpu_spec(r.devices[1]));
  EXPECT_EQ(resolve_precision(request).precision, precisions::fp16);
  request.device = device_capability(to_gpu_spec(r.devices[0]));
  EXPECT_EQ(resolve_precision(request).precision, precisions::bf16);
}

TEST(Probe, FirstDeviceAndItsGpuSpec) {
  const FakeDriver fake("two_gpus");
  const ProbeResult r = probe(devices_only());
  const ProbedDevice* first = first_device(r);
  ASSERT_NE(first, nullptr);
  const GpuSpec g = to_gpu_spec(*first);
  EXPECT_EQ(g.name, "gpu0");
  EXPECT_EQ(g.display, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(g.memory.count(), kA100Total);
  EXPECT_EQ(g.compute_capability, (ComputeCapability{8, 0}));
}

TEST(Probe, CanAllocateUsesFreeMemory) {
  const FakeDriver fake("two_gpus");
  const ProbeResult r = probe(devices_only());
  const AllocationCheck ten = can_allocate(r, Bytes(10ULL << 30), 0);
  EXPECT_TRUE(ten.fits) << ten.reason;
  ASSERT_TRUE(ten.free_memory);
  EXPECT_EQ(ten.free_memory->count(), kA100Total - kA100Used);
  EXPECT_FALSE(can_allocate(r, Bytes(60ULL << 30), 0).fits);            // 60 GiB > 59.5 GiB free
  EXPECT_TRUE(can_allocate(r, Bytes(kA100Total - kA100Used), 0).fits);  // exactly the free memory
  EXPECT_FALSE(can_allocate(r, Bytes(8ULL << 30), 1).fits);             // 8 GiB > 7.75 GiB free on the RTX 2080
  const AllocationCheck missing = can_allocate(r, Bytes(1), 7);
  EXPECT_FALSE(missing.fits);
  EXPECT_NE(missing.reason.find("no GPU 7"), std::string::npos) << missing.reason;
}

TEST(Probe, MemoryThresholdWarnsPerDevice) {
  const FakeDriver fake("two_gpus");
  const ProbeResult r = probe(devices_only());
  EXPECT_TRUE(check_memory_threshold(r, 0.85).empty());
  // A100: 20.5 / 80 GiB = 25.625% used; RTX 2080: 0.25 / 8 GiB = 3.125%.
  const std::vector<MemoryWarning> warnings = check_memory_threshold(r, 0.2);
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_EQ(warnings[0].device, 0U);
  EXPECT_DOUBLE_EQ(warnings[0].usage, 0.25625);
  EXPECT_NE(warnings[0].message.find("25.6%"), std::string::npos) << warnings[0].message;
  EXPECT_EQ(check_memory_threshold(r, 0.03).size(), 2U);
  for (const double bad : {0.0, -0.5, 1.5}) EXPECT_THROW(check_memory_threshold(r, bad), Error);
}

TEST(Probe, NoDriverIsAStatusNotAnException) {
  const ScopedEnv cuda("MEMPLAN_CUDA_LIBRARY", "/nonexistent/libcuda.so.1");
  const ScopedEnv nvml("MEMPLAN_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
  const ProbeResult r = probe(devices_only());
  EXPECT_EQ(r.status, ProbeStatus::no_driver);
  EXPECT_NE(r.reason.find("/nonexistent/libcuda.so.1"), std::string::npos) << r.reason;
  EXPECT_EQ(r.reason.find('\n'), std::string::npos);  // one line
  EXPECT_TRUE(r.devices.empty());
  EXPECT_EQ(first_device(r), nullptr);
  EXPECT_FALSE(can_allocate(r, Bytes(1), 0).fits);
}

TEST(Probe, InitFailureIsADriverError) {
  const FakeDriver fake("init_fails");
  const ProbeResult r = probe(devices_only());
  EXPECT_EQ(r.status, ProbeStatus::driver_error);
  EXPECT_NE(r.reason.find("cuInit failed: CUDA_ERROR_UNKNOWN"), std::string::npos) << r.reason;
  EXPECT_TRUE(r.devices.empty());  // NVML fails too in this scenario
}

TEST(Probe, NoDevice) {
  const FakeDriver fake("no_device");
  const ProbeResult r = probe(devices_only());
  EXPECT_EQ(r.status, ProbeStatus::no_device);
  EXPECT_NE(r.reason.find("sees no GPU"), std::string::npos) << r.reason;
  EXPECT_TRUE(r.devices.empty());
}

TEST(Probe, OldDriverIsTooOld) {
  const FakeDriver fake("old_driver");
  const ProbeResult r = probe(devices_only());
  EXPECT_EQ(r.status, ProbeStatus::driver_too_old);
  EXPECT_NE(r.reason.find("CUDA 10.2"), std::string::npos) << r.reason;
  EXPECT_EQ(r.cuda_version, "10.2");
  EXPECT_EQ(first_device(r), nullptr);  // listed, but not offered for planning
}

TEST(Probe, WithoutNvmlMemoryComesFromTheDriverApi) {
  const FakeDriver fake("two_gpus", "/nonexistent/libnvidia-ml.so.1");
  const ProbeResult r = probe(devices_only());
  ASSERT_EQ(r.status, ProbeStatus::ok) << r.reason;
  ASSERT_EQ(r.devices.size(), 2U);
  EXPECT_EQ(r.devices[0].total_memory.count(), kA100Total);  // cuDeviceTotalMem
  EXPECT_FALSE(r.devices[0].free_memory);
  EXPECT_FALSE(r.devices[0].processes_known);
  ASSERT_EQ(r.notes.size(), 1U);
  EXPECT_NE(r.notes[0].find("NVML not available"), std::string::npos) << r.notes[0];
  EXPECT_FALSE(can_allocate(r, Bytes(1), 0).fits);  // free memory unknown: not claimed to fit
}

TEST(Probe, OptionsOverrideTheEnvironment) {
  const ScopedEnv cuda("MEMPLAN_CUDA_LIBRARY", "/nonexistent/libcuda.so.1");
  const ScopedEnv scenario("MEMPLAN_FAKE_DRIVER_SCENARIO", "two_gpus");
  ProbeOptions options = devices_only();
  options.cuda_library = MEMPLAN_FAKE_DRIVER;
  options.nvml_library = MEMPLAN_FAKE_DRIVER;
  EXPECT_EQ(probe(options).status, ProbeStatus::ok);
}

TEST(Probe, StatusNames) {
  EXPECT_EQ(to_string(ProbeStatus::ok), "ok");
  EXPECT_EQ(to_string(ProbeStatus::no_driver), "no_driver");
  EXPECT_EQ(to_string(ProbeStatus::no_device), "no_device");
  EXPECT_EQ(to_string(ProbeStatus::driver_error), "driver_error");
  EXPECT_EQ(to_string(ProbeStatus::driver_too_old), "driver_too_old");
}

}  // namespace probe_test
}  // namespace memplan
