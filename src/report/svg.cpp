// memplan sweep --svg and memplan measure --svg: self-contained SVG charts (no scripts, no
// fonts beyond the generic sans-serif, no external references).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "memplan/core/error.hpp"
#include "memplan/report/printer.hpp"

namespace memplan {

namespace {

constexpr std::array<const char*, 10> kColours = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string xml(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// "16.00 GiB" -> "16 GiB" for axis labels.
std::string tick_label(Bytes b, Units u) {
  std::string s = format_bytes(b, u);
  const std::size_t dot = s.find(".00 ");
  if (dot != std::string::npos) s.erase(dot, 3);
  return s;
}

}  // namespace

std::string sweep_svg(const SweepReport& r, Units units) {
  // x: sequence length when several are swept, else the batch.
  const bool by_seq = r.seqs > 1 || r.batches <= 1;
  const auto x_of = [&](const SweepReportRow& row) { return by_seq ? row.seq_len : row.batch; };

  // One series per model x workload x precision x the other axis' value.
  struct Series {
    std::string label;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> points;  // (x, bytes)
  };
  std::map<std::tuple<std::string, std::string, std::string, std::uint64_t>, std::size_t> index;
  std::vector<Series> series;
  std::set<std::uint64_t> xs;
  double lo = 0, hi = 0;
  const auto extend = [&](double v) {
    lo = lo == 0 ? v : std::min(lo, v);
    hi = std::max(hi, v);
  };
  for (const SweepReportRow& row : r.rows) {
    if (!row.total || row.total->count() == 0) continue;
    const std::uint64_t other = by_seq ? row.batch : row.seq_len;
    const auto key = std::make_tuple(row.model, row.workload, row.precision, other);
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, series.size()).first;
      series.push_back({fmt::format("{} {} {} {}={}", row.model, row.workload, row.precision, by_seq ? "batch" : "seq", other),
                        {}});
    }
    series[it->second].points.emplace_back(x_of(row), row.total->count());
    xs.insert(x_of(row));
    extend(static_cast<double>(row.total->count()));
  }
  if (series.empty()) throw Error(ErrorKind::invalid_input, "no point of the sweep has an estimate to plot", "svg");
  if (r.limit && r.limit->count() > 0) extend(static_cast<double>(r.limit->count()));
  if (r.device && r.device->memory.count() > 0) extend(static_cast<double>(r.device->memory.count()));

  // y: log2 scale between powers of two around the data, at most ~8 ticks.
  double y0 = std::floor(std::log2(lo)), y1 = std::ceil(std::log2(hi));
  if (y1 <= y0) y1 = y0 + 1;
  const double step = std::max(1.0, std::ceil((y1 - y0) / 8));
  y0 = std::floor(y0 / step) * step;
  y1 = std::max(y0 + step, std::ceil(y1 / step) * step);

  const double left = 90, plot_w = 560, top = 50, plot_h = 360;
  const double legend_x = left + plot_w + 20;
  const double height = std::max(top + plot_h + 70, top + 20.0 * static_cast<double>(series.size() + 3));
  std::size_t longest = 0;
  for (const Series& sr : series) longest = std::max(longest, sr.label.size());
  const double width = legend_x + 40 + 7.0 * static_cast<double>(longest);  // ~7 px per character at 12 px
  const double x_min = std::log2(static_cast<double>(*xs.begin())), x_max = std::log2(static_cast<double>(*xs.rbegin()));
  const auto px = [&](std::uint64_t x) {
    if (x_max <= x_min) return left + plot_w / 2;
    return left + (std::log2(static_cast<double>(x)) - x_min) / (x_max - x_min) * plot_w;
  };
  const auto py = [&](double bytes) { return top + plot_h - (std::log2(bytes) - y0) / (y1 - y0) * plot_h; };

