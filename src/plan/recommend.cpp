#include "memplan/plan/recommend.hpp"

#include <algorithm>
#include <functional>
#include <utility>

#include "memplan/core/error.hpp"
#include "memplan/plan/fit.hpp"

namespace memplan {

namespace {

// A change before it is estimated: how to apply it, and which knob it turns (the combined
// plan turns each knob once).
struct Candidate {
  std::string kind;
  std::string knob;  // the knob it turns; QLoRA turns "precision" too
  std::string change;
  std::vector<OptionSetting> settings;
  std::string tradeoff;
  std::function<void(Workload&)> apply;
};

bool is_extraction(WorkloadKind k) { return k == WorkloadKind::extraction || k == WorkloadKind::streaming_extraction; }

bool is_forward(WorkloadKind k) {
  return k == WorkloadKind::inference || k == WorkloadKind::generation || is_extraction(k);
}

bool trains(WorkloadKind k) {
  return !is_forward(k) && k != WorkloadKind::weights;  // training and the gradient-based analyses
}

// True when the device runs `name` as named under the policy (no fallback, no refusal).
bool runs(const RecommendRequest& r, const std::string& name, Precision& out) {
  ResolveRequest q;
  q.precision = name;
  q.device = r.device;
  q.policy = r.policy;
  const Resolution res = resolve_precision(q);
  if (res.fell_back || res.engine_refuses) return false;
  out = res.precision;
  return true;
}

// The estimate of a changed plan, or nothing when the estimators reject the change.
std::optional<Breakdown> try_estimate(const ModelSpec& spec, const Workload& w) {
  try {
    Breakdown b = estimate_workload(spec, w);
    b.total();
    b.host_total();
    return b;
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::internal) throw;
    return std::nullopt;
  }
}

std::vector<Candidate> candidates(const ModelSpec& spec, const RecommendRequest& r, Bytes limit) {
  const Workload& w = r.workload;
  const WorkloadKind kind = w.kind;
  std::vector<Candidate> out;
  const auto add = [&](Candidate c) { out.push_back(std::move(c)); };

  // Weight precision. Full training cannot train quantised weights (QLoRA is its own change).
  const double bits = bits_per_weight(w.weights.precision);
  const bool quantisable = kind != WorkloadKind::training || w.analysis.training.lora.rank > 0;
  std::vector<std::string> names;
  if (bits > 16) names.push_back("bf16");
  if (quantisable) names.insert(names.end(), {"fp8", "int8", "int4"});
  for (const std::string& name : names) {
    Precision p;
    const bool ok = runs(r, name, p) || (name == "bf16" && runs(r, "fp16", p));  // fp16 where bf16 does not run
    if (!ok || !(bits_per_weight(p) < bits)) continue;
    const bool quantised = is_quantized(p);
    // A training step's recipe follows: 16-bit weights train with an fp32 master copy; a
    // quantised base (LoRA) has none.
    std::vector<OptionSetting> settings{{"precision", to_string(p)}};
    std::optional<MixedPrecision> recipe;
    if (w.mixed_precision) {
      if (!quantised) recipe = MixedPrecision::master;
      settings.push_back({"mixed_precision", recipe ? to_string(*recipe) : ""});
    }
    add({"precision", "precision", "weights in " + to_string(p) + " instead of " + to_string(w.weights.precision),
         settings,
         quantised
             ? "quantised linear layers: some loss of accuracy (GPTQ/AWQ/bitsandbytes); embeddings and norms stay " +
                   to_string(w.weights.unquantized)
             : "16-bit weights and activations: usually no loss for inference; training keeps fp32 master weights",
         [p, recipe](Workload& x) {
           x.weights.precision = p;
           if (!x.mixed_precision) return;
           x.mixed_precision = recipe;
           if (recipe) x.analysis.training.master_weights = true;
         }});
  }

  // KV cache: quantised for generation; none at all for a single forward pass.
  const Precision kv = w.kv_precision.value_or(compute_precision(w));
  if (kind == WorkloadKind::generation) {
    for (const std::string& name : {std::string("fp8"), std::string("int4")}) {
      Precision p;
      const bool ok = runs(r, name, p) || (name == "fp8" && runs(r, "int8", p));  // int8 where fp8 does not run
      if (!ok || !(bits_per_weight(p) < bits_per_weight(kv))) continue;
      add({"kv_cache_precision",
           "kv_cache",
           "KV cache in " + to_string(p) + " instead of " + to_string(kv),
           {{"kv_precision", to_string(p)}},
           "quantised keys and values (vLLM kv_cache_dtype, Hugging Face QuantizedCache): small accuracy loss",
           [p](Workload& x) { x.kv_precision = p; }});
    }
  }
  if (kind == WorkloadKind::inference && w.kv_cache) {
    add({"no_kv_cache",
         "kv_cache",
         "no KV cache (use_cache=False)",
         {{"kv_cache", ""}},
         "none for a single forward pass: nothing is generated after it",
         [](Workload& x) { x.kv_cache = false; }});
  }

  // Hook caches (extraction).
  if (is_extraction(kind)) {
    const ActivationCacheOptions& c = w.cache;
    if (c.filter.empty() && c.layers.empty() && !c.stop_at_layer) {
      add({"selective_cache",
           "cache_filter",
           "cache only the residual stream after each block",
           {{"filter", "blocks.*.hook_resid_post"}},
           "other hooks are not cached: name the ones the analysis reads with `filter` (memplan hooks prices any)",
           [](Workload& x) { x.cache.filter = {"blocks.*.hook_resid_post"}; }});
    }
    if (!c.on_cpu && kind == WorkloadKind::extraction) {
      add({"cache_on_cpu",
           "cache_place",
           "keep the hook cache in host RAM (device='cpu')",
           {{"cache_on_cpu", ""}},
           "host RAM for the cache, and a device-to-host copy per hook",
           [](Workload& x) { x.cache.on_cpu = true; }});
    }
    if (w.seq_len > 1) {
      // The largest chunk that fits, from fit's search; 512 (TheLoom's default) when none does.
      Workload s = w;
      s.kind = WorkloadKind::streaming_extraction;
      const std::uint64_t cap = kind == WorkloadKind::streaming_extraction ? std::min(w.streaming_chunk, w.seq_len) - 1
                                                                           : w.seq_len;
      if (cap >= 1) {
        const FitResult f = fit_largest(spec, s, FitKnob::streaming_chunk, limit, cap);
        const std::uint64_t chunk = f.value > 0 ? f.value : std::min<std::uint64_t>(512, cap);
        add({"streaming",
             "cache_place",
             "streaming extraction, " + std::to_string(chunk) + " tokens per chunk" +
                 (f.value > 0 ? " (the largest chunk that fits)" : ""),
             {{"kind", "streaming_extraction"}, {"streaming_chunk", std::to_string(chunk)}},
             "each chunk's cache leaves the GPU before the next: host RAM for the collected cache, more passes",
             [chunk](Workload& x) {
               x.kind = WorkloadKind::streaming_extraction;
               x.streaming_chunk = chunk;
             }});
      }
    }
  }

  // Attention: fused instead of eager; chunked queries for a forward pass.
  if (w.attention == AttentionVariant::eager) {
    add({"attention",
         "attention",
         "fused attention (SDPA / FlashAttention) instead of eager",
         {{"attention", "sdpa"}},
         "none for the result; the attention pattern is not materialised (hooks on it need eager)",
         [](Workload& x) { x.attention = AttentionVariant::sdpa; }});
    if (is_forward(kind) && w.seq_len > 1) {
      Workload c = w;
      c.attention = AttentionVariant::chunked;
      const FitResult f = fit_largest(spec, c, FitKnob::attention_chunk, limit, w.seq_len);
      const std::uint64_t chunk = f.value > 0 ? f.value : std::min<std::uint64_t>(512, w.seq_len);
      add({"attention",
           "attention",
           "chunked attention, " + std::to_string(chunk) + " queries per chunk",
           {{"attention", "chunked"}, {"attention_chunk", std::to_string(chunk)}},
           "more kernel launches; the same result",
           [chunk](Workload& x) {
             x.attention = AttentionVariant::chunked;
             x.attention_chunk = chunk;
           }});
    }
  }

  // Training and gradient passes.
  const TrainingOptions& t = w.analysis.training;
  if (trains(kind) && t.recompute != Recompute::full) {
    if (t.recompute == Recompute::none) {
      add({"recompute",
           "recompute",
           "selective recomputation of the attention core",
           {{"recompute", "selective"}},
           "a few percent more compute (Korthikanti et al. 2022)",
           [](Workload& x) { x.analysis.training.recompute = Recompute::selective; }});
    }
    add({"recompute",
         "recompute",
         "gradient checkpointing: each layer keeps its input only",
         {{"recompute", "full"}},
         "one more forward per step: about a third more compute",
         [](Workload& x) { x.analysis.training.recompute = Recompute::full; }});
  }
  if (kind == WorkloadKind::training) {
    if (t.optimizer == Optimizer::adam || t.optimizer == Optimizer::adamw) {
      add({"optimizer_8bit",
           "optimizer",
           "8-bit Adam (bitsandbytes) instead of " + to_string(t.optimizer),
           {{"optimizer", "adam_8bit"}},
           "8-bit optimizer states: usually matches 32-bit Adam",
           [](Workload& x) { x.analysis.training.optimizer = Optimizer::adam_8bit; }});
    }
    if (t.optimizer_impl != OptimizerImpl::fused && t.optimizer != Optimizer::none && t.optimizer != Optimizer::sgd) {
      add({"fused_optimizer",
           "optimizer_impl",
           "a fused optimizer step (no foreach temporaries)",
           {{"optimizer_impl", "fused"}},
           "none (torch.optim fused=True)",
           [](Workload& x) { x.analysis.training.optimizer_impl = OptimizerImpl::fused; }});
    }
    if (t.lora.rank == 0) {
      const std::uint64_t rank = r.lora_rank;
      add({"lora",
           "lora",
           "LoRA adapters of rank " + std::to_string(rank) + " on q, v; the base frozen",
           {{"lora_rank", std::to_string(rank)}},
           "a different fine-tune: only the adapters train",
           [rank](Workload& x) { x.analysis.training.lora.rank = rank; }});
      Precision nf4;
      if (runs(r, "nf4", nf4)) {
        std::vector<OptionSetting> settings{{"lora_rank", std::to_string(rank)}, {"precision", to_string(nf4)}};
        if (w.mixed_precision) settings.push_back({"mixed_precision", ""});  // a quantised base has no recipe
        add({"qlora", "lora", "QLoRA: LoRA of rank " + std::to_string(rank) + " on an nf4 base", settings,
             "a different fine-tune on a 4-bit base: only the adapters train", [rank, nf4](Workload& x) {
               x.analysis.training.lora.rank = rank;
               x.weights.precision = nf4;
               x.mixed_precision.reset();
             }});
      }
    }
  }

  // Per-sample gradients and TracIn: compression and host storage.
  if (kind == WorkloadKind::sample_gradients || kind == WorkloadKind::tracin) {
    const SampleGradientOptions& g = w.analysis.sample_gradients;
    if (!g.int8) {
      add({"gradient_compression",
           "compression",
           "int8 gradients (one fp32 scale per tensor)",
           {{"compress", "int8"}},
           "quantisation error in each stored gradient",
           [](Workload& x) { x.analysis.sample_gradients.int8 = true; }});
    }
    if (g.zlib_ratio == 0) {
      add({"gradient_compression",
           "compression",
           "int8 + zlib gradients (assumed ratio 8 on top of int8, as TensorScope)",
           {{"compress", "int8+zlib"}, {"zlib_ratio", "8"}},
           "the ratio is an assumption (zlib on int8 gradients varies); zlib on one core takes time",
           [](Workload& x) {
             x.analysis.sample_gradients.int8 = true;
             x.analysis.sample_gradients.zlib_ratio = 8;
           }});
    }
    if (kind == WorkloadKind::sample_gradients && !g.on_host) {
      add({"gradients_on_host",
           "store_place",
           "keep the gradient store in host RAM",
           {{"gradients_on_host", ""}},
           "host RAM for the store, a copy per sample",
           [](Workload& x) { x.analysis.sample_gradients.on_host = true; }});
    }
    if (kind == WorkloadKind::tracin && w.analysis.tracin.projection == 0) {
      add({"tracin_projection",
           "projection",
           "random projection of each gradient to 8192 dimensions",
           {{"projection", "8192"}},
           "an approximation of the influence scores (TRAK-style)",
           [](Workload& x) { x.analysis.tracin.projection = 8192; }});
    }
  }

  // Attention analyses.
  if (kind == WorkloadKind::attention_patterns || kind == WorkloadKind::qkov) {
    const AttentionAnalysisOptions& a = w.analysis.attention;
    if (a.all_layers) {
      add({"one_layer_patterns",
           "pattern_layers",
           "one layer's patterns at a time",
           {{"one_layer", ""}},
           "the layers are analysed one after another",
           [](Workload& x) { x.analysis.attention.all_layers = false; }});
    }
    if (!a.reduce && kind == WorkloadKind::attention_patterns) {
      add({"reduced_patterns",
           "pattern_reduce",
           "keep per-row statistics (entropy), not the patterns",
           {{"attention_reduce", ""}},
           "only statistics that reduce each row survive",
           [](Workload& x) { x.analysis.attention.reduce = true; }});
    }
    if (a.chunk == 0 && w.seq_len > 512) {
      add({"pattern_chunks",
           "pattern_chunk",
           "patterns computed 512 query rows at a time",
           {{"pattern_chunk", "512"}},
           "more kernel launches",
           [](Workload& x) { x.analysis.attention.chunk = 512; }});
    }
  }
  if (kind == WorkloadKind::lanczos && w.analysis.lanczos.reorthogonalize) {
    add({"lanczos_three_vectors",
         "lanczos",
         "Lanczos without reorthogonalisation: three vectors, not the basis",
         {{"reorthogonalize", ""}},
         "loss of orthogonality: spurious copies of converged eigenvalues",
         [](Workload& x) { x.analysis.lanczos.reorthogonalize = false; }});
  }
  if (kind == WorkloadKind::fisher_spectrum && w.analysis.fisher.keep_blocks) {
    add({"fisher_one_block",
         "fisher",
         "accumulate one Fisher block at a time",
         {{"fisher_one_block", ""}},
         "a pass over the data per block",
         [](Workload& x) { x.analysis.fisher.keep_blocks = false; }});
  }
  return out;
}

// The largest smaller batch that fits (training keeps its effective batch by accumulating).
std::optional<Candidate> smaller_batch(const ModelSpec& spec, const Workload& w, Bytes limit) {
  if (w.batch <= 1 || w.kind == WorkloadKind::weights) return std::nullopt;
  Workload s = w;
  const bool training = w.kind == WorkloadKind::training;
  if (training)
    s.analysis.training.grad_accumulation = std::max<std::uint64_t>(w.analysis.training.grad_accumulation, 2);
  const FitResult f = fit_largest(spec, s, FitKnob::batch, limit, w.batch - 1);
  const std::uint64_t batch = f.value > 0 ? f.value : 1;
  Candidate c;
  c.kind = "smaller_batch";
  c.knob = "batch";
  c.settings = {{"batch_size", std::to_string(batch)}};
  std::uint64_t accumulation = 1;
  if (training) {
    const std::uint64_t effective = checked_mul(w.batch, w.analysis.training.grad_accumulation, "effective batch");
    accumulation = std::max<std::uint64_t>(ceil_div(effective, batch), 2);
    c.settings.push_back({"grad_accumulation", std::to_string(accumulation)});
    c.change = "batch " + std::to_string(batch) + " x " + std::to_string(accumulation) +
               " accumulated micro-batches (effective batch " + std::to_string(batch * accumulation) + ")";
    c.tradeoff = "more, smaller steps per optimizer update: longer per update";
  } else {
    c.change = "batch " + std::to_string(batch) + (f.value > 0 ? " (the largest that fits)" : "") + " instead of " +
               std::to_string(w.batch);
    c.tradeoff = "more passes over the data";
  }
  c.apply = [batch, training, accumulation](Workload& x) {
    x.batch = batch;
    if (training) x.analysis.training.grad_accumulation = accumulation;
  };
  return c;
}

std::optional<Mitigation> estimate_candidate(const ModelSpec& spec, const Workload& base, Bytes base_total, Bytes limit,
                                             const Candidate& c) {
  Mitigation m;
  m.kind = c.kind;
  m.change = c.change;
  m.settings = c.settings;
  m.tradeoff = c.tradeoff;
  m.workload = base;
  c.apply(m.workload);
  const std::optional<Breakdown> b = try_estimate(spec, m.workload);
  if (!b || !(b->total() < base_total)) return std::nullopt;
  m.total = b->total();
  m.saved = Bytes(base_total.count() - m.total.count());
  m.host = b->host_total();
  m.fits = m.total <= limit;
  return m;
}

}  // namespace

