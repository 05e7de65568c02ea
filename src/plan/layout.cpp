#include "memplan/plan/layout.hpp"

#include <algorithm>
#include <utility>

#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/text.hpp"
#include "memplan/estimators/activations.hpp"
#include "memplan/estimators/kv_cache.hpp"
#include "memplan/estimators/megatron.hpp"

#include "analysis_workloads.hpp"
#include "forward_workloads.hpp"
#include "llama_cpp_layout.hpp"

namespace memplan {

namespace {

std::string s(std::uint64_t v) { return std::to_string(v); }

// Whether vLLM keeps a model's SSM state in float32 by default (models/config.py): NemotronH
// (2026-04 on), and Qwen3.5's multimodal checkpoints, whose config says mamba_ssm_dtype
// float32 (a Qwen3.5 tower marks them; the text-only Qwen3_5ForCausalLM keeps the model's dtype).
bool ssm_state_fp32_in_vllm(const ModelSpec& spec) {
  return spec.family == Family::nemotron_h ||
         (spec.family == Family::qwen3_next && spec.vision.kind == VisionKind::qwen3_5 && spec.vision.d_model != 0);
}

Item row(std::string name, Bytes bytes, std::string formula, std::string note = {}) {
  return {std::move(name), bytes, std::move(formula), std::nullopt, std::move(note), {}};
}

// vLLM's speculative decoding (speculative_config), as far as it moves memory: the drafter's
// attention layers beside the target's and the k tokens drafted a step.
struct VllmSpeculation {
  std::uint64_t k = 0;           // num_speculative_tokens; 0: off
  std::uint64_t mtp_layers = 0;  // the checkpoint's MTP layers the drafter loads (method mtp)
};

// Reads the method (vllm/config/speculative.py): mtp and its older per-model names, whose
// num_speculative_tokens defaults to the MTP layers (n_predict), and ngram, which drafts on the
// host and needs k. Throws Error(invalid_input) for the methods that load another model.
VllmSpeculation vllm_speculation(const ModelSpec& spec, const ServingOptions& so) {
  const std::string& m = so.speculative_method;
  if (m.empty()) {
    if (so.num_speculative_tokens != 0)
      throw_invalid_input("num_speculative_tokens", "`num_speculative_tokens` applies with a `speculative_method`");
    return {};
  }
  const bool mtp = m == "mtp" || (m.size() > 4 && m.ends_with("_mtp"));
  if (!mtp && m != "ngram") {
    throw_invalid_input("speculative_method",
                        "memplan models vLLM's speculative methods mtp (the checkpoint's own multi-token-prediction "
                        "layers) and ngram, not '" +
                            printable(m) + "' yet: eagle, eagle3 and draft models load a second model");
  }
  if (!mtp) {
    if (so.num_speculative_tokens == 0)
      throw_invalid_input("num_speculative_tokens", "`speculative_method` ngram needs `num_speculative_tokens`");
    return {so.num_speculative_tokens, 0};
  }
  if (spec.mtp_layers == 0) {
    throw_invalid_input("speculative_method", spec.name +
                                                  " has no multi-token-prediction layers for method mtp (its config's "
                                                  "num_nextn_predict_layers or mtp_num_hidden_layers is 0)");
  }
  return {so.num_speculative_tokens != 0 ? so.num_speculative_tokens : spec.mtp_layers, spec.mtp_layers};
}

// vLLM's multimodal profile (gpu_model_runner.py profile_run, multimodal/encoder_budget.py):
// before the forward, the tower encodes a batch of the largest items, whose outputs stay in the
// encoder cache through the forward and the sampler.
struct VllmEncoderProfile {
  Item pass;                 // the tower's pass over the items
  Item outputs;              // their embeddings, kept in the encoder cache
  std::uint64_t tokens = 0;  // an item's tokens
  std::uint64_t budget = 0;  // the encoder cache's budget in tokens
  std::uint64_t items = 0;   // items profiled
  std::uint64_t side = 0;    // the largest image's side in pixels
};

// The profile of a tower memplan sizes as vLLM does: Qwen3.5's (its largest image, 4096 x 4096
// within max_pixels, outweighs its largest video) and towers that resize every image to one
// square (LLaVA 1.5's CLIP, Gemma 3's and PaliGemma's SigLIP). Throws Error(invalid_input) for the
// others: Qwen2-VL and Qwen2.5-VL profile their largest video, LLaVA-NeXT and Idefics3 their tiles.
VllmEncoderProfile vllm_encoder_profile(const ModelSpec& model, const Workload& w, const ServingOptions& so,
                                        std::uint64_t max_len) {
  const VisionTower& v = model.vision;
  const bool qwen3_5 = v.kind == VisionKind::qwen3_5;
  if (!qwen3_5 && v.kind != VisionKind::clip && v.kind != VisionKind::gemma3 && v.kind != VisionKind::paligemma) {
    throw_invalid_input("engine",
                        "memplan's vLLM policy profiles the vision towers of Qwen3.5, LLaVA 1.5, Gemma 3 "
                        "and PaliGemma, not " +
                            model.name + "'s yet" +
                            (v.kind == VisionKind::gemma4
                                 ? std::string()
                                 : " (vLLM profiles Qwen2-VL's largest video, LLaVA-NeXT's and "
                                   "Idefics3's tiles)") +
                            ": plan its language model alone with `language_model_only`, vLLM's flag of that name");
  }
  VllmEncoderProfile out;
  if (qwen3_5) {  // get_image_size_with_most_features: the largest square within max_pixels
    const std::uint64_t factor = v.patch * v.merge;
    std::uint64_t side = factor;
    while (checked_mul(side + factor, side + factor, "image pixels") <= v.max_pixels) side += factor;
    out.side = side;
  } else {
    out.side = v.image_size;
  }
  out.tokens = image_grid(v, out.side, out.side).tokens;
  // compute_mm_encoder_budget: the budget is max_num_batched_tokens, or one item if larger.
  out.budget = std::max(so.max_num_batched_tokens, out.tokens);
  // MultiModalBudget._get_max_items: as many as the budget holds, at most max_num_seqs prompts'
  // worth (999 images a prompt, PaliGemma 1, within max_model_len), at least one.
  const std::uint64_t per_prompt = std::max<std::uint64_t>(
      1, std::min<std::uint64_t>(v.kind == VisionKind::paligemma ? 1 : 999, max_len / out.tokens));
  out.items = std::max<std::uint64_t>(1, std::min(out.budget / out.tokens,
                                                  checked_mul(so.max_num_seqs, per_prompt, "items a batch")));
  Workload tower = w;
  tower.batch = 1;
  tower.images = out.items;
  tower.image_width = tower.image_height = out.side;
  tower.attention = AttentionVariant::sdpa;  // vLLM's towers run flash attention
  out.pass = detail::vision_pass(model, tower);
  out.pass.name = "encoder_pass";
  // Qwen3-VL's embeddings carry each deepstack merger's features beside the merger's (qwen3_vl.py
  // concatenates them: (1 + levels) x d wide).
  const std::uint64_t width = checked_mul(model.d_model, 1 + v.deepstack, "encoder outputs");
  out.outputs = row(
      "encoder_cache",
      Bytes(checked_mul(checked_mul(checked_mul(out.items, out.tokens, "encoder outputs"), width, "encoder outputs"),
                        element_bits(compute_precision(w).format) / 8, "encoder outputs")),
      s(out.items) + " items x " + group_digits(out.tokens) + " tokens x " +
          (v.deepstack == 0 ? "d=" + group_digits(model.d_model)
                            : "(1 + " + s(v.deepstack) + " deepstack levels) x d=" + group_digits(model.d_model)) +
          " x " + to_string(compute_precision(w)) +
          ": the dummy items' embeddings, cached through the forward and the sampler");
  return out;
}

// The MTP layers' weights on a rank as vLLM's drafter loads them: each the target's last block
// (its attention and MLP, split t ways as the target's), fc (2d -> d, a ColumnParallelLinear)
// and three norms; the embedding and head are the target's (llm_base_proposer.py shares them).
Item vllm_mtp_weights(const ModelSpec& ss, const WeightsOptions& loaded, std::uint64_t layers, std::uint64_t t) {
  const Item block = slice_weights(ss, loaded, {ss.n_layers - 1, 1, false, false, false});
  const TensorGroup fc{"mtp",         "fc", ss.d_model / t, checked_mul(2, ss.d_model, "fc"), 1, TensorRole::linear,
                       LayerSet::none};
  const TensorGroup norms{"mtp", "norms", 3, ss.d_model, 1, TensorRole::norm, LayerSet::none};
  const std::uint64_t params = checked_add(checked_add(block.params.value_or(0), group_parameters(fc), "MTP"),
                                           group_parameters(norms), "MTP");
  const Bytes one = block.bytes.plus(Bytes(weight_tensor_bytes(fc, loaded)), "MTP")
                        .plus(Bytes(weight_tensor_bytes(norms, loaded)), "MTP");
  Item out{"mtp_drafter",
           one.times(layers, "MTP layers"),
           s(layers) + " x (the last block's " + group_digits(block.params.value_or(0)) + " params, fc 2d -> d" +
               (t > 1 ? " split " + s(t) + " ways" : std::string()) + ", three norms of d)",
           checked_mul(params, layers, "MTP params"),
           "speculative decoding's MTP layers, sharing the target's embedding and LM head",
           {}};
  return out;
}

// vLLM's notes on a hybrid's KV cache groups: the padding layers kv_cache_utils.py
// _get_kv_cache_groups_uniform_page_size warns of per kind of layer, and the token count its
// release logs (after 0.20.0, _report_kv_cache_config: int(max_concurrency x max_model_len)).
void group_notes(const ServingCapacity& cap, std::initializer_list<std::uint64_t> kinds,
                 std::vector<std::string>& notes) {
  for (const std::uint64_t layers : kinds) {
    const std::uint64_t padding = (cap.group_layers - layers % cap.group_layers) % cap.group_layers;
    if (padding == 0) continue;
    notes.push_back("vLLM: 'Add " + s(padding) + " padding layers, may waste at most " +
                    fixed_text(100.0 * static_cast<double>(padding) / static_cast<double>(layers), 2) +
                    "% KV cache memory'");
  }
  ServingCapacity other = cap;
  other.concurrency_tokens = !cap.concurrency_tokens;
  notes.push_back(cap.concurrency_tokens
                      ? "GPU KV cache size as vLLM after 0.20.0 logs it, int(concurrency x max_model_len); "
                        "0.11-0.20.0 logged (blocks / KV groups) x block_size = " +
                            group_digits(other.logged_tokens()) + " tokens (`vllm_version`)"
                      : "GPU KV cache size as vLLM 0.11-0.20.0 logs it, (blocks / KV groups) x block_size; later "
                        "releases log int(concurrency x max_model_len) = " +
                            group_digits(other.logged_tokens()) + " tokens");
}

bool inference_like(WorkloadKind kind) {
  return kind == WorkloadKind::weights || kind == WorkloadKind::inference || kind == WorkloadKind::generation ||
         kind == WorkloadKind::extraction || kind == WorkloadKind::streaming_extraction;
}

// The first option that only a training layout takes, as the CLI spells it ("" = none).
std::string training_only_option(const ParallelTrainingOptions& p) {
  const ParallelTrainingOptions defaults;
  if (p.pipeline != 1) return "`pp`";
  if (p.data != 1) return "`dp`";
  if (p.expert != 1) return "`ep`";
  if (p.sharding == Sharding::zero1 || p.sharding == Sharding::zero2 || p.sharding == Sharding::zero3) return "`zero`";
  if (p.sharding != Sharding::none) return "`fsdp`";
  if (p.offload_optimizer || p.offload_params) return "`offload`";
  if (p.sequence_parallel) return "`sequence_parallel`";
  if (p.micro_batches != 1) return "`micro_batches`";
  if (!p.stage_layers.empty()) return "`stage_layers`";
  if (p.shard_group != 0) return "`shard_group`";
  if (p.schedule != defaults.schedule) return "`schedule`";
  return "";
}

// vLLM's LoRA buffers (vllm/lora/layers.py, 0.8-0.10), `so.max_loras` slots on each of `t`
// ranks in `dtype`: every attention and MLP linear keeps per slot an A (rank x input) and a B
// (output x rank), sharded as the layer is (column-parallel: B split; row-parallel o and down:
// A split); the embedding an A over the vocabulary and the added tokens, a B and the added
// tokens' rows; the logits an A, a B over the vocabulary padded to 256 and the added tokens'
// rows; and the token table (and an untied head) grow by the added tokens.
Item vllm_lora_buffers(const ModelSpec& spec, const ServingOptions& so, std::uint64_t t, const Precision& dtype) {
  const std::uint64_t n = so.max_loras, r = so.max_lora_rank, extra = so.lora_extra_vocab_size;
  const std::uint64_t d = spec.d_model, V = spec.vocab_size;
  std::uint64_t linear = 0;
  for (const TensorGroup& g : model_tensors(spec)) {
    if (g.role != TensorRole::linear || (g.component != "attention" && g.component != "mlp")) continue;
    const bool row_parallel = g.name == "o" || g.name == "down";
    const std::uint64_t a = checked_mul(r, row_parallel ? ceil_div(g.cols, t) : g.cols, "LoRA A");
    const std::uint64_t b = checked_mul(row_parallel ? g.rows : ceil_div(g.rows, t), r, "LoRA B");
    linear = checked_add(linear, checked_mul(checked_mul(n, a + b, "LoRA slots"), g.copies, "LoRA layers"), "LoRA");
  }
  const std::uint64_t added = checked_mul(checked_mul(n, extra, "added tokens"), d, "added rows");
  const std::uint64_t embedding = checked_add(
      checked_add(checked_mul(checked_mul(n, V + extra, "LoRA embedding A"), r, "LoRA embedding A"),
                  checked_mul(checked_mul(n, d, "LoRA embedding B"), r, "LoRA embedding B"), "LoRA embedding"),
      added, "LoRA embedding");
  const std::uint64_t logits = checked_add(
      checked_add(checked_mul(checked_mul(n, r, "LoRA logits A"), d, "LoRA logits A"),
                  checked_mul(checked_mul(n, ceil_div(V, 256) * 256, "LoRA logits B"), r, "LoRA logits B"),
                  "LoRA logits"),
      added, "LoRA logits");
  const std::uint64_t tables = checked_mul(ceil_div(checked_mul(extra, d, "added rows"), t),
                                           spec.lm_head == LmHead::untied ? 2 : 1, "added rows");
  const std::uint64_t elements = checked_add(checked_add(linear, embedding, "LoRA"),
                                             checked_add(logits, tables, "LoRA"), "LoRA elements");
  return {"lora_buffers",
          Bytes(checked_mul(elements, element_bits(dtype.format) / 8, "LoRA bytes")),
          s(n) + " adapter slots of rank " + s(r) + " at " + to_string(dtype) + ": A and B of every attention and " +
              "MLP linear (" + group_digits(linear) + " elements), the embedding's and the logits' (" +
              group_digits(embedding + logits) + "), " + s(extra) + " added tokens' rows in the tables (" +
              group_digits(tables) + ")",
          std::nullopt,
          "vLLM allocates them at start-up, whether or not adapters are loaded",
          {}};
}

// vLLM's get_pp_indices: n / p layers a stage, the remainder one each to the stages before the
// last, from the second-to-last back (27 layers over 2 stages: 14 and 13).
std::vector<std::uint64_t> vllm_stage_layers(std::uint64_t n, std::uint64_t p) {
  std::vector<std::uint64_t> out(p, n / p);
  for (std::uint64_t i = 0; i < n % p; ++i) out[p - 2 - i] += 1;
  return out;
}

void check_against(DeviceMemory& d, const GpuSpec& gpu) {
  d.gpu = gpu.name;
  d.capacity = usable_memory(gpu);
}

std::string tensor_text(std::uint64_t t, const ModelSpec* spec = nullptr) {
  if (t == 1) return "the whole model";
  const bool mixers = spec != nullptr && ssm_layers(*spec) > 0;
  const bool attention = spec == nullptr || attention_layers(*spec) > 0;
  const bool mlp = spec == nullptr || spec->mlp != MlpKind::none;
  std::vector<std::string> parts;
  if (attention) parts.emplace_back("attention");
  if (mixers) parts.emplace_back("state-space mixer");
  if (mlp) parts.emplace_back("MLP");
  std::string what;
  for (std::size_t i = 0; i < parts.size(); ++i)
    what += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return "1/" + s(t) + " of each " + what + " matrix and of the vocabulary";
}

void shard_notes(const ModelSpec& spec, const TensorShard& shard, std::uint64_t multiple,
                 std::vector<std::string>& notes) {
  if (shard.padded_vocab != spec.vocab_size) {
    notes.push_back("vocabulary padded from " + group_digits(spec.vocab_size) + " to " +
                    group_digits(shard.padded_vocab) + " rows (a multiple of " + s(multiple) +
                    ", as vLLM's VocabParallelEmbedding pads it)");
  }
  if (shard.kv_replicas > 1) {
    notes.push_back(spec.name + " has " + s(spec.n_kv_heads) + " key/value heads for " + s(shard.degree) +
                    " ranks: each rank keeps one, replicated on " + s(shard.kv_replicas) +
                    " ranks (its k and v weights and its KV cache)");
  }
}

// --------------------------------------------------------------------- tensor parallel

LayoutEstimate tensor_parallel_layout(const ModelSpec& spec, const Workload& w, const LayoutOptions& o) {
  constexpr std::uint64_t kVocabMultiple = 64;  // vLLM DEFAULT_VOCAB_PADDING_SIZE
  const std::uint64_t t = o.parallel.tensor;
  const TensorShard shard = tensor_parallel_shard(spec, {t, kVocabMultiple, true});
  LayoutEstimate out;
  out.engine = "tensor_parallel";
  out.tensor = t;
  out.world_size = t;
  out.description = "t=" + s(t) + " = " + s(t) + " GPU" + (t == 1 ? "" : "s") +
                    ": Megatron-style tensor parallelism (attention heads, MLP and vocabulary split " + s(t) +
                    " ways; norms and position tables replicated)";
  DeviceMemory d;
  d.role = t == 1 ? "every GPU" : "every rank";
  d.count = t;
  d.holds = tensor_text(t) + "; " + s(shard.spec.n_heads) + " query heads and " + s(shard.spec.n_kv_heads) +
            " KV head" + (shard.spec.n_kv_heads == 1 ? "" : "s") + " per rank";
  d.breakdown = estimate_workload(shard.spec, w);
  if (o.gpus.size() == 1) check_against(d, o.gpus.front());
  out.devices.push_back(std::move(d));
  shard_notes(spec, shard, kVocabMultiple, out.notes);
  if (w.kind == WorkloadKind::extraction || w.kind == WorkloadKind::streaming_extraction) {
    out.notes.push_back("hooks as each rank holds them: per-head and MLP hooks split " + s(t) +
                        " ways, residual-stream hooks whole on every rank");
  }
  return out;
}

// --------------------------------------------------------------------- vLLM

LayoutEstimate vllm_layout(const ModelSpec& model, const Workload& w, const LayoutOptions& o) {
  const ServingOptions& so = *o.vllm;
  const bool with_tower = model.vision.d_model != 0 && !so.language_model_only;
  if (model.vision.d_model == 0 && so.language_model_only) {
    throw_invalid_input("language_model_only",
                        "`language_model_only` drops a vision tower, and " + model.name + " has none");
  }
  const bool state_fp32 = ssm_state_fp32_in_vllm(model);  // set by the checkpoint's class, tower or not
  ModelSpec text_only = model;
  text_only.vision = {};
  const ModelSpec& spec = text_only;
  const bool state_space = ssm_layers(spec) > 0;
  const VllmSpeculation spec_dec = vllm_speculation(spec, so);
  if (spec_dec.k > 0 && (o.parallel.pipeline > 1 || so.max_loras > 0)) {
    throw_invalid_input(o.parallel.pipeline > 1 ? "pipeline" : "max_loras",
                        "memplan's vLLM policy does not combine speculative decoding with `pp` or `max_loras` yet");
  }
  const auto attention_kinds = [&] {
    std::size_t n = 0;
    for (const auto& [kind, layers] : attention_layer_counts(spec)) n += kind != AttentionKind::mamba ? 1 : 0;
    return n;
  };
  if (spec_dec.mtp_layers > 0 && attention_kinds() != 1) {
    throw_invalid_input("speculative_method", spec.name +
                                                  " mixes kinds of attention layer; memplan adds an MTP layer's KV "
                                                  "pages to models of one kind");
  }
  if (spec.family == Family::zamba2) {
    throw_invalid_input("engine",
                        "memplan's vLLM policy does not price Zamba2's shared attention blocks' cache: plan " +
                            spec.name + " with -w generation and --batch");
  }
  constexpr std::uint64_t kVocabMultiple = 64;  // vLLM DEFAULT_VOCAB_PADDING_SIZE
  if (o.gpus.size() != 1)
    throw_invalid_input("gpu", "vLLM's KV cache is what gpu_memory_utilization leaves of a GPU: name it with `gpu`");
  const GpuSpec& gpu = o.gpus.front();
  if (spec.lm_head == LmHead::none)
    throw_invalid_input("engine", "vLLM serving plans decoder models; " + spec.name + " has no LM head");
  const std::uint64_t t = o.parallel.tensor;
  const std::uint64_t max_len = so.max_model_len ? so.max_model_len : spec.max_seq_len;
  if (max_len > spec.max_seq_len) {
    throw_invalid_input("max_model_len", "`max_model_len` " + group_digits(max_len) + " exceeds " + spec.name +
                                             "'s context of " + group_digits(spec.max_seq_len) +
                                             " (vLLM refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN is set)");
  }
  if (so.max_num_batched_tokens == 0)
    throw_invalid_input("max_num_batched_tokens", "`max_num_batched_tokens` must be at least 1");
  if (so.max_num_seqs == 0) throw_invalid_input("max_num_seqs", "`max_num_seqs` must be at least 1");
  // data_parallel_size d: d engines of t GPUs each; with enable_expert_parallel the routed
  // experts spread whole over all t x d GPUs (vLLM's EP size is TP x DP) instead of each
  // expert's width splitting t ways. The router (a ReplicatedLinear) stays whole.
  const std::uint64_t dp = o.parallel.data, ep = o.parallel.expert;
  if (ep > 1) {
    if (spec.experts == 0)
      throw_invalid_input("expert_parallel", spec.name + " has no experts: `ep` applies to mixture-of-experts models");
    if (ep != checked_mul(t, dp, "tp x dp")) {
      throw_invalid_input("expert_parallel",
                          "vLLM's expert parallelism spans every GPU (enable_expert_parallel: EP = "
                          "tensor_parallel_size x data_parallel_size): `ep` must be `tp` x `dp` = " +
                              group_digits(checked_mul(t, dp, "tp x dp")) + ", not " + group_digits(ep));
    }
    if (spec.experts % ep != 0) {
      throw_invalid_input("expert_parallel", spec.name + "'s " + group_digits(spec.experts) +
                                                 " experts do not split evenly over " + group_digits(ep) +
                                                 " GPUs: `ep` must divide the experts");
    }
  }
  // pipeline_parallel_size p: the layers in p stages of t GPUs each, as get_pp_indices splits
  // them; the engine keeps as many KV blocks as its scarcest stage has room for.
  const std::uint64_t pp = o.parallel.pipeline;
  if (pp > 1) {
    if (pp > spec.n_layers)
      throw_invalid_input("pipeline",
                          "`pp` " + s(pp) + " is more stages than " + spec.name + "'s " + s(spec.n_layers) + " layers");
    if (ep > 1) throw_invalid_input("pipeline", "memplan's vLLM policy does not combine `pp` with `ep` yet");
    if (!spec.stored_weights.empty())
      throw_invalid_input("pipeline",
                          "memplan's vLLM policy splits an architecture's layers over `pp` stages, not a "
                          "quantised checkpoint's stored tensors yet: plan " +
                              spec.name + " with `tp` alone");
    if (attention_layer_counts(spec).size() != 1)
      throw_invalid_input("pipeline", spec.name +
                                          " mixes kinds of attention layer, whose KV blocks vLLM groups per "
                                          "kind; memplan splits only models of one kind over `pp` stages");
  }
  if (state_space && (pp > 1 || dp > 1 || so.max_loras > 0)) {
    throw_invalid_input(pp > 1   ? "pipeline"
                        : dp > 1 ? "data"
                                 : "max_loras",
                        "memplan's vLLM policy plans a model with state-space layers (" + spec.name +
                            ") with tensor parallelism alone, without adapters yet: `pp` and `dp` 1, no `max_loras`");
  }
  // A state-space mixer splits by head over the tensor-parallel ranks, as vLLM's do.
  const TensorShard shard = tensor_parallel_shard(
      spec, {.degree = t, .vocab_multiple = kVocabMultiple, .replicate_kv_heads = true, .split_state_space = true});
  ModelSpec ss = shard.spec;
  if (ep > 1) {  // whole experts, spread over the GPUs
    ss.experts = spec.experts / ep;
    ss.d_expert = spec.d_expert;
    for (std::size_t i = 0; i < ss.stored_weights.size(); ++i) {
      if (ss.stored_weights[i].component != "experts") continue;
      ss.stored_weights[i] = spec.stored_weights[i];
      ss.stored_weights[i].copies = ceil_div(spec.stored_weights[i].copies, ep);
    }
  }
  const Precision compute = compute_precision(w);
  const Precision kv_dtype = w.kv_precision.value_or(compute);
  if (is_quantized(kv_dtype) && kv_dtype.format != Format::fp8_e4m3 && kv_dtype.format != Format::fp8_e5m2) {
    throw_invalid_input("kv_precision",
                        "vLLM's KV cache is fp16, bf16, fp32 or fp8 (kv_cache_dtype), not " + to_string(kv_dtype));
  }

  WeightsOptions loaded = w.weights;
  loaded.buffers = BufferRuntime::vllm;
  Item weights = std::move(estimate_weights(ss, loaded).components.front());
  if (ep > 1) {
    // The router keeps every expert's column: take its row from the shard before the split.
    const Item full = std::move(estimate_weights(shard.spec, loaded).components.front());
    for (Item& r : weights.detail) {
      if (r.name != "router") continue;
      for (const Item& f : full.detail) {
        if (f.name != "router") continue;
        weights.bytes = Bytes(weights.bytes.count() - r.bytes.count()).plus(f.bytes, "weights");
        *weights.params = checked_add(*weights.params - *r.params, *f.params, "parameters");
        r = f;
        r.note = "replicated: every GPU routes over all " + group_digits(spec.experts) + " experts";
      }
    }
    weights.formula = group_digits(*weights.params) + " params on each GPU: " + group_digits(ss.experts) + " of " +
                      group_digits(spec.experts) + " routed experts of every MoE layer, every other tensor " +
                      (t > 1 ? "split " + s(t) + " ways" : std::string("whole"));
  }

  if (so.max_loras > 0) {
    if (spec.experts != 0 || spec.mla.kv_lora_rank != 0)
      throw_invalid_input("max_loras", "memplan prices vLLM's LoRA buffers for dense attention models; " + spec.name +
                                           " has " + (spec.experts != 0 ? "experts" : "latent attention"));
    if (pp > 1) throw_invalid_input("max_loras", "memplan's vLLM policy does not combine `max_loras` with `pp` yet");
    Item lora = vllm_lora_buffers(spec, so, t, compute);
    weights.bytes = weights.bytes.plus(lora.bytes, "weights");
    weights.detail.push_back(std::move(lora));
  }

  std::optional<VllmEncoderProfile> encoder;
  if (with_tower) {
    if (pp > 1) throw_invalid_input("pipeline", "memplan's vLLM policy does not split a vision tower over `pp` yet");
    encoder = vllm_encoder_profile(model, w, so, max_len);
    // The tower and projector as loaded, their matrices split t ways as vLLM's parallel linears
    // split them (the tower's norms and position table are whole; counted split here).
    Breakdown whole = estimate_weights(model, loaded);
    for (Item& r : whole.components.front().detail) {
      if (r.name != "vision" && r.name != "projector") continue;
      if (t > 1) {
        r.bytes = Bytes(ceil_div(r.bytes.count(), t));
        r.params = r.params ? std::optional<std::uint64_t>(ceil_div(*r.params, t)) : std::nullopt;
        r.formula = "1/" + s(t) + " of " + r.formula;
      }
      weights.bytes = weights.bytes.plus(r.bytes, "weights");
      if (r.params) *weights.params = checked_add(*weights.params, *r.params, "parameters");
      weights.detail.push_back(std::move(r));
    }
    // Qwen3-VL (qwen3_vl.py): a buffer per deepstack level, max_num_batched_tokens x hidden_size
    // in the model's dtype, allocated with the model.
    if (model.vision.deepstack > 0) {
      Item deepstack = row(
          "deepstack_buffers",
          Bytes(checked_mul(checked_mul(checked_mul(model.vision.deepstack, so.max_num_batched_tokens, "buffers"),
                                        model.d_model, "buffers"),
                            element_bits(compute.format) / 8, "buffers")),
          s(model.vision.deepstack) + " deepstack levels x max_num_batched_tokens " +
              group_digits(so.max_num_batched_tokens) + " x d=" + group_digits(model.d_model) + " x " +
              to_string(compute) + ": the features each step's first layers add (deepstack_input_embeds)");
      weights.bytes = weights.bytes.plus(deepstack.bytes, "weights");
      weights.detail.push_back(std::move(deepstack));
    }
  }
  if (spec_dec.mtp_layers > 0) {
    Item mtp = vllm_mtp_weights(ss, loaded, spec_dec.mtp_layers, t);
    weights.bytes = weights.bytes.plus(mtp.bytes, "weights");
    *weights.params = checked_add(*weights.params, *mtp.params, "parameters");
    weights.detail.push_back(std::move(mtp));
  }

  // The profile run: one forward over max_num_batched_tokens tokens, and the sampler.
  const std::uint64_t T = so.max_num_batched_tokens;
  const std::uint64_t seq = std::min(T, max_len);
  Workload profile = w;
  profile.kind = WorkloadKind::inference;
  profile.batch = ceil_div(T, seq);
  profile.seq_len = seq;
  profile.new_tokens = 0;
  profile.kv_cache = false;
  profile.include_overhead = false;
  profile.attention = AttentionVariant::sdpa;  // vLLM runs fused (flash) attention
  profile.cache = {};
  ModelSpec body = ss;
  body.lm_head = LmHead::none;  // the LM head runs in the sampler step, on max_num_seqs rows
  body.lm_head_bias = false;
  const Breakdown forward = estimate_workload(body, profile);
  Item block = *forward.find("forward_workspace");
  block.name = "forward";
  block.formula = s(profile.batch) + " x " + s(seq) + " tokens (max_num_batched_tokens " + group_digits(T) +
                  "): " + block.formula;
  const std::uint64_t rows = std::min(so.max_num_seqs, T);  // _dummy_sampler_run: a request per token at most
  std::vector<Item> sampler_rows;
  // One tensor of the sampler: `bits` per logit of max_num_seqs x the padded vocabulary.
  const auto logits_row = [&](const std::string& name, std::uint64_t bits, const std::string& what) {
    return row(name, Bytes(ceil_div(checked_mul(checked_mul(rows, shard.padded_vocab, "logits"), bits, "logits"), 8)),
               "max_num_seqs=" + s(rows) + " x V=" + group_digits(shard.padded_vocab) + " x " + what);
  };
  const auto float_row = [&](const std::string& name, const Precision& p) {
    return logits_row(name, element_bits(p.format), to_string(p));
  };
  // The dummy sampler run (_dummy_sampler_run, top-k and top-p set). Before vLLM 0.17 (and below
  // 8 rows since) it peaks in apply_top_k_top_p's logits.sort(): beside the logits and the
  // sampler's fp32 copy, the sorted fp32 values and int64 indices, the index input PyTorch's
  // segmented sort fills, and cub's alternate keys and values; 38 B an element at bf16, where a
  // start-up log's own breakdown measured 38.65 (docs/accuracy.md). From 0.17 (PR #33538's Triton
  // kernel; FlashInfer's, the default from 2026-04, keeps as much) the filter runs in place: the
  // logits, their fp32 copy, the probabilities and random_sample's exponential draws (divided in
  // place), 14 B an element at bf16.
  const bool sorts = so.version < VllmVersion{0, 17, 0} || rows < 8;
  sampler_rows.push_back(float_row("logits", compute));
  if (element_bits(compute.format) != 32) sampler_rows.push_back(float_row("logits_fp32", precisions::fp32));
  if (sorts) {
    sampler_rows.push_back(float_row("sorted_logits", precisions::fp32));
    sampler_rows.push_back(logits_row("sorted_indices", 64, "int64"));
    sampler_rows.push_back(logits_row("sort_input_indices", 64, "int64"));
    sampler_rows.push_back(
        logits_row("sort_alternate_buffers", 96, "(4 + 8) B: the radix sort's second keys and values"));
  } else {
    sampler_rows.push_back(float_row("probabilities", precisions::fp32));
    sampler_rows.push_back(float_row("exponential_draws", precisions::fp32));
  }
  Item sampler = row("sampler", Bytes(0),
                     sorts ? "the dummy sampler run's peak, in its top-k/top-p sort over max_num_seqs sequences x "
                             "the whole vocabulary: the logits, their fp32 copy, the sort's outputs, index input and "
                             "buffers"
                           : "the dummy sampler run's peak over max_num_seqs sequences x the whole vocabulary "
                             "(vLLM 0.17 on: top-k/top-p in place): the logits, their fp32 copy, the probabilities "
                             "and the exponential draws");
  if (spec_dec.k > 0) {
    // With speculation _dummy_sampler_run then runs the rejection sampler on [2 x rows, V]
    // logits, sampling its bonus rows as above while they are alive.
    Item rejection = logits_row("rejection_logits", element_bits(compute.format), to_string(compute));
    rejection.bytes = rejection.bytes.times(2, "rejection logits");
    rejection.formula = "2 x " + rejection.formula + ": the rejection sampler's dummy logits, its bonus rows sampled";
    sampler_rows.push_back(std::move(rejection));
  }
  for (const Item& r : sampler_rows) sampler.bytes = sampler.bytes.plus(r.bytes, "sampler");
  sampler.detail = sampler_rows;
  // The MTP drafter's dummy passes follow the target's forward, each over the same tokens: the
  // target's last hidden states (its input) kept beside one block's working set.
  std::optional<Item> drafter;
  if (spec_dec.mtp_layers > 0) {
    const Item hidden = row("target_hidden_states",
                            Bytes(checked_mul(checked_mul(T, ss.d_model, "hidden states"),
                                              element_bits(compute.format) / 8, "hidden states")),
                            group_digits(T) + " tokens x d=" + group_digits(ss.d_model) + " x " + to_string(compute));
    drafter = row("drafter_forward", hidden.bytes.plus(block.bytes, "drafter"),
                  s(spec_dec.k) + " MTP passes over " + group_digits(T) +
                      " tokens, one at a time: the target's hidden states beside one block's working set");
    drafter->detail = {hidden, block};
  }
  const Item& forward_side = drafter ? *drafter : block;
  const bool forward_binds = forward_side.bytes >= sampler.bytes;
  Item peak = row("activation_peak", forward_binds ? forward_side.bytes : sampler.bytes,
                  "max(forward " + group_digits(forward_side.bytes.count()) + " B, sampler " +
                      group_digits(sampler.bytes.count()) +
                      " B): the peak of vLLM's profile_run, which vLLM measures at start-up",
                  forward_binds ? (drafter ? "the MTP drafter's pass over max_num_batched_tokens binds"
                                           : "the forward over max_num_batched_tokens binds")
                                : "the sampler's sort binds");
  peak.detail.push_back(forward_binds ? forward_side : sampler);
  if (encoder) {
    // The tower's pass runs first; its outputs stay cached through the forward and the sampler.
    const Bytes language = peak.bytes.plus(encoder->outputs.bytes, "profile peak");
    const bool tower_binds = encoder->pass.bytes > language;
    Item lm = row("language_model", language,
                  "the encoder cache " + group_digits(encoder->outputs.bytes.count()) + " B + max(forward " +
                      group_digits(forward_side.bytes.count()) + " B, sampler " + group_digits(sampler.bytes.count()) +
                      " B)");
    lm.detail = {encoder->outputs, peak.detail.front()};
    peak = row("activation_peak", tower_binds ? encoder->pass.bytes : language,
               "max(the tower's pass " + group_digits(encoder->pass.bytes.count()) + " B, the encoder cache and " +
                   "the language model " + group_digits(language.count()) +
                   " B): the peak of vLLM's profile_run, which vLLM measures at start-up",
               tower_binds
                   ? "the vision tower's pass over the largest images binds"
                   : std::string(forward_binds ? (drafter ? "the MTP drafter's pass binds, beside the encoder cache"
                                                          : "the forward binds, beside the encoder cache")
                                               : "the sampler's sort binds, beside the encoder cache"));
    peak.detail.push_back(tower_binds ? encoder->pass : lm);
  }

  const Breakdown runtime = estimate_overhead(w.overhead, {}, {});
  const Item& overhead_rows = runtime.components.front();
  std::vector<Item> kept;
  Bytes cublas;
  for (const Item& r : overhead_rows.detail) {
    if (r.name == "cuda_context" || r.name == "cublas_workspace") kept.push_back(r);
    if (r.name == "cublas_workspace") cublas = r.bytes;
  }
  Item overhead = row(
      "overhead", Bytes(0),
      "the CUDA context (outside vLLM's budget: it exists before vLLM's memory snapshot) and the cuBLAS "
      "workspace (non-torch memory, inside it)");
  Bytes low, high;
  for (const Item& r : kept) {
    overhead.bytes = overhead.bytes.plus(r.bytes, "overhead");
    low = low.plus(r.low.value_or(r.bytes), "overhead");
    high = high.plus(r.high.value_or(r.bytes), "overhead");
  }
  overhead.detail = kept;
  if (low != overhead.bytes || high != overhead.bytes) {
    overhead.low = low;
    overhead.high = high;
  }

  KvCacheOptions block_options;
  block_options.batch = 1;
  block_options.tokens = so.block_size == 0 ? 1 : so.block_size;
  block_options.precision = kv_dtype;
  block_options.honor_sliding_window = false;
  block_options.mla_cache = MlaCache::latent;  // vLLM's MLA backends keep the latent
  Bytes block_bytes = estimate_kv_cache(ss, block_options).total();
  if (spec_dec.mtp_layers > 0 && !state_space) {  // the MTP layers' pages join the target's group
    const std::uint64_t layers = attention_layers(ss);
    block_bytes = Bytes(checked_add(block_bytes.count(),
                                    checked_mul(block_bytes.count() / layers, spec_dec.mtp_layers, "MTP KV"), "KV"));
  }

  // The stages: each its layers' weights (the embeddings on the first, the final norm, head and
  // sampler on the last), the forward over its layers, and its layers' KV blocks.
  struct Stage {
    std::uint64_t first = 0, layers = 0;
    Item weights, peak;
    Bytes block;
    ServingCapacity cap;
  };
  std::vector<Stage> stages;
  if (pp == 1) {
    stages.push_back({0, ss.n_layers, weights, peak, block_bytes, {}});
  } else {
    const std::vector<std::uint64_t> layers = vllm_stage_layers(ss.n_layers, pp);
    const Bytes per_layer(block_bytes.count() / ss.n_layers);  // one kind of layer: equal blocks
    Bytes buffers;  // the whole model's weights list them in a row of their own
    for (const Item& r : weights.detail) {
      if (r.name == "buffers") buffers = r.bytes;
    }
    std::uint64_t first = 0;
    for (std::uint64_t k = 0; k < pp; ++k) {
      const bool last = k + 1 == pp;
      Item stage_weights = slice_weights(ss, loaded, {first, layers[k], k == 0, last, false});
      if (buffers.count() > 0) {  // every stage builds its own rotary table
        stage_weights.detail.push_back({"buffers", buffers, "vLLM's rotary cos_sin_cache", std::nullopt, "", {}});
        stage_weights.bytes = stage_weights.bytes.plus(buffers, "weights");
      }
      Item stage_peak = peak;
      if (!last && !forward_binds) {  // the sampler runs on the last stage only
        stage_peak = row("activation_peak", block.bytes,
                         "the forward over max_num_batched_tokens tokens through this stage's layers (the sampler "
                         "runs on the last stage)");
        stage_peak.detail.push_back(block);
      }
      stages.push_back({first, layers[k], stage_weights, stage_peak, per_layer.times(layers[k], "KV block"), {}});
      first += layers[k];
    }
  }
  // Mamba layers (kv_cache_interface.py MambaSpec): a request's convolution state in the
  // model's dtype (never kv_cache_dtype) and its SSM state, which NemotronH keeps in float32
  // (models/config.py, vLLM of 2026-04 on; float16 from 0.13, the model's dtype before).
  VllmLayerPages pages;
  std::string mode_note;  // prefix caching's Mamba cache mode, said in a note
  if (state_space) {
    const std::uint64_t model_bytes = element_bits(compute.format) / 8;
    const std::uint64_t ssm_bytes = so.mamba_ssm_bytes != 0 ? so.mamba_ssm_bytes : state_fp32 ? 4 : model_bytes;
    // The MTP layers are full attention (the drafter's pages in the target's groups), and a
    // request's state keeps k more convolution rows (mamba_utils.py: conv_kernel - 1 + k).
    pages.attention_layers = checked_add(attention_layers(spec), spec_dec.mtp_layers, "attention layers");
    pages.mamba_layers = ssm_layers(spec);
    pages.token_bytes = Bytes(checked_mul(checked_mul(2, checked_mul(ss.n_kv_heads, ss.d_head, "KV"), "KV"),
                                          element_bits(kv_dtype.format) / 8, "KV"));
    pages.state_bytes = Bytes(
        checked_add(checked_mul(checked_mul(ss.ssm.d_conv - 1 + spec_dec.k, ssm_conv_channels(ss.ssm), "state"),
                                model_bytes, "state"),
                    checked_mul(checked_mul(ss.ssm.d_state, ss.ssm.d_inner, "state"), ssm_bytes, "state"), "state"));
    // Prefix caching (vLLM from 2026-01, --mamba-cache-mode): Qwen3-Next and Qwen3.5 default to
    // align, a request holding two blocks in each Mamba group (MambaSpec.max_memory_usage_bytes);
    // the models that support Mamba prefix caching default to all, a block per block_size tokens.
    std::string mode = so.mamba_cache_mode;
    if (so.enable_prefix_caching && (mode.empty() || mode == "none"))
      mode = spec.family == Family::qwen3_next ? "align" : "all";
    if (!so.enable_prefix_caching && !mode.empty() && mode != "none") {
      throw_invalid_input("mamba_cache_mode", "`mamba_cache_mode` " + mode +
                                                  " applies with prefix caching: add `enable_prefix_caching` (vLLM "
                                                  "turns the mode to none without it)");
    }
    if (mode == "all") {
      throw_invalid_input(so.mamba_cache_mode.empty() ? "enable_prefix_caching" : "mamba_cache_mode",
                          "prefix caching's `all` mode (vLLM's default for " + to_string(spec.family) +
                              " with --enable-prefix-caching) keeps a Mamba block per block_size tokens, which "
                              "memplan does not model yet: plan `mamba_cache_mode` align, or without prefix caching");
    }
    if (mode == "align") {
      pages.state_blocks = 2;
      if (pages.attention_layers == 0)
        throw_invalid_input("mamba_cache_mode",
                            "`mamba_cache_mode` align pages a hybrid's Mamba state beside its "
                            "attention blocks; " +
                                spec.name + " has no attention layers");
      mode_note = "vLLM: 'Mamba cache mode is set to 'align''" +
                  std::string(so.mamba_cache_mode.empty() ? " (its default for this model with prefix caching)" : "") +
                  ": a request holds 2 blocks in each Mamba group" +
                  (spec_dec.k > 0 ? ", and " + s(spec_dec.k) + " more for the drafted tokens" : std::string());
    }
    // MambaSpec.max_memory_usage_bytes (vLLM from 2026-01): k more blocks a request for the
    // states of the drafted tokens, in either mode.
    pages.state_blocks = checked_add(pages.state_blocks, spec_dec.k, "Mamba blocks a request");
  } else if (!so.mamba_cache_mode.empty()) {
    throw_invalid_input("mamba_cache_mode",
                        "`mamba_cache_mode` applies to models with Mamba layers; " + spec.name + " has none");
  }
  // Sliding-window and full-attention layers (Gemma 2, 3 and 4, gpt-oss): vLLM's hybrid KV
  // cache manager groups them, a request holding only its window's blocks in a sliding group
  // (`disable_hybrid_kv_cache_manager` prices every layer as full attention instead).
  const auto cache_kinds = cache_layer_counts(spec);  // KV-shared layers hold no pages (Gemma 4 E2B)
  const auto layers_of = [&](AttentionKind kind) {
    for (const auto& [k, n] : cache_kinds) {
      if (k == kind) return n;
    }
    return std::uint64_t{0};
  };
  const bool sliding_hybrid = !state_space && !so.disable_hybrid_kv_cache_manager && cache_kinds.size() == 2 &&
                              layers_of(AttentionKind::full) > 0 && layers_of(AttentionKind::sliding) > 0;
  VllmAttentionPages attention_pages;
  if (sliding_hybrid) {
    const std::uint64_t kv_bytes = element_bits(kv_dtype.format) / 8;
    const ModelSpec global = global_layer_view(ss);  // Gemma 4's full layers: heads of their own
    attention_pages.full_layers = layers_of(AttentionKind::full);
    attention_pages.sliding_layers = layers_of(AttentionKind::sliding);
    attention_pages.full_token_bytes = Bytes(
        checked_mul(checked_mul(2, checked_mul(global.n_kv_heads, global.d_head, "KV"), "KV"), kv_bytes, "KV"));
    attention_pages.sliding_token_bytes = Bytes(
        checked_mul(checked_mul(2, checked_mul(ss.n_kv_heads, ss.d_head, "KV"), "KV"), kv_bytes, "KV"));
    attention_pages.window = spec.sliding_window;
    // SlidingWindowSpec: the tokens in flight beyond the window, two batches under async
    // scheduling from 0.26 (max_in_flight_tokens), one batch before.
    attention_pages.in_flight_tokens = checked_mul(so.max_num_batched_tokens,
                                                   so.version >= VllmVersion{0, 26, 0} ? 2 : 1, "in-flight tokens");
  }
  std::size_t binding = 0;
  for (std::size_t k = 0; k < stages.size(); ++k) {
    Stage& st = stages[k];
    const Bytes non_kv = st.weights.bytes.plus(st.peak.bytes, "non-KV memory").plus(cublas, "non-KV memory");
    // After 0.20.0 vLLM logs a hybrid's cache as the tokens its concurrency holds.
    const bool concurrency_tokens = so.version > VllmVersion{0, 20, 0};
    st.cap = state_space ? vllm_state_space_capacity(usable_memory(gpu), so.gpu_memory_utilization, non_kv, pages,
                                                     so.block_size, max_len, so.kv_cache_memory)
             : sliding_hybrid
                 ? vllm_sliding_capacity(usable_memory(gpu), so.gpu_memory_utilization, non_kv, attention_pages,
                                         so.block_size, max_len, concurrency_tokens, so.kv_cache_memory)
                 : vllm_kv_capacity(usable_memory(gpu), so.gpu_memory_utilization, non_kv, st.block, so.block_size,
                                    max_len, so.kv_cache_memory);
    st.cap.concurrency_tokens = (state_space || sliding_hybrid) && concurrency_tokens;
    if (st.cap.blocks < stages[binding].cap.blocks) binding = k;
  }
  const ServingCapacity cap = stages[binding].cap;

  const std::uint64_t world = checked_mul(checked_mul(t, dp, "tp x dp"), pp, "tp x dp x pp");
  std::vector<DeviceMemory> devices;
  for (std::size_t k = 0; k < stages.size(); ++k) {
    const Stage& st = stages[k];
    const std::string block_text =
        state_space ? (pages.attention_layers == 0
                           ? "a request's state in each of " + s(pages.mamba_layers) + " Mamba layers, " +
                                 group_digits(pages.state_bytes.count()) + " B each"
                           : "a page in each of a group's layers: " + s(cap.block_size) + " tokens x " +
                                 group_digits(pages.token_bytes.count()) +
                                 " B of an attention layer's K and V, or a request's state in a Mamba layer (" +
                                 group_digits(pages.state_bytes.count()) + " B, padded); " + s(cap.kv_groups) +
                                 " groups of " + s(cap.group_layers) + " layers")
        : sliding_hybrid
            ? "a page in each of a group's layers: " + group_digits(cap.block_bytes.count() / cap.group_layers) +
                  " B, a sliding layer's " + s(so.block_size) + " tokens of K and V; " + s(cap.kv_groups) +
                  " groups of " + s(cap.group_layers) + " layers"
        : ss.mla.kv_lora_rank != 0
            ? s(so.block_size) + " tokens x " + s(st.layers) + " layers x (kv_lora_rank " + s(ss.mla.kv_lora_rank) +
                  " + qk_rope_head_dim " + s(ss.mla.qk_rope_head_dim) + ") latent"
            : s(so.block_size) + " tokens x 2 x " + s(st.layers) + " layers x " + s(ss.n_kv_heads) + " kv_heads x " +
                  s(ss.d_head) + " d_head";
    // Every stage allocates the engine's blocks: the scarcest stage's count. With Mamba layers
    // a block is a page in every layer of a group.
    const Bytes kv_block = state_space || sliding_hybrid ? cap.block_bytes : st.block;
    Item kv = row("kv_cache", kv_block.times(cap.blocks, "KV cache"),
                  group_digits(cap.blocks) + " blocks x " + group_digits(kv_block.count()) + " B (" + block_text +
                      " at " + to_string(kv_dtype) + "); blocks = " +
                      (so.kv_cache_memory
                           ? "floor(kv_cache_memory_bytes " + group_digits(so.kv_cache_memory->count()) + " / " +
                                 group_digits(kv_block.count()) + ")"
                           : "floor((ceil(" + shortest_text(so.gpu_memory_utilization) + " x " +
                                 group_digits(usable_memory(gpu).count()) + ") - " +
                                 group_digits(st.cap.non_kv.count()) + ") / " + group_digits(kv_block.count()) + ")") +
                      (pp > 1 ? ", the fewest of the " + s(pp) + " stages'" : std::string()),
                  group_digits(cap.tokens) + " tokens: " + group_digits(cap.full_sequences) + " sequences of " +
                      group_digits(max_len) +
                      (pp > 1 && st.cap.blocks > cap.blocks
                           ? "; this stage has room for " + group_digits(st.cap.blocks) + " blocks"
                           : std::string()));
    DeviceMemory d;
    d.role = pp > 1       ? "stage " + s(k) + " (layers " + s(st.first) + "-" + s(st.first + st.layers - 1) + ")"
             : world == 1 ? "every GPU"
                          : "every rank";
    d.count = checked_mul(t, dp, "tp x dp");
    d.holds = tensor_text(t, &spec) + "; a KV cache of " + group_digits(cap.logged_tokens()) + " tokens";
    if (pp > 1) {
      d.holds = s(st.layers) + " layers" + (k == 0 ? " and the embeddings" : "") +
                (k + 1 == stages.size() ? ", the head and the sampler" : "") +
                (t > 1 ? ", 1/" + s(t) + " of each matrix" : std::string()) + "; a KV cache of " +
                group_digits(cap.tokens) + " tokens";
    }
    if (ep > 1) {
      d.holds = s(ss.experts) + " of " + s(spec.experts) + " routed experts of every MoE layer; " +
                (t > 1 ? "1/" + s(t) + " of every other tensor" : std::string("every other tensor")) +
                "; a KV cache of " + group_digits(cap.tokens) + " tokens";
    }
    d.breakdown.components = {st.weights, kv, st.peak, overhead};
    check_against(d, gpu);
    devices.push_back(std::move(d));
  }

  LayoutEstimate out;
  out.engine = "vllm";
  out.tensor = t;
  out.data = dp;
  out.world_size = world;
  out.pipeline = pp;
  out.description = "vLLM, tensor_parallel_size " + s(t) +
                    (pp > 1 ? ", pipeline_parallel_size " + s(pp) : std::string()) +
                    (dp > 1 ? ", data_parallel_size " + s(dp) : std::string()) +
                    (ep > 1 ? ", enable_expert_parallel (EP " + s(ep) + ")" : std::string()) + " on " + s(world) +
                    " x " + gpu.name + ", gpu_memory_utilization " + shortest_text(so.gpu_memory_utilization) +
                    ", max_model_len " + group_digits(max_len) + ", max_num_seqs " + group_digits(so.max_num_seqs) +
                    ", max_num_batched_tokens " + group_digits(so.max_num_batched_tokens);
  out.devices = std::move(devices);
  out.serving = cap;
  shard_notes(spec, shard, kVocabMultiple, out.notes);
  if (dp > 1) {
    out.notes.push_back("data_parallel_size " + s(dp) + ": " + s(dp) +
                        " engines, each with its own KV cache of the tokens above and its own requests" +
                        (ep > 1 ? "; attention, embeddings and shared experts are replicated across them" : ""));
  }
  if (sliding_hybrid) {
    const VllmAttentionPages& a = attention_pages;
    const std::uint64_t page = cap.block_bytes.count() / cap.group_layers;
    const auto tokens_a_page = [&](Bytes token) {
      return page % token.count() == 0 ? page / token.count() : so.block_size;  // else padded to the page
    };
    const std::uint64_t window_tokens = std::min(a.window - 1 + a.in_flight_tokens, max_len);
    out.notes.push_back(
        "vLLM's hybrid KV cache manager: " + s(a.full_layers) + " full-attention and " + s(a.sliding_layers) +
        " sliding-window layers in " + s(cap.kv_groups) + " groups of " + s(cap.group_layers) + ", a block a page of " +
        group_digits(page) + " B in each; a page holds " + s(tokens_a_page(a.full_token_bytes)) +
        " tokens of a full layer, " + s(tokens_a_page(a.sliding_token_bytes)) +
        " of a sliding one; a request of max_model_len holds " + group_digits(cap.per_request_blocks) +
        " blocks: its whole length in each full group and, in each sliding group, min(the window "
        "less one + " +
        group_digits(a.in_flight_tokens) + " tokens in flight, max_model_len) = " + group_digits(window_tokens) +
        " tokens and a block more (`disable_hybrid_kv_cache_manager` keeps every layer's whole "
        "length)");
    group_notes(cap, {a.full_layers, a.sliding_layers}, out.notes);
  }
  if (state_space) {
    if (!mode_note.empty()) out.notes.push_back(mode_note);
    const std::uint64_t state = pages.state_bytes.count();
    if (pages.attention_layers == 0) {
      out.notes.push_back("Mamba layers alone: one KV group of all " + s(pages.mamba_layers) +
                          " layers, a block a request (its " + group_digits(state) +
                          " B of state in each), logged as max_model_len tokens a block");
    } else {
      const std::uint64_t page = checked_mul(cap.block_size, pages.token_bytes.count(), "page");
      if (cap.block_size > so.block_size) {
        out.notes.push_back("vLLM: 'Setting attention block size to " + group_digits(cap.block_size) +
                            " tokens to ensure that attention page size is >= mamba page size'");
      }
      if (page > state) {
        out.notes.push_back("vLLM: 'Padding mamba page size by " +
                            fixed_text(100.0 * static_cast<double>(page - state) / static_cast<double>(state), 2) +
                            "%'; " + s(cap.kv_groups) + " KV groups of " + s(cap.group_layers) +
                            " layers, a request holding ceil(max_model_len / block_size) blocks in each attention "
                            "group and " +
                            (pages.state_blocks == 1 ? std::string("one") : s(pages.state_blocks)) +
                            " in each Mamba group (" + s(cap.per_request_blocks) + " in all)");
      }
      group_notes(cap, {pages.attention_layers, pages.mamba_layers}, out.notes);
    }
    if (spec.family == Family::nemotron_h && so.mamba_ssm_bytes == 0) {
      out.notes.push_back(
          "NemotronH's SSM state in float32, as vLLM keeps it since 2026-04 (float16 from 0.13, the "
          "model's dtype before): `mamba_ssm_cache_dtype` sets it");
    }
    if (spec.family == Family::qwen3_next && so.mamba_ssm_bytes == 0) {
      out.notes.push_back(state_fp32 ? "Qwen3.5's gated DeltaNet state in float32, its config's mamba_ssm_dtype, which "
                                       "vLLM reads for Qwen3_5ForConditionalGeneration: `mamba_ssm_cache_dtype` sets it"
                                     : "the gated DeltaNet state in the model's dtype: vLLM reads the config's "
                                       "mamba_ssm_dtype (float32) only for Qwen3.5's multimodal checkpoints; "
                                       "`mamba_ssm_cache_dtype` sets it");
    }
    out.notes.push_back(
        "the profile's activation peak through the Mamba layers is memplan's estimate of a PyTorch forward, not yet "
        "checked against a vLLM log");
    // compilation.py (vLLM of 2026-04 on): each running request holds a Mamba block.
    if (cap.blocks < so.max_num_seqs) {
      out.notes.push_back("max_num_seqs " + group_digits(so.max_num_seqs) + " exceeds the " + group_digits(cap.blocks) +
                          " Mamba cache blocks: vLLM of 2026-04 on refuses to start with full CUDA graphs "
                          "('max_num_seqs exceeds available Mamba cache blocks'), earlier ones cap the CUDA-graph "
                          "sizes; lower `max_num_seqs`");
    }
  }
  if (cap.shortfall.count() > 0) {
    out.notes.push_back(
        "no room for the KV cache: weights, activation peak and workspace need " + group_digits(cap.shortfall.count()) +
        " B more than gpu_memory_utilization leaves (vLLM: 'No available memory for the cache blocks')");
  } else if (!cap.holds_a_sequence()) {
    out.notes.push_back("the KV cache holds " + group_digits(cap.tokens) + " tokens, fewer than max_model_len " +
                        group_digits(max_len) +
                        ": vLLM refuses to start (raise `gpu_memory_utilization` or `tp`, or lower `max_model_len`)");
  }
  if (encoder) {
    out.notes.push_back("vLLM: 'Encoder cache will be initialized with a budget of " + group_digits(encoder->budget) +
                        " tokens, and profiled with " + group_digits(encoder->items) +
                        " image items of the maximum feature size' (" + s(encoder->side) + "x" + s(encoder->side) +
                        " px, " + group_digits(encoder->tokens) +
                        " tokens each); the tower's pass is memplan's estimate of a PyTorch pass with flash "
                        "attention" +
                        (t > 1 ? ", not split over the ranks (an upper bound)" : std::string()) +
                        "; `language_model_only` drops the tower");
  }
  if (spec_dec.k > 0) {
    out.notes.push_back(
        "speculative decoding (" + so.speculative_method + ", num_speculative_tokens " + s(spec_dec.k) + "): " +
        (spec_dec.mtp_layers > 0
             ? s(spec_dec.mtp_layers) + " MTP layer" + (spec_dec.mtp_layers > 1 ? "s" : "") +
                   " in the weights (the embedding and head shared) and in the KV cache beside the target's "
                   "attention layers; the profile runs the drafter after the forward"
             : std::string("ngram drafts on the host: no drafter weights or KV pages")) +
        (state_space ? "; a Mamba layer's convolution state keeps a row for each drafted token, and a request a "
                       "block for each in every Mamba group"
                     : std::string()) +
        "; the sampler's profile adds the rejection sampler's logits. The drafter's buffers and passes are derived "
        "from vLLM's code, not measured");
  }
  if (so.max_loras > 0) {
    out.notes.push_back("enable_lora: " + s(so.max_loras) + " adapter slots of rank " + s(so.max_lora_rank) +
                        " are in the weights on every rank (vLLM allocates their buffers at start-up); the profile's "
                        "dummy adapters' activations are not counted");
  }
  out.notes.push_back(
      "vLLM measures the activation peak at start-up (profile_run); memplan estimates it as the larger of "
      "one forward over max_num_batched_tokens tokens and the sampler's warm-up over max_num_seqs sequences (vLLM " +
      std::to_string(so.version.major) + "." + std::to_string(so.version.minor) + "'s, `vllm_version`)" +
      std::string(encoder ? ", with the encoder cache beside them, or the vision tower's pass before them" : ""));
  out.notes.push_back(
      "not counted: CUDA graphs (captured after the KV cache is allocated; vLLM's enforce_eager skips them) and, "
      "with t > 1, NCCL's buffers");
  return out;
}

// --------------------------------------------------------------------- device_map

std::string unit_ranges(const std::vector<PlacementUnit>& units, const std::vector<std::size_t>& indices) {
  std::vector<std::string> parts;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    const PlacementUnit& u = units[indices[k]];
    if (!u.layer) {
      parts.push_back(u.name);
      continue;
    }
    std::size_t end = k;
    while (end + 1 < indices.size() && units[indices[end + 1]].layer &&
           *units[indices[end + 1]].layer == *units[indices[end]].layer + 1)
      ++end;
    const std::uint64_t a = *u.layer, b = *units[indices[end]].layer;
    parts.push_back(a == b ? "layer " + s(a) : "layers " + s(a) + "-" + s(b));
    k = end;
  }
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

// Weight rows of the units at `indices`: one row per run of consecutive blocks, one per other unit.
Item placed_weights(const std::vector<PlacementUnit>& units, const std::vector<std::size_t>& indices,
                    const std::string& name) {
  Item w = row(name, Bytes(0), "");
  w.params = 0;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    const PlacementUnit& u = units[indices[k]];
    std::size_t end = k;
    if (u.layer) {
      while (end + 1 < indices.size() && units[indices[end + 1]].layer &&
             *units[indices[end + 1]].layer == *units[indices[end]].layer + 1)
        ++end;
    }
    const std::uint64_t count = end - k + 1;
    // Blocks differ where a hybrid mixes attention and state-space layers: sum them.
    Bytes run_bytes;
    std::uint64_t run_params = 0;
    bool uniform = true;
    for (std::size_t i = k; i <= end; ++i) {
      const PlacementUnit& b = units[indices[i]];
      run_bytes = run_bytes.plus(b.bytes, "placed weights");
      run_params = checked_add(run_params, b.params, "parameters");
      uniform = uniform && b.bytes == u.bytes;
    }
    Item r = row(
        u.layer ? (count == 1 ? "layer " + s(*u.layer) : "layers " + s(*u.layer) + "-" + s(*units[indices[end]].layer))
                : u.name,
        run_bytes,
        !u.layer  ? group_digits(u.bytes.count()) + " B"
        : uniform ? s(count) + " block" + (count == 1 ? "" : "s") + " x " + group_digits(u.bytes.count()) + " B"
                  : s(count) + " blocks of two kinds (attention and state-space layers)");
    r.params = run_params;
    w.bytes = w.bytes.plus(r.bytes, "placed weights");
    w.params = checked_add(*w.params, *r.params, "parameters");
    w.detail.push_back(std::move(r));
    k = end;
  }
  w.formula = group_digits(*w.params) + " params placed here whole (no module is split across GPUs)";
  return w;
}

LayoutEstimate device_map_layout(const ModelSpec& spec, const Workload& w, const LayoutOptions& o) {
  const std::size_t gpus = o.gpus.size();
  if (gpus == 0)
    throw_invalid_input("gpus",
                        "`device_map` places the model over GPUs: list them with `gpus`, e.g. a100-80gb,a100-80gb");
  std::vector<Bytes> max_memory = o.max_memory;
  const bool user = !max_memory.empty();
  if (user && max_memory.size() != gpus) {
    throw_invalid_input("max_memory", "`max_memory` lists " + s(max_memory.size()) + " sizes for " + s(gpus) + " GPUs");
  }
  if (!user) {
    for (const GpuSpec& g : o.gpus) {
      const Bytes context = w.overhead.cuda_context;
      const Bytes total = usable_memory(g);
      max_memory.push_back(total > context ? Bytes(total.count() - context.count()) : Bytes(0));
    }
  }
  const std::vector<PlacementUnit> units = placement_units(spec, w.weights);
  const Placement placement = place_units(units, {*o.device_map, max_memory, user, o.cpu_memory});

  // Where each unit runs: its GPU, or GPU 0 for what is offloaded (accelerate's execution device).
  std::vector<std::size_t> runs_on(units.size(), 0);
  std::vector<std::vector<std::size_t>> on_gpu(gpus);
  std::vector<std::size_t> offloaded;
  std::optional<std::size_t> embed_gpu, head_gpu;
  std::vector<std::size_t> layer_gpu(spec.n_layers, 0);
  for (std::size_t i = 0; i < units.size(); ++i) {
    const int dev = placement.device[i];
    if (dev >= 0) {
      runs_on[i] = static_cast<std::size_t>(dev);
      on_gpu[runs_on[i]].push_back(i);
    } else {
      offloaded.push_back(i);
    }
    const PlacementUnit& u = units[i];
    if (u.layer) layer_gpu[*u.layer] = runs_on[i];
    if (u.name == "token_embedding") embed_gpu = runs_on[i];
    if (u.name == "lm_head" || u.name == "pooler") head_gpu = runs_on[i];
  }
  if (!head_gpu) {
    // A tied LM head runs where the token table is (accelerate keeps tied weights together).
    head_gpu = spec.lm_head == LmHead::tied && embed_gpu ? *embed_gpu : layer_gpu.empty() ? 0 : layer_gpu.back();
  }
  if (!embed_gpu) embed_gpu = 0;

  // The single-device plan supplies the per-layer runtime: KV cache, hooks, working set.
  const Breakdown whole = estimate_workload(spec, w);
  const Item* kv = whole.find("kv_cache");
  if (kv == nullptr) kv = whole.find("ssm_state");  // a state-space model's fixed-size state
  const Item* ws_head = whole.find("forward_workspace");
  std::optional<Item> ws_body;
  if (ws_head != nullptr && spec.lm_head != LmHead::none) {
    ModelSpec body = spec;
    body.lm_head = LmHead::none;
    body.lm_head_bias = false;
    Workload wb = w;
    wb.include_overhead = false;
    wb.cache.filter.clear();
    if (wb.kind == WorkloadKind::extraction) wb.kind = WorkloadKind::inference;  // same working set, no hooks
    const Breakdown b = estimate_workload(body, wb);
    if (const Item* f = b.find("forward_workspace")) ws_body = *f;
  } else if (ws_head != nullptr) {
    ws_body = *ws_head;
  }
  std::vector<std::uint64_t> layers_on(gpus, 0);
  for (std::uint64_t l = 0; l < spec.n_layers; ++l) ++layers_on[layer_gpu[l]];
  // The cache layer l holds: its kind's detail row shared by the layers of that kind (layers
  // that differ: sliding and full, state-space and attention), else an even share.
  const auto layer_cache_bytes = [&](const Item& cache, std::uint64_t l) {
    const AttentionKind kind = attention_kind(spec, l);
    if (l + spec.kv_shared_layers >= spec.n_layers && spec.kv_shared_layers != 0) return Bytes(0);  // reads another's
    const std::string name = kind == AttentionKind::mamba ? "ssm_state" : to_string(kind) + "_layers";
    for (const auto& [k, count] : cache_layer_counts(spec)) {
      if (k != kind || cache.name != "kv_cache") continue;  // ssm_state alone: its rows are its two tensors
      for (const Item& d : cache.detail) {
        if (d.name == name) return Bytes(d.bytes.count() / count);
      }
    }
    return Bytes(cache.bytes.count() / spec.n_layers);
  };

  // Hooks of an extraction, by the GPU whose layer produces them.
  const bool hooks = (w.kind == WorkloadKind::extraction || w.kind == WorkloadKind::streaming_extraction) &&
                     !w.cache.on_cpu;
  std::vector<Bytes> hook_bytes_on(gpus, Bytes(0));
  std::vector<std::vector<TensorRun>> hook_runs(gpus);
  std::vector<std::uint64_t> hook_count(gpus, 0);
  if (hooks) {
    ActivationCacheOptions cache = w.cache;
    const bool streaming = w.kind == WorkloadKind::streaming_extraction;
    cache.batch = w.batch;
    cache.seq = streaming ? std::min(w.streaming_chunk, w.seq_len) : w.seq_len;
    cache.key_positions = w.seq_len;
    cache.precision = compute_precision(w);
    for (const Hook& h : selected_hooks(spec, cache)) {
      const std::size_t g = h.layer ? layer_gpu[*h.layer]
                            : (h.name.rfind("hook_embed", 0) == 0 || h.name.rfind("hook_pos_embed", 0) == 0 ||
                               h.name.rfind("hook_tokens", 0) == 0)
                                ? *embed_gpu
                                : *head_gpu;
      const Bytes b = hook_bytes(h, cache);
      hook_bytes_on[g] = hook_bytes_on[g].plus(b, "hooks");
      const bool gradient = cache.incl_bwd && h.element_bits == 0;
      hook_runs[g].push_back(gradient ? TensorRun{b.count() / 2, 2} : TensorRun{b.count(), 1});
      ++hook_count[g];
    }
  }

  LayoutEstimate out;
  out.engine = "accelerate";
  out.world_size = gpus;
  std::string names;
  for (const GpuSpec& g : o.gpus) names += (names.empty() ? "" : ", ") + g.name;
  out.description = "device_map=\"" +
                    std::string(*o.device_map == PlacementPolicy::balanced ? "auto" : to_string(*o.device_map)) +
                    "\" over " + s(gpus) + " GPU" + (gpus == 1 ? "" : "s") + " (" + names + ")";
  const std::uint64_t L = spec.n_layers;
  for (std::size_t g = 0; g < gpus; ++g) {
    DeviceMemory d;
    d.role = "gpu " + s(g);
    d.holds = on_gpu[g].empty() ? "nothing" : unit_ranges(units, on_gpu[g]);
    Breakdown& b = d.breakdown;
    Item weights = placed_weights(units, on_gpu[g], "weights");
    std::vector<TensorRun> persistent;
    for (const std::size_t i : on_gpu[g])
      persistent.insert(persistent.end(), units[i].tensors.begin(), units[i].tensors.end());
    b.components.push_back(std::move(weights));
    if (g == 0 && !offloaded.empty()) {
      Bytes largest;
      for (const std::size_t i : offloaded) largest = std::max(largest, units[i].bytes);
      b.components.push_back(row("offload_buffer", largest,
                                 "the largest offloaded unit (" + group_digits(largest.count()) +
                                     " B): accelerate brings each offloaded module to GPU 0 to run it"));
    }
    if (kv != nullptr && layers_on[g] > 0) {
      const Bytes per_layer(kv->bytes.count() / L);
      Bytes here;
      for (std::uint64_t l = 0; l < L; ++l) {
        if (layer_gpu[l] == g) here = here.plus(layer_cache_bytes(*kv, l), "KV cache");
      }
      const bool even = here == per_layer.times(layers_on[g], "KV cache");
      Item k = row(kv->name, here,
                   s(layers_on[g]) + " of " + s(L) + " layers" +
                       (even ? " x " + group_digits(per_layer.count()) + " B" : ", each its own kind's share") + " (" +
                       kv->formula + ")",
                   kv->note);
      persistent.push_back({here.count() / (2 * layers_on[g]), checked_mul(2, layers_on[g], "KV tensors")});
      b.components.push_back(std::move(k));
    }
    if (hooks && hook_bytes_on[g].count() > 0) {
      b.components.push_back(row("activations", hook_bytes_on[g],
                                 s(hook_count[g]) + " cached hooks produced by the modules that run here (" +
                                     to_string(compute_precision(w)) + ")"));
      persistent.insert(persistent.end(), hook_runs[g].begin(), hook_runs[g].end());
    }
    Bytes transient;
    if (ws_head != nullptr && g == *head_gpu) {
      b.components.push_back(*ws_head);
      transient = ws_head->bytes;
    } else if (ws_body && layers_on[g] > 0) {
      b.components.push_back(*ws_body);
      transient = ws_body->bytes;
    }
    if (w.include_overhead && w.kind != WorkloadKind::weights) {
      OverheadOptions oo = w.overhead;
      oo.hopper_or_newer = o.gpus[g].compute_capability >= ComputeCapability{9, 0};
      b.components.push_back(std::move(estimate_overhead(oo, persistent, {transient, {}}).components.front()));
    }
    if (g == 0) {
      for (const std::size_t i : offloaded) {
        b.host.push_back(row(units[i].name, units[i].bytes,
                             group_digits(units[i].bytes.count()) + " B of weights on the " +
                                 (placement.device[i] == -1 ? std::string("CPU") : std::string("disk")),
                             "offloaded: streamed to GPU 0 for every forward"));
      }
    }
    check_against(d, o.gpus[g]);
    out.devices.push_back(std::move(d));
  }
  for (std::size_t k = 0; k < offloaded.size();) {  // runs of blocks on the same device as one entry
    std::size_t end = k;
    const int where = placement.device[offloaded[k]];
    while (end + 1 < offloaded.size() && placement.device[offloaded[end + 1]] == where && units[offloaded[k]].layer &&
           units[offloaded[end + 1]].layer && *units[offloaded[end + 1]].layer == *units[offloaded[end]].layer + 1) {
      ++end;
    }
    const std::vector<std::size_t> run(offloaded.begin() + static_cast<std::ptrdiff_t>(k),
                                       offloaded.begin() + static_cast<std::ptrdiff_t>(end) + 1);
    out.offloaded.push_back(unit_ranges(units, run) + (where == -1 ? " (cpu)" : " (disk)"));
    k = end + 1;
  }
  if (!offloaded.empty()) {
    out.notes.push_back("does not fit on the GPUs: " + unit_ranges(units, offloaded) +
                        " offloaded (accelerate runs them from host memory, far slower)");
  }
  std::string budgets;
  for (std::size_t g = 0; g < gpus; ++g)
    budgets += (budgets.empty() ? "" : ", ") + group_digits(placement.max_memory[g].count());
  out.notes.push_back("max_memory per GPU after balancing: " + budgets + " B; GPU 0 keeps " +
                      group_digits(placement.largest_unit.count()) +
                      " B (the largest unit) free for offloaded modules");
  out.notes.push_back(
      "device_map places weights only; memplan adds each GPU's KV cache, hooks and working set, which "
      "accelerate does not budget for");
  return out;
}

}  // namespace

