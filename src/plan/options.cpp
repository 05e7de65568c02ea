#include "memplan/plan/options.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "memplan/estimators/activations.hpp"
#include "memplan/estimators/curvature.hpp"
#include "memplan/estimators/llama_cpp.hpp"
#include "memplan/estimators/parallelism.hpp"
#include "memplan/estimators/training.hpp"
#include "memplan/plan/layout.hpp"

namespace memplan {

namespace {

using K = WorkloadKind;
constexpr WorkloadMask bits(std::initializer_list<K> kinds) {
  WorkloadMask m = 0;
  for (const K k : kinds) m |= workload_bit(k);
  return m;
}

constexpr WorkloadMask kNotWeights = all_workloads & ~workload_bit(K::weights);
constexpr WorkloadMask kForward = bits({K::inference, K::generation, K::extraction, K::streaming_extraction});
constexpr WorkloadMask kCaching = bits({K::extraction, K::streaming_extraction});
constexpr WorkloadMask kTraining = bits({K::training});
constexpr WorkloadMask kFisher = bits({K::fisher_spectrum});
constexpr WorkloadMask kFullCurvature = bits({K::hessian, K::full_fisher});
constexpr WorkloadMask kGradientPasses = bits({K::training, K::fisher_spectrum, K::grouped_fisher, K::hessian,
                                               K::full_fisher, K::lanczos, K::sample_gradients, K::tracin});
constexpr WorkloadMask kPerSample = bits(
    {K::fisher_spectrum, K::grouped_fisher, K::lanczos, K::sample_gradients, K::tracin});
constexpr WorkloadMask kStoredGradients = bits({K::sample_gradients, K::tracin});
constexpr WorkloadMask kPatterns = bits({K::attention_patterns, K::qkov});
constexpr WorkloadMask kRepresentation = bits({K::embedding_singularities, K::fiber_bundle, K::superposition, K::cka});

// A float precision for a key that cannot take a quantised one.
Precision float_precision(std::string_view text) {
  const Precision p = parse_precision(text);
  if (is_quantized(p)) {
    throw Error(ErrorKind::invalid_input,
                "must be a float precision (fp32, tf32, bf16, fp16), got '" + printable(text) + "'");
  }
  return p;
}

// Returns `text` when it is one of `words`; otherwise throws Error(invalid_input, key) listing them.
std::string one_of(const std::string& text, const char* key, std::initializer_list<const char*> words) {
  std::string list;
  std::size_t i = 0;
  for (const char* w : words) {
    if (text == w) return text;
    list += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + std::string(w);
    ++i;
  }
  throw Error(ErrorKind::invalid_input, "`" + std::string(key) + "` is " + list + ", not '" + printable(text) + "'",
              key);
}

SsmKernels parse_ssm_kernels(std::string_view text) {
  if (text == "fused") return SsmKernels::fused;
  if (text == "torch") return SsmKernels::torch;
  throw Error(ErrorKind::invalid_input, "is fused or torch, not '" + printable(text) + "'");
}

// CUDA_MODULE_LOADING's two values: whether every kernel image loads at start.
bool parse_module_loading(std::string_view text) {
  if (text == "lazy") return false;
  if (text == "eager") return true;
  throw Error(ErrorKind::invalid_input, "is lazy or eager (CUDA_MODULE_LOADING), not '" + printable(text) + "'");
}

// "1280x720": the images' width and height, each 1 to 100,000 pixels.
void set_image_size(PlanSettings& s, std::string_view text) {
  const std::size_t x = text.find_first_of("xX");
  const auto side = [&](std::string_view part) -> std::uint64_t {
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || v == 0 || v > 100000) return 0;
    return v;
  };
  const std::uint64_t width = x == std::string_view::npos ? 0 : side(text.substr(0, x));
  const std::uint64_t height = x == std::string_view::npos ? 0 : side(text.substr(x + 1));
  if (width == 0 || height == 0) {
    throw Error(ErrorKind::invalid_input,
                "must be WIDTHxHEIGHT in pixels, each 1 to 100000 (e.g. 1280x720), got '" + printable(text) + "'");
  }
  s.workload.image_width = width;
  s.workload.image_height = height;
}

// Captureless setters: the table holds plain function pointers.
using S = PlanSettings;
using V = OptionValue;
#define MEMPLAN_SET(...) [](S& s, const V& v) { __VA_ARGS__; }

constexpr std::string_view kWorkload = "Workload";
constexpr std::string_view kPrecision = "Precision";
constexpr std::string_view kKv = "KV cache, attention and logits";
constexpr std::string_view kHooks = "Hook cache (extraction)";
constexpr std::string_view kOverhead = "Overhead and verdict";
constexpr std::string_view kTrain = "Training";
constexpr std::string_view kSae = "Sparse autoencoders (sae)";
constexpr std::string_view kCurvature = "Curvature (fisher, hessian, lanczos)";
constexpr std::string_view kGradients = "Sample gradients and TracIn";
constexpr std::string_view kAnalyses = "Attention and representation analyses";
constexpr std::string_view kLayout = "Multi-GPU layouts";
constexpr std::string_view kEngine = "Serving engines (vllm, llama.cpp)";

// clang-format off
const std::array kOptions = std::to_array<OptionDef>({
  // Workload
  {.key = "kind", .flag = "workload", .short_flag = 'w', .kind = OptionKind::text, .group = kWorkload,
   .help = "weights, inference, generation, extraction, streaming_extraction, or a training / analysis workload "
           "(training, sae, fisher_spectrum, lanczos, sample_gradients, tracin, ...)",
   .default_text = "inference", .common = true,
   .set = MEMPLAN_SET(s.workload.kind = parse_workload_kind(v.text))},
  {.key = "batch_size", .flag = "batch", .short_flag = 'b', .kind = OptionKind::count, .group = kWorkload,
   .help = "Sequences per forward pass", .default_text = "1", .applies = kNotWeights, .common = true, .min = 1,
   .set = MEMPLAN_SET(s.workload.batch = v.count)},
  {.key = "seq_len", .flag = "seq", .short_flag = 's', .kind = OptionKind::count, .group = kWorkload,
   .help = "Input tokens per sequence", .default_text = "2048, or the model's context if shorter",
   .applies = kNotWeights, .common = true, .min = 1, .set = MEMPLAN_SET(s.workload.seq_len = v.count)},
  {.key = "new_tokens", .flag = "new_tokens", .kind = OptionKind::count, .group = kWorkload,
   .help = "Tokens generated after the prompt", .default_text = "256", .applies = bits({K::generation}),
   .common = true, .set = MEMPLAN_SET(s.workload.new_tokens = v.count)},
  {.key = "source_len", .flag = "source_len", .kind = OptionKind::count, .group = kWorkload,
   .help = "Encoder-decoders (T5, BART, Whisper): tokens (Whisper: audio positions) the encoder reads per "
           "sequence; another name for `seq_len`",
   .default_text = "as seq_len; Whisper: 1500 (30 s of audio)",
   .applies = bits({K::inference, K::generation, K::training}), .common = true,
   .min = 1, .set = MEMPLAN_SET(s.workload.seq_len = v.count)},
  {.key = "target_len", .flag = "target_len", .kind = OptionKind::count, .group = kWorkload,
   .help = "Encoder-decoders: decoder tokens per sequence in a forward pass or training step (generation: "
           "`new_tokens`)",
   .default_text = "the source length, or the decoder's context if shorter",
   .applies = bits({K::inference, K::training}), .common = true,
   .min = 1, .set = MEMPLAN_SET(s.workload.target_len = v.count)},

  {.key = "images", .flag = "images", .kind = OptionKind::count, .group = kWorkload,
   .help = "Vision-language models (LLaVA, Qwen2-VL, Gemma 3, PaliGemma): images per sequence; their tokens join the text's `seq_len` "
           "and the vision tower's pass is priced",
   .default_text = "0", .applies = bits({K::inference, K::generation, K::training}), .common = true, .max = 4096,
   .set = MEMPLAN_SET(s.workload.images = v.count)},
  {.key = "image_size", .flag = "image_size", .kind = OptionKind::text, .group = kWorkload,
   .help = "The images' size in pixels, WIDTHxHEIGHT (e.g. 1280x720): Qwen2-VL's and LLaVA-NeXT's tokens grow with it; LLaVA, Gemma 3 "
           "and PaliGemma resize every image to their tower's square",
   .default_text = "the tower's square; Qwen2-VL, Qwen2.5-VL and LLaVA-NeXT: required",
   .applies = bits({K::inference, K::generation, K::training}), .common = true,
   .set = MEMPLAN_SET(set_image_size(s, v.text))},
  {.key = "max_pixels", .flag = "max_pixels", .kind = OptionKind::count, .group = kWorkload,
   .help = "Qwen2-VL: the processor's max_pixels, the most pixels an image is resized to (1280x28x28 = 1003520 "
           "caps an image at 1280 tokens)",
   .default_text = "the checkpoint's: 12845056 (16384 tokens)",
   .applies = bits({K::inference, K::generation, K::training}), .min = 1,
   .set = MEMPLAN_SET(s.max_pixels = v.count)},

  // Precision
  {.key = "precision", .flag = "precision", .short_flag = 'p', .kind = OptionKind::text, .group = kPrecision,
   .help = "Weight precision: auto (bf16, else fp16, else fp32, for the device), fp32, tf32, fp16, bf16, fp8, "
           "fp8_e5m2, int8, int8-gN, int4 (= int4-g128, fp16 scales), int4-gN[-zp], nf4[-dq], fp4[-dq]",
   .default_text = "auto", .common = true,
   .set = MEMPLAN_SET(if (v.text != "auto") (void)parse_precision(v.text); s.precision = v.text)},
  {.key = "policy", .flag = "policy", .kind = OptionKind::text, .group = kPrecision,
   .help = "Whose precision rules resolve auto: pytorch or vllm", .default_text = "pytorch",
   .set = MEMPLAN_SET(s.policy = v.text)},
  {.key = "unquantized", .flag = "unquantized", .kind = OptionKind::text, .group = kPrecision,
   .help = "Precision of the tensors a quantiser leaves alone (embeddings, norms, LM head)", .default_text = "fp16",
   .set = MEMPLAN_SET(s.workload.weights.unquantized = float_precision(v.text))},
  {.key = "quantize_lm_head", .flag = "quantize_lm_head", .kind = OptionKind::flag, .group = kPrecision,
   .help = "Quantise an untied LM head too", .set = MEMPLAN_SET(s.workload.weights.quantize_lm_head = v.flag)},
  {.key = "bitsandbytes_version", .flag = "bitsandbytes_version", .kind = OptionKind::text, .group = kPrecision,
   .help = "The bitsandbytes release running nf4/fp4 and int8 layers: each frozen layer keeps its input for "
           "backward with int8 and before 0.43.2 with 4-bit; 4-bit matmuls dequantise whole weights for more than "
           "one row (0.50+: more than 4)",
   .default_text = "0.50", .applies = kNotWeights,
   .set = MEMPLAN_SET(s.workload.weights.bitsandbytes = parse_bitsandbytes_version(v.text))},
  {.key = "compute", .flag = "compute", .kind = OptionKind::text, .group = kPrecision,
   .help = "Activation dtype", .default_text = "the weights' float precision", .applies = kNotWeights,
   .set = MEMPLAN_SET(s.workload.compute = float_precision(v.text))},

  // KV cache, attention and logits
  {.key = "kv_precision", .flag = "kv_precision", .kind = OptionKind::text, .group = kKv,
   .help = "KV cache dtype: fp16, bf16, fp8, int8, int4-gN", .default_text = "the compute dtype",
   .applies = kForward, .common = true, .set = MEMPLAN_SET(s.workload.kv_precision = parse_precision(v.text))},
  {.key = "kv_page_tokens", .flag = "kv_page", .kind = OptionKind::count, .group = kKv,
   .help = "Paged KV cache: tokens per block (vLLM: 16); 0 = contiguous", .default_text = "0", .applies = kForward,
   .set = MEMPLAN_SET(s.workload.kv_page_tokens = v.count)},
  {.key = "ssm_kernels", .flag = "ssm_kernels", .kind = OptionKind::text, .group = kKv,
   .help = "State-space layers (Mamba, Mamba-2, hybrids): fused (mamba_ssm and causal-conv1d installed) or torch "
           "(transformers' pure-PyTorch path without them: the discretised scan materialised in fp32, several "
           "times the memory)",
   .default_text = "fused", .applies = bits({K::inference, K::generation}),
   .set = MEMPLAN_SET(s.workload.ssm_kernels = parse_ssm_kernels(v.text))},
  {.key = "mla_cache", .flag = "mla_cache", .kind = OptionKind::text, .group = kKv,
   .help = "Latent-attention (DeepSeek) cache: the latent (transformers 5, vLLM, SGLang) or decompressed keys and "
           "values (transformers before huggingface/transformers#47761)",
   .default_text = "latent", .applies = kForward,
   .set = MEMPLAN_SET(s.workload.mla_cache = parse_mla_cache(v.text))},
  {.key = "kv_cache", .flag = "no_kv_cache", .kind = OptionKind::flag, .group = kKv,
   .help = "Inference without a KV cache (use_cache=False); extraction never keeps one (TransformerLens)",
   .applies = bits({K::inference}), .negated = true,
   .set = MEMPLAN_SET(s.workload.kv_cache = v.flag)},
  {.key = "attention", .flag = "attention", .kind = OptionKind::text, .group = kKv,
   .help = "eager, sdpa, chunked, linear, causal_linear_naive, causal_linear_chunked, recurrent",
   .default_text = "sdpa", .applies = kNotWeights, .common = true,
   .set = MEMPLAN_SET(s.workload.attention = parse_attention_variant(v.text))},
  {.key = "attention_chunk", .flag = "attention_chunk", .kind = OptionKind::count, .group = kKv,
   .help = "Query rows per chunk for attention chunked or causal_linear_chunked", .default_text = "512",
   .applies = kNotWeights, .min = 1, .set = MEMPLAN_SET(s.workload.attention_chunk = v.count)},
  {.key = "logits_fp32", .flag = "logits_fp32", .kind = OptionKind::flag, .group = kKv,
   .help = "Inference logits get an fp32 copy, as transformers before 4.45 made", .applies = kForward,
   .set = MEMPLAN_SET(s.workload.logits_fp32 = v.flag)},

  // Hook cache
  {.key = "filter", .flag = "filter", .kind = OptionKind::list, .group = kHooks,
   .help = "Hooks to cache: names or globs, e.g. 'blocks.*.hook_resid_post', 'blocks.{0,5,11}.hook_resid_post'; "
           "repeat or comma-separate",
   .default_text = "all", .applies = kCaching, .common = true, .set = MEMPLAN_SET(s.workload.cache.filter = v.list)},
  {.key = "layers", .flag = "layers", .kind = OptionKind::list, .group = kHooks,
   .help = "Cache only these blocks: 3, 0,5,11 or 0-11", .default_text = "all", .applies = kCaching, .common = true,
   .set = MEMPLAN_SET(std::string joined; for (const std::string& x : v.list) joined += (joined.empty() ? "" : ",") + x;
                      s.workload.cache.layers = parse_layer_selection(joined))},
  {.key = "pos_slice", .flag = "pos_slice", .kind = OptionKind::text, .group = kHooks,
   .help = "Cache only the last N positions; -k keeps one position, the k-th from the end (TransformerLens' "
           "pos_slice=-k)",
   .default_text = "all", .applies = kCaching,
   .set = MEMPLAN_SET(s.pos_index_from_end = 0;
                      if (!v.text.empty() && v.text[0] == '-') {
                        s.pos_index_from_end = v.count;
                        s.workload.cache.pos_slice = 1;
                      } else {
                        s.workload.cache.pos_slice = v.count;
                      })},
  {.key = "remove_batch_dim", .flag = "remove_batch_dim", .kind = OptionKind::flag, .group = kHooks,
   .help = "Cache batch element 0 only", .applies = kCaching,
   .set = MEMPLAN_SET(s.workload.cache.remove_batch_dim = v.flag)},
  {.key = "stop_at_layer", .flag = "stop_at_layer", .kind = OptionKind::count, .group = kHooks,
   .help = "Stop the forward pass before this block", .applies = kCaching,
   .set = MEMPLAN_SET(s.workload.cache.stop_at_layer = v.count)},
  {.key = "incl_bwd", .flag = "incl_bwd", .kind = OptionKind::flag, .group = kHooks,
   .help = "Cache each hook's gradient too", .applies = kCaching, .set = MEMPLAN_SET(s.workload.cache.incl_bwd = v.flag)},
  {.key = "cache_on_cpu", .flag = "cache_on_cpu", .kind = OptionKind::flag, .group = kHooks,
   .help = "Keep the activation cache in host RAM (device='cpu')", .applies = kCaching,
   .set = MEMPLAN_SET(s.workload.cache.on_cpu = v.flag)},
  {.key = "streaming_chunk", .flag = "streaming_chunk", .kind = OptionKind::count, .group = kHooks,
   .help = "streaming_extraction: tokens per chunk", .default_text = "512",
   .applies = bits({K::streaming_extraction}), .min = 1, .set = MEMPLAN_SET(s.workload.streaming_chunk = v.count)},

  // Overhead and verdict
  {.key = "threshold", .flag = "threshold", .kind = OptionKind::number, .group = kOverhead,
   .help = "Share of the budget a plan may use: above it the verdict is 'fits, above the threshold'",
   .default_text = "0.85", .common = true, .low = 1e-6, .high = 1, .set = MEMPLAN_SET(s.threshold = v.number)},
  {.key = "include_overhead", .flag = "no_overhead", .kind = OptionKind::flag, .group = kOverhead,
   .help = "Leave out the CUDA context, workspaces and allocator overhead", .negated = true,
   .set = MEMPLAN_SET(s.workload.include_overhead = v.flag)},
  {.key = "module_loading", .flag = "module_loading", .kind = OptionKind::text, .group = kOverhead,
   .help = "CUDA_MODULE_LOADING: lazy (the driver's default from CUDA 12.2, PyTorch's from 1.13) or eager (every "
           "kernel image at start: about 1 GiB more)",
   .default_text = "lazy",
   .set = MEMPLAN_SET(s.workload.overhead.eager_module_loading = parse_module_loading(v.text))},
  {.key = "cuda_context", .flag = "cuda_context", .kind = OptionKind::text, .group = kOverhead,
   .help = "CUDA context size, e.g. 500MiB",
   .default_text = "this machine's calibration, else the GPU table's measurement for the card (memplan gpus --format "
                   "json), else 512 MiB, range 256 MiB-1 GiB",
   .set = MEMPLAN_SET(OverheadOptions& o = s.workload.overhead;
                      o.cuda_context = o.cuda_context_low = o.cuda_context_high = parse_size(v.text))},
  {.key = "fragmentation", .flag = "fragmentation", .kind = OptionKind::number, .group = kOverhead,
   .help = "Fragmentation as a fraction of the transient tensors, 0-1, in place of replaying the caching allocator",
   .default_text = "replayed; 0.1 where the order is not modelled", .low = 0, .high = 1,
   .set = MEMPLAN_SET(OverheadOptions& o = s.workload.overhead; o.fragmentation = v.number;
                      o.fragmentation_given = true;
                      o.fragmentation_low = std::min(OverheadOptions{}.fragmentation_low, v.number);
                      o.fragmentation_high = std::max(OverheadOptions{}.fragmentation_high, v.number))},
  {.key = "efficiency", .flag = "efficiency", .kind = OptionKind::number, .group = kOverhead,
   .help = "Time estimates: fraction of peak throughput", .default_text = "stated per part", .low = 1e-6, .high = 1,
   .set = MEMPLAN_SET(s.workload.analysis.efficiency = v.number)},

  // Training
  {.key = "optimizer", .flag = "optimizer", .kind = OptionKind::text, .group = kTrain,
   .help = "none, sgd, sgd_momentum, adam, adamw, adam_8bit, adafactor, paged_adamw, paged_adamw_8bit "
           "(bitsandbytes: large tensors' states in unified memory, which spills to host RAM)",
   .default_text = "adamw",
   .applies = kTraining, .common = true,
   .set = MEMPLAN_SET(s.workload.analysis.training.optimizer = parse_optimizer(v.text))},
  {.key = "mixed_precision", .flag = "mixed_precision", .kind = OptionKind::text, .group = kTrain,
   .help = "amp (torch.autocast over fp32 weights: fp32 gradients and states, a 16-bit copy of each weight and "
           "matmul input; --compute fp16 for a GradScaler's fp16), master (16-bit weights and gradients, an fp32 "
           "master copy: DeepSpeed, Megatron), pure (16-bit throughout) or fp32",
   .default_text = "what --precision and --compute spell: -p bf16 master, -p fp32 --compute bf16 amp",
   .applies = kTraining, .common = true,
   .set = MEMPLAN_SET(s.workload.mixed_precision = parse_mixed_precision(v.text))},
  {.key = "grad_precision", .flag = "grad_precision", .kind = OptionKind::text, .group = kTrain,
   .help = "Gradient dtype (fp32 makes Adam 18 B/param)", .default_text = "the trainable weights'",
   .applies = kTraining, .set = MEMPLAN_SET(s.workload.analysis.training.grad_precision = float_precision(v.text))},
  {.key = "master_weights", .flag = "no_master_weights", .kind = OptionKind::flag, .group = kTrain,
   .help = "No fp32 master copy of 16-bit weights", .applies = kTraining, .negated = true,
   .set = MEMPLAN_SET(s.workload.analysis.training.master_weights = v.flag)},
  {.key = "optimizer_impl", .flag = "optimizer_impl", .kind = OptionKind::text, .group = kTrain,
   .help = "torch.optim's Adam step: foreach (intermediates the size of every parameter), fused (none) or loop "
           "(foreach=False: two temporaries the size of the largest tensor)",
   .default_text = "auto: as torch_version runs it on CUDA (loop before 2.0, foreach after)", .applies = kTraining,
   .set = MEMPLAN_SET(s.workload.analysis.training.optimizer_impl = parse_optimizer_impl(v.text))},
  {.key = "fused_optimizer", .flag = "fused_optimizer", .kind = OptionKind::flag, .group = kTrain,
   .help = "The same as --optimizer-impl fused", .applies = kTraining,
   .set = MEMPLAN_SET(if (v.flag) s.workload.analysis.training.optimizer_impl = OptimizerImpl::fused)},
  {.key = "torch_version", .flag = "torch_version", .kind = OptionKind::text, .group = kTrain,
   .help = "The PyTorch release the step runs under (foreach Adam holds two intermediates before 2.1, one after)",
   .default_text = "2.5", .applies = kTraining,
   .set = MEMPLAN_SET(s.workload.analysis.training.torch_version = parse_torch_version(v.text))},
  {.key = "grad_accumulation", .flag = "grad_accumulation", .kind = OptionKind::count, .group = kTrain,
   .help = "Micro-batches per step (> 1 keeps gradients through the forward pass)", .default_text = "1",
   .applies = kTraining, .min = 1, .set = MEMPLAN_SET(s.workload.analysis.training.grad_accumulation = v.count)},
  {.key = "keep_grads", .flag = "keep_grads", .kind = OptionKind::flag, .group = kTrain,
   .help = "Gradients stay allocated between steps (set_to_none=False)", .applies = kTraining,
   .set = MEMPLAN_SET(s.workload.analysis.training.keep_grads = v.flag)},
  {.key = "recompute", .flag = "recompute", .kind = OptionKind::text, .group = kTrain,
   .help = "Activation recomputation: none, selective (attention core) or full (checkpointing)",
   .default_text = "none", .applies = kGradientPasses, .common = true,
   .set = MEMPLAN_SET(s.workload.analysis.training.recompute = parse_recompute(v.text))},
  {.key = "dropout", .flag = "dropout", .kind = OptionKind::flag, .group = kTrain,
   .help = "The model trains with dropout (masks are kept)", .applies = kGradientPasses,
   .set = MEMPLAN_SET(s.workload.analysis.dropout = v.flag)},
  {.key = "expert_capacity_factor", .flag = "expert_capacity_factor", .kind = OptionKind::number, .group = kTrain,
   .help = "MoE: experts take ceil(k x tokens / E x F) tokens each, padded (Megatron --moe-expert-capacity-factor "
           "with --moe-pad-expert-input-to-capacity)",
   .default_text = "dropless (k x tokens rows in all)", .applies = kGradientPasses, .low = 0.01, .high = 1024,
   .set = MEMPLAN_SET(s.workload.analysis.expert_capacity_factor = v.number)},
  {.key = "router_aux_loss", .flag = "router_aux_loss", .kind = OptionKind::flag, .group = kTrain,
   .help = "MoE: the load-balancing loss (output_router_logits): every layer's router logits and transformers' "
           "one-hot expert mask at the loss",
   .applies = kTraining, .set = MEMPLAN_SET(s.workload.analysis.training.router_aux_loss = v.flag)},
  {.key = "lora_rank", .flag = "lora_rank", .kind = OptionKind::count, .group = kTrain,
   .help = "LoRA rank; the base is frozen (QLoRA with -p nf4)", .default_text = "0 (full fine-tuning)",
   .applies = kTraining, .common = true, .set = MEMPLAN_SET(s.workload.analysis.training.lora.rank = v.count)},
  {.key = "lora_targets", .flag = "lora_targets", .kind = OptionKind::list, .group = kTrain,
   .help = "Projections with adapters: q,k,v,o,gate,up,down (latent attention: q_a,q_b,kv_a,kv_b) or all",
   .default_text = "q,v (latent attention: q or q_b, and kv_b)", .applies = kTraining,
   .set = MEMPLAN_SET(s.workload.analysis.training.lora.targets = v.list)},
  {.key = "lora_dtype", .flag = "lora_dtype", .kind = OptionKind::text, .group = kTrain,
   .help = "Adapter dtype", .default_text = "fp32", .applies = kTraining,
   .set = MEMPLAN_SET(s.workload.analysis.training.lora.dtype = float_precision(v.text))},

  // SAE
  {.key = "sae_d_in", .flag = "sae_d_in", .kind = OptionKind::count, .group = kSae,
   .help = "Input width", .default_text = "the model's d_model", .applies = bits({K::sae}), .min = 1,
   .set = MEMPLAN_SET(s.workload.analysis.sae.d_in = v.count)},
  {.key = "sae_expansion", .flag = "sae_expansion", .kind = OptionKind::count, .group = kSae,
   .help = "Dictionary size / input width", .default_text = "8", .applies = bits({K::sae}), .min = 1,
   .set = MEMPLAN_SET(s.workload.analysis.sae.expansion = v.count)},
  {.key = "sae_features", .flag = "sae_features", .kind = OptionKind::count, .group = kSae,
   .help = "Dictionary size (overrides sae_expansion)", .applies = bits({K::sae}), .min = 1,
   .set = MEMPLAN_SET(s.workload.analysis.sae.features = v.count)},
  {.key = "sae_batch_tokens", .flag = "sae_batch_tokens", .kind = OptionKind::count, .group = kSae,
   .help = "Tokens per training step", .default_text = "4096", .applies = bits({K::sae}), .min = 1,
   .set = MEMPLAN_SET(s.workload.analysis.sae.batch_tokens = v.count)},
  {.key = "sae_dtype", .flag = "sae_dtype", .kind = OptionKind::text, .group = kSae,
   .help = "Parameter and activation dtype", .default_text = "fp32", .applies = bits({K::sae}),
   .set = MEMPLAN_SET(s.workload.analysis.sae.dtype = float_precision(v.text))},
  {.key = "sae_top_k", .flag = "sae_top_k", .kind = OptionKind::count, .group = kSae,
   .help = "TopK SAE with k active latents (0: ReLU + L1)", .default_text = "0", .applies = bits({K::sae}),
   .set = MEMPLAN_SET(s.workload.analysis.sae.top_k = v.count)},
  {.key = "sae_tied", .flag = "sae_tied", .kind = OptionKind::flag, .group = kSae,
   .help = "Tied decoder (W_dec = W_enc^T)", .applies = bits({K::sae}),
   .set = MEMPLAN_SET(s.workload.analysis.sae.tied = v.flag)},
  {.key = "sae_buffer_tokens", .flag = "sae_buffer_tokens", .kind = OptionKind::count, .group = kSae,
   .help = "Activation store size in tokens (0: none)", .default_text = "262144", .applies = bits({K::sae}),
   .set = MEMPLAN_SET(s.workload.analysis.sae.buffer_tokens = v.count)},
  {.key = "sae_seed_formula", .flag = "sae_seed_formula", .kind = OptionKind::flag, .group = kSae,
   .help = "The SAE guide's estimate_sae_memory as written (batch x seq tokens, no model)", .applies = bits({K::sae}),
   .set = MEMPLAN_SET(s.workload.analysis.sae.seed_formula = v.flag)},

  // Curvature
  {.key = "fisher_blocks", .flag = "fisher_blocks", .kind = OptionKind::count, .group = kCurvature,
   .help = "fisher_spectrum: diagonal blocks", .default_text = "n_layers", .applies = kFisher, .min = 1,
   .set = MEMPLAN_SET(s.workload.analysis.fisher.blocks = v.count)},
  {.key = "fisher_block_size", .flag = "fisher_block_size", .kind = OptionKind::count, .group = kCurvature,
   .help = "fisher_spectrum: parameters per block", .default_text = "d_model", .applies = kFisher, .min = 1,
   .set = MEMPLAN_SET(s.workload.analysis.fisher.block_size = v.count)},
  {.key = "fisher_one_block", .flag = "fisher_one_block", .kind = OptionKind::flag, .group = kCurvature,
   .help = "fisher_spectrum: accumulate one block at a time", .applies = kFisher,
   .set = MEMPLAN_SET(s.workload.analysis.fisher.keep_blocks = !v.flag)},
  {.key = "fisher_grouping", .flag = "fisher_grouping", .kind = OptionKind::text, .group = kCurvature,
   .help = "grouped_fisher: tensor or channel", .default_text = "channel", .applies = bits({K::grouped_fisher}),
   .set = MEMPLAN_SET(s.workload.analysis.grouped_fisher.grouping = parse_fisher_grouping(v.text))},
  {.key = "fisher_per_sample", .flag = "fisher_per_sample", .kind = OptionKind::flag, .group = kCurvature,
   .help = "grouped_fisher: keep groups x samples values", .applies = bits({K::grouped_fisher}),
   .set = MEMPLAN_SET(s.workload.analysis.grouped_fisher.per_sample = v.flag)},
  {.key = "hessian_params", .flag = "hessian_params", .kind = OptionKind::count, .group = kCurvature,
   .help = "hessian, full_fisher: parameters the matrix covers", .default_text = "all", .applies = kFullCurvature,
   .min = 1, .set = MEMPLAN_SET(s.workload.analysis.hessian_params = v.count)},
  {.key = "curvature_dtype", .flag = "curvature_dtype", .kind = OptionKind::text, .group = kCurvature,
   .help = "hessian, full_fisher: matrix dtype", .default_text = "fp32", .applies = kFullCurvature,
   .set = MEMPLAN_SET(s.workload.analysis.curvature_dtype = float_precision(v.text))},
  {.key = "lanczos_k", .flag = "lanczos_k", .kind = OptionKind::count, .group = kCurvature,
   .help = "lanczos: eigenvalues wanted", .default_text = "20", .applies = bits({K::lanczos}), .min = 1,
   .set = MEMPLAN_SET(s.workload.analysis.lanczos.k = v.count)},
  {.key = "lanczos_iterations", .flag = "lanczos_iterations", .kind = OptionKind::count, .group = kCurvature,
   .help = "lanczos: Lanczos steps m", .default_text = "100", .applies = bits({K::lanczos}), .min = 1,
   .set = MEMPLAN_SET(s.workload.analysis.lanczos.iterations = v.count)},
  {.key = "reorthogonalize", .flag = "no_reorthogonalize", .kind = OptionKind::flag, .group = kCurvature,
   .help = "lanczos: three vectors instead of the whole basis", .applies = bits({K::lanczos}), .negated = true,
   .set = MEMPLAN_SET(s.workload.analysis.lanczos.reorthogonalize = v.flag)},
  {.key = "lanczos_dtype", .flag = "lanczos_dtype", .kind = OptionKind::text, .group = kCurvature,
   .help = "lanczos: vector dtype", .default_text = "fp32", .applies = bits({K::lanczos}),
   .set = MEMPLAN_SET(s.workload.analysis.lanczos.dtype = float_precision(v.text))},
  {.key = "micro_batch", .flag = "micro_batch", .kind = OptionKind::count, .group = kCurvature,
   .help = "Sequences per backward in a gradient pass", .default_text = "1; lanczos: the batch",
   .applies = kPerSample | kFullCurvature, .min = 1, .set = MEMPLAN_SET(s.workload.analysis.micro_batch = v.count)},

  // Sample gradients and TracIn
  {.key = "samples", .flag = "samples", .kind = OptionKind::count, .group = kGradients,
   .help = "sample_gradients: gradients kept", .default_text = "the batch", .applies = bits({K::sample_gradients}),
   .min = 1, .set = MEMPLAN_SET(s.workload.analysis.sample_gradients.samples = v.count)},
  {.key = "compress", .flag = "compress", .kind = OptionKind::text, .group = kGradients,
   .help = "none, int8 or int8+zlib", .default_text = "none", .applies = kStoredGradients,
   .set = MEMPLAN_SET(SampleGradientOptions& g = s.workload.analysis.sample_gradients;
                      if (v.text == "none") { g.int8 = false; g.zlib_ratio = 0; }
                      else if (v.text == "int8") { g.int8 = true; g.zlib_ratio = 0; }
                      else if (v.text == "int8+zlib") { g.int8 = true; g.zlib_ratio = s.was_given("zlib_ratio") ? g.zlib_ratio : 8; }
                      else throw Error(ErrorKind::invalid_input, "unknown compression '" + printable(v.text) +
                                                                     "'; accepted: 'none', 'int8' or 'int8+zlib'"))},
  {.key = "zlib_ratio", .flag = "zlib_ratio", .kind = OptionKind::number, .group = kGradients,
   .help = "Assumed zlib ratio on top of int8 (with compress int8+zlib)", .default_text = "8",
   .applies = kStoredGradients, .low = 1, .high = 1e6,
   .set = MEMPLAN_SET(s.workload.analysis.sample_gradients.zlib_ratio = v.number)},
  {.key = "keep_fraction", .flag = "keep_fraction", .kind = OptionKind::number, .group = kGradients,
   .help = "Importance gating: fraction of entries kept as values + indices", .default_text = "1",
   .applies = kStoredGradients, .low = 1e-9, .high = 1,
   .set = MEMPLAN_SET(s.workload.analysis.sample_gradients.kept_fraction = v.number)},
  {.key = "index_bits", .flag = "index_bits", .kind = OptionKind::count, .group = kGradients,
   .help = "Importance gating: 32 or 64-bit indices", .default_text = "64", .applies = kStoredGradients, .min = 32,
   .max = 64,
   .set = MEMPLAN_SET(if (v.count != 32 && v.count != 64) throw Error(ErrorKind::invalid_input, "must be 32 or 64");
                      s.workload.analysis.sample_gradients.index_bits = static_cast<std::uint32_t>(v.count))},
  {.key = "gradient_layers", .flag = "gradient_layers", .kind = OptionKind::list, .group = kGradients,
   .help = "Only these blocks' parameters (0,5,11 or 0-11)", .default_text = "all", .applies = kStoredGradients,
   .set = MEMPLAN_SET(std::string joined; for (const std::string& x : v.list) joined += (joined.empty() ? "" : ",") + x;
                      s.workload.analysis.sample_gradients.layers = parse_layer_selection(joined))},
  {.key = "gradients_on_host", .flag = "gradients_on_host", .kind = OptionKind::flag, .group = kGradients,
   .help = "sample_gradients: keep the store in host RAM", .applies = bits({K::sample_gradients}),
   .set = MEMPLAN_SET(s.workload.analysis.sample_gradients.on_host = v.flag)},
  {.key = "vectorized", .flag = "vectorized", .kind = OptionKind::flag, .group = kGradients,
   .help = "sample_gradients: torch.func.vmap over the batch (all raw gradients at once)",
   .applies = bits({K::sample_gradients}), .set = MEMPLAN_SET(s.workload.analysis.sample_gradients.vectorized = v.flag)},
  {.key = "checkpoints", .flag = "checkpoints", .kind = OptionKind::count, .group = kGradients,
   .help = "tracin: checkpoints", .default_text = "10", .applies = bits({K::tracin}), .min = 1,
   .set = MEMPLAN_SET(s.workload.analysis.tracin.checkpoints = v.count)},
  {.key = "train_samples", .flag = "train_samples", .kind = OptionKind::count, .group = kGradients,
   .help = "tracin: training samples scored", .default_text = "the batch", .applies = bits({K::tracin}), .min = 1,
   .set = MEMPLAN_SET(s.workload.analysis.tracin.train_samples = v.count)},
  {.key = "test_samples", .flag = "test_samples", .kind = OptionKind::count, .group = kGradients,
   .help = "tracin: test samples", .default_text = "1", .applies = bits({K::tracin}), .min = 1,
   .set = MEMPLAN_SET(s.workload.analysis.tracin.test_samples = v.count)},
  {.key = "projection", .flag = "projection", .kind = OptionKind::count, .group = kGradients,
   .help = "tracin: random projection of each gradient to k dimensions (0: none)", .default_text = "0",
   .applies = bits({K::tracin}), .set = MEMPLAN_SET(s.workload.analysis.tracin.projection = v.count)},

  // Attention and representation analyses
  {.key = "pattern_dtype", .flag = "pattern_dtype", .kind = OptionKind::text, .group = kAnalyses,
   .help = "attention_patterns, qkov: stored dtype", .default_text = "fp32", .applies = kPatterns,
   .set = MEMPLAN_SET(s.workload.analysis.attention.dtype = float_precision(v.text))},
  {.key = "one_layer", .flag = "one_layer", .kind = OptionKind::flag, .group = kAnalyses,
   .help = "attention_patterns: one layer's patterns at a time", .applies = bits({K::attention_patterns}),
   .set = MEMPLAN_SET(s.workload.analysis.attention.all_layers = !v.flag)},
  {.key = "attention_reduce", .flag = "attention_reduce", .kind = OptionKind::flag, .group = kAnalyses,
   .help = "attention_patterns: keep per-row entropy, not patterns", .applies = bits({K::attention_patterns}),
   .set = MEMPLAN_SET(s.workload.analysis.attention.reduce = v.flag)},
  {.key = "pattern_chunk", .flag = "pattern_chunk", .kind = OptionKind::count, .group = kAnalyses,
   .help = "attention_patterns, qkov: query rows per chunk (0: all)", .default_text = "0", .applies = kPatterns,
   .set = MEMPLAN_SET(s.workload.analysis.attention.chunk = v.count)},
  {.key = "heads", .flag = "heads", .kind = OptionKind::count, .group = kAnalyses,
   .help = "attention_patterns, qkov: heads analysed per layer (0: all)", .default_text = "0", .applies = kPatterns,
   .set = MEMPLAN_SET(s.workload.analysis.attention.heads = v.count)},
  {.key = "points", .flag = "points", .kind = OptionKind::count, .group = kAnalyses,
   .help = "embedding_singularities, fiber_bundle, superposition, cka: samples N", .default_text = "1000",
   .applies = kRepresentation, .min = 1, .set = MEMPLAN_SET(s.workload.analysis.representation.samples = v.count)},
  {.key = "neighbours", .flag = "neighbours", .kind = OptionKind::count, .group = kAnalyses,
   .help = "embedding_singularities, fiber_bundle: k nearest neighbours", .default_text = "100",
   .applies = bits({K::embedding_singularities, K::fiber_bundle}), .min = 1,
   .set = MEMPLAN_SET(s.workload.analysis.representation.neighbours = v.count)},
  {.key = "features", .flag = "features", .kind = OptionKind::count, .group = kAnalyses,
   .help = "superposition: candidate features", .default_text = "8 x d_model", .applies = bits({K::superposition}),
   .min = 1, .set = MEMPLAN_SET(s.workload.analysis.representation.features = v.count)},
  {.key = "overlap", .flag = "overlap", .kind = OptionKind::flag, .group = kAnalyses,
   .help = "superposition: keep the F x F feature-overlap matrix", .applies = bits({K::superposition}),
   .set = MEMPLAN_SET(s.workload.analysis.representation.overlap = v.flag)},

  // Multi-GPU layouts (the layout estimator says which combinations apply to which workloads)
  {.key = "tp", .flag = "tp", .kind = OptionKind::count, .group = kLayout,
   .help = "Tensor-parallel degree: attention heads, MLP and vocabulary split N ways", .default_text = "1",
   .common = true, .min = 1, .max = 4096, .set = MEMPLAN_SET(s.layout.tp = v.count)},
  {.key = "pp", .flag = "pp", .kind = OptionKind::count, .group = kLayout,
   .help = "Pipeline stages: layers split into N stages (training; with --engine vllm its pipeline_parallel_size)",
   .default_text = "1", .common = true, .min = 1, .max = 4096,
   .set = MEMPLAN_SET(s.layout.pp = v.count)},
  {.key = "dp", .flag = "dp", .kind = OptionKind::count, .group = kLayout,
   .help = "Data-parallel replicas (training; with --engine vllm its data_parallel_size)", .default_text = "1", .common = true, .min = 1, .max = 1 << 20,
   .set = MEMPLAN_SET(s.layout.dp = v.count)},
  {.key = "ep", .flag = "ep", .kind = OptionKind::count, .group = kLayout,
   .help = "Expert parallelism: each MoE layer's routed experts split N ways within the dp replicas (training), "
           "or over all tp x dp GPUs (--engine vllm's enable_expert_parallel: N = tp x dp)",
   .default_text = "1", .min = 1, .max = 1 << 20, .set = MEMPLAN_SET(s.layout.ep = v.count)},
  {.key = "zero", .flag = "zero", .kind = OptionKind::text, .group = kLayout,
   .help = "DeepSpeed ZeRO stage 0, 1, 2 or 3 over the dp replicas (1 with tp/pp: Megatron's distributed optimizer)",
   .common = true, .set = MEMPLAN_SET(if (v.text != "0" && v.text != "1" && v.text != "2" && v.text != "3")
                        throw Error(ErrorKind::invalid_input, "`zero` takes a ZeRO stage: 0, 1, 2 or 3, not '" +
                                                                  printable(v.text) + "'");
                      s.layout.zero = v.text)},
  {.key = "fsdp", .flag = "fsdp", .kind = OptionKind::text, .group = kLayout,
   .help = "PyTorch FSDP over the dp replicas: full (FULL_SHARD), grad_op (SHARD_GRAD_OP), hybrid (HYBRID_SHARD)",
   .common = true, .set = MEMPLAN_SET(s.layout.fsdp = v.text)},
  {.key = "shard_group", .flag = "shard_group", .kind = OptionKind::count, .group = kLayout,
   .help = "fsdp hybrid: GPUs per shard group (a node, e.g. 8)", .min = 1, .max = 1 << 20,
   .set = MEMPLAN_SET(s.layout.shard_group = v.count)},
  {.key = "offload", .flag = "offload", .kind = OptionKind::list, .group = kLayout,
   .help = "optimizer (ZeRO-Offload: master weights, optimizer states, fp32 gradients in host RAM) and/or params "
           "(ZeRO-3 offload_param; FSDP CPUOffload)",
   .set = MEMPLAN_SET(for (const std::string& what : v.list) {
     if (what != "optimizer" && what != "params") {
       throw Error(ErrorKind::invalid_input, "`offload` takes 'optimizer' and/or 'params', not '" + printable(what) + "'" +
                                                 did_you_mean(what, {"optimizer", "params"}));
     }
   } s.layout.offload = v.list)},
  {.key = "sequence_parallel", .flag = "sequence_parallel", .kind = OptionKind::flag, .group = kLayout,
   .help = "With tp: split along the sequence the activations tensor parallelism replicates",
   .set = MEMPLAN_SET(s.layout.sequence_parallel = v.flag)},
  {.key = "micro_batches", .flag = "micro_batches", .kind = OptionKind::count, .group = kLayout,
   .help = "Micro-batches per step (of batch_size sequences each)", .default_text = "1", .min = 1,
   .set = MEMPLAN_SET(s.layout.micro_batches = v.count)},
  {.key = "schedule", .flag = "schedule", .kind = OptionKind::text, .group = kLayout,
   .help = "Pipeline schedule: 1f1b (Megatron's default) or gpipe", .default_text = "1f1b",
   .set = MEMPLAN_SET((void)parse_pipeline_schedule(v.text); s.layout.schedule = v.text)},
  {.key = "stage_layers", .flag = "stage_layers", .kind = OptionKind::list, .group = kLayout,
   .help = "Layers per pipeline stage, e.g. 19,20,20,21", .default_text = "even, the remainder to the last stages",
   .set = MEMPLAN_SET(s.layout.stage_layers.clear(); for (const std::string& x : v.list) {
     const char* end = x.data() + x.size();
     std::uint64_t n = 0;
     const auto r = std::from_chars(x.data(), end, n);
     if (x.empty() || r.ec != std::errc() || r.ptr != end) {
       throw Error(ErrorKind::invalid_input, "`stage_layers`: '" + printable(x) + "' is not a whole number");
     }
     s.layout.stage_layers.push_back(n);
   })},
  {.key = "engine", .flag = "engine", .kind = OptionKind::text, .group = kEngine,
   .help = "Whose allocation rules: pytorch (transformers), vllm (a server whose KV cache fills what "
           "gpu_memory_utilization leaves; needs a GPU) or llama.cpp (its buffers on the GPU and the host)",
   .default_text = "pytorch", .common = true,
   .set = MEMPLAN_SET((void)parse_engine(v.text); s.layout.engine = v.text)},
  {.key = "gpu_memory_utilization", .flag = "gpu_memory_utilization", .kind = OptionKind::number, .group = kEngine,
   .help = "vLLM: fraction of each GPU it may use", .default_text = "0.9", .low = 1e-6, .high = 1,
   .set = MEMPLAN_SET(s.layout.gpu_memory_utilization = v.number)},
  {.key = "max_model_len", .flag = "max_model_len", .kind = OptionKind::count, .group = kEngine,
   .help = "vLLM: longest sequence", .default_text = "the model's context", .min = 1,
   .set = MEMPLAN_SET(s.layout.max_model_len = v.count)},
  {.key = "vllm_entrypoint", .flag = "vllm_entrypoint", .kind = OptionKind::text, .group = kEngine,
   .help = "vLLM: how it is started, serve (vllm serve, the OpenAI server) or llm (the Python LLM class); "
           "sets the batch defaults",
   .default_text = "serve",
   .set = MEMPLAN_SET(if (v.text != "serve" && v.text != "llm") throw Error(
       ErrorKind::invalid_input, "`vllm_entrypoint` is serve or llm, not '" + printable(v.text) + "'");
                      s.layout.vllm_entrypoint = v.text)},
  {.key = "vllm_version", .flag = "vllm_version", .kind = OptionKind::text, .group = kEngine,
   .help = "vLLM: the release planned (0.19, 0.20.1); the sampler's warm-up sorts the whole vocabulary before "
           "0.17 (38 B a logit at bf16) and filters in place from 0.17 (14 B), and 'GPU KV cache size' is "
           "logged as int(concurrency x max_model_len) after 0.20.0",
   .default_text = "0.22",
   .set = MEMPLAN_SET(parse_vllm_version(v.text); s.layout.vllm_version = v.text)},
  {.key = "mamba_ssm_cache_dtype", .flag = "mamba_ssm_cache_dtype", .kind = OptionKind::text, .group = kEngine,
   .help = "vLLM: the dtype of a Mamba layer's SSM state, auto (the model's dtype; NemotronH float32, as vLLM "
           "since 2026-04, float16 in 0.13-0.18), float32 or float16",
   .default_text = "auto",
   .set = MEMPLAN_SET(s.layout.mamba_ssm_cache_dtype =
                          one_of(v.text, "mamba_ssm_cache_dtype", {"auto", "float32", "float16"}))},
  {.key = "enable_prefix_caching", .flag = "enable_prefix_caching", .kind = OptionKind::flag, .group = kEngine,
   .help = "vLLM --enable-prefix-caching: on by default for transformers, off for models with Mamba layers, where "
           "it makes a request hold more Mamba blocks (`mamba_cache_mode`)",
   .set = MEMPLAN_SET(s.layout.enable_prefix_caching = v.flag)},
  {.key = "disable_hybrid_kv_cache_manager", .flag = "disable_hybrid_kv_cache_manager", .kind = OptionKind::flag,
   .group = kEngine,
   .help = "vLLM --disable-hybrid-kv-cache-manager (vLLM also turns it off for a KV connector): a model of "
           "sliding-window and full-attention layers (Gemma 2-4, gpt-oss) keeps max_model_len tokens in every "
           "layer instead of a window's in the sliding ones",
   .set = MEMPLAN_SET(s.layout.disable_hybrid_kv_cache_manager = v.flag)},
  {.key = "mamba_cache_mode", .flag = "mamba_cache_mode", .kind = OptionKind::text, .group = kEngine,
   .help = "vLLM --mamba-cache-mode with prefix caching: align (a request holds 2 blocks in each Mamba group; "
           "vLLM's default for Qwen3-Next and Qwen3.5) or all (a block per block_size tokens, vLLM's default for "
           "the other Mamba models; not modelled yet)",
   .default_text = "vLLM's default for the model",
   .set = MEMPLAN_SET(s.layout.mamba_cache_mode = one_of(v.text, "mamba_cache_mode", {"none", "align", "all"}))},
  {.key = "speculative_method", .flag = "speculative_method", .kind = OptionKind::text, .group = kEngine,
   .help = "vLLM --speculative-config's method: mtp (the checkpoint's own multi-token-prediction layers, as "
           "Qwen3-Next, Qwen3.5 and DeepSeek-V3 have; qwen3_next_mtp, deepseek_mtp and the other *_mtp names mean "
           "it too) or ngram (no drafter on the GPU); its layers' weights and KV pages, and k more Mamba blocks "
           "and convolution rows a request",
   .default_text = "off",
   .set = MEMPLAN_SET(s.layout.speculative_method = v.text)},
  {.key = "num_speculative_tokens", .flag = "num_speculative_tokens", .kind = OptionKind::count, .group = kEngine,
   .help = "vLLM --speculative-config's num_speculative_tokens: tokens drafted a step (k)",
   .default_text = "mtp: the model's MTP layers", .min = 1, .max = 1 << 10,
   .set = MEMPLAN_SET(s.layout.num_speculative_tokens = v.count)},
  {.key = "max_num_seqs", .flag = "max_num_seqs", .kind = OptionKind::count, .group = kEngine,
   .help = "vLLM: sequences per batch (the sampler's rows in the profile run)",
   .default_text = "1024 on a GPU of 70 GiB or more that is not an A100, else 256 (vLLM 0.9-0.11)", .min = 1,
   .set = MEMPLAN_SET(s.layout.max_num_seqs = v.count)},
  {.key = "max_num_batched_tokens", .flag = "max_num_batched_tokens", .kind = OptionKind::count, .group = kEngine,
   .help = "vLLM: tokens per forward of the profile run",
   .default_text = "serve 8192, llm 16384 on a GPU of 70 GiB or more that is not an A100; else serve 2048, llm 8192",
   .min = 1, .set = MEMPLAN_SET(s.layout.max_num_batched_tokens = v.count)},
  {.key = "block_size", .flag = "block_size", .kind = OptionKind::count, .group = kEngine,
   .help = "vLLM: tokens per KV cache block", .default_text = "16", .min = 1, .max = 1 << 20,
   .set = MEMPLAN_SET(s.layout.block_size = v.count)},
  {.key = "max_loras", .flag = "max_loras", .kind = OptionKind::count, .group = kEngine,
   .help = "vLLM --enable-lora --max-loras N: adapters served at once; each linear layer, the embedding and the "
           "head keep N stacks of adapter buffers", .default_text = "0 (no LoRA)", .max = 1 << 16,
   .set = MEMPLAN_SET(s.layout.max_loras = v.count)},
  {.key = "max_lora_rank", .flag = "max_lora_rank", .kind = OptionKind::count, .group = kEngine,
   .help = "vLLM --max-lora-rank: the rank every adapter buffer is sized for", .default_text = "16", .min = 1,
   .max = 1 << 16, .set = MEMPLAN_SET(s.layout.max_lora_rank = v.count)},
  {.key = "kv_cache_memory_bytes", .flag = "kv_cache_memory_bytes", .kind = OptionKind::text, .group = kEngine,
   .help = "vLLM --kv-cache-memory-bytes: the KV cache's size on each GPU (e.g. 4GiB), given instead of what "
           "gpu_memory_utilization leaves after the profile", .default_text = "what the profile leaves",
   .set = MEMPLAN_SET(s.layout.kv_cache_memory_bytes = parse_size(v.text))},
  {.key = "language_model_only", .flag = "language_model_only", .kind = OptionKind::flag, .group = kEngine,
   .help = "vLLM --language-model-only: serve a vision-language model's language model alone, its vision tower "
           "not loaded and no multimodal profile",
   .set = MEMPLAN_SET(s.layout.language_model_only = v.flag)},
  {.key = "ngl", .flag = "ngl", .kind = OptionKind::count, .group = kEngine,
   .help = "llama.cpp -ngl: the last N layers on the GPU; more than the model's layers puts the output layer there "
           "too", .default_text = "every layer and the output layer with a GPU, 0 with cpu", .max = 1 << 20,
   .set = MEMPLAN_SET(s.layout.ngl = v.count)},
  {.key = "n_cpu_moe", .flag = "n_cpu_moe", .kind = OptionKind::count, .group = kEngine,
   .help = "llama.cpp --n-cpu-moe: the routed experts of the first N layers stay in host memory, the rest of "
           "those layers on the GPU", .default_text = "0", .max = 1 << 20,
   .set = MEMPLAN_SET(s.layout.n_cpu_moe = v.count)},
  {.key = "ubatch", .flag = "ubatch", .kind = OptionKind::count, .group = kEngine,
   .help = "llama.cpp -ub: tokens per micro-batch, which sizes the compute buffer", .default_text = "512", .min = 1,
   .max = 1 << 24, .set = MEMPLAN_SET(s.layout.ubatch = v.count)},
  {.key = "parallel", .flag = "parallel", .kind = OptionKind::count, .group = kEngine,
   .help = "llama.cpp -np: sequences served at once; each gets -c / N cells of cache (rounded up to 256) and a row "
           "of logits", .default_text = "1", .min = 1, .max = 1 << 16, .set = MEMPLAN_SET(s.layout.parallel = v.count)},
  {.key = "kv_unified", .flag = "kv_unified", .kind = OptionKind::flag, .group = kEngine,
   .help = "llama.cpp --kv-unified: one cache of -c cells that the -np sequences share, instead of -c / N each",
   .set = MEMPLAN_SET(s.layout.kv_unified = v.flag)},
  {.key = "llama_server", .flag = "llama_server", .kind = OptionKind::flag, .group = kEngine,
   .help = "Plan llama-server (llama-cli runs it too): -np 4 over one unified cache unless `parallel` is given, "
           "a compute buffer for only the tokens its slots sample (and verify, with a draft), and without `seq_len` "
           "its -c: the trained context for each slot, reduced by its --fit until 1 GiB stays free",
   .set = MEMPLAN_SET(s.layout.llama_server = v.flag)},
  {.key = "draft", .flag = "draft", .kind = OptionKind::text, .group = kEngine,
   .help = "llama-server -md: a draft model for speculative decoding (a .gguf, config, built-in or Hub id), "
           "with its own weights, cache and compute buffer beside the main model's",
   .set = MEMPLAN_SET(s.layout.draft = v.text)},
  {.key = "draft_max", .flag = "draft_max", .kind = OptionKind::count, .group = kEngine,
   .help = "llama-server --draft-max: tokens the draft proposes per step; the main model keeps that many more "
           "outputs per sequence", .default_text = "3", .max = 1 << 16,
   .set = MEMPLAN_SET(s.layout.draft_max = v.count)},
  {.key = "ngl_draft", .flag = "ngl_draft", .kind = OptionKind::count, .group = kEngine,
   .help = "llama-server -ngld: the draft model's last N layers on the GPU", .default_text = "as `ngl`",
   .max = 1 << 20, .set = MEMPLAN_SET(s.layout.ngl_draft = v.count)},
  {.key = "cache_type_k_draft", .flag = "cache_type_k_draft", .kind = OptionKind::text, .group = kEngine,
   .help = "llama-server -ctkd: the draft's K cache type, as cache_type_k", .default_text = "f16",
   .set = MEMPLAN_SET((void)parse_llama_cpp_cache_type(v.text, "cache_type_k_draft");
                      s.layout.cache_type_k_draft = v.text)},
  {.key = "cache_type_v_draft", .flag = "cache_type_v_draft", .kind = OptionKind::text, .group = kEngine,
   .help = "llama-server -ctvd: the draft's V cache type, as cache_type_v", .default_text = "f16",
   .set = MEMPLAN_SET((void)parse_llama_cpp_cache_type(v.text, "cache_type_v_draft");
                      s.layout.cache_type_v_draft = v.text)},
  {.key = "mmproj", .flag = "mmproj", .kind = OptionKind::text, .group = kEngine,
   .help = "llama.cpp --mmproj: a vision tower's .gguf (mmproj-*.gguf beside the model's), its weights and the "
           "compute buffer of its largest image on the GPU (Gemma 3, Qwen3-VL and Qwen3.5 towers)",
   .default_text = "none: a vision-language model's text model alone",
   .set = MEMPLAN_SET(s.layout.mmproj = v.text)},
  {.key = "image_max_tokens", .flag = "image_max_tokens", .kind = OptionKind::count, .group = kEngine,
   .help = "llama.cpp --image-max-tokens: the largest image a Qwen3-VL or Qwen3.5 tower (`mmproj`) takes, in "
           "tokens; its compute buffer grows to that image's graph",
   .default_text = "4096", .min = 1, .max = 1 << 20, .set = MEMPLAN_SET(s.layout.image_max_tokens = v.count)},
  {.key = "mmproj_offload", .flag = "no_mmproj_offload", .kind = OptionKind::flag, .group = kEngine,
   .help = "llama.cpp --no-mmproj-offload: the vision tower in host memory, run on the CPU",
   .negated = true, .set = MEMPLAN_SET(s.layout.mmproj_offload = v.flag)},
  {.key = "cache_type_k", .flag = "cache_type_k", .kind = OptionKind::text, .group = kEngine,
   .help = "llama.cpp -ctk: f16, bf16, f32, q8_0, q4_0, q4_1, iq4_nl, q5_0 or q5_1", .default_text = "f16",
   .set = MEMPLAN_SET((void)parse_llama_cpp_cache_type(v.text, "cache_type_k"); s.layout.cache_type_k = v.text)},
  {.key = "cache_type_v", .flag = "cache_type_v", .kind = OptionKind::text, .group = kEngine,
   .help = "llama.cpp -ctv: as cache_type_k; a quantised V cache needs flash attention", .default_text = "f16",
   .set = MEMPLAN_SET((void)parse_llama_cpp_cache_type(v.text, "cache_type_v"); s.layout.cache_type_v = v.text)},
  {.key = "flash_attn", .flag = "flash_attn", .kind = OptionKind::text, .group = kEngine,
   .help = "llama.cpp -fa: on, off or auto (on where the backend has it: CPU, CUDA, Metal)", .default_text = "auto",
   .set = MEMPLAN_SET(if (v.text != "on" && v.text != "off" && v.text != "auto") throw Error(
       ErrorKind::invalid_input, "`flash_attn` is on, off or auto, not '" + printable(v.text) + "'");
                      s.layout.flash_attn = v.text)},
  {.key = "device_map", .flag = "device_map", .kind = OptionKind::text, .group = kLayout,
   .help = "auto (= balanced), balanced, balanced_low_0 or sequential: whole layers on the gpus in order, as "
           "transformers' from_pretrained(device_map=...) places them",
   .common = true, .set = MEMPLAN_SET((void)parse_placement_policy(v.text); s.layout.device_map = v.text)},
  {.key = "gpus", .flag = "gpus", .kind = OptionKind::list, .group = kLayout,
   .help = "GPUs for device_map, in order: a100-80gb,a100-80gb,rtx-4090 or 3xa100-80gb",
   .common = true, .set = MEMPLAN_SET(s.layout.gpus = v.list)},
  {.key = "max_memory", .flag = "max_memory", .kind = OptionKind::list, .group = kLayout,
   .help = "device_map: memory each GPU may take (accelerate max_memory), one size or one per GPU",
   .default_text = "its memory less the CUDA context",
   .set = MEMPLAN_SET(s.layout.max_memory.clear(); for (const std::string& x : v.list) s.layout.max_memory.push_back(parse_size(x)))},
  {.key = "cpu_memory", .flag = "cpu_memory", .kind = OptionKind::text, .group = kLayout,
   .help = "device_map: host RAM for what does not fit", .default_text = "unlimited",
   .set = MEMPLAN_SET(s.layout.cpu_memory = parse_size(v.text))},
});
// clang-format on
#undef MEMPLAN_SET

std::string normalised(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

[[noreturn]] void invalid(const OptionDef& o, const std::string& message) {
  throw Error(ErrorKind::invalid_input, message, std::string(o.key));
}

std::uint64_t parse_count(const OptionDef& o, std::string_view text) {
  const std::string ref = "`" + std::string(o.key) + "`";
  const std::string range = "an integer from " + std::to_string(o.min) + " to " + group_digits(o.max);
  const std::string_view digits = text.starts_with('-') ? text.substr(1) : text;
  std::uint64_t n = 0;
  const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  const bool whole = !digits.empty() && r.ptr == digits.data() + digits.size();
  if (whole && text.starts_with('-')) invalid(o, ref + " must be " + range + ", got " + printable(text));
  if (whole && r.ec == std::errc::result_out_of_range) {
    invalid(o, ref + " is too large: " + printable(text) + " (at most " + group_digits(o.max) + ")");
  }
  if (!whole || r.ec != std::errc()) invalid(o, ref + " must be a whole number, got '" + printable(text) + "'");
  if (n < o.min || n > o.max) invalid(o, ref + " must be " + range + ", got " + printable(text));
  return n;
}

std::string decimal_text(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

double parse_number(const OptionDef& o, const std::string& text) {
  // A bound of 1e-6 reads as "above 0": (0, 1] rather than [0.000001, 1].
  const bool open_low = o.low > 0 && o.low <= 1e-6;
  const std::string range = (open_low ? "(" + decimal_text(0) : "[" + decimal_text(o.low)) + ", " +
                            decimal_text(o.high) + "]";
  const std::string what = (o.high == 1 && o.low < 1 ? "a fraction in " : "a number in ") + range;
  char* end = nullptr;
  errno = 0;
  const double x = text.empty() ? 0 : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(x)) {
    invalid(o, "`" + std::string(o.key) + "` must be " + what + ", got '" + printable(text) + "'");
  }
  if (x < o.low || x > o.high) invalid(o, "`" + std::string(o.key) + "` must be " + what + ", got " + printable(text));
  return x;
}

bool parse_flag(const OptionDef& o, const std::vector<std::string>& values) {
  if (values.empty()) return true;
  const std::string v = lowered(values.back());
  if (v == "true" || v == "1" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "0" || v == "no" || v == "off") return false;
  invalid(o, "`" + std::string(o.key) + "` is true or false, got '" + printable(values.back()) + "'");
}

std::vector<std::string> split_list(const std::vector<std::string>& values) {
  // Commas inside braces belong to a hook pattern ("blocks.{0,5}.x"); the others separate.
  std::vector<std::string> out;
  for (const std::string& value : values) {
    std::string current;
    int depth = 0;
    for (const char c : value) {
      if (c == '{') ++depth;
      if (c == '}' && depth > 0) --depth;
      if (c == ',' && depth == 0) {
        if (!current.empty()) out.push_back(current);
        current.clear();
      } else if (c != ' ') {
        current += c;
      }
    }
    if (!current.empty()) out.push_back(current);
  }
  return out;
}

}  // namespace

bool PlanSettings::was_given(std::string_view key) const {
  return std::find(given.begin(), given.end(), key) != given.end();
}

std::span<const OptionDef> plan_options() { return kOptions; }

const OptionDef* find_option(std::string_view name) {
  const std::string n = normalised(name);
  for (const OptionDef& o : kOptions) {
    if (o.key == n || o.flag == n) return &o;
  }
  return nullptr;
}

std::string applies_text(const OptionDef& option) {
  if (option.applies == all_workloads) return "every workload";
  std::vector<std::string> names;
  for (const std::string& name : workload_names()) {
    if (option.applies & workload_bit(parse_workload_kind(name))) names.push_back(name);
  }
  if (option.applies == kNotWeights) return "every workload but weights";
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

void set_option(PlanSettings& settings, const OptionDef& option, const std::vector<std::string>& values) {
  OptionValue v;
  if (option.kind != OptionKind::flag && option.kind != OptionKind::list && values.size() != 1) {
    invalid(option, "`" + std::string(option.key) + "` takes one value, got " + std::to_string(values.size()));
  }
  switch (option.kind) {
    case OptionKind::flag:  // on the command line a flag is present (negated: --no-X sets X false); in a file, a value
      v.flag = values.empty() ? !option.negated : parse_flag(option, values);
      break;
    case OptionKind::count:
      v.text = values.front();
      v.count = parse_count(option, v.text);
      break;
    case OptionKind::number:
      v.text = values.front();
      v.number = parse_number(option, v.text);
      break;
    case OptionKind::text:
      v.text = values.front();
      if (v.text.empty()) invalid(option, "`" + std::string(option.key) + "` needs a value");
      // The one signed knob: pos_slice -k, as TransformerLens reads a negative index.
      if (option.key == "pos_slice") {
        v.count = parse_count(option, v.text.starts_with('-') ? v.text.substr(1) : v.text);
        if (v.text.starts_with('-') && v.count == 0) invalid(option, "`pos_slice` -0 names no position");
      }
      break;
    case OptionKind::list:
      v.list = split_list(values);
      if (v.list.empty()) invalid(option, "`" + std::string(option.key) + "` needs at least one value");
      break;
  }
  try {
    option.set(settings, v);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::invalid_input) throw;
    const std::string ref = "`" + std::string(option.key) + "`";
    const std::string message = e.what();
    invalid(option, message.find(ref) == std::string::npos ? ref + ": " + message : message);
  }
  if (!settings.was_given(option.key)) settings.given.emplace_back(option.key);
}

void check_options_apply(const PlanSettings& settings, WorkloadMask kinds) {
  for (const std::string& key : settings.given) {
    const OptionDef* o = find_option(key);
    if (o == nullptr || (o->applies & kinds) != 0) continue;
    std::vector<std::string> plan;
    for (const std::string& name : workload_names()) {
      if (kinds & workload_bit(parse_workload_kind(name))) plan.push_back(name);
    }
    std::string planned;
    for (std::size_t i = 0; i < plan.size(); ++i) planned += (i == 0 ? "" : ", ") + plan[i];
    throw Error(ErrorKind::invalid_input,
                "`" + key + "` applies to " + applies_text(*o) + "; this plan's workload is " + planned, key);
  }
}

}  // namespace memplan
