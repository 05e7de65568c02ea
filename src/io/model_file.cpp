#include "memplan/io/model_file.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "memplan/io/checkpoint_model.hpp"
#include "memplan/io/gguf.hpp"
#include "memplan/io/hf_config.hpp"
#include "memplan/io/hub.hpp"
#include "text_file.hpp"

namespace memplan {

ModelEntry load_model_file(const std::string& path) {
  const std::string text = detail::read_text_file(path, "a model file", detail::kMaxYamlFileBytes);
  const std::filesystem::path file(path);
  const bool yaml = file.extension() == ".yaml" || file.extension() == ".yml";
  return parse_model_yaml(text, path, (yaml ? file.stem() : file.filename()).string());
}

ModelEntry find_model(std::string_view name_or_path, const std::function<void(const std::string&)>& progress,
                      const std::string& as_model_type) {
  const std::string path(name_or_path);
  const auto ends = [&](std::string_view suffix) { return name_or_path.ends_with(suffix); };
  std::error_code ec;
  // A snapshot directory, a .safetensors file or an index: the config.json beside them
  // and the weights as their headers store them.
  if (std::filesystem::is_directory(path, ec) || ends(".safetensors") || ends(".safetensors.index.json")) {
    return load_checkpoint_model(path, as_model_type);
  }
  if (ends(".json")) return load_hf_config(path, as_model_type).entry;  // a Hugging Face config
  if (name_or_path.find('/') != std::string_view::npos && !ends(".gguf") && !ends(".yaml") && !ends(".yml") &&
      !std::filesystem::exists(path, ec)) {
    // ORG/NAME names a Hub model unless a file of that name is here.
    if (const std::optional<HubId> id = parse_hub_id(name_or_path)) return load_hub_model(*id, progress, as_model_type);
  }
  if (!as_model_type.empty()) {
    throw Error(ErrorKind::invalid_input,
                "`as` applies to a Hugging Face config.json, a snapshot or a Hub id; '" + printable(path) +
                    "' is a built-in model, a model file or a GGUF file",
                "as");
  }
  if (ends(".gguf")) return load_gguf_model(path).entry;  // a llama.cpp model
  if (ends(".yaml") || ends(".yml")) return load_model_file(path);
  if (name_or_path.find('/') != std::string_view::npos) return load_model_file(path);
  return load_builtin_model(name_or_path);
}

PlanSettings with_engine_files(PlanSettings settings, const std::function<void(const std::string&)>& progress) {
  if (!settings.layout.draft.empty() && !settings.draft_model) {
    try {
      settings.draft_model = find_model(settings.layout.draft, progress).spec;
    } catch (const ConfigError& e) {
      if (e.line() != 0) throw;  // it names the file, the line and the key at fault
      throw Error(e.kind(), "`draft`: " + std::string(e.what()), "draft");
    } catch (const Error& e) {
      throw Error(e.kind(), "`draft`: " + std::string(e.what()), "draft");
    }
  }
  // Its errors name the file and the key at fault.
  if (!settings.layout.mmproj.empty() && !settings.mmproj)
    settings.mmproj = load_gguf_projector(settings.layout.mmproj);
  return settings;
}

}  // namespace memplan
