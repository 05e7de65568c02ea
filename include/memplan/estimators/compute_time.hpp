// Time estimates: a job's floating-point work divided by the device's peak throughput for
// the precision it runs in, times an explicit efficiency factor. An estimate with its
// assumption stated, never a measurement.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memplan/core/gpu_spec.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/core/precision.hpp"

namespace memplan {

// One part of a job's work. FLOPs count a multiply-add as 2. A part bound by memory
// traffic sets `bytes_moved`; one done on the host (zlib) sets `host_bytes` and its rate.
struct Work {
  std::string name;                  // "forward_backward", "eigendecomposition", ...
  double flops = 0;                  // floating-point operations
  Format format = Format::bf16;      // precision the FLOPs run in: picks the device's peak
  double efficiency = 0.4;           // fraction of that peak this kind of work reaches
  std::string efficiency_reason;     // why that fraction
  double bytes_moved = 0;            // device memory traffic; the part takes at least bytes / bandwidth
  double host_bytes = 0;             // bytes processed on the host (compression)
  double host_bytes_per_second = 0;  // host throughput for host_bytes (per process)
  std::string formula;               // how flops (and bytes) were counted, with the numbers
};

struct TimePart {
  std::string name;
  double seconds = 0;
  double flops = 0;
  Format format = Format::bf16;  // the format whose peak was used (after fallback)
  double peak_tflops = 0;
  double efficiency = 0;
  std::string formula;
  std::string assumption;  // "6.6e14 FLOPs / (312 TFLOPS bf16 x 0.40)"
};

struct TimeEstimate {
  double seconds = 0;  // sum of the parts
  std::string device;  // GPU name
  std::vector<TimePart> parts;
  std::string assumption;  // one line: what the estimate assumes
};

// Returns the device's peak dense TFLOPS for `format` and sets `used` to the format whose
// figure was taken: the format itself, else tf32 -> fp32, fp16 <-> bf16, fp8/int8 -> bf16,
// and finally fp32 (a format without a tensor path runs on the CUDA cores). Throws
// Error(invalid_input, key "gpu") when the GPU lists no throughput at all.
double peak_tflops(const GpuSpec& gpu, Format format, Format& used);

// Returns the time of `parts` on `gpu`: per part max(flops / (peak x efficiency),
// bytes_moved / bandwidth) + host_bytes / host rate; `efficiency` (0, 1] replaces every
// part's own factor when given. Throws Error(invalid_input, key "efficiency") for a
// factor outside (0, 1], Error(invalid_input, key "gpu") as peak_tflops.
TimeEstimate estimate_time(const std::vector<Work>& parts, const GpuSpec& gpu,
                           std::optional<double> efficiency = std::nullopt);

// Returns the key positions one query attends to, summed over the layers, with `context`
// tokens before it: context on full (and NoPE, latent) layers, at most sliding_window on
// sliding ones and attention_chunk on chunked ones, none on state-space (Mamba) layers. For a
// stack of full layers, n_layers x context.
double attended_positions(const ModelSpec& spec, double context);

// Returns the FLOPs of one forward pass over `batch` sequences of `seq` tokens:
// tokens x (2 x matmul parameters + 4 x attended_positions(seq) x n_heads x d_head), where matmul
// parameters are those of linear layers, the router and the LM head (a tied head counts
// its vocab x d_model), MoE experts weighted by experts_per_token / experts; a vision tower
// and its projector, which run per image patch, are not. Attention
// scores are counted over all seq keys (no causal halving). Backward is 2x forward.
double forward_flops(const ModelSpec& spec, std::uint64_t batch, std::uint64_t seq);

// Returns the parameters that take part in matrix products per token (see forward_flops).
double matmul_parameters(const ModelSpec& spec);

// Returns a short human figure for FLOPs: "6.60e14".
std::string flops_text(double flops);

}  // namespace memplan
