// The forward-pass workloads (weights, inference, generation, extraction,
// streaming_extraction) for the registry, and the forward pass the analyses run to get
// their activations (private to the plan layer).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/core/tensor_run.hpp"
#include "memplan/estimators/compute_time.hpp"
#include "memplan/plan/workload.hpp"

#include "workload_composer.hpp"

namespace memplan::detail {

// One forward pass of `workload` over batch x seq_len tokens, as the inference workload
// runs it: its tensors, not rows to be recovered from a breakdown.
struct ForwardPass {
  std::optional<Item> kv_cache;           // the keys and values kept (kv_cache on, a causal model)
  std::vector<TensorRun> kv_allocations;  // kv_cache's tensors, for the allocator model
  Item workspace;                         // "forward_workspace": the largest transient working set
  std::string phase;                      // where it falls: attention, mlp or logits
  std::vector<AllocatorStep> steps;       // the pass's transient tensors in the order it makes them
};

// Returns the forward pass of `workload` on `spec` (its kind is not read). Throws
// Error(overflow).
ForwardPass forward_pass(const ModelSpec& spec, const Workload& workload);

// Adds `pass` to `composer`: the KV cache kept, the workspace as the peak.
void add_forward(WorkloadComposer& c, ForwardPass f);

// Throws Error(invalid_input, key `key`) when `tokens` positions pass the model's (the
// decoder's) learned position table.
void check_positions(const ModelSpec& spec, std::uint64_t tokens, const char* key = "seq_len");

// Returns work on the model's weights, in the compute dtype at the model-FLOPs efficiency.
Work model_work(const std::string& name, double flops, const Workload& workload, std::string formula);
// Returns the work "forward" of a forward pass over batch x seq tokens; `why` starts its formula.
Work forward_work(const ModelSpec& spec, const Workload& workload, std::uint64_t batch, std::uint64_t seq,
                  const std::string& why);

// An encoder-decoder's work: the encoder's pass over the source and the decoder's over the
// target (inference: target_len tokens at once; generation: new_tokens decode steps). The
// encoder's matmuls and the cross-attention's keys and values run per source token, the rest
// per target token; attention scores over the source (encoder, cross) and the target.
std::vector<Work> encoder_decoder_work(const ModelSpec& spec, const Workload& workload);
// Their FLOPs summed (a training step is about three times one forward pass).
double encoder_decoder_forward_flops(const ModelSpec& spec, const Workload& workload);

// A vision-language model's images (workload.images > 0): the vision tower's pass over the
// batch's images as the row "forward_workspace" (its tensors in `detail`), and its work
// (the tower's matmuls and attention over the patches, the projector's over the tokens).
Item vision_pass(const ModelSpec& spec, const Workload& workload);
Work vision_work(const ModelSpec& spec, const Workload& workload);

// weights: the parameters alone, no overhead.
void compose_weights(const ModelSpec& spec, const Workload& workload, WorkloadComposer& composer);
std::vector<Work> weights_work(const ModelSpec& spec, const Workload& workload);
WorkloadBytes weights_bytes(const ModelSpec& spec, const Workload& workload);

// inference: one forward pass.
void compose_inference(const ModelSpec& spec, const Workload& workload, WorkloadComposer& composer);
WorkloadBytes inference_bytes(const ModelSpec& spec, const Workload& workload);
// inference, extraction, streaming_extraction: one forward pass over the batch.
std::vector<Work> one_forward_work(const ModelSpec& spec, const Workload& workload);

// generation: prefill, then new_tokens decode steps; the larger of the two peaks.
void compose_generation(const ModelSpec& spec, const Workload& workload, WorkloadComposer& composer);
std::vector<Work> generation_work(const ModelSpec& spec, const Workload& workload);
WorkloadBytes generation_bytes(const ModelSpec& spec, const Workload& workload);

// extraction and streaming_extraction (by workload.kind): a forward pass caching hook
// activations, over the whole sequence or one chunk at a time.
void compose_extraction(const ModelSpec& spec, const Workload& workload, WorkloadComposer& composer);

}  // namespace memplan::detail
