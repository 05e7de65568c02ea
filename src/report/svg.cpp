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
#include "memplan/plan/fit.hpp"
#include "memplan/report/measure.hpp"
#include "memplan/report/sweep.hpp"
#include "xml_text.hpp"

namespace memplan {

namespace {

constexpr std::array<const char*, 10> kColours = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string xml(const std::string& text) { return detail::xml_text(text); }

// "16.00 GiB" -> "16 GiB" for axis labels.
std::string tick_label(Bytes b, Units u) {
  std::string s = format_bytes(b, u);
  const std::size_t dot = s.find(".00 ");
  if (dot != std::string::npos) s.erase(dot, 3);
  return s;
}

// The frame both charts share: log2 scales on both axes, the title, the plot's border,
// grid lines with tick labels, and the x axis' name. Series are drawn with px/py.
class LogLogFrame {
 public:
  LogLogFrame(const std::set<std::uint64_t>& xs, double lo, double hi, std::size_t series, std::size_t longest_label)
      : xs_(xs) {
    y0_ = std::floor(std::log2(lo));
    y1_ = std::ceil(std::log2(hi));
    if (y1_ <= y0_) y1_ = y0_ + 1;
    step_ = std::max(1.0, std::ceil((y1_ - y0_) / 8));  // at most ~8 ticks
    y0_ = std::floor(y0_ / step_) * step_;
    y1_ = std::max(y0_ + step_, std::ceil(y1_ / step_) * step_);
    legend_x = left + plot_w + 20;
    height = std::max(top + plot_h + 70, top + 20.0 * static_cast<double>(series + 4));
    width = legend_x + 40 + 7.0 * static_cast<double>(longest_label);  // ~7 px per character at 12 px
    x_min_ = std::log2(static_cast<double>(*xs.begin()));
    x_max_ = std::log2(static_cast<double>(*xs.rbegin()));
  }

  double px(std::uint64_t x) const {
    if (x_max_ <= x_min_) return left + plot_w / 2;
    return left + (std::log2(static_cast<double>(x)) - x_min_) / (x_max_ - x_min_) * plot_w;
  }
  double py(double bytes) const { return top + plot_h - (std::log2(bytes) - y0_) / (y1_ - y0_) * plot_h; }

  // Returns the opening of the document: title, border, grid and ticks, the x axis' name.
  std::string open(const std::string& title, const std::string& x_name, Units units) const {
    std::string s;
    s += fmt::format(
        R"(<svg xmlns="http://www.w3.org/2000/svg" width="{:.0f}" height="{:.0f}" viewBox="0 0 {:.0f} {:.0f}" font-family="sans-serif" font-size="12">)"
        "\n",
        width, height, width, height);
    s += R"(<rect width="100%" height="100%" fill="white"/>)"
         "\n";
    s += fmt::format(R"(<text x="{:.0f}" y="24" font-size="15">{}</text>)"
                     "\n",
                     left, xml(title));
    s += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="none" stroke="#333"/>)"
                     "\n",
                     left, top, plot_w, plot_h);
    for (double e = y0_; e <= y1_ + 1e-9; e += step_) {
      const double y = py(std::exp2(e));
      s += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#ddd"/>)"
                       "\n",
                       left, y, left + plot_w, y);
      s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)"
                       "\n",
                       left - 6, y + 4, xml(tick_label(Bytes(static_cast<std::uint64_t>(std::exp2(e))), units)));
    }
    for (const std::uint64_t x : xs_) {
      s += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#eee"/>)"
                       "\n",
                       px(x), top, px(x), top + plot_h);
      s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)"
                       "\n",
                       px(x), top + plot_h + 18, x);
    }
    s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)"
                     "\n",
                     left + plot_w / 2, top + plot_h + 40, xml(x_name));
    return s;
  }

  static constexpr double left = 90, plot_w = 560, top = 50, plot_h = 360;
  double legend_x = 0, width = 0, height = 0;

 private:
  const std::set<std::uint64_t>& xs_;
  double y0_ = 0, y1_ = 0, step_ = 1, x_min_ = 0, x_max_ = 0;
};

}  // namespace

