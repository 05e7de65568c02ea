#include "memplan/estimators/sae.hpp"

#include <string>
#include <utility>
#include <vector>

#include "memplan/core/error.hpp"
#include "memplan/core/rows.hpp"

namespace memplan {

std::uint64_t sae_features(const SaeOptions& o, std::uint64_t d_in) {
  if (o.features > 0) return o.features;
  if (o.expansion == 0)
    throw Error(ErrorKind::invalid_input, "the SAE expansion factor must be at least 1", "sae_expansion");
  return checked_mul(o.expansion, d_in, "SAE features");
}

Breakdown estimate_sae(const SaeOptions& o, std::uint64_t d_in_arg) {
  const std::uint64_t d = o.d_in > 0 ? o.d_in : d_in_arg;
  if (d == 0) throw Error(ErrorKind::invalid_input, "the SAE input width must be at least 1", "sae_d_in");
  const std::uint64_t F = sae_features(o, d);
  if (is_quantized(o.dtype)) {
    throw Error(ErrorKind::invalid_input, "the SAE dtype must be a float precision", "sae_dtype");
  }
  const std::string e = to_string(o.dtype);
  const std::uint64_t dF = checked_mul(d, F, "d x F");

  if (o.seed_formula) {
    if (o.seed_batch == 0 || o.seed_seq == 0) {
      throw Error(ErrorKind::invalid_input,
                  "the interpretability compute guide's formula needs batch and seq of at least 1", "batch");
    }
    // the interpretability compute guide's estimate_sae_memory, term for term.
    std::vector<Item> params{elements_row("W_enc", dF, o.dtype, "d_model x n_features"),
                             elements_row("W_dec", dF, o.dtype, "n_features x d_model"),
                             elements_row("b_enc", F, o.dtype, "n_features"),
                             elements_row("b_dec", d, o.dtype, "d_model")};
    const std::uint64_t tokens = checked_mul(o.seed_batch, o.seed_seq, "batch x seq");
    std::vector<Item> acts{elements_row("input", checked_mul(tokens, d, "input"), o.dtype, "batch x seq x d_model"),
                           elements_row("hidden", checked_mul(tokens, F, "hidden"), o.dtype,
                                        "batch x seq x n_features"),
                           elements_row("output", checked_mul(tokens, d, "output"), o.dtype, "batch x seq x d_model")};
    Item p = group_row("sae_parameters", params,
                       "W_enc + W_dec + b_enc + b_dec at " + e + " (interpretability compute guide)");
    Item a = group_row("sae_activations", acts,
                       "input + hidden + output at " + e + ", batch " + group_digits(o.seed_batch) + " x seq " +
                           group_digits(o.seed_seq) + " (interpretability compute guide)");
    Item g = bytes_row("sae_gradients", p.bytes.plus(a.bytes, "gradients"),
                       "parameters + activations (interpretability compute guide: 'roughly')");
    Item opt = bytes_row("sae_optimizer", p.bytes.times(2, "optimizer"),
                         "2 x parameters (interpretability compute guide: Adam m and v)");
    return Breakdown{{p, a, g, opt}};
  }

  if (o.batch_tokens == 0)
    throw Error(ErrorKind::invalid_input, "SAE batch tokens must be at least 1", "sae_batch_tokens");
  const std::uint64_t T = o.batch_tokens;
  std::vector<Item> params{
      elements_row("W_enc", dF, o.dtype, "d_in x F = " + group_digits(d) + " x " + group_digits(F))};
  if (!o.tied) {
    params.push_back(elements_row("W_dec", dF, o.dtype, "F x d_in = " + group_digits(F) + " x " + group_digits(d)));
  }
  params.push_back(elements_row("b_enc", F, o.dtype, "F"));
  params.push_back(elements_row("b_dec", d, o.dtype, "d_in"));
  Item p = group_row("sae_parameters", params,
                     std::string(o.tied ? "tied decoder (W_dec = W_enc^T): " : "") + "d_in = " + group_digits(d) +
                         ", F = " + group_digits(F) + " at " + e);
  Item g = p;
  g.name = "sae_gradients";
  g.formula = "one gradient per parameter at " + e;
  g.detail.clear();
  std::uint64_t states = 0;
  switch (o.optimizer) {
    case Optimizer::none:
    case Optimizer::sgd: states = 0; break;
    case Optimizer::sgd_momentum: states = 1; break;
    case Optimizer::adam:
    case Optimizer::adamw: states = 2; break;
    case Optimizer::adam_8bit:
    case Optimizer::adafactor:
    case Optimizer::paged_adamw:
    case Optimizer::paged_adamw_8bit:
      throw Error(ErrorKind::invalid_input, "the SAE estimate supports adam, adamw, sgd and sgd_momentum", "optimizer");
  }
  Breakdown out{{p, g}};
  if (states > 0) {
    out.components.push_back(bytes_row("sae_optimizer_states", p.bytes.times(states, "SAE optimizer"),
                                       group_digits(states) + " x parameters (" + to_string(o.optimizer) + ")"));
  }
  if (o.dead_feature_tracking) {
    out.components.push_back(elements_row("dead_feature_counters", checked_mul(2, F, "counters"), precisions::fp32,
                                          "act_freq_scores + n_forward_passes_since_fired: 2 x F"));
  }
  if (o.buffer_tokens > 0) {
    if (is_quantized(o.buffer_dtype)) {
      throw Error(ErrorKind::invalid_input, "the activation store dtype must be a float precision", "sae_buffer_dtype");
    }
    Item store = elements_row("activation_store", checked_mul(o.buffer_tokens, d, "store"), o.buffer_dtype,
                              "buffer tokens x d_in = " + group_digits(o.buffer_tokens) + " x " + group_digits(d));
    store.note = "activations held for shuffling between refills";
    out.components.push_back(store);
  }
  const std::uint64_t Td = checked_mul(T, d, "T x d"), TF = checked_mul(T, F, "T x F");
  std::vector<Item> acts{elements_row("input", Td, o.dtype, "T x d_in"),
                         elements_row("input_centered", Td, o.dtype, "T x d_in: x - b_dec, the encoder's input"),
                         elements_row("hidden_pre", TF, o.dtype, "T x F: x W_enc + b_enc")};
  if (o.top_k > 0) {
    const std::uint64_t Tk = checked_mul(T, o.top_k, "T x k");
    acts.push_back(elements_row("topk_values", Tk, o.dtype, "T x k"));
    acts.push_back(bytes_row("topk_indices", bits_to_bytes(Tk, 64, "bits of topk_indices"),
                             "T x k = " + group_digits(Tk) + " x int64"));
    acts.push_back(elements_row("feature_acts", TF, o.dtype, "T x F: the k values scattered into a dense tensor"));
  } else {
    acts.push_back(elements_row("feature_acts", TF, o.dtype, "T x F: ReLU(hidden_pre)"));
    acts.push_back(
        elements_row("l1_input", TF, o.dtype, "T x F: feature_acts x ||W_dec row||, the sparsity penalty's input"));
  }
  acts.push_back(elements_row("output", Td, o.dtype, "T x d_in: feature_acts W_dec + b_dec"));
  acts.push_back(elements_row("reconstruction_error", Td, o.dtype, "T x d_in: output - x, kept by the MSE"));
  out.components.push_back(group_row("sae_activations", acts,
                                     "one step of T = " + group_digits(T) + " tokens at " + e +
                                         (o.top_k > 0 ? ", top-k " + group_digits(o.top_k) : ", ReLU + L1")));
  out.components.push_back(elements_row("sae_backward_workspace", checked_mul(2, TF, "backward"), o.dtype,
                                        "gradients of feature_acts and hidden_pre: 2 x T x F"));
  return out;
}

}  // namespace memplan