Recommendation recommend(const ModelSpec& spec, const RecommendRequest& request) {
  Recommendation out;
  const Breakdown base = estimate_workload(spec, request.workload);
  out.total = base.total();
  out.limit = request.limit;
  out.fits = out.total <= request.limit;
  out.min_devices = request.limit.count() == 0
                        ? 0
                        : std::max<std::uint64_t>(ceil_div(out.total.count(), request.limit.count()), 1);

  std::vector<Candidate> all = candidates(spec, request, request.limit);
  if (std::optional<Candidate> b = smaller_batch(spec, request.workload, request.limit)) all.push_back(std::move(*b));
  for (const Candidate& c : all) {
    if (std::optional<Mitigation> m = estimate_candidate(spec, request.workload, out.total, request.limit, c)) {
      out.mitigations.push_back(std::move(*m));
    }
  }
  std::stable_sort(out.mitigations.begin(), out.mitigations.end(), [](const Mitigation& x, const Mitigation& y) {
    if (x.saved != y.saved) return x.saved > y.saved;
    return x.kind < y.kind;
  });
  const bool any_fits = std::any_of(out.mitigations.begin(), out.mitigations.end(),
                                    [](const Mitigation& m) { return m.fits; });
  if (out.fits || any_fits) return out;

  // No single change fits: combine them greedily. At each step every change not yet made
  // (one per knob) is estimated on the plan so far and the one that saves the most is kept;
  // a change that saved nothing alone may save once another is made (recomputation after
  // LoRA moves the peak from the optimizer step to the activations). Then the largest batch.
  Mitigation combined;
  combined.kind = "combined";
  combined.workload = request.workload;
  combined.total = out.total;
  std::vector<std::string> knobs;
  while (combined.total > request.limit) {
    std::optional<Mitigation> best;
    const Candidate* chosen = nullptr;
    for (const Candidate& c : all) {
      const auto used = [&](const std::string& k) { return std::find(knobs.begin(), knobs.end(), k) != knobs.end(); };
      if (c.kind == "smaller_batch" || used(c.knob) || (c.kind == "qlora" && used("precision"))) continue;
      std::optional<Mitigation> next = estimate_candidate(spec, combined.workload, combined.total, request.limit, c);
      if (next && (!best || next->total < best->total)) {
        best = std::move(next);
        chosen = &c;
      }
    }
    if (!best) break;
    knobs.push_back(chosen->knob);
    if (chosen->kind == "qlora") knobs.push_back("precision");
    combined.workload = best->workload;
    combined.total = best->total;
    combined.host = best->host;
    combined.change += (combined.change.empty() ? "" : "; ") + chosen->change;
    combined.settings.insert(combined.settings.end(), chosen->settings.begin(), chosen->settings.end());
  }
  if (combined.total > request.limit) {
    if (std::optional<Candidate> b = smaller_batch(spec, combined.workload, request.limit)) {
      if (std::optional<Mitigation> next = estimate_candidate(spec, combined.workload, combined.total, request.limit,
                                                              *b)) {
        combined.workload = next->workload;
        combined.total = next->total;
        combined.host = next->host;
        combined.change += (combined.change.empty() ? "" : "; ") + b->change;
        combined.settings.insert(combined.settings.end(), b->settings.begin(), b->settings.end());
      }
    }
  }
  combined.saved = Bytes(out.total.count() - combined.total.count());
  combined.fits = combined.total <= request.limit;
  combined.tradeoff = "every trade-off of the changes it combines";
  out.combined = std::move(combined);
  return out;
}

