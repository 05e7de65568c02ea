#include "memplan/frontend/requests.hpp"

#include <algorithm>
#include <map>

#include "memplan/core/error.hpp"
#include "memplan/estimators/activations.hpp"
#include "memplan/plan/fit.hpp"
#include "memplan/plan/recommend.hpp"
#include "memplan/plan/sweep.hpp"
#include "memplan/probe/probe.hpp"
#include "memplan/resolve/resolver.hpp"

namespace memplan {

namespace {

// Each value of an axis checked as the option table checks the option (`key`).
std::vector<std::uint64_t> axis_counts(const std::vector<std::string>& values, std::string_view key) {
  std::vector<std::uint64_t> out;
  for (const std::string& v : values) {
    PlanSettings scratch;
    set_option(scratch, *find_option(key), {v});
    out.push_back(key == "batch_size" ? scratch.workload.batch : scratch.workload.seq_len);
  }
  return out;
}

// The flags that make a change, as the command line writes them.
std::vector<std::string> flags_of(const std::vector<OptionSetting>& settings) {
  std::vector<std::string> out;
  for (const OptionSetting& c : settings) {
    const OptionDef& def = *find_option(c.key);
    if (def.kind != OptionKind::flag && c.value.empty()) continue;  // the change drops it
    out.push_back(flag_of(def));
    if (!c.value.empty()) out.push_back(c.value);
  }
  return out;
}

// sweep and recommend price one process on one GPU; a layout or another engine would be
// silently dropped, so it is refused, naming the option.
void refuse_layout(const Plan& plan, const PlanSettings& settings, const char* command) {
  if (!plan.layout) return;
  std::string key = "engine";
  for (const std::string& given : settings.given) {
    const OptionDef* o = find_option(given);
    if (o != nullptr && (o->group == "Multi-GPU layouts" || given == "engine")) {
      key = given;
      break;
    }
  }
  const std::string what = "`" + key + "`" + (key == "engine" ? " " + settings.layout.engine : std::string());
  throw_invalid_input(key,
                      std::string(command) + " plans one process on one GPU with PyTorch's rules; " + what +
                          (plan.layout->llama_cpp ? " is planned by estimate and fit" : " is planned by estimate"));
}

ProbeReport to_report(const ProbeResult& r, double warn_above) {
  ProbeReport report;
  report.status = to_string(r.status);
  report.reason = r.reason;
  report.driver_version = r.driver_version;
  report.cuda_version = r.cuda_version;
  for (const ProbedDevice& d : r.devices) {
    ProbeDeviceRow row;
    row.index = d.index;
    row.name = d.name;
    row.uuid = d.uuid;
    row.total_memory = d.total_memory;
    row.free_memory = d.free_memory;
    row.used_memory = d.used_memory;
    row.compute_capability = to_string(d.compute_capability);
    row.multiprocessors = d.multiprocessors;
    row.memory_bus_width_bits = d.memory_bus_width_bits;
    row.memory_clock_khz = d.memory_clock_khz;
    row.bandwidth_gbs = d.bandwidth_gbs;
    for (const GpuProcess& p : d.processes) row.processes.push_back({p.pid, p.name, p.type, p.used_memory});
    row.processes_known = d.processes_known;
    row.notes = d.notes;
    report.devices.push_back(std::move(row));
  }
  report.cpu_model = r.host.cpu_model;
  report.logical_cores = r.host.logical_cores;
  report.physical_cores = r.host.physical_cores;
  report.usable_cores = r.host.usable_cores;
  report.ram_total = r.host.ram_total;
  report.ram_available = r.host.ram_available;
  report.memory_limit = r.host.memory_limit;
  report.environment = to_string(r.environment.kind);
  report.environment_evidence = r.environment.evidence;
  report.environment_also = r.environment.also;
  report.environment_detail = r.environment.detail;
  for (const MemoryWarning& w : check_memory_threshold(r, warn_above)) report.warnings.push_back(w.message);
  report.notes = r.notes;
  return report;
}

}  // namespace

EstimateReport estimate_report(const ModelEntry& model, const PlanSettings& settings, const DeviceArgs& device) {
  Plan plan = bind(model.spec, with_engine_files(settings), choose_device(device, settings));
  PlanEstimate figures = estimate(plan);
  return EstimateReport{model.origin, std::move(plan), std::move(figures)};
}

FitReport fit_report(const ModelEntry& model, const PlanSettings& settings, const DeviceArgs& device,
                     std::string_view vary) {
  FitReport report;
  report.plan = bind(model.spec, with_engine_files(settings), choose_device(device, settings));
  // fit searches the context or the layers itself: llama-server's own context fit stays off.
  if (report.plan.layout && report.plan.layout->llama_cpp) report.plan.layout->llama_cpp->fit_context = false;
  const Plan& plan = report.plan;
  if (!plan.budget) {
    throw_invalid_input("cpu",
                        "fit needs a budget: the host's available RAM could not be read; give a size (`cpu` 64GiB)");
  }
  const FitKnob knob = choose_fit_knob(std::string(vary), plan.workload);
  const std::string key = knob == FitKnob::batch        ? "batch_size"
                          : knob == FitKnob::seq        ? "seq_len"
                          : knob == FitKnob::gpu_layers ? "ngl"
                                                        : to_string(knob);  // n_cpu_moe, the chunks
  if (const OptionDef* o = find_option(key)) report.option = flag_of(*o);
  if ((knob == FitKnob::gpu_layers || knob == FitKnob::cpu_moe_layers) && plan.cpu) {
    throw_invalid_input("vary",
                        knob == FitKnob::gpu_layers
                            ? "`vary` ngl offloads layers to a GPU; a plan for the CPU (`cpu`) has none: vary ctx"
                            : "`vary` n_cpu_moe keeps experts off a GPU; a plan for the CPU (`cpu`) has none: "
                              "vary ctx");
  }
  if (plan.layout && plan.layout->llama_cpp) {
    // llama.cpp's --fit: each GPU keeps a margin of 1 GiB free (--fit-target's default); on
    // the CPU the plan's threshold applies.
    constexpr std::uint64_t kFitTarget = 1024ULL * 1024 * 1024;
    const Bytes budget = plan.budget.value_or(Bytes(0));
    if (plan.cpu) {
      report.limit = budget_limit(budget, plan.threshold);
    } else {
      report.limit = Bytes(budget.count() > kFitTarget ? budget.count() - kFitTarget : 0);
      report.limit_rule = "llama.cpp's --fit margin of 1 GiB (--fit-target 1024)";
    }
    report.result = fit_llama_cpp(plan.model, plan.workload, *plan.layout, knob, *report.limit);
    report.given = estimate(plan).verdict;
    return report;
  }
  refuse_layout(plan, settings, "fit");
  report.result = fit_largest(plan.model, plan.workload, knob, budget_limit(*plan.budget, plan.threshold));
  report.given = estimate_totals(plan).verdict;
  return report;
}

RecommendReport recommend_report(const ModelEntry& model, const std::string& model_ref,
                                 const std::vector<GivenOption>& given, const DeviceArgs& device) {
  const PlanSettings settings = settings_from(given);
  RecommendReport report;
  const DeviceChoice choice = choose_device(device, settings);
  require_named_gpu(choice, "recommend");
  report.plan = bind(model.spec, settings, choice);
  refuse_layout(report.plan, settings, "recommend");
  const Plan& plan = report.plan;

  // The plan as `memplan estimate --gpu G` plans it: precision resolved for the GPU.
  RecommendRequest request;
  request.device = device_capability(*plan.device);
  request.policy = settings.policy;
  request.workload = plan.workload;
  request.limit = budget_limit(*plan.budget, plan.threshold);
  report.recommendation = recommend(plan.model, request);
  const auto command_of = [&](const Mitigation& m) {
    return ChangeCommand{flags_of(m.settings), estimate_command(model_ref, device, given, m.settings)};
  };
  for (const Mitigation& m : report.recommendation.mitigations) report.commands.push_back(command_of(m));
  if (report.recommendation.combined) report.combined_command = command_of(*report.recommendation.combined);
  report.gpus = gpu_options(plan.model, plan.workload, settings.precision, settings.policy, known_gpus(),
                            plan.threshold);
  return report;
}

HooksReport hooks_report(const ModelEntry& model, const HooksRequest& request) {
  ActivationCacheOptions o;
  o.batch = request.batch;
  o.seq = request.seq ? request.seq : std::min<std::uint64_t>(2048, model.spec.max_seq_len);
  o.precision = parse_precision(request.precision);
  o.filter = request.filter;
  if (!request.layers.empty()) o.layers = parse_layer_selection(request.layers);
  o.pos_slice = request.pos_slice;
  o.remove_batch_dim = request.remove_batch_dim;
  const Breakdown selected = estimate_activation_cache(model.spec, o);

  HooksReport r;
  r.model = model.spec.name;
  r.batch = o.batch;
  r.seq_len = o.seq;
  r.dtype = to_string(o.precision);
  std::map<std::string, std::size_t> row_of_kind;
  for (const Hook& h : selected_hooks(model.spec, o)) {
    const Bytes bytes = hook_bytes(h, o);
    const std::string key = request.all ? h.name : h.kind;
    auto [it, fresh] = row_of_kind.emplace(key, r.rows.size());
    if (fresh) r.rows.push_back({key, 0, hook_shape_text(h, o), bytes, Bytes(0)});
    HookRow& row = r.rows[it->second];
    ++row.count;
    row.bytes = row.bytes.plus(bytes, "hook bytes");
    ++r.selected_hooks;
  }
  r.selected_bytes = selected.total();
  r.all_hooks = model_hooks(model.spec, o.batch, o.seq).size();
  r.all_bytes = selected.alternatives.empty() ? r.selected_bytes : selected.alternatives.front().item.bytes;
  r.note = transformer_lens_gap(model.spec);
  return r;
}

SweepReport sweep_report(const SweepRequest& request, const PlanSettings& settings, const std::function<void()>& step) {
  std::vector<ModelSpec> models;
  SweepReport report;
  for (const ModelEntry& entry : request.models) {
    models.push_back(entry.spec);
    report.models.push_back(models.back().name);
    for (const std::string& w : models.back().import_warnings) report.notes.push_back(models.back().name + ": " + w);
  }

  SweepAxes axes;
  axes.workloads.clear();
  for (const std::string& w : request.workloads) axes.workloads.push_back(parse_workload_kind(w));
  axes.batches = axis_counts(request.batches, "batch_size");
  axes.seqs = axis_counts(request.seqs, "seq_len");
  if (axes.seqs.empty()) {
    std::uint64_t shortest = 2048;
    for (const ModelSpec& m : models) shortest = std::min(shortest, m.max_seq_len);
    // An audio encoder (Whisper) reads one fixed window: alone, it sets the length.
    if (models.size() == 1 && models.front().encoder.mel_bins != 0) shortest = models.front().encoder.n_positions;
    axes.seqs = {shortest};
  }

  WorkloadMask kinds = 0;
  for (const WorkloadKind kind : axes.workloads) kinds |= workload_bit(kind);
  PlanSettings base_settings = settings;
  base_settings.workload.kind = axes.workloads.front();
  DeviceArgs device;
  device.gpu = request.gpu;
  DeviceChoice choice = choose_device(device, base_settings);
  require_named_gpu(choice, "sweep");
  for (const WorkloadKind kind : axes.workloads) {
    PlanSettings s = base_settings;
    s.workload.kind = kind;
    if (!choice.largest) choice.largest = choose_device(DeviceArgs{}, s).largest;
  }
  const Plan plan = bind(models.front(), base_settings, choice, kinds);
  refuse_layout(plan, base_settings, "sweep");
  const std::optional<GpuSpec>& gpu = plan.device;
  const std::string& policy = settings.policy;
  // Each requested precision resolved once: for the GPU, or auto as bf16 without one.
  axes.precisions.clear();
  for (const std::string& p : request.precisions) {
    axes.named.push_back(p != "auto");
    if (gpu) {
      ResolveRequest q;
      q.precision = p;
      q.policy = policy;
      q.device = device_capability(*gpu);
      const Resolution res = resolve_precision(q);
      axes.precisions.push_back(res.precision);
      if (p == "auto")
        report.notes.push_back("auto on " + gpu->name + ": " + to_string(res.precision) + " (" + res.reason + ")");
      for (const std::string& w : res.warnings) report.notes.push_back(w);
    } else if (p == "auto") {
      axes.precisions.push_back(precisions::bf16);
      report.notes.push_back("auto with no `gpu`: bf16 (assumes compute capability 8.0+)");
    } else {
      axes.precisions.push_back(parse_precision(p));
    }
  }

  Workload base = plan.workload;
  base.analysis.largest_device = choice.largest;
  report.axes = axes;
  report.device = gpu;
  report.threshold = plan.threshold;
  report.smallest_gpu = request.smallest_gpu;
  const std::vector<GpuSpec> table = request.smallest_gpu ? known_gpus() : std::vector<GpuSpec>{};
  bool any = false;
  std::vector<SweepRow> rows = run_sweep(models, base, axes, plan.budget, plan.threshold, [&] {
    if (step) step();
  });
  for (SweepRow& row : rows) {
    SweepReportRow out;
    if (request.smallest_gpu && row.total) {
      // The point's precision on each GPU of the table (bf16 runs as fp16 where bf16 does not).
      const Workload w = workload_at(base, row.point, axes);
      for (GpuOption& g :
           gpu_options(models[row.point.model], w, to_string(row.point.precision), policy, table, plan.threshold)) {
        if (g.fits) {
          out.smallest_gpu = std::move(g);
          break;
        }
      }
    }
    any = any || row.total.has_value();
    out.row = std::move(row);
    report.rows.push_back(std::move(out));
  }
  if (!any)
    throw Error(ErrorKind::invalid_input, "no point of the sweep can be estimated: " + report.rows.front().row.error);
  return report;
}

ModelsReport models_report() {
  ModelsReport report;
  for (const std::string& name : builtin_model_names()) report.models.push_back(load_builtin_model(name));
  return report;
}

GpusReport gpus_report() { return GpusReport{known_gpus()}; }

ProbeReport probe_report(double warn_above) { return to_report(probe(), warn_above); }

}  // namespace memplan
