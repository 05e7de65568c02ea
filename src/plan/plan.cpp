#include "memplan/plan/plan.hpp"

#include <algorithm>
#include <limits>

#include "memplan/core/bytes.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "memplan/plan/fit.hpp"

namespace memplan {

namespace {

bool layout_given(const PlanSettings& s) {
  return parse_engine(s.layout.engine) != Engine::pytorch ||
         std::any_of(s.given.begin(), s.given.end(), [](const std::string& key) {
           const OptionDef* o = find_option(key);
           return o != nullptr && o->group == "Multi-GPU layouts";
         });
}

// The engines' own knobs, given for another engine, are mistakes.
void check_engine_options(const PlanSettings& s) {
  const Engine engine = parse_engine(s.layout.engine);
  const auto refuse = [&](std::initializer_list<const char*> keys, const char* engine_name) {
    for (const char* key : keys) {
      if (s.was_given(key)) {
        throw_invalid_input(key, "`" + std::string(key) + "` is a " + engine_name + " setting: add `engine` " +
                                     (std::string(engine_name) == "vLLM" ? "vllm" : "llama.cpp"));
      }
    }
  };
  if (engine != Engine::vllm) {
    refuse({"gpu_memory_utilization", "max_model_len", "vllm_entrypoint", "max_num_seqs", "max_num_batched_tokens",
            "block_size", "max_loras", "max_lora_rank", "kv_cache_memory_bytes", "mamba_ssm_cache_dtype",
            "language_model_only", "enable_prefix_caching", "disable_hybrid_kv_cache_manager", "mamba_cache_mode",
            "speculative_method", "num_speculative_tokens", "vllm_version"},
           "vLLM");
  }
  if (engine != Engine::llama_cpp)
    refuse({"ngl", "n_cpu_moe", "ubatch", "parallel", "cache_type_k", "cache_type_v", "flash_attn", "kv_unified",
            "llama_server", "draft", "draft_max", "ngl_draft", "cache_type_k_draft", "cache_type_v_draft", "mmproj",
            "mmproj_offload", "image_max_tokens"},
           "llama.cpp");
}

// Knobs that only mean something together.
void check_combinations(const PlanSettings& s, const Workload& w) {
  if (s.was_given("lora_targets") && w.analysis.training.lora.rank == 0) {
    throw_invalid_input("lora_targets", "`lora_targets` applies to LoRA: set `lora_rank`");
  }
  const SampleGradientOptions& g = w.analysis.sample_gradients;
  if (s.was_given("zlib_ratio") && !(s.was_given("compress") && g.int8 && g.zlib_ratio > 0)) {
    throw_invalid_input("zlib_ratio", "`zlib_ratio` applies to `compress` int8+zlib");
  }
  if (s.pos_index_from_end > w.seq_len) {
    throw_invalid_input("pos_slice", "`pos_slice` -" + std::to_string(s.pos_index_from_end) +
                                         " is before the first of " + std::to_string(w.seq_len) + " positions");
  }
  const LanczosOptions& l = w.analysis.lanczos;
  if ((s.was_given("lanczos_k") || s.was_given("lanczos_iterations")) && l.k > l.iterations) {
    throw_invalid_input("lanczos_k", "`lanczos_k` " + std::to_string(l.k) +
                                         " asks for more eigenvalues than `lanczos_iterations` " +
                                         std::to_string(l.iterations) + " Lanczos steps produce");
  }
  const RepresentationOptions& r = w.analysis.representation;
  if ((s.was_given("neighbours") || s.was_given("points")) && r.neighbours >= r.samples &&
      (w.kind == WorkloadKind::embedding_singularities || w.kind == WorkloadKind::fiber_bundle)) {
    throw_invalid_input("neighbours", "`neighbours` " + std::to_string(r.neighbours) + " must be fewer than `points` " +
                                          std::to_string(r.samples));
  }
}

Sharding sharding_of(const LayoutRequest& a) {
  if (!a.zero.empty() && !a.fsdp.empty()) {
    throw_invalid_input("sharding",
                        "`zero` (DeepSpeed) and `fsdp` (PyTorch) are two engines sharding the same state: choose one");
  }
  if (!a.zero.empty()) return a.zero == "0" ? Sharding::none : parse_sharding("zero" + a.zero);
  if (!a.fsdp.empty()) {
    static const std::vector<std::string> names{"full", "grad_op", "hybrid"};
    if (std::find(names.begin(), names.end(), a.fsdp) == names.end()) {
      throw_invalid_input("fsdp",
                          "`fsdp` takes full (FULL_SHARD), grad_op (SHARD_GRAD_OP) or hybrid (HYBRID_SHARD), not '" +
                              printable(a.fsdp) + "'" + did_you_mean(a.fsdp, names));
    }
    return parse_sharding("fsdp_" + a.fsdp);
  }
  return Sharding::none;
}

LayoutOptions layout_options(const PlanSettings& s, const DeviceChoice& d) {
  const LayoutRequest& a = s.layout;
  LayoutOptions o;
  ParallelTrainingOptions& p = o.parallel;
  p.tensor = a.tp;
  p.pipeline = a.pp;
  p.data = a.dp;
  p.expert = a.ep;
  p.sharding = sharding_of(a);
  p.shard_group = a.shard_group;
  for (const std::string& what : a.offload) {
    (what == "optimizer" ? p.offload_optimizer : p.offload_params) = true;
  }
  p.sequence_parallel = a.sequence_parallel;
  p.micro_batches = a.micro_batches;
  p.schedule = parse_pipeline_schedule(a.schedule);
  p.stage_layers = a.stage_layers;

  const Engine engine = parse_engine(a.engine);
  if (engine == Engine::vllm) {
    // vLLM 0.9-0.11's batch defaults (EngineArgs.get_batch_defaults): larger on a GPU whose
    // total (torch's total_memory: CUDA's, a bare capacity's) is 70 GiB or more and that is not
    // an A100 (PR #17885), and larger for the LLM class than for vllm serve.
    const GpuSpec* g = d.gpu ? &*d.gpu : d.gpus.empty() ? nullptr : &d.gpus.front();
    const std::uint64_t total = g ? usable_memory(*g).count() : d.budget ? d.budget->count() : 0;
    const bool large = total >= (70ULL << 30) && (g == nullptr || g->name.find("a100") == std::string::npos);
    const bool llm = a.vllm_entrypoint == "llm";
    const std::uint64_t tokens = large ? (llm ? 16384 : 8192) : (llm ? 8192 : 2048);
    o.vllm = ServingOptions{};
    o.vllm->gpu_memory_utilization = a.gpu_memory_utilization;
    o.vllm->max_model_len = a.max_model_len;
    o.vllm->max_num_seqs = a.max_num_seqs.value_or(large ? 1024 : 256);
    o.vllm->max_num_batched_tokens = a.max_num_batched_tokens.value_or(tokens);
    o.vllm->block_size = a.block_size;
    o.vllm->max_loras = a.max_loras;
    o.vllm->max_lora_rank = a.max_lora_rank;
    o.vllm->kv_cache_memory = a.kv_cache_memory_bytes;
    o.vllm->language_model_only = a.language_model_only;
    o.vllm->enable_prefix_caching = a.enable_prefix_caching;
    o.vllm->disable_hybrid_kv_cache_manager = a.disable_hybrid_kv_cache_manager;
    o.vllm->mamba_cache_mode = a.mamba_cache_mode;
    o.vllm->speculative_method = a.speculative_method;
    o.vllm->num_speculative_tokens = a.num_speculative_tokens;
    if (!a.vllm_version.empty()) o.vllm->version = parse_vllm_version(a.vllm_version);
    o.vllm->mamba_ssm_bytes = a.mamba_ssm_cache_dtype == "float32" ? 4 : a.mamba_ssm_cache_dtype == "float16" ? 2 : 0;
  }
  if (engine == Engine::llama_cpp) {
    LlamaCppOptions l;
    l.n_ubatch = a.ubatch;
    // llama-server's -np auto: 4 slots over one unified cache (tools/server/server.cpp).
    const bool server = a.llama_server || !a.draft.empty();
    const bool auto_slots = server && !s.was_given("parallel");
    l.n_seq = auto_slots ? 4 : a.parallel;
    l.kv_unified = a.kv_unified || auto_slots;
    l.type_k = parse_llama_cpp_cache_type(a.cache_type_k, "cache_type_k").id;
    l.type_v = parse_llama_cpp_cache_type(a.cache_type_v, "cache_type_v").id;
    l.flash_attn = a.flash_attn != "off";
    l.gpu = !d.cpu;
    const std::uint64_t all_layers = d.cpu ? 0 : std::numeric_limits<std::uint32_t>::max();
    l.gpu_layers = a.ngl.value_or(all_layers);
    if (d.cpu && a.ngl.value_or(0) != 0) {
      throw_invalid_input("ngl", "`ngl` offloads layers to a GPU; a plan for the CPU (`cpu`) has none");
    }
    l.n_cpu_moe = a.n_cpu_moe;
    if (d.cpu && a.n_cpu_moe != 0) {
      throw_invalid_input("n_cpu_moe",
                          "`n_cpu_moe` keeps experts off a GPU; a plan for the CPU (`cpu`) has everything on the host");
    }
    if (d.cpu && a.ngl_draft.value_or(0) != 0) {
      throw_invalid_input("ngl_draft", "`ngl_draft` offloads layers to a GPU; a plan for the CPU (`cpu`) has none");
    }
    // llama-server keeps the logits of what its slots sample: one token each, and with a draft
    // the draft_max tokens it verifies (server_output_limits); a library context keeps them all.
    if (server) {
      l.n_outputs = checked_mul(l.n_seq, a.draft.empty() ? 1 : checked_add(a.draft_max, 1, "draft_max"), "outputs");
    }
    for (const char* key : {"draft_max", "ngl_draft", "cache_type_k_draft", "cache_type_v_draft"}) {
      if (a.draft.empty() && s.was_given(key))
        throw_invalid_input(key, "`" + std::string(key) + "` applies to a `draft` model");
    }
    l.server = server;
    // llama-server leaves -c at 0 (the trained context for each slot) and --fit on.
    l.fit_context = server && !s.was_given("seq_len");
    if (!a.draft.empty()) {
      if (!s.draft_model) throw Error(ErrorKind::internal, "the draft model '" + a.draft + "' was not looked up");
      // The draft's context copies the main one but for its cache types and layers
      // (common_base_params_to_speculative); it keeps one output per sequence.
      LlamaCppDraft draft;
      draft.spec = *s.draft_model;
      draft.options = l;
      draft.options.type_k = parse_llama_cpp_cache_type(a.cache_type_k_draft, "cache_type_k_draft").id;
      draft.options.type_v = parse_llama_cpp_cache_type(a.cache_type_v_draft, "cache_type_v_draft").id;
      draft.options.gpu_layers = a.ngl_draft.value_or(all_layers);
      draft.options.n_outputs = l.n_seq;
      draft.draft_max = a.draft_max;
      o.llama_cpp_draft = std::move(draft);
    }
    if (!a.mmproj.empty()) {
      if (!s.mmproj) throw Error(ErrorKind::internal, "the vision tower '" + a.mmproj + "' was not read");
      o.llama_cpp_mmproj = *s.mmproj;
      o.llama_cpp_mmproj->offload = a.mmproj_offload && !d.cpu;
      if (a.image_max_tokens) {
        if (o.llama_cpp_mmproj->max_tokens == 0) {
          throw_invalid_input("image_max_tokens",
                              "`image_max_tokens` sizes a dynamic-resolution tower (Qwen3-VL, "
                              "Qwen3.5); " +
                                  o.llama_cpp_mmproj->name + "'s " + o.llama_cpp_mmproj->type +
                                  " projector takes one image size");
        }
        o.llama_cpp_mmproj->max_tokens = *a.image_max_tokens;
      }
    } else {
      for (const char* key : {"mmproj_offload", "image_max_tokens"}) {
        if (s.was_given(key))
          throw_invalid_input(key, "`" + std::string(key) + "` applies to a vision tower given with `mmproj`");
      }
    }
    o.llama_cpp = l;
    o.cpu = d.cpu;
    o.host_memory = d.budget;
  }
  if (!a.device_map.empty()) {
    o.device_map = parse_placement_policy(a.device_map);
    if (d.gpu && !d.probed)
      throw_invalid_input("gpus", "`device_map` takes its GPUs from `gpus` (e.g. 2xa100-80gb,rtx-4090), not `gpu`");
    if (d.gpus.empty())
      throw_invalid_input("gpus", "`device_map` places the model over GPUs: list them with `gpus`, e.g. 2xa100-80gb");
    o.gpus = d.gpus;
    if (!a.max_memory.empty()) {
      if (a.max_memory.size() != 1 && a.max_memory.size() != o.gpus.size()) {
        throw_invalid_input("max_memory", "`max_memory` gives " + std::to_string(a.max_memory.size()) + " sizes for " +
                                              std::to_string(o.gpus.size()) +
                                              " GPUs: give one for all, or one per GPU");
      }
      for (std::size_t i = 0; i < o.gpus.size(); ++i)
        o.max_memory.push_back(a.max_memory[a.max_memory.size() == 1 ? 0 : i]);
    }
    o.cpu_memory = a.cpu_memory;
  } else {
    if (!d.gpus.empty())
      throw_invalid_input("gpus",
                          "`gpus` lists the GPUs of `device_map`; the other layouts take one GPU type with `gpu`");
    if (!a.max_memory.empty() || a.cpu_memory)
      throw_invalid_input("max_memory", "`max_memory` and `cpu_memory` apply to `device_map`");
    if (d.gpu) o.gpus.push_back(*d.gpu);
    if (!d.gpu && d.budget && engine == Engine::vllm) {
      // A bare capacity is the total vLLM takes gpu_memory_utilization of; its precisions
      // resolve as with no device (compute capability 8.0+ assumed, and said).
      GpuSpec g;
      g.name = fixed_text(static_cast<double>(d.budget->count()) / (1ULL << 30), 2) + "GiB GPU";
      g.display = g.name;
      g.memory = *d.budget;
      g.compute_capability = {8, 0};
      o.gpus.push_back(g);
    }
  }
  return o;
}

// A training step's mixed precision. A recipe named sets the dtypes it means (a conflicting
// one given is an error naming the recipe that has it); without one, the dtypes given name
// the recipe they spell. A quantised base has none: only its LoRA adapters train.
void resolve_mixed_precision(const PlanSettings& s, Workload& w, const ModelSpec& model) {
  if (w.kind != WorkloadKind::training) return;
  TrainingOptions& t = w.analysis.training;
  const bool quantized = is_quantized(w.weights.precision) || !model.stored_weights.empty();
  const bool fp32_weights = element_bits(w.weights.precision.format) == 32;
  if (!w.mixed_precision) {
    if (quantized) return;
    const bool half_compute = element_bits(compute_precision(w).format) < 32;
    w.mixed_precision = fp32_weights       ? (half_compute ? MixedPrecision::amp : MixedPrecision::fp32)
                        : t.master_weights ? MixedPrecision::master
                                           : MixedPrecision::pure;
    return;
  }
  const MixedPrecision mode = *w.mixed_precision;
  const std::string named = "`mixed_precision` " + to_string(mode);
  if (quantized) {
    throw_invalid_input("mixed_precision", named +
                                               " describes float weights; a quantised base trains through LoRA "
                                               "adapters in `lora_dtype`: leave `mixed_precision` out");
  }
  const bool precision_named = s.was_given("precision") && s.precision != "auto";
  const auto half_weights = [&] {
    if (!fp32_weights) return;
    throw_invalid_input(precision_named ? "precision" : "mixed_precision",
                        named + " keeps 16-bit weights" +
                            (precision_named ? std::string(", not ") + to_string(w.weights.precision) +
                                                   ": fp32 weights with 16-bit matmuls are `mixed_precision` amp"
                                             : ": auto resolved fp32 for this device; name `precision` bf16 or fp16"));
  };
  switch (mode) {
    case MixedPrecision::amp: {
      if (precision_named && !fp32_weights) {
        throw_invalid_input("precision",
                            named + " keeps fp32 weights and casts them per matmul, not " +
                                to_string(w.weights.precision) +
                                " ones: 16-bit weights are `mixed_precision` master (an fp32 master copy) or pure");
      }
      if (s.was_given("master_weights"))
        throw_invalid_input("master_weights", named + "'s fp32 weights are what the optimizer updates: no master copy");
      if (t.grad_precision && element_bits(t.grad_precision->format) != 32)
        throw_invalid_input("grad_precision", named + "'s gradients are fp32, as its weights are");
      if (!w.compute) {  // autocast's dtype: the 16-bit one auto resolved for the device
        if (fp32_weights) {
          throw_invalid_input("compute", named + " casts to a 16-bit dtype: auto resolved fp32 for this device; " +
                                             "name `compute` bf16 or fp16");
        }
        w.compute = w.weights.precision;
      }
      if (element_bits(w.compute->format) == 32)
        throw_invalid_input("compute", named + " casts to bf16 or fp16, not " + to_string(*w.compute) +
                                           ": fp32 throughout is `mixed_precision` fp32");
      w.weights.precision = precisions::fp32;
      return;
    }
    case MixedPrecision::master:
      half_weights();
      if (s.was_given("master_weights") && !t.master_weights)
        throw_invalid_input("master_weights",
                            named + " is the fp32 master copy; 16-bit training without it is `mixed_precision` pure");
      t.master_weights = true;
      return;
    case MixedPrecision::pure:
      half_weights();
      if (s.was_given("master_weights") && t.master_weights)
        throw_invalid_input("master_weights", named + " keeps no master copy; with one it is `mixed_precision` master");
      t.master_weights = false;
      return;
    case MixedPrecision::fp32:
      if (precision_named && !fp32_weights)
        throw_invalid_input("precision", named + " trains fp32 weights, not " + to_string(w.weights.precision));
      if (w.compute && element_bits(w.compute->format) != 32)
        throw_invalid_input("compute",
                            named + " computes in fp32; 16-bit matmuls over fp32 weights are `mixed_precision` amp");
      w.weights.precision = precisions::fp32;
      return;
  }
}

}  // namespace

Plan bind(const ModelSpec& model, const PlanSettings& s, const DeviceChoice& d, WorkloadMask kinds) {
  Plan plan;
  plan.model = model;
  plan.workload = s.workload;
  plan.threshold = s.threshold;
  plan.warnings = d.warnings;
  plan.warnings.insert(plan.warnings.end(), model.import_warnings.begin(), model.import_warnings.end());

  plan.precision_requested = s.precision;
  Workload& w = plan.workload;

  // Defaults that depend on the model or the workload.
  if (s.was_given("seq_len") && s.was_given("source_len")) {
    throw_invalid_input("source_len", "`source_len` is another name for `seq_len`: give one of them");
  }
  if (!is_encoder_decoder(model)) {
    for (const char* key : {"source_len", "target_len"}) {
      if (s.was_given(key)) {
        throw_invalid_input(key, "`" + std::string(key) + "` applies to encoder-decoder models (T5, BART, Whisper); " +
                                     model.name + " is a decoder: use `seq_len`");
      }
    }
  }
  if (!s.was_given("seq_len") && !s.was_given("source_len")) {
    // An audio encoder reads a fixed window (Whisper: 30 s, 1500 positions); others the usual default.
    w.seq_len = model.encoder.mel_bins != 0 ? model.encoder.n_positions
                                            : std::min<std::uint64_t>(2048, model.max_seq_len);
  }
  if (is_encoder_decoder(model) && (w.kind == WorkloadKind::inference || w.kind == WorkloadKind::training) &&
      !s.was_given("target_len")) {
    w.target_len = std::min(w.seq_len, model.max_seq_len);
  }
  if (w.kind == WorkloadKind::generation && !s.was_given("new_tokens")) w.new_tokens = 256;
  if (s.was_given("max_pixels")) {
    if (!keeps_image_size(model.vision) || model.vision.d_model == 0)
      throw_invalid_input("max_pixels", "`max_pixels` bounds Qwen2-VL's and Qwen2.5-VL's resized images; " +
                                            model.name + " has no such vision tower");
    if (s.max_pixels < model.vision.min_pixels)
      throw_invalid_input("max_pixels", "`max_pixels` " + std::to_string(s.max_pixels) +
                                            " is below the processor's "
                                            "min_pixels " +
                                            std::to_string(model.vision.min_pixels));
    plan.model.vision.max_pixels = s.max_pixels;
  }
  if (w.images != 0 && layout_given(s)) {
    const Engine engine = parse_engine(s.layout.engine);
    throw_invalid_input("images", engine == Engine::vllm || engine == Engine::llama_cpp
                                      ? "memplan's " + std::string(engine == Engine::vllm ? "vLLM" : "llama.cpp") +
                                            " policy does not price a vision tower's images yet: leave the engine "
                                            "out to plan them as transformers runs them"
                                      : std::string("multi-GPU layouts do not place a vision tower yet: plan the "
                                                    "images on one GPU"));
  }
  if (s.was_given("mla_cache") && model.mla.kv_lora_rank == 0) {
    throw_invalid_input("mla_cache",
                        "`mla_cache` applies to models with multi-head latent attention (DeepSeek-V2 and V3); " +
                            model.name + " has none");
  }
  if (s.was_given("ssm_kernels") && ssm_layers(model) == 0) {
    throw_invalid_input("ssm_kernels", "`ssm_kernels` applies to state-space layers (Mamba, Mamba-2, hybrids); " +
                                           model.name + " has none");
  }
  if (w.ssm_kernels == SsmKernels::torch && model.ssm.version == 3) {
    throw_invalid_input("ssm_kernels",
                        "`ssm_kernels` torch: transformers' pure-PyTorch gated DeltaNet "
                        "(torch_chunk_gated_delta_rule, without flash-linear-attention) is not "
                        "modelled; memplan prices fla's kernels (fused)");
  }
  if (model.mla.kv_lora_rank != 0 && !s.was_given("lora_targets")) {
    // Latent attention has no v projection: the default's query and value projections are
    // q (q_b when the query is compressed) and kv_b, which expands keys and values.
    w.analysis.training.lora.targets = {model.mla.q_lora_rank != 0 ? "q_b" : "q", "kv_b"};
  }
  if (attention_layers(model) == 0 && !s.was_given("lora_targets")) {
    // No q or v: the state-space mixer's input and output projections, as PEFT users target them.
    w.analysis.training.lora.targets = {"in_proj", "out_proj"};
  }
  check_options_apply(s, kinds != 0 ? kinds : workload_bit(w.kind));
  check_combinations(s, w);
  check_engine_options(s);
  // PyTorch jobs load the model with transformers, which adds its buffers; the engines' layouts
  // choose their own.
  if (parse_engine(s.layout.engine) == Engine::pytorch) w.weights.buffers = BufferRuntime::transformers;
  if (w.kind == WorkloadKind::hessian || w.kind == WorkloadKind::full_fisher) w.analysis.largest_device = d.largest;

  // The device: the one named or probed; with only a device_map list, the weakest of it
  // decides the precision.
  const bool layout = layout_given(s);
  // vLLM resolves auto by its own rules unless a policy is named.
  const std::string policy = parse_engine(s.layout.engine) == Engine::vllm && !s.was_given("policy") ? "vllm"
                                                                                                     : s.policy;
  std::optional<GpuSpec> resolve_for = d.gpu;
  if (!resolve_for && layout && !d.gpus.empty()) {
    resolve_for = *std::min_element(d.gpus.begin(), d.gpus.end(), [](const GpuSpec& a, const GpuSpec& b) {
      return a.compute_capability < b.compute_capability;
    });
  }
  if (resolve_for) w.overhead.hopper_or_newer = resolve_for->compute_capability >= ComputeCapability{9, 0};
  if (d.calibration) {
    const OverheadOptions calibrated = apply_calibration(*d.calibration, w.overhead);
    if (s.was_given("cuda_context")) {  // the user's figure wins over the cache's
      w.overhead.cublas_workspace = calibrated.cublas_workspace;
      w.overhead.cublas_workspace_source = calibrated.cublas_workspace_source;
    } else {
      w.overhead = calibrated;
    }
  }

  // The context a run measured on this card, unless calibrated here or given.
  if (!d.calibration && !s.was_given("cuda_context") && d.gpu && d.gpu->cuda_context.count() != 0) {
    w.overhead.cuda_context = w.overhead.cuda_context_low = w.overhead.cuda_context_high = d.gpu->cuda_context;
    w.overhead.cuda_context_source = "measured on " + d.gpu->name +
                                     ", the GPU table's figure (memplan gpus --format json gives its source)";
  }

  if (d.cpu) {
    if (layout && parse_engine(s.layout.engine) != Engine::llama_cpp)
      throw_invalid_input("cpu", "`cpu` plans one process on the host; multi-GPU layouts need GPUs");
    if (s.was_given("cuda_context")) {
      throw_invalid_input("cuda_context", "`cuda_context` sizes a GPU's; a plan for the CPU has none");
    }
    w.overhead.host = true;
  }

  // The precision the job runs in: resolved for the CPU or the GPU when there is one.
  std::optional<DeviceCapability> capability;
  if (d.cpu) {
    capability = cpu_device();
  } else if (resolve_for) {
    capability = device_capability(*resolve_for);
  }
  if (capability) {
    ResolveRequest request;
    request.precision = s.precision;
    request.policy = policy;
    request.device = *capability;
    const Resolution resolution = resolve_precision(request);
    w.weights.precision = resolution.precision;
    plan.warnings.insert(plan.warnings.end(), resolution.warnings.begin(), resolution.warnings.end());
    if (s.precision == "auto") plan.precision_note = resolution.reason;
  } else if (s.precision == "auto") {
    find_policy(policy);  // still reject an unknown policy
    w.weights.precision = precisions::bf16;
    plan.precision_note = "auto with no device: assumes compute capability 8.0+; `gpu` NAME or `probe` resolves it";
  } else {
    find_policy(policy);
    w.weights.precision = parse_precision(s.precision);
  }

  if (!model.stored_weights_source.empty() && s.was_given("precision") && s.precision != "auto") {
    // A precision the user names wins over how the checkpoint was saved: price the architecture at it.
    plan.warnings.push_back("`precision` " + to_string(w.weights.precision) +
                            " overrides the checkpoint's quantisation (" + model.stored_weights_source +
                            "): the weights are priced at " + to_string(w.weights.precision));
    plan.model.stored_weights.clear();
    plan.model.stored_layers.reset();
    plan.model.stored_weights_source.clear();
  }
  resolve_mixed_precision(s, w, plan.model);
  if (s.was_given("mixed_precision") && w.mixed_precision == MixedPrecision::fp32) plan.precision_note.clear();
  if (is_encoder_decoder(model)) {
    const std::uint64_t target = w.kind == WorkloadKind::generation ? w.new_tokens : w.target_len;
    if (w.kind != WorkloadKind::weights && target > model.max_seq_len) {
      plan.warnings.push_back(std::to_string(target) + " target tokens exceed " + model.name +
                              "'s decoder context of " + std::to_string(model.max_seq_len));
    }
    if (w.kind != WorkloadKind::weights && model.positional == Positional::relative && w.seq_len > model.max_seq_len) {
      plan.warnings.push_back(std::to_string(w.seq_len) + " source tokens exceed the " +
                              std::to_string(model.max_seq_len) + " " + model.name +
                              " was trained at (relative positions set no hard limit)");
    }
  } else if (w.kind != WorkloadKind::weights) {
    const std::uint64_t images = image_positions(plan.model, w);
    if (w.seq_len + images + w.new_tokens > model.max_seq_len) {
      plan.warnings.push_back(std::to_string(w.seq_len + images + w.new_tokens) + " tokens" +
                              (images != 0 ? " (" + std::to_string(images) + " of them the images')" : "") +
                              " exceed " + model.name + "'s context of " + std::to_string(model.max_seq_len));
    }
  }
  plan.device = d.gpu;
  plan.cpu = d.cpu;
  if (d.budget) {
    plan.budget = d.budget;
  } else if (d.gpu) {
    plan.budget = usable_memory(*d.gpu);
  }
  if (layout) plan.layout = layout_options(s, d);
  return plan;
}

std::string to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::fits: return "fits";
    case Verdict::above_threshold: return "above_threshold";
    case Verdict::does_not_fit: return "does_not_fit";
  }
  return "does_not_fit";
}

