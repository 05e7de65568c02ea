#include <nlohmann/json.hpp>

#include "memplan/core/text.hpp"
#include "printers.hpp"

namespace memplan::detail {

using nlohmann::ordered_json;

namespace {

ordered_json tflops_json(const GpuSpec& g) {
  ordered_json j = ordered_json::object();
  for (const auto& [format, value] : g.dense_tflops) j[to_string(format)] = value;
  return j;
}

void emit(const ordered_json& j, std::ostream& out) { out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n'; }

}  // namespace

void JsonPrinter::models(const std::vector<ModelRow>& rows, std::ostream& out) const {
  ordered_json list = ordered_json::array();
  for (const ModelRow& m : rows) {
    ordered_json j{{"name", m.name},         {"family", m.family},       {"params", m.params},
                   {"n_layers", m.n_layers}, {"d_model", m.d_model},     {"n_heads", m.n_heads},
                   {"n_kv_heads", m.n_kv_heads}, {"vocab_size", m.vocab_size}, {"max_seq_len", m.max_seq_len}};
    if (m.published_params) j["published_params"] = *m.published_params;
    j["source"] = m.source;
    list.push_back(j);
  }
  emit({{"schema_version", json_schema_version}, {"models", list}}, out);
}

void JsonPrinter::gpus(const std::vector<GpuSpec>& gpus, std::ostream& out) const {
  ordered_json list = ordered_json::array();
  for (const GpuSpec& g : gpus) {
    ordered_json paths = ordered_json::array();
    for (const Format f : g.tensor_paths) paths.push_back(to_string(f));
    list.push_back({{"name", g.name},
                    {"aliases", g.aliases},
                    {"display", g.display},
                    {"memory_bytes", g.memory.count()},
                    {"compute_capability", to_string(g.compute_capability)},
                    {"tensor_paths", paths},
                    {"bandwidth_gbs", g.bandwidth_gbs},
                    {"dense_tflops", tflops_json(g)},
                    {"source", g.source},
                    {"memory_source", g.memory_source}});
  }
  emit({{"schema_version", json_schema_version}, {"gpus", list}}, out);
}

void JsonPrinter::resolve(const ResolveReport& r, std::ostream& out) const {
  const Resolution& res = r.resolution;
  ordered_json chain = ordered_json::array();
  for (const ResolveStep& step : res.chain) {
    chain.push_back({{"precision", to_string(step.format)}, {"accepted", step.accepted}, {"reason", step.reason}});
  }
  ordered_json device{{"kind", to_string(r.device.kind)}, {"name", r.device.name}};
  device["compute_capability"] =
      r.device.kind == DeviceKind::gpu ? ordered_json(to_string(r.device.compute_capability)) : ordered_json(nullptr);
  device["source"] = r.device_source;
  ordered_json j;
  j["schema_version"] = json_schema_version;
  j["policy"] = res.policy;
  j["device"] = device;
  j["precision"] = {{"requested", res.requested},
                    {"resolved", to_string(res.precision)},
                    {"description", describe(res.precision)},
                    {"reason", res.reason},
                    {"warnings", res.warnings},
                    {"chain", chain},
                    {"fell_back", res.fell_back},
                    {"engine_refuses", res.engine_refuses}};
  emit(j, out);
}

void JsonPrinter::probe(const ProbeReport& r, std::ostream& out) const {
  const auto bytes = [](const std::optional<Bytes>& b) { return b ? ordered_json(b->count()) : ordered_json(nullptr); };
  ordered_json devices = ordered_json::array();
  for (const ProbeDeviceRow& d : r.devices) {
    ordered_json processes = nullptr;
    if (d.processes_known) {
      processes = ordered_json::array();
      for (const ProbeProcessRow& p : d.processes) {
        processes.push_back({{"pid", p.pid}, {"name", p.name}, {"type", p.type}, {"used_bytes", bytes(p.used_memory)}});
      }
    }
    devices.push_back({{"index", d.index},
                       {"name", d.name},
                       {"uuid", d.uuid},
                       {"compute_capability", d.compute_capability},
                       {"multiprocessors", d.multiprocessors},
                       {"memory",
                        {{"total_bytes", d.total_memory.count()},
                         {"free_bytes", bytes(d.free_memory)},
                         {"used_bytes", bytes(d.used_memory)}}},
                       {"memory_bus_width_bits", d.memory_bus_width_bits},
                       {"memory_clock_khz", d.memory_clock_khz},
                       {"bandwidth_gbs", d.bandwidth_gbs},
                       {"processes", processes},
                       {"notes", d.notes}});
  }
  ordered_json j;
  j["schema_version"] = json_schema_version;
  j["status"] = r.status;
  j["reason"] = r.reason;
  j["driver"] = {{"version", r.driver_version}, {"cuda_version", r.cuda_version}};
  j["devices"] = devices;
  j["host"] = {{"cpu_model", r.cpu_model},
               {"logical_cores", r.logical_cores},
               {"physical_cores", r.physical_cores},
               {"usable_cores", r.usable_cores},
               {"ram_total_bytes", bytes(r.ram_total)},
               {"ram_available_bytes", bytes(r.ram_available)},
               {"memory_limit_bytes", bytes(r.memory_limit)}};
  j["environment"] = {{"kind", r.environment},
                      {"evidence", r.environment_evidence},
                      {"also", r.environment_also},
                      {"detail", r.environment_detail}};
  j["warnings"] = r.warnings;
  j["notes"] = r.notes;
  emit(j, out);
}

}  // namespace memplan::detail

// ------------------------- memplan measure / calibrate (issue 6) -------------------------
namespace memplan::detail {

void JsonPrinter::measurement(const MeasureReport& r, std::ostream& out) const {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const MeasureRow& row : r.rows) {
    nlohmann::ordered_json j{{"variant", row.variant}, {"size", row.size}, {"shape", row.shape},
                             {"estimate_bytes", row.estimate.count()}};
    j["measured_bytes"] = row.measured ? nlohmann::ordered_json(row.measured->count()) : nlohmann::ordered_json();
    j["ratio"] = row.measured && row.estimate.count()
                     ? nlohmann::ordered_json(static_cast<double>(row.measured->count()) /
                                              static_cast<double>(row.estimate.count()))
                     : nlohmann::ordered_json();
    j["seconds_best"] = row.seconds_best;
    j["seconds_median"] = row.seconds_median;
    if (!row.note.empty()) j["note"] = row.note;
    rows.push_back(j);
  }
  nlohmann::ordered_json j;
  j["schema_version"] = json_schema_version;
  j["measure"] = {{"kernel", r.kernel},         {"device", r.device},   {"dtype", r.dtype},
                  {"parameters", r.parameters}, {"size", r.size_label}, {"method", r.method},
                  {"repeats", r.repeats},       {"notes", r.notes},     {"rows", rows}};
  out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

void JsonPrinter::calibration(const CalibrationReport& r, std::ostream& out) const {
  nlohmann::ordered_json figures = nlohmann::ordered_json::array();
  for (const CalibrationRow& f : r.figures) {
    figures.push_back({{"name", f.name}, {"bytes", f.bytes.count()}, {"measured", f.measured}, {"source", f.source}});
  }
  nlohmann::ordered_json j;
  j["schema_version"] = json_schema_version;
  j["calibration"] = {{"calibrated", r.calibrated}, {"status", r.status}};
  if (!r.reason.empty()) j["calibration"]["reason"] = r.reason;
  if (r.calibrated) {
    j["calibration"]["gpu"] = r.gpu;
    j["calibration"]["driver"] = r.driver;
  }
  if (!r.cache_path.empty()) j["calibration"]["cache_path"] = r.cache_path;
  j["calibration"]["figures"] = figures;
  out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

}  // namespace memplan::detail

namespace memplan::detail {

void JsonPrinter::hooks(const HooksReport& r, std::ostream& out) const {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const HookRow& row : r.rows) {
    rows.push_back({{"name", row.name}, {"count", row.count}, {"shape", row.shape},
                    {"bytes_each", row.bytes_each.count()}, {"bytes", row.bytes.count()}});
  }
  nlohmann::ordered_json j{{"schema_version", json_schema_version},
                           {"model", r.model},
                           {"batch_size", r.batch},
                           {"seq_len", r.seq_len},
                           {"dtype", r.dtype},
                           {"hooks", rows},
                           {"selected_hooks", r.selected_hooks},
                           {"all_hooks", r.all_hooks},
                           {"selected_bytes", r.selected_bytes.count()},
                           {"all_bytes", r.all_bytes.count()}};
  out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

void JsonPrinter::attention_table(const AttentionTableReport& r, std::ostream& out) const {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const AttentionTableRow& row : r.rows) {
    nlohmann::ordered_json bytes = nlohmann::ordered_json::array();
    for (const Bytes b : row.bytes) bytes.push_back(b.count());
    rows.push_back({{"variant", row.variant}, {"bytes", bytes}});
  }
  nlohmann::ordered_json j{{"schema_version", json_schema_version},
                           {"batch_size", r.batch},
                           {"heads", r.heads},
                           {"head_dim", r.head_dim},
                           {"dtype", r.dtype},
                           {"chunk", r.chunk},
                           {"include_inputs", r.include_inputs},
                           {"seq_lens", r.seq_lens},
                           {"rows", rows}};
  out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

}  // namespace memplan::detail

// ------------------------------ memplan import (issue 7) ------------------------------
namespace memplan::detail {

void JsonPrinter::imported_model(const ImportReport& r, std::ostream& out) const {
  nlohmann::ordered_json j;
  j["schema_version"] = json_schema_version;
  j["import"] = {{"input", r.input},
                 {"output", r.output.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(r.output)},
                 {"model_type", r.model_type},
                 {"model", {{"name", r.model}, {"family", r.family}, {"params", r.params}}},
                 {"notes", r.notes},
                 {"yaml", r.yaml}};
  out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

void JsonPrinter::checkpoint(const CheckpointReport& r, std::ostream& out) const {
  using nlohmann::ordered_json;
  ordered_json dtypes = ordered_json::array();
  for (const CheckpointDtypeRow& d : r.dtypes) {
    dtypes.push_back({{"dtype", d.dtype}, {"tensors", d.tensors}, {"elements", d.elements}, {"bytes", d.bytes.count()}});
  }
  ordered_json metadata = ordered_json::object();
  for (const auto& [key, value] : r.metadata) metadata[key] = value;
  ordered_json c;
  c["input"] = r.input;
  c["files"] = r.files;
  c["tensors"] = r.tensors;
  c["elements"] = r.elements;
  c["bytes"] = r.bytes.count();
  c["file_bytes"] = r.file_bytes.count();
  c["dtypes"] = dtypes;
  c["metadata"] = metadata;
  if (!r.tensor_rows.empty()) {
    ordered_json list = ordered_json::array();
    for (const CheckpointTensorRow& t : r.tensor_rows) {
      list.push_back({{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}, {"elements", t.elements},
                      {"bytes", t.bytes.count()}, {"file", t.file}});
    }
    c["tensor_list"] = list;
  }
  if (r.comparison) {
    const CheckpointComparisonReport& k = *r.comparison;
    ordered_json extra = ordered_json::array();
    for (const CheckpointExtraRow& e : k.extra) {
      extra.push_back({{"kind", e.kind}, {"pattern", e.pattern}, {"tensors", e.tensors}, {"elements", e.elements},
                       {"why", e.why}});
    }
    c["comparison"] = {{"model", k.model},
                       {"origin", k.model_origin},
                       {"architecture_params", k.architecture_params},
                       {"checkpoint_elements", k.checkpoint_elements},
                       {"not_parameters", extra},
                       {"compared_elements", k.compared_elements},
                       {"matches", k.compared_elements == k.architecture_params}};
  }
  c["notes"] = r.notes;
  ordered_json j;
  j["schema_version"] = json_schema_version;
  j["checkpoint"] = c;
  out << j.dump(2, ' ', false, ordered_json::error_handler_t::replace) << '\n';
}

}  // namespace memplan::detail
