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

#include "forward_workloads.hpp"

namespace memplan::detail {

namespace {

constexpr double kSolverEfficiency = 0.1;
constexpr const char* kSolverEfficiencyReason =
    "dense symmetric eigensolvers (cuSOLVER/LAPACK syevd) reach about 5-15% of fp32 peak: half the reduction is BLAS-2";
constexpr double kGemmEfficiency = 0.5;
constexpr const char* kGemmEfficiencyReason = "large matrix products of an analysis reach about half of dense peak";

double d(std::uint64_t v) { return static_cast<double>(v); }

std::uint64_t per_sample_batch(const Workload& w) { return w.analysis.micro_batch > 0 ? w.analysis.micro_batch : 1; }

// ------------------------------------------------------------------ memory: shared steps

// A gradient pass (no optimizer) holding `extra` through every phase.
TrainingOptions gradient_pass(const Workload& w, std::vector<Item> extra) {
  TrainingOptions o;
  o.optimizer = Optimizer::none;
  o.grad_precision = w.analysis.training.grad_precision;
  o.recompute = w.analysis.training.recompute;
  o.extra = std::move(extra);
  return o;
}

// A Hessian-vector product: a gradient pass with create_graph, then a second backward.
TrainingOptions double_backward_pass(const Workload& w, std::vector<Item> extra) {
  TrainingOptions o = gradient_pass(w, std::move(extra));
  o.double_backward = true;
  return o;
}

// Composes the phases of a training step (or gradient pass) as the peaks: each phase lists
// every row (the weights included) and the estimate its kept allocations.
void add_phases(WorkloadComposer& c, TrainingEstimate te) {
  c.restart(std::move(te.persistent));
  for (Item& h : te.host) c.host(std::move(h));
  std::vector<Peak> peaks;
  for (TrainingPhase& p : te.phases) {
    peaks.push_back({p.name, std::move(p.components), p.transient, "peak in phase " + p.name + ": " + p.moment, "",
                     "the whole plan " + p.moment});
  }
  c.choose_peak(std::move(peaks));
}

// The gradient pass of an analysis over `batch` sequences, `extra` held throughout, as the peaks.
void add_gradient_pass(WorkloadComposer& c, const ModelSpec& s, const Workload& w, std::uint64_t batch,
                       std::vector<Item> extra) {
  add_phases(c, estimate_training_phases(s, shape_for(w, batch), gradient_pass(w, std::move(extra))));
}

Item without_solver(Item blocks) {
  std::vector<Item> kept;
  for (Item& r : blocks.detail) {
    if (r.name != "solver_matrix" && r.name != "solver_vectors") kept.push_back(std::move(r));
  }
  blocks.detail = std::move(kept);
  blocks.bytes = Bytes(0);
  for (const Item& r : blocks.detail) blocks.bytes = blocks.bytes.plus(r.bytes, "Fisher blocks");
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
                "hessian_params " + group_digits(n_params) + " exceeds the model's " + group_digits(all) +
                    " parameters",
                "hessian_params");
  }
  return n_params;
}

// ------------------------------------------------------------------ memory: sae steps

// The SAE's rows split by lifetime: its state, kept throughout (parameters, optimizer,
// store), and one training step's, freed after it.
struct SaeRows {
  std::vector<Item> state;
  std::vector<Item> step;
};

SaeRows sae_rows(const ModelSpec& s, const Workload& w) {
  const SaeOptions& o = w.analysis.sae;
  Breakdown sae = estimate_sae(o, o.d_in > 0 ? o.d_in : s.d_model);
  SaeRows rows;
  for (Item& c : sae.components) {
    const bool step_only = c.name == "sae_gradients" || c.name == "sae_activations" ||
                           c.name == "sae_backward_workspace";
    (step_only ? rows.step : rows.state).push_back(std::move(c));
  }
  return rows;
}

