#include "analysis_options.hpp"

#include <algorithm>

#include "memplan/core/error.hpp"
#include "memplan/estimators/activations.hpp"
#include "memplan/io/gpu_table.hpp"

namespace memplan::cli {

Precision float_option(const std::string& text, const char* option) {
  const Precision p = parse_precision(text);
  if (is_quantized(p)) {
    throw Error(ErrorKind::invalid_input,
                std::string(option) + " must be a float precision (fp32, tf32, bf16, fp16), got '" + text + "'", option);
  }
  return p;
}

void add_analysis_options(CLI::App& cmd, AnalysisArgs& a) {
  const std::string g = "Training and analyses (--workload training, sae, fisher_spectrum, ...)";
  const auto opt = [&](const std::string& name, auto& value, const std::string& help) {
    return cmd.add_option(name, value, help)->group(g);
  };
  const auto flag = [&](const std::string& name, bool& value, const std::string& help) {
    return cmd.add_flag(name, value, help)->group(g);
  };
  opt("--optimizer", a.optimizer, "training: none, sgd, sgd_momentum, adam, adamw, adam_8bit, adafactor")->capture_default_str();
  opt("--grad-precision", a.grad_precision, "Gradient dtype (default: the trainable weights'; fp32 makes Adam 18 B/param)");
  flag("--no-master-weights", a.no_master_weights, "training: no fp32 master copy of 16-bit weights");
  flag("--fused-optimizer", a.fused_optimizer, "training: a fused optimizer step (no foreach temporaries)");
  opt("--grad-accumulation", a.grad_accumulation, "training: micro-batches per step (> 1 keeps gradients through forward)")
      ->capture_default_str();
  flag("--keep-grads", a.keep_grads, "training: gradients stay allocated between steps (set_to_none=False)");
  opt("--recompute", a.recompute, "Activation recomputation: none, selective (attention core) or full (checkpointing)")
      ->capture_default_str();
  flag("--dropout", a.dropout, "training: the model trains with dropout (masks are kept)");
  opt("--lora-rank", a.lora_rank, "training: LoRA rank; the base is frozen (QLoRA with -p nf4)");
  opt("--lora-targets", a.lora_targets, "training: projections with adapters: q,k,v,o,gate,up,down or all")
      ->delimiter(',')
      ->capture_default_str();
  opt("--lora-dtype", a.lora_dtype, "training: adapter dtype")->capture_default_str();
  opt("--sae-d-in", a.sae_d_in, "sae: input width (default: the model's d_model)");
  opt("--sae-expansion", a.sae_expansion, "sae: dictionary size / input width")->capture_default_str();
  opt("--sae-features", a.sae_features, "sae: dictionary size (overrides --sae-expansion)");
  opt("--sae-batch-tokens", a.sae_batch_tokens, "sae: tokens per training step")->capture_default_str();
  opt("--sae-dtype", a.sae_dtype, "sae: parameter and activation dtype")->capture_default_str();
  opt("--sae-top-k", a.sae_top_k, "sae: TopK SAE with k active latents (0: ReLU + L1)");
  flag("--sae-tied", a.sae_tied, "sae: tied decoder (W_dec = W_enc^T)");
  opt("--sae-buffer-tokens", a.sae_buffer_tokens, "sae: activation store size in tokens (0: none)")->capture_default_str();
  flag("--sae-seed-formula", a.sae_seed_formula, "sae: 004's estimate_sae_memory as written (batch x seq tokens, no model)");
  opt("--fisher-blocks", a.fisher_blocks, "fisher_spectrum: diagonal blocks (default: n_layers)");
  opt("--fisher-block-size", a.fisher_block_size, "fisher_spectrum: parameters per block (default: d_model)");
  flag("--fisher-one-block", a.fisher_one_block, "fisher_spectrum: accumulate one block at a time");
  opt("--fisher-grouping", a.fisher_grouping, "grouped_fisher: tensor or channel")->capture_default_str();
  flag("--fisher-per-sample", a.fisher_per_sample, "grouped_fisher: keep groups x samples values");
  opt("--hessian-params", a.hessian_params, "hessian, full_fisher: parameters the matrix covers (default: all)");
  opt("--curvature-dtype", a.curvature_dtype, "hessian, full_fisher: matrix dtype")->capture_default_str();
  opt("--lanczos-k", a.lanczos_k, "lanczos: eigenvalues wanted")->capture_default_str();
  opt("--lanczos-iterations", a.lanczos_iterations, "lanczos: Lanczos steps m")->capture_default_str();
  flag("--no-reorthogonalize", a.no_reorthogonalize, "lanczos: three vectors instead of the whole basis");
  opt("--lanczos-dtype", a.lanczos_dtype, "lanczos: vector dtype")->capture_default_str();
  opt("--micro-batch", a.micro_batch, "Gradient analyses: sequences per backward (default 1; lanczos: the batch)");
  opt("--samples", a.samples, "sample_gradients: gradients kept (default: the batch)");
  opt("--compress", a.compress, "sample_gradients, tracin: none, int8 or int8+zlib")->capture_default_str();
  opt("--zlib-ratio", a.zlib_ratio, "Assumed zlib ratio on top of int8 (000 assumes 8, i.e. 32x with int8)")
      ->capture_default_str();
  opt("--keep-fraction", a.keep_fraction, "Importance gating: fraction of entries kept as values + indices")
      ->capture_default_str();
  opt("--index-bits", a.index_bits, "Importance gating: 32 or 64-bit indices")->capture_default_str();
  opt("--gradient-layers", a.gradient_layers, "sample_gradients, tracin: only these blocks' parameters (0,5,11 or 0-11)");
  flag("--gradients-on-host", a.gradients_on_host, "sample_gradients: keep the store in host RAM");
  flag("--vectorized", a.vectorized, "sample_gradients: torch.func.vmap over the batch (all raw gradients at once)");
  opt("--checkpoints", a.checkpoints, "tracin: checkpoints")->capture_default_str();
  opt("--train-samples", a.train_samples, "tracin: training samples scored (default: the batch)");
  opt("--test-samples", a.test_samples, "tracin: test samples")->capture_default_str();
  opt("--projection", a.projection, "tracin: random projection of each gradient to k dimensions (0: none)");
  opt("--pattern-dtype", a.pattern_dtype, "attention_patterns, qkov: stored dtype")->capture_default_str();
  flag("--one-layer", a.one_layer, "attention_patterns: one layer's patterns at a time");
  flag("--attention-reduce", a.attention_reduce, "attention_patterns: keep per-row entropy, not patterns");
  opt("--pattern-chunk", a.pattern_chunk, "attention_patterns, qkov: query rows per chunk (0: all)");
  opt("--heads", a.heads, "attention_patterns, qkov: heads analysed per layer (0: all)");
  opt("--points", a.points, "embedding_singularities, fiber_bundle, superposition, cka: samples N")->capture_default_str();
  opt("--neighbours", a.neighbours, "embedding_singularities, fiber_bundle: k nearest neighbours")->capture_default_str();
  opt("--features", a.features, "superposition: candidate features (default 8 x d_model)");
  flag("--overlap", a.overlap, "superposition: keep the F x F feature-overlap matrix");
  opt("--efficiency", a.efficiency, "Time estimates: fraction of peak throughput (default: stated per part)");
}

void apply_analysis_options(const AnalysisArgs& a, Workload& w) {
  AnalysisOptions& o = w.analysis;
  o.training.optimizer = parse_optimizer(a.optimizer);
  if (!a.grad_precision.empty()) o.training.grad_precision = float_option(a.grad_precision, "--grad-precision");
  o.training.master_weights = !a.no_master_weights;
  o.training.fused_optimizer = a.fused_optimizer;
  o.training.grad_accumulation = a.grad_accumulation;
  o.training.keep_grads = a.keep_grads;
  o.training.recompute = parse_recompute(a.recompute);
  o.dropout = a.dropout;
  if (a.lora_rank == 0 && a.lora_targets != AnalysisArgs{}.lora_targets) {
    throw Error(ErrorKind::invalid_input, "--lora-targets applies to LoRA: set --lora-rank", "--lora-targets");
  }
  o.training.lora.rank = a.lora_rank;
  o.training.lora.targets = a.lora_targets;
  o.training.lora.dtype = float_option(a.lora_dtype, "--lora-dtype");

  o.sae.d_in = a.sae_d_in;
  o.sae.expansion = a.sae_expansion;
  o.sae.features = a.sae_features;
  o.sae.batch_tokens = a.sae_batch_tokens;
  o.sae.dtype = float_option(a.sae_dtype, "--sae-dtype");
  o.sae.top_k = a.sae_top_k;
  o.sae.tied = a.sae_tied;
  o.sae.buffer_tokens = a.sae_buffer_tokens;
  o.sae.seed_formula = a.sae_seed_formula;

  o.fisher.blocks = a.fisher_blocks;
  o.fisher.block_size = a.fisher_block_size;
  o.fisher.keep_blocks = !a.fisher_one_block;
  o.grouped_fisher.grouping = parse_fisher_grouping(a.fisher_grouping);
  o.grouped_fisher.per_sample = a.fisher_per_sample;
  o.hessian_params = a.hessian_params;
  o.curvature_dtype = float_option(a.curvature_dtype, "--curvature-dtype");
  o.lanczos.k = a.lanczos_k;
  o.lanczos.iterations = a.lanczos_iterations;
  o.lanczos.reorthogonalize = !a.no_reorthogonalize;
  o.lanczos.dtype = float_option(a.lanczos_dtype, "--lanczos-dtype");
  o.micro_batch = a.micro_batch;

  SampleGradientOptions& g = o.sample_gradients;
  g.samples = a.samples;
  if (a.compress == "none") {
    g.int8 = false;
  } else if (a.compress == "int8") {
    g.int8 = true;
  } else if (a.compress == "int8+zlib") {
    g.int8 = true;
    g.zlib_ratio = a.zlib_ratio;
  } else {
    throw Error(ErrorKind::invalid_input, "unknown compression '" + a.compress + "'; accepted: 'none', 'int8' or 'int8+zlib'",
                "--compress");
  }
  g.kept_fraction = a.keep_fraction;
  g.index_bits = a.index_bits;
  if (!a.gradient_layers.empty()) g.layers = parse_layer_selection(a.gradient_layers);
  g.on_host = a.gradients_on_host;
  g.vectorized = a.vectorized;
  o.tracin.checkpoints = a.checkpoints;
  o.tracin.train_samples = a.train_samples;
  o.tracin.test_samples = a.test_samples;
  o.tracin.projection = a.projection;

  o.attention.dtype = float_option(a.pattern_dtype, "--pattern-dtype");
  o.attention.all_layers = !a.one_layer;
  o.attention.reduce = a.attention_reduce;
  o.attention.chunk = a.pattern_chunk;
  o.attention.heads = a.heads;

  o.representation.samples = a.points;
  o.representation.neighbours = a.neighbours;
  o.representation.features = a.features;
  o.representation.overlap = a.overlap;

  if (a.efficiency != 0) o.efficiency = a.efficiency;
  // Only the full-curvature analyses say how many parameters the largest GPU could take;
  // the table costs milliseconds to parse, a third of a plain estimate's process.
  if (w.kind == WorkloadKind::hessian || w.kind == WorkloadKind::full_fisher) o.largest_device = largest_builtin_gpu();
}

std::optional<DeviceLimit> largest_builtin_gpu() {
  const std::vector<GpuSpec> table = builtin_gpus();
  const auto largest = std::max_element(table.begin(), table.end(),
                                        [](const GpuSpec& x, const GpuSpec& y) { return x.memory < y.memory; });
  if (largest == table.end()) return std::nullopt;
  return DeviceLimit{largest->name, largest->memory};
}

}  // namespace memplan::cli
