#include "memplan/plan/calibration.hpp"

#include "memplan/core/bytes.hpp"

namespace memplan {

Calibration default_calibration() {
  Calibration c;
  c.gpu = "any";
  c.driver = "any";
  c.figures = {
      {"cuda_context", OverheadOptions{}.cuda_context.count(), false,
       "default: a CUDA 12/13 context with lazy module loading takes a few hundred MiB on A100/H100-class GPUs; "
       "512 MiB is a round upper figure, not a measurement"},
      {"cublas_workspace", 32 * MiB, false,
       "default: PyTorch's cuBLAS workspace on Hopper (4096 KiB x 8); older GPUs use 8.125 MiB (4096 KiB x 2 + 16 KiB "
       "x 8)"},
      {"allocator_granularity", 2 * MiB, false,
       "default: cudaMalloc maps device memory in 2 MiB pages; smaller requests share a page"},
      {"pool_granularity", 2 * MiB, false,
       "default: a stream-ordered memory pool (cudaMallocAsync) reserves in 2 MiB steps"},
  };
  return c;
}

OverheadOptions apply_calibration(const Calibration& calibration, OverheadOptions options) {
  const std::string source = "measured by memplan calibrate on " + calibration.gpu + ", CUDA " + calibration.driver;
  for (const CalibrationFigure& f : calibration.figures) {
    if (!f.measured) continue;
    if (f.name == "cuda_context") {
      options.cuda_context = options.cuda_context_low = options.cuda_context_high = Bytes(f.bytes);
      options.cuda_context_source = source;
    } else if (f.name == "cublas_workspace") {
      options.cublas_workspace = Bytes(f.bytes);
      options.cublas_workspace_source = source + " (the library's own memory and its workspace)";
    }
  }
  return options;
}

}  // namespace memplan
