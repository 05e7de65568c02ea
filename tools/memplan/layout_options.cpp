#include "layout_options.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <iostream>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "memplan/io/gpu_table.hpp"
#include "memplan/plan/layout.hpp"

namespace memplan::cli {

namespace {

constexpr std::array<const char*, 21> kLayoutOptions{
    "--tp",           "--pp",          "--dp",           "--zero",          "--fsdp",          "--shard-group",
    "--offload",      "--sequence-parallel", "--micro-batches", "--schedule", "--stage-layers", "--serving",
    "--gpu-memory-utilization", "--max-model-len", "--max-num-seqs", "--max-num-batched-tokens", "--block-size",
    "--device-map",   "--gpus",        "--max-memory",   "--cpu-memory"};

[[noreturn]] void invalid(const char* key, const std::string& message) {
  throw Error(ErrorKind::invalid_input, message, key);
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  for (const char c : text) {
    if (c == ',') {
      out.push_back(current);
      current.clear();
    } else if (c != ' ') {
      current += c;
    }
  }
  out.push_back(current);
  return out;
}

std::uint64_t parse_count(const std::string& text, const char* option) {
  std::uint64_t value = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size()) {
    invalid(option, std::string(option) + ": '" + printable(text) + "' is not a whole number");
  }
  return value;
}

Sharding sharding_of(const LayoutArgs& a) {
  if (!a.zero.empty() && !a.fsdp.empty()) {
    invalid("sharding", "--zero (DeepSpeed) and --fsdp (PyTorch) are two engines sharding the same state: choose one");
  }
  if (!a.zero.empty()) {
    if (a.zero == "0") return Sharding::none;
    if (a.zero == "1" || a.zero == "2" || a.zero == "3") return parse_sharding("zero" + a.zero);
    invalid("zero", "--zero takes a ZeRO stage: 0, 1, 2 or 3, not '" + printable(a.zero) + "'");
  }
  if (!a.fsdp.empty()) {
    static const std::vector<std::string> names{"full", "grad_op", "hybrid"};
    if (std::find(names.begin(), names.end(), a.fsdp) == names.end()) {
      invalid("fsdp", "--fsdp takes full (FULL_SHARD), grad_op (SHARD_GRAD_OP) or hybrid (HYBRID_SHARD), not '" +
                          printable(a.fsdp) + "'" + did_you_mean(a.fsdp, names));
    }
    return parse_sharding("fsdp_" + a.fsdp);
  }
  return Sharding::none;
}

}  // namespace

