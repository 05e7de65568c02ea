// What this machine has: NVIDIA GPUs seen through the driver API (libcuda.so.1) and NVML
// (libnvidia-ml.so.1), both loaded at run time with dlopen so the same binary runs on a
// machine with no driver; the host's CPU and RAM; and the environment it runs in.
// Absence is a value: probe() reports a status and a one-line reason, it does not throw.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memplan/core/bytes.hpp"
#include "memplan/core/gpu_spec.hpp"
#include "memplan/probe/environment.hpp"
#include "memplan/probe/host.hpp"

namespace memplan {

enum class ProbeStatus {
  ok,              // at least one GPU answered through the driver API
  no_driver,       // libcuda.so.1 could not be loaded: no NVIDIA driver installed
  no_device,       // the driver loaded but sees no GPU (or CUDA_VISIBLE_DEVICES hides them all)
  driver_error,    // the driver loaded but failed (cuInit error, library/kernel module mismatch)
  driver_too_old,  // the driver predates minimum_cuda_driver_version or lacks an entry point
};

// Returns "ok", "no_driver", "no_device", "driver_error" or "driver_too_old".
std::string to_string(ProbeStatus status);

// The oldest driver API version the probe accepts, as cuDriverGetVersion reports it
// (11000 = CUDA 11.0, the version memplan's statically linked CUDA kernels need).
inline constexpr int minimum_cuda_driver_version = 11000;

struct GpuProcess {
  std::uint32_t pid = 0;
  std::string name;                  // from /proc/PID/comm; "" when it is in another PID namespace
  std::string type;                  // "compute" or "graphics"
  std::optional<Bytes> used_memory;  // unset when NVML cannot say (containers, some drivers)
};

struct ProbedDevice {
  std::uint32_t index = 0;           // CUDA device ordinal: the index a job's cuda:N uses
  std::string name;                  // as the driver names it: "NVIDIA A100-SXM4-80GB"
  std::string uuid;                  // "GPU-8c4b...": stable across reboots and device orders
  Bytes total_memory;                // NVML total (what nvidia-smi prints), else cuDeviceTotalMem
  std::optional<Bytes> free_memory;  // NVML free; unset without NVML (needs no CUDA context)
  std::optional<Bytes> used_memory;  // NVML used (other processes and the driver's reservation)
  ComputeCapability compute_capability;
  std::uint32_t multiprocessors = 0;  // SM count
  std::uint32_t memory_bus_width_bits = 0;
  std::uint32_t memory_clock_khz = 0;  // peak memory clock as the driver reports it
  double bandwidth_gbs = 0;            // 2 x clock x bus width / 8, 10^9 bytes per second; 0 when unknown
  std::vector<GpuProcess> processes;   // processes holding memory on it, when NVML lists them
  bool processes_known = false;        // NVML answered the process query
  std::vector<std::string> notes;      // what could not be read, one line each
};

struct ProbeResult {
  ProbeStatus status = ProbeStatus::no_driver;
  std::string reason;                 // one line saying why status is not ok; "" when ok
  std::string driver_version;         // NVML's "550.54.15", or ""
  std::string cuda_version;           // the driver's CUDA version: "12.4", or ""
  std::vector<ProbedDevice> devices;  // may be non-empty when status is not ok: seen by NVML only
  HostInfo host;
  EnvironmentInfo environment;
  std::vector<std::string> notes;  // e.g. "NVML not loaded: free memory unknown"
};

struct ProbeOptions {
  std::string cuda_library;         // file to dlopen; "" = $MEMPLAN_CUDA_LIBRARY, else "libcuda.so.1"
  std::string nvml_library;         // file to dlopen; "" = $MEMPLAN_NVML_LIBRARY, else "libnvidia-ml.so.1"
  bool read_host = true;            // read /proc for the CPU and RAM
  bool detect_environment = true;   // look at environment variables and marker files
  std::string proc_root = "/proc";  // where /proc is (tests point it at a copy)
};

// Probes the GPUs, the host and the environment. Never throws for a missing or failing
// driver: that is the status and reason. Each call loads the libraries afresh (libcuda
// stays loaded once initialised, as its documentation advises).
ProbeResult probe(const ProbeOptions& options = {});

// Returns the first device if the probe succeeded, else nullptr: what `estimate --probe` uses.
const ProbedDevice* first_device(const ProbeResult& result);

// Returns a probed device as a GpuSpec for the estimators: name "gpuN", display the
// driver's name, memory its total, its compute capability and bandwidth.
GpuSpec to_gpu_spec(const ProbedDevice& device);

struct AllocationCheck {
  bool fits = false;  // `requested` fits in the free memory
  Bytes requested;
  std::optional<Bytes> free_memory;  // what the probe saw free; unset when unknown
  std::string reason;                // one line: "needs 10,737,418,240 bytes; 64,156,073,984 free on GPU 0"
};

// Returns whether `bytes` fit in the free memory of CUDA device `device` as probed. An
// unknown device, a failed probe or unknown free memory gives fits = false with a reason.
AllocationCheck can_allocate(const ProbeResult& result, Bytes bytes, std::uint32_t device);

struct MemoryWarning {
  std::uint32_t device = 0;  // CUDA device ordinal
  std::string name;          // the driver's name for it
  Bytes used;
  Bytes total;
  double usage = 0;     // used / total, 0..1
  std::string message;  // "GPU 0 (NVIDIA A100-SXM4-80GB) at 25.3% > 20.0%"
};

// Returns one warning per device whose used / total memory exceeds `fraction` (0 < fraction
// <= 1; TheLoom's memory_warning_threshold, e.g. 0.85). Devices with unknown usage are
// skipped. Throws Error(invalid_input, key "memory_warning_threshold") for a fraction
// outside (0, 1].
std::vector<MemoryWarning> check_memory_threshold(const ProbeResult& result, double fraction);

}  // namespace memplan
