#include "memplan/io/plan_file.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "memplan/estimators/training.hpp"
#include "memplan/io/gpu_table.hpp"
#include "memplan/plan/plan.hpp"
#include "memplan/resolve/resolver.hpp"
#include "text_file.hpp"
#include "yaml_fields.hpp"

namespace memplan {

namespace {

const std::vector<std::string> kPlanKeys = {"model", "model_as", "workload", "memory", "budget"};
// The workload: section takes `kind` and every option of the table (plan/options.hpp) by its
// key, except the two TheLoom's memory: section holds (precision_mode, memory_warning_threshold).
std::vector<std::string> workload_keys() {
  std::vector<std::string> keys;
  for (const OptionDef& o : plan_options()) {
    if (o.key != "precision" && o.key != "threshold") keys.emplace_back(o.key);
  }
  return keys;
}

// A message from the core names options as `key`; in a plan file they are 'key'.
std::string for_plan_file(const std::string& text) {
  return render_option_refs(text, [](std::string_view key) -> std::optional<std::string> {
    return "'" + std::string(key) + "'";
  });
}

const std::vector<std::string> kMemoryKeys = {"precision_mode", "streaming_chunk_size", "memory_warning_threshold",
                                              "activation_cache_filter", "enable_gradient_checkpointing"};

std::uint64_t threshold_ppm(double threshold) { return static_cast<std::uint64_t>(std::llround(threshold * 1e6)); }

bool path_like(std::string_view ref) {
  return ref.find('/') != std::string_view::npos || ref.ends_with(".yaml") || ref.ends_with(".yml") ||
         ref.ends_with(".json") || ref.ends_with(".gguf");
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
    b.bytes = usable_memory(*b.gpu);
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
    // Normalising "./gpt2" gives "gpt2": keep it a path, never the built-in of that name.
    if (ref.find('/') == std::string::npos) ref = "./" + ref;
    std::error_code ec;
    if (!std::filesystem::exists(ref, ec)) {
      map.fail("model",
               "model file '" + printable(ref) + "' does not exist (relative paths are read from the plan's folder)");
    }
  }
  // model_as: a config.json of a model_type memplan does not know, read as a known one.
  const std::string as = map.has("model_as") ? map.string("model_as") : std::string();
  // The reader names the option `as`; in a plan file it is 'model_as'.
  const auto plan_key = [](std::string message) {
    for (std::size_t at = message.find("`as`"); at != std::string::npos; at = message.find("`as`", at)) {
      message.replace(at, 4, "'model_as'");
    }
    return message;
  };
  try {
    plan.model = find_model(ref, {}, as);
  } catch (const ConfigError&) {
    throw;  // located in the model file
  } catch (const Error& e) {
    map.fail(e.key() == "as" ? "model_as" : "model", plan_key(e.what()));
  }
  for (std::string& w : plan.model.spec.import_warnings) w = plan_key(w);
  const ModelSpec& spec = plan.model.spec;

  // memory: TheLoom's section; every key optional.
  std::optional<detail::YamlMap> memory;
  if (map.has("memory") && !map.value("memory").IsNull()) {
    memory.emplace(map.value("memory"), file, "the memory section");
    memory->reject_unknown(kMemoryKeys);
    MemorySettings& m = plan.memory;
    if (memory->has("precision_mode")) {
      m.precision_mode = memory->string("precision_mode");
      if (m.precision_mode != "auto") memory->parsed("precision_mode", parse_precision);
    }
    if (memory->has("streaming_chunk_size"))
      m.streaming_chunk_size = memory->integer("streaming_chunk_size", 1, detail::kMaxConfigSize);
    if (memory->has("memory_warning_threshold")) {
      m.memory_warning_threshold = memory->number("memory_warning_threshold", 0.0, 1.0);
      if (threshold_ppm(m.memory_warning_threshold) == 0) {
        memory->fail("memory_warning_threshold",
                     "'memory_warning_threshold' must be greater than 0 (a fraction in (0, 1])");
      }
    }
    if (memory->has("activation_cache_filter"))
      m.activation_cache_filter = memory->string_list("activation_cache_filter");
    read_bool(*memory, "enable_gradient_checkpointing", m.enable_gradient_checkpointing);
  }