  std::string s;
  s += fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{:.0f}" height="{:.0f}" viewBox="0 0 {:.0f} {:.0f}" font-family="sans-serif" font-size="12">)"
                   "\n",
                   width, height, width, height);
  s += fmt::format(R"(<rect width="100%" height="100%" fill="white"/>)" "\n");
  s += fmt::format(R"(<text x="{:.0f}" y="24" font-size="15">{}</text>)" "\n", left,
                   xml(fmt::format("memplan sweep: total memory against {} (log scales)", by_seq ? "sequence length" : "batch size")));
  // Axes, grid and ticks.
  s += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="none" stroke="#333"/>)" "\n", left,
                   top, plot_w, plot_h);
  for (double e = y0; e <= y1 + 1e-9; e += step) {
    const double y = py(std::exp2(e));
    s += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#ddd"/>)" "\n", left, y, left + plot_w, y);
    s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)" "\n", left - 6, y + 4,
                     xml(tick_label(Bytes(static_cast<std::uint64_t>(std::exp2(e))), units)));
  }
  for (const std::uint64_t x : xs) {
    s += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#eee"/>)" "\n", px(x), top, px(x), top + plot_h);
    s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)" "\n", px(x), top + plot_h + 18, x);
  }
  s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)" "\n", left + plot_w / 2,
                   top + plot_h + 40, by_seq ? "sequence length (tokens)" : "batch size (sequences)");
  // The device's memory and the limit.
  const auto hline = [&](Bytes b, const char* colour, const char* dash, const std::string& label) {
    const double y = py(static_cast<double>(b.count()));
    s += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="1.5" stroke-dasharray="{}"/>)" "\n",
                     left, y, left + plot_w, y, colour, dash);
    s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end" fill="{}">{}</text>)" "\n", left + plot_w - 4, y - 4,
                     colour, xml(label));
  };
  if (r.device) hline(r.device->memory, "#555", "2,0", r.device->name + " " + format_bytes(r.device->memory, units));
  if (r.limit) {
    hline(*r.limit, "#c00", "6,4", fmt::format("limit {} ({:g}%)", format_bytes(*r.limit, units), r.threshold * 100.0));
  }
  // The series and the legend.
  for (std::size_t i = 0; i < series.size(); ++i) {
    Series& sr = series[i];
    std::sort(sr.points.begin(), sr.points.end());
    const char* colour = kColours[i % kColours.size()];
    const char* dash = i / kColours.size() % 2 == 0 ? "none" : "5,3";
    std::string path;
    for (const auto& [x, b] : sr.points) path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "" : " ", px(x), py(static_cast<double>(b)));
    s += fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="2" stroke-dasharray="{}"/>)" "\n", path,
                     colour, dash);
    for (const auto& [x, b] : sr.points) {
      s += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="{}"><title>{}</title></circle>)" "\n", px(x),
                       py(static_cast<double>(b)), colour, xml(sr.label + ": " + format_bytes(Bytes(b), units)));
    }
    const double ly = top + 20.0 * static_cast<double>(i);
    s += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="2" stroke-dasharray="{}"/>)" "\n",
                     legend_x, ly, legend_x + 24, ly, colour, dash);
    s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}">{}</text>)" "\n", legend_x + 30, ly + 4, xml(sr.label));
  }
  s += "</svg>\n";
  return s;
}

