// memplan._memplan: the planning commands for Python, over memplan::frontend. Each call
// returns the report as the CLI's JSON text (render_for_cli: `memplan ... --format json`
// prints the same bytes); memplan/__init__.py turns keyword arguments into option words
// and the text into objects. Errors become memplan.InputError (ValueError) or
// memplan.InternalError (RuntimeError), with the option named as Python names it.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <iostream>
#include <sstream>

#include "memplan/core/error.hpp"
#include "memplan/core/version.hpp"
#include "memplan/frontend/requests.hpp"
#include "memplan/io/hf_config.hpp"

namespace py = pybind11;

namespace memplan::python {

namespace {

// The exception classes, created once at import (owned by the module, which outlives them).
PyObject* input_error = nullptr;
PyObject* internal_error = nullptr;

// A message as Python names options: the keyword argument (`batch_size` -> batch).
std::string render_for_python(std::string_view text) {
  return render_option_refs(text, [](std::string_view key) -> std::optional<std::string> {
    if (key == "kind") return std::string("workload");
    if (key == "as") return std::string("as_model_type");
    if (key == "gpu" || key == "probe" || key == "cpu" || key == "vary") return std::string(key);
    if (const OptionDef* o = find_option(key)) return std::string(o->flag);
    return std::nullopt;
  });
}

template <class Report>
std::string json_of(const Report& report) {
  std::ostringstream out;
  print(report, PrintOptions{OutputFormat::json, Units::iec, false}, out);
  return render_for_cli(out.str());
}

void say_fetch(const std::string& what) { std::cerr << "memplan: " << what << std::endl; }

// A model as the CLI names one, or the text of a config.json (model_json, from a dict).
ModelEntry model_of(const std::string& model, const std::string& model_json, const std::string& as) {
  if (!model_json.empty()) return parse_hf_config(model_json, "<config dict>", "model", as).entry;
  return find_model(model, say_fetch, as);
}

// Option words by name (a key or its flag name) in the table's terms.
std::vector<GivenOption> given_of(const std::vector<std::pair<std::string, std::vector<std::string>>>& options) {
  std::vector<GivenOption> out;
  for (const auto& [name, words] : options) {
    const OptionDef* def = find_option(name);
    if (def == nullptr) throw Error(ErrorKind::invalid_input, "no option is named '" + name + "'", name);
    out.push_back({def, words});
  }
  return out;
}

using Options = std::vector<std::pair<std::string, std::vector<std::string>>>;

py::list option_table() {
  py::list out;
  for (const OptionDef& o : plan_options()) {
    static constexpr const char* kKinds[] = {"flag", "count", "number", "text", "list"};
    py::dict d;
    d["key"] = std::string(o.key);
    d["name"] = std::string(o.flag);
    d["kind"] = kKinds[static_cast<int>(o.kind)];
    d["group"] = std::string(o.group);
    d["help"] = render_for_python(o.help);
    d["default"] = std::string(o.default_text);
    d["applies"] = applies_text(o);
    d["negated"] = o.negated;
    out.append(d);
  }
  return out;
}

}  // namespace

void define_module(py::module_& m) {
  m.doc() = "memplan's planning commands; use the memplan package, not this module";
  input_error = PyErr_NewExceptionWithDoc(
      "memplan.InputError",
      "A model, option or file memplan cannot use; the message names where (file:line:col and key, or the option).",
      PyExc_ValueError, nullptr);
  internal_error = PyErr_NewExceptionWithDoc("memplan.InternalError",
                                             "A bug in memplan or an unexpected failure of the environment.",
                                             PyExc_RuntimeError, nullptr);
  m.add_object("InputError", py::handle(input_error));
  m.add_object("InternalError", py::handle(internal_error));
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      PyObject* type = e.kind() == ErrorKind::internal ? internal_error : input_error;
      const py::object error = py::reinterpret_steal<py::object>(
          PyObject_CallFunction(type, "s", render_for_python(e.what()).c_str()));
      if (!error) return;  // the call set its own error
      std::string key = e.key();
      if (const OptionDef* o = find_option(key)) key = std::string(o->flag);
      error.attr("key") = key;
      PyErr_SetObject(type, error.ptr());
    }
  });

  m.attr("__version__") = version();
  m.def("option_table", &option_table, "The option table: key, name, kind, group, help, default, applies");
  m.def(
      "estimate",
      [](const std::string& model, const std::string& model_json, const std::string& as, const DeviceArgs& device,
         const Options& options) {
        const ModelEntry entry = model_of(model, model_json, as);
        return json_of(estimate_report(entry, settings_from(given_of(options)), device));
      },
      py::arg("model"), py::arg("model_json"), py::arg("as_model_type"), py::arg("device"), py::arg("options"));
  m.def(
      "fit",
      [](const std::string& model, const std::string& model_json, const std::string& as, const DeviceArgs& device,
         const std::string& vary, const Options& options) {
        const ModelEntry entry = model_of(model, model_json, as);
        return json_of(fit_report(entry, settings_from(given_of(options)), device, vary));
      },
      py::arg("model"), py::arg("model_json"), py::arg("as_model_type"), py::arg("device"), py::arg("vary"),
      py::arg("options"));
  m.def(
      "recommend",
      [](const std::string& model, const std::string& model_json, const std::string& as, const DeviceArgs& device,
         const Options& options) {
        const ModelEntry entry = model_of(model, model_json, as);
        return json_of(
            recommend_report(entry, model_json.empty() ? model : entry.spec.name, given_of(options), device));
      },
      py::arg("model"), py::arg("model_json"), py::arg("as_model_type"), py::arg("device"), py::arg("options"));
  m.def(
      "hooks",
      [](const std::string& model, const std::string& model_json, const std::string& as, const HooksRequest& request) {
        return json_of(hooks_report(model_of(model, model_json, as), request));
      },
      py::arg("model"), py::arg("model_json"), py::arg("as_model_type"), py::arg("request"));
  m.def(
      "sweep",
      [](const std::vector<std::string>& models, const std::string& as, SweepRequest request, const Options& options) {
        for (const std::string& model : models) request.models.push_back(model_of(model, "", as));
        return json_of(sweep_report(request, settings_from(given_of(options))));
      },
      py::arg("models"), py::arg("as_model_type"), py::arg("request"), py::arg("options"));
  m.def("models", [] { return json_of(models_report()); });
  m.def("gpus", [] { return json_of(gpus_report()); });
  m.def(
      "probe", [](double warn_above) { return json_of(probe_report(warn_above)); }, py::arg("warn_above"));

  py::class_<DeviceArgs>(m, "DeviceArgs")
      .def(py::init<>())
      .def_readwrite("gpu", &DeviceArgs::gpu)
      .def_readwrite("probe", &DeviceArgs::probe)
      .def_readwrite("no_calibration", &DeviceArgs::no_calibration)
      .def_readwrite("cpu", &DeviceArgs::cpu);
  py::class_<HooksRequest>(m, "HooksRequest")
      .def(py::init<>())
      .def_readwrite("batch", &HooksRequest::batch)
      .def_readwrite("seq", &HooksRequest::seq)
      .def_readwrite("precision", &HooksRequest::precision)
      .def_readwrite("filter", &HooksRequest::filter)
      .def_readwrite("layers", &HooksRequest::layers)
      .def_readwrite("pos_slice", &HooksRequest::pos_slice)
      .def_readwrite("remove_batch_dim", &HooksRequest::remove_batch_dim)
      .def_readwrite("all", &HooksRequest::all);
  py::class_<SweepRequest>(m, "SweepRequest")
      .def(py::init<>())
      .def_readwrite("workloads", &SweepRequest::workloads)
      .def_readwrite("batches", &SweepRequest::batches)
      .def_readwrite("seqs", &SweepRequest::seqs)
      .def_readwrite("precisions", &SweepRequest::precisions)
      .def_readwrite("gpu", &SweepRequest::gpu)
      .def_readwrite("smallest_gpu", &SweepRequest::smallest_gpu);
}

}  // namespace memplan::python

PYBIND11_MODULE(_memplan, m) { memplan::python::define_module(m); }
