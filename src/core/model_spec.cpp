#include "memplan/core/model_spec.hpp"

#include <array>
#include <utility>

#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/text.hpp"

namespace memplan {

namespace {

template <typename Enum, std::size_t N>
using Names = std::array<std::pair<Enum, std::string_view>, N>;

constexpr Names<Family, 12> kFamilies{{{Family::gpt2, "gpt2"},
                                       {Family::gpt_neox, "gpt-neox"},
                                       {Family::llama, "llama"},
                                       {Family::mistral, "mistral"},
                                       {Family::mixtral, "mixtral"},
                                       {Family::qwen2, "qwen2"},
                                       {Family::gemma, "gemma"},
                                       {Family::phi, "phi"},
                                       {Family::phi3, "phi3"},
                                       {Family::opt, "opt"},
                                       {Family::falcon, "falcon"},
                                       {Family::bert, "bert"}}};
constexpr Names<MlpKind, 2> kMlpKinds{{{MlpKind::plain, "plain"}, {MlpKind::gated, "gated"}}};
constexpr Names<Positional, 4> kPositionals{{{Positional::learned, "learned"},
                                             {Positional::rotary, "rotary"},
                                             {Positional::alibi, "alibi"},
                                             {Positional::none, "none"}}};
constexpr Names<NormKind, 2> kNormKinds{{{NormKind::layernorm, "layernorm"}, {NormKind::rmsnorm, "rmsnorm"}}};
constexpr Names<LmHead, 3> kLmHeads{{{LmHead::tied, "tied"}, {LmHead::untied, "untied"}, {LmHead::none, "none"}}};

template <typename Enum, std::size_t N>
std::string name_of(const Names<Enum, N>& names, Enum value) {
  for (const auto& [e, text] : names) {
    if (e == value) return std::string(text);
  }
  return "?";
}

template <typename Enum, std::size_t N>
Enum parse_name(const Names<Enum, N>& names, std::string_view text, const char* key) {
  std::vector<std::string> accepted;
  for (const auto& [e, name] : names) {
    if (name == text) return e;
    accepted.emplace_back(name);
  }
  throw Error(ErrorKind::invalid_input,
              "unknown " + std::string(key) + " '" + printable(text) + "'" + did_you_mean(text, accepted) +
                  "; accepted: " + quoted_list(accepted),
              key);
}

[[noreturn]] void invalid(const char* key, const std::string& message) {
  throw Error(ErrorKind::invalid_input, message, key);
}

void require_positive(const char* key, std::uint64_t value) {
  if (value == 0) invalid(key, std::string(key) + " must be at least 1");
}

}  // namespace

std::string to_string(Family value) { return name_of(kFamilies, value); }
std::string to_string(MlpKind value) { return name_of(kMlpKinds, value); }
std::string to_string(Positional value) { return name_of(kPositionals, value); }
std::string to_string(NormKind value) { return name_of(kNormKinds, value); }
std::string to_string(LmHead value) { return name_of(kLmHeads, value); }

Family parse_family(std::string_view text) { return parse_name(kFamilies, text, "family"); }
MlpKind parse_mlp_kind(std::string_view text) { return parse_name(kMlpKinds, text, "mlp"); }
Positional parse_positional(std::string_view text) { return parse_name(kPositionals, text, "positional"); }
NormKind parse_norm_kind(std::string_view text) { return parse_name(kNormKinds, text, "norm"); }
LmHead parse_lm_head(std::string_view text) { return parse_name(kLmHeads, text, "lm_head"); }

ModelSpec family_defaults(Family family) {
  ModelSpec s;
  s.family = family;
  switch (family) {
    case Family::gpt2:  // GPT-2: learned positions, pre-LN with biases everywhere, tied head
      s.mlp = MlpKind::plain;
      s.activation = "gelu_new";
      s.positional = Positional::learned;
      s.norm = NormKind::layernorm;
      s.attn_qkv_bias = s.attn_out_bias = s.mlp_bias = true;
      s.lm_head = LmHead::tied;
      break;
    case Family::gpt_neox:  // Pythia: rotary, LayerNorm, biases, untied embed_out, parallel residual
      s.mlp = MlpKind::plain;
      s.parallel_block = true;
      s.activation = "gelu";
      s.norm = NormKind::layernorm;
      s.attn_qkv_bias = s.attn_out_bias = s.mlp_bias = true;
      break;
    case Family::llama:
    case Family::mistral:
    case Family::mixtral:
    case Family::phi3: break;  // the struct's defaults: gated SiLU MLP, rotary, RMSNorm, no biases, untied
    case Family::qwen2:        // biases on q, k, v only
      s.attn_qkv_bias = true;
      break;
    case Family::gemma:  // tied head, GeGLU
      s.activation = "gelu_tanh";
      s.lm_head = LmHead::tied;
      break;
    case Family::phi:  // Phi-2: parallel block with one LayerNorm, biases, biased head
      s.mlp = MlpKind::plain;
      s.activation = "gelu_new";
      s.norm = NormKind::layernorm;
      s.norms_per_layer = 1;
      s.parallel_block = true;
      s.attn_qkv_bias = s.attn_out_bias = s.mlp_bias = true;
      s.lm_head_bias = true;
      break;
    case Family::opt:  // learned positions with an offset of 2 rows, ReLU, biases, tied
      s.mlp = MlpKind::plain;
      s.activation = "relu";
      s.positional = Positional::learned;
      s.norm = NormKind::layernorm;
      s.attn_qkv_bias = s.attn_out_bias = s.mlp_bias = true;
      s.lm_head = LmHead::tied;
      break;
    case Family::falcon:  // Falcon-7B: parallel block, one LayerNorm, no biases, tied
      s.mlp = MlpKind::plain;
      s.activation = "gelu";
      s.norm = NormKind::layernorm;
      s.norms_per_layer = 1;
      s.parallel_block = true;
      s.lm_head = LmHead::tied;
      break;
    case Family::bert:  // post-LN encoder: embedding LayerNorm, token types, pooler, no LM head
      s.mlp = MlpKind::plain;
      s.activation = "gelu";
      s.positional = Positional::learned;
      s.norm = NormKind::layernorm;
      s.final_norm = false;
      s.embedding_norm = true;
      s.type_vocab_size = 2;
      s.pooler = true;
      s.attn_qkv_bias = s.attn_out_bias = s.mlp_bias = true;
      s.lm_head = LmHead::none;
      break;
  }
  return s;
}

void validate(const ModelSpec& s) {
  require_positive("d_model", s.d_model);
  require_positive("n_layers", s.n_layers);
  require_positive("n_heads", s.n_heads);
  require_positive("n_kv_heads", s.n_kv_heads);
  require_positive("d_head", s.d_head);
  require_positive("d_mlp", s.d_mlp);
  require_positive("vocab_size", s.vocab_size);
  require_positive("max_seq_len", s.max_seq_len);
  if (s.n_kv_heads > s.n_heads || s.n_heads % s.n_kv_heads != 0) {
    invalid("n_kv_heads", "n_kv_heads " + std::to_string(s.n_kv_heads) + " must divide n_heads " +
                              std::to_string(s.n_heads) + " (each key/value head serves a whole group of query heads)");
  }
  if (s.lm_head_bias && s.lm_head == LmHead::none) {
    invalid("lm_head_bias", "lm_head_bias is set but lm_head is 'none'");
  }
  if (s.experts == 0 && s.experts_per_token != 0) {
    invalid("experts_per_token", "experts_per_token is " + std::to_string(s.experts_per_token) +
                                     " but the model has no experts (experts: 0)");
  }
  if (s.experts > 0 && (s.experts_per_token == 0 || s.experts_per_token > s.experts)) {
    invalid("experts_per_token", "experts_per_token must be between 1 and experts (" + std::to_string(s.experts) + ")");
  }
  if (s.n_positions != 0 && s.positional != Positional::learned) {
    invalid("n_positions",
            "n_positions sizes a learned position table, but positional is '" + to_string(s.positional) + "'");
  }

  // Sizes that are each in range can still multiply past 64 bits: say so at the largest of
  // them, so that a loader can point at its key, not only at the arithmetic.
  try {
    (void)count_parameters(s);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::overflow) throw;
    std::pair<const char*, std::uint64_t> largest{"d_model", s.d_model};
    for (const auto& size : {std::pair<const char*, std::uint64_t>{"d_mlp", s.d_mlp},
                             {"n_layers", s.n_layers},
                             {"vocab_size", s.vocab_size},
                             {"d_head", s.d_head},
                             {"n_heads", s.n_heads}}) {
      if (size.second > largest.second) largest = size;
    }
    throw Error(ErrorKind::overflow,
                std::string("the model's parameter count does not fit in 64 bits (") + e.what() + "); '" +
                    largest.first + "' " + std::to_string(largest.second) + " is the largest of its sizes",
                largest.first);
  }
}

}  // namespace memplan
