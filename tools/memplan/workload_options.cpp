#include "workload_options.hpp"

#include <algorithm>

#include "commands.hpp"
#include "memplan/core/error.hpp"
#include "memplan/estimators/activations.hpp"

namespace memplan::cli {

void add_workload_shape_options(CLI::App& cmd, WorkloadArgs& a) {
  cmd.add_option("-w,--workload", a.workload,
                 "weights, inference, generation, extraction, streaming_extraction, or a training /\n"
                 "analysis workload (training, sae, fisher, lanczos, sample_gradients, tracin, ...;\n"
                 "an unknown name lists them all)")
      ->capture_default_str();
  cmd.add_option("-b,--batch", a.batch, "Sequences per forward pass")->capture_default_str();
  cmd.add_option("-s,--seq", a.seq, "Input tokens per sequence (default: 2048, or the model's context if shorter)");
}

void add_workload_options(CLI::App& cmd, WorkloadArgs& a) {
  cmd.add_option("--new-tokens", a.new_tokens, "Generation: tokens generated after the prompt (default 256)");
  cmd.add_option("--unquantized", a.unquantized, "Precision of the tensors a quantiser leaves alone")->capture_default_str();
  cmd.add_flag("--quantize-lm-head", a.quantize_lm_head, "Quantise an untied LM head too");
  cmd.add_option("--compute", a.compute, "Activation dtype (default: the weights' float precision)");
  cmd.add_option("--kv-precision", a.kv_precision, "KV cache dtype: fp16, bf16, fp8, int8, int4-gN (default: compute)");
  cmd.add_option("--kv-page", a.kv_page, "Paged KV cache: tokens per block (vLLM: 16); 0 = contiguous");
  cmd.add_flag("--no-kv-cache", a.no_kv_cache, "Inference/extraction without a KV cache (use_cache=False)");
  cmd.add_option("--attention", a.attention,
                 "eager, sdpa, chunked, linear, causal_linear_naive, causal_linear_chunked, recurrent")
      ->capture_default_str();
  cmd.add_option("--attention-chunk", a.attention_chunk, "Query chunk for chunked attention")->capture_default_str();
  cmd.add_flag("--logits-fp32", a.logits_fp32,
               "Inference logits get an fp32 copy, as transformers before 4.45 made (default: the compute dtype)");
  cmd.add_option("--filter", a.filter,
                 "Hooks to cache (extraction): names or globs, e.g. 'blocks.*.hook_resid_post',\n"
                 "'blocks.{0,5,11}.hook_resid_post'; repeat or comma-separate; default all")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd.add_option("--layers", a.layers, "Cache only these blocks: 3, 0,5,11 or 0-11");
  cmd.add_option("--pos-slice", a.pos_slice, "Cache only the last N positions (TransformerLens pos_slice)");
  cmd.add_flag("--remove-batch-dim", a.remove_batch_dim, "Cache batch element 0 only");
  cmd.add_option("--stop-at-layer", a.stop_at_layer, "Stop the forward pass before this block");
  cmd.add_flag("--incl-bwd", a.incl_bwd, "Cache each hook's gradient too");
  cmd.add_flag("--cache-on-cpu", a.cache_on_cpu, "Keep the activation cache in host RAM (device='cpu')");
  cmd.add_option("--streaming-chunk", a.streaming_chunk, "streaming_extraction: tokens per chunk")->capture_default_str();
  cmd.add_flag("--no-overhead", a.no_overhead, "Leave out the CUDA context, workspaces and allocator overhead");
  cmd.add_option("--cuda-context", a.cuda_context, "CUDA context size, e.g. 500MiB (default 512 MiB, range 256 MiB-1 GiB)");
  cmd.add_option("--fragmentation", a.fragmentation, "Fragmentation margin on transient tensors, 0-1")->capture_default_str();
  add_analysis_options(cmd, a.analysis);
}

Workload build_workload(const WorkloadArgs& a, const ModelSpec& spec, const CLI::App& cmd) {
  Workload w;
  w.kind = parse_workload_kind(a.workload);
  w.batch = a.batch;
  w.seq_len = a.seq ? a.seq : std::min<std::uint64_t>(2048, spec.max_seq_len);
  w.new_tokens = a.new_tokens;
  if (w.kind == WorkloadKind::generation && w.new_tokens == 0 && cmd.count("--new-tokens") == 0) w.new_tokens = 256;
  w.weights.unquantized = float_option(a.unquantized, "--unquantized");
  w.weights.quantize_lm_head = a.quantize_lm_head;
  if (!a.compute.empty()) w.compute = float_option(a.compute, "--compute");
  if (!a.kv_precision.empty()) w.kv_precision = parse_precision(a.kv_precision);
  w.kv_page_tokens = a.kv_page;
  w.kv_cache = !a.no_kv_cache;
  w.attention = parse_attention_variant(a.attention);
  w.attention_chunk = a.attention_chunk;
  w.logits_fp32 = a.logits_fp32;
  w.cache.filter = split_hook_filters(a.filter);
  if (!a.layers.empty()) w.cache.layers = parse_layer_selection(a.layers);
  w.cache.pos_slice = a.pos_slice;
  w.cache.remove_batch_dim = a.remove_batch_dim;
  if (cmd.count("--stop-at-layer") > 0) w.cache.stop_at_layer = a.stop_at_layer;
  w.cache.incl_bwd = a.incl_bwd;
  w.cache.on_cpu = a.cache_on_cpu;
  w.streaming_chunk = a.streaming_chunk;
  w.include_overhead = !a.no_overhead;
  if (!a.cuda_context.empty()) {
    w.overhead.cuda_context = w.overhead.cuda_context_low = w.overhead.cuda_context_high = parse_size(a.cuda_context);
  }
  w.overhead.fragmentation = a.fragmentation;
  w.overhead.fragmentation_low = std::min(w.overhead.fragmentation_low, a.fragmentation);
  w.overhead.fragmentation_high = std::max(w.overhead.fragmentation_high, a.fragmentation);
  apply_analysis_options(a.analysis, w);
  return w;
}

}  // namespace memplan::cli
