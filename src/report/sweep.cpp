// memplan sweep: table, JSON and CSV.
#include "memplan/report/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common.hpp"
#include "memplan/core/error.hpp"
#include "memplan/plan/fit.hpp"

namespace memplan {

namespace {

using detail::ordered_json;

const std::string& model_of(const SweepReport& r, const SweepRow& row) {
  if (row.point.model >= r.models.size()) {
    throw Error(ErrorKind::internal, "a sweep row names model " + std::to_string(row.point.model) + " of " +
                                         std::to_string(r.models.size()));
  }
  return r.models[row.point.model];
}

// floor(device memory x threshold), with a device.
std::optional<Bytes> limit_of(const SweepReport& r) {
  if (!r.device) return std::nullopt;
  return budget_limit(usable_memory(*r.device), r.threshold);
}

std::string point_label(const SweepReport& r, const SweepRow& row) {
  return fmt::format("{} {} {} batch {} seq {}", model_of(r, row), to_string(row.point.workload),
                     to_string(row.point.precision), row.point.batch, row.point.seq);
}

void table(const SweepReport& r, const PrintOptions& options, std::ostream& out) {
  using detail::plural;
  const Units u = options.units;
  const std::optional<Bytes> limit = limit_of(r);
  out << fmt::format("sweep      {} x {} x {} x {} x {} = {}\n", plural(r.models.size(), "model"),
                     plural(r.axes.workloads.size(), "workload"), plural(r.axes.precisions.size(), "precision"),
                     plural(r.axes.batches.size(), "batch size"), plural(r.axes.seqs.size(), "sequence length"),
                     plural(r.rows.size(), "plan"));
  if (r.device && limit) {
    out << fmt::format("device     {} ({}): limit {} = {:g}% of {}\n", r.device->name, r.device->display,
                       format_bytes(*limit, u), r.threshold * 100.0, format_bytes(usable_memory(*r.device), u));
  }
  out << '\n';

  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> header = {"model", "workload", "precision", "batch",
                                     "seq",   "total",    "allocated", "largest part"};
  if (limit) header.push_back("fits");
  if (r.smallest_gpu) header.push_back(fmt::format("smallest GPU ({:g}%)", r.threshold * 100.0));
  const auto smallest = [&](const SweepReportRow& x) {
    if (!x.row.total) return std::string("-");
    if (!x.smallest_gpu) return std::string("none");
    const GpuOption& g = *x.smallest_gpu;
    return fmt::format("{} ({}{})", g.gpu.name, format_bytes(usable_memory(g.gpu), u),
                       g.precision == x.row.point.precision ? "" : ", in " + to_string(g.precision));
  };
  for (const SweepReportRow& x : r.rows) {
    const SweepRow& row = x.row;
    std::vector<std::string> c = {model_of(r, row), to_string(row.point.workload), to_string(row.point.precision),
                                  std::to_string(row.point.batch), std::to_string(row.point.seq)};
    if (row.total) {
      c.push_back(format_bytes(*row.total, u));
      c.push_back(format_bytes(row.allocated, u));
      c.push_back(row.largest + " " + format_bytes(row.largest_bytes, u));
      if (limit) {
        c.push_back(row.verdict == Verdict::above_threshold
                        ? fmt::format("above the limit by {}; within the GPU",
                                      format_bytes(Bytes(row.total->count() - limit->count()), u))
                        : detail::fit_text(*row.total, *limit, *row.fits, u));
      }
    } else {
      c.insert(c.end(), {"-", "-", "(no estimate: see below)"});
      if (limit) c.push_back("-");
    }
    if (r.smallest_gpu) c.push_back(smallest(x));
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
      text += (i ? "  " : "") + (right(i)            ? fmt::format("{:>{}}", c[i], width[i])
                                 : i + 1 == c.size() ? c[i]
                                                     : fmt::format("{:<{}}", c[i], width[i]));
    }
    out << text << '\n';
  };
  line(header);
  for (const auto& c : cells) line(c);