  // workload: a kind, or a mapping of the kind and its knobs (the option table's keys).
  PlanSettings& settings = plan.settings;
  std::optional<detail::YamlMap> work;
  const YAML::Node wnode = map.value("workload");
  if (wnode.IsScalar()) {
    settings.workload.kind = map.parsed("workload", parse_workload_kind);
  } else {
    if (!wnode.IsMap())
      map.fail("workload", "'workload' must be a kind (inference, extraction, ...) or a mapping with 'kind:'");
    work.emplace(wnode, file, "the workload");
    const detail::YamlMap& k = *work;
    k.reject_unknown(workload_keys());
    for (const OptionDef& o : plan_options()) {
      const std::string key(o.key);
      if (!k.has(key) || o.key == "precision" || o.key == "threshold") continue;
      const YAML::Node node = k.value(key);
      std::vector<std::string> values;
      if (node.IsSequence() && o.kind == OptionKind::list) {
        for (const YAML::Node& item : node) {
          if (!item.IsScalar()) k.fail(key, "'" + key + "' lists words or numbers, not nested lists or mappings");
          values.push_back(item.as<std::string>());
        }
      } else if (node.IsScalar()) {
        values.push_back(node.as<std::string>());
      } else {
        k.fail(key, "'" + key + "' must be " +
                        (o.kind == OptionKind::list ? "a value or a list of values" : "a single value") + ", not " +
                        (node.IsSequence() ? "a list"
                         : node.IsMap()    ? "a mapping"
                                           : "empty"));
      }
      try {
        set_option(settings, o, values);
      } catch (const Error& e) {
        k.fail(key, for_plan_file(e.what()));
      }
    }
    if (!k.has("kind")) k.fail("kind", "the workload needs 'kind:' (inference, extraction, training, ...)");
    // A draft model (llama-server -md): a path is read from the plan's folder, as the model's.
    if (!settings.layout.draft.empty()) {
      std::string draft = settings.layout.draft;
      if (path_like(draft) && std::filesystem::path(draft).is_relative()) {
        draft = (std::filesystem::path(base_dir.empty() ? "." : base_dir) / draft).lexically_normal().string();
        if (draft.find('/') == std::string::npos) draft = "./" + draft;
      }
      try {
        settings.draft_model = find_model(draft).spec;
      } catch (const ConfigError& e) {
        if (e.line() != 0) throw;  // located in the draft's own file
        k.fail("draft", e.what());
      } catch (const Error& e) {
        k.fail("draft", e.what());
      }
    }
  }
  Workload& w = settings.workload;

  // The memory section onto the settings.
  const MemorySettings& m = plan.memory;
  settings.precision = m.precision_mode;
  settings.threshold = m.memory_warning_threshold;
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

  // Knobs that only make sense together are checked now, where their keys can be pointed at:
  // the plan bound without a device and estimated once.
  try {
    const Plan bound = bind(spec, settings, DeviceChoice{});
    plan.workload = bound.workload;
    (void)estimate(bound);
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::internal) throw;
    // invalid_input, or overflow: the plan's sizes take a byte count past 64 bits. Either
    // way the message names the plan and the key at fault.
    const ErrorKind kind = e.kind();
    const std::string message = for_plan_file(e.what());
    std::string key = e.key();
    if (key == "batch") key = "batch_size";
    if (work && work->has(key)) work->fail(key, message, kind);
    if ((key == "streaming_chunk_size" || key == "activation_cache_filter") && memory && memory->has(key)) {
      memory->fail(key, message, kind);
    }
    if (work && kind == ErrorKind::invalid_input) work->fail("kind", message, kind);
    map.fail("workload", message, kind);
  }
  return plan;
}

PlanFile load_plan_file(const std::string& path) {
  const std::string text = detail::read_text_file(path, "a plan file", detail::kMaxYamlFileBytes);
  return parse_plan_yaml(text, path, std::filesystem::path(path).parent_path().string());
}

PlanOutcome evaluate_plan(const PlanFile& plan, const std::optional<GpuSpec>& device, std::optional<Bytes> budget) {
  DeviceChoice choice;
  choice.gpu = device;
  choice.budget = budget;
  const Plan bound = bind(plan.model.spec, plan.settings, choice);
  const PlanEstimate result = estimate(bound);
  PlanOutcome out;
  out.precision = bound.workload.weights.precision;
  out.precision_reason = bound.precision_note;
  for (const std::string& w : bound.warnings) out.warnings.push_back(for_plan_file(w));
  out.breakdown = result.breakdown;
  out.total = result.total;
  if (budget) {
    out.budget = budget;
    out.limit = budget_limit(*budget, plan.settings.threshold);
    out.verdict = verdict_of(out.total, *budget, plan.settings.threshold);
    out.fits = *out.verdict == Verdict::fits;
  }
  return out;
}

}  // namespace memplan