std::vector<GpuOption> gpu_options(const ModelSpec& spec, const Workload& workload, const std::string& precision_mode,
                                   const std::string& policy, const std::vector<GpuSpec>& table, double threshold) {
  std::vector<GpuOption> out;
  for (const GpuSpec& gpu : table) {
    GpuOption o;
    o.gpu = gpu;
    ResolveRequest q;
    q.precision = precision_mode;
    q.policy = policy;
    q.device = device_capability(gpu);
    const Resolution res = resolve_precision(q);
    o.precision = res.precision;
    o.warnings = res.warnings;
    Workload w = workload;
    w.weights.precision = res.precision;
    w.overhead.hopper_or_newer = gpu.compute_capability >= ComputeCapability{9, 0};
    o.limit = budget_limit(usable_memory(gpu), threshold);
    try {
      o.total = estimate_workload(spec, w).total();
      o.fits = *o.total <= o.limit;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::overflow) throw;
    }
    out.push_back(std::move(o));
  }
  std::stable_sort(out.begin(), out.end(), [](const GpuOption& x, const GpuOption& y) {
    if (usable_memory(x.gpu) != usable_memory(y.gpu)) return usable_memory(x.gpu) < usable_memory(y.gpu);
    return x.gpu.name < y.gpu.name;
  });
  return out;
}

}  // namespace memplan