VllmVersion parse_vllm_version(std::string_view text) {
  const std::optional<ReleaseNumbers> r = release_numbers(text);
  if (!r || (r->parts[0] == 0 && r->parts[1] == 0)) {
    throw Error(ErrorKind::invalid_input,
                "`vllm_version` is a vLLM release such as 0.19 or 0.20.1, not '" + printable(text) + "'",
                "vllm_version");
  }
  return {r->parts[0], r->parts[1], r->parts[2]};
}

Engine parse_engine(std::string_view text) {
  if (text == "pytorch") return Engine::pytorch;
  if (text == "vllm") return Engine::vllm;
  if (text == "llama.cpp") return Engine::llama_cpp;
  throw Error(ErrorKind::invalid_input,
              "`engine` is pytorch, vllm or llama.cpp, not '" + printable(text) + "'" +
                  did_you_mean(text, {"pytorch", "vllm", "llama.cpp"}),
              "engine");
}

LayoutEstimate estimate_layout(const ModelSpec& spec, const Workload& w, const LayoutOptions& o) {
  if (is_encoder_decoder(spec)) {
    throw_invalid_input(o.vllm || o.llama_cpp ? "engine"
                        : o.device_map        ? "device_map"
                                              : "tensor_parallel",
                        spec.name + " is an encoder-decoder (" + std::to_string(spec.encoder.n_layers) +
                            " encoder layers, " + std::to_string(spec.n_layers) +
                            " decoder layers), and memplan's multi-GPU layouts and serving engines place one stack "
                            "of decoder layers: plan it on one GPU (-w inference or generation)");
  }
  const std::string training_option = training_only_option(o.parallel);
  if ((o.vllm || o.llama_cpp) && o.device_map)
    throw_invalid_input("device_map", "`engine` " + std::string(o.vllm ? "vllm" : "llama.cpp") +
                                          " and `device_map` are two engines: choose one");
  if (o.llama_cpp) {
    if (w.kind != WorkloadKind::inference && w.kind != WorkloadKind::generation) {
      throw_invalid_input("engine",
                          "`engine` llama.cpp plans inference and generation, not `kind` " + to_string(w.kind));
    }
    if (o.parallel.tensor != 1 || !training_only_option(o.parallel).empty())
      throw_invalid_input("engine", "`engine` llama.cpp runs on one GPU (with -ngl) here; it takes no `tp`/`pp`/`dp`");
    return detail::llama_cpp_layout(spec, w, o);
  }
  if (o.device_map) {
    if (!inference_like(w.kind)) {
      throw_invalid_input("device_map",
                          "device_map places a model for inference (weights, inference, generation, extraction); "
                          "training layouts take `tp`/`pp`/`dp`/`zero`/`fsdp`");
    }
    if (o.parallel.tensor != 1 || !training_option.empty()) {
      throw_invalid_input("device_map",
                          "device_map places whole layers on one GPU after another; it does not combine with " +
                              (o.parallel.tensor != 1 ? std::string("`tp`") : training_option));
    }
    return device_map_layout(spec, w, o);
  }
  if (!o.max_memory.empty() || o.cpu_memory)
    throw_invalid_input("max_memory", "`max_memory` and `cpu_memory` apply to `device_map`");
  if (o.gpus.size() > 1) {
    throw_invalid_input("gpus",
                        "a list of GPUs (`gpus`) is for `device_map`; the other layouts take one GPU type with `gpu`");
  }
  if (o.vllm) {
    if (w.kind != WorkloadKind::inference) {
      throw_invalid_input("engine",
                          "`engine` vllm plans a server (its KV cache is what the GPU has left), not `kind` " +
                              to_string(w.kind));
    }
    ParallelTrainingOptions serving_parallel = o.parallel;
    serving_parallel.data = 1;    // data_parallel_size, pipeline_parallel_size and enable_expert_parallel
    serving_parallel.expert = 1;  // are vLLM's too
    serving_parallel.pipeline = 1;
    const std::string training_only = training_only_option(serving_parallel);
    if (!training_only.empty())
      throw_invalid_input("engine", training_only + " plans training; vLLM serving takes `tp`, `pp`, `dp` and `ep`");
    return vllm_layout(spec, w, o);
  }
  if (w.kind == WorkloadKind::training) {
    const std::optional<OverheadOptions> overhead = w.include_overhead ? std::optional(w.overhead) : std::nullopt;
    LayoutEstimate out = estimate_parallel_training(spec, detail::shape_for(w, w.batch), w.analysis.training,
                                                    o.parallel, overhead);
    if (o.gpus.size() == 1) {
      for (DeviceMemory& d : out.devices) check_against(d, o.gpus.front());
    }
    return out;
  }
  if (!inference_like(w.kind)) {
    throw_invalid_input("workload", "multi-GPU layouts plan training and inference workloads; `kind` " +
                                        to_string(w.kind) + " is planned on one GPU");
  }
  if (!training_option.empty()) {
    throw_invalid_input("workload", training_option +
                                        " lays out a training step: use `kind` training (inference over several GPUs: "
                                        "`tp`, `engine` vllm or `device_map`)");
  }
  return tensor_parallel_layout(spec, w, o);
}

}  // namespace memplan
