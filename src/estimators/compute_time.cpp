#include "memplan/estimators/compute_time.hpp"

#include <algorithm>

#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/text.hpp"

namespace memplan {

namespace {

std::optional<double> listed(const GpuSpec& gpu, Format format) {
  for (const auto& [f, value] : gpu.dense_tflops) {
    if (f == format && value > 0) return value;
  }
  return std::nullopt;
}

// A number with `digits` significant digits in plain or scientific notation (no I/O).
std::string number_text(double value, int digits, bool scientific) {
  return scientific ? scientific_text(value, digits) : general_text(value, digits);
}

}  // namespace

std::string flops_text(double flops) { return number_text(flops, 2, true); }

double peak_tflops(const GpuSpec& gpu, Format format, Format& used) {
  std::vector<Format> chain{format};
  switch (format) {
    case Format::tf32: chain.push_back(Format::fp32); break;
    case Format::fp16: chain.push_back(Format::bf16); break;
    case Format::bf16: chain.push_back(Format::fp16); break;
    case Format::fp8_e4m3:
    case Format::fp8_e5m2:
    case Format::int8:
    case Format::int4:
    case Format::nf4:
    case Format::fp4:
      chain.push_back(Format::bf16);
      chain.push_back(Format::fp16);
      break;
    case Format::fp32: break;
  }
  chain.push_back(Format::fp32);
  for (const Format f : chain) {
    if (const auto value = listed(gpu, f)) {
      used = f;
      return *value;
    }
  }
  throw Error(ErrorKind::invalid_input,
              "GPU '" + gpu.name + "' lists no throughput figure, so no time can be estimated", "gpu");
}

TimeEstimate estimate_time(const std::vector<Work>& parts, const GpuSpec& gpu, std::optional<double> efficiency) {
  if (efficiency && !(*efficiency > 0 && *efficiency <= 1)) {
    throw Error(ErrorKind::invalid_input,
                "efficiency must be a fraction in (0, 1], got " + number_text(*efficiency, 3, false), "efficiency");
  }
  TimeEstimate out;
  out.device = gpu.name;
  for (const Work& w : parts) {
    TimePart p;
    p.name = w.name;
    p.flops = w.flops;
    p.formula = w.formula;
    p.efficiency = efficiency.value_or(w.efficiency);
    if (!(p.efficiency > 0 && p.efficiency <= 1)) {
      throw Error(ErrorKind::invalid_input, "efficiency of " + w.name + " must be in (0, 1]", "efficiency");
    }
    p.peak_tflops = peak_tflops(gpu, w.format, p.format);
    const double compute = w.flops / (p.peak_tflops * 1e12 * p.efficiency);
    const double memory = gpu.bandwidth_gbs > 0 ? w.bytes_moved / (gpu.bandwidth_gbs * 1e9) : 0.0;
    const double host = w.host_bytes_per_second > 0 ? w.host_bytes / w.host_bytes_per_second : 0.0;
    p.seconds = std::max(compute, memory) + host;
    if (w.flops > 0) {
      p.assumption = flops_text(w.flops) + " FLOPs / (" + number_text(p.peak_tflops, 5, false) + " TFLOPS " +
                     to_string(p.format) + " x " + number_text(p.efficiency, 2, false) + ")";
      if (p.format != w.format) p.assumption += " (no " + to_string(w.format) + " figure for " + gpu.name + ")";
    }
    if (w.bytes_moved > 0) {
      p.assumption += std::string(p.assumption.empty() ? "" : "; at least ") + flops_text(w.bytes_moved) + " B / " +
                      number_text(gpu.bandwidth_gbs, 5, false) + " GB/s" +
                      (w.flops > 0 && memory > compute ? " (memory-bound: this binds)" : "");
    }
    if (w.host_bytes > 0 && w.host_bytes_per_second > 0) {
      p.assumption += std::string(p.assumption.empty() ? "" : " + ") + flops_text(w.host_bytes) + " B on the host at " +
                      number_text(w.host_bytes_per_second / 1e6, 4, false) + " MB/s";
    }
    if (!w.efficiency_reason.empty() && !efficiency && w.flops > 0)
      p.assumption += "; efficiency: " + w.efficiency_reason;
    out.seconds += p.seconds;
    out.parts.push_back(std::move(p));
  }
  out.assumption = "an estimate, not a measurement: FLOPs / (dense peak of " + gpu.name + " for the precision x " +
                   (efficiency ? "efficiency " + number_text(*efficiency, 2, false) + " (given)"
                               : std::string("a stated efficiency per part")) +
                   "); `efficiency` overrides";
  return out;
}

double matmul_parameters(const ModelSpec& spec) {
  double params = 0;
  for (const TensorGroup& g : model_tensors(spec)) {
    const double n = static_cast<double>(group_parameters(g));
    if (g.component == "vision" || g.component == "projector") continue;  // they run per image patch, not per token
    if (g.role == TensorRole::linear || g.role == TensorRole::router || g.role == TensorRole::lm_head) {
      if (g.component == "experts" && spec.experts > 0) {
        params += n * static_cast<double>(spec.experts_per_token) / static_cast<double>(spec.experts);
      } else {
        params += n;
      }
    }
  }
  if (spec.lm_head == LmHead::tied) params += static_cast<double>(spec.vocab_size) * static_cast<double>(spec.d_model);
  return params;
}

double attended_positions(const ModelSpec& spec, double context) {
  double positions = 0;
  for (const auto& [kind, layers] : attention_layer_counts(spec)) {
    // A state-space layer attends to nothing: its scan is elementwise work, O(d_inner x
    // d_state) a token, small beside its projections (counted in the matmul parameters).
    if (kind == AttentionKind::mamba) continue;
    double keys = context;
    if (kind == AttentionKind::sliding) keys = std::min(keys, static_cast<double>(spec.sliding_window));
    if (kind == AttentionKind::chunked) keys = std::min(keys, static_cast<double>(spec.attention_chunk));
    positions += static_cast<double>(layers) * keys;
  }
  return positions;
}

double forward_flops(const ModelSpec& spec, std::uint64_t batch, std::uint64_t seq) {
  const double tokens = static_cast<double>(batch) * static_cast<double>(seq);
  const double attention = 4.0 * attended_positions(spec, static_cast<double>(seq)) *
                           static_cast<double>(spec.n_heads) * static_cast<double>(spec.d_head);
  return tokens * (2.0 * matmul_parameters(spec) + attention);
}

}  // namespace memplan
