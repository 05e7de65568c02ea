// Fitting a workload under a memory limit: the limit a budget and threshold allow, and the
// largest batch, sequence length or chunk that stays under it, by a search that relies on
// the total never shrinking as the value grows (tested as a property of the estimators).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/bytes.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/plan/layout.hpp"
#include "memplan/plan/workload.hpp"

namespace memplan {

// Returns floor(budget x threshold) exactly, the threshold taken to six decimals (0.85 =
// 850000 ppm), for thresholds in (0, 1]; a threshold above 1 counts as 1. Never overflows.
Bytes budget_limit(Bytes budget, double threshold);

// The workload knob a fit search varies.
enum class FitKnob {
  batch,            // Workload::batch: sequences per pass
  seq,              // Workload::seq_len: input tokens per sequence
  attention_chunk,  // Workload::attention_chunk: query rows per chunk (--attention chunked, causal_linear_chunked)
  streaming_chunk,  // Workload::streaming_chunk: tokens per chunk (streaming_extraction)
  gpu_layers,       // llama.cpp's -ngl (LayoutOptions::llama_cpp): layers on the GPU
  cpu_moe_layers,   // llama.cpp's --n-cpu-moe: layers whose experts stay in host memory (the fewest that fit)
};

// Returns "batch", "seq", "attention_chunk", "streaming_chunk", "ngl", "n_cpu_moe".
std::string to_string(FitKnob knob);

// Returns the knob `vary` names for `workload`: "batch", "seq" (or "ctx", llama.cpp's name),
// "attention_chunk", "streaming_chunk", "ngl", or "chunk" = the chunk this workload has
// (streaming_chunk for streaming_extraction, else attention_chunk when the attention variant
// is chunked).
// Throws Error(invalid_input, key "vary") for another name, or a chunk knob the workload
// does not use (it would not change the estimate).
FitKnob choose_fit_knob(std::string_view vary, const Workload& workload);

// Returns the knob's value in `workload`.
std::uint64_t fit_knob_value(const Workload& workload, FitKnob knob);

// Sets the knob's value in `workload`.
void set_fit_knob(Workload& workload, FitKnob knob, std::uint64_t value);

// Returns the largest value a search over `knob` tries: batch 2^24 sequences; seq the
// model's context less the generated tokens; a chunk the workload's seq_len (a longer
// chunk holds no more). Throws Error(invalid_input, key "seq_len") when new_tokens leave
// no room in the context.
std::uint64_t fit_knob_cap(const ModelSpec& spec, const Workload& workload, FitKnob knob);

// n_cpu_moe is searched the other way: memory falls as it grows, so `value` is the smallest
// that fits and "next" is value - 1 (at cap when nothing fits; unset at 0).
struct FitResult {
  FitKnob knob = FitKnob::batch;
  std::uint64_t value = 0;             // the largest value in [1, cap] (ngl: [0, cap]) that fits; 0 when none does
  std::uint64_t cap = 0;               // the search's upper end (fit_knob_cap, or the caller's)
  std::optional<Breakdown> breakdown;  // at value (unset when nothing fits)
  std::optional<Bytes> next_total;     // at value + 1 (at 1 when nothing fits); unset at the cap or on overflow
  bool next_overflows = false;         // the total at value + 1 does not fit in 64 bits
  std::string binding;                 // the component that grows the most from value to value + 1
  Bytes binding_bytes;                 // its bytes at value + 1

  // The value one step past the result, toward what does not fit.
  std::uint64_t next_value() const { return knob == FitKnob::cpu_moe_layers ? value - 1 : value + 1; }
};

// Returns the largest value of `knob` in [1, cap] at which estimate_workload(spec,
// workload with that value).total() <= limit, found by doubling then bisecting (about
// 2 log2(cap) estimates), with the total one past it and the component that binds.
// `cap` 0 means fit_knob_cap. A total that overflows 64 bits counts as not fitting.
// Throws Error(invalid_input) as estimate_workload for knobs that are wrong whatever the
// value (and as fit_knob_cap).
FitResult fit_largest(const ModelSpec& spec, const Workload& workload, FitKnob knob, Bytes limit,
                      std::uint64_t cap = 0);

// llama.cpp's question (LayoutOptions::llama_cpp): the most layers on the GPU (knob
// gpu_layers, 0 to n_layers + 1, the last adding the output layer), the longest context
// (knob seq), or the fewest layers whose experts stay in host memory (knob cpu_moe_layers,
// 0 to n_layers) whose buffers on the GPU (or, planned for the CPU, on the host) stay within
// `limit`; the breakdown is that device's. Throws Error(invalid_input, key "vary") for
// another knob, and as estimate_layout.
FitResult fit_llama_cpp(const ModelSpec& spec, const Workload& workload, const LayoutOptions& options, FitKnob knob,
                        Bytes limit);

}  // namespace memplan
