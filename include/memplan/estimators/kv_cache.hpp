// KV cache: the keys and values a decoder keeps for every token it has seen.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/core/precision.hpp"
#include "memplan/core/tensor_run.hpp"

namespace memplan {

// What a latent-attention layer keeps per token. latent: the compressed latent and the
// shared rotary key, kv_lora_rank + qk_rope_head_dim elements (vLLM, SGLang, DeepSeek's own
// inference code, transformers since huggingface/transformers#47761: 5.17 measured it so);
// decompressed: keys of n_heads x (qk_nope_head_dim + qk_rope_head_dim) and values of
// n_heads x v_head_dim (transformers' cache before that change).
enum class MlaCache { latent, decompressed };

std::string to_string(MlaCache value);
// Accepts "latent" and "decompressed"; throws Error(invalid_input, key "mla_cache") listing them.
MlaCache parse_mla_cache(std::string_view text);

struct KvCacheOptions {
  std::uint64_t batch = 1;                 // sequences held at once
  std::uint64_t tokens = 2048;             // tokens per sequence: prompt + generated
  Precision precision = precisions::fp16;  // cache dtype: fp16, bf16, fp8, int8 (row scales), int4-gN
  std::uint64_t page_tokens = 0;           // paged allocation (vLLM blocks of N tokens); 0 = contiguous
  bool honor_sliding_window = true;        // cap sliding and chunked layers at their window (vLLM, HF's caches)
  // transformers' sliding layers keep a slice of the prompt's keys and values after a forward
  // over it, and the slice holds the whole prompt's storage until a decode step replaces it.
  bool sliding_keeps_prompt = false;
  MlaCache mla_cache = MlaCache::latent;         // latent-attention layers' convention
  Precision state_precision = precisions::fp16;  // state-space layers' states: the model's dtype
  std::uint64_t cross_tokens = 0;                // an encoder-decoder's source positions its cross-attention keeps
};

// Returns a Breakdown with one component, "kv_cache". Each layer keeps keys and values of
// n_kv_heads x d_head x tokens x batch elements at `precision`: a full or NoPE layer every
// token, a sliding layer at most sliding_window of them, a chunked layer at most
// attention_chunk, a latent-attention layer as `mla_cache` says; tokens are rounded up to
// whole pages; Gemma 4's full-attention layers keep their own global_kv_heads x global_d_head.
// Quantised caches carry one scale per (token, head) row, as a matrix of
// (batch*tokens*kv_heads) x d_head. Layers that all keep the same are detailed as "keys"
// and "values" (or "latent"); otherwise one detail row per kind of layer ("sliding_layers",
// "full_layers", ...). A state-space (Mamba) layer keeps a fixed-size state per sequence
// instead, whatever the tokens: a convolution state of conv channels x d_conv and an SSM
// state of d_inner x d_state, at state_precision (transformers' MambaCache and Mamba-2's
// cache); a model of state-space layers only names its one component "ssm_state", a hybrid
// details them as "ssm_state" beside its attention layers. An encoder-decoder's decoder
// layers (T5, BART, Whisper) keep, besides their own tokens' keys and values, the
// cross-attention's keys and values of cross_tokens source positions, computed once from
// the encoder's output ("cross_layers", n_heads x d_head each). Throws Error(invalid_input) for
// batch or tokens of 0, Error(overflow).
Breakdown estimate_kv_cache(const ModelSpec& spec, const KvCacheOptions& options);

// Returns the cache as allocations: per layer one keys and one values tensor, or one latent
// (the layout of Hugging Face's caches and vLLM's per-layer blocks). Throws as estimate_kv_cache.
std::vector<TensorRun> kv_cache_allocations(const ModelSpec& spec, const KvCacheOptions& options);

}  // namespace memplan
