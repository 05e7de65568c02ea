// A GPU as memplan plans for it: capacity as the driver reports it, capability, speed.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "memplan/core/bytes.hpp"
#include "memplan/core/precision.hpp"

namespace memplan {

struct ComputeCapability {
  std::uint32_t major = 0;
  std::uint32_t minor = 0;
  auto operator<=>(const ComputeCapability&) const = default;
};

// Returns "8.6".
std::string to_string(ComputeCapability cc);
// Parses "8.6"; throws Error(invalid_input, key "compute_capability").
ComputeCapability parse_compute_capability(std::string_view text);

struct GpuSpec {
  std::string name;                  // key users type: "h100-sxm-80gb"
  std::vector<std::string> aliases;  // other accepted names: "h100"
  std::string display;               // as the driver names it: "NVIDIA H100 80GB HBM3"
  Bytes memory;                      // total memory as the driver reports it
  ComputeCapability compute_capability;
  std::vector<Format> tensor_paths;                     // formats with tensor-core paths (fp16, bf16, fp8_e4m3, int8)
  double bandwidth_gbs = 0;                             // memory bandwidth, 10^9 bytes per second
  std::vector<std::pair<Format, double>> dense_tflops;  // peak dense throughput per format (int8: TOPS)
  std::string source;                                   // datasheet for the figures
  std::string memory_source;                            // where the driver-reported memory was seen
  // What CUDA lets a process use (cudaMemGetInfo's total, torch.cuda.mem_get_info()[1]): the
  // driver's total less what it reserves for itself; 0 where no run has measured it.
  Bytes cuda_memory;
  std::string cuda_memory_source;  // the run that measured it
  // A bare CUDA context on this card with lazy module loading (CUDA 12.2+ drivers, PyTorch
  // 1.13+), as a run measured it: the context's share grows with the card's SMs. 0 where none
  // has; plans then assume OverheadOptions' default.
  Bytes cuda_context;
  std::string cuda_context_source;  // the run that measured it
  bool operator==(const GpuSpec&) const = default;
};

// The capacity a plan is held against: CUDA's total where measured, else the driver's.
inline Bytes usable_memory(const GpuSpec& g) { return g.cuda_memory.count() != 0 ? g.cuda_memory : g.memory; }

}  // namespace memplan