std::string sweep_svg(const SweepReport& r, Units units) {
  // x: sequence length when several are swept, else the batch.
  const bool by_seq = r.axes.seqs.size() > 1 || r.axes.batches.size() <= 1;
  const auto x_of = [&](const SweepPoint& p) { return by_seq ? p.seq : p.batch; };

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
  for (const SweepReportRow& x : r.rows) {
    const SweepRow& row = x.row;
    if (!row.total || row.total->count() == 0) continue;
    const SweepPoint& p = row.point;
    const std::string model = p.model < r.models.size() ? r.models[p.model] : "";
    const std::uint64_t other = by_seq ? p.batch : p.seq;
    const auto key = std::make_tuple(model, to_string(p.workload), to_string(p.precision), other);
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, series.size()).first;
      series.push_back({fmt::format("{} {} {} {}={}", model, to_string(p.workload), to_string(p.precision),
                                    by_seq ? "batch" : "seq", other),
                        {}});
    }
    series[it->second].points.emplace_back(x_of(p), row.total->count());
    xs.insert(x_of(p));
    extend(static_cast<double>(row.total->count()));
  }
  if (series.empty()) throw Error(ErrorKind::invalid_input, "no point of the sweep has an estimate to plot", "svg");
  const Bytes limit = r.device ? budget_limit(usable_memory(*r.device), r.threshold) : Bytes(0);  // with a device
  if (limit.count() > 0) extend(static_cast<double>(limit.count()));
  if (r.device && usable_memory(*r.device).count() > 0) extend(static_cast<double>(usable_memory(*r.device).count()));

  std::size_t longest = 0;
  for (const Series& sr : series) longest = std::max(longest, sr.label.size());
  const LogLogFrame f(xs, lo, hi, series.size(), longest);
  const double left = LogLogFrame::left, plot_w = LogLogFrame::plot_w, top = LogLogFrame::top, legend_x = f.legend_x;
  const auto px = [&](std::uint64_t x) { return f.px(x); };
  const auto py = [&](double bytes) { return f.py(bytes); };

  std::string s = f.open(fmt::format("memplan sweep: total memory against {} (log scales)",
                                     by_seq ? "sequence length" : "batch size"),
                         by_seq ? "sequence length (tokens)" : "batch size (sequences)", units);
  // The device's memory and the limit.
  const auto hline = [&](Bytes b, const char* colour, const char* dash, const std::string& label) {
    const double y = py(static_cast<double>(b.count()));
    s += fmt::format(
        R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="1.5" stroke-dasharray="{}"/>)"
        "\n",
        left, y, left + plot_w, y, colour, dash);
    s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end" fill="{}">{}</text>)"
                     "\n",
                     left + plot_w - 4, y - 4, colour, xml(label));
  };
  if (r.device)
    hline(usable_memory(*r.device), "#555", "2,0",
          r.device->name + " " + format_bytes(usable_memory(*r.device), units));
  if (r.device) {
    hline(limit, "#c00", "6,4", fmt::format("limit {} ({:g}%)", format_bytes(limit, units), r.threshold * 100.0));
  }
  // The series and the legend.
  for (std::size_t i = 0; i < series.size(); ++i) {
    Series& sr = series[i];
    std::sort(sr.points.begin(), sr.points.end());
    const char* colour = kColours[i % kColours.size()];
    const char* dash = i / kColours.size() % 2 == 0 ? "none" : "5,3";
    std::string path;
    for (const auto& [x, b] : sr.points)
      path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "" : " ", px(x), py(static_cast<double>(b)));
    s += fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="2" stroke-dasharray="{}"/>)"
                     "\n",
                     path, colour, dash);
    for (const auto& [x, b] : sr.points) {
      s += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="{}"><title>{}</title></circle>)"
                       "\n",
                       px(x), py(static_cast<double>(b)), colour, xml(sr.label + ": " + format_bytes(Bytes(b), units)));
    }
    const double ly = top + 20.0 * static_cast<double>(i);
    s += fmt::format(
        R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="2" stroke-dasharray="{}"/>)"
        "\n",
        legend_x, ly, legend_x + 24, ly, colour, dash);
    s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}">{}</text>)"
                     "\n",
                     legend_x + 30, ly + 4, xml(sr.label));
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

  std::size_t longest = 22;  // "estimate; dots: measured"
  for (const Series& sr : series) longest = std::max(longest, sr.label.size());
  const LogLogFrame f(xs, lo, hi, series.size(), longest);
  const double top = LogLogFrame::top, legend_x = f.legend_x;
  const auto px = [&](std::uint64_t x) { return f.px(x); };
  const auto py = [&](double bytes) { return f.py(bytes); };

  std::string s = f.open(fmt::format("memplan measure {} on {}, {} {}: peak memory (log-log)", r.kernel, r.device,
                                     r.dtype, r.parameters),
                         r.size_label, units);
  for (std::size_t i = 0; i < series.size(); ++i) {
    Series& sr = series[i];
    const char* colour = kColours[i % kColours.size()];
    std::sort(sr.estimate.begin(), sr.estimate.end());
    std::string path;
    for (const auto& [x, b] : sr.estimate)
      path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "" : " ", px(x), py(static_cast<double>(b)));
    if (!path.empty()) {
      s += fmt::format(R"(<polyline points="{}" fill="none" stroke="{}" stroke-width="1.5" stroke-dasharray="5,3"/>)"
                       "\n",
                       path, colour);
    }
    for (const auto& [x, b] : sr.measured) {
      s += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="4" fill="{}"><title>{}</title></circle>)"
                       "\n",
                       px(x), py(static_cast<double>(b)), colour,
                       xml(fmt::format("{} {}={}: measured {}", sr.label, r.size_label, x,
                                       format_bytes(Bytes(b), units))));
    }
    const double ly = top + 20.0 * static_cast<double>(i);
    s += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="4" fill="{}"/>)"
                     "\n",
                     legend_x + 12, ly, colour);
    s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}">{}</text>)"
                     "\n",
                     legend_x + 30, ly + 4, xml(sr.label));
  }
  const double key_y = top + 20.0 * static_cast<double>(series.size() + 1);
  s += fmt::format(
      R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#333" stroke-width="1.5" stroke-dasharray="5,3"/>)"
      "\n",
      legend_x, key_y, legend_x + 24, key_y);
  s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}">estimate; dots: measured</text>)"
                   "\n",
                   legend_x + 30, key_y + 4);
  s += "</svg>\n";
  return s;
}

}  // namespace memplan