// Refilling the store: the model runs up to the hooked layer (SAELens stop_at_layer), no
// logits, then hands over the hooked activations of one store batch.
Peak store_refill(const ModelSpec& s, const Workload& w) {
  ModelSpec trunk = s;
  trunk.lm_head = LmHead::none;
  Workload lm = w;
  lm.batch = w.analysis.sae_store_batch;
  lm.seq_len = std::min(w.analysis.sae_context, s.max_seq_len);
  lm.kv_cache = false;
  if (lm.batch == 0 || lm.seq_len == 0) {
    throw Error(ErrorKind::invalid_input, "the SAE store's batch and context must be at least 1", "sae_context");
  }
  check_positions(trunk, lm.seq_len);
  ForwardPass forward = forward_pass(trunk, lm);
  const std::uint64_t d_in = w.analysis.sae.d_in > 0 ? w.analysis.sae.d_in : s.d_model;
  const Precision c = compute_precision(w);
  Item hook{"hook_activations",
            Bytes(0),
            "",
            std::nullopt,
            "the hooked activations of one store batch, before they join the store",
            {}};
  hook.bytes = Bytes(ceil_div(checked_mul(checked_mul(checked_mul(lm.batch, lm.seq_len, "store tokens"), d_in, "hook"),
                                          element_bits(c.format), "hook bits"),
                              8));
  hook.formula = group_digits(lm.batch) + " prompts x " + group_digits(lm.seq_len) + " tokens x " + group_digits(d_in) +
                 " at " + to_string(c);
  Peak refill{"store_refill",
              {},
              forward.workspace.bytes.plus(hook.bytes, "refill"),
              "peak while the model refills the activation store",
              "weights + SAE state + the model's forward + overhead",
              "the whole plan while refilling the store"};
  refill.components.push_back(std::move(forward.workspace));
  refill.components.push_back(std::move(hook));
  return refill;
}

// One SAE training step: forward and backward of one batch of activations.
Peak sae_step(std::vector<Item> rows) {
  Bytes bytes;
  for (const Item& i : rows) bytes = bytes.plus(i.bytes, "SAE step");
  return {"sae_step",
          std::move(rows),
          bytes,
          "peak in an SAE training step (forward and backward of one batch)",
          "weights + SAE state + SAE step + overhead",
          "the whole plan during an SAE step"};
}

// the interpretability compute guide's estimate_sae_memory as written: the SAE's rows alone, no model, no overhead.
void compose_sae_seed_formula(const ModelSpec& s, const Workload& w, WorkloadComposer& c) {
  SaeOptions o = w.analysis.sae;
  o.seed_batch = w.batch;
  o.seed_seq = w.seq_len;
  Breakdown sae = estimate_sae(o, o.d_in > 0 ? o.d_in : s.d_model);
  sae.components.front().note =
      "the interpretability compute guide's estimate_sae_memory as written: no model, no overhead";
  c.restart({});
  for (Item& i : sae.components) c.keep(std::move(i), {});
  c.omit_overhead();
}

// ------------------------------------------------------------------ memory: other steps

// The stored per-sample gradients and what producing them holds beside the gradient pass.
std::vector<Item> sample_gradient_rows(const ModelSpec& s, const Workload& w, std::vector<Item> store) {
  const SampleGradientOptions& o = w.analysis.sample_gradients;
  const std::uint64_t samples = o.samples > 0 ? o.samples : w.batch;
  const std::uint64_t selected = selected_parameters(s, o.layers);
  if (o.int8) {
    store.push_back({"quantisation_buffer",
                     Bytes(selected),
                     group_digits(selected) + " entries x 1 B: one gradient in int8 before it is stored",
                     std::nullopt,
                     "",
                     {}});
  }
  if (o.vectorized) {
    const Precision g = w.analysis.training.grad_precision.value_or(w.weights.precision);
    store.push_back(
        {"per_sample_raw_gradients",
         Bytes(ceil_div(checked_mul(checked_mul(samples, selected, "vmap gradients"), element_bits(g.format), "bits"),
                        8)),
         group_digits(samples) + " samples x " + group_digits(selected) + " x " + to_string(g) +
             ": torch.func.vmap's per-sample gradients",
         std::nullopt,
         "all of the batch's raw gradients exist before compression",
         {}});
  }
  return store;
}

