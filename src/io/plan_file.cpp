#include "memplan/io/plan_file.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "memplan/estimators/training.hpp"
#include "memplan/io/gpu_table.hpp"
#include "memplan/resolve/resolver.hpp"
#include "text_file.hpp"
#include "yaml_fields.hpp"

namespace memplan {

namespace {

constexpr std::uint64_t kMaxSize = 1ULL << 40;

const std::vector<std::string> kPlanKeys = {"model", "workload", "memory", "budget"};
const std::vector<std::string> kWorkloadKeys = {
    "kind", "batch_size", "seq_len", "new_tokens", "compute", "unquantized", "kv_cache", "kv_precision",
    "kv_page_tokens", "attention", "attention_chunk", "logits_fp32", "layers", "pos_slice", "remove_batch_dim",
    "stop_at_layer", "incl_bwd", "cache_on_cpu", "include_overhead", "fragmentation", "optimizer",
    "grad_accumulation"};
const std::vector<std::string> kMemoryKeys = {"precision_mode", "streaming_chunk_size", "memory_warning_threshold",
                                              "activation_cache_filter", "enable_gradient_checkpointing"};

Precision float_precision(std::string_view text) {
  const Precision p = parse_precision(text);
  if (is_quantized(p)) {
    throw Error(ErrorKind::invalid_input,
                "must be a float precision (fp32, tf32, bf16, fp16), got '" + printable(text) + "'");
  }
  return p;
}

std::uint64_t threshold_ppm(double threshold) { return static_cast<std::uint64_t>(std::llround(threshold * 1e6)); }

bool path_like(std::string_view ref) {
  return ref.find('/') != std::string_view::npos || ref.ends_with(".yaml") || ref.ends_with(".yml") ||
         ref.ends_with(".json");
}

void read_bool(const detail::YamlMap& map, const std::string& key, bool& field) {
  if (map.has(key)) field = map.boolean(key);
}

}  // namespace

PlanBudget parse_budget(std::string_view text) {
  PlanBudget b;
  b.text = std::string(text);
  if (text == "probe") {
    b.kind = BudgetKind::probe;
    return b;
  }
  try {
    b.gpu = find_gpu(text, builtin_gpus());
    b.kind = BudgetKind::gpu;
    b.bytes = b.gpu->memory;
    return b;
  } catch (const Error& gpu_error) {
    if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) {
      throw Error(ErrorKind::invalid_input,
                  std::string(gpu_error.what()) + "; a budget is a GPU name, a size such as 24GiB or 80GB, or probe",
                  "budget");
    }
  }
  try {
    b.bytes = parse_size(text);
  } catch (const Error& e) {
    throw Error(ErrorKind::invalid_input, e.what(), "budget");
  }
  if (b.bytes.count() == 0) throw Error(ErrorKind::invalid_input, "a budget must be more than 0 bytes", "budget");
  b.kind = BudgetKind::bytes;
  return b;
}

