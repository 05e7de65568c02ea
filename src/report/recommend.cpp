// memplan recommend: table and JSON.
#include "memplan/report/recommend.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common.hpp"

namespace memplan {

namespace {

using detail::ordered_json;

// The figures both formats print, from the plan.
struct PlanFigures {
  std::uint64_t batch = 0;  // 0 for the weights alone
  std::uint64_t seq_len = 0;
  std::string gpu;
  Bytes gpu_memory;
  Verdict verdict = Verdict::does_not_fit;
  std::vector<std::string> notes;  // the plan's warnings, and what recommend leaves to the layouts
};

PlanFigures figures_of(const RecommendReport& r) {
  const Workload& w = r.plan.workload;
  PlanFigures f;
  if (w.kind != WorkloadKind::weights) {  // the weights alone have no batch or sequence
    f.batch = w.batch;
    f.seq_len = w.seq_len;
  }
  if (r.plan.device) {
    f.gpu = r.plan.device->name;
    f.gpu_memory = usable_memory(*r.plan.device);
  }
  f.verdict = verdict_of(r.recommendation.total, r.plan.budget.value_or(f.gpu_memory), r.plan.threshold);
  f.notes = r.plan.warnings;
  if (!r.recommendation.fits) {
    f.notes.push_back(
        "per-device memory over several GPUs (tensor, pipeline, data parallel with ZeRO or FSDP, device_map) and "
        "offloading weights or optimizer states to the CPU are the multi-GPU layouts' to plan, not recommend's");
  }
  return f;
}

const ChangeCommand& command_of(const RecommendReport& r, std::size_t i) {
  static const ChangeCommand none;
  return i < r.commands.size() ? r.commands[i] : none;
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) {
    // Quote what a shell would split or expand.
    const bool plain = !w.empty() && w.find_first_of(" \t'\"*?{}[]$\\;&|<>()") == std::string::npos;
    out += (out.empty() ? "" : " ") + (plain ? w : "'" + w + "'");
  }
  return out;
}

// The command line of a change, or the options that make it when there is none.
std::string how(const ChangeCommand& c) { return join(c.command.empty() ? c.options : c.command); }

void table(const RecommendReport& r, const PrintOptions& options, std::ostream& out) {
  const Units u = options.units;
  const Recommendation& rec = r.recommendation;
  const PlanFigures f = figures_of(r);
  const Workload& w = r.plan.workload;
  const bool encoder_decoder = is_encoder_decoder(r.plan.model);
  const std::string shape = f.batch == 0 ? std::string()
                            : encoder_decoder
                                ? fmt::format(": batch {} x {} source positions -> {} target tokens", f.batch,
                                              f.seq_len, w.new_tokens ? w.new_tokens : w.target_len)
                                : fmt::format(": batch {} x {} tokens{}", f.batch, f.seq_len,
                                              w.new_tokens ? fmt::format(" + {} generated", w.new_tokens) : "");
  out << fmt::format("plan       {} {}{}, {} on {}\n", r.plan.model.name, to_string(w.kind), shape,
                     to_string(w.weights.precision), f.gpu);
  out << fmt::format("memory     {} against a limit of {} ({:g}% of {}): {}\n", format_bytes(rec.total, u),
                     format_bytes(rec.limit, u), r.plan.threshold * 100.0, format_bytes(f.gpu_memory, u),
                     f.verdict == Verdict::fits
                         ? fmt::format("fits, {} left", format_bytes(Bytes(rec.limit.count() - rec.total.count()), u))
                     : f.verdict == Verdict::above_threshold
                         ? fmt::format("fits, but above the threshold: {} over the limit, {} under the GPU's memory",
                                       format_bytes(Bytes(rec.total.count() - rec.limit.count()), u),
                                       format_bytes(Bytes(f.gpu_memory.count() - rec.total.count()), u))
                         : fmt::format("DOES NOT FIT, {} over",
                                       format_bytes(Bytes(rec.total.count() - rec.limit.count()), u)));

  if (rec.fits) {
    out << "\nnothing to change: the plan fits as given";
    if (!rec.mitigations.empty()) {
      out << fmt::format(" ({} would save memory; `format` json lists them)",
                         detail::plural(rec.mitigations.size(), "change"));
    }
    out << '\n';
  } else if (rec.mitigations.empty()) {
    out << "\nno change memplan models saves memory for this workload\n";
  } else {
    out << "\nchanges that save memory, most first (each total is the changed plan, estimated again):\n";
    std::vector<std::string> totals, saved, fits;
    std::size_t wt = 5, ws = 5, wf = 4;
    for (const Mitigation& m : rec.mitigations) {
      totals.push_back(format_bytes(m.total, u));
      saved.push_back(format_bytes(m.saved, u));
      fits.push_back(detail::fit_text(m.total, rec.limit, m.fits, u));
      wt = std::max(wt, totals.back().size());
      ws = std::max(ws, saved.back().size());
      wf = std::max(wf, fits.back().size());
    }
    out << fmt::format("{:>3}  {:>{}}  {:>{}}  {:<{}}  {}\n", "#", "total", wt, "saved", ws, "fits", wf, "change");
    for (std::size_t i = 0; i < rec.mitigations.size(); ++i) {
      out << fmt::format("{:>3}  {:>{}}  {:>{}}  {:<{}}  {}\n", i + 1, totals[i], wt, saved[i], ws, fits[i], wf,
                         rec.mitigations[i].change);
    }
    out << "\nhow, and what each costs:\n";
    for (std::size_t i = 0; i < rec.mitigations.size(); ++i) {
      const Mitigation& m = rec.mitigations[i];
      out << fmt::format("{:>3}  {}\n", i + 1, how(command_of(r, i)));
      out << fmt::format("     cost: {}{}\n", m.tradeoff,
                         m.host.count() ? fmt::format("; host RAM {}", format_bytes(m.host, u)) : "");
    }
    if (rec.combined) {
      const Mitigation& c = *rec.combined;
      out << fmt::format("\nno single change fits; together: {}\n", c.change);
      out << fmt::format("     {} (saves {}): {}\n", format_bytes(c.total, u), format_bytes(c.saved, u),
                         c.fits
                             ? fmt::format("fits, {} left", format_bytes(Bytes(rec.limit.count() - c.total.count()), u))
                             : fmt::format("still DOES NOT FIT, {} over",
                                           format_bytes(Bytes(c.total.count() - rec.limit.count()), u)));
      out << fmt::format("     {}\n", how(r.combined_command));
    }
  }

  if (!rec.fits) {
    out << fmt::format("\nmore GPUs  at least {} x {} by memory alone ({} / {})\n", rec.min_devices, f.gpu,
                       format_bytes(rec.total, u), format_bytes(rec.limit, u));
  }
  for (const std::string& n : f.notes) out << "note: " << n << '\n';

  std::vector<const GpuOption*> fitting;
  for (const GpuOption& g : r.gpus) {
    if (g.fits) fitting.push_back(&g);
  }
  out << fmt::format("\nsmallest GPUs that fit the plan as given ({:g}% of their memory):\n", r.plan.threshold * 100.0);
  if (fitting.empty()) {
    out << "  none in the table (memplan gpus): see the changes above, or more GPUs\n";
  } else {
    std::size_t wn = 4;
    for (const GpuOption* g : fitting) wn = std::max(wn, g->gpu.name.size());
    for (std::size_t i = 0; i < fitting.size() && i < 3; ++i) {
      const GpuOption& g = *fitting[i];
      out << fmt::format("  {:<{}}  {:>10}  {:>10} in {:<9}  {} left\n", g.gpu.name, wn,
                         format_bytes(usable_memory(g.gpu), u), format_bytes(*g.total, u), to_string(g.precision),
                         format_bytes(Bytes(g.limit.count() - g.total->count()), u));
    }
    if (fitting.size() > 3)
      out << fmt::format("  ... and {} larger; `format` json lists every GPU\n", fitting.size() - 3);
  }
  out << (u == Units::iec
              ? "\nsizes in IEC units (1 GiB = 1024^3 bytes; `units` si for GB); `format` json: exact bytes\n"
              : "\nsizes in SI units (1 GB = 1000^3 bytes); `format` json: exact bytes\n");
}

ordered_json mitigation_json(const Mitigation& m, const ChangeCommand& c, Bytes limit) {
  ordered_json j;
  j["kind"] = m.kind;
  j["change"] = m.change;
  j["options"] = c.options;
  j["command"] = c.command;
  j["tradeoff"] = m.tradeoff;
  j["total_bytes"] = m.total.count();
  j["saved_bytes"] = m.saved.count();
  if (m.host.count()) j["host_bytes"] = m.host.count();
  j["fits"] = m.fits;
  detail::headroom_json(j, m.total, limit);
  return j;
}

void json(const RecommendReport& r, std::ostream& out) {
  const Recommendation& rec = r.recommendation;
  const PlanFigures f = figures_of(r);
  const Workload& w = r.plan.workload;
  ordered_json j;
  j["schema_version"] = json_schema_version;
  j["model"] = r.plan.model.name;
  j["workload"] = {{"kind", to_string(w.kind)}};
  if (f.batch > 0) {
    j["workload"]["batch_size"] = f.batch;
    j["workload"]["seq_len"] = f.seq_len;
  }
  if (w.new_tokens) j["workload"]["new_tokens"] = w.new_tokens;
  j["precision"] = to_string(w.weights.precision);
  j["device"] = {{"name", f.gpu}, {"memory_bytes", f.gpu_memory.count()}};
  j["threshold"] = r.plan.threshold;
  j["limit_bytes"] = rec.limit.count();
  j["total_bytes"] = rec.total.count();
  j["verdict"] = to_string(f.verdict);
  j["fits"] = rec.fits;
  detail::headroom_json(j, rec.total, rec.limit);
  ordered_json list = ordered_json::array();
  for (std::size_t i = 0; i < rec.mitigations.size(); ++i) {
    list.push_back(mitigation_json(rec.mitigations[i], command_of(r, i), rec.limit));
  }
  j["mitigations"] = list;
  if (rec.combined) j["combined"] = mitigation_json(*rec.combined, r.combined_command, rec.limit);
  j["min_devices"] = rec.min_devices;
  ordered_json gpus = ordered_json::array();
  ordered_json fitting = ordered_json::array();
  for (const GpuOption& g : r.gpus) {
    ordered_json x{{"name", g.gpu.name},
                   {"memory_bytes", usable_memory(g.gpu).count()},
                   {"precision", to_string(g.precision)}};
    x["limit_bytes"] = g.limit.count();
    x["total_bytes"] = g.total ? ordered_json(g.total->count()) : ordered_json();
    x["fits"] = g.fits;
    if (!g.warnings.empty()) x["warnings"] = g.warnings;
    gpus.push_back(x);
    if (g.fits) fitting.push_back(g.gpu.name);
  }
  j["gpus"] = gpus;
  j["gpus_that_fit"] = fitting;
  j["notes"] = f.notes;
  detail::emit(j, out);
}

}  // namespace

void print(const RecommendReport& report, const PrintOptions& options, std::ostream& out) {
  require_format<RecommendReport>(options.format);
  if (options.format == OutputFormat::json) return json(report, out);
  table(report, options, out);
}

}  // namespace memplan