// The forward pass the attention analyses read their patterns from: eager attention, or
// chunked when the analysis goes a chunk of query rows at a time.
ForwardPass pattern_forward(const ModelSpec& s, const Workload& w) {
  const AttentionAnalysisOptions& a = w.analysis.attention;
  Workload fw = w;
  fw.attention = a.chunk > 0 ? AttentionVariant::chunked : AttentionVariant::eager;
  if (a.chunk > 0) fw.attention_chunk = a.chunk;
  return forward_pass(s, fw);
}

// Per-row statistics a chunk of query rows at a time, in place of the stored patterns.
Item reduced_patterns(const ModelSpec& s, const Workload& w) {
  AttentionAnalysisOptions reduced = w.analysis.attention;
  reduced.reduce = true;
  if (reduced.chunk == 0) reduced.chunk = std::min<std::uint64_t>(512, w.seq_len);
  Item r = estimate_attention_patterns(s, w.batch, w.seq_len, reduced).components.front();
  r.name = "attention_patterns_reduced";
  r.note = "entropy per row, " + std::to_string(reduced.chunk) + " query rows at a time (`attention_reduce`)";
  r.detail.clear();
  return r;
}

// A representation analysis's own state beside the forward pass, and its what-ifs.
void add_representation(WorkloadComposer& c, Breakdown analysis) {
  c.keep(std::move(analysis.components.front()));
  for (Alternative& alt : analysis.alternatives) c.alternative(std::move(alt.replaces), std::move(alt.item));
}

void compose_full_curvature(const ModelSpec& s, const Workload& w, WorkloadComposer& c, const char* matrix) {
  const AnalysisOptions& a = w.analysis;
  Breakdown h = estimate_full_curvature(curvature_params(s, w), a.curvature_dtype, matrix, s.name, a.largest_device);
  c.keep(std::move(h.components.front()));
}

}  // namespace

TrainingShape shape_for(const Workload& w, std::uint64_t batch) {
  TrainingShape t;
  t.batch = batch;
  t.seq = w.seq_len;
  t.weights = w.weights;
  t.compute = compute_precision(w);
  t.autocast = w.mixed_precision == MixedPrecision::amp;
  t.dropout = w.analysis.dropout;
  t.expert_capacity_factor = w.analysis.expert_capacity_factor;
  switch (w.attention) {
    case AttentionVariant::sdpa: t.flash_attention = true; break;
    case AttentionVariant::eager:
      t.flash_attention = false;
      t.softmax_fp32 = true;  // Hugging Face eager: softmax(dtype=float32), then a copy in the compute dtype
      break;
    case AttentionVariant::chunked: t.flash_attention = false; break;  // autograd keeps every chunk's probabilities
    default:
      throw Error(ErrorKind::invalid_input,
                  "training and gradient analyses model `attention` eager, sdpa or chunked, not " +
                      to_string(w.attention),
                  "attention");
  }
  return t;
}

// ------------------------------------------------------------------ memory: the workloads

void compose_training(const ModelSpec& s, const Workload& w, WorkloadComposer& c) {
  TrainingShape shape = shape_for(w, w.batch);
  if (is_encoder_decoder(s)) {  // seq_len is the source; the decoder trains on target_len tokens
    shape.source = w.seq_len;
    shape.seq = w.target_len;
    if (s.positional == Positional::relative) {  // T5's attention is eager in transformers, whatever `attention` says
      shape.flash_attention = false;
      shape.softmax_fp32 = true;
    }
  }
  if (w.images == 0) return add_phases(c, estimate_training_phases(s, shape, w.analysis.training));
  shape.images = w.images;
  shape.image = image_grid(s.vision, w.image_width, w.image_height);
  TrainingEstimate te = estimate_training_phases(s, shape, w.analysis.training);
  // The frozen tower runs first, without autograd keeping anything: what the step holds
  // before its forward pass (the forward phase less its activations and loss), and the tower's pass.
  TrainingPhase vision;
  vision.name = "vision_tower";
  vision.moment = "in the frozen vision tower's pass, before the language model's forward";
  for (const Item& i : te.phases.front().components) {
    if (i.name != "activations" && i.name != "loss") vision.components.push_back(i);
  }
  Item pass = vision_pass(s, w);
  vision.transient = pass.bytes;
  vision.components.push_back(std::move(pass));
  te.phases.insert(te.phases.begin(), std::move(vision));
  add_phases(c, std::move(te));
}