PlanFile parse_plan_yaml(std::string_view text, const std::string& file, const std::string& base_dir) {
  const YAML::Node root = detail::parse_yaml(text, file);
  const detail::YamlMap map(root, file, "a plan");
  map.reject_unknown(kPlanKeys);

  PlanFile plan;
  plan.path = file;

  // model: a built-in name, or a path relative to the plan's folder.
  plan.model_ref = map.string("model");
  std::string ref = plan.model_ref;
  if (path_like(ref)) {
    std::filesystem::path p(ref);
    if (p.is_relative()) p = std::filesystem::path(base_dir.empty() ? "." : base_dir) / p;
    ref = p.lexically_normal().string();
    std::error_code ec;
    if (!std::filesystem::exists(ref, ec)) {
      map.fail("model", "model file '" + printable(ref) + "' does not exist (relative paths are read from the plan's folder)");
    }
  }
  try {
    plan.model = find_model(ref);
  } catch (const ConfigError&) {
    throw;  // located in the model file
  } catch (const Error& e) {
    map.fail("model", e.what());
  }
  const ModelSpec& spec = plan.model.spec;

  // memory: the seed's section; every key optional.
  std::optional<detail::YamlMap> memory;
  if (map.has("memory") && !map.value("memory").IsNull()) {
    memory.emplace(map.value("memory"), file, "the memory section");
    memory->reject_unknown(kMemoryKeys);
    MemorySettings& m = plan.memory;
    if (memory->has("precision_mode")) {
      m.precision_mode = memory->string("precision_mode");
      if (m.precision_mode != "auto") memory->parsed("precision_mode", parse_precision);
    }
    if (memory->has("streaming_chunk_size")) m.streaming_chunk_size = memory->integer("streaming_chunk_size", 1, kMaxSize);
    if (memory->has("memory_warning_threshold")) {
      m.memory_warning_threshold = memory->number("memory_warning_threshold", 0.0, 1.0);
      if (threshold_ppm(m.memory_warning_threshold) == 0) {
        memory->fail("memory_warning_threshold", "'memory_warning_threshold' must be greater than 0 (a fraction in (0, 1])");
      }
    }
    if (memory->has("activation_cache_filter")) m.activation_cache_filter = memory->string_list("activation_cache_filter");
    read_bool(*memory, "enable_gradient_checkpointing", m.enable_gradient_checkpointing);
  }

  // workload: a kind, or a mapping of the kind and its knobs.
  Workload& w = plan.workload;
  std::optional<detail::YamlMap> work;
  const YAML::Node wnode = map.value("workload");
  if (wnode.IsScalar()) {
    w.kind = map.parsed("workload", parse_workload_kind);
  } else {
    if (!wnode.IsMap()) map.fail("workload", "'workload' must be a kind (inference, extraction, ...) or a mapping with 'kind:'");
    work.emplace(wnode, file, "the workload");
    const detail::YamlMap& k = *work;
    k.reject_unknown(kWorkloadKeys);
    w.kind = k.parsed("kind", parse_workload_kind);
    if (k.has("batch_size")) w.batch = k.integer("batch_size", 1, kMaxSize);
    if (k.has("seq_len")) w.seq_len = k.integer("seq_len", 1, kMaxSize);
    if (k.has("new_tokens")) w.new_tokens = k.integer("new_tokens", 0, kMaxSize);
    if (k.has("compute")) w.compute = k.parsed("compute", float_precision);
    if (k.has("unquantized")) w.weights.unquantized = k.parsed("unquantized", float_precision);
    read_bool(k, "kv_cache", w.kv_cache);
    if (k.has("kv_precision")) w.kv_precision = k.parsed("kv_precision", parse_precision);
    if (k.has("kv_page_tokens")) w.kv_page_tokens = k.integer("kv_page_tokens", 0, kMaxSize);
    if (k.has("attention")) w.attention = k.parsed("attention", parse_attention_variant);
    if (k.has("attention_chunk")) w.attention_chunk = k.integer("attention_chunk", 1, kMaxSize);
    read_bool(k, "logits_fp32", w.logits_fp32);
    if (k.has("layers")) {
      const YAML::Node layers = k.value("layers");
      std::string selection;
      if (layers.IsSequence()) {
        for (const YAML::Node& item : layers) selection += (selection.empty() ? "" : ",") + item.as<std::string>("");
      } else {
        selection = k.string("layers");
      }
      try {
        w.cache.layers = parse_layer_selection(selection);
      } catch (const Error& e) {
        k.fail("layers", e.what());
      }
    }
    if (k.has("pos_slice")) w.cache.pos_slice = k.integer("pos_slice", 0, kMaxSize);
    read_bool(k, "remove_batch_dim", w.cache.remove_batch_dim);
    if (k.has("stop_at_layer")) w.cache.stop_at_layer = k.integer("stop_at_layer", 0, kMaxSize);
    read_bool(k, "incl_bwd", w.cache.incl_bwd);
    read_bool(k, "cache_on_cpu", w.cache.on_cpu);
    read_bool(k, "include_overhead", w.include_overhead);
    if (k.has("fragmentation")) {
      w.overhead.fragmentation = k.number("fragmentation", 0.0, 1.0);
      w.overhead.fragmentation_low = std::min(w.overhead.fragmentation_low, w.overhead.fragmentation);
      w.overhead.fragmentation_high = std::max(w.overhead.fragmentation_high, w.overhead.fragmentation);
    }
    if (k.has("optimizer")) w.analysis.training.optimizer = k.parsed("optimizer", parse_optimizer);
    if (k.has("grad_accumulation")) w.analysis.training.grad_accumulation = k.integer("grad_accumulation", 1, kMaxSize);
  }
  if (!work || !work->has("seq_len")) w.seq_len = std::min<std::uint64_t>(2048, spec.max_seq_len);
  if (w.kind == WorkloadKind::generation && (!work || !work->has("new_tokens"))) w.new_tokens = 256;

  // The memory section onto the workload.
  const MemorySettings& m = plan.memory;
  w.streaming_chunk = m.streaming_chunk_size;
  w.cache.filter = m.activation_cache_filter;
  const bool caches = w.kind == WorkloadKind::extraction || w.kind == WorkloadKind::streaming_extraction;
  if (!m.activation_cache_filter.empty() && !caches) {
    plan.notes.push_back("activation_cache_filter applies to extraction and streaming_extraction; ignored for " +
                         to_string(w.kind));
  }
  if (m.enable_gradient_checkpointing) {
    if (w.kind == WorkloadKind::training) {
      w.analysis.training.recompute = Recompute::full;
    } else {
      plan.notes.push_back("enable_gradient_checkpointing applies to training workloads; ignored for " +
                           to_string(w.kind));
    }
  }

  // budget: a GPU of the table, a size, or "probe".
  if (map.has("budget")) {
    const std::string budget = map.string("budget");
    try {
      plan.budget = parse_budget(budget);
    } catch (const Error& e) {
      map.fail("budget", e.what());
    }
  }

  // Knobs that only make sense together are checked now, where their keys can be pointed at.
  Workload trial = w;
  trial.weights.precision = m.precision_mode == "auto" ? precisions::bf16 : parse_precision(m.precision_mode);
  try {
    (void)estimate_workload(spec, trial);
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::internal) throw;
    // invalid_input, or overflow: the plan's sizes take a byte count past 64 bits. Either
    // way the message names the plan and the key at fault.
    const ErrorKind kind = e.kind();
    const std::string& key = e.key();
    const auto in_workload = [&](const std::string& yaml_key) {
      if (work && work->has(yaml_key)) work->fail(yaml_key, e.what(), kind);
      map.fail("workload", e.what(), kind);
    };
    if (key == "batch" || key == "batch_size") in_workload("batch_size");
    if (key == "seq_len" || key == "new_tokens" || key == "compute" || key == "layers" || key == "attention") {
      in_workload(key);
    }
    if ((key == "streaming_chunk_size" || key == "activation_cache_filter") && memory && memory->has(key)) {
      memory->fail(key, e.what(), kind);
    }
    if (work && kind == ErrorKind::invalid_input) work->fail("kind", e.what(), kind);
    map.fail("workload", e.what(), kind);
  }
  return plan;
}