Verdict verdict_of(Bytes total, Bytes budget, double threshold) {
  if (total <= budget_limit(budget, threshold)) return Verdict::fits;
  return total <= budget ? Verdict::above_threshold : Verdict::does_not_fit;
}

PlanEstimate estimate(const Plan& plan) {
  PlanEstimate out;
  if (plan.layout) {
    out.layout = estimate_layout(plan.model, plan.workload, *plan.layout);
    const LayoutEstimate& l = *out.layout;
    if (!l.devices.empty()) {
      const DeviceMemory& worst = l.devices[l.worst()];
      out.total = worst.breakdown.total();
      if (const std::optional<bool> fits = l.fits()) {
        out.verdict = !*fits ? Verdict::does_not_fit : verdict_of(out.total, *worst.capacity, plan.threshold);
      }
    }
    return out;
  }
  out.breakdown = estimate_workload(plan.model, plan.workload);
  out.total = out.breakdown.total();
  if (plan.budget) out.verdict = verdict_of(out.total, *plan.budget, plan.threshold);
  // A probed GPU carries no throughput figures: no time estimate then, rather than an error.
  if (plan.device && !plan.device->dense_tflops.empty()) {
    out.time = estimate_workload_time(plan.model, plan.workload, *plan.device);
  }
  return out;
}

PlanTotals estimate_totals(const Plan& plan) {
  PlanTotals out;
  out.bytes = estimate_workload_bytes(plan.model, plan.workload);
  if (plan.budget) out.verdict = verdict_of(out.bytes.total, *plan.budget, plan.threshold);
  return out;
}

}  // namespace memplan
