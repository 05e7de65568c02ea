// memplan estimate: one device's breakdown as a table and as JSON; the header and the
// breakdown JSON a layout shares (layout.cpp prints the rest of a layout).
#include "memplan/report/estimate.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/text.hpp"
#include "memplan/plan/workload.hpp"

namespace memplan {

namespace detail {

EstimateHeader estimate_header(const EstimateReport& r) {
  const Plan& plan = r.plan;
  const Workload& w = plan.workload;
  EstimateHeader h;
  h.model = plan.model.name;
  h.family = to_string(plan.model.family);
  h.origin = r.model_origin;
  h.params = count_parameters(plan.model);
  h.workload_kind = to_string(w.kind);
  if (w.kind != WorkloadKind::weights) {
    h.batch = w.batch;
    h.seq_len = w.seq_len;
    h.new_tokens = w.new_tokens;
    h.target_len = w.target_len;
    h.encoder_decoder = is_encoder_decoder(plan.model);
    if (w.images != 0) {
      const ImageGrid grid = image_grid(plan.model.vision, w.image_width, w.image_height);
      h.images = w.images;
      h.image_tokens = grid.tokens;
      h.image_width = grid.width;
      h.image_height = grid.height;
      h.image_crops = grid.crops;
    }
  }
  const Precision& weights = w.weights.precision;
  h.precision_requested = plan.precision_requested;
  h.precision_resolved = to_string(weights);
  if (w.kind == WorkloadKind::training && w.mixed_precision) h.mixed_precision = to_string(*w.mixed_precision);
  if (!plan.model.stored_weights.empty()) {
    // The weights are the checkpoint's bytes; the resolved precision sets the rest.
    h.precision_description = "weights as the checkpoint stores them" +
                              (plan.model.stored_weights_source.empty()
                                   ? std::string(" (its tensor types)")
                                   : " (" + plan.model.stored_weights_source + ")");
  } else {
    h.precision_description = is_quantized(weights) ? describe(weights) + " on linear layers; " +
                                                          to_string(w.weights.unquantized) + " elsewhere"
                                                    : describe(weights);
  }
  const bool llama_cpp = plan.layout && plan.layout->llama_cpp;
  if (w.kind != WorkloadKind::weights) {
    h.precision_description += llama_cpp ? "; activations f32 (llama.cpp's graph)"
                                         : "; activations " + to_string(compute_precision(w));
  }
  if (w.kind == WorkloadKind::training && w.mixed_precision) {
    const std::string half = to_string(compute_precision(w));
    switch (*w.mixed_precision) {
      case MixedPrecision::amp:
        h.precision_description += "; mixed precision amp (torch.autocast: fp32 weights, gradients and states, " +
                                   half + " copies of the weights and inputs each matmul casts)";
        break;
      case MixedPrecision::master:
        h.precision_description += "; mixed precision master (" + to_string(w.weights.precision) +
                                   " weights, an fp32 master copy for the optimizer)";
        break;
      case MixedPrecision::pure:
        h.precision_description += "; mixed precision pure (" + to_string(w.weights.precision) +
                                   " weights, gradients and optimizer states; no master copy)";
        break;
      case MixedPrecision::fp32: h.precision_description += "; no mixed precision (fp32)"; break;
    }
  }
  // Nothing is resolved when every tensor is the checkpoint's: a weights-only plan, or llama.cpp's.
  const bool all_stored = !plan.model.stored_weights.empty() && (w.kind == WorkloadKind::weights || llama_cpp);
  if (!plan.precision_note.empty() && !all_stored) h.precision_description += " (" + plan.precision_note + ")";
  h.warnings = plan.warnings;
  if (plan.layout && plan.layout->vllm && r.estimate.layout && r.estimate.layout->serving) {
    h.workload_kind = "serving";  // a server: no fixed batch or sequence, so no warnings about them
    h.batch = h.seq_len = h.new_tokens = 0;
    h.warnings.clear();
  }
  if (plan.layout && plan.layout->llama_cpp && plan.layout->llama_cpp->fit_context) {
    h.workload_kind = "serving";  // llama-server chose its context: the layout line says which
    h.batch = h.seq_len = h.new_tokens = 0;
  }
  return h;
}

void header_table(const EstimateHeader& h, std::ostream& out) {
  out << fmt::format("model      {} ({}, {} parameters, {})\n", h.model, h.family, group_digits(h.params), h.origin);
  if (h.batch > 0 && h.encoder_decoder) {
    out << fmt::format("workload   {}: batch {} x {} source positions (encoder) -> {} target tokens{}\n",
                       h.workload_kind, h.batch, h.seq_len, h.new_tokens ? h.new_tokens : h.target_len,
                       h.new_tokens ? " generated" : " (decoder)");
  } else if (h.batch > 0 && h.images > 0) {
    out << fmt::format("workload   {}: batch {} x ({} text + {} image{} x {} tokens = {}) tokens{}\n", h.workload_kind,
                       h.batch, h.seq_len, h.images, h.images == 1 ? "" : "s", h.image_tokens,
                       h.seq_len + h.images * h.image_tokens,
                       h.new_tokens ? fmt::format(" + {} generated", h.new_tokens) : "");
    if (h.image_width == 0) {  // Gemma 4's: each image within a budget of tokens, at its own aspect ratio
      out << fmt::format("images     {} tokens each, the tower's budget: the most an image becomes at any size\n",
                         h.image_tokens);
    } else {
      out << fmt::format("images     {}x{} px as the tower sees them{}, {} tokens each\n", h.image_width,
                         h.image_height,
                         h.image_crops > 1 ? fmt::format(" ({} tiles of it and the whole, resized)", h.image_crops - 1)
                                           : std::string(),
                         h.image_tokens);
    }
  } else if (h.batch > 0) {
    out << fmt::format("workload   {}: batch {} x {} tokens{}\n", h.workload_kind, h.batch, h.seq_len,
                       h.new_tokens ? fmt::format(" + {} generated", h.new_tokens) : "");
  } else {
    out << fmt::format("workload   {}\n", h.workload_kind);
  }
  out << fmt::format("precision  {}\n", h.precision_description);
}

ordered_json header_json(const EstimateHeader& h) {
  ordered_json j;
  j["schema_version"] = json_schema_version;
  j["model"] = {{"name", h.model}, {"family", h.family}, {"origin", h.origin}, {"params", h.params}};
  j["workload"] = {{"kind", h.workload_kind}};
  if (h.batch > 0) {
    j["workload"]["batch_size"] = h.batch;
    j["workload"]["seq_len"] = h.seq_len;
    if (h.new_tokens > 0) j["workload"]["new_tokens"] = h.new_tokens;
    if (h.encoder_decoder) j["workload"]["source_len"] = h.seq_len;
    if (h.target_len > 0) j["workload"]["target_len"] = h.target_len;
    if (h.images > 0) {
      j["workload"]["images"] = h.images;
      j["workload"]["image_tokens"] = h.image_tokens;
      j["workload"]["image_size"] = {{"width", h.image_width}, {"height", h.image_height}};
    }
  }
  j["precision"] = {{"requested", h.precision_requested}, {"resolved", h.precision_resolved}, {"warnings", h.warnings}};
  if (!h.mixed_precision.empty()) j["precision"]["mixed_precision"] = h.mixed_precision;
  return j;
}

namespace {

// One breakdown row and its detail.
ordered_json item_json(const Item& item) {
  ordered_json j;
  j["name"] = item.name;
  j["bytes"] = item.bytes.count();
  if (item.params) j["params"] = *item.params;
  j["formula"] = item.formula;
  if (!item.note.empty()) j["note"] = item.note;
  if (item.low && item.high) {
    j["bytes_low"] = item.low->count();
    j["bytes_high"] = item.high->count();
  }
  if (!item.detail.empty()) {
    ordered_json detail = ordered_json::array();
    for (const Item& d : item.detail) detail.push_back(item_json(d));
    j["detail"] = detail;
  }
  return j;
}

}  // namespace

void add_peak_json(ordered_json& j, const Breakdown& b) {
  if (!b.peak_phase.empty()) j["peak_phase"] = b.peak_phase;
  // The largest row, first on a tie: where most of the memory goes.
  const Item* largest = nullptr;
  for (const Item& item : b.components) {
    if (largest == nullptr || item.bytes > largest->bytes) largest = &item;
  }
  if (largest != nullptr) j["largest_unit"] = {{"name", largest->name}, {"bytes", largest->bytes.count()}};
}

void add_breakdown_json(ordered_json& j, const Breakdown& b) {
  ordered_json components = ordered_json::array();
  for (const Item& item : b.components) components.push_back(item_json(item));
  j["components"] = components;
  j["total_bytes"] = b.total().count();
  if (b.find("overhead") != nullptr) {
    j["allocated_bytes"] = b.allocated().count();
    j["reserved_bytes"] = b.reserved().count();
  }
  if (b.total_low() != b.total() || b.total_high() != b.total()) {
    j["total_bytes_low"] = b.total_low().count();
    j["total_bytes_high"] = b.total_high().count();
  }
  if (!b.host.empty()) {
    ordered_json host = ordered_json::array();
    for (const Item& item : b.host) host.push_back(item_json(item));
    j["host_components"] = host;
    j["host_total_bytes"] = b.host_total().count();
  }
  if (!b.alternatives.empty()) {
    ordered_json alternatives = ordered_json::array();
    for (const Alternative& a : b.alternatives) {
      ordered_json alternative = item_json(a.item);
      alternative["replaces"] = a.replaces;
      alternatives.push_back(alternative);
    }
    j["alternatives"] = alternatives;
  }
}

}  // namespace detail

namespace {

using detail::ordered_json;

void table(const EstimateReport& r, const PrintOptions& options, std::ostream& out) {
  const detail::EstimateHeader h = detail::estimate_header(r);
  const Breakdown& b = r.estimate.breakdown;
  const Bytes total = b.total();
  const Units u = options.units;
  detail::header_table(h, out);
  out << '\n';

  // A single component shows its detail as the rows; several show each component with
  // its detail indented beneath it.
  struct Row {
    const Item* item;
    int depth;
  };
  std::vector<Row> rows;
  std::vector<std::string> notes;
  const bool single = b.components.size() == 1;
  for (const Item& c : b.components) {
    if (!c.note.empty()) notes.push_back(c.name + ": " + c.note);
    if (!single) rows.push_back({&c, 0});
    for (const Item& d : c.detail) {
      rows.push_back({&d, single ? 0 : 1});
      if (!d.note.empty()) notes.push_back(d.name + ": " + d.note);
    }
  }
  std::size_t name_width = 9;
  for (const Row& row : rows)
    name_width = std::max(name_width, row.item->name.size() + 2 * static_cast<std::size_t>(row.depth));
  const std::string header = fmt::format("{:<{}}  {:>15}  {:>11}  {:>6}", "component", name_width, "parameters",
                                         "memory", "share");
  out << header << '\n';
  for (const Row& row : rows) {
    const Item& item = *row.item;
    const std::string name = std::string(2 * static_cast<std::size_t>(row.depth), ' ') + item.name;
    out << fmt::format("{:<{}}  {:>15}  {:>11}  {:>6}", name, name_width, item.params ? group_digits(*item.params) : "",
                       format_bytes(item.bytes, u), detail::percent(item.bytes, total));
    if (item.low && item.high)
      out << fmt::format("  ({} - {})", format_bytes(*item.low, u), format_bytes(*item.high, u));
    out << '\n';
    if (options.explain) out << fmt::format("{:<{}}    = {}\n", "", name_width, item.formula);
  }
  out << std::string(header.size(), '-') << '\n';
  // The parameters the rows hold (LoRA's adapters beside the model's), else the model's.
  std::optional<std::uint64_t> held;
  for (const Item& c : b.components) {
    if (c.params) held = checked_add(held.value_or(0), *c.params, "parameters");
  }
  out << fmt::format("{:<{}}  {:>15}  {:>11}  {:>6}", "total", name_width, group_digits(held.value_or(h.params)),
                     format_bytes(total, u), "100%");
  const Bytes low = b.total_low(), high = b.total_high();
  if (low != total || high != total) out << fmt::format("  ({} - {})", format_bytes(low, u), format_bytes(high, u));
  out << '\n';
  if (options.explain) {
    for (const Item& c : b.components) out << fmt::format("\n{} = {}\n", c.name, c.formula);
  }

  if (!b.host.empty()) {
    out << "\nhost memory (CPU RAM), not in the GPU total:\n";
    for (const Item& host : b.host) {
      out << fmt::format("  {:<{}}  {:>11}  {}\n", host.name, name_width, format_bytes(host.bytes, u), host.note);
    }
  }
  if (!b.alternatives.empty()) {
    out << "\nfor comparison:\n";
    std::size_t alternative_width = name_width;  // a phase's name can be longer than every row's
    for (const Alternative& alternative : b.alternatives) {
      alternative_width = std::max(alternative_width, alternative.item.name.size());
    }
    for (const Alternative& alternative : b.alternatives) {
      const Item& a = alternative.item;
      const Item* current = b.find(alternative.replaces);
      std::string delta;
      if (current != nullptr && current->bytes != a.bytes) {
        delta = a.bytes > current->bytes
                    ? fmt::format(" ({} more than this plan's {})",
                                  format_bytes(Bytes(a.bytes.count() - current->bytes.count()), u), current->name)
                    : fmt::format(" ({} less than this plan's {})",
                                  format_bytes(Bytes(current->bytes.count() - a.bytes.count()), u), current->name);
      }
      out << fmt::format("  {:<{}}  {:>11}  {}{}\n", a.name, alternative_width, format_bytes(a.bytes, u), a.note,
                         delta);
    }
  }

  if (b.find("overhead") != nullptr && r.plan.cpu) {
    out << fmt::format("\nallocated  {} of tensors; {} with the allocator's margin (on the CPU: no CUDA context)\n",
                       format_bytes(b.allocated(), u), format_bytes(total, u));
  } else if (b.find("overhead") != nullptr) {
    out << fmt::format(
        "\nallocated  {} of tensors; reserved {} by the caching allocator; {} with the CUDA context and workspaces\n",
        format_bytes(b.allocated(), u), format_bytes(b.reserved(), u), format_bytes(total, u));
  }
  const std::optional<GpuSpec>& device = r.plan.device;
  const std::optional<Verdict>& verdict = r.estimate.verdict;
  if (verdict && r.plan.budget) {
    const Bytes capacity = *r.plan.budget;  // what the verdict was judged against
    if (device) {
      out << fmt::format("\ndevice     {} ({}): {} of {} ", device->name, device->display, format_bytes(total, u),
                         format_bytes(capacity, u));
    } else if (r.plan.cpu) {
      out << fmt::format("\ndevice     cpu (this machine's RAM): {} of {} ", format_bytes(total, u),
                         format_bytes(capacity, u));
    } else {
      out << fmt::format("\nbudget     {} (a bare capacity, no GPU's capability or speed): {} of {} ",
                         format_bytes(capacity, u), format_bytes(total, u), format_bytes(capacity, u));
    }
    switch (*verdict) {
      case Verdict::fits:
        out << fmt::format("- fits, {} left\n", format_bytes(Bytes(capacity.count() - total.count()), u));
        break;
      case Verdict::above_threshold:
        out << fmt::format("- fits, but above the {:g}% threshold: {} left ({:.1f}% used)\n", r.plan.threshold * 100,
                           format_bytes(Bytes(capacity.count() - total.count()), u),
                           100.0 * static_cast<double>(total.count()) / static_cast<double>(capacity.count()));
        break;
      case Verdict::does_not_fit:
        out << fmt::format("- DOES NOT FIT, {} over\n", format_bytes(Bytes(total.count() - capacity.count()), u));
        break;
    }
  }
  if (const std::optional<TimeEstimate>& time = r.estimate.time) {
    out << fmt::format("time       ~{} on {}: {}\n", format_duration(time->seconds), time->device, time->assumption);
    for (const TimePart& p : time->parts) {
      out << fmt::format("  {:<{}}  {:>11}  {}\n", p.name, name_width, format_duration(p.seconds), p.assumption);
      if (options.explain) out << fmt::format("{:<{}}    = {}\n", "", name_width, p.formula);
    }
  }
  for (const std::string& w : h.warnings) out << "warning: " << w << '\n';
  if (!notes.empty()) out << '\n';
  for (const std::string& n : notes) out << "note: " << n << '\n';
  out << (u == Units::iec ? "\nsizes in IEC units (1 GiB = 1024^3 bytes; `units` si for GB)"
                          : "\nsizes in SI units (1 GB = 1000^3 bytes; `units` iec for GiB)")
      << (options.explain ? "\n" : "; `explain` shows the arithmetic, `format` json exact bytes\n");
}

void json(const EstimateReport& r, std::ostream& out) {
  ordered_json j = detail::header_json(detail::estimate_header(r));
  detail::add_breakdown_json(j, r.estimate.breakdown);
  detail::add_peak_json(j, r.estimate.breakdown);
  if (const std::optional<GpuSpec>& device = r.plan.device) {
    j["device"] = {{"name", device->name}, {"memory_bytes", usable_memory(*device).count()}};
  } else if (r.plan.cpu) {
    j["device"] = {{"name", "cpu"}};
    if (r.plan.budget) j["device"]["memory_bytes"] = r.plan.budget->count();
  } else if (r.plan.budget) {
    j["budget_bytes"] = r.plan.budget->count();  // --gpu 24GiB: a capacity, no GPU
  }
  if (const std::optional<Verdict>& verdict = r.estimate.verdict) {
    j["threshold"] = r.plan.threshold;
    j["verdict"] = to_string(*verdict);
    j["fits"] = *verdict != Verdict::does_not_fit;  // schema 1: within the device's memory; `verdict` says more
  }
  if (const std::optional<TimeEstimate>& time = r.estimate.time) {
    ordered_json parts = ordered_json::array();
    for (const TimePart& p : time->parts) {
      parts.push_back({{"name", p.name},
                       {"seconds", p.seconds},
                       {"flops", p.flops},
                       {"precision", to_string(p.format)},
                       {"peak_tflops", p.peak_tflops},
                       {"efficiency", p.efficiency},
                       {"formula", p.formula},
                       {"assumption", p.assumption}});
    }
    j["time"] = {
        {"seconds", time->seconds}, {"device", time->device}, {"assumption", time->assumption}, {"parts", parts}};
  }
  detail::emit(j, out);
}

}  // namespace

void print(const EstimateReport& report, const PrintOptions& options, std::ostream& out) {
  require_format<EstimateReport>(options.format);
  const bool layout = report.estimate.layout.has_value();
  if (options.format == OutputFormat::json) {
    layout ? detail::layout_json(report, out) : json(report, out);
  } else {
    layout ? detail::layout_table(report, options, out) : table(report, options, out);
  }
}

}  // namespace memplan
