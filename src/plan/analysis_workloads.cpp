// Training and interpretability workloads: each composes the estimators of docs/estimators.md
// into the memory at its peak, and counts its floating-point work for time estimates.
#include "analysis_workloads.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/text.hpp"
#include "memplan/estimators/lanczos.hpp"
#include "memplan/estimators/overhead.hpp"

namespace memplan {

namespace {

constexpr double kModelEfficiency = 0.4;
constexpr const char* kModelEfficiencyReason =
    "model FLOPs utilisation of tuned PyTorch training and inference is typically 30-50% of dense peak";
constexpr double kSolverEfficiency = 0.1;
constexpr const char* kSolverEfficiencyReason =
    "dense symmetric eigensolvers (cuSOLVER/LAPACK syevd) reach about 5-15% of fp32 peak: half the reduction is BLAS-2";
constexpr double kGemmEfficiency = 0.5;
constexpr const char* kGemmEfficiencyReason = "large matrix products of an analysis reach about half of dense peak";

std::string n(std::uint64_t v) { return group_digits(v); }

std::uint64_t per_sample_batch(const Workload& w) { return w.analysis.micro_batch > 0 ? w.analysis.micro_batch : 1; }

}  // namespace

namespace detail {

TrainingShape shape_for(const Workload& w, std::uint64_t batch) {
  TrainingShape t;
  t.batch = batch;
  t.seq = w.seq_len;
  t.weights = w.weights;
  t.compute = compute_precision(w);
  t.dropout = w.analysis.dropout;
  switch (w.attention) {
    case AttentionVariant::sdpa: t.flash_attention = true; break;
    case AttentionVariant::eager:
      t.flash_attention = false;
      t.softmax_fp32 = true;  // Hugging Face eager: softmax(dtype=float32), then a copy in the compute dtype
      break;
    case AttentionVariant::chunked: t.flash_attention = false; break;  // autograd keeps every chunk's probabilities
    default:
      throw Error(ErrorKind::invalid_input,
                  "training and gradient analyses model --attention eager, sdpa or chunked, not " + to_string(w.attention),
                  "attention");
  }
  return t;
}

}  // namespace detail

namespace {

using detail::shape_for;

TrainingOptions gradient_pass(const Workload& w, std::vector<Item> extra, bool double_backward) {
  TrainingOptions o;
  o.optimizer = Optimizer::none;
  o.grad_precision = w.analysis.training.grad_precision;
  o.recompute = w.analysis.training.recompute;
  o.double_backward = double_backward;
  o.extra = std::move(extra);
  return o;
}

Bytes overhead_of(const Workload& w, const std::vector<TensorRun>& persistent, Bytes transient) {
  if (!w.include_overhead) return Bytes(0);
  return estimate_overhead(w.overhead, persistent, transient).total();
}

// Puts the largest phase (overhead included) into `out`, the others as alternatives.
void apply_phases(const Workload& w, TrainingEstimate te, Breakdown& out, std::vector<TensorRun>& persistent,
                  Bytes& transient) {
  persistent = te.persistent;
  std::vector<Bytes> totals;
  std::size_t peak = 0;
  for (std::size_t i = 0; i < te.phases.size(); ++i) {
    totals.push_back(te.phases[i].total().plus(overhead_of(w, persistent, te.phases[i].transient), "phase total"));
    if (totals[i] > totals[peak]) peak = i;
  }
  TrainingPhase& p = te.phases[peak];
  out.components = std::move(p.components);
  Item* noted = nullptr;
  for (Item& c : out.components) {
    if (c.name == "activations") noted = &c;
  }
  if (noted == nullptr) noted = &out.components.back();
  noted->note = "peak in phase " + p.name + ": " + p.moment + (noted->note.empty() ? "" : "; " + noted->note);
  for (std::size_t i = 0; i < te.phases.size(); ++i) {
    if (i == peak) continue;
    std::string parts;
    for (const Item& c : te.phases[i].components) parts += (parts.empty() ? "" : " + ") + c.name;
    if (w.include_overhead) parts += " + overhead";
    out.alternatives.push_back({"total", {"phase_" + te.phases[i].name, totals[i], parts, std::nullopt,
                                          "the whole plan " + te.phases[i].moment, {}}});
  }
  transient = transient.plus(p.transient, "transient bytes");
}

// The forward pass an analysis runs to get its activations: kv_cache and forward_workspace.
std::vector<Item> forward_items(const ModelSpec& s, Workload fw, std::vector<TensorRun>& persistent, Bytes& transient) {
  fw.kind = WorkloadKind::inference;
  fw.include_overhead = false;
  Breakdown f = estimate_workload(s, fw);
  std::vector<Item> items;
  for (Item& c : f.components) {
    if (c.name == "weights") continue;
    if (c.name == "kv_cache") {
      const std::uint64_t tensors = checked_mul(2, std::max<std::uint64_t>(1, s.n_layers), "KV cache tensors");
      persistent.push_back({c.bytes.count() / tensors, tensors});
    } else {
      transient = transient.plus(c.bytes, "transient bytes");
    }
    items.push_back(std::move(c));
  }
  return items;
}

void add_persistent(Breakdown& out, std::vector<TensorRun>& persistent, Item item) {
  persistent.push_back({item.bytes.count(), 1});
  out.components.push_back(std::move(item));
}

Item without_solver(Item blocks) {
  std::vector<Item> kept;
  for (Item& d : blocks.detail) {
    if (d.name != "solver_matrix" && d.name != "solver_vectors") kept.push_back(std::move(d));
  }
  blocks.detail = std::move(kept);
  blocks.bytes = Bytes(0);
  for (const Item& d : blocks.detail) blocks.bytes = blocks.bytes.plus(d.bytes, "Fisher blocks");
  blocks.formula = "accumulating: " + blocks.formula;
  return blocks;
}

FisherBlockOptions fisher_options(const ModelSpec& s, const Workload& w) {
  FisherBlockOptions o = w.analysis.fisher;
  if (o.blocks == 0) o.blocks = s.n_layers;
  if (o.block_size == 0) o.block_size = s.d_model;
  return o;
}

std::uint64_t curvature_params(const ModelSpec& s, const Workload& w) {
  const std::uint64_t all = count_parameters(s);
  const std::uint64_t n_params = w.analysis.hessian_params > 0 ? w.analysis.hessian_params : all;
  if (n_params > all) {
    throw Error(ErrorKind::invalid_input,
                "hessian_params " + n(n_params) + " exceeds the model's " + n(all) + " parameters", "hessian_params");
  }
  return n_params;
}

void compose_sae(const ModelSpec& s, const Workload& w, Breakdown& out, std::vector<TensorRun>& persistent,
                 Bytes& transient) {
  const SaeOptions& o = w.analysis.sae;
  const std::uint64_t d = o.d_in > 0 ? o.d_in : s.d_model;
  Breakdown sae = estimate_sae(o, d);
  std::vector<Item> kept, step;
  for (Item& c : sae.components) {
    const bool step_only = c.name == "sae_gradients" || c.name == "sae_activations" || c.name == "sae_backward_workspace";
    (step_only ? step : kept).push_back(std::move(c));
  }
  for (const Item& k : kept) persistent.push_back({k.bytes.count(), 1});
  // Refilling the store: the model runs up to the hooked layer (SAELens stop_at_layer), no logits.
  ModelSpec trunk = s;
  trunk.lm_head = LmHead::none;
  Workload lm = w;
  lm.batch = w.analysis.sae_store_batch;
  lm.seq_len = std::min(w.analysis.sae_context, s.max_seq_len);
  lm.kv_cache = false;
  if (lm.batch == 0 || lm.seq_len == 0) {
    throw Error(ErrorKind::invalid_input, "the SAE store's batch and context must be at least 1", "sae_context");
  }
  Bytes refill_transient;
  std::vector<TensorRun> ignored;
  std::vector<Item> refill = forward_items(trunk, lm, ignored, refill_transient);
  Item hook{"hook_activations", Bytes(0), "", std::nullopt, "the hooked activations of one store batch, before they join the store", {}};
  hook.bytes = Bytes(ceil_div(checked_mul(checked_mul(checked_mul(lm.batch, lm.seq_len, "store tokens"), d, "hook"),
                                          element_bits(compute_precision(w).format), "hook bits"),
                              8));
  hook.formula = n(lm.batch) + " prompts x " + n(lm.seq_len) + " tokens x " + n(d) + " at " + to_string(compute_precision(w));
  refill.push_back(hook);
  refill_transient = refill_transient.plus(hook.bytes, "refill");
  Bytes step_transient;
  for (const Item& i : step) step_transient = step_transient.plus(i.bytes, "SAE step");

  Bytes refill_bytes;
  for (const Item& i : refill) refill_bytes = refill_bytes.plus(i.bytes, "refill");
  const Bytes refill_total = refill_bytes.plus(overhead_of(w, persistent, refill_transient), "refill");
  const Bytes step_total = step_transient.plus(overhead_of(w, persistent, step_transient), "step");
  const bool refill_peak = refill_total > step_total;
  for (Item& k : kept) out.components.push_back(std::move(k));
  std::vector<Item>& chosen = refill_peak ? refill : step;
  const Bytes common = out.total();
  for (Item& i : chosen) out.components.push_back(std::move(i));
  out.components.back().note = std::string("peak ") +
                               (refill_peak ? "while the model refills the activation store"
                                            : "in an SAE training step (forward and backward of one batch)") +
                               (out.components.back().note.empty() ? "" : "; " + out.components.back().note);
  out.alternatives.push_back({"total", {refill_peak ? "phase_sae_step" : "phase_store_refill",
                                        common.plus(refill_peak ? step_total : refill_total, "other phase"),
                                        refill_peak ? "weights + SAE state + SAE step + overhead"
                                                    : "weights + SAE state + the model's forward + overhead",
                                        std::nullopt,
                                        refill_peak ? "the whole plan during an SAE step" : "the whole plan while refilling the store",
                                        {}}});
  transient = transient.plus(refill_peak ? refill_transient : step_transient, "transient bytes");
}

}  // namespace

namespace detail {

bool compose_analysis(const ModelSpec& s, const Workload& w, Breakdown& out, std::vector<TensorRun>& persistent,
                      Bytes& transient) {
  const AnalysisOptions& a = w.analysis;
  switch (w.kind) {
    case WorkloadKind::training:
      apply_phases(w, estimate_training_phases(s, shape_for(w, w.batch), a.training), out, persistent, transient);
      return true;
    case WorkloadKind::sae: {
      if (a.sae.seed_formula) {
        SaeOptions o = a.sae;
        o.seed_batch = w.batch;
        o.seed_seq = w.seq_len;
        out.components = estimate_sae(o, o.d_in > 0 ? o.d_in : s.d_model).components;
        out.components.front().note = "004's estimate_sae_memory as written: no model, no overhead";
        return false;
      }
      compose_sae(s, w, out, persistent, transient);
      return true;
    }
    case WorkloadKind::fisher_spectrum: {
      const Item blocks = estimate_fisher_blocks(fisher_options(s, w)).components.front();
      TrainingEstimate te = estimate_training_phases(s, shape_for(w, per_sample_batch(w)),
                                                     gradient_pass(w, {without_solver(blocks)}, false));
      TrainingPhase spectrum;
      spectrum.name = "spectrum";
      spectrum.moment = "after the gradient passes: the blocks and one block's eigendecomposition";
      spectrum.components = {te.phases.front().components.front(), blocks};
      for (const Item& d : blocks.detail) {
        if (d.name == "solver_matrix" || d.name == "solver_vectors") spectrum.transient = spectrum.transient.plus(d.bytes, "solver");
      }
      te.phases.push_back(std::move(spectrum));
      apply_phases(w, std::move(te), out, persistent, transient);
      return true;
    }
    case WorkloadKind::grouped_fisher: {
      GroupedFisherOptions o = a.grouped_fisher;
      o.samples = w.batch;
      const Item grouped = estimate_grouped_fisher(s, o).components.front();
      apply_phases(w, estimate_training_phases(s, shape_for(w, per_sample_batch(w)), gradient_pass(w, {grouped}, false)), out,
                   persistent, transient);
      return true;
    }
    case WorkloadKind::hessian:
    case WorkloadKind::full_fisher: {
      const bool hessian = w.kind == WorkloadKind::hessian;
      Breakdown h = estimate_full_curvature(curvature_params(s, w), a.curvature_dtype, hessian ? "hessian" : "fisher", s.name,
                                            a.largest_device);
      add_persistent(out, persistent, std::move(h.components.front()));
      return true;
    }
    case WorkloadKind::lanczos: {
      LanczosShape shape;
      shape.dimension = count_parameters(s);
      shape.iterations = a.lanczos.iterations;
      shape.k = a.lanczos.k;
      shape.reorthogonalize = a.lanczos.reorthogonalize;
      shape.dtype = a.lanczos.dtype;
      Item vectors = estimate_lanczos(shape).components.front();
      vectors.note = "the Hessian-vector product's own memory is the rest of this plan";
      const std::uint64_t mb = a.micro_batch > 0 ? a.micro_batch : w.batch;
      apply_phases(w, estimate_training_phases(s, shape_for(w, mb), gradient_pass(w, {vectors}, true)), out, persistent,
                   transient);
      return true;
    }
    case WorkloadKind::sample_gradients: {
      const SampleGradientOptions& o = a.sample_gradients;
      const std::uint64_t samples = o.samples > 0 ? o.samples : w.batch;
      Breakdown store = estimate_sample_gradients(s, o, w.batch);
      std::vector<Item> extra;
      for (Item& c : store.components) extra.push_back(std::move(c));
      const std::uint64_t selected = selected_parameters(s, o.layers);
      if (o.int8) {
        extra.push_back({"quantisation_buffer", Bytes(selected), n(selected) + " entries x 1 B: one gradient in int8 before it is stored",
                         std::nullopt, "", {}});
      }
      std::uint64_t mb = per_sample_batch(w);
      if (o.vectorized) {
        mb = samples;
        const Precision g = a.training.grad_precision.value_or(w.weights.precision);
        extra.push_back({"per_sample_raw_gradients",
                         Bytes(ceil_div(checked_mul(checked_mul(samples, selected, "vmap gradients"), element_bits(g.format), "bits"), 8)),
                         n(samples) + " samples x " + n(selected) + " x " + to_string(g) + ": torch.func.vmap's per-sample gradients",
                         std::nullopt, "all of the batch's raw gradients exist before compression", {}});
      }
      apply_phases(w, estimate_training_phases(s, shape_for(w, mb), gradient_pass(w, std::move(extra), false)), out, persistent,
                   transient);
      for (Item& h : store.host) out.host.push_back(std::move(h));
      return true;
    }
    case WorkloadKind::tracin: {
      const Item tracin = estimate_tracin(s, a.tracin, a.sample_gradients, w.batch).components.front();
      apply_phases(w, estimate_training_phases(s, shape_for(w, per_sample_batch(w)), gradient_pass(w, {tracin}, false)), out,
                   persistent, transient);
      return true;
    }
    case WorkloadKind::attention_patterns:
    case WorkloadKind::qkov: {
      Workload fw = w;
      fw.attention = a.attention.chunk > 0 ? AttentionVariant::chunked : AttentionVariant::eager;
      if (a.attention.chunk > 0) fw.attention_chunk = a.attention.chunk;
      for (Item& i : forward_items(s, fw, persistent, transient)) out.components.push_back(std::move(i));
      Breakdown b = w.kind == WorkloadKind::qkov ? estimate_qkov(s, w.batch, w.seq_len, a.attention)
                                                 : estimate_attention_patterns(s, w.batch, w.seq_len, a.attention);
      add_persistent(out, persistent, std::move(b.components.front()));
      if (w.kind == WorkloadKind::attention_patterns && !a.attention.reduce) {
        AttentionAnalysisOptions reduced = a.attention;
        reduced.reduce = true;
        if (reduced.chunk == 0) reduced.chunk = std::min<std::uint64_t>(512, w.seq_len);
        Item r = estimate_attention_patterns(s, w.batch, w.seq_len, reduced).components.front();
        r.name = "attention_patterns_reduced";
        r.note = "entropy per row, " + std::to_string(reduced.chunk) + " query rows at a time (--attention-reduce)";
        r.detail.clear();
        out.alternatives.push_back({"attention_patterns", r});
      }
      return true;
    }
    case WorkloadKind::embedding_singularities:
      add_persistent(out, persistent, std::move(estimate_embedding_singularities(s, a.representation).components.front()));
      return true;
    case WorkloadKind::fiber_bundle:
    case WorkloadKind::superposition:
    case WorkloadKind::cka: {
      for (Item& i : forward_items(s, w, persistent, transient)) out.components.push_back(std::move(i));
      Breakdown b = w.kind == WorkloadKind::fiber_bundle    ? estimate_fiber_bundle(s, a.representation)
                    : w.kind == WorkloadKind::superposition ? estimate_superposition(s, a.representation)
                                                            : estimate_cka(s, a.representation);
      add_persistent(out, persistent, std::move(b.components.front()));
      for (Alternative& alt : b.alternatives) out.alternatives.push_back(std::move(alt));
      return true;
    }
    default: break;
  }
  throw Error(ErrorKind::internal, "workload " + to_string(w.kind) + " is not an analysis");
}

}  // namespace detail

// ------------------------------------------------------------------ time estimates

namespace {

Work model_work(const std::string& name, double flops, const Workload& w, std::string formula) {
  Work work;
  work.name = name;
  work.flops = flops;
  work.format = compute_precision(w).format;
  work.efficiency = kModelEfficiency;
  work.efficiency_reason = kModelEfficiencyReason;
  work.formula = std::move(formula);
  return work;
}

Work solver_work(const std::string& name, double flops, const Precision& dtype, std::string formula) {
  Work work;
  work.name = name;
  work.flops = flops;
  work.format = dtype.format;
  work.efficiency = kSolverEfficiency;
  work.efficiency_reason = kSolverEfficiencyReason;
  work.formula = std::move(formula);
  return work;
}

Work gemm_work(const std::string& name, double flops, const Precision& dtype, std::string formula) {
  Work work = solver_work(name, flops, dtype, std::move(formula));
  work.efficiency = kGemmEfficiency;
  work.efficiency_reason = kGemmEfficiencyReason;
  return work;
}

double d(std::uint64_t v) { return static_cast<double>(v); }

// Attention FLOPs per token of a forward pass: 4 x layers x seq x heads x d_head.
double attention_per_token(const ModelSpec& s, std::uint64_t seq) { return 4.0 * d(s.n_layers) * d(seq) * d(s.n_heads) * d(s.d_head); }

// FLOPs of forward + backward over batch x seq tokens with `trainable` parameters getting
// weight gradients: forward T(2P + A), input gradients T(2P + 2A), weight gradients 2 T P_trainable.
double gradient_pass_flops(const ModelSpec& s, std::uint64_t batch, std::uint64_t seq, double trainable, Recompute r) {
  const double T = d(batch) * d(seq), P = matmul_parameters(s), A = attention_per_token(s, seq);
  double flops = T * (2 * P + A) + T * (2 * P + 2 * A) + 2 * T * trainable;
  if (r == Recompute::full) flops += T * (2 * P + A);
  if (r == Recompute::selective) flops += T * A;
  return flops;
}

std::string pass_text(std::uint64_t batch, std::uint64_t seq) {
  return "forward + backward of " + n(batch) + " x " + n(seq) + " tokens: T(6P + 3A), P = matmul params, A = 4 L s h";
}

}  // namespace

std::vector<Work> workload_work(const ModelSpec& s, const Workload& w) {
  const AnalysisOptions& a = w.analysis;
  const std::uint64_t B = w.batch, S = w.seq_len;
  const double P = matmul_parameters(s);
  const double params = d(count_parameters(s));
  std::vector<Work> parts;
  const auto forward = [&](std::uint64_t batch, std::uint64_t seq, const std::string& why) {
    parts.push_back(model_work("forward", forward_flops(s, batch, seq), w,
                               why + ": " + n(batch) + " x " + n(seq) + " tokens x (2P + 4 L s h), P = " + flops_text(P)));
  };
  const auto per_sample_passes = [&](std::uint64_t samples, const std::string& why) {
    const std::uint64_t mb = per_sample_batch(w);
    const double passes = std::ceil(d(samples) / d(mb));
    parts.push_back(model_work("gradient_passes", passes * gradient_pass_flops(s, mb, S, P, a.training.recompute), w,
                               n(static_cast<std::uint64_t>(passes)) + " x " + pass_text(mb, S) + " (" + why + ")"));
  };
  switch (w.kind) {
    case WorkloadKind::weights: break;
    case WorkloadKind::inference:
    case WorkloadKind::extraction:
    case WorkloadKind::streaming_extraction: forward(B, S, "one forward pass"); break;
    case WorkloadKind::generation: {
      forward(B, S, "prefill");
      const double ctx = d(S) + d(w.new_tokens) / 2;
      parts.push_back(model_work("decode", d(B) * d(w.new_tokens) * (2 * P + 4 * d(s.n_layers) * ctx * d(s.n_heads) * d(s.d_head)),
                                 w, n(w.new_tokens) + " decode steps x " + n(B) + " sequences x (2P + 4 L ctx h)"));
      break;
    }
    case WorkloadKind::training: {
      const double trainable = a.training.lora.rank > 0 ? d(trainable_parameters(s, a.training.lora)) : P;
      const double step = d(a.training.grad_accumulation) * gradient_pass_flops(s, B, S, trainable, a.training.recompute);
      parts.push_back(model_work("training_step", step, w,
                                 n(a.training.grad_accumulation) + " micro-batch(es) x " + pass_text(B, S) +
                                     (a.training.lora.rank > 0 ? ", weight gradients for the adapters only" : "") +
                                     (a.training.recompute != Recompute::none ? ", plus the recomputation" : "")));
      Work opt = model_work("optimizer_step", 0, w, "");
      const double tr = d(trainable_parameters(s, a.training.lora));
      opt.bytes_moved = tr * 2 * (4 + 4 + 4 + 2);  // read and write: master, two states, gradient, weights
      opt.formula = "memory-bound: " + flops_text(tr) + " trainable params x ~28 B read and written";
      parts.push_back(opt);
      break;
    }
    case WorkloadKind::sae: {
      const std::uint64_t din = a.sae.d_in > 0 ? a.sae.d_in : s.d_model;
      const std::uint64_t F = sae_features(a.sae, din);
      const std::uint64_t T = a.sae.seed_formula ? B * S : a.sae.batch_tokens;
      Work sae = gemm_work("sae_step", 12.0 * d(T) * d(din) * d(F), a.sae.dtype,
                           "12 T d F: encoder and decoder forward (4 T d F) and backward (8 T d F), T = " + n(T));
      parts.push_back(sae);
      const std::uint64_t ctx = std::max<std::uint64_t>(1, std::min(a.sae_context, s.max_seq_len));
      parts.push_back(model_work("model_forward", forward_flops(s, 1, ctx) * d(T) / d(ctx), w,
                                 "the model's forward for the step's " + n(T) + " tokens (context " + n(ctx) + ")"));
      break;
    }
    case WorkloadKind::fisher_spectrum: {
      const FisherBlockOptions f = fisher_options(s, w);
      per_sample_passes(B, "one per sample");
      parts.push_back(gemm_work("outer_products", 2.0 * d(B) * d(f.blocks) * d(f.block_size) * d(f.block_size), f.dtype,
                                "2 N blocks b^2: accumulating g g^T"));
      parts.push_back(solver_work("eigendecomposition", d(f.blocks) * 4.0 / 3.0 * std::pow(d(f.block_size), 3), f.dtype,
                                  "blocks x (4/3) b^3: tridiagonal reduction (eigenvalues only), " + n(f.blocks) + " x " +
                                      n(f.block_size) + "^3"));
      break;
    }
    case WorkloadKind::grouped_fisher: {
      per_sample_passes(B, "one per sample");
      Work squares = model_work("squared_sums", 2.0 * d(B) * params, w, "2 N n: square and sum each gradient into its group");
      squares.bytes_moved = d(B) * params * 4;
      parts.push_back(squares);
      break;
    }
    case WorkloadKind::hessian:
    case WorkloadKind::full_fisher: {
      const double nn = d(curvature_params(s, w));
      parts.push_back(model_work("hessian_vector_products", nn * 2 * gradient_pass_flops(s, B, S, P, Recompute::none), w,
                                 "n columns x one Hessian-vector product (2 x a gradient pass)"));
      parts.push_back(solver_work("eigendecomposition", 4.0 / 3.0 * nn * nn * nn, a.curvature_dtype, "(4/3) n^3"));
      break;
    }
    case WorkloadKind::lanczos: {
      const std::uint64_t mb = a.micro_batch > 0 ? a.micro_batch : B;
      const double chunks = std::ceil(d(B) / d(mb));
      const double m = d(a.lanczos.iterations);
      parts.push_back(model_work("hessian_vector_products", m * chunks * 2 * gradient_pass_flops(s, mb, S, P, a.training.recompute), w,
                                 n(a.lanczos.iterations) + " iterations x one Hessian-vector product over the batch (2 x " +
                                     pass_text(mb, S) + ")"));
      Work orth = solver_work("orthogonalisation", a.lanczos.reorthogonalize ? 2 * m * m * params : 10 * m * params, a.lanczos.dtype,
                              a.lanczos.reorthogonalize ? "2 m^2 n: each step against every earlier vector"
                                                        : "10 m n: the three-term recurrence");
      orth.bytes_moved = (a.lanczos.reorthogonalize ? m * m : 3 * m) * params * element_bits(a.lanczos.dtype.format) / 8;
      parts.push_back(orth);
      break;
    }
    case WorkloadKind::sample_gradients: {
      const SampleGradientOptions& o = a.sample_gradients;
      const std::uint64_t samples = o.samples > 0 ? o.samples : B;
      const double sel = d(selected_parameters(s, o.layers));
      per_sample_passes(samples, "one per sample");
      Work conflicts = gemm_work("pairwise_conflicts", 2.0 * d(samples) * d(samples) * sel, o.dtype,
                                 "2 N^2 n: cosine similarity of every pair of gradients");
      parts.push_back(conflicts);
      if (o.zlib_ratio > 0) {
        Work z = model_work("zlib", 0, w, "zlib on the host over every stored gradient");
        z.host_bytes = d(samples) * sel * (o.int8 ? 1 : element_bits(o.dtype.format) / 8) * o.kept_fraction;
        z.host_bytes_per_second = a.zlib_bytes_per_second;
        parts.push_back(z);
      }
      break;
    }
    case WorkloadKind::tracin: {
      const TracinOptions& t = a.tracin;
      const std::uint64_t train = t.train_samples > 0 ? t.train_samples : B;
      const double sel = d(selected_parameters(s, a.sample_gradients.layers));
      per_sample_passes(t.checkpoints * (train + t.test_samples), "checkpoints x (train + test samples)");
      const double dims = t.projection > 0 ? d(t.projection) : sel;
      parts.push_back(gemm_work("influence_dots", 2.0 * d(t.checkpoints) * d(train) * d(t.test_samples) * dims, precisions::fp32,
                                "2 C N M D: gradient dot products"));
      if (t.projection > 0) {
        parts.push_back(gemm_work("projection", 2.0 * d(t.checkpoints) * d(train + t.test_samples) * sel * d(t.projection),
                                  precisions::fp32, "2 C (N + M) n k: random projection of every gradient"));
      }
      break;
    }
    case WorkloadKind::attention_patterns: {
      forward(B, S, "one forward pass with eager attention");
      const double cells = d(s.n_layers) * d(B) * d(s.n_heads) * d(S) * d(S);
      Work stats = gemm_work("pattern_statistics", 4.0 * cells, a.attention.dtype, "4 flops per pattern cell (entropy)");
      stats.bytes_moved = cells * element_bits(a.attention.dtype.format) / 8 * 2;
      parts.push_back(stats);
      break;
    }
    case WorkloadKind::qkov: {
      forward(B, S, "one forward pass with eager attention");
      const double heads = d(s.n_layers) * d(a.attention.heads > 0 ? a.attention.heads : s.n_heads);
      parts.push_back(gemm_work("circuits", heads * 2 * 2 * d(s.d_model) * d(s.d_model) * d(s.d_head), a.attention.dtype,
                                "L h x 2 circuits x 2 d^2 d_head"));
      parts.push_back(gemm_work("composition", 3 * heads * heads * 2 * d(s.d_model) * d(s.d_head) * d(s.d_head), a.attention.dtype,
                                "3 (L h)^2 x 2 d d_head^2 (factored)"));
      parts.push_back(gemm_work("pattern_pairs", d(s.n_layers) * d(s.n_heads) * d(s.n_heads) * d(B) * d(S) * d(S) * 2,
                                a.attention.dtype, "L h^2 b s^2 x 2: head-pair pattern comparison"));
      break;
    }
    case WorkloadKind::embedding_singularities: {
      const RepresentationOptions& r = a.representation;
      const double V = d(s.vocab_size), k = d(std::min(r.neighbours, s.vocab_size)), dm = d(s.d_model);
      const double local = std::min(k, dm);
      parts.push_back(gemm_work("distances", 2 * V * V * dm, r.dtype, "2 V^2 d: every token against every token"));
      parts.push_back(solver_work("local_pca", V * (2 * local * local * dm + 4.0 / 3.0 * local * local * local), r.dtype,
                                  "V x (2 k^2 d + (4/3) k^3): each neighbourhood's Gram and spectrum"));
      break;
    }
    case WorkloadKind::fiber_bundle: {
      const RepresentationOptions& r = a.representation;
      const double N = d(r.samples), dm = d(s.d_model), k = d(std::min(r.neighbours, r.samples));
      forward(B, S, "the forward pass producing the activations");
      parts.push_back(solver_work("local_spectra", N * (2 * k * dm * dm + 4.0 / 3.0 * dm * dm * dm) + 2 * N * N * dm, r.dtype,
                                  "N x (2 k d^2 + (4/3) d^3) + 2 N^2 d: O(N d^3)"));
      break;
    }
    case WorkloadKind::superposition: {
      const RepresentationOptions& r = a.representation;
      const double N = d(r.samples), dm = d(s.d_model), F = d(r.features > 0 ? r.features : 8 * s.d_model);
      forward(B, S, "the forward pass producing the activations");
      parts.push_back(gemm_work("feature_activations", 2 * N * F * dm + (r.overlap ? 2 * F * F * dm : 0), r.dtype,
                                "2 N F d" + std::string(r.overlap ? " + 2 F^2 d" : "")));
      break;
    }
    case WorkloadKind::cka: {
      const RepresentationOptions& r = a.representation;
      const double N = d(r.samples), dm = d(s.d_model), reps = d(s.n_layers + 1);
      forward(B, S, "the forward pass producing the activations");
      const double gram = reps * 2 * N * N * dm + reps * reps * 2 * N * N;
      const double feature = reps * reps * 3 * 2 * N * dm * dm;
      parts.push_back(gemm_work("cka", std::min(gram, feature), r.dtype,
                                gram <= feature ? "(L+1) 2 N^2 d + (L+1)^2 2 N^2: Gram form" : "(L+1)^2 x 3 x 2 N d^2: feature form"));
      break;
    }
  }
  return parts;
}

std::optional<TimeEstimate> estimate_workload_time(const ModelSpec& spec, const Workload& workload, const GpuSpec& gpu) {
  const std::vector<Work> parts = workload_work(spec, workload);
  // A probed device carries no datasheet throughput: no time, rather than an error.
  const bool rated = std::any_of(gpu.dense_tflops.begin(), gpu.dense_tflops.end(), [](const auto& f) { return f.second > 0; });
  if (parts.empty() || !rated) return std::nullopt;
  return estimate_time(parts, gpu, workload.analysis.efficiency);
}

}  // namespace memplan
