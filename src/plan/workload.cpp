// The workload entry points: each looks its workload up in the registry
// (workload_registry.cpp) and runs its entry; none switches on the kind.
#include "memplan/plan/workload.hpp"

#include <algorithm>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"

#include "forward_workloads.hpp"
#include "workload_registry.hpp"

namespace memplan {

namespace {

// An encoder-decoder: the workloads memplan prices for one, and the lengths each stack takes.
void check_encoder_decoder(const ModelSpec& s, const Workload& w) {
  using K = WorkloadKind;
  if (w.kind != K::weights && w.kind != K::inference && w.kind != K::generation && w.kind != K::training) {
    throw Error(ErrorKind::invalid_input,
                "memplan prices weights, inference, generation and training for encoder-decoder models (T5, BART, "
                "Whisper); `" +
                    to_string(w.kind) + "` on " + s.name +
                    " is not priced yet: its estimator sizes one stack of decoder layers, and " + s.name + " has " +
                    std::to_string(s.encoder.n_layers) + " encoder layers besides its " + std::to_string(s.n_layers) +
                    " decoder layers",
                "workload");
  }
  if (w.kind == K::weights) return;
  if (s.encoder.mel_bins != 0 && w.seq_len != s.encoder.n_positions) {
    throw Error(ErrorKind::invalid_input,
                s.name + "'s audio encoder reads exactly " + std::to_string(s.encoder.n_positions) +
                    " positions (30 s of audio, padded or cut to it); the source length cannot be " +
                    std::to_string(w.seq_len),
                "seq_len");
  }
  if (s.encoder.n_positions != 0 && w.seq_len > s.encoder.n_positions) {
    throw Error(ErrorKind::invalid_input,
                s.name + "'s encoder has learned positions for " + std::to_string(s.encoder.n_positions) + " tokens; " +
                    std::to_string(w.seq_len) + " cannot be run",
                "seq_len");
  }
  if ((w.kind == K::inference || w.kind == K::training) && w.target_len == 0) {
    throw Error(ErrorKind::invalid_input,
                "target_len must be at least 1 for an encoder-decoder's forward pass or training step", "target_len");
  }
  if (w.kind == K::generation && w.target_len != 0) {
    throw Error(ErrorKind::invalid_input,
                "generation's target is `new_tokens`; target_len applies to inference and training", "target_len");
  }
  if (w.kind == K::generation) {
    detail::check_positions(s, w.new_tokens, "new_tokens");
  } else {
    detail::check_positions(s, w.target_len, "target_len");
  }
}

// Images: on a vision-language model, in a forward pass or training step of the language model.
void check_images(const ModelSpec& s, const Workload& w) {
  using K = WorkloadKind;
  const bool sized = w.image_width != 0 || w.image_height != 0;
  if (w.images == 0) {
    if (sized)
      throw Error(ErrorKind::invalid_input, "image_size sizes the images of `images`, which is not set", "image_size");
    return;
  }
  if (s.vision.d_model == 0) {
    throw Error(ErrorKind::invalid_input,
                s.name +
                    " has no vision tower: `images` applies to vision-language models (LLaVA, Qwen2-VL, Gemma 3, "
                    "PaliGemma, SmolVLM)",
                "images");
  }
  if (w.kind != K::inference && w.kind != K::generation && w.kind != K::training) {
    throw Error(ErrorKind::invalid_input,
                "`images` applies to inference, generation and training; `" + to_string(w.kind) +
                    "` prices the language model's tokens only (leave images out, and count their tokens in seq_len)",
                "images");
  }
  const bool tiled = s.vision.kind == VisionKind::llava_next ||
                     (s.vision.kind == VisionKind::idefics3 && s.vision.longest_edge != 0);
  if ((keeps_image_size(s.vision) || tiled) && !sized) {
    throw Error(ErrorKind::invalid_input,
                s.name + "'s image tokens depend on each image's size: give `image_size` WxH (e.g. 1280x720)",
                "image_size");
  }
}

void check(const ModelSpec& s, const Workload& w) {
  if (w.batch == 0) throw Error(ErrorKind::invalid_input, "batch must be at least 1", "batch");
  if (w.seq_len == 0) throw Error(ErrorKind::invalid_input, "seq_len must be at least 1", "seq_len");
  if (is_quantized(compute_precision(w))) {
    throw Error(ErrorKind::invalid_input, "the compute dtype must be fp32, tf32, bf16 or fp16", "compute");
  }
  if (is_encoder_decoder(s)) {
    check_encoder_decoder(s, w);
  } else {
    if (w.target_len != 0) {
      throw Error(ErrorKind::invalid_input,
                  "target_len applies to encoder-decoder models (T5, BART, Whisper); " + s.name + " is a decoder",
                  "target_len");
    }
    detail::check_positions(s, checked_add(w.seq_len, w.new_tokens, "seq_len + new_tokens"));
  }
  if (w.kind == WorkloadKind::generation && w.new_tokens == 0) {
    throw Error(ErrorKind::invalid_input, "generation needs new_tokens of at least 1", "new_tokens");
  }
  if (w.kind != WorkloadKind::generation && w.new_tokens != 0) {
    throw Error(ErrorKind::invalid_input, "new_tokens applies to the generation workload only", "new_tokens");
  }
  if (w.kind == WorkloadKind::streaming_extraction && w.streaming_chunk == 0) {
    throw Error(ErrorKind::invalid_input, "streaming_chunk_size must be at least 1", "streaming_chunk_size");
  }
}

}  // namespace

std::string to_string(WorkloadKind kind) { return std::string(detail::workload_entry(kind).name); }

std::vector<std::string> workload_names() {
  std::vector<std::string> out;
  for (const detail::WorkloadEntry& entry : detail::workload_registry()) out.emplace_back(entry.name);
  return out;
}

WorkloadKind parse_workload_kind(std::string_view text) {
  for (const detail::WorkloadEntry& entry : detail::workload_registry()) {
    if (entry.name == text) return entry.kind;
  }
  throw Error(ErrorKind::invalid_input,
              "unknown workload '" + printable(text) + "'" + did_you_mean(text, workload_names()) +
                  "; accepted: " + quoted_list(workload_names()),
              "workload");
}

Precision compute_precision(const Workload& w) {
  if (w.compute) return *w.compute;
  if (is_quantized(w.weights.precision)) return w.weights.unquantized;
  if (w.weights.precision.format == Format::tf32) return precisions::fp32;
  return w.weights.precision;
}

std::uint64_t image_positions(const ModelSpec& s, const Workload& w) {
  check_images(s, w);
  if (w.images == 0) return 0;
  return checked_mul(w.images, image_grid(s.vision, w.image_width, w.image_height).tokens, "image tokens");
}

namespace {
// The workload the language model runs: seq_len's text tokens and its images' tokens.
Workload with_image_tokens(const ModelSpec& s, const Workload& w) {
  Workload out = w;
  out.seq_len = checked_add(w.seq_len, image_positions(s, w), "text + image tokens");
  return out;
}
}  // namespace

Breakdown estimate_workload(const ModelSpec& s, const Workload& workload) {
  const detail::WorkloadEntry& entry = detail::workload_entry(workload.kind);
  const Workload w = with_image_tokens(s, workload);
  check(s, w);
  detail::WorkloadComposer composer(s, w);
  entry.compose(s, w, composer);
  return std::move(composer).finish();
}

WorkloadBytes estimate_workload_bytes(const ModelSpec& s, const Workload& workload) {
  const detail::WorkloadEntry& entry = detail::workload_entry(workload.kind);
  if (entry.bytes == nullptr) {
    const Breakdown b = estimate_workload(s, workload);
    return {b.total(), b.allocated(), b.reserved()};
  }
  const Workload w = with_image_tokens(s, workload);
  check(s, w);
  return entry.bytes(s, w);
}

std::vector<Work> workload_work(const ModelSpec& s, const Workload& workload) {
  const Workload w = with_image_tokens(s, workload);
  check(s, w);
  return detail::workload_entry(w.kind).work(s, w);
}

std::optional<TimeEstimate> estimate_workload_time(const ModelSpec& spec, const Workload& workload,
                                                   const GpuSpec& gpu) {
  const std::vector<Work> parts = workload_work(spec, workload);
  // A probed device carries no datasheet throughput: no time, rather than an error.
  const bool rated = std::any_of(gpu.dense_tflops.begin(), gpu.dense_tflops.end(),
                                 [](const auto& f) { return f.second > 0; });
  if (parts.empty() || !rated) return std::nullopt;
  return estimate_time(parts, gpu, workload.analysis.efficiency);
}

}  // namespace memplan
