// The web calculator's entry points (WebAssembly, embind): the core, the built-in tables and
// the config.json importer, called by web/site/app.js with JSON text in and JSON text out.
// An estimate is the CLI's `memplan estimate MODEL ... --format json` for the same plan
// (the same report, rendered for the command line: messages name options as --flags).
#include <emscripten/bind.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "memplan/core/error.hpp"
#include "memplan/core/version.hpp"
#include "memplan/frontend/command_line.hpp"
#include "memplan/frontend/device.hpp"
#include "memplan/io/gpu_table.hpp"
#include "memplan/io/hf_config.hpp"
#include "memplan/io/model_file.hpp"
#include "memplan/report/estimate.hpp"
#include "memplan/report/gpus.hpp"
#include "memplan/report/models.hpp"

namespace memplan::web {

namespace {

using nlohmann::json;

template <class Report>
json json_of(const Report& report) {
  std::ostringstream out;
  print(report, PrintOptions{OutputFormat::json, Units::iec, false}, out);
  return json::parse(render_for_cli(out.str()));
}

// An option's value from the page as the command line's words: a string, a number, a list
// of them, or true for a flag that is set.
std::vector<std::string> words_of(const std::string& name, const json& value) {
  if (value.is_boolean()) return {};
  if (value.is_string()) return {value.get<std::string>()};
  if (value.is_number_integer()) return {std::to_string(value.get<std::int64_t>())};
  if (value.is_number()) return {value.dump()};
  if (value.is_array()) {
    std::vector<std::string> out;
    for (const json& v : value) {
      const std::vector<std::string> one = words_of(name, v);
      out.insert(out.end(), one.begin(), one.end());
    }
    return out;
  }
  throw Error(ErrorKind::invalid_input, "`" + name + "` takes a word, a number or a list", name);
}

json estimate_of(const json& request) {
  const ModelEntry model = request.contains("config")
                               ? parse_hf_config(request.at("config").dump(), "config.json", "model").entry
                               : load_builtin_model(request.value("model", std::string(default_model_name)));
  std::vector<GivenOption> given;
  const json options = request.value("options", json::object());
  for (const auto& [name, value] : options.items()) {
    const OptionDef* def = find_option(name);
    if (def == nullptr) throw Error(ErrorKind::invalid_input, "no option is named '" + name + "'", name);
    if (value.is_boolean() && !value.get<bool>()) continue;  // a flag that is not set
    given.push_back({def, words_of(name, value)});
  }
  PlanSettings settings = settings_from(given);
  // The page has no files: a draft model (llama-server -md) is a built-in, and a vision tower's
  // file (--mmproj) is the command line's.
  if (!settings.layout.draft.empty()) settings.draft_model = load_builtin_model(settings.layout.draft).spec;
  if (!settings.layout.mmproj.empty()) {
    throw Error(ErrorKind::invalid_input,
                "the page reads no files: a vision tower's .gguf (mmproj) is priced by the memplan command line",
                "mmproj");
  }
  DeviceChoice device;
  choose_from_table(device, DeviceArgs{request.value("gpu", std::string())}, settings, [] { return builtin_gpus(); });
  Plan plan = bind(model.spec, settings, device);
  PlanEstimate figures = estimate(plan);
  return json_of(EstimateReport{"built-in", std::move(plan), std::move(figures)});
}

}  // namespace

// Returns the estimate for a request {"model": NAME | "config": {config.json}, "gpu": NAME
// or a capacity, "options": {name: value}}, or {"error": message, "key": option}.
std::string estimate_json(const std::string& request) {
  try {
    return estimate_of(json::parse(request)).dump();
  } catch (const Error& e) {
    const OptionDef* o = find_option(e.key());
    return json{{"error", render_for_cli(e.what())}, {"key", o != nullptr ? flag_of(*o) : e.key()}}.dump();
  } catch (const json::parse_error& e) {
    return json{{"error", std::string("the request is not valid JSON: ") + e.what()}, {"key", ""}}.dump();
  } catch (const json::exception& e) {
    return json{{"error", std::string("internal error: ") + e.what()}, {"key", ""}}.dump();
  }
}

// Returns what the form offers: the built-in models and GPUs (as `memplan models` and
// `memplan gpus` print them), the workloads, the option table and the version.
std::string catalog_json() {
  ModelsReport models;
  for (const std::string& name : builtin_model_names()) models.models.push_back(load_builtin_model(name));
  json options = json::array();
  for (const OptionDef& o : plan_options()) {
    options.push_back({{"key", o.key},
                       {"flag", flag_of(o)},
                       {"kind", o.kind == OptionKind::flag     ? "flag"
                                : o.kind == OptionKind::count  ? "count"
                                : o.kind == OptionKind::number ? "number"
                                : o.kind == OptionKind::list   ? "list"
                                                               : "text"},
                       {"group", o.group},
                       {"help", render_for_cli(o.help)},
                       {"default", o.default_text},
                       {"applies", applies_text(o)}});
  }
  return json{{"version", version()},
              {"models", json_of(models).at("models")},
              {"gpus", json_of(GpusReport{builtin_gpus()}).at("gpus")},
              {"workloads", workload_names()},
              {"options", options}}
      .dump();
}

}  // namespace memplan::web

EMSCRIPTEN_BINDINGS(memplan) {
  emscripten::function("estimate", &memplan::web::estimate_json);
  emscripten::function("catalog", &memplan::web::catalog_json);
}
