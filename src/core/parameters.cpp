#include "memplan/core/parameters.hpp"

#include "memplan/core/bytes.hpp"

namespace memplan {

namespace {

void add_norm(std::vector<TensorGroup>& out, const ModelSpec& s, const char* component, const char* weight,
              const char* bias, std::uint64_t copies) {
  if (copies == 0) return;
  out.push_back({component, weight, s.d_model, 1, copies, TensorRole::norm});
  if (s.norm == NormKind::layernorm) out.push_back({component, bias, s.d_model, 1, copies, TensorRole::norm});
}

// A linear layer in -> out, `copies` times, with an optional bias.
void add_linear(std::vector<TensorGroup>& out, const char* component, const char* name, const char* bias_name,
                std::uint64_t in, std::uint64_t out_features, std::uint64_t copies, bool bias) {
  out.push_back({component, name, out_features, in, copies, TensorRole::linear});
  if (bias) out.push_back({component, bias_name, out_features, 1, copies, TensorRole::bias});
}

}  // namespace

std::vector<TensorGroup> model_tensors(const ModelSpec& s) {
  std::vector<TensorGroup> out;
  out.reserve(32);  // the most groups a model has (a biased MoE with every norm is under 30): one allocation
  const std::uint64_t layers = s.n_layers;
  const std::uint64_t q_width = checked_mul(s.n_heads, s.d_head, "n_heads * d_head");
  const std::uint64_t kv_width = checked_mul(s.n_kv_heads, s.d_head, "n_kv_heads * d_head");

  out.push_back({"embeddings", "token_embedding", s.vocab_size, s.d_model, 1, TensorRole::embedding});
  if (s.positional == Positional::learned) {
    const std::uint64_t rows = s.n_positions != 0 ? s.n_positions : s.max_seq_len;
    out.push_back({"embeddings", "position_embedding", rows, s.d_model, 1, TensorRole::embedding});
  }
  if (s.type_vocab_size > 0) {
    out.push_back({"embeddings", "token_type_embedding", s.type_vocab_size, s.d_model, 1, TensorRole::embedding});
  }
  if (s.embedding_norm) add_norm(out, s, "embeddings", "embedding_norm.weight", "embedding_norm.bias", 1);

  add_linear(out, "attention", "q", "q.bias", s.d_model, q_width, layers, s.attn_qkv_bias);
  add_linear(out, "attention", "k", "k.bias", s.d_model, kv_width, layers, s.attn_qkv_bias);
  add_linear(out, "attention", "v", "v.bias", s.d_model, kv_width, layers, s.attn_qkv_bias);
  add_linear(out, "attention", "o", "o.bias", q_width, s.d_model, layers, s.attn_out_bias);

  const bool moe = s.experts > 0;
  const char* mlp_component = moe ? "experts" : "mlp";
  const std::uint64_t mlp_copies = moe ? checked_mul(layers, s.experts, "n_layers * experts") : layers;
  if (s.mlp == MlpKind::gated)
    add_linear(out, mlp_component, "gate", "gate.bias", s.d_model, s.d_mlp, mlp_copies, s.mlp_bias);
  add_linear(out, mlp_component, "up", "up.bias", s.d_model, s.d_mlp, mlp_copies, s.mlp_bias);
  add_linear(out, mlp_component, "down", "down.bias", s.d_mlp, s.d_model, mlp_copies, s.mlp_bias);
  if (moe) out.push_back({"router", "router", s.experts, s.d_model, layers, TensorRole::router});

  add_norm(out, s, "norms", "layer_norm.weight", "layer_norm.bias",
           checked_mul(layers, s.norms_per_layer, "n_layers * norms_per_layer"));
  if (s.final_norm) add_norm(out, s, "norms", "final_norm.weight", "final_norm.bias", 1);

  if (s.lm_head == LmHead::untied) {
    out.push_back({"lm_head", "lm_head", s.vocab_size, s.d_model, 1, TensorRole::lm_head});
  }
  if (s.lm_head != LmHead::none && s.lm_head_bias) {
    out.push_back({"lm_head", "lm_head.bias", s.vocab_size, 1, 1, TensorRole::bias});
  }
  if (s.pooler) add_linear(out, "pooler", "pooler", "pooler.bias", s.d_model, s.d_model, 1, true);
  return out;
}

std::uint64_t group_parameters(const TensorGroup& g) {
  return checked_mul(g.copies, checked_mul(g.rows, g.cols, "tensor elements"), "parameters of", g.name);
}

std::vector<ComponentParams> parameters_by_component(const ModelSpec& spec) {
  std::vector<ComponentParams> out;
  for (const TensorGroup& g : model_tensors(spec)) {
    if (out.empty() || out.back().component != g.component) out.push_back({std::string(g.component), 0});
    out.back().params = checked_add(out.back().params, group_parameters(g), "parameters of", g.component);
  }
  return out;
}

std::uint64_t count_parameters(const ModelSpec& spec) {
  std::uint64_t total = 0;
  for (const ComponentParams& c : parameters_by_component(spec)) {
    total = checked_add(total, c.params, "total parameters");
  }
  return total;
}

}  // namespace memplan
