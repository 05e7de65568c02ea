// Attention variants: what each implementation materialises for one attention call.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/precision.hpp"

namespace memplan {

enum class AttentionVariant {
  eager,                  // scores and probabilities, B*H*N*M each (PyTorch matmul + softmax)
  sdpa,                   // flash / memory-efficient SDPA: output plus the fp32 log-sum-exp
  chunked,                // queries in chunks of C: C*M scores and probabilities at a time
  linear,                 // bidirectional linear attention: B*H*D*D state
  causal_linear_naive,    // cumsum over outer products: B*H*N*D*D, twice
  causal_linear_chunked,  // per-chunk state plus C*C intra-chunk scores
  recurrent,              // one token at a time: B*H*D*D state
};

std::string to_string(AttentionVariant variant);
// Throws Error(invalid_input, key "attention") listing the accepted names.
AttentionVariant parse_attention_variant(std::string_view text);
std::vector<AttentionVariant> all_attention_variants();

struct AttentionShape {
  std::uint64_t batch = 1;             // B
  std::uint64_t heads = 1;             // H, query heads
  std::uint64_t seq = 1;               // N, query positions
  std::uint64_t kv_seq = 0;            // M, key positions; 0 = seq
  std::uint64_t head_dim = 64;         // D
  Precision dtype = precisions::fp16;  // element type of q, k, v and what is materialised
  std::uint64_t chunk = 512;           // C for the chunked variants
  bool include_inputs = true;          // count q, k, v (3*B*H*N*D) as in a standalone call
  bool softmax_fp32 = false;           // eager: softmax computed in fp32 (Hugging Face eager does)
  // With softmax_fp32 at 16 bits, what else is alive at the softmax: the result's cast back to
  // dtype (Hugging Face eager: softmax(scores, dtype=float32).to(dtype)), or, when set, an
  // fp32 copy of the scores (T5: softmax(scores.float()).type_as(scores), the copy freed
  // before the cast).
  bool softmax_of_fp32_copy = false;
};

// Returns a Breakdown with one component, "attention", whose detail lists every tensor
// the variant holds at its peak (they are all alive at once in the reference
// implementations in docs/estimators.md). Throws Error(invalid_input) on zero sizes,
// Error(overflow).
Breakdown estimate_attention(AttentionVariant variant, const AttentionShape& shape);
// Returns estimate_attention(variant, shape).total() without building the breakdown (no
// strings: for callers estimating in a loop). Throws as estimate_attention.
Bytes attention_bytes(AttentionVariant variant, const AttentionShape& shape);
// Returns the bytes of each tensor estimate_attention lists, in its order, without the rows.
// Throws as estimate_attention.
std::vector<std::uint64_t> attention_tensor_bytes(AttentionVariant variant, const AttentionShape& shape);

// Returns the "theoretical memory" of the attention profiling notebook, computed its
// way for comparison: inputs 3*B*H*N*D plus one B*H*N*N matrix (standard_peak), one
// B*H*D*D state (linear_bidir_peak) or one B*H*N*D*D cumulative state (linear_causal_peak).
// Its prose quotes 2 MB and 17 GB for the last two at B=4, H=8, N=8192, D=64; its own
// formulas give 0.26 MB and 2.15 GB (docs/estimators.md). Throws as estimate_attention.
Breakdown notebook_attention_theory(const AttentionShape& shape);

}  // namespace memplan