void compose_sae(const ModelSpec& s, const Workload& w, WorkloadComposer& c) {
  if (w.analysis.sae.seed_formula) {
    compose_sae_seed_formula(s, w, c);
    return;
  }
  SaeRows rows = sae_rows(s, w);
  Peak refill = store_refill(s, w);
  for (Item& k : rows.state) c.keep(std::move(k));
  // The step first: it binds on a tie.
  c.choose_peak({sae_step(std::move(rows.step)), std::move(refill)});
}

void compose_fisher_spectrum(const ModelSpec& s, const Workload& w, WorkloadComposer& c) {
  const Item blocks = estimate_fisher_blocks(fisher_options(s, w)).components.front();
  TrainingEstimate te = estimate_training_phases(s, shape_for(w, per_sample_batch(w)),
                                                 gradient_pass(w, {without_solver(blocks)}));
  TrainingPhase spectrum;
  spectrum.name = "spectrum";
  spectrum.moment = "after the gradient passes: the blocks and one block's eigendecomposition";
  spectrum.components = {te.phases.front().components.front(), blocks};
  for (const Item& r : blocks.detail) {
    if (r.name == "solver_matrix" || r.name == "solver_vectors")
      spectrum.transient = spectrum.transient.plus(r.bytes, "solver");
  }
  te.phases.push_back(std::move(spectrum));
  add_phases(c, std::move(te));
}

void compose_grouped_fisher(const ModelSpec& s, const Workload& w, WorkloadComposer& c) {
  GroupedFisherOptions o = w.analysis.grouped_fisher;
  o.samples = w.batch;
  add_gradient_pass(c, s, w, per_sample_batch(w), {estimate_grouped_fisher(s, o).components.front()});
}

void compose_hessian(const ModelSpec& s, const Workload& w, WorkloadComposer& c) {
  compose_full_curvature(s, w, c, "hessian");
}

void compose_full_fisher(const ModelSpec& s, const Workload& w, WorkloadComposer& c) {
  compose_full_curvature(s, w, c, "fisher");
}

void compose_lanczos(const ModelSpec& s, const Workload& w, WorkloadComposer& c) {
  const AnalysisOptions& a = w.analysis;
  LanczosShape shape;
  shape.dimension = count_parameters(s);
  shape.iterations = a.lanczos.iterations;
  shape.k = a.lanczos.k;
  shape.reorthogonalize = a.lanczos.reorthogonalize;
  shape.dtype = a.lanczos.dtype;
  Item vectors = estimate_lanczos(shape).components.front();
  vectors.note = "the Hessian-vector product's own memory is the rest of this plan";
  const std::uint64_t mb = a.micro_batch > 0 ? a.micro_batch : w.batch;
  add_phases(c, estimate_training_phases(s, shape_for(w, mb), double_backward_pass(w, {vectors})));
}

void compose_sample_gradients(const ModelSpec& s, const Workload& w, WorkloadComposer& c) {
  const SampleGradientOptions& o = w.analysis.sample_gradients;
  Breakdown store = estimate_sample_gradients(s, o, w.batch);
  std::vector<Item> extra = sample_gradient_rows(s, w, std::move(store.components));
  // vmap computes the whole batch's gradients in one pass; otherwise one micro-batch at a time.
  const std::uint64_t mb = o.vectorized ? (o.samples > 0 ? o.samples : w.batch) : per_sample_batch(w);
  add_gradient_pass(c, s, w, mb, std::move(extra));
  for (Item& h : store.host) c.host(std::move(h));
}