PlanFile load_plan_file(const std::string& path) {
  const std::string text = detail::read_text_file(path, "a plan file");
  return parse_plan_yaml(text, path, std::filesystem::path(path).parent_path().string());
}

PlanOutcome evaluate_plan(const PlanFile& plan, const std::optional<GpuSpec>& device, std::optional<Bytes> budget) {
  PlanOutcome out;
  Workload w = plan.workload;
  const std::string& mode = plan.memory.precision_mode;
  if (device) {
    w.overhead.hopper_or_newer = device->compute_capability >= ComputeCapability{9, 0};
    ResolveRequest request;
    request.precision = mode;
    request.device = device_capability(*device);
    const Resolution resolution = resolve_precision(request);
    out.precision = resolution.precision;
    out.precision_reason = resolution.reason;
    out.warnings = resolution.warnings;
  } else if (mode == "auto") {
    out.precision = precisions::bf16;
    out.precision_reason = "auto with no device: assumes compute capability 8.0+";
  } else {
    out.precision = parse_precision(mode);
  }
  w.weights.precision = out.precision;
  out.breakdown = estimate_workload(plan.model.spec, w);
  out.total = out.breakdown.total();
  if (budget) {
    out.budget = budget;
    out.limit = budget_limit(*budget, plan.memory.memory_warning_threshold);
    out.fits = out.total <= *out.limit;
  }
  return out;
}

}  // namespace memplan
