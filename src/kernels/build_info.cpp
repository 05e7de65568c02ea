// What memplan::kernels was built with. CMake sets the MEMPLAN_* definitions on this
// file only, so the answer is a run-time one and no header carries a build flag.
#include <Eigen/Core>
#include <string>

#include "memplan/kernels/cuda.hpp"

#ifndef MEMPLAN_KERNELS_CUDA
#define MEMPLAN_KERNELS_CUDA 0
#define MEMPLAN_CUDA_TOOLKIT ""
#define MEMPLAN_CUDA_ARCHS ""
#endif

namespace memplan {

KernelsBuildInfo kernels_build_info() {
  KernelsBuildInfo info;
  info.cuda_kernels = MEMPLAN_KERNELS_CUDA != 0;
  info.cuda_toolkit = MEMPLAN_CUDA_TOOLKIT;
  info.cuda_architectures = MEMPLAN_CUDA_ARCHS;
  info.eigen = std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
               std::to_string(EIGEN_MINOR_VERSION);
  return info;
}

bool kernels_cuda_available() { return MEMPLAN_KERNELS_CUDA != 0; }

std::string to_string(CudaStatus status) {
  switch (status) {
    case CudaStatus::ok: return "ok";
    case CudaStatus::not_built: return "not_built";
    case CudaStatus::no_driver: return "no_driver";
    case CudaStatus::no_device: return "no_device";
    case CudaStatus::error: return "error";
  }
  return "error";
}

bool attention_cuda_supports(AttentionVariant variant) {
  switch (variant) {
    case AttentionVariant::eager:
    case AttentionVariant::sdpa:
    case AttentionVariant::chunked:
    case AttentionVariant::linear:
    case AttentionVariant::causal_linear_naive:
    case AttentionVariant::causal_linear_chunked:
    case AttentionVariant::recurrent: return true;
  }
  return false;
}

}  // namespace memplan