  std::vector<std::string> notes = r.notes;
  for (const SweepReportRow& x : r.rows) {
    if (!x.row.error.empty()) notes.push_back(point_label(r, x.row) + ": " + x.row.error);
    for (const std::string& n : x.row.notes) notes.push_back(point_label(r, x.row) + ": " + n);
  }
  if (!notes.empty()) out << '\n';
  for (const std::string& n : notes) out << "note: " << n << '\n';
  out << (u == Units::iec ? "\nsizes in IEC units (1 GiB = 1024^3 bytes; `units` si for GB)"
                          : "\nsizes in SI units (1 GB = 1000^3 bytes; `units` iec for GiB)")
      << "; allocated: the tensors, without CUDA context and allocator overhead; `format` csv or json: exact bytes\n";
}

void json(const SweepReport& r, std::ostream& out) {
  const std::optional<Bytes> limit = limit_of(r);
  ordered_json j;
  j["schema_version"] = json_schema_version;
  if (r.device) j["device"] = {{"name", r.device->name}, {"memory_bytes", usable_memory(*r.device).count()}};
  if (limit) {
    j["threshold"] = r.threshold;
    j["limit_bytes"] = limit->count();
  }
  ordered_json rows = ordered_json::array();
  for (const SweepReportRow& x : r.rows) {
    const SweepRow& row = x.row;
    ordered_json o;
    o["model"] = model_of(r, row);
    o["workload"] = to_string(row.point.workload);
    o["precision"] = to_string(row.point.precision);
    o["batch_size"] = row.point.batch;
    o["seq_len"] = row.point.seq;
    if (row.total) {
      o["total_bytes"] = row.total->count();
      o["allocated_bytes"] = row.allocated.count();
      o["largest"] = {{"name", row.largest}, {"bytes", row.largest_bytes.count()}};
      if (row.fits) {
        if (row.verdict) o["verdict"] = to_string(*row.verdict);
        o["fits"] = *row.fits;
        detail::headroom_json(o, *row.total, limit.value_or(Bytes(0)));
      }
      if (r.smallest_gpu) {
        o["smallest_gpu"] = x.smallest_gpu ? ordered_json{{"name", x.smallest_gpu->gpu.name},
                                                          {"memory_bytes", usable_memory(x.smallest_gpu->gpu).count()},
                                                          {"precision", to_string(x.smallest_gpu->precision)}}
                                           : ordered_json();
      }
    } else {
      o["error"] = row.error;
    }
    if (!row.notes.empty()) o["notes"] = row.notes;
    rows.push_back(o);
  }
  j["rows"] = rows;
  j["notes"] = r.notes;
  detail::emit(j, out);
}

void csv(const SweepReport& r, std::ostream& out) {
  using detail::csv_field;
  const std::optional<Bytes> limit = limit_of(r);
  out << "model,workload,precision,batch,seq,total_bytes,allocated_bytes,largest_component,largest_bytes,limit_bytes,"
         "fits,headroom_bytes,over_bytes,smallest_gpu,smallest_gpu_memory_bytes,error\n";
  for (const SweepReportRow& x : r.rows) {
    const SweepRow& row = x.row;
    std::vector<std::string> c = {csv_field(model_of(r, row)), to_string(row.point.workload),
                                  to_string(row.point.precision), std::to_string(row.point.batch),
                                  std::to_string(row.point.seq)};
    if (row.total) {
      c.insert(c.end(), {std::to_string(row.total->count()), std::to_string(row.allocated.count()), row.largest,
                         std::to_string(row.largest_bytes.count())});
    } else {
      c.insert(c.end(), {"", "", "", ""});
    }
    if (limit && row.total) {
      const bool fits = *row.total <= *limit;
      c.push_back(std::to_string(limit->count()));
      c.push_back(fits ? "true" : "false");
      c.push_back(fits ? std::to_string(limit->count() - row.total->count()) : "");
      c.push_back(fits ? "" : std::to_string(row.total->count() - limit->count()));
    } else {
      c.insert(c.end(), {limit ? std::to_string(limit->count()) : "", "", "", ""});
    }
    c.push_back(x.smallest_gpu ? csv_field(x.smallest_gpu->gpu.name) : "");
    c.push_back(x.smallest_gpu ? std::to_string(usable_memory(x.smallest_gpu->gpu).count()) : "");
    c.push_back(csv_field(row.error));
    std::string text;
    for (std::size_t i = 0; i < c.size(); ++i) text += (i ? "," : "") + c[i];
    out << text << '\n';
  }
}

}  // namespace

void print(const SweepReport& report, const PrintOptions& options, std::ostream& out) {
  require_format<SweepReport>(options.format);
  switch (options.format) {
    case OutputFormat::table: return table(report, options, out);
    case OutputFormat::json: return json(report, out);
    case OutputFormat::csv: return csv(report, out);
  }
}

}  // namespace memplan
