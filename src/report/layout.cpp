// memplan estimate with a multi-GPU layout: one column per device role (table), one object
// per device (JSON). estimate.cpp's print calls these when the estimate has a layout.
#include <fmt/format.h>

#include <algorithm>

#include "common.hpp"
#include "memplan/core/text.hpp"

namespace memplan::detail {

namespace {

// Component names in the order they first appear across the devices.
std::vector<std::string> component_names(const LayoutEstimate& layout) {
  std::vector<std::string> names;
  for (const DeviceMemory& d : layout.devices) {
    for (const Item& c : d.breakdown.components) {
      if (std::find(names.begin(), names.end(), c.name) == names.end()) names.push_back(c.name);
    }
  }
  return names;
}

std::string ratio_text(double value) { return fmt::format("{:.2f}", value); }

}  // namespace

void layout_table(const EstimateReport& report, const PrintOptions& options, std::ostream& out) {
  const EstimateHeader h = estimate_header(report);
  const LayoutEstimate& l = *report.estimate.layout;
  const Units u = options.units;
  header_table(h, out);
  out << fmt::format("layout     {} [{}]\n\n", l.description, l.engine);

  std::size_t role_width = 4;
  for (const DeviceMemory& d : l.devices) role_width = std::max(role_width, d.role.size());
  for (const DeviceMemory& d : l.devices) {
    out << fmt::format("{:<{}}  x{:<4} {}\n", d.role, role_width, d.count, d.holds);
  }
  out << '\n';

  const std::vector<std::string> names = component_names(l);
  std::size_t name_width = 14;
  for (const std::string& name : names) name_width = std::max(name_width, name.size());
  bool any_host = false, any_capacity = false;
  for (const DeviceMemory& d : l.devices) {
    any_host = any_host || !d.breakdown.host.empty();
    any_capacity = any_capacity || d.capacity.has_value();
  }
  // Each device's forward/backward and optimizer-step totals, when a training layout reports both.
  const auto phase_total = [](const DeviceMemory& d, bool step) -> std::optional<Bytes> {
    for (const Alternative& a : d.breakdown.alternatives) {
      if (a.replaces != "total") continue;
      if (a.item.name == "phase_optimizer_step") return step ? a.item.bytes : d.breakdown.total();
      if (a.item.name == "phase_forward_backward") return step ? d.breakdown.total() : a.item.bytes;
    }
    return std::nullopt;
  };
  bool any_phase = false;
  for (const DeviceMemory& d : l.devices) any_phase = any_phase || phase_total(d, true).has_value();

  constexpr std::size_t kColumns = 6;  // device roles per block, so that wide layouts stay readable
  for (std::size_t begin = 0; begin < l.devices.size(); begin += kColumns) {
    const std::size_t end = std::min(l.devices.size(), begin + kColumns);
    struct Row {
      std::string label;
      std::vector<std::string> cells;  // empty: a rule
    };
    std::vector<Row> rows;
    const auto add = [&](const std::string& label, const auto& cell) {
      Row r{label, {}};
      for (std::size_t i = begin; i < end; ++i) r.cells.push_back(cell(l.devices[i]));
      rows.push_back(std::move(r));
    };
    add(l.llama_cpp ? "per device" : "per GPU", [](const DeviceMemory& d) { return d.role; });
    for (const std::string& name : names) {
      add(name, [&](const DeviceMemory& d) {
        const Item* c = d.breakdown.find(name);
        return c == nullptr ? std::string("-") : format_bytes(c->bytes, u);
      });
    }
    if (l.llama_cpp && any_host) {  // llama.cpp's host buffers, one row each
      std::vector<std::string> host_names;
      for (const DeviceMemory& d : l.devices) {
        for (const Item& c : d.breakdown.host) {
          if (std::find(host_names.begin(), host_names.end(), c.name) == host_names.end()) host_names.push_back(c.name);
        }
      }
      for (const std::string& name : host_names) {
        add("host " + name, [&](const DeviceMemory& d) {
          for (const Item& c : d.breakdown.host) {
            if (c.name == name) return format_bytes(c.bytes, u);
          }
          return std::string("-");
        });
      }
    }
    rows.push_back({"", {}});
    add(any_phase ? "total (peak)" : "total",
        [&](const DeviceMemory& d) { return format_bytes(d.breakdown.total(), u); });
    if (any_phase) {
      add("  fwd/bwd", [&](const DeviceMemory& d) {
        const std::optional<Bytes> b = phase_total(d, false);
        return b ? format_bytes(*b, u) : std::string("-");
      });
      add("  opt. step", [&](const DeviceMemory& d) {
        const std::optional<Bytes> b = phase_total(d, true);
        return b ? format_bytes(*b, u) : std::string("-");
      });
    }
    if (any_capacity) {
      add(l.llama_cpp ? "device" : "GPU",
          [](const DeviceMemory& d) { return d.gpu.empty() ? std::string("-") : d.gpu; });
      add("capacity",
          [&](const DeviceMemory& d) { return d.capacity ? format_bytes(*d.capacity, u) : std::string("-"); });
      add("left", [&](const DeviceMemory& d) {
        if (!d.capacity) return std::string("-");
        const Bytes total = d.breakdown.total();
        return total <= *d.capacity ? format_bytes(Bytes(d.capacity->count() - total.count()), u)
                                    : "OVER " + format_bytes(Bytes(total.count() - d.capacity->count()), u);
      });
    }
    if (any_host) {
      add("host RAM", [&](const DeviceMemory& d) {
        return d.breakdown.host.empty() ? std::string("-") : format_bytes(d.breakdown.host_total(), u);
      });
    }
    std::vector<std::size_t> widths(end - begin, 11);
    for (const Row& r : rows) {
      for (std::size_t c = 0; c < r.cells.size(); ++c) widths[c] = std::max(widths[c], r.cells[c].size());
    }
    std::size_t label_width = name_width;
    for (const Row& r : rows) label_width = std::max(label_width, r.label.size());
    std::size_t rule = label_width;
    for (const std::size_t w : widths) rule += 2 + w;
    for (const Row& r : rows) {
      if (r.cells.empty()) {
        out << std::string(rule, '-') << '\n';
        continue;
      }
      std::string text = fmt::format("{:<{}}", r.label, label_width);
      for (std::size_t c = 0; c < r.cells.size(); ++c) text += fmt::format("  {:>{}}", r.cells[c], widths[c]);
      out << text << '\n';
    }
    if (end < l.devices.size()) out << '\n';
  }

  bool mixed = false;
  for (const DeviceMemory& d : l.devices) {
    mixed = mixed || (phase_total(d, true) && d.breakdown.total() == *phase_total(d, true) &&
                      *phase_total(d, true) != *phase_total(d, false));
  }
  if (mixed) {
    out << "(a '-' under a device whose peak is the optimizer step: its activations are freed by then)\n";
  }

  if (options.explain) {
    std::size_t explain_width = name_width;
    for (const DeviceMemory& d : l.devices) {
      for (const Item& c : d.breakdown.host) explain_width = std::max(explain_width, c.name.size() + 5);
    }
    for (const DeviceMemory& d : l.devices) {
      out << fmt::format("\n{} (x{}):\n", d.role, d.count);
      for (const Item& c : d.breakdown.components) {
        out << fmt::format("  {:<{}}  {:>11}  = {}\n", c.name, explain_width, format_bytes(c.bytes, u), c.formula);
        for (const Item& x : c.detail) {
          out << fmt::format("    {:<{}}  {:>11}  = {}\n", x.name, explain_width - 2, format_bytes(x.bytes, u),
                             x.formula);
        }
      }
      for (const Item& c : d.breakdown.host) {
        out << fmt::format("  host {:<{}}  {:>11}  = {}\n", c.name, explain_width - 5, format_bytes(c.bytes, u),
                           c.formula);
      }
    }
  }

  if (l.serving) {
    const ServingCapacity& s = *l.serving;
    if (s.kv_given) {
      out << fmt::format(
          "\nvLLM       KV budget {} = kv_cache_memory_bytes, as given (vLLM skips the profile's budget)\n",
          format_bytes(s.kv_budget, u));
    } else {
      out << fmt::format("\nvLLM       KV budget {} = ceil({} x {}) - {} (weights, activation peak, workspace)\n",
                         format_bytes(s.kv_budget, u), ratio_text(s.gpu_memory_utilization),
                         format_bytes(s.capacity, u), format_bytes(s.non_kv, u));
    }
    out << fmt::format("           {} blocks of {} tokens ({} each); {} full-length sequence{} at once\n",
                       group_digits(s.blocks), group_digits(s.block_size), format_bytes(s.block_bytes, u),
                       group_digits(s.full_sequences), s.full_sequences == 1 ? "" : "s");
    // vLLM's own two lines (kv_cache_utils.py), worded as it logs them.
    out << fmt::format("           GPU KV cache size: {} tokens\n", group_digits(s.logged_tokens()));
    out << fmt::format("           Maximum concurrency for {} tokens per request: {:.2f}x\n",
                       group_digits(s.max_model_len), s.concurrency());
  }
  if (l.llama_cpp && l.llama_cpp->gpu) {
    const LlamaCppLayout& c = *l.llama_cpp;
    std::string cache = c.cells > 0 || c.state_cells == 0 ? "KV cache " + group_digits(c.cells) + " cells per layer"
                                                          : "";
    if (c.window_cells > 0 && c.window_cells < c.cells) {
      cache = "KV cache " + group_digits(c.cells) + " cells per global layer, " + group_digits(c.window_cells) +
              " per sliding-window one";
    }
    if (c.state_cells > 0) {
      cache += (cache.empty() ? "" : ", ") + std::string("recurrent state ") + group_digits(c.state_cells) +
               (c.state_cells == 1 ? " slot per layer" : " slots per layer");
    }
    out << fmt::format("\nllama.cpp  {} of {} layers{} on the GPU; {}; host RAM {}\n", c.gpu_layers, c.n_layers,
                       c.output_on_gpu ? " and the output layer" : "", cache,
                       format_bytes(l.devices.front().breakdown.host_total(), u));
  }
  if (!l.offloaded.empty()) {
    std::string list;
    for (const std::string& o : l.offloaded) list += (list.empty() ? "" : ", ") + o;
    out << fmt::format("\noffloaded  {}\n", list);
  }

  const std::optional<bool> fits = l.fits();
  if (fits && !l.devices.empty()) {
    const DeviceMemory& w = l.devices[l.worst()];
    const Bytes total = w.breakdown.total();
    out << '\n';
    if (*fits && l.devices.size() == 1) {
      out << fmt::format("fits       {}: {} of {} on {}, {} left\n", l.llama_cpp ? "yes" : "on every GPU",
                         format_bytes(total, u), format_bytes(*w.capacity, u), w.gpu,
                         format_bytes(Bytes(w.capacity->count() - total.count()), u));
    } else if (*fits) {
      out << fmt::format("fits       on every GPU; the fullest is {} ({} of {} on {}, {} left)\n", w.role,
                         format_bytes(total, u), format_bytes(*w.capacity, u), w.gpu,
                         format_bytes(Bytes(w.capacity->count() - total.count()), u));
    }
    if (*fits && report.estimate.verdict == Verdict::above_threshold) {
      out << fmt::format("warning: the fullest GPU is above the {:g}% threshold ({:.1f}% used)\n",
                         report.plan.threshold * 100,
                         100.0 * static_cast<double>(total.count()) / static_cast<double>(w.capacity->count()));
    }
    if (!*fits) {
      std::vector<std::string> over;
      for (const DeviceMemory& d : l.devices) {
        if (!d.fits()) {
          over.push_back(fmt::format("{} needs {} of {} on {}", d.role, format_bytes(d.breakdown.total(), u),
                                     format_bytes(*d.capacity, u), d.gpu));
        }
      }
      if (!l.offloaded.empty()) over.emplace_back("part of the model is offloaded to the CPU");
      if (l.serving && !l.serving->holds_a_sequence())
        over.emplace_back("the KV cache cannot hold one max_model_len sequence");
      std::string why;
      for (const std::string& o : over) why += (why.empty() ? "" : "; ") + o;
      out << fmt::format("fits       NO: {}\n", why);
    }
  } else if (!l.devices.empty()) {
    const DeviceMemory& w = l.devices[l.worst()];
    out << fmt::format("\nlargest    {}: {} per GPU; `gpu` NAME says whether it fits\n", w.role,
                       format_bytes(w.breakdown.total(), u));
  }
  for (const std::string& w : h.warnings) out << "warning: " << w << '\n';
  if (!l.notes.empty()) out << '\n';
  for (const std::string& n : l.notes) out << "note: " << n << '\n';
  out << (u == Units::iec ? "\nsizes in IEC units (1 GiB = 1024^3 bytes; `units` si for GB)"
                          : "\nsizes in SI units (1 GB = 1000^3 bytes; `units` iec for GiB)")
      << (options.explain ? "\n" : "; `explain` shows each device's arithmetic, `format` json exact bytes\n");
}

void layout_json(const EstimateReport& r, std::ostream& out) {
  const LayoutEstimate& l = *r.estimate.layout;
  ordered_json j = header_json(estimate_header(r));
  j["layout"] = {{"engine", l.engine},          {"description", l.description},    {"world_size", l.world_size},
                 {"tensor_parallel", l.tensor}, {"pipeline_parallel", l.pipeline}, {"data_parallel", l.data},
                 {"sharding", l.sharding}};
  ordered_json devices = ordered_json::array();
  for (const DeviceMemory& d : l.devices) {
    ordered_json dj;
    dj["role"] = d.role;
    dj["count"] = d.count;
    dj["holds"] = d.holds;
    add_breakdown_json(dj, d.breakdown);
    if (d.capacity) {
      dj["device"] = {{"name", d.gpu}, {"memory_bytes", d.capacity->count()}};
      dj["fits"] = d.fits();
    }
    devices.push_back(dj);
  }
  j["devices"] = devices;
  if (!l.devices.empty()) {
    j["worst_device"] = l.worst();
    // The fullest device's figures, as a single-device estimate reports them.
    const Breakdown& fullest = l.devices[l.worst()].breakdown;
    j["allocated_bytes"] = fullest.allocated().count();
    j["reserved_bytes"] = fullest.reserved().count();
    j["total_bytes"] = l.devices[l.worst()].breakdown.total().count();  // what the fullest GPU holds
    add_peak_json(j, fullest);
  }
  if (l.serving) {
    const ServingCapacity& s = *l.serving;
    j["serving"] = {{"engine", "vllm"},
                    {"gpu_memory_utilization", s.gpu_memory_utilization},
                    {"capacity_bytes", s.capacity.count()},
                    {"requested_bytes", s.requested.count()},
                    {"non_kv_bytes", s.non_kv.count()},
                    {"kv_budget_bytes", s.kv_budget.count()},
                    {"kv_budget_given", s.kv_given},
                    {"shortfall_bytes", s.shortfall.count()},
                    {"block_size", s.block_size},
                    {"block_bytes", s.block_bytes.count()},
                    {"blocks", s.blocks},
                    {"tokens", s.tokens},
                    {"logged_tokens", s.logged_tokens()},
                    {"max_model_len", s.max_model_len},
                    {"full_sequences", s.full_sequences},
                    {"kv_groups", s.kv_groups},
                    {"per_request_blocks", s.per_request_blocks},
                    {"state_bytes", s.state_bytes.count()}};
  }
  if (l.llama_cpp) {
    const LlamaCppLayout& c = *l.llama_cpp;
    j["llama_cpp"] = {{"n_ctx", c.n_ctx},
                      {"cells", c.cells},
                      {"state_cells", c.state_cells},
                      {"window_cells", c.window_cells},
                      {"sequences", c.n_seq},
                      {"n_ubatch", c.n_ubatch},
                      {"gpu_layers", c.gpu_layers},
                      {"n_layers", c.n_layers},
                      {"output_on_gpu", c.output_on_gpu},
                      {"gpu", c.gpu},
                      {"cache_type_k", c.cache_type_k},
                      {"cache_type_v", c.cache_type_v},
                      {"flash_attn", c.flash_attn},
                      {"kv_unified", c.kv_unified},
                      {"llama_server", c.server},
                      {"outputs", c.outputs},
                      {"draft", c.draft.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.draft)},
                      {"n_cpu_moe", c.n_cpu_moe},
                      {"host_bytes", l.devices.empty() ? 0 : l.devices.front().breakdown.host_total().count()}};
  }
  if (!l.offloaded.empty()) j["offloaded"] = l.offloaded;
  j["notes"] = l.notes;
  if (r.estimate.verdict) {
    j["threshold"] = r.plan.threshold;
    j["verdict"] = to_string(*r.estimate.verdict);
  }
  if (const std::optional<bool> fits = l.fits()) j["fits"] = *fits;
  emit(j, out);
}

}  // namespace memplan::detail