void compose_tracin(const ModelSpec& s, const Workload& w, WorkloadComposer& c) {
  const AnalysisOptions& a = w.analysis;
  add_gradient_pass(c, s, w, per_sample_batch(w),
                    {estimate_tracin(s, a.tracin, a.sample_gradients, w.batch).components.front()});
}

void compose_attention_patterns(const ModelSpec& s, const Workload& w, WorkloadComposer& c) {
  const AttentionAnalysisOptions& a = w.analysis.attention;
  add_forward(c, pattern_forward(s, w));
  c.keep(std::move(estimate_attention_patterns(s, w.batch, w.seq_len, a).components.front()));
  if (!a.reduce) c.alternative("attention_patterns", reduced_patterns(s, w));
}

void compose_qkov(const ModelSpec& s, const Workload& w, WorkloadComposer& c) {
  add_forward(c, pattern_forward(s, w));
  c.keep(std::move(estimate_qkov(s, w.batch, w.seq_len, w.analysis.attention).components.front()));
}

void compose_embedding_singularities(const ModelSpec& s, const Workload& w, WorkloadComposer& c) {
  c.keep(std::move(estimate_embedding_singularities(s, w.analysis.representation).components.front()));
}

void compose_fiber_bundle(const ModelSpec& s, const Workload& w, WorkloadComposer& c) {
  add_forward(c, forward_pass(s, w));
  add_representation(c, estimate_fiber_bundle(s, w.analysis.representation));
}

void compose_superposition(const ModelSpec& s, const Workload& w, WorkloadComposer& c) {
  add_forward(c, forward_pass(s, w));
  add_representation(c, estimate_superposition(s, w.analysis.representation));
}

void compose_cka(const ModelSpec& s, const Workload& w, WorkloadComposer& c) {
  add_forward(c, forward_pass(s, w));
  add_representation(c, estimate_cka(s, w.analysis.representation));
}

// ------------------------------------------------------------------ time estimates

namespace {

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

// Attention FLOPs per token of a forward pass: 4 x attended positions x heads x d_head.
double attention_per_token(const ModelSpec& s, std::uint64_t seq) {
  return 4.0 * attended_positions(s, d(seq)) * d(s.n_heads) * d(s.d_head);
}

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
  return "forward + backward of " + group_digits(batch) + " x " + group_digits(seq) +
         " tokens: T(6P + 3A), P = matmul params, A = 4 L s h";
}

// One gradient pass per micro-batch of `samples`, every parameter getting its gradient.
Work per_sample_work(const ModelSpec& s, const Workload& w, std::uint64_t samples, const std::string& why) {
  const std::uint64_t mb = per_sample_batch(w);
  const double passes = std::ceil(d(samples) / d(mb));
  return model_work(
      "gradient_passes",
      passes * gradient_pass_flops(s, mb, w.seq_len, matmul_parameters(s), w.analysis.training.recompute), w,
      group_digits(static_cast<std::uint64_t>(passes)) + " x " + pass_text(mb, w.seq_len) + " (" + why + ")");
}

}  // namespace