std::string measure_svg(const MeasureReport& r, Units units) {
  // One colour per variant: the estimate as a dashed line, the measured peaks as dots.
  struct Series {
    std::string label;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> estimate, measured;  // (size, bytes)
  };
  std::vector<Series> series;
  std::set<std::uint64_t> xs;
  double lo = 0, hi = 0;
  const auto extend = [&](double v) {
    if (v <= 0) return;
    lo = lo == 0 ? v : std::min(lo, v);
    hi = std::max(hi, v);
  };
  for (const MeasureRow& row : r.rows) {
    const std::string label = row.variant.empty() ? r.kernel : row.variant;
    auto it = std::find_if(series.begin(), series.end(), [&](const Series& s) { return s.label == label; });
    if (it == series.end()) it = series.insert(series.end(), Series{label, {}, {}});
    if (row.size == 0) continue;
    xs.insert(row.size);
    if (row.estimate.count() > 0) {
      it->estimate.emplace_back(row.size, row.estimate.count());
      extend(static_cast<double>(row.estimate.count()));
    }
    if (row.measured && row.measured->count() > 0) {
      it->measured.emplace_back(row.size, row.measured->count());
      extend(static_cast<double>(row.measured->count()));
    }
  }
  if (xs.empty() || hi == 0) throw Error(ErrorKind::invalid_input, "no measured point to plot", "svg");

  double y0 = std::floor(std::log2(lo)), y1 = std::ceil(std::log2(hi));
  if (y1 <= y0) y1 = y0 + 1;
  const double step = std::max(1.0, std::ceil((y1 - y0) / 8));
  y0 = std::floor(y0 / step) * step;
  y1 = std::max(y0 + step, std::ceil(y1 / step) * step);

  const double left = 90, plot_w = 560, top = 50, plot_h = 360, legend_x = left + plot_w + 20;
  std::size_t longest = 0;
  for (const Series& sr : series) longest = std::max(longest, sr.label.size());
  const double width = legend_x + 40 + 7.0 * static_cast<double>(std::max<std::size_t>(longest, 22));
  const double height = std::max(top + plot_h + 70, top + 20.0 * static_cast<double>(series.size() + 4));
  const double x_min = std::log2(static_cast<double>(*xs.begin())), x_max = std::log2(static_cast<double>(*xs.rbegin()));
  const auto px = [&](std::uint64_t x) {
    if (x_max <= x_min) return left + plot_w / 2;
    return left + (std::log2(static_cast<double>(x)) - x_min) / (x_max - x_min) * plot_w;
  };
  const auto py = [&](double bytes) { return top + plot_h - (std::log2(bytes) - y0) / (y1 - y0) * plot_h; };

  std::string s;
  s += fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{:.0f}" height="{:.0f}" viewBox="0 0 {:.0f} {:.0f}" font-family="sans-serif" font-size="12">)"
                   "\n",
                   width, height, width, height);
  s += R"(<rect width="100%" height="100%" fill="white"/>)" "\n";
  s += fmt::format(R"(<text x="{:.0f}" y="24" font-size="15">{}</text>)" "\n", left,
                   xml(fmt::format("memplan measure {} on {}, {} {}: peak memory (log-log)", r.kernel, r.device, r.dtype,
                                   r.parameters)));
  s += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="none" stroke="#333"/>)" "\n", left,
                   top, plot_w, plot_h);
  for (double e = y0; e <= y1 + 1e-9; e += step) {
    const double y = py(std::exp2(e));
    s += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#ddd"/>)" "\n", left, y, left + plot_w, y);
    s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)" "\n", left - 6, y + 4,
                     xml(tick_label(Bytes(static_cast<std::uint64_t>(std::exp2(e))), units)));
  }
  for (const std::uint64_t x : xs) {
    s += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#eee"/>)" "\n", px(x), top, px(x), top + plot_h);
    s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)" "\n", px(x), top + plot_h + 18, x);
  }
  s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)" "\n", left + plot_w / 2,
                   top + plot_h + 40, xml(r.size_label));
  for (std::size_t i = 0; i < series.size(); ++i) {
    Series& sr = series[i];
    const char* colour = kColours[i % kColours.size()];
    std::sort(sr.estimate.begin(), sr.estimate.end());
    std::string path;
    for (const auto& [x, b] : sr.estimate) path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "" : " ", px(x), py(static_cast<double>(b)));
    if (!path.empty()) {
      s += fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="1.5" stroke-dasharray="5,3"/>)" "\n",
                       path, colour);
    }
    for (const auto& [x, b] : sr.measured) {
      s += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="4" fill="{}"><title>{}</title></circle>)" "\n", px(x),
                       py(static_cast<double>(b)), colour,
                       xml(fmt::format("{} {}={}: measured {}", sr.label, r.size_label, x, format_bytes(Bytes(b), units))));
    }
    const double ly = top + 20.0 * static_cast<double>(i);
    s += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="4" fill="{}"/>)" "\n", legend_x + 12, ly, colour);
    s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}">{}</text>)" "\n", legend_x + 30, ly + 4, xml(sr.label));
  }
  const double key_y = top + 20.0 * static_cast<double>(series.size() + 1);
  s += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#333" stroke-width="1.5" stroke-dasharray="5,3"/>)" "\n",
                   legend_x, key_y, legend_x + 24, key_y);
  s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}">estimate; dots: measured</text>)" "\n", legend_x + 30, key_y + 4);
  s += "</svg>\n";
  return s;
}

}  // namespace memplan
