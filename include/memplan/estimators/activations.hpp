// Activation caches: the hook points a TransformerLens-style model exposes, their shapes
// and bytes, and what caching all of them or a selection costs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/core/precision.hpp"
#include "memplan/core/tensor_run.hpp"

namespace memplan {

struct Dim {
  std::string label;  // batch, pos, query_pos, key_pos, head_index, d_head, d_model, d_mlp, ...
  std::uint64_t size = 0;
};

struct Hook {
  std::string name;                    // "blocks.3.hook_resid_post"
  std::string kind;                    // the name with the block index as '*': "blocks.*.hook_resid_post"
  std::optional<std::uint64_t> layer;  // block index, for hooks inside a block
  std::vector<Dim> shape;
  std::uint32_t element_bits = 0;  // 0 = the activation dtype; 64 for integer expert indices
};

// Returns every hook point of `spec` in forward order, TransformerLens names: hook_embed,
// hook_pos_embed (learned positions), blocks.{l}.hook_resid_pre, ln1.hook_scale|normalized,
// attn.hook_q|k|v (k, v with n_kv_heads), attn.hook_rot_q|rot_k (rotary),
// attn.hook_attn_scores|pattern, attn.hook_z, ln1_post.* (sandwich norms), hook_attn_out,
// hook_resid_mid (not in parallel blocks), ln2.* (two norms per block),
// mlp.hook_pre|pre_linear (gated)|post, MoE router and per-expert hooks (MoE layers),
// ln2_post.* (sandwich norms), hook_mlp_out, hook_resid_post, ln_final.*.
// Throws Error(invalid_input, key n_layers or experts) past 1,000,000 possible hooks, and
// Error(overflow).
std::vector<Hook> model_hooks(const ModelSpec& spec, std::uint64_t batch, std::uint64_t seq,
                              std::uint64_t key_positions = 0);

// Returns "" when TransformerLens loads `spec`'s architecture, else a sentence saying it does
// not: Llama 4, StarCoder2 and Cohere2 (Command R7B: cohere with sliding-window layers), the
// architectures of memplan's families that TransformerLens lists as gaps
// (transformer_lens/tools/model_registry/data/architecture_gaps.json, 2026-07). The hooks
// are then its naming applied to the same tensors, as forward hooks on the modules see them.
std::string transformer_lens_gap(const ModelSpec& spec);

struct ActivationCacheOptions {
  std::uint64_t batch = 1;
  std::uint64_t seq = 2048;                    // positions run through the model (a chunk when streaming)
  std::uint64_t key_positions = 0;             // positions attention sees (past + chunk); 0 = seq
  Precision precision = precisions::fp16;      // dtype of the cached tensors (the model's compute dtype)
  std::vector<std::string> filter;             // hook names or globs (*, ?, {0,5,11}, {0-11}); empty = all
  std::vector<std::uint64_t> layers;           // only hooks of these blocks; empty = every block and the rest
  std::uint64_t pos_slice = 0;                 // keep only this many (query) positions; 0 = all
  bool remove_batch_dim = false;               // cache batch element 0 only
  std::optional<std::uint64_t> stop_at_layer;  // the forward pass stops before this block
  bool incl_bwd = false;                       // cache each hook's gradient too
  bool on_cpu = false;                         // cache on the host (device="cpu"): GPU bytes 0, host bytes rise
};

// Returns the hooks `options` select, in forward order. Throws Error(invalid_input,
// key "activation_cache_filter") when a filter entry matches no hook, naming the closest.
std::vector<Hook> selected_hooks(const ModelSpec& spec, const ActivationCacheOptions& options);

// Returns the shape one hook's cached tensor has under `options`, labelled:
// "[batch=1, pos=2048, d_model=4096]" (pos_slice and batch removal applied).
std::string hook_shape_text(const Hook& hook, const ActivationCacheOptions& options);

// Returns the bytes one hook's cached tensor takes under `options` (pos_slice, batch removal).
Bytes hook_bytes(const Hook& hook, const ActivationCacheOptions& options);

// Returns a Breakdown with component "activations" (0 bytes on the device when on_cpu),
// detailed by hook kind, and the host rows when on_cpu. When a filter, layer list or
// stop_at_layer narrows the cache, `alternatives` holds the full cache for comparison.
// Throws Error(invalid_input), Error(overflow).
Breakdown estimate_activation_cache(const ModelSpec& spec, const ActivationCacheOptions& options);

// Returns the selected hooks as allocations (one tensor per hook, and per gradient with
// incl_bwd), for the caching-allocator model. Throws as selected_hooks.
std::vector<TensorRun> activation_cache_allocations(const ModelSpec& spec, const ActivationCacheOptions& options);

// Parses a layer selection: "3", "0,5,11", "0-11", "0-3,8" (at most 1,000,000 layers).
// Throws Error(invalid_input, key "layers").
std::vector<std::uint64_t> parse_layer_selection(std::string_view text);

// True when `name` matches `pattern`: '*' any run of characters, '?' one character,
// "{a,b}" alternatives, "{0-11}" a range of integers (written without leading zeros, as
// layer numbers are). Throws Error(invalid_input, key "activation_cache_filter") when the
// comma lists multiply out to more than 1,000 alternatives (ranges are not listed), or
// more than 100 of them are globs or ranges.
bool hook_name_matches(std::string_view pattern, std::string_view name);

}  // namespace memplan