std::vector<Work> training_work(const ModelSpec& s, const Workload& w) {
  const TrainingOptions& t = w.analysis.training;
  const double trainable = t.lora.rank > 0 ? d(trainable_parameters(s, t.lora)) : matmul_parameters(s);
  double step = d(t.grad_accumulation) * gradient_pass_flops(s, w.batch, w.seq_len, trainable, t.recompute);
  std::string pass_formula = pass_text(w.batch, w.seq_len);
  if (is_encoder_decoder(s)) {
    // The forward pass of both stacks, its input gradients (twice it) and the weight
    // gradients of the trainable share; a full recomputation runs the forward again.
    const double forward = encoder_decoder_forward_flops(s, w);
    const double passes = 2 + trainable / matmul_parameters(s) + (t.recompute == Recompute::full ? 1 : 0);
    step = d(t.grad_accumulation) * forward * passes;
    pass_formula = "forward + backward of " + group_digits(w.batch) + " x (" + group_digits(w.seq_len) + " source + " +
                   group_digits(w.target_len) + " target) tokens: about 3 forward passes of both stacks";
  }
  Work pass = model_work("training_step", step, w,
                         group_digits(t.grad_accumulation) + " micro-batch(es) x " + pass_formula +
                             (t.lora.rank > 0 ? ", weight gradients for the adapters only" : "") +
                             (t.recompute != Recompute::none ? ", plus the recomputation" : ""));
  Work opt = model_work("optimizer_step", 0, w, "");
  const double tr = d(trainable_parameters(s, t.lora));
  opt.bytes_moved = tr * 2 * (4 + 4 + 4 + 2);  // read and write: master, two states, gradient, weights
  opt.formula = "memory-bound: " + flops_text(tr) + " trainable params x ~28 B read and written";
  if (w.images == 0) return {pass, opt};
  Work vision = vision_work(s, w);  // the frozen tower runs forward only, once per micro-batch
  vision.flops *= d(t.grad_accumulation);
  return {vision, pass, opt};
}

std::vector<Work> sae_work(const ModelSpec& s, const Workload& w) {
  const AnalysisOptions& a = w.analysis;
  const std::uint64_t din = a.sae.d_in > 0 ? a.sae.d_in : s.d_model;
  const std::uint64_t F = sae_features(a.sae, din);
  const std::uint64_t T = a.sae.seed_formula ? w.batch * w.seq_len : a.sae.batch_tokens;
  const std::uint64_t ctx = std::max<std::uint64_t>(1, std::min(a.sae_context, s.max_seq_len));
  return {gemm_work("sae_step", 12.0 * d(T) * d(din) * d(F), a.sae.dtype,
                    "12 T d F: encoder and decoder forward (4 T d F) and backward (8 T d F), T = " + group_digits(T)),
          model_work("model_forward", forward_flops(s, 1, ctx) * d(T) / d(ctx), w,
                     "the model's forward for the step's " + group_digits(T) + " tokens (context " + group_digits(ctx) +
                         ")")};
}

std::vector<Work> fisher_spectrum_work(const ModelSpec& s, const Workload& w) {
  const FisherBlockOptions f = fisher_options(s, w);
  return {per_sample_work(s, w, w.batch, "one per sample"),
          gemm_work("outer_products", 2.0 * d(w.batch) * d(f.blocks) * d(f.block_size) * d(f.block_size), f.dtype,
                    "2 N blocks b^2: accumulating g g^T"),
          solver_work("eigendecomposition", d(f.blocks) * 4.0 / 3.0 * std::pow(d(f.block_size), 3), f.dtype,
                      "blocks x (4/3) b^3: tridiagonal reduction (eigenvalues only), " + group_digits(f.blocks) +
                          " x " + group_digits(f.block_size) + "^3")};
}

std::vector<Work> grouped_fisher_work(const ModelSpec& s, const Workload& w) {
  const double params = d(count_parameters(s));
  Work squares = model_work("squared_sums", 2.0 * d(w.batch) * params, w,
                            "2 N n: square and sum each gradient into its group");
  squares.bytes_moved = d(w.batch) * params * 4;
  return {per_sample_work(s, w, w.batch, "one per sample"), squares};
}

std::vector<Work> full_curvature_work(const ModelSpec& s, const Workload& w) {
  const double nn = d(curvature_params(s, w));
  return {model_work("hessian_vector_products",
                     nn * 2 * gradient_pass_flops(s, w.batch, w.seq_len, matmul_parameters(s), Recompute::none), w,
                     "n columns x one Hessian-vector product (2 x a gradient pass)"),
          solver_work("eigendecomposition", 4.0 / 3.0 * nn * nn * nn, w.analysis.curvature_dtype, "(4/3) n^3")};
}