void add_layout_options(CLI::App& cmd, LayoutArgs& a) {
  CLI::Option_group* g = cmd.add_option_group(
      "Multi-GPU layouts",
      "The same workload over several GPUs, one column per device role ('memplan estimate ... --tp 8').\n"
      "Training (-w training): Megatron --tp/--pp/--dp with --zero or --fsdp sharding and --offload.\n"
      "Inference: --tp (each rank runs its shard), --serving vllm (KV cache = what\n"
      "gpu_memory_utilization leaves), or --device-map auto --gpus LIST (accelerate's layer placement).\n"
      "Examples:\n"
      "  memplan estimate llama-2-70b -w training --seq 4096 --tp 8 --pp 4 --dp 2 --zero 1\n"
      "      --micro-batches 16 --recompute selective --sequence-parallel --gpu h100\n"
      "  memplan estimate llama-2-7b -w training --dp 8 --zero 3 --gpu a100-40gb\n"
      "  memplan estimate llama-2-13b -w training --dp 16 --fsdp hybrid --shard-group 8 --gpu a100-80gb\n"
      "  memplan estimate llama-2-70b --serving vllm --tp 4 --gpu a100-80gb --max-model-len 4096\n"
      "  memplan estimate llama-2-70b -w extraction --device-map auto --gpus 3xa100-80gb\n"
      "  memplan estimate llama-2-13b --device-map auto --gpus rtx-4090,rtx-4090,rtx-3090");
  g->add_option("--tp", a.tp, "Tensor-parallel degree: attention heads, MLP and vocabulary split N ways");
  g->add_option("--pp", a.pp, "Pipeline stages (training): layers split into N stages");
  g->add_option("--dp", a.dp, "Data-parallel replicas (training)");
  g->add_option("--zero", a.zero, "DeepSpeed ZeRO stage 0, 1, 2 or 3 over the --dp replicas (1 with --tp/--pp: "
                                   "Megatron's distributed optimizer)");
  g->add_option("--fsdp", a.fsdp, "PyTorch FSDP over the --dp replicas: full (FULL_SHARD), grad_op (SHARD_GRAD_OP),\n"
                                   "hybrid (HYBRID_SHARD, with --shard-group)");
  g->add_option("--shard-group", a.shard_group, "--fsdp hybrid: GPUs per shard group (a node, e.g. 8)");
  g->add_option("--offload", a.offload,
                "optimizer (DeepSpeed ZeRO-Offload: master weights, optimizer states, fp32 gradients\n"
                "in host RAM) and/or params (ZeRO-3 offload_param; FSDP CPUOffload)")
      ->delimiter(',');
  g->add_flag("--sequence-parallel", a.sequence_parallel,
              "With --tp: split along the sequence the activations tensor parallelism replicates");
  g->add_option("--micro-batches", a.micro_batches, "Micro-batches per step (of --batch sequences each)");
  g->add_option("--schedule", a.schedule, "Pipeline schedule: 1f1b (Megatron's default) or gpipe")->capture_default_str();
  g->add_option("--stage-layers", a.stage_layers, "Layers per pipeline stage, e.g. 19,20,20,21 (default: even, the\n"
                                                  "remainder to the last stages)");
  g->add_option("--serving", a.serving, "vllm: tensor-parallel serving; the KV cache fills what is left (needs --gpu)");
  g->add_option("--gpu-memory-utilization", a.gpu_memory_utilization, "vLLM: fraction of each GPU it may use")
      ->capture_default_str();
  g->add_option("--max-model-len", a.max_model_len, "vLLM: longest sequence (default: the model's context)");
  g->add_option("--max-num-seqs", a.max_num_seqs, "vLLM: sequences per batch")->capture_default_str();
  g->add_option("--max-num-batched-tokens", a.max_num_batched_tokens, "vLLM: tokens per forward of the profile run")
      ->capture_default_str();
  g->add_option("--block-size", a.block_size, "vLLM: tokens per KV cache block")->capture_default_str();
  g->add_option("--device-map", a.device_map,
                "auto (= balanced), balanced, balanced_low_0 or sequential: place whole layers on the\n"
                "--gpus in order, as transformers' from_pretrained(device_map=...) does");
  g->add_option("--gpus", a.gpus, "GPUs for --device-map, in order: a100-80gb,a100-80gb,rtx-4090 or 3xa100-80gb");
  g->add_option("--max-memory", a.max_memory, "--device-map: memory each GPU may take (accelerate max_memory), one\n"
                                              "size or one per GPU (default: its memory less the CUDA context)");
  g->add_option("--cpu-memory", a.cpu_memory, "--device-map: host RAM for what does not fit (default: unlimited)");
}

bool layout_requested(const CLI::App& cmd) {
  return std::any_of(kLayoutOptions.begin(), kLayoutOptions.end(), [&](const char* name) { return cmd.count(name) > 0; });
}

std::vector<GpuSpec> parse_gpu_list(const std::string& text) {
  constexpr std::uint64_t kMostGpus = 4096;
  const std::vector<GpuSpec> table = builtin_gpus();
  std::vector<GpuSpec> out;
  for (const std::string& entry : split(text)) {
    if (entry.empty()) invalid("gpus", "--gpus has an empty entry in '" + printable(text) + "'");
    std::uint64_t copies = 1;
    std::string name = entry;
    const std::size_t x = entry.find('x');
    if (x != std::string::npos && x > 0 && std::all_of(entry.begin(), entry.begin() + static_cast<std::ptrdiff_t>(x),
                                                       [](unsigned char c) { return std::isdigit(c) != 0; })) {
      copies = parse_count(entry.substr(0, x), "gpus");
      name = entry.substr(x + 1);
      if (copies == 0 || copies > kMostGpus) {
        invalid("gpus", "--gpus: '" + printable(entry) + "' asks for " + std::to_string(copies) + " GPUs (1 to " +
                            std::to_string(kMostGpus) + ")");
      }
    }
    const GpuSpec gpu = find_gpu(name, table);
    for (std::uint64_t i = 0; i < copies; ++i) out.push_back(gpu);
    if (out.size() > kMostGpus) invalid("gpus", "--gpus lists more than " + std::to_string(kMostGpus) + " GPUs");
  }
  return out;
}

