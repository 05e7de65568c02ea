// The architecture of a transformer: what memplan needs to count its parameters and
// size its caches. Describes an architecture, not a checkpoint.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memplan {

enum class Family { gpt2, gpt_neox, llama, mistral, mixtral, qwen2, gemma, phi, phi3, opt, falcon, bert };
enum class MlpKind { plain, gated };  // plain: up, down; gated: gate, up, down
enum class Positional { learned, rotary, alibi, none };
enum class NormKind { layernorm, rmsnorm };  // layernorm has weight and bias; rmsnorm weight only
enum class LmHead { tied, untied, none };    // tied shares the token embedding's matrix

// Tensors as a checkpoint stores them (a .gguf file): `copies` tensors of one component, each
// holding `elements` elements in `bytes` bytes of storage type `format`. When a spec carries
// them, the weights are priced from these bytes, not from the architecture at a precision.
struct StoredTensors {
  std::string component;       // weights row: embeddings, attention, mlp, experts, router, norms, lm_head, other
  std::string format;          // the storage type as the file names it: "Q4_K", "F32"
  std::uint64_t elements = 0;  // elements of one tensor
  std::uint64_t bytes = 0;     // bytes of one tensor as stored (block scales included)
  std::uint64_t copies = 1;    // tensors of this component, format and size
};

struct ModelSpec {
  std::string name;               // e.g. "llama-2-7b"
  Family family = Family::llama;  // sets the defaults below when a file leaves them out
  std::uint64_t d_model = 0;      // hidden size
  std::uint64_t n_layers = 0;     // transformer blocks
  std::uint64_t n_heads = 0;      // query heads
  std::uint64_t n_kv_heads = 0;   // key/value heads (GQA/MQA); equals n_heads for MHA
  std::uint64_t d_head = 0;       // per-head size; usually d_model / n_heads
  std::uint64_t d_mlp = 0;        // MLP intermediate size
  MlpKind mlp = MlpKind::gated;
  std::string activation = "silu";  // informational: silu, gelu, gelu_new, relu, ...
  std::uint64_t vocab_size = 0;     // rows of the token embedding
  std::uint64_t max_seq_len = 0;    // longest context the model was built for
  Positional positional = Positional::rotary;
  std::uint64_t n_positions = 0;  // rows of a learned position table; 0 = max_seq_len
  NormKind norm = NormKind::rmsnorm;
  std::uint64_t norms_per_layer = 2;  // 1 for parallel blocks sharing an input norm
  bool parallel_block = false;        // attention and MLP both read the block input (GPT-NeoX, Falcon, Phi)
  bool final_norm = true;             // a norm after the last block
  bool embedding_norm = false;        // a norm right after the embeddings (BERT)
  std::uint64_t type_vocab_size = 0;  // token-type embedding rows (BERT: 2)
  bool pooler = false;                // BERT's pooler dense layer
  bool attn_qkv_bias = false;         // biases on the q, k, v projections
  bool attn_out_bias = false;         // bias on the attention output projection
  bool mlp_bias = false;              // biases on the MLP matrices
  LmHead lm_head = LmHead::untied;
  bool lm_head_bias = false;
  std::uint64_t experts = 0;            // MoE experts per layer; 0 = dense MLP
  std::uint64_t experts_per_token = 0;  // experts each token is routed to
  std::uint64_t sliding_window = 0;     // attention window in tokens; 0 = full attention
  // The weights as a checkpoint stores them (a .gguf: ggml types, k-quants and i-quants); empty
  // for an architecture. When set, estimate_weights and weight_allocations price these bytes
  // and the weights precision no longer applies to them; the fields above still size the
  // caches and activations.
  std::vector<StoredTensors> stored_weights;
  // How a quantised checkpoint stores stored_weights, in one line ("AWQ 4-bit, groups of 128
  // (quantization_config)"); empty when they are the file itself (a .gguf). When set, a
  // `precision` given explicitly prices the architecture at that precision instead, and says so.
  std::string stored_weights_source;
  // What importing the checkpoint assumed that every estimate should show (a quantisation
  // method memplan does not price); bind() makes each a warning of the plan.
  std::vector<std::string> import_warnings;
};

// Returns a spec holding `family`'s conventions (MLP kind, positions, norm, biases, head
// tying); the sizes are left 0 for the caller to fill.
ModelSpec family_defaults(Family family);

// Checks that a filled spec is consistent. Throws Error(invalid_input) whose key() names
// the offending field: zero sizes, n_kv_heads not dividing n_heads, experts_per_token
// outside 1..experts, a learned position table of 0 rows, and the like; Error(overflow)
// keyed at the largest size when the parameter count does not fit in 64 bits.
void validate(const ModelSpec& spec);

std::string to_string(Family value);
std::string to_string(MlpKind value);
std::string to_string(Positional value);
std::string to_string(NormKind value);
std::string to_string(LmHead value);

// Each parser accepts exactly the spellings to_string returns and throws
// Error(invalid_input, key = the field name) listing them, with a did-you-mean.
Family parse_family(std::string_view text);
MlpKind parse_mlp_kind(std::string_view text);
Positional parse_positional(std::string_view text);
NormKind parse_norm_kind(std::string_view text);
LmHead parse_lm_head(std::string_view text);

}  // namespace memplan
