// memplan import PATH: a Hugging Face config.json becomes a memplan model file; a
// safetensors checkpoint (one file or a sharded index) is inventoried from its headers
// and checked against its architecture.
#include <spdlog/spdlog.h>

#include <filesystem>
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/text.hpp"
#include "memplan/io/atomic_file.hpp"
#include "memplan/io/hf_config.hpp"
#include "memplan/io/hub.hpp"
#include "memplan/io/model_file.hpp"
#include "memplan/io/safetensors.hpp"
#include "memplan/report/import.hpp"
#include "plan_options.hpp"
#include "progress.hpp"

namespace memplan::cli {

namespace {

struct ImportArgs {
  std::vector<std::string> inputs;  // [hf|safetensors] PATH
  std::string output;               // -o: the model file to write (config.json only)
  std::string model;                // --model: compare a checkpoint with this architecture
  bool tensors = false;             // --tensors: list every tensor
  std::string as;                   // --as: an unknown model_type read as a known one
  OutputOptions output_options;
};

enum class InputKind { hf_config, safetensors, index };

InputKind kind_of(const std::vector<std::string>& inputs, const std::string& path) {
  if (inputs.size() == 2) {
    const std::string& word = inputs.front();
    if (word == "hf") return InputKind::hf_config;
    if (word == "safetensors") return path.ends_with(".json") ? InputKind::index : InputKind::safetensors;
    throw Error(ErrorKind::invalid_input,
                "unknown import kind '" + printable(word) + "'" + did_you_mean(word, {"hf", "safetensors"}) +
                    "; accepted: 'hf' (a config.json) or 'safetensors' (a .safetensors file or its index.json)",
                "kind");
  }
  if (path.ends_with(".safetensors")) return InputKind::safetensors;
  if (path.ends_with(".index.json")) return InputKind::index;
  if (path.ends_with(".json")) return InputKind::hf_config;
  std::error_code ec;
  const std::string what = std::filesystem::is_directory(path, ec) ? "is a directory"
                                                                   : "is not a .json or .safetensors file";
  throw ConfigError(path, 0, 0, "",
                    what +
                        ": pass a config.json (an architecture to turn into a model file), a .safetensors file "
                        "or a model.safetensors.index.json (a checkpoint to inventory), or name the kind: "
                        "memplan import hf|safetensors PATH");
}

int import_config(const ImportArgs& args, const std::string& path) {
  for (const auto& [given, option] :
       {std::pair{!args.model.empty(), "--model"}, std::pair{args.tensors, "--tensors"}}) {
    if (given) {
      throw Error(ErrorKind::invalid_input,
                  std::string(option) + " applies to a safetensors checkpoint, not a config.json", option);
    }
  }
  const HfImport imported = load_hf_config(path, args.as);
  const ModelSpec& spec = imported.entry.spec;
  std::vector<std::string> comments = {spec.name + " (model_type " + imported.model_type +
                                       "), imported by memplan import from " + path};
  for (const std::string& n : imported.notes) comments.push_back(n);

  ImportReport report;
  report.input = path;
  report.output = args.output;
  report.yaml = model_yaml(imported.entry, comments);
  report.imported = imported;

  // The file must read back as the same architecture; a mismatch is memplan's bug.
  const ModelEntry reread = parse_model_yaml(report.yaml, args.output.empty() ? "<import>" : args.output, spec.name);
  if (count_parameters(reread.spec) != count_parameters(spec)) {
    throw Error(ErrorKind::internal, "the model file written for " + path + " does not read back as the same model");
  }
  const PrintOptions print_options = args.output_options.print_options<ImportReport>();
  if (!args.output.empty()) {
    write_file_atomically(args.output, report.yaml, args.inputs);
    spdlog::debug("wrote {}", args.output);
  }
  print(report, print_options, std::cout);
  return 0;
}

bool integer_dtype(const std::string& dtype) { return dtype.starts_with("I") || dtype.starts_with("U"); }

int import_checkpoint(const ImportArgs& args, const std::string& path, InputKind kind) {
  if (!args.output.empty()) {
    throw Error(ErrorKind::invalid_input,
                "-o writes a model file and applies to a config.json only; a checkpoint's inventory goes to stdout",
                "-o");
  }
  const PrintOptions print_options = args.output_options.print_options<CheckpointReport>();
  CheckpointReport report;
  report.inventory = kind == InputKind::index ? read_safetensors_index(path) : read_safetensors(path);
  report.list_tensors = args.tensors;
  const SafetensorsInventory& inv = report.inventory;
  if (inv.index_total_size && *inv.index_total_size != inv.bytes) {
    report.notes.push_back("the index's metadata.total_size says " + group_digits(*inv.index_total_size) +
                           " bytes; the shards' tensors hold " + group_digits(inv.bytes));
  }

  // The architecture to compare with: --model, or a config.json beside the checkpoint.
  std::optional<ModelEntry>& architecture = report.architecture;
  if (!args.model.empty()) {
    architecture = find_model(args.model, say_fetch, args.as);
  } else {
    const std::filesystem::path config = std::filesystem::path(path).parent_path() / "config.json";
    std::error_code ec;
    if (std::filesystem::is_regular_file(config, ec)) {
      try {
        architecture = load_hf_config(config.string(), args.as).entry;
      } catch (const ConfigError& e) {
        report.notes.push_back(std::string("the config.json beside it was not compared: ") + e.what());
      }
    } else {
      report.notes.push_back(
          "no config.json beside it: --model NAME|FILE compares the checkpoint with an architecture");
    }
  }
  if (architecture) {
    report.comparison = compare_checkpoint(inv, architecture->spec);
    if (!report.comparison->matches()) {
      std::vector<std::string> integers;
      for (const SafetensorsDtypeTotal& d : inv.dtypes) {
        if (integer_dtype(d.dtype)) integers.push_back(d.dtype);
      }
      if (!integers.empty()) {
        report.notes.push_back("integer tensors (" + quoted_list(integers, "and") +
                               ") often mean a quantised checkpoint, whose packed elements are not parameters");
      }
    }
  }
  print(report, print_options, std::cout);
  return 0;
}

}  // namespace

void define_import(CLI::App& self, int& exit_code, const NamedOptions& /*named*/) {
  auto args = std::make_shared<ImportArgs>();
  CLI::App* cmd = &self;
  cmd->description(
      "Import a real model: a Hugging Face config.json becomes a memplan model file; a safetensors\n"
      "checkpoint (a .safetensors file or a sharded model.safetensors.index.json) is inventoried from\n"
      "its headers alone (tensor data is never read): tensors, exact element count, bytes per dtype,\n"
      "and, with a config.json beside it (or --model), how that compares with the architecture.\n"
      "The kind follows from the name; 'hf' or 'safetensors' before PATH says it explicitly.\n"
      "Families: " +
      quoted_list(hf_model_types(), "and") +
      ".\n"
      "Examples:\n"
      "  memplan import Llama-2-7b-hf/config.json -o llama.yaml   then: memplan estimate llama.yaml\n"
      "  memplan import Llama-2-7b-hf/config.json                 the model file on stdout\n"
      "  memplan import Llama-2-7b-hf/model.safetensors.index.json\n"
      "  memplan import safetensors Qwen/Qwen2.5-7B-Instruct       a Hub model's headers (docs/hub.md)\n"
      "  memplan estimate Llama-2-7b-hf/config.json               estimate reads a config.json directly");
  cmd->add_option(
         "INPUT", args->inputs,
         "[hf|safetensors] PATH: a config.json, a .safetensors file, an index.json, or a Hub id ORG/NAME[@REV]")
      ->required()
      ->expected(1, 2);
  cmd->add_option("-o,--output", args->output,
                  "config.json: write the model file here (atomically: all or nothing) instead of stdout");
  cmd->add_option("--model", args->model,
                  "checkpoint: compare with this model (built-in name, .yaml or config.json) instead of the "
                  "config.json beside it");
  cmd->add_flag("--tensors", args->tensors, "checkpoint: list every tensor with its dtype, shape and bytes");
  add_as_option(*cmd, args->as);
  add_output_options(*cmd, args->output_options);
  cmd->callback([args, &exit_code] {
    std::string path = args->inputs.back();
    // A Hub id: its snapshot's config.json, or with 'safetensors' its index or single file.
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      if (const std::optional<HubId> id = parse_hub_id(path)) {
        const std::filesystem::path dir = hub_snapshot(*id, say_fetch).directory;
        path = (dir / "config.json").string();
        if (args->inputs.size() == 2 && args->inputs.front() == "safetensors") {
          path = std::filesystem::exists(dir / "model.safetensors.index.json", ec)
                     ? (dir / "model.safetensors.index.json").string()
                     : (dir / "model.safetensors").string();
        }
      }
    }
    const InputKind kind = kind_of(args->inputs, path);
    exit_code = kind == InputKind::hf_config ? import_config(*args, path) : import_checkpoint(*args, path, kind);
  });
}

}  // namespace memplan::cli