std::optional<GpuSpec> layout_resolution_gpu(const LayoutArgs& args) {
  if (args.gpus.empty()) return std::nullopt;
  const std::vector<GpuSpec> gpus = parse_gpu_list(args.gpus);
  return *std::min_element(gpus.begin(), gpus.end(), [](const GpuSpec& a, const GpuSpec& b) {
    return a.compute_capability < b.compute_capability;
  });
}

int run_layout(const LayoutArgs& a, const ModelSpec& spec, const Workload& workload, const EstimateReport& header,
               const std::optional<GpuSpec>& gpu, bool gpu_named, const Printer& printer) {
  LayoutOptions o;
  ParallelTrainingOptions& p = o.parallel;
  p.tensor = a.tp;
  p.pipeline = a.pp;
  p.data = a.dp;
  p.sharding = sharding_of(a);
  p.shard_group = a.shard_group;
  for (const std::string& what : a.offload) {
    if (what == "optimizer") {
      p.offload_optimizer = true;
    } else if (what == "params") {
      p.offload_params = true;
    } else {
      invalid("offload", "--offload takes 'optimizer' and/or 'params', not '" + printable(what) + "'" +
                             did_you_mean(what, {"optimizer", "params"}));
    }
  }
  p.sequence_parallel = a.sequence_parallel;
  p.micro_batches = a.micro_batches;
  p.schedule = parse_pipeline_schedule(a.schedule);
  if (!a.stage_layers.empty()) {
    for (const std::string& v : split(a.stage_layers)) p.stage_layers.push_back(parse_count(v, "stage_layers"));
  }

  const LayoutArgs defaults;
  if (!a.serving.empty()) {
    if (a.serving != "vllm") invalid("serving", "--serving plans vLLM only: --serving vllm, not '" + printable(a.serving) + "'");
    ServingOptions so;
    so.gpu_memory_utilization = a.gpu_memory_utilization;
    so.max_model_len = a.max_model_len;
    so.max_num_seqs = a.max_num_seqs;
    so.max_num_batched_tokens = a.max_num_batched_tokens;
    so.block_size = a.block_size;
    o.vllm = so;
  } else if (a.gpu_memory_utilization != defaults.gpu_memory_utilization || a.max_model_len != defaults.max_model_len ||
             a.max_num_seqs != defaults.max_num_seqs || a.max_num_batched_tokens != defaults.max_num_batched_tokens ||
             a.block_size != defaults.block_size) {
    invalid("serving", std::string("--gpu-memory-utilization, --max-model-len, --max-num-seqs, --max-num-batched-tokens "
                                   "and --block-size apply to --serving vllm"));
  }
  if (!a.device_map.empty()) {
    o.device_map = parse_placement_policy(a.device_map);
    if (gpu_named) invalid("gpus", "--device-map takes its GPUs from --gpus (e.g. --gpus 2xa100-80gb,rtx-4090), not --gpu");
    if (a.gpus.empty()) invalid("gpus", "--device-map places the model over GPUs: list them with --gpus, e.g. 2xa100-80gb");
    o.gpus = parse_gpu_list(a.gpus);
    if (!a.max_memory.empty()) {
      const std::vector<std::string> sizes = split(a.max_memory);
      if (sizes.size() != 1 && sizes.size() != o.gpus.size()) {
        invalid("max_memory", "--max-memory gives " + std::to_string(sizes.size()) + " sizes for " +
                                  std::to_string(o.gpus.size()) + " GPUs: give one for all, or one per GPU");
      }
      for (std::size_t i = 0; i < o.gpus.size(); ++i) o.max_memory.push_back(parse_size(sizes[sizes.size() == 1 ? 0 : i]));
    }
    if (!a.cpu_memory.empty()) o.cpu_memory = parse_size(a.cpu_memory);
  } else {
    if (!a.gpus.empty()) invalid("gpus", "--gpus lists the GPUs of --device-map; the other layouts take one GPU type with --gpu");
    if (!a.max_memory.empty() || !a.cpu_memory.empty()) invalid("max_memory", "--max-memory and --cpu-memory apply to --device-map");
    if (gpu) o.gpus.push_back(*gpu);
  }

  LayoutReport report{header, estimate_layout(spec, workload, o)};
  if (o.vllm && report.layout.serving) {  // a server: no fixed batch or sequence
    report.header.workload_kind = "serving";
    report.header.batch = report.header.seq_len = report.header.new_tokens = 0;
    report.header.warnings.clear();  // about --seq, which a server does not take
  }
  printer.layout(report, std::cout);
  return 0;
}

}  // namespace memplan::cli
