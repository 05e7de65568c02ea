// Workloads: what a job holds at its peak, composed from the estimators.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/estimators/activations.hpp"
#include "memplan/estimators/attention.hpp"
#include "memplan/estimators/kv_cache.hpp"
#include "memplan/estimators/overhead.hpp"
#include "memplan/estimators/weights.hpp"
#include "memplan/plan/analysis.hpp"

namespace memplan {

enum class WorkloadKind {
  weights,               // the parameters alone
  inference,             // one forward pass over batch x seq_len tokens
  generation,            // prefill the prompt, then decode new_tokens with a KV cache
  extraction,            // inference that caches hook activations (TransformerLens run_with_cache)
  streaming_extraction,  // extraction over streaming_chunk tokens at a time
  // Training and interpretability analyses (analysis.hpp holds their knobs):
  training,                 // a training step: gradients, optimizer states, activations, loss; LoRA/QLoRA
  sae,                      // sparse-autoencoder training on the model's activations
  fisher_spectrum,          // per-block Fisher and each block's spectrum
  grouped_fisher,           // Fisher summed per group (tensor or channel)
  hessian,                  // the dense n x n Hessian (intractable beyond ~2e5 parameters)
  full_fisher,              // the dense n x n Fisher
  lanczos,                  // top-k Hessian eigenvalues by Lanczos over Hessian-vector products
  sample_gradients,         // per-sample gradients (sample conflicts), compressed or gated
  tracin,                   // TracIn influence: checkpoints x training samples x stored gradient
  attention_patterns,       // every layer's attention patterns (entropy, flow)
  qkov,                     // QK/OV circuits and head composition
  embedding_singularities,  // local geometry of the token embedding
  fiber_bundle,             // the fiber-bundle test on activations
  superposition,            // the superposition regime of activations
  cka,                      // linear CKA between every pair of layers
};

// The names come from the workload registry (src/plan/workload_registry.cpp), one per kind.
// Returns the kind's name. Throws Error(internal) for a value that is no enumerator.
std::string to_string(WorkloadKind kind);
// Throws Error(invalid_input, key "workload") listing the accepted names.
WorkloadKind parse_workload_kind(std::string_view text);
// Returns every workload's name, in the order of WorkloadKind.
std::vector<std::string> workload_names();

// Whose kernels run a state-space layer: mamba_ssm's and causal-conv1d's fused ones
// (transformers' cuda_kernels_forward), or transformers' pure-PyTorch path (Mamba's
// slow_forward, Mamba-2's torch_forward), which it takes where those packages are missing and
// which materialises the discretised scan in fp32.
enum class SsmKernels { fused, torch };

struct Workload {
  WorkloadKind kind = WorkloadKind::inference;
  std::uint64_t batch = 1;                        // sequences per forward pass
  std::uint64_t seq_len = 2048;                   // input (prompt) tokens per sequence
  std::uint64_t new_tokens = 0;                   // generation: tokens generated after the prompt
  std::uint64_t target_len = 0;                   // encoder-decoders' inference: decoder tokens per sequence (seq_len
                                                  //   is the source); 0 on decoder-only models
  std::uint64_t images = 0;                       // vision-language models: images per sequence, their tokens added
                                                  //   to seq_len's text tokens
  std::uint64_t image_width = 0;                  // their size in pixels; 0: the tower's own (LLaVA resizes every
  std::uint64_t image_height = 0;                 //   image to it; Qwen2-VL needs the size)
  WeightsOptions weights;                         // weight storage precision
  std::optional<Precision> compute;               // activation dtype; unset: the weights' float precision,
                                                  //   or weights.unquantized when the weights are quantised
  std::optional<MixedPrecision> mixed_precision;  // training: the recipe (amp prices torch.autocast's casts);
                                                  //   bind sets the dtypes it implies, or names the recipe
                                                  //   the dtypes given spell
  bool kv_cache = true;                           // inference and extraction keep keys and values (HF use_cache=True)
  std::optional<Precision> kv_precision;          // unset: the compute dtype
  std::uint64_t kv_page_tokens = 0;               // paged KV cache blocks (vLLM: 16); 0 = contiguous
  MlaCache mla_cache = MlaCache::latent;       // what latent-attention layers keep (transformers 5, vLLM: the latent)
  SsmKernels ssm_kernels = SsmKernels::fused;  // state-space layers: fused kernels or transformers' PyTorch path
  AttentionVariant attention = AttentionVariant::sdpa;
  std::uint64_t attention_chunk = 512;  // for the chunked variants
  bool logits_fp32 = false;             // inference logits upcast to fp32 (transformers < 4.45 did;
                                        //   since then only the loss upcasts). No copy when compute is fp32
  ActivationCacheOptions cache;         // extraction: which hooks and how (batch, seq, dtype come from here)
  std::uint64_t streaming_chunk = 512;  // streaming_extraction: tokens per chunk
  OverheadOptions overhead;
  bool include_overhead = true;
  AnalysisOptions analysis;  // training and analysis workloads (plan/analysis.hpp)
};

// Returns the compute (activation) dtype `workload` runs in.
Precision compute_precision(const Workload& workload);

// Returns the memory `workload` needs on `spec` at its peak: components weights,
// kv_cache, activations (extraction), forward_workspace (the largest transient working
// set: one block's attention or MLP phase, or the logits) and overhead, with notes on
// the phase the peak falls in and `peak_phase` naming it; `alternatives` holds
// comparisons (full vs selective caches, the other phases); `host` holds what is kept on
// the CPU. Throws Error(invalid_input) on inconsistent knobs (naming the key) and
// Error(overflow).
Breakdown estimate_workload(const ModelSpec& spec, const Workload& workload);

// Returns the tokens `workload`'s images add to each sequence of a vision-language model:
// images x the tokens of one image at image_width x image_height (image_grid). 0 without
// images. Throws Error(invalid_input) naming the key (images on a model with no vision
// tower, on a workload that does not take them, a Qwen2-VL image without its size).
std::uint64_t image_positions(const ModelSpec& spec, const Workload& workload);

// The figures of estimate_workload's breakdown a program estimating in a loop needs.
struct WorkloadBytes {
  Bytes total;      // Breakdown::total(): what must fit
  Bytes allocated;  // Breakdown::allocated(): the tensors, as torch.cuda.max_memory_allocated counts them
  Bytes reserved;   // Breakdown::reserved(): what PyTorch's caching allocator holds
};

// Returns those figures. For the weights, inference and generation workloads they are
// computed without the breakdown (no strings, no rows: about a microsecond for a 7B model,
// docs/performance.md); the other workloads go through estimate_workload and cost what it
// costs. Throws as estimate_workload.
WorkloadBytes estimate_workload_bytes(const ModelSpec& spec, const Workload& workload);

// Returns the floating-point work of `workload` (empty for weights): its forward pass, a
// training step, or an analysis's passes and solvers, each part with the precision it
// runs in and a stated efficiency. Throws as estimate_workload.
std::vector<Work> workload_work(const ModelSpec& spec, const Workload& workload);

// Returns how long `workload` takes on `gpu`: workload_work through estimate_time, with
// workload.analysis.efficiency when set; nullopt for weights or a GPU that lists no
// throughput (a probed device). Throws as estimate_time.
std::optional<TimeEstimate> estimate_workload_time(const ModelSpec& spec, const Workload& workload, const GpuSpec& gpu);

}  // namespace memplan
