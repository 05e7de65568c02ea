// The CUDA side of memplan::kernels, answered at run time: whether the .cu kernels were
// built, whether a device is usable, and the attention kernels measured on it. Every
// function here exists in every build; without CUDA they report why nothing ran.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "memplan/core/precision.hpp"
#include "memplan/kernels/attention.hpp"

namespace memplan {

struct KernelsBuildInfo {
  bool cuda_kernels = false;       // the .cu kernels were compiled in (MEMPLAN_CUDA found nvcc)
  std::string cuda_toolkit;        // nvcc version they were built with, e.g. "13.0.88"; "" without CUDA
  std::string cuda_architectures;  // e.g. "80,90"; "" without CUDA
  std::string eigen;               // Eigen version of the CPU kernels, e.g. "3.4.0"
};

// Returns what memplan::kernels was built with.
KernelsBuildInfo kernels_build_info();
// Returns true when the CUDA kernels were compiled in; a device may still be absent.
bool kernels_cuda_available();

enum class CudaStatus {
  ok,         // a device is present and usable
  not_built,  // memplan was built without the CUDA kernels
  no_driver,  // no NVIDIA driver (libcuda) could be loaded, or it is older than the runtime
  no_device,  // the driver loaded but reports no device
  error,      // the runtime failed otherwise
};
std::string to_string(CudaStatus status);

struct CudaDeviceInfo {
  CudaStatus status = CudaStatus::not_built;
  std::string reason;              // for anything but ok: one line saying why ("no CUDA device: ...")
  std::string name;                // "NVIDIA H100 80GB HBM3"
  std::uint64_t total_memory = 0;  // bytes, as the driver reports them
  std::uint32_t cc_major = 0;      // compute capability
  std::uint32_t cc_minor = 0;
  std::string driver;   // CUDA version the driver supports, "13.0"
  std::string runtime;  // CUDA runtime linked into memplan, "13.0"
};

// Returns the state of device 0. Never throws.
CudaDeviceInfo cuda_device_info();

// True for the variants with a CUDA kernel: all seven (eager, sdpa with an online
// softmax, chunked, linear, causal_linear_naive, causal_linear_chunked, recurrent); kept
// so that a variant added later can be CPU-only.
bool attention_cuda_supports(AttentionVariant variant);

struct CudaMeasurement {
  std::uint64_t peak_bytes = 0;  // the private memory pool's used-memory high watermark
                                 // (cudaMemPoolAttrUsedMemHigh) while the kernel ran
  double seconds_best = 0;       // CUDA-event time of the fastest run
  double seconds_median = 0;
  std::uint32_t repeats = 0;
};

// Runs `variant` on device 0 with random q, k, v (allocated before the measurement, so
// not counted) in `dtype` (fp32 or fp16; accumulation in fp32) `repeats` times; every
// tensor the kernel materialises comes from a private stream-ordered pool. Returns the
// pool's peak and the event timings. Throws Error(invalid_input) for an unsupported
// variant or dtype, Error(internal) when CUDA is unavailable or fails.
CudaMeasurement measure_attention_cuda(AttentionVariant variant, const AttentionDims& dims, Format dtype,
                                       std::uint32_t repeats);

// Runs `variant` on device 0 on the given fp32 inputs ([B][H][N][D]) computed in `dtype`
// and returns the output as fp32, for checking the CUDA kernels against attention_cpu.
// Throws as measure_attention_cuda.
std::vector<float> attention_cuda(AttentionVariant variant, const AttentionDims& dims, std::span<const float> q,
                                  std::span<const float> k, std::span<const float> v, Format dtype);

}  // namespace memplan