std::vector<Work> lanczos_work(const ModelSpec& s, const Workload& w) {
  const AnalysisOptions& a = w.analysis;
  const double params = d(count_parameters(s));
  const std::uint64_t mb = a.micro_batch > 0 ? a.micro_batch : w.batch;
  const double chunks = std::ceil(d(w.batch) / d(mb));
  const double m = d(a.lanczos.iterations);
  Work products = model_work(
      "hessian_vector_products",
      m * chunks * 2 * gradient_pass_flops(s, mb, w.seq_len, matmul_parameters(s), a.training.recompute), w,
      group_digits(a.lanczos.iterations) + " iterations x one Hessian-vector product over the batch (2 x " +
          pass_text(mb, w.seq_len) + ")");
  Work orth = solver_work("orthogonalisation", a.lanczos.reorthogonalize ? 2 * m * m * params : 10 * m * params,
                          a.lanczos.dtype,
                          a.lanczos.reorthogonalize ? "2 m^2 n: each step against every earlier vector"
                                                    : "10 m n: the three-term recurrence");
  orth.bytes_moved = (a.lanczos.reorthogonalize ? m * m : 3 * m) * params * element_bits(a.lanczos.dtype.format) / 8;
  return {products, orth};
}

std::vector<Work> sample_gradients_work(const ModelSpec& s, const Workload& w) {
  const AnalysisOptions& a = w.analysis;
  const SampleGradientOptions& o = a.sample_gradients;
  const std::uint64_t samples = o.samples > 0 ? o.samples : w.batch;
  const double sel = d(selected_parameters(s, o.layers));
  std::vector<Work> parts = {per_sample_work(s, w, samples, "one per sample"),
                             gemm_work("pairwise_conflicts", 2.0 * d(samples) * d(samples) * sel, o.dtype,
                                       "2 N^2 n: cosine similarity of every pair of gradients")};
  if (o.zlib_ratio > 0) {
    Work z = model_work("zlib", 0, w, "zlib on the host over every stored gradient");
    z.host_bytes = d(samples) * sel * (o.int8 ? 1 : element_bits(o.dtype.format) / 8) * o.kept_fraction;
    z.host_bytes_per_second = a.zlib_bytes_per_second;
    parts.push_back(z);
  }
  return parts;
}

std::vector<Work> tracin_work(const ModelSpec& s, const Workload& w) {
  const AnalysisOptions& a = w.analysis;
  const TracinOptions& t = a.tracin;
  const std::uint64_t train = t.train_samples > 0 ? t.train_samples : w.batch;
  const double sel = d(selected_parameters(s, a.sample_gradients.layers));
  const double dims = t.projection > 0 ? d(t.projection) : sel;
  std::vector<Work> parts = {per_sample_work(s, w, t.checkpoints * (train + t.test_samples),
                                             "checkpoints x (train + test samples)"),
                             gemm_work("influence_dots", 2.0 * d(t.checkpoints) * d(train) * d(t.test_samples) * dims,
                                       precisions::fp32, "2 C N M D: gradient dot products")};
  if (t.projection > 0) {
    parts.push_back(gemm_work("projection", 2.0 * d(t.checkpoints) * d(train + t.test_samples) * sel * d(t.projection),
                              precisions::fp32, "2 C (N + M) n k: random projection of every gradient"));
  }
  return parts;
}

std::vector<Work> attention_patterns_work(const ModelSpec& s, const Workload& w) {
  const AttentionAnalysisOptions& a = w.analysis.attention;
  const double cells = d(s.n_layers) * d(w.batch) * d(s.n_heads) * d(w.seq_len) * d(w.seq_len);
  Work stats = gemm_work("pattern_statistics", 4.0 * cells, a.dtype, "4 flops per pattern cell (entropy)");
  stats.bytes_moved = cells * element_bits(a.dtype.format) / 8 * 2;
  return {forward_work(s, w, w.batch, w.seq_len, "one forward pass with eager attention"), stats};
}

