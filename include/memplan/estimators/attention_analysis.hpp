// Attention analyses: attention patterns of every layer (entropy, attention flow), and
// QK/OV circuit analysis (QKOV), with chunking and per-layer reduction as mitigations.
#pragma once

#include <cstdint>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/model_spec.hpp"
#include "memplan/core/precision.hpp"

namespace memplan {

struct AttentionAnalysisOptions {
  Precision dtype = precisions::fp32;  // stored patterns (TensorScope: float32)
  bool all_layers = true;   // keep every layer's patterns (output_attentions=True); false: one layer at a time
  std::uint64_t chunk = 0;  // query rows per chunk (TensorScope's attention_chunk_size); 0 = the whole sequence
  bool reduce = false;      // keep per-row statistics (entropy: one value per query row) instead of patterns
  std::uint64_t heads = 0;  // heads analysed per layer; 0 = all
};

// Returns a Breakdown with component "attention_patterns": the stored patterns
// (layers x batch x heads x seq x seq, or per-row statistics when reduced) and the
// working chunk (batch x heads x chunk x seq) a chunked computation holds. The forward
// pass that produces them (eager attention) is the caller's. Throws Error(invalid_input)
// on zero sizes or heads > n_heads, Error(overflow).
Breakdown estimate_attention_patterns(const ModelSpec& spec, std::uint64_t batch, std::uint64_t seq,
                                      const AttentionAnalysisOptions& options);

// Returns a Breakdown with component "qkov_circuits": the dense QK (W_Q W_K^T) and OV
// (W_V W_O) circuits of the analysed heads of one layer at a time (2 x heads x d^2), the
// head-pair composition scores ((layers x heads)^2, 3 kinds: Q, K and V composition),
// and one layer's patterns for head-pair comparison (batch x heads x seq^2, chunked when
// chunk is set). Throws as estimate_attention_patterns.
Breakdown estimate_qkov(const ModelSpec& spec, std::uint64_t batch, std::uint64_t seq,
                        const AttentionAnalysisOptions& options);

}  // namespace memplan
