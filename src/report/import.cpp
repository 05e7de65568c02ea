// memplan import: a config.json's model file and a checkpoint's inventory, as tables and JSON.
#include "memplan/report/import.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/text.hpp"

namespace memplan {

namespace {

using detail::ordered_json;

// ---------------------------------------------------------------- a config.json

void table(const ImportReport& r, std::ostream& out) {
  if (r.output.empty()) {  // the model file itself, so that `memplan import config.json > model.yaml` works
    out << r.yaml;
    return;
  }
  const ModelSpec& spec = r.imported.entry.spec;
  out << fmt::format("imported   {} (model_type {})\n", r.input, r.imported.model_type);
  out << fmt::format("wrote      {}: {} ({}, {} parameters)\n", r.output, spec.name, to_string(spec.family),
                     group_digits(count_parameters(spec)));
  if (!r.imported.notes.empty()) out << '\n';
  for (const std::string& n : r.imported.notes) out << "note: " << n << '\n';
}

void json(const ImportReport& r, std::ostream& out) {
  const ModelSpec& spec = r.imported.entry.spec;
  ordered_json j;
  j["schema_version"] = json_schema_version;
  j["import"] = {{"input", r.input},
                 {"output", r.output.empty() ? ordered_json() : ordered_json(r.output)},
                 {"model_type", r.imported.model_type},
                 {"model",
                  {{"name", spec.name}, {"family", to_string(spec.family)}, {"params", count_parameters(spec)}}},
                 {"notes", r.imported.notes},
                 {"yaml", r.yaml}};
  detail::emit(j, out);
}

// ---------------------------------------------------------------- a checkpoint

void table(const CheckpointReport& r, const PrintOptions& options, std::ostream& out) {
  const Units u = options.units;
  const SafetensorsInventory& inv = r.inventory;
  const Bytes bytes(inv.bytes);
  out << fmt::format("checkpoint {} ({} file{}, headers only)\n", inv.path, inv.files.size(),
                     inv.files.size() == 1 ? "" : "s");
  out << fmt::format("tensors    {}: {} elements, {} of tensor data ({} on disk)\n", group_digits(inv.tensors.size()),
                     group_digits(inv.elements), format_bytes(bytes, u), format_bytes(Bytes(inv.file_bytes), u));
  if (!inv.metadata.empty()) {
    std::string text;
    for (const auto& [key, value] : inv.metadata)
      text += (text.empty() ? "" : ", ") + printable(key) + "=" + printable(value);
    out << fmt::format("metadata   {}\n", text);
  }

  const std::string row = "{:<8}  {:>7}  {:>16}  {:>11}  {:>6}\n";
  out << '\n' << fmt::format(fmt::runtime(row), "dtype", "tensors", "elements", "memory", "share");
  for (const SafetensorsDtypeTotal& d : inv.dtypes) {
    out << fmt::format(fmt::runtime(row), d.dtype, group_digits(d.tensors), group_digits(d.elements),
                       format_bytes(Bytes(d.bytes), u), detail::percent(Bytes(d.bytes), bytes));
  }
  out << std::string(55, '-') << '\n';
  out << fmt::format(fmt::runtime(row), "total", group_digits(inv.tensors.size()), group_digits(inv.elements),
                     format_bytes(bytes, u), "100%");

  if (r.list_tensors && !inv.tensors.empty()) {
    std::size_t name_width = 6;
    for (const SafetensorsTensor& t : inv.tensors) name_width = std::max(name_width, printable(t.name).size());
    const bool shards = inv.files.size() > 1;
    out << '\n'
        << fmt::format("{:<{}}  {:<8}  {:<20}  {:>14}  {:>11}{}\n", "tensor", name_width, "dtype", "shape", "elements",
                       "memory", shards ? "  file" : "");
    for (const SafetensorsTensor& t : inv.tensors) {
      std::string shape = "[";
      for (std::size_t i = 0; i < t.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(t.shape[i]);
      shape += "]";
      out << fmt::format("{:<{}}  {:<8}  {:<20}  {:>14}  {:>11}{}\n", printable(t.name), name_width, t.dtype, shape,
                         group_digits(t.elements), format_bytes(Bytes(t.bytes), u),
                         shards ? "  " + t.file.substr(t.file.find_last_of('/') + 1) : "");
    }
  }

  if (r.comparison && r.architecture) {
    const CheckpointComparison& c = *r.comparison;
    out << '\n'
        << fmt::format("architecture  {:>16} parameters: {} ({})\n", group_digits(c.architecture_params),
                       r.architecture->spec.name, r.architecture->origin);
    std::uint64_t set_aside = 0;
    for (const CheckpointExtra& e : c.extra) {
      out << fmt::format("{:<12}  {:>16} in {} tensor{} {}: {}\n", e.kind, group_digits(e.elements),
                         group_digits(e.tensors), e.tensors == 1 ? "" : "s", printable(e.pattern), e.why);
      set_aside += e.elements;
    }
    out << fmt::format("checkpoint    {:>16} elements", group_digits(c.checkpoint_elements));
    const std::string aside = set_aside > 0 ? fmt::format(" once the {} elements that are not parameters are set aside",
                                                          group_digits(set_aside))
                                            : "";
    if (c.compared_elements == c.architecture_params) {
      out << ": matches the architecture exactly" << aside << '\n';
    } else if (c.compared_elements > c.architecture_params) {
      out << fmt::format(": {} more than the architecture counts{} (unexplained)\n",
                         group_digits(c.compared_elements - c.architecture_params), aside);
    } else {
      out << fmt::format(": {} fewer than the architecture counts{} (unexplained)\n",
                         group_digits(c.architecture_params - c.compared_elements), aside);
    }
  }
  if (!r.notes.empty()) out << '\n';
  for (const std::string& n : r.notes) out << "note: " << n << '\n';
  out << (u == Units::iec ? "\nsizes in IEC units (1 GiB = 1024^3 bytes); `format` json gives exact bytes\n"
                          : "\nsizes in SI units (1 GB = 1000^3 bytes); `format` json gives exact bytes\n");
}

void json(const CheckpointReport& r, std::ostream& out) {
  const SafetensorsInventory& inv = r.inventory;
  ordered_json dtypes = ordered_json::array();
  for (const SafetensorsDtypeTotal& d : inv.dtypes) {
    dtypes.push_back({{"dtype", d.dtype}, {"tensors", d.tensors}, {"elements", d.elements}, {"bytes", d.bytes}});
  }
  ordered_json metadata = ordered_json::object();
  for (const auto& [key, value] : inv.metadata) metadata[key] = value;
  ordered_json c;
  c["input"] = inv.path;
  c["files"] = inv.files;
  c["tensors"] = inv.tensors.size();
  c["elements"] = inv.elements;
  c["bytes"] = inv.bytes;
  c["file_bytes"] = inv.file_bytes;
  c["dtypes"] = dtypes;
  c["metadata"] = metadata;
  if (r.list_tensors && !inv.tensors.empty()) {
    ordered_json list = ordered_json::array();
    for (const SafetensorsTensor& t : inv.tensors) {
      list.push_back({{"name", t.name},
                      {"dtype", t.dtype},
                      {"shape", t.shape},
                      {"elements", t.elements},
                      {"bytes", t.bytes},
                      {"file", t.file}});
    }
    c["tensor_list"] = list;
  }
  if (r.comparison && r.architecture) {
    const CheckpointComparison& k = *r.comparison;
    ordered_json extra = ordered_json::array();
    for (const CheckpointExtra& e : k.extra) {
      extra.push_back(
          {{"kind", e.kind}, {"pattern", e.pattern}, {"tensors", e.tensors}, {"elements", e.elements}, {"why", e.why}});
    }
    c["comparison"] = {{"model", r.architecture->spec.name},
                       {"origin", r.architecture->origin},
                       {"architecture_params", k.architecture_params},
                       {"checkpoint_elements", k.checkpoint_elements},
                       {"not_parameters", extra},
                       {"compared_elements", k.compared_elements},
                       {"matches", k.matches()}};
  }
  c["notes"] = r.notes;
  ordered_json j;
  j["schema_version"] = json_schema_version;
  j["checkpoint"] = c;
  detail::emit(j, out);
}

}  // namespace

void print(const ImportReport& report, const PrintOptions& options, std::ostream& out) {
  require_format<ImportReport>(options.format);
  if (options.format == OutputFormat::json) return json(report, out);
  table(report, out);
}

void print(const CheckpointReport& report, const PrintOptions& options, std::ostream& out) {
  require_format<CheckpointReport>(options.format);
  if (options.format == OutputFormat::json) return json(report, out);
  table(report, options, out);
}

}  // namespace memplan