std::vector<Work> qkov_work(const ModelSpec& s, const Workload& w) {
  const AttentionAnalysisOptions& a = w.analysis.attention;
  const double heads = d(s.n_layers) * d(a.heads > 0 ? a.heads : s.n_heads);
  return {forward_work(s, w, w.batch, w.seq_len, "one forward pass with eager attention"),
          gemm_work("circuits", heads * 2 * 2 * d(s.d_model) * d(s.d_model) * d(s.d_head), a.dtype,
                    "L h x 2 circuits x 2 d^2 d_head"),
          gemm_work("composition", 3 * heads * heads * 2 * d(s.d_model) * d(s.d_head) * d(s.d_head), a.dtype,
                    "3 (L h)^2 x 2 d d_head^2 (factored)"),
          gemm_work("pattern_pairs",
                    d(s.n_layers) * d(s.n_heads) * d(s.n_heads) * d(w.batch) * d(w.seq_len) * d(w.seq_len) * 2, a.dtype,
                    "L h^2 b s^2 x 2: head-pair pattern comparison")};
}

std::vector<Work> embedding_singularities_work(const ModelSpec& s, const Workload& w) {
  const RepresentationOptions& r = w.analysis.representation;
  const double V = d(s.vocab_size), k = d(std::min(r.neighbours, s.vocab_size)), dm = d(s.d_model);
  const double local = std::min(k, dm);
  return {gemm_work("distances", 2 * V * V * dm, r.dtype, "2 V^2 d: every token against every token"),
          solver_work("local_pca", V * (2 * local * local * dm + 4.0 / 3.0 * local * local * local), r.dtype,
                      "V x (2 k^2 d + (4/3) k^3): each neighbourhood's Gram and spectrum")};
}

std::vector<Work> fiber_bundle_work(const ModelSpec& s, const Workload& w) {
  const RepresentationOptions& r = w.analysis.representation;
  const double N = d(r.samples), dm = d(s.d_model), k = d(std::min(r.neighbours, r.samples));
  return {forward_work(s, w, w.batch, w.seq_len, "the forward pass producing the activations"),
          solver_work("local_spectra", N * (2 * k * dm * dm + 4.0 / 3.0 * dm * dm * dm) + 2 * N * N * dm, r.dtype,
                      "N x (2 k d^2 + (4/3) d^3) + 2 N^2 d: O(N d^3)")};
}

std::vector<Work> superposition_work(const ModelSpec& s, const Workload& w) {
  const RepresentationOptions& r = w.analysis.representation;
  const double N = d(r.samples), dm = d(s.d_model), F = d(r.features > 0 ? r.features : 8 * s.d_model);
  return {forward_work(s, w, w.batch, w.seq_len, "the forward pass producing the activations"),
          gemm_work("feature_activations", 2 * N * F * dm + (r.overlap ? 2 * F * F * dm : 0), r.dtype,
                    "2 N F d" + std::string(r.overlap ? " + 2 F^2 d" : ""))};
}

std::vector<Work> cka_work(const ModelSpec& s, const Workload& w) {
  const RepresentationOptions& r = w.analysis.representation;
  const double N = d(r.samples), dm = d(s.d_model), reps = d(s.n_layers + 1);
  const double gram = reps * 2 * N * N * dm + reps * reps * 2 * N * N;
  const double feature = reps * reps * 3 * 2 * N * dm * dm;
  return {forward_work(s, w, w.batch, w.seq_len, "the forward pass producing the activations"),
          gemm_work("cka", std::min(gram, feature), r.dtype,
                    gram <= feature ? "(L+1) 2 N^2 d + (L+1)^2 2 N^2: Gram form"
                                    : "(L+1)^2 x 3 x 2 N d^2: feature form")};
}

}  // namespace memplan::detail
