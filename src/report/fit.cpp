// memplan fit: table and JSON.
#include "memplan/report/fit.hpp"

#include <fmt/format.h>

#include "memplan/core/text.hpp"

#include "common.hpp"

namespace memplan {

namespace {

using detail::ordered_json;

// The figures both formats print, from the plan and the search.
struct FitFigures {
  std::string vary;   // "batch", "seq", "attention_chunk", "streaming_chunk"
  std::string fixed;  // the knobs held: "seq_len 2048", "batch 1", "batch 1, seq_len 4096"
  std::string gpu;
  Bytes budget;
  Bytes limit;  // floor(budget x threshold)
  Bytes total;  // at result.value (0 when nothing fits)
  std::uint64_t given_value = 0;
};

FitFigures figures_of(const FitReport& r) {
  const Workload& w = r.plan.workload;
  FitFigures f;
  f.vary = to_string(r.result.knob);
  switch (r.result.knob) {
    case FitKnob::batch: f.fixed = "seq_len " + std::to_string(w.seq_len); break;
    case FitKnob::seq: f.fixed = "batch " + std::to_string(w.batch); break;
    case FitKnob::gpu_layers:
    case FitKnob::cpu_moe_layers: f.fixed = "-c " + std::to_string(w.seq_len); break;
    default: f.fixed = "batch " + std::to_string(w.batch) + ", seq_len " + std::to_string(w.seq_len); break;
  }
  // A GPU of the table by name; the host, or a bare capacity, as what the budget is.
  f.gpu = r.plan.device ? r.plan.device->name
          : r.plan.cpu
              ? "cpu"
              : fixed_text(static_cast<double>(r.plan.budget.value_or(Bytes(0)).count()) / (1ULL << 30), 2) + "GiB GPU";
  f.budget = r.plan.budget.value_or(Bytes(0));
  f.limit = r.limit.value_or(budget_limit(f.budget, r.plan.threshold));
  if (r.result.breakdown) f.total = r.result.breakdown->total();
  f.given_value = fit_knob_value(w, r.result.knob);
  if (r.result.knob == FitKnob::gpu_layers && r.plan.layout && r.plan.layout->llama_cpp) {
    f.given_value = std::min<std::uint64_t>(r.plan.layout->llama_cpp->gpu_layers, r.plan.model.n_layers + 1);
  }
  if (r.result.knob == FitKnob::cpu_moe_layers && r.plan.layout && r.plan.layout->llama_cpp) {
    f.given_value = std::min<std::uint64_t>(r.plan.layout->llama_cpp->n_cpu_moe, r.plan.model.n_layers);
  }
  return f;
}

void table(const FitReport& report, const PrintOptions& options, std::ostream& out) {
  const FitResult& r = report.result;
  const FitFigures f = figures_of(report);
  const Units u = options.units;
  const std::string on = report.plan.cpu       ? "the CPU (" + format_bytes(f.budget, u) + " of RAM)"
                         : !report.plan.device ? "a budget of " + format_bytes(f.budget, u)  // --gpu 24GiB
                                               : f.gpu;
  const bool fewest = r.knob == FitKnob::cpu_moe_layers;
  // A checkpoint's own bytes (a .gguf's tensor types) are not the resolver's precision.
  const std::string precision = report.plan.model.stored_weights.empty()
                                    ? to_string(report.plan.workload.weights.precision)
                                    : std::string("weights as stored");
  out << fmt::format("fit        {} {} ({}) on {}: {} {} with {}\n", report.plan.model.name,
                     to_string(report.plan.workload.kind), precision, on, fewest ? "smallest" : "largest", f.vary,
                     f.fixed);
  if (report.limit_rule.empty()) {
    out << fmt::format("limit      {} of {} ({:g}%)\n", format_bytes(f.limit, u), format_bytes(f.budget, u),
                       report.plan.threshold * 100.0);
  } else {
    out << fmt::format("limit      {} of {} ({})\n", format_bytes(f.limit, u), format_bytes(f.budget, u),
                       report.limit_rule);
  }
  const std::string next = r.next_total ? format_bytes(*r.next_total, u) : std::string("more than 64 bits of bytes");
  if (!r.breakdown) {
    out << fmt::format("result     nothing fits: {} {} needs {}\n", f.vary,
                       r.knob == FitKnob::gpu_layers ? 0
                       : fewest                      ? r.cap
                                                     : 1,
                       next);
    for (const std::string& w : report.plan.warnings) out << "warning: " << w << '\n';
    return;
  }
  out << fmt::format("result     {} {} fits: {}\n", f.vary, r.value, format_bytes(f.total, u));
  if (r.next_total || r.next_overflows) {
    out << fmt::format("next       {} {} does not: {}\n", f.vary, r.next_value(), next);
    if (!r.binding.empty()) {
      out << fmt::format("binds      {} ({} at {} {}, the component that grows the most)\n", r.binding,
                         format_bytes(r.binding_bytes, u), f.vary, r.next_value());
    }
  } else if (fewest) {
    out << fmt::format("note       {} 0 fits: every expert on the GPU\n", f.vary);
  } else {
    out << fmt::format("note       {} {} is the search's upper end ({})\n", f.vary, r.cap,
                       r.knob == FitKnob::batch        ? "2^24 sequences"
                       : r.knob == FitKnob::seq        ? "the model's context"
                       : r.knob == FitKnob::gpu_layers ? "every layer and the output layer"
                                                       : "the sequence length: a longer chunk holds no more");
  }
  if (!report.option.empty()) out << fmt::format("option     {} {}\n", report.option, r.value);
  if (report.given) {
    out << fmt::format("given      {} {}: {}\n", f.vary, f.given_value,
                       *report.given == Verdict::fits              ? "fits"
                       : *report.given == Verdict::above_threshold ? "fits, but above the threshold"
                                                                   : "does not fit");
  }
  // The plan's warnings (a quantisation the import could not price, a precision overriding it).
  for (const std::string& w : report.plan.warnings) out << "warning: " << w << '\n';
}

void json(const FitReport& report, std::ostream& out) {
  const FitResult& r = report.result;
  const FitFigures f = figures_of(report);
  ordered_json j;
  j["schema_version"] = json_schema_version;
  j["model"] = report.plan.model.name;
  j["workload"] = to_string(report.plan.workload.kind);
  j["gpu"] = f.gpu;
  j["precision"] = to_string(report.plan.workload.weights.precision);
  j["vary"] = f.vary;
  if (!report.option.empty()) j["option"] = report.option;
  j["fixed"] = f.fixed;
  j["value"] = r.value;
  if (report.given) j["given"] = {{"value", f.given_value}, {"verdict", to_string(*report.given)}};
  j["cap"] = r.cap;
  j["threshold"] = report.plan.threshold;
  j["budget_bytes"] = f.budget.count();
  j["limit_bytes"] = f.limit.count();
  if (!report.limit_rule.empty()) j["limit_rule"] = report.limit_rule;
  if (r.breakdown) j["total_bytes"] = f.total.count();
  if (r.next_total) j["next_total_bytes"] = r.next_total->count();
  if (r.next_overflows) j["next_overflows"] = true;
  if (!r.binding.empty()) j["binding"] = {{"name", r.binding}, {"bytes", r.binding_bytes.count()}};
  detail::emit(j, out);
}

}  // namespace

void print(const FitReport& report, const PrintOptions& options, std::ostream& out) {
  require_format<FitReport>(options.format);
  if (options.format == OutputFormat::json) return json(report, out);
  table(report, options, out);
}

}  // namespace memplan
