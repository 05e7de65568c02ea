// memplan sweep and memplan recommend (issue 7): table, JSON and CSV printers.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "printers.hpp"

namespace memplan::detail {

namespace {

using nlohmann::ordered_json;

std::string plural(std::size_t n, const char* word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

// "yes, 1.20 GiB left" / "NO, 3.40 GiB over".
std::string fit_text(Bytes total, Bytes limit, bool fits, Units u) {
  return fits ? fmt::format("yes, {} left", format_bytes(Bytes(limit.count() - total.count()), u))
              : fmt::format("NO, {} over", format_bytes(Bytes(total.count() - limit.count()), u));
}

// Adds headroom_bytes (fits) or over_bytes (does not) to `j`: both non-negative and exact.
void headroom_json(ordered_json& j, Bytes total, Bytes limit) {
  if (total <= limit) {
    j["headroom_bytes"] = limit.count() - total.count();
  } else {
    j["over_bytes"] = total.count() - limit.count();
  }
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

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string point_label(const SweepReportRow& row) {
  return fmt::format("{} {} {} batch {} seq {}", row.model, row.workload, row.precision, row.batch, row.seq_len);
}

// The reports that are not grids of rows refuse csv where every refusal is made.
[[noreturn]] void csv_not_available() {
  require_format(OutputFormat::csv, /*csv=*/false);
  throw Error(ErrorKind::internal, "require_format accepted csv for a report without it");
}

}  // namespace

// ---------------------------------------------------------------- sweep

void TablePrinter::sweep(const SweepReport& r, std::ostream& out) const {
  const Units u = options_.units;
  out << fmt::format("sweep      {} x {} x {} x {} x {} = {}\n", plural(r.models, "model"),
                     plural(r.workloads, "workload"), plural(r.precisions, "precision"), plural(r.batches, "batch size"),
                     plural(r.seqs, "sequence length"), plural(r.rows.size(), "plan"));
  if (r.device && r.limit) {
    out << fmt::format("device     {} ({}): limit {} = {:g}% of {}\n", r.device->name, r.device->display,
                       format_bytes(*r.limit, u), r.threshold * 100.0, format_bytes(r.device->memory, u));
  }
  out << '\n';

  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> header = {"model", "workload", "precision", "batch", "seq", "total", "allocated", "largest part"};
  if (r.limit) header.push_back("fits");
  if (r.smallest_gpu) header.push_back(fmt::format("smallest GPU ({:g}%)", r.threshold * 100.0));
  const auto smallest = [&](const SweepReportRow& row) {
    if (!row.total) return std::string("-");
    if (!row.smallest_gpu) return std::string("none");
    return fmt::format("{} ({}{})", row.smallest_gpu->name, format_bytes(row.smallest_gpu->memory, u),
                       row.smallest_gpu_precision.empty() ? "" : ", in " + row.smallest_gpu_precision);
  };
  for (const SweepReportRow& row : r.rows) {
    std::vector<std::string> c = {row.model, row.workload, row.precision, std::to_string(row.batch),
                                  std::to_string(row.seq_len)};
    if (row.total) {
      c.push_back(format_bytes(*row.total, u));
      c.push_back(format_bytes(row.allocated, u));
      c.push_back(row.largest + " " + format_bytes(row.largest_bytes, u));
      if (r.limit) {
        c.push_back(row.verdict == Verdict::above_threshold
                        ? fmt::format("above the limit by {}; within the GPU", format_bytes(Bytes(row.total->count() - r.limit->count()), u))
                        : fit_text(*row.total, *r.limit, *row.fits, u));
      }
    } else {
      c.insert(c.end(), {"-", "-", "(no estimate: see below)"});
      if (r.limit) c.push_back("-");
    }
    if (r.smallest_gpu) c.push_back(smallest(row));
    cells.push_back(std::move(c));
  }
  std::vector<std::size_t> width(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& c : cells) {
    for (std::size_t i = 0; i < c.size(); ++i) width[i] = std::max(width[i], c[i].size());
  }
  // Numbers right-aligned (batch, seq, total, allocated), words left-aligned.
  const auto right = [](std::size_t i) { return i >= 3 && i <= 6; };
  const auto line = [&](const std::vector<std::string>& c) {
    std::string text;
    for (std::size_t i = 0; i < c.size(); ++i) {
      text += (i ? "  " : "") + (right(i) ? fmt::format("{:>{}}", c[i], width[i])
                                          : i + 1 == c.size() ? c[i] : fmt::format("{:<{}}", c[i], width[i]));
    }
    out << text << '\n';
  };
  line(header);
  for (const auto& c : cells) line(c);

  std::vector<std::string> notes = r.notes;
  for (const SweepReportRow& row : r.rows) {
    if (!row.error.empty()) notes.push_back(point_label(row) + ": " + row.error);
    for (const std::string& n : row.notes) notes.push_back(point_label(row) + ": " + n);
  }
  if (!notes.empty()) out << '\n';
  for (const std::string& n : notes) out << "note: " << n << '\n';
  out << (u == Units::iec ? "\nsizes in IEC units (1 GiB = 1024^3 bytes; `units` si for GB)"
                          : "\nsizes in SI units (1 GB = 1000^3 bytes; `units` iec for GiB)")
      << "; allocated: the tensors, without CUDA context and allocator overhead; `format` csv or json: exact bytes\n";
}

void JsonPrinter::sweep(const SweepReport& r, std::ostream& out) const {
  ordered_json j;
  j["schema_version"] = json_schema_version;
  if (r.device) j["device"] = {{"name", r.device->name}, {"memory_bytes", r.device->memory.count()}};
  if (r.limit) {
    j["threshold"] = r.threshold;
    j["limit_bytes"] = r.limit->count();
  }
  ordered_json rows = ordered_json::array();
  for (const SweepReportRow& row : r.rows) {
    ordered_json x;
    x["model"] = row.model;
    x["workload"] = row.workload;
    x["precision"] = row.precision;
    x["batch_size"] = row.batch;
    x["seq_len"] = row.seq_len;
    if (row.total) {
      x["total_bytes"] = row.total->count();
      x["allocated_bytes"] = row.allocated.count();
      x["largest"] = {{"name", row.largest}, {"bytes", row.largest_bytes.count()}};
      if (row.fits) {
        if (row.verdict) x["verdict"] = to_string(*row.verdict);
        x["fits"] = *row.fits;
        headroom_json(x, *row.total, *r.limit);
      }
      if (r.smallest_gpu) {
        x["smallest_gpu"] = row.smallest_gpu ? ordered_json{{"name", row.smallest_gpu->name},
                                                            {"memory_bytes", row.smallest_gpu->memory.count()},
                                                            {"precision", row.smallest_gpu_precision.empty()
                                                                              ? row.precision
                                                                              : row.smallest_gpu_precision}}
                                             : ordered_json();
      }
    } else {
      x["error"] = row.error;
    }
    if (!row.notes.empty()) x["notes"] = row.notes;
    rows.push_back(x);
  }
  j["rows"] = rows;
  j["notes"] = r.notes;
  out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

void CsvPrinter::sweep(const SweepReport& r, std::ostream& out) const {
  out << "model,workload,precision,batch,seq,total_bytes,allocated_bytes,largest_component,largest_bytes,limit_bytes,"
         "fits,headroom_bytes,over_bytes,smallest_gpu,smallest_gpu_memory_bytes,error\n";
  for (const SweepReportRow& row : r.rows) {
    std::vector<std::string> c = {csv_field(row.model), row.workload, row.precision, std::to_string(row.batch),
                                  std::to_string(row.seq_len)};
    if (row.total) {
      c.insert(c.end(), {std::to_string(row.total->count()), std::to_string(row.allocated.count()), row.largest,
                         std::to_string(row.largest_bytes.count())});
    } else {
      c.insert(c.end(), {"", "", "", ""});
    }
    if (r.limit && row.total) {
      const bool fits = *row.total <= *r.limit;
      c.push_back(std::to_string(r.limit->count()));
      c.push_back(fits ? "true" : "false");
      c.push_back(fits ? std::to_string(r.limit->count() - row.total->count()) : "");
      c.push_back(fits ? "" : std::to_string(row.total->count() - r.limit->count()));
    } else {
      c.insert(c.end(), {r.limit ? std::to_string(r.limit->count()) : "", "", "", ""});
    }
    c.push_back(row.smallest_gpu ? csv_field(row.smallest_gpu->name) : "");
    c.push_back(row.smallest_gpu ? std::to_string(row.smallest_gpu->memory.count()) : "");
    c.push_back(csv_field(row.error));
    std::string text;
    for (std::size_t i = 0; i < c.size(); ++i) text += (i ? "," : "") + c[i];
    out << text << '\n';
  }
}

// ---------------------------------------------------------------- recommend

void TablePrinter::recommend(const RecommendReport& r, std::ostream& out) const {
  const Units u = options_.units;
  const std::string shape = r.batch == 0 ? std::string()
                            : fmt::format(": batch {} x {} tokens{}", r.batch, r.seq_len,
                                          r.new_tokens ? fmt::format(" + {} generated", r.new_tokens) : "");
  out << fmt::format("plan       {} {}{}, {} on {}\n", r.model, r.workload_kind, shape, r.precision, r.gpu);
  out << fmt::format("memory     {} against a limit of {} ({:g}% of {}): {}\n", format_bytes(r.total, u),
                     format_bytes(r.limit, u), r.threshold * 100.0, format_bytes(r.gpu_memory, u),
                     r.verdict == Verdict::fits
                         ? fmt::format("fits, {} left", format_bytes(Bytes(r.limit.count() - r.total.count()), u))
                     : r.verdict == Verdict::above_threshold
                         ? fmt::format("fits, but above the threshold: {} over the limit, {} under the GPU's memory",
                                       format_bytes(Bytes(r.total.count() - r.limit.count()), u),
                                       format_bytes(Bytes(r.gpu_memory.count() - r.total.count()), u))
                         : fmt::format("DOES NOT FIT, {} over", format_bytes(Bytes(r.total.count() - r.limit.count()), u)));

  if (r.fits) {
    out << "\nnothing to change: the plan fits as given";
    if (!r.mitigations.empty()) {
      out << fmt::format(" ({} would save memory; `format` json lists them)", plural(r.mitigations.size(), "change"));
    }
    out << '\n';
  } else if (r.mitigations.empty()) {
    out << "\nno change memplan models saves memory for this workload\n";
  } else {
    out << "\nchanges that save memory, most first (each total is the changed plan, estimated again):\n";
    std::vector<std::string> totals, saved, fits;
    std::size_t wt = 5, ws = 5, wf = 4;
    for (const MitigationRow& m : r.mitigations) {
      totals.push_back(format_bytes(m.total, u));
      saved.push_back(format_bytes(m.saved, u));
      fits.push_back(fit_text(m.total, r.limit, m.fits, u));
      wt = std::max(wt, totals.back().size());
      ws = std::max(ws, saved.back().size());
      wf = std::max(wf, fits.back().size());
    }
    out << fmt::format("{:>3}  {:>{}}  {:>{}}  {:<{}}  {}\n", "#", "total", wt, "saved", ws, "fits", wf, "change");
    for (std::size_t i = 0; i < r.mitigations.size(); ++i) {
      out << fmt::format("{:>3}  {:>{}}  {:>{}}  {:<{}}  {}\n", i + 1, totals[i], wt, saved[i], ws, fits[i], wf,
                         r.mitigations[i].change);
    }
    out << "\nhow, and what each costs:\n";
    for (std::size_t i = 0; i < r.mitigations.size(); ++i) {
      const MitigationRow& m = r.mitigations[i];
      out << fmt::format("{:>3}  {}\n", i + 1, join(m.command.empty() ? m.options : m.command));
      out << fmt::format("     cost: {}{}\n", m.tradeoff,
                         m.host.count() ? fmt::format("; host RAM {}", format_bytes(m.host, u)) : "");
    }
    if (r.combined) {
      const MitigationRow& c = *r.combined;
      out << fmt::format("\nno single change fits; together: {}\n", c.change);
      out << fmt::format("     {} (saves {}): {}\n", format_bytes(c.total, u), format_bytes(c.saved, u),
                         c.fits ? fmt::format("fits, {} left", format_bytes(Bytes(r.limit.count() - c.total.count()), u))
                                : fmt::format("still DOES NOT FIT, {} over", format_bytes(Bytes(c.total.count() - r.limit.count()), u)));
      out << fmt::format("     {}\n", join(c.command.empty() ? c.options : c.command));
    }
  }

  if (!r.fits) {
    out << fmt::format("\nmore GPUs  at least {} x {} by memory alone ({} / {})\n", r.min_devices, r.gpu,
                       format_bytes(r.total, u), format_bytes(r.limit, u));
  }
  for (const std::string& n : r.notes) out << "note: " << n << '\n';

  std::vector<const GpuFitRow*> fitting;
  for (const GpuFitRow& g : r.gpus) {
    if (g.fits) fitting.push_back(&g);
  }
  out << fmt::format("\nsmallest GPUs that fit the plan as given ({:g}% of their memory):\n", r.threshold * 100.0);
  if (fitting.empty()) {
    out << "  none in the table (memplan gpus): see the changes above, or more GPUs\n";
  } else {
    std::size_t wn = 4;
    for (const GpuFitRow* g : fitting) wn = std::max(wn, g->name.size());
    for (std::size_t i = 0; i < fitting.size() && i < 3; ++i) {
      const GpuFitRow& g = *fitting[i];
      out << fmt::format("  {:<{}}  {:>10}  {:>10} in {:<9}  {} left\n", g.name, wn, format_bytes(g.memory, u),
                         format_bytes(*g.total, u), g.precision, format_bytes(Bytes(g.limit.count() - g.total->count()), u));
    }
    if (fitting.size() > 3) out << fmt::format("  ... and {} larger; `format` json lists every GPU\n", fitting.size() - 3);
  }
  out << (u == Units::iec ? "\nsizes in IEC units (1 GiB = 1024^3 bytes; `units` si for GB); `format` json: exact bytes\n"
                          : "\nsizes in SI units (1 GB = 1000^3 bytes); `format` json: exact bytes\n");
}

namespace {

ordered_json mitigation_json(const MitigationRow& m, Bytes limit) {
  ordered_json j;
  j["kind"] = m.kind;
  j["change"] = m.change;
  j["options"] = m.options;
  j["command"] = m.command;
  j["tradeoff"] = m.tradeoff;
  j["total_bytes"] = m.total.count();
  j["saved_bytes"] = m.saved.count();
  if (m.host.count()) j["host_bytes"] = m.host.count();
  j["fits"] = m.fits;
  headroom_json(j, m.total, limit);
  return j;
}

}  // namespace

void JsonPrinter::recommend(const RecommendReport& r, std::ostream& out) const {
  ordered_json j;
  j["schema_version"] = json_schema_version;
  j["model"] = r.model;
  j["workload"] = {{"kind", r.workload_kind}};
  if (r.batch > 0) {
    j["workload"]["batch_size"] = r.batch;
    j["workload"]["seq_len"] = r.seq_len;
  }
  if (r.new_tokens) j["workload"]["new_tokens"] = r.new_tokens;
  j["precision"] = r.precision;
  j["device"] = {{"name", r.gpu}, {"memory_bytes", r.gpu_memory.count()}};
  j["threshold"] = r.threshold;
  j["limit_bytes"] = r.limit.count();
  j["total_bytes"] = r.total.count();
  j["verdict"] = to_string(r.verdict);
  j["fits"] = r.fits;
  headroom_json(j, r.total, r.limit);
  ordered_json list = ordered_json::array();
  for (const MitigationRow& m : r.mitigations) list.push_back(mitigation_json(m, r.limit));
  j["mitigations"] = list;
  if (r.combined) j["combined"] = mitigation_json(*r.combined, r.limit);
  j["min_devices"] = r.min_devices;
  ordered_json gpus = ordered_json::array();
  ordered_json fitting = ordered_json::array();
  for (const GpuFitRow& g : r.gpus) {
    ordered_json x{{"name", g.name}, {"memory_bytes", g.memory.count()}, {"precision", g.precision}};
    x["limit_bytes"] = g.limit.count();
    x["total_bytes"] = g.total ? ordered_json(g.total->count()) : ordered_json();
    x["fits"] = g.fits;
    if (!g.warnings.empty()) x["warnings"] = g.warnings;
    gpus.push_back(x);
    if (g.fits) fitting.push_back(g.name);
  }
  j["gpus"] = gpus;
  j["gpus_that_fit"] = fitting;
  j["notes"] = r.notes;
  out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

// ---------------------------------------------------------------- csv: grids only

void CsvPrinter::estimate(const EstimateReport&, std::ostream&) const { csv_not_available(); }
void CsvPrinter::models(const std::vector<ModelRow>&, std::ostream&) const { csv_not_available(); }
void CsvPrinter::gpus(const std::vector<GpuSpec>&, std::ostream&) const { csv_not_available(); }
void CsvPrinter::resolve(const ResolveReport&, std::ostream&) const { csv_not_available(); }
void CsvPrinter::probe(const ProbeReport&, std::ostream&) const { csv_not_available(); }
void CsvPrinter::measurement(const MeasureReport& r, std::ostream& out) const {
  out << "kernel,device,dtype,variant," << r.size_label
      << ",shape,estimate_bytes,measured_bytes,ratio,seconds_best,seconds_median,note\n";
  for (const MeasureRow& row : r.rows) {
    const std::string ratio =
        row.measured && row.estimate.count() > 0
            ? fmt::format("{:.4f}", static_cast<double>(row.measured->count()) / static_cast<double>(row.estimate.count()))
            : "";
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", r.kernel, csv_field(r.device), r.dtype, row.variant,
                       row.size, csv_field(row.shape), row.estimate.count(),
                       row.measured ? std::to_string(row.measured->count()) : "", ratio,
                       row.measured ? fmt::format("{:.9g}", row.seconds_best) : "",
                       row.measured ? fmt::format("{:.9g}", row.seconds_median) : "", csv_field(row.note));
  }
}
void CsvPrinter::calibration(const CalibrationReport&, std::ostream&) const { csv_not_available(); }
void CsvPrinter::hooks(const HooksReport&, std::ostream&) const { csv_not_available(); }
void CsvPrinter::attention_table(const AttentionTableReport&, std::ostream&) const { csv_not_available(); }
void CsvPrinter::imported_model(const ImportReport&, std::ostream&) const { csv_not_available(); }
void CsvPrinter::checkpoint(const CheckpointReport&, std::ostream&) const { csv_not_available(); }
void CsvPrinter::check(const CheckReport&, std::ostream&) const { csv_not_available(); }
void CsvPrinter::fit(const FitReport&, std::ostream&) const { csv_not_available(); }
void CsvPrinter::budget_table(const BudgetTableReport&, std::ostream&) const { csv_not_available(); }
void CsvPrinter::recommend(const RecommendReport&, std::ostream&) const { csv_not_available(); }

}  // namespace memplan::detail
