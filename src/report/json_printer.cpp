#include <nlohmann/json.hpp>

#include "memplan/core/text.hpp"
#include "printers.hpp"

namespace memplan::detail {

using nlohmann::ordered_json;

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

void add_breakdown_json(ordered_json& j, const Breakdown& b, bool allocator_figures) {
  ordered_json components = ordered_json::array();
  for (const Item& item : b.components) components.push_back(item_json(item));
  j["components"] = components;
  j["total_bytes"] = b.total().count();
  if (allocator_figures && b.find("overhead") != nullptr) {
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

namespace {

ordered_json tflops_json(const GpuSpec& g) {
  ordered_json j = ordered_json::object();
  for (const auto& [format, value] : g.dense_tflops) j[to_string(format)] = value;
  return j;
}

void emit(const ordered_json& j, std::ostream& out) { out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n'; }

}  // namespace

void JsonPrinter::estimate(const EstimateReport& r, std::ostream& out) const {
  ordered_json j;
  j["schema_version"] = json_schema_version;
  j["model"] = {{"name", r.model}, {"family", r.family}, {"origin", r.model_origin}, {"params", r.params}};
  j["workload"] = {{"kind", r.workload_kind}};
  if (r.batch > 0) {
    j["workload"]["batch_size"] = r.batch;
    j["workload"]["seq_len"] = r.seq_len;
    if (r.new_tokens > 0) j["workload"]["new_tokens"] = r.new_tokens;
  }
  j["precision"] = {{"requested", r.precision_requested},
                    {"resolved", r.precision_resolved},
                    {"warnings", r.warnings}};
  add_breakdown_json(j, r.breakdown, /*allocator_figures=*/true);
  if (r.device) {
    j["device"] = {{"name", r.device->name}, {"memory_bytes", r.device->memory.count()}};
  }
  if (r.verdict) {
    j["threshold"] = r.threshold;
    j["verdict"] = to_string(*r.verdict);
    j["fits"] = *r.verdict != Verdict::does_not_fit;  // schema 1: within the device's memory; `verdict` says more
  }
  if (r.time) {
    ordered_json parts = ordered_json::array();
    for (const TimePart& p : r.time->parts) {
      parts.push_back({{"name", p.name}, {"seconds", p.seconds}, {"flops", p.flops}, {"precision", to_string(p.format)},
                       {"peak_tflops", p.peak_tflops}, {"efficiency", p.efficiency}, {"formula", p.formula},
                       {"assumption", p.assumption}});
    }
    j["time"] = {{"seconds", r.time->seconds}, {"device", r.time->device}, {"assumption", r.time->assumption},
                 {"parts", parts}};
  }
  emit(j, out);
}

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

void JsonPrinter::check(const CheckReport& r, std::ostream& out) const {
  ordered_json plans = ordered_json::array();
  bool all_fit = true;
  for (const PlanCheckRow& p : r.plans) {
    ordered_json j;
    j["plan"] = p.plan;
    if (!p.error.empty()) {
      j["error"] = p.error;
      all_fit = false;
      plans.push_back(j);
      continue;
    }
    j["model"] = p.model;
    j["workload"] = p.workload_kind;
    j["precision"] = p.precision;
    j["budget"] = p.budget;
    if (!p.device.empty()) j["device"] = p.device;
    j["total_bytes"] = p.total.count();
    j["budget_bytes"] = p.budget_bytes.count();
    j["threshold"] = p.threshold;
    j["limit_bytes"] = p.limit.count();
    j["verdict"] = to_string(p.verdict);
    j["fits"] = p.fits;
    j["notes"] = p.notes;
    all_fit = all_fit && p.fits;
    plans.push_back(j);
  }
  ordered_json j;
  j["schema_version"] = json_schema_version;
  j["plans"] = plans;
  j["all_fit"] = all_fit;
  out << j.dump(2, ' ', false, ordered_json::error_handler_t::replace) << '\n';
}

void JsonPrinter::fit(const FitReport& r, std::ostream& out) const {
  ordered_json j;
  j["schema_version"] = json_schema_version;
  j["model"] = r.model;
  j["workload"] = r.workload_kind;
  j["gpu"] = r.gpu;
  j["precision"] = r.precision;
  j["vary"] = r.vary;
  if (!r.option.empty()) j["option"] = r.option;
  j["fixed"] = r.fixed;
  j["value"] = r.value;
  if (r.given_verdict) j["given"] = {{"value", r.given_value}, {"verdict", to_string(*r.given_verdict)}};
  j["cap"] = r.cap;
  j["threshold"] = r.threshold;
  j["budget_bytes"] = r.budget_bytes.count();
  j["limit_bytes"] = r.limit.count();
  if (r.value > 0) j["total_bytes"] = r.total.count();
  if (r.next_total) j["next_total_bytes"] = r.next_total->count();
  if (r.next_overflows) j["next_overflows"] = true;
  if (!r.binding.empty()) j["binding"] = {{"name", r.binding}, {"bytes", r.binding_bytes.count()}};
  out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

}  // namespace memplan::detail
