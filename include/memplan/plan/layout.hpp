// A workload laid out over several GPUs: the parallelism estimator (estimators/parallelism.hpp)
// composed with the workloads, one Breakdown per device role.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "memplan/core/gpu_spec.hpp"
#include "memplan/estimators/llama_cpp.hpp"
#include "memplan/estimators/parallelism.hpp"
#include "memplan/plan/workload.hpp"

namespace memplan {

// vLLM's serving knobs (vllm serve / LLM(...)); the tensor-parallel size is LayoutOptions.parallel.tensor.
// A vLLM release, for the rules that changed between releases.
struct VllmVersion {
  std::uint32_t major = 0;
  std::uint32_t minor = 22;  // the newest release memplan's rules follow
  std::uint32_t patch = 0;
  auto operator<=>(const VllmVersion&) const = default;
};
// Parses "0.19" or "0.20.1". Throws Error(invalid_input, key "vllm_version").
VllmVersion parse_vllm_version(std::string_view text);

struct ServingOptions {
  double gpu_memory_utilization = 0.9;  // fraction of the GPU vLLM may use (its default)
  std::uint64_t max_model_len = 0;      // longest sequence; 0 = the model's context
  std::uint64_t max_num_seqs = 256;     // sequences per batch: the sampler's rows in the profile run
  std::uint64_t max_num_batched_tokens =
      8192;                       // tokens per forward in the profile run (version- and GPU-dependent default)
  std::uint64_t block_size = 16;  // tokens per KV cache block
  std::uint64_t max_loras = 0;    // enable_lora: adapters served at once, each a stack of buffers; 0 = no LoRA
  std::uint64_t max_lora_rank = 16;
  std::uint64_t lora_extra_vocab_size = 256;  // tokens an adapter may add (vLLM 0.8-0.10's default)
  std::optional<Bytes> kv_cache_memory;       // kv_cache_memory_bytes: the KV cache's size, given (no profile budget)
  std::uint64_t mamba_ssm_bytes = 0;          // mamba_ssm_cache_dtype's bytes an element; 0 = auto (the model's rule)
  bool language_model_only = false;           // --language-model-only: a vision-language model's tower not loaded
  bool enable_prefix_caching = false;         // --enable-prefix-caching: Mamba groups per mamba_cache_mode
  std::string mamba_cache_mode;               // none, align or all; empty: vLLM's default for the model
  std::string speculative_method;             // speculative_config's method: mtp (or a *_mtp name) or ngram; empty: off
  std::uint64_t num_speculative_tokens = 0;   // k; 0 with mtp: the model's MTP layers (vLLM's n_predict)
  VllmVersion version;                        // the sampler's warm-up and the logged token count follow it
  // --disable-hybrid-kv-cache-manager (and what turns it off: a KV connector): every layer keeps
  // max_model_len tokens, sliding-window layers too.
  bool disable_hybrid_kv_cache_manager = false;
};

// Whose allocation rules a plan follows (`engine`).
enum class Engine { pytorch, vllm, llama_cpp };

// Accepts "pytorch", "vllm" and "llama.cpp"; throws Error(invalid_input, key "engine") listing them.
Engine parse_engine(std::string_view text);

struct LayoutOptions {
  ParallelTrainingOptions parallel;                   // t (any workload); p, d, sharding, offload (training)
  std::optional<ServingOptions> vllm;                 // set: vLLM tensor-parallel serving of the model
  std::optional<LlamaCppOptions> llama_cpp;           // set: llama.cpp, on `gpus` (at most one) or on the host (cpu)
  std::optional<LlamaCppDraft> llama_cpp_draft;       // llama.cpp with a draft model for speculative decoding
  std::optional<LlamaCppProjector> llama_cpp_mmproj;  // llama.cpp with a vision tower's file (--mmproj)
  bool cpu = false;                                   // llama.cpp: no GPU; the host's RAM is the budget
  std::optional<Bytes> host_memory;                   // llama.cpp with cpu: the host's budget when known
  std::optional<PlacementPolicy> device_map;          // set: accelerate device_map placement over `gpus`
  std::vector<GpuSpec> gpus;                          // device_map: the GPUs in order; otherwise at most one, the GPU
                                                      //   every device is (required for vLLM, optional otherwise)
  std::vector<Bytes> max_memory;                      // device_map: per-GPU budgets (accelerate max_memory);
                                                      //   empty = each GPU's memory less the CUDA context
  std::optional<Bytes> cpu_memory;                    // device_map: host RAM for what does not fit; unset = unlimited
};

// Returns the memory each device role holds when `workload` runs on `spec` laid out as
// `options` asks:
// - training: estimate_parallel_training (Megatron t x p x d, ZeRO, FSDP, offload);
// - inference, generation, extraction, streaming_extraction or weights with t > 1: each
//   tensor-parallel rank runs the workload on its shard (tensor_parallel_shard, vLLM's
//   vocabulary padding and KV-head replication);
// - vllm: weights / t, the profile run's activation peak, and the KV cache vLLM allocates in
//   what gpu_memory_utilization leaves (LayoutEstimate.serving);
// - llama_cpp: the GPU's buffers for the layers -ngl offloads (weights, KV cache, compute
//   buffer) and the host's for the rest (estimate_llama_cpp), the host as its own device;
// - device_map: the units accelerate places on each GPU, with the KV cache, cached hooks and
//   working set of the layers there, and what is offloaded to the CPU.
// Devices carry the GPU they are checked against when one is given. Throws
// Error(invalid_input) naming the key for layouts that do not apply to the workload or
// cannot be built, Error(overflow).
LayoutEstimate estimate_layout(const ModelSpec& spec, const Workload& workload, const LayoutOptions& options);

}  // namespace memplan
